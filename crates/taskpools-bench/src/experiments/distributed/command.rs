//! `taskpools distributed`: its arguments and their checks (made before MPI starts, said by
//! rank 0), and what rank 0 reports (table, JSON). Without the `mpi` feature the command says
//! how to build it.

use std::path::PathBuf;

#[cfg(feature = "mpi")]
use std::path::Path;

use anyhow::{bail, Result};
use clap::Args;
#[cfg(feature = "mpi")]
use taskpools::{PoolKind, Search};

#[cfg(feature = "mpi")]
use super::{rank_trace_path, run, table, Params, Start, Workload};
#[cfg(feature = "mpi")]
use crate::cli::{check_output, check_threads};
use crate::cli::{RepsArgs, TraceArgs};
#[cfg(feature = "mpi")]
use crate::report;

/// The arguments of `taskpools distributed`.
#[derive(Args)]
#[command(
    mut_arg("reps", |a| a.default_value("3").help(
        "Repetitions (the median is reported), at least 1"
    )),
    mut_arg("trace", |a| a.help(
        "Record each rank's schedule (one extra, untimed run per configuration, on a runtime \
         that records): for `--trace dir/t.json`, rank r writes `dir/t.rank<r>.json` (open it \
         in Perfetto, or `taskpools trace`) and Gantt charts into `dir/t.rank<r>.gantt/`"
    )),
)]
pub struct DistributedArgs {
    /// Workloads, comma-separated, or `all`: synthetic, queens.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pub workload: Vec<String>,
    /// Synthetic A(k): the argument k, 1 to 40.
    #[arg(long, default_value_t = 22)]
    pub k: u32,
    /// Synthetic A(k): the work factor f, 0 to 100000.
    #[arg(long, default_value_t = 40)]
    pub f: u32,
    /// N-Queens: the board side, 4 to 16.
    #[arg(long, default_value_t = 11)]
    pub queens: u32,
    /// Workers per rank, at least 1.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// The pool every rank runs (any of `taskpools list`).
    #[arg(long, default_value = "private-public")]
    pub pool: String,
    /// Search strategies between ranks, comma-separated, or `all`: random, linear, tree.
    /// Each runs beside the static split (no stealing between ranks).
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pub search: Vec<String>,
    /// Where the initial tasks start: `rank0` (all on rank 0, the unbalanced input) or
    /// `spread` (round-robin over the ranks).
    #[arg(long, default_value = "rank0")]
    pub start: String,
    #[command(flatten)]
    pub reps: RepsArgs,
    /// Skip the run with the same total number of threads in one process.
    #[arg(long)]
    pub no_one_process: bool,
    /// The most tasks one steal reply carries, 1 to 1000000.
    #[arg(long, default_value_t = 256)]
    pub max_batch: usize,
    /// Emulated cost of crossing ranks, in microseconds per task message and steal request
    /// (up to 1000000).
    #[arg(long, default_value_t = 0)]
    pub remote_delay_us: u64,
    /// Tests: a random delay up to this many microseconds before each incoming message is
    /// handled (up to 1000000).
    #[arg(long, default_value_t = 0, hide = true)]
    pub jitter_us: u64,
    /// Tests: a task on this rank panics after 1000 tasks.
    #[arg(long, hide = true)]
    pub panic_on_rank: Option<usize>,
    /// Tests: this rank's process exits after 1000 tasks.
    #[arg(long, hide = true)]
    pub die_on_rank: Option<usize>,
    /// Write the records as JSON (rank 0; `-` for stdout, no table).
    #[arg(long)]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub trace: TraceArgs,
}

/// Without the `mpi` feature: says how to build `taskpools distributed`.
#[cfg(not(feature = "mpi"))]
pub fn exec(_: DistributedArgs) -> Result<()> {
    bail!(
        "this taskpools was built without the `mpi` feature; build it with \
         `cargo build --release -p taskpools-bench --features mpi` (needs a system MPI: \
         apt-get install libopenmpi-dev openmpi-bin libclang-dev) and run it under mpirun, \
         e.g. `mpirun --bind-to none -n 2 target/release/taskpools distributed`"
    )
}

/// Runs `taskpools distributed` on this rank.
#[cfg(feature = "mpi")]
pub fn exec(a: DistributedArgs) -> Result<()> {
    let p = match params(&a) {
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
    if let Err(e) = outputs(&a, rank) {
        if rank == 0 {
            return Err(e);
        }
        eprintln!("Error: rank {rank}: {e:#}");
        std::process::exit(1);
    }
    let (_, records) = run(&p);
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
            print!("{}", table(&records));
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
fn outputs(a: &DistributedArgs, rank: usize) -> Result<()> {
    if rank == 0 {
        check_output("--json", a.json.as_deref(), true)?;
    }
    if let Some(t) = a.trace.trace.as_deref() {
        check_output("--trace", Some(&rank_trace_path(t, rank)), false)?;
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
fn params(a: &DistributedArgs) -> Result<Params> {
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
    if a.reps.reps == 0 {
        bail!("--reps must be at least 1");
    }
    if !(1..=1_000_000).contains(&a.max_batch) {
        bail!("--max-batch must be 1 to 1000000, not {}", a.max_batch);
    }
    if a.remote_delay_us > 1_000_000 || a.jitter_us > 1_000_000 {
        bail!("--remote-delay-us and --jitter-us must be at most 1000000");
    }
    Ok(Params {
        workloads,
        k: a.k,
        f: a.f,
        queens: a.queens,
        threads: a.threads,
        pool,
        searches,
        start,
        reps: a.reps.reps,
        single: !a.no_one_process,
        max_batch: a.max_batch,
        remote_delay: std::time::Duration::from_micros(a.remote_delay_us),
        jitter: std::time::Duration::from_micros(a.jitter_us),
        panic_on_rank: a.panic_on_rank,
        die_on_rank: a.die_on_rank,
        trace: a.trace.trace.clone(),
    })
}
