//! Fork-join kernels on our runtime, on rayon, and sequentially, in one invocation: time,
//! speedup against the sequential code, and the cost of a join at 1 thread,
//! (T1 − Tseq) / joins. Every parallel result is checked against the sequential one.

mod command;
mod join;
mod kernels;
mod process;
mod runner;
mod table;
mod tree;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

pub use command::{exec, run_and_emit, ForkjoinArgs};
pub use process::{built as peer_built, install_hint, PROC_PEERS};
pub use runner::run_noted;
pub use table::cost;
pub use tree::Node;

/// What to run.
#[derive(Clone, Debug)]
pub struct Params {
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Repetitions (median reported).
    pub reps: usize,
    /// fib(n).
    pub fib_n: u64,
    /// Depth of the complete binary tree to sum.
    pub tree_depth: u32,
    /// Elements to sort (mergesort, quicksort).
    pub sort_len: usize,
    /// Matrix size (a power of two) for the multiply.
    pub matrix: usize,
    /// Our runtime's pools to run the kernels on.
    pub pools: Vec<taskpools::forkjoin::Pool>,
    /// Pin every runtime's worker `i` (ours, rayon's, and the ceiling's plain threads) to core
    /// `i mod cores`, and the sequential and `calls` runs to core 0, beside every runtime's
    /// worker 0.
    pub pin: bool,
    /// The other runtimes to run (of `PEERS`), in that order.
    pub peers: Vec<&'static str>,
    /// The kernels to run (names from [`KERNELS`]), in that order.
    pub kernels: Vec<String>,
    /// Record a schedule trace of one extra, untimed run of each kernel on each of our pools
    /// and thread counts (on runtimes that record): Chrome trace-event JSON to this file, Gantt
    /// charts into `<file>.gantt/`.
    pub trace: Option<std::path::PathBuf>,
}

/// The benchmark's kernels, in their default order.
pub const KERNELS: [&str; 5] = ["fib", "tree-sum", "mergesort", "quicksort", "matmul"];

/// The other runtimes `forkjoin` can run beside ours (`--peers`): rayon, chili and forte in
/// this process; oneTBB (`tbb`) and LLVM's OpenMP runtime (`libomp`) each in a process of its
/// own, where the build script found them ([`PROC_PEERS`]).
pub const PEERS: [&str; 5] = ["rayon", "chili", "forte", "tbb", "libomp"];

/// The kernel called `name`; an unknown name is an error that lists the known ones.
pub fn kernel(name: &str) -> Result<&'static str> {
    match KERNELS.iter().find(|k| **k == name) {
        Some(k) => Ok(k),
        None => bail!(
            "unknown kernel `{name}`; known: {}, or all",
            KERNELS.join(", ")
        ),
    }
}

/// One row.
// Deserialize (strict: a field this build does not write is an error) for `taskpools report`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// `forkjoin`.
    pub experiment: String,
    /// Kernel name.
    pub kernel: String,
    /// Our runtime's pool (`private-deque`, `chase-lev`), or a peer (`rayon`, `chili`,
    /// `forte`, `tbb task_group`, `tbb parallel_invoke`, `libomp tasks`), or `sequential`, or
    /// `ceiling`: `threads` copies of the sequential kernel run at once on plain threads, whose
    /// `speedup_vs_seq` (= threads × Tseq / T) is the speedup the machine allowed in this run;
    /// or `calls` (1 thread, when 1 is among the thread counts): the kernel whose joins only
    /// call each half as a function that is not inlined, a reference for a join's cost.
    pub runtime: String,
    /// Worker threads (1 for sequential).
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
    /// This runtime's median at 1 thread / this median (self-relative speedup), when 1 is
    /// among the thread counts.
    pub speedup_vs_1: Option<f64>,
    /// Joins one run performs.
    pub joins: u64,
    /// At 1 thread: (T1 − Tseq) / joins in ns, where T1 − Tseq is the median over the
    /// repetitions of each repetition's difference (the two runs of a repetition are timed
    /// back to back, so they share the machine's load at that moment).
    pub ns_per_join: Option<f64>,
    /// At 1 thread, rows of our pools and `calls`: this `ns_per_join` / rayon's, where rayon's
    /// joins cost at least a tenth of the sequential time (fib, tree-sum; not the coarse
    /// kernels, whose join costs are within the noise). The overhead target is ≤ 0.25.
    pub join_vs_rayon: Option<f64>,
    /// This median / rayon's median at the same thread count (rows of our pools).
    pub vs_rayon: Option<f64>,
    /// At 1 thread, rows of our pools and `calls`: this `ns_per_join` / chili's, where chili's
    /// joins cost at least 2 % of the sequential time (below that the difference is noise).
    pub join_vs_chili: Option<f64>,
    /// This median / chili's median at the same thread count (rows of our pools).
    pub vs_chili: Option<f64>,
}
