//! Dynamic task stealing (Korch and Rauber (2002) §3.5 and §6.3): a locked queue per worker;
//! a worker whose queue is empty visits the others, starting at a random victim, and takes
//! one task. `dq2` steals from the working end of a list, `dq5` the oldest task of a doubly
//! linked list (likely the root of a large subtree), `dq7` from the working end of an array.
//! Two differ from `dq2` in the queues: `dq4` gives every worker two locked lists, used as a
//! small randomized pool of its own, and `dq6` is `dq5` with a lock per task instead of per
//! queue, so that the owner and a thief work at the two ends at the same time.

use std::marker::PhantomData;

use crossbeam_utils::CachePadded;

use super::{scan_victims, Brand, PoolConfig, PutOutcome, TaskPool};
use crate::queue::{ListStack, Locked, NodeLockedDList, SeqQueue};
use crate::stats::WorkerStats;

/// A locked queue per worker with stealing; the queue type decides the thief's end.
///
/// ```
/// use taskpools::pool::StealingPool;
/// use taskpools::queue::{DList, ListStack};
/// use taskpools::pool::{PoolConfig, TaskPool};
/// use taskpools::WorkerStats;
///
/// let mut stats = WorkerStats::default();
/// // `steal-working-end` (dq2): a thief takes the newest task, as the owner would.
/// let dq2: StealingPool<u32, ListStack<u32>> = TaskPool::new(&PoolConfig::new(2));
/// let (mut a0, mut a1) = (dq2.local(0), dq2.local(1));
/// (1..=3).for_each(|t| { dq2.put(&mut a0, t); });
/// assert_eq!(dq2.get(&mut a1, &mut stats), Some(3));
/// // `steal-opposite-end` (dq5): a thief takes the oldest.
/// let dq5: StealingPool<u32, DList<u32>> = TaskPool::new(&PoolConfig::new(2));
/// let (mut b0, mut b1) = (dq5.local(0), dq5.local(1));
/// (1..=3).for_each(|t| { dq5.put(&mut b0, t); });
/// assert_eq!(dq5.get(&mut b1, &mut stats), Some(1));
/// ```
pub struct StealingPool<T, Q: SeqQueue<T>> {
    queues: Box<[CachePadded<Locked<Q>>]>,
    alloc: Q::Alloc,
    brand: Brand,
    _t: PhantomData<fn(T) -> T>,
}

/// A worker's index, node cache and victim-choosing generator (of `dq2`, `dq5`, `dq7`, and
/// `dq4`; `dq6`'s has no node cache: `C` is `()`).
pub struct StealingLocal<C> {
    me: usize,
    cache: C,
    rng: fastrand::Rng,
    brand: Brand,
}

impl<T: Send, Q: SeqQueue<T>> TaskPool<T> for StealingPool<T, Q> {
    type Local = StealingLocal<Q::Cache>;

    fn new(cfg: &PoolConfig) -> Self {
        let alloc = Q::new_alloc(cfg.mem);
        let queues = (0..cfg.workers)
            .map(|_| CachePadded::new(Locked::new(Q::new(&alloc))))
            .collect();
        StealingPool {
            queues,
            alloc,
            brand: Brand::new(),
            _t: PhantomData,
        }
    }

    fn workers(&self) -> usize {
        self.queues.len()
    }

    fn local(&self, worker: usize) -> Self::Local {
        StealingLocal {
            me: worker,
            cache: Q::cache(&self.alloc),
            rng: fastrand::Rng::with_seed(0xdead_0000 + worker as u64),
            brand: self.brand,
        }
    }

    #[inline]
    fn put(&self, l: &mut Self::Local, task: T) -> PutOutcome {
        self.brand.check(l.brand);
        let was_empty = self.queues[l.me].push(task, &mut l.cache);
        PutOutcome::Shared { was_empty }
    }

    #[inline]
    fn get(&self, l: &mut Self::Local, stats: &mut WorkerStats) -> Option<T> {
        self.brand.check(l.brand);
        let own = &self.queues[l.me];
        if own.len_hint() > 0 {
            if let Some(t) = own.pop(&mut l.cache) {
                return Some(t);
            }
        }
        let StealingLocal { me, cache, rng, .. } = l;
        scan_victims(*me, self.queues.len(), rng, stats, |v| {
            let q = &self.queues[v];
            if q.len_hint() == 0 {
                return None;
            }
            q.steal(cache).map(|t| (t, 1))
        })
    }

