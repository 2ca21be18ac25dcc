//! `taskpools`: the workbench. Runs the seed experiments on the pool family and reports tables,
//! JSON/CSV and SVG plots.

mod experiments;
mod report;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use taskpools::{MemKind, PoolKind, Search, WakePolicy};

use experiments::{blocked, dataflow, deque, forkjoin, manber, places, queens, suite, synthetic};
use report::Progress;

#[derive(Parser)]
#[command(
    name = "taskpools",
    version,
    about = "Task pools for irregular parallel programs: experiments and comparisons"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Print every pool, memory manager and wake-up policy with its alias.
    List,
    /// The synthetic algorithm A(i) of Korch & Rauber on the pool family.
    Synthetic(SyntheticArgs),
    /// The deque micro-benchmark of seed 002 (Table 3.1) against crossbeam-deque.
    Deque(DequeArgs),
    /// Fork-join kernels on taskpools::forkjoin, rayon, chili, forte and sequentially.
    Forkjoin(ForkjoinArgs),
    /// Manber's concurrent pool (seed 003): job mixes, producers/consumers, search strategies.
    Manber(ManberArgs),
    /// N-Queens on the task pools, on fork-join (scope per node, binary joins), rayon, chili
    /// and forte.
    Queens(QueensArgs),
    /// Coarse phases: a sparse blocked LU and Jacobi sweeps, a scope per step, on both
    /// fork-join pools (scope and scope_fifo), rayon and sequentially.
    Blocked(BlockedArgs),
    /// Data-flow tasks (in/out/inout footprints): per-task cost with 0 to 4 declared accesses
    /// on task graphs, against OpenMP tasks with `depend` (libgomp) and row-synchronized
    /// fork-join, rayon and OpenMP.
    Dataflow(DataflowArgs),
    /// The application suite of the data-flow seed (Table 4.1, Figure 4.1): Black-Scholes,
    /// Cholesky, heat diffusion, LU, matrix multiply and mergesort as data-flow tasks, with
    /// syncs instead of dependences (ND), fork-join, rayon and OpenMP (libgomp), against the
    /// sequential programs.
    Suite(SuiteArgs),
    /// Locality-aware places (LASSI): the Cache Stress Test, merge sort and block matrix
    /// multiply with best, worst, ignorant and random locality hints, against the runtime
    /// without places and rayon; then the shared deque per place against one per worker, and
    /// the steal policies of the talk's future work.
    Places(PlacesArgs),
    /// The working phase spread over MPI ranks (run it under mpirun; needs the `mpi` cargo
    /// feature): synthetic A(k) and N-Queens with steal-half between ranks (random, linear
    /// and tree search), against a static split of the initial tasks and against the same
    /// number of threads in one process.
    Distributed(DistributedArgs),
    /// Summarize a schedule trace (Chrome trace-event JSON, as `--trace` writes it):
    /// utilisation per worker, steals between workers, the longest idle gaps.
    Trace {
        /// The trace file (not needed with --cost).
        file: Option<PathBuf>,
        /// Instead, measure what tracing costs: fine-grained programs on a runtime with and
        /// without a trace, in one run.
        #[arg(long)]
        cost: bool,
        /// Repetitions for --cost (medians), at least 1.
        #[arg(long, default_value_t = 11)]
        reps: usize,
    },
    /// A short run of every experiment; tables, JSON, CSV and SVG go to --out.
    Tour {
        /// Output directory.
        #[arg(long, default_value = "results")]
        out: PathBuf,
    },
}

#[derive(Args)]
struct SyntheticArgs {
    /// Argument k (the initial tasks are A(k-1) … A(0)); 1 ≤ k ≤ 40. A(k) runs P(k) tasks,
    /// about 1.6× more per step of k: P(40) = 866,988,830 tasks, the limit of 2^30.
    #[arg(long, default_value_t = 24)]
    k: u32,
    /// Work factor f: a task does 100·f to 160·f units of work (about 0.8 ns each). The run's
    /// work, at most 160·f·P(k) units, must be at most 2^42 (about an hour sequentially).
    #[arg(long, default_value_t = 40)]
    f: u32,
    /// Thread counts, comma-separated; each 1 to 4096, none given twice.
    #[arg(long, default_value = "1,2", value_delimiter = ',')]
    threads: Vec<usize>,
    /// Pools (names or aliases), comma-separated, or `all`.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pool: Vec<String>,
    /// Memory managers for list-based pools, comma-separated, or `all`.
    #[arg(long, default_value = "dgbko", value_delimiter = ',')]
    mem: Vec<String>,
    /// Wake-up policies, comma-separated: every-put (java-dq2), on-empty (java-dq9), spin (java-dq10), or `all`.
    #[arg(long, default_value = "on-empty", value_delimiter = ',')]
    wake: Vec<String>,
    /// Repetitions per configuration (the median is reported); at least 1.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Pin worker i to CPU i mod cores: `--pin`, `--pin true` or `--pin false` (the default).
    #[arg(long, default_value_t = false, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pin: bool,
    /// Search strategy of the steal-half pool (`manber`): tree, linear or random.
    #[arg(long, default_value = "tree")]
    search: String,
    /// Record a schedule trace of every configuration (one extra, untimed repetition each,
    /// on runtimes that record; the timed runs do not): Chrome trace-event JSON to this file
    /// (open it in Perfetto, or `taskpools trace FILE` for utilisation, steals and the
    /// working phase over time), and a Gantt chart per configuration (like Figure 1 of the
    /// task-pool paper) into the folder FILE with the extension `.gantt`.
    #[arg(long)]
    trace: Option<PathBuf>,
    #[command(flatten)]
    out: OutputArgs,
}

#[derive(Args)]
struct DequeArgs {
    /// Thread counts P (owner + P-1 thieves), comma-separated; each 2 to 4096, none given twice.
    #[arg(long, default_value = "2,4", value_delimiter = ',')]
    threads: Vec<usize>,
    /// Pushes by the owner; 1 to 2^28 (268,435,456).
    #[arg(long, default_value_t = 128_000)]
    ops: usize,
    /// Deque capacity (fixed-size rows reject pushes when full; growable rows start there);
    /// 2 to 2^24 (16,777,216).
    #[arg(long, default_value_t = 16)]
    capacity: usize,
    /// Repetitions (the median is reported); at least 1.
    #[arg(long, default_value_t = 25)]
    reps: usize,
    #[command(flatten)]
    out: OutputArgs,
}

#[derive(Args)]
struct ForkjoinArgs {
    /// Thread counts, comma-separated; each 1 to 4096, none given twice.
    #[arg(long, default_value = "1,2", value_delimiter = ',')]
    threads: Vec<usize>,
    /// Repetitions (the median is reported); at least 1.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// fib(n); n ≤ 45 (a run makes about fib(n) joins: fib(45) ≈ 1.1e9).
    #[arg(long, default_value_t = 30)]
    fib: u64,
    /// Depth d of the binary tree to sum; d ≤ 25: its 2^(d+1) - 1 nodes of 16 bytes must fit
    /// in 1 GiB.
    #[arg(long, default_value_t = 20)]
    tree_depth: u32,
    /// Elements for mergesort and quicksort; at most 2^28 (268,435,456: each of the four u32
    /// buffers is then 1 GiB).
    #[arg(long, default_value_t = 1 << 21)]
    sort_len: usize,
    /// Matrix size n for the 8-way recursive multiply: a power of two, at most 2048.
    #[arg(long, default_value_t = 512)]
    matrix: usize,
    /// Our runtime's pools, comma-separated, or `all`: private-deque (acr13), chase-lev (dcwq).
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pool: Vec<String>,
    /// Kernels, comma-separated, or `all`: fib, tree-sum, mergesort, quicksort, matmul.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    kernels: Vec<String>,
    /// Pin worker i of every runtime (ours, rayon, chili, forte, the ceiling's threads) to core
    /// i mod cores, and the sequential and `calls` runs to core 0, where every runtime's worker 0 runs.
    /// Without pinning, a worker woken by another is often placed on the waker's core, and the
    /// two share it for milliseconds: 2-thread runs then measure the OS, not the runtime.
    /// `--pin`, `--pin true` (the default) or `--pin false`.
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pin: bool,
    /// Record a schedule trace of one extra, untimed run of each kernel on each of our pools
    /// and thread counts (on runtimes that record; the timed runs do not): Chrome trace-event
    /// JSON to this file and Gantt charts into the folder FILE with the extension `.gantt`.
    #[arg(long)]
    trace: Option<PathBuf>,
    #[command(flatten)]
    out: OutputArgs,
}

/// A comma-separated option's values: each name parsed by `one`, `all` expanded to `all`'s
/// members in place, repeats dropped (first position kept).
fn names_or_all<T: Clone + PartialEq>(
    names: &[String],
    all: &[T],
    one: impl Fn(&str) -> Result<T>,
) -> Result<Vec<T>> {
    let mut out: Vec<T> = Vec::new();
    for n in names {
        let add = if n == "all" {
            all.to_vec()
        } else {
            vec![one(n)?]
        };
        for x in add {
            if !out.contains(&x) {
                out.push(x);
            }
        }
    }
    Ok(out)
}

/// `--pool` of `forkjoin`: names, aliases or `all`.
fn fj_pools(names: &[String]) -> Result<Vec<taskpools::forkjoin::Pool>> {
    use taskpools::forkjoin::Pool;
    names_or_all(names, &Pool::ALL, |n| Ok(Pool::from_name(n)?))
}

