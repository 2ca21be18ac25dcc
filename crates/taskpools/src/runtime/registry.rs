//! State shared by a runtime's workers: how thieves reach the deques, the injector for work
//! from outside, one mailbox per worker for work addressed to that worker (a working phase's
//! share, a broadcast), and sleeping and waking.
//!
//! # Sleeping without lost wake-ups
//!
//! A worker that found nothing for a while announces itself in `sleepers` (under the `sleep`
//! lock), issues a `SeqCst` fence and looks once more for work it could take: injected jobs,
//! advertised deques, and its own mailbox. Only if there is none does it wait on the condition
//! variable, which releases the lock atomically. Whoever makes work available first makes it
//! visible (the injector's length mirror, a deque's advertisement, a mailbox's `pending`
//! flag), issues a `SeqCst` fence and then reads `sleepers`; if non-zero it takes the lock and
//! notifies. By the two fences either the sleeper sees the work or the waker sees the sleeper,
//! and since the sleeper holds the lock from its look to its wait, the notification cannot
//! fall in between. A mailbox post wakes *every* sleeper (`notify_all`), because only its
//! addressee may take it. The loom models at the end check both paths, each with a planted-bug
//! twin that skips the second look.

use std::collections::VecDeque;

use crossbeam_utils::CachePadded;

use super::counters::Counters;
use super::job::JobRef;
use super::places::{Entry, PlaceSet, NOBODY};
use crate::queue::chase_lev::Stealer;
use crate::queue::private_deque::StealTable;
use crate::sync::{fence, lock, Arc, AtomicBool, AtomicUsize, Condvar, Mutex, Ordering};

/// How thieves reach the workers' deques.
pub(crate) enum Stealers {
    ChaseLev(Box<[Stealer<JobRef>]>),
    Private(Arc<StealTable<JobRef>>),
}

/// Work addressed to one worker, oldest first: a broadcast's share (one broadcast holds the
/// workers at a time, see `broadcast.rs`) and the jobs of `spawn_broadcast`, which queue
/// behind it.
pub(crate) struct Mailbox {
    /// Whether `jobs` holds a job: the lock-free check on the worker's search path.
    pending: AtomicBool,
    jobs: Mutex<VecDeque<JobRef>>,
}

impl Mailbox {
    fn new() -> Mailbox {
        Mailbox {
            pending: AtomicBool::new(false),
            jobs: Mutex::new(VecDeque::new()),
        }
    }
}

/// State shared by a runtime's workers.
pub(crate) struct Registry {
    pub(crate) threads: usize,
    /// Whether the workers are pinned to cores.
    pub(crate) pinned: bool,
    pub(crate) stealers: Stealers,
    /// On the private-deque pool, the thieves' ends of the workers' public spawn deques
    /// (`scope` spawns go there, stealable without their owner's help); empty otherwise.
    pub(crate) spawn_stealers: Box<[Stealer<JobRef>]>,
    mailboxes: Box<[CachePadded<Mailbox>]>,
    /// Per-worker counters (one writer each).
    pub(crate) counters: Box<[CachePadded<Counters>]>,
    /// Whether a broadcast (a working phase) holds the workers, and its waiters.
    pub(crate) broadcast_busy: Mutex<bool>,
    pub(crate) broadcast_free: Condvar,
    injector: Mutex<VecDeque<JobRef>>,
    injected: CachePadded<AtomicUsize>,
    sleepers: CachePadded<AtomicUsize>,
    pub(crate) sleep: Mutex<()>,
    pub(crate) wake: Condvar,
    pub(crate) shutdown: AtomicBool,
    /// How long an idle worker looks for work before it sleeps (`RuntimeBuilder::spin`).
    pub(crate) spin: std::time::Duration,
    /// Fire-and-forget jobs (`spawn`, `spawn_fifo`, `spawn_broadcast`) not yet finished: after
    /// a shutdown the workers stay until it is zero (see `spawn.rs`).
    pub(crate) live_spawns: CachePadded<AtomicUsize>,
    /// Per worker, the jobs of its `spawn_fifo`s, oldest first; a ticket on the worker's deque
    /// runs the oldest (see `spawn.rs`).
    pub(crate) fifos: Box<[CachePadded<Mutex<VecDeque<JobRef>>>]>,
    /// What the builder asked to run on panics and at each worker's start and exit.
    pub(crate) handlers: super::handlers::Handlers,
    /// Worker threads that have left their loop, and the waiters for all of them
    /// (`Runtime::shutdown_and_wait`).
    pub(crate) exited: Mutex<usize>,
    pub(crate) all_exited: Condvar,
    /// Whether a thief has reported an owner that does not answer steal requests (the
    /// diagnostic is printed once per runtime; see [`StallWatch`](super::liveness::StallWatch)).
    pub(crate) stall_reported: AtomicBool,
    /// The places of a runtime built with them (see [`crate::places`]).
    pub(crate) places: Option<Box<PlaceSet>>,
    /// Whether the workers record a schedule trace (front ends check this before they look
    /// for the worker's buffer).
    pub(crate) tracing: bool,
    /// Loom-only switch for a test of the tests: a would-be sleeper that does not look for
    /// work again after announcing itself, so an injection can slip in between.
    #[cfg(loom)]
    pub(crate) broken_no_recheck: bool,
    /// Loom-only switch for a test of the tests: the last fire-and-forget job after a
    /// shutdown does not wake the sleepers (`spawn::done`).
    #[cfg(loom)]
    pub(crate) broken_done_no_notify: bool,
}

