//! The task model (seed 004 §2): a task is a value of a user type `T: Task`; running it may
//! create child tasks with [`Ctx::put`]. Tasks are moved into queue slots, never boxed by the
//! runtime; boxed closures are just one more `Task` implementation ([`BoxedTask`]).

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
    fn run(self, ctx: &mut Ctx<'_, Self, L>);
}

/// Where a running task puts its children. Implemented by the runtime for each pool.
pub(crate) trait PutSink<T> {
    fn put(&mut self, task: T);
}

/// The context a running task sees: its worker's identity, its worker's state (`L`, see
/// [`Ctx::local`]) and the `put` operation.
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
    #[inline]
    pub fn local(&mut self) -> &mut L {
        self.local
    }

    /// Creates a child task (the seed's `tpool_put`). The task is moved into the pool.
    #[inline]
    pub fn put(&mut self, task: T) {
        self.sink.put(task);
    }

    /// The index of the worker running this task, in `0..workers()`.
    pub fn worker(&self) -> usize {
        self.worker
    }

    /// The number of workers in this working phase.
    pub fn workers(&self) -> usize {
        self.workers
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
    pub fn new(f: impl for<'c> FnOnce(&mut Ctx<'c, BoxedTask<L>, L>) + Send + 'static) -> Self {
        BoxedTask(Box::new(f))
    }
}

impl<L> Task<L> for BoxedTask<L> {
    fn run(self, ctx: &mut Ctx<'_, Self, L>) {
        (self.0)(ctx)
    }
}
