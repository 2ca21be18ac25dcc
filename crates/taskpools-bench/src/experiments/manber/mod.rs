//! The measurements of Kotz & Ellis, "Evaluation of Concurrent Pools" (1989, §3.3–§4), which
//! evaluates Manber's pool, on our concurrent pool: the random-operations model over job
//! mixes, producer/consumer with contiguous or balanced producers, a sparse initial fill, and
//! per strategy: mean add and remove time, share of removes that stole, segments examined per
//! steal, elements per steal, and segment sizes over time.
//!
//! Kotz & Ellis let participants run until the *combined* number of operations reached the
//! target. With 16 participants on 2 cores that lets the first threads the OS schedules do all
//! the work before the others start, so here every participant performs its share (ops / P),
//! and all start together at a barrier. Averages are taken per participant, then over
//! participants, then over trials, as Kotz & Ellis did. Operation times include two clock reads
//! (about 40 ns here), the same for every strategy; with more participants than CPUs they also
//! include time spent waiting for a CPU (such runs are labelled oversubscribed).
//!
//! Segment sizes over time (Figures 6–9) come from a schedule trace of the sampled trials,
//! the same events a traced working phase records: each participant's operations form its
//! share; an add is a `Put`, a remove that found an element is a task span (from the own
//! segment, or after a steal naming the victim and the elements moved) stamped when the
//! remove ends, a search is an idle span, its fruitless segment examinations are a `Misses`
//! event. The sizes are replayed from those events and checked against the pool's
//! segments at the end of the trial. `--trace FILE` writes those traces.

mod command;
mod table;
mod trial;

use std::path::PathBuf;

use anyhow::{bail, Result};
use serde::Serialize;
use taskpools::pool::manber::{ConcurrentConfig, Search};
use taskpools::runtime::trace::{EventKind, Source, Trace};

use crate::report::Progress;
use trial::{trial, Role};

pub use command::{exec, run_and_emit, ManberArgs};

/// What to run.
#[derive(Clone, Debug)]
pub struct Params {
    /// Participant counts (Kotz & Ellis: 16).
    pub participants: Vec<usize>,
    /// Total operations per trial (Kotz & Ellis: 5000).
    pub ops: usize,
    /// Initial elements per participant (Kotz & Ellis: 320 / 16 = 20).
    pub fill_per_participant: usize,
    /// Strategies.
    pub searches: Vec<Search>,
    /// Job mixes (percent adds) of the random model.
    pub mixes: Vec<u32>,
    /// Producer counts of the producer/consumer model are 0..=P in steps of this.
    pub producer_step: usize,
    /// Waiting mode.
    pub waiting: bool,
    /// Remote-access delays to run (ns).
    pub delays_ns: Vec<u64>,
    /// Trials per point (Kotz & Ellis: 10).
    pub trials: usize,
    /// Write the schedule traces of the sampled trials (Figures 6–9) here.
    pub trace: Option<PathBuf>,
}

/// Events recorded in a sampled trial, over all participants (160 MiB); past its share a
/// participant stops recording (the trace says how many it dropped), the series end where
/// the first one stopped, and the replay is not checked against the pool.
const EVENTS_PER_TRIAL: usize = 1 << 22;

/// A participant's share of [`EVENTS_PER_TRIAL`].
fn events_per_participant(p: usize) -> usize {
    (EVENTS_PER_TRIAL / p.max(1)).max(64)
}

/// One measured point.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    /// `manber`.
    pub experiment: String,
    /// Participants (threads).
    pub participants: usize,
    /// More participants than CPUs (times include waiting for a CPU).
    pub oversubscribed: bool,
    /// Search strategy.
    pub search: String,
    /// Waiting mode.
    pub waiting: bool,
    /// Remote-access delay (ns).
    pub delay_ns: u64,
    /// `random`, `producers-contiguous` or `producers-balanced`.
    pub workload: String,
    /// Percent adds (random) or number of producers.
    pub x: u32,
    /// Measured share of operations that were adds.
    pub job_mix: f64,
    /// Trials.
    pub trials: usize,
    /// Mean add time (ns).
    pub add_ns: f64,
    /// Mean remove time (ns), searches included.
    pub remove_ns: f64,
    /// Mean time of any operation (ns).
    pub op_ns: f64,
    /// Share of removes that stole.
    pub steal_fraction: f64,
    /// Segments examined per successful steal.
    pub segments_per_steal: f64,
    /// Elements moved per steal.
    pub elements_per_steal: f64,
    /// Segments examined by searches that found nothing, per such search.
    pub fruitless_segments_per_search: f64,
    /// Tree nodes visited per search (tree search).
    pub tree_nodes_per_search: f64,
    /// Removes that returned "exhausted", per trial.
    pub exhausted_per_trial: f64,
}

