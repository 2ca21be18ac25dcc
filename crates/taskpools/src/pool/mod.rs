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
//! What steals and wake-ups may do, and a pool of your own run through the working phase, are
//! in the docs of [`TaskPool`].
//!
//! | name | alias | file |
//! |---|---|---|
//! | central-list, central-array, central-fifo, central-fifo-node-locks | sq1, sq2, sq4, sq3 | `central.rs` |
//! | randomized | rq | `randomized.rs` |
//! | distributed-list, distributed-array | dq1, dq3 | `distributed.rs` |
//! | steal-working-end, steal-randomized-local, steal-opposite-end, steal-opposite-end-node-locks, steal-array | dq2, dq4, dq5, dq6, dq7 | `stealing.rs` |
//! | private-public, private-public-greedy | dq8, dq8g | `private_public.rs` |
//! | combined | sdq1 | `combined.rs` |
//! | chase-lev, fast-concurrent-deque | dcwq, fcdq | `deques.rs` (Papakonstantinou, PARTEE (2015), §3.2) |
//! | private-deque | acr13 | `requests.rs` (steal requests, Acar, Charguéraud & Rainey 2013) |
//! | steal-half (search: tree, linear, random) | manber | `manber/` (Kotz and Ellis 1989) |
//!
//! Each kind is also a type in [`types`] ([`PoolType`]), for a program that names its pool at
//! compile time.

mod central;
mod combined;
mod deques;
mod distributed;
mod kind;
pub mod manber;
mod private_public;
mod randomized;
mod requests;
mod stealing;
pub mod types;

pub use central::{CentralFifoPool, CentralPool, NodeLockedFifoPool};
pub use combined::CombinedPool;
pub use deques::{ChaseLevPool, FcdqPool};
pub use distributed::DistributedPool;
pub use kind::{PoolKind, PoolVisitor};
pub use manber::{Search, StealHalfPool};
pub use private_public::PrivatePublicPool;
pub use randomized::RandomizedPool;
pub use requests::{PrivateDequeLocal, PrivateDequePool};
pub use stealing::{NodeLockedStealingPool, RandomizedLocalPool, StealingPool};
pub use types::PoolType;

use crate::mem::MemKind;
use crate::queue::{ArrayStack, DList, ListStack};
use crate::stats::WorkerStats;

/// Where a `put` left the task: whether other workers can take it, and whether it made a
/// shared queue non-empty (what the `on-empty` wake-up policy signals on).
///
/// ```
/// use taskpools::pool::{ChaseLevPool, DistributedPool, PoolConfig, TaskPool};
/// use taskpools::queue::ListStack;
/// use taskpools::PutOutcome;
///
/// // A Chase–Lev deque can be stolen from: the first put makes it non-empty.
/// let cl: ChaseLevPool<u32> = TaskPool::new(&PoolConfig::new(2));
/// let mut w0 = cl.local(0);
/// assert_eq!(cl.put(&mut w0, 1), PutOutcome::Shared { was_empty: true });
/// assert_eq!(cl.put(&mut w0, 2), PutOutcome::Shared { was_empty: false });
/// // `distributed-list` never shares: nobody needs waking.
/// let dq1: DistributedPool<u32, ListStack<u32>> = TaskPool::new(&PoolConfig::new(2));
/// let mut l0 = dq1.local(0);
/// assert_eq!(dq1.put(&mut l0, 1), PutOutcome::Private);
/// ```
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
///
/// ```
/// use taskpools::pool::{PoolConfig, PoolKind, PoolVisitor, TaskPool};
/// use taskpools::{MemKind, Search};
///
/// let cfg = PoolConfig { workers: 2, mem: MemKind::System, search: Search::Random };
/// struct Workers;
/// impl PoolVisitor<u32> for Workers {
///     type Output = usize;
///     fn visit<P: TaskPool<u32>>(self, pool: P) -> usize {
///         pool.workers()
///     }
/// }
/// assert_eq!(PoolKind::StealHalf.with_pool(&cfg, Workers), 2);
/// ```
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
    ///
    /// ```
    /// use taskpools::pool::PoolConfig;
    /// use taskpools::{MemKind, Search};
    ///
    /// let cfg = PoolConfig::new(4);
    /// assert_eq!((cfg.workers, cfg.mem, cfg.search), (4, MemKind::PerWorkerBlocks, Search::Tree));
    /// ```
    pub fn new(workers: usize) -> Self {
        PoolConfig {
            workers,
            mem: MemKind::PerWorkerBlocks,
            search: Search::Tree,
        }
    }
}