fn forkjoin_cmd(p: &forkjoin::Params, out: &Outputs<'_>, quiet: bool) -> Result<()> {
    let progress = Progress::new(!quiet);
    let records = forkjoin::run(p, &progress)?;
    progress.finish();
    let table = report::forkjoin_table(&records);
    emit(&table, &records, out, quiet)?;
    if let Some(path) = out.plot {
        let mut labels: Vec<String> = Vec::new();
        for r in records.iter().filter(|r| r.runtime != "sequential") {
            let l = format!("{} x{}", r.kernel, r.threads);
            if !labels.contains(&l) {
                labels.push(l);
            }
        }
        let names: Vec<String> = p
            .pools
            .iter()
            .map(|p| p.name().to_string())
            .chain(["rayon", "chili", "forte"].map(String::from))
            .collect();
        let series: Vec<(String, Vec<f64>)> = names
            .iter()
            .map(|rt| {
                let v = labels
                    .iter()
                    .map(|l| {
                        records
                            .iter()
                            .find(|r| {
                                r.runtime == *rt && format!("{} x{}", r.kernel, r.threads) == *l
                            })
                            .map_or(f64::NAN, |r| r.speedup_vs_seq)
                    })
                    .collect();
                (rt.to_string(), v)
            })
            .collect();
        report::bar_chart(
            path,
            "fork-join: speedup vs sequential",
            "speedup vs sequential",
            &labels,
            &series,
            Some(1.0),
        )?;
    }
    Ok(())
}

#[derive(Args)]
struct BlockedArgs {
    /// Thread counts, comma-separated; each 1 to 4096, none given twice.
    #[arg(long, default_value = "1,2", value_delimiter = ',')]
    threads: Vec<usize>,
    /// Repetitions (the median is reported); at least 1.
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// LU: blocks per side, 2 to 256 (BOTS sparselu's pattern; 64 x 64 blocks of 64 is the
    /// issue's size). Three matrices of (blocks x block)^2 f64 must fit in 2 GiB.
    #[arg(long, default_value_t = 64)]
    lu_blocks: usize,
    /// LU: elements per block side, 1 to 256.
    #[arg(long, default_value_t = 64)]
    lu_block: usize,
    /// Jacobi: grid side, a multiple of --grid-block, at most 8192 (four grids of f64 must
    /// fit in 2 GiB), at most 1024 blocks per side.
    #[arg(long, default_value_t = 4096)]
    grid: usize,
    /// Jacobi: block side.
    #[arg(long, default_value_t = 128)]
    grid_block: usize,
    /// Jacobi: sweeps, 1 to 1000.
    #[arg(long, default_value_t = 4)]
    sweeps: usize,
    /// The kernels, comma-separated: lu, jacobi.
    #[arg(long, default_value = "lu,jacobi", value_delimiter = ',')]
    kernels: Vec<String>,
    /// Pin worker i of every runtime to core i mod cores and the sequential run to core 0:
    /// `--pin`, `--pin true` (the default) or `--pin false`.
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pin: bool,
    /// Record a schedule trace of the first repetition of each of our configurations (our
    /// runtimes then record in every repetition; the table's times include that): Chrome
    /// trace-event JSON to this file and Gantt charts into the folder FILE with the extension
    /// `.gantt`.
    #[arg(long)]
    trace: Option<PathBuf>,
    #[command(flatten)]
    out: OutputArgs,
}

fn check_blocked(a: &BlockedArgs) -> Result<()> {
    check_threads("--threads", &a.threads, 1)?;
    if let Some(k) = a
        .kernels
        .iter()
        .find(|k| !["lu", "jacobi"].contains(&k.as_str()))
    {
        bail!("--kernels: unknown kernel `{k}`; known: lu, jacobi");
    }
    check_positive("--reps", a.reps)?;
    if !(2..=256).contains(&a.lu_blocks) || !(1..=256).contains(&a.lu_block) {
        bail!(
            "--lu-blocks {} --lu-block {}: blocks per side must be 2 to 256 and the block side 1 to 256",
            a.lu_blocks,
            a.lu_block
        );
    }
    // The run keeps three matrices (input, expected result, the run's copy), which can fill
    // in up to fully dense.
    let lu_bytes = ((a.lu_blocks * a.lu_block) as u64).pow(2) * 8 * 3;
    if lu_bytes > MAX_BLOCKED_BYTES {
        bail!(
            "--lu-blocks {} --lu-block {}: the LU's matrices could take {} MiB once filled in; \
             at most {} MiB (64 x 64 blocks of 64 take 384 MiB)",
            a.lu_blocks,
            a.lu_block,
            lu_bytes >> 20,
            MAX_BLOCKED_BYTES >> 20
        );
    }
    let grid_bytes = (a.grid as u64).pow(2) * 8 * 4;
    if grid_bytes > MAX_BLOCKED_BYTES {
        bail!(
            "--grid {}: the four grids (input, expected, two for the run) would take {} MiB; at \
             most {} MiB (a grid side of 8192)",
            a.grid,
            grid_bytes >> 20,
            MAX_BLOCKED_BYTES >> 20
        );
    }
    if a.grid_block != 0 && a.grid / a.grid_block > 1024 {
        bail!(
            "--grid {} --grid-block {}: at most 1024 blocks per side (a million spawns per sweep)",
            a.grid,
            a.grid_block
        );
    }
    if a.grid_block == 0 || a.grid < 3 || a.grid % a.grid_block != 0 {
        bail!(
            "--grid {} --grid-block {}: the grid side must be at least 3 and a multiple of the block side",
            a.grid,
            a.grid_block
        );
    }
    if !(1..=1000).contains(&a.sweeps) {
        bail!("--sweeps {}: 1 to 1000", a.sweeps);
    }
    a.out.check()
}

fn blocked_cmd(p: &blocked::Params, out: &Outputs<'_>, quiet: bool) -> Result<()> {
    let progress = Progress::new(!quiet);
    let records = blocked::run(p, &progress)?;
    progress.finish();
    let table = report::blocked_table(&records);
    emit(&table, &records, out, quiet)?;
    if let Some(path) = out.plot {
        let (labels, series) = report::grouped_series(
            &records,
            |r| (r.runtime != "sequential").then(|| format!("{} x{}", r.kernel, r.threads)),
            |r| format!("{} {}", r.runtime, r.order),
            |r| r.speedup_vs_seq,
        );
        report::bar_chart(
            path,
            "blocked kernels, a scope per step: speedup vs sequential",
            "speedup vs sequential",
            &labels,
            &series,
            Some(1.0),
        )?;
    }
    Ok(())
}

#[derive(Args)]
struct QueensArgs {
    /// Board size n, 4 to 16 (n = 13: 73,712 solutions, 4.7 million nodes; each step of n
    /// costs about 6× more).
    #[arg(long, default_value_t = 13)]
    n: u32,
    /// Thread counts, comma-separated; each 1 to 4096, none given twice.
    #[arg(long, default_value = "1,2", value_delimiter = ',')]
    threads: Vec<usize>,
    /// Repetitions (the median is reported); at least 1.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Task pools for the task-pool rows (names or aliases), comma-separated, or `all`.
    #[arg(
        long,
        default_value = "private-deque,private-public,chase-lev",
        value_delimiter = ','
    )]
    pool: Vec<String>,
    /// Pin worker i of every runtime to core i mod cores, and the sequential run to core 0:
    /// `--pin`, `--pin true` (the default) or `--pin false`.
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pin: bool,
    /// Record a schedule trace of our variants (task pools without the cutoff, scope, join;
    /// one extra, untimed run each per thread count, on runtimes that record): Chrome
    /// trace-event JSON to this file (`taskpools trace FILE` summarizes it) and Gantt charts
    /// into the folder FILE with the extension `.gantt`.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Also run each pool with a run-time cutoff (rows marked `cutoff N`): a task puts a child
    /// only while its worker's own queue holds fewer than this many tasks, and counts the
    /// child's subtree with plain calls otherwise (`Ctx::queued`); 0: no such rows.
    #[arg(long, default_value_t = queens::CUTOFF_QUEUED)]
    cutoff: usize,
    #[command(flatten)]
    out: OutputArgs,
}

fn queens_cmd(p: &queens::Params, out: &Outputs<'_>, quiet: bool) -> Result<()> {
    let progress = Progress::new(!quiet);
    let records = queens::run(p, &progress)?;
    progress.finish();
    let table = report::queens_table(&records);
    emit(&table, &records, out, quiet)?;
    if let Some(path) = out.plot {
        let labels: Vec<String> = p.threads.iter().map(|t| format!("x{t}")).collect();
        let mut names: Vec<(String, String)> = Vec::new();
        for r in records.iter().filter(|r| r.front_end != "sequential") {
            let k = (r.front_end.clone(), r.runtime.clone());
            if !names.contains(&k) {
                names.push(k);
            }
        }
        let series: Vec<(String, Vec<f64>)> = names
            .iter()
            .map(|(fe, rt)| {
                let v = p
                    .threads
                    .iter()
                    .map(|&t| {
                        records
                            .iter()
                            .find(|r| r.front_end == *fe && r.runtime == *rt && r.threads == t)
                            .map_or(f64::NAN, |r| r.speedup_vs_seq)
                    })
                    .collect();
                (format!("{fe} {rt}"), v)
            })
            .collect();
        report::bar_chart(
            path,
            &format!("N-Queens n = {}: speedup vs sequential", p.n),
            "speedup vs sequential",
            &labels,
            &series,
            Some(1.0),
        )?;
    }
    Ok(())
}

