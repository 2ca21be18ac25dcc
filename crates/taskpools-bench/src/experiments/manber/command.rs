//! `taskpools manber`: its arguments and their checks, and what a run reports (table, JSON,
//! CSV, and the figures of Kotz & Ellis's evaluation of Manber's pool).

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use taskpools::Search;

use super::{run, Params, Record, Samples};
use crate::cli::{
    check_dir_writable, check_positive, check_threads, emit, names_or_all, Outputs, RecordsArgs,
    TraceArgs,
};
use crate::report::{self, Progress};

/// The arguments of `taskpools manber`.
#[derive(Args)]
#[command(
    mut_arg("json", |a| a.help(
        "Write the points as JSON (`-` for stdout: no table, no progress bar). The folder \
         must exist; the file is checked for writing before the run"
    )),
    mut_arg("csv", |a| a.help(
        "Write the points as CSV (a file: `-` is refused). The folder must exist"
    )),
    mut_arg("trace", |a| a.help(
        "Write the schedule traces of the sampled trials behind Figures 6-9 (the segment \
         sizes over time are replayed from them): Chrome trace-event JSON to this file \
         (`taskpools trace FILE` prints the over-time table), Gantt charts into the folder \
         FILE with the extension `.gantt`"
    )),
)]
pub struct ManberArgs {
    /// Participant counts, comma-separated (Kotz & Ellis: 16); each 1 to 4096, none given twice.
    #[arg(long, default_value = "16,2", value_delimiter = ',')]
    pub participants: Vec<usize>,
    /// Total operations per trial (Kotz & Ellis: 5000); 1 to 10^8.
    #[arg(long, default_value_t = 5000)]
    pub ops: usize,
    /// Initial elements per participant (Kotz & Ellis: 320 for 16 participants, i.e. 20); the
    /// largest participant count times this must be at most 2^26 (67,108,864) elements.
    #[arg(long, default_value_t = 20)]
    pub fill: usize,
    /// Search strategies: tree, linear, random, or `all`.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pub search: Vec<String>,
    /// Job mixes of the random model (percent adds, 0 to 100), comma-separated.
    #[arg(
        long,
        default_value = "0,10,20,30,40,50,60,70,80,90,100",
        value_delimiter = ','
    )]
    pub mixes: Vec<u32>,
    /// Producer counts 0..=P in steps of this; at least 1.
    #[arg(long, default_value_t = 1)]
    pub producer_step: usize,
    /// Waiting mode: removers that find nothing are handed the next added element.
    #[arg(long)]
    pub waiting: bool,
    /// Remote-access delays in ns (busy-wait per non-local segment or tree node),
    /// comma-separated; each at most 10^6 (1 ms).
    #[arg(long, default_value = "0", value_delimiter = ',')]
    pub delay_ns: Vec<u64>,
    /// Trials per point (Kotz & Ellis: 10); at least 1.
    #[arg(long, default_value_t = 10)]
    pub trials: usize,
    #[command(flatten)]
    pub out: RecordsArgs,
    /// Directory for the SVG figures (Figures 5, 6-9 and 10 of Kotz & Ellis) and the samples;
    /// created before the run.
    #[arg(long)]
    pub plot_dir: Option<PathBuf>,
    #[command(flatten)]
    pub trace: TraceArgs,
}

/// Operations per Manber trial.
const MAX_MANBER_OPS: usize = 100_000_000;
/// Initial elements over all Manber participants (8 bytes each: 512 MiB).
const MAX_MANBER_ELEMENTS: usize = 1 << 26;
/// A Manber remote-access delay.
const MAX_DELAY_NS: u64 = 1_000_000;

/// Runs `taskpools manber`.
pub fn exec(a: ManberArgs) -> Result<()> {
    let searches = parse_searches(&a.search)?;
    check(&a)?;
    let p = Params {
        participants: a.participants,
        ops: a.ops,
        fill_per_participant: a.fill,
        searches,
        mixes: a.mixes,
        producer_step: a.producer_step,
        waiting: a.waiting,
        delays_ns: a.delay_ns,
        trials: a.trials,
        trace: a.trace.trace.clone(),
    };
    a.trace.check()?;
    run_and_emit(&p, &a.out.outputs(), a.plot_dir.as_deref(), a.out.quiet())?;
    Ok(())
}

fn parse_searches(names: &[String]) -> Result<Vec<Search>> {
    names_or_all(names, &Search::ALL, |n| Ok(Search::from_name(n)?))
}

fn check(a: &ManberArgs) -> Result<()> {
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
    a.out.check()?;
    if let Some(dir) = a.plot_dir.as_deref() {
        check_dir_writable("--plot-dir", dir)?;
    }
    Ok(())
}

/// Runs every point and reports them: the table, and the JSON, CSV and figures asked for.
pub fn run_and_emit(
    p: &Params,
    out: &Outputs<'_>,
    plot_dir: Option<&Path>,
    quiet: bool,
) -> Result<()> {
    let progress = Progress::new(!quiet);
    let (records, samples) = run(p, &progress)?;
    progress.finish();
    let table = super::table::manber_table(&records);
    emit(&table, &records, out, quiet)?;
    if let Some(dir) = plot_dir {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        figures(dir, &records, &samples)?;
    }
    Ok(())
}

/// The counterparts of Figures 5, 6-9 and 10 of Kotz & Ellis.
fn figures(dir: &Path, records: &[Record], samples: &[Samples]) -> Result<()> {
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
            let pts = |w: &str, y: &dyn Fn(&Record) -> f64| -> Vec<(f64, f64)> {
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
            &dir.join(format!("fig5-op-time-vs-mix-p{n}.svg")),
            &format!(
                "mean operation time vs job mix, {}{tag}",
                report::plural(n, "participant", "participants")
            ),
            "adds (% of operations)",
            "ns per operation",
            &f5,
        )?;
        report::line_chart(
            &dir.join(format!("fig10-elements-per-steal-p{n}.svg")),
            &format!(
                "elements stolen per steal, producers/consumers, {}{tag}",
                report::plural(n, "participant", "participants")
            ),
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
                // A step line: a segment keeps its size until the next sample, so that a
                // steal shows as a drop, not as a slope drawn across the time between samples.
                let mut steps: Vec<(f64, f64)> = Vec::with_capacity(2 * v.len());
                for &(t, n) in v {
                    if let Some(&(_, prev)) = steps.last() {
                        steps.push((t, prev));
                    }
                    steps.push((t, n as f64));
                }
                (format!("{i} {role}"), steps)
            })
            .collect();
        report::line_chart(
            &dir.join(format!("segments-{}-{}.svg", s.search, s.workload)),
            &format!(
                "segment sizes over time: {} search, {} (P = producer)",
                s.search, s.workload
            ),
            "time (µs)",
            "elements in segment",
            &series,
        )?;
    }
    report::write_json(&dir.join("segment-samples.json"), samples)?;
    Ok(())
}