/// A task pool: `init`/`put`/`get` of Korch and Rauber (2002) §6.1, with per-worker state.
///
/// The pools of this crate implement it, and so can yours: [`Builder`](crate::Builder) runs the
/// family of [`PoolKind`]; a pool of your own runs with [`run_pool`](crate::run_pool),
/// [`run_pool_with`](crate::run_pool_with) or [`run_pool_on`](crate::run_pool_on), the layer
/// under `Builder`.
///
/// # How the working phase uses a pool
///
/// A phase of `n` = [`workers`](Self::workers) workers (phase worker `i` is the runtime's
/// worker `i`) first makes every worker's state with [`local`](Self::local)`(i)` and hands the
/// initial tasks round-robin to [`init`](Self::init) with those states, one after another on
/// the thread that starts the phase. Each state then moves to its worker's thread, and from
/// there on only that worker passes it to the pool: it calls [`resume`](Self::resume), then
/// [`get`](Self::get) until it returns `None`, running each task, whose
/// [`Ctx::put`](crate::Ctx::put) calls [`put`](Self::put) (and
/// [`Ctx::queued`](crate::Ctx::queued), [`own_backlog`](Self::own_backlog)). When `get` returns
/// `None`, the worker calls [`pause`](Self::pause), counts itself idle and waits, polling
/// [`has_shared_work`](Self::has_shared_work) (spinning, then asleep, as the
/// [`WakePolicy`](crate::WakePolicy) says); when that turns true it leaves the idle count,
/// calls `resume` and tries `get` again. All workers do this at the same time, so `put`, `get` and
/// `has_shared_work` run concurrently (each worker with its own state). The phase ends when
/// all `n` workers are counted idle at once, or when a task panics (tasks that have not run
/// by then never run).
///
/// # The contract
///
/// *Termination* (Korch and Rauber §4.1; the proof is in the docs of the working phase's idle
/// protocol, `phase::idle`): `get` may return `None` only after it has looked, under the
/// queues' synchronization, at every queue in which a task that *this* worker put, moved or
/// was handed by `init` could still be. It need not find the tasks of other workers: their
/// owners will (a pool that never steals, such as `distributed-list`, is correct, only
/// unbalanced). A pool whose `get` looks at all its queues satisfies this.
///
/// *Steals.* A `get` may take tasks from queues that other workers put into, and it may fail
/// to for any reason — a lost race, a busy lock, an empty victim picked at random — since
/// the owner will find what it put. A steal may take several tasks at once and keep the
/// others in this worker's own queues. It may not lose or duplicate a task (every task
/// given to `init` or `put` is returned by exactly one `get`), and it may move tasks only
/// into queues that this worker's own later `get` looks at before it returns `None`: a task
/// moved where no failing `get` looks can be left behind when every worker goes idle, and
/// the phase then ends without running it. `init` likewise must leave the task where the
/// `get` of the worker whose state it was given looks.
///
/// *Wake-ups.* [`has_shared_work`](Self::has_shared_work) is a hint read without locks, but
/// it must turn true once a `put` that returned [`PutOutcome::Shared`] has returned (to a
/// reader that issues a `SeqCst` fence first), as long as that task is there, and it must
/// turn false again once the shared queues are empty: idle workers that keep seeing it true
/// keep leaving the idle count, and the phase may never see all of them idle. Return
/// [`PutOutcome::Private`] only for a task no other worker can take; a takeable task
/// reported as private is still run (by the worker that put it), but sleeping workers are not
/// woken for it.
///
/// The rest is optional: `stats` in `get` feeds the [`RunReport`](crate::RunReport)
/// (`steal_attempts`, `steals`, `tasks_stolen`), `own_backlog` answers 0 unless you keep a
/// queue per worker, and `pause`/`resume` do nothing unless your workers serve each other.
///
/// # A pool of your own
///
/// One FIFO queue behind a lock, shared by every worker (the central pools of Korch and
/// Rauber, with a standard library queue), run on a two-worker runtime through
/// [`Builder::run_pool_with`](crate::Builder::run_pool_with):
///
/// ```
/// use std::collections::VecDeque;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Mutex;
/// use taskpools::{Builder, Ctx, PoolConfig, PutOutcome, Runtime, Task, TaskPool, WorkerStats};
///
/// struct Fifo<T> {
///     queue: Mutex<VecDeque<T>>,
///     len: AtomicUsize, // the queue's length, for `has_shared_work` to read without the lock
///     workers: usize,
/// }
///
/// impl<T: Send> TaskPool<T> for Fifo<T> {
///     type Local = (); // no per-worker state
///
///     fn new(cfg: &PoolConfig) -> Self {
///         let queue = Mutex::new(VecDeque::new());
///         Fifo { queue, len: AtomicUsize::new(0), workers: cfg.workers }
///     }
///     fn workers(&self) -> usize {
///         self.workers
///     }
///     fn local(&self, _worker: usize) {}
///     fn put(&self, _: &mut (), task: T) -> PutOutcome {
///         let mut q = self.queue.lock().unwrap();
///         q.push_back(task);
///         // Stored before `put` returns: a sleeper's `has_shared_work` sees the task.
///         self.len.store(q.len(), Ordering::SeqCst);
///         PutOutcome::Shared { was_empty: q.len() == 1 }
///     }
///     fn get(&self, _: &mut (), _: &mut WorkerStats) -> Option<T> {
///         // Under the lock, at the only queue there is: a `None` here may end the phase.
///         let mut q = self.queue.lock().unwrap();
///         let task = q.pop_front();
///         self.len.store(q.len(), Ordering::SeqCst);
///         task
///     }
///     fn has_shared_work(&self) -> bool {
///         self.len.load(Ordering::SeqCst) > 0
///     }
/// }
///
/// /// One task per node of a complete binary tree of the given depth.
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
/// let rt = Runtime::new(2)?;
/// let b = Builder::new().runtime(&rt);
/// let pool: Fifo<Node> = TaskPool::new(&b.pool_config());
/// let (report, counts) = b.run_pool_with(&pool, |_| 0u64, [Node(10)])?;
/// assert_eq!(counts.iter().sum::<u64>(), (1 << 11) - 1);
/// assert_eq!(report.tasks_run(), (1 << 11) - 1);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub trait TaskPool<T: Send>: Sync {
    /// Per-worker state, moved into that worker's thread.
    type Local: Send;

    /// A pool for `cfg.workers` workers (the caller guarantees `workers >= 1`).
    ///
    /// ```
    /// # use taskpools::pool::{ChaseLevPool, PoolConfig, TaskPool};
    /// # use taskpools::WorkerStats;
    /// let pool: ChaseLevPool<u32> = TaskPool::new(&PoolConfig::new(2));
    /// assert_eq!(pool.workers(), 2);
    /// ```
    fn new(cfg: &PoolConfig) -> Self
    where
        Self: Sized;

    /// Number of workers this pool was built for.
    ///
    /// ```
    /// # use taskpools::pool::{ChaseLevPool, PoolConfig, TaskPool};
    /// # use taskpools::WorkerStats;
    /// let pool: ChaseLevPool<u32> = TaskPool::new(&PoolConfig::new(2));
    /// assert_eq!(pool.workers(), 2); // the phase runs this many workers
    /// ```
    fn workers(&self) -> usize;

    /// The state of worker `worker` (called once per worker before the working phase).
    ///
    /// ```
    /// # use taskpools::pool::{ChaseLevPool, PoolConfig, TaskPool};
    /// # use taskpools::WorkerStats;
    /// let pool: ChaseLevPool<u32> = TaskPool::new(&PoolConfig::new(2));
    /// let (mut w0, mut w1) = (pool.local(0), pool.local(1));
    /// pool.put(&mut w0, 5);
    /// assert_eq!(pool.get(&mut w1, &mut WorkerStats::default()), Some(5)); // stolen
    /// ```
    fn local(&self, worker: usize) -> Self::Local;

    /// Inserts an initial task during the (sequential) initialization phase.
    ///
    /// ```
    /// # use taskpools::pool::{ChaseLevPool, PoolConfig, TaskPool};
    /// # use taskpools::WorkerStats;
    /// let pool: ChaseLevPool<u32> = TaskPool::new(&PoolConfig::new(2));
    /// let mut locals = [pool.local(0), pool.local(1)];
    /// // As the phase does: initial tasks round-robin, before any worker runs.
    /// for (i, t) in (10..14).enumerate() {
    ///     pool.init(&mut locals[i % 2], t);
    /// }
    /// assert_eq!((pool.own_backlog(&locals[0]), pool.own_backlog(&locals[1])), (2, 2));
    /// ```
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
    ///
    /// ```
    /// # use taskpools::pool::{ChaseLevPool, PoolConfig, TaskPool};
    /// # use taskpools::WorkerStats;
    /// let pool: ChaseLevPool<u32> = TaskPool::new(&PoolConfig::new(2));
    /// let mut w0 = pool.local(0);
    /// pool.put(&mut w0, 1);
    /// pool.put(&mut w0, 2);
    /// let mut stats = WorkerStats::default();
    /// assert_eq!(pool.get(&mut w0, &mut stats), Some(2)); // its owner pops the newest
    /// ```
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
    ///
    /// ```
    /// # use taskpools::pool::{ChaseLevPool, PoolConfig, TaskPool};
    /// # use taskpools::WorkerStats;
    /// let pool: ChaseLevPool<u32> = TaskPool::new(&PoolConfig::new(2));
    /// let (mut w0, mut w1) = (pool.local(0), pool.local(1));
    /// pool.put(&mut w0, 1);
    /// pool.put(&mut w0, 2);
    /// let mut stats = WorkerStats::default();
    /// assert_eq!(pool.get(&mut w1, &mut stats), Some(1)); // a thief takes the oldest
    /// assert_eq!((stats.steal_attempts, stats.steals), (1, 1));
    /// assert_eq!(pool.get(&mut w0, &mut stats), Some(2));
    /// assert_eq!(pool.get(&mut w0, &mut stats), None); // looked everywhere
    /// ```
    fn get(&self, local: &mut Self::Local, stats: &mut WorkerStats) -> Option<T>;

    /// Whether some shared queue looks non-empty (no locks; used by idle workers).
    ///
    /// ```
    /// # use taskpools::pool::{ChaseLevPool, PoolConfig, TaskPool};
    /// # use taskpools::WorkerStats;
    /// let pool: ChaseLevPool<u32> = TaskPool::new(&PoolConfig::new(2));
    /// let mut w0 = pool.local(0);
    /// assert!(!pool.has_shared_work());
    /// pool.put(&mut w0, 1);
    /// assert!(pool.has_shared_work()); // thieves can take it
    /// pool.get(&mut w0, &mut WorkerStats::default());
    /// assert!(!pool.has_shared_work());
    /// ```
    fn has_shared_work(&self) -> bool;

    /// How many tasks this worker's own queue holds (its private and public parts), read by
    /// the owner between its own operations; a lower bound is fine. Tasks see it as
    /// [`Ctx::queued`](crate::Ctx::queued), to run a child at once instead of putting it
    /// when enough work is queued. Being an owner's operation, it may also do owner-side work
    /// (`private-deque` answers a pending steal request here). The default, 0, is for the
    /// pools without a queue per worker (the central ones and `randomized`): their tasks
    /// then always put.
    ///
    /// ```
    /// # use taskpools::pool::{ChaseLevPool, PoolConfig, TaskPool};
    /// # use taskpools::WorkerStats;
    /// let pool: ChaseLevPool<u32> = TaskPool::new(&PoolConfig::new(2));
    /// let mut w0 = pool.local(0);
    /// (0..3).for_each(|t| { pool.put(&mut w0, t); });
    /// assert_eq!(pool.own_backlog(&w0), 3);
    /// ```
    #[inline]
    fn own_backlog(&self, _local: &Self::Local) -> usize {
        0
    }

    /// The worker is about to go idle (its `get` returned `None`): it will not call `put` or
    /// `get` until [`resume`](TaskPool::resume). Pools whose workers answer other workers'
    /// requests (`private-deque`) decline them meanwhile. Does nothing by default.
    ///
    /// ```
    /// # use taskpools::pool::{ChaseLevPool, PoolConfig, TaskPool};
    /// # use taskpools::WorkerStats;
    /// let pool: ChaseLevPool<u32> = TaskPool::new(&PoolConfig::new(2));
    /// let mut w0 = pool.local(0);
    /// let mut stats = WorkerStats::default();
    /// // What the phase does around a worker's idle time:
    /// assert_eq!(pool.get(&mut w0, &mut stats), None);
    /// pool.pause(&mut w0); // no `put` or `get` until `resume`
    /// pool.resume(&mut w0);
    /// pool.put(&mut w0, 1);
    /// assert_eq!(pool.get(&mut w0, &mut stats), Some(1));
    /// ```
    fn pause(&self, _local: &mut Self::Local) {}

    /// The worker looks for work again after [`pause`](TaskPool::pause); the working phase
    /// also calls it on the worker's thread before the worker's first `get`. Calling it when
    /// not paused does nothing.
    ///
    /// ```
    /// # use taskpools::pool::{ChaseLevPool, PoolConfig, TaskPool};
    /// # use taskpools::WorkerStats;
    /// let pool: ChaseLevPool<u32> = TaskPool::new(&PoolConfig::new(2));
    /// let mut w0 = pool.local(0);
    /// pool.resume(&mut w0); // before the first `get`, as the phase does; a no-op when not paused
    /// pool.put(&mut w0, 3);
    /// assert_eq!(pool.get(&mut w0, &mut WorkerStats::default()), Some(3));
    /// ```
    fn resume(&self, _local: &mut Self::Local) {}
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
