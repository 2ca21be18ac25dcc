//! One trial of Manber's pool: participants in their roles (random mix, producer, consumer)
//! run their share of operations from a barrier, timed per operation and tallied; a sampled
//! trial also records its schedule trace, whose replayed segment sizes are checked against
//! the pool's.

use std::sync::{Barrier, Mutex};
use std::time::Instant;

use anyhow::{bail, Result};
use taskpools::pool::manber::{ConcurrentConfig, ConcurrentPool, Removed};
use taskpools::runtime::trace::{Event, EventKind, Source, Trace};

use super::{events_per_participant, segment_series};

#[derive(Clone, Copy)]
pub(super) enum Role {
    /// Add with this probability.
    Mix(f64),
    Producer,
    Consumer,
}

#[derive(Default)]
pub(super) struct Tally {
    pub(super) adds: u64,
    pub(super) add_ns: f64,
    pub(super) removes: u64,
    pub(super) remove_ns: f64,
    pub(super) ops: u64,
    pub(super) op_ns: f64,
    // Means per participant, summed (divided by participants later).
    pub(super) mean_add: f64,
    pub(super) mean_remove: f64,
    pub(super) mean_op: f64,
    pub(super) with_adds: usize,
    pub(super) with_removes: usize,
    pub(super) searches: u64,
    pub(super) steals: u64,
    pub(super) examined: u64,
    pub(super) fruitless: u64,
    pub(super) stolen: u64,
    pub(super) tree_nodes: u64,
    pub(super) exhausted: u64,
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
pub(super) type Sampled = (Trace, Option<u64>);

/// One trial: returns the tally and, if `sample`, its schedule trace.
pub(super) fn trial(
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
