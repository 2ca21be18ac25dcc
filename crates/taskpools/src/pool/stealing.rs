//! Dynamic task stealing (Korch and Rauber (2002) §3.5): a locked queue per worker; a worker
//! whose queue is empty visits the others, starting at a random victim, and takes one task.
//! `dq2` steals from the working end of a list, `dq5` the oldest task of a doubly linked list
//! (likely the root of a large subtree), `dq7` from the working end of an array.

use std::marker::PhantomData;

use crossbeam_utils::CachePadded;

use super::{scan_victims, Brand, PoolConfig, PutOutcome, TaskPool};
use crate::queue::{Locked, SeqQueue};
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

/// A worker's index, node cache and victim-choosing generator.
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
