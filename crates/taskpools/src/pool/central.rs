//! Central task pools (Korch and Rauber (2002) §3.1): one queue shared by all workers.
//! `sq1` (linked list) and `sq2` (array) lock the whole queue for every access; `sq4` is the
//! two-lock FIFO queue, which lets one put and one get proceed at the same time; `sq3` is a
//! FIFO queue that locks single tasks (a doubly linked list with a lock per node), which lets
//! a put and a get proceed at the same time once the queue holds three tasks.

use std::marker::PhantomData;

use crossbeam_utils::CachePadded;

use super::{PoolConfig, PutOutcome, TaskPool};
use crate::queue::{Locked, NodeLockedDList, SeqQueue, TwoLockQueue};
use crate::stats::WorkerStats;

/// One locked LIFO queue for everybody (`sq1` with a list, `sq2` with an array).
///
/// ```
/// use taskpools::pool::CentralPool;
/// use taskpools::queue::ListStack;
/// use taskpools::pool::{PoolConfig, TaskPool};
/// use taskpools::WorkerStats;
///
/// let pool: CentralPool<u32, ListStack<u32>> = TaskPool::new(&PoolConfig::new(2));
/// let (mut w0, mut w1) = (pool.local(0), pool.local(1));
/// (1..=3).for_each(|t| { pool.put(&mut w0, t); });
/// let mut stats = WorkerStats::default();
/// // One queue for everybody, last in first out, whoever asks.
/// assert_eq!(pool.get(&mut w1, &mut stats), Some(3));
/// assert_eq!(pool.get(&mut w0, &mut stats), Some(2));
/// ```
pub struct CentralPool<T, Q: SeqQueue<T>> {
    queue: CachePadded<Locked<Q>>,
    alloc: Q::Alloc,
    workers: usize,
    _t: PhantomData<fn(T) -> T>,
}

impl<T: Send, Q: SeqQueue<T>> TaskPool<T> for CentralPool<T, Q> {
    type Local = Q::Cache;

    fn new(cfg: &PoolConfig) -> Self {
        let alloc = Q::new_alloc(cfg.mem);
        CentralPool {
            queue: CachePadded::new(Locked::new(Q::new(&alloc))),
            alloc,
            workers: cfg.workers,
            _t: PhantomData,
        }
    }

    fn workers(&self) -> usize {
        self.workers
    }

    fn local(&self, _worker: usize) -> Q::Cache {
        Q::cache(&self.alloc)
    }

    #[inline]
    fn put(&self, cache: &mut Q::Cache, task: T) -> PutOutcome {
        let was_empty = self.queue.push(task, cache);
        PutOutcome::Shared { was_empty }
    }

    #[inline]
    fn get(&self, cache: &mut Q::Cache, _stats: &mut WorkerStats) -> Option<T> {
        self.queue.pop(cache)
    }

    fn has_shared_work(&self) -> bool {
        self.queue.len_hint() > 0
    }
}

/// The central FIFO queue with separate head and tail locks (`sq4`).
///
/// ```
/// use taskpools::pool::CentralFifoPool;
/// use taskpools::pool::{PoolConfig, TaskPool};
/// use taskpools::WorkerStats;
///
/// let pool: CentralFifoPool<u32> = TaskPool::new(&PoolConfig::new(2));
/// let (mut w0, mut w1) = (pool.local(0), pool.local(1));
/// (1..=3).for_each(|t| { pool.put(&mut w0, t); });
/// let mut stats = WorkerStats::default();
/// // First in, first out, whoever asks.
/// assert_eq!(pool.get(&mut w1, &mut stats), Some(1));
/// assert_eq!(pool.get(&mut w0, &mut stats), Some(2));
/// ```
pub struct CentralFifoPool<T> {
    queue: TwoLockQueue<T>,
    workers: usize,
}

impl<T: Send> TaskPool<T> for CentralFifoPool<T> {
    type Local = crate::queue::QCacheOf<T>;

    fn new(cfg: &PoolConfig) -> Self {
        CentralFifoPool {
            queue: TwoLockQueue::new(cfg.mem),
            workers: cfg.workers,
        }
    }

    fn workers(&self) -> usize {
        self.workers
    }

    fn local(&self, _worker: usize) -> Self::Local {
        self.queue.cache()
    }

    #[inline]
    fn put(&self, cache: &mut Self::Local, task: T) -> PutOutcome {
        let was_empty = self.queue.enqueue(task, cache);
        PutOutcome::Shared { was_empty }
    }

    #[inline]
    fn get(&self, cache: &mut Self::Local, _stats: &mut WorkerStats) -> Option<T> {
        self.queue.dequeue(cache)
    }

    fn has_shared_work(&self) -> bool {
        self.queue.len_hint() > 0
    }
}

/// The central FIFO queue that locks single tasks (`sq3`): a doubly linked list with a lock
/// per node ([`NodeLockedDList`]); a put locks the last node and the tail, a get the head and
/// the first two nodes. Its nodes come from the global allocator whatever
/// [`PoolConfig::mem`] says (the list's docs say why).
///
/// ```
/// use taskpools::pool::NodeLockedFifoPool;
/// use taskpools::pool::{PoolConfig, TaskPool};
/// use taskpools::WorkerStats;
///
/// let pool: NodeLockedFifoPool<u32> = TaskPool::new(&PoolConfig::new(2));
/// let (mut w0, mut w1) = (pool.local(0), pool.local(1));
/// (1..=3).for_each(|t| { pool.put(&mut w0, t); });
/// let mut stats = WorkerStats::default();
/// // First in, first out, whoever asks.
/// assert_eq!(pool.get(&mut w1, &mut stats), Some(1));
/// assert_eq!(pool.get(&mut w0, &mut stats), Some(2));
/// ```
pub struct NodeLockedFifoPool<T> {
    queue: NodeLockedDList<T>,
    workers: usize,
}

impl<T: Send> TaskPool<T> for NodeLockedFifoPool<T> {
    /// No per-worker state: no node cache either (the nodes are `Arc`s).
    type Local = ();

    fn new(cfg: &PoolConfig) -> Self {
        NodeLockedFifoPool {
            queue: NodeLockedDList::new(),
            workers: cfg.workers,
        }
    }

    fn workers(&self) -> usize {
        self.workers
    }

    fn local(&self, _worker: usize) {}

    #[inline]
    fn put(&self, _: &mut (), task: T) -> PutOutcome {
        let was_empty = self.queue.push_back(task);
        PutOutcome::Shared { was_empty }
    }

    /// `None` only when the head, locked, has no next node: the queue was empty then.
    #[inline]
    fn get(&self, _: &mut (), _stats: &mut WorkerStats) -> Option<T> {
        self.queue.pop_front()
    }

    fn has_shared_work(&self) -> bool {
        self.queue.len_hint() > 0
    }
}
