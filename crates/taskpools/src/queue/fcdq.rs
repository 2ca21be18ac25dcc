//! FCDQ, the "Fast Concurrent Double-Ended Queue" of Papakonstantinou, PARTEE (2015), §3.2.2,
//! faithful to the thesis so that its Table 3.1 comparison can be repeated: a fixed-capacity
//! circular array whose slots carry sequence numbers (after Fastflow's / Vyukov's bounded
//! queue), an owner-only `head`, a CAS-advanced `tail`, and a `total_entries` counter that
//! every dequeue first *reserves* with add-unless-zero (Figure 3.13), so that a front and a
//! back dequeue racing for the last element cannot both take it.
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
//!
//! Orderings, and what each one carries: an element's value is published by the Release store
//! of its slot's seq and read after an Acquire load of it; a slot freed by a back dequeue is
//! handed back to the owner the same way (its seq store follows the read of the value). The
//! reservation counter's RMWs are `SeqCst` (at least AcqRel is needed): a slot is reused lap
//! after lap with the same seq value (`p + 1` after a front dequeue and a new enqueue at `p`),
//! so a thief whose seq load returns the older of two equal values must still be ordered after
//! the newer write of the value; its reservation, which counted that element, gives that
//! order. The value cells are `crate::sync::UnsafeCell`s, so the loom models check all this.

use crossbeam_utils::CachePadded;

use std::mem::{size_of, MaybeUninit};

use crate::sync::{AtomicUsize, Ordering, UnsafeCell};

struct Slot<T> {
    seq: AtomicUsize,
    value: UnsafeCell<MaybeUninit<T>>,
}

/// Planted bugs for the loom tests of the tests: each must make some model fail.
#[cfg(loom)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mutation {
    None,
    /// Every seq store and load Relaxed.
    RelaxedSeq,
    /// The reservation counter's RMWs Relaxed.
    RelaxedCounter,
}

/// The shared part of an FCDQ.
pub struct Fcdq<T> {
    slots: Box<[Slot<T>]>,
    mask: usize,
    /// Owner-only in the thesis; atomic here so that thieves' length hints are race-free.
    head: CachePadded<AtomicUsize>,
    tail: CachePadded<AtomicUsize>,
    total: CachePadded<AtomicUsize>,
    #[cfg(loom)]
    mutation: Mutation,
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

/// The largest power of two `n` whose `n` slots of `T` fit in `isize::MAX` bytes.
fn max_capacity<T>() -> usize {
    let max = isize::MAX as usize / size_of::<Slot<T>>().max(1);
    if max == 0 {
        0
    } else {
        1 << (usize::BITS - 1 - max.leading_zeros())
    }
}

impl<T> Fcdq<T> {
    /// A deque with room for `capacity` elements (rounded up to a power of two, at least 2).
    ///
    /// # Panics
    /// If the rounded capacity's slots would not fit in `isize::MAX` bytes (the message names
    /// the limit), or if they cannot be allocated.
    pub fn new(capacity: usize) -> Self {
        Self::new_inner(
            capacity,
            #[cfg(loom)]
            Mutation::None,
        )
    }

    /// A deque with a planted bug, for the loom tests that must find it.
    #[cfg(all(loom, test))]
    pub(crate) fn with_mutation(capacity: usize, m: Mutation) -> Self {
        Self::new_inner(capacity, m)
    }

    fn new_inner(capacity: usize, #[cfg(loom)] mutation: Mutation) -> Self {
        let max = max_capacity::<T>();
        let n = match capacity.max(2).checked_next_power_of_two() {
            Some(n) if n <= max => n,
            _ => panic!(
                "Fcdq::new: capacity {capacity} exceeds the limit of {max} elements \
                 (isize::MAX bytes / {} bytes per slot, rounded down to a power of two)",
                size_of::<Slot<T>>()
            ),
        };
        let mut slots: Vec<Slot<T>> = Vec::new();
        if slots.try_reserve_exact(n).is_err() {
            panic!(
                "Fcdq::new: cannot allocate {n} slots ({} bytes)",
                n * size_of::<Slot<T>>()
            );
        }
        slots.extend((0..n).map(|i| Slot {
            seq: AtomicUsize::new(i),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        }));
        Fcdq {
            slots: slots.into_boxed_slice(),
            mask: n - 1,
            head: CachePadded::new(AtomicUsize::new(0)),
            tail: CachePadded::new(AtomicUsize::new(0)),
            total: CachePadded::new(AtomicUsize::new(0)),
            #[cfg(loom)]
            mutation,
        }
    }

    /// Ordering of seq loads (Acquire).
    #[inline(always)]
    fn seq_load(&self) -> Ordering {
        #[cfg(loom)]
        if self.mutation == Mutation::RelaxedSeq {
            return Ordering::Relaxed;
        }
        Ordering::Acquire
    }

    /// Ordering of seq stores (Release).
    #[inline(always)]
    fn seq_store(&self) -> Ordering {
        #[cfg(loom)]
        if self.mutation == Mutation::RelaxedSeq {
            return Ordering::Relaxed;
        }
        Ordering::Release
    }

