//! The application suite of the evaluation in Papakonstantinou, PARTEE (2015) (chapter 4,
//! Table 4.1 and Figure 4.1):
//! Black-Scholes, Cholesky, heat diffusion, LU, matrix multiply and mergesort, each in the
//! variants that fit it — data-flow tasks, the same program without dependence analysis and
//! with syncs ("ND"), fork-join, rayon, OpenMP tasks (with `depend` where the program has
//! dependences; libgomp, C built by the build script) — against the sequential program, in
//! one invocation, every result compared bit for bit with the sequential one.
//!
//! Every variant calls the same Rust kernels ([`kernels`]); the OpenMP drivers call them
//! through `extern "C"` function pointers, so the table compares runtimes, not compilers.

pub mod blackscholes;
mod command;
pub mod heat;
pub mod kernels;
pub mod matmul;
pub mod mergesort;
pub mod tiled;

use std::time::Instant;

use anyhow::{bail, Result};
use serde::Serialize;
use taskpools::dataflow::Config;

use super::pinning::{our_runtimes, pinner, rayon_pools, settle_after};
use crate::report::Progress;

pub use command::{exec, run_and_emit, SuiteArgs};

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

/// Problem sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// Black-Scholes: options.
    pub options: usize,
    /// Black-Scholes: options per task.
    pub options_block: usize,
    /// Cholesky: matrix side.
    pub cholesky_n: usize,
    /// Cholesky: tile side.
    pub cholesky_tile: usize,
    /// Heat: grid side.
    pub heat_n: usize,
    /// Heat: steps.
    pub heat_steps: usize,
    /// Heat: rows per task.
    pub heat_band: usize,
    /// LU: matrix side.
    pub lu_n: usize,
    /// LU: tile side.
    pub lu_tile: usize,
    /// Matrix multiply: matrix side.
    pub matmul_n: usize,
    /// Matrix multiply: leaf side.
    pub matmul_leaf: usize,
    /// Mergesort: keys.
    pub sort_n: usize,
    /// Mergesort: keys per leaf.
    pub sort_leaf: usize,
}

impl Sizes {
    /// Sizes for a run of the whole suite in about a minute on 2 cores (3 repetitions at 1
    /// and 2 threads).
    pub const DEFAULT: Sizes = Sizes {
        options: 1 << 22,
        options_block: 128,
        cholesky_n: 1536,
        cholesky_tile: 128,
        heat_n: 1536,
        heat_steps: 60,
        heat_band: 32,
        lu_n: 1280,
        lu_tile: 128,
        matmul_n: 1024,
        matmul_leaf: 64,
        sort_n: 1 << 22,
        sort_leaf: 4096,
    };

    /// Sizes for the tour: about a tenth of the default work.
    pub const TOUR: Sizes = Sizes {
        options: 1 << 20,
        options_block: 128,
        cholesky_n: 768,
        cholesky_tile: 128,
        heat_n: 768,
        heat_steps: 40,
        heat_band: 32,
        lu_n: 768,
        lu_tile: 128,
        matmul_n: 512,
        matmul_leaf: 64,
        sort_n: 1 << 20,
        sort_leaf: 4096,
    };

    /// PARTEE's sizes (Table 4.1): 30 M options in blocks of 128; Cholesky 2048² in 256²
    /// tiles; heat 2048² (100 steps, bands of 64 rows: PARTEE does not give these); LU
    /// 4096² (256² tiles); matrix multiply 2048² (leaves of 64²); mergesort 1,048,576 keys.
    pub const PAPER: Sizes = Sizes {
        options: 30_000_000,
        options_block: 128,
        cholesky_n: 2048,
        cholesky_tile: 256,
        heat_n: 2048,
        heat_steps: 100,
        heat_band: 64,
        lu_n: 4096,
        lu_tile: 256,
        matmul_n: 2048,
        matmul_leaf: 64,
        sort_n: 1 << 20,
        sort_leaf: 4096,
    };

