//! The cost of a data-flow task: task graphs of tiny tasks with 0 to 4 declared accesses,
//! run by our data-flow scopes (block mode at two block sizes, exact mode), by OpenMP tasks
//! with `depend` clauses under GCC's libgomp and LLVM's libomp (C built by the build script,
//! each run in a process of its own: [`crate::experiments::drivers`]) in the same
//! invocation, and,
//! where the graph is rows of independent tasks, with a sync after each row (our data-flow
//! scope, our fork-join `scope`, rayon, OpenMP `taskwait`: PARTEE's "ND" programs).
//!
//! Every task `t` adds `1 + (the values it reads)` to the first word of the block it writes;
//! each block is 8 words (64 bytes). Every variant's result is compared with the sequential
//! loop's, word for word.
//!
//! Graphs over `width` blocks (rows of `width` tasks):
//! - `independent`: every task its own block (no dependence);
//! - `chains`: task `t` updates block `t mod width` (one predecessor each);
//! - `fan-in-2`: two buffers of `width` blocks swapped each row; a task reads block `c` of one
//!   and writes block `c` of the other (the stencil's pattern, two accesses);
//! - `fan-in-4`: the same reading blocks `c - 1`, `c`, `c + 1` (four accesses);
//! - `random`: a random block written and two other random blocks read (a random DAG of fixed
//!   width; no row structure);
//! - `accumulate`: a random block added into, nothing read; also run with the blocks
//!   commutative, as a reduction (ours, OpenMP 5's `in_reduction` in a `task_reduction`
//!   taskgroup, StarPU's `STARPU_REDUX`), with atomic adds in `concurrent` accesses, and with
//!   a copy per task that one last task adds in.

mod command;
mod graphs;
mod peer;
mod sums;
mod table;

use std::time::Instant;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use taskpools::dataflow::{self, Config};

use super::drivers::process::{self, hash_words, Job};
use super::drivers::PeerRuntime;
use super::pinning::{our_runtimes, pinner, rayon_pools};
use super::summarize;
use crate::report::Progress;
use graphs::{build, preds_per_task, Tasks};
use sums::{accumulate_run, Scratch, Sums};

pub use command::{exec, run_and_emit, DataflowArgs};
pub use graphs::Graph;
pub use peer::peer_run;
use peer::{peer_runtimes, Work};

/// Words per block.
const STRIDE: usize = 8;

/// What to run.
#[derive(Clone, Debug)]
pub struct Params {
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Repetitions (median reported).
    pub reps: usize,
    /// Tasks per graph.
    pub tasks: usize,
    /// Blocks per row.
    pub width: usize,
    /// Graphs to run.
    pub graphs: Vec<Graph>,
    /// Pin worker `i` of every runtime (and OpenMP thread `i`) to core `i mod cores`.
    pub pin: bool,
    /// Record a schedule trace of one extra, untimed run of each data-flow variant per graph
    /// and thread count (on runtimes that record): Chrome trace-event JSON to this file, Gantt
    /// charts into `<file>.gantt/` and task graphs with their critical path into `<file>.dot/`.
    pub trace: Option<std::path::PathBuf>,
    /// The other runtimes to run (of [`PEERS`]).
    pub peers: Vec<&'static str>,
}

/// The other runtimes `dataflow` can run beside ours (`--peers`).
pub const PEERS: [&str; 4] = ["libgomp", "libomp", "starpu", "rayon"];

/// One row.
// Deserialize (strict: a field this build does not write is an error) for `taskpools report`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// `dataflow`.
    pub experiment: String,
    /// The graph.
    pub graph: String,
    /// Declared accesses per task (the written block and the blocks read).
    pub accesses: usize,
    /// Direct predecessors per task, on average (earlier tasks each one must wait for).
    pub preds_per_task: f64,
    /// The variant: `sequential`, `dataflow b64`, `dataflow b2048`, `dataflow exact`,
    /// per peer runtime `libgomp depend`, `libomp depend`, `starpu depend`, and for row
    /// graphs `dataflow rows`, `forkjoin rows`, `rayon rows`, `libgomp rows`, `libomp rows`,
    /// `starpu rows`.
    pub variant: String,
    /// Threads (1 for sequential).
    pub threads: usize,
    /// Tasks.
    pub tasks: usize,
    /// Repetitions.
    pub reps: usize,
    /// Median nanoseconds per task (`None`: not available in this build).
    pub ns_per_task: Option<f64>,
    /// Fastest and slowest repetition, ns per task.
    pub min_ns: Option<f64>,
    /// Slowest repetition.
    pub max_ns: Option<f64>,
    /// This variant's ns per task over the fastest peer runtime's `depend` row (libgomp,
    /// libomp, StarPU) at the same graph and threads.
    pub vs_openmp_depend: Option<f64>,
}

