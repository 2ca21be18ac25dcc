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

use std::path::PathBuf;
use std::sync::{Barrier, Mutex};
use std::time::Instant;

use anyhow::{bail, Result};
use serde::Serialize;
use taskpools::pool::manber::{ConcurrentConfig, ConcurrentPool, Removed, Search};
use taskpools::runtime::trace::{Event, EventKind, Source, Trace};

use crate::report::Progress;

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

#[derive(Clone, Copy)]
enum Role {
    /// Add with this probability.
    Mix(f64),
    Producer,
    Consumer,
}

#[derive(Default)]
struct Tally {
    adds: u64,
    add_ns: f64,
    removes: u64,
    remove_ns: f64,
    ops: u64,
    op_ns: f64,
    // Means per participant, summed (divided by participants later).
    mean_add: f64,
    mean_remove: f64,
    mean_op: f64,
    with_adds: usize,
    with_removes: usize,
    searches: u64,
    steals: u64,
    examined: u64,
    fruitless: u64,
    stolen: u64,
    tree_nodes: u64,
    exhausted: u64,
}

/// A participant's recorder in a sampled trial.
struct Recorder {
    on: bool,
    worker: u32,
    start: Instant,
    events: Vec<Event>,
    cap: usize,
    dropped: u64,
}

impl Recorder {
    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    fn push(&mut self, t_ns: u64, kind: EventKind) {
        if !self.on {
            return;
        }
        // Room is kept for the share's end; once full, it stays stopped.
        if self.dropped > 0 || self.events.len() + 3 > self.cap {
            self.dropped += 1;
            return;
        }
        self.events.push(Event {
            t_ns,
            worker: self.worker,
            kind,
        });
    }

    /// A span (a remove that found an element, or found the pool exhausted), whole or not
    /// at all.
    fn span(&mut self, t0: u64, t1: u64, open: EventKind, close: EventKind) {
        if self.on && (self.dropped > 0 || self.events.len() + 4 > self.cap) {
            self.dropped += 2;
            return;
        }
        self.push(t0, open);
        self.push(t1, close);
    }
}

/// A sampled trial's trace, and where its events stop being complete (the time of the last
/// event of the first participant that stopped recording), if one did.
type Sampled = (Trace, Option<u64>);

