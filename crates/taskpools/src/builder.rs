//! The front door: choose threads, pool, memory manager and wake-up policy, then run.

use crate::mem::MemKind;
use crate::phase::{run_phase, run_phase_hinted, RunOptions, RunReport, WakePolicy};
use crate::pool::types::{ByKind, Select};
use crate::pool::{PoolConfig, PoolKind, PoolType, PoolVisitor, Search, TaskPool};
use crate::runtime::Runtime;
use crate::task::Task;
use crate::typed_builder::TypedBuilder;
use crate::Error;

/// Configures and runs a working phase.
///
/// Where it runs: on the runtime given with [`runtime`](Self::runtime); otherwise, called on a
/// worker (inside a fork-join task, say), on that worker's runtime when it has enough workers
/// (and is pinned, if [`pin`](Self::pin) asks for it); otherwise on the global runtime (the
/// one [`forkjoin::join`](crate::forkjoin::join) uses, one worker per CPU or
/// `TASKPOOLS_NUM_THREADS`) when it has enough workers and pinning is off; otherwise on a
/// runtime started for this call and stopped when it returns. Phase worker `i` is runtime
/// worker `i`. For repeated phases with other thread counts, build a [`Runtime`] once and
/// pass it: then no thread is started per phase.
///
/// One phase holds a runtime at a time. When the chosen runtime is held by another phase, a
/// call from a thread outside every runtime waits for it; a call on a worker cannot wait (the
/// running phase may need that very worker) and moves on to the next choice above, so a phase
/// inside a phase's task runs on a runtime of its own. Only with an explicit
/// [`runtime`](Self::runtime), and for a phase with place hints
/// ([`run_hinted`](Self::run_hinted), which never moves), does such a call fail, with
/// [`Error::PhaseBusy`].
///
/// A task must not block its worker on something that needs the same runtime's workers to
/// happen — a join submitted to that runtime from another OS thread, a channel fed by one of
/// its fork-join jobs: while a phase runs, its workers run only the phase and what the task
/// itself forks. Fork inside the task with [`forkjoin::join`](crate::forkjoin::join) or
/// [`forkjoin::scope`](crate::forkjoin::scope) instead (they run on the task's worker), or
/// run the phase on a runtime of its own.
///
/// ```
/// use taskpools::{BoxedTask, Builder, PoolKind, WakePolicy};
///
/// let b = Builder::new().threads(2).pool(PoolKind::ChaseLev).wake(WakePolicy::EveryPut);
/// // A root task that puts 100 children: 101 tasks run.
/// let root = BoxedTask::new(|ctx| (0..100).for_each(|_| ctx.put(BoxedTask::new(|_| {}))));
/// assert_eq!(b.run([root])?.tasks_run(), 101);
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Builder<'rt> {
    runtime: Option<&'rt Runtime>,
    threads: usize,
    /// Whether `threads` was set (else `runtime` sets it to the runtime's thread count).
    threads_set: bool,
    pool: PoolKind,
    mem: MemKind,
    search: Search,
    opts: RunOptions,
}

impl Default for Builder<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'rt> Builder<'rt> {
    /// Defaults: one thread per available CPU, the private/public pool (`dq8`), per-worker block
    /// allocation (`dgbko`), wake on empty→non-empty (`on-empty`, alias `java-dq9`), no pinning.
    ///
    /// ```
    /// use taskpools::{Builder, PoolKind};
    ///
    /// let b = Builder::new();
    /// assert_eq!(b.pool_kind(), PoolKind::PrivatePublic);
    /// assert!(b.thread_count() >= 1); // one per available CPU
    /// ```
    pub fn new() -> Self {
        Builder {
            runtime: None,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            threads_set: false,
            pool: PoolKind::PrivatePublic,
            mem: MemKind::PerWorkerBlocks,
            search: Search::Tree,
            opts: RunOptions::default(),
        }
    }

