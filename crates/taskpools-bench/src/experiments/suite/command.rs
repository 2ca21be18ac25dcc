//! `taskpools suite`: its arguments and their checks, and what a run reports (table, JSON,
//! CSV, a speedup figure per benchmark).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;

use super::{run, Bench, Params, Sizes, PEERS};
use crate::cli::{
    check_dir_writable, emit, names_or_all, Outputs, PeersArgs, PinArgs, RecordsArgs, RepsArgs,
    ThreadsArgs, TraceArgs,
};
use crate::report::{self, Progress};

/// The arguments of `taskpools suite`.
#[derive(Args)]
#[command(
    mut_arg("reps", |a| a.help("Repetitions (the geometric mean is reported); at least 1")),
    mut_arg("peers", |a| a.help(
        "Other runtimes to run beside ours, comma-separated, `all` or `none`: rayon, libgomp, \
         libomp, starpu (each of the last three where the build found it, in processes of \
         their own; StarPU runs Cholesky, LU and heat)"
    )),
    mut_arg("pin", |a| a.help(
        "Pin worker i of every runtime and OpenMP thread i to core i mod cores, and the \
         sequential runs to core 0: `--pin`, `--pin true` (the default) or `--pin false`"
    )),
    mut_arg("trace", |a| a.help(
        "Trace one extra, untimed run of each benchmark's data-flow variant at the largest \
         thread count: Chrome trace-event JSON to this file (open it in Perfetto, or \
         `taskpools trace FILE` for a summary with the critical path), Gantt charts into FILE \
         with the extension `.gantt`, task graphs as Graphviz DOT (critical path in red) into \
         FILE with the extension `.dot`"
    )),
)]
pub struct SuiteArgs {
    #[command(flatten)]
    pub threads: ThreadsArgs,
    #[command(flatten)]
    pub reps: RepsArgs,
    /// Benchmarks, comma-separated, or `all`: black-scholes, cholesky, heat, lu, matmul,
    /// mergesort.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pub bench: Vec<String>,
    /// PARTEE's problem sizes (30 M options, Cholesky 2048², heat 2048², LU 4096², matrix
    /// multiply 2048², mergesort 2^20 keys, smaller than our default): minutes per benchmark
    /// on 2 cores. The size options
    /// below override single sizes either way.
    #[arg(long)]
    pub paper_sizes: bool,
    /// Black-Scholes options, 1 to 2^25 (default 2^22).
    #[arg(long)]
    pub options: Option<usize>,
    /// Options per Black-Scholes task, 1 to the options (default 128).
    #[arg(long)]
    pub options_block: Option<usize>,
    /// Cholesky matrix side, 1 to 8192 (default 1536).
    #[arg(long)]
    pub cholesky_n: Option<usize>,
    /// Cholesky tile side; must divide the matrix side (default 128).
    #[arg(long)]
    pub cholesky_tile: Option<usize>,
    /// Heat grid side, 3 to 8192 (default 1536).
    #[arg(long)]
    pub heat_n: Option<usize>,
    /// Heat steps, 1 to 100,000 (default 60; a step of an 8192² grid takes about 0.1 s
    /// on one core).
    #[arg(long)]
    pub heat_steps: Option<usize>,
    /// Rows per heat task, 1 to the grid side (default 32).
    #[arg(long)]
    pub heat_band: Option<usize>,
    /// Tile side of heat's 2-D blocked variants (a Jacobi sweep in square tiles), 1 to the
    /// grid side (default 128).
    #[arg(long)]
    pub heat_tile: Option<usize>,
    /// LU matrix side, 1 to 8192 (default 1280).
    #[arg(long)]
    pub lu_n: Option<usize>,
    /// LU tile side; must divide the matrix side (default 128).
    #[arg(long)]
    pub lu_tile: Option<usize>,
    /// Matrix-multiply side: the leaf side times a power of two, at most 8192 (default 1024).
    #[arg(long)]
    pub matmul_n: Option<usize>,
    /// Matrix-multiply leaf side (default 64).
    #[arg(long)]
    pub matmul_leaf: Option<usize>,
    /// Mergesort keys, 1 to 2^27 (default 2^22).
    #[arg(long)]
    pub sort_n: Option<usize>,
    /// Keys per mergesort leaf, 1 to the keys (default 4096).
    #[arg(long)]
    pub sort_leaf: Option<usize>,
    /// Look-up tables of the `dataflow` variants: `exact` (no false dependences; the
    /// library's default) or `blocks` (PARTEE's block mode). Heat runs both its variants
    /// whatever this says.
    #[arg(long, default_value = "exact")]
    pub lut: String,
    /// Block size of the look-up tables in bytes, 1 to 2^30: with `--lut blocks` the
    /// dependence unit (accesses to one block are ordered; PARTEE: 2048), with `--lut exact`
    /// only the size of the tables' index blocks (dependences stay exact).
    #[arg(long, default_value_t = 2048)]
    pub lut_block: usize,
    #[command(flatten)]
    pub peers: PeersArgs,
    #[command(flatten)]
    pub pin: PinArgs,
    #[command(flatten)]
    pub out: RecordsArgs,
    /// Directory for the figures (one SVG per benchmark: speedup over threads, log axes);
    /// created before the run.
    #[arg(long)]
    pub plot_dir: Option<PathBuf>,
    #[command(flatten)]
    pub trace: TraceArgs,
}

