//! N-Queens (count every placement of n non-attacking queens) on every front end, in one
//! invocation: the task-pool front end (one task per placed queen, counting in per-worker
//! state) on chosen pools, fork-join with one `scope` per node (a spawn per child) and with
//! binary `join`s over each node's free columns, the same on rayon, chili (joins only: it has
//! no scope) and forte, and the sequential recursion. Every run's count, and every task-pool
//! run's number of tasks, is checked against the sequential one.

mod command;
mod fork;
mod table;

use std::time::Instant;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use taskpools::{Builder, Ctx, PoolKind, Task};

use super::pinning::{
    chili_pool, forte_pool, our_runtimes, pinner, rayon_pools, unpin_current, Forte,
};
use super::summarize;
use crate::report::Progress;

pub use command::{exec, run_and_emit, QueensArgs};
use fork::{
    join_chili_m, join_forte_m, join_ours_m, join_rayon_m, scope_forte, scope_ours, scope_rayon,
    tbb_peer, TBB_CUTOFF_VARIANT,
};
pub use fork::{tbb_built, CUTOFF_DEPTH};

/// What to run.
#[derive(Clone, Debug)]
pub struct Params {
    /// Board size, 4 to [`MAX_N`].
    pub n: u32,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Repetitions (median reported).
    pub reps: usize,
    /// Task pools for the task-pool rows.
    pub pools: Vec<PoolKind>,
    /// Pin worker `i` of every runtime to core `i mod cores`, and the sequential run to core 0.
    pub pin: bool,
    /// Record a schedule trace of one extra, untimed run of each of our variants per thread
    /// count (task pools without the cutoff, scope, join) on runtimes that record: Chrome
    /// trace-event JSON to this file, Gantt charts into `<file>.gantt/`.
    pub trace: Option<std::path::PathBuf>,
    /// Also run each pool with a run-time cutoff (rows marked `cutoff`): a task puts a child
    /// only while its worker's own queue holds fewer tasks than this ([`Ctx::queued`]), and
    /// counts the child's subtree with plain calls otherwise.
    pub cutoff: Option<usize>,
    /// The other runtimes to run (of [`PEERS`]).
    pub peers: Vec<&'static str>,
    /// The front ends to run (of [`FRONT_ENDS`]).
    pub front_ends: Vec<&'static str>,
}

/// The other runtimes `queens` can run beside ours (`--peers`).
pub const PEERS: [&str; 4] = ["rayon", "chili", "forte", "tbb"];
/// The front ends of `queens` (`--front-ends`): the task pools' working phase, a fork-join
/// scope per node, binary joins, a scope per node down to [`CUTOFF_DEPTH`] rows.
pub const FRONT_ENDS: [&str; 4] = ["task-pool", "scope", "join", "scope-cutoff"];

/// Trace buffer per worker, in events (one task per node: a start, an end and its puts).
const TRACE_EVENTS: usize = 1 << 22;

/// The largest board: n = 16 has 14,772,512 solutions and about 1.1e9 nodes (minutes
/// sequentially); beyond that a run takes hours.
pub const MAX_N: u32 = 16;

/// One row.
// Deserialize (strict: a field this build does not write is an error) for `taskpools report`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// `queens`.
    pub experiment: String,
    /// Board size.
    pub n: u32,
    /// `task-pool`, `scope` (a spawn per child of a node), `join` (binary joins over a
    /// node's free columns), or `sequential`.
    pub front_end: String,
    /// The task pool (task-pool rows), or the runtime: `taskpools`, `rayon`, `chili`,
    /// `forte`; `-` for the sequential row.
    pub runtime: String,
    /// Worker threads.
    pub threads: usize,
    /// Repetitions.
    pub reps: usize,
    /// Median time.
    pub median_s: f64,
    /// Fastest repetition.
    pub min_s: f64,
    /// Slowest repetition.
    pub max_s: f64,
    /// Sequential median / this median.
    pub speedup_vs_seq: f64,
    /// Nodes of the search tree (partial placements, the empty board included): the tasks of
    /// a task-pool run.
    pub nodes: u64,
    /// Tasks run (task-pool rows; median over the repetitions): every node, or with the
    /// cutoff those not counted by plain calls.
    pub tasks: Option<u64>,
    /// At 1 thread: (T1 − Tseq) / nodes in ns, T1 − Tseq the median of the differences of
    /// back-to-back runs: what a node costs over the sequential recursion.
    pub ns_per_node: Option<f64>,
}