#[inline]
fn body(d: &mut [u64], o: usize, reads: &[i32], k: usize) {
    let mut s = 1u64;
    for &r in &reads[..k] {
        s = s.wrapping_add(d[r as usize * STRIDE]);
    }
    d[o * STRIDE] = d[o * STRIDE].wrapping_add(s);
}

fn sequential(t: &Tasks, d: &mut [u64]) {
    for i in 0..t.out.len() {
        body(
            d,
            t.out[i] as usize,
            &t.reads[3 * i..],
            t.nreads[i] as usize,
        );
    }
}

/// All tasks spawned in one data-flow scope with their declared accesses (or, with `rows`,
/// a `sync` after every row). With `commute`, each task's block is declared `commutative`
/// instead of `inout` (for graphs whose additions may run in any order); with `prio`, task
/// `i` is spawned with priority `i mod 4` (so every ready task passes the scope's ready heap).
fn dataflow_run(
    t: &Tasks,
    d: &mut [u64],
    config: Config,
    rows: Option<usize>,
    commute: bool,
    prio: bool,
) {
    dataflow::scope_with(config, |df| {
        let r = df.region(d);
        let blocks: Vec<_> = r.chunks(STRIDE).collect();
        for i in 0..t.out.len() {
            let b = blocks[t.out[i] as usize];
            let w = if commute { b.commutative() } else { b.inout() };
            let rd = |k: usize| blocks[t.reads[3 * i + k] as usize].read();
            // The closure is written out at each call, so that it gets the spawn's
            // higher-ranked signature.
            macro_rules! spawn {
                ($acc:expr, $f:expr) => {
                    if prio {
                        df.spawn_with_priority((i % 4) as i16, $acc, $f)
                    } else {
                        df.spawn($acc, $f)
                    }
                };
            }
            match t.nreads[i] {
                0 => spawn!(w, |_, w| w[0] = w[0].wrapping_add(1)),
                1 => spawn!((w, rd(0)), |_, (w, a)| {
                    w[0] = w[0].wrapping_add(1u64.wrapping_add(a[0]))
                }),
                2 => spawn!((w, rd(0), rd(1)), |_, (w, a, b)| {
                    w[0] = w[0].wrapping_add(1u64.wrapping_add(a[0]).wrapping_add(b[0]))
                }),
                _ => spawn!((w, rd(0), rd(1), rd(2)), |_, (w, a, b, c)| {
                    let s = 1u64
                        .wrapping_add(a[0])
                        .wrapping_add(b[0])
                        .wrapping_add(c[0]);
                    w[0] = w[0].wrapping_add(s)
                }),
            }
            if rows.is_some_and(|w| (i + 1) % w == 0) {
                df.sync();
            }
        }
    });
}

/// A raw view of the blocks for row-synchronized fork-join runs.
#[derive(Clone, Copy)]
struct View(*mut u64);
// SAFETY: the row runs below hand it to spawns that write distinct blocks and read only blocks
// that no task of the same row writes (the row graphs' structure), each row joined before the
// next starts.
unsafe impl Send for View {}
unsafe impl Sync for View {}

impl View {
    /// Runs task `i`.
    ///
    /// # Safety
    /// No other thread accesses block `out[i]`, and none writes the blocks it reads, meanwhile.
    unsafe fn task(self, t: &Tasks, i: usize) {
        let o = t.out[i] as usize * STRIDE;
        let mut s = 1u64;
        for k in 0..t.nreads[i] as usize {
            // SAFETY: per the contract, nobody writes this block meanwhile.
            s = s.wrapping_add(unsafe { *self.0.add(t.reads[3 * i + k] as usize * STRIDE) });
        }
        // SAFETY: per the contract, this thread is the block's only user.
        unsafe { *self.0.add(o) = (*self.0.add(o)).wrapping_add(s) };
    }
}