#[derive(Args)]
struct DistributedArgs {
    /// Workloads, comma-separated, or `all`: synthetic, queens.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    workload: Vec<String>,
    /// Synthetic A(k): the argument k, 1 to 40.
    #[arg(long, default_value_t = 22)]
    k: u32,
    /// Synthetic A(k): the work factor f, 0 to 100000.
    #[arg(long, default_value_t = 40)]
    f: u32,
    /// N-Queens: the board side, 4 to 16.
    #[arg(long, default_value_t = 11)]
    queens: u32,
    /// Workers per rank, at least 1.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// The pool every rank runs (any of `taskpools list`).
    #[arg(long, default_value = "private-public")]
    pool: String,
    /// Search strategies between ranks, comma-separated, or `all`: random, linear, tree.
    /// Each runs beside the static split (no stealing between ranks).
    #[arg(long, default_value = "all", value_delimiter = ',')]
    search: Vec<String>,
    /// Where the initial tasks start: `rank0` (all on rank 0, the unbalanced input) or
    /// `spread` (round-robin over the ranks).
    #[arg(long, default_value = "rank0")]
    start: String,
    /// Repetitions (the median is reported), at least 1.
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Skip the run with the same total number of threads in one process.
    #[arg(long)]
    no_one_process: bool,
    /// The most tasks one steal reply carries, 1 to 1000000.
    #[arg(long, default_value_t = 256)]
    max_batch: usize,
    /// Emulated cost of crossing ranks, in microseconds per task message and steal request
    /// (up to 1000000).
    #[arg(long, default_value_t = 0)]
    remote_delay_us: u64,
    /// Tests: a random delay up to this many microseconds before each incoming message is
    /// handled (up to 1000000).
    #[arg(long, default_value_t = 0, hide = true)]
    jitter_us: u64,
    /// Tests: a task on this rank panics after 1000 tasks.
    #[arg(long, hide = true)]
    panic_on_rank: Option<usize>,
    /// Tests: this rank's process exits after 1000 tasks.
    #[arg(long, hide = true)]
    die_on_rank: Option<usize>,
    /// Write the records as JSON (rank 0; `-` for stdout, no table).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Record each rank's schedule (one extra, untimed run per configuration, on a runtime
    /// that records): for `--trace dir/t.json`, rank r writes `dir/t.rank<r>.json` (open it
    /// in Perfetto, or `taskpools trace`) and Gantt charts into `dir/t.rank<r>.gantt/`.
    #[arg(long)]
    trace: Option<PathBuf>,
}

#[derive(Args)]
struct PlacesArgs {
    /// The places: `cores` (one place per core, the default), `threads`, `ll_caches`,
    /// `numa_domains`, `sockets`, a shape such as `2x1` (places x workers, pinned round-robin
    /// over the cores), or core lists such as `{0},{1}`. At least 2 places.
    #[arg(long, default_value = "cores")]
    places: String,
    /// Benchmarks, comma-separated, or `all`: cache-stress, mergesort, matmul.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    bench: Vec<String>,
    /// Repetitions, interleaved (the median is reported); at least 1.
    #[arg(long, default_value_t = 7)]
    reps: usize,
    /// Cache Stress: MiB per array (the talk: 8), up to 1024.
    #[arg(long, default_value_t = 8)]
    cache_mb: usize,
    /// Cache Stress: passes of each task over its array (the talk: 100), 1 to 10000.
    #[arg(long, default_value_t = 16)]
    passes: usize,
    /// Cache Stress: tasks per worker (the talk: 8 threads per core), 1 to 1024.
    #[arg(long, default_value_t = 8)]
    tasks_per_worker: usize,
    /// Merge sort: elements (the talk: 4194304), up to 2^28.
    #[arg(long, default_value_t = 1 << 22)]
    sort_n: usize,
    /// Merge sort: sorters per worker (the talk: 8192).
    #[arg(long, default_value_t = 8192)]
    sorters_per_worker: usize,
    /// Block matrix multiply: side (the talk: 2048), leaf * 2^k, up to 8192.
    #[arg(long, default_value_t = 512)]
    mat_n: usize,
    /// Block matrix multiply: leaf side, at least 4.
    #[arg(long, default_value_t = 64)]
    mat_leaf: usize,
    /// The talk's sizes: 100 passes, matrices of 2048 (slow on 2 cores: minutes).
    #[arg(long)]
    paper_sizes: bool,
    /// Skip the sections on deque sharing and steal policies.
    #[arg(long)]
    no_policies: bool,
    /// Record a schedule trace of every configuration on our runtimes (one extra, untimed
    /// repetition each): Chrome trace-event JSON to this file (open it in Perfetto or
    /// chrome://tracing, or summarize it with `taskpools trace FILE`), and a Gantt chart per
    /// configuration into the folder FILE with the extension `.gantt`.
    #[arg(long)]
    trace: Option<PathBuf>,
    #[command(flatten)]
    out: OutputArgs,
}

fn places_params(a: &PlacesArgs) -> Result<places::Params> {
    a.out.check()?;
    let benches = if a.bench.iter().any(|b| b == "all") {
        places::Bench::ALL.to_vec()
    } else {
        a.bench
            .iter()
            .map(|b| places::Bench::from_name(b))
            .collect::<Result<Vec<_>>>()?
    };
    let p = places::Params {
        places: a.places.clone(),
        benches,
        reps: a.reps,
        cache_bytes: a.cache_mb.min(1 << 20) << 20,
        passes: if a.paper_sizes { 100 } else { a.passes },
        tasks_per_worker: a.tasks_per_worker,
        sort_n: a.sort_n,
        sorters_per_worker: a.sorters_per_worker,
        mat_n: if a.paper_sizes { 2048 } else { a.mat_n },
        mat_leaf: a.mat_leaf,
        policies: !a.no_policies,
        trace: a.trace.clone(),
    };
    check_output("--trace", a.trace.as_deref(), false)?;
    p.check()?;
    Ok(p)
}

fn trace_cost_cmd(reps: usize) -> Result<()> {
    let rows = experiments::trace_cost::run(reps, 2)?;
    println!(
        "What a schedule trace costs: two runtimes of 2 pinned workers, one recording; medians of {reps}\n\
         interleaved repetitions. Only jobs taken from a queue are events (a join taken back by its\n\
         own worker runs inline and records nothing).\n"
    );
    println!(
        "{:<26} {:>10} {:>10} {:>7} {:>10} {:>10} {:>12}",
        "program", "off", "on", "on/off", "jobs", "events", "ns per event"
    );
    for r in rows {
        println!(
            "{:<26} {:>7.2} ms {:>7.2} ms {:>7.3} {:>10} {:>10} {:>12.1}",
            r.program,
            r.off_ms,
            r.on_ms,
            r.on_ms / r.off_ms,
            r.jobs,
            r.events,
            (r.on_ms - r.off_ms) * 1e6 / r.events.max(1) as f64
        );
    }
    Ok(())
}

#[cfg(not(feature = "mpi"))]
fn distributed_cmd(_: &DistributedArgs) -> Result<()> {
    bail!(
        "this taskpools was built without the `mpi` feature; build it with \
         `cargo build --release -p taskpools-bench --features mpi` (needs a system MPI: \
         apt-get install libopenmpi-dev openmpi-bin libclang-dev) and run it under mpirun, \
         e.g. `mpirun --bind-to none -n 2 target/release/taskpools distributed`"
    )
}

#[cfg(feature = "mpi")]
fn distributed_cmd(a: &DistributedArgs) -> Result<()> {
    let p = match distributed_params(a) {
        Ok(p) => p,
        // Every rank finds the same mistake in the same arguments: rank 0 says it. (MPI is
        // not started yet; the launcher's environment tells the rank.)
        Err(e) if launcher_rank().is_some_and(|r| r != 0) => {
            drop(e);
            std::process::exit(1)
        }
        Err(e) => return Err(e),
    };
    // What only this rank can find wrong (the paths it writes): every rank says it.
    let rank = launcher_rank().unwrap_or(0);
    if let Err(e) = distributed_outputs(a, rank) {
        if rank == 0 {
            return Err(e);
        }
        eprintln!("Error: rank {rank}: {e:#}");
        std::process::exit(1);
    }
    let (_, records) = experiments::distributed::run(&p);
    let Ok(records) = records else {
        // Rank 0 has reported the error (every rank fails together). MPI is finalized.
        std::process::exit(1);
    };
    // Only rank 0 has records.
    if !records.is_empty() {
        let to_stdout = a.json.as_deref() == Some(Path::new("-"));
        if !to_stdout {
            println!(
                "distributed working phase: pool {}, initial tasks start on {}; ranks share \
                 the machine's cores (on this machine: overheads, not speedups)",
                p.pool.name(),
                if a.start == "rank0" {
                    "rank 0"
                } else {
                    "every rank"
                }
            );
            print!("{}", experiments::distributed::table(&records));
        }
        if let Some(path) = a.json.as_deref() {
            report::write_json(path, &records)?;
        }
    }
    Ok(())
}

/// Checked before MPI starts: each rank probes the path it will write (`rank`, from the
/// launcher's environment), and only rank 0 the JSON it writes; two ranks probing one path
/// would race.
#[cfg(feature = "mpi")]
fn distributed_outputs(a: &DistributedArgs, rank: usize) -> Result<()> {
    if rank == 0 {
        check_output("--json", a.json.as_deref(), true)?;
    }
    if let Some(t) = a.trace.as_deref() {
        check_output(
            "--trace",
            Some(&experiments::distributed::rank_trace_path(t, rank)),
            false,
        )?;
    }
    Ok(())
}

