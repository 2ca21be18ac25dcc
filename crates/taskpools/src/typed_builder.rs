//! A [`Builder`] whose pool is a type ([`Builder::pool_type`]): its phases compile only that
//! pool's loop for each task type, not the loop of every pool in the family.

use std::marker::PhantomData;

use crate::builder::{fold, Builder, Hinted, Plain};
use crate::mem::MemKind;
use crate::phase::{RunReport, WakePolicy};
use crate::pool::{PoolKind, PoolType, Search};
use crate::runtime::Runtime;
use crate::task::Task;
use crate::Error;

/// Configures and runs a working phase on the pool type `P` (one of
/// [`pool::types`](crate::pool::types)), made by [`Builder::pool_type`].
///
/// Everything but the choice of pool is [`Builder`]'s: the same settings (set before or after
/// the pool type), the same choice of runtime, the same checks and errors, and the same
/// phase, on the same pool as `Builder::pool(P::KIND)` would build. What differs is what is
/// compiled: a phase run here instantiates the working-phase loop for `P` alone, so a crate
/// that runs several task types pays for one pool per task type instead of one per pool of
/// the family (see docs/phase.md for the build times).
///
/// ```
/// use taskpools::pool::types::PrivateDeque;
/// use taskpools::{Builder, Ctx, Runtime, Task};
///
/// /// Sums `lo..hi`, splitting ranges longer than 64.
/// struct Range(u64, u64);
/// impl Task<u64> for Range {
///     fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
///         let Range(lo, hi) = self;
///         if hi - lo <= 64 {
///             *ctx.local() += (lo..hi).sum::<u64>();
///         } else {
///             let mid = lo + (hi - lo) / 2;
///             ctx.put(Range(lo, mid));
///             ctx.put(Range(mid, hi));
///         }
///     }
/// }
///
/// let rt = Runtime::new(2)?;
/// let b = Builder::new().pool_type::<PrivateDeque>().runtime(&rt);
/// let (report, sum) = b.run_reduce(|_| 0, [Range(0, 10_000)], |a, b| a + b)?;
/// assert_eq!(sum, 49_995_000);
/// assert!(report.tasks_run() > 1);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct TypedBuilder<'rt, P> {
    builder: Builder<'rt>,
    pool: PhantomData<fn() -> P>,
}

impl<P> Clone for TypedBuilder<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for TypedBuilder<'_, P> {}

impl<P: PoolType> std::fmt::Debug for TypedBuilder<'_, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedBuilder")
            .field("pool_type", &std::any::type_name::<P>())
            .field("builder", &self.builder)
            .finish()
    }
}

impl<'rt, P: PoolType> TypedBuilder<'rt, P> {
    /// `builder`, whose pool kind is `P::KIND`, with the pool type `P`.
    pub(crate) fn new(builder: Builder<'rt>) -> Self {
        debug_assert_eq!(builder.pool_kind(), P::KIND);
        TypedBuilder {
            builder,
            pool: PhantomData,
        }
    }

    /// Keeps the pool type, with the settings of `builder`.
    fn with(self, builder: Builder<'rt>) -> Self {
        TypedBuilder::new(builder)
    }

