//! The two-lock FIFO queue of Michael and Scott (1996), Korch & Rauber's `sq4`: one lock for the
//! head, one for the tail, so one enqueue and one dequeue can proceed at the same time.
//!
//! Invariant: the list always holds a dummy node at the head; the values live in the nodes
//! after it. An enqueuer touches only the tail node, a dequeuer only the head node and its
//! successor; when they meet (one element), the successor link is the only shared word and it
//! is published with release/acquire. A dequeuer frees the old dummy only after it has seen a
//! successor, i.e. after the enqueuer's last access to that node.

use crossbeam_utils::CachePadded;
use std::mem::MaybeUninit;
use std::ptr::{self, NonNull};

use crate::mem::{MemKind, NodeAlloc, NodeCache};
use crate::sync::{lock, Arc, AtomicPtr, AtomicUsize, Mutex, Ordering};

/// A node of the two-lock queue (opaque).
pub struct QNode<T> {
    next: AtomicPtr<QNode<T>>,
    value: MaybeUninit<T>,
}

/// A FIFO queue with separate head and tail locks.
pub struct TwoLockQueue<T> {
    head: CachePadded<Mutex<*mut QNode<T>>>,
    tail: CachePadded<Mutex<*mut QNode<T>>>,
    len: CachePadded<AtomicUsize>,
    alloc: Arc<NodeAlloc<QNode<T>>>,
}

// SAFETY: the queue owns its nodes and values; all access to the head and tail pointers goes
// through their mutexes, and the shared successor link is atomic.
unsafe impl<T: Send> Send for TwoLockQueue<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for TwoLockQueue<T> {}

/// A worker's cache for the queue's nodes.
pub type QCache<T> = NodeCache<QNode<T>>;

impl<T: Send> TwoLockQueue<T> {
    /// An empty queue whose nodes come from a memory manager of kind `mem`.
    pub fn new(mem: MemKind) -> Self {
        let alloc = NodeAlloc::<QNode<T>>::new(mem);
        let mut c = NodeCache::new(&alloc);
        let dummy = c.alloc();
        // SAFETY: fresh memory; the dummy's value stays uninitialized.
        unsafe {
            dummy.as_ptr().write(QNode {
                next: AtomicPtr::new(ptr::null_mut()),
                value: MaybeUninit::uninit(),
            })
        };
        TwoLockQueue {
            head: CachePadded::new(Mutex::new(dummy.as_ptr())),
            tail: CachePadded::new(Mutex::new(dummy.as_ptr())),
            len: CachePadded::new(AtomicUsize::new(0)),
            alloc,
        }
    }

    /// A cache for one worker.
    pub fn cache(&self) -> QCache<T> {
        NodeCache::new(&self.alloc)
    }

