//! `taskpools idle`: what a runtime costs between bursts of work. A program submits a small
//! fork-join burst (a join tree of about 40 µs of work) every `period` and sleeps in between
//! (rayon issue #642). Per burst we measure the CPU time its runtime's worker threads used,
//! from the submission to the next one (so the spinning after the burst counts), and the wall
//! time from submitting the burst to its result. Our runtime and rayon live in one process,
//! pinned alike, and take turns, sample by sample; each sample runs the bursts of one runtime
//! at one period for `duration`.
//!
//! Worker CPU time is read from each worker's thread CPU clock (`pthread_getcpuclockid`) by the
//! measuring thread, so reading it does not wake a worker.

mod command;

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde::Serialize;

pub use command::{exec, IdleArgs};

use super::pinning::pinner;
use super::summarize;
use crate::report::Progress;

/// What to run.
#[derive(Clone, Debug)]
pub struct Params {
    /// Worker threads of each runtime.
    pub threads: usize,
    /// Periods between bursts, in milliseconds.
    pub periods_ms: Vec<f64>,
    /// Seconds of bursts per sample.
    pub duration_s: f64,
    /// Samples per runtime and period (alternated between the runtimes).
    pub samples: usize,
    /// Our runtime's spin budget before a worker sleeps (`None`: the library's default).
    pub spin: Option<Duration>,
    /// Pin worker `i` of both runtimes to core `i mod cores`.
    pub pin: bool,
}

/// One row: a runtime at one period.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    /// `idle`.
    pub experiment: String,
    /// `taskpools` (with its spin budget) or `rayon`.
    pub runtime: String,
    /// Worker threads.
    pub threads: usize,
    /// Milliseconds between bursts.
    pub period_ms: f64,
    /// Samples (each `duration` long).
    pub samples: usize,
    /// Bursts per sample (the median sample's).
    pub bursts: usize,
    /// The burst's work run sequentially, µs (median of the samples' medians).
    pub work_us: f64,
    /// Worker CPU time per burst, µs: median over the samples, then min and max.
    pub cpu_us: f64,
    pub cpu_min_us: f64,
    pub cpu_max_us: f64,
    /// Wall time from submitting a burst to its result, µs: median over the samples of each
    /// sample's median, then min and max.
    pub wall_us: f64,
    pub wall_min_us: f64,
    pub wall_max_us: f64,
    /// This row's CPU per burst over rayon's at the same period.
    pub cpu_vs_rayon: Option<f64>,
    /// This row's wall time per burst over rayon's at the same period.
    pub wall_vs_rayon: Option<f64>,
}