/// Segment sizes over time for one trial (Figures 6–9).
#[derive(Clone, Debug, Serialize)]
pub struct Samples {
    /// Strategy.
    pub search: String,
    /// `producers-contiguous` or `producers-balanced`.
    pub workload: String,
    /// The producers' indices.
    pub producers: Vec<usize>,
    /// Per segment: (µs since start, size) at the start and after each change (replayed
    /// from the trial's trace).
    pub segments: Vec<Vec<(f64, usize)>>,
}

/// Per segment, its size after each change, replayed from a trace in which every change is
/// an event: a `Put` adds to the worker's own segment, a task from the pool takes from it,
/// a task after a steal of `tasks` elements takes them from the victim and keeps all but the
/// one it runs (times in µs; every segment starts empty at the first event).
///
/// Operations of different participants that overlap in time are replayed in the order of
/// their stamps (a put when it begins, a remove when it ends), so a segment can briefly read
/// below zero; such points are shown as 0. The sizes after the last event are exact.
/// Returns `None` when a steal names a participant the trace does not have.
pub fn segment_series(t: &Trace) -> Option<Vec<Vec<(f64, usize)>>> {
    let n = t.workers;
    let t0 = t.events.first().map_or(0, |e| e.t_ns);
    let mut size = vec![0i64; n];
    let mut out: Vec<Vec<(f64, usize)>> = vec![vec![(0.0, 0)]; n];
    for e in &t.events {
        let w = e.worker as usize;
        let us = (e.t_ns - t0) as f64 / 1e3;
        let mut changed = |seg: usize, d: i64, size: &mut Vec<i64>| -> Option<()> {
            if d == 0 {
                return Some(());
            }
            size[seg] += d;
            out[seg].push((us, size[seg].max(0) as usize));
            Some(())
        };
        match e.kind {
            EventKind::Put => changed(w, 1, &mut size)?,
            EventKind::Start(Source::Pool) => changed(w, -1, &mut size)?,
            EventKind::Start(Source::PoolSteal { victim, tasks }) => {
                let v = victim as usize;
                if v >= n {
                    return None;
                }
                changed(v, -i64::from(tasks), &mut size)?;
                changed(w, i64::from(tasks) - 1, &mut size)?;
            }
            _ => {}
        }
    }
    Some(out)
}

/// Which participants produce (only add) in the producer/consumer model.
pub fn producers(p: usize, count: usize, balanced: bool) -> Vec<usize> {
    if balanced {
        (0..count).map(|i| i * p / count.max(1)).collect()
    } else {
        (0..count).collect()
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        f64::NAN
    }
}

