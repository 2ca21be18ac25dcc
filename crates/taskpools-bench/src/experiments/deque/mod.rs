//! The deque micro-benchmark of Papakonstantinou, PARTEE (2015), §3.2.3 (Table 3.1), repeated
//! with our deques and crossbeam-deque in the same run, plus single-thread latencies.
//!
//! One deque of capacity 16. The owner does `OPS` pushes and `OPS / P` pops (one pop after
//! every P-th push); each of the P − 1 thieves does `OPS / P` steals. As in PARTEE, every
//! operation counts, successful or not (a push to a full fixed-size deque, a steal from an
//! empty one), so throughput = 2·OPS / time. A deque whose steals fail faster looks faster by
//! that measure, so the successful operations per second (successful pushes, pops and steals
//! over the same time) are reported beside it, with their own ratio to crossbeam-deque; every
//! run checks that what was taken plus what is left equals what was pushed.

mod command;
mod table;

use std::sync::Barrier;
use std::time::Instant;

use anyhow::{bail, Result};
use serde::Serialize;
use taskpools::queue::chase_lev;
use taskpools::queue::{Fcdq, MutexDeque, SpinDeque};

use super::summarize;
use crate::report::Progress;

pub use command::{exec, run_and_emit, DequeArgs};

/// What to run.
#[derive(Clone, Debug)]
pub struct Params {
    /// Thread counts P (owner + P − 1 thieves).
    pub threads: Vec<usize>,
    /// Pushes by the owner (PARTEE: 128 000).
    pub ops: usize,
    /// Deque capacity (PARTEE: 16).
    pub capacity: usize,
    /// Repetitions (median reported).
    pub reps: usize,
}

/// One row of the results.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    /// `deque-throughput` or `deque-latency`.
    pub experiment: String,
    /// Row name.
    pub deque: String,
    /// Threads (P); 1 for latency rows.
    pub threads: usize,
    /// More threads than CPUs.
    pub oversubscribed: bool,
    /// Repetitions.
    pub reps: usize,
    /// Throughput: median Mops/s (all operations counted).
    pub median_mops: Option<f64>,
    /// Throughput: slowest repetition.
    pub min_mops: Option<f64>,
    /// Throughput: fastest repetition.
    pub max_mops: Option<f64>,
    /// Throughput: fraction of operations that succeeded (median run).
    pub success: Option<f64>,
    /// Throughput: this row's median / crossbeam-deque's median at the same P.
    pub vs_crossbeam: Option<f64>,
    /// Throughput: median successful operations per second, in millions (a failed push,
    /// pop or steal does not count).
    pub median_success_mops: Option<f64>,
    /// Throughput: successful Mops/s of the slowest repetition (by that measure).
    pub min_success_mops: Option<f64>,
    /// Throughput: successful Mops/s of the fastest repetition (by that measure).
    pub max_success_mops: Option<f64>,
    /// Throughput: this row's median successful Mops/s / crossbeam-deque's at the same P.
    pub vs_crossbeam_success: Option<f64>,
    /// Latency: ns per push + pop pair, no contention.
    pub push_pop_ns: Option<f64>,
    /// Latency: ns per steal, no contention.
    pub steal_ns: Option<f64>,
}

/// A deque under test: owner handle, thief handle, one attempt per operation.
trait BenchDeque {
    const NAME: &'static str;
    type Owner: Send;
    type Thief: Send + Clone;
    fn new(cap: usize) -> (Self::Owner, Self::Thief);
    fn push(o: &Self::Owner, v: u64) -> bool;
    fn pop(o: &Self::Owner) -> Option<u64>;
    fn steal(t: &Self::Thief) -> Option<u64>;
}

struct ClFixed;
impl BenchDeque for ClFixed {
    const NAME: &'static str = "chase-lev (fixed)";
    type Owner = chase_lev::Worker<u64>;
    type Thief = chase_lev::Stealer<u64>;
    fn new(cap: usize) -> (Self::Owner, Self::Thief) {
        chase_lev::deque(cap)
    }
    fn push(o: &Self::Owner, v: u64) -> bool {
        o.try_push(v).is_ok()
    }
    fn pop(o: &Self::Owner) -> Option<u64> {
        o.pop()
    }
    fn steal(t: &Self::Thief) -> Option<u64> {
        t.steal().success()
    }
}

