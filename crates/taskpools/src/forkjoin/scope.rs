//! `scope` and `Scope::spawn`: jobs that may borrow from the enclosing stack, counted by the
//! scope, which waits for all of them before it returns (the implicit sync at the end of a Cilk
//! task, Papakonstantinou, PARTEE (2015), §3.3).
//!
//! Design note. A scope counts its spawned jobs not yet finished in two parts: `local`, a
//! plain cell that only the scope's owner (the worker that opened it and waits for it) reads or
//! writes, for the spawns it makes and the jobs it runs itself; and `remote`, an atomic, for
//! spawns made and jobs finished on any other thread. The common case of a fine-grained tree,
//! where the owner runs its own children, thus costs no read-modify-write at all; a stolen
//! child costs one on the thief. A job's last access to the scope is its decrement, after its
//! closure ran and its panic (if any) was stored: Release on `remote`, or on the owner's own
//! thread. The owner, after `op` returned, waits (running other work, never sleeping) until
//! `local + remote` reads zero, `remote` with Acquire, so everything the jobs did happens
//! before the scope returns. The sum cannot read zero while a job is unfinished: a job that
//! spawns counts the child before it counts itself done, on one thread, and on `remote` both
//! are modifications of one atomic in that order; a child counted on `remote` and then run by
//! the owner was handed over through a deque, so the owner's later read sees its count. Every
//! finish the owner sees is thus matched by a spawn it sees, and an unfinished job keeps the
//! sum above zero. Since the owner spins instead of sleeping on the counts, there is no wake-up
//! to lose. A spawn belongs to the scope's runtime: on a thread that is not one of its workers
//! it is injected there (whose `inject` wakes a sleeping worker). Loom models:
//! `loom_models.rs`.

use std::any::Any;
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::cancel::{Ended, Stop};
use crate::panics::keep_first;
use crate::runtime::job::{JobRef, SpawnJob};
use crate::runtime::worker::WorkerThread;
use crate::runtime::BroadcastContext;
use crate::runtime::{global, Registry};
use crate::sync::{lock, Arc, AtomicBool, AtomicIsize, Mutex, Ordering, UnsafeCell};

/// A scope for spawning jobs that may borrow anything outliving the scope.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// // Spawns may borrow from outside the scope and spawn more in turn.
/// fn visit<'a>(s: &taskpools::forkjoin::Scope<'a>, depth: u32, nodes: &'a AtomicUsize) {
///     nodes.fetch_add(1, Ordering::Relaxed);
///     if depth > 0 {
///         for _ in 0..2 {
///             s.spawn(move |s| visit(s, depth - 1, nodes));
///         }
///     }
/// }
/// let rt = taskpools::Runtime::new(2)?;
/// let nodes = AtomicUsize::new(0);
/// rt.scope(|s| visit(s, 6, &nodes));
/// assert_eq!(nodes.into_inner(), (1 << 7) - 1);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct Scope<'scope> {
    /// The runtime the scope runs on: its spawns run there, whichever thread spawns them. Kept
    /// alive by the frame that opened the scope ([`Scope::with`]).
    registry: std::ptr::NonNull<Registry>,
    /// The thread that opened the scope and waits for it, when it is a worker: only it touches
    /// `local` (module docs).
    owner: Owner,
    /// Spawns minus finished jobs counted by the owner on its own thread.
    local: UnsafeCell<isize>,
    /// Spawns minus finished jobs counted on other threads.
    remote: AtomicIsize,
    /// Whether `panic` holds a payload: the owner locks it only then.
    panicked: AtomicBool,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Cancelled, or failed with an error: spawns not yet started are skipped (`cancel.rs`).
    pub(super) stop: Stop,
    /// `scope_fifo`: the spawned jobs, oldest first. Each spawn queues its job here and a
    /// *ticket* on the deque; whoever runs a ticket (this worker newest-first, or a thief)
    /// runs the oldest job here, so the scope's own jobs start in spawn order (rayon's design
    /// for `scope_fifo`). One ticket per job, so every ticket finds one.
    fifo: Option<Box<Mutex<VecDeque<JobRef>>>>,
    /// Invariant in `'scope`.
    marker: PhantomData<&'scope mut &'scope ()>,
    /// Loom-only switch for a test of the tests: a spawned job that counts itself done before
    /// it runs.
    #[cfg(loom)]
    pub(super) broken_early_decrement: bool,
    /// Loom-only switch for a test of the tests: the owner reads `remote` without Acquire.
    #[cfg(loom)]
    pub(super) broken_relaxed_wait: bool,
}