/// This process's rank as the MPI launcher's environment gives it (Open MPI, MPICH/PMI).
#[cfg(feature = "mpi")]
fn launcher_rank() -> Option<usize> {
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

#[cfg(feature = "mpi")]
fn distributed_params(a: &DistributedArgs) -> Result<experiments::distributed::Params> {
    use experiments::distributed::{self, Start, Workload};
    let workloads = if a.workload.iter().any(|w| w == "all") {
        vec![Workload::Synthetic, Workload::Queens]
    } else {
        a.workload
            .iter()
            .map(|w| Workload::from_name(w))
            .collect::<Result<Vec<_>>>()?
    };
    let searches = if a.search.iter().any(|s| s == "all") {
        Search::ALL.to_vec()
    } else {
        a.search
            .iter()
            .map(|s| Ok(Search::from_name(s)?))
            .collect::<Result<Vec<_>>>()?
    };
    let pool = PoolKind::from_name(&a.pool)?;
    let start = Start::from_name(&a.start)?;
    if !(1..=40).contains(&a.k) {
        bail!(
            "--k must be 1 to 40 (P(40) is already 2.7e9 tasks), not {}",
            a.k
        );
    }
    if a.f > 100_000 {
        bail!("--f must be at most 100000, not {}", a.f);
    }
    if !(4..=16).contains(&a.queens) {
        bail!("--queens must be 4 to 16, not {}", a.queens);
    }
    check_threads("--threads", &[a.threads], 1)?;
    if a.reps == 0 {
        bail!("--reps must be at least 1");
    }
    if !(1..=1_000_000).contains(&a.max_batch) {
        bail!("--max-batch must be 1 to 1000000, not {}", a.max_batch);
    }
    if a.remote_delay_us > 1_000_000 || a.jitter_us > 1_000_000 {
        bail!("--remote-delay-us and --jitter-us must be at most 1000000");
    }
    Ok(distributed::Params {
        workloads,
        k: a.k,
        f: a.f,
        queens: a.queens,
        threads: a.threads,
        pool,
        searches,
        start,
        reps: a.reps,
        single: !a.no_one_process,
        max_batch: a.max_batch,
        remote_delay: std::time::Duration::from_micros(a.remote_delay_us),
        jitter: std::time::Duration::from_micros(a.jitter_us),
        panic_on_rank: a.panic_on_rank,
        die_on_rank: a.die_on_rank,
        trace: a.trace.clone(),
    })
}

fn places_cmd(p: &places::Params, out: &Outputs<'_>, quiet: bool) -> Result<()> {
    let progress = Progress::new(!quiet);
    let records = places::run(p, &progress)?;
    progress.finish();
    let table = report::places_table(&records, p)?;
    emit(&table, &records, out, quiet)?;
    if let Some(path) = out.plot {
        let loc: Vec<&places::Record> =
            records.iter().filter(|r| r.section == "locality").collect();
        let mut labels: Vec<String> = Vec::new();
        for r in &loc {
            let l = format!("{} {}", r.config, r.locality);
            if !labels.contains(&l) {
                labels.push(l);
            }
        }
        let mut benches: Vec<String> = Vec::new();
        for r in &loc {
            if !benches.contains(&r.bench) {
                benches.push(r.bench.clone());
            }
        }
        let series: Vec<(String, Vec<f64>)> = benches
            .iter()
            .map(|b| {
                let v = labels
                    .iter()
                    .map(|l| {
                        loc.iter()
                            .find(|r| r.bench == *b && format!("{} {}", r.config, r.locality) == *l)
                            .map_or(f64::NAN, |r| r.vs_ref)
                    })
                    .collect();
                (b.clone(), v)
            })
            .collect();
        report::bar_chart(
            path,
            "Locality variants: time relative to best locality on places",
            "time / best-locality time",
            &labels,
            &series,
            Some(1.0),
        )?;
    }
    Ok(())
}

#[derive(Args)]
struct DataflowArgs {
    /// Thread counts, comma-separated; each 1 to 4096, none given twice.
    #[arg(long, default_value = "1,2", value_delimiter = ',')]
    threads: Vec<usize>,
    /// Repetitions (the median is reported); at least 1.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Tasks per graph, 1 to 10,000,000. (libgomp at 1 thread takes time quadratic in the
    /// tasks on the graphs with reads: 20,000 take about 2 s per repetition there.)
    #[arg(long, default_value_t = 20_000)]
    tasks: usize,
    /// Blocks per row of the graphs (the width of the chains, stencils and random DAG),
    /// 3 to 1,000,000.
    #[arg(long, default_value_t = 64)]
    width: usize,
    /// Graphs, comma-separated, or `all`: independent, chains, fan-in-2, fan-in-4, random.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    graphs: Vec<String>,
    /// Pin worker i of every runtime and OpenMP thread i to core i mod cores, and the
    /// sequential run to core 0: `--pin`, `--pin true` (the default) or `--pin false`.
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pin: bool,
    /// Record a schedule trace of one extra, untimed run of each data-flow variant per graph
    /// and thread count (on runtimes that record): Chrome trace-event JSON to this file, Gantt
    /// charts into the folder FILE with the extension `.gantt`, task graphs with their critical
    /// path into FILE with the extension `.dot`.
    #[arg(long)]
    trace: Option<PathBuf>,
    #[command(flatten)]
    out: OutputArgs,
}

/// The most tasks `dataflow` may run per graph (its arrays take about 30 bytes per task).
const MAX_DATAFLOW_TASKS: usize = 10_000_000;

fn dataflow_params(a: &DataflowArgs) -> Result<dataflow::Params> {
    check_threads("--threads", &a.threads, 1)?;
    check_positive("--reps", a.reps)?;
    if !(1..=MAX_DATAFLOW_TASKS).contains(&a.tasks) {
        bail!("--tasks {}: 1 to {MAX_DATAFLOW_TASKS}", a.tasks);
    }
    if !(3..=1_000_000).contains(&a.width) {
        bail!("--width {}: 3 to 1000000", a.width);
    }
    let graphs = if a.graphs.iter().any(|g| g == "all") {
        dataflow::Graph::ALL.to_vec()
    } else {
        a.graphs
            .iter()
            .map(|g| dataflow::Graph::from_name(g))
            .collect::<Result<Vec<_>>>()?
    };
    a.out.check()?;
    check_output("--trace", a.trace.as_deref(), false)?;
    Ok(dataflow::Params {
        threads: a.threads.clone(),
        reps: a.reps,
        tasks: a.tasks,
        width: a.width,
        graphs,
        pin: a.pin,
        trace: a.trace.clone(),
    })
}

fn dataflow_cmd(p: &dataflow::Params, out: &Outputs<'_>, quiet: bool) -> Result<()> {
    let progress = Progress::new(!quiet);
    let records = dataflow::run(p, &progress)?;
    progress.finish();
    let table = report::dataflow_table(&records, dataflow::openmp_available());
    emit(&table, &records, out, quiet)?;
    if let Some(path) = out.plot {
        let (labels, series) = report::grouped_series(
            &records,
            |r| (r.variant != "sequential").then(|| format!("{} x{}", r.graph, r.threads)),
            |r| r.variant.clone(),
            |r| r.ns_per_task.unwrap_or(f64::NAN),
        );
        report::bar_chart_log(
            path,
            "data-flow task graphs: nanoseconds per task (lower is better, log scale)",
            "ns per task",
            &labels,
            &series,
        )?;
    }
    Ok(())
}

#[derive(Args)]
struct SuiteArgs {
    /// Thread counts, comma-separated; each 1 to 4096, none given twice.
    #[arg(long, default_value = "1,2", value_delimiter = ',')]
    threads: Vec<usize>,
    /// Repetitions (the geometric mean is reported); at least 1.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Benchmarks, comma-separated, or `all`: black-scholes, cholesky, heat, lu, matmul,
    /// mergesort.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    bench: Vec<String>,
    /// The seed's problem sizes (30 M options, Cholesky 2048², heat 2048², LU 4096², matrix
    /// multiply 2048², mergesort 2^20 keys, smaller than our default): minutes per benchmark
    /// on 2 cores. The size options
    /// below override single sizes either way.
    #[arg(long)]
    paper_sizes: bool,
    /// Black-Scholes options, 1 to 2^25 (default 2^22).
    #[arg(long)]
    options: Option<usize>,
    /// Options per Black-Scholes task, 1 to the options (default 128).
    #[arg(long)]
    options_block: Option<usize>,
    /// Cholesky matrix side, 1 to 8192 (default 1536).
    #[arg(long)]
    cholesky_n: Option<usize>,
    /// Cholesky tile side; must divide the matrix side (default 128).
    #[arg(long)]
    cholesky_tile: Option<usize>,
    /// Heat grid side, 3 to 8192 (default 1536).
    #[arg(long)]
    heat_n: Option<usize>,
    /// Heat steps, 1 to 100,000 (default 60; a step of an 8192² grid takes about 0.1 s
    /// on one core).
    #[arg(long)]
    heat_steps: Option<usize>,
    /// Rows per heat task, 1 to the grid side (default 32).
    #[arg(long)]
    heat_band: Option<usize>,
    /// LU matrix side, 1 to 8192 (default 1280).
    #[arg(long)]
    lu_n: Option<usize>,
    /// LU tile side; must divide the matrix side (default 128).
    #[arg(long)]
    lu_tile: Option<usize>,
    /// Matrix-multiply side: the leaf side times a power of two, at most 8192 (default 1024).
    #[arg(long)]
    matmul_n: Option<usize>,
    /// Matrix-multiply leaf side (default 64).
    #[arg(long)]
    matmul_leaf: Option<usize>,
    /// Mergesort keys, 1 to 2^27 (default 2^22).
    #[arg(long)]
    sort_n: Option<usize>,
    /// Keys per mergesort leaf, 1 to the keys (default 4096).
    #[arg(long)]
    sort_leaf: Option<usize>,
    /// Look-up tables of the `dataflow` variants: `exact` (no false dependences) or `blocks`
    /// (the seed's block mode). Heat runs both its variants whatever this says.
    #[arg(long, default_value = "exact")]
    lut: String,
    /// Block size of the look-up tables in bytes, 1 to 2^30 (the seed: 2048).
    #[arg(long, default_value_t = 2048)]
    lut_block: usize,
    /// Pin worker i of every runtime and OpenMP thread i to core i mod cores, and the
    /// sequential runs to core 0: `--pin`, `--pin true` (the default) or `--pin false`.
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pin: bool,
    /// Write the records as JSON (`-` for stdout: no table, no progress bar). The folder must
    /// exist; the file is checked for writing before the run.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the records as CSV (a file: `-` is refused). The folder must exist.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Directory for the figures (one SVG per benchmark: speedup over threads, log axes);
    /// created before the run.
    #[arg(long)]
    plot_dir: Option<PathBuf>,
    /// Trace one extra, untimed run of each benchmark's data-flow variant at the largest
    /// thread count: Chrome trace-event JSON to this file (open it in Perfetto, or
    /// `taskpools trace FILE` for a summary with the critical path), Gantt charts into FILE
    /// with the extension `.gantt`, task graphs as Graphviz DOT (critical path in red) into
    /// FILE with the extension `.dot`.
    #[arg(long)]
    trace: Option<PathBuf>,
}

fn suite_params(a: &SuiteArgs) -> Result<suite::Params> {
    let benches = names_or_all(&a.bench, &suite::Bench::ALL, suite::Bench::from_name)?;
    use taskpools::dataflow::Config;
    if !(1..=Config::MAX_BLOCK).contains(&a.lut_block) {
        bail!(
            "--lut-block {}: must be 1 to 2^30 ({}) bytes",
            a.lut_block,
            Config::MAX_BLOCK
        );
    }
    let config = match a.lut.as_str() {
        "exact" => Config::exact(a.lut_block),
        "blocks" => Config::blocks(a.lut_block),
        other => bail!("--lut {other}: `exact` or `blocks`"),
    }?;
    check_threads("--threads", &a.threads, 1)?;
    check_positive("--reps", a.reps)?;
    let mut s = if a.paper_sizes {
        suite::Sizes::PAPER
    } else {
        suite::Sizes::DEFAULT
    };
    let set = |field: &mut usize, v: Option<usize>| {
        if let Some(v) = v {
            *field = v;
        }
    };
    set(&mut s.options, a.options);
    set(&mut s.options_block, a.options_block);
    set(&mut s.cholesky_n, a.cholesky_n);
    set(&mut s.cholesky_tile, a.cholesky_tile);
    set(&mut s.heat_n, a.heat_n);
    set(&mut s.heat_steps, a.heat_steps);
    set(&mut s.heat_band, a.heat_band);
    set(&mut s.lu_n, a.lu_n);
    set(&mut s.lu_tile, a.lu_tile);
    set(&mut s.matmul_n, a.matmul_n);
    set(&mut s.matmul_leaf, a.matmul_leaf);
    set(&mut s.sort_n, a.sort_n);
    set(&mut s.sort_leaf, a.sort_leaf);
    s.check()?;
    check_output("--json", a.json.as_deref(), true)?;
    check_output("--csv", a.csv.as_deref(), false)?;
    if let Some(dir) = a.plot_dir.as_deref() {
        check_dir_writable("--plot-dir", dir)?;
    }
    check_output("--trace", a.trace.as_deref(), false)?;
    Ok(suite::Params {
        threads: a.threads.clone(),
        reps: a.reps,
        benches,
        sizes: s,
        dataflow: config,
        pin: a.pin,
        trace: a.trace.clone(),
    })
}

/// Creates `dir` if needed and checks that a file can be written there (before any work).
fn check_dir_writable(opt: &str, dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("{opt} {}: cannot create", dir.display()))?;
    let probe = dir.join(format!(".taskpools-probe-{}", std::process::id()));
    fs::write(&probe, b"")
        .with_context(|| format!("{opt} {}: cannot write there", dir.display()))?;
    let _ = fs::remove_file(&probe);
    Ok(())
}

