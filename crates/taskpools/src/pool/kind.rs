//! The pools of the family by kind: [`PoolKind`], its names and aliases (the papers' and
//! ours), and the one dispatch from a kind chosen at run time to generic code
//! ([`PoolVisitor`]).

use std::fmt;

use super::*;

/// The pools of the family, selected by name at run time and dispatched once to generic code.
///
/// ```
/// use taskpools::{BoxedTask, Builder, PoolKind};
///
/// // Every pool of the family runs the same phase to the same result.
/// for kind in PoolKind::ALL {
///     let root = BoxedTask::new(|ctx| (0..20).for_each(|_| ctx.put(BoxedTask::new(|_| {}))));
///     assert_eq!(Builder::new().threads(2).pool(kind).run([root])?.tasks_run(), 21, "{kind}");
/// }
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PoolKind {
    /// `sq1`: one central LIFO queue, a linked list, one lock.
    CentralList,
    /// `sq2`: one central LIFO queue, an array, one lock.
    CentralArray,
    /// `sq4`: one central FIFO queue with separate head and tail locks.
    CentralFifo,
    /// `sq3`: one central FIFO queue, a doubly linked list with a lock per task (node).
    CentralFifoNodeLocks,
    /// `rq`: 4×P locked queues; put to a random one, get scans them in random order.
    Randomized,
    /// `dq1`: a private list per worker, no exchange.
    DistributedList,
    /// `dq3`: a private array per worker, no exchange.
    DistributedArray,
    /// `dq2`: a locked list per worker; thieves take from the working end.
    StealWorkingEnd,
    /// `dq4`: two locked lists per worker, a randomized local pool; thieves take from the
    /// working end.
    StealRandomizedLocal,
    /// `dq5`: a locked doubly linked list per worker; thieves take the oldest task.
    StealOppositeEnd,
    /// `dq6`: a doubly linked list per worker with a lock per task (node); thieves take the
    /// oldest task while the owner works at the other end.
    StealOppositeEndNodeLocks,
    /// `dq7`: a locked array per worker; thieves take from the working end.
    StealArray,
    /// `dq8`: private block + public list of blocks per worker, generous transfer.
    PrivatePublic,
    /// `dq8g`: as `dq8` with the greedy transfer policy.
    PrivatePublicGreedy,
    /// `sdq1`: private blocks per worker, overflow to one central list of blocks.
    Combined,
    /// `dcwq`: a lock-free Chase–Lev deque per worker (Papakonstantinou, PARTEE (2015)).
    ChaseLev,
    /// `acr13`: a private deque per worker that thieves reach through steal requests.
    PrivateDeque,
    /// `fcdq`: a fixed-capacity FCDQ per worker (Papakonstantinou, PARTEE (2015)).
    Fcdq,
    /// `manber`: Manber's concurrent pool, steal-half with a search strategy (as Kotz and
    /// Ellis, "Evaluation of Concurrent Pools" (1989), evaluate it).
    StealHalf,
}

impl PoolKind {
    /// Every pool, in the order `taskpools list` prints them.
    pub const ALL: [PoolKind; 19] = [
        PoolKind::CentralList,
        PoolKind::CentralArray,
        PoolKind::CentralFifo,
        PoolKind::CentralFifoNodeLocks,
        PoolKind::Randomized,
        PoolKind::DistributedList,
        PoolKind::DistributedArray,
        PoolKind::StealWorkingEnd,
        PoolKind::StealRandomizedLocal,
        PoolKind::StealOppositeEnd,
        PoolKind::StealOppositeEndNodeLocks,
        PoolKind::StealArray,
        PoolKind::PrivatePublic,
        PoolKind::PrivatePublicGreedy,
        PoolKind::Combined,
        PoolKind::ChaseLev,
        PoolKind::Fcdq,
        PoolKind::PrivateDeque,
        PoolKind::StealHalf,
    ];

