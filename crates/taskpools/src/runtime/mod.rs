//! The runtime: one persistent set of worker threads that every front end shares (the
//! working phase of [`crate::phase`], fork-join in [`crate::forkjoin`]). Workers are started
//! once, with their thread count, pinning, stack size and names, and reused for every phase,
//! join, scope, spawn and broadcast until the runtime is dropped.
//!
//! Each worker owns a deque of the runtime's [`Pool`] for fork-join jobs, and a mailbox for
//! work addressed to it. A worker looks for work in that order: its mailbox, its own deque,
//! a random victim's deque (stealing), then the injector that holds work from threads outside
//! the runtime. It sleeps when it finds nothing for a while (the lost-wake-up argument is in
//! `registry.rs`).
//!
//! A working phase runs as a *broadcast*: one share per worker, posted to the workers'
//! mailboxes; each worker runs the phase loop of the pool family with its own pool-local
//! handle, and the phase ends when its termination detection says so. While a worker runs its
//! share it declines fork-join steal requests (it is not at a fork-join poll point), and a
//! `join` inside a task runs on that worker's own deque, so front ends nest without blocking
//! a worker:
//!
//! ```
//! use taskpools::{Builder, Ctx, Runtime, Task};
//!
//! struct Fib(u32);
//! impl Task<u64> for Fib {
//!     fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
//!         fn fib(n: u32) -> u64 {
//!             if n < 2 { return n as u64; }
//!             let (a, b) = taskpools::forkjoin::join(|| fib(n - 1), || fib(n - 2));
//!             a + b
//!         }
//!         // A join inside a working-phase task runs on this worker.
//!         *ctx.local() += fib(self.0);
//!     }
//! }
//!
//! let rt = Runtime::new(2)?;
//! for _ in 0..3 {
//!     // Each phase reuses the runtime's two workers: no thread is started here.
//!     let (_report, sum) = Builder::new()
//!         .threads(2)
//!         .runtime(&rt)
//!         .run_reduce(|_| 0u64, (10..14).map(Fib), |a, b| a + b)?;
//!     assert_eq!(sum, 55 + 89 + 144 + 233);
//! }
//! # Ok::<(), taskpools::Error>(())
//! ```
//!
//! One broadcast holds a runtime's workers at a time. A second one started from outside the
//! runtime waits for the first; one started on a worker (inside a fork-join task, or inside a
//! task of the running phase) cannot wait — the worker may be one the first needs — and
//! returns [`Error::PhaseBusy`](crate::Error::PhaseBusy) instead.

pub(crate) mod broadcast;
mod builder;
mod counters;
pub(crate) mod frames;
pub(crate) mod job;
pub(crate) mod liveness;
pub(crate) mod places;
mod registry;
pub mod trace;
pub(crate) mod worker;

pub use builder::RuntimeBuilder;
pub use counters::WorkerCounters;
pub use crate::places::current_place;
pub use liveness::{yield_now, Yield, STALL_REPORT};

use std::cell::Cell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::OnceLock;
use std::thread::JoinHandle;

use crate::places::cores::process_cores;
use crate::places::set_current_place;
use crate::queue::chase_lev;
use crate::queue::private_deque::StealRequests;
use crate::sync::{lock, Arc, Ordering};
use job::{JobRef, LockJob, StackJob};
pub(crate) use registry::Registry;
pub(crate) use registry::Stealers;
use worker::{LocalDeque, PrivateFrames, WorkerThread, CURRENT, EXPOSED};

/// The work-stealing pool that a runtime's workers share for fork-join jobs: which deque each worker owns and
/// how thieves take from it. Chosen when the runtime is built, so that one fork-join program
/// can be compared across pools.
///
/// Names are unique across the crate: `private-public`/`dq8` is the task-pool family's
/// [`PoolKind::PrivatePublic`](crate::PoolKind::PrivatePublic), a different structure, and is
/// refused here with [`Error::RenamedPool`](crate::Error::RenamedPool) naming
/// `private-deque` (what this front end called `private-public` before).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pool {
    /// Private deques with steal requests (`private-deque`, alias `acr13`): each worker's
    /// frame stack is private, the owner pushes and pops without atomics or fences; a thief
    /// sends a steal request, which the owner answers with its oldest job at its next fork or
    /// wait (Acar, Charguéraud & Rainey, "Scheduling parallel programs by work stealing with
    /// private deques", PPoPP 2013). See [`crate::queue::private_deque`].
    PrivateDeque,
    /// One Chase–Lev deque per worker (`chase-lev`, alias `dcwq`): thieves take the oldest job
    /// directly; the owner's pop pays a store-load fence (seed 002 §3.2). The same deque as
    /// [`PoolKind::ChaseLev`](crate::PoolKind::ChaseLev).
    ChaseLev,
}