/// Runs every point.
pub fn run(p: &Params, progress: &Progress) -> Result<(Vec<Record>, Vec<Samples>)> {
    if p.trials == 0 || p.ops == 0 {
        bail!("--trials and --ops must be at least 1");
    }
    if p.participants.is_empty() || p.participants.contains(&0) {
        bail!(taskpools::Error::ZeroThreads);
    }
    // The CPUs this process may use, as listed at start-up: after an earlier experiment of
    // the tour pinned this thread to core 0 for its sequential run, the thread's own mask
    // (what `available_parallelism` reads) says 1, and 2 participants on 2 CPUs were labelled
    // oversubscribed.
    let cpus = super::pinning::cores().map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        <[_]>::len,
    );
    // (workload, x, roles) per participant count
    let points = |n: usize| {
        let mut v: Vec<(&'static str, u32, Vec<Role>)> = Vec::new();
        for &m in &p.mixes {
            v.push(("random", m, vec![Role::Mix(m as f64 / 100.0); n]));
        }
        for prods in (0..=n).step_by(p.producer_step.max(1)) {
            for (name, balanced) in [
                ("producers-contiguous", false),
                ("producers-balanced", true),
            ] {
                let who = producers(n, prods, balanced);
                if balanced && who == producers(n, prods, false) {
                    continue; // the same arrangement as contiguous
                }
                let roles = (0..n)
                    .map(|i| {
                        if who.contains(&i) {
                            Role::Producer
                        } else {
                            Role::Consumer
                        }
                    })
                    .collect();
                v.push((name, prods as u32, roles));
            }
        }
        v
    };
    let total_points: usize = p
        .participants
        .iter()
        .map(|&n| points(n).len())
        .sum::<usize>()
        * p.searches.len()
        * p.delays_ns.len();
    progress.set_length((total_points * p.trials) as u64);
    let mut out = Vec::new();
    for &n in &p.participants {
        for &delay in &p.delays_ns {
            for &search in &p.searches {
                for (workload, x, roles) in points(n) {
                    progress.set_message(format!("P={n} {search} {workload} {x} delay={delay}ns"));
                    let cfg = ConcurrentConfig {
                        participants: n,
                        search,
                        waiting: p.waiting,
                        remote_delay_ns: delay,
                    };
                    let fill = p.fill_per_participant;
                    let mut acc = Record {
                        experiment: "manber".into(),
                        participants: n,
                        oversubscribed: n > cpus,
                        search: search.name().into(),
                        waiting: p.waiting,
                        delay_ns: delay,
                        workload: workload.into(),
                        x,
                        job_mix: 0.0,
                        trials: p.trials,
                        add_ns: 0.0,
                        remove_ns: 0.0,
                        op_ns: 0.0,
                        steal_fraction: 0.0,
                        segments_per_steal: 0.0,
                        elements_per_steal: 0.0,
                        fruitless_segments_per_search: 0.0,
                        tree_nodes_per_search: 0.0,
                        exhausted_per_trial: 0.0,
                    };
                    let (mut steals, mut examined, mut stolen, mut removes) =
                        (0u64, 0u64, 0u64, 0u64);
                    let (mut fruitless, mut fruitless_searches, mut nodes, mut searches) =
                        (0u64, 0u64, 0u64, 0u64);
                    let (mut add_n, mut rem_n) = (0usize, 0usize);
                    for _ in 0..p.trials {
                        let (t, _) = trial(n, cfg, &roles, p.ops, fill, false)?;
                        acc.job_mix += t.adds as f64 / t.ops.max(1) as f64;
                        if t.with_adds > 0 {
                            acc.add_ns += t.mean_add / t.with_adds as f64;
                            add_n += 1;
                        }
                        if t.with_removes > 0 {
                            acc.remove_ns += t.mean_remove / t.with_removes as f64;
                            rem_n += 1;
                        }
                        acc.op_ns += t.mean_op / n as f64;
                        acc.exhausted_per_trial += t.exhausted as f64;
                        steals += t.steals;
                        examined += t.examined;
                        stolen += t.stolen;
                        removes += t.removes;
                        fruitless += t.fruitless;
                        fruitless_searches += t.searches - t.steals;
                        nodes += t.tree_nodes;
                        searches += t.searches;
                        progress.inc();
                    }
                    let tr = p.trials as f64;
                    acc.job_mix /= tr;
                    acc.add_ns = ratio(acc.add_ns, add_n as f64);
                    acc.remove_ns = ratio(acc.remove_ns, rem_n as f64);
                    acc.op_ns /= tr;
                    acc.exhausted_per_trial /= tr;
                    acc.steal_fraction = ratio(steals as f64, removes as f64);
                    acc.segments_per_steal = ratio(examined as f64, steals as f64);
                    acc.elements_per_steal = ratio(stolen as f64, steals as f64);
                    acc.fruitless_segments_per_search =
                        ratio(fruitless as f64, fruitless_searches as f64);
                    acc.tree_nodes_per_search = ratio(nodes as f64, searches as f64);
                    out.push(acc);
                }
            }
        }
    }
    // Figures 6–9: one sampled trial per strategy and arrangement, with Kotz & Ellis's 5
    // producers of 16 (scaled to the largest participant count).
    let mut samples = Vec::new();
    let mut traces = Vec::new();
    let n = *p.participants.iter().max().expect("non-empty");
    let prods = (5 * n).div_ceil(16).clamp(1, n);
    for search in [Search::Linear, Search::Tree] {
        for (name, balanced) in [
            ("producers-contiguous", false),
            ("producers-balanced", true),
        ] {
            let who = producers(n, prods, balanced);
            let roles: Vec<Role> = (0..n)
                .map(|i| {
                    if who.contains(&i) {
                        Role::Producer
                    } else {
                        Role::Consumer
                    }
                })
                .collect();
            let cfg = ConcurrentConfig {
                participants: n,
                search,
                waiting: p.waiting,
                remote_delay_ns: p.delays_ns[0],
            };
            let (_, t) = trial(n, cfg, &roles, p.ops, p.fill_per_participant, true)?;
            let (t, cut) = t.expect("sampled");
            // With dropped events, the series go up to where the first participant that
            // stopped recording stopped.
            let mut upto = t.clone();
            if let Some(cut) = cut {
                upto.events.retain(|e| e.t_ns <= cut);
            }
            let segments = segment_series(&upto).unwrap_or_default();
            samples.push(Samples {
                search: search.name().into(),
                workload: name.into(),
                producers: who.clone(),
                segments,
            });
            if p.trace.is_none() {
                continue;
            }
            traces.push((
                format!(
                    "manber {} search, {name}, {n} participants, producers {who:?}",
                    search.name()
                ),
                t,
            ));
        }
    }
    if let Some(path) = &p.trace {
        crate::report::trace::write_files(path, &traces)?;
    }
    Ok((out, samples))
}