    /// The largest matrix or grid side accepted (its doubles take 512 MiB, and a run keeps
    /// three copies).
    pub const MAX_SIDE: usize = 8192;
    /// The most options accepted (48 bytes each, plus two prices: 2 GiB).
    pub const MAX_OPTIONS: usize = 1 << 25;
    /// The most keys accepted (four buffers of 4 bytes per key: 2 GiB).
    pub const MAX_KEYS: usize = 1 << 27;
    /// The most heat steps accepted.
    pub const MAX_STEPS: usize = 100_000;

    /// Checks that every size can run and fit; the error names the option and its limits.
    pub fn check(&self) -> Result<()> {
        let within = |opt: &str, v: usize, lo: usize, hi: usize| -> Result<()> {
            if !(lo..=hi).contains(&v) {
                bail!("{opt} {v}: must be {lo} to {hi}");
            }
            Ok(())
        };
        within("--options", self.options, 1, Self::MAX_OPTIONS)?;
        within("--options-block", self.options_block, 1, self.options)?;
        for (opt, n, topt, t) in [
            (
                "--cholesky-n",
                self.cholesky_n,
                "--cholesky-tile",
                self.cholesky_tile,
            ),
            ("--lu-n", self.lu_n, "--lu-tile", self.lu_tile),
        ] {
            within(opt, n, 1, Self::MAX_SIDE)?;
            within(topt, t, 1, n)?;
            if n % t != 0 {
                bail!("{topt} {t} must divide {opt} {n}");
            }
        }
        within("--heat-n", self.heat_n, 3, Self::MAX_SIDE)?;
        within("--heat-steps", self.heat_steps, 1, Self::MAX_STEPS)?;
        within("--heat-band", self.heat_band, 1, self.heat_n)?;
        within("--matmul-n", self.matmul_n, 1, Self::MAX_SIDE)?;
        within("--matmul-leaf", self.matmul_leaf, 1, self.matmul_n)?;
        let q = self.matmul_n / self.matmul_leaf;
        if self.matmul_n % self.matmul_leaf != 0 || !q.is_power_of_two() {
            bail!(
                "--matmul-n {} must be --matmul-leaf {} times a power of two (the recursion \
                 halves it down to the leaves)",
                self.matmul_n,
                self.matmul_leaf
            );
        }
        within("--sort-n", self.sort_n, 1, Self::MAX_KEYS)?;
        within("--sort-leaf", self.sort_leaf, 1, self.sort_n)?;
        Ok(())
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
}

/// One row of Table 4.1.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    /// `suite`.
    pub experiment: String,
    /// The benchmark.
    pub bench: String,
    /// Its size.
    pub setup: String,
    /// `sequential`, `dataflow`, `dataflow b2048` (heat), `nd`, `forkjoin`, `rayon`,
    /// `openmp depend`, `openmp tasks`.
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
    /// This variant's time over the OpenMP variant's at the same threads (below 1: faster).
    pub vs_openmp: Option<f64>,
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
    /// Pin the OpenMP threads.
    pub pin: bool,
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

#[cfg(taskpools_openmp)]
mod omp {
    use super::kernels::OptionData;

    type T1 = unsafe extern "C" fn(*mut f64, i64, i64);
    type T2 = unsafe extern "C" fn(*const f64, *mut f64, i64, i64);
    type T3 = unsafe extern "C" fn(*const f64, *const f64, *mut f64, i64, i64);

