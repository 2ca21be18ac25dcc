//! `taskpools blocked`: its arguments and their checks, and what a run reports (table,
//! JSON, CSV, the speedup chart).

use anyhow::{bail, Result};
use clap::Args;

use super::{run, Params};
use crate::cli::{emit, OutputArgs, Outputs, PinArgs, RepsArgs, ThreadsArgs, TraceArgs};
use crate::report::{self, Progress};

/// The arguments of `taskpools blocked`.
#[derive(Args)]
#[command(
    mut_arg("reps", |a| a.default_value("3")),
    mut_arg("pin", |a| a.help(
        "Pin worker i of every runtime to core i mod cores and the sequential run to core 0: \
         `--pin`, `--pin true` (the default) or `--pin false`"
    )),
    mut_arg("trace", |a| a.help(
        "Record a schedule trace of the first repetition of each of our configurations (our \
         runtimes then record in every repetition; the table's times include that): Chrome \
         trace-event JSON to this file and Gantt charts into the folder FILE with the \
         extension `.gantt`"
    )),
)]
pub struct BlockedArgs {
    #[command(flatten)]
    pub threads: ThreadsArgs,
    #[command(flatten)]
    pub reps: RepsArgs,
    /// LU: blocks per side, 2 to 256 (BOTS sparselu's pattern; 64 x 64 blocks of 64 is the
    /// issue's size). Three matrices of (blocks x block)^2 f64 must fit in 2 GiB.
    #[arg(long, default_value_t = 64)]
    pub lu_blocks: usize,
    /// LU: elements per block side, 1 to 256.
    #[arg(long, default_value_t = 64)]
    pub lu_block: usize,
    /// Jacobi: grid side, a multiple of --grid-block, at most 8192 (four grids of f64 must
    /// fit in 2 GiB), at most 1024 blocks per side.
    #[arg(long, default_value_t = 4096)]
    pub grid: usize,
    /// Jacobi: block side.
    #[arg(long, default_value_t = 128)]
    pub grid_block: usize,
    /// Jacobi: sweeps, 1 to 1000.
    #[arg(long, default_value_t = 4)]
    pub sweeps: usize,
    /// The kernels, comma-separated: lu, jacobi.
    #[arg(long, default_value = "lu,jacobi", value_delimiter = ',')]
    pub kernels: Vec<String>,
    #[command(flatten)]
    pub pin: PinArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// Memory the `blocked` experiment may take for its matrices or grids.
const MAX_BLOCKED_BYTES: u64 = 2 << 30;

/// Runs `taskpools blocked`.
pub fn exec(a: BlockedArgs) -> Result<()> {
    check(&a)?;
    let p = Params {
        threads: a.threads.threads,
        reps: a.reps.reps,
        lu_blocks: a.lu_blocks,
        lu_block: a.lu_block,
        grid: a.grid,
        grid_block: a.grid_block,
        sweeps: a.sweeps,
        kernels: a.kernels.clone(),
        pin: a.pin.pin,
        trace: a.trace.trace.clone(),
    };
    a.trace.check()?;
    run_and_emit(&p, &a.out.outputs(), a.out.quiet())?;
    Ok(())
}

fn check(a: &BlockedArgs) -> Result<()> {
    a.threads.check(1)?;
    if let Some(k) = a
        .kernels
        .iter()
        .find(|k| !super::KERNELS.contains(&k.as_str()))
    {
        bail!(
            "--kernels: unknown kernel `{k}`; known: {}",
            super::KERNELS.join(", ")
        );
    }
    a.reps.check()?;
    if !(2..=256).contains(&a.lu_blocks) || !(1..=256).contains(&a.lu_block) {
        bail!(
            "--lu-blocks {} --lu-block {}: blocks per side must be 2 to 256 and the block side 1 to 256",
            a.lu_blocks,
            a.lu_block
        );
    }
    // The run keeps three matrices (input, expected result, the run's copy), which can fill
    // in up to fully dense.
    let lu_bytes = ((a.lu_blocks * a.lu_block) as u64).pow(2) * 8 * 3;
    if lu_bytes > MAX_BLOCKED_BYTES {
        bail!(
            "--lu-blocks {} --lu-block {}: the LU's matrices could take {} MiB once filled in; \
             at most {} MiB (64 x 64 blocks of 64 take 384 MiB)",
            a.lu_blocks,
            a.lu_block,
            lu_bytes >> 20,
            MAX_BLOCKED_BYTES >> 20
        );
    }
    let grid_bytes = (a.grid as u64).pow(2) * 8 * 4;
    if grid_bytes > MAX_BLOCKED_BYTES {
        bail!(
            "--grid {}: the four grids (input, expected, two for the run) would take {} MiB; at \
             most {} MiB (a grid side of 8192)",
            a.grid,
            grid_bytes >> 20,
            MAX_BLOCKED_BYTES >> 20
        );
    }
    if a.grid_block != 0 && a.grid / a.grid_block > 1024 {
        bail!(
            "--grid {} --grid-block {}: at most 1024 blocks per side (a million spawns per sweep)",
            a.grid,
            a.grid_block
        );
    }
    if a.grid_block == 0 || a.grid < 3 || a.grid % a.grid_block != 0 {
        bail!(
            "--grid {} --grid-block {}: the grid side must be at least 3 and a multiple of the block side",
            a.grid,
            a.grid_block
        );
    }
    if !(1..=1000).contains(&a.sweeps) {
        bail!("--sweeps {}: 1 to 1000", a.sweeps);
    }
    a.out.check()
}

/// Runs the kernels and reports them: the table, and the JSON, CSV and chart asked for.
pub fn run_and_emit(p: &Params, out: &Outputs<'_>, quiet: bool) -> Result<()> {
    let progress = Progress::new(!quiet);
    let records = run(p, &progress)?;
    progress.finish();
    let table = super::table::blocked_table(&records);
    emit(&table, &records, out, quiet)?;
    if let Some(path) = out.plot {
        let (labels, series) = report::grouped_series(
            &records,
            |r| (r.runtime != "sequential").then(|| format!("{} x{}", r.kernel, r.threads)),
            |r| format!("{} {}", r.runtime, r.order),
            |r| r.speedup_vs_seq,
        );
        report::bar_chart(
            path,
            "blocked kernels, a scope per step: speedup vs sequential",
            "speedup vs sequential",
            &labels,
            &series,
            Some(1.0),
        )?;
    }
    Ok(())
}