fn suite_cmd(
    p: &suite::Params,
    out: &Outputs<'_>,
    plot_dir: Option<&Path>,
    quiet: bool,
) -> Result<()> {
    let progress = Progress::new(!quiet);
    let records = suite::run(p, &progress)?;
    progress.finish();
    let table = report::suite_table(&records, suite::openmp_available());
    emit(&table, &records, out, quiet)?;
    if let Some(dir) = plot_dir {
        for b in &p.benches {
            let rows: Vec<_> = records.iter().filter(|r| r.bench == b.name()).collect();
            let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
            for r in rows.iter().filter(|r| r.variant != "sequential") {
                let point = (r.threads as f64, r.speedup.unwrap_or(f64::NAN));
                match series.iter_mut().find(|(n, _)| *n == r.variant) {
                    Some((_, v)) => v.push(point),
                    None => series.push((r.variant.clone(), vec![point])),
                }
            }
            let title = format!("{} ({}): speedup over sequential", b.name(), rows[0].setup);
            let path = dir.join(format!("suite_{}.svg", b.name()));
            report::loglog_speedup(&path, &title, &series)
                .with_context(|| format!("--plot-dir: writing {}", path.display()))?;
        }
    }
    Ok(())
}

#[derive(Args)]
struct ManberArgs {
    /// Participant counts, comma-separated (the seed: 16); each 1 to 4096, none given twice.
    #[arg(long, default_value = "16,2", value_delimiter = ',')]
    participants: Vec<usize>,
    /// Total operations per trial (the seed: 5000); 1 to 10^8.
    #[arg(long, default_value_t = 5000)]
    ops: usize,
    /// Initial elements per participant (the seed: 320 for 16 participants, i.e. 20); the
    /// largest participant count times this must be at most 2^26 (67,108,864) elements.
    #[arg(long, default_value_t = 20)]
    fill: usize,
    /// Search strategies: tree, linear, random, or `all`.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    search: Vec<String>,
    /// Job mixes of the random model (percent adds, 0 to 100), comma-separated.
    #[arg(
        long,
        default_value = "0,10,20,30,40,50,60,70,80,90,100",
        value_delimiter = ','
    )]
    mixes: Vec<u32>,
    /// Producer counts 0..=P in steps of this; at least 1.
    #[arg(long, default_value_t = 1)]
    producer_step: usize,
    /// Waiting mode: removers that find nothing are handed the next added element.
    #[arg(long)]
    waiting: bool,
    /// Remote-access delays in ns (busy-wait per non-local segment or tree node),
    /// comma-separated; each at most 10^6 (1 ms).
    #[arg(long, default_value = "0", value_delimiter = ',')]
    delay_ns: Vec<u64>,
    /// Trials per point (the seed: 10); at least 1.
    #[arg(long, default_value_t = 10)]
    trials: usize,
    /// Write the points as JSON (`-` for stdout: no table, no progress bar). The folder must
    /// exist; the file is checked for writing before the run.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the points as CSV (a file: `-` is refused). The folder must exist.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Directory for the SVG figures (Figures 5, 6-9 and 10 of the seed) and the samples;
    /// created before the run.
    #[arg(long)]
    plot_dir: Option<PathBuf>,
    /// Write the schedule traces of the sampled trials behind Figures 6-9 (the segment sizes
    /// over time are replayed from them): Chrome trace-event JSON to this file (`taskpools
    /// trace FILE` prints the over-time table), Gantt charts into the folder FILE with the
    /// extension `.gantt`.
    #[arg(long)]
    trace: Option<PathBuf>,
}

fn parse_searches(names: &[String]) -> Result<Vec<Search>> {
    names_or_all(names, &Search::ALL, |n| Ok(Search::from_name(n)?))
}

fn manber_cmd(
    p: &manber::Params,
    out: &Outputs<'_>,
    plot_dir: Option<&Path>,
    quiet: bool,
) -> Result<()> {
    let progress = Progress::new(!quiet);
    let (records, samples) = manber::run(p, &progress)?;
    progress.finish();
    let table = report::manber_table(&records);
    emit(&table, &records, out, quiet)?;
    if let Some(dir) = plot_dir {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        manber_figures(dir, &records, &samples)?;
    }
    Ok(())
}

/// The counterparts of the seed's Figures 5, 6-9 and 10.
fn manber_figures(
    dir: &Path,
    records: &[manber::Record],
    samples: &[manber::Samples],
) -> Result<()> {
    let mut ns: Vec<usize> = records.iter().map(|r| r.participants).collect();
    ns.sort_unstable();
    ns.dedup();
    let delay = records.first().map_or(0, |r| r.delay_ns);
    for n in ns {
        let rows: Vec<_> = records
            .iter()
            .filter(|r| r.participants == n && r.delay_ns == delay)
            .collect();
        let over = rows.first().is_some_and(|r| r.oversubscribed);
        let tag = if over { " (oversubscribed)" } else { "" };
        let mut f5 = Vec::new();
        let mut f10 = Vec::new();
        for search in Search::ALL.map(|s| s.name()) {
            let pts = |w: &str, y: &dyn Fn(&manber::Record) -> f64| -> Vec<(f64, f64)> {
                let mut v: Vec<(f64, f64)> = rows
                    .iter()
                    .filter(|r| r.search == search && r.workload == w)
                    .map(|r| (100.0 * r.job_mix, y(r)))
                    .collect();
                v.sort_by(|a, b| a.0.total_cmp(&b.0));
                v
            };
            let r = pts("random", &|r| r.op_ns);
            if !r.is_empty() {
                f5.push((format!("{search}, random ops"), r));
                f5.push((
                    format!("{search}, producers/consumers"),
                    pts("producers-balanced", &|r| r.op_ns),
                ));
            }
            let c = pts("producers-contiguous", &|r| r.elements_per_steal);
            if !c.is_empty() {
                f10.push((format!("{search}, contiguous"), c));
                f10.push((
                    format!("{search}, balanced"),
                    pts("producers-balanced", &|r| r.elements_per_steal),
                ));
            }
        }
        report::line_chart(
            &dir.join(format!("fig5_op_time_vs_mix_p{n}.svg")),
            &format!("mean operation time vs job mix, {n} participants{tag}"),
            "adds (% of operations)",
            "ns per operation",
            &f5,
        )?;
        report::line_chart(
            &dir.join(format!("fig10_elements_per_steal_p{n}.svg")),
            &format!("elements stolen per steal, producers/consumers, {n} participants{tag}"),
            "adds (% of operations)",
            "elements per steal",
            &f10,
        )?;
    }
    for s in samples {
        let series: Vec<(String, Vec<(f64, f64)>)> = s
            .segments
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let role = if s.producers.contains(&i) { "P" } else { "C" };
                (
                    format!("{i} {role}"),
                    v.iter().map(|&(t, n)| (t, n as f64)).collect(),
                )
            })
            .collect();
        report::line_chart(
            &dir.join(format!("segments_{}_{}.svg", s.search, s.workload)),
            &format!(
                "segment sizes over time: {} search, {} (P = producer)",
                s.search, s.workload
            ),
            "time (µs)",
            "elements in segment",
            &series,
        )?;
    }
    report::write_json(&dir.join("segment_samples.json"), samples)?;
    Ok(())
}

