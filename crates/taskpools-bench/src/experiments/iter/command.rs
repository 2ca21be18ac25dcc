//! `taskpools iter`: its arguments and their checks (the kernel programs included), and what a
//! run reports (table, JSON, CSV).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context, Result};
use clap::Args;

use super::kernels::{KERNELS, NBODY_STEPS};
use super::{default_bin, rayon_core_of, run, workspace_root, Params, Record, PEERS};
use crate::cli::{emit, names_or_all, PeersArgs, RecordsArgs, ThreadsArgs};
use crate::report::Progress;

/// The arguments of `taskpools iter`.
#[derive(Args)]
#[command(mut_arg("peers", |a| a.help(
    "Peers to run beside the two rayon builds, comma-separated, `all` or `none`: tbb, libomp \
     (each where the build found it, a program of its own)"
)))]
pub struct IterArgs {
    #[command(flatten)]
    pub peers: PeersArgs,
    /// Kernels, comma-separated, or `all`: sum-squares, mandelbrot, nbody, wordfreq, sort-u64,
    /// sort-strings, filter-collect, flat-map.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pub kernels: Vec<String>,
    #[command(flatten)]
    pub threads: ThreadsArgs,
    /// The work per kernel relative to the sizes (10^8 elements to sum, a 2048²
    /// image, 4096 bodies, 100 MB of text, 10^7 u64 and 10^6 strings to sort, 10^7 to
    /// filter and to flatten): more than 0, at most 4. Sizes scale with the work (the image's
    /// side and the bodies with its square root).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Processes per runtime, kernel and thread count, alternated between the runtimes
    /// (medians with ranges over them); 1 to 1000.
    #[arg(long, default_value_t = 5)]
    pub invocations: usize,
    /// Timed runs per process, after the warm-up runs (the process's median is its sample);
    /// 1 to 1000.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Untimed runs per process before the timed ones, 0 to 1000.
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    /// The kernel program built on stock rayon-core (default: where
    /// scripts/build-iter-kernels.sh puts it).
    #[arg(long)]
    pub stock_bin: Option<PathBuf>,
    /// The kernel program built on rayon patched onto taskpools (default: where
    /// scripts/build-iter-kernels.sh puts it).
    #[arg(long)]
    pub patched_bin: Option<PathBuf>,
    /// Build both kernel programs first (runs scripts/build-iter-kernels.sh; needs cargo and
    /// this checkout).
    #[arg(long)]
    pub build: bool,
    #[command(flatten)]
    pub out: RecordsArgs,
}

/// Runs `taskpools iter`.
pub fn exec(a: IterArgs) -> Result<()> {
    let mut p = check(&a)?;
    if a.build {
        build(a.out.quiet())?;
    }
    check_bins(&mut p)?;
    let progress = Progress::new(!a.out.quiet());
    let records = run(&p, &progress)?;
    progress.finish();
    emit(
        &table(&p, &records),
        &records,
        &a.out.outputs(),
        a.out.quiet(),
    )
}

fn check(a: &IterArgs) -> Result<Params> {
    let kernels = names_or_all(&a.kernels, KERNELS, |n| {
        match KERNELS.iter().find(|&&k| k == n) {
            Some(&k) => Ok(k),
            None => bail!(
                "--kernels {n}: no such kernel (all, {})",
                KERNELS.join(", ")
            ),
        }
    })?;
    if kernels.is_empty() {
        bail!("--kernels: give at least one (all, {})", KERNELS.join(", "));
    }
    a.threads.check(1)?;
    if !(a.scale > 0.0 && a.scale <= 4.0) {
        bail!(
            "--scale {}: more than 0 and at most 4 (1 is the issue's sizes; at 4, \
             sum-squares holds 3.2 GB)",
            a.scale
        );
    }
    if !(1..=1000).contains(&a.invocations) {
        bail!("--invocations {}: 1 to 1000", a.invocations);
    }
    if !(1..=1000).contains(&a.runs) {
        bail!("--runs {}: 1 to 1000", a.runs);
    }
    if a.warmup > 1000 {
        bail!("--warmup {}: 0 to 1000", a.warmup);
    }
    a.out.check()?;
    let names: Vec<&'static str> = PEERS.iter().map(|p| p.name).collect();
    let chosen = a.peers.select(&names)?;
    // A peer named on its own must have been built; `all` takes those that were.
    for n in &a.peers.peers {
        if let Some(p) = PEERS.iter().find(|p| p.name == n && !p.built()) {
            bail!(
                "--peers {n}: not installed when this workbench was built ({}, then `cargo \
                 clean -p taskpools-bench` and rebuild)",
                p.install
            );
        }
    }
    Ok(Params {
        kernels,
        threads: a.threads.threads.clone(),
        scale: a.scale,
        invocations: a.invocations,
        runs: a.runs,
        warmup: a.warmup,
        stock_bin: a.stock_bin.clone().unwrap_or_else(|| default_bin("stock")),
        patched_bin: a
            .patched_bin
            .clone()
            .unwrap_or_else(|| default_bin("taskpools")),
        peers: PEERS
            .iter()
            .filter(|p| chosen.contains(&p.name) && p.built())
            .collect(),
    })
}