/// Runs `taskpools suite`.
pub fn exec(a: SuiteArgs) -> Result<()> {
    let p = params(&a)?;
    run_and_emit(&p, &a.out.outputs(), a.plot_dir.as_deref(), a.out.quiet())?;
    Ok(())
}

fn params(a: &SuiteArgs) -> Result<Params> {
    let benches = names_or_all(&a.bench, &Bench::ALL, Bench::from_name)?;
    use taskpools::dataflow::Config;
    if !(1..=Config::MAX_BLOCK).contains(&a.lut_block) {
        bail!(
            "--lut-block {}: must be 1 to 2^30 ({}) bytes",
            a.lut_block,
            Config::MAX_BLOCK
        );
    }
    let config = match a.lut.as_str() {
        "exact" => Config::exact().with_index_block(a.lut_block),
        "blocks" => Config::blocks(a.lut_block),
        other => bail!("--lut {other}: `exact` or `blocks`"),
    }?;
    a.threads.check(1)?;
    a.reps.check()?;
    let mut s = if a.paper_sizes {
        Sizes::PAPER
    } else {
        Sizes::DEFAULT
    };
    let set = |field: &mut usize, v: Option<usize>| {
        if let Some(v) = v {
            *field = v;
        }
    };
    set(&mut s.options, a.options);
    set(&mut s.options_block, a.options_block);
    set(&mut s.cholesky_n, a.cholesky_n);
    set(&mut s.cholesky_tile, a.cholesky_tile);
    set(&mut s.heat_n, a.heat_n);
    set(&mut s.heat_steps, a.heat_steps);
    set(&mut s.heat_band, a.heat_band);
    set(&mut s.heat_tile, a.heat_tile);
    if a.heat_tile.is_none() {
        // A smaller grid than the default tile: one tile, not an error about a flag not given.
        s.heat_tile = s.heat_tile.min(s.heat_n);
    }
    set(&mut s.lu_n, a.lu_n);
    set(&mut s.lu_tile, a.lu_tile);
    set(&mut s.matmul_n, a.matmul_n);
    set(&mut s.matmul_leaf, a.matmul_leaf);
    set(&mut s.sort_n, a.sort_n);
    set(&mut s.sort_leaf, a.sort_leaf);
    s.check()?;
    a.out.check()?;
    if let Some(dir) = a.plot_dir.as_deref() {
        check_dir_writable("--plot-dir", dir)?;
    }
    a.trace.check()?;
    let peers = a.peers.select(&PEERS)?;
    crate::experiments::drivers::refuse_unbuilt(&a.peers.peers)?;
    Ok(Params {
        threads: a.threads.threads.clone(),
        reps: a.reps.reps,
        benches,
        sizes: s,
        dataflow: config,
        pin: a.pin.pin,
        trace: a.trace.trace.clone(),
        peers,
    })
}

/// Runs the benchmarks and reports them: the table, and the JSON, CSV and figures asked for.
pub fn run_and_emit(
    p: &Params,
    out: &Outputs<'_>,
    plot_dir: Option<&Path>,
    quiet: bool,
) -> Result<()> {
    let progress = Progress::new(!quiet);
    let records = run(p, &progress)?;
    progress.finish();
    let table = super::table::suite_table(&records);
    emit(&table, &records, out, quiet)?;
    if let Some(dir) = plot_dir {
        for b in &p.benches {
            let rows: Vec<_> = records.iter().filter(|r| r.bench == b.name()).collect();
            let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
            for r in rows.iter().filter(|r| r.variant != "sequential") {
                let point = (r.threads as f64, r.speedup.unwrap_or(f64::NAN));
                match series.iter_mut().find(|(n, _)| *n == r.variant) {
                    Some((_, v)) => v.push(point),
                    None => series.push((r.variant.clone(), vec![point])),
                }
            }
            let title = format!("{} ({}): speedup over sequential", b.name(), rows[0].setup);
            let path = dir.join(format!("suite-{}.svg", b.name()));
            report::loglog_speedup(&path, &title, &series)
                .with_context(|| format!("--plot-dir: writing {}", path.display()))?;
        }
    }
    Ok(())
}
