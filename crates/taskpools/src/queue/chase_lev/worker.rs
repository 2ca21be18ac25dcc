//! The owner's end of a Chase–Lev deque ([`Worker`]: push and pop at the bottom, growth and
//! the reclamation of retired buffers) and [`deque`], which makes a deque.

use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

use crossbeam_utils::CachePadded;

use super::buffer::{grown_capacity, initial_capacity, Buffer};
use super::hazard;
use super::inner::Inner;
#[cfg(loom)]
use super::inner::Mutation;
#[cfg(doc)]
use super::max_capacity;
use super::Stealer;
use crate::sync::{fence, lock, Arc, AtomicIsize, AtomicPtr, AtomicUsize, Mutex, Ordering};

/// The owner's end of a Chase–Lev deque (push and pop at the bottom). Not `Sync`.
pub struct Worker<T> {
    pub(super) inner: Arc<Inner<T>>,
    /// The owner's cached copy of the buffer pointer (only the owner changes it).
    buffer: Cell<*mut Buffer<T>>,
    /// Whether `inner.retired` is non-empty (spares the empty pop a lock).
    has_retired: Cell<bool>,
    /// A value of `top` that the owner read with Acquire in a push, no larger than `top` now
    /// (`top` only grows): [`push_quiet`](Self::push_quiet) checks the capacity against it
    /// and reads `top` itself only when the buffer looks full.
    top_seen: Cell<isize>,
    _not_sync: PhantomData<Cell<()>>,
}

// SAFETY: the owner handle moves elements of type `T` between threads; it is not `Sync`
// (owner operations are not thread-safe with each other).
unsafe impl<T: Send> Send for Worker<T> {}

/// A new empty deque with room for `capacity` elements (at least 2, rounded up to a power of
/// two) before it first grows.
///
/// # Panics
/// If the rounded capacity exceeds [`max_capacity`] (its slots would not fit in `isize::MAX`
/// bytes), or if the buffer cannot be allocated.
pub fn deque<T>(capacity: usize) -> (Worker<T>, Stealer<T>) {
    deque_inner(
        capacity,
        #[cfg(loom)]
        Mutation::None,
    )
}

/// A deque with a planted bug, for the loom tests that must find it.
#[cfg(all(loom, test))]
pub(crate) fn deque_with_mutation<T>(capacity: usize, m: Mutation) -> (Worker<T>, Stealer<T>) {
    deque_inner(capacity, m)
}

fn deque_inner<T>(capacity: usize, #[cfg(loom)] mutation: Mutation) -> (Worker<T>, Stealer<T>) {
    let cap = initial_capacity::<T>(capacity);
    let buf = Buffer::alloc(cap);
    let inner = Arc::new(Inner {
        top: CachePadded::new(AtomicIsize::new(0)),
        bottom: CachePadded::new(AtomicIsize::new(0)),
        buffer: CachePadded::new(AtomicPtr::new(buf)),
        readers: CachePadded::new(AtomicUsize::new(0)),
        retired: Mutex::new(Vec::new()),
        #[cfg(loom)]
        graveyard: Mutex::new(Vec::new()),
        #[cfg(loom)]
        mutation,
    });
    let stealer = Stealer {
        inner: Arc::clone(&inner),
    };
    (
        Worker {
            inner,
            buffer: Cell::new(buf),
            has_retired: Cell::new(false),
            top_seen: Cell::new(0),
            _not_sync: PhantomData,
        },
        stealer,
    )
}

impl<T> Worker<T> {
    /// A thief's handle on this deque.
    pub fn stealer(&self) -> Stealer<T> {
        Stealer {
            inner: Arc::clone(&self.inner),
        }
    }

    /// Number of elements (exact for the owner between its own operations, up to concurrent
    /// steals).
    pub fn len(&self) -> usize {
        let b = self.inner.bottom.load(Ordering::Relaxed);
        let t = self.inner.top.load(Ordering::Relaxed);
        (b - t).max(0) as usize
    }

