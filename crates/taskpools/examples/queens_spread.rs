//! How a short working phase spreads over the workers of a warm runtime: the README's N-Queens
//! (n = 10, 35 539 tasks) on the private/public pool (`dq8`), 2 threads, 20 runs on one
//! runtime; prints the tasks each worker ran in each run and how many runs used every worker.
//!
//! `cargo run --release -p taskpools --example queens_spread [-- RUNS [N [POOL]]]`
//!
//! A phase of n = 10 lasts about 0.4 ms on 2 cores. The second worker takes part only if the
//! OS runs it within that time: on a quiet machine it does in nearly every run; when another
//! process keeps a core busy (a build, say), the OS may not schedule the woken worker before
//! the first one has finished alone, and then no run uses both.

use taskpools::{Builder, Ctx, Runtime, Task};

struct Queens {
    n: u32,
    row: u32,
    cols: u32,
    left: u32,
    right: u32,
}

impl Task<u64> for Queens {
    fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
        if self.row == self.n {
            *ctx.local() += 1;
            return;
        }
        let mut free = !(self.cols | self.left | self.right) & ((1 << self.n) - 1);
        while free != 0 {
            let q = free & free.wrapping_neg();
            free ^= q;
            ctx.put(Queens {
                row: self.row + 1,
                cols: self.cols | q,
                left: (self.left | q) << 1,
                right: (self.right | q) >> 1,
                ..self
            });
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().map_or(Ok(20), |s| s.parse())?;
    let n: u32 = args.next().map_or(Ok(10), |s| s.parse())?;
    let pool = args.next().unwrap_or_else(|| "private-public".into());
    if !(1..=16).contains(&n) {
        return Err(format!("N must be 1..=16 (a 16x16 board is already minutes), not {n}").into());
    }
    let threads = 2;
    let rt = Runtime::new(threads)?;
    let b = Builder::new()
        .threads(threads)
        .runtime(&rt)
        .pool_name(&pool)?;
    let mut all_used = 0;
    println!("run  tasks per worker        steals  solutions  ms");
    for run in 1..=runs {
        let root = Queens {
            n,
            row: 0,
            cols: 0,
            left: 0,
            right: 0,
        };
        let (report, found) = b.run_reduce(|_| 0u64, [root], |a, c| a + c)?;
        let per: Vec<u64> = report.workers.iter().map(|w| w.tasks_run).collect();
        if per.iter().all(|&t| t > 0) {
            all_used += 1;
        }
        println!(
            "{run:>3}  {:<22}  {:>6}  {found:>9}  {:.2}",
            format!("{per:?}"),
            report.total().steals,
            report.elapsed.as_secs_f64() * 1e3
        );
    }
    println!("every worker ran tasks in {all_used} of {runs} runs ({pool}, n = {n}, {threads} threads, one runtime)");
    Ok(())
}
