//! `scope` and `Scope::spawn`: jobs that may borrow from the enclosing stack, counted by the
//! scope, which waits for all of them before it returns (the implicit sync at the end of a Cilk
//! task, Papakonstantinou, PARTEE (2015), §3.3).
//!
//! Design note. `pending` counts spawned jobs not yet finished. A spawn increments it before the
//! job is queued; the job's last access to the scope is the Release decrement in `job_done`,
//! after its closure ran and its panic (if any) was stored. The owner, after `op` returned,
//! waits (running other work, never sleeping) until an Acquire load reads zero, so everything
//! the jobs did happens before the scope returns. A job that spawns increments before its own
//! decrement, so the count cannot pass through zero while any job is unfinished; and since the
//! owner spins instead of sleeping on the counter, there is no wake-up to lose. A spawn belongs
//! to the scope's runtime: on a thread that is not one of its workers it is injected there
//! (whose `inject` wakes a sleeping worker). Loom models: `loom_models.rs`.

use std::any::Any;
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use crate::panics::{first_of, keep_first};
use crate::runtime::job::{JobRef, SpawnJob};
use crate::runtime::worker::WorkerThread;
use crate::runtime::BroadcastContext;
use crate::runtime::{global, Registry};
use crate::sync::{lock, Arc, AtomicUsize, Mutex, Ordering};

/// A scope for spawning jobs that may borrow anything outliving the scope.
pub struct Scope<'scope> {
    /// The runtime the scope runs on: its spawns run there, whichever thread spawns them.
    registry: Arc<Registry>,
    /// Spawned jobs not yet finished (see [`Scope::job_done`]).
    pending: AtomicUsize,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// `scope_fifo`: the spawned jobs, oldest first. Each spawn queues its job here and a
    /// *ticket* on the deque; whoever runs a ticket (this worker newest-first, or a thief)
    /// runs the oldest job here, so the scope's own jobs start in spawn order (rayon's design
    /// for `scope_fifo`). One ticket per job, so every ticket finds one.
    fifo: Option<Mutex<VecDeque<JobRef>>>,
    /// Invariant in `'scope`.
    marker: PhantomData<&'scope mut &'scope ()>,
    /// Loom-only switch for a test of the tests: a spawned job that counts itself done before
    /// it runs.
    #[cfg(loom)]
    pub(super) broken_early_decrement: bool,
}

/// Runs `op` with a scope and waits for every job spawned in it (also if `op` or a job
/// panics; the first panic is then resumed here). Spawns may borrow anything that outlives
/// the scope, and may spawn more in turn:
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// let data: Vec<u64> = (1..=1000).collect();
/// let total = AtomicU64::new(0);
/// taskpools::forkjoin::scope(|s| {
///     for chunk in data.chunks(100) {
///         let total = &total;
///         s.spawn(move |_| {
///             total.fetch_add(chunk.iter().sum::<u64>(), Ordering::Relaxed);
///         });
///     }
/// });
/// assert_eq!(total.into_inner(), 500_500);
/// ```
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    match WorkerThread::current() {
        Some(w) => scope_on(w, op),
        None => global().install(|| scope(op)),
    }
}

/// As [`scope`], but the scope's spawns start in the order they were spawned in, whichever
/// worker runs them (rayon's `scope_fifo`): each spawn queues its job in the scope and a
/// ticket on the worker's deque, and running a ticket runs the scope's oldest waiting job. For
/// sweeps over memory in spawn order (blocked stencils, a loop of independent blocks), where
/// the default newest-first order walks memory backwards. Costs a lock per spawn and per start;
/// nested joins and scopes inside the spawns keep their own order.
///
/// ```
/// let order = std::sync::Mutex::new(Vec::new());
/// let rt = taskpools::forkjoin::Runtime::new(1)?;
/// rt.install(|| {
///     taskpools::forkjoin::scope_fifo(|s| {
///         for i in 0..4 {
///             let order = &order;
///             s.spawn(move |_| order.lock().unwrap().push(i));
///         }
///     })
/// });
/// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3]);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    match WorkerThread::current() {
        Some(w) => scope_on_with(w, op, true),
        None => global().install(|| scope_fifo(op)),
    }
}