    /// Whether the deque looks empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Current capacity.
    pub fn capacity(&self) -> usize {
        // SAFETY: the owner's cached buffer is live (only the owner retires buffers).
        unsafe { (*self.buffer.get()).cap() }
    }

    /// Buffers replaced by growth that are not freed yet (they are freed once no thief can
    /// still be reading them; a diagnostic).
    pub fn retired_buffers(&self) -> usize {
        lock(&self.inner.retired).len()
    }

    /// Pushes at the bottom; returns whether the deque was empty before (as far as the owner
    /// can tell: a concurrent steal may have emptied it just now).
    ///
    /// # Panics
    /// If the deque is full and cannot grow (see [`max_capacity`]).
    #[inline]
    pub fn push(&self, value: T) -> bool {
        let b = self.inner.bottom.load(Ordering::Relaxed);
        let t = self.inner.top.load(Ordering::Acquire);
        self.top_seen.set(t);
        let mut buf = self.buffer.get();
        // SAFETY: the owner's buffer is live.
        if b - t >= unsafe { (*buf).cap() } as isize {
            buf = self.grow(b, t);
        }
        // SAFETY: slot `b` is outside [top, bottom): no thief treats it as an element until
        // the bottom store below publishes it.
        unsafe { (*buf).write(b, MaybeUninit::new(value)) };
        self.publish(b + 1);
        b - t <= 0
    }

    /// [`push`](Self::push) without the report: the capacity is checked against an earlier
    /// reading of `top`, so that a push into a deque that thieves take from does not wait for
    /// the line they last wrote. `top` is read (and the reading kept) only when that check
    /// finds the buffer full.
    ///
    /// # Panics
    /// As [`push`](Self::push).
    #[inline]
    pub fn push_quiet(&self, value: T) {
        let b = self.inner.bottom.load(Ordering::Relaxed);
        let mut buf = self.buffer.get();
        // SAFETY: the owner's buffer is live.
        let cap = unsafe { (*buf).cap() } as isize;
        if b - self.top_seen.get() >= cap {
            #[cfg(loom)]
            let order = if self.inner.mutated(Mutation::RelaxedTopSeen) {
                Ordering::Relaxed
            } else {
                Ordering::Acquire
            };
            #[cfg(not(loom))]
            let order = Ordering::Acquire;
            let t = self.inner.top.load(order);
            self.top_seen.set(t);
            if b - t >= cap {
                buf = self.grow(b, t);
            }
        }
        // SAFETY: slot `b` is outside [top, bottom) (`top_seen` ≤ `top`, so `b - top` is
        // below the capacity too); the index that last used this slot is below `top_seen`,
        // and the Acquire reading of `top_seen` (in the release sequence of the CAS that took
        // that index) orders the successful taker's read of the slot before this write.
        unsafe { (*buf).write(b, MaybeUninit::new(value)) };
        self.publish(b + 1);
    }

    /// Pushes at the bottom without growing: gives the value back if the buffer is full
    /// (PARTEE's fixed-size `pushBottom`).
    #[inline]
    pub fn try_push(&self, value: T) -> Result<(), T> {
        let b = self.inner.bottom.load(Ordering::Relaxed);
        let t = self.inner.top.load(Ordering::Acquire);
        self.top_seen.set(t);
        let buf = self.buffer.get();
        // SAFETY: the owner's buffer is live.
        if b - t >= unsafe { (*buf).cap() } as isize {
            return Err(value);
        }
        // SAFETY: as in `push`.
        unsafe { (*buf).write(b, MaybeUninit::new(value)) };
        self.publish(b + 1);
        Ok(())
    }

    /// Release fence, then the bottom store that makes the written slot an element.
    #[inline(always)]
    fn publish(&self, new_bottom: isize) {
        #[cfg(loom)]
        let fence_on = !self.inner.mutated(Mutation::NoReleaseFence);
        #[cfg(not(loom))]
        let fence_on = true;
        if fence_on {
            fence(Ordering::Release);
        }
        self.inner.bottom.store(new_bottom, Ordering::Relaxed);
    }