    /// The same settings with the pool chosen at run time again: a [`Builder`] whose pool is
    /// `P`'s kind ([`PoolType::KIND`]).
    ///
    /// ```
    /// use taskpools::pool::types::Fcdq;
    /// use taskpools::{Builder, PoolKind};
    ///
    /// let typed = Builder::new().threads(2).pool_type::<Fcdq>();
    /// let by_kind = typed.builder(); // the same settings, the pool chosen at run time again
    /// assert_eq!((by_kind.pool_kind(), by_kind.thread_count()), (PoolKind::Fcdq, 2));
    /// ```
    pub fn builder(&self) -> Builder<'rt> {
        self.builder
    }

    /// Another pool type, the settings kept.
    ///
    /// ```
    /// use taskpools::pool::types::{ChaseLev, PrivateDeque};
    /// use taskpools::{Builder, PoolKind};
    ///
    /// let b = Builder::new().threads(2).pool_type::<ChaseLev>().pool_type::<PrivateDeque>();
    /// assert_eq!((b.pool_kind(), b.thread_count()), (PoolKind::PrivateDeque, 2));
    /// ```
    pub fn pool_type<Q: PoolType>(self) -> TypedBuilder<'rt, Q> {
        self.builder.pool_type::<Q>()
    }

    /// As [`Builder::threads`].
    ///
    /// ```
    /// use taskpools::pool::types::ChaseLev;
    /// use taskpools::{BoxedTask, Builder, Error};
    ///
    /// let b = Builder::new().pool_type::<ChaseLev>().threads(2);
    /// assert_eq!(b.thread_count(), 2);
    /// assert!(matches!(b.threads(0).run([BoxedTask::new(|_| {})]), Err(Error::ZeroThreads)));
    /// ```
    pub fn threads(self, n: usize) -> Self {
        self.with(self.builder.threads(n))
    }

    /// As [`Builder::runtime`].
    ///
    /// ```
    /// use taskpools::pool::types::ChaseLev;
    /// use taskpools::{BoxedTask, Builder, Runtime};
    ///
    /// let rt = Runtime::new(2)?;
    /// let b = Builder::new().pool_type::<ChaseLev>().runtime(&rt);
    /// for _ in 0..3 {
    ///     // Every phase reuses `rt`'s two workers.
    ///     assert_eq!(b.run((0..10).map(|_| BoxedTask::new(|_| {})))?.tasks_run(), 10);
    /// }
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn runtime<'a>(self, rt: &'a Runtime) -> TypedBuilder<'a, P> {
        TypedBuilder::new(self.builder.runtime(rt))
    }

    /// As [`Builder::mem`].
    ///
    /// ```
    /// use taskpools::pool::types::CentralList;
    /// use taskpools::{BoxedTask, Builder, MemKind};
    ///
    /// let b = Builder::new().threads(2).pool_type::<CentralList>().mem(MemKind::Central);
    /// assert_eq!(b.run((0..10).map(|_| BoxedTask::new(|_| {})))?.tasks_run(), 10);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn mem(self, m: MemKind) -> Self {
        self.with(self.builder.mem(m))
    }

    /// As [`Builder::mem_name`].
    ///
    /// ```
    /// use taskpools::pool::types::CentralList;
    /// use taskpools::{BoxedTask, Builder};
    ///
    /// let b = Builder::new().threads(2).pool_type::<CentralList>().mem_name("dl")?;
    /// assert_eq!(b.run((0..10).map(|_| BoxedTask::new(|_| {})))?.tasks_run(), 10);
    /// assert!(b.mem_name("arena").is_err());
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn mem_name(self, name: &str) -> Result<Self, Error> {
        Ok(self.with(self.builder.mem_name(name)?))
    }

    /// As [`Builder::search`].
    ///
    /// ```
    /// use taskpools::pool::types::StealHalf;
    /// use taskpools::{BoxedTask, Builder, Search};
    ///
    /// let b = Builder::new().threads(2).pool_type::<StealHalf>().search(Search::Random);
    /// assert_eq!(b.run((0..10).map(|_| BoxedTask::new(|_| {})))?.tasks_run(), 10);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn search(self, s: Search) -> Self {
        self.with(self.builder.search(s))
    }

    /// As [`Builder::wake`].
    ///
    /// ```
    /// use taskpools::pool::types::PrivatePublic;
    /// use taskpools::{BoxedTask, Builder, WakePolicy};
    ///
    /// let b = Builder::new().threads(2).pool_type::<PrivatePublic>().wake(WakePolicy::EveryPut);
    /// assert_eq!(b.run((0..10).map(|_| BoxedTask::new(|_| {})))?.tasks_run(), 10);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn wake(self, w: WakePolicy) -> Self {
        self.with(self.builder.wake(w))
    }

    /// As [`Builder::pin`].
    ///
    /// ```
    /// use taskpools::pool::types::ChaseLev;
    /// use taskpools::{BoxedTask, Builder};
    ///
    /// // On a pinned runtime started for this phase.
    /// let b = Builder::new().threads(2).pool_type::<ChaseLev>().pin(true);
    /// assert_eq!(b.run((0..10).map(|_| BoxedTask::new(|_| {})))?.tasks_run(), 10);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn pin(self, yes: bool) -> Self {
        self.with(self.builder.pin(yes))
    }

    /// `P`'s kind ([`PoolType::KIND`]).
    ///
    /// ```
    /// use taskpools::pool::types::Combined;
    /// use taskpools::{Builder, PoolKind};
    ///
    /// assert_eq!(Builder::new().pool_type::<Combined>().pool_kind(), PoolKind::Combined);
    /// ```
    pub fn pool_kind(&self) -> PoolKind {
        self.builder.pool_kind()
    }

    /// As [`Builder::thread_count`].
    ///
    /// ```
    /// use taskpools::pool::types::Combined;
    ///
    /// let rt = taskpools::Runtime::new(2)?;
    /// let b = taskpools::Builder::new().pool_type::<Combined>();
    /// assert_eq!(b.threads(1).thread_count(), 1);
    /// assert_eq!(b.runtime(&rt).thread_count(), 2); // all of the runtime's workers
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn thread_count(&self) -> usize {
        self.builder.thread_count()
    }

    /// As [`Builder::run`], on pool type `P`.
    ///
    /// ```
    /// use taskpools::pool::types::StealOppositeEnd;
    /// use taskpools::{BoxedTask, Builder};
    ///
    /// let root = BoxedTask::new(|ctx| (0..50).for_each(|_| ctx.put(BoxedTask::new(|_| {}))));
    /// let report = Builder::new().threads(2).pool_type::<StealOppositeEnd>().run([root])?;
    /// assert_eq!(report.tasks_run(), 51);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn run<T: Task>(&self, initial: impl IntoIterator<Item = T>) -> Result<RunReport, Error> {
        self.run_with(|_| (), initial).map(|(report, _)| report)
    }

    /// As [`Builder::run_with`], on pool type `P`.
    ///
    /// ```
    /// use taskpools::pool::types::ChaseLev;
    /// use taskpools::{BoxedTask, Builder};
    ///
    /// let tasks = (1..=10u64).map(|i| BoxedTask::new(move |ctx| *ctx.local() += i));
    /// let b = Builder::new().threads(2).pool_type::<ChaseLev>();
    /// let (_, per_worker) = b.run_with(|_| 0, tasks)?;
    /// assert_eq!(per_worker.len(), 2);
    /// assert_eq!(per_worker.iter().sum::<u64>(), 55);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn run_with<L: Send, T: Task<L>>(
        &self,
        init: impl Fn(usize) -> L + Sync,
        initial: impl IntoIterator<Item = T>,
    ) -> Result<(RunReport, Vec<L>), Error> {
        self.builder.go::<Plain, P, L, T>(init, initial)
    }

    /// As [`Builder::run_reduce`], on pool type `P`.
    ///
    /// ```
    /// use taskpools::pool::types::PrivateDeque;
    /// use taskpools::{BoxedTask, Builder};
    ///
    /// let tasks = (1..=100u64).map(|i| BoxedTask::new(move |ctx| *ctx.local() += i));
    /// let b = Builder::new().threads(2).pool_type::<PrivateDeque>();
    /// let (_, sum) = b.run_reduce(|_| 0u64, tasks, |a, b| a + b)?;
    /// assert_eq!(sum, 5050);
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

    /// As [`Builder::run_hinted`], on pool type `P`.
    ///
    /// ```
    /// use taskpools::places::{PlaceId, Places};
    /// use taskpools::pool::types::ChaseLev;
    /// use taskpools::{BoxedTask, Builder, Runtime};
    ///
    /// let rt = Runtime::builder().places(Places::parse("2x1")?).build()?;
    /// let root = BoxedTask::new(|ctx| {
    ///     (0..10).for_each(|i| ctx.put_at(PlaceId(i % 2), BoxedTask::new(|_| {})).unwrap());
    /// });
    /// let b = Builder::new().pool_type::<ChaseLev>().runtime(&rt);
    /// assert_eq!(b.run_hinted([root])?.tasks_run(), 11);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn run_hinted<T: Task>(
        &self,
        initial: impl IntoIterator<Item = T>,
    ) -> Result<RunReport, Error> {
        self.run_hinted_with(|_| (), initial)
            .map(|(report, _)| report)
    }

    /// As [`Builder::run_hinted_with`], on pool type `P`.
    ///
    /// ```
    /// use taskpools::places::{PlaceId, Places};
    /// use taskpools::pool::types::ChaseLev;
    /// use taskpools::{BoxedTask, Builder, Runtime};
    ///
    /// let rt = Runtime::builder().places(Places::parse("2x1")?).build()?;
    /// let root = BoxedTask::<u32>::new(|ctx| {
    ///     for i in 0..10 {
    ///         ctx.put_at(PlaceId(i % 2), BoxedTask::new(|ctx| *ctx.local() += 1)).unwrap();
    ///     }
    /// });
    /// let b = Builder::new().pool_type::<ChaseLev>().runtime(&rt);
    /// let (_, ran) = b.run_hinted_with(|_| 0u32, [root])?;
    /// assert_eq!(ran.iter().sum::<u32>(), 10);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn run_hinted_with<L: Send, T: Task<L>>(
        &self,
        init: impl Fn(usize) -> L + Sync,
        initial: impl IntoIterator<Item = T>,
    ) -> Result<(RunReport, Vec<L>), Error> {
        self.builder.hinted().go::<Hinted, P, L, T>(init, initial)
    }

    /// As [`Builder::run_hinted_reduce`], on pool type `P`.
    ///
    /// ```
    /// use taskpools::places::{PlaceId, Places};
    /// use taskpools::pool::types::ChaseLev;
    /// use taskpools::{BoxedTask, Builder, Runtime};
    ///
    /// let rt = Runtime::builder().places(Places::parse("2x1")?).build()?;
    /// let root = BoxedTask::<u64>::new(|ctx| {
    ///     for i in 1..=10u64 {
    ///         ctx.put_at(PlaceId(i as usize % 2), BoxedTask::new(move |ctx| *ctx.local() += i))
    ///             .unwrap();
    ///     }
    /// });
    /// let b = Builder::new().pool_type::<ChaseLev>().runtime(&rt);
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
