//! The task-pool family of Korch and Rauber, "A Comparison of Task Pools for Dynamic Load
//! Balancing of Irregular Algorithms" (2002), §3 and §6.3, behind one trait.
//!
//! A pool stores tasks; the working phase ([`crate::phase`]) drives it with N workers through
//! [`TaskPool::put`] and [`TaskPool::get`]. Per-worker state (private queues, memory caches,
//! random number generators) lives in [`TaskPool::Local`], which the runtime moves into the
//! worker's thread, so no pool needs thread-local storage.
//!
//! **Contract for correct termination** (Korch and Rauber §4.1; the proof is in the docs of the
//! working phase's idle protocol, `phase::idle`):
//! `get` may return `None` only after it has looked, under the queues' synchronization, at
//! every queue in which a task put by *this* worker could still be (its own queues and every
//! shared queue it puts into). Pools whose `get` looks at all shared queues satisfy this.
//!
//! | name | alias | file |
//! |---|---|---|
//! | central-list, central-array, central-fifo | sq1, sq2, sq4 | `central.rs` |
//! | randomized | rq | `randomized.rs` |
//! | distributed-list, distributed-array | dq1, dq3 | `distributed.rs` |
//! | steal-working-end, steal-opposite-end, steal-array | dq2, dq5, dq7 | `stealing.rs` |
//! | private-public, private-public-greedy | dq8, dq8g | `private_public.rs` |
//! | combined | sdq1 | `combined.rs` |
//! | chase-lev, fast-concurrent-deque | dcwq, fcdq | `deques.rs` (Papakonstantinou, PARTEE (2015), §3.2) |
//! | private-deque | acr13 | `requests.rs` (steal requests, Acar, Charguéraud & Rainey 2013) |
//! | steal-half (search: tree, linear, random) | manber | `manber/` (Kotz and Ellis 1989) |

mod central;
mod combined;
mod deques;
mod distributed;
pub mod manber;
mod private_public;
mod randomized;
mod requests;
mod stealing;

pub use central::{CentralFifoPool, CentralPool};
pub use combined::CombinedPool;
pub use deques::{ChaseLevPool, FcdqPool};
pub use distributed::DistributedPool;
pub use manber::{Search, StealHalfPool};
pub use private_public::PrivatePublicPool;
pub use randomized::RandomizedPool;
pub use requests::{PrivateDequeLocal, PrivateDequePool};
pub use stealing::StealingPool;

use std::fmt;

use crate::mem::MemKind;
use crate::queue::{ArrayStack, DList, ListStack};
use crate::stats::WorkerStats;

/// Where a `put` left the task: whether other workers can take it, and whether it made a
/// shared queue non-empty (what the `on-empty` wake-up policy signals on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PutOutcome {
    /// Only the putting worker can see the task: nobody needs waking.
    Private,
    /// The task (or a block containing it) is in a queue that others can take from.
    Shared {
        /// The queue was empty before this put.
        was_empty: bool,
    },
}

/// Construction parameters common to all pools.
#[derive(Clone, Copy, Debug)]
pub struct PoolConfig {
    /// Number of workers (at least 1).
    pub workers: usize,
    /// Memory manager for list nodes.
    pub mem: MemKind,
    /// Search strategy of the steal-half pool.
    pub search: Search,
}

impl PoolConfig {
    /// `workers` workers with the default memory manager (`dgbko`) and tree search.
    pub fn new(workers: usize) -> Self {
        PoolConfig {
            workers,
            mem: MemKind::PerWorkerBlocks,
            search: Search::Tree,
        }
    }
}

/// A task pool: `init`/`put`/`get` of Korch and Rauber (2002) §6.1, with per-worker state.
pub trait TaskPool<T: Send>: Sync {
    /// Per-worker state, moved into that worker's thread.
    type Local: Send;

    /// A pool for `cfg.workers` workers (the caller guarantees `workers >= 1`).
    fn new(cfg: &PoolConfig) -> Self
    where
        Self: Sized;

