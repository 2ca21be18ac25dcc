//! Stealing pools on the lock-free deques of Papakonstantinou, PARTEE (2015), §3.2: `chase-lev`
//! (DCWQ) and `fast-concurrent-deque` (FCDQ). Each worker owns one deque: it pushes and pops at its
//! end without locks; idle workers steal the oldest task of a victim (random start, then around).
//!
//! Owner operations of both deques must come from one thread at a time, so a worker's deque is
//! *claimed* when its `Local` is made and released when that `Local` is dropped; asking twice
//! for the same worker's state panics instead of creating a second owner.

use crossbeam_utils::CachePadded;

use super::{scan_victims, Brand, PoolConfig, PutOutcome, TaskPool};
use crate::queue::chase_lev::{self, Steal, Stealer, Worker};
use crate::queue::Fcdq;
use crate::stats::WorkerStats;
use crate::sync::{lock, Arc, AtomicBool, Mutex, Ordering};

/// How often a thief retries a victim whose deque answered `Retry` (contention) before moving
/// on to the next victim.
const RETRIES: usize = 4;

/// Initial capacity of each worker's Chase–Lev deque (it grows on demand).
pub const CHASE_LEV_CAPACITY: usize = 256;

/// `chase-lev` / `dcwq`: a Chase–Lev deque per worker.
///
/// ```
/// use taskpools::pool::ChaseLevPool;
/// use taskpools::pool::{PoolConfig, TaskPool};
/// use taskpools::WorkerStats;
///
/// let pool: ChaseLevPool<u32> = TaskPool::new(&PoolConfig::new(2));
/// let (mut w0, mut w1) = (pool.local(0), pool.local(1));
/// (1..=3).for_each(|t| { pool.put(&mut w0, t); });
/// let mut stats = WorkerStats::default();
/// assert_eq!(pool.get(&mut w0, &mut stats), Some(3)); // the owner pops the newest
/// assert_eq!(pool.get(&mut w1, &mut stats), Some(1)); // a thief takes the oldest
/// ```
pub struct ChaseLevPool<T> {
    stealers: Box<[Stealer<T>]>,
    owners: Box<[OwnerSlot<T>]>,
    brand: Brand,
}

/// Where a worker's owner handle waits while no `Local` holds it.
type OwnerSlot<T> = Arc<Mutex<Option<Worker<T>>>>;

/// A worker's owner handle on its deque (given back to the pool on drop).
pub struct ChaseLevLocal<T> {
    me: usize,
    deque: Option<Worker<T>>,
    slot: OwnerSlot<T>,
    rng: fastrand::Rng,
    brand: Brand,
}

impl<T> Drop for ChaseLevLocal<T> {
    fn drop(&mut self) {
        *lock(&self.slot) = self.deque.take();
    }
}

impl<T> ChaseLevLocal<T> {
    #[inline]
    fn deque(&self) -> &Worker<T> {
        self.deque.as_ref().expect("present until drop")
    }
}

impl<T: Send> TaskPool<T> for ChaseLevPool<T> {
    type Local = ChaseLevLocal<T>;

    fn new(cfg: &PoolConfig) -> Self {
        let (owners, stealers): (Vec<_>, Vec<_>) = (0..cfg.workers)
            .map(|_| {
                let (w, s) = chase_lev::deque(CHASE_LEV_CAPACITY);
                (Arc::new(Mutex::new(Some(w))), s)
            })
            .unzip();
        ChaseLevPool {
            stealers: stealers.into(),
            owners: owners.into(),
            brand: Brand::new(),
        }
    }

    fn workers(&self) -> usize {
        self.stealers.len()
    }

    fn local(&self, worker: usize) -> Self::Local {
        let slot = Arc::clone(&self.owners[worker]);
        let deque = lock(&slot).take();
        assert!(
            deque.is_some(),
            "worker {worker}'s deque already has an owner"
        );
        ChaseLevLocal {
            me: worker,
            deque,
            slot,
            rng: fastrand::Rng::with_seed(0xc1a5_0000 + worker as u64),
            brand: self.brand,
        }
    }

    #[inline]
    fn put(&self, l: &mut Self::Local, task: T) -> PutOutcome {
        self.brand.check(l.brand);
        let was_empty = l.deque().push(task);
        PutOutcome::Shared { was_empty }
    }

    #[inline]
    fn get(&self, l: &mut Self::Local, stats: &mut WorkerStats) -> Option<T> {
        self.brand.check(l.brand);
        if let Some(t) = l.deque().pop() {
            return Some(t);
        }
        let me = l.me;
        scan_victims(me, self.stealers.len(), &mut l.rng, stats, |v| {
            let s = &self.stealers[v];
            for _ in 0..RETRIES {
                match s.steal() {
                    Steal::Success(t) => return Some((t, 1)),
                    Steal::Empty => return None,
                    Steal::Retry => {}
                }
            }
            None
        })
    }

