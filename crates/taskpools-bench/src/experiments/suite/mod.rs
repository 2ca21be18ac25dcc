//! The application suite of the evaluation in Papakonstantinou, PARTEE (2015) (chapter 4,
//! Table 4.1 and Figure 4.1):
//! Black-Scholes, Cholesky, heat diffusion, LU, matrix multiply and mergesort, each in the
//! variants that fit it — data-flow tasks, the same program without dependence analysis and
//! with syncs ("ND"), fork-join, rayon, OpenMP tasks (with `depend` where the program has
//! dependences) under GCC's libgomp and LLVM's libomp, and StarPU (the programs with
//! dependences) — against the sequential program, in one invocation, every result compared
//! bit for bit with the sequential one.
//!
//! Every variant calls the same Rust kernels ([`kernels`]); the peers' drivers (C, built by
//! the build script, each run in a process of its own: [`crate::experiments::drivers`]) call
//! them through `extern "C"` function pointers, so the table compares runtimes, not
//! compilers.

pub mod blackscholes;
mod cholesky_nested;
mod command;
pub mod heat;
pub mod kernels;
pub mod matmul;
pub mod mergesort;
mod sizes;
mod table;
#[cfg(test)]
mod tests;
pub mod tiled;

use std::time::Instant;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use taskpools::dataflow::Config;

use super::drivers::process::{self, Job};
use super::drivers::{Driver, PeerRuntime};
use super::pinning::{our_runtimes, pinner, rayon_pools};
use crate::report::Progress;

pub use command::{exec, run_and_emit, SuiteArgs};
pub use sizes::Sizes;

/// A benchmark of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bench {
    /// Black-Scholes option pricing (PARSEC).
    BlackScholes,
    /// Tiled Cholesky factorization.
    Cholesky,
    /// Heat diffusion stencil.
    Heat,
    /// Tiled LU factorization.
    Lu,
    /// Recursive matrix multiply.
    Matmul,
    /// Recursive mergesort.
    Mergesort,
}

impl Bench {
    /// Every benchmark, in PARTEE's order.
    pub const ALL: [Bench; 6] = [
        Bench::BlackScholes,
        Bench::Cholesky,
        Bench::Heat,
        Bench::Lu,
        Bench::Matmul,
        Bench::Mergesort,
    ];

    /// The name on the command line and in the output.
    pub fn name(self) -> &'static str {
        match self {
            Bench::BlackScholes => "black-scholes",
            Bench::Cholesky => "cholesky",
            Bench::Heat => "heat",
            Bench::Lu => "lu",
            Bench::Matmul => "matmul",
            Bench::Mergesort => "mergesort",
        }
    }

    /// Parses a name.
    pub fn from_name(s: &str) -> Result<Bench> {
        Bench::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| {
                let known: Vec<_> = Bench::ALL.iter().map(|b| b.name()).collect();
                anyhow::anyhow!("unknown benchmark `{s}`; known: {}", known.join(", "))
            })
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Params {
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Repetitions (the geometric mean is reported).
    pub reps: usize,
    /// Benchmarks.
    pub benches: Vec<Bench>,
    /// Problem sizes.
    pub sizes: Sizes,
    /// Look-up tables of the `dataflow` variants (heat's two are fixed: see [`heat`]).
    pub dataflow: Config,
    /// Pin worker `i` of every runtime (and OpenMP thread `i`) to core `i mod cores`.
    pub pin: bool,
    /// Trace one extra, untimed run of each benchmark's `dataflow` variant at the largest
    /// thread count, on a runtime of its own that records: Chrome trace-event JSON here,
    /// Gantt charts and task graphs (DOT, critical path marked) beside it.
    pub trace: Option<std::path::PathBuf>,
    /// The other runtimes to run (of [`PEERS`]).
    pub peers: Vec<&'static str>,
}

/// The other runtimes the suite runs beside ours (their variants' names start with these:
/// `rayon`, `libgomp depend`, `libomp tasks`, `starpu depend`, …). The OpenMP runtimes and
/// StarPU run where their drivers were built (see [`crate::experiments::drivers`]).
pub const PEERS: [&str; 4] = ["rayon", "libgomp", "libomp", "starpu"];

