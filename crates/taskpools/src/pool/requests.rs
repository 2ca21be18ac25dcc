//! `private-deque` / `acr13`: a private deque per worker that thieves reach only through steal
//! requests (Acar, Charguéraud & Rainey, PPoPP 2013; [`crate::queue::private_deque`]). It is
//! the private/public split of `dq8` taken to its limit: a worker's puts and gets touch only
//! its own vector, with no lock, fence or read-modify-write, and the "public queue" is one
//! answer cell per request, filled on demand with the owner's oldest task. The owner looks at
//! its request cell at every `get` (one plain load when nobody asks), so a thief waits at
//! most the rest of one task for its answer (a `put` does not look: on N-Queens 13 that check
//! cost about 0.7 ns of the 4 a task cost over the sequential search). For the same reason
//! its puts make no call at all: a put's wake-up of a sleeping worker, its work hint and its
//! record in a schedule trace are made when the putting task ends or calls `Ctx::queued`
//! ([`TaskPool::PUTS_WAIT_FOR_OWNER`]). In a plain working phase the worker keeps its deque's
//! elements in a plain stack of its own between two looks for requests
//! ([`PrivateDeque::lend`](crate::queue::private_deque::PrivateDeque::lend)): a put is a push
//! onto a vector in the worker's loop.
//!
//! A worker's deque takes requests only between [`TaskPool::resume`] and
//! [`TaskPool::pause`]: the working phase resumes a worker on its own thread before its first
//! `get` and pauses it while it is idle, so a thief never waits for an answer from a worker
//! that sleeps or has not started. (Used without the working phase, a local that is never
//! resumed is never stolen from.)
//! As with the Chase–Lev pools, a worker's deque has one owner at a time: asking twice for the
//! same worker's state panics instead of creating a second owner.

use super::{scan_victims, Brand, PoolConfig, PutOutcome, TaskPool};
use crate::queue::chase_lev::Steal;
use crate::queue::private_deque::{PrivateDeque, StealTable};
use crate::stats::WorkerStats;
use crate::sync::{lock, Arc, Mutex};

/// Where a worker's deque waits while no `Local` holds it.
type OwnerSlot<T> = Arc<Mutex<Option<PrivateDeque<T>>>>;

/// `private-deque` / `acr13`.
///
/// ```
/// use taskpools::pool::PrivateDequePool;
/// use taskpools::pool::{PoolConfig, TaskPool};
/// use taskpools::{run_pool_on, BoxedTask, Runtime, WakePolicy};
///
/// // `private-deque` (acr13), built by hand for the two workers of `rt`.
/// let rt = Runtime::new(2)?;
/// let pool: PrivateDequePool<BoxedTask> = TaskPool::new(&PoolConfig::new(2));
/// let root = BoxedTask::new(|ctx| (0..100).for_each(|_| ctx.put(BoxedTask::new(|_| {}))));
/// let (report, _) = run_pool_on(&rt, &pool, WakePolicy::OnEmpty, |_| (), [root])?;
/// assert_eq!(report.tasks_run(), 101);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct PrivateDequePool<T> {
    owners: Box<[OwnerSlot<T>]>,
    table: Arc<StealTable<T>>,
    brand: Brand,
}

/// A worker's deque (given back to the pool, declining requests, on drop).
///
/// ```
/// use taskpools::pool::{PrivateDequeLocal, PrivateDequePool};
/// use taskpools::pool::{PoolConfig, TaskPool};
/// use taskpools::WorkerStats;
///
/// let pool: PrivateDequePool<u32> = TaskPool::new(&PoolConfig::new(2));
/// let mut w0: PrivateDequeLocal<u32> = pool.local(0); // worker 0's deque, its owner's alone
/// (1..=3).for_each(|t| { pool.put(&mut w0, t); });
/// assert_eq!(pool.own_backlog(&w0), 3);
/// assert_eq!(pool.get(&mut w0, &mut WorkerStats::default()), Some(3));
/// ```
pub struct PrivateDequeLocal<T> {
    me: usize,
    deque: Option<PrivateDeque<T>>,
    slot: OwnerSlot<T>,
    rng: fastrand::Rng,
    brand: Brand,
}