    #[inline]
    fn own_backlog(&self, l: &Self::Local) -> usize {
        self.brand.check(l.brand);
        self.queues[l.me].len_hint()
    }

    fn has_shared_work(&self) -> bool {
        self.queues.iter().any(|q| q.len_hint() > 0)
    }
}

/// Queues per worker of `steal-randomized-local` (`dq4`).
const LOCAL_QUEUES: usize = 2;

/// `dq4`: `dq2` with an additional queue for every worker, its queues organized as a
/// randomized local pool. Each worker has two locked LIFO lists; a put goes to
/// one of them chosen at random, a get tries both in random order and then steals from the
/// working end of the other workers' lists, starting at a random victim (and at a random one
/// of its lists).
///
/// ```
/// use taskpools::pool::RandomizedLocalPool;
/// use taskpools::pool::{PoolConfig, TaskPool};
/// use taskpools::WorkerStats;
///
/// let pool: RandomizedLocalPool<u32> = TaskPool::new(&PoolConfig::new(2));
/// let (mut w0, mut w1) = (pool.local(0), pool.local(1));
/// (0..10).for_each(|t| { pool.put(&mut w0, t); });
/// assert_eq!(pool.own_backlog(&w0), 10); // in worker 0's two lists
/// let mut stats = WorkerStats::default();
/// let stolen = pool.get(&mut w1, &mut stats).unwrap();
/// assert!(stolen < 10 && stats.steals == 1);
/// let mut all: Vec<u32> = std::iter::from_fn(|| pool.get(&mut w0, &mut stats)).collect();
/// all.push(stolen);
/// all.sort();
/// assert_eq!(all, (0..10).collect::<Vec<_>>());
/// ```
pub struct RandomizedLocalPool<T: Send> {
    /// Worker `w`'s lists are `queues[w * LOCAL_QUEUES..][..LOCAL_QUEUES]`.
    queues: Box<[CachePadded<Locked<ListStack<T>>>]>,
    alloc: <ListStack<T> as SeqQueue<T>>::Alloc,
    brand: Brand,
}

impl<T: Send> RandomizedLocalPool<T> {
    /// Worker `w`'s lists.
    #[inline]
    fn lists(&self, w: usize) -> &[CachePadded<Locked<ListStack<T>>>] {
        &self.queues[w * LOCAL_QUEUES..][..LOCAL_QUEUES]
    }

    /// Takes from `w`'s lists, starting at list `first`, the way `take` takes.
    #[inline]
    fn take_from(
        &self,
        w: usize,
        first: usize,
        cache: &mut <ListStack<T> as SeqQueue<T>>::Cache,
        take: impl Fn(&Locked<ListStack<T>>, &mut <ListStack<T> as SeqQueue<T>>::Cache) -> Option<T>,
    ) -> Option<T> {
        let lists = self.lists(w);
        (0..LOCAL_QUEUES).find_map(|k| {
            let q = &lists[(first + k) % LOCAL_QUEUES];
            if q.len_hint() == 0 {
                return None;
            }
            take(q, cache)
        })
    }
}

impl<T: Send> TaskPool<T> for RandomizedLocalPool<T> {
    type Local = StealingLocal<<ListStack<T> as SeqQueue<T>>::Cache>;

    fn new(cfg: &PoolConfig) -> Self {
        let alloc = ListStack::<T>::new_alloc(cfg.mem);
        let queues = (0..cfg.workers * LOCAL_QUEUES)
            .map(|_| CachePadded::new(Locked::new(ListStack::new(&alloc))))
            .collect();
        RandomizedLocalPool {
            queues,
            alloc,
            brand: Brand::new(),
        }
    }

    fn workers(&self) -> usize {
        self.queues.len() / LOCAL_QUEUES
    }

    fn local(&self, worker: usize) -> Self::Local {
        StealingLocal {
            me: worker,
            cache: ListStack::cache(&self.alloc),
            rng: fastrand::Rng::with_seed(0xd4_0000 + worker as u64),
            brand: self.brand,
        }
    }

