//! `taskpools synthetic`: its arguments and their checks, and what a run reports (table,
//! JSON, CSV, the speedup chart).

use anyhow::{bail, Result};
use clap::Args;
use taskpools::{MemKind, Search, WakePolicy};

use super::{run, Params, Record};
use crate::cli::{
    emit, names_or_all, parse_pools, OutputArgs, Outputs, PinArgs, RepsArgs, ThreadsArgs, TraceArgs,
};
use crate::report::Progress;

/// The arguments of `taskpools synthetic`.
#[derive(Args)]
#[command(
    mut_arg("reps", |a| a.help(
        "Repetitions per configuration (the median is reported); at least 1"
    )),
    mut_arg("pin", |a| a.default_value("false").help(
        "Pin worker i to CPU i mod cores: `--pin`, `--pin true` or `--pin false` (the \
         default)"
    )),
    mut_arg("trace", |a| a.help(
        "Record a schedule trace of every configuration (one extra, untimed repetition each, \
         on runtimes that record; the timed runs do not): Chrome trace-event JSON to this \
         file (open it in Perfetto, or `taskpools trace FILE` for utilisation, steals and the \
         working phase over time), and a Gantt chart per configuration (like Figure 1 of the \
         task-pool paper) into the folder FILE with the extension `.gantt`"
    )),
)]
pub struct SyntheticArgs {
    /// Argument k (the initial tasks are A(k-1) … A(0)); 1 ≤ k ≤ 40. A(k) runs P(k) tasks,
    /// about 1.6× more per step of k: P(40) = 866,988,830 tasks, the limit of 2^30.
    #[arg(long, default_value_t = 24)]
    pub k: u32,
    /// Work factor f: a task does 100·f to 160·f units of work (about 0.8 ns each). The run's
    /// work, at most 160·f·P(k) units, must be at most 2^42 (about an hour sequentially).
    #[arg(long, default_value_t = 40)]
    pub f: u32,
    #[command(flatten)]
    pub threads: ThreadsArgs,
    /// Pools (names or aliases), comma-separated, or `all`.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pub pool: Vec<String>,
    /// Memory managers for list-based pools, comma-separated, or `all`.
    #[arg(long, default_value = "dgbko", value_delimiter = ',')]
    pub mem: Vec<String>,
    /// Wake-up policies, comma-separated: every-put (java-dq2), on-empty (java-dq9), spin (java-dq10), or `all`.
    #[arg(long, default_value = "on-empty", value_delimiter = ',')]
    pub wake: Vec<String>,
    #[command(flatten)]
    pub reps: RepsArgs,
    #[command(flatten)]
    pub pin: PinArgs,
    /// Search strategy of the steal-half pool (`manber`): tree, linear or random.
    #[arg(long, default_value = "tree")]
    pub search: String,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// The most tasks `synthetic` may run: P(k) ≤ 2^30, i.e. k ≤ 40.
const MAX_SYNTHETIC_TASKS: u64 = taskpools::synthetic::MAX_TASKS;
/// Work units of one synthetic run (about an hour sequentially at 0.8 ns per unit).
const MAX_SYNTHETIC_UNITS: u64 = taskpools::synthetic::MAX_UNITS;

/// Runs `taskpools synthetic`.
pub fn exec(a: SyntheticArgs) -> Result<()> {
    // Names first, then sizes and outputs (which may touch the file system).
    let (pools, mems, wakes) = (
        parse_pools(&a.pool)?,
        parse_mems(&a.mem)?,
        parse_wakes(&a.wake)?,
    );
    let search = Search::from_name(&a.search)?;
    check(&a)?;
    let p = Params {
        k: a.k,
        f: a.f,
        threads: a.threads.threads,
        pools,
        mems,
        wakes,
        reps: a.reps.reps,
        pin: a.pin.pin,
        search,
        trace: a.trace.trace.clone(),
    };
    a.trace.check()?;
    run_and_emit(&p, &a.out.outputs(), a.out.quiet())?;
    Ok(())
}

fn parse_mems(names: &[String]) -> Result<Vec<MemKind>> {
    names_or_all(names, &MemKind::ALL, |n| Ok(MemKind::from_name(n)?))
}

fn parse_wakes(names: &[String]) -> Result<Vec<WakePolicy>> {
    names_or_all(names, &WakePolicy::ALL, |n| Ok(WakePolicy::from_name(n)?))
}

fn check(a: &SyntheticArgs) -> Result<()> {
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
    a.threads.check(1)?;
    a.reps.check()?;
    a.out.check()
}

/// Runs the experiment and reports it: the table, and the JSON, CSV and chart asked for.
pub fn run_and_emit(p: &Params, out: &Outputs<'_>, quiet: bool) -> Result<Vec<Record>> {
    let progress = Progress::new(!quiet);
    let records = run(p, &progress)?;
    progress.finish();
    let table = super::table::synthetic_table(&records);
    emit(&table, &records, out, quiet)?;
    if let Some(path) = out.plot {
        let title = format!(
            "A(i), k = {}, f = {}: speedup vs sequential (median of {})",
            p.k, p.f, p.reps
        );
        super::chart::speedup_chart(path, &title, &records)?;
    }
    Ok(records)
}
