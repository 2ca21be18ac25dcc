//! Queues that the task pools are built from (Korch & Rauber, "A Comparison of Task Pools for
//! Dynamic Load Balancing of Irregular Algorithms" (2002), §4.2).
//!
//! The sequential containers ([`ListStack`], [`DList`], [`ArrayStack`]) are not thread-safe on
//! their own: a pool either keeps one private to a worker or guards it with a lock
//! ([`Locked`]). [`TwoLockQueue`] is the central FIFO with separate head and tail locks;
//! [`NodeLockedDList`] a doubly linked list with a lock per node, whose two ends work at the
//! same time (`sq3`, `dq6`); [`Block`] is the fixed-size array that the private/public and
//! combined pools move whole.
//!
//! The work-stealing deques of Papakonstantinou, PARTEE (2015), §3.2: [`chase_lev`] (lock-free,
//! growable) and [`Fcdq`] (fixed capacity, sequence numbers), with the lock-based baselines
//! [`MutexDeque`] and [`SpinDeque`]; and [`private_deque`], private deques that thieves reach
//! only through steal requests (the fork-join runtime's default).
//!
//! List nodes come from the run's memory manager ([`crate::mem`]); the caller passes its
//! worker's cache to every operation that allocates or frees a node.

mod array;
mod block;
pub mod chase_lev;
mod dlist;
mod fcdq;
mod list;
mod locked_deque;
mod node_locked_dlist;
pub mod private_deque;
mod spin;
mod two_lock;

pub use array::ArrayStack;
pub use block::{Block, BlockQueue, PrivateBlocks, BLOCK_LEN};
pub use dlist::{DList, Node2};
pub use fcdq::Fcdq;
pub use list::{ListStack, Node};
pub use locked_deque::{MutexDeque, SpinDeque};
pub use node_locked_dlist::NodeLockedDList;
pub use spin::{SpinGuard, SpinLock};
pub use two_lock::{QCache as QCacheOf, QNode, TwoLockQueue};

use crate::mem::MemKind;
use crate::sync::{lock, AtomicUsize, Mutex, Ordering};

/// A sequential queue with a working end (push/pop, LIFO) and a thief's end (`steal`).
///
/// Implementations document which end `steal` takes from.
pub trait SeqQueue<T>: Send {
    /// Allocator state shared by all queues of one pool.
    type Alloc: Send + Sync;
    /// A worker's handle on the allocator.
    type Cache: Send;
    /// The shared allocator for a run with memory manager `mem`.
    fn new_alloc(mem: MemKind) -> Self::Alloc;
    /// An empty queue.
    fn new(alloc: &Self::Alloc) -> Self;
    /// A worker's cache.
    fn cache(alloc: &Self::Alloc) -> Self::Cache;
    /// Inserts at the working end.
    fn push(&mut self, task: T, cache: &mut Self::Cache);
    /// Removes from the working end.
    fn pop(&mut self, cache: &mut Self::Cache) -> Option<T>;
    /// Removes the element a thief takes.
    fn steal(&mut self, cache: &mut Self::Cache) -> Option<T>;
    /// Number of elements.
    fn len(&self) -> usize;
    /// Whether the queue is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A sequential queue behind a lock, with its length mirrored in an atomic so that idle
/// workers can look for work without taking the lock.
///
/// The mirror is written under the lock after every operation; a reader that sees 0 after a
/// `SeqCst` fence has seen the result of every push that precedes the pusher's own fence
/// (the sleep/wake protocol in `phase::idle` relies on this).
pub struct Locked<Q> {
    q: Mutex<Q>,
    len: AtomicUsize,
}

impl<Q> Locked<Q> {
    /// Wraps a queue.
    pub fn new(q: Q) -> Self {
        Locked {
            q: Mutex::new(q),
            len: AtomicUsize::new(0),
        }
    }

    /// The length as of the last operation (no lock taken).
    #[inline]
    pub fn len_hint(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Runs `f` on the locked queue and updates the length mirror.
    #[inline]
    pub fn with<R, T>(&self, f: impl FnOnce(&mut Q) -> R) -> R
    where
        Q: SeqQueue<T>,
    {
        let mut g = lock(&self.q);
        let r = f(&mut g);
        self.len.store(g.len(), Ordering::Relaxed);
        r
    }

    /// Pushes at the working end; returns whether the queue was empty before.
    #[inline]
    pub fn push<T>(&self, task: T, cache: &mut Q::Cache) -> bool
    where
        Q: SeqQueue<T>,
    {
        self.with(|q| {
            let was_empty = q.is_empty();
            q.push(task, cache);
            was_empty
        })
    }

    /// Pops from the working end.
    #[inline]
    pub fn pop<T>(&self, cache: &mut Q::Cache) -> Option<T>
    where
        Q: SeqQueue<T>,
    {
        self.with(|q| q.pop(cache))
    }

    /// Takes from the thief's end.
    #[inline]
    pub fn steal<T>(&self, cache: &mut Q::Cache) -> Option<T>
    where
        Q: SeqQueue<T>,
    {
        self.with(|q| q.steal(cache))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn exercise<Q: SeqQueue<u64>>(mem: MemKind, steal_is_oldest: bool) {
        let alloc = Q::new_alloc(mem);
        let mut c = Q::cache(&alloc);
        let mut q = Q::new(&alloc);
        assert!(q.pop(&mut c).is_none() && q.steal(&mut c).is_none());
        for i in 0..1000 {
            q.push(i, &mut c);
        }
        assert_eq!(q.len(), 1000);
        assert_eq!(q.pop(&mut c), Some(999), "working end is LIFO");
        let s = q.steal(&mut c).unwrap();
        assert_eq!(s, if steal_is_oldest { 0 } else { 998 });
        let mut rest: Vec<u64> = std::iter::from_fn(|| q.pop(&mut c)).collect();
        rest.push(s);
        rest.push(999);
        rest.sort();
        assert_eq!(rest, (0..1000).collect::<Vec<_>>());
        // Leave some behind to exercise Drop.
        for i in 0..10 {
            q.push(i, &mut c);
        }
    }

    #[test]
    fn sequential_queues_keep_every_element() {
        for mem in MemKind::ALL {
            exercise::<ListStack<u64>>(mem, false);
            exercise::<DList<u64>>(mem, true);
            exercise::<ArrayStack<u64>>(mem, false);
        }
    }

    #[test]
    fn drop_runs_destructors_of_remaining_tasks() {
        use std::sync::Arc as StdArc;
        let tracker = StdArc::new(());
        for mem in MemKind::ALL {
            let alloc = ListStack::<StdArc<()>>::new_alloc(mem);
            let mut c = ListStack::cache(&alloc);
            let mut q = ListStack::new(&alloc);
            let dalloc = DList::<StdArc<()>>::new_alloc(mem);
            let mut d = DList::new(&dalloc);
            let mut dc = DList::cache(&dalloc);
            for _ in 0..100 {
                q.push(StdArc::clone(&tracker), &mut c);
                d.push(StdArc::clone(&tracker), &mut dc);
            }
            assert_eq!(StdArc::strong_count(&tracker), 201);
            drop(q);
            drop(d);
            assert_eq!(StdArc::strong_count(&tracker), 1, "{mem}");
        }
    }
}
