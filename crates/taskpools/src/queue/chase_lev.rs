//! The Chase–Lev work-stealing deque (Chase & Lev, SPAA 2005; seed 002 §3.2.1 "DCWQ"), with
//! the memory orderings of Lê, Pop, Cohen and Zappa Nardelli, "Correct and Efficient
//! Work-Stealing for Weak Memory Models" (PPoPP 2013), and the growable circular array of the
//! original paper (the seed's version has a fixed size).
//!
//! One owner ([`Worker`]) pushes and pops at the bottom; any number of thieves ([`Stealer`])
//! take from the top. Indices grow without bound (`isize`, wrapping is unreachable in
//! practice); slot `i` lives at `i mod capacity`.
//!
//! # Invariants and why nothing is taken twice
//!
//! * Only the owner writes `bottom` and the buffer pointer; thieves only CAS `top` forward.
//! * A pop that may take the last element (`t == b` after decrementing bottom) races thieves
//!   through a CAS on `top`, as a steal does, so exactly one of them wins. Before reading
//!   `top`, the owner's store of the decremented bottom must be globally ordered against a
//!   thief's read of `bottom` after its read of `top`: the two `SeqCst` fences (owner: between
//!   its bottom store and top load; thief: between its top load and bottom load) give that
//!   Dekker-style ordering. Without them both can take the last element (a loom test checks
//!   that the model finds this with the owner's fence weakened).
//! * A push publishes the slot write with a release fence before the bottom store; a thief's
//!   acquire load of bottom makes the slot visible.
//!
//! # Growth and reclamation
//!
//! When the owner finds the buffer full it copies the live range `[top, bottom)` bitwise into
//! a buffer twice as large and publishes it with a release store. A thief that loaded the old
//! pointer still reads valid bits: the owner never writes an old buffer again, and an element
//! is owned by whoever wins the CAS on `top` for its index, whichever copy was read.
//!
//! Old buffers are freed by the owner once no thief can still read them. A thief registers in
//! the `readers` counter (an `Acquire` RMW) before it loads the buffer pointer and leaves it
//! (a `Release` RMW) after its last read through that pointer. After publishing a new buffer
//! the owner does an `AcqRel` RMW on `readers` (`fetch_add(0)`); if it reads 0, it frees every
//! buffer retired so far. Why that is safe: the RMWs on `readers` are totally ordered. A thief
//! whose registration comes later in that order reads from the owner's release RMW (or a later
//! RMW of its release sequence), so the owner's store of the new pointer happens before the
//! thief's load, which therefore returns the new (or a newer) buffer, never a retired one. A
//! thief whose registration comes earlier has, since the count read is 0, also left before the
//! owner's RMW, and its releasing exit happens before the owner frees anything. Only
//! acquire/release is involved (no `SeqCst` store-load pattern), which loom models exactly.
//!
//! If a thief is inside `steal` at every check (the owner checks at each growth and when a pop
//! finds the deque empty), retired buffers wait for a later check or for the drop. Because
//! capacities double, the retired buffers together are always smaller than the current one:
//! the memory in use stays below twice the current buffer. The deque never shrinks.
//!
//! # The racy slot read
//!
//! A thief reads slot `t` before its CAS. If the CAS then fails, the owner may have been
//! overwriting that slot at the same time (after wrap-around): the thief reads into a
//! `MaybeUninit<T>` with a volatile read and discards it without ever treating it as a `T`.
//! This is the same benign race that every Chase–Lev implementation in Rust has. The slots are
//! `crate::sync::UnsafeCell`s, so the loom models check every other slot access against the
//! happens-before order; one model reuses a stolen slot after wrap-around, with the CAS won.
//!
//! # Pushes that do not read `top`
//!
//! [`Worker::push_quiet`] checks the capacity against `top_seen`, the owner's last `Acquire`
//! reading of `top` in a push. `top` only grows (every write of it is a CAS from `t` to
//! `t + 1`), so `bottom - top_seen` bounds the length from above and a slot that this check
//! lets the owner write lies outside `[top, bottom)`. A slot reused after wrap-around held
//! the element of an index below `top_seen`: the thief (or owner pop) that took it did its
//! CAS before that reading, which is in the release sequence of that CAS (all writes of
//! `top` are read-modify-writes), so the successful thief's read of the slot happens before
//! the owner's write. (A thief whose CAS fails may still be reading the slot: the benign
//! racy read above.) A push then touches no line a thief writes, unless the buffer
//! looks full.

