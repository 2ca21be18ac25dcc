//! The task model (Korch and Rauber (2002) §2): a task is a value of a user type `T: Task`; running
//! it may create child tasks with [`Ctx::put`]. Tasks are moved into queue slots, never boxed by
//! the runtime; boxed closures are just one more `Task` implementation ([`BoxedTask`]).

/// A unit of work that a task pool schedules.
///
/// `run` consumes the task; children are created with [`Ctx::put`] and become visible to other
/// workers at once (not only when the parent returns).
///
/// `L` is the type of the per-worker state the task reaches with [`Ctx::local`]; it defaults
/// to `()`, which is what [`Builder::run`](crate::Builder::run) provides. A task type with a
/// state of its own implements `Task<MyState>` and is run with
/// [`Builder::run_with`](crate::Builder::run_with) or
/// [`Builder::run_reduce`](crate::Builder::run_reduce).
///
/// ```
/// use taskpools::{Builder, Ctx, Task};
///
/// /// Sums 0..n by splitting the range until it is short.
/// struct Range(u64, u64);
///
/// impl Task<u64> for Range {
///     fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
///         let Range(lo, hi) = self;
///         if hi - lo <= 64 {
///             *ctx.local() += (lo..hi).sum::<u64>();
///         } else {
///             let mid = lo + (hi - lo) / 2;
///             ctx.put(Range(lo, mid)); // children are visible to other workers at once
///             ctx.put(Range(mid, hi));
///         }
///     }
/// }
///
/// let (_, sum) = Builder::new().threads(2).run_reduce(|_| 0, [Range(0, 10_000)], |a, b| a + b)?;
/// assert_eq!(sum, 49_995_000);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub trait Task<L = ()>: Send + Sized {
    /// Executes the task on the calling worker.
    ///
    /// ```
    /// use taskpools::{Builder, Ctx, Task};
    ///
    /// /// Fibonacci the naive way: one task per call, the leaves add into the worker's state.
    /// struct Fib(u32);
    /// impl Task<u64> for Fib {
    ///     fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
    ///         if self.0 < 2 {
    ///             *ctx.local() += self.0 as u64;
    ///         } else {
    ///             ctx.put(Fib(self.0 - 1));
    ///             ctx.put(Fib(self.0 - 2));
    ///         }
    ///     }
    /// }
    /// let (_, fib) = Builder::new().threads(2).run_reduce(|_| 0, [Fib(15)], |a, b| a + b)?;
    /// assert_eq!(fib, 610);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    fn run(self, ctx: &mut Ctx<'_, Self, L>);
}

/// Where a running task puts its children. Implemented by the runtime for each pool.
pub(crate) trait PutSink<T> {
    fn put(&mut self, task: T);
    /// The putting worker's own backlog in the pool ([`TaskPool::own_backlog`]).
    ///
    /// [`TaskPool::own_backlog`]: crate::TaskPool::own_backlog
    fn queued(&self) -> usize;
    /// A put by worker `me` with a hint to `place` ([`Ctx::put_at`]).
    fn put_at(&mut self, me: usize, place: usize, task: T) -> Result<(), PutAtError<T>>;
    /// The places hints can name (0: this phase takes no hints).
    fn places(&self) -> usize;
}

/// The context a running task sees: its worker's identity, its worker's state (`L`, see
/// [`Ctx::local`]) and the `put` operation.
///
/// ```
/// use taskpools::{Builder, Ctx, Task};
///
/// /// Records which worker ran it, in the worker's own state.
/// struct Probe;
/// impl Task<Vec<usize>> for Probe {
///     fn run(self, ctx: &mut Ctx<'_, Self, Vec<usize>>) {
///         assert_eq!(ctx.workers(), 2);
///         let me = ctx.worker();
///         ctx.local().push(me);
///     }
/// }
/// let (_, seen) = Builder::new().threads(2).run_with(|_| Vec::new(), (0..20).map(|_| Probe))?;
/// for (i, s) in seen.iter().enumerate() {
///     assert!(s.iter().all(|&w| w == i)); // a worker's state is only its own
/// }
/// assert_eq!(seen.iter().map(Vec::len).sum::<usize>(), 20);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct Ctx<'a, T, L = ()> {
    sink: &'a mut dyn PutSink<T>,
    local: &'a mut L,
    worker: usize,
    workers: usize,
}

impl<'a, T, L> Ctx<'a, T, L> {
    pub(crate) fn new(
        sink: &'a mut dyn PutSink<T>,
        local: &'a mut L,
        worker: usize,
        workers: usize,
    ) -> Self {
        Ctx {
            sink,
            local,
            worker,
            workers,
        }
    }