// SAFETY: `local` is read and written only on the owner's thread (`Owner::is` in
// `count_spawn` and `job_done`; `all_done` is called by the owner only), `registry`
// points to a runtime that outlives the scope and is shared by design (`Registry` is `Sync`),
// and the rest are atomics and locks. No scope is ever moved by value across threads: users
// only get `&Scope`.
unsafe impl Send for Scope<'_> {}
// SAFETY: as for `Send`.
unsafe impl Sync for Scope<'_> {}

/// The owner of a scope: a worker, by the address of its state (unique among live threads),
/// or none (a thread that is not a worker: every count goes to `remote`). Under loom, whose
/// model threads share one OS thread's thread-locals, a model thread's id.
#[cfg(not(loom))]
#[derive(Clone, Copy, PartialEq)]
pub(super) struct Owner(*const WorkerThread);

#[cfg(not(loom))]
impl Owner {
    #[inline]
    fn current() -> Owner {
        Owner(WorkerThread::current().map_or(std::ptr::null(), |w| w as *const _))
    }
    /// The worker `w`, which must be the calling thread's.
    #[inline]
    fn of(w: &WorkerThread) -> Owner {
        Owner(w)
    }
    /// Whether `me`, the calling thread's worker (if any), is the owner.
    #[inline]
    fn is(self, me: Option<&WorkerThread>) -> bool {
        me.is_some_and(|w| std::ptr::eq(w, self.0))
    }
    #[inline]
    fn is_set(self) -> bool {
        !self.0.is_null()
    }
}

#[cfg(loom)]
#[derive(Clone, Copy, PartialEq)]
pub(super) struct Owner(Option<loom::thread::ThreadId>);

#[cfg(loom)]
impl Owner {
    pub(super) fn current() -> Owner {
        Owner(Some(loom::thread::current().id()))
    }
    pub(super) fn none() -> Owner {
        Owner(None)
    }
    fn of(_: &WorkerThread) -> Owner {
        Owner::current()
    }
    fn is(self, _me: Option<&WorkerThread>) -> bool {
        self.0.is_some() && Owner::current() == self
    }
    fn is_set(self) -> bool {
        self.0.is_some()
    }
}

/// Runs `op` with a scope and waits for every job spawned in it (also if `op` or a job
/// panics; the first panic is then resumed here; a [`try_spawn`](Scope::try_spawn) job's
/// error becomes a panic with its message, and a [`cancel`](Scope::cancel)led scope returns
/// `op`'s value: [`try_scope`](super::try_scope) returns either as a value). Spawns may
/// borrow anything that outlives the scope, and may spawn more in turn:
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
///
/// ```
/// use std::sync::Mutex;
///
/// let rt = taskpools::Runtime::new(1)?;
/// let order = Mutex::new(Vec::new());
/// rt.install(|| {
///     taskpools::forkjoin::in_place_scope_fifo(|s| {
///         for i in 0..4 {
///             let order = &order;
///             s.spawn(move |_| order.lock().unwrap().push(i));
///         }
///     })
/// });
/// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3]);
/// # Ok::<(), taskpools::Error>(())
/// ```
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
    // SAFETY: `registry` is dropped after `s`, which is declared after it.
    let mut s = unsafe { Scope::with(&registry, Owner::current()) };
    if fifo {
        s.fifo = Some(Box::new(Mutex::new(VecDeque::new())));
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
    s.finish(r)
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
    run_on(w, op, fifo).0.into_value("forkjoin")
}

/// A scope on the worker `w`: how it ended, and how many spawns it skipped.
pub(super) fn run_on<'scope, OP, R>(w: &WorkerThread, op: OP, fifo: bool) -> (Ended<R>, usize)
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    let mut s = Scope::on_worker(w);
    if fifo {
        s.fifo = Some(Box::new(Mutex::new(VecDeque::new())));
    }
    let r = catch_unwind(AssertUnwindSafe(|| op(&s)));
    w.wait_until(|| s.all_done());
    (s.end(r), s.stop.skipped())
}

impl<'scope> Scope<'scope> {
    /// A scope owned by the worker `w` on its own runtime.
    #[inline]
    fn on_worker(w: &WorkerThread) -> Self {
        // SAFETY: `w` keeps its runtime alive for as long as it is a worker, longer than any
        // scope it opens and waits for.
        unsafe { Scope::with(&w.registry, Owner::of(w)) }
    }