impl Pool {
    /// The old name of [`Pool::PrivateDeque`]: `private-public` (`dq8`) names the pool
    /// family's private/public blocks ([`PoolKind::PrivatePublic`](crate::PoolKind)), a
    /// different structure.
    #[deprecated(note = "renamed to Pool::PrivateDeque (`private-deque`, alias `acr13`)")]
    #[allow(non_upper_case_globals)]
    pub const PrivatePublic: Pool = Pool::PrivateDeque;

    /// Every pool, the default first.
    pub const ALL: [Pool; 2] = [Pool::PrivateDeque, Pool::ChaseLev];

    /// Names this front end used before that now mean something else, with the pool they
    /// meant: refused by [`Pool::from_name`] with a message naming the new name.
    pub const RENAMED: [(&'static str, Pool); 2] = [
        ("private-public", Pool::PrivateDeque),
        ("dq8", Pool::PrivateDeque),
    ];

    /// The descriptive name.
    pub fn name(self) -> &'static str {
        match self {
            Pool::PrivateDeque => "private-deque",
            Pool::ChaseLev => "chase-lev",
        }
    }

    /// The paper-style alias (`acr13`: Acar, Charguéraud & Rainey 2013; `dcwq`: seed 002).
    pub fn alias(self) -> &'static str {
        match self {
            Pool::PrivateDeque => "acr13",
            Pool::ChaseLev => "dcwq",
        }
    }

    /// One line for `taskpools list`.
    pub fn description(self) -> &'static str {
        match self {
            Pool::PrivateDeque => {
                "private frame stack per worker; thieves send steal requests (default)"
            }
            Pool::ChaseLev => "lock-free Chase-Lev deque per worker; thieves take the oldest job",
        }
    }

    /// The pool with this name or alias. The other members of the task-pool family are not
    /// work-stealing deques and are refused with a list of the ones that are; the old names
    /// `private-public`/`dq8` are refused with [`Error::RenamedPool`](crate::Error::RenamedPool).
    pub fn from_name(name: &str) -> Result<Pool, crate::Error> {
        if let Some(&(old, pool)) = Pool::RENAMED.iter().find(|(old, _)| *old == name) {
            return Err(crate::Error::RenamedPool {
                old: old.to_string(),
                new: pool.name(),
                alias: pool.alias(),
            });
        }
        Pool::ALL
            .into_iter()
            .find(|p| p.name() == name || p.alias() == name)
            .ok_or_else(|| crate::Error::UnknownPool {
                name: name.to_string(),
                known: Pool::ALL
                    .iter()
                    .map(|p| format!("{} ({})", p.name(), p.alias()))
                    .collect::<Vec<_>>()
                    .join(", ")
                    + " (fork-join runs on the work-stealing pools only)",
            })
    }
}

impl std::fmt::Display for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Pool {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Pool::from_name(s)
    }
}

/// A set of persistent worker threads that every front end runs on: working phases
/// ([`Builder::runtime`](crate::Builder::runtime), [`run_pool_on`](crate::phase::run_pool_on)),
/// fork-join ([`install`](Self::install), [`join`](Self::join), [`scope`](Self::scope),
/// [`spawn`](Self::spawn)) and [`broadcast`](Self::broadcast). Dropping it stops the workers.
///
/// ```
/// use taskpools::Runtime;
///
/// let rt = Runtime::builder().threads(2).build()?;
/// let (a, b) = rt.join(|| 1 + 1, || 2 + 2);
/// assert_eq!((a, b), (2, 4));
/// let seen = rt.broadcast(|i| i * 10)?;
/// assert_eq!(seen, [0, 10]);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct Runtime {
    pub(crate) registry: Arc<Registry>,
    pool: Pool,
    threads: Vec<JoinHandle<()>>,
    /// Events per worker's trace buffer (0: no trace).
    trace_capacity: usize,
    /// The trace's clock (with a trace).
    clock: Option<trace::Clock>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("threads", &self.registry.threads)
            .field("pool", &self.pool)
            .field("pinned", &self.registry.pinned)
            .finish()
    }
}