/// A node: queens placed in the first rows, as the columns and the two diagonals they attack
/// in the next row. Serializable, so the distributed experiment sends it between ranks.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Board {
    all: u32,
    cols: u32,
    left: u32,
    right: u32,
}

impl Board {
    pub(crate) fn empty(n: u32) -> Board {
        Board {
            all: (1 << n) - 1,
            cols: 0,
            left: 0,
            right: 0,
        }
    }
    #[inline(always)]
    pub(crate) fn solved(self) -> bool {
        self.cols == self.all
    }
    /// The columns where the next queen may go.
    #[inline(always)]
    pub(crate) fn free(self) -> u32 {
        !(self.cols | self.left | self.right) & self.all
    }
    /// The board with a queen in column bit `q` of the next row.
    #[inline(always)]
    pub(crate) fn place(self, q: u32) -> Board {
        Board {
            all: self.all,
            cols: self.cols | q,
            left: ((self.left | q) << 1) & self.all,
            right: (self.right | q) >> 1,
        }
    }
}

/// Solutions and nodes below `b` (itself included), sequentially.
pub(crate) fn sequential(b: Board) -> (u64, u64) {
    if b.solved() {
        return (1, 1);
    }
    let (mut sols, mut nodes) = (0, 1);
    let mut free = b.free();
    while free != 0 {
        let q = free & free.wrapping_neg();
        free ^= q;
        let (s, n) = sequential(b.place(q));
        sols += s;
        nodes += n;
    }
    (sols, nodes)
}

/// The task-pool version: one task per node, solutions counted in the worker's state.
struct QueensTask(Board);

impl Task<u64> for QueensTask {
    #[inline]
    fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
        let b = self.0;
        if b.solved() {
            *ctx.local() += 1;
            return;
        }
        let mut free = b.free();
        while free != 0 {
            let q = free & free.wrapping_neg();
            free ^= q;
            ctx.put(QueensTask(b.place(q)));
        }
    }
}

/// The default of [`Params::cutoff`]: on N-Queens 13 at 2 threads, 8 keeps both workers busy
/// with all but a few nodes run as plain calls; at 32 and more the queue never gets that long
/// and every node is a task.
pub const CUTOFF_QUEUED: usize = 8;

/// The task-pool version with a run-time cutoff ([`Ctx::queued`]): a task per node while the
/// worker's own queue is short, the sequential recursion below a child when it is not.
struct QueensCutoff(Board);

/// A worker's state in the cutoff rows.
struct CutoffState {
    /// Puts only while the own queue holds fewer tasks than this.
    cutoff: usize,
    solutions: u64,
    /// Nodes counted by plain calls (the others are tasks).
    called: u64,
}

impl Task<CutoffState> for QueensCutoff {
    #[inline]
    fn run(self, ctx: &mut Ctx<'_, Self, CutoffState>) {
        let b = self.0;
        if b.solved() {
            ctx.local().solutions += 1;
            return;
        }
        let mut free = b.free();
        while free != 0 {
            let q = free & free.wrapping_neg();
            free ^= q;
            if ctx.queued() < ctx.local().cutoff {
                ctx.put(QueensCutoff(b.place(q)));
            } else {
                let (s, n) = sequential(b.place(q));
                let l = ctx.local();
                l.solutions += s;
                l.called += n;
            }
        }
    }
}

/// A variant: what to run, and its label.
#[derive(Clone, Copy, PartialEq)]
enum Variant {
    Pool(usize),
    /// The pool, with the run-time cutoff ([`QueensCutoff`]).
    PoolCutoff(usize),
    ScopeOurs,
    JoinOurs,
    ScopeRayon,
    JoinRayon,
    JoinChili,
    ScopeForte,
    JoinForte,
    /// `scope-cutoff`: ours and rayon.
    CutoffOurs,
    CutoffRayon,
    /// oneTBB's `task_group`, a task per node and with the depth cutoff.
    ScopeTbb,
    CutoffTbb,
}