/// One trial: returns the tally and, if `sample`, its schedule trace.
fn trial(
    p: usize,
    cfg: ConcurrentConfig,
    roles: &[Role],
    ops: usize,
    fill: usize,
    sample: bool,
) -> Result<(Tally, Option<Sampled>)> {
    let pool = ConcurrentPool::new(cfg)?;
    for id in 0..p {
        pool.fill(id, (0..fill as u64).map(|k| (id as u64) << 40 | k));
    }
    let barrier = Barrier::new(p);
    let tally = Mutex::new(Tally::default());
    let counts = Mutex::new((0u64, 0u64)); // (added, removed) elements
    let traces = Mutex::new(Vec::new());
    // Event times are taken relative to this; threads start at the barrier just after.
    let start = Instant::now();
    std::thread::scope(|s| {
        for (id, &role) in roles.iter().enumerate() {
            let (pool, barrier, tally, counts, traces) =
                (&pool, &barrier, &tally, &counts, &traces);
            let quota = ops / p + usize::from(id < ops % p);
            s.spawn(move || {
                let mut me = pool.join(id);
                let mut rec = Recorder {
                    on: sample,
                    worker: id as u32,
                    start,
                    events: Vec::new(),
                    cap: events_per_participant(p),
                    dropped: 0,
                };
                // The participant's share, with its initial elements as puts.
                rec.push(0, EventKind::Start(Source::Mail));
                for _ in 0..fill {
                    rec.push(0, EventKind::Put);
                }
                barrier.wait();
                let mut rng = fastrand::Rng::with_seed(0x5eed + id as u64);
                let (mut adds, mut add_ns, mut removes, mut remove_ns) = (0u64, 0f64, 0u64, 0f64);
                let (mut added, mut removed) = (0u64, 0u64);
                let mut k = 1u64 << 39;
                for _ in 0..quota {
                    let add = match role {
                        Role::Mix(m) => rng.f64() < m,
                        Role::Producer => true,
                        Role::Consumer => false,
                    };
                    let t0 = if sample { rec.now() } else { 0 };
                    let before = (sample && !add).then(|| me.stats.clone());
                    let t = Instant::now();
                    if add {
                        pool.add(&mut me, (id as u64) << 40 | k);
                        k += 1;
                        add_ns += t.elapsed().as_nanos() as f64;
                        adds += 1;
                        added += 1;
                        rec.push(t0, EventKind::Put);
                    } else {
                        let r = pool.remove(&mut me);
                        remove_ns += t.elapsed().as_nanos() as f64;
                        removes += 1;
                        if let Some(before) = before {
                            let t1 = rec.now();
                            let st = &me.stats;
                            let stole = st.steals > before.steals;
                            let missed = (st.segments_examined_fruitless
                                - before.segments_examined_fruitless)
                                + (st.segments_examined - before.segments_examined)
                                    .saturating_sub(u64::from(stole));
                            if missed > 0 {
                                let attempts = u32::try_from(missed).unwrap_or(u32::MAX);
                                rec.push(t0, EventKind::Misses { attempts });
                            }
                            let src = if stole {
                                Source::PoolSteal {
                                    victim: me.last_victim() as u32,
                                    tasks: (st.elements_stolen - before.elements_stolen) as u32,
                                }
                            } else if st.handoffs_received > before.handoffs_received {
                                // A hand-off (waiting mode): the element went from the
                                // giver's add (a put) to this remove without entering a
                                // segment; recorded as a one-element move from the giver.
                                Source::PoolSteal {
                                    victim: me.last_giver() as u32,
                                    tasks: 1,
                                }
                            } else {
                                Source::Pool
                            };
                            // A search is idle time; the element is taken when the remove
                            // ends (stamped then, so that a replay never takes an element
                            // before it was put).
                            let searched = st.searches > before.searches;
                            if searched {
                                rec.span(t0, t1, EventKind::Idle, EventKind::Resume);
                            }
                            if let Removed::Element(_) = r {
                                rec.span(t1, t1, EventKind::Start(src), EventKind::End);
                            }
                        }
                        if let Removed::Element(_) = r {
                            removed += 1;
                        }
                    }
                }
                let st = me.stats.clone();
                pool.leave(me);
                if sample {
                    let end = rec.now();
                    rec.on = true;
                    rec.events.push(Event {
                        t_ns: end,
                        worker: id as u32,
                        kind: EventKind::End,
                    });
                    traces.lock().unwrap().push((rec.events, rec.dropped));
                }
                let mut c = counts.lock().unwrap();
                c.0 += added;
                c.1 += removed;
                let mut t = tally.lock().unwrap();
                t.adds += adds;
                t.add_ns += add_ns;
                t.removes += removes;
                t.remove_ns += remove_ns;
                if adds > 0 {
                    t.mean_add += add_ns / adds as f64;
                    t.with_adds += 1;
                }
                if removes > 0 {
                    t.mean_remove += remove_ns / removes as f64;
                    t.with_removes += 1;
                }
                t.mean_op += (add_ns + remove_ns) / (adds + removes).max(1) as f64;
                t.ops += adds + removes;
                t.op_ns += add_ns + remove_ns;
                t.searches += st.searches;
                t.steals += st.steals;
                t.examined += st.segments_examined;
                t.fruitless += st.segments_examined_fruitless;
                t.stolen += st.elements_stolen;
                t.tree_nodes += st.tree_nodes;
                t.exhausted += st.exhausted;
            });
        }
    });
    let (added, removed) = counts.into_inner().unwrap();
    let sizes: Vec<usize> = (0..p).map(|id| pool.segment_len(id)).collect();
    let left = pool.drain().len() as u64;
    let initial = (p * fill) as u64;
    if initial + added != removed + left {
        bail!(
            "element accounting failed: {initial} initial + {added} added != {removed} removed + {left} left"
        );
    }
    let t = tally.into_inner().unwrap();
    if !sample {
        return Ok((t, None));
    }
    let mut trace = Trace {
        workers: p,
        events: Vec::new(),
        dropped: 0,
        capacity: events_per_participant(p),
    };
    // Where the first participant that stopped recording stopped (its last event before
    // its share's end).
    let mut cut: Option<u64> = None;
    for (events, dropped) in traces.into_inner().unwrap() {
        if dropped > 0 {
            let at = events.iter().rev().nth(1).map_or(0, |e| e.t_ns);
            cut = Some(cut.map_or(at, |c| c.min(at)));
        }
        trace.events.extend(events);
        trace.dropped += dropped;
    }
    // By time; a participant's own events keep their order.
    trace.events.sort_by_key(|e| (e.t_ns, e.worker));
    if let Err(e) = trace.check() {
        bail!("the sampled trial's trace is malformed: {e}");
    }
    if trace.dropped == 0 {
        // The events account for every element: the replay ends at the segments' sizes.
        let series = segment_series(&trace);
        let end: Option<Vec<usize>> = series
            .as_ref()
            .map(|s| s.iter().map(|v| v.last().map_or(0, |x| x.1)).collect());
        if end.as_ref() != Some(&sizes) {
            bail!("the trace's segment sizes {end:?} differ from the pool's {sizes:?}");
        }
    }
    Ok((t, Some((trace, cut))))
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
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
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
