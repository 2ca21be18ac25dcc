//! `taskpools radiosity`: its arguments and their checks, and what a run reports (table,
//! JSON, CSV, the speed-up chart, traces).

use anyhow::{bail, Result};
use clap::Args;
use taskpools::{MemKind, WakePolicy};

use super::run::{run, Params, Record};
use super::{Scene, Settings};
use crate::cli::{
    emit, names_or_all, parse_pools, OutputArgs, Outputs, PinArgs, RepsArgs, ThreadsArgs, TraceArgs,
};
use crate::report::Progress;

/// The arguments of `taskpools radiosity`.
#[derive(Args)]
#[command(
    mut_arg("reps", |a| a.default_value("3").help(
        "Repetitions per configuration (the median is reported); at least 1"
    )),
    mut_arg("trace", |a| a.help(
        "Record a schedule trace of every configuration (one extra, untimed solve each, on \
         runtimes that record; the timed runs do not): Chrome trace-event JSON to this file \
         (open it in Perfetto, or `taskpools trace FILE`), and a Gantt chart per \
         configuration into the folder FILE with the extension `.gantt`"
    )),
)]
pub struct RadiosityArgs {
    /// The scene: `largeroom` (SPLASH-2's largest built-in scene, the paper's) or `small` (a
    /// small occluding room for quick runs and tests).
    #[arg(long, default_value = "largeroom")]
    pub scene: String,
    /// Refine an interaction whose estimated error B·F exceeds this (SPLASH-2's `-bf`).
    #[arg(long, default_value_t = Settings::default().bf_epsilon)]
    pub bf_epsilon: f64,
    /// Never subdivide an element of this area or less, in scene units² (SPLASH-2's `-ae`).
    #[arg(long, default_value_t = Settings::default().area_epsilon)]
    pub area_epsilon: f64,
    /// Stop when the total energy changes by at most this fraction (SPLASH-2's `-en`).
    #[arg(long, default_value_t = Settings::default().energy_tolerance)]
    pub energy_tolerance: f64,
    /// Refuse a run whose refinement would make more interactions than this (a small BF
    /// epsilon makes them grow with the square of the elements); the sequential program
    /// finds out, before any measured run.
    #[arg(long, default_value_t = Settings::default().max_interactions)]
    pub max_interactions: u64,
    #[command(flatten)]
    pub threads: ThreadsArgs,
    /// Pools (names or aliases), comma-separated, or `all`.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pub pool: Vec<String>,
    /// Memory managers for list-based pools, comma-separated, or `all` (Korch & Rauber
    /// average the interaction rate over their memory managers; each is a row here).
    #[arg(long, default_value = "dgbko", value_delimiter = ',')]
    pub mem: Vec<String>,
    /// Wake-up policy: every-put (the paper's C pools wake a sleeper on every insertion),
    /// on-empty or spin.
    #[arg(long, default_value = "on-empty")]
    pub wake: String,
    /// Leave out the fork-join driver's rows (`join` on the runtime's own deques).
    #[arg(long)]
    pub no_fork_join: bool,
    #[command(flatten)]
    pub reps: RepsArgs,
    #[command(flatten)]
    pub pin: PinArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// The most elements an area epsilon may allow (each some 100 bytes, with its lists).
const MAX_ELEMENTS: f64 = 1e7;

/// Runs `taskpools radiosity`.
pub fn exec(a: RadiosityArgs) -> Result<()> {
    // Names first, then sizes and outputs (which may touch the file system).
    let scene = Scene::by_name(&a.scene)?;
    let pools = parse_pools(&a.pool)?;
    let mems = names_or_all(&a.mem, &MemKind::ALL, |n| Ok(MemKind::from_name(n)?))?;
    let wake = WakePolicy::from_name(&a.wake)?;
    let settings = Settings {
        bf_epsilon: a.bf_epsilon,
        area_epsilon: a.area_epsilon,
        energy_tolerance: a.energy_tolerance,
        max_interactions: a.max_interactions,
        ..Settings::default()
    };
    settings.validate()?;
    // The area epsilon bounds the mesh: leaves of at least that area, so at most about
    // 4/3 · area / epsilon elements (each with its interactions).
    let bound = 4.0 / 3.0 * scene.area() / settings.area_epsilon;
    if bound.is_nan() || bound > MAX_ELEMENTS {
        let v = a.area_epsilon;
        let given = if v != 0.0 && !(1e-4..1e9).contains(&v.abs()) {
            format!("{v:e}")
        } else {
            v.to_string()
        };
        bail!(
            "--area-epsilon {given}: scene \"{}\" could subdivide into {bound:.3e} elements, more than \
             {MAX_ELEMENTS:.0e}; give at least {:.1}",
            a.scene,
            4.0 / 3.0 * scene.area() / MAX_ELEMENTS
        );
    }
    a.threads.check(1)?;
    a.reps.check()?;
    a.out.check()?;
    a.trace.check()?;
    let p = Params {
        scene: a.scene,
        settings,
        threads: a.threads.threads,
        pools,
        mems,
        wake,
        reps: a.reps.reps,
        pin: a.pin.pin,
        fork_join: !a.no_fork_join,
        trace: a.trace.trace,
    };
    run_and_emit(&p, &a.out.outputs(), a.out.quiet())?;
    Ok(())
}

/// Runs the experiment and reports it: the table, and the JSON, CSV and chart asked for.
pub fn run_and_emit(p: &Params, out: &Outputs<'_>, quiet: bool) -> Result<Vec<Record>> {
    let progress = Progress::new(!quiet);
    let records = run(p, &progress)?;
    progress.finish();
    let table = super::table::radiosity_table(&records);
    emit(&table, &records, out, quiet)?;
    if let Some(path) = out.plot {
        let title = format!(
            "hierarchical radiosity \"{}\": speed-up by interaction rate (median of {})",
            p.scene, p.reps
        );
        super::chart::speedup_chart(path, &title, &records)?;
    }
    Ok(records)
}