/// One row of Table 4.1.
// Deserialize (strict: a field this build does not write is an error) for `taskpools report`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// `suite`.
    pub experiment: String,
    /// The benchmark.
    pub bench: String,
    /// Its size.
    pub setup: String,
    /// `sequential`, `dataflow`, `dataflow b2048` (heat), `nd`, `forkjoin`, `rayon`, and
    /// per OpenMP runtime `libgomp depend` / `libomp depend` (Cholesky, LU, heat) or
    /// `libgomp tasks` / `libomp tasks` (the others), and `starpu depend` (Cholesky, LU,
    /// heat).
    pub variant: String,
    /// Threads (1 for sequential).
    pub threads: usize,
    /// Repetitions.
    pub reps: usize,
    /// Geometric mean of the repetitions, milliseconds (`None`: not available in this
    /// build).
    pub ms: Option<f64>,
    /// Fastest repetition.
    pub min_ms: Option<f64>,
    /// Slowest repetition.
    pub max_ms: Option<f64>,
    /// The sequential run's time over this one's.
    pub speedup: Option<f64>,
    /// This variant's time over the fastest OpenMP runtime's (libgomp, libomp) at the same
    /// threads (below 1: faster).
    pub vs_openmp: Option<f64>,
    /// This variant's time over the fastest other runtime's (of [`PEERS`]) at the same
    /// threads (below 1: faster).
    #[serde(default)]
    pub vs_best_peer: Option<f64>,
}

/// What a variant runs on.
pub struct Ctx<'a> {
    /// Threads.
    pub threads: usize,
    /// Our runtime with that many workers.
    pub rt: &'a taskpools::Runtime,
    /// A rayon pool with that many threads.
    pub pool: &'a rayon::ThreadPool,
    /// Look-up tables for the data-flow variants.
    pub dataflow: Config,
}

/// A program of the suite.
pub trait Program {
    /// Its size, in words.
    fn setup(&self) -> String;
    /// Its parallel variants.
    fn variants(&self) -> Vec<&'static str>;
    /// Restores the input.
    fn reset(&mut self);
    /// Runs `variant` (or `sequential`) on the current input: seconds, or `None` where this
    /// build lacks the variant.
    fn run(&mut self, variant: &str, ctx: &Ctx<'_>) -> Option<f64>;
    /// Keeps the current result as the reference.
    fn keep_as_expected(&mut self);
    /// Whether the current result equals the reference, bit for bit.
    fn matches_expected(&self) -> bool;
    /// What its peer drivers create: `depend` (tasks with dependences) or `tasks`.
    fn peer_construct(&self) -> &'static str;
    /// Every construct its peer rows use: [`peer_construct`](Program::peer_construct), and
    /// for Cholesky also `depend+priority` (OpenMP's `priority` on the critical path).
    fn peer_constructs(&self) -> Vec<&'static str> {
        vec![self.peer_construct()]
    }
    /// [`run_driver`](Program::run_driver) for one of [`peer_constructs`](Program::peer_constructs).
    fn run_driver_construct(
        &mut self,
        d: &Driver,
        construct: &str,
        threads: usize,
        pin: bool,
    ) -> Result<f64> {
        if construct != self.peer_construct() {
            bail!("no `{construct}` driver for this program");
        }
        self.run_driver(d, threads, pin)
    }
    /// Runs the program on a peer runtime's driver (in a process of its own, see
    /// [`crate::experiments::drivers`]) on the current input: the seconds the driver measured.
    fn run_driver(&mut self, d: &Driver, threads: usize, pin: bool) -> Result<f64>;
    /// A hash of the current result's bits.
    fn result_hash(&self) -> u64;
}

/// Doubles whose first element sits on a 4 KiB boundary (so that look-up-table blocks of
/// any power of two up to 4 KiB fall on tile and band boundaries the same way in every run).
pub struct Aligned {
    buf: Vec<f64>,
    off: usize,
    len: usize,
}

impl Aligned {
    /// `len` zeros.
    pub fn new(len: usize) -> Self {
        let buf = vec![0.0f64; len + 512];
        let off = buf.as_ptr().align_offset(4096);
        assert!(off < 512, "a Vec<f64> is 8-byte aligned");
        Aligned { buf, off, len }
    }

    /// The elements.
    pub fn as_slice(&self) -> &[f64] {
        &self.buf[self.off..self.off + self.len]
    }

    /// The elements, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [f64] {
        &mut self.buf[self.off..self.off + self.len]
    }
}