    /// Ordering of the counter's RMWs (SeqCst).
    #[inline(always)]
    fn counter(&self) -> Ordering {
        #[cfg(loom)]
        if self.mutation == Mutation::RelaxedCounter {
            return Ordering::Relaxed;
        }
        Ordering::SeqCst
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
            match self
                .total
                .compare_exchange_weak(cur, cur - 1, self.counter(), Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// Enqueues at the head. Owner only. Returns the value back if the deque is full.
    ///
    /// # Safety
    /// Only one thread (the owner) may call `enqueue` and `dequeue_front`, and never two of
    /// these calls at once (no call from inside another, e.g. from a destructor they run). A
    /// new owner thread may take over only after a happens-before edge from the old owner's
    /// last call (a join, a channel, a mutex, or moving an owner value that is `Send`).
    #[inline]
    pub unsafe fn enqueue(&self, value: T) -> Result<(), T> {
        if self.is_full() {
            return Err(value);
        }
        let head = self.head.load(Ordering::Relaxed);
        let slot = &self.slots[head & self.mask];
        loop {
            let seq = slot.seq.load(self.seq_load());
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
        slot.value.with_mut(|p| unsafe { (*p).write(value) });
        self.head.store(head + 1, Ordering::Relaxed);
        slot.seq.store(head + 1, self.seq_store());
        self.total.fetch_add(1, self.counter());
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
        let v = slot.value.with(|p| unsafe { (*p).assume_init_read() });
        self.head.store(head - 1, Ordering::Relaxed);
        slot.seq.store(head - 1, self.seq_store());
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
            let seq = slot.seq.load(self.seq_load());
            if seq == tail + 1 {
                if self
                    .tail
                    .compare_exchange_weak(tail, tail + 1, Ordering::SeqCst, Ordering::Relaxed)
                    .is_ok()
                {
                    // SAFETY: we advanced `tail` past a published element: it is ours.
                    let v = slot.value.with(|p| unsafe { (*p).assume_init_read() });
                    slot.seq.store(tail + self.slots.len(), self.seq_store());
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
            let slot = &self.slots[p & self.mask];
            // SAFETY: exclusive access; positions in [tail, head) hold elements.
            slot.value.with_mut(|p| unsafe { (*p).assume_init_drop() });
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "exceeds the limit")]
    fn capacity_usize_max_is_rejected() {
        let _ = Fcdq::<u64>::new(usize::MAX);
    }

    #[test]
    #[should_panic(expected = "exceeds the limit")]
    fn capacity_two_to_the_63_is_rejected() {
        let _ = Fcdq::<u64>::new(1 << 63);
    }

    #[test]
    fn the_limit_is_a_power_of_two_that_fits() {
        let slot = size_of::<Slot<u64>>();
        assert_eq!(max_capacity::<u64>() * slot, 1 << 62);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    //! The `*_finds_*` twins run a model with one planted bug ([`Mutation`]) and must fail.
    use super::*;
    use crate::sync::Arc;
    use loom::thread;

    fn bounded(preemptions: usize) -> loom::model::Builder {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(preemptions);
        b
    }

    /// "Both dequeues, one element" (PARTEE §3.2.2.4): exactly one of them gets it.
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
    /// wait (the blocking case) and then succeed; nothing is lost or duplicated, and the
    /// owner's write of the reused slot is ordered after the thief's read of it.
    fn enqueue_after_a_stalled_dequeue(m: Mutation) {
        bounded(3).check(move || {
            let q = Arc::new(Fcdq::<u32>::with_mutation(2, m));
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

    #[test]
    fn loom_enqueue_after_a_stalled_dequeue() {
        enqueue_after_a_stalled_dequeue(Mutation::None);
    }

    /// Twin: with Relaxed seq stores/loads the owner overwrites the slot the thief is reading.
    #[test]
    #[should_panic(expected = "Causality violation")]
    fn loom_finds_the_slot_reuse_race_with_relaxed_seqs() {
        enqueue_after_a_stalled_dequeue(Mutation::RelaxedSeq);
    }

    /// A slot reused on the same lap: the owner enqueues B at position 1, takes it back from
    /// the front and enqueues C there (seq 2 both times), while a thief dequeues twice from
    /// the back. Every element is taken once, and a thief that takes C reads C's write.
    fn slot_reuse_on_one_lap(m: Mutation) {
        bounded(3).check(move || {
            let q = Arc::new(Fcdq::<u32>::with_mutation(2, m));
            // SAFETY: this thread is the only owner.
            unsafe { q.enqueue(1).unwrap() };
            let q2 = Arc::clone(&q);
            let h = thread::spawn(move || {
                let mut got: Vec<u32> = q2.dequeue_back().into_iter().collect();
                got.extend(q2.dequeue_back());
                got
            });
            let mut got = Vec::new();
            // SAFETY: as above (all owner calls below are on this thread).
            unsafe {
                let mut b = 2;
                while let Err(v) = q.enqueue(b) {
                    b = v;
                    thread::yield_now();
                }
                got.extend(q.dequeue_front());
                let mut c = 3;
                while let Err(v) = q.enqueue(c) {
                    c = v;
                    thread::yield_now();
                }
            }
            got.extend(h.join().unwrap());
            // SAFETY: as above.
            got.extend(std::iter::from_fn(|| unsafe { q.dequeue_front() }));
            got.sort_unstable();
            assert_eq!(got, vec![1, 2, 3], "every element exactly once");
        });
    }

    #[test]
    fn loom_slot_reuse_on_one_lap() {
        slot_reuse_on_one_lap(Mutation::None);
    }

    /// Twin: with a Relaxed reservation counter the thief can pair the newer element with the
    /// older seq store and read the slot unordered.
    #[test]
    #[should_panic(expected = "Causality violation")]
    fn loom_finds_the_stale_lap_read_with_a_relaxed_counter() {
        slot_reuse_on_one_lap(Mutation::RelaxedCounter);
    }
}