impl Variant {
    fn labels(self, p: &Params) -> (&'static str, String) {
        match self {
            Variant::Pool(i) => ("task-pool", p.pools[i].name().to_string()),
            Variant::PoolCutoff(i) => (
                "task-pool",
                format!("{} cutoff {}", p.pools[i].name(), p.cutoff.unwrap_or(0)),
            ),
            Variant::ScopeOurs => ("scope", "taskpools".into()),
            Variant::JoinOurs => ("join", "taskpools".into()),
            Variant::ScopeRayon => ("scope", "rayon".into()),
            Variant::JoinRayon => ("join", "rayon".into()),
            Variant::JoinChili => ("join", "chili".into()),
            Variant::ScopeForte => ("scope", "forte".into()),
            Variant::JoinForte => ("join", "forte".into()),
            Variant::CutoffOurs => ("scope-cutoff", "taskpools".into()),
            Variant::CutoffRayon => ("scope-cutoff", "rayon".into()),
            Variant::ScopeTbb => ("scope", "tbb task_group".into()),
            Variant::CutoffTbb => ("scope-cutoff", "tbb task_group".into()),
        }
    }
}

/// One run's solutions, nodes visited and tasks run (when counted), and seconds.
type RunOutcome = (u64, Option<(u64, u64)>, f64);

