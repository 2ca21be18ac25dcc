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
//! Beside them, the peers: the same kernels written for oneTBB and for LLVM's OpenMP runtime
//! (libomp), programs of their own (`peers/iter_tbb.cpp`, `peers/iter_omp.cpp`) that the build
//! script compiles where the runtime is installed ([`PEERS`]). They speak the kernel program's
//! protocol and take their turns in the same rotation, at every thread count; their rows name
//! the runtime and its construct (`tbb parallel_reduce`, `libomp for dynamic`, …), and rayon
//! on taskpools is compared with the faster of them at the same thread count.
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
    /// The peers to run beside rayon (those the build script built).
    pub peers: Vec<&'static Peer>,
}

/// A peer runtime's program of the iterator kernels, built by the build script where the
/// runtime is installed.
#[derive(Debug)]
pub struct Peer {
    /// `tbb` or `libomp`: the first word of its rows' runtime.
    pub name: &'static str,
    /// The program's path; empty where it was not built.
    pub exe: &'static str,
    /// What to install to build it.
    pub install: &'static str,
    /// The first word of the identity the program reports must start with this.
    identity: &'static str,
}

impl Peer {
    /// Whether the build script built its program.
    pub fn built(&self) -> bool {
        !self.exe.is_empty()
    }
}

/// The peers, in their rows' order.
pub static PEERS: [Peer; 2] = [
    Peer {
        name: "tbb",
        exe: env!("TASKPOOLS_ITER_PEER_TBB"),
        install: "apt-get install libtbb-dev",
        identity: "oneTBB",
    },
    Peer {
        name: "libomp",
        exe: env!("TASKPOOLS_ITER_PEER_LIBOMP"),
        install: "apt-get install libomp-dev clang",
        identity: "libomp",
    },
];

/// The ways a kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    Sequential,
    Rayon,
    RayonOnTaskpools,
    Peer(&'static Peer),
}

impl PartialEq for Peer {
    fn eq(&self, other: &Peer) -> bool {
        self.name == other.name
    }
}
impl Eq for Peer {}

impl Runtime {
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Sequential => "sequential",
            Runtime::Rayon => "rayon",
            Runtime::RayonOnTaskpools => "rayon-on-taskpools",
            Runtime::Peer(p) => p.name,
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
    /// `sequential`, `rayon`, `rayon-on-taskpools`, or a peer and its construct (`tbb
    /// parallel_for`, `libomp for dynamic`, …).
    pub runtime: String,
    /// Worker threads of the rayon pool or the peer (1 for the sequential loop).
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
    /// On `rayon-on-taskpools`, where a peer ran: the peer with the smaller median at the same
    /// thread count (its row's runtime), and our median over its.
    pub best_peer: Option<String>,
    pub vs_best_peer: Option<f64>,
    /// On the rayon and peer rows: the median over the sequential loop's.
    pub vs_sequential: Option<f64>,
    /// On the rayon rows of wordfreq: the maps folded per run, one per piece rayon's splitter
    /// cut the text into (median over the invocations).
    pub pieces: Option<f64>,
    /// On `rayon-on-taskpools`: the runtime's deque under the drop-in rayon-core
    /// (`TASKPOOLS_RAYON_POOL`, else its default, `chase-lev`).
    pub taskpools_pool: Option<String>,
}

/// What the kernel program (or a peer's) prints for one process.
#[derive(Deserialize, Debug)]
struct Sample {
    kernel: String,
    /// The kernel program's rayon-core (`rayon` or `taskpools`).
    #[serde(default)]
    rayon_core: Option<String>,
    /// A peer's: the runtime that ran (`oneTBB 2021.8 /…/libtbb.so.12`, `libomp.so.5 …`).
    #[serde(default)]
    identity: Option<String>,
    /// A peer's: its name and construct (`tbb parallel_for`).
    #[serde(default)]
    runtime: Option<String>,
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
    let (bin, runtime) = match rt {
        Runtime::Sequential => (p.stock_bin.as_path(), Some("sequential")),
        Runtime::Rayon => (p.stock_bin.as_path(), Some("rayon")),
        Runtime::RayonOnTaskpools => (p.patched_bin.as_path(), Some("rayon")),
        Runtime::Peer(peer) => (Path::new(peer.exe), None),
    };
    let mut cmd = Command::new(bin);
    cmd.arg(kernel);
    if let Some(runtime) = runtime {
        cmd.args(["--runtime", runtime]);
    }
    // Unpinned, as the rayon pools are: OpenMP places its threads by its defaults.
    let out = cmd
        .env_remove("OMP_PLACES")
        .env_remove("OMP_PROC_BIND")
        .args(["--threads", &threads.to_string()])
        .args(["--scale", &p.scale.to_string()])
        .args(["--runs", &p.runs.to_string()])
        .args(["--warmup", &p.warmup.to_string()])
        .output()
        .with_context(|| format!("running {}", bin.display()))?;
    let what = format!(
        "{kernel} on {} at {}",
        rt.name(),
        crate::report::plural(threads, "thread", "threads")
    );
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
    let ran_on = match rt {
        Runtime::Peer(peer) => {
            let identity = s.identity.as_deref().unwrap_or("");
            let construct = s.runtime.as_deref().unwrap_or("");
            if !identity.starts_with(peer.identity)
                || construct.split_whitespace().next() != Some(peer.name)
            {
                bail!(
                    "{what}: {} ran on `{identity}` as `{construct}`, not {} as `{} …`",
                    bin.display(),
                    peer.identity,
                    peer.name
                );
            }
            identity
        }
        _ => {
            let want = if rt == Runtime::RayonOnTaskpools {
                "taskpools"
            } else {
                "rayon"
            };
            let core = s.rayon_core.as_deref().unwrap_or("none");
            if core != want {
                bail!(
                    "{what}: {} answered on rayon-core {core}, expected {want}",
                    bin.display()
                );
            }
            core
        }
    };
    if s.kernel != kernel || s.threads != threads || s.times_s.len() != p.runs {
        bail!(
            "{what}: {} answered for kernel {} on {ran_on} at {} with {}",
            bin.display(),
            s.kernel,
            crate::report::plural(s.threads, "thread", "threads"),
            crate::report::plural(s.times_s.len(), "run", "runs")
        );
    }
    Ok(s)
}

