//! The measurements of seed 003 (§3.3–§4) on our concurrent pool: the random-operations model
//! over job mixes, producer/consumer with contiguous or balanced producers, a sparse initial
//! fill, and per strategy: mean add and remove time, share of removes that stole, segments
//! examined per steal, elements per steal, and segment sizes over time.
//!
//! The seed let participants run until the *combined* number of operations reached the
//! target. With 16 participants on 2 cores that lets the first threads the OS schedules do all
//! the work before the others start, so here every participant performs its share (ops / P),
//! and all start together at a barrier. Averages are taken per participant, then over
//! participants, then over trials, as in the seed. Operation times include two clock reads
//! (about 40 ns here), the same for every strategy; with more participants than CPUs they also
//! include time spent waiting for a CPU (such runs are labelled oversubscribed).

use std::sync::{Barrier, Mutex};
use std::time::Instant;

use anyhow::{bail, Result};
use serde::Serialize;
use taskpools::pool::manber::{ConcurrentConfig, ConcurrentPool, Removed, Search};

use crate::report::Progress;

/// What to run.
#[derive(Clone, Debug)]
pub struct Params {
    /// Participant counts (the seed: 16).
    pub participants: Vec<usize>,
    /// Total operations per trial (the seed: 5000).
    pub ops: usize,
    /// Initial elements per participant (the seed: 320 / 16 = 20).
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
    /// Trials per point (the seed: 10).
    pub trials: usize,
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
    /// Per segment: (µs since start, size) after each of its owner's operations.
    pub segments: Vec<Vec<(f64, usize)>>,
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

/// Per segment, (µs since start, size) samples.
type SegmentSeries = Vec<Vec<(f64, usize)>>;

/// One trial: returns the tally and, if `sample`, segment sizes over time.
fn trial(
    p: usize,
    cfg: ConcurrentConfig,
    roles: &[Role],
    ops: usize,
    fill: usize,
    sample: bool,
) -> Result<(Tally, Option<SegmentSeries>)> {
    let pool = ConcurrentPool::new(cfg)?;
    for id in 0..p {
        pool.fill(id, (0..fill as u64).map(|k| (id as u64) << 40 | k));
    }
    let barrier = Barrier::new(p);
    let tally = Mutex::new(Tally::default());
    let counts = Mutex::new((0u64, 0u64)); // (added, removed) elements
    let samples = Mutex::new(vec![Vec::new(); p]);
    // Sample times are taken relative to this; threads start at the barrier just after.
    let start = Instant::now();
    std::thread::scope(|s| {
        for (id, &role) in roles.iter().enumerate() {
            let (pool, barrier, tally, counts, samples) =
                (&pool, &barrier, &tally, &counts, &samples);
            let quota = ops / p + usize::from(id < ops % p);
            s.spawn(move || {
                let mut me = pool.join(id);
                barrier.wait();
                let mut rng = fastrand::Rng::with_seed(0x5eed + id as u64);
                let (mut adds, mut add_ns, mut removes, mut remove_ns) = (0u64, 0f64, 0u64, 0f64);
                let (mut added, mut removed) = (0u64, 0u64);
                let mut mine = Vec::new();
                let mut k = 1u64 << 39;
                for _ in 0..quota {
                    let add = match role {
                        Role::Mix(m) => rng.f64() < m,
                        Role::Producer => true,
                        Role::Consumer => false,
                    };
                    let t = Instant::now();
                    if add {
                        pool.add(&mut me, (id as u64) << 40 | k);
                        k += 1;
                        add_ns += t.elapsed().as_nanos() as f64;
                        adds += 1;
                        added += 1;
                    } else {
                        let r = pool.remove(&mut me);
                        remove_ns += t.elapsed().as_nanos() as f64;
                        removes += 1;
                        if let Removed::Element(_) = r {
                            removed += 1;
                        }
                    }
                    if sample {
                        mine.push((start.elapsed().as_secs_f64() * 1e6, pool.segment_len(id)));
                    }
                }
                let st = me.stats.clone();
                pool.leave(me);
                if sample {
                    samples.lock().unwrap()[id] = mine;
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
    let left = pool.drain().len() as u64;
    let initial = (p * fill) as u64;
    if initial + added != removed + left {
        bail!(
            "element accounting failed: {initial} initial + {added} added != {removed} removed + {left} left"
        );
    }
    let t = tally.into_inner().unwrap();
    Ok((t, sample.then(|| samples.into_inner().unwrap())))
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
    // Figures 6–9: one sampled trial per strategy and arrangement, with the seed's 5 producers
    // of 16 (scaled to the largest participant count).
    let mut samples = Vec::new();
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
            let (_, s) = trial(n, cfg, &roles, p.ops, p.fill_per_participant, true)?;
            samples.push(Samples {
                search: search.name().into(),
                workload: name.into(),
                producers: who,
                segments: s.expect("sampled"),
            });
        }
    }
    Ok((out, samples))
}
