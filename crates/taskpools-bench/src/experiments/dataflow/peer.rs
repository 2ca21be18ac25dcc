//! The child's side of a peer runtime's `dataflow` job: the graph built again from the
//! job's input and run by the C driver's functions, once untimed and once timed.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use super::super::drivers::process::{self, hash_words, Job};
use super::super::drivers::{Driver, PeerRuntime};
use super::graphs::build;
use super::{Graph, STRIDE};

/// The input a child process of `dataflow` runs (the job's `work`).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Work {
    pub(super) graph: String,
    pub(super) tasks: usize,
    pub(super) width: usize,
    /// A taskwait after each row instead of dependences.
    pub(super) rows: bool,
    /// The written block declared commutative (`mutexinoutset`, `STARPU_COMMUTE`).
    #[serde(default)]
    pub(super) commute: bool,
    /// The written block a reduction (`in_reduction`, `STARPU_REDUX`).
    #[serde(default)]
    pub(super) reduce: bool,
}

/// The C drivers' `taskpools_dataflow_graph`.
type GraphFn =
    unsafe extern "C" fn(*mut u64, i64, i64, *const i32, *const i32, *const i32, i32, i32) -> f64;
/// The C drivers' `taskpools_dataflow_commute` and `taskpools_dataflow_reduce`.
type CommuteFn = unsafe extern "C" fn(*mut u64, i64, i64, *const i32, i32, i32) -> f64;
/// The C drivers' `taskpools_dataflow_rows`.
type RowsFn = unsafe extern "C" fn(
    *mut u64,
    i64,
    i64,
    i64,
    *const i32,
    *const i32,
    *const i32,
    i32,
    i32,
) -> f64;

/// The child's side of a dataflow job: builds the graph, runs it on `d` once untimed and once
/// timed; the timed run's seconds and its result's hash.
pub fn peer_run(d: &Driver, job: &Job) -> Result<(f64, u64)> {
    let w: Work = serde_json::from_value(job.work.clone())?;
    let g = Graph::from_name(&w.graph)?;
    if !(1..=4096).contains(&job.threads)
        || !(1..=10_000_000).contains(&w.tasks)
        || !(3..=1_000_000).contains(&w.width)
    {
        bail!("a job with 0 threads, or tasks or width out of range");
    }
    let t = build(g, w.tasks, w.width);
    if (w.commute || w.reduce) && (w.rows || g != Graph::Accumulate || w.commute == w.reduce) {
        bail!("a commutative or reduction job is the accumulate graph with dependences");
    }
    let width = match (w.rows, t.rows) {
        (false, _) => None,
        (true, Some(width)) => Some(width as i64),
        (true, None) => bail!("{}: not a graph of rows", g.name()),
    };
    // SAFETY: every driver (dataflow_omp.c, starpu.c) defines both with these signatures.
    let (graph, rows): (GraphFn, RowsFn) = unsafe {
        (
            d.function("taskpools_dataflow_graph")?,
            d.function("taskpools_dataflow_rows")?,
        )
    };
    // SAFETY: every driver defines it with this signature (the graph's without reads).
    let commute: Option<CommuteFn> = if w.commute {
        Some(unsafe { d.function("taskpools_dataflow_commute")? })
    } else if w.reduce {
        // SAFETY: as above (the same signature).
        Some(unsafe { d.function("taskpools_dataflow_reduce")? })
    } else {
        None
    };
    let n = t.out.len() as i64;
    let blocks = t.blocks as i64;
    let (threads, pin) = (job.threads as i32, i32::from(job.pin));
    let (o, r, k) = (t.out.as_ptr(), t.reads.as_ptr(), t.nreads.as_ptr());
    let mut data = vec![0u64; t.blocks * STRIDE];
    let mut once = || {
        data.fill(0);
        let p = data.as_mut_ptr();
        // SAFETY: the arrays hold `n` (reads: 3n) entries naming blocks inside `data`, which
        // the driver reads and writes only under the tasks' dependences (or its row
        // taskwaits), and it returns after every task.
        unsafe {
            match (width, commute) {
                (None, Some(c)) => c(p, blocks, n, o, threads, pin),
                (None, None) => graph(p, blocks, n, o, r, k, threads, pin),
                (Some(w), _) => rows(p, blocks, n, w, o, r, k, threads, pin),
            }
        }
    };
    once();
    let secs = once();
    if secs < 0.0 {
        bail!("the runtime's team did not get {} threads", job.threads);
    }
    Ok((secs, hash_words(data.iter().copied())))
}

/// The peer runtimes with drivers that this process can run, of those in `peers`.
pub(super) fn peer_runtimes(peers: &[&str]) -> Vec<PeerRuntime> {
    if !process::host_available() {
        return Vec::new();
    }
    PeerRuntime::ALL
        .into_iter()
        .filter(|r| r.built() && peers.contains(&r.name()))
        .collect()
}