    /// The descriptive name.
    ///
    /// ```
    /// use taskpools::PoolKind;
    ///
    /// assert_eq!(PoolKind::PrivatePublic.name(), "private-public");
    /// assert_eq!(PoolKind::StealHalf.to_string(), "steal-half");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            PoolKind::CentralList => "central-list",
            PoolKind::CentralArray => "central-array",
            PoolKind::CentralFifo => "central-fifo",
            PoolKind::CentralFifoNodeLocks => "central-fifo-node-locks",
            PoolKind::Randomized => "randomized",
            PoolKind::DistributedList => "distributed-list",
            PoolKind::DistributedArray => "distributed-array",
            PoolKind::StealWorkingEnd => "steal-working-end",
            PoolKind::StealRandomizedLocal => "steal-randomized-local",
            PoolKind::StealOppositeEnd => "steal-opposite-end",
            PoolKind::StealOppositeEndNodeLocks => "steal-opposite-end-node-locks",
            PoolKind::StealArray => "steal-array",
            PoolKind::PrivatePublic => "private-public",
            PoolKind::PrivatePublicGreedy => "private-public-greedy",
            PoolKind::Combined => "combined",
            PoolKind::ChaseLev => "chase-lev",
            PoolKind::Fcdq => "fast-concurrent-deque",
            PoolKind::PrivateDeque => "private-deque",
            PoolKind::StealHalf => "steal-half",
        }
    }

    /// The papers' name (Korch and Rauber's Table 2 for their family, all of whose C pools
    /// are here but `rq1`–`rq3`, one `rq` for the three; `dq8g` is ours for the greedy
    /// variant of `dq8`).
    ///
    /// ```
    /// use taskpools::PoolKind;
    ///
    /// assert_eq!(PoolKind::PrivatePublic.alias(), "dq8");
    /// assert_eq!(PoolKind::from_name("sq4")?, PoolKind::CentralFifo);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn alias(self) -> &'static str {
        match self {
            PoolKind::CentralList => "sq1",
            PoolKind::CentralArray => "sq2",
            PoolKind::CentralFifo => "sq4",
            PoolKind::CentralFifoNodeLocks => "sq3",
            PoolKind::Randomized => "rq",
            PoolKind::DistributedList => "dq1",
            PoolKind::DistributedArray => "dq3",
            PoolKind::StealWorkingEnd => "dq2",
            PoolKind::StealRandomizedLocal => "dq4",
            PoolKind::StealOppositeEnd => "dq5",
            PoolKind::StealOppositeEndNodeLocks => "dq6",
            PoolKind::StealArray => "dq7",
            PoolKind::PrivatePublic => "dq8",
            PoolKind::PrivatePublicGreedy => "dq8g",
            PoolKind::Combined => "sdq1",
            PoolKind::ChaseLev => "dcwq",
            PoolKind::Fcdq => "fcdq",
            PoolKind::PrivateDeque => "acr13",
            PoolKind::StealHalf => "manber",
        }
    }

    /// One line for `taskpools list`.
    ///
    /// ```
    /// use taskpools::PoolKind;
    ///
    /// for p in PoolKind::ALL {
    ///     println!("{:22} {:6} {}", p.name(), p.alias(), p.description());
    /// }
    /// assert!(PoolKind::CentralFifo.description().contains("FIFO"));
    /// ```
    pub fn description(self) -> &'static str {
        match self {
            PoolKind::CentralList => "central LIFO queue, singly linked list, one lock",
            PoolKind::CentralArray => "central LIFO queue, growable array, one lock",
            PoolKind::CentralFifo => "central FIFO queue, two locks (head and tail)",
            PoolKind::CentralFifoNodeLocks => {
                "central FIFO queue, doubly linked list with a lock per task (node)"
            }
            PoolKind::Randomized => {
                "4xP locked lists; put to a random one, get scans from a random one"
            }
            PoolKind::DistributedList => "private LIFO list per worker, no load balancing",
            PoolKind::DistributedArray => "private LIFO array per worker, no load balancing",
            PoolKind::StealWorkingEnd => {
                "locked list per worker; idle workers steal from the working end"
            }
            PoolKind::StealRandomizedLocal => {
                "two locked lists per worker, put to a random one; thieves take from the working end"
            }
            PoolKind::StealOppositeEnd => {
                "locked doubly linked list per worker; thieves take the oldest task"
            }
            PoolKind::StealOppositeEndNodeLocks => {
                "doubly linked list per worker, a lock per task; thieves take the oldest task"
            }
            PoolKind::StealArray => {
                "locked array per worker; idle workers steal from the working end"
            }
            PoolKind::PrivatePublic => {
                "private block + public list of blocks per worker; generous: full blocks go public"
            }
            PoolKind::PrivatePublicGreedy => {
                "as dq8, greedy: a block goes public only when the public queue is empty"
            }
            PoolKind::Combined => {
                "private blocks per worker; overflow blocks go to one central locked queue"
            }
            PoolKind::ChaseLev => {
                "lock-free Chase-Lev deque per worker (growable); thieves take the oldest task"
            }
            PoolKind::Fcdq => {
                "FCDQ per worker (1024 slots, sequence numbers); thieves take the oldest task"
            }
            PoolKind::PrivateDeque => {
                "private deque per worker, no atomics for the owner; thieves send steal requests"
            }
            PoolKind::StealHalf => {
                "Manber's concurrent pool: a segment per worker, steal half, --search tree|linear|random"
            }
        }
    }

    /// Whether the pool keeps tasks in list nodes of the memory manager, i.e. whether
    /// `--mem` matters. The pools that lock single tasks (`sq3`, `dq6`) keep them in
    /// reference-counted nodes of the global allocator instead, and accept every memory
    /// manager but use none ([`NodeLockedDList`](crate::queue::NodeLockedDList) says why).
    ///
    /// ```
    /// use taskpools::PoolKind;
    ///
    /// assert!(PoolKind::CentralList.uses_mem()); // list nodes: the memory manager matters
    /// assert!(PoolKind::StealRandomizedLocal.uses_mem());
    /// assert!(!PoolKind::ChaseLev.uses_mem());
    /// assert!(!PoolKind::StealOppositeEndNodeLocks.uses_mem());
    /// ```
    pub fn uses_mem(self) -> bool {
        matches!(
            self,
            PoolKind::CentralList
                | PoolKind::CentralFifo
                | PoolKind::Randomized
                | PoolKind::DistributedList
                | PoolKind::StealWorkingEnd
                | PoolKind::StealRandomizedLocal
                | PoolKind::StealOppositeEnd
        )
    }

    /// Parses a descriptive name or an alias.
    ///
    /// ```
    /// use taskpools::{Error, PoolKind};
    ///
    /// assert_eq!(PoolKind::from_name("chase-lev")?, PoolKind::ChaseLev);
    /// assert_eq!("dcwq".parse::<PoolKind>()?, PoolKind::ChaseLev);
    /// let e = PoolKind::from_name("dq99").unwrap_err();
    /// assert!(matches!(e, Error::UnknownPool { .. }) && e.to_string().contains("dq8"));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn from_name(s: &str) -> Result<PoolKind, crate::error::Error> {
        PoolKind::ALL
            .into_iter()
            .find(|p| p.name() == s || p.alias() == s)
            .ok_or_else(|| crate::error::Error::UnknownPool {
                name: s.to_string(),
                known: PoolKind::ALL
                    .iter()
                    .map(|p| format!("{} ({})", p.name(), p.alias()))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// Builds the pool of this kind for task type `T` and hands it to `v` — the one place
    /// where the kind is matched; everything below is monomorphised.
    ///
    /// ```
    /// use taskpools::pool::{PoolConfig, PoolKind, PoolVisitor, TaskPool};
    /// use taskpools::{run_pool, BoxedTask, RunOptions, RunReport};
    ///
    /// /// Runs ten empty tasks on whichever pool it is given.
    /// struct RunTen;
    /// impl PoolVisitor<BoxedTask> for RunTen {
    ///     type Output = Result<RunReport, taskpools::Error>;
    ///     fn visit<P: TaskPool<BoxedTask>>(self, pool: P) -> Self::Output {
    ///         let tasks = (0..10).map(|_| BoxedTask::new(|_| {}));
    ///         run_pool(&pool, &RunOptions::default(), tasks)
    ///     }
    /// }
    /// let kind = PoolKind::from_name("dq5")?; // chosen at run time
    /// assert_eq!(kind.with_pool(&PoolConfig::new(2), RunTen)?.tasks_run(), 10);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn with_pool<T: Send, V: PoolVisitor<T>>(self, cfg: &PoolConfig, v: V) -> V::Output {
        match self {
            PoolKind::CentralList => v.visit(CentralPool::<T, ListStack<T>>::new(cfg)),
            PoolKind::CentralArray => v.visit(CentralPool::<T, ArrayStack<T>>::new(cfg)),
            PoolKind::CentralFifo => v.visit(CentralFifoPool::<T>::new(cfg)),
            PoolKind::CentralFifoNodeLocks => v.visit(NodeLockedFifoPool::<T>::new(cfg)),
            PoolKind::Randomized => v.visit(RandomizedPool::<T>::new(cfg)),
            PoolKind::DistributedList => v.visit(DistributedPool::<T, ListStack<T>>::new(cfg)),
            PoolKind::DistributedArray => v.visit(DistributedPool::<T, ArrayStack<T>>::new(cfg)),
            PoolKind::StealWorkingEnd => v.visit(StealingPool::<T, ListStack<T>>::new(cfg)),
            PoolKind::StealRandomizedLocal => v.visit(RandomizedLocalPool::<T>::new(cfg)),
            PoolKind::StealOppositeEnd => v.visit(StealingPool::<T, DList<T>>::new(cfg)),
            PoolKind::StealOppositeEndNodeLocks => v.visit(NodeLockedStealingPool::<T>::new(cfg)),
            PoolKind::StealArray => v.visit(StealingPool::<T, ArrayStack<T>>::new(cfg)),
            PoolKind::PrivatePublic => v.visit(PrivatePublicPool::<T, false>::new(cfg)),
            PoolKind::PrivatePublicGreedy => v.visit(PrivatePublicPool::<T, true>::new(cfg)),
            PoolKind::Combined => v.visit(CombinedPool::<T>::new(cfg)),
            PoolKind::ChaseLev => v.visit(ChaseLevPool::<T>::new(cfg)),
            PoolKind::Fcdq => v.visit(FcdqPool::<T>::new(cfg)),
            PoolKind::PrivateDeque => v.visit(PrivateDequePool::<T>::new(cfg)),
            PoolKind::StealHalf => v.visit(StealHalfPool::<T>::new(cfg)),
        }
    }
}