struct ClGrow;
impl BenchDeque for ClGrow {
    const NAME: &'static str = "chase-lev (grows)";
    type Owner = chase_lev::Worker<u64>;
    type Thief = chase_lev::Stealer<u64>;
    fn new(cap: usize) -> (Self::Owner, Self::Thief) {
        chase_lev::deque(cap)
    }
    fn push(o: &Self::Owner, v: u64) -> bool {
        o.push(v);
        true
    }
    fn pop(o: &Self::Owner) -> Option<u64> {
        o.pop()
    }
    fn steal(t: &Self::Thief) -> Option<u64> {
        t.steal().success()
    }
}

/// The FCDQ owner handle: the only thread that may enqueue and dequeue at the front.
struct FcdqOwner(std::sync::Arc<Fcdq<u64>>);

struct FcdqRow;
impl BenchDeque for FcdqRow {
    const NAME: &'static str = "fcdq (fixed)";
    type Owner = FcdqOwner;
    type Thief = std::sync::Arc<Fcdq<u64>>;
    fn new(cap: usize) -> (Self::Owner, Self::Thief) {
        let q = std::sync::Arc::new(Fcdq::new(cap));
        (FcdqOwner(q.clone()), q)
    }
    fn push(o: &Self::Owner, v: u64) -> bool {
        // SAFETY: `FcdqOwner` is created once per deque and used by the owner thread only.
        unsafe { o.0.enqueue(v).is_ok() }
    }
    fn pop(o: &Self::Owner) -> Option<u64> {
        // SAFETY: as above.
        unsafe { o.0.dequeue_front() }
    }
    fn steal(t: &Self::Thief) -> Option<u64> {
        t.dequeue_back()
    }
}

macro_rules! locked_row {
    ($row:ident, $ty:ident, $name:expr) => {
        struct $row;
        impl BenchDeque for $row {
            const NAME: &'static str = $name;
            type Owner = std::sync::Arc<$ty<u64>>;
            type Thief = std::sync::Arc<$ty<u64>>;
            fn new(cap: usize) -> (Self::Owner, Self::Thief) {
                let q = std::sync::Arc::new($ty::new(cap));
                (q.clone(), q)
            }
            fn push(o: &Self::Owner, v: u64) -> bool {
                o.push(v).is_ok()
            }
            fn pop(o: &Self::Owner) -> Option<u64> {
                o.pop()
            }
            fn steal(t: &Self::Thief) -> Option<u64> {
                t.steal()
            }
        }
    };
}
locked_row!(SpinRow, SpinDeque, "spin lock (fixed)");
locked_row!(MutexRow, MutexDeque, "mutex (fixed)");

struct Crossbeam;
impl BenchDeque for Crossbeam {
    const NAME: &'static str = "crossbeam-deque (grows)";
    type Owner = crossbeam_deque::Worker<u64>;
    type Thief = crossbeam_deque::Stealer<u64>;
    fn new(_cap: usize) -> (Self::Owner, Self::Thief) {
        let w = crossbeam_deque::Worker::new_lifo();
        let s = w.stealer();
        (w, s)
    }
    fn push(o: &Self::Owner, v: u64) -> bool {
        o.push(v);
        true
    }
    fn pop(o: &Self::Owner) -> Option<u64> {
        o.pop()
    }
    fn steal(t: &Self::Thief) -> Option<u64> {
        t.steal().success()
    }
}

/// Outcome of one throughput run.
struct Run {
    secs: f64,
    successes: u64,
}