/// The leading dimension of an `n`-column matrix: `n` plus one cache line of doubles. With
/// `n` a power of two the rows of a tile would otherwise sit a power of two apart and map to
/// the same cache sets, and every variant's time would hang on how its order of tiles meets
/// those conflicts (the usual padding of dense codes).
pub fn padded(n: usize) -> usize {
    n + 8
}

/// A `join`: the recursive programs' ND and rayon variants are one body generic over it.
pub trait Join {
    /// Runs `a` and `b`, possibly in parallel.
    fn join<A: FnOnce() + Send, B: FnOnce() + Send>(a: A, b: B);
}

/// Our fork-join `join`.
pub struct Ours;
impl Join for Ours {
    fn join<A: FnOnce() + Send, B: FnOnce() + Send>(a: A, b: B) {
        taskpools::forkjoin::join(a, b);
    }
}

/// rayon's `join`.
pub struct Rayon;
impl Join for Rayon {
    fn join<A: FnOnce() + Send, B: FnOnce() + Send>(a: A, b: B) {
        rayon::join(a, b);
    }
}

/// Seconds `f` takes.
fn timed(f: impl FnOnce()) -> Option<f64> {
    let t0 = Instant::now();
    f();
    Some(t0.elapsed().as_secs_f64())
}

/// Geometric mean, minimum and maximum of a non-empty sample.
fn geomean(xs: &[f64]) -> (f64, f64, f64) {
    let g = (xs.iter().map(|x| x.max(1e-12).ln()).sum::<f64>() / xs.len() as f64).exp();
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(0.0, f64::max);
    (g, lo, hi)
}

fn program(b: Bench, s: &Sizes) -> Box<dyn Program> {
    match b {
        Bench::BlackScholes => {
            Box::new(blackscholes::BlackScholes::new(s.options, s.options_block))
        }
        Bench::Cholesky => Box::new(tiled::Tiled::new(
            tiled::Factor::Cholesky,
            s.cholesky_n,
            s.cholesky_tile,
        )),
        Bench::Heat => Box::new(heat::Heat::new(
            s.heat_n,
            s.heat_steps,
            s.heat_band,
            s.heat_tile,
        )),
        Bench::Lu => Box::new(tiled::Tiled::new(tiled::Factor::Lu, s.lu_n, s.lu_tile)),
        Bench::Matmul => Box::new(matmul::Matmul::new(s.matmul_n, s.matmul_leaf)),
        Bench::Mergesort => Box::new(mergesort::Mergesort::new(s.sort_n, s.sort_leaf)),
    }
}

