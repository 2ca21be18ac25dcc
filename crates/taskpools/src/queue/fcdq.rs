//! FCDQ, the "Fast Concurrent Double-Ended Queue" of seed 002 §3.2.2 (PARTEE), faithful to
//! the thesis so that its Table 3.1 comparison can be repeated: a fixed-capacity circular
//! array whose slots carry sequence numbers (after Fastflow's / Vyukov's bounded queue), an
//! owner-only `head`, a CAS-advanced `tail`, and a `total_entries` counter that every dequeue
//! first *reserves* with add-unless-zero (Figure 3.13), so that a front and a back dequeue
//! racing for the last element cannot both take it.
//!
//! * `enqueue` (owner only, Figure 3.9) is **blocking**: if the slot at `head` is still held
//!   by a back-dequeuer that has advanced `tail` but not yet released the slot, it waits.
//! * `dequeue_front` (owner only, Figure 3.11) takes the newest element (LIFO).
//! * `dequeue_back` (any thread, Figure 3.12) takes the oldest (FIFO), with a CAS on `tail`.
//!
//! Slot protocol (seq = sequence number of slot `i mod N`, N the capacity): `seq == p` means
//! free for the enqueue at position `p`; `seq == p + 1` means it holds the element enqueued at
//! `p`. An enqueue at `p` sets `seq = p + 1`; a front dequeue of `p` sets it back to `p`; a
//! back dequeue of `p` sets it to `p + N`, freeing the slot for the next lap. (The thesis's
//! Figure 3.12 writes `tail + size + 1`; with its own enqueue test `head == seq` that would
//! leave the slot unusable on the next lap, so we use `p + N`, as Fastflow does.)
//!
//! The thesis's `total_entries` is centralized and touched by every operation; that is the
//! cost its Table 3.1 shows, and this implementation keeps it.

use crossbeam_utils::CachePadded;

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;

use crate::sync::{AtomicUsize, Ordering};

struct Slot<T> {
    seq: AtomicUsize,
    value: UnsafeCell<MaybeUninit<T>>,
}

/// The shared part of an FCDQ.
pub struct Fcdq<T> {
    slots: Box<[Slot<T>]>,
    mask: usize,
    /// Owner-only in the thesis; atomic here so that thieves' length hints are race-free.
    head: CachePadded<AtomicUsize>,
    tail: CachePadded<AtomicUsize>,
    total: CachePadded<AtomicUsize>,
}

// SAFETY: a slot's value is accessed only by the thread that the slot protocol (sequence
// numbers plus the reservation on `total`) makes its exclusive user at that moment.
unsafe impl<T: Send> Send for Fcdq<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Fcdq<T> {}

/// Spins while another thread finishes its part of the protocol.
#[inline]
fn wait() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

impl<T> Fcdq<T> {
    /// A deque with room for `capacity` elements (rounded up to a power of two).
    pub fn new(capacity: usize) -> Self {
        let n = capacity.max(2).next_power_of_two();
        Fcdq {
            slots: (0..n)
                .map(|i| Slot {
                    seq: AtomicUsize::new(i),
                    value: UnsafeCell::new(MaybeUninit::uninit()),
                })
                .collect(),
            mask: n - 1,
            head: CachePadded::new(AtomicUsize::new(0)),
            tail: CachePadded::new(AtomicUsize::new(0)),
            total: CachePadded::new(AtomicUsize::new(0)),
        }
    }

    /// Capacity.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Number of elements (the reservation counter).
    pub fn len(&self) -> usize {
        self.total.load(Ordering::Relaxed)
    }

    /// Whether no element is available.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the deque is full.
    pub fn is_full(&self) -> bool {
        self.len() >= self.slots.len()
    }