/// One Table 3.1 run with `p` threads. Each thread reads the clock itself after the start
/// barrier and when it is done; the run lasts from the earliest start to the latest end. (A
/// clock read by the coordinating thread would be late whenever that thread is not scheduled
/// right after the barrier, which on 2 cores with 3 threads is often.)
fn throughput_run<D: BenchDeque>(p: usize, ops: usize, cap: usize) -> Result<Run> {
    let (owner, thief) = D::new(cap);
    let per = (ops / p) as u64;
    let barrier = Barrier::new(p);
    let (mut pushed_sum, mut pushed, mut taken_sum, mut taken) = (0u64, 0u64, 0u64, 0u64);
    let mut start: Option<Instant> = None;
    let mut end: Option<Instant> = None;
    let mut span = |s: Instant, e: Instant| {
        start = Some(start.map_or(s, |x| x.min(s)));
        end = Some(end.map_or(e, |x| x.max(e)));
    };
    let owner = std::thread::scope(|s| {
        let thieves: Vec<_> = (1..p)
            .map(|_| {
                let (thief, barrier) = (thief.clone(), &barrier);
                s.spawn(move || {
                    barrier.wait();
                    let t0 = Instant::now();
                    let (mut n, mut sum) = (0u64, 0u64);
                    for _ in 0..per {
                        if let Some(v) = D::steal(&thief) {
                            n += 1;
                            sum = sum.wrapping_add(v);
                        }
                    }
                    (n, sum, t0, Instant::now())
                })
            })
            .collect();
        let barrier = &barrier;
        let own = s.spawn(move || {
            barrier.wait();
            let t0 = Instant::now();
            let (mut pn, mut ps, mut tn, mut ts) = (0u64, 0u64, 0u64, 0u64);
            for i in 0..ops as u64 {
                if D::push(&owner, i) {
                    pn += 1;
                    ps = ps.wrapping_add(i);
                }
                if i % p as u64 == 0 {
                    if let Some(v) = D::pop(&owner) {
                        tn += 1;
                        ts = ts.wrapping_add(v);
                    }
                }
            }
            (owner, pn, ps, tn, ts, t0, Instant::now())
        });
        for t in thieves {
            let (n, sum, t0, t1) = t.join().expect("thief");
            taken += n;
            taken_sum = taken_sum.wrapping_add(sum);
            span(t0, t1);
        }
        let (owner, pn, ps, tn, ts, t0, t1) = own.join().expect("owner");
        span(t0, t1);
        pushed += pn;
        pushed_sum = pushed_sum.wrapping_add(ps);
        taken += tn;
        taken_sum = taken_sum.wrapping_add(ts);
        owner
    });
    let secs = match (start, end) {
        (Some(s), Some(e)) => (e - s).as_secs_f64(),
        _ => bail!("no thread reported its time"),
    };
    let successes = pushed + taken;
    // What is left must account exactly for what was pushed and not taken.
    while let Some(v) = D::pop(&owner) {
        taken += 1;
        taken_sum = taken_sum.wrapping_add(v);
    }
    if taken != pushed || taken_sum != pushed_sum {
        bail!(
            "{}: {} pushed (sum {}) but {} taken (sum {}): an element was lost or duplicated",
            D::NAME,
            pushed,
            pushed_sum,
            taken,
            taken_sum
        );
    }
    Ok(Run { secs, successes })
}

/// ns per push+pop pair and per steal, single thread, no contention.
fn latency<D: BenchDeque>(cap: usize) -> (f64, f64) {
    const PAIRS: u64 = 1 << 20;
    let (owner, thief) = D::new(cap);
    let t0 = Instant::now();
    for i in 0..PAIRS {
        D::push(&owner, i);
        std::hint::black_box(D::pop(&owner));
    }
    let pair_ns = t0.elapsed().as_nanos() as f64 / PAIRS as f64;
    // Steals in batches that fit every capacity: time only the steal phase, minus the cost
    // of reading the clock.
    let batch = cap.clamp(1, 16) as u64;
    let rounds = PAIRS / batch;
    let clock = {
        let t = Instant::now();
        for _ in 0..1000 {
            std::hint::black_box(Instant::now());
        }
        t.elapsed().as_nanos() as f64 / 1000.0
    };
    let mut steal_ns = 0.0;
    for r in 0..rounds {
        for i in 0..batch {
            D::push(&owner, r * batch + i);
        }
        let t = Instant::now();
        for _ in 0..batch {
            std::hint::black_box(D::steal(&thief));
        }
        steal_ns += (t.elapsed().as_nanos() as f64 - clock).max(0.0);
    }
    (pair_ns, steal_ns / (rounds * batch) as f64)
}

type Row = (
    &'static str,
    fn(usize, usize, usize) -> Result<Run>,
    fn(usize) -> (f64, f64),
);