    /// Number of worker threads (checked by `run`: zero, or more than
    /// [`MAX_THREADS`](crate::MAX_THREADS), is an error).
    ///
    /// ```
    /// use taskpools::{BoxedTask, Builder, Error};
    ///
    /// let b = Builder::new().threads(2);
    /// assert_eq!(b.thread_count(), 2);
    /// let none = b.threads(0).run([BoxedTask::new(|_| {})]);
    /// assert!(matches!(none, Err(Error::ZeroThreads)));
    /// ```
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n;
        self.threads_set = true;
        self
    }

    /// Runs the phase on `rt`'s workers: all of them unless [`threads`](Self::threads) asks
    /// for fewer (more fails with [`Error::PhaseWider`]). Pinning is then `rt`'s, and
    /// [`pin`](Self::pin) has no effect. Called on a worker while another phase holds `rt`,
    /// `run` fails with [`Error::PhaseBusy`] (see the type's docs).
    ///
    /// ```
    /// use taskpools::{BoxedTask, Builder, Error, Runtime};
    ///
    /// let rt = Runtime::new(2)?;
    /// let b = Builder::new().runtime(&rt);
    /// assert_eq!(b.thread_count(), 2); // all of `rt`'s workers
    /// let wide = b.threads(3).run([BoxedTask::new(|_| {})]);
    /// assert!(matches!(wide, Err(Error::PhaseWider { workers: 3, threads: 2 })));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn runtime<'a>(self, rt: &'a Runtime) -> Builder<'a> {
        Builder {
            runtime: Some(rt),
            threads: if self.threads_set {
                self.threads
            } else {
                rt.threads()
            },
            threads_set: self.threads_set,
            pool: self.pool,
            mem: self.mem,
            search: self.search,
            opts: self.opts,
        }
    }

    /// The pool.
    ///
    /// ```
    /// use taskpools::{BoxedTask, Builder, PoolKind};
    ///
    /// for kind in [PoolKind::CentralFifo, PoolKind::StealHalf] {
    ///     let b = Builder::new().threads(2).pool(kind);
    ///     assert_eq!(b.run((0..10).map(|_| BoxedTask::new(|_| {})))?.tasks_run(), 10);
    /// }
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn pool(mut self, p: PoolKind) -> Self {
        self.pool = p;
        self
    }

    /// The pool by name or alias (`private-public` or `dq8`).
    ///
    /// ```
    /// use taskpools::{Builder, PoolKind};
    ///
    /// assert_eq!(Builder::new().pool_name("dq8")?.pool_kind(), PoolKind::PrivatePublic);
    /// assert_eq!(Builder::new().pool_name("chase-lev")?.pool_kind(), PoolKind::ChaseLev);
    /// assert!(Builder::new().pool_name("no-such-pool").is_err());
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn pool_name(self, name: &str) -> Result<Self, Error> {
        Ok(self.pool(PoolKind::from_name(name)?))
    }

    /// The pool as a type, named at compile time: a builder whose phases compile only that
    /// pool's loop for each task type (a pool chosen with [`pool`](Self::pool) or
    /// [`pool_name`](Self::pool_name) compiles the loop of every pool in the family, which a
    /// user's crate pays in build time and binary size for each task type it runs). The types
    /// are in [`pool::types`](crate::pool::types), one per [`PoolKind`]; the builder's
    /// [`pool_kind`](Self::pool_kind) becomes `P`'s kind, and everything else is as set here
    /// (and can still be set on the [`TypedBuilder`]). Phases run as with a pool chosen by
    /// name: the same pool, the same checks and errors.
    ///
    /// ```
    /// use taskpools::pool::types::ChaseLev;
    /// use taskpools::{Builder, Ctx, PoolKind, Task};
    ///
    /// struct Node(u32);
    /// impl Task for Node {
    ///     fn run(self, ctx: &mut Ctx<'_, Self>) {
    ///         if self.0 > 0 {
    ///             ctx.put(Node(self.0 - 1));
    ///             ctx.put(Node(self.0 - 1));
    ///         }
    ///     }
    /// }
    ///
    /// // Only the Chase–Lev pool's loop is compiled for `Node`.
    /// let b = Builder::new().threads(2).pool_type::<ChaseLev>();
    /// assert_eq!(b.pool_kind(), PoolKind::ChaseLev);
    /// let report = b.run([Node(10)])?;
    /// assert_eq!(report.tasks_run(), (1 << 11) - 1);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn pool_type<P: PoolType>(self) -> TypedBuilder<'rt, P> {
        TypedBuilder::new(self.pool(P::KIND))
    }

    /// The memory manager for list nodes.
    ///
    /// ```
    /// use taskpools::{BoxedTask, Builder, MemKind, PoolKind};
    ///
    /// // The memory manager matters for the list-based pools, such as `central-list`.
    /// let b = Builder::new().threads(2).pool(PoolKind::CentralList).mem(MemKind::System);
    /// assert_eq!(b.run((0..10).map(|_| BoxedTask::new(|_| {})))?.tasks_run(), 10);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn mem(mut self, m: MemKind) -> Self {
        self.mem = m;
        self
    }

    /// The memory manager by name or alias (`per-worker-blocks` or `dgbko`).
    ///
    /// ```
    /// use taskpools::{BoxedTask, Builder};
    ///
    /// let b = Builder::new().threads(2).pool_name("sq1")?.mem_name("dgbko")?;
    /// assert_eq!(b.run((0..10).map(|_| BoxedTask::new(|_| {})))?.tasks_run(), 10);
    /// assert!(Builder::new().mem_name("no-such-manager").is_err());
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn mem_name(self, name: &str) -> Result<Self, Error> {
        Ok(self.mem(MemKind::from_name(name)?))
    }

    /// The search strategy of the steal-half pool (`manber`).
    ///
    /// ```
    /// use taskpools::{BoxedTask, Builder, PoolKind, Search};
    ///
    /// let b = Builder::new().threads(2).pool(PoolKind::StealHalf).search(Search::Linear);
    /// assert_eq!(b.run((0..10).map(|_| BoxedTask::new(|_| {})))?.tasks_run(), 10);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn search(mut self, s: Search) -> Self {
        self.search = s;
        self
    }

    /// The wake-up policy.
    ///
    /// ```
    /// use taskpools::{BoxedTask, Builder, WakePolicy};
    ///
    /// // Idle workers spin instead of sleeping; the phase still ends when every task has run.
    /// let b = Builder::new().threads(2).wake(WakePolicy::Spin);
    /// assert_eq!(b.run((0..10).map(|_| BoxedTask::new(|_| {})))?.tasks_run(), 10);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn wake(mut self, w: WakePolicy) -> Self {
        self.opts.wake = w;
        self
    }

    /// Pin worker i to CPU i mod (number of CPUs): the phase then runs on a pinned runtime
    /// (one it starts, unless [`runtime`](Self::runtime) gives one).
    ///
    /// ```
    /// use taskpools::{BoxedTask, Builder};
    ///
    /// // Runs on a pinned runtime started for this phase (the global one is not pinned).
    /// let b = Builder::new().threads(2).pin(true);
    /// assert_eq!(b.run((0..10).map(|_| BoxedTask::new(|_| {})))?.tasks_run(), 10);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn pin(mut self, yes: bool) -> Self {
        self.opts.pin = yes;
        self
    }

    /// The configured pool kind.
    ///
    /// ```
    /// use taskpools::{Builder, PoolKind};
    ///
    /// assert_eq!(Builder::new().pool(PoolKind::Combined).pool_kind(), PoolKind::Combined);
    /// ```
    pub fn pool_kind(&self) -> PoolKind {
        self.pool
    }

    /// The configured number of threads.
    ///
    /// ```
    /// let rt = taskpools::Runtime::new(2)?;
    /// assert_eq!(taskpools::Builder::new().threads(1).thread_count(), 1);
    /// assert_eq!(taskpools::Builder::new().runtime(&rt).thread_count(), 2);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn thread_count(&self) -> usize {
        self.threads
    }

    /// Runs a working phase: builds the pool, distributes `initial` round-robin over the
    /// workers, runs until every task has run, and reports the counters. Where it runs: see
    /// the type's docs.
    ///
    /// ```
    /// use taskpools::{BoxedTask, Builder, Runtime};
    ///
    /// let rt = Runtime::new(2)?;
    /// let b = Builder::new().threads(2).pool_name("chase-lev")?.runtime(&rt);
    /// for _ in 0..3 {
    ///     // Every phase reuses `rt`'s two workers.
    ///     let report = b.run((0..100).map(|_| BoxedTask::new(|_| {})))?;
    ///     assert_eq!(report.tasks_run(), 100);
    /// }
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn run<T: Task>(&self, initial: impl IntoIterator<Item = T>) -> Result<RunReport, Error> {
        self.run_with(|_| (), initial).map(|(report, _)| report)
    }

    /// [`run`](Self::run) with per-worker state of a user type `L`: worker `i` creates its
    /// state with `init(i)` (on its own thread, before its first task), every task that worker
    /// runs reaches it with [`Ctx::local`](crate::Ctx::local), and the states are returned in
    /// worker order (`states[i]` was made by `init(i)`). Counting and reducing need no atomics.
    ///
    /// If a task panics, the states are dropped and the panic is resumed in the caller.
    ///
    /// ```
    /// use taskpools::{Builder, Ctx, Task};
    ///
    /// struct Node(u32);
    /// impl Task<u64> for Node {
    ///     fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
    ///         *ctx.local() += 1;
    ///         if self.0 > 0 {
    ///             ctx.put(Node(self.0 - 1));
    ///             ctx.put(Node(self.0 - 1));
    ///         }
    ///     }
    /// }
    ///
    /// let (report, counts) = Builder::new().threads(2).run_with(|_| 0u64, [Node(10)])?;
    /// assert_eq!(counts.len(), 2);
    /// assert_eq!(counts.iter().sum::<u64>(), report.tasks_run());
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn run_with<L: Send, T: Task<L>>(
        &self,
        init: impl Fn(usize) -> L + Sync,
        initial: impl IntoIterator<Item = T>,
    ) -> Result<(RunReport, Vec<L>), Error> {
        self.go::<Plain, ByKind, L, T>(init, initial)
    }

    /// The builder's pool, chosen by `S` (by kind, or a pool type), and runtime, and the phase
    /// entry `E` (plain or hinted).
    pub(crate) fn go<E: Entry, S: Select, L: Send, T: Task<L>>(
        &self,
        init: impl Fn(usize) -> L + Sync,
        initial: impl IntoIterator<Item = T>,
    ) -> Result<(RunReport, Vec<L>), Error> {
        if self.threads == 0 {
            return Err(Error::ZeroThreads);
        }
        if self.threads > crate::MAX_THREADS {
            return Err(Error::TooManyThreads {
                requested: self.threads,
                max: crate::MAX_THREADS,
            });
        }
        // The phase loop is compiled once per state type, task type, entry (plain or hinted)
        // and pool, not also once per caller's `init` closure and iterator type: `init` is
        // called through a vtable (once per worker), and the initial tasks are collected by
        // one boxed call at the point where the phase collected them before (in place for a
        // `Vec`). Both are dropped where they were. This cut the release build of the tests
        // and the workbench from 393 to 333 s on 2 cores.
        let init: Box<dyn Fn(usize) -> L + Sync + '_> = Box::new(init);
        let initial = Deferred(Box::new(move || initial.into_iter().collect()));
        struct Go<'rt, F, I, E> {
            runtime: Option<&'rt Runtime>,
            init: F,
            initial: I,
            opts: RunOptions,
            entry: std::marker::PhantomData<E>,
        }
        impl<L, T, F, I, E> PoolVisitor<T> for Go<'_, F, I, E>
        where
            L: Send,
            T: Task<L>,
            F: Fn(usize) -> L + Sync,
            I: IntoIterator<Item = T>,
            E: Entry,
        {
            type Output = Result<(RunReport, Vec<L>), Error>;
            fn visit<P: TaskPool<T>>(self, pool: P) -> Self::Output {
                E::run(
                    self.runtime,
                    self.opts.pin,
                    &pool,
                    self.opts.wake,
                    self.init,
                    self.initial,
                )
            }
        }
        let cfg = PoolConfig {
            workers: self.threads,
            mem: self.mem,
            search: self.search,
        };
        S::with_pool(
            self.pool,
            &cfg,
            Go {
                runtime: self.runtime,
                init,
                initial,
                opts: self.opts,
                entry: std::marker::PhantomData::<E>,
            },
        )
    }

    /// [`run_with`](Self::run_with), folding the per-worker states in worker order with
    /// `reduce` (there is always at least one worker, so there is always a result).
    ///
    /// ```
    /// use taskpools::{BoxedTask, Builder};
    ///
    /// // Sums 1..=100, one task per number, each adding into its worker's state.
    /// let tasks = (1..=100u64).map(|i| BoxedTask::new(move |ctx| *ctx.local() += i));
    /// let (_, sum) = Builder::new().threads(2).run_reduce(|_| 0u64, tasks, |a, b| a + b)?;
    /// assert_eq!(sum, 100 * 101 / 2);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn run_reduce<L: Send, T: Task<L>>(
        &self,
        init: impl Fn(usize) -> L + Sync,
        initial: impl IntoIterator<Item = T>,
        reduce: impl FnMut(L, L) -> L,
    ) -> Result<(RunReport, L), Error> {
        fold(self.run_with(init, initial)?, reduce)
    }

    /// [`run`](Self::run) for tasks that give their children *locality hints* with
    /// [`Ctx::put_at`](crate::Ctx::put_at): the phase runs on a runtime with
    /// [places](crate::places), given with [`runtime`](Self::runtime) or else the runtime of
    /// the calling worker (with all its workers unless [`threads`](Self::threads) says
    /// otherwise). A hinted phase never moves to another runtime: without places it fails
    /// with [`Error::PhaseWithoutPlaces`], and on a worker whose runtime another phase holds,
    /// with [`Error::PhaseBusy`], both before any task runs. The builder's [`pin`](Self::pin)
    /// does not apply: pinning is the runtime's
    /// ([`RuntimeBuilder::pin`](crate::RuntimeBuilder::pin); places with listed cores pin
    /// their workers there). Phase worker `i` is worker `i`
    /// of that runtime, at that worker's place. Each place has an inbox for the tasks hinted
    /// to it, which its workers move into their own queues in the pool between tasks; a worker
    /// with nothing to do takes its own place's inbox, else the oldest task in the next
    /// non-empty inbox (the places after its own, in turn).
    ///
    /// This is a separate entry (and a separate compilation of the phase's loop) so that the
    /// plain phases pay nothing for hints.
    ///
    /// ```
    /// use taskpools::places::{PlaceId, Places};
    /// use taskpools::{BoxedTask, Builder, Runtime};
    ///
    /// let rt = Runtime::builder().places(Places::parse("2x1")?).build()?;
    /// let root = BoxedTask::new(|ctx| {
    ///     for i in 0..10 {
    ///         ctx.put_at(PlaceId(i % 2), BoxedTask::new(|_| {})).unwrap();
    ///     }
    /// });
    /// assert_eq!(Builder::new().runtime(&rt).run_hinted([root])?.tasks_run(), 11);
    /// // Without places, a hinted phase is refused before any task runs.
    /// let plain = Runtime::new(1)?;
    /// let e = Builder::new().runtime(&plain).run_hinted([BoxedTask::new(|_| {})]);
    /// assert!(matches!(e, Err(taskpools::Error::PhaseWithoutPlaces)));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn run_hinted<T: Task>(
        &self,
        initial: impl IntoIterator<Item = T>,
    ) -> Result<RunReport, Error> {
        self.run_hinted_with(|_| (), initial)
            .map(|(report, _)| report)
    }

    /// [`run_hinted`](Self::run_hinted) with per-worker state, as [`run_with`](Self::run_with).
    ///
    /// ```
    /// use taskpools::places::{current_place, PlaceId, Places};
    /// use taskpools::{BoxedTask, Builder, Runtime};
    ///
    /// let rt = Runtime::builder().places(Places::parse("2x1")?).build()?;
    /// // Each worker records the places of the tasks it ran.
    /// let root = BoxedTask::<Vec<PlaceId>>::new(|ctx| {
    ///     for i in 0..8 {
    ///         let leaf = BoxedTask::<Vec<PlaceId>>::new(|ctx| {
    ///             ctx.local().push(current_place().unwrap());
    ///         });
    ///         ctx.put_at(PlaceId(i % 2), leaf).unwrap();
    ///     }
    /// });
    /// let (_, seen) = Builder::new().runtime(&rt).run_hinted_with(|_| Vec::new(), [root])?;
    /// assert_eq!(seen.iter().map(Vec::len).sum::<usize>(), 8);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn run_hinted_with<L: Send, T: Task<L>>(
        &self,
        init: impl Fn(usize) -> L + Sync,
        initial: impl IntoIterator<Item = T>,
    ) -> Result<(RunReport, Vec<L>), Error> {
        self.hinted().go::<Hinted, ByKind, L, T>(init, initial)
    }

    /// The builder for a hinted phase: on the calling worker's runtime, as `runtime` would,
    /// with all its workers by default.
    pub(crate) fn hinted(&self) -> Self {
        let mut b = *self;
        if let (None, false, Some(w)) = (
            self.runtime,
            self.threads_set,
            crate::runtime::worker::WorkerThread::current(),
        ) {
            b.threads = w.registry.threads;
        }
        b
    }

    /// [`run_hinted_with`](Self::run_hinted_with), folding the states as
    /// [`run_reduce`](Self::run_reduce) does.
    ///
    /// ```
    /// use taskpools::places::{PlaceId, Places};
    /// use taskpools::{BoxedTask, Builder, Runtime};
    ///
    /// let rt = Runtime::builder().places(Places::parse("2x1")?).build()?;
    /// let root = BoxedTask::<u64>::new(|ctx| {
    ///     for i in 1..=10u64 {
    ///         ctx.put_at(PlaceId(i as usize % 2), BoxedTask::new(move |ctx| *ctx.local() += i))
    ///             .unwrap();
    ///     }
    /// });
    /// let b = Builder::new().runtime(&rt);
    /// let (_, sum) = b.run_hinted_reduce(|_| 0u64, [root], |a, b| a + b)?;
    /// assert_eq!(sum, 55);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn run_hinted_reduce<L: Send, T: Task<L>>(
        &self,
        init: impl Fn(usize) -> L + Sync,
        initial: impl IntoIterator<Item = T>,
        reduce: impl FnMut(L, L) -> L,
    ) -> Result<(RunReport, L), Error> {
        fold(self.run_hinted_with(init, initial)?, reduce)
    }
}