/// Runs scripts/build-iter-kernels.sh (its output to stderr, so that `--json -` stays JSON).
fn build(quiet: bool) -> Result<()> {
    let script = workspace_root().join("scripts/build-iter-kernels.sh");
    if !script.is_file() {
        bail!(
            "--build: {} not found (it needs this checkout)",
            script.display()
        );
    }
    let mut cmd = Command::new("bash");
    cmd.arg(&script);
    if quiet {
        cmd.stdout(std::process::Stdio::null());
    } else {
        cmd.stdout(std::io::stderr());
    }
    let status = cmd
        .status()
        .with_context(|| format!("--build: running {}", script.display()))?;
    if !status.success() {
        bail!(
            "--build: {} failed ({status}); see its output above",
            script.display()
        );
    }
    Ok(())
}

/// Both kernel programs exist and run on the rayon-core they should (one line and no work
/// otherwise).
fn check_bins(p: &mut Params) -> Result<()> {
    let how = "build both with scripts/build-iter-kernels.sh (or pass --build)";
    for (opt, bin, want) in [
        ("--stock-bin", &p.stock_bin, "rayon"),
        ("--patched-bin", &p.patched_bin, "taskpools"),
    ] {
        if !bin.is_file() {
            bail!("{opt} {}: not found; {how}", bin.display());
        }
        let got = rayon_core_of(bin).with_context(|| format!("{opt}: {how}"))?;
        if got != want {
            bail!(
                "{opt} {}: runs on rayon-core {got:?}, expected {want:?}; {how}",
                bin.display()
            );
        }
    }
    Ok(())
}

fn table(p: &Params, records: &[Record]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "rayon's iterators: the sequential loop, stock rayon, rayon on taskpools (the \
         drop-in rayon-core) and the peers (oneTBB, LLVM's OpenMP runtime), each kernel in its \
         own process, {} alternated invocations of {} timed runs (after {} untimed) each; \
         milliseconds per run, median over the invocations (min-max); scale {}. vs rayon: the \
         medians' ratio; pairs: the ratio within each invocation, median (min-max); vs peer: \
         the medians' ratio to the best peer's at the same thread count; pieces: maps folded \
         per run.\n",
        p.invocations, p.runs, p.warmup, p.scale
    );
    let _ = writeln!(
        s,
        "{:<15} {:>22} {:<22} {:>7} {:>30} {:>9} {:>20} {:>9} {:>9} {:>7}  best peer",
        "kernel",
        "size",
        "runtime",
        "threads",
        "ms per run",
        "vs rayon",
        "pairs",
        "vs peer",
        "vs seq",
        "pieces"
    );
    for r in records {
        let ratio = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.3}"));
        let size = match r.kernel.as_str() {
            "mandelbrot" => format!("{0}x{0} px", r.size),
            "nbody" => format!("{} bodies x {NBODY_STEPS}", r.size),
            "wordfreq" => format!("{} bytes", r.size),
            _ => r.size.to_string(),
        };
        let _ = writeln!(
            s,
            "{:<15} {:>22} {:<22} {:>7} {:>10.3} ({:>8.3}-{:>8.3}) {:>9} {:>20} {:>9} {:>9} {:>7}  {}",
            r.kernel,
            size,
            r.runtime,
            r.threads,
            r.median_s * 1e3,
            r.min_s * 1e3,
            r.max_s * 1e3,
            ratio(r.vs_rayon),
            match (r.pair_ratio, r.pair_ratio_min, r.pair_ratio_max) {
                (Some(m), Some(lo), Some(hi)) => format!("{m:.3} ({lo:.3}-{hi:.3})"),
                _ => "-".into(),
            },
            ratio(r.vs_best_peer),
            ratio(r.vs_sequential),
            r.pieces.map_or("-".to_string(), |p| format!("{p:.0}")),
            r.best_peer.as_deref().unwrap_or("-"),
        );
    }
    for peer in PEERS.iter().filter(|p| !p.built()) {
        let _ = writeln!(
            s,
            "\nno {} rows: not installed when this workbench was built ({}, then `cargo clean -p taskpools-bench` and rebuild)",
            peer.name, peer.install
        );
    }
    s
}
