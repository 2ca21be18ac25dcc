//! The working phase (the task pools' front end): N-Queens as a task type with a per-worker
//! state, run 20 times on one reused `Runtime` of 2 workers, on a pool chosen by name.
//!
//! It counts the runs in which both workers ran tasks: the phases reuse the runtime's
//! persistent threads, so even a phase of half a millisecond (n = 10: 35 539 tasks) is spread
//! over both (docs/runtime.md, "A short phase now uses both workers"). How many runs were
//! spread depends on what else the machine runs, so it is printed, not checked. Then one run
//! on every pool of the family, each chosen by its name, gives the same counts.
//!
//! ```text
//! cargo run --release -p taskpools --example queens_spread [-- N [POOL]]
//! ```
//! N is the board size (default 10, at most 14); POOL a pool's name or alias (default
//! `private-public`, alias `dq8`; `taskpools list` prints them all).

use std::time::Instant;

use taskpools::{Builder, Ctx, PoolKind, Runtime, Task};

/// Queens placed in the first `row` rows of an n×n board, as bit masks of the attacked
/// columns and diagonals: one task per node of the search tree.
#[derive(Clone, Copy)]
struct Queens {
    n: u32,
    row: u32,
    cols: u32,
    left: u32,
    right: u32,
}

/// The per-worker state (`u64`) is the number of solutions this worker found: each worker
/// counts into its own, so no atomics are needed, and the phase returns them in worker order.
impl Task<u64> for Queens {
    fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
        if self.row == self.n {
            *ctx.local() += 1;
            return;
        }
        let mut free = !(self.cols | self.left | self.right) & ((1 << self.n) - 1);
        while free != 0 {
            let q = free & free.wrapping_neg(); // the lowest free column
            free ^= q;
            // A child task: `put` moves the value into the pool, no boxing.
            ctx.put(self.child(q));
        }
    }
}

impl Queens {
    fn root(n: u32) -> Queens {
        Queens {
            n,
            row: 0,
            cols: 0,
            left: 0,
            right: 0,
        }
    }

    fn child(self, q: u32) -> Queens {
        Queens {
            row: self.row + 1,
            cols: self.cols | q,
            left: (self.left | q) << 1,
            right: (self.right | q) >> 1,
            ..self
        }
    }

    /// The same search, sequentially: (solutions, nodes of the search tree).
    fn count(self) -> (u64, u64) {
        if self.row == self.n {
            return (1, 1);
        }
        let (mut solutions, mut nodes) = (0, 1);
        let mut free = !(self.cols | self.left | self.right) & ((1 << self.n) - 1);
        while free != 0 {
            let q = free & free.wrapping_neg();
            free ^= q;
            let (s, k) = self.child(q).count();
            solutions += s;
            nodes += k;
        }
        (solutions, nodes)
    }
}

/// Solutions of the n-queens problem for n = 1, 2, …, 14 (OEIS A000170).
const SOLUTIONS: [u64; 14] = [
    1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596,
];
const RUNS: usize = 20;
const THREADS: usize = 2;

fn main() -> Result<(), taskpools::Error> {
    let (n, pool) = args();
    let (solutions, tasks) = Queens::root(n).count();
    assert_eq!(
        solutions,
        SOLUTIONS[n as usize - 1],
        "the sequential search"
    );

    // One runtime: its 2 worker threads start here, once, and run every phase below.
    let rt = Runtime::builder().threads(THREADS).build()?;
    // The phase's settings: the runtime, and the pool by name (an unknown name is an Error).
    let phase = Builder::new().runtime(&rt).pool_name(&pool)?;
    let mut spread = 0;
    let start = Instant::now();
    for _ in 0..RUNS {
        // `run_with`: every worker's state starts at 0; the states come back in worker order.
        let (report, found) = phase.run_with(|_worker| 0u64, [Queens::root(n)])?;
        assert_eq!(found.len(), THREADS);
        assert_eq!(found.iter().sum::<u64>(), solutions);
        assert_eq!(report.tasks_run(), tasks);
        if report.workers.iter().all(|w| w.tasks_run > 0) {
            spread += 1;
        }
    }
    let per_run = start.elapsed() / RUNS as u32;
    println!(
        "N-Queens {n}: {solutions} solutions, {tasks} tasks per run (checked against a \
         sequential search)"
    );
    println!(
        "{RUNS} runs on {} with {THREADS} workers of one runtime, {per_run:.2?} per run: \
         both workers ran tasks in {spread} of {RUNS}",
        phase.pool_kind()
    );

    // The same phase on every pool of the family, each chosen by its name, on the same
    // threads: `run_reduce` folds the workers' states with `+`.
    for kind in PoolKind::ALL {
        let b = Builder::new().runtime(&rt).pool_name(kind.name())?;
        let (report, found) = b.run_reduce(|_| 0u64, [Queens::root(n)], |a, b| a + b)?;
        assert_eq!((found, report.tasks_run()), (solutions, tasks), "{kind}");
    }
    println!(
        "the same {solutions} solutions and {tasks} tasks on all {} pools",
        PoolKind::ALL.len()
    );
    Ok(())
}

/// The optional arguments: the board size (1 to 14) and a pool name, with a clear error for
/// anything else.
fn args() -> (u32, String) {
    let usage = "usage: queens_spread [N [POOL]]  (N: board size 1-14, default 10; POOL: a \
                 pool name or alias, default private-public)";
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n = match args.first() {
        None => 10,
        Some(a) => match a.parse::<u32>() {
            Ok(n @ 1..=14) => n,
            _ => fail(&format!(
                "the board size must be a whole number from 1 to 14 (larger boards take \
                 minutes), got {a:?}\n{usage}"
            )),
        },
    };
    if args.len() > 2 {
        fail(&format!("too many arguments\n{usage}"));
    }
    let pool = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "private-public".into());
    if let Err(e) = pool.parse::<PoolKind>() {
        fail(&format!("{e}\n{usage}"));
    }
    (n, pool)
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(2)
}