fn deque_cmd(p: &deque::Params, out: &Outputs<'_>, quiet: bool) -> Result<Vec<deque::Record>> {
    let progress = Progress::new(!quiet);
    let records = deque::run(p, &progress)?;
    progress.finish();
    let table = report::deque_table(&records, p.ops, p.capacity);
    emit(&table, &records, out, quiet)?;
    if let Some(path) = out.plot {
        let tp: Vec<_> = records
            .iter()
            .filter(|r| r.experiment == "deque-throughput")
            .collect();
        let mut labels: Vec<String> = Vec::new();
        for r in &tp {
            if !labels.contains(&r.deque) {
                labels.push(r.deque.clone());
            }
        }
        let series: Vec<(String, Vec<f64>)> = p
            .threads
            .iter()
            .map(|&t| {
                let v = labels
                    .iter()
                    .map(|l| {
                        tp.iter()
                            .find(|r| &r.deque == l && r.threads == t)
                            .and_then(|r| r.median_mops)
                            .unwrap_or(f64::NAN)
                    })
                    .collect();
                (format!("P = {t}"), v)
            })
            .collect();
        let title = format!(
            "deque throughput, capacity {}, median of {} (Mops/s)",
            p.capacity, p.reps
        );
        report::bar_chart(
            path,
            &title,
            "Mops/s (all operations)",
            &labels,
            &series,
            None,
        )?;
    }
    Ok(records)
}

fn parse_pools(names: &[String]) -> Result<Vec<PoolKind>> {
    names_or_all(names, &PoolKind::ALL, |n| Ok(PoolKind::from_name(n)?))
}

fn parse_mems(names: &[String]) -> Result<Vec<MemKind>> {
    names_or_all(names, &MemKind::ALL, |n| Ok(MemKind::from_name(n)?))
}

fn parse_wakes(names: &[String]) -> Result<Vec<WakePolicy>> {
    names_or_all(names, &WakePolicy::ALL, |n| Ok(WakePolicy::from_name(n)?))
}

fn list() {
    println!("pools (--pool NAME or ALIAS):");
    for p in PoolKind::ALL {
        println!(
            "  {:<24} {:<13} {}{}",
            p.name(),
            p.alias(),
            p.description(),
            if p.uses_mem() { "  [uses --mem]" } else { "" }
        );
    }
    println!("\nmemory managers (--mem NAME or ALIAS):");
    for m in MemKind::ALL {
        println!("  {:<24} {:<13} {}", m.name(), m.alias(), m.description());
    }
    println!("\nwake-up policies (--wake NAME or ALIAS):");
    for w in WakePolicy::ALL {
        println!("  {:<24} {:<13} {}", w.name(), w.alias(), w.description());
    }
    println!("\nsteal-half searches (--search NAME or ALIAS):");
    for s in taskpools::Search::ALL {
        println!("  {:<24} {:<13} {}", s.name(), s.alias(), s.description());
    }
    println!("\nfork-join pools (forkjoin --pool NAME or ALIAS; library: forkjoin::Pool):");
    for p in taskpools::forkjoin::Pool::ALL {
        println!("  {:<24} {:<13} {}", p.name(), p.alias(), p.description());
    }
}

/// `--json`, `--csv` and `--plot`, shared by the experiments that draw one chart.
#[derive(Args)]
struct OutputArgs {
    /// Write the records as JSON (`-` for stdout: no table, no progress bar). The folder must
    /// exist; the file is checked for writing before the run.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the records as CSV (a file: `-` is refused). The folder must exist.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Draw the results as an SVG chart (a file: `-` is refused). The folder must exist.
    #[arg(long)]
    plot: Option<PathBuf>,
}

impl OutputArgs {
    fn outputs(&self) -> Outputs<'_> {
        Outputs {
            json: self.json.as_deref(),
            csv: self.csv.as_deref(),
            plot: self.plot.as_deref(),
            table: None,
        }
    }

    /// Fails, naming the path, unless every output can be written (before any work starts).
    fn check(&self) -> Result<()> {
        check_output("--json", self.json.as_deref(), true)?;
        check_output("--csv", self.csv.as_deref(), false)?;
        check_output("--plot", self.plot.as_deref(), false)
    }

    /// JSON goes to stdout: print nothing else.
    fn quiet(&self) -> bool {
        self.json.as_deref() == Some(Path::new("-"))
    }
}

struct Outputs<'a> {
    json: Option<&'a Path>,
    csv: Option<&'a Path>,
    plot: Option<&'a Path>,
    table: Option<&'a Path>,
}

/// The files one tour step writes: `DIR/NAME.{json,csv,svg,txt}`.
struct TourFiles {
    json: PathBuf,
    csv: PathBuf,
    svg: PathBuf,
    txt: PathBuf,
}

impl TourFiles {
    fn new(dir: &Path, name: &str) -> Self {
        TourFiles {
            json: dir.join(format!("{name}.json")),
            csv: dir.join(format!("{name}.csv")),
            svg: dir.join(format!("{name}.svg")),
            txt: dir.join(format!("{name}.txt")),
        }
    }

    fn outputs(&self) -> Outputs<'_> {
        Outputs {
            json: Some(&self.json),
            csv: Some(&self.csv),
            plot: Some(&self.svg),
            table: Some(&self.txt),
        }
    }
}