    /// A scope on `registry` whose owner is `owner`.
    ///
    /// # Safety
    /// `registry` outlives the scope.
    #[inline]
    pub(super) unsafe fn with(registry: &Registry, owner: Owner) -> Self {
        Scope {
            registry: std::ptr::NonNull::from(registry),
            owner,
            local: UnsafeCell::new(0),
            remote: AtomicIsize::new(0),
            panicked: AtomicBool::new(false),
            panic: Mutex::new(None),
            stop: Stop::new(),
            fifo: None,
            marker: PhantomData,
            #[cfg(loom)]
            broken_early_decrement: false,
            #[cfg(loom)]
            broken_relaxed_wait: false,
        }
    }

    /// The scope's runtime.
    #[inline]
    fn registry(&self) -> &Registry {
        // SAFETY: the runtime outlives the scope (`Scope::with`'s contract); jobs reach this
        // only through the scope, which waits for them.
        unsafe { self.registry.as_ref() }
    }

    /// After every job has finished: `op`'s result, or the first panic resumed (the
    /// closure's before a spawn's, the other one dropped first), or a job's error as a panic;
    /// a cancelled scope returns `op`'s result.
    #[inline(always)]
    fn finish<R>(&self, r: std::thread::Result<R>) -> R {
        self.end(r).into_value("forkjoin")
    }

    /// After every job has finished: how the scope ended (`cancel.rs`).
    #[inline(always)]
    pub(super) fn end<R>(&self, r: std::thread::Result<R>) -> Ended<R> {
        // Ordered by the wait's Acquire read of the counts (module docs).
        let spawned_panic = if self.panicked.load(Ordering::Relaxed) {
            lock(&self.panic).take()
        } else {
            None
        };
        self.stop.end(r, spawned_panic)
    }

