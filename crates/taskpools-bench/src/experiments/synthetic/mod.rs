//! The synthetic algorithm A(i) (Korch & Rauber, "A Comparison of Task Pools for Dynamic Load
//! Balancing of Irregular Algorithms" (2002), §7.2) on a set of pools, memory managers and
//! thread counts, against the sequential algorithm measured in the same invocation.
//!
//! Repetitions are interleaved (rep 1 of every configuration, then rep 2, …) so that drift in
//! the machine's load spreads over all configurations instead of hitting one.

mod chart;
mod command;
mod table;

use std::time::Instant;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use taskpools::synthetic::{self, task_count};
use taskpools::{Builder, MemKind, PoolKind, Search, WakePolicy};

use super::{median_u64, summarize};
use crate::report::Progress;

pub use command::{exec, run_and_emit, SyntheticArgs};

/// What to run.
#[derive(Clone, Debug)]
pub struct Params {
    /// Argument of the algorithm.
    pub k: u32,
    /// Work factor.
    pub f: u32,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Pools.
    pub pools: Vec<PoolKind>,
    /// Memory managers (list-based pools run with each; the others only with the first).
    pub mems: Vec<MemKind>,
    /// Wake-up policies (every configuration runs with each).
    pub wakes: Vec<WakePolicy>,
    /// Repetitions per configuration.
    pub reps: usize,
    /// Pin workers to CPUs.
    pub pin: bool,
    /// Search strategy of the steal-half pool.
    pub search: Search,
    /// Record a schedule trace of one extra, untimed repetition of every configuration (on
    /// runtimes of their own that record; the timed runs do not): Chrome trace-event JSON to
    /// this file, a Gantt chart per configuration into `<file>.gantt/`.
    pub trace: Option<std::path::PathBuf>,
}

/// Trace buffer per worker, in events (a task is a start, an end and its puts).
const TRACE_EVENTS: usize = 1 << 21;

/// One configuration's result (the JSON record of the issue, plus derived columns).
// Deserialize (strict: a field this build does not write is an error) for `taskpools report`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// `synthetic`.
    pub experiment: String,
    /// Pool name (`sequential` for the baseline).
    pub pool: String,
    /// Pool alias (`seq` for the baseline).
    pub alias: String,
    /// Memory manager name.
    pub mem: String,
    /// Worker threads.
    pub threads: usize,
    /// Parameter k.
    pub k: u32,
    /// Parameter f.
    pub f: u32,
    /// Repetitions.
    pub reps: usize,
    /// Median wall time of the working phase.
    pub median_s: f64,
    /// Fastest repetition.
    pub min_s: f64,
    /// Slowest repetition.
    pub max_s: f64,
    /// Median time of the sequential algorithm divided by this median time.
    pub speedup_vs_seq: f64,
    /// Tasks executed per run (checked to equal P(k)).
    pub tasks: u64,
    /// Median over repetitions of successful steals.
    pub steals: u64,
    /// Median over repetitions of steal attempts (foreign queues examined).
    pub steal_attempts: u64,
    /// Tasks per second at the median time.
    pub tasks_per_s: f64,
    /// Nanoseconds of wall time per task, times threads (CPU-ns per task).
    pub ns_per_task: f64,
    /// Wake-up policy.
    pub wake: String,
    /// Search strategy (steal-half pool only, `-` otherwise).
    pub search: String,
}

/// One configuration: pool, memory manager, wake-up policy, threads.
type Config = (PoolKind, MemKind, WakePolicy, usize);

/// The configurations to run, in order.
fn configs(p: &Params) -> Vec<Config> {
    let mut v = Vec::new();
    for &pool in &p.pools {
        let mems: &[MemKind] = if pool.uses_mem() {
            &p.mems
        } else {
            &p.mems[..1]
        };
        for &mem in mems {
            for &wake in &p.wakes {
                for &t in &p.threads {
                    v.push((pool, mem, wake, t));
                }
            }
        }
    }
    v
}