    #[cold]
    fn grow(&self, b: isize, t: isize) -> *mut Buffer<T> {
        let old = self.buffer.get();
        // SAFETY: the owner's buffer is live; we copy the live range bitwise into a buffer
        // that no thief can see before the release store below.
        let new = unsafe {
            let new = Buffer::alloc(grown_capacity::<T>((*old).cap()));
            for i in t..b {
                (*new).write(i, (*old).read(i));
            }
            new
        };
        self.inner.buffer.store(new, Ordering::Release);
        self.buffer.set(new);
        lock(&self.inner.retired).push(old);
        self.has_retired.set(true);
        self.reclaim();
        new
    }

    /// Frees the retired buffers if no thief can be reading them (the `chase_lev` module
    /// docs, "Growth and reclamation"). Called only after the store of the current buffer
    /// pointer.
    fn reclaim(&self) {
        #[cfg(loom)]
        let eager = self.inner.mutated(Mutation::EagerFree);
        #[cfg(not(loom))]
        let eager = false;
        if !eager {
            #[cfg(loom)]
            let weak = self.inner.mutated(Mutation::WeakReclaimFence);
            #[cfg(not(loom))]
            let weak = false;
            // SeqCst: orders our store of the current buffer pointer before our reads of the
            // hazard records, against each thief's fence between its announcement and its
            // load of the pointer: either that thief loads the current pointer, or we read
            // its announcement (or a later release store of its record).
            fence(if weak {
                Ordering::AcqRel
            } else {
                Ordering::SeqCst
            });
            if hazard::announced(self.inner.id()) {
                return;
            }
            #[cfg(loom)]
            let skip_readers = self.inner.mutated(Mutation::CounterPathNoReaderCheck);
            #[cfg(not(loom))]
            let skip_readers = false;
            // AcqRel: release, so that a thief on the counter path registering after it sees
            // the current buffer; acquire, so that every such thief's reads before its
            // releasing exit happen before the free.
            if !skip_readers && self.inner.readers.fetch_add(0, Ordering::AcqRel) != 0 {
                return;
            }
        }
        let retired = std::mem::take(&mut *lock(&self.inner.retired));
        for old in retired {
            // SAFETY: retired, and no thief can read it (the `chase_lev` module docs, "Growth
            // and reclamation").
            unsafe { self.inner.free_retired(old) };
        }
        self.has_retired.set(false);
    }

    /// Pops at the bottom (LIFO).
    #[inline]
    pub fn pop(&self) -> Option<T> {
        let b = self.inner.bottom.load(Ordering::Relaxed) - 1;
        let buf = self.buffer.get();
        self.inner.bottom.store(b, Ordering::Relaxed);
        self.owner_fence();
        let t = self.inner.top.load(Ordering::Relaxed);
        if t > b {
            // Empty: restore.
            self.inner.bottom.store(b + 1, Ordering::Relaxed);
            if self.has_retired.get() {
                self.reclaim();
            }
            return None;
        }
        if t < b {
            // More than one element: no thief can reach slot b.
            // SAFETY: slot b holds an element that only the owner can take now.
            return Some(unsafe { (*buf).read(b).assume_init() });
        }
        // The last element: race the thieves for it.
        let won = self
            .inner
            .top
            .compare_exchange(t, t + 1, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok();
        self.inner.bottom.store(b + 1, Ordering::Relaxed);
        // SAFETY: winning the CAS on `top` for index t == b makes the element ours.
        won.then(|| unsafe { (*buf).read(b).assume_init() })
    }

    #[inline]
    fn owner_fence(&self) {
        #[cfg(loom)]
        if self.inner.mutated(Mutation::WeakOwnerFence) {
            fence(Ordering::AcqRel);
            return;
        }
        fence(Ordering::SeqCst);
    }
}