use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::{size_of, MaybeUninit};
use std::ptr;

use crossbeam_utils::CachePadded;

use crate::sync::{
    fence, lock, Arc, AtomicIsize, AtomicPtr, AtomicUsize, Mutex, Ordering, UnsafeCell,
};

/// The result of a steal.
#[derive(Debug, PartialEq, Eq)]
pub enum Steal<T> {
    /// The deque was empty.
    Empty,
    /// Lost a race with another thief or the owner; the deque may still hold elements.
    Retry,
    /// Took this.
    Success(T),
}

impl<T> Steal<T> {
    /// The stolen value, if any.
    pub fn success(self) -> Option<T> {
        match self {
            Steal::Success(t) => Some(t),
            _ => None,
        }
    }
}

/// Smallest capacity (a power of two).
pub const MIN_CAPACITY: usize = 16;

type Slot<T> = UnsafeCell<MaybeUninit<T>>;

/// The largest capacity a deque of `T` can have: the largest power of two whose slots fit in
/// `isize::MAX` bytes (and whose length fits in an `isize` index).
pub fn max_capacity<T>() -> usize {
    let max = isize::MAX as usize / size_of::<Slot<T>>().max(1);
    if max == 0 {
        0
    } else {
        1 << (usize::BITS - 1 - max.leading_zeros())
    }
}

/// `requested` rounded up to a power of two (at least 2), or a panic that names the limit.
fn initial_capacity<T>(requested: usize) -> usize {
    let max = max_capacity::<T>();
    match requested.max(2).checked_next_power_of_two() {
        Some(cap) if cap <= max => cap,
        _ => panic!(
            "chase_lev::deque: capacity {requested} exceeds the limit of {max} elements \
             (isize::MAX bytes / {} bytes per slot, rounded down to a power of two)",
            size_of::<Slot<T>>()
        ),
    }
}

/// The capacity after growing from `cap`, or a panic that names the limit.
fn grown_capacity<T>(cap: usize) -> usize {
    let max = max_capacity::<T>();
    match cap.checked_mul(2) {
        Some(c) if c <= max => c,
        _ => panic!(
            "chase_lev: cannot grow beyond {cap} elements: the limit is {max} elements \
             (isize::MAX bytes / {} bytes per slot)",
            size_of::<Slot<T>>()
        ),
    }
}

struct Buffer<T> {
    slots: Box<[Slot<T>]>,
    mask: usize,
}

impl<T> Buffer<T> {
    /// A buffer of `cap` slots; `cap` is a power of two within [`max_capacity`].
    fn alloc(cap: usize) -> *mut Buffer<T> {
        debug_assert!(cap.is_power_of_two() && cap <= max_capacity::<T>());
        let mut slots: Vec<Slot<T>> = Vec::new();
        if slots.try_reserve_exact(cap).is_err() {
            panic!(
                "chase_lev: cannot allocate a buffer of {cap} slots ({} bytes)",
                cap * size_of::<Slot<T>>()
            );
        }
        slots.extend((0..cap).map(|_| UnsafeCell::new(MaybeUninit::uninit())));
        Box::into_raw(Box::new(Buffer {
            slots: slots.into_boxed_slice(),
            mask: cap - 1,
        }))
    }

    /// # Safety
    /// `b` must come from `alloc` and not be used afterwards.
    unsafe fn free(b: *mut Buffer<T>) {
        // SAFETY: per the contract; the slots hold no owned element (`MaybeUninit`).
        drop(unsafe { Box::from_raw(b) });
    }

    #[inline]
    fn cap(&self) -> usize {
        self.mask + 1
    }

