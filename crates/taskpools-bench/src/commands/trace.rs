//! `taskpools trace`: summarizes a schedule trace file, or measures what tracing costs.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;

use crate::cli::RepsArgs;
use crate::experiments::trace_cost;
use crate::report;

/// The arguments of `taskpools trace`.
#[derive(Args)]
#[command(
    mut_arg("reps", |a| a.default_value("11").help(
        "Repetitions for --cost (medians), at least 1"
    )),
)]
pub struct SummaryArgs {
    /// The trace file (not needed with --cost).
    pub file: Option<PathBuf>,
    /// Instead, measure what tracing costs: fine-grained programs on a runtime with and
    /// without a trace, in one run.
    #[arg(long)]
    pub cost: bool,
    #[command(flatten)]
    pub reps: RepsArgs,
}

/// Runs `taskpools trace`.
pub fn exec(a: SummaryArgs) -> Result<()> {
    if a.cost {
        if a.reps.reps == 0 {
            bail!("--reps must be at least 1");
        }
        cost(a.reps.reps)?;
    } else {
        let Some(file) = a.file else {
            bail!("taskpools trace needs a FILE (a Chrome trace-event JSON file, as --trace writes it) or --cost");
        };
        print!("{}", report::trace::summary(&file)?);
    }
    Ok(())
}

fn cost(reps: usize) -> Result<()> {
    let rows = trace_cost::run(reps, 2)?;
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
