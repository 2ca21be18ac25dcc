//! What a distributed run takes and gives: its parameters, workloads and starts, and the
//! records rank 0 writes.

use std::time::Duration;

use anyhow::{bail, Result};
use serde::Serialize;
use taskpools::distributed::RankStats;
use taskpools::{PoolKind, Search};

/// What to run.
#[derive(Clone, Debug)]
pub struct Params {
    pub workloads: Vec<Workload>,
    /// Synthetic A(k) with work factor f.
    pub k: u32,
    pub f: u32,
    /// N-Queens board side.
    pub queens: u32,
    /// Workers per rank.
    pub threads: usize,
    pub pool: PoolKind,
    /// Search strategies between ranks; each runs beside the static split.
    pub searches: Vec<Search>,
    /// Where the initial tasks start.
    pub start: Start,
    pub reps: usize,
    /// Also run the same total thread count in one process (on rank 0).
    pub single: bool,
    pub max_batch: usize,
    pub remote_delay: Duration,
    pub jitter: Duration,
    /// Fault injection for the tests: a task on this rank panics.
    pub panic_on_rank: Option<usize>,
    /// Fault injection for the tests: this rank's process exits in the middle of the phase.
    pub die_on_rank: Option<usize>,
    /// Record each rank's schedule in one extra, untimed run per configuration (on a runtime
    /// that records): rank r writes Chrome trace-event JSON to `<stem>.rank<r>.json` and Gantt
    /// charts into `<stem>.rank<r>.gantt/`, next to this path.
    pub trace: Option<std::path::PathBuf>,
}

/// Trace buffer per worker, in events.
pub(super) const TRACE_EVENTS: usize = 1 << 21;

/// Where rank `rank` writes its trace, for `--trace path`: `dir/stem.rank<r>.json`.
pub fn rank_trace_path(path: &std::path::Path, rank: usize) -> std::path::PathBuf {
    let stem = path
        .file_stem()
        .map_or("trace".into(), |s| s.to_string_lossy().into_owned());
    path.with_file_name(format!("{stem}.rank{rank}.json"))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    Synthetic,
    Queens,
}

impl Workload {
    pub fn name(self) -> &'static str {
        match self {
            Workload::Synthetic => "synthetic",
            Workload::Queens => "queens",
        }
    }
    pub fn from_name(s: &str) -> Result<Workload> {
        match s {
            "synthetic" => Ok(Workload::Synthetic),
            "queens" => Ok(Workload::Queens),
            _ => bail!("unknown workload '{s}' (known: synthetic, queens, all)"),
        }
    }
}

/// Where the initial tasks are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// All on rank 0: the unbalanced input.
    Rank0,
    /// Round-robin over the ranks.
    Spread,
}

impl Start {
    pub fn name(self) -> &'static str {
        match self {
            Start::Rank0 => "rank0",
            Start::Spread => "spread",
        }
    }
    pub fn from_name(s: &str) -> Result<Start> {
        match s {
            "rank0" => Ok(Start::Rank0),
            "spread" => Ok(Start::Spread),
            _ => bail!("unknown start '{s}' (known: rank0, spread)"),
        }
    }
}

/// One configuration's result (rank 0 prints and writes these).
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    pub workload: String,
    /// `steal-half/<search>`, `static` or `one-process`.
    pub config: String,
    pub ranks: usize,
    pub threads_per_rank: usize,
    pub pool: String,
    pub start: String,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    /// Median time over the one-process run's median (same total threads).
    pub vs_one_process: Option<f64>,
    /// Tasks run on all ranks (checked against the exact count).
    pub tasks: u64,
    pub expected_tasks: u64,
    /// Per-rank counters of the first repetition.
    pub per_rank: Vec<RankRow>,
}

#[derive(Clone, Debug, Serialize)]
pub struct RankRow {
    pub rank: usize,
    pub tasks_run: u64,
    pub tasks_sent: u64,
    pub tasks_received: u64,
    pub requests_sent: u64,
    pub requests_received: u64,
    pub requests_granted: u64,
    pub messages_sent: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub idle_ms: f64,
    pub elapsed_ms: f64,
}

impl From<&RankStats> for RankRow {
    fn from(r: &RankStats) -> Self {
        RankRow {
            rank: r.rank,
            tasks_run: r.tasks_run,
            tasks_sent: r.tasks_sent,
            tasks_received: r.tasks_received,
            requests_sent: r.requests_sent,
            requests_received: r.requests_received,
            requests_granted: r.requests_granted,
            messages_sent: r.messages_sent,
            bytes_sent: r.bytes_sent,
            bytes_received: r.bytes_received,
            idle_ms: r.idle.as_secs_f64() * 1e3,
            elapsed_ms: r.elapsed.as_secs_f64() * 1e3,
        }
    }
}
