//! Distributed task pools without exchange (Korch and Rauber (2002) §3.3, `dq1` lists, `dq3`
//! arrays): each worker has a private queue and runs only what it was given at initialization
//! and what it creates itself. No synchronization at all; the load is as balanced as the initial
//! distribution (round-robin) makes it. A worker may leave once its own queue is empty.

use std::marker::PhantomData;

use super::{Brand, PoolConfig, PutOutcome, TaskPool};
use crate::queue::SeqQueue;
use crate::stats::WorkerStats;

/// A private queue per worker, no stealing.
///
/// ```
/// use taskpools::pool::DistributedPool;
/// use taskpools::queue::ArrayStack;
/// use taskpools::pool::{PoolConfig, TaskPool};
/// use taskpools::WorkerStats;
///
/// let pool: DistributedPool<u32, ArrayStack<u32>> = TaskPool::new(&PoolConfig::new(2));
/// let (mut w0, mut w1) = (pool.local(0), pool.local(1));
/// pool.put(&mut w0, 7);
/// let mut stats = WorkerStats::default();
/// assert_eq!(pool.get(&mut w1, &mut stats), None); // nobody else sees worker 0's tasks
/// assert_eq!(pool.get(&mut w0, &mut stats), Some(7));
/// ```
pub struct DistributedPool<T, Q: SeqQueue<T>> {
    alloc: Q::Alloc,
    workers: usize,
    brand: Brand,
    _t: PhantomData<fn(T) -> T>,
}

/// A worker's private queue and its node cache.
pub struct DistributedLocal<T, Q: SeqQueue<T>> {
    // Field order matters: the queue frees its nodes before the cache goes.
    queue: Q,
    cache: Q::Cache,
    brand: Brand,
    _t: PhantomData<fn(T) -> T>,
}

impl<T: Send, Q: SeqQueue<T>> TaskPool<T> for DistributedPool<T, Q> {
    type Local = DistributedLocal<T, Q>;

    fn new(cfg: &PoolConfig) -> Self {
        DistributedPool {
            alloc: Q::new_alloc(cfg.mem),
            workers: cfg.workers,
            brand: Brand::new(),
            _t: PhantomData,
        }
    }

    fn workers(&self) -> usize {
        self.workers
    }

    fn local(&self, _worker: usize) -> Self::Local {
        DistributedLocal {
            queue: Q::new(&self.alloc),
            cache: Q::cache(&self.alloc),
            brand: self.brand,
            _t: PhantomData,
        }
    }

    #[inline]
    fn put(&self, l: &mut Self::Local, task: T) -> PutOutcome {
        self.brand.check(l.brand);
        l.queue.push(task, &mut l.cache);
        PutOutcome::Private
    }

    #[inline]
    fn get(&self, l: &mut Self::Local, _stats: &mut WorkerStats) -> Option<T> {
        self.brand.check(l.brand);
        l.queue.pop(&mut l.cache)
    }

    #[inline]
    fn own_backlog(&self, l: &Self::Local) -> usize {
        self.brand.check(l.brand);
        l.queue.len()
    }

    fn has_shared_work(&self) -> bool {
        false
    }
}