impl Registry {
    pub(crate) fn new(threads: usize, stealers: Stealers) -> Registry {
        Registry {
            threads,
            pinned: false,
            stealers,
            spawn_stealers: Box::new([]),
            mailboxes: (0..threads)
                .map(|_| CachePadded::new(Mailbox::new()))
                .collect(),
            counters: (0..threads)
                .map(|_| CachePadded::new(Counters::default()))
                .collect(),
            broadcast_busy: Mutex::new(false),
            broadcast_free: Condvar::new(),
            injector: Mutex::new(VecDeque::new()),
            injected: CachePadded::new(AtomicUsize::new(0)),
            sleepers: CachePadded::new(AtomicUsize::new(0)),
            sleep: Mutex::new(()),
            wake: Condvar::new(),
            shutdown: AtomicBool::new(false),
            spin: super::worker::DEFAULT_SPIN,
            live_spawns: CachePadded::new(AtomicUsize::new(0)),
            fifos: (0..threads)
                .map(|_| CachePadded::new(Mutex::new(VecDeque::new())))
                .collect(),
            handlers: Default::default(),
            exited: Mutex::new(0),
            all_exited: Condvar::new(),
            stall_reported: AtomicBool::new(false),
            places: None,
            tracing: false,
            #[cfg(loom)]
            broken_no_recheck: false,
            #[cfg(loom)]
            broken_done_no_notify: false,
        }
    }

    pub(crate) fn has_work(&self) -> bool {
        self.injected.load(Ordering::Relaxed) > 0
            || match &self.stealers {
                Stealers::ChaseLev(s) => s.iter().any(|s| !s.is_empty()),
                Stealers::Private(t) => t.any_work(),
            }
            || self.spawn_stealers.iter().any(|s| !s.is_empty())
            || self.places.as_ref().is_some_and(|p| p.any_work())
    }

    /// Queues `job` on place `p`'s shared deque and wakes a sleeper (Dekker pair with
    /// `sleep_until_work`, through the deque's length mirror). From any thread.
    pub(crate) fn push_place(&self, p: usize, job: JobRef, hinted: bool) {
        let places = self.places.as_ref().expect("a runtime with places");
        let (owner, depth) = match super::worker::WorkerThread::current() {
            Some(w) if std::ptr::eq(&*w.registry, self) => (w.index as u32, w.waits.get()),
            _ => (NOBODY, 0),
        };
        places.deques[p].push(Entry {
            job,
            hinted,
            owner,
            depth,
        });
        // A worker pushing on a one-worker runtime is that worker: nobody to wake. From
        // outside, the one worker may sleep.
        if self.threads > 1 || owner == NOBODY {
            if hinted && places.policy.guards_hints() {
                // `notify_one` could wake a worker of another place, which would leave the
                // hinted task alone while the place's own sleeping workers stay asleep.
                self.notify_all();
            } else {
                self.notify_one();
            }
        }
    }

    /// Signals the shutdown to the workers (see `spawn.rs`): they leave once every
    /// fire-and-forget job has finished. Under the sleep lock, so that a worker between its
    /// look at the flag and its wait cannot miss it.
    pub(crate) fn signal_shutdown(&self) {
        // Stored under the lock that the last spawned job's end (`spawn::done`) reads it
        // under: one of the two comes first in the lock's order, so either the job's end sees
        // the shutdown and wakes the sleepers, or a sleeper's check (under the same lock, after
        // this) sees the job's count at zero.
        let _g = lock(&self.sleep);
        self.shutdown.store(true, Ordering::Release);
        self.wake.notify_all();
    }

