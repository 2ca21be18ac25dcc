//! `taskpools queens`: its arguments and their checks, and what a run reports (table, JSON,
//! CSV, the speedup chart).

use anyhow::{bail, Result};
use clap::Args;

use super::{run, Params, CUTOFF_QUEUED, FRONT_ENDS, MAX_N, PEERS};
use crate::cli::{
    emit, names_or_all, parse_pools, OutputArgs, Outputs, PeersArgs, PinArgs, RepsArgs,
    ThreadsArgs, TraceArgs,
};
use crate::report::{self, Progress};

/// The arguments of `taskpools queens`.
#[derive(Args)]
#[command(
    mut_arg("peers", |a| a.help(
        "Other runtimes to run beside ours, comma-separated, `all` or `none`: rayon, chili, \
         forte, tbb (oneTBB's task_group, a program of its own, where the build found oneTBB)"
    )),
    mut_arg("trace", |a| a.help(
        "Record a schedule trace of our variants (task pools without the cutoff, scope, join; \
         one extra, untimed run each per thread count, on runtimes that record): Chrome \
         trace-event JSON to this file (`taskpools trace FILE` summarizes it) and Gantt \
         charts into the folder FILE with the extension `.gantt`"
    )),
)]
pub struct QueensArgs {
    /// Board size n, 4 to 16 (n = 13: 73,712 solutions, 4.7 million nodes; each step of n
    /// costs about 6× more).
    #[arg(long, default_value_t = 13)]
    pub n: u32,
    #[command(flatten)]
    pub threads: ThreadsArgs,
    #[command(flatten)]
    pub reps: RepsArgs,
    /// Task pools for the task-pool rows (names or aliases), comma-separated, or `all`.
    #[arg(
        long,
        default_value = "private-deque,private-public,chase-lev",
        value_delimiter = ','
    )]
    pub pool: Vec<String>,
    #[command(flatten)]
    pub pin: PinArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    /// Also run each pool with a run-time cutoff (rows marked `cutoff N`): a task puts a child
    /// only while its worker's own queue holds fewer than this many tasks, and counts the
    /// child's subtree with plain calls otherwise (`Ctx::queued`); 0: no such rows.
    #[arg(long, default_value_t = CUTOFF_QUEUED)]
    pub cutoff: usize,
    /// Front ends, comma-separated, or `all`: task-pool, scope, join, scope-cutoff (a scope
    /// per node in the first 3 rows, the sequential recursion below).
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pub front_ends: Vec<String>,
    #[command(flatten)]
    pub peers: PeersArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// Runs `taskpools queens`.
pub fn exec(a: QueensArgs) -> Result<()> {
    let pools = parse_pools(&a.pool)?;
    let peers = a.peers.select(&PEERS)?;
    // oneTBB named on its own must have been built; `all` takes it where it was.
    if a.peers.peers.iter().any(|n| n == "tbb") && !super::tbb_built() {
        bail!(
            "--peers tbb: not installed when this workbench was built (apt-get install \
             libtbb-dev, then `cargo clean -p taskpools-bench` and rebuild)"
        );
    }
    let front_ends = names_or_all(&a.front_ends, &FRONT_ENDS, |n| {
        FRONT_ENDS.iter().copied().find(|f| *f == n).ok_or_else(|| {
            anyhow::anyhow!(
                "--front-ends: unknown front end '{n}' (known: {}, or all)",
                FRONT_ENDS.join(", ")
            )
        })
    })?;
    check(&a)?;
    let p = Params {
        n: a.n,
        threads: a.threads.threads,
        reps: a.reps.reps,
        pools,
        pin: a.pin.pin,
        trace: a.trace.trace.clone(),
        cutoff: (a.cutoff > 0).then_some(a.cutoff),
        peers,
        front_ends,
    };
    a.trace.check()?;
    run_and_emit(&p, &a.out.outputs(), a.out.quiet())?;
    Ok(())
}

fn check(a: &QueensArgs) -> Result<()> {
    a.threads.check(1)?;
    a.reps.check()?;
    if !(4..=MAX_N).contains(&a.n) {
        bail!(
            "--n {}: the board size must be 4 to {} (n = 16 takes minutes per run; each step \
             of n costs about 6x more)",
            a.n,
            MAX_N
        );
    }
    a.out.check()
}

/// Runs every front end and reports it: the table, and the JSON, CSV and chart asked for.
pub fn run_and_emit(p: &Params, out: &Outputs<'_>, quiet: bool) -> Result<()> {
    let progress = Progress::new(!quiet);
    let records = run(p, &progress)?;
    progress.finish();
    let table = super::table::queens_table(&records);
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