fn forkjoin_rows(t: &Tasks, d: &mut [u64], w: usize) {
    let v = View(d.as_mut_ptr());
    for row in (0..t.out.len()).step_by(w) {
        taskpools::forkjoin::scope(|s| {
            for i in row..(row + w).min(t.out.len()) {
                // SAFETY: the tasks of a row write distinct blocks and read none that the row
                // writes; the scope joins them before the next row.
                s.spawn(move |_| unsafe { v.task(t, i) });
            }
        });
    }
}

fn rayon_rows(t: &Tasks, d: &mut [u64], w: usize) {
    let v = View(d.as_mut_ptr());
    for row in (0..t.out.len()).step_by(w) {
        rayon::scope(|s| {
            for i in row..(row + w).min(t.out.len()) {
                // SAFETY: as in `forkjoin_rows`.
                s.spawn(move |_| unsafe { v.task(t, i) });
            }
        });
    }
}

/// How a variant runs: here (its seconds), or in a peer runtime's child process (with a
/// taskwait per row instead of dependences, or not).
enum Run<'a> {
    Own(OwnRun<'a>),
    Peer(PeerRuntime, PeerShape),
}

/// What a peer runtime's job runs: the graph with `depend`, with a taskwait per row, or with
/// its written block commutative.
#[derive(Clone, Copy, PartialEq)]
enum PeerShape {
    Depend,
    Rows,
    Commute,
    Reduce,
}

/// One of our variants: runs on the data, returns its seconds.
type OwnRun<'a> = Box<dyn Fn(&mut [u64]) -> Option<f64> + 'a>;

/// Whether `variant` is a peer runtime's `depend` row.
fn is_peer_depend(variant: &str) -> bool {
    PeerRuntime::ALL
        .iter()
        .any(|r| variant == format!("{} depend", r.name()))
}

/// Seconds `f` takes.
fn timed(f: impl FnOnce()) -> Option<f64> {
    let t0 = Instant::now();
    f();
    Some(t0.elapsed().as_secs_f64())
}

