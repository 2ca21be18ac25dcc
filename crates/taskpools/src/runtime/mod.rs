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

mod async_job;
pub(crate) mod broadcast;
mod builder;
mod counters;
mod current;
pub(crate) mod frames;
mod handlers;
mod install;
pub(crate) mod job;
pub(crate) mod liveness;
mod pinning;
pub(crate) mod places;
mod pool_choice;
mod registry;
mod spawn;
mod start;
mod threads;
pub mod trace;
pub(crate) mod worker;

pub use crate::places::current_place;
pub use async_job::{spawn_async, SpawnFuture};
pub use broadcast::{broadcast, spawn_broadcast, BroadcastContext};
pub use builder::RuntimeBuilder;
pub use counters::WorkerCounters;
pub use current::{
    current_num_threads, current_thread_has_pending_tasks, current_thread_index, max_num_threads,
    set_global_default, spawn, spawn_fifo, NUM_THREADS_ENV,
};
pub use liveness::{yield_local, yield_now, Yield, STALL_REPORT};
pub use pool_choice::Pool;
pub use threads::ThreadBuilder;

use std::thread::JoinHandle;

use crate::sync::Arc;
pub(crate) use current::global;
use current::GLOBAL;
pub(crate) use install::install_in;
pub(crate) use registry::Registry;
pub(crate) use registry::Stealers;
pub(crate) use spawn::{spawn_in, Order};
use worker::WorkerThread;

