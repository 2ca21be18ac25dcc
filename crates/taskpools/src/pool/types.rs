//! The pools of the family as types, for a program that names its pool at compile time
//! ([`Builder::pool_type`](crate::Builder::pool_type)): then only that pool's working-phase
//! loop is compiled for each task type, where a pool chosen by name at run time
//! ([`PoolKind`]) compiles the loop of every pool in the family. docs/phase.md has the
//! figures.
//!
//! Each type here stands for one [`PoolKind`] and names its pool for any task type `T`
//! ([`PoolType::Pool`]); it has no values that matter and no run-time state. The descriptive
//! names are the kinds' variant names; the papers' names are search aliases of the docs.

use super::{
    CentralFifoPool, CentralPool, ChaseLevPool, CombinedPool, DistributedPool, FcdqPool,
    NodeLockedFifoPool, NodeLockedStealingPool, PoolConfig, PoolKind, PoolVisitor,
    PrivateDequePool, PrivatePublicPool, RandomizedLocalPool, RandomizedPool, StealHalfPool,
    StealingPool, TaskPool,
};
use crate::queue::{ArrayStack, DList, ListStack};

/// A pool of the family named at compile time, for every task type: the type-level twin of a
/// [`PoolKind`]. The types that implement it are the unit structs of this module, one per kind;
/// [`Builder::pool_type`](crate::Builder::pool_type) takes one.
///
/// A program that knows its pool needs no match on names; one that offers a few pools can
/// still choose among them by name, compiling only those:
///
/// ```
/// use taskpools::pool::types::{ChaseLev, PrivatePublic};
/// use taskpools::pool::PoolType;
/// use taskpools::{Builder, Ctx, Error, Task};
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
/// fn count<P: PoolType>(depth: u32) -> Result<u64, Error> {
///     let report = Builder::new().threads(2).pool_type::<P>().run([Node(depth)])?;
///     Ok(report.tasks_run())
/// }
///
/// // Two pools compiled for `Node`, not nineteen.
/// let name = "dcwq";
/// let n = match name {
///     "chase-lev" | "dcwq" => count::<ChaseLev>(8)?,
///     _ => count::<PrivatePublic>(8)?,
/// };
/// assert_eq!(n, 511);
/// assert_eq!(ChaseLev::KIND.alias(), "dcwq");
/// # Ok::<(), Error>(())
/// ```
///
/// The trait is sealed: the family's pools are the ones listed in [`PoolKind`]. A pool of your
/// own runs with [`run_pool_with`](crate::run_pool_with) or [`run_pool_on`](crate::run_pool_on).
pub trait PoolType:
    sealed::Sealed + Copy + Default + std::fmt::Debug + Send + Sync + 'static
{
    /// The kind this type stands for ([`Builder::pool_kind`](crate::Builder::pool_kind) reports
    /// it, and [`PoolKind::with_pool`] builds the same pool type for it).
    const KIND: PoolKind;

    /// The pool for task type `T`.
    type Pool<T: Send>: TaskPool<T>;
}

mod sealed {
    pub trait Sealed {}
}

/// How a builder picks its pool: by kind at run time ([`ByKind`]) or by type at compile time
/// (a [`PoolType`]); only what `with_pool` names is compiled.
pub(crate) trait Select {
    fn with_pool<T: Send, V: PoolVisitor<T>>(kind: PoolKind, cfg: &PoolConfig, v: V) -> V::Output;
}

/// The pool of the builder's [`PoolKind`], matched at run time: every pool's code is compiled.
pub(crate) struct ByKind;

impl Select for ByKind {
    #[inline]
    fn with_pool<T: Send, V: PoolVisitor<T>>(kind: PoolKind, cfg: &PoolConfig, v: V) -> V::Output {
        kind.with_pool(cfg, v)
    }
}

impl<P: PoolType> Select for P {
    /// `kind` is `P::KIND` (set with the type), and unused: the pool is `P`'s.
    #[inline]
    fn with_pool<T: Send, V: PoolVisitor<T>>(kind: PoolKind, cfg: &PoolConfig, v: V) -> V::Output {
        debug_assert_eq!(kind, P::KIND);
        v.visit(<P::Pool<T> as TaskPool<T>>::new(cfg))
    }
}

macro_rules! pool_types {
    ($($kind:ident, $alias:literal: $pool:ty;)*) => {$(
        #[doc = concat!(
            "`", $alias, "`: [`PoolKind::", stringify!($kind), "`] as a type, for [`Builder::pool_type`](crate::Builder::pool_type).",
        )]
        ///
        /// ```
        /// use taskpools::pool::PoolType;
        /// use taskpools::{BoxedTask, Builder, PoolKind};
        #[doc = concat!("use taskpools::pool::types::", stringify!($kind), ";")]
        ///
        #[doc = concat!(
            "assert_eq!(", stringify!($kind), "::KIND, PoolKind::", stringify!($kind), ");"
        )]
        #[doc = concat!(
            "let b = Builder::new().threads(2).pool_type::<", stringify!($kind), ">();"
        )]
        /// let root = BoxedTask::new(|ctx| (0..20).for_each(|_| ctx.put(BoxedTask::new(|_| {}))));
        /// assert_eq!(b.run([root])?.tasks_run(), 21);
        /// # Ok::<(), taskpools::Error>(())
        /// ```
        #[doc(alias = $alias)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $kind;

        impl sealed::Sealed for $kind {}

        impl PoolType for $kind {
            const KIND: PoolKind = PoolKind::$kind;
            type Pool<T: Send> = $pool;
        }
    )*};
}

// The same pools as `PoolKind::with_pool` builds (tests/pool_type.rs checks every kind).
pool_types! {
    CentralList, "sq1": CentralPool<T, ListStack<T>>;
    CentralArray, "sq2": CentralPool<T, ArrayStack<T>>;
    CentralFifo, "sq4": CentralFifoPool<T>;
    CentralFifoNodeLocks, "sq3": NodeLockedFifoPool<T>;
    Randomized, "rq": RandomizedPool<T>;
    DistributedList, "dq1": DistributedPool<T, ListStack<T>>;
    DistributedArray, "dq3": DistributedPool<T, ArrayStack<T>>;
    StealWorkingEnd, "dq2": StealingPool<T, ListStack<T>>;
    StealRandomizedLocal, "dq4": RandomizedLocalPool<T>;
    StealOppositeEnd, "dq5": StealingPool<T, DList<T>>;
    StealOppositeEndNodeLocks, "dq6": NodeLockedStealingPool<T>;
    StealArray, "dq7": StealingPool<T, ArrayStack<T>>;
    PrivatePublic, "dq8": PrivatePublicPool<T, false>;
    PrivatePublicGreedy, "dq8g": PrivatePublicPool<T, true>;
    Combined, "sdq1": CombinedPool<T>;
    ChaseLev, "dcwq": ChaseLevPool<T>;
    Fcdq, "fcdq": FcdqPool<T>;
    PrivateDeque, "acr13": PrivateDequePool<T>;
    StealHalf, "manber": StealHalfPool<T>;
}