/// A leaf of the burst: `iters` steps of a xorshift.
fn leaf(seed: u64, iters: u32) -> u64 {
    let mut x = seed | 1;
    for _ in 0..iters {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    std::hint::black_box(x)
}

/// The burst, written once per runtime: a binary join tree of 2^depth leaves.
macro_rules! burst_fn {
    ($name:ident, $join:path) => {
        fn $name(depth: u32, seed: u64, iters: u32) -> u64 {
            if depth == 0 {
                return leaf(seed, iters);
            }
            let (a, b) = $join(
                || $name(depth - 1, seed.wrapping_mul(3), iters),
                || $name(depth - 1, seed.wrapping_mul(5), iters),
            );
            a ^ b
        }
    };
}

fn seq_join(a: impl FnOnce() -> u64, b: impl FnOnce() -> u64) -> (u64, u64) {
    (a(), b())
}

burst_fn!(burst_seq, seq_join);
burst_fn!(burst_ours, taskpools::forkjoin::join);
burst_fn!(burst_rayon, rayon::join);

const DEPTH: u32 = 4;

/// Leaf steps such that one burst takes about 40 µs sequentially on this machine.
fn calibrate() -> u32 {
    let mut iters = 256;
    loop {
        let t0 = Instant::now();
        for _ in 0..20 {
            burst_seq(DEPTH, 7, iters);
        }
        let us = t0.elapsed().as_secs_f64() * 1e6 / 20.0;
        if us >= 40.0 || iters >= 1 << 24 {
            return ((iters as f64) * 40.0 / us.max(1e-3)).round().max(1.0) as u32;
        }
        iters *= 2;
    }
}

/// Thread CPU clocks of a runtime's workers, read from another thread.
struct Clocks(Vec<libc::clockid_t>);

impl Clocks {
    fn of(threads: Vec<libc::pthread_t>) -> Result<Clocks> {
        let mut v = Vec::new();
        for t in threads {
            let mut clk: libc::clockid_t = 0;
            // SAFETY: `t` is a live thread of this process (a worker of a runtime that is not
            // dropped before these clocks), and `clk` is a valid place for the result.
            let rc = unsafe { libc::pthread_getcpuclockid(t, &mut clk) };
            if rc != 0 {
                bail!("pthread_getcpuclockid failed ({rc}): cannot read a worker's CPU time here");
            }
            v.push(clk);
        }
        Ok(Clocks(v))
    }

    /// Sum of the workers' CPU time, in seconds.
    fn total(&self) -> f64 {
        self.0
            .iter()
            .map(|&clk| {
                let mut ts = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                // SAFETY: `ts` is a valid timespec to write; `clk` names a live thread's clock.
                unsafe { libc::clock_gettime(clk, &mut ts) };
                ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
            })
            .sum()
    }
}

fn self_thread() -> libc::pthread_t {
    // SAFETY: always safe to call.
    unsafe { libc::pthread_self() }
}

/// One sample: bursts at `period` for `duration`; returns (bursts, CPU µs per burst, median
/// wall µs per burst).
fn sample(
    clocks: &Clocks,
    period: Duration,
    duration: Duration,
    submit: &dyn Fn() -> u64,
) -> (usize, f64, f64) {
    // Let the workers fall asleep after whatever came before.
    std::thread::sleep(Duration::from_millis(30));
    let cpu0 = clocks.total();
    let start = Instant::now();
    let mut walls = Vec::new();
    let mut next = start;
    while start.elapsed() < duration {
        let t0 = Instant::now();
        std::hint::black_box(submit());
        walls.push(t0.elapsed().as_secs_f64() * 1e6);
        next += period;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
    }
    // The spinning after the last burst belongs to it: wait out a period (at least 30 ms).
    std::thread::sleep(period.max(Duration::from_millis(30)));
    let cpu = (clocks.total() - cpu0) * 1e6;
    let n = walls.len();
    (n, cpu / n as f64, summarize(&walls).0)
}

/// Runs the experiment.
pub fn run(p: &Params, progress: &Progress) -> Result<Vec<Record>> {
    if !cfg!(target_os = "linux") {
        bail!("taskpools idle reads the workers' CPU clocks, which needs Linux");
    }
    let iters = calibrate();
    let t0 = Instant::now();
    for _ in 0..50 {
        burst_seq(DEPTH, 7, iters);
    }
    let work_us = t0.elapsed().as_secs_f64() * 1e6 / 50.0;

    let pin_to = pinner(p.pin);
    let mut b = taskpools::Runtime::builder().threads(p.threads).pin(p.pin);
    if let Some(spin) = p.spin {
        b = b.spin(spin);
    }
    let ours = b.build()?;
    let rayon = rayon::ThreadPoolBuilder::new()
        .num_threads(p.threads)
        .start_handler(pin_to)
        .build()?;
    let our_clocks = Clocks::of(ours.broadcast(|_| self_thread()))?;
    let rayon_clocks = Clocks::of(rayon.broadcast(|_| self_thread()))?;
    let submit_ours = || ours.install(|| burst_ours(DEPTH, 7, iters));
    let submit_rayon = || rayon.install(|| burst_rayon(DEPTH, 7, iters));
    let our_name = format!("taskpools (spin {} µs)", ours.spin_budget().as_micros());

    let duration = Duration::from_secs_f64(p.duration_s);
    progress.set_length((p.samples * p.periods_ms.len() * 2) as u64);
    // [period][runtime] -> samples of (bursts, cpu, wall)
    let mut got = vec![[Vec::new(), Vec::new()]; p.periods_ms.len()];
    for s in 0..p.samples {
        for (pi, &ms) in p.periods_ms.iter().enumerate() {
            let period = Duration::from_secs_f64(ms / 1e3);
            // Alternate which runtime goes first.
            let order = if s % 2 == 0 { [0, 1] } else { [1, 0] };
            for r in order {
                progress.set_message(format!(
                    "idle {} every {ms} ms, sample {}",
                    if r == 0 { "taskpools" } else { "rayon" },
                    s + 1
                ));
                let x = if r == 0 {
                    sample(&our_clocks, period, duration, &submit_ours)
                } else {
                    sample(&rayon_clocks, period, duration, &submit_rayon)
                };
                got[pi][r].push(x);
                progress.inc();
            }
        }
    }
    let mut out = Vec::new();
    for (pi, &ms) in p.periods_ms.iter().enumerate() {
        let stats = |r: usize| {
            let v = &got[pi][r];
            let cpu: Vec<f64> = v.iter().map(|x| x.1).collect();
            let wall: Vec<f64> = v.iter().map(|x| x.2).collect();
            let bursts: Vec<f64> = v.iter().map(|x| x.0 as f64).collect();
            (summarize(&bursts).0, summarize(&cpu), summarize(&wall))
        };
        let (rb, rc, rw) = stats(1);
        for r in 0..2 {
            let (b, c, w) = stats(r);
            out.push(Record {
                experiment: "idle".into(),
                runtime: if r == 0 {
                    our_name.clone()
                } else {
                    "rayon".into()
                },
                threads: p.threads,
                period_ms: ms,
                samples: p.samples,
                bursts: b as usize,
                work_us,
                cpu_us: c.0,
                cpu_min_us: c.1,
                cpu_max_us: c.2,
                wall_us: w.0,
                wall_min_us: w.1,
                wall_max_us: w.2,
                cpu_vs_rayon: (r == 0).then(|| c.0 / rc.0),
                wall_vs_rayon: (r == 0).then(|| w.0 / rw.0),
            });
        }
        let _ = rb;
    }
    Ok(out)
}
