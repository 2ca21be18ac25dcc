//! `taskpools iter`: rayon's parallel iterators on stock rayon-core and on the drop-in
//! rayon-core (`crates/rayon-core`, rayon on taskpools), against the sequential loops.
//!
//! The two rayon builds cannot share a process (Cargo's patch swaps rayon-core for a whole
//! build), so the kernels are a program of their own (`iter-kernels/`, outside the
//! workspace), built twice by `scripts/build-iter-kernels.sh`: against stock rayon-core and
//! with the patch. This command runs the two binaries, and the stock one's sequential loops,
//! in alternated processes: in each invocation every kernel runs sequentially once and on
//! each rayon build at each thread count, the two builds' order swapped from one invocation
//! to the next. A process builds its input, runs the kernel `warmup` times untimed and
//! `runs` times timed; its median is one sample of its row. Rows report the median, minimum
//! and maximum over the invocations, and rayon on taskpools over stock rayon at the same
//! thread count.
//!
//! Every result is checked twice: inside the process (sorted output sorted and a permutation,
//! counts that add up, a sum against its closed form) and here, where every runtime's
//! checksum must equal the sequential loop's. A wrong result stops the run with an error.

mod command;

#[path = "../../../iter-kernels/src/kernels.rs"]
#[allow(dead_code)] // the kernel program runs the kernels; the workbench takes names and sizes
pub mod kernels;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

pub use command::{exec, IterArgs};

use super::summarize;
use crate::report::Progress;

/// The kernel program's file name, in both target directories.
const BIN: &str = "taskpools-iter-kernels";

/// The workspace's root, where `scripts/` and `target/` are.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/taskpools-bench has a grandparent")
        .to_path_buf()
}

/// Where `scripts/build-iter-kernels.sh` puts the kernel program built on `build`
/// (`stock` or `taskpools`).
pub fn default_bin(build: &str) -> PathBuf {
    workspace_root()
        .join("target/iter-kernels")
        .join(build)
        .join("release")
        .join(BIN)
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Params {
    pub kernels: Vec<&'static str>,
    pub threads: Vec<usize>,
    /// The work per kernel relative to the sizes, in (0, 4].
    pub scale: f64,
    /// Processes per runtime, kernel and thread count, alternated.
    pub invocations: usize,
    /// Timed runs per process.
    pub runs: usize,
    /// Untimed runs per process before the timed ones.
    pub warmup: usize,
    /// The kernel program on stock rayon-core.
    pub stock_bin: PathBuf,
    /// The kernel program on the drop-in rayon-core.
    pub patched_bin: PathBuf,
}

/// The three ways a kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    Sequential,
    Rayon,
    RayonOnTaskpools,
}

impl Runtime {
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Sequential => "sequential",
            Runtime::Rayon => "rayon",
            Runtime::RayonOnTaskpools => "rayon-on-taskpools",
        }
    }
}

/// One row: a kernel on one runtime at one thread count.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    /// `iter`.
    pub experiment: String,
    pub kernel: String,
    /// The kernel's size (elements, pixels per side, bodies or bytes; see the table).
    pub size: usize,
    /// `sequential`, `rayon` or `rayon-on-taskpools`.
    pub runtime: String,
    /// Worker threads of the rayon pool (1 for the sequential loop).
    pub threads: usize,
    /// Processes (alternated between the runtimes).
    pub invocations: usize,
    /// Timed runs per process; the process's median is its sample.
    pub runs: usize,
    /// Untimed runs per process before those.
    pub warmup: usize,
    /// Seconds per run: the median over the invocations, then the minimum and maximum.
    pub median_s: f64,
    pub min_s: f64,
    pub max_s: f64,
    /// On `rayon-on-taskpools`: its median over stock rayon's at the same thread count.
    pub vs_rayon: Option<f64>,
    /// On `rayon-on-taskpools`: its time over stock rayon's in the same invocation (the two
    /// processes ran one after the other), median over the invocations, then min and max.
    pub pair_ratio: Option<f64>,
    pub pair_ratio_min: Option<f64>,
    pub pair_ratio_max: Option<f64>,
    /// On the rayon rows: the median over the sequential loop's.
    pub vs_sequential: Option<f64>,
    /// On the rayon rows of wordfreq: the maps folded per run, one per piece rayon's splitter
    /// cut the text into (median over the invocations).
    pub pieces: Option<f64>,
    /// On `rayon-on-taskpools`: the runtime's deque under the drop-in rayon-core
    /// (`TASKPOOLS_RAYON_POOL`, else its default, `chase-lev`).
    pub taskpools_pool: Option<String>,
}

