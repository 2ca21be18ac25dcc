//! `taskpools idle`: its arguments and their checks, and what a run reports (table, JSON, CSV).

use std::fmt::Write as _;
use std::time::Duration;

use anyhow::{bail, Result};
use clap::Args;

use super::{run, Params, Record};
use crate::cli::{emit, PinArgs, RecordsArgs};
use crate::report::Progress;

/// The arguments of `taskpools idle`.
#[derive(Args)]
pub struct IdleArgs {
    /// Worker threads of each runtime, 1 to 4096.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Milliseconds between bursts, comma-separated; each 0.1 to 1000.
    #[arg(long, default_value = "1,5,20", value_delimiter = ',')]
    pub periods: Vec<f64>,
    /// Seconds of bursts per sample, 0.05 to 60.
    #[arg(long, default_value_t = 0.5)]
    pub duration: f64,
    /// Samples per runtime and period, alternated between the runtimes; at least 3.
    #[arg(long, default_value_t = 5)]
    pub samples: usize,
    /// Our runtime's spin budget in µs, 0 to 1,000,000 (default: the library's).
    #[arg(long)]
    pub spin: Option<u64>,
    #[command(flatten)]
    pub pin: PinArgs,
    #[command(flatten)]
    pub out: RecordsArgs,
}

/// Runs `taskpools idle`.
pub fn exec(a: IdleArgs) -> Result<()> {
    let p = check(&a)?;
    run_and_emit(&p, &a.out, a.out.quiet())
}

fn check(a: &IdleArgs) -> Result<Params> {
    crate::cli::check_threads("--threads", &[a.threads], 1)?;
    if a.periods.is_empty() || a.periods.iter().any(|&p| !(0.1..=1000.0).contains(&p)) {
        bail!("--periods: each 0.1 to 1000 ms, got {:?}", a.periods);
    }
    if !(0.05..=60.0).contains(&a.duration) {
        bail!("--duration {}: 0.05 to 60 seconds", a.duration);
    }
    if a.samples < 3 {
        bail!("--samples {}: at least 3 (medians with ranges)", a.samples);
    }
    if a.spin.is_some_and(|s| s > 1_000_000) {
        bail!("--spin {}: at most 1,000,000 µs", a.spin.unwrap_or(0));
    }
    a.out.check()?;
    Ok(Params {
        threads: a.threads,
        periods_ms: a.periods.clone(),
        duration_s: a.duration,
        samples: a.samples,
        spin: a.spin.map(Duration::from_micros),
        pin: a.pin.pin,
    })
}

/// Runs the bursts and reports them: the table, and the JSON and CSV asked for.
pub fn run_and_emit(p: &Params, out: &RecordsArgs, quiet: bool) -> Result<()> {
    let progress = Progress::new(!quiet);
    let records = run(p, &progress)?;
    progress.finish();
    emit(&table(&records), &records, &out.outputs(), quiet)
}

fn table(records: &[Record]) -> String {
    let mut s = String::new();
    if let Some(r) = records.first() {
        let _ = writeln!(
            s,
            "A burst of {:.0} µs of work (a join tree of 16 leaves) every period, {} per \
             runtime, both runtimes in this process, {} each; CPU = the \
             workers' CPU time per burst (the spinning after it included), wall = submit to \
             result. Medians (min-max).\n",
            r.work_us,
            crate::report::plural(r.threads, "worker", "workers"),
            crate::report::plural(r.samples, "alternated sample", "alternated samples")
        );
    }
    let _ = writeln!(
        s,
        "{:<28} {:>7} {:>7} {:>22} {:>9} {:>22} {:>9}",
        "runtime",
        "period",
        "bursts",
        "CPU µs per burst",
        "vs rayon",
        "wall µs per burst",
        "vs rayon"
    );
    for r in records {
        let ratio = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.2}"));
        let _ = writeln!(
            s,
            "{:<28} {:>5} ms {:>7} {:>8.0} ({:>5.0}-{:>5.0}) {:>9} {:>8.1} ({:>5.1}-{:>5.1}) {:>9}",
            r.runtime,
            r.period_ms,
            r.bursts,
            r.cpu_us,
            r.cpu_min_us,
            r.cpu_max_us,
            ratio(r.cpu_vs_rayon),
            r.wall_us,
            r.wall_min_us,
            r.wall_max_us,
            ratio(r.wall_vs_rayon),
        );
    }
    s
}