impl Runtime {
    /// A runtime with `threads` workers (at least 1) on the default pool.
    pub fn new(threads: usize) -> Result<Runtime, crate::Error> {
        Runtime::builder().threads(threads).build()
    }

    /// A builder, to choose the pool or pinning.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }

    /// Whether the workers are pinned to cores.
    pub fn pinned(&self) -> bool {
        self.registry.pinned
    }

    fn start(b: RuntimeBuilder) -> Result<Runtime, crate::Error> {
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
                                if b.serial_elision {
                                    EXPOSED
                                } else {
                                    u32::MAX
                                },
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

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.registry.threads
    }

    /// Each worker's counters so far, in worker order (see [`WorkerCounters`]).
    pub fn worker_counters(&self) -> Vec<WorkerCounters> {
        self.registry
            .counters
            .iter()
            .map(|c| c.snapshot())
            .collect()
    }

    /// Number of places (0: built without [places](crate::places)).
    pub fn place_count(&self) -> usize {
        self.registry.places.as_ref().map_or(0, |p| p.len())
    }

    /// The places the runtime was built with.
    pub fn places(&self) -> Option<&crate::places::Places> {
        self.registry.places.as_ref().map(|p| &p.places)
    }

    /// The place of each worker, in worker order (empty without places).
    pub fn worker_places(&self) -> Vec<crate::places::PlaceId> {
        self.registry.places.as_ref().map_or(Vec::new(), |p| {
            p.of_worker
                .iter()
                .map(|&q| crate::places::PlaceId(q))
                .collect()
        })
    }

    /// The schedule trace recorded since the runtime started or since the last call, and
    /// starts a new one (see [`trace`]); `None` if the runtime was built without
    /// [`RuntimeBuilder::trace`]. Collected by a broadcast: each worker hands over its own
    /// buffer, so call it between pieces of work (while a working phase holds the runtime
    /// from inside it, it fails with [`Error::PhaseBusy`](crate::Error::PhaseBusy)).
    ///
    /// ```
    /// let rt = taskpools::Runtime::builder().threads(2).trace(1 << 16).build()?;
    /// rt.scope(|s| for _ in 0..100 { s.spawn(|_| { std::hint::black_box(1); }); });
    /// let trace = rt.take_trace()?.expect("built with tracing");
    /// trace.check().expect("well formed");
    /// assert_eq!(trace.jobs(), 101); // the scope's body (installed) and its 100 spawns
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn take_trace(&self) -> Result<Option<trace::Trace>, crate::Error> {
        if self.trace_capacity == 0 {
            return Ok(None);
        }
        let parts = self.broadcast(|_| {
            let w = WorkerThread::current().expect("a broadcast runs on the workers");
            w.trace.as_ref().map(|t| t.take()).unwrap_or_default()
        })?;
        let mut t = trace::Trace {
            workers: self.threads(),
            events: Vec::new(),
            dropped: 0,
            capacity: 0,
        };
        for (events, dropped) in parts {
            t.events.extend(events);
            t.dropped += dropped;
        }
        // Raw stamps to nanoseconds, at one rate for every worker.
        if let Some(clock) = &self.clock {
            let ns = clock.converter();
            for e in &mut t.events {
                e.t_ns = ns(e.t_ns);
            }
        }
        t.events.sort_by_key(|e| e.t_ns);
        t.capacity = self.trace_capacity;
        Ok(Some(t))
    }

    /// The pool the workers share.
    pub fn pool(&self) -> Pool {
        self.pool
    }