    /// Number of elements (exact when no operation is in flight).
    #[inline]
    pub fn len_hint(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Appends at the tail; returns whether the queue was empty before.
    pub fn enqueue(&self, task: T, cache: &mut QCache<T>) -> bool {
        cache.check_owner(&self.alloc);
        let n = cache.alloc();
        // SAFETY: fresh memory for one node.
        unsafe {
            n.as_ptr().write(QNode {
                next: AtomicPtr::new(ptr::null_mut()),
                value: MaybeUninit::new(task),
            })
        };
        {
            let mut tail = lock(&self.tail);
            // SAFETY: the tail node is live: only a dequeuer frees nodes, and never the tail
            // (it frees the old dummy only after seeing a successor).
            unsafe { (**tail).next.store(n.as_ptr(), Ordering::Release) };
            *tail = n.as_ptr();
        }
        self.len.fetch_add(1, Ordering::SeqCst) == 0
    }

    /// Removes from the head.
    pub fn dequeue(&self, cache: &mut QCache<T>) -> Option<T> {
        cache.check_owner(&self.alloc);
        let (old, value) = {
            let mut head = lock(&self.head);
            let h = *head;
            // SAFETY: `h` is the live dummy node; only the head-lock holder frees it.
            let next = unsafe { (*h).next.load(Ordering::Acquire) };
            if next.is_null() {
                return None;
            }
            // SAFETY: `next` was published by an enqueuer with release; its value is
            // initialized and read once, after which `next` becomes the dummy.
            let value = unsafe { (*next).value.assume_init_read() };
            *head = next;
            (h, value)
        };
        self.len.fetch_sub(1, Ordering::SeqCst);
        // SAFETY: the old dummy is unreachable now and its value was moved out earlier (or
        // never initialized); no enqueuer touches it because it has a successor.
        unsafe { cache.free(NonNull::new_unchecked(old)) };
        Some(value)
    }
}

impl<T> Drop for TwoLockQueue<T> {
    fn drop(&mut self) {
        let mut p = *self.head.get_mut().unwrap_or_else(|e| e.into_inner());
        let mut first = true;
        while let Some(n) = NonNull::new(p) {
            // SAFETY: we own every node; the first is the dummy (value uninitialized), every
            // later one holds an initialized value.
            unsafe {
                p = (*n.as_ptr()).next.load(Ordering::Relaxed);
                if !first {
                    (*n.as_ptr()).value.assume_init_drop();
                }
                self.alloc.free_shared(n);
            }
            first = false;
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn fifo_order_and_concurrent_exactly_once() {
        for mem in MemKind::ALL {
            let q = TwoLockQueue::<u64>::new(mem);
            let mut c = q.cache();
            for i in 0..100 {
                q.enqueue(i, &mut c);
            }
            for i in 0..100 {
                assert_eq!(q.dequeue(&mut c), Some(i));
            }
            assert_eq!(q.dequeue(&mut c), None);
            // Miri runs the threads one step at a time, hundreds of times slower: fewer items.
            const PER: u64 = if cfg!(miri) { 200 } else { 20_000 };
            const MISSES: u32 = if cfg!(miri) { 1_000 } else { 1_000_000 };
            let seen = std::sync::Mutex::new(Vec::new());
            std::thread::scope(|s| {
                for p in 0..2u64 {
                    let q = &q;
                    s.spawn(move || {
                        let mut c = q.cache();
                        for i in 0..PER {
                            q.enqueue(p * PER + i, &mut c);
                        }
                    });
                }
                for _ in 0..2 {
                    let (q, seen) = (&q, &seen);
                    s.spawn(move || {
                        let mut c = q.cache();
                        let mut mine = Vec::new();
                        let mut misses = 0;
                        while misses < MISSES && mine.len() < PER as usize * 2 {
                            match q.dequeue(&mut c) {
                                Some(v) => mine.push(v),
                                None => misses += 1,
                            }
                        }
                        seen.lock().unwrap().extend(mine);
                    });
                }
            });
            let mut all = seen.into_inner().unwrap();
            while let Some(v) = q.dequeue(&mut c) {
                all.push(v);
            }
            all.sort();
            assert_eq!(all, (0..2 * PER).collect::<Vec<_>>(), "{mem}");
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::thread;

    /// An enqueuer racing a dequeuer on a queue that holds 0 or 1 elements: the successor link
    /// is the only shared word. Every element is taken exactly once, in FIFO order, and the
    /// old dummy is freed only after the enqueuer is done with it.
    #[test]
    fn loom_enqueue_races_dequeue() {
        loom::model(|| {
            let q = Arc::new(TwoLockQueue::<u32>::new(MemKind::PerWorker));
            let q2 = Arc::clone(&q);
            let h = thread::spawn(move || {
                let mut c = q2.cache();
                q2.enqueue(1, &mut c);
                q2.enqueue(2, &mut c);
            });
            let mut c = q.cache();
            let mut got = Vec::new();
            for _ in 0..2 {
                if let Some(v) = q.dequeue(&mut c) {
                    got.push(v);
                }
            }
            h.join().unwrap();
            while let Some(v) = q.dequeue(&mut c) {
                got.push(v);
            }
            assert_eq!(got, vec![1, 2]);
        });
    }
}