    /// atomic_add_unless(total, -1, 0) (Figure 3.13): reserves one element.
    #[inline]
    fn reserve(&self) -> bool {
        let mut cur = self.total.load(Ordering::Relaxed);
        loop {
            if cur == 0 {
                return false;
            }
            match self.total.compare_exchange_weak(
                cur,
                cur - 1,
                Ordering::SeqCst,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// Enqueues at the head. Owner only. Returns the value back if the deque is full.
    ///
    /// # Safety
    /// Only one thread (the owner) may call `enqueue` and `dequeue_front`.
    #[inline]
    pub unsafe fn enqueue(&self, value: T) -> Result<(), T> {
        if self.is_full() {
            return Err(value);
        }
        let head = self.head.load(Ordering::Relaxed);
        let slot = &self.slots[head & self.mask];
        loop {
            let seq = slot.seq.load(Ordering::Acquire);
            if seq == head {
                break;
            }
            if seq > head {
                // Slot still holds an element of this lap: full after all.
                return Err(value);
            }
            // seq < head: a back-dequeuer of the previous lap has not released the slot yet.
            wait();
        }
        // SAFETY: `seq == head` makes this slot free for us; no other thread touches its value
        // until the seq store below publishes it.
        unsafe { (*slot.value.get()).write(value) };
        self.head.store(head + 1, Ordering::Relaxed);
        slot.seq.store(head + 1, Ordering::Release);
        self.total.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    /// Dequeues the newest element. Owner only.
    ///
    /// # Safety
    /// Only the owner may call it (see [`Fcdq::enqueue`]).
    #[inline]
    pub unsafe fn dequeue_front(&self) -> Option<T> {
        if !self.reserve() {
            return None;
        }
        let head = self.head.load(Ordering::Relaxed);
        let slot = &self.slots[(head - 1) & self.mask];
        // Our reservation guarantees the element at head-1 is ours: back-dequeuers reserved
        // fewer elements than exist, so they stop below it. It was published by our own
        // enqueue, so its seq is head.
        debug_assert_eq!(slot.seq.load(Ordering::Relaxed), head);
        // SAFETY: reserved and ours (above); read exactly once.
        let v = unsafe { (*slot.value.get()).assume_init_read() };
        self.head.store(head - 1, Ordering::Relaxed);
        slot.seq.store(head - 1, Ordering::Release);
        Some(v)
    }

    /// Dequeues the oldest element. Any thread.
    #[inline]
    pub fn dequeue_back(&self) -> Option<T> {
        if !self.reserve() {
            return None;
        }
        loop {
            let tail = self.tail.load(Ordering::Relaxed);
            let slot = &self.slots[tail & self.mask];
            let seq = slot.seq.load(Ordering::Acquire);
            if seq == tail + 1 {
                if self
                    .tail
                    .compare_exchange_weak(tail, tail + 1, Ordering::SeqCst, Ordering::Relaxed)
                    .is_ok()
                {
                    // SAFETY: we advanced `tail` past a published element: it is ours.
                    let v = unsafe { (*slot.value.get()).assume_init_read() };
                    slot.seq.store(tail + self.slots.len(), Ordering::Release);
                    return Some(v);
                }
            } else {
                // Another back-dequeuer is between its CAS and its seq store, or the element
                // is not published yet: our reservation says one exists, so retry.
                wait();
            }
        }
    }
}

impl<T> Drop for Fcdq<T> {
    fn drop(&mut self) {
        let tail = self.tail.load(Ordering::Relaxed);
        let head = self.head.load(Ordering::Relaxed);
        for p in tail..head {
            let slot = &mut self.slots[p & self.mask];
            // SAFETY: exclusive access; positions in [tail, head) hold elements.
            unsafe { slot.value.get_mut().assume_init_drop() };
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::sync::Arc;
    use loom::thread;

    /// "Both dequeues, one element" (seed §3.2.2.4): exactly one of them gets it.
    #[test]
    fn loom_both_dequeues_race_on_one_element() {
        loom::model(|| {
            let q = Arc::new(Fcdq::<u32>::new(2));
            // SAFETY: this thread is the only owner.
            unsafe { q.enqueue(7).unwrap() };
            let q2 = Arc::clone(&q);
            let h = thread::spawn(move || q2.dequeue_back());
            // SAFETY: as above.
            let mine = unsafe { q.dequeue_front() };
            let theirs = h.join().unwrap();
            assert!(mine.is_some() != theirs.is_some(), "{mine:?} / {theirs:?}");
            assert!(q.is_empty());
        });
    }

    /// The deque is full; a thief's back dequeue frees a slot while the owner enqueues into
    /// it. If the thief has advanced `tail` but not yet released the slot, the enqueue must
    /// wait (the blocking case) and then succeed; nothing is lost or duplicated.
    #[test]
    fn loom_enqueue_after_a_stalled_dequeue() {
        loom::model(|| {
            let q = Arc::new(Fcdq::<u32>::new(2));
            // SAFETY: this thread is the only owner.
            unsafe {
                q.enqueue(1).unwrap();
                q.enqueue(2).unwrap();
            }
            let q2 = Arc::clone(&q);
            let h = thread::spawn(move || q2.dequeue_back());
            let mut three = 3;
            loop {
                // SAFETY: as above.
                match unsafe { q.enqueue(three) } {
                    Ok(()) => break,
                    Err(v) => {
                        // Full until the thief's reservation; let it run.
                        three = v;
                        thread::yield_now();
                    }
                }
            }
            assert_eq!(h.join().unwrap(), Some(1));
            // SAFETY: as above.
            let rest: Vec<u32> = std::iter::from_fn(|| unsafe { q.dequeue_front() }).collect();
            assert_eq!(rest, vec![3, 2]);
        });
    }
}