fn rows() -> Vec<Row> {
    fn row<D: BenchDeque>() -> Row {
        (D::NAME, throughput_run::<D>, latency::<D>)
    }
    vec![
        row::<ClFixed>(),
        row::<ClGrow>(),
        row::<FcdqRow>(),
        row::<SpinRow>(),
        row::<MutexRow>(),
        row::<Crossbeam>(),
    ]
}

/// Runs the benchmark.
pub fn run(p: &Params, progress: &Progress) -> Result<Vec<Record>> {
    if p.reps == 0 {
        bail!("--reps must be at least 1");
    }
    if p.threads.is_empty() || p.threads.iter().any(|&t| t < 2) {
        bail!("--threads: each P must be at least 2 (an owner and at least one thief)");
    }
    if p.capacity < 2 || p.ops == 0 {
        bail!("--capacity must be at least 2 and --ops at least 1");
    }
    // The CPUs listed at start-up, not this thread's mask (an earlier experiment may have
    // pinned it to one core).
    let cpus = super::pinning::cores().map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        <[_]>::len,
    );
    let rows = rows();
    progress.set_length((p.reps * rows.len() * (p.threads.len() + 1)) as u64);
    let mut mops = vec![vec![Vec::new(); p.threads.len()]; rows.len()];
    let mut succ = vec![vec![Vec::new(); p.threads.len()]; rows.len()];
    let mut succ_mops = vec![vec![Vec::new(); p.threads.len()]; rows.len()];
    let mut lat = vec![Vec::new(); rows.len()];
    for _ in 0..p.reps {
        for (ri, (name, run, lat_fn)) in rows.iter().enumerate() {
            for (ti, &t) in p.threads.iter().enumerate() {
                progress.set_message(format!("{name} P={t}"));
                let r = run(t, p.ops, p.capacity)?;
                mops[ri][ti].push(2.0 * p.ops as f64 / r.secs / 1e6);
                succ[ri][ti].push(r.successes as f64 / (2 * p.ops) as f64);
                succ_mops[ri][ti].push(r.successes as f64 / r.secs / 1e6);
                progress.inc();
            }
            progress.set_message(format!("{name} latency"));
            lat[ri].push(lat_fn(p.capacity));
            progress.inc();
        }
    }
    let cb = rows.len() - 1;
    let mut out = Vec::new();
    for (ri, (name, _, _)) in rows.iter().enumerate() {
        for (ti, &t) in p.threads.iter().enumerate() {
            let (med, min, max) = summarize(&mops[ri][ti]);
            let (cb_med, _, _) = summarize(&mops[cb][ti]);
            let (s_med, s_min, s_max) = summarize(&succ_mops[ri][ti]);
            let (cb_s_med, _, _) = summarize(&succ_mops[cb][ti]);
            out.push(Record {
                experiment: "deque-throughput".into(),
                deque: name.to_string(),
                threads: t,
                oversubscribed: t > cpus,
                reps: p.reps,
                median_mops: Some(med),
                min_mops: Some(min),
                max_mops: Some(max),
                success: Some(summarize(&succ[ri][ti]).0),
                vs_crossbeam: Some(med / cb_med),
                median_success_mops: Some(s_med),
                min_success_mops: Some(s_min),
                max_success_mops: Some(s_max),
                vs_crossbeam_success: Some(s_med / cb_s_med),
                push_pop_ns: None,
                steal_ns: None,
            });
        }
        let pp: Vec<f64> = lat[ri].iter().map(|l| l.0).collect();
        let st: Vec<f64> = lat[ri].iter().map(|l| l.1).collect();
        out.push(Record {
            experiment: "deque-latency".into(),
            deque: name.to_string(),
            threads: 1,
            oversubscribed: false,
            reps: p.reps,
            median_mops: None,
            min_mops: None,
            max_mops: None,
            success: None,
            vs_crossbeam: None,
            median_success_mops: None,
            min_success_mops: None,
            max_success_mops: None,
            vs_crossbeam_success: None,
            push_pop_ns: Some(summarize(&pp).0),
            steal_ns: Some(summarize(&st).0),
        });
    }
    Ok(out)
}
