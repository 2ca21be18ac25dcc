//! The cells that a set of private deques share: each deque's request cell and work hint,
//! its answer cell, and the values they hold ([`StealTable`], [`RequestCell`]).

use crossbeam_utils::CachePadded;

#[cfg(doc)]
use super::PrivateDeque;
use crate::sync::{AtomicBool, AtomicUsize, Ordering, UnsafeCell};

/// The request cell holds this when nobody is asking.
pub(super) const NO_REQUEST: usize = usize::MAX;
/// The request cell holds this while its owner does not poll.
pub(super) const BLOCKED: usize = usize::MAX - 1;
/// The request cell holds this once its handle is dropped.
pub(super) const CLOSED: usize = usize::MAX - 2;
/// The request cell holds this while its owner answers a request it has claimed; every value
/// below is a thief's index (a pending request).
pub(super) const SERVING: usize = usize::MAX - 3;

/// Answer states.
pub(super) const WAITING: usize = 0;
pub(super) const DECLINED: usize = 1;
pub(super) const FILLED: usize = 2;

/// One worker's cells. The request cell and the work hint share a line (thieves read the hint
/// and then write the request); the answer cell, written by victims, has its own.
pub(super) struct Slot<T> {
    pub(super) request: CachePadded<(AtomicUsize, AtomicBool)>,
    pub(super) answer: CachePadded<Answer<T>>,
}

pub(super) struct Answer<T> {
    pub(super) state: AtomicUsize,
    pub(super) item: UnsafeCell<Option<T>>,
}

/// The cells that a set of private deques share.
pub struct StealTable<T> {
    pub(super) slots: Box<[Slot<T>]>,
}

// SAFETY: the only non-`Sync` part is each answer's `item`, which is written by exactly one
// victim (the one that took the thief's index out of its request cell with a CAS or swap,
// which the thief's take-back CAS cannot also win; it answers once) and read by the thief
// only after it sees `state == FILLED` with Acquire, which the victim stores with Release
// after the write. The victim's write in turn follows the thief's last read of the item: that
// CAS or swap is Acquire and reads the thief's Release request CAS, made after the read.
// Items cross threads, hence `T: Send`.
unsafe impl<T: Send> Sync for StealTable<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for StealTable<T> {}

impl<T> StealTable<T> {
    /// Number of deques.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are no deques (never, for a table made by [`PrivateDeque::set`]).
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Whether deque `i` advertises work (a hint: it may be out of date either way).
    #[inline]
    pub fn has_work(&self, i: usize) -> bool {
        self.slots[i].request.1.load(Ordering::Relaxed)
    }

    /// Whether any deque advertises work.
    pub fn any_work(&self) -> bool {
        (0..self.slots.len()).any(|i| self.has_work(i))
    }

    /// Deque `i`'s request cell, to watch for pending requests
    /// ([`RequestCell::pending`]) without going through the deque.
    ///
    /// # Panics
    /// If `i` is not a deque of this table.
    pub fn request_cell(&self, i: usize) -> RequestCell<'_> {
        RequestCell(&self.slots[i].request.0)
    }
}

/// A deque's request cell, as [`StealTable::request_cell`] gives it.
#[derive(Clone, Copy)]
pub struct RequestCell<'a>(&'a AtomicUsize);

impl RequestCell<'_> {
    /// Whether a thief waits for the deque's answer, as [`PrivateDeque::pending`]: one plain
    /// load.
    #[inline(always)]
    pub fn pending(self) -> bool {
        self.0.load(Ordering::Relaxed) < CLOSED
    }
}
