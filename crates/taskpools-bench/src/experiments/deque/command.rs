//! `taskpools deque`: its arguments and their checks, and what a run reports (table, JSON,
//! CSV, the throughput chart).

use anyhow::{bail, Result};
use clap::Args;

use super::{run, Params, Record};
use crate::cli::{emit, OutputArgs, Outputs, RepsArgs, ThreadsArgs};
use crate::report::{self, Progress};

/// The arguments of `taskpools deque`.
#[derive(Args)]
#[command(
    mut_arg("threads", |a| a.default_value("2,4").help(
        "Thread counts P (owner + P-1 thieves), comma-separated; each 2 to 4096, none given \
         twice"
    )),
    mut_arg("reps", |a| a.default_value("25")),
)]
pub struct DequeArgs {
    #[command(flatten)]
    pub threads: ThreadsArgs,
    /// Pushes by the owner; 1 to 2^28 (268,435,456).
    #[arg(long, default_value_t = 128_000)]
    pub ops: usize,
    /// Deque capacity (fixed-size rows reject pushes when full; growable rows start there);
    /// 2 to 2^24 (16,777,216).
    #[arg(long, default_value_t = 16)]
    pub capacity: usize,
    #[command(flatten)]
    pub reps: RepsArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// Owner pushes of the deque benchmark (a growable deque may hold them all: 2 GiB).
const MAX_DEQUE_OPS: usize = 1 << 28;
/// Capacity of the deque benchmark's deques.
const MAX_DEQUE_CAPACITY: usize = 1 << 24;

/// Runs `taskpools deque`.
pub fn exec(a: DequeArgs) -> Result<()> {
    check(&a)?;
    let p = Params {
        threads: a.threads.threads,
        ops: a.ops,
        capacity: a.capacity,
        reps: a.reps.reps,
    };
    run_and_emit(&p, &a.out.outputs(), a.out.quiet())?;
    Ok(())
}

fn check(a: &DequeArgs) -> Result<()> {
    a.threads.check(2)?;
    if !(1..=MAX_DEQUE_OPS).contains(&a.ops) {
        bail!("--ops {}: must be 1 to 2^28 = {MAX_DEQUE_OPS}", a.ops);
    }
    if !(2..=MAX_DEQUE_CAPACITY).contains(&a.capacity) {
        bail!(
            "--capacity {}: must be 2 to 2^24 = {MAX_DEQUE_CAPACITY}",
            a.capacity
        );
    }
    a.reps.check()?;
    a.out.check()
}

/// Runs the benchmark and reports it: the table, and the JSON, CSV and chart asked for.
pub fn run_and_emit(p: &Params, out: &Outputs<'_>, quiet: bool) -> Result<Vec<Record>> {
    let progress = Progress::new(!quiet);
    let records = run(p, &progress)?;
    progress.finish();
    let table = super::table::deque_table(&records, p.ops, p.capacity);
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