    /// Number of workers this pool was built for.
    fn workers(&self) -> usize;

    /// The state of worker `worker` (called once per worker before the working phase).
    fn local(&self, worker: usize) -> Self::Local;

    /// Inserts an initial task during the (sequential) initialization phase.
    fn init(&self, local: &mut Self::Local, task: T) {
        let _ = self.put(local, task);
    }

    /// Whether a task put into this pool can reach another worker only through its owner:
    /// at the owner's next [`get`](TaskPool::get) or [`own_backlog`](TaskPool::own_backlog),
    /// where it answers steal requests (`private-deque`). The working phase then makes the
    /// wake-up that a put's [`PutOutcome::Shared`] asks for, and records the put in a
    /// schedule trace, not in the put but when the putting task ends or next calls
    /// [`Ctx::queued`](crate::Ctx::queued) (which calls `own_backlog`): the owner's next
    /// chances to answer a thief. A put is then a move into the deque and no call; in a task
    /// that puts in a loop, even a call that is never made costs registers.
    ///
    /// The contract: set it only if no other worker can take a put task before the owner's
    /// next `get` or `own_backlog`. Otherwise a task that puts a child and waits for another
    /// worker to run it, without calling `queued`, can leave that worker asleep. What it costs:
    /// a sleeper woken at the end of a task asks for work after the owner has looked for
    /// requests, so it is answered after the owner's next task, where a wake-up at the put
    /// would have let it ask during the putting task; and a trace shows such puts at the time
    /// of the task's end (or `queued`), not of the put, and none of the puts of a task that
    /// panics after its last `queued` (a guard that recorded them cost the loop its registers
    /// again). On `private-deque` the work hint that lets thieves ask is also set there
    /// (the working phase keeps the deque's elements in a plain stack meanwhile), so a thief
    /// awake and looking asks only after the putting task ends or calls `queued`; it is
    /// answered at the owner's next `get` either way. `false` by default: the other pools'
    /// puts are visible to thieves at once.
    const PUTS_WAIT_FOR_OWNER: bool = false;

    /// Inserts a task created by a running task.
    fn put(&self, local: &mut Self::Local, task: T) -> PutOutcome;

    /// Whether [`owner_deque`](TaskPool::owner_deque) gives the worker's deque (only
    /// `private-deque`): the working phase then runs its own loop over the deque's elements.
    #[doc(hidden)]
    const OWNER_DEQUE: bool = false;

    /// The worker's private deque, for pools whose owner keeps its tasks in one
    /// (`private-deque`, with [`OWNER_DEQUE`](TaskPool::OWNER_DEQUE)): the working phase
    /// then borrows the deque's elements as a plain stack between two looks for requests,
    /// and puts tasks into it instead of calling `put`. The contract: `put` pushes onto this
    /// deque, `get` pops from it before anything else, and thieves reach its elements only
    /// through the owner's answers to their requests. `None` by default.
    #[doc(hidden)]
    #[inline]
    fn owner_deque<'l>(
        &self,
        _local: &'l Self::Local,
    ) -> Option<&'l crate::queue::private_deque::PrivateDeque<T>> {
        None
    }

    /// Takes a task for this worker, stealing if the pool does; see the module docs for when
    /// it may return `None`.
    fn get(&self, local: &mut Self::Local, stats: &mut WorkerStats) -> Option<T>;

    /// Whether some shared queue looks non-empty (no locks; used by idle workers).
    fn has_shared_work(&self) -> bool;

    /// How many tasks this worker's own queue holds (its private and public parts), read by
    /// the owner between its own operations; a lower bound is fine. Tasks see it as
    /// [`Ctx::queued`](crate::Ctx::queued), to run a child at once instead of putting it
    /// when enough work is queued. Being an owner's operation, it may also do owner-side work
    /// (`private-deque` answers a pending steal request here). The default, 0, is for the
    /// pools without a queue per worker (the central ones and `randomized`): their tasks
    /// then always put.
    #[inline]
    fn own_backlog(&self, _local: &Self::Local) -> usize {
        0
    }

    /// The worker is about to go idle (its `get` returned `None`): it will not call `put` or
    /// `get` until [`resume`](TaskPool::resume). Pools whose workers answer other workers'
    /// requests (`private-deque`) decline them meanwhile. Does nothing by default.
    fn pause(&self, _local: &mut Self::Local) {}

    /// The worker looks for work again after [`pause`](TaskPool::pause); the working phase
    /// also calls it on the worker's thread before the worker's first `get`. Calling it when
    /// not paused does nothing.
    fn resume(&self, _local: &mut Self::Local) {}
}