/// A set of persistent worker threads that every front end runs on: working phases
/// ([`Builder::runtime`](crate::Builder::runtime), [`run_pool_on`](crate::phase::run_pool_on)),
/// fork-join ([`install`](Self::install), [`join`](Self::join), [`scope`](Self::scope),
/// [`spawn`](Self::spawn)) and [`broadcast`](Self::broadcast). Dropping it signals the workers
/// to leave once what they were given has run ([`shutdown_and_wait`](Self::shutdown_and_wait)
/// also waits for that).
///
/// ```
/// use taskpools::Runtime;
///
/// let rt = Runtime::builder().threads(2).build()?;
/// let (a, b) = rt.join(|| 1 + 1, || 2 + 2);
/// assert_eq!((a, b), (2, 4));
/// let seen = rt.broadcast(|ctx| ctx.index() * 10);
/// assert_eq!(seen, [0, 10]);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct Runtime {
    pub(crate) registry: Arc<Registry>,
    pool: Pool,
    /// The threads the runtime started itself (not those of a spawn handler).
    threads: Vec<JoinHandle<()>>,
    /// Workers that run the worker loop on a thread of their own (all but a
    /// `use_current_thread` worker 0): `shutdown_and_wait` waits for them to leave.
    looping_workers: usize,
    /// Whether worker 0 is the thread that built the runtime (`use_current_thread`).
    current_thread_worker: bool,
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
    ///
    /// ```
    /// let rt = taskpools::Runtime::new(2)?;
    /// assert_eq!(rt.threads(), 2);
    /// let total: u64 = rt.install(|| (1..=10u64).sum());
    /// assert_eq!(total, 55);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn new(threads: usize) -> Result<Runtime, crate::Error> {
        Runtime::builder().threads(threads).build()
    }

    /// A builder, to choose the pool or pinning.
    ///
    /// ```
    /// use taskpools::forkjoin::{Pool, Runtime};
    ///
    /// let rt = Runtime::builder().threads(2).pool(Pool::ChaseLev).build()?;
    /// assert_eq!((rt.threads(), rt.pool()), (2, Pool::ChaseLev));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }

    /// Whether the workers are pinned to cores.
    ///
    /// ```
    /// let rt = taskpools::Runtime::builder().threads(1).pin(true).build()?;
    /// assert!(rt.pinned());
    /// assert!(!taskpools::Runtime::new(1)?.pinned());
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn pinned(&self) -> bool {
        self.registry.pinned
    }

    /// Number of worker threads.
    ///
    /// ```
    /// let rt = taskpools::Runtime::new(2)?;
    /// assert_eq!(rt.threads(), 2);
    /// assert_eq!(rt.install(taskpools::current_num_threads), 2);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn threads(&self) -> usize {
        self.registry.threads
    }

    /// Each worker's counters so far, in worker order (see [`WorkerCounters`]).
    ///
    /// ```
    /// let rt = taskpools::Runtime::new(2)?;
    /// rt.install(|| ()); // handed to a worker through the injector
    /// let c = rt.worker_counters();
    /// assert_eq!(c.len(), 2);
    /// assert!(c.iter().map(|w| w.injected).sum::<u64>() >= 1);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn worker_counters(&self) -> Vec<WorkerCounters> {
        self.registry
            .counters
            .iter()
            .map(|c| c.snapshot())
            .collect()
    }

    /// Number of places (0: built without [places](crate::places)).
    ///
    /// ```
    /// use taskpools::places::Places;
    ///
    /// let rt = taskpools::Runtime::builder().places(Places::parse("2x1")?).build()?;
    /// assert_eq!(rt.place_count(), 2);
    /// assert_eq!(taskpools::Runtime::new(1)?.place_count(), 0);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn place_count(&self) -> usize {
        self.registry.places.as_ref().map_or(0, |p| p.len())
    }

    /// The places the runtime was built with.
    ///
    /// ```
    /// use taskpools::places::Places;
    ///
    /// let rt = taskpools::Runtime::builder().places(Places::parse("2x1")?).build()?;
    /// assert_eq!(rt.places().map(|p| p.spec()), Some("2x1"));
    /// assert!(taskpools::Runtime::new(1)?.places().is_none());
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn places(&self) -> Option<&crate::places::Places> {
        self.registry.places.as_ref().map(|p| &p.places)
    }

    /// The place of each worker, in worker order (empty without places).
    ///
    /// ```
    /// use taskpools::places::{PlaceId, Places};
    ///
    /// let rt = taskpools::Runtime::builder().places(Places::parse("2x1")?).build()?;
    /// assert_eq!(rt.worker_places(), [PlaceId(0), PlaceId(1)]);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
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
        let parts = self.try_broadcast(|_| {
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

    /// How long an idle worker looks for work before it sleeps
    /// ([`RuntimeBuilder::spin`]).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let rt = taskpools::Runtime::builder().threads(1).spin(Duration::ZERO).build()?;
    /// assert_eq!(rt.spin_budget(), Duration::ZERO); // idle workers sleep at once
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn spin_budget(&self) -> std::time::Duration {
        self.registry.spin
    }

    /// The pool the workers share.
    ///
    /// ```
    /// use taskpools::forkjoin::{Pool, Runtime};
    ///
    /// assert_eq!(Runtime::new(1)?.pool(), Pool::PrivateDeque); // the default
    /// # Ok::<(), taskpools::Error>(())
    /// ```
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
    ///
    /// ```
    /// use taskpools::forkjoin::{join, Runtime};
    ///
    /// fn sum(v: &[u64]) -> u64 {
    ///     if v.len() <= 8 {
    ///         return v.iter().sum();
    ///     }
    ///     let (l, r) = v.split_at(v.len() / 2);
    ///     let (a, b) = join(|| sum(l), || sum(r));
    ///     a + b
    /// }
    /// let rt = Runtime::new(2)?;
    /// let v: Vec<u64> = (1..=1000).collect();
    /// assert_eq!(rt.install(|| sum(&v)), 500_500); // the joins fork onto `rt`
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn install<R: Send>(&self, op: impl FnOnce() -> R + Send) -> R {
        install_in(&self.registry, op)
    }

    /// Runs `f` on one of this runtime's workers without waiting for it (fire and forget).
    /// Called on one of this runtime's workers, the job goes onto that worker's deque, which
    /// runs its spawns newest first (other workers take them from there, without its help;
    /// with places and round-robin placement, onto the next place's deque instead); from any
    /// other thread it is injected, and injected jobs run oldest first.
    ///
    /// A panic in `f` does not reach the caller and does not stop the worker: it goes to the
    /// [`panic_handler`](RuntimeBuilder::panic_handler), or without one is reported with one
    /// line on stderr. The workers do not leave the runtime before every spawned job (and every
    /// job those spawn) has run, also after the runtime was dropped, so none is lost or leaked;
    /// a job that keeps spawning itself keeps them there. [`shutdown_and_wait`] waits for that.
    ///
    /// [`shutdown_and_wait`]: Self::shutdown_and_wait
    ///
    /// ```
    /// use std::sync::mpsc;
    /// let rt = taskpools::Runtime::new(2)?;
    /// let (tx, rx) = mpsc::channel();
    /// rt.spawn(move || tx.send(6 * 7).unwrap());
    /// assert_eq!(rx.recv().unwrap(), 42);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn spawn(&self, f: impl FnOnce() + Send + 'static) {
        spawn_in(&self.registry, f, Order::Lifo);
    }

    /// As [`spawn`](Self::spawn), but the jobs a worker spawns this way start in the order
    /// they were spawned (rayon's `spawn_fifo`): from one of this runtime's workers the job
    /// joins that worker's FIFO and a ticket joins its deque, and whoever runs a ticket runs
    /// the oldest job of the FIFO; from any other thread the job is injected, and injected jobs
    /// are taken oldest first.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// let rt = taskpools::Runtime::new(1)?;
    /// let order = Arc::new(Mutex::new(Vec::new()));
    /// let o = Arc::clone(&order);
    /// rt.install(move || {
    ///     for i in 0..4 {
    ///         let o = Arc::clone(&o);
    ///         taskpools::spawn_fifo(move || o.lock().unwrap().push(i));
    ///     }
    /// });
    /// rt.shutdown_and_wait()?;
    /// assert_eq!(*order.lock().unwrap(), [0, 1, 2, 3]);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn spawn_fifo(&self, f: impl FnOnce() + Send + 'static) {
        spawn_in(&self.registry, f, Order::Fifo);
    }

    /// The index of the calling thread among this runtime's workers, or `None` if it is not
    /// one of them (a worker of another runtime included); rayon's
    /// `ThreadPool::current_thread_index`.
    ///
    /// ```
    /// let rt = taskpools::Runtime::new(2)?;
    /// assert_eq!(rt.current_thread_index(), None);
    /// let i = rt.install(|| rt.current_thread_index());
    /// assert!(matches!(i, Some(0 | 1)));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn current_thread_index(&self) -> Option<usize> {
        WorkerThread::current()
            .filter(|w| Arc::ptr_eq(&w.registry, &self.registry))
            .map(|w| w.index)
    }

    /// Whether the calling thread, a worker of this runtime, has jobs queued on its own deque
    /// (`None` on any other thread); rayon's `ThreadPool::current_thread_has_pending_tasks`.
    ///
    /// ```
    /// use taskpools::forkjoin::{join, Pool, Runtime};
    ///
    /// let rt = Runtime::builder().threads(1).pool(Pool::ChaseLev).build()?;
    /// assert_eq!(rt.current_thread_has_pending_tasks(), None); // not a worker
    /// // On `chase-lev` a join always queues `b`, which waits on the deque while `a` runs.
    /// let (in_a, ()) = rt.install(|| join(|| rt.current_thread_has_pending_tasks(), || ()));
    /// assert_eq!(in_a, Some(true));
    /// assert_eq!(rt.install(|| rt.current_thread_has_pending_tasks()), Some(false));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn current_thread_has_pending_tasks(&self) -> Option<bool> {
        WorkerThread::current()
            .filter(|w| Arc::ptr_eq(&w.registry, &self.registry))
            .map(|w| w.has_queued_jobs())
    }
}

/// Writes a line to stderr, ignoring errors (a closed stderr must not turn a diagnostic into
/// a panic inside the runtime).
pub(crate) fn eprintln_best_effort(msg: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{msg}");
}
