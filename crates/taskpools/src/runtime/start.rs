//! Starting a [`Runtime`] (its checks, deques, places, pinning and worker threads) and
//! stopping it when it is dropped.

use std::cell::Cell;

use super::job::JobRef;
use super::pinning::worker_cores;
use super::worker::{self, LocalDeque, PrivateFrames, WorkerThread, CURRENT, EXPOSED};
use super::{places, trace, Pool, Registry, Runtime, RuntimeBuilder, Stealers};
use crate::places::set_current_place;
use crate::queue::chase_lev;
use crate::queue::private_deque::StealRequests;
use crate::sync::{lock, Arc, Ordering};

impl Runtime {
    pub(super) fn start(b: RuntimeBuilder) -> Result<Runtime, crate::Error> {
        let threads = match &b.places {
            Some(p) if b.threads_set && b.threads != p.workers() => {
                return Err(crate::Error::BadPlaces {
                    spec: p.spec().to_string(),
                    why: format!(
                        "the places have {} workers but threads({}) was asked for; leave \
                         threads out, the places decide",
                        p.workers(),
                        b.threads
                    ),
                })
            }
            Some(p) => p.workers(),
            None => b.threads,
        };
        if threads == 0 {
            return Err(crate::Error::ZeroThreads);
        }
        if threads > crate::MAX_THREADS {
            return Err(crate::Error::TooManyThreads {
                requested: threads,
                max: crate::MAX_THREADS,
            });
        }
        if let Some(cap) = b.trace {
            if !(16..=1 << 28).contains(&cap) {
                return Err(crate::Error::TooLarge {
                    what: format!("trace buffer of {cap} events per worker"),
                    limit: "16 to 2^28 events".into(),
                });
            }
        }
        let mut spawn_stealers: Box<[chase_lev::Stealer<JobRef>]> = Box::new([]);
        let (locals, stealers): (Vec<LocalDeque>, Stealers) = match b.pool {
            Pool::ChaseLev => {
                let (w, s): (Vec<_>, Vec<_>) = (0..threads)
                    .map(|_| chase_lev::deque::<JobRef>(256))
                    .unzip();
                (
                    w.into_iter().map(LocalDeque::ChaseLev).collect(),
                    Stealers::ChaseLev(s.into()),
                )
            }
            Pool::PrivateDeque => {
                let r = StealRequests::<JobRef>::set(threads);
                let (owners, thieves): (Vec<_>, Vec<_>) =
                    (0..threads).map(|_| chase_lev::deque::<JobRef>(64)).unzip();
                spawn_stealers = thieves.into();
                let mut spawn_owners = owners.into_iter();
                let table = Arc::clone(r[0].table());
                (
                    r.into_iter()
                        .map(|req| {
                            LocalDeque::Private(PrivateFrames::new(
                                spawn_owners.next().expect("one per worker"),
                                req,
                                if b.serial_elision { EXPOSED } else { u32::MAX },
                            ))
                        })
                        .collect(),
                    Stealers::Private(table),
                )
            }
        };
        let mut registry = Registry::new(threads, stealers);
        let mut cores = worker_cores(b.pin, threads);
        let mut place_of = vec![0; threads];
        if let Some(p) = &b.places {
            // A place's listed cores pin its workers; a virtual place's pin round-robin over
            // the process's cores, when pinning was asked for.
            let listed = p
                .place_of_workers()
                .into_iter()
                .zip((0..p.len()).flat_map(|q| p.cores(q).iter().copied()));
            for (i, (q, core)) in listed.enumerate() {
                place_of[i] = q;
                if let Some(c) = core {
                    cores[i] = Some(core_affinity::CoreId { id: c });
                }
            }
            registry.places = Some(Box::new(places::PlaceSet::new(
                p.clone(),
                b.place_policy.clone(),
            )));
        }
        registry.pinned = cores.iter().any(Option::is_some);
        registry.tracing = b.trace.is_some();
        registry.spawn_stealers = spawn_stealers;
        let registry = Arc::new(registry);
        let mut rt = Runtime {
            registry,
            pool: b.pool,
            threads: Vec::with_capacity(threads),
            trace_capacity: 0,
            clock: None,
        };
        let place_of: std::sync::Arc<[usize]> = place_of.into();
        let (trace_cap, clock) = (b.trace, b.trace.map(|_| trace::Clock::start()));
        let has_places = b.places.is_some();
        rt.trace_capacity = trace_cap.unwrap_or(0);
        rt.clock = clock;
        for (index, deque) in locals.into_iter().enumerate() {
            let reg = Arc::clone(&rt.registry);
            let place_of = std::sync::Arc::clone(&place_of);
            let core = cores[index];
            let name = match &b.thread_name {
                Some(f) => f(index),
                None => format!("taskpools-{index}"),
            };
            let mut tb = std::thread::Builder::new().name(name);
            if let Some(bytes) = b.stack_size {
                tb = tb.stack_size(bytes);
            }
            let h = tb.spawn(move || {
                if let Some(c) = core {
                    core_affinity::set_for_current(c);
                }
                let w = WorkerThread {
                    index,
                    registry: reg,
                    deque,
                    rng: Cell::new(0x9e37_79b9_7f4a_7c15 ^ (index as u64 + 1)),
                    waits: Cell::new(0),
                    place: place_of[index],
                    has_places,
                    rr: Cell::new(place_of[index]),
                    idle_since: Cell::new(None),
                    spin_budget: Cell::new(worker::SPIN_ROUNDS),
                    trace: trace_cap
                        .zip(clock)
                        .map(|(cap, clock)| Box::new(trace::TraceBuf::new(clock, index, cap))),
                    source: Cell::new(trace::Source::Own),
                };
                CURRENT.with(|c| c.set(&w));
                set_current_place(w.has_places.then_some(crate::places::PlaceId(w.place)));
                w.main_loop();
                set_current_place(None);
                CURRENT.with(|c| c.set(std::ptr::null()));
            });
            match h {
                Ok(h) => rt.threads.push(h),
                // Dropping `rt` stops the workers started so far.
                Err(e) => return Err(crate::Error::Spawn(e)),
            }
        }
        Ok(rt)
    }
}

impl Drop for Runtime {
    /// Stops the workers: each runs what is left in the injector (spawned jobs) and exits.
    /// From a thread outside the runtime, the drop waits for them. Dropped on one of its own
    /// workers (the last `Arc<Runtime>` moved into a spawned job, say), it cannot wait for
    /// itself or for a worker that may be waiting on this one: it then only signals the
    /// shutdown and returns; the workers finish and exit on their own (each holds the shared
    /// state it needs).
    fn drop(&mut self) {
        self.registry.shutdown.store(true, Ordering::Release);
        {
            let _g = lock(&self.registry.sleep);
            self.registry.wake.notify_all();
        }
        let on_own_worker =
            WorkerThread::current().is_some_and(|w| Arc::ptr_eq(&w.registry, &self.registry));
        if on_own_worker {
            self.threads.clear();
            return;
        }
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
    }
}