/// As [`scope`], but `op` runs on the calling thread, whatever it is (rayon's
/// `in_place_scope`): the spawns go to the calling worker's runtime, or, from a thread that is
/// not a worker, to the global runtime, and this waits for them. On a worker it is [`scope`];
/// elsewhere the calling thread does not run the spawns, it waits for them (briefly spinning,
/// then sleeping in growing steps of at most 100 µs), and `op` may borrow what is not `Send`.
///
/// ```
/// let local = std::cell::Cell::new(1); // not `Sync`: `op` can use it, the spawns cannot
/// let mut parts = [0u64; 4];
/// taskpools::forkjoin::in_place_scope(|s| {
///     local.set(local.get() + 1);
///     for (i, p) in parts.iter_mut().enumerate() {
///         s.spawn(move |_| *p = i as u64 * 2);
///     }
/// });
/// assert_eq!((local.get(), parts), (2, [0, 2, 4, 6]));
/// ```
pub fn in_place_scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    in_place(None, op, false)
}

/// [`in_place_scope`] whose spawns start in spawn order, as [`scope_fifo`]'s (rayon's
/// `in_place_scope_fifo`).
pub fn in_place_scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    in_place(None, op, true)
}

/// An in-place scope whose spawns go to the runtime of `registry` (default: the calling
/// worker's, else the global one). A worker (of that runtime or of another) waits for the
/// spawns running its own runtime's work; any other thread waits without running anything.
pub(super) fn in_place<'scope, OP, R>(registry: Option<&Arc<Registry>>, op: OP, fifo: bool) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    let worker = WorkerThread::current();
    let registry = match (registry, worker) {
        (Some(r), _) => Arc::clone(r),
        (None, Some(w)) => Arc::clone(&w.registry),
        (None, None) => Arc::clone(&global().registry),
    };
    let mut s = Scope::new(registry);
    if fifo {
        s.fifo = Some(Mutex::new(VecDeque::new()));
    }
    let r = catch_unwind(AssertUnwindSafe(|| op(&s)));
    match worker {
        Some(w) => w.wait_until(|| s.all_done()),
        None => {
            // Not a worker: nothing to run meanwhile. The spawns were injected into the
            // runtime; wait for the count, without a wake-up to lose.
            let mut pause = std::time::Duration::from_micros(1);
            let mut spins = 0u32;
            while !s.all_done() {
                if spins < 64 {
                    spins += 1;
                    std::hint::spin_loop();
                } else {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(std::time::Duration::from_micros(100));
                }
            }
        }
    }
    let spawned_panic = lock(&s.panic).take();
    match (r, spawned_panic) {
        (Ok(r), None) => r,
        // The closure's panic first; a spawn's is dropped before it is resumed.
        (r, spawned) => resume_unwind(first_of(r.err(), spawned).expect("a panic")),
    }
}

fn scope_on<'scope, OP, R>(w: &WorkerThread, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    scope_on_with(w, op, false)
}

fn scope_on_with<'scope, OP, R>(w: &WorkerThread, op: OP, fifo: bool) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    let mut s = Scope::new(Arc::clone(&w.registry));
    if fifo {
        s.fifo = Some(Mutex::new(VecDeque::new()));
    }
    let r = catch_unwind(AssertUnwindSafe(|| op(&s)));
    w.wait_until(|| s.all_done());
    let spawned_panic = lock(&s.panic).take();
    match (r, spawned_panic) {
        (Ok(r), None) => r,
        // The closure's panic first; a spawn's is dropped before it is resumed.
        (r, spawned) => resume_unwind(first_of(r.err(), spawned).expect("a panic")),
    }
}