    #[inline]
    fn put(&self, l: &mut Self::Local, task: T) -> PutOutcome {
        self.brand.check(l.brand);
        let k = l.rng.usize(..LOCAL_QUEUES);
        let was_empty = self.lists(l.me)[k].push(task, &mut l.cache);
        PutOutcome::Shared { was_empty }
    }

    /// Both own lists (the owner's pushes are visible to its own hint reads), then the others'.
    #[inline]
    fn get(&self, l: &mut Self::Local, stats: &mut WorkerStats) -> Option<T> {
        self.brand.check(l.brand);
        let first = l.rng.usize(..LOCAL_QUEUES);
        if let Some(t) = self.take_from(l.me, first, &mut l.cache, |q, c| q.pop(c)) {
            return Some(t);
        }
        let StealingLocal { me, cache, rng, .. } = l;
        scan_victims(*me, self.workers(), rng, stats, |v| {
            self.take_from(v, first, cache, |q, c| q.steal(c))
                .map(|t| (t, 1))
        })
    }

    #[inline]
    fn own_backlog(&self, l: &Self::Local) -> usize {
        self.brand.check(l.brand);
        self.lists(l.me).iter().map(|q| q.len_hint()).sum()
    }

    fn has_shared_work(&self) -> bool {
        self.queues.iter().any(|q| q.len_hint() > 0)
    }
}

/// `dq6`: `dq5` with the lock granularity reduced to single tasks. Each worker has a doubly
/// linked list with a lock per node ([`NodeLockedDList`]); the owner puts and takes at the
/// front (LIFO), thieves take the oldest task at the back, and the two run at the same time
/// once the list holds four tasks. Its nodes come from the global allocator whatever
/// [`PoolConfig::mem`] says (the list's docs say why).
///
/// ```
/// use taskpools::pool::NodeLockedStealingPool;
/// use taskpools::pool::{PoolConfig, TaskPool};
/// use taskpools::WorkerStats;
///
/// let pool: NodeLockedStealingPool<u32> = TaskPool::new(&PoolConfig::new(2));
/// let (mut w0, mut w1) = (pool.local(0), pool.local(1));
/// (1..=3).for_each(|t| { pool.put(&mut w0, t); });
/// let mut stats = WorkerStats::default();
/// assert_eq!(pool.get(&mut w1, &mut stats), Some(1)); // a thief takes the oldest
/// assert_eq!(pool.get(&mut w0, &mut stats), Some(3)); // the owner the newest
/// ```
pub struct NodeLockedStealingPool<T> {
    queues: Box<[NodeLockedDList<T>]>,
    brand: Brand,
}

impl<T: Send> TaskPool<T> for NodeLockedStealingPool<T> {
    type Local = StealingLocal<()>;

    fn new(cfg: &PoolConfig) -> Self {
        NodeLockedStealingPool {
            queues: (0..cfg.workers).map(|_| NodeLockedDList::new()).collect(),
            brand: Brand::new(),
        }
    }

    fn workers(&self) -> usize {
        self.queues.len()
    }

    fn local(&self, worker: usize) -> Self::Local {
        StealingLocal {
            me: worker,
            cache: (),
            rng: fastrand::Rng::with_seed(0xd6_0000 + worker as u64),
            brand: self.brand,
        }
    }

    #[inline]
    fn put(&self, l: &mut Self::Local, task: T) -> PutOutcome {
        self.brand.check(l.brand);
        let was_empty = self.queues[l.me].push_front(task);
        PutOutcome::Shared { was_empty }
    }

    #[inline]
    fn get(&self, l: &mut Self::Local, stats: &mut WorkerStats) -> Option<T> {
        self.brand.check(l.brand);
        let own = &self.queues[l.me];
        if !own.is_empty() {
            if let Some(t) = own.pop_front() {
                return Some(t);
            }
        }
        scan_victims(l.me, self.queues.len(), &mut l.rng, stats, |v| {
            let q = &self.queues[v];
            if q.is_empty() {
                return None;
            }
            q.pop_back().map(|t| (t, 1))
        })
    }

    #[inline]
    fn own_backlog(&self, l: &Self::Local) -> usize {
        self.brand.check(l.brand);
        self.queues[l.me].len_hint()
    }

    fn has_shared_work(&self) -> bool {
        self.queues.iter().any(|q| !q.is_empty())
    }
}