    extern "C" {
        pub fn taskpools_suite_blackscholes(
            opts: *const OptionData,
            opt_size: i64,
            prices: *mut f64,
            n: i64,
            block: i64,
            k: unsafe extern "C" fn(*const OptionData, *mut f64, i64),
            threads: i32,
            pin: i32,
        ) -> f64;
        pub fn taskpools_suite_cholesky(
            a: *mut f64,
            n: i64,
            ld: i64,
            bs: i64,
            potrf: T1,
            trsm: T2,
            syrk: T2,
            gemm: T3,
            threads: i32,
            pin: i32,
        ) -> f64;
        pub fn taskpools_suite_lu(
            a: *mut f64,
            n: i64,
            ld: i64,
            bs: i64,
            getrf: T1,
            trsm_l: T2,
            trsm_u: T2,
            gemm: T3,
            threads: i32,
            pin: i32,
        ) -> f64;
        pub fn taskpools_suite_heat(
            a: *mut f64,
            b: *mut f64,
            n: i64,
            steps: i64,
            band: i64,
            k: unsafe extern "C" fn(*const f64, i64, i64, *mut f64, i64, i64, i64),
            threads: i32,
            pin: i32,
        ) -> f64;
        pub fn taskpools_suite_matmul(
            a: *const f64,
            b: *const f64,
            c: *mut f64,
            n: i64,
            ld: i64,
            leaf: i64,
            k: T3,
            threads: i32,
            pin: i32,
        ) -> f64;
        pub fn taskpools_suite_mergesort(
            d: *mut u32,
            tmp: *mut u32,
            n: i64,
            leaf: i64,
            sort: unsafe extern "C" fn(*mut u32, i64),
            merge: unsafe extern "C" fn(*mut u32, *mut u32, i64, i64),
            threads: i32,
            pin: i32,
        ) -> f64;
    }
}

/// Whether this build has the OpenMP variants.
pub fn openmp_available() -> bool {
    cfg!(taskpools_openmp)
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
        Bench::Heat => Box::new(heat::Heat::new(s.heat_n, s.heat_steps, s.heat_band)),
        Bench::Lu => Box::new(tiled::Tiled::new(tiled::Factor::Lu, s.lu_n, s.lu_tile)),
        Bench::Matmul => Box::new(matmul::Matmul::new(s.matmul_n, s.matmul_leaf)),
        Bench::Mergesort => Box::new(mergesort::Mergesort::new(s.sort_n, s.sort_leaf)),
    }
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
    let ctx = |ti: usize| Ctx {
        threads: p.threads[ti],
        rt: &ours[ti],
        pool: &rayons[ti],
        dataflow: p.dataflow,
        pin: p.pin,
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
        let mut record = |variant: &str, threads: usize, samples: Option<Vec<f64>>| {
            let s = samples.map(|s| geomean(&s));
            out.push(Record {
                experiment: "suite".into(),
                bench: b.name().into(),
                setup: setup.clone(),
                variant: variant.into(),
                threads,
                reps: p.reps,
                ms: s.map(|x| x.0 * 1e3),
                min_ms: s.map(|x| x.1 * 1e3),
                max_ms: s.map(|x| x.2 * 1e3),
                speedup: None,
                vs_openmp: None,
            });
        };
        let variants = prog.variants();
        // The sequential run first, as the reference every other result must equal.
        progress.set_message(format!("suite {}", b.name()));
        pin_to(0);
        let c0 = ctx(0);
        prog.reset();
        prog.run("sequential", &c0);
        prog.keep_as_expected();
        // Then repetitions of everything, the sequential run (on core 0, where every
        // runtime's worker 0 runs) and every variant at every thread count interleaved, in a
        // rotating order, so that drift on a shared host spreads over all of them.
        let mut seq = Vec::new();
        let mut samples: Vec<Vec<Option<Vec<f64>>>> =
            vec![vec![Some(Vec::new()); variants.len()]; p.threads.len()];
        // Whether the last run was OpenMP's: then the next is run once untimed first (see
        // `settle_after`).
        let mut warm_up = false;
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
                    let v = &variants[k];
                    if warm_up {
                        prog.reset();
                        let _ = prog.run(v, &c);
                    }
                    prog.reset();
                    let r = prog.run(v, &c);
                    warm_up = settle_after(v);
                    match r {
                        Some(secs) => {
                            if !prog.matches_expected() {
                                bail!(
                                    "{} / {v} x{}: the result differs from the sequential \
                                     run's",
                                    b.name(),
                                    c.threads
                                );
                            }
                            if let Some(s) = &mut row[k] {
                                s.push(secs);
                            }
                        }
                        None => row[k] = None,
                    }
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
                pin: p.pin,
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
        record("sequential", 1, Some(seq));
        for (ti, row) in samples.into_iter().enumerate() {
            for (v, s) in variants.iter().zip(row) {
                record(v, p.threads[ti], s);
            }
        }
    }
    // Speedups over the sequential run, ratios to the OpenMP variant at the same threads.
    let seq: Vec<(String, f64)> = out
        .iter()
        .filter(|r| r.variant == "sequential")
        .filter_map(|r| r.ms.map(|m| (r.bench.clone(), m)))
        .collect();
    let omp: Vec<(String, usize, f64)> = out
        .iter()
        .filter(|r| r.variant.starts_with("openmp"))
        .filter_map(|r| r.ms.map(|m| (r.bench.clone(), r.threads, m)))
        .collect();
    for r in &mut out {
        let Some(ms) = r.ms else { continue };
        r.speedup = seq.iter().find(|(b, _)| *b == r.bench).map(|(_, s)| s / ms);
        if r.variant != "sequential" {
            r.vs_openmp = omp
                .iter()
                .find(|(b, t, _)| *b == r.bench && *t == r.threads)
                .map(|(_, _, o)| ms / o);
        }
    }
    if let Some(path) = &p.trace {
        crate::report::trace::write_files(path, &traces)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Small sizes that still have several tiles, bands, levels and blocks.
    const SMALL: Sizes = Sizes {
        options: 1000,
        options_block: 64,
        cholesky_n: 96,
        cholesky_tile: 16,
        heat_n: 64,
        heat_steps: 7,
        heat_band: 5,
        lu_n: 96,
        lu_tile: 16,
        matmul_n: 64,
        matmul_leaf: 8,
        sort_n: 5000,
        sort_leaf: 64,
    };

    #[test]
    fn every_variant_of_every_benchmark_matches_the_sequential_run() {
        let p = Params {
            threads: vec![1, 2],
            reps: 2,
            benches: Bench::ALL.to_vec(),
            sizes: SMALL,
            dataflow: Config::default(),
            pin: false,
            trace: None,
        };
        let r = run(&p, &Progress::new(false)).unwrap();
        for b in Bench::ALL {
            let rows: Vec<_> = r.iter().filter(|r| r.bench == b.name()).collect();
            assert!(rows.iter().any(|r| r.variant == "dataflow"), "{}", b.name());
            assert!(
                rows.iter()
                    .filter(|r| r.variant != "sequential" && !r.variant.starts_with("openmp"))
                    .all(|r| r.ms.is_some()),
                "{}",
                b.name()
            );
            assert_eq!(
                rows.iter()
                    .any(|r| r.variant.starts_with("openmp") && r.ms.is_some()),
                openmp_available(),
                "{}",
                b.name()
            );
        }
    }

    #[test]
    fn the_sequential_programs_compute_what_they_claim() {
        // Mergesort sorts; Cholesky's L Lᵀ and LU's L U give back the matrix.
        let c0 = Ctx {
            threads: 1,
            rt: &taskpools::Runtime::builder().threads(1).build().unwrap(),
            pool: &rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap(),
            dataflow: Config::default(),
            pin: false,
        };
        let mut m = mergesort::Mergesort::new(3000, 50);
        m.reset();
        m.run("sequential", &c0);
        m.keep_as_expected();
        assert!(m.sorted());
        for kind in [tiled::Factor::Cholesky, tiled::Factor::Lu] {
            let mut t = tiled::Tiled::new(kind, 48, 16);
            t.reset();
            t.run("sequential", &c0);
            assert!(t.residual() < 1e-9, "{kind:?}: {}", t.residual());
        }
    }

    #[test]
    fn bad_sizes_are_refused_with_the_option_named() {
        let mut s = SMALL;
        s.cholesky_tile = 17;
        assert!(s
            .check()
            .unwrap_err()
            .to_string()
            .contains("--cholesky-tile"));
        let mut s = SMALL;
        s.matmul_leaf = 24;
        assert!(s.check().unwrap_err().to_string().contains("--matmul-n"));
        let mut s = SMALL;
        s.heat_band = 0;
        assert!(s.check().unwrap_err().to_string().contains("--heat-band"));
        for s in [Sizes::DEFAULT, Sizes::TOUR, Sizes::PAPER] {
            s.check().unwrap();
        }
    }
}