/// Prints the table (unless quiet) and writes the table, JSON and CSV files that were asked for.
fn emit<R: serde::Serialize>(
    table: &str,
    records: &[R],
    out: &Outputs<'_>,
    quiet: bool,
) -> Result<()> {
    if !quiet {
        print!("{table}");
    }
    if let Some(path) = out.table {
        fs::write(path, table).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = out.json {
        report::write_json(path, records)?;
    }
    if let Some(path) = out.csv {
        report::write_csv(path, records)?;
    }
    Ok(())
}

fn synthetic_cmd(
    p: &synthetic::Params,
    out: &Outputs<'_>,
    quiet: bool,
) -> Result<Vec<synthetic::Record>> {
    let progress = Progress::new(!quiet);
    let records = synthetic::run(p, &progress)?;
    progress.finish();
    let table = report::synthetic_table(&records);
    emit(&table, &records, out, quiet)?;
    if let Some(path) = out.plot {
        let title = format!(
            "A(i), k = {}, f = {}: speedup vs sequential (median of {})",
            p.k, p.f, p.reps
        );
        report::speedup_chart(path, &title, &records)?;
    }
    Ok(records)
}

fn tour(out: &Path) -> Result<()> {
    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let t0 = Instant::now();
    let on_empty = vec![WakePolicy::OnEmpty];
    let default_mem = vec![MemKind::PerWorkerBlocks];
    let runs = [
        (
            "synthetic_k22_f40",
            "all pools, work-dominated (f = 40)",
            22,
            40,
            PoolKind::ALL.to_vec(),
            default_mem.clone(),
            on_empty.clone(),
        ),
        (
            "synthetic_k22_f1",
            "all pools, pool-overhead-dominated (f = 1)",
            22,
            1,
            PoolKind::ALL.to_vec(),
            default_mem.clone(),
            on_empty.clone(),
        ),
        (
            "mem_k22_f1",
            "memory managers on the list-based pools dq2 and sq1 (f = 1)",
            22,
            1,
            vec![PoolKind::StealWorkingEnd, PoolKind::CentralList],
            MemKind::ALL.to_vec(),
            on_empty.clone(),
        ),
        (
            "wake_k22_f1",
            "wake-up policies on dq2 and dq8 (f = 1)",
            22,
            1,
            vec![PoolKind::StealWorkingEnd, PoolKind::PrivatePublic],
            default_mem.clone(),
            WakePolicy::ALL.to_vec(),
        ),
    ];
    for (name, what, k, f, pools, mems, wakes) in runs {
        println!("== {name}: {what}\n");
        let p = synthetic::Params {
            k,
            f,
            threads: vec![1, 2],
            pools,
            mems,
            wakes,
            reps: 3,
            pin: false,
            search: Search::Tree,
            trace: None,
        };
        synthetic_cmd(&p, &TourFiles::new(out, name).outputs(), false)?;
    }
    println!(
        "== synthetic_trace: schedules of A(15), f = 40, on 2 workers (Figure 1 of the \
         task-pool paper): synthetic-trace.json, Gantt charts in synthetic-trace.gantt/\n"
    );
    let p = synthetic::Params {
        k: 15,
        f: 40,
        threads: vec![2],
        pools: vec![
            PoolKind::CentralList,
            PoolKind::PrivatePublic,
            PoolKind::StealHalf,
        ],
        mems: default_mem.clone(),
        wakes: on_empty.clone(),
        reps: 1,
        pin: false,
        search: Search::Tree,
        trace: Some(out.join("synthetic-trace.json")),
    };
    synthetic_cmd(&p, &TourFiles::new(out, "synthetic_trace").outputs(), false)?;
    println!("== deque: the deque micro-benchmark of seed 002 (Table 3.1)\n");
    let p = deque::Params {
        threads: vec![2, 4],
        ops: 128_000,
        capacity: 16,
        reps: 25,
    };
    deque_cmd(&p, &TourFiles::new(out, "deque").outputs(), false)?;
    println!("== forkjoin: fork-join kernels on each pool against rayon\n");
    let p = forkjoin::Params {
        threads: vec![1, 2],
        reps: 3,
        fib_n: 30,
        tree_depth: 20,
        sort_len: 1 << 20,
        matrix: 256,
        pools: taskpools::forkjoin::Pool::ALL.to_vec(),
        pin: true,
        kernels: forkjoin::KERNELS.iter().map(|k| k.to_string()).collect(),
        trace: None,
    };
    forkjoin_cmd(&p, &TourFiles::new(out, "forkjoin").outputs(), false)?;
    println!("== queens: N-Queens on the task pools, fork-join, rayon, chili and forte\n");
    let p = queens::Params {
        n: 11,
        threads: vec![1, 2],
        reps: 3,
        pools: vec![
            PoolKind::PrivateDeque,
            PoolKind::PrivatePublic,
            PoolKind::ChaseLev,
        ],
        pin: true,
        trace: None,
        cutoff: Some(queens::CUTOFF_QUEUED),
    };
    queens_cmd(&p, &TourFiles::new(out, "queens").outputs(), false)?;
    println!("== blocked: a scope per step (sparse LU, Jacobi), scope and scope_fifo\n");
    let p = blocked::Params {
        threads: vec![1, 2],
        reps: 3,
        lu_blocks: 24,
        lu_block: 64,
        grid: 1024,
        grid_block: 128,
        sweeps: 4,
        kernels: vec!["lu".into(), "jacobi".into()],
        pin: true,
        trace: None,
    };
    blocked_cmd(&p, &TourFiles::new(out, "blocked").outputs(), false)?;
    println!("== dataflow: per-task cost of data-flow tasks, against OpenMP depend\n");
    let p = dataflow::Params {
        threads: vec![1, 2],
        reps: 3,
        tasks: 10_000,
        width: 64,
        graphs: dataflow::Graph::ALL.to_vec(),
        pin: true,
        trace: None,
    };
    dataflow_cmd(&p, &TourFiles::new(out, "dataflow").outputs(), false)?;
    println!("== suite: the data-flow seed's six applications, small sizes\n");
    let p = suite::Params {
        threads: vec![1, 2],
        reps: 2,
        benches: suite::Bench::ALL.to_vec(),
        sizes: suite::Sizes::TOUR,
        dataflow: taskpools::dataflow::Config::exact(taskpools::dataflow::Config::DEFAULT_BLOCK)?,
        pin: true,
        trace: Some(out.join("suite-trace.json")),
    };
    let files = TourFiles::new(out, "suite");
    let outputs = Outputs {
        plot: None,
        ..files.outputs()
    };
    let figures = out.join("suite");
    check_dir_writable("tour --out", &figures)?;
    suite_cmd(&p, &outputs, Some(&figures), false)?;
    println!("== places: locality-aware places (LASSI), short run\n");
    let p = places::Params {
        places: "cores".into(),
        benches: places::Bench::ALL.to_vec(),
        reps: 3,
        cache_bytes: 8 << 20,
        passes: 2,
        tasks_per_worker: 8,
        sort_n: 1 << 21,
        sorters_per_worker: 1024,
        mat_n: 256,
        mat_leaf: 64,
        policies: true,
        trace: Some(out.join("places-trace.json")),
    };
    match p.check() {
        Ok(_) => places_cmd(&p, &TourFiles::new(out, "places").outputs(), false)?,
        // One core: one place, nothing to compare.
        Err(e) => println!("(skipped: {e})\n"),
    }
    println!("== manber: Manber's concurrent pool (seed 003), short run\n");
    let p = manber::Params {
        participants: vec![16, 2],
        ops: 5000,
        fill_per_participant: 20,
        searches: Search::ALL.to_vec(),
        mixes: vec![0, 20, 40, 50, 60, 80, 100],
        producer_step: 2,
        waiting: false,
        delays_ns: vec![0],
        trials: 3,
        trace: Some(out.join("manber-trace.json")),
    };
    let files = TourFiles::new(out, "manber");
    // The manber figures go into their own directory, not into manber.svg.
    let outputs = Outputs {
        plot: None,
        ..files.outputs()
    };
    manber_cmd(&p, &outputs, Some(&out.join("manber")), false)?;
    println!(
        "tour finished in {:.1} s; tables, JSON, CSV and SVG are in {}/",
        t0.elapsed().as_secs_f64(),
        out.display()
    );
    Ok(())
}

/// The most threads (or participants) one run may ask for: the library's limit.
const MAX_THREADS: usize = taskpools::MAX_THREADS;
/// The most tasks `synthetic` may run: P(k) ≤ 2^30, i.e. k ≤ 40.
const MAX_SYNTHETIC_TASKS: u64 = taskpools::synthetic::MAX_TASKS;
/// The largest `--fib`: a run makes about fib(n) joins (fib(45) ≈ 1.1e9).
/// Memory the `blocked` experiment may take for its matrices or grids.
const MAX_BLOCKED_BYTES: u64 = 2 << 30;
const MAX_FIB: u64 = 45;
/// Work units of one synthetic run (about an hour sequentially at 0.8 ns per unit).
const MAX_SYNTHETIC_UNITS: u64 = taskpools::synthetic::MAX_UNITS;
/// Owner pushes of the deque benchmark (a growable deque may hold them all: 2 GiB).
const MAX_DEQUE_OPS: usize = 1 << 28;
/// Capacity of the deque benchmark's deques.
const MAX_DEQUE_CAPACITY: usize = 1 << 24;
/// Operations per Manber trial.
const MAX_MANBER_OPS: usize = 100_000_000;
/// Initial elements over all Manber participants (8 bytes each: 512 MiB).
const MAX_MANBER_ELEMENTS: usize = 1 << 26;
/// A Manber remote-access delay.
const MAX_DELAY_NS: u64 = 1_000_000;
/// The memory the `--tree-depth` tree may take.
const TREE_BUDGET: u64 = 1 << 30;
/// The most `--sort-len` elements.
const MAX_SORT_LEN: usize = 1 << 28;
/// The largest `--matrix`.
const MAX_MATRIX: usize = 2048;

/// `--threads` (or `--participants`): each count `min..=MAX_THREADS`, none given twice.
fn check_threads(opt: &str, counts: &[usize], min: usize) -> Result<()> {
    if counts.is_empty() {
        bail!("{opt}: give at least one count");
    }
    for (i, &t) in counts.iter().enumerate() {
        if t < min {
            bail!("{opt} {t}: each count must be at least {min}");
        }
        if t > MAX_THREADS {
            bail!("{opt} {t}: each count must be at most {MAX_THREADS}");
        }
        if counts[..i].contains(&t) {
            bail!("{opt}: {t} is given twice (each count at most once)");
        }
    }
    Ok(())
}

/// A count that must be at least 1.
fn check_positive(opt: &str, n: usize) -> Result<()> {
    if n == 0 {
        bail!("{opt} 0: must be at least 1");
    }
    Ok(())
}

/// An output file: `-` (stdout) where `stdout` allows it, else a file whose folder exists and
/// which can be opened for writing. A file that did not exist is removed again.
fn check_output(opt: &str, path: Option<&Path>, stdout: bool) -> Result<()> {
    let Some(path) = path else { return Ok(()) };
    if path == Path::new("-") {
        if stdout {
            return Ok(());
        }
        bail!("{opt} -: only --json can write to stdout; give a file path");
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!(
            "{opt} {}: the folder {} does not exist",
            path.display(),
            dir.display()
        );
    }
    // Only a path that is absent or a regular file is test-opened: opening a FIFO would look
    // like a finished writer to its reader, and `exists()` on a dangling symlink says no, so
    // the test file would be made at its target and the link removed. Others (a FIFO, a
    // device, a symlink) are left for the real write to report.
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => bail!("{opt} {}: is a folder, not a file", path.display()),
        Ok(m) if m.is_file() => {
            fs::OpenOptions::new()
                .append(true)
                .open(path)
                .with_context(|| format!("{opt} {}: cannot write", path.display()))?;
        }
        Ok(_) => {}
        Err(_) => {
            fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .with_context(|| format!("{opt} {}: cannot write", path.display()))?;
            let _ = fs::remove_file(path);
        }
    }
    Ok(())
}

