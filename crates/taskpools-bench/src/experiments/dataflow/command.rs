//! `taskpools dataflow`: its arguments and their checks, and what a run reports (table,
//! JSON, CSV, the per-task cost chart).

use anyhow::{bail, Result};
use clap::Args;

use super::{run, Graph, Params, PEERS};
use crate::cli::{emit, OutputArgs, Outputs, PeersArgs, PinArgs, RepsArgs, ThreadsArgs, TraceArgs};
use crate::report::{self, Progress};

/// The arguments of `taskpools dataflow`.
#[derive(Args)]
#[command(
    mut_arg("pin", |a| a.help(
        "Pin worker i of every runtime and OpenMP thread i to core i mod cores, and the \
         sequential run to core 0: `--pin`, `--pin true` (the default) or `--pin false`"
    )),
    mut_arg("peers", |a| a.help(
        "Other runtimes to run beside ours, comma-separated, `all` or `none`: libgomp, \
         libomp (OpenMP `depend`), starpu (each where the build found it, in processes of \
         their own), rayon"
    )),
    mut_arg("trace", |a| a.help(
        "Record a schedule trace of one extra, untimed run of each data-flow variant per \
         graph and thread count (on runtimes that record): Chrome trace-event JSON to this \
         file, Gantt charts into the folder FILE with the extension `.gantt`, task graphs \
         with their critical path into FILE with the extension `.dot`"
    )),
)]
pub struct DataflowArgs {
    #[command(flatten)]
    pub threads: ThreadsArgs,
    #[command(flatten)]
    pub reps: RepsArgs,
    /// Tasks per graph, 1 to 10,000,000. (libgomp at 1 thread takes time quadratic in the
    /// tasks on the graphs with reads: 20,000 take about 2 s per repetition there.)
    #[arg(long, default_value_t = 20_000)]
    pub tasks: usize,
    /// Blocks per row of the graphs (the width of the chains, stencils and random DAG),
    /// 3 to 1,000,000.
    #[arg(long, default_value_t = 64)]
    pub width: usize,
    /// Graphs, comma-separated, or `all`: independent, chains, fan-in-2, fan-in-4, random, accumulate (adds into random bins; its bins also declared commutative, and `mutexinoutset` / `STARPU_COMMUTE` in the peers, and its additions as a reduction, `in_reduction` / `STARPU_REDUX` in the peers, as atomic adds and as per-task copies).
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pub graphs: Vec<String>,
    #[command(flatten)]
    pub peers: PeersArgs,
    #[command(flatten)]
    pub pin: PinArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// The most tasks `dataflow` may run per graph (its arrays take about 30 bytes per task).
const MAX_DATAFLOW_TASKS: usize = 10_000_000;

/// Runs `taskpools dataflow`.
pub fn exec(a: DataflowArgs) -> Result<()> {
    let p = params(&a)?;
    run_and_emit(&p, &a.out.outputs(), a.out.quiet())?;
    Ok(())
}

fn params(a: &DataflowArgs) -> Result<Params> {
    a.threads.check(1)?;
    a.reps.check()?;
    if !(1..=MAX_DATAFLOW_TASKS).contains(&a.tasks) {
        bail!("--tasks {}: 1 to {MAX_DATAFLOW_TASKS}", a.tasks);
    }
    if !(3..=1_000_000).contains(&a.width) {
        bail!("--width {}: 3 to 1000000", a.width);
    }
    let graphs = if a.graphs.iter().any(|g| g == "all") {
        Graph::ALL.to_vec()
    } else {
        a.graphs
            .iter()
            .map(|g| Graph::from_name(g))
            .collect::<Result<Vec<_>>>()?
    };
    let peers = a.peers.select(&PEERS)?;
    crate::experiments::drivers::refuse_unbuilt(&a.peers.peers)?;
    a.out.check()?;
    a.trace.check()?;
    Ok(Params {
        threads: a.threads.threads.clone(),
        reps: a.reps.reps,
        tasks: a.tasks,
        width: a.width,
        graphs,
        pin: a.pin.pin,
        trace: a.trace.trace.clone(),
        peers,
    })
}

/// Runs the task graphs and reports them: the table, and the JSON, CSV and chart asked for.
pub fn run_and_emit(p: &Params, out: &Outputs<'_>, quiet: bool) -> Result<()> {
    let progress = Progress::new(!quiet);
    let records = run(p, &progress)?;
    progress.finish();
    let table = super::table::dataflow_table(&records);
    emit(&table, &records, out, quiet)?;
    if let Some(path) = out.plot {
        let (labels, mut series) = report::grouped_series(
            &records,
            |r| (r.variant != "sequential").then(|| format!("{} x{}", r.graph, r.threads)),
            |r| r.variant.clone(),
            |r| r.ns_per_task.unwrap_or(f64::NAN),
        );
        // Ours first, then each other runtime's rows side by side (`libgomp depend` beside
        // `libgomp rows`), so that neighbouring colours belong to one runtime.
        let owner = |name: &str| {
            let first = name.split_whitespace().next().unwrap_or("");
            PEERS.iter().position(|p| *p == first).map_or(0, |i| i + 1)
        };
        series.sort_by_key(|(name, _)| owner(name));
        report::bar_chart_log(
            path,
            "data-flow task graphs: nanoseconds per task (lower is better, log scale)",
            "ns per task",
            &labels,
            &series,
        )?;
    }
    Ok(())
}
