//! A thief's end of a Chase–Lev deque ([`Stealer`]: steal one element, or about half into
//! another deque, at the top) and the result of a steal ([`Steal`]).

use super::buffer::Buffer;
use super::inner::Inner;
#[cfg(loom)]
use super::inner::Mutation;
use super::Worker;
use crate::sync::{fence, Arc, Ordering};

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

/// A thief's handle (steal at the top). Cheap to clone; `Send + Sync`.
pub struct Stealer<T> {
    pub(super) inner: Arc<Inner<T>>,
}

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
    pub(super) fn enter(&self) -> *mut Buffer<T> {
        // Acquire: pairs with the owner's AcqRel check in `reclaim` (the `chase_lev` module docs).
        self.inner.readers.fetch_add(1, Ordering::Acquire);
        #[cfg(loom)]
        if self.inner.mutated(Mutation::RelaxedBufferLoad) {
            return self.inner.buffer.load(Ordering::Relaxed);
        }
        // Acquire: pairs with the owner's release store, which follows its copy into it.
        self.inner.buffer.load(Ordering::Acquire)
    }

    #[inline(always)]
    pub(super) fn leave(&self) {
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
