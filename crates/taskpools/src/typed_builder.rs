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
    pub fn builder(&self) -> Builder<'rt> {
        self.builder
    }

    /// Another pool type, the settings kept.
    pub fn pool_type<Q: PoolType>(self) -> TypedBuilder<'rt, Q> {
        self.builder.pool_type::<Q>()
    }

    /// As [`Builder::threads`].
    pub fn threads(self, n: usize) -> Self {
        self.with(self.builder.threads(n))
    }

    /// As [`Builder::runtime`].
    pub fn runtime<'a>(self, rt: &'a Runtime) -> TypedBuilder<'a, P> {
        TypedBuilder::new(self.builder.runtime(rt))
    }

    /// As [`Builder::mem`].
    pub fn mem(self, m: MemKind) -> Self {
        self.with(self.builder.mem(m))
    }

    /// As [`Builder::mem_name`].
    pub fn mem_name(self, name: &str) -> Result<Self, Error> {
        Ok(self.with(self.builder.mem_name(name)?))
    }

    /// As [`Builder::search`].
    pub fn search(self, s: Search) -> Self {
        self.with(self.builder.search(s))
    }

    /// As [`Builder::wake`].
    pub fn wake(self, w: WakePolicy) -> Self {
        self.with(self.builder.wake(w))
    }

    /// As [`Builder::pin`].
    pub fn pin(self, yes: bool) -> Self {
        self.with(self.builder.pin(yes))
    }

    /// `P`'s kind ([`PoolType::KIND`]).
    pub fn pool_kind(&self) -> PoolKind {
        self.builder.pool_kind()
    }

    /// As [`Builder::thread_count`].
    pub fn thread_count(&self) -> usize {
        self.builder.thread_count()
    }

    /// As [`Builder::run`], on pool type `P`.
    pub fn run<T: Task>(&self, initial: impl IntoIterator<Item = T>) -> Result<RunReport, Error> {
        self.run_with(|_| (), initial).map(|(report, _)| report)
    }

    /// As [`Builder::run_with`], on pool type `P`.
    pub fn run_with<L: Send, T: Task<L>>(
        &self,
        init: impl Fn(usize) -> L + Sync,
        initial: impl IntoIterator<Item = T>,
    ) -> Result<(RunReport, Vec<L>), Error> {
        self.builder.go::<Plain, P, L, T>(init, initial)
    }

    /// As [`Builder::run_reduce`], on pool type `P`.
    pub fn run_reduce<L: Send, T: Task<L>>(
        &self,
        init: impl Fn(usize) -> L + Sync,
        initial: impl IntoIterator<Item = T>,
        reduce: impl FnMut(L, L) -> L,
    ) -> Result<(RunReport, L), Error> {
        fold(self.run_with(init, initial)?, reduce)
    }

    /// As [`Builder::run_hinted`], on pool type `P`.
    pub fn run_hinted<T: Task>(
        &self,
        initial: impl IntoIterator<Item = T>,
    ) -> Result<RunReport, Error> {
        self.run_hinted_with(|_| (), initial)
            .map(|(report, _)| report)
    }

    /// As [`Builder::run_hinted_with`], on pool type `P`.
    pub fn run_hinted_with<L: Send, T: Task<L>>(
        &self,
        init: impl Fn(usize) -> L + Sync,
        initial: impl IntoIterator<Item = T>,
    ) -> Result<(RunReport, Vec<L>), Error> {
        self.builder.hinted().go::<Hinted, P, L, T>(init, initial)
    }

    /// As [`Builder::run_hinted_reduce`], on pool type `P`.
    pub fn run_hinted_reduce<L: Send, T: Task<L>>(
        &self,
        init: impl Fn(usize) -> L + Sync,
        initial: impl IntoIterator<Item = T>,
        reduce: impl FnMut(L, L) -> L,
    ) -> Result<(RunReport, L), Error> {
        fold(self.run_hinted_with(init, initial)?, reduce)
    }
}