/// The pools of the family, selected by name at run time and dispatched once to generic code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PoolKind {
    /// `sq1`: one central LIFO queue, a linked list, one lock.
    CentralList,
    /// `sq2`: one central LIFO queue, an array, one lock.
    CentralArray,
    /// `sq4`: one central FIFO queue with separate head and tail locks.
    CentralFifo,
    /// `rq`: 4×P locked queues; put to a random one, get scans them in random order.
    Randomized,
    /// `dq1`: a private list per worker, no exchange.
    DistributedList,
    /// `dq3`: a private array per worker, no exchange.
    DistributedArray,
    /// `dq2`: a locked list per worker; thieves take from the working end.
    StealWorkingEnd,
    /// `dq5`: a locked doubly linked list per worker; thieves take the oldest task.
    StealOppositeEnd,
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
    pub const ALL: [PoolKind; 16] = [
        PoolKind::CentralList,
        PoolKind::CentralArray,
        PoolKind::CentralFifo,
        PoolKind::Randomized,
        PoolKind::DistributedList,
        PoolKind::DistributedArray,
        PoolKind::StealWorkingEnd,
        PoolKind::StealOppositeEnd,
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
    pub fn name(self) -> &'static str {
        match self {
            PoolKind::CentralList => "central-list",
            PoolKind::CentralArray => "central-array",
            PoolKind::CentralFifo => "central-fifo",
            PoolKind::Randomized => "randomized",
            PoolKind::DistributedList => "distributed-list",
            PoolKind::DistributedArray => "distributed-array",
            PoolKind::StealWorkingEnd => "steal-working-end",
            PoolKind::StealOppositeEnd => "steal-opposite-end",
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

    /// The papers' name (Korch and Rauber's Table 2 for their family; `dq8g` is ours for the
    /// greedy variant of `dq8`).
    pub fn alias(self) -> &'static str {
        match self {
            PoolKind::CentralList => "sq1",
            PoolKind::CentralArray => "sq2",
            PoolKind::CentralFifo => "sq4",
            PoolKind::Randomized => "rq",
            PoolKind::DistributedList => "dq1",
            PoolKind::DistributedArray => "dq3",
            PoolKind::StealWorkingEnd => "dq2",
            PoolKind::StealOppositeEnd => "dq5",
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
    pub fn description(self) -> &'static str {
        match self {
            PoolKind::CentralList => "central LIFO queue, singly linked list, one lock",
            PoolKind::CentralArray => "central LIFO queue, growable array, one lock",
            PoolKind::CentralFifo => "central FIFO queue, two locks (head and tail)",
            PoolKind::Randomized => {
                "4xP locked lists; put to a random one, get scans from a random one"
            }
            PoolKind::DistributedList => "private LIFO list per worker, no load balancing",
            PoolKind::DistributedArray => "private LIFO array per worker, no load balancing",
            PoolKind::StealWorkingEnd => {
                "locked list per worker; idle workers steal from the working end"
            }
            PoolKind::StealOppositeEnd => {
                "locked doubly linked list per worker; thieves take the oldest task"
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

    /// Whether the pool keeps tasks in list nodes, i.e. whether the memory manager matters.
    pub fn uses_mem(self) -> bool {
        matches!(
            self,
            PoolKind::CentralList
                | PoolKind::CentralFifo
                | PoolKind::Randomized
                | PoolKind::DistributedList
                | PoolKind::StealWorkingEnd
                | PoolKind::StealOppositeEnd
        )
    }

    /// Parses a descriptive name or an alias.
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
    pub fn with_pool<T: Send, V: PoolVisitor<T>>(self, cfg: &PoolConfig, v: V) -> V::Output {
        match self {
            PoolKind::CentralList => v.visit(CentralPool::<T, ListStack<T>>::new(cfg)),
            PoolKind::CentralArray => v.visit(CentralPool::<T, ArrayStack<T>>::new(cfg)),
            PoolKind::CentralFifo => v.visit(CentralFifoPool::<T>::new(cfg)),
            PoolKind::Randomized => v.visit(RandomizedPool::<T>::new(cfg)),
            PoolKind::DistributedList => v.visit(DistributedPool::<T, ListStack<T>>::new(cfg)),
            PoolKind::DistributedArray => v.visit(DistributedPool::<T, ArrayStack<T>>::new(cfg)),
            PoolKind::StealWorkingEnd => v.visit(StealingPool::<T, ListStack<T>>::new(cfg)),
            PoolKind::StealOppositeEnd => v.visit(StealingPool::<T, DList<T>>::new(cfg)),
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
pub trait PoolVisitor<T: Send> {
    /// What the visit returns.
    type Output;
    /// Called with the constructed pool.
    fn visit<P: TaskPool<T>>(self, pool: P) -> Self::Output;
}

/// The identity of one pool instance, carried by the per-worker state it hands out.
///
/// A pool's `put` and `get` take the worker's [`TaskPool::Local`] as an argument, so safe code
/// could pass the local of another pool of the same type. Each pool checks the brand of the
/// local it is given against its own and panics on a mismatch, before touching any queue: a
/// local never moves tasks, node memory or an owner's rights into another pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Brand(u64);

impl Brand {
    /// A brand no other pool instance has (a process-wide counter; 2^64 pools never happen).
    pub(crate) fn new() -> Brand {
        // Identity only, so `std`'s atomic even under loom: nothing is published through it.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Brand(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }

    /// Panics unless `local` is this pool's brand.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn check(self, local: Brand) {
        if self != local {
            foreign_local();
        }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn foreign_local() -> ! {
    panic!(
        "a pool's per-worker state was used with another pool: each `TaskPool::Local` works \
         only with the pool whose `local` made it"
    )
}

/// Scans the queues of all other workers, starting at a random one, until `try_one` takes
/// something. Counts attempts and successes in `stats`.
#[inline]
pub(crate) fn scan_victims<R>(
    me: usize,
    n: usize,
    rng: &mut fastrand::Rng,
    stats: &mut WorkerStats,
    mut try_one: impl FnMut(usize) -> Option<(R, u64)>,
) -> Option<R> {
    if n <= 1 {
        return None;
    }
    let start = rng.usize(..n);
    for k in 0..n {
        let v = (start + k) % n;
        if v == me {
            continue;
        }
        stats.steal_attempts += 1;
        if let Some((r, moved)) = try_one(v) {
            stats.steals += 1;
            stats.tasks_stolen += moved;
            crate::stats::note_steal(v, moved);
            return Some(r);
        }
    }
    None
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique_and_parse() {
        let mut seen = std::collections::HashSet::new();
        for p in PoolKind::ALL {
            assert!(seen.insert(p.name()) && seen.insert(p.alias()));
            assert_eq!(PoolKind::from_name(p.name()).unwrap(), p);
            assert_eq!(PoolKind::from_name(p.alias()).unwrap(), p);
        }
        let e = PoolKind::from_name("sq9").unwrap_err().to_string();
        assert!(e.contains("sq9") && e.contains("dq8"), "{e}");
    }
}