    #[inline]
    fn at(&self, i: isize) -> &Slot<T> {
        // SAFETY: the index is reduced modulo the (power-of-two) length.
        unsafe { self.slots.get_unchecked(i as usize & self.mask) }
    }

    /// # Safety
    /// Only the owner writes, and only slots outside `[top, bottom)` as seen by thieves.
    #[inline]
    unsafe fn write(&self, i: isize, v: MaybeUninit<T>) {
        // SAFETY: per the contract the slot is not being read as a live element.
        self.at(i).with_mut(|p| unsafe { p.write(v) })
    }

    /// A bitwise copy of slot `i`, not yet owned.
    #[inline]
    fn read(&self, i: isize) -> MaybeUninit<T> {
        // SAFETY: the slot lies inside the allocation; reading possibly-uninitialized or
        // concurrently written bytes into a `MaybeUninit` creates no `T` (module docs).
        self.at(i).with(|p| unsafe { ptr::read_volatile(p) })
    }
}

/// Planted bugs for the loom tests of the tests: each must make some model fail.
#[cfg(loom)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mutation {
    None,
    /// The owner's SeqCst fence in `pop` weakened to AcqRel.
    WeakOwnerFence,
    /// The release fence before the bottom store in `push` removed.
    NoReleaseFence,
    /// The thief's load of `bottom` made Relaxed.
    RelaxedBottomLoad,
    /// The thief's load of the buffer pointer made Relaxed.
    RelaxedBufferLoad,
    /// The owner frees a retired buffer at once, without checking for readers.
    EagerFree,
    /// `push_quiet`'s reading of `top` made Relaxed.
    RelaxedTopSeen,
}

struct Inner<T> {
    top: CachePadded<AtomicIsize>,
    bottom: CachePadded<AtomicIsize>,
    buffer: CachePadded<AtomicPtr<Buffer<T>>>,
    /// Thieves between their load of `buffer` and their last read through it.
    readers: CachePadded<AtomicUsize>,
    /// Buffers replaced by growth, not yet freed (only the owner and the drop touch it).
    retired: Mutex<Vec<*mut Buffer<T>>>,
    /// Under loom, "freed" buffers are poisoned (every slot written, so that a late read is a
    /// detected race) and kept here, so that the model never touches freed memory itself.
    #[cfg(loom)]
    graveyard: Mutex<Vec<*mut Buffer<T>>>,
    #[cfg(loom)]
    mutation: Mutation,
}

impl<T> Inner<T> {
    #[cfg(loom)]
    #[inline(always)]
    fn mutated(&self, m: Mutation) -> bool {
        self.mutation == m
    }

    /// Frees a retired buffer (under loom: poisons it and keeps it until the drop).
    ///
    /// # Safety
    /// `b` is a retired buffer that no thief can still read.
    unsafe fn free_retired(&self, b: *mut Buffer<T>) {
        #[cfg(loom)]
        {
            // SAFETY: per the contract `b` is live (the graveyard keeps it allocated).
            for s in unsafe { (*b).slots.iter() } {
                s.with_mut(|_| ());
            }
            lock(&self.graveyard).push(b);
        }
        #[cfg(not(loom))]
        // SAFETY: per the contract.
        unsafe {
            Buffer::free(b)
        };
    }
}

impl<T> Drop for Inner<T> {
    fn drop(&mut self) {
        // We are the last handle: no concurrent access.
        let t = self.top.load(Ordering::Relaxed);
        let b = self.bottom.load(Ordering::Relaxed);
        let buf = self.buffer.load(Ordering::Relaxed);
        // SAFETY: `buf` is the live buffer; slots in [t, b) hold owned elements.
        unsafe {
            for i in t..b {
                (*buf).read(i).assume_init_drop();
            }
            Buffer::free(buf);
        }
        let retired = self.retired.get_mut().unwrap_or_else(|e| e.into_inner());
        for old in retired.drain(..) {
            // SAFETY: retired buffers hold only bit copies of elements owned elsewhere, and
            // no thief is left.
            unsafe { Buffer::free(old) };
        }
        #[cfg(loom)]
        for old in self
            .graveyard
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            // SAFETY: as above.
            unsafe { Buffer::free(old) };
        }
    }
}

