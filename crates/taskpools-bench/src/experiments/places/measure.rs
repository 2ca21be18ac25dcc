//! Measuring the configurations of a section: interleaved repetitions, medians, the
//! runtime's place counters and the workers' CPU time, made into records.

use std::time::{Duration, Instant};

use anyhow::Result;
use taskpools::runtime::trace::Trace;
use taskpools::Runtime;

use super::{Locality, Record};
use crate::report::Progress;

/// CPU time so far of this process's threads whose name starts with `prefix` (Linux:
/// `/proc/self/task/*/schedstat`, nanoseconds on the CPU); `None` where that cannot be read.
fn threads_cpu(prefix: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut seen = false;
    for e in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if !comm.trim().starts_with(prefix) {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("schedstat")).ok()?;
        let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
        total += Duration::from_nanos(ns);
        seen = true;
    }
    seen.then_some(total)
}

/// Place counters summed over the workers.
fn place_counts(rt: Option<&Runtime>) -> [u64; 4] {
    rt.map_or([0; 4], |rt| {
        rt.worker_counters().iter().fold([0; 4], |a, c| {
            [
                a[0] + c.place_local,
                a[1] + c.place_remote,
                a[2] + c.place_steals,
                a[3] + c.declined,
            ]
        })
    })
}

fn median_f(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn median_u(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// One configuration of a section: its name, locality, and how to run one repetition.
pub(super) struct Config<'a> {
    pub(super) section: &'static str,
    pub(super) bench: &'static str,
    pub(super) name: String,
    pub(super) loc: Locality,
    pub(super) rt: Option<&'a Runtime>,
    /// The name prefix of the runtime's worker threads, to time their CPU (policies).
    pub(super) cpu_of: Option<String>,
    pub(super) run: Box<dyn FnMut() -> Result<()> + 'a>,
    pub(super) is_ref: bool,
    /// Counts kept by the program itself (cumulative), instead of the runtime's counters.
    pub(super) counts: Option<&'a std::cell::Cell<[u64; 4]>>,
}

impl Config<'_> {
    fn counts(&self) -> [u64; 4] {
        match self.counts {
            Some(c) => c.get(),
            None => place_counts(self.rt),
        }
    }
}

struct Samples {
    ms: Vec<f64>,
    counts: [Vec<u64>; 4],
    cpu: Vec<f64>,
}

/// Runs every configuration `reps` times, interleaved (each repetition starts at a
/// different configuration), and makes the records.
pub(super) fn measure(
    mut cfgs: Vec<Config<'_>>,
    reps: usize,
    threads: usize,
    progress: &Progress,
    traces: Option<&mut Vec<(String, Trace)>>,
) -> Result<Vec<Record>> {
    let n = cfgs.len();
    if let Some(traces) = traces {
        // One traced repetition of each configuration on our runtimes, not timed.
        for c in cfgs.iter_mut() {
            let Some(rt) = c.rt else { continue };
            progress.set_message(format!("tracing {} {} {}", c.bench, c.name, c.loc.name()));
            let _ = rt.take_trace()?;
            (c.run)()?;
            if let Some(t) = rt.take_trace()? {
                traces.push((format!("{} / {} / {}", c.bench, c.name, c.loc.name()), t));
            }
        }
    }
    let mut samples: Vec<Samples> = (0..n)
        .map(|_| Samples {
            ms: Vec::new(),
            counts: Default::default(),
            cpu: Vec::new(),
        })
        .collect();
    for rep in 0..reps {
        for k in 0..n {
            let i = (rep + k) % n;
            let c = &mut cfgs[i];
            progress.set_message(format!("{} {} {}", c.bench, c.name, c.loc.name()));
            let before = c.counts();
            let cpu0 = c.cpu_of.as_deref().and_then(threads_cpu);
            let t = Instant::now();
            (c.run)()?;
            let wall = t.elapsed();
            let cpu = match (cpu0, c.cpu_of.as_deref().and_then(threads_cpu)) {
                (Some(a), Some(b)) => (b - a).as_secs_f64(),
                _ => f64::NAN,
            };
            let after = c.counts();
            // With --trace every runtime records: drop what a timed run recorded, outside
            // the timing, so that the buffers do not fill.
            if let Some(rt) = c.rt {
                let _ = rt.take_trace()?;
            }
            let s = &mut samples[i];
            s.ms.push(wall.as_secs_f64() * 1e3);
            s.cpu.push(cpu / wall.as_secs_f64());
            for j in 0..4 {
                s.counts[j].push(after[j] - before[j]);
            }
            progress.inc();
        }
    }
    let meds: Vec<f64> = samples.iter_mut().map(|s| median_f(&mut s.ms)).collect();
    let reference = cfgs
        .iter()
        .position(|c| c.is_ref)
        .map_or(f64::NAN, |i| meds[i]);
    Ok(cfgs
        .iter()
        .zip(samples.iter_mut())
        .zip(&meds)
        .map(|((c, s), &m)| Record {
            section: c.section.to_string(),
            bench: c.bench.to_string(),
            config: c.name.clone(),
            locality: c.loc.name().to_string(),
            threads,
            reps,
            median_ms: m,
            vs_ref: m / reference,
            local_tasks: median_u(&mut s.counts[0]),
            remote_tasks: median_u(&mut s.counts[1]),
            place_steals: median_u(&mut s.counts[2]),
            declined: median_u(&mut s.counts[3]),
            cpu_per_wall: if c.cpu_of.is_some() {
                median_f(&mut s.cpu)
            } else {
                f64::NAN
            },
        })
        .collect())
}