fn check_synthetic(a: &SyntheticArgs) -> Result<()> {
    if a.k == 0 {
        bail!("--k 0: k must be at least 1");
    }
    match taskpools::synthetic::checked_task_count(a.k) {
        Some(n) if n <= MAX_SYNTHETIC_TASKS => {}
        _ => bail!(
            "--k {}: k must be at most 40 (A(k) runs P(k) tasks, at most 2^30)",
            a.k
        ),
    }
    let tasks = taskpools::synthetic::checked_task_count(a.k).unwrap_or(u64::MAX);
    let units = tasks.saturating_mul(160).saturating_mul(u64::from(a.f));
    if units > MAX_SYNTHETIC_UNITS {
        bail!(
            "--k {} --f {}: the run's work, up to 160·f·P(k) = {units} units, exceeds 2^42 \
             (about an hour sequentially); lower f or k",
            a.k,
            a.f
        );
    }
    check_threads("--threads", &a.threads, 1)?;
    check_positive("--reps", a.reps)?;
    a.out.check()
}

fn check_deque(a: &DequeArgs) -> Result<()> {
    check_threads("--threads", &a.threads, 2)?;
    if !(1..=MAX_DEQUE_OPS).contains(&a.ops) {
        bail!("--ops {}: must be 1 to 2^28 = {MAX_DEQUE_OPS}", a.ops);
    }
    if !(2..=MAX_DEQUE_CAPACITY).contains(&a.capacity) {
        bail!(
            "--capacity {}: must be 2 to 2^24 = {MAX_DEQUE_CAPACITY}",
            a.capacity
        );
    }
    check_positive("--reps", a.reps)?;
    a.out.check()
}

fn check_forkjoin(a: &ForkjoinArgs) -> Result<()> {
    check_threads("--threads", &a.threads, 1)?;
    check_positive("--reps", a.reps)?;
    if a.fib > MAX_FIB {
        bail!(
            "--fib {}: n must be at most {MAX_FIB} (a run makes about fib(n) joins)",
            a.fib
        );
    }
    // 2^(d+1) - 1 nodes; d ≤ 62 keeps the count in a u64 before the budget is checked.
    let node = std::mem::size_of::<forkjoin::Node>() as u64;
    let fits = a.tree_depth <= 62
        && ((1u64 << (a.tree_depth + 1)) - 1).saturating_mul(node) <= TREE_BUDGET;
    if !fits {
        bail!(
            "--tree-depth {}: the tree's 2^(d+1) - 1 nodes of {node} bytes must fit in 1 GiB \
             (depth at most 25)",
            a.tree_depth
        );
    }
    if a.sort_len > MAX_SORT_LEN {
        bail!(
            "--sort-len {}: at most 2^28 = {MAX_SORT_LEN} elements",
            a.sort_len
        );
    }
    if !a.matrix.is_power_of_two() || a.matrix > MAX_MATRIX {
        bail!(
            "--matrix {}: must be a power of two, at most {MAX_MATRIX}",
            a.matrix
        );
    }
    a.out.check()
}

fn check_queens(a: &QueensArgs) -> Result<()> {
    check_threads("--threads", &a.threads, 1)?;
    check_positive("--reps", a.reps)?;
    if !(4..=queens::MAX_N).contains(&a.n) {
        bail!(
            "--n {}: the board size must be 4 to {} (n = 16 takes minutes per run; each step \
             of n costs about 6x more)",
            a.n,
            queens::MAX_N
        );
    }
    a.out.check()
}

fn check_manber(a: &ManberArgs) -> Result<()> {
    check_threads("--participants", &a.participants, 1)?;
    check_positive("--trials", a.trials)?;
    check_positive("--ops", a.ops)?;
    if a.ops > MAX_MANBER_OPS {
        bail!("--ops {}: at most 10^8 operations per trial", a.ops);
    }
    let most = a.participants.iter().copied().max().unwrap_or(1);
    if most.saturating_mul(a.fill) > MAX_MANBER_ELEMENTS {
        bail!(
            "--fill {}: {most} participants × {} initial elements exceed 2^26 = \
             {MAX_MANBER_ELEMENTS}",
            a.fill,
            a.fill
        );
    }
    if let Some(&d) = a.delay_ns.iter().find(|&&d| d > MAX_DELAY_NS) {
        bail!("--delay-ns {d}: each delay must be at most 10^6 ns (1 ms)");
    }
    check_positive("--producer-step", a.producer_step)?;
    if let Some(&m) = a.mixes.iter().find(|&&m| m > 100) {
        bail!("--mixes {m}: a job mix is a percentage, at most 100");
    }
    check_output("--json", a.json.as_deref(), true)?;
    check_output("--csv", a.csv.as_deref(), false)?;
    if let Some(dir) = a.plot_dir.as_deref() {
        check_dir_writable("--plot-dir", dir)?;
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    // The cores, listed before anything pins this thread (see `pinning::cores`); building a
    // runtime fixes the library's list the same way.
    let _ = experiments::pinning::cores();
    drop(taskpools::Runtime::builder().threads(1).build());
    // Errors are the user's input or the environment: one line each (with its causes), no
    // backtrace even where RUST_BACKTRACE is set.
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::List => list(),
        Cmd::Synthetic(a) => {
            // Names first, then sizes and outputs (which may touch the file system).
            let (pools, mems, wakes) = (
                parse_pools(&a.pool)?,
                parse_mems(&a.mem)?,
                parse_wakes(&a.wake)?,
            );
            let search = Search::from_name(&a.search)?;
            check_synthetic(&a)?;
            let p = synthetic::Params {
                k: a.k,
                f: a.f,
                threads: a.threads,
                pools,
                mems,
                wakes,
                reps: a.reps,
                pin: a.pin,
                search,
                trace: a.trace.clone(),
            };
            check_output("--trace", a.trace.as_deref(), false)?;
            synthetic_cmd(&p, &a.out.outputs(), a.out.quiet())?;
        }
        Cmd::Deque(a) => {
            check_deque(&a)?;
            let p = deque::Params {
                threads: a.threads,
                ops: a.ops,
                capacity: a.capacity,
                reps: a.reps,
            };
            deque_cmd(&p, &a.out.outputs(), a.out.quiet())?;
        }
        Cmd::Forkjoin(a) => {
            let pools = fj_pools(&a.pool)?;
            let kernels = names_or_all(&a.kernels, &forkjoin::KERNELS, forkjoin::kernel)?;
            check_forkjoin(&a)?;
            let p = forkjoin::Params {
                threads: a.threads,
                reps: a.reps,
                fib_n: a.fib,
                tree_depth: a.tree_depth,
                sort_len: a.sort_len,
                matrix: a.matrix,
                pools,
                pin: a.pin,
                kernels: kernels.into_iter().map(String::from).collect(),
                trace: a.trace.clone(),
            };
            check_output("--trace", a.trace.as_deref(), false)?;
            forkjoin_cmd(&p, &a.out.outputs(), a.out.quiet())?;
        }
        Cmd::Blocked(a) => {
            check_blocked(&a)?;
            let p = blocked::Params {
                threads: a.threads,
                reps: a.reps,
                lu_blocks: a.lu_blocks,
                lu_block: a.lu_block,
                grid: a.grid,
                grid_block: a.grid_block,
                sweeps: a.sweeps,
                kernels: a.kernels.clone(),
                pin: a.pin,
                trace: a.trace.clone(),
            };
            check_output("--trace", a.trace.as_deref(), false)?;
            blocked_cmd(&p, &a.out.outputs(), a.out.quiet())?;
        }
        Cmd::Dataflow(a) => {
            let p = dataflow_params(&a)?;
            dataflow_cmd(&p, &a.out.outputs(), a.out.quiet())?;
        }
        Cmd::Trace { file, cost, reps } => {
            if cost {
                if reps == 0 {
                    bail!("--reps must be at least 1");
                }
                trace_cost_cmd(reps)?;
            } else {
                let Some(file) = file else {
                    bail!("taskpools trace needs a FILE (a Chrome trace-event JSON file, as --trace writes it) or --cost");
                };
                print!("{}", report::trace::summary(&file)?);
            }
        }
        Cmd::Distributed(a) => distributed_cmd(&a)?,
        Cmd::Places(a) => {
            let p = places_params(&a)?;
            places_cmd(&p, &a.out.outputs(), a.out.quiet())?;
        }
        Cmd::Suite(a) => {
            let p = suite_params(&a)?;
            let out = Outputs {
                json: a.json.as_deref(),
                csv: a.csv.as_deref(),
                plot: None,
                table: None,
            };
            let quiet = a.json.as_deref() == Some(Path::new("-"));
            suite_cmd(&p, &out, a.plot_dir.as_deref(), quiet)?;
        }
        Cmd::Queens(a) => {
            let pools = parse_pools(&a.pool)?;
            check_queens(&a)?;
            let p = queens::Params {
                n: a.n,
                threads: a.threads,
                reps: a.reps,
                pools,
                pin: a.pin,
                trace: a.trace.clone(),
                cutoff: (a.cutoff > 0).then_some(a.cutoff),
            };
            check_output("--trace", a.trace.as_deref(), false)?;
            queens_cmd(&p, &a.out.outputs(), a.out.quiet())?;
        }
        Cmd::Manber(a) => {
            let searches = parse_searches(&a.search)?;
            check_manber(&a)?;
            let p = manber::Params {
                participants: a.participants,
                ops: a.ops,
                fill_per_participant: a.fill,
                searches,
                mixes: a.mixes,
                producer_step: a.producer_step,
                waiting: a.waiting,
                delays_ns: a.delay_ns,
                trials: a.trials,
                trace: a.trace.clone(),
            };
            check_output("--trace", a.trace.as_deref(), false)?;
            let quiet = a.json.as_deref() == Some(Path::new("-"));
            manber_cmd(
                &p,
                &Outputs {
                    json: a.json.as_deref(),
                    csv: a.csv.as_deref(),
                    plot: None,
                    table: None,
                },
                a.plot_dir.as_deref(),
                quiet,
            )?;
        }
        Cmd::Tour { out } => tour(&out)?,
    }
    Ok(())
}