    /// Runs `op` on one of this runtime's workers and returns its result; `join` and `scope`
    /// inside it fork onto this runtime. Panics in `op` are resumed here.
    ///
    /// From a thread that is not a worker, the caller blocks until `op` is done. From a worker
    /// of *another* runtime, that worker keeps running its own runtime's jobs while it waits
    /// (it answers steal requests, runs its own deque, steals, and takes jobs injected into its
    /// runtime), so installs that cross back and forth between runtimes, such as
    /// `a.install(|| b.install(|| a.install(|| 42)))` on one-thread runtimes, finish.
    pub fn install<R: Send>(&self, op: impl FnOnce() -> R + Send) -> R {
        install_in(&self.registry, op)
    }

    /// Runs `f` on one of this runtime's workers without waiting for it (fire and forget).
    ///
    /// A panic in `f` does not reach the caller and does not stop the worker: it is caught and
    /// reported with one line on stderr. Dropping the runtime runs every spawned job that has
    /// not run yet (including jobs those jobs spawn) before the workers stop, so none is lost
    /// or leaked; a job that keeps spawning itself keeps the drop waiting.
    pub fn spawn(&self, f: impl FnOnce() + Send + 'static) {
        spawn_in(&self.registry, f);
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

/// The global runtime, created on first use or by [`RuntimeBuilder::build_global`].
static GLOBAL: OnceLock<Runtime> = OnceLock::new();

/// The environment variable that sizes the global runtime when it is created on first use.
pub const NUM_THREADS_ENV: &str = "TASKPOOLS_NUM_THREADS";

/// Parses a value of [`NUM_THREADS_ENV`]: `Ok(None)` when unset or empty (use one worker per
/// CPU), the thread count, or why the value is refused.
fn threads_from_env(v: Option<&str>) -> Result<Option<usize>, String> {
    let v = match v.map(str::trim) {
        None | Some("") => return Ok(None),
        Some(v) => v,
    };
    match v.parse::<usize>() {
        Ok(n) if (1..=crate::MAX_THREADS).contains(&n) => Ok(Some(n)),
        _ => Err(format!(
            "{NUM_THREADS_ENV}={v:?} is not a thread count from 1 to {}",
            crate::MAX_THREADS
        )),
    }
}

pub(crate) fn global() -> &'static Runtime {
    GLOBAL.get_or_init(|| {
        let cpus = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(crate::MAX_THREADS);
        let env = std::env::var(NUM_THREADS_ENV).ok();
        let n = match threads_from_env(env.as_deref()) {
            Ok(n) => n.unwrap_or(cpus),
            Err(why) => {
                eprintln_best_effort(&format!(
                    "taskpools: {why}; the global runtime uses {cpus} threads (one per CPU)"
                ));
                cpus
            }
        };
        Runtime::new(n).expect("could not start the global runtime")
    })
}

/// Number of worker threads of the current worker's runtime, or, on a thread that is not a
/// worker, of the global runtime (which this creates if it does not exist yet, like `join`
/// would). Rayon's `current_num_threads`.
pub fn current_num_threads() -> usize {
    match WorkerThread::current() {
        Some(w) => w.registry.threads,
        None => global().threads(),
    }
}

/// The index (`0..threads`) of the worker running this code in its runtime, or `None` on a
/// thread that is not a worker. Rayon's `current_thread_index`.
pub fn current_thread_index() -> Option<usize> {
    WorkerThread::current().map(|w| w.index)
}

/// Runs `f` without waiting for it on the current worker's runtime, or, on a thread that is
/// not a worker, on the global runtime; see [`Runtime::spawn`] (a panic in `f` is caught and
/// reported on stderr). The global runtime is never dropped: a job still queued there when
/// the process exits does not run, so wait for what must finish (a channel, a counter).
pub fn spawn(f: impl FnOnce() + Send + 'static) {
    match WorkerThread::current() {
        Some(w) => spawn_in(&w.registry, f),
        None => global().spawn(f),
    }
}

/// A fire-and-forget job: always injected (never onto a worker's own deque), so that the
/// shutdown drain in `main_loop` finds every one that has not run.
pub(crate) fn spawn_in(registry: &Registry, f: impl FnOnce() + Send + 'static) {
    let job = move || {
        if let Err(p) = catch_unwind(AssertUnwindSafe(f)) {
            let msg = p
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| p.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("(a non-string payload)");
            eprintln_best_effort(&format!("taskpools: a spawned job panicked: {msg}"));
            // The payload's own destructor could panic in turn: drop it under a guard, and
            // leak only such a second payload.
            if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(p))) {
                std::mem::forget(again);
            }
        }
    };
    // SAFETY: `f` is `'static`, so it borrows nothing that can go away; the job is injected,
    // and every injected job is executed exactly once: by a worker, or by the shutdown drain
    // of `main_loop` before the workers stop.
    let job = unsafe { job::SpawnJob::into_job_ref(job) };
    registry.inject(job);
}