    /// The state of the worker running this task: created by the `init` of
    /// [`Builder::run_with`](crate::Builder::run_with) on that worker's thread before its first
    /// task, reached by every task that worker runs, and returned when the phase ends. Only
    /// this worker touches it, so counting or reducing into it needs no atomics.
    ///
    /// ```
    /// use taskpools::{BoxedTask, Builder};
    ///
    /// // The largest of 1..=50, kept per worker and then folded: no atomics.
    /// let tasks = (1..=50u64).map(|i| BoxedTask::<u64>::new(move |ctx| {
    ///     let best = ctx.local();
    ///     *best = (*best).max(i * i % 97);
    /// }));
    /// let (_, best) = Builder::new().threads(2).run_reduce(|_| 0u64, tasks, u64::max)?;
    /// assert_eq!(best, (1..=50u64).map(|i| i * i % 97).max().unwrap());
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    #[inline]
    pub fn local(&mut self) -> &mut L {
        self.local
    }

    /// Creates a child task (Korch and Rauber's `tpool_put`). The task is moved into the pool.
    ///
    /// ```
    /// use taskpools::{Builder, Ctx, Task};
    ///
    /// /// Counts down from `n`, one task per step.
    /// struct Down(u32);
    /// impl Task for Down {
    ///     fn run(self, ctx: &mut Ctx<'_, Self>) {
    ///         if self.0 > 0 {
    ///             ctx.put(Down(self.0 - 1));
    ///         }
    ///     }
    /// }
    /// assert_eq!(Builder::new().threads(2).run([Down(99)])?.tasks_run(), 100);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    #[inline]
    pub fn put(&mut self, task: T) {
        self.sink.put(task);
    }

    /// How many tasks this worker's own queue in the pool holds now, as the pool reports it
    /// ([`TaskPool::own_backlog`](crate::TaskPool::own_backlog)): its private and public parts, so
    /// the tasks this worker runs next and, in most pools, those other workers can steal from
    /// it. The pools without a queue per worker (`central-list`, `central-array`,
    /// `central-fifo`, `randomized`) report 0.
    ///
    /// A put costs a few nanoseconds more than a call, which matters for tasks of a few
    /// nanoseconds. A task that finds enough work queued can run a child at once instead of
    /// putting it (a *cutoff*, decided at run time, as in lazy task creation): the pool keeps
    /// work for thieves, and the deep part of the tree runs as plain calls. Such a child is
    /// not a task: it is not counted in the phase's report, and what it would have put, it
    /// must handle itself.
    ///
    /// On `private-deque`, thieves are served by the owner: at its `get`s and here. A thief
    /// that asks while the owner is inside a long plain call waits for the call to end, so
    /// keep the calls short, or read `queued()` inside them too. There, `queued()` also wakes
    /// a sleeping worker for the puts the task has made since it began or since its last
    /// `queued()` (a put does not; see
    /// [`TaskPool::PUTS_WAIT_FOR_OWNER`](crate::TaskPool::PUTS_WAIT_FOR_OWNER)), which costs
    /// one `SeqCst` fence per wake-up (up to one per worker under `every-put`, none under
    /// `spin`) the first time after such puts. A task that waits for a child it put
    /// to run on another worker must call `queued()` while it waits, or nobody can take it. The pools whose queues
    /// others cannot take from (`distributed-list`, `distributed-array`) never share what
    /// the cutoff leaves in calls; thieves of the other pools take queued tasks directly.
    ///
    /// ```
    /// use taskpools::{Builder, Ctx, Task};
    ///
    /// /// Counts the nodes of a binary tree of depth `d`.
    /// struct Tree(u32);
    ///
    /// fn count(d: u32) -> u64 {
    ///     if d == 0 { 1 } else { 1 + count(d - 1) + count(d - 1) }
    /// }
    ///
    /// impl Task<u64> for Tree {
    ///     fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
    ///         *ctx.local() += 1;
    ///         if self.0 == 0 {
    ///             return;
    ///         }
    ///         for _ in 0..2 {
    ///             if ctx.queued() < 16 {
    ///                 ctx.put(Tree(self.0 - 1)); // others may need work
    ///             } else {
    ///                 *ctx.local() += count(self.0 - 1); // plenty queued: a plain call
    ///             }
    ///         }
    ///     }
    /// }
    ///
    /// let b = Builder::new().threads(2).pool_name("private-deque")?;
    /// let (_, nodes) = b.run_reduce(|_| 0u64, [Tree(16)], |a, b| a + b)?;
    /// assert_eq!(nodes, (1 << 17) - 1);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    #[inline]
    pub fn queued(&self) -> usize {
        self.sink.queued()
    }