/// What the kernel program prints for one process.
#[derive(Deserialize, Debug)]
struct Sample {
    kernel: String,
    rayon_core: String,
    threads: usize,
    size: usize,
    times_s: Vec<f64>,
    checksum: String,
    #[serde(default)]
    pieces: Option<f64>,
}

/// What a binary's `--info` says its rayon-core is (`rayon` or `taskpools`).
pub fn rayon_core_of(bin: &Path) -> Result<String> {
    let out = Command::new(bin)
        .arg("--info")
        .output()
        .with_context(|| format!("running {} --info", bin.display()))?;
    if !out.status.success() {
        bail!(
            "{} --info failed: {}",
            bin.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    #[derive(Deserialize)]
    struct Info {
        rayon_core: String,
    }
    let info: Info = serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "{} --info printed {:?}, not the kernel program's JSON",
            bin.display(),
            String::from_utf8_lossy(&out.stdout).trim()
        )
    })?;
    Ok(info.rayon_core)
}

fn sample(p: &Params, kernel: &str, rt: Runtime, threads: usize) -> Result<Sample> {
    let bin = match rt {
        Runtime::RayonOnTaskpools => &p.patched_bin,
        _ => &p.stock_bin,
    };
    let runtime = if rt == Runtime::Sequential {
        "sequential"
    } else {
        "rayon"
    };
    let out = Command::new(bin)
        .arg(kernel)
        .args(["--runtime", runtime])
        .args(["--threads", &threads.to_string()])
        .args(["--scale", &p.scale.to_string()])
        .args(["--runs", &p.runs.to_string()])
        .args(["--warmup", &p.warmup.to_string()])
        .output()
        .with_context(|| format!("running {}", bin.display()))?;
    let what = format!("{kernel} on {} at {threads} threads", rt.name());
    if !out.status.success() {
        bail!(
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
                .trim()
                .trim_start_matches("error: ")
        );
    }
    let s: Sample = serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "{what}: the kernel program printed {:?}",
            String::from_utf8_lossy(&out.stdout).trim()
        )
    })?;
    let want_core = if rt == Runtime::RayonOnTaskpools {
        "taskpools"
    } else {
        "rayon"
    };
    if s.kernel != kernel
        || s.rayon_core != want_core
        || s.threads != threads
        || s.times_s.len() != p.runs
    {
        bail!(
            "{what}: {} answered for kernel {} on rayon-core {} at {} threads with {} runs",
            bin.display(),
            s.kernel,
            s.rayon_core,
            s.threads,
            s.times_s.len()
        );
    }
    Ok(s)
}