/// A variant of a run: one of the program's own (in this process), or a peer runtime's
/// driver (in a process of its own).
#[derive(Clone, Copy)]
enum Variant {
    Own(&'static str),
    /// A peer runtime with one of the program's constructs.
    Peer(PeerRuntime, &'static str),
}

/// The peer runtimes with drivers whose rows this process can run, of those in `peers`: those
/// built, where this process is the workbench (not a unit test).
pub fn peer_runtimes(peers: &[&str]) -> Vec<PeerRuntime> {
    if !process::host_available() {
        return Vec::new();
    }
    PeerRuntime::ALL
        .into_iter()
        .filter(|r| r.built() && peers.contains(&r.name()))
        .collect()
}

/// The input and sizes a child process of `suite` runs (the job's `work`).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Work {
    bench: String,
    sizes: Sizes,
    /// The construct (`depend`, `depend+priority`, `tasks`).
    construct: String,
}

/// The child's side of a suite job: builds the program's input, runs it on `d` once untimed
/// and once timed; the timed run's seconds and its result's hash.
pub fn peer_run(d: &Driver, job: &Job) -> Result<(f64, u64)> {
    let w: Work = serde_json::from_value(job.work.clone())?;
    let b = Bench::from_name(&w.bench)?;
    w.sizes.check()?;
    if !(1..=4096).contains(&job.threads) {
        bail!("threads {}: 1 to 4096", job.threads);
    }
    let mut prog = program(b, &w.sizes);
    prog.reset();
    prog.run_driver_construct(d, &w.construct, job.threads, job.pin)?;
    prog.reset();
    let secs = prog.run_driver_construct(d, &w.construct, job.threads, job.pin)?;
    if secs < 0.0 {
        bail!("the runtime's team did not get {} threads", job.threads);
    }
    Ok((secs, prog.result_hash()))
}

/// Runs the suite.
pub fn run(p: &Params, progress: &Progress) -> Result<Vec<Record>> {
    if p.reps == 0 || p.threads.is_empty() || p.threads.contains(&0) {
        bail!("--reps and every thread count must be at least 1");
    }
    p.sizes.check()?;
    let pin_to = pinner(p.pin);
    let ours = our_runtimes(&p.threads, p.pin)?;
    let rayons = rayon_pools(&p.threads, p.pin)?;
    let peers = peer_runtimes(&p.peers);
    let ctx = |ti: usize| Ctx {
        threads: p.threads[ti],
        rt: &ours[ti],
        pool: &rayons[ti],
        dataflow: p.dataflow,
    };
    let traced = match &p.trace {
        Some(_) => Some(
            taskpools::Runtime::builder()
                .threads(*p.threads.iter().max().expect("thread counts"))
                .pin(p.pin)
                .trace(1 << 22)
                .build()?,
        ),
        None => None,
    };
    let mut traces: Vec<(String, taskpools::runtime::trace::Trace)> = Vec::new();
    let mut out = Vec::new();
    progress.set_length((p.benches.len() * p.reps) as u64);
    for &b in &p.benches {
        let mut prog = program(b, &p.sizes);
        let setup = prog.setup();
        let mut record = |variant: &str, threads: usize, samples: Vec<f64>| {
            let s = geomean(&samples);
            out.push(Record {
                experiment: "suite".into(),
                bench: b.name().into(),
                setup: setup.clone(),
                variant: variant.into(),
                threads,
                reps: p.reps,
                ms: Some(s.0 * 1e3),
                min_ms: Some(s.1 * 1e3),
                max_ms: Some(s.2 * 1e3),
                speedup: None,
                vs_openmp: None,
                vs_best_peer: None,
            });
        };
        let variants: Vec<Variant> = prog
            .variants()
            .into_iter()
            .filter(|v| *v != "rayon" || p.peers.contains(&"rayon"))
            .map(Variant::Own)
            .chain(peers.iter().flat_map(|&r| {
                prog.peer_constructs()
                    .into_iter()
                    .filter(move |c| r.covers(c))
                    .map(move |c| Variant::Peer(r, c))
            }))
            .collect();
        let name = |v: Variant| match v {
            Variant::Own(n) => n.to_string(),
            Variant::Peer(r, c) => format!("{} {c}", r.name()),
        };
        let names: Vec<String> = variants.iter().map(|&v| name(v)).collect();
        // The sequential run first, as the reference every other result must equal.
        progress.set_message(format!("suite {}", b.name()));
        pin_to(0);
        let c0 = ctx(0);
        prog.reset();
        prog.run("sequential", &c0);
        prog.keep_as_expected();
        let expected = prog.result_hash();
        // Then repetitions of everything, the sequential run (on core 0, where every
        // runtime's worker 0 runs) and every variant at every thread count interleaved, in a
        // rotating order, so that drift on a shared host spreads over all of them. A peer
        // runs in a child process, whose runtime threads end with it, so nothing is left
        // spinning on the cores when the next variant starts.
        let mut seq = Vec::new();
        let mut samples: Vec<Vec<Vec<f64>>> =
            vec![vec![Vec::new(); variants.len()]; p.threads.len()];
        // Whether the last run was a peer's: this process then waited, its workers asleep,
        // and the next of its own runs is run once untimed first, so that waking them (and
        // cores that come back slowly after an idle spell, on a shared host) is not charged
        // to whichever variant the rotation put there.
        let mut warm_up = false;
        // The peers that failed.
        let mut failed = vec![false; variants.len()];
        for rep in 0..p.reps {
            pin_to(0);
            if warm_up {
                prog.reset();
                let _ = prog.run("sequential", &c0);
                warm_up = false;
            }
            prog.reset();
            seq.extend(prog.run("sequential", &c0));
            if !prog.matches_expected() {
                bail!("{}: the sequential runs differ from each other", b.name());
            }
            for (ti, row) in samples.iter_mut().enumerate() {
                let c = ctx(ti);
                // Each repetition starts at another variant, so that none always runs first
                // after the switch of thread counts or right after the same neighbour.
                for j in 0..variants.len() {
                    let k = (j + rep) % variants.len();
                    let secs = match variants[k] {
                        Variant::Own(v) => {
                            if warm_up {
                                prog.reset();
                                let _ = prog.run(v, &c);
                                warm_up = false;
                            }
                            prog.reset();
                            let secs = prog.run(v, &c).expect("every own variant runs");
                            if !prog.matches_expected() {
                                bail!(
                                    "{} / {v} x{}: the result differs from the sequential \
                                     run's",
                                    b.name(),
                                    c.threads
                                );
                            }
                            secs
                        }
                        Variant::Peer(..) if failed[k] => continue,
                        Variant::Peer(r, construct) => {
                            warm_up = true;
                            let work = Work {
                                bench: b.name().into(),
                                sizes: p.sizes,
                                construct: construct.into(),
                            };
                            let mut job = Job::new(r, c.threads, p.pin, "suite", work)?;
                            if construct.contains("priority") {
                                // Priorities up to 2 (the default, 0, makes OpenMP runtimes
                                // ignore `priority`; the driver checks).
                                job = job.with_env("OMP_MAX_TASK_PRIORITY", "2");
                            }
                            match process::run_checked(&job, expected, || pin_to(0)) {
                                Ok(secs) => secs,
                                // A runtime that fails to run (or gives a wrong result) is
                                // left out of the rest of the run, with its reason.
                                Err(e) => {
                                    eprintln!("note: {e:#}; {} left out of this run", names[k]);
                                    failed[k] = true;
                                    continue;
                                }
                            }
                        }
                    };
                    row[k].push(secs);
                }
            }
            progress.inc();
        }
        if let Some(rt) = &traced {
            let c = Ctx {
                threads: rt.threads(),
                rt,
                pool: &rayons[p
                    .threads
                    .iter()
                    .position(|&t| t == rt.threads())
                    .expect("the largest thread count")],
                dataflow: p.dataflow,
            };
            progress.set_message(format!("suite {}: tracing the data-flow run", b.name()));
            prog.reset();
            let _ = rt.take_trace()?;
            if prog.run("dataflow", &c).is_some() {
                if !prog.matches_expected() {
                    bail!("{} / dataflow (traced): the result differs", b.name());
                }
                if let Some(t) = rt.take_trace()? {
                    traces.push((format!("{} / dataflow x{}", b.name(), c.threads), t));
                }
            }
        }
        record("sequential", 1, seq);
        for (ti, row) in samples.into_iter().enumerate() {
            for ((v, s), &f) in names.iter().zip(row).zip(&failed) {
                if !f {
                    record(v, p.threads[ti], s);
                }
            }
        }
    }
    // Speedups over the sequential run; ratios to the fastest OpenMP row and to the fastest
    // peer's row at the same threads.
    let seq: Vec<(String, f64)> = out
        .iter()
        .filter(|r| r.variant == "sequential")
        .filter_map(|r| r.ms.map(|m| (r.bench.clone(), m)))
        .collect();
    let fastest = |keep: &dyn Fn(&str) -> bool, bench: &str, threads: usize| {
        out.iter()
            .filter(|r| r.bench == bench && r.threads == threads && keep(&r.variant))
            .filter_map(|r| r.ms)
            .min_by(f64::total_cmp)
    };
    let ratios: Vec<(Option<f64>, Option<f64>)> = out
        .iter()
        .map(|r| {
            (
                fastest(&is_openmp, &r.bench, r.threads),
                fastest(&is_peer, &r.bench, r.threads),
            )
        })
        .collect();
    for (r, (omp, peer)) in out.iter_mut().zip(ratios) {
        let Some(ms) = r.ms else { continue };
        r.speedup = seq.iter().find(|(b, _)| *b == r.bench).map(|(_, s)| s / ms);
        if r.variant != "sequential" {
            r.vs_openmp = omp.map(|o| ms / o);
            r.vs_best_peer = peer.map(|o| ms / o);
        }
    }
    if let Some(path) = &p.trace {
        crate::report::trace::write_files(path, &traces)?;
    }
    Ok(out)
}

/// Whether `variant` is an OpenMP runtime's row.
fn is_openmp(variant: &str) -> bool {
    let first = variant.split_whitespace().next().unwrap_or("");
    [PeerRuntime::Libgomp, PeerRuntime::Libomp]
        .iter()
        .any(|r| r.name() == first)
}

/// Whether `variant` is another runtime's row (its first word one of [`PEERS`]).
fn is_peer(variant: &str) -> bool {
    let first = variant.split_whitespace().next().unwrap_or("");
    PEERS.contains(&first)
}