/// Runs the experiment; the first record is the sequential baseline.
pub fn run(p: &Params, progress: &Progress) -> Result<Vec<Record>> {
    if p.reps == 0 {
        bail!("--reps must be at least 1");
    }
    if p.threads.is_empty() || p.threads.contains(&0) {
        bail!(taskpools::Error::ZeroThreads);
    }
    if p.mems.is_empty() || p.pools.is_empty() || p.wakes.is_empty() {
        bail!("no pool, memory manager or wake-up policy selected");
    }
    let expected = task_count(p.k);
    let cfgs = configs(p);
    progress.set_length((p.reps * (cfgs.len() + 1)) as u64);
    let mut seq_times = Vec::new();
    let mut times = vec![Vec::new(); cfgs.len()];
    let mut steals = vec![Vec::new(); cfgs.len()];
    let mut attempts = vec![Vec::new(); cfgs.len()];
    // One runtime per thread count, started before any measurement and reused by every
    // repetition: a phase measures the pool, not thread start-up.
    // (With `--trace`, a second set records, for one untimed run per configuration.)
    let per_count =
        |trace: Option<usize>| -> Result<std::collections::BTreeMap<usize, taskpools::Runtime>> {
            let mut counts: Vec<usize> = cfgs.iter().map(|c| c.3).collect();
            counts.sort_unstable();
            counts.dedup();
            let rts = super::pinning::runtimes_with(&counts, p.pin, None, trace)?;
            Ok(counts.into_iter().zip(rts).collect())
        };
    let runtimes = per_count(None)?;
    // Warm up caches, frequency and the allocator once, unmeasured.
    synthetic::sequential(p.k.min(18), p.f);
    for _ in 0..p.reps {
        progress.set_message(format!("k={} f={} sequential", p.k, p.f));
        let t0 = Instant::now();
        let n = synthetic::sequential(p.k, p.f);
        seq_times.push(t0.elapsed().as_secs_f64());
        if n != expected {
            bail!(taskpools::Error::TaskCount {
                expected,
                actual: n
            });
        }
        progress.inc();
        for (i, &(pool, mem, wake, t)) in cfgs.iter().enumerate() {
            progress.set_message(format!(
                "k={} f={} {} {} {} x{}",
                p.k,
                p.f,
                pool.alias(),
                mem.alias(),
                wake.alias(),
                t
            ));
            let b = Builder::new()
                .runtime(&runtimes[&t])
                .threads(t)
                .pool(pool)
                .mem(mem)
                .wake(wake)
                .search(p.search)
                .pin(p.pin);
            // `synthetic::run` fails with TaskCount unless exactly P(k) tasks ran.
            let r = synthetic::run(&b, p.k, p.f)?;
            times[i].push(r.elapsed.as_secs_f64());
            let tot = r.total();
            steals[i].push(tot.steals);
            attempts[i].push(tot.steal_attempts);
            progress.inc();
        }
    }
    if let Some(path) = &p.trace {
        let mut traces = Vec::new();
        let traced = per_count(Some(TRACE_EVENTS))?;
        for &(pool, mem, wake, t) in &cfgs {
            let rt = &traced[&t];
            progress.set_message(format!("tracing {} x{t}", pool.alias()));
            let _ = rt.take_trace()?; // start empty
            let b = Builder::new()
                .runtime(rt)
                .threads(t)
                .pool(pool)
                .mem(mem)
                .wake(wake)
                .search(p.search)
                .pin(p.pin);
            synthetic::run(&b, p.k, p.f)?;
            if let Some(tr) = rt.take_trace()? {
                let name = format!(
                    "A({}) f={} {} ({}) {} {} x{t}",
                    p.k,
                    p.f,
                    pool.name(),
                    pool.alias(),
                    mem.alias(),
                    wake.name()
                );
                traces.push((name, tr));
            }
        }
        crate::report::trace::write_files(path, &traces)?;
    }
    let (seq_med, seq_min, seq_max) = summarize(&seq_times);
    let mut out = vec![Record {
        experiment: "synthetic".into(),
        pool: "sequential".into(),
        alias: "seq".into(),
        mem: "-".into(),
        threads: 1,
        k: p.k,
        f: p.f,
        reps: p.reps,
        median_s: seq_med,
        min_s: seq_min,
        max_s: seq_max,
        speedup_vs_seq: 1.0,
        tasks: expected,
        steals: 0,
        steal_attempts: 0,
        tasks_per_s: expected as f64 / seq_med,
        ns_per_task: seq_med * 1e9 / expected as f64,
        wake: "-".into(),
        search: "-".into(),
    }];
    for (i, &(pool, mem, wake, t)) in cfgs.iter().enumerate() {
        let (med, min, max) = summarize(&times[i]);
        out.push(Record {
            experiment: "synthetic".into(),
            pool: pool.name().into(),
            alias: pool.alias().into(),
            mem: if pool.uses_mem() {
                mem.alias().into()
            } else {
                "-".into()
            },
            threads: t,
            k: p.k,
            f: p.f,
            reps: p.reps,
            median_s: med,
            min_s: min,
            max_s: max,
            speedup_vs_seq: seq_med / med,
            tasks: expected,
            steals: median_u64(&steals[i]),
            steal_attempts: median_u64(&attempts[i]),
            tasks_per_s: expected as f64 / med,
            ns_per_task: med * 1e9 * t as f64 / expected as f64,
            wake: wake.name().into(),
            search: if pool == PoolKind::StealHalf {
                p.search.name().into()
            } else {
                "-".into()
            },
        });
    }
    Ok(out)
}