    /// Creates a child task with a *locality hint*: it should run at `place` of the runtime's
    /// [places](crate::places). The task goes to that place's inbox, which the place's workers
    /// move into their own queues between tasks (a hint to this worker's own place is a plain
    /// [`put`](Self::put)). A worker of another place takes a hinted task only when it has
    /// nothing else to do, so a hint is not a binding: every task still runs exactly once.
    ///
    /// Only a phase started with [`Builder::run_hinted`](crate::Builder::run_hinted) (or
    /// `run_hinted_with`, `run_hinted_reduce`) takes hints; elsewhere this fails with
    /// [`Error::PhaseWithoutHints`](crate::Error::PhaseWithoutHints). A place the runtime does
    /// not have is [`Error::NoSuchPlace`](crate::Error::NoSuchPlace). A failed `put_at` hands
    /// the task back ([`PutAtError::task`]), so nothing is lost: put it without a hint, say.
    ///
    /// [`places`](Self::places) counts every place of the runtime, also those without a
    /// worker in a phase narrower than the runtime: tasks hinted there run when some worker
    /// has nothing else to do. The initial tasks of a phase carry no hint.
    ///
    /// A hint to another place costs that place's inbox lock and a wake-up check. Hints matter
    /// on the pools with a queue per worker; on the central pools (`central-list`,
    /// `central-array`, `central-fifo`) and `randomized`, a hint only decides which worker
    /// moves the task into the shared queues. Plain phases do not pay for hints (the hinted
    /// phase is a separate compilation of the loop).
    ///
    /// ```
    /// use taskpools::places::{PlaceId, Places};
    /// use taskpools::{Builder, Ctx, Runtime, Task};
    ///
    /// /// A root that puts 64 leaves, leaf `i` hinted to place `i % 2`.
    /// enum Job {
    ///     Root,
    ///     Leaf(usize),
    /// }
    ///
    /// impl Task<Vec<usize>> for Job {
    ///     fn run(self, ctx: &mut Ctx<'_, Self, Vec<usize>>) {
    ///         match self {
    ///             Job::Root => {
    ///                 for i in 0..64 {
    ///                     ctx.put_at(PlaceId(i % ctx.places()), Job::Leaf(i)).unwrap();
    ///                 }
    ///             }
    ///             Job::Leaf(i) => ctx.local().push(i),
    ///         }
    ///     }
    /// }
    ///
    /// let rt = Runtime::builder().places(Places::parse("2x1")?).build()?;
    /// let b = Builder::new().threads(2).runtime(&rt);
    /// let (report, ran) = b.run_hinted_with(|_| Vec::new(), [Job::Root])?;
    /// assert_eq!(report.tasks_run(), 65);
    /// assert_eq!(ran.iter().map(Vec::len).sum::<usize>(), 64); // each leaf exactly once
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    #[inline]
    pub fn put_at(&mut self, place: crate::places::PlaceId, task: T) -> Result<(), PutAtError<T>> {
        self.sink.put_at(self.worker, place.0, task)
    }

    /// The number of places a hint of [`put_at`](Self::put_at) can name: the runtime's places
    /// in a phase with hints, 0 in a phase without.
    ///
    /// ```
    /// use taskpools::places::Places;
    /// use taskpools::{BoxedTask, Builder, Runtime};
    ///
    /// let rt = Runtime::builder().places(Places::parse("2x1")?).build()?;
    /// let probe = || BoxedTask::<usize>::new(|ctx| *ctx.local() = ctx.places());
    /// let b = Builder::new().runtime(&rt);
    /// let (_, hinted) = b.run_hinted_reduce(|_| 0, [probe()], usize::max)?;
    /// let (_, plain) = b.run_reduce(|_| 0, [probe()], usize::max)?;
    /// assert_eq!((hinted, plain), (2, 0));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn places(&self) -> usize {
        self.sink.places()
    }

    /// The index of the worker running this task, in `0..workers()`.
    ///
    /// ```
    /// use taskpools::{BoxedTask, Builder};
    ///
    /// let tasks = (0..10).map(|_| BoxedTask::<Vec<usize>>::new(|ctx| {
    ///     let w = ctx.worker();
    ///     ctx.local().push(w);
    /// }));
    /// let (_, seen) = Builder::new().threads(2).run_with(|_| Vec::new(), tasks)?;
    /// assert!(seen[0].iter().all(|&w| w == 0) && seen[1].iter().all(|&w| w == 1));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn worker(&self) -> usize {
        self.worker
    }

    /// The number of workers in this working phase.
    ///
    /// ```
    /// use taskpools::{BoxedTask, Builder};
    ///
    /// let probe = BoxedTask::<usize>::new(|ctx| *ctx.local() = ctx.workers());
    /// let (_, n) = Builder::new().threads(2).run_reduce(|_| 0, [probe], usize::max)?;
    /// assert_eq!(n, 2);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn workers(&self) -> usize {
        self.workers
    }
}