/// Runs the experiment.
pub fn run(p: &Params, progress: &Progress) -> Result<Vec<Record>> {
    // The parallel runtimes, in their rows' order: the two rayon builds, then the peers.
    let mut pars: Vec<Runtime> = vec![Runtime::Rayon, Runtime::RayonOnTaskpools];
    pars.extend(p.peers.iter().map(|&peer| Runtime::Peer(peer)));
    let n = pars.len();
    // Per kernel: the sequential samples, then per thread count per parallel runtime.
    let mut seq = vec![Vec::new(); p.kernels.len()];
    let mut par = vec![vec![vec![Vec::new(); n]; p.threads.len()]; p.kernels.len()];
    let mut pieces = vec![vec![vec![Vec::new(); n]; p.threads.len()]; p.kernels.len()];
    // A peer's rows name its construct, which the program reports.
    let mut constructs = vec![vec![String::new(); n]; p.kernels.len()];
    let mut sizes = vec![0; p.kernels.len()];
    let mut checksums: Vec<Option<(String, String)>> = vec![None; p.kernels.len()];
    progress.set_length((p.invocations * p.kernels.len() * (1 + n * p.threads.len())) as u64);
    for inv in 0..p.invocations {
        for (ki, &k) in p.kernels.iter().enumerate() {
            // The sequential loop first on even invocations, last on odd ones; the parallel
            // runtimes take turns, their order rotated by one every invocation (the two rayon
            // builds swap places when they run alone).
            let mut order = Vec::new();
            for ti in 0..p.threads.len() {
                for j in 0..n {
                    order.push((Some(ti), (j + inv) % n));
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
                    "iter {k} on {} at {}, invocation {}",
                    rt.name(),
                    crate::report::plural(threads, "thread", "threads"),
                    inv + 1
                ));
                let s = sample(p, k, rt, threads)?;
                // A peer names its construct; the kernel programs' `runtime` is `rayon` on both
                // builds, so theirs is the row's.
                let by = match (rt, &s.runtime) {
                    (Runtime::Peer(_), Some(construct)) => construct.clone(),
                    _ => rt.name().to_string(),
                };
                match &checksums[ki] {
                    None => {
                        checksums[ki] = Some((s.checksum.clone(), by.clone()));
                        sizes[ki] = s.size;
                    }
                    Some((c, first)) if *c != s.checksum || sizes[ki] != s.size => bail!(
                        "{k}: wrong result on {by} at {}: checksum {} (size {}), \
                         {first} gave {c} (size {})",
                        crate::report::plural(threads, "thread", "threads"),
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
                        if matches!(rt, Runtime::Peer(_)) {
                            constructs[ki][r] = by;
                        }
                    }
                }
                progress.inc();
            }
        }
    }
    let mut out = Vec::new();
    for (ki, &k) in p.kernels.iter().enumerate() {
        let row = |runtime: String, threads: usize, xs: &[f64]| {
            let (median_s, min_s, max_s) = summarize(xs);
            Record {
                experiment: "iter".into(),
                kernel: k.into(),
                size: sizes[ki],
                runtime,
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
                best_peer: None,
                vs_best_peer: None,
                vs_sequential: None,
                pieces: None,
                taskpools_pool: None,
            }
        };
        let seq_row = row(Runtime::Sequential.name().into(), 1, &seq[ki]);
        let seq_median = seq_row.median_s;
        out.push(seq_row);
        for (ti, &t) in p.threads.iter().enumerate() {
            let samples = &par[ki][ti];
            let mut rows: Vec<Record> = pars
                .iter()
                .enumerate()
                .map(|(r, rt)| {
                    let name = match rt {
                        Runtime::Peer(_) => constructs[ki][r].clone(),
                        _ => rt.name().into(),
                    };
                    row(name, t, &samples[r])
                })
                .collect();
            let stock = rows[0].median_s;
            let best = rows[2..]
                .iter()
                .min_by(|a, b| a.median_s.total_cmp(&b.median_s))
                .map(|b| (b.runtime.clone(), b.median_s));
            let ours = &mut rows[1];
            ours.taskpools_pool = Some(rayon_pool_name());
            ours.vs_rayon = Some(ours.median_s / stock);
            let pairs: Vec<f64> = samples[1]
                .iter()
                .zip(&samples[0])
                .map(|(o, s)| o / s)
                .collect();
            let (m, lo, hi) = summarize(&pairs);
            (ours.pair_ratio, ours.pair_ratio_min, ours.pair_ratio_max) =
                (Some(m), Some(lo), Some(hi));
            if let Some((name, median)) = best {
                ours.vs_best_peer = Some(ours.median_s / median);
                ours.best_peer = Some(name);
            }
            for (r, mut rec) in rows.into_iter().enumerate() {
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
