//! `taskpools places`: its arguments and their checks, and what a run reports (tables, JSON,
//! CSV, the locality chart).

use anyhow::Result;
use clap::Args;

use super::{run, Bench, Params, Record};
use crate::cli::{emit, OutputArgs, Outputs, RepsArgs, TraceArgs};
use crate::report::{self, Progress};

/// The arguments of `taskpools places`.
#[derive(Args)]
#[command(
    mut_arg("reps", |a| a.default_value("7").help(
        "Repetitions, interleaved (the median is reported); at least 1"
    )),
    mut_arg("trace", |a| a.help(
        "Record a schedule trace of every configuration on our runtimes (one extra, untimed \
         repetition each): Chrome trace-event JSON to this file (open it in Perfetto or \
         chrome://tracing, or summarize it with `taskpools trace FILE`), and a Gantt chart \
         per configuration into the folder FILE with the extension `.gantt`"
    )),
)]
pub struct PlacesArgs {
    /// The places: `cores` (one place per core, the default), `threads`, `ll_caches`,
    /// `numa_domains`, `sockets`, a shape such as `2x1` (places x workers, pinned round-robin
    /// over the cores), or core lists such as `{0},{1}`. At least 2 places.
    #[arg(long, default_value = "cores")]
    pub places: String,
    /// Benchmarks, comma-separated, or `all`: cache-stress, mergesort, matmul.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pub bench: Vec<String>,
    #[command(flatten)]
    pub reps: RepsArgs,
    /// Cache Stress: MiB per array (Weibel: 8), up to 1024.
    #[arg(long, default_value_t = 8)]
    pub cache_mb: usize,
    /// Cache Stress: passes of each task over its array (Weibel: 100), 1 to 10000.
    #[arg(long, default_value_t = 16)]
    pub passes: usize,
    /// Cache Stress: tasks per worker (Weibel: 8 threads per core), 1 to 1024.
    #[arg(long, default_value_t = 8)]
    pub tasks_per_worker: usize,
    /// Merge sort: elements (Weibel: 4194304), up to 2^28.
    #[arg(long, default_value_t = 1 << 22)]
    pub sort_n: usize,
    /// Merge sort: sorters per worker (Weibel: 8192).
    #[arg(long, default_value_t = 8192)]
    pub sorters_per_worker: usize,
    /// Block matrix multiply: side (Weibel: 2048), leaf * 2^k, up to 8192.
    #[arg(long, default_value_t = 512)]
    pub mat_n: usize,
    /// Block matrix multiply: leaf side, at least 4.
    #[arg(long, default_value_t = 64)]
    pub mat_leaf: usize,
    /// Weibel's sizes: 100 passes, matrices of 2048 (slow on 2 cores: minutes).
    #[arg(long)]
    pub paper_sizes: bool,
    /// Skip the sections on deque sharing and steal policies.
    #[arg(long)]
    pub no_policies: bool,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// Runs `taskpools places`.
pub fn exec(a: PlacesArgs) -> Result<()> {
    let p = params(&a)?;
    run_and_emit(&p, &a.out.outputs(), a.out.quiet())?;
    Ok(())
}

fn params(a: &PlacesArgs) -> Result<Params> {
    a.out.check()?;
    let benches = if a.bench.iter().any(|b| b == "all") {
        Bench::ALL.to_vec()
    } else {
        a.bench
            .iter()
            .map(|b| Bench::from_name(b))
            .collect::<Result<Vec<_>>>()?
    };
    let p = Params {
        places: a.places.clone(),
        benches,
        reps: a.reps.reps,
        cache_bytes: a.cache_mb.min(1 << 20) << 20,
        passes: if a.paper_sizes { 100 } else { a.passes },
        tasks_per_worker: a.tasks_per_worker,
        sort_n: a.sort_n,
        sorters_per_worker: a.sorters_per_worker,
        mat_n: if a.paper_sizes { 2048 } else { a.mat_n },
        mat_leaf: a.mat_leaf,
        policies: !a.no_policies,
        trace: a.trace.trace.clone(),
    };
    a.trace.check()?;
    p.check()?;
    Ok(p)
}

/// Runs the sections and reports them: the tables, and the JSON, CSV and chart asked for.
pub fn run_and_emit(p: &Params, out: &Outputs<'_>, quiet: bool) -> Result<()> {
    let progress = Progress::new(!quiet);
    let records = run(p, &progress)?;
    progress.finish();
    let table = super::table::places_table(&records, p)?;
    emit(&table, &records, out, quiet)?;
    if let Some(path) = out.plot {
        let loc: Vec<&Record> = records.iter().filter(|r| r.section == "locality").collect();
        let mut labels: Vec<String> = Vec::new();
        for r in &loc {
            let l = format!("{} {}", r.config, r.locality);
            if !labels.contains(&l) {
                labels.push(l);
            }
        }
        let mut benches: Vec<String> = Vec::new();
        for r in &loc {
            if !benches.contains(&r.bench) {
                benches.push(r.bench.clone());
            }
        }
        let series: Vec<(String, Vec<f64>)> = benches
            .iter()
            .map(|b| {
                let v = labels
                    .iter()
                    .map(|l| {
                        loc.iter()
                            .find(|r| r.bench == *b && format!("{} {}", r.config, r.locality) == *l)
                            .map_or(f64::NAN, |r| r.vs_ref)
                    })
                    .collect();
                (b.clone(), v)
            })
            .collect();
        report::bar_chart(
            path,
            "Locality variants: time relative to best locality on places",
            "time / best-locality time",
            &labels,
            &series,
            Some(1.0),
        )?;
    }
    Ok(())
}