/// A [`Ctx::put_at`] that could not be done: why, and the task, handed back unrun.
///
/// Converting it into an [`Error`](crate::Error) (with `?` in a helper that returns
/// `Result<_, taskpools::Error>`, say) drops the task: take [`task`](Self::task) first to keep it.
///
/// ```
/// use taskpools::places::PlaceId;
/// use taskpools::{BoxedTask, Builder, Error};
///
/// // A plain phase takes no hints: the task comes back, and is put without one.
/// let root = BoxedTask::<u32>::new(|ctx| {
///     let child = BoxedTask::<u32>::new(|ctx| *ctx.local() += 1);
///     if let Err(e) = ctx.put_at(PlaceId(0), child) {
///         assert!(matches!(e.error, Error::PhaseWithoutHints));
///         ctx.put(e.task);
///     }
/// });
/// let (_, ran) = Builder::new().threads(1).run_reduce(|_| 0, [root], |a, b| a + b)?;
/// assert_eq!(ran, 1);
/// # Ok::<(), taskpools::Error>(())
/// ```
#[non_exhaustive]
pub struct PutAtError<T> {
    /// Why: [`Error::PhaseWithoutHints`](crate::Error::PhaseWithoutHints) or
    /// [`Error::NoSuchPlace`](crate::Error::NoSuchPlace).
    pub error: crate::Error,
    /// The task that was not put.
    pub task: T,
}

impl<T> std::fmt::Debug for PutAtError<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PutAtError")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl<T> std::fmt::Display for PutAtError<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.error, f)
    }
}

/// Its message is the inner error's (which is therefore not also its `source`).
impl<T> std::error::Error for PutAtError<T> {}

impl<T> From<PutAtError<T>> for crate::Error {
    fn from(e: PutAtError<T>) -> Self {
        e.error
    }
}

/// A task made from a closure, for users who do not want to define a task type.
///
/// ```
/// use taskpools::{BoxedTask, Builder};
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// static HITS: AtomicUsize = AtomicUsize::new(0);
/// let root = BoxedTask::new(|ctx| {
///     for _ in 0..10 {
///         ctx.put(BoxedTask::new(|_| { HITS.fetch_add(1, Ordering::Relaxed); }));
///     }
/// });
/// let report = Builder::new().threads(2).run(vec![root]).unwrap();
/// assert_eq!(report.tasks_run(), 11);
/// assert_eq!(HITS.load(Ordering::Relaxed), 10);
/// ```
///
/// With a per-worker state `L`, the closures reach it with [`Ctx::local`]:
///
/// ```
/// use taskpools::{BoxedTask, Builder};
///
/// let root = BoxedTask::<u64>::new(|ctx| {
///     for i in 1..=10 {
///         ctx.put(BoxedTask::new(move |ctx| *ctx.local() += i));
///     }
/// });
/// let (_, sum) = Builder::new().threads(2).run_reduce(|_| 0u64, [root], |a, b| a + b)?;
/// assert_eq!(sum, 55);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct BoxedTask<L = ()>(Box<BoxedFn<L>>);

type BoxedFn<L> = dyn for<'c> FnOnce(&mut Ctx<'c, BoxedTask<L>, L>) + Send;

impl<L> BoxedTask<L> {
    /// Wraps a closure as a task.
    ///
    /// ```
    /// use taskpools::{BoxedTask, Builder};
    ///
    /// let data: Vec<u64> = (1..=64).collect();
    /// let tasks: Vec<_> = data
    ///     .chunks(16)
    ///     .map(|c| {
    ///         let c = c.to_vec(); // a boxed task is `'static`: it owns what it uses
    ///         BoxedTask::new(move |ctx| *ctx.local() += c.iter().sum::<u64>())
    ///     })
    ///     .collect();
    /// let (_, sum) = Builder::new().threads(2).run_reduce(|_| 0u64, tasks, |a, b| a + b)?;
    /// assert_eq!(sum, 64 * 65 / 2);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn new(f: impl for<'c> FnOnce(&mut Ctx<'c, BoxedTask<L>, L>) + Send + 'static) -> Self {
        BoxedTask(Box::new(f))
    }
}

impl<L> Task<L> for BoxedTask<L> {
    fn run(self, ctx: &mut Ctx<'_, Self, L>) {
        (self.0)(ctx)
    }
}