/// Runs the experiment.
pub fn run(p: &Params, progress: &Progress) -> Result<Vec<Record>> {
    let pars: Vec<Runtime> = vec![Runtime::Rayon, Runtime::RayonOnTaskpools];
    // Per kernel: the sequential samples, then per thread count per rayon build.
    let mut seq = vec![Vec::new(); p.kernels.len()];
    let mut par = vec![vec![[Vec::new(), Vec::new()]; p.threads.len()]; p.kernels.len()];
    let mut pieces = vec![vec![[Vec::new(), Vec::new()]; p.threads.len()]; p.kernels.len()];
    let mut sizes = vec![0; p.kernels.len()];
    let mut checksums: Vec<Option<(String, String)>> = vec![None; p.kernels.len()];
    progress.set_length((p.invocations * p.kernels.len() * (1 + 2 * p.threads.len())) as u64);
    for inv in 0..p.invocations {
        for (ki, &k) in p.kernels.iter().enumerate() {
            // The sequential loop first on even invocations, last on odd ones; the two rayon
            // builds swap places every invocation.
            let mut order = Vec::new();
            for ti in 0..p.threads.len() {
                for r in 0..2 {
                    order.push((Some(ti), if inv % 2 == 0 { r } else { 1 - r }));
                }
            }
            if inv % 2 == 0 {
                order.insert(0, (None, 0));
            } else {
                order.push((None, 0));
            }
            for (ti, r) in order {
                let (rt, threads) = match ti {
                    None => (Runtime::Sequential, 1),
                    Some(ti) => (pars[r], p.threads[ti]),
                };
                progress.set_message(format!(
                    "iter {k} on {} at {threads} threads, invocation {}",
                    rt.name(),
                    inv + 1
                ));
                let s = sample(p, k, rt, threads)?;
                match &checksums[ki] {
                    None => {
                        checksums[ki] = Some((s.checksum.clone(), rt.name().into()));
                        sizes[ki] = s.size;
                    }
                    Some((c, by)) if *c != s.checksum || sizes[ki] != s.size => bail!(
                        "{k}: wrong result on {} at {threads} threads: checksum {} (size {}), \
                         {by} gave {c} (size {})",
                        rt.name(),
                        s.checksum,
                        s.size,
                        sizes[ki]
                    ),
                    Some(_) => {}
                }
                let median = summarize(&s.times_s).0;
                match ti {
                    None => seq[ki].push(median),
                    Some(ti) => {
                        par[ki][ti][r].push(median);
                        pieces[ki][ti][r].extend(s.pieces);
                    }
                }
                progress.inc();
            }
        }
    }
    let mut out = Vec::new();
    for (ki, &k) in p.kernels.iter().enumerate() {
        let row = |rt: Runtime, threads: usize, xs: &[f64]| {
            let (median_s, min_s, max_s) = summarize(xs);
            Record {
                experiment: "iter".into(),
                kernel: k.into(),
                size: sizes[ki],
                runtime: rt.name().into(),
                threads,
                invocations: p.invocations,
                runs: p.runs,
                warmup: p.warmup,
                median_s,
                min_s,
                max_s,
                vs_rayon: None,
                pair_ratio: None,
                pair_ratio_min: None,
                pair_ratio_max: None,
                vs_sequential: None,
                pieces: None,
                taskpools_pool: None,
            }
        };
        let seq_row = row(Runtime::Sequential, 1, &seq[ki]);
        let seq_median = seq_row.median_s;
        out.push(seq_row);
        for (ti, &t) in p.threads.iter().enumerate() {
            let [stock_t, ours_t] = &par[ki][ti];
            let stock = row(Runtime::Rayon, t, stock_t);
            let mut ours = row(Runtime::RayonOnTaskpools, t, ours_t);
            ours.taskpools_pool = Some(rayon_pool_name());
            ours.vs_rayon = Some(ours.median_s / stock.median_s);
            let pairs: Vec<f64> = ours_t.iter().zip(stock_t).map(|(o, s)| o / s).collect();
            let (m, lo, hi) = summarize(&pairs);
            (ours.pair_ratio, ours.pair_ratio_min, ours.pair_ratio_max) =
                (Some(m), Some(lo), Some(hi));
            for (r, mut rec) in [stock, ours].into_iter().enumerate() {
                rec.vs_sequential = Some(rec.median_s / seq_median);
                let pc = &pieces[ki][ti][r];
                rec.pieces = (!pc.is_empty()).then(|| summarize(pc).0);
                out.push(rec);
            }
        }
    }
    Ok(out)
}

/// The deque the drop-in rayon-core runs on in the kernel processes, which inherit this
/// process's environment: `TASKPOOLS_RAYON_POOL` (by its canonical name), else `chase-lev`.
fn rayon_pool_name() -> String {
    match std::env::var("TASKPOOLS_RAYON_POOL") {
        Ok(v) => taskpools::forkjoin::Pool::from_name(v.trim())
            .map(|p| p.name().to_string())
            .unwrap_or(v),
        Err(_) => "chase-lev".to_string(),
    }
}