impl<T> Drop for PrivateDequeLocal<T> {
    fn drop(&mut self) {
        if let Some(d) = self.deque.take() {
            // Nobody polls it until a new owner takes it: answer what is pending, refuse the
            // rest.
            d.block();
            if d.is_empty() {
                // A working phase that ended by a panic dropped the stack it had borrowed,
                // hint and all.
                d.set_hint(false);
            }
            *lock(&self.slot) = Some(d);
        }
    }
}

impl<T> PrivateDequeLocal<T> {
    #[inline(always)]
    fn deque(&self) -> &PrivateDeque<T> {
        self.deque.as_ref().expect("present until drop")
    }
}

impl<T: Send> TaskPool<T> for PrivateDequePool<T> {
    type Local = PrivateDequeLocal<T>;

    /// A thief gets a task only in the owner's answer to its request, given in `get` or
    /// `own_backlog`.
    const PUTS_WAIT_FOR_OWNER: bool = true;

    fn new(cfg: &PoolConfig) -> Self {
        let deques = PrivateDeque::set(cfg.workers);
        let table = Arc::clone(deques[0].table());
        let owners = deques
            .into_iter()
            .map(|d| {
                // Blocked until a worker owns it (see `local`).
                d.block();
                Arc::new(Mutex::new(Some(d)))
            })
            .collect();
        PrivateDequePool {
            owners,
            table,
            brand: Brand::new(),
        }
    }

    fn workers(&self) -> usize {
        self.owners.len()
    }

    fn local(&self, worker: usize) -> Self::Local {
        let slot = Arc::clone(&self.owners[worker]);
        let deque = lock(&slot).take();
        let Some(d) = deque else {
            panic!("worker {worker}'s deque already has an owner");
        };
        // Still blocked: the worker's first `resume`, on its own thread, opens it to thieves
        // (the working phase calls it before the first `get`), so nobody waits on a deque
        // whose owner has not started.
        PrivateDequeLocal {
            me: worker,
            deque: Some(d),
            slot,
            rng: fastrand::Rng::with_seed(0xac13_0000 + worker as u64),
            brand: self.brand,
        }
    }

    /// `put` and the first half of `get` touch only the local's own deque, wherever it came
    /// from; the brand is checked where a local would reach this pool's table (stealing).
    #[inline]
    fn put(&self, l: &mut Self::Local, task: T) -> PutOutcome {
        let d = l.deque();
        PutOutcome::Shared {
            was_empty: d.push(task),
        }
    }

    const OWNER_DEQUE: bool = true;

    #[inline(always)]
    fn owner_deque<'l>(&self, l: &'l Self::Local) -> Option<&'l PrivateDeque<T>> {
        Some(l.deque())
    }

    #[inline]
    fn get(&self, l: &mut Self::Local, stats: &mut WorkerStats) -> Option<T> {
        let d = l.deque();
        d.poll();
        if let Some(t) = d.pop() {
            // The task may run long: if it was the last, stop advertising, or thieves would
            // wait for this worker's next `get` instead of sleeping.
            d.withdraw_if_empty();
            return Some(t);
        }
        self.brand.check(l.brand);
        let PrivateDequeLocal { me, deque, rng, .. } = l;
        let d = deque.as_ref().expect("present until drop");
        scan_victims(*me, self.owners.len(), rng, stats, |v| {
            if !self.table.has_work(v) {
                return None;
            }
            // `Retry`: another thief is being served there, or the victim is idle; move on.
            match d.steal_from(v) {
                Steal::Success(t) => Some((t, 1)),
                Steal::Empty => None,
                Steal::Retry => {
                    // The worker may come straight back here (the victim's work hint is
                    // still set): a spin, which says so.
                    crate::sync::spin_loop();
                    None
                }
            }
        })
    }

    /// Also a point where the owner answers a pending steal request (one plain load when
    /// nobody asks): a task that runs its children as plain calls while its queue is long
    /// ([`Ctx::queued`](crate::Ctx::queued)) reads this between them, and would otherwise
    /// leave thieves waiting until its next `get`.
    #[inline]
    fn own_backlog(&self, l: &Self::Local) -> usize {
        let d = l.deque();
        d.poll();
        d.len()
    }

    fn has_shared_work(&self) -> bool {
        self.table.any_work()
    }

    fn pause(&self, l: &mut Self::Local) {
        l.deque().block();
    }

    fn resume(&self, l: &mut Self::Local) {
        l.deque().unblock();
    }
}