impl<'scope> Scope<'scope> {
    pub(super) fn new(registry: Arc<Registry>) -> Self {
        Scope {
            registry,
            pending: AtomicUsize::new(0),
            panic: Mutex::new(None),
            fifo: None,
            marker: PhantomData,
            #[cfg(loom)]
            broken_early_decrement: false,
        }
    }

    /// Spawns `f` into the scope; the scope waits for it before it returns.
    ///
    /// The job belongs to the scope's runtime: on one of its workers it goes onto that
    /// worker's deque; on any other thread (a worker of another runtime inside an
    /// [`install`](super::Runtime::install), or a plain thread the scope was lent to) it is injected
    /// into the scope's runtime, whose workers pick it up.
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.spawn_to(None, f);
    }

    /// Spawns `f` with a locality hint: it goes to `place`'s shared deque, where that place's
    /// workers take it (another place's idle workers may still steal it; see
    /// [`places`](crate::places)). On a runtime without places, or for a place it does not
    /// have, nothing is spawned and the error says why
    /// ([`Error::NoSuchPlace`](crate::Error::NoSuchPlace)).
    pub fn spawn_at<F>(&self, place: crate::places::PlaceId, f: F) -> Result<(), crate::Error>
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        let places = self.registry.places.as_ref().map_or(0, |p| p.len());
        if place.0 >= places {
            return Err(crate::Error::NoSuchPlace {
                place: place.0,
                places,
            });
        }
        self.spawn_to(Some(place.0), f);
        Ok(())
    }

    /// Spawns `f` once on every worker of the scope's runtime (rayon's `Scope::spawn_broadcast`):
    /// each call is a job addressed to its worker, which runs it at its next look for work; the
    /// scope waits for all of them.
    ///
    /// # Panics
    /// On one of the runtime's workers while a working phase holds the runtime (the phase's
    /// workers would run these jobs only after the phase, which may be waiting for this
    /// scope), with [`Error::PhaseBusy`](crate::Error::PhaseBusy)'s message.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let rt = taskpools::Runtime::new(3)?;
    /// let seen = AtomicUsize::new(0);
    /// rt.scope(|s| s.spawn_broadcast(|_, ctx| {
    ///     seen.fetch_add(1 << ctx.index(), Ordering::Relaxed);
    /// }));
    /// assert_eq!(seen.into_inner(), 0b111);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn spawn_broadcast<F>(&self, f: F)
    where
        F: Fn(&Scope<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        // The scope will wait for these jobs: not on a worker while a working phase holds the
        // runtime (the phase's workers take no mail until it ends, and it may wait for this
        // scope); from elsewhere, once the phase has ended (see `runtime/broadcast.rs`).
        if let Err(e) = crate::runtime::broadcast::wait_for_phases(&self.registry) {
            panic!("Scope::spawn_broadcast: {e}");
        }
        let f = std::sync::Arc::new(f);
        let n = self.registry.threads;
        for i in 0..n {
            self.pending.fetch_add(1, Ordering::Relaxed);
            let scope_ptr = ScopePtr(self as *const Scope<'scope>);
            let f = std::sync::Arc::clone(&f);
            let job = move || {
                let sp = scope_ptr;
                // SAFETY: as in `spawn_to`: the scope waits for this job before it ends.
                let s = unsafe { &*sp.0 };
                // `move`: the job's handle on `f` goes (and `f` with the last one) inside
                // `run_spawned`, before the job counts itself done and the scope may end.
                s.run_spawned(move |s| f(s, BroadcastContext::new(i, n)));
            };
            // SAFETY: as in `spawn_to`: the scope waits for `pending` to reach zero, so the job
            // runs once and before anything it borrows goes away.
            let job = unsafe { SpawnJob::into_job_ref(job) };
            self.registry.post(i, job);
        }
    }

    fn spawn_to<F>(&self, place: Option<usize>, f: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.pending.fetch_add(1, Ordering::Relaxed);
        let scope_ptr = ScopePtr(self as *const Scope<'scope>);
        let job = move || {
            let sp = scope_ptr;
            // SAFETY: the scope waits for `pending` to reach zero before it is dropped, and
            // `job_done` decrements it as this job's very last access to the scope.
            let s = unsafe { &*sp.0 };
            s.run_spawned(f);
        };
        // SAFETY: the scope waits for `pending` to reach zero, that is for this job to have
        // run, before it returns, so the job runs once and before anything it borrows (which
        // outlives `'scope`) goes away.
        let mut job = unsafe { SpawnJob::into_job_ref(job) };
        if let Some(q) = &self.fifo {
            lock(q).push_back(job);
            let ticket = move || {
                let sp = scope_ptr;
                // SAFETY: this ticket's job is one of the scope's `pending` jobs and is still
                // in the queue (one ticket per job, each ticket takes one), so the scope is
                // alive; the ticket does not touch the scope after running the job, whose
                // `job_done` may end it.
                let s = unsafe { &*sp.0 };
                let j = lock(s.fifo.as_ref().expect("a fifo scope"))
                    .pop_front()
                    .expect("one queued job per ticket");
                // SAFETY: taken from the queue once, so executed once; it is a spawned job
                // owning its storage.
                unsafe { j.execute() };
            };
            // SAFETY: as for the job: the ticket runs before the scope can end (its job, which
            // the scope waits for, runs only through a ticket) and borrows nothing else.
            job = unsafe { SpawnJob::into_job_ref(ticket) };
        }
        match (place, WorkerThread::current()) {
            (Some(p), _) => self.registry.push_place(p, job, true),
            (None, Some(w)) if Arc::ptr_eq(&w.registry, &self.registry) => w.push_spawn(job),
            (None, _) => match &self.registry.places {
                Some(ps) if ps.policy.unhinted == crate::places::Unhinted::RoundRobin => {
                    self.registry.push_place(ps.next_outside(), job, false)
                }
                _ => self.registry.inject(job),
            },
        }
    }

    /// The body of a spawned job: runs `f`, keeps its panic, then counts the job done.
    fn run_spawned<F: FnOnce(&Scope<'scope>)>(&self, f: F) {
        #[cfg(loom)]
        if self.broken_early_decrement {
            // Planted bug for the loom model: the owner may see zero before `f`'s effects.
            self.job_done();
            let _ = catch_unwind(AssertUnwindSafe(|| f(self)));
            return;
        }
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(self))) {
            // Never unwinds: `job_done` must run.
            keep_first(&self.panic, p);
        }
        self.job_done();
    }

    /// Counts one spawned job finished: Release, so that everything the job did (and the
    /// panic it stored) happens before the owner's Acquire load in [`all_done`] that sees
    /// zero. The job's last access to the scope, which may be freed right after.
    ///
    /// [`all_done`]: Scope::all_done
    #[inline]
    fn job_done(&self) {
        self.pending.fetch_sub(1, Ordering::Release);
    }

    /// Whether every spawned job has finished. Only the owner's wait asks, after `op`
    /// returned, so no new spawn can start from the owner's side; a running job can still
    /// spawn, but it increments before it decrements its own count, so the sum never passes
    /// through zero while a job is unfinished.
    #[inline]
    pub(super) fn all_done(&self) -> bool {
        self.pending.load(Ordering::Acquire) == 0
    }
}

struct ScopePtr<'scope>(*const Scope<'scope>);
// SAFETY: the scope is `Sync` in effect (atomics and a mutex) and outlives every job.
unsafe impl Send for ScopePtr<'_> {}
impl Clone for ScopePtr<'_> {
    fn clone(&self) -> Self {
        *self
    }
}
impl Copy for ScopePtr<'_> {}