    #[inline]
    fn own_backlog(&self, l: &Self::Local) -> usize {
        self.brand.check(l.brand);
        l.deque().len()
    }

    fn has_shared_work(&self) -> bool {
        self.stealers.iter().any(|s| !s.is_empty())
    }
}

/// Capacity of each worker's FCDQ; puts beyond it go to a private overflow stack.
pub const FCDQ_CAPACITY: usize = 1024;

/// `fast-concurrent-deque` / `fcdq`: an FCDQ per worker plus a private overflow stack for
/// puts that find it full (PARTEE's runtime runs such a task at once instead; a pool cannot
/// run tasks, so it keeps them privately, and only the owner can take them).
///
/// ```
/// use taskpools::pool::FcdqPool;
/// use taskpools::pool::{PoolConfig, TaskPool};
/// use taskpools::WorkerStats;
///
/// let pool: FcdqPool<u32> = TaskPool::new(&PoolConfig::new(2));
/// let (mut w0, mut w1) = (pool.local(0), pool.local(1));
/// (1..=3).for_each(|t| { pool.put(&mut w0, t); });
/// let mut stats = WorkerStats::default();
/// assert_eq!(pool.get(&mut w0, &mut stats), Some(3)); // the owner pops the newest
/// assert_eq!(pool.get(&mut w1, &mut stats), Some(1)); // a thief takes the oldest
/// ```
pub struct FcdqPool<T> {
    deques: Box<[CachePadded<Fcdq<T>>]>,
    claimed: Box<[Arc<AtomicBool>]>,
    brand: Brand,
}

/// A worker's claim on its FCDQ and its overflow stack.
pub struct FcdqLocal<T> {
    me: usize,
    overflow: Vec<T>,
    claim: Arc<AtomicBool>,
    rng: fastrand::Rng,
    brand: Brand,
}

impl<T> Drop for FcdqLocal<T> {
    fn drop(&mut self) {
        self.claim.store(false, Ordering::Release);
    }
}

impl<T: Send> TaskPool<T> for FcdqPool<T> {
    type Local = FcdqLocal<T>;

    fn new(cfg: &PoolConfig) -> Self {
        FcdqPool {
            deques: (0..cfg.workers)
                .map(|_| CachePadded::new(Fcdq::new(FCDQ_CAPACITY)))
                .collect(),
            claimed: (0..cfg.workers)
                .map(|_| Arc::new(AtomicBool::new(false)))
                .collect(),
            brand: Brand::new(),
        }
    }

    fn workers(&self) -> usize {
        self.deques.len()
    }

    fn local(&self, worker: usize) -> Self::Local {
        let claim = Arc::clone(&self.claimed[worker]);
        assert!(
            !claim.swap(true, Ordering::AcqRel),
            "worker {worker}'s deque already has an owner"
        );
        FcdqLocal {
            me: worker,
            overflow: Vec::new(),
            claim,
            rng: fastrand::Rng::with_seed(0xfcd0_0000 + worker as u64),
            brand: self.brand,
        }
    }

    #[inline]
    fn put(&self, l: &mut Self::Local, task: T) -> PutOutcome {
        self.brand.check(l.brand);
        let d = &self.deques[l.me];
        let was_empty = d.is_empty();
        // SAFETY: `l` holds the claim on deque `me` of *this* pool (its brand was checked
        // above): this thread is the deque's only owner.
        match unsafe { d.enqueue(task) } {
            Ok(()) => PutOutcome::Shared { was_empty },
            Err(task) => {
                l.overflow.push(task);
                PutOutcome::Private
            }
        }
    }

    #[inline]
    fn get(&self, l: &mut Self::Local, stats: &mut WorkerStats) -> Option<T> {
        self.brand.check(l.brand);
        if let Some(t) = l.overflow.pop() {
            return Some(t);
        }
        // SAFETY: as in `put` (brand checked above).
        if let Some(t) = unsafe { self.deques[l.me].dequeue_front() } {
            return Some(t);
        }
        let me = l.me;
        scan_victims(me, self.deques.len(), &mut l.rng, stats, |v| {
            self.deques[v].dequeue_back().map(|t| (t, 1))
        })
    }

    #[inline]
    fn own_backlog(&self, l: &Self::Local) -> usize {
        self.brand.check(l.brand);
        l.overflow.len() + self.deques[l.me].len()
    }

    fn has_shared_work(&self) -> bool {
        self.deques.iter().any(|d| !d.is_empty())
    }
}