pub(crate) fn fold<L>(
    (report, states): (RunReport, Vec<L>),
    reduce: impl FnMut(L, L) -> L,
) -> Result<(RunReport, L), Error> {
    let total = states
        .into_iter()
        .reduce(reduce)
        .expect("a working phase has at least one worker");
    Ok((report, total))
}

/// Which phase a builder runs, chosen at compile time (each is its own loop).
pub(crate) trait Entry {
    fn run<L: Send, T: Task<L>, P: TaskPool<T>>(
        explicit: Option<&Runtime>,
        pin: bool,
        pool: &P,
        wake: WakePolicy,
        init: impl Fn(usize) -> L + Sync,
        initial: impl IntoIterator<Item = T>,
    ) -> Result<(RunReport, Vec<L>), Error>;
}

/// A phase's initial tasks, collected when the phase iterates them (see `Builder::go`).
struct Deferred<'a, T>(Box<dyn FnOnce() -> Vec<T> + 'a>);

impl<T> IntoIterator for Deferred<'_, T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        (self.0)().into_iter()
    }
}

/// The plain phase.
pub(crate) struct Plain;

impl Entry for Plain {
    fn run<L: Send, T: Task<L>, P: TaskPool<T>>(
        explicit: Option<&Runtime>,
        pin: bool,
        pool: &P,
        wake: WakePolicy,
        init: impl Fn(usize) -> L + Sync,
        initial: impl IntoIterator<Item = T>,
    ) -> Result<(RunReport, Vec<L>), Error> {
        run_phase(explicit, pin, pool, wake, init, initial)
    }
}

/// The phase with place hints.
pub(crate) struct Hinted;

impl Entry for Hinted {
    fn run<L: Send, T: Task<L>, P: TaskPool<T>>(
        explicit: Option<&Runtime>,
        pin: bool,
        pool: &P,
        wake: WakePolicy,
        init: impl Fn(usize) -> L + Sync,
        initial: impl IntoIterator<Item = T>,
    ) -> Result<(RunReport, Vec<L>), Error> {
        run_phase_hinted(explicit, pin, pool, wake, init, initial)
    }
}