/// The owner's end of a Chase–Lev deque (push and pop at the bottom). Not `Sync`.
pub struct Worker<T> {
    inner: Arc<Inner<T>>,
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

/// A thief's handle (steal at the top). Cheap to clone; `Send + Sync`.
pub struct Stealer<T> {
    inner: Arc<Inner<T>>,
}

// SAFETY: the owner handle moves elements of type `T` between threads; it is not `Sync`
// (owner operations are not thread-safe with each other).
unsafe impl<T: Send> Send for Worker<T> {}
// SAFETY: thieves only CAS `top` and copy out elements they then own.
unsafe impl<T: Send> Send for Stealer<T> {}
// SAFETY: as above: every thief operation is safe to run concurrently.
unsafe impl<T: Send> Sync for Stealer<T> {}

impl<T> Clone for Stealer<T> {
    fn clone(&self) -> Self {
        Stealer {
            inner: Arc::clone(&self.inner),
        }
    }
}

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
    /// (the seed's fixed-size `pushBottom`).
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

    /// Frees the retired buffers if no thief can be reading them (module docs). Called only
    /// after the store of the current buffer pointer.
    fn reclaim(&self) {
        #[cfg(loom)]
        let eager = self.inner.mutated(Mutation::EagerFree);
        #[cfg(not(loom))]
        let eager = false;
        // AcqRel: release, so that a thief registering after it sees the current buffer;
        // acquire, so that every thief's reads before its releasing exit happen before the free.
        if eager || self.inner.readers.fetch_add(0, Ordering::AcqRel) == 0 {
            let mut retired = lock(&self.inner.retired);
            for old in retired.drain(..) {
                // SAFETY: retired, and no thief holds it (module docs: "Growth and
                // reclamation").
                unsafe { self.inner.free_retired(old) };
            }
            self.has_retired.set(false);
        }
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

impl<T> Stealer<T> {
    /// Whether the deque looks empty (a hint: no synchronization).
    pub fn is_empty(&self) -> bool {
        let t = self.inner.top.load(Ordering::Relaxed);
        let b = self.inner.bottom.load(Ordering::Relaxed);
        b - t <= 0
    }

    /// Number of elements (a hint).
    pub fn len(&self) -> usize {
        let t = self.inner.top.load(Ordering::Relaxed);
        let b = self.inner.bottom.load(Ordering::Relaxed);
        (b - t).max(0) as usize
    }

    /// The thief's load of `bottom` (Acquire: pairs with the owner's release fence).
    #[inline(always)]
    fn load_bottom(&self) -> isize {
        #[cfg(loom)]
        if self.inner.mutated(Mutation::RelaxedBottomLoad) {
            return self.inner.bottom.load(Ordering::Relaxed);
        }
        self.inner.bottom.load(Ordering::Acquire)
    }

    /// Registers as a reader and loads the buffer pointer; the caller must call
    /// `leave` after its last read through it.
    #[inline(always)]
    fn enter(&self) -> *mut Buffer<T> {
        // Acquire: pairs with the owner's AcqRel check in `reclaim` (module docs).
        self.inner.readers.fetch_add(1, Ordering::Acquire);
        #[cfg(loom)]
        if self.inner.mutated(Mutation::RelaxedBufferLoad) {
            return self.inner.buffer.load(Ordering::Relaxed);
        }
        // Acquire: pairs with the owner's release store, which follows its copy into it.
        self.inner.buffer.load(Ordering::Acquire)
    }

    #[inline(always)]
    fn leave(&self) {
        // Release: our reads of the buffer happen before an owner that reads 0 frees it.
        self.inner.readers.fetch_sub(1, Ordering::Release);
    }

    /// Takes the oldest element.
    #[inline]
    pub fn steal(&self) -> Steal<T> {
        let t = self.inner.top.load(Ordering::Acquire);
        fence(Ordering::SeqCst);
        let b = self.load_bottom();
        if b - t <= 0 {
            return Steal::Empty;
        }
        let buf = self.enter();
        // SAFETY: we are registered as a reader, so the owner does not free `buf`.
        let v = unsafe { (*buf).read(t) };
        self.leave();
        if self
            .inner
            .top
            .compare_exchange(t, t + 1, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            return Steal::Retry;
        }
        // SAFETY: winning the CAS for index t makes the element ours; its bits were written
        // before the bottom store we synchronized with.
        Steal::Success(unsafe { v.assume_init() })
    }

    /// Takes about half of the elements (at most `max`), oldest first, and pushes them into
    /// `dest` (which must be another deque); returns how many were taken.
    ///
    /// Each element is claimed with its own CAS on `top`, re-reading `bottom` before every
    /// further one: a single CAS of `top` over several elements could take an element that
    /// the owner pops at the same time without a CAS.
    pub fn steal_half_into(&self, dest: &Worker<T>, max: usize) -> Steal<usize> {
        assert!(
            !Arc::ptr_eq(&self.inner, &dest.inner),
            "cannot steal into the same deque"
        );
        let mut t = self.inner.top.load(Ordering::Acquire);
        fence(Ordering::SeqCst);
        let b = self.load_bottom();
        let n = b - t;
        if n <= 0 {
            return Steal::Empty;
        }
        let want = (((n + 1) / 2) as usize).clamp(1, max.max(1));
        let mut taken = 0;
        while taken < want {
            if taken > 0 {
                fence(Ordering::SeqCst);
                let b = self.load_bottom();
                if b - t <= 0 {
                    break;
                }
            }
            let buf = self.enter();
            // SAFETY: as in `steal`.
            let v = unsafe { (*buf).read(t) };
            self.leave();
            if self
                .inner
                .top
                .compare_exchange(t, t + 1, Ordering::SeqCst, Ordering::Relaxed)
                .is_err()
            {
                break;
            }
            // SAFETY: as in `steal`.
            dest.push(unsafe { v.assume_init() });
            taken += 1;
            t += 1;
        }
        if taken == 0 {
            Steal::Retry
        } else {
            Steal::Success(taken)
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "exceeds the limit")]
    fn capacity_usize_max_is_rejected() {
        let _ = deque::<u64>(usize::MAX);
    }

    #[test]
    #[should_panic(expected = "exceeds the limit")]
    fn capacity_two_to_the_63_is_rejected() {
        let _ = deque::<u64>(1 << 63);
    }

    #[test]
    #[should_panic(expected = "exceeds the limit")]
    fn capacity_of_zero_sized_elements_is_limited_too() {
        let _ = deque::<()>(1 << 63);
    }

    #[test]
    #[should_panic(expected = "cannot grow beyond")]
    fn growth_beyond_the_limit_is_rejected() {
        let _ = grown_capacity::<u64>(max_capacity::<u64>());
    }

    #[test]
    fn limits_are_powers_of_two_that_fit() {
        assert_eq!(max_capacity::<u64>(), 1 << 59);
        assert_eq!(max_capacity::<()>(), 1 << 62);
        assert_eq!(max_capacity::<[u8; 3]>(), 1 << 61);
        assert_eq!(grown_capacity::<u64>(1 << 58), 1 << 59);
        assert_eq!(initial_capacity::<u64>(1 << 59), 1 << 59);
    }

    #[test]
    fn retired_buffers_are_freed_when_no_thief_reads() {
        let (w, s) = deque::<u32>(2);
        for i in 0..100 {
            w.push(i);
        }
        assert_eq!(w.capacity(), 128);
        assert_eq!(w.retired_buffers(), 0, "no thief was inside a steal");
        assert_eq!(s.steal(), Steal::Success(0));
        // A thief stuck inside `steal` (simulated) holds back the reclamation ...
        let buf = s.enter();
        for i in 100..200 {
            w.push(i);
        }
        assert_eq!(w.retired_buffers(), 1);
        // SAFETY: we are registered; `buf` is the retired 128-slot buffer, still allocated.
        assert_eq!(unsafe { (*buf).cap() }, 128);
        s.leave();
        // ... until the owner's next check (an empty pop here).
        while w.pop().is_some() {}
        assert_eq!(w.retired_buffers(), 0);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    //! Every model runs on the real code; the `*_finds_*` twins run it with one planted bug
    //! ([`Mutation`]) and must fail, either on the values or because loom sees a slot read or
    //! write that the atomics do not order ("Causality violation").
    use super::*;
    use loom::thread;

    fn bounded(preemptions: usize) -> loom::model::Builder {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(preemptions);
        b
    }

    /// Owner pop and one thief race for the last element: exactly one gets it (both sides
    /// CAS `top` here, so this case holds even without the fences).
    #[test]
    fn loom_pop_races_one_thief_on_the_last_element() {
        bounded(3).check(|| {
            let (w, s) = deque::<u32>(4);
            w.push(7);
            let h = thread::spawn(move || s.steal().success());
            let mine = w.pop();
            let theirs = h.join().unwrap();
            assert!(mine.is_some() != theirs.is_some(), "{mine:?} / {theirs:?}");
        });
    }

    /// Two elements, two thieves, one owner pop: every element is taken exactly once. This is
    /// where the owner's SeqCst fence matters: without it the owner can read a stale `top`,
    /// believe two elements remain, and take the one a thief is taking, without a CAS.
    fn pop_races_two_thieves(m: Mutation) {
        bounded(3).check(move || {
            let (w, s) = deque_with_mutation::<u32>(4, m);
            w.push(1);
            w.push(2);
            let s2 = s.clone();
            let h1 = thread::spawn(move || s.steal().success());
            let h2 = thread::spawn(move || s2.steal().success());
            let mut got: Vec<u32> = w.pop().into_iter().collect();
            got.extend(h1.join().unwrap());
            got.extend(h2.join().unwrap());
            got.extend(std::iter::from_fn(|| w.pop()));
            got.sort_unstable();
            assert_eq!(got, vec![1, 2], "every element must be taken exactly once");
        });
    }

    #[test]
    fn loom_pop_races_two_thieves() {
        pop_races_two_thieves(Mutation::None);
    }

    /// Twin: with the owner's SeqCst fence weakened to AcqRel, the model must find the double
    /// take.
    #[test]
    #[should_panic(expected = "exactly once")]
    fn loom_finds_the_double_take_with_a_weak_owner_fence() {
        pop_races_two_thieves(Mutation::WeakOwnerFence);
    }

    /// The owner pushes while a thief already runs: a thief that sees the new bottom must see
    /// the slot written before it (release fence / acquire load of bottom).
    fn push_races_a_steal(m: Mutation) {
        bounded(3).check(move || {
            let (w, s) = deque_with_mutation::<u32>(2, m);
            let h = thread::spawn(move || s.steal().success());
            w.push(1);
            let mut got: Vec<u32> = h.join().unwrap().into_iter().collect();
            got.extend(std::iter::from_fn(|| w.pop()));
            assert_eq!(got, vec![1]);
        });
    }

    #[test]
    fn loom_push_races_a_steal() {
        push_races_a_steal(Mutation::None);
    }

    /// Twin: without the owner's release fence the thief reads the slot unordered.
    #[test]
    #[should_panic(expected = "Causality violation")]
    fn loom_finds_the_unpublished_slot_without_the_release_fence() {
        push_races_a_steal(Mutation::NoReleaseFence);
    }

    /// Twin: with a Relaxed load of bottom the thief reads the slot unordered.
    #[test]
    #[should_panic(expected = "Causality violation")]
    fn loom_finds_the_unpublished_slot_with_a_relaxed_bottom_load() {
        push_races_a_steal(Mutation::RelaxedBottomLoad);
    }

    /// `push_quiet` checks the capacity against an old reading of `top`: with two elements in
    /// a buffer of two, the third push reads `top` afresh, and if the thief took the first
    /// element, reuses its slot (else grows). The Acquire reading orders the thief's read of
    /// the slot before the owner's write to it.
    fn quiet_push_reuses_a_stolen_slot(m: Mutation) {
        bounded(3).check(move || {
            let (w, s) = deque_with_mutation::<u32>(2, m);
            w.push_quiet(1);
            w.push_quiet(2);
            // Relaxed on both sides: the flag only lets the owner wait for the steal; it
            // orders nothing, so that the slot's reuse is ordered by `top` alone.
            let stolen = Arc::new(AtomicUsize::new(0));
            let flag = Arc::clone(&stolen);
            let h = thread::spawn(move || {
                let got = s.steal().success();
                flag.store(1, Ordering::Relaxed);
                got
            });
            while stolen.load(Ordering::Relaxed) == 0 {
                thread::yield_now();
            }
            w.push_quiet(3);
            let mut got: Vec<u32> = h.join().unwrap().into_iter().collect();
            got.extend(std::iter::from_fn(|| w.pop()));
            got.sort_unstable();
            assert_eq!(got, vec![1, 2, 3]);
        });
    }

    #[test]
    fn loom_quiet_push_reuses_a_stolen_slot() {
        quiet_push_reuses_a_stolen_slot(Mutation::None);
    }

    /// Twin: with a Relaxed reading of `top`, the owner's write to the reused slot is not
    /// ordered after the thief's read of it.
    #[test]
    #[should_panic(expected = "Causality violation")]
    fn loom_finds_the_unordered_slot_reuse_with_a_relaxed_top_reading() {
        quiet_push_reuses_a_stolen_slot(Mutation::RelaxedTopSeen);
    }

    /// The owner grows the buffer (capacity 2 → 4) while a thief steals, and reclaims the old
    /// buffer when no thief is reading it (at the growth, or at the final empty pop).
    fn growth_during_a_steal(m: Mutation) {
        bounded(3).check(move || {
            let (w, s) = deque_with_mutation::<u32>(2, m);
            w.push(1);
            w.push(2);
            let h = thread::spawn(move || s.steal().success());
            w.push(3);
            let mut got: Vec<u32> = h.join().unwrap().into_iter().collect();
            got.extend(std::iter::from_fn(|| w.pop()));
            got.sort_unstable();
            assert_eq!(got, vec![1, 2, 3]);
            assert_eq!(w.retired_buffers(), 0, "the empty pop reclaims");
        });
    }

    #[test]
    fn loom_growth_and_reclamation_during_a_steal() {
        growth_during_a_steal(Mutation::None);
    }

    /// Twin: a thief that loads the new buffer pointer Relaxed reads the copied slot unordered.
    #[test]
    #[should_panic(expected = "Causality violation")]
    fn loom_finds_the_unordered_copy_with_a_relaxed_buffer_load() {
        growth_during_a_steal(Mutation::RelaxedBufferLoad);
    }

    /// Twin: an owner that frees the old buffer without checking for readers frees it under a
    /// thief that is reading it.
    #[test]
    #[should_panic(expected = "Causality violation")]
    fn loom_finds_the_early_free_without_the_reader_check() {
        growth_during_a_steal(Mutation::EagerFree);
    }

    /// A batch steal (about half) races owner pops.
    #[test]
    fn loom_steal_half_races_owner_pops() {
        bounded(2).check(|| {
            let (w, s) = deque::<u32>(4);
            for i in 1..=3 {
                w.push(i);
            }
            let h = thread::spawn(move || {
                let (mine, _) = deque::<u32>(4);
                let n = s.steal_half_into(&mine, 8);
                let got: Vec<u32> = std::iter::from_fn(|| mine.pop()).collect();
                if let Steal::Success(n) = n {
                    assert_eq!(n, got.len());
                }
                got
            });
            let mut got: Vec<u32> = w.pop().into_iter().collect();
            got.extend(w.pop());
            got.extend(h.join().unwrap());
            got.extend(std::iter::from_fn(|| w.pop()));
            got.sort_unstable();
            assert_eq!(got, vec![1, 2, 3]);
        });
    }
}