/// Runs the experiment.
pub fn run(p: &Params, progress: &Progress) -> Result<Vec<Record>> {
    if p.reps == 0 || p.threads.is_empty() || p.threads.contains(&0) || p.tasks == 0 {
        bail!("--reps, --tasks and every thread count must be at least 1");
    }
    if p.width < 3 {
        bail!("--width must be at least 3");
    }
    let pin_to = pinner(p.pin);
    let ours = our_runtimes(&p.threads, p.pin)?;
    let traced = match p.trace {
        None => Vec::new(),
        Some(_) => super::pinning::runtimes_with(&p.threads, p.pin, None, Some(1 << 20))?,
    };
    let mut traces = Vec::new();
    let rayons = rayon_pools(&p.threads, p.pin)?;
    let peers = peer_runtimes(&p.peers);
    let mut out = Vec::new();
    for &g in &p.graphs {
        let t = &build(g, p.tasks, p.width);
        let preds = preds_per_task(t);
        let accesses = 1 + t.nreads.first().copied().unwrap_or(0) as usize;
        // One data buffer for every run of every variant, zeroed (and so its pages touched)
        // before each run outside the timing: a buffer allocated per run came from glibc's
        // mmap with untouched pages (a page fault per 512 words inside the timed run), at an
        // address that depended on what the previous run had freed.
        let mut d = vec![0u64; t.blocks * STRIDE];
        let mut expected = d.clone();
        pin_to(0);
        sequential(t, &mut expected);
        let expected_hash = hash_words(expected.iter().copied());
        let mut record = |variant: &str, threads: usize, samples: Option<Vec<f64>>| {
            let ns = samples.map(|s| {
                let (m, lo, hi) = summarize(&s);
                let k = 1e9 / p.tasks as f64;
                (m * k, lo * k, hi * k)
            });
            out.push(Record {
                experiment: "dataflow".into(),
                graph: g.name().into(),
                accesses,
                preds_per_task: preds,
                variant: variant.into(),
                threads,
                tasks: p.tasks,
                reps: p.reps,
                ns_per_task: ns.map(|x| x.0),
                min_ns: ns.map(|x| x.1),
                max_ns: ns.map(|x| x.2),
                vs_openmp_depend: None,
            });
        };
        let check = |d: &[u64], what: &str| -> Result<()> {
            if d != expected.as_slice() {
                bail!(
                    "{} / {what}: the result differs from the sequential run's",
                    g.name()
                );
            }
            Ok(())
        };
        // Sequential.
        let mut s = Vec::new();
        for _ in 0..p.reps {
            d.fill(0);
            let t0 = Instant::now();
            sequential(t, &mut d);
            s.push(t0.elapsed().as_secs_f64());
        }
        record("sequential", 1, Some(s));
        for (ti, &threads) in p.threads.iter().enumerate() {
            progress.set_message(format!("dataflow {} x{threads}", g.name()));
            let rt = &ours[ti];
            let pool = &rayons[ti];
            let mut variants: Vec<(String, Run)> = Vec::new();
            for (name, config) in [
                ("dataflow b64", Config::blocks(64)?),
                ("dataflow b2048", Config::thesis()),
                ("dataflow exact", Config::exact().with_index_block(64)?),
            ] {
                variants.push((
                    name.into(),
                    Run::Own(Box::new(move |d| {
                        timed(|| rt.install(|| dataflow_run(t, d, config, None, false, false)))
                    })),
                ));
            }
            let exact = Config::exact().with_index_block(64)?;
            variants.push((
                "dataflow priorities".into(),
                Run::Own(Box::new(move |d| {
                    timed(|| rt.install(|| dataflow_run(t, d, exact, None, false, true)))
                })),
            ));
            for &r in &peers {
                variants.push((
                    format!("{} depend", r.name()),
                    Run::Peer(r, PeerShape::Depend),
                ));
            }
            if g == Graph::Accumulate {
                let exact = Config::exact().with_index_block(64)?;
                variants.push((
                    "dataflow commutative".into(),
                    Run::Own(Box::new(move |d| {
                        timed(|| rt.install(|| dataflow_run(t, d, exact, None, true, false)))
                    })),
                ));
                for &r in &peers {
                    let kind = if r == PeerRuntime::Starpu {
                        "commute"
                    } else {
                        "mutexinoutset"
                    };
                    variants.push((
                        format!("{} {kind}", r.name()),
                        Run::Peer(r, PeerShape::Commute),
                    ));
                }
                for (name, how) in [
                    ("dataflow reduction", Sums::Reduce),
                    ("dataflow reduction (all bins)", Sums::ReduceWhole),
                    ("dataflow atomics", Sums::Atomic),
                    ("dataflow per-task copies", Sums::Copies),
                ] {
                    let scratch = std::sync::Mutex::new(Scratch::new(t));
                    variants.push((
                        name.into(),
                        Run::Own(Box::new(move |d| {
                            let mut x = scratch.lock().unwrap();
                            let x = &mut *x;
                            timed(|| rt.install(|| accumulate_run(t, d, how, x)))
                        })),
                    ));
                }
                for &r in &peers {
                    let kind = if r == PeerRuntime::Starpu {
                        "redux"
                    } else {
                        "in_reduction"
                    };
                    variants.push((
                        format!("{} {kind}", r.name()),
                        Run::Peer(r, PeerShape::Reduce),
                    ));
                }
            }
            if let Some(w) = t.rows {
                let b64 = Config::blocks(64)?;
                variants.push((
                    "dataflow rows".into(),
                    Run::Own(Box::new(move |d| {
                        timed(|| rt.install(|| dataflow_run(t, d, b64, Some(w), false, false)))
                    })),
                ));
                variants.push((
                    "forkjoin rows".into(),
                    Run::Own(Box::new(move |d| {
                        timed(|| rt.install(|| forkjoin_rows(t, d, w)))
                    })),
                ));
                if p.peers.contains(&"rayon") {
                    variants.push((
                        "rayon rows".into(),
                        Run::Own(Box::new(move |d| {
                            timed(|| pool.install(|| rayon_rows(t, d, w)))
                        })),
                    ));
                }
                for &r in &peers {
                    variants.push((format!("{} rows", r.name()), Run::Peer(r, PeerShape::Rows)));
                }
            }
            // Interleave the variants' repetitions so that drift on a shared host spreads
            // over all of them. Each timed run is preceded by an untimed run of the same
            // variant (a peer's child process does the same): what a run leaves behind
            // (workers asleep or awake, memory in the allocators' free lists) then falls on
            // the variant itself, not on whichever variant follows it. A peer's runtime
            // threads end with its process, so none is left spinning on the cores when the
            // next variant starts.
            let mut samples: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
            let mut failed = vec![false; variants.len()];
            for _ in 0..p.reps {
                for (k, (name, run)) in variants.iter().enumerate() {
                    let secs = match run {
                        Run::Own(f) => {
                            d.fill(0);
                            let _ = f(&mut d);
                            d.fill(0);
                            let secs = f(&mut d).expect("our variants run");
                            check(&d, name)?;
                            secs
                        }
                        Run::Peer(..) if failed[k] => continue,
                        Run::Peer(r, shape) => {
                            let work = Work {
                                graph: g.name().into(),
                                tasks: p.tasks,
                                width: p.width,
                                rows: *shape == PeerShape::Rows,
                                commute: *shape == PeerShape::Commute,
                                reduce: *shape == PeerShape::Reduce,
                            };
                            let job = Job::new(*r, threads, p.pin, "dataflow", work)?;
                            match process::run_checked(&job, expected_hash, || pin_to(0)) {
                                Ok(secs) => secs,
                                // A runtime that fails to run (or gives a wrong result) is
                                // left out of the rest of the run, with its reason.
                                Err(e) => {
                                    eprintln!("note: {e:#}; {name} left out of this run");
                                    failed[k] = true;
                                    continue;
                                }
                            }
                        }
                    };
                    samples[k].push(secs);
                }
            }
            for (((name, _), s), f) in variants.iter().zip(samples).zip(failed) {
                if !f {
                    record(name, threads, Some(s));
                }
            }
            if let Some(trt) = traced.get(ti) {
                let rows = t
                    .rows
                    .map(|w| ("dataflow rows", Config::blocks(64), Some(w)));
                for (name, config, w) in [
                    ("dataflow b64", Config::blocks(64), None),
                    ("dataflow b2048", Ok(Config::thesis()), None),
                    ("dataflow exact", Config::exact().with_index_block(64), None),
                ]
                .into_iter()
                .chain(rows)
                {
                    let config = config?;
                    d.fill(0);
                    let _ = trt.take_trace()?;
                    trt.install(|| dataflow_run(t, &mut d, config, w, false, false));
                    check(&d, name)?;
                    if let Some(tr) = trt.take_trace()? {
                        traces.push((format!("{} {name} x{threads}", g.name()), tr));
                    }
                }
            }
        }
    }
    // Ratios against the fastest peer `depend` row at the same graph and threads.
    let best: Vec<Option<f64>> = out
        .iter()
        .map(|r| {
            out.iter()
                .filter(|o| o.graph == r.graph && o.threads == r.threads)
                .filter(|o| is_peer_depend(&o.variant))
                .filter_map(|o| o.ns_per_task)
                .min_by(f64::total_cmp)
        })
        .collect();
    for (r, b) in out.iter_mut().zip(best) {
        if r.variant != "sequential" {
            r.vs_openmp_depend = b.and_then(|b| r.ns_per_task.map(|v| v / b));
        }
    }
    if let Some(path) = &p.trace {
        crate::report::trace::write_files(path, &traces)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graphs_have_the_predecessors_they_claim() {
        let n = 64 * 10;
        assert_eq!(preds_per_task(&build(Graph::Independent, n, 64)), 0.0);
        // Every chain task but the first of each chain has one predecessor.
        let c = preds_per_task(&build(Graph::Chains, n, 64));
        assert!((c - (n - 64) as f64 / n as f64).abs() < 1e-9, "{c}");
        let f4 = preds_per_task(&build(Graph::FanIn4, n, 64));
        assert!(f4 > 2.5, "{f4}");
    }

    #[test]
    fn every_variant_matches_the_sequential_run() {
        let p = Params {
            threads: vec![1, 2],
            reps: 1,
            tasks: 2000,
            width: 16,
            graphs: Graph::ALL.to_vec(),
            pin: false,
            trace: None,
            peers: PEERS.to_vec(),
        };
        let r = run(&p, &Progress::new(false)).unwrap();
        assert!(r.iter().any(|r| r.variant == "forkjoin rows"));
        assert!(r.iter().all(|r| r.ns_per_task.is_some()));
        // The peers run in child processes of the workbench's executable, which a unit test
        // does not have: their rows are in the CLI tests (tests/cli_dataflow.rs).
        assert!(!r.iter().any(|r| is_peer_depend(&r.variant)));
    }
}
