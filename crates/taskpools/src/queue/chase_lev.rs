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
//! is owned by whoever wins the CAS on `top` for its index, whichever copy was read. Old
//! buffers are **kept until the deque is dropped** rather than reclaimed with an epoch scheme:
//! a thief may hold a pointer to any of them for an unbounded time, an epoch pin on every
//! steal would cost more than it saves, and since capacities double, all retired buffers
//! together are smaller than the current one (the memory overhead is below 2×).
//!
//! # The racy slot read
//!
//! A thief reads slot `t` before its CAS. If the CAS then fails, the owner may have been
//! overwriting that slot at the same time (after wrap-around): the thief reads into a
//! `MaybeUninit<T>` with a volatile read and discards it without ever treating it as a `T`.
//! This is the same benign race that every Chase–Lev implementation in Rust has.

use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr;

use crossbeam_utils::CachePadded;

use crate::sync::{fence, lock, Arc, AtomicIsize, AtomicPtr, Mutex, Ordering};

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

struct Buffer<T> {
    slots: *mut MaybeUninit<T>,
    cap: usize,
}

impl<T> Buffer<T> {
    fn alloc(cap: usize) -> *mut Buffer<T> {
        debug_assert!(cap.is_power_of_two());
        let slots: Box<[MaybeUninit<T>]> = (0..cap).map(|_| MaybeUninit::uninit()).collect();
        let slots = Box::into_raw(slots).cast::<MaybeUninit<T>>();
        Box::into_raw(Box::new(Buffer { slots, cap }))
    }

    /// # Safety
    /// `b` must come from `alloc` and not be used afterwards.
    unsafe fn free(b: *mut Buffer<T>) {
        // SAFETY: per the contract; the slot array was made from a boxed slice of `cap`.
        unsafe {
            let b = Box::from_raw(b);
            drop(Box::from_raw(ptr::slice_from_raw_parts_mut(b.slots, b.cap)));
        }
    }

    #[inline]
    fn slot(&self, i: isize) -> *mut MaybeUninit<T> {
        // SAFETY: the index is reduced modulo the (power-of-two) capacity.
        unsafe { self.slots.add(i as usize & (self.cap - 1)) }
    }

    /// # Safety
    /// Only the owner writes, and only slots outside `[top, bottom)` as seen by thieves.
    #[inline]
    unsafe fn write(&self, i: isize, v: T) {
        // SAFETY: per the contract the slot is not being read as a live element.
        unsafe { self.slot(i).write(MaybeUninit::new(v)) }
    }

    /// A bitwise copy of slot `i`, not yet owned.
    #[inline]
    fn read(&self, i: isize) -> MaybeUninit<T> {
        // SAFETY: the slot lies inside the allocation; reading possibly-uninitialized or
        // concurrently written bytes into a `MaybeUninit` creates no `T` (module docs).
        unsafe { ptr::read_volatile(self.slot(i)) }
    }
}

struct Inner<T> {
    top: CachePadded<AtomicIsize>,
    bottom: CachePadded<AtomicIsize>,
    buffer: CachePadded<AtomicPtr<Buffer<T>>>,
    retired: Mutex<Vec<*mut Buffer<T>>>,
    /// Test of the loom test: the owner's SeqCst fence weakened to AcqRel.
    #[cfg(loom)]
    weak_owner_fence: bool,
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
            // SAFETY: retired buffers hold only bit copies of elements owned elsewhere.
            unsafe { Buffer::free(old) };
        }
    }
}

