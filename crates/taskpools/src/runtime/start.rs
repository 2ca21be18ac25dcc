//! Starting a [`Runtime`] (its checks, deques, places, pinning and worker threads, see
//! `threads.rs`) and shutting it down (by `Drop`, or `shutdown_and_wait`).

use super::current::default_threads;
use super::handlers::Handlers;
use super::job::JobRef;
use super::pinning::worker_cores;
use super::threads::{detach_current_thread, make_current_thread_a_worker, WorkerParts};
use super::worker::{LocalDeque, PrivateFrames, WorkerThread, EXPOSED};
use super::{places, trace, Pool, Registry, Runtime, RuntimeBuilder, Stealers, ThreadBuilder};
use crate::queue::chase_lev;
use crate::queue::private_deque::StealRequests;
use crate::sync::{lock, Arc};

impl Runtime {
    pub(super) fn start(
        b: RuntimeBuilder,
        mut spawn: Option<&mut dyn FnMut(ThreadBuilder) -> std::io::Result<()>>,
    ) -> Result<Runtime, crate::Error> {
        if b.use_current_thread && WorkerThread::current().is_some() {
            return Err(crate::Error::CurrentThreadInRuntime);
        }
        let threads = match &b.places {
            Some(p) if b.threads_set && b.threads != p.workers() => {
                return Err(crate::Error::BadPlaces {
                    spec: p.spec().to_string(),
                    why: format!(
                        "the places have {} but threads({}) was asked for; leave threads \
                         out, the places decide",
                        crate::error::counted(p.workers() as u64, "worker"),
                        b.threads
                    ),
                })
            }
            Some(p) => p.workers(),
            None if b.threads == 0 => default_threads(),
            None => b.threads,
        };
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
                if let Some(c) = core.filter(|_| super::pinning::CAN_PIN) {
                    cores[i] = Some(core_affinity::CoreId { id: c });
                }
            }
            registry.places = Some(Box::new(places::PlaceSet::new(
                p.clone(),
                b.place_policy.clone(),
            )));
        }
        registry.pinned = cores.iter().any(Option::is_some);
        registry.spin = b.spin;
        registry.tracing = b.trace.is_some();
        registry.spawn_stealers = spawn_stealers;
        registry.handlers = Handlers {
            panic: b.panic_handler.clone(),
            start: b.start_handler.clone(),
            exit: b.exit_handler.clone(),
        };
        let registry = Arc::new(registry);
        let clock = b.trace.map(|_| trace::Clock::start());
        let mut rt = Runtime {
            registry,
            pool: b.pool,
            threads: Vec::with_capacity(threads),
            looping_workers: 0,
            current_thread_worker: false,
            trace_capacity: b.trace.unwrap_or(0),
            clock,
        };
        let has_places = b.places.is_some();
        // Worker 0 on the building thread is made last, once every other worker has started:
        // a failed build leaves the thread as it was.
        let mut current_thread_worker = None;
        for (index, deque) in locals.into_iter().enumerate() {
            let parts = WorkerParts {
                index,
                registry: Arc::clone(&rt.registry),
                deque,
                core: cores[index],
                place: place_of[index],
                has_places,
                trace: b.trace.zip(clock),
            };
            if index == 0 && b.use_current_thread {
                current_thread_worker = Some(parts);
                continue;
            }
            let worker = ThreadBuilder {
                parts: Some(parts),
                name: Some(match &b.thread_name {
                    Some(f) => f(index),
                    None => format!("taskpools-{index}"),
                }),
                stack_size: b.stack_size,
            };
            let started = match (&mut spawn, &b.spawn_handler) {
                (Some(f), _) => f(worker),
                (None, Some(h)) => (h.lock().unwrap_or_else(|e| e.into_inner()))(worker),
                (None, None) => {
                    let mut tb = std::thread::Builder::new();
                    if let Some(name) = worker.name() {
                        tb = tb.name(name.to_string());
                    }
                    if let Some(bytes) = worker.stack_size() {
                        tb = tb.stack_size(bytes);
                    }
                    tb.spawn(move || worker.run()).map(|h| rt.threads.push(h))
                }
            };
            match started {
                Ok(()) => rt.looping_workers += 1,
                // Dropping `rt` signals the shutdown to the workers started so far.
                Err(e) => return Err(crate::Error::Spawn(e)),
            }
        }
        if let Some(parts) = current_thread_worker {
            make_current_thread_a_worker(parts);
            rt.current_thread_worker = true;
        }
        Ok(rt)
    }

    /// On the thread that is this runtime's `use_current_thread` worker 0, and not inside a
    /// wait there: runs the jobs addressed or queued to it, then detaches the thread (it is no
    /// longer a worker of any runtime). Returns whether it did. Called before the shutdown, so
    /// that the other workers, which stay until every fire-and-forget job has run, are not kept
    /// by a job only this thread would run.
    fn release_current_thread(&self) -> bool {
        let Some(w) = WorkerThread::current() else {
            return false;
        };
        if !self.current_thread_worker
            || !Arc::ptr_eq(&w.registry, &self.registry)
            || w.index != 0
            || w.waits.get() > 0
        {
            return false;
        }
        while w.run_own() {}
        detach_current_thread();
        true
    }

    /// Signals the shutdown: the workers finish what is queued and every fire-and-forget job
    /// (and the jobs those spawn), then leave (see `spawn.rs`).
    fn signal_shutdown(&self) {
        self.release_current_thread();
        self.registry.signal_shutdown();
    }

    /// Shuts the runtime down and waits until its workers have left: after every job it was
    /// given has run, fire-and-forget jobs (and the jobs they spawn) included, and every
    /// worker's exit handler has returned. Dropping a runtime signals the same shutdown without
    /// waiting.
    ///
    /// On one of the runtime's own workers (say in a job that owns the runtime) it cannot
    /// wait for itself: it signals the shutdown and returns
    /// [`Error::WaitOnOwnWorker`](crate::Error::WaitOnOwnWorker).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let rt = taskpools::Runtime::new(2)?;
    /// let ran = Arc::new(AtomicUsize::new(0));
    /// for _ in 0..100 {
    ///     let ran = Arc::clone(&ran);
    ///     rt.spawn(move || { ran.fetch_add(1, Ordering::Relaxed); });
    /// }
    /// rt.shutdown_and_wait()?;
    /// assert_eq!(ran.load(Ordering::Relaxed), 100);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn shutdown_and_wait(mut self) -> Result<(), crate::Error> {
        self.signal_shutdown();
        match WorkerThread::current() {
            Some(w) if Arc::ptr_eq(&w.registry, &self.registry) => {
                return Err(crate::Error::WaitOnOwnWorker)
            }
            // A worker of another runtime waits running its own runtime's work, which a job of
            // this one may be waiting for.
            Some(w) => {
                let n = self.looping_workers;
                w.wait_until(|| *lock(&self.registry.exited) >= n);
            }
            None => {
                let mut exited = lock(&self.registry.exited);
                while *exited < self.looping_workers {
                    exited = self
                        .registry
                        .all_exited
                        .wait(exited)
                        .unwrap_or_else(|e| e.into_inner());
                }
            }
        }
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
        Ok(())
    }
}

impl Drop for Runtime {
    /// Signals the shutdown and returns at once (rayon's drop does the same). The workers
    /// finish what they were given, fire-and-forget jobs and the jobs those spawn included, and
    /// then leave; nothing queued is lost (but see
    /// [`use_current_thread`](RuntimeBuilder::use_current_thread) for a runtime dropped on
    /// another thread than its worker 0). Waiting here could deadlock: a spawned job may wait
    /// for something the dropping thread does after the drop. To wait, call
    /// [`shutdown_and_wait`](Runtime::shutdown_and_wait).
    fn drop(&mut self) {
        self.signal_shutdown();
    }
}
