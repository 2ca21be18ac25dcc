//! A thief's end of a Chase–Lev deque ([`Stealer`]: steal one element, or about half into
//! another deque, at the top) and the result of a steal ([`Steal`]).

use super::buffer::Buffer;
use super::hazard::{self, Record};
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

/// How one steal keeps its buffer from being freed (the `chase_lev` module docs, "Growth and
/// reclamation").
pub(super) enum Guard<'a, T> {
    /// The thread's hazard record.
    Announced(&'a Record, &'a Inner<T>),
    /// The deque's `readers` count (no record: the thread's thread-locals are going away).
    Counted(&'a Inner<T>),
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

    /// The thief's load of the buffer pointer (Acquire: pairs with the owner's release store,
    /// which follows its copy into the new buffer).
    #[inline(always)]
    pub(super) fn load_buffer(&self) -> *mut Buffer<T> {
        #[cfg(loom)]
        if self.inner.mutated(Mutation::RelaxedBufferLoad) {
            return self.inner.buffer.load(Ordering::Relaxed);
        }
        self.inner.buffer.load(Ordering::Acquire)
    }

    /// How this steal keeps the buffer it reads from being freed: the thread's hazard record,
    /// or (while the thread's thread-locals are being destroyed) the `readers` count.
    #[inline(always)]
    pub(super) fn guard(&self) -> Guard<'_, T> {
        #[cfg(loom)]
        if self.inner.mutated(Mutation::CounterPath)
            || self.inner.mutated(Mutation::CounterPathNoReaderCheck)
        {
            return Guard::Counted(&self.inner);
        }
        match hazard::record() {
            // SAFETY: records outlive the threads that hold them.
            Some(r) => Guard::Announced(unsafe { &*r }, &self.inner),
            None => Guard::Counted(&self.inner),
        }
    }

    /// Before this steal's `SeqCst` fence: announces the deque in the thread's record, or
    /// registers in `readers` (the `chase_lev` module docs, "Growth and reclamation").
    #[inline(always)]
    pub(super) fn enter(&self, g: &Guard<'_, T>) {
        match g {
            Guard::Announced(r, inner) => {
                #[cfg(loom)]
                if inner.mutated(Mutation::NoAnnounce) {
                    return;
                }
                r.announce(inner.id());
            }
            // Acquire: pairs with the owner's AcqRel check in `reclaim`.
            Guard::Counted(inner) => {
                inner.readers.fetch_add(1, Ordering::Acquire);
            }
        }
    }

    /// After this steal's last read through the buffer pointer: withdraws the announcement
    /// or leaves `readers`; Release either way, so that an owner that reads the withdrawal
    /// frees the buffer only after those reads.
    #[inline(always)]
    pub(super) fn leave(&self, g: &Guard<'_, T>) {
        match g {
            Guard::Announced(r, _inner) => {
                #[cfg(loom)]
                if _inner.mutated(Mutation::RelaxedClear) {
                    r.clear(Ordering::Relaxed);
                    return;
                }
                r.clear(Ordering::Release);
            }
            Guard::Counted(inner) => {
                inner.readers.fetch_sub(1, Ordering::Release);
            }
        }
    }

    /// Takes the oldest element.
    #[inline]
    pub fn steal(&self) -> Steal<T> {
        let g = self.guard();
        self.enter(&g);
        let t = self.inner.top.load(Ordering::Acquire);
        // SeqCst: orders our load of `top` before our load of `bottom` against the owner's
        // pop (its SeqCst fence between its bottom store and top load), and our announcement
        // before our load of `buffer` against the owner's fence in `reclaim`.
        fence(Ordering::SeqCst);
        let b = self.load_bottom();
        if b - t <= 0 {
            self.leave(&g);
            return Steal::Empty;
        }
        let buf = self.load_buffer();
        // SAFETY: announced (or registered) before the fence that precedes our load of `buf`,
        // so the owner does not free `buf` before `leave` (the `chase_lev` module docs).
        let v = unsafe { (*buf).read(t) };
        self.leave(&g);
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
        let g = self.guard();
        self.enter(&g);
        let mut t = self.inner.top.load(Ordering::Acquire);
        // SeqCst: as in `steal`.
        fence(Ordering::SeqCst);
        let b = self.load_bottom();
        let n = b - t;
        if n <= 0 {
            self.leave(&g);
            return Steal::Empty;
        }
        let want = (((n + 1) / 2) as usize).clamp(1, max.max(1));
        let mut taken = 0;
        while taken < want {
            if taken > 0 {
                // Announced again for this read (we left before pushing into `dest`).
                self.enter(&g);
                // SeqCst: as in `steal`.
                fence(Ordering::SeqCst);
                let b = self.load_bottom();
                if b - t <= 0 {
                    self.leave(&g);
                    break;
                }
            }
            let buf = self.load_buffer();
            // SAFETY: as in `steal`: announced before a SeqCst fence that precedes this load.
            let v = unsafe { (*buf).read(t) };
            self.leave(&g);
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