impl std::str::FromStr for PoolKind {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PoolKind::from_name(s)
    }
}

impl fmt::Display for PoolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Generic code to run on a pool whose kind is chosen at run time ([`PoolKind::with_pool`]).
///
/// ```
/// use taskpools::pool::{PoolConfig, PoolKind, PoolVisitor, TaskPool};
///
/// /// The size of each pool's per-worker state, a compile-time fact of each pool type.
/// struct LocalSize;
/// impl PoolVisitor<u64> for LocalSize {
///     type Output = usize;
///     fn visit<P: TaskPool<u64>>(self, _pool: P) -> usize {
///         std::mem::size_of::<P::Local>()
///     }
/// }
/// let sizes: Vec<usize> =
///     PoolKind::ALL.iter().map(|k| k.with_pool(&PoolConfig::new(1), LocalSize)).collect();
/// assert_eq!(sizes.len(), PoolKind::ALL.len());
/// ```
pub trait PoolVisitor<T: Send> {
    /// What the visit returns.
    type Output;
    /// Called with the constructed pool.
    ///
    /// ```
    /// use taskpools::pool::{PoolConfig, PoolKind, PoolVisitor, TaskPool};
    ///
    /// struct Name;
    /// impl PoolVisitor<u8> for Name {
    ///     type Output = &'static str;
    ///     fn visit<P: TaskPool<u8>>(self, _pool: P) -> &'static str {
    ///         std::any::type_name::<P>()
    ///     }
    /// }
    /// let name = PoolKind::ChaseLev.with_pool(&PoolConfig::new(1), Name);
    /// assert!(name.ends_with("ChaseLevPool<u8>"));
    /// ```
    fn visit<P: TaskPool<T>>(self, pool: P) -> Self::Output;
}