/// [`Runtime::install`] on the runtime of `registry`.
pub(crate) fn install_in<R: Send>(registry: &Arc<Registry>, op: impl FnOnce() -> R + Send) -> R {
    match WorkerThread::current() {
        Some(w) if Arc::ptr_eq(&w.registry, registry) => op(),
        Some(w) => install_from_foreign_worker(registry, w, op),
        None => {
            let job = LockJob::new(op);
            registry.inject(job.as_job_ref());
            match job.wait() {
                Ok(r) => r,
                Err(p) => resume_unwind(p),
            }
        }
    }
}

/// `install` from a worker `w` of another runtime: the job lives on `w`'s stack and is
/// injected here; `w` waits for it the way a join waits for a stolen half, running its own
/// runtime's work meanwhile (rayon's `in_worker_cross`).
#[cold]
#[inline(never)]
fn install_from_foreign_worker<R: Send>(
    registry: &Registry,
    w: &WorkerThread,
    op: impl FnOnce() -> R + Send,
) -> R {
    let job = StackJob::new(op);
    registry.inject(job.as_job_ref());
    w.wait_until(|| job.is_done());
    match job.take_outcome() {
        Ok(r) => r,
        Err(p) => resume_unwind(p),
    }
}

/// Writes a line to stderr, ignoring errors (a closed stderr must not turn a diagnostic into
/// a panic inside the runtime).
pub(crate) fn eprintln_best_effort(msg: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{msg}");
}

#[cfg(all(test, not(loom)))]
mod env_tests {
    use super::threads_from_env;

    #[test]
    fn num_threads_env_values() {
        assert_eq!(threads_from_env(None), Ok(None));
        assert_eq!(threads_from_env(Some("")), Ok(None));
        assert_eq!(threads_from_env(Some(" 3 ")), Ok(Some(3)));
        for bad in ["0", "-1", "two", "99999999"] {
            let e = threads_from_env(Some(bad)).unwrap_err();
            assert!(
                e.contains("TASKPOOLS_NUM_THREADS") && e.contains(bad),
                "{e}"
            );
        }
    }
}

/// The core each of `n` workers is pinned to: worker `i` to core `i mod cores` when `pin` is
/// set and the cores can be listed, else none.
pub(crate) fn worker_cores(pin: bool, n: usize) -> Vec<Option<core_affinity::CoreId>> {
    // Listed at every build, pinned or not, so that the first build fixes the list.
    let cores = process_cores().filter(|_| pin);
    (0..n).map(|i| cores.map(|c| c[i % c.len()])).collect()
}

#[cfg(all(test, not(loom)))]
mod pin_tests {
    use super::Runtime;

    /// A thread that pinned itself to one core and then builds a pinned runtime still gets
    /// its workers spread over all the process's cores (the list is taken once, not from the
    /// caller's mask at each build).
    #[test]
    fn workers_spread_over_the_cores_after_the_caller_pinned_itself() {
        let Some(cores) = core_affinity::get_core_ids().filter(|c| c.len() >= 2) else {
            return; // one core: nothing to spread
        };
        std::thread::spawn(move || {
            drop(Runtime::builder().threads(1).build().unwrap());
            core_affinity::set_for_current(cores[0]);
            let rt = Runtime::builder().threads(2).pin(true).build().unwrap();
            let seen = rt
                .broadcast(|_| core_affinity::get_core_ids().unwrap_or_default())
                .unwrap();
            assert_eq!(seen[0], [cores[0]]);
            assert_eq!(seen[1], [cores[1]], "worker 1 pinned to {:?}", seen[1]);
        })
        .join()
        .unwrap();
    }
}