    /// Spawns `f` into the scope; the scope waits for it before it returns.
    ///
    /// The job belongs to the scope's runtime: on one of its workers it goes onto that
    /// worker's deque; on any other thread (a worker of another runtime inside an
    /// [`install`](super::Runtime::install), or a plain thread the scope was lent to) it is injected
    /// into the scope's runtime, whose workers pick it up.
    ///
    /// ```
    /// let rt = taskpools::Runtime::new(2)?;
    /// let words = ["fork", "join", "scope"];
    /// let mut lens = [0usize; 3];
    /// rt.scope(|s| {
    ///     for (w, l) in words.iter().zip(lens.iter_mut()) {
    ///         s.spawn(move |_| *l = w.len());
    ///     }
    /// });
    /// assert_eq!(lens, [4, 4, 5]);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
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
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use taskpools::places::{current_place, PlaceId, Places};
    ///
    /// let rt = taskpools::Runtime::builder().places(Places::parse("2x1")?).build()?;
    /// let ran_at = Mutex::new(Vec::new());
    /// rt.scope(|s| {
    ///     for p in 0..2 {
    ///         let ran_at = &ran_at;
    ///         s.spawn_at(PlaceId(p), move |_| ran_at.lock().unwrap().push(current_place()))
    ///             .unwrap();
    ///     }
    ///     // A place the runtime does not have: nothing is spawned.
    ///     assert!(s.spawn_at(PlaceId(2), |_| ()).is_err());
    /// });
    /// // A hint is not a binding (an idle place may steal), but every spawn ran exactly once.
    /// assert_eq!(ran_at.into_inner().unwrap().len(), 2);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn spawn_at<F>(&self, place: crate::places::PlaceId, f: F) -> Result<(), crate::Error>
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        let places = self.registry().places.as_ref().map_or(0, |p| p.len());
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
        if let Err(e) = crate::runtime::broadcast::wait_for_phases(self.registry()) {
            panic!("Scope::spawn_broadcast: {e}");
        }
        let f = std::sync::Arc::new(f);
        let n = self.registry().threads;
        let me = WorkerThread::current();
        for i in 0..n {
            self.count_spawn(me);
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
            // SAFETY: as in `spawn_to`: the scope waits for its counts to reach zero, so the job
            // runs once and before anything it borrows goes away.
            let job = unsafe { SpawnJob::into_job_ref(job) };
            self.registry().post(i, job);
        }
    }

    fn spawn_to<F>(&self, place: Option<usize>, f: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        let me = WorkerThread::current();
        self.count_spawn(me);
        let scope_ptr = ScopePtr(self as *const Scope<'scope>);
        let job = move || {
            let sp = scope_ptr;
            // SAFETY: the scope waits for its counts to reach zero before it is dropped, and
            // `job_done` counts this job as its very last access to the scope.
            let s = unsafe { &*sp.0 };
            s.run_spawned(f);
        };
        // SAFETY: the scope waits for its counts to reach zero, that is for this job to have
        // run, before it returns, so the job runs once and before anything it borrows (which
        // outlives `'scope`) goes away.
        let mut job = unsafe { SpawnJob::into_job_ref(job) };
        if let Some(q) = &self.fifo {
            lock(q).push_back(job);
            let ticket = move || {
                let sp = scope_ptr;
                // SAFETY: this ticket's job is one of the scope's counted jobs and is still
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
        let reg = self.registry();
        match (place, me) {
            (Some(p), _) => reg.push_place(p, job, true),
            (None, Some(w)) if std::ptr::eq(&*w.registry, reg) => w.push_spawn(job),
            (None, _) => match &reg.places {
                Some(ps) if ps.policy.unhinted == crate::places::Unhinted::RoundRobin => {
                    reg.push_place(ps.next_outside(), job, false)
                }
                _ => reg.inject(job),
            },
        }
    }

    /// The body of a spawned job: runs `f`, keeps its panic, then counts the job done.
    fn run_spawned<F: FnOnce(&Scope<'scope>)>(&self, f: F) {
        #[cfg(loom)]
        if self.broken_early_decrement {
            // Planted bug for the loom model: the owner may see zero before `f`'s effects.
            self.job_done();
            if self.stop.is_stopped() {
                self.stop.skip();
            } else {
                let _ = catch_unwind(AssertUnwindSafe(|| f(self)));
            }
            return;
        }
        if self.stop.is_stopped() {
            // Cancelled before it started: dropped unrun. Its captures' destructors are user
            // code, kept like a panic of the job.
            if let Err(p) = catch_unwind(AssertUnwindSafe(move || drop(f))) {
                keep_first(&self.panic, p);
                self.panicked.store(true, Ordering::Relaxed);
            }
            self.stop.skip();
        } else if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(self))) {
            // Never unwinds: `job_done` must run.
            keep_first(&self.panic, p);
            self.panicked.store(true, Ordering::Relaxed);
        }
        self.job_done();
    }

    /// Counts one spawn, before its job is queued: on the owner's thread in `local`, elsewhere
    /// in `remote` (Relaxed: the job reaches whoever runs it through a queue, which orders it).
    #[inline]
    fn count_spawn(&self, me: Option<&WorkerThread>) {
        if self.owner.is(me) {
            // SAFETY: only the owner's thread touches `local`, and not re-entrantly.
            self.local.with_mut(|l| unsafe { *l += 1 });
        } else {
            self.remote.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts one spawned job finished: on the owner's thread in `local`; elsewhere in
    /// `remote` with Release, so that everything the job did (and the panic it stored) happens
    /// before the owner's Acquire read in [`all_done`] that sees the counts sum to zero. The
    /// job's last access to the scope, which may be freed right after.
    ///
    /// [`all_done`]: Scope::all_done
    #[inline]
    fn job_done(&self) {
        if self.owner.is(WorkerThread::current()) {
            // SAFETY: only the owner's thread touches `local`, and not re-entrantly.
            self.local.with_mut(|l| unsafe { *l -= 1 });
        } else {
            self.remote.fetch_sub(1, Ordering::Release);
        }
    }

    /// Whether every spawned job has finished. Only the owner's wait asks (on the owner's
    /// thread, which alone may read `local`), after `op`
    /// returned, so no new spawn can start from the owner's side; a running job can still
    /// spawn, but it counts the spawn before it counts itself done, so the sum never reads
    /// zero while a job is unfinished (module docs).
    #[inline]
    pub(super) fn all_done(&self) -> bool {
        #[cfg(loom)]
        let order = if self.broken_relaxed_wait {
            Ordering::Relaxed
        } else {
            Ordering::Acquire
        };
        #[cfg(not(loom))]
        let order = Ordering::Acquire;
        let remote = self.remote.load(order);
        let local = if self.owner.is_set() {
            // SAFETY: only the owner's thread touches `local`, and only the owner calls this.
            self.local.with(|l| unsafe { *l })
        } else {
            0
        };
        local + remote == 0
    }
}

struct ScopePtr<'scope>(*const Scope<'scope>);
// SAFETY: the scope is `Sync` (see its `unsafe impl`: atomics, a mutex, and a cell only its
// owner's thread touches) and outlives every job.
unsafe impl Send for ScopePtr<'_> {}
impl Clone for ScopePtr<'_> {
    fn clone(&self) -> Self {
        *self
    }
}
impl Copy for ScopePtr<'_> {}