/// The owner's end of a Chase–Lev deque (push and pop at the bottom). Not `Sync`.
pub struct Worker<T> {
    inner: Arc<Inner<T>>,
    /// The owner's cached copy of the buffer pointer (only the owner changes it).
    buffer: Cell<*mut Buffer<T>>,
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
pub fn deque<T>(capacity: usize) -> (Worker<T>, Stealer<T>) {
    deque_inner(
        capacity,
        #[cfg(loom)]
        false,
    )
}

/// A deque whose owner uses an AcqRel fence where a SeqCst one is needed (a known bug, for
/// the loom test that must find it).
#[cfg(all(loom, test))]
pub(crate) fn deque_with_weak_owner_fence<T>(capacity: usize) -> (Worker<T>, Stealer<T>) {
    deque_inner(capacity, true)
}

fn deque_inner<T>(capacity: usize, #[cfg(loom)] weak_owner_fence: bool) -> (Worker<T>, Stealer<T>) {
    let cap = capacity.max(2).next_power_of_two();
    let buf = Buffer::alloc(cap);
    let inner = Arc::new(Inner {
        top: CachePadded::new(AtomicIsize::new(0)),
        bottom: CachePadded::new(AtomicIsize::new(0)),
        buffer: CachePadded::new(AtomicPtr::new(buf)),
        retired: Mutex::new(Vec::new()),
        #[cfg(loom)]
        weak_owner_fence,
    });
    let stealer = Stealer {
        inner: Arc::clone(&inner),
    };
    (
        Worker {
            inner,
            buffer: Cell::new(buf),
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
        unsafe { (*self.buffer.get()).cap }
    }

    /// Pushes at the bottom; returns whether the deque was empty before (as far as the owner
    /// can tell: a concurrent steal may have emptied it just now).
    #[inline]
    pub fn push(&self, value: T) -> bool {
        let b = self.inner.bottom.load(Ordering::Relaxed);
        let t = self.inner.top.load(Ordering::Acquire);
        let mut buf = self.buffer.get();
        // SAFETY: the owner's buffer is live.
        if b - t >= unsafe { (*buf).cap } as isize {
            buf = self.grow(b, t);
        }
        // SAFETY: slot `b` is outside [top, bottom): no thief treats it as an element until
        // the bottom store below publishes it.
        unsafe { (*buf).write(b, value) };
        fence(Ordering::Release);
        self.inner.bottom.store(b + 1, Ordering::Relaxed);
        b - t <= 0
    }

    /// Pushes at the bottom without growing: gives the value back if the buffer is full
    /// (the seed's fixed-size `pushBottom`).
    #[inline]
    pub fn try_push(&self, value: T) -> Result<(), T> {
        let b = self.inner.bottom.load(Ordering::Relaxed);
        let t = self.inner.top.load(Ordering::Acquire);
        let buf = self.buffer.get();
        // SAFETY: the owner's buffer is live.
        if b - t >= unsafe { (*buf).cap } as isize {
            return Err(value);
        }
        // SAFETY: as in `push`.
        unsafe { (*buf).write(b, value) };
        fence(Ordering::Release);
        self.inner.bottom.store(b + 1, Ordering::Relaxed);
        Ok(())
    }

    #[cold]
    fn grow(&self, b: isize, t: isize) -> *mut Buffer<T> {
        let old = self.buffer.get();
        // SAFETY: the owner's buffer is live; we copy the live range bitwise.
        let new = unsafe {
            let new = Buffer::alloc((*old).cap * 2);
            for i in t..b {
                (*new).slot(i).write((*old).read(i));
            }
            new
        };
        self.inner.buffer.store(new, Ordering::Release);
        self.buffer.set(new);
        lock(&self.inner.retired).push(old);
        new
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
        if self.inner.weak_owner_fence {
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

    /// Takes the oldest element.
    #[inline]
    pub fn steal(&self) -> Steal<T> {
        let t = self.inner.top.load(Ordering::Acquire);
        fence(Ordering::SeqCst);
        let b = self.inner.bottom.load(Ordering::Acquire);
        if b - t <= 0 {
            return Steal::Empty;
        }
        let buf = self.inner.buffer.load(Ordering::Acquire);
        // SAFETY: buffers are freed only when the deque drops; we hold a handle.
        let v = unsafe { (*buf).read(t) };
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
        let b = self.inner.bottom.load(Ordering::Acquire);
        let n = b - t;
        if n <= 0 {
            return Steal::Empty;
        }
        let want = (((n + 1) / 2) as usize).clamp(1, max.max(1));
        let mut taken = 0;
        while taken < want {
            if taken > 0 {
                fence(Ordering::SeqCst);
                let b = self.inner.bottom.load(Ordering::Acquire);
                if b - t <= 0 {
                    break;
                }
            }
            let buf = self.inner.buffer.load(Ordering::Acquire);
            // SAFETY: as in `steal`.
            let v = unsafe { (*buf).read(t) };
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

#[cfg(all(test, loom))]
mod loom_tests {
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
    fn pop_races_two_thieves(make: fn(usize) -> (Worker<u32>, Stealer<u32>)) {
        bounded(3).check(move || {
            let (w, s) = make(4);
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
        pop_races_two_thieves(deque);
    }

    /// Test of the test: with the owner's SeqCst fence weakened to AcqRel, the model must find
    /// the double take.
    #[test]
    #[should_panic(expected = "exactly once")]
    fn loom_finds_the_double_take_with_a_weak_owner_fence() {
        pop_races_two_thieves(deque_with_weak_owner_fence);
    }

    /// The owner grows the buffer (capacity 2 → 4) while a thief steals from the old one.
    #[test]
    fn loom_growth_during_a_steal() {
        bounded(3).check(|| {
            let (w, s) = deque::<u32>(2);
            w.push(1);
            w.push(2);
            let h = thread::spawn(move || s.steal().success());
            w.push(3);
            let mut got: Vec<u32> = h.join().unwrap().into_iter().collect();
            got.extend(std::iter::from_fn(|| w.pop()));
            got.sort_unstable();
            assert_eq!(got, vec![1, 2, 3]);
        });
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