/// Runs the experiment; the first record is the sequential baseline.
pub fn run(p: &Params, progress: &Progress) -> Result<Vec<Record>> {
    if p.reps == 0 || p.threads.is_empty() || p.threads.contains(&0) {
        bail!("--reps and every thread count must be at least 1");
    }
    if !(4..=MAX_N).contains(&p.n) {
        bail!("--n {}: the board size must be 4 to {MAX_N}", p.n);
    }
    let root = Board::empty(p.n);
    let (solutions, nodes) = sequential(root);
    let pin_to = pinner(p.pin);
    // One runtime per thread count for both our front ends (a working phase and fork-join run
    // on the same workers), and the peers' pools.
    let ours = our_runtimes(&p.threads, p.pin)?;
    let peer = |name: &str| p.peers.contains(&name);
    let rayons = if peer("rayon") {
        rayon_pools(&p.threads, p.pin)?
    } else {
        Vec::new()
    };
    let chilis: Vec<chili::ThreadPool> = if peer("chili") {
        p.threads.iter().map(|&t| chili_pool(t, p.pin)).collect()
    } else {
        Vec::new()
    };
    let fortes: Vec<Forte> = if peer("forte") {
        p.threads.iter().map(|&t| forte_pool(t, p.pin)).collect()
    } else {
        Vec::new()
    };

    let front = |name: &str| p.front_ends.contains(&name);
    let variants: Vec<Variant> = (0..p.pools.len())
        .filter(|_| front("task-pool"))
        .map(Variant::Pool)
        .chain(
            (0..p.pools.len())
                .filter(|_| front("task-pool") && p.cutoff.is_some())
                .map(Variant::PoolCutoff),
        )
        .chain(
            [
                ("scope", None, Variant::ScopeOurs),
                ("join", None, Variant::JoinOurs),
                ("scope", Some("rayon"), Variant::ScopeRayon),
                ("join", Some("rayon"), Variant::JoinRayon),
                ("join", Some("chili"), Variant::JoinChili),
                ("scope", Some("forte"), Variant::ScopeForte),
                ("join", Some("forte"), Variant::JoinForte),
                ("scope-cutoff", None, Variant::CutoffOurs),
                ("scope-cutoff", Some("rayon"), Variant::CutoffRayon),
                ("scope", Some("tbb"), Variant::ScopeTbb),
                ("scope-cutoff", Some("tbb"), Variant::CutoffTbb),
            ]
            .into_iter()
            .filter(|(fe, rt, _)| front(fe) && rt.is_none_or(peer))
            .filter(|(_, rt, _)| *rt != Some("tbb") || tbb_built())
            .map(|(_, _, v)| v),
        )
        .collect();
    /// `f`'s result and the seconds it took.
    fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
        let t0 = Instant::now();
        let r = std::hint::black_box(f());
        (r, t0.elapsed().as_secs_f64())
    }
    // One run of `v` at thread-count index `ti`: (solutions, nodes visited and tasks run if
    // counted, seconds).
    let run_one = |v: Variant, ti: usize, ours: &[taskpools::Runtime]| -> Result<RunOutcome> {
        let t = p.threads[ti];
        // The task-pool rows' phase: pool `i` on our runtime for this thread count.
        let builder = |i: usize| {
            Builder::new()
                .runtime(&ours[ti])
                .threads(t)
                .pool(p.pools[i])
                .pin(p.pin)
        };
        Ok(match v {
            Variant::Pool(i) => {
                let b = builder(i);
                let (report, sols) = b.run_reduce(|_| 0u64, [QueensTask(root)], |a, b| a + b)?;
                let tasks = report.tasks_run();
                (sols, Some((tasks, tasks)), report.elapsed.as_secs_f64())
            }
            Variant::PoolCutoff(i) => {
                let b = builder(i);
                let cutoff = p.cutoff.expect("cutoff rows only with a cutoff");
                let (report, states) = b.run_with(
                    |_| CutoffState {
                        cutoff,
                        solutions: 0,
                        called: 0,
                    },
                    [QueensCutoff(root)],
                )?;
                let sols = states.iter().map(|s| s.solutions).sum();
                let called: u64 = states.iter().map(|s| s.called).sum();
                // Every node is a task or counted by a plain call.
                let tasks = report.tasks_run();
                (
                    sols,
                    Some((tasks + called, tasks)),
                    report.elapsed.as_secs_f64(),
                )
            }
            Variant::ScopeOurs => {
                let (s, secs) = ours[ti].install(|| timed(|| scope_ours(root, u32::MAX)));
                (s, None, secs)
            }
            Variant::CutoffOurs => {
                let (s, secs) = ours[ti].install(|| timed(|| scope_ours(root, CUTOFF_DEPTH)));
                (s, None, secs)
            }
            Variant::CutoffRayon => {
                let (s, secs) = rayons[ti].install(|| timed(|| scope_rayon(root, CUTOFF_DEPTH)));
                (s, None, secs)
            }
            // A process per run; the count it printed is checked as every other.
            Variant::ScopeTbb | Variant::CutoffTbb => {
                let variant = if v == Variant::ScopeTbb {
                    "scope"
                } else {
                    TBB_CUTOFF_VARIANT
                };
                // The child takes its cores' mask from this thread's.
                unpin_current();
                let ran = tbb_peer(variant).run("queens", t, u64::from(p.n), p.pin)?;
                (ran.checksum, None, ran.seconds)
            }
            Variant::JoinOurs => {
                let (s, secs) =
                    ours[ti].install(|| timed(|| join_ours_m::count(root, root.free(), ())));
                (s, None, secs)
            }
            Variant::ScopeRayon => {
                let (s, secs) = rayons[ti].install(|| timed(|| scope_rayon(root, u32::MAX)));
                (s, None, secs)
            }
            Variant::JoinRayon => {
                let (s, secs) =
                    rayons[ti].install(|| timed(|| join_rayon_m::count(root, root.free(), ())));
                (s, None, secs)
            }
            // The peers' callers take part in the run: they run on a thread on core 0.
            Variant::JoinChili => on_core(&pin_to, || {
                let mut scope = chilis[ti].scope();
                let (s, secs) = timed(|| join_chili_m::count(root, root.free(), &mut scope));
                (s, None, secs)
            }),
            Variant::ScopeForte => on_core(&pin_to, || {
                fortes[ti].run(|pool| {
                    pool.with_worker(|_| {
                        let (s, secs) = timed(|| scope_forte(root, u32::MAX));
                        (s, None, secs)
                    })
                })
            }),
            Variant::JoinForte => on_core(&pin_to, || {
                fortes[ti].run(|pool| {
                    pool.with_worker(|w| {
                        let (s, secs) = timed(|| join_forte_m::count(root, root.free(), w));
                        (s, None, secs)
                    })
                })
            }),
        })
    };
    progress.set_length((p.reps * (1 + variants.len() * p.threads.len())) as u64);
    let mut seq = Vec::new();
    let mut times = vec![vec![Vec::new(); p.threads.len()]; variants.len()];
    let mut task_counts: Vec<Vec<Vec<u64>>> =
        vec![vec![Vec::new(); p.threads.len()]; variants.len()];
    let settle = || std::thread::sleep(std::time::Duration::from_millis(2));
    for _ in 0..p.reps {
        progress.set_message(format!("n={} sequential", p.n));
        settle();
        let ((s, _), secs) = on_core(&pin_to, || timed(|| sequential(root)));
        if s != solutions {
            bail!("the sequential count changed between runs");
        }
        seq.push(secs);
        progress.inc();
        for (vi, (&v, per_thread)) in variants.iter().zip(times.iter_mut()).enumerate() {
            for (ti, samples) in per_thread.iter_mut().enumerate() {
                let (fe, rt) = v.labels(p);
                progress.set_message(format!("n={} {fe} {rt} x{}", p.n, p.threads[ti]));
                settle();
                // One untimed run first, right before the timed one, as the oneTBB process
                // does inside itself: after the pause, the cores of a shared host come back
                // slowly, and the run that wakes them would pay for it (without this, at 2
                // threads our and rayon's cutoff rows took 1.68x the sequential time where
                // oneTBB's warmed process took 1.84x).
                if !matches!(v, Variant::ScopeTbb | Variant::CutoffTbb) {
                    let _ = run_one(v, ti, &ours)?;
                }
                let (s, tasks, secs) = run_one(v, ti, &ours)?;
                if s != solutions {
                    bail!("{fe} on {rt}: {s} solutions, the sequential count is {solutions}");
                }
                if let Some((seen, tasks)) = tasks {
                    if seen != nodes {
                        bail!("{fe} on {rt}: {seen} nodes visited, the tree has {nodes}");
                    }
                    task_counts[vi][ti].push(tasks);
                }
                samples.push(secs);
                progress.inc();
            }
        }
    }
    if let Some(path) = &p.trace {
        let traced = super::pinning::runtimes_with(&p.threads, p.pin, None, Some(TRACE_EVENTS))?;
        let mut traces = Vec::new();
        for &v in variants
            .iter()
            .filter(|v| matches!(v, Variant::Pool(_) | Variant::ScopeOurs | Variant::JoinOurs))
        {
            for (ti, rt) in traced.iter().enumerate() {
                let (fe, name) = v.labels(p);
                progress.set_message(format!("tracing n={} {fe} {name} x{}", p.n, p.threads[ti]));
                let _ = rt.take_trace()?;
                let (s, _, _) = run_one(v, ti, &traced)?;
                if s != solutions {
                    bail!("{fe} on {name}: {s} solutions, the sequential count is {solutions}");
                }
                if let Some(tr) = rt.take_trace()? {
                    traces.push((format!("queens {} {fe} {name} x{}", p.n, p.threads[ti]), tr));
                }
            }
        }
        crate::report::trace::write_files(path, &traces)?;
    }
    let (sm, smin, smax) = summarize(&seq);
    let mut out = vec![Record {
        experiment: "queens".into(),
        n: p.n,
        front_end: "sequential".into(),
        runtime: "-".into(),
        threads: 1,
        reps: p.reps,
        median_s: sm,
        min_s: smin,
        max_s: smax,
        speedup_vs_seq: 1.0,
        nodes,
        tasks: None,
        ns_per_node: None,
    }];
    for (vi, &v) in variants.iter().enumerate() {
        let (fe, rt) = v.labels(p);
        for (ti, &t) in p.threads.iter().enumerate() {
            let (m, mn, mx) = summarize(&times[vi][ti]);
            let ns_per_node = (t == 1).then(|| {
                let d: Vec<f64> = times[vi][ti].iter().zip(&seq).map(|(a, b)| a - b).collect();
                summarize(&d).0 * 1e9 / nodes as f64
            });
            out.push(Record {
                experiment: "queens".into(),
                n: p.n,
                front_end: fe.into(),
                runtime: rt.clone(),
                threads: t,
                reps: p.reps,
                median_s: m,
                min_s: mn,
                max_s: mx,
                speedup_vs_seq: sm / m,
                nodes,
                tasks: {
                    let mut c = task_counts[vi][ti].clone();
                    c.sort_unstable();
                    c.get(c.len() / 2).copied()
                },
                ns_per_node,
            });
        }
    }
    Ok(out)
}

/// Runs `f` on a thread pinned like every runtime's worker 0.
fn on_core<R: Send>(pin_to: &(impl Fn(usize) + Sync), f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|sc| {
        sc.spawn(|| {
            pin_to(0);
            f()
        })
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tbb_cutoff_variant_names_the_cutoff_depth() {
        assert_eq!(TBB_CUTOFF_VARIANT, format!("scope-cutoff-{CUTOFF_DEPTH}"));
    }

    #[test]
    fn the_sequential_search_knows_the_counts() {
        // Solutions for n = 4..=10, and the node count for n = 8.
        let known = [2, 10, 4, 40, 92, 352, 724];
        for (n, &k) in (4..=10).zip(&known) {
            assert_eq!(sequential(Board::empty(n)).0, k, "n = {n}");
        }
        assert_eq!(sequential(Board::empty(8)).1, 2057);
    }
}