    /// Wakes one sleeping worker, if any (Dekker pair with `sleep_until_work`).
    pub(crate) fn notify_one(&self) {
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::Relaxed) > 0 {
            let _g = lock(&self.sleep);
            self.wake.notify_one();
        }
    }

    /// Wakes every sleeping worker, if any (Dekker pair with `sleep_until_work`).
    pub(crate) fn notify_all(&self) {
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::Relaxed) > 0 {
            let _g = lock(&self.sleep);
            self.wake.notify_all();
        }
    }

    /// Addresses `job` to worker `to`, which takes it at its next look for work (in its loop,
    /// or in any wait of a join, scope or install), after any job addressed to it before, and
    /// wakes it if it sleeps.
    pub(crate) fn post(&self, to: usize, job: JobRef) {
        let mb = &self.mailboxes[to];
        let mut jobs = lock(&mb.jobs);
        jobs.push_back(job);
        mb.pending.store(true, Ordering::Release);
        drop(jobs);
        self.notify_all();
    }

    /// Whether a job is addressed to worker `me` (one load).
    #[inline]
    pub(crate) fn has_mail(&self, me: usize) -> bool {
        self.mailboxes[me].pending.load(Ordering::Relaxed)
    }

    /// The oldest job addressed to worker `me`, if any.
    #[inline]
    pub(crate) fn take_mail(&self, me: usize) -> Option<JobRef> {
        let mb = &self.mailboxes[me];
        if !mb.pending.load(Ordering::Acquire) {
            return None;
        }
        let mut jobs = lock(&mb.jobs);
        let j = jobs.pop_front();
        mb.pending.store(!jobs.is_empty(), Ordering::Relaxed);
        j
    }

    /// Whether a shut-down runtime's workers may leave: the shutdown was signalled and every
    /// fire-and-forget job has finished (jobs of other kinds belong to a caller that waits for
    /// them, which the shutdown rules out: an `install` or scope borrows the runtime).
    #[inline]
    pub(crate) fn may_exit(&self) -> bool {
        self.shutdown.load(Ordering::Acquire) && self.live_spawns.load(Ordering::Acquire) == 0
    }

    pub(crate) fn inject(&self, job: JobRef) {
        let mut q = lock(&self.injector);
        q.push_back(job);
        self.injected.store(q.len(), Ordering::Relaxed);
        drop(q);
        self.notify_one();
    }

    pub(crate) fn take_injected(&self) -> Option<JobRef> {
        if self.injected.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut q = lock(&self.injector);
        let j = q.pop_front();
        self.injected.store(q.len(), Ordering::Relaxed);
        j
    }

    /// Returns whether the worker actually waited (it found no work on its second look);
    /// `before_wait` runs just before the wait, under the sleep lock (counters, traces).
    pub(crate) fn sleep_until_work(&self, me: usize, before_wait: impl FnOnce()) -> bool {
        let g = lock(&self.sleep);
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        #[cfg(loom)]
        let recheck = !self.broken_no_recheck;
        #[cfg(not(loom))]
        let recheck = true;
        let work = recheck && (self.has_work() || self.has_mail(me));
        // A shut-down runtime's worker sleeps while fire-and-forget jobs it may have to run
        // are still unfinished (one that blocks its worker may spawn the job it waits for);
        // the last one's end wakes it (`spawn::done`, Dekker pair through `live_spawns`).
        let waits = !(work || (recheck && self.may_exit()));
        if waits {
            before_wait();
            drop(self.wake.wait(g).unwrap_or_else(|e| e.into_inner()));
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        waits
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::queue::private_deque::StealRequests;
    use crate::runtime::job::JobHeader;
    use loom::thread;

    /// How the job reaches the sleeping worker in `inject_vs_sleep`.
    #[derive(Clone, Copy, PartialEq)]
    enum Via {
        Injector,
        Mailbox,
        /// Pushed onto another worker's public spawn deque (a `scope` spawn on the
        /// private-deque pool), which the sleeper steals from.
        SpawnDeque,
        /// Pushed onto a place's shared deque (a hinted spawn), which the sleeper takes.
        Place,
    }

    /// A worker that finds nothing and goes to sleep while a job arrives: whatever the
    /// interleaving, the worker wakes and takes the job.
    fn inject_vs_sleep(broken: bool, via: Via) {
        let mut builder = loom::model::Builder::new();
        builder.max_branches = 10_000;
        builder.check(move || {
            let table = Arc::clone(StealRequests::<JobRef>::set(1)[0].table());
            #[allow(unused_mut)]
            let mut reg = Registry::new(1, Stealers::Private(table));
            reg.broken_no_recheck = broken;
            let (spawner, thief) = crate::queue::chase_lev::deque::<JobRef>(2);
            reg.spawn_stealers = vec![thief].into();
            if via == Via::Place {
                reg.places = Some(Box::new(super::super::places::PlaceSet::new(
                    crate::places::Places::uniform(1, 1).unwrap(),
                    Default::default(),
                )));
            }
            let reg = Arc::new(reg);
            let header = Box::leak(Box::new(JobHeader::root()));
            // SAFETY: the header is leaked, so it lives for the whole model; it is only taken
            // from the queues, never run.
            let job = unsafe { JobRef::from_header(header) };
            let taken = Arc::new(AtomicBool::new(false));
            let (r2, t2) = (Arc::clone(&reg), Arc::clone(&taken));
            let worker = thread::spawn(move || loop {
                let got = match via {
                    Via::Mailbox => r2.take_mail(0),
                    Via::Injector => r2.take_injected(),
                    Via::Place => r2.places.as_ref().unwrap().deques[0].pop(),
                    Via::SpawnDeque => loop {
                        match r2.spawn_stealers[0].steal() {
                            crate::queue::chase_lev::Steal::Success(j) => break Some(j),
                            crate::queue::chase_lev::Steal::Empty => break None,
                            crate::queue::chase_lev::Steal::Retry => {}
                        }
                    },
                };
                if let Some(j) = got {
                    t2.store(true, Ordering::Release);
                    return j;
                }
                r2.sleep_until_work(0, || {});
            });
            match via {
                Via::Mailbox => reg.post(0, job),
                Via::Injector => reg.inject(job),
                Via::Place => {
                    // What `push_place` does from outside the runtime (`NOBODY`), with the
                    // wake-up spelled out.
                    reg.places.as_ref().unwrap().deques[0].push(Entry {
                        job,
                        hinted: true,
                        owner: NOBODY,
                        depth: 0,
                    });
                    reg.notify_one();
                }
                Via::SpawnDeque => {
                    // What `WorkerThread::push_spawn` does on the spawning worker.
                    if spawner.push(job) {
                        reg.notify_one();
                    }
                }
            }
            // Wait by spinning, not by joining: with a lost wake-up the model then reports an
            // endless spin instead of a deadlock of two blocked threads.
            while !taken.load(Ordering::Acquire) {
                thread::yield_now();
            }
            assert_eq!(worker.join().unwrap(), job);
        });
    }

    /// A spawn pushed onto a worker's public deque wakes a sleeping worker, which steals it.
    #[test]
    fn loom_a_spawn_on_a_public_deque_wakes_a_sleeping_worker() {
        inject_vs_sleep(false, Via::SpawnDeque);
    }

    /// Test of the test above: without the second look, the spawn's wake-up is lost.
    #[test]
    #[should_panic(expected = "maximum number of branches")]
    fn loom_finds_the_lost_spawn_wakeup_without_the_recheck() {
        inject_vs_sleep(true, Via::SpawnDeque);
    }

    /// A task pushed onto a place's shared deque wakes a sleeping worker, which takes it.
    #[test]
    fn loom_a_place_push_wakes_a_sleeping_worker() {
        inject_vs_sleep(false, Via::Place);
    }

    /// Test of the test above: without the second look, the place push's wake-up is lost.
    #[test]
    #[should_panic(expected = "maximum number of branches")]
    fn loom_finds_the_lost_place_wakeup_without_the_recheck() {
        inject_vs_sleep(true, Via::Place);
    }

    #[test]
    fn loom_an_injected_job_wakes_a_sleeping_worker() {
        inject_vs_sleep(false, Via::Injector);
    }

    /// Test of the test above: without the sleeper's second look for work, loom finds the
    /// lost wake-up.
    #[test]
    #[should_panic(expected = "maximum number of branches")]
    fn loom_finds_the_lost_wakeup_without_the_recheck() {
        inject_vs_sleep(true, Via::Injector);
    }

    /// A job posted to a sleeping worker's mailbox wakes it (a working phase's share).
    #[test]
    fn loom_a_posted_job_wakes_its_sleeping_addressee() {
        inject_vs_sleep(false, Via::Mailbox);
    }

    /// Test of the test above: without the second look, the post's wake-up is lost.
    #[test]
    #[should_panic(expected = "maximum number of branches")]
    fn loom_finds_the_lost_mailbox_wakeup_without_the_recheck() {
        inject_vs_sleep(true, Via::Mailbox);
    }
}
