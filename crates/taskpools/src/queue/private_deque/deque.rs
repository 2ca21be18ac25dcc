//! [`PrivateDeque`]: a worker's deque as a vector that only its owner touches, on top of
//! [`StealRequests`]; thieves get its oldest element through the owner's answers.

use std::cell::{Cell, UnsafeCell as OwnerUnsafeCell};

use super::{StealRequests, StealTable};
use crate::queue::chase_lev::Steal;
use crate::sync::Arc;

/// A worker's private deque on top of [`StealRequests`]. Not `Sync`: only its owner thread
/// uses it.
pub struct PrivateDeque<T> {
    pub(super) req: StealRequests<T>,
    /// Live elements are `items[head..]`, oldest first.
    pub(super) items: OwnerUnsafeCell<Vec<T>>,
    pub(super) head: Cell<usize>,
}

impl<T> PrivateDeque<T> {
    /// `n` deques that can steal from one another, indexed `0..n`.
    ///
    /// # Panics
    /// As [`StealRequests::set`], if `n` is beyond what fits in memory.
    pub fn set(n: usize) -> Vec<PrivateDeque<T>> {
        StealRequests::set(n)
            .into_iter()
            .map(|req| PrivateDeque {
                req,
                items: OwnerUnsafeCell::new(Vec::with_capacity(64)),
                head: Cell::new(0),
            })
            .collect()
    }

    /// This deque's index in its set.
    pub fn index(&self) -> usize {
        self.req.index
    }

    /// The cells shared with the other deques of the set.
    pub fn table(&self) -> &Arc<StealTable<T>> {
        &self.req.table
    }

    /// The owner's vector. Sound as a `&self` method because the deque is not `Sync` (one
    /// thread) and every caller drops the borrow before it calls anything that could use the
    /// deque again.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub(super) fn items(&self) -> &mut Vec<T> {
        // SAFETY: the deque is not `Sync`, so only the owner thread gets here, and no method
        // keeps this borrow across a call that could come back into the deque.
        unsafe { &mut *self.items.get() }
    }

    /// Elements in the deque.
    #[inline]
    pub fn len(&self) -> usize {
        self.items().len() - self.head.get()
    }

    /// Whether the deque is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Pushes `v` as the newest element; returns whether the deque was empty before (then
    /// it has just started to advertise work; a caller that lets thieves sleep wakes one).
    #[inline(always)]
    pub fn push(&self, v: T) -> bool {
        self.items().push(v);
        let was_empty = !self.req.advertised();
        self.req.advertise(true);
        was_empty
    }

    /// Pops the newest element. The work hint is withdrawn lazily: not when this pop takes
    /// the last element (the fast path of a join stays free of that check), but when a pop
    /// finds the deque empty; until then a thief that asks is declined.
    #[inline(always)]
    pub fn pop(&self) -> Option<T> {
        let items = self.items();
        if items.len() > self.head.get() {
            items.pop()
        } else {
            self.reset();
            None
        }
    }

    /// Withdraws the work hint now if the deque is empty (`pop` does it lazily, at the pop
    /// that finds it empty): for an owner about to run a long element, so that thieves stop
    /// asking it, and waiting, meanwhile.
    #[inline]
    pub fn withdraw_if_empty(&self) {
        if self.is_empty() && self.req.advertised() {
            self.reset();
        }
    }

    /// Removes the oldest element.
    pub(super) fn pop_oldest(&self) -> Option<T> {
        let items = self.items();
        let h = self.head.get();
        if h >= items.len() {
            // Declining a thief: stop advertising too (the hint is withdrawn lazily by `pop`;
            // without this, thieves kept asking, and spinning, until the owner's next pop).
            self.reset();
            return None;
        }
        // SAFETY: `h` is in bounds and holds a live element; advancing `head` past it below
        // makes it dead, so it is read out exactly once (and never dropped in place: `reset`
        // and `compact` only discard the dead prefix with `set_len`).
        let v = unsafe { std::ptr::read(items.as_ptr().add(h)) };
        self.head.set(h + 1);
        if h + 1 == items.len() {
            self.reset();
        } else if h + 1 >= 64 && 2 * (h + 1) >= items.len() {
            self.compact();
        }
        Some(v)
    }

    /// The deque is empty: forget the dead prefix and stop advertising.
    #[cold]
    fn reset(&self) {
        let items = self.items();
        // SAFETY: every element below `head` has been read out (dead); no live ones remain.
        unsafe { items.set_len(0) };
        self.head.set(0);
        self.req.advertise(false);
    }

    /// Moves the live elements to the front once the dead prefix is at least half the vector
    /// (amortized O(1) per element given away).
    fn compact(&self) {
        let items = self.items();
        let h = self.head.get();
        let live = items.len() - h;
        // SAFETY: `items[h..]` are the live elements; they move (bitwise, possibly overlapping)
        // to `items[..live]`, and the length then covers exactly them. The dead prefix was read
        // out already and must not be dropped.
        unsafe {
            std::ptr::copy(items.as_ptr().add(h), items.as_mut_ptr(), live);
            items.set_len(live);
        }
        self.head.set(0);
    }

    /// Answers a pending steal request, if any, with the oldest element: one plain load when
    /// there is none.
    #[inline(always)]
    pub fn poll(&self) {
        self.req.poll(|| self.pop_oldest());
    }

    /// Stops taking requests until [`unblock`](Self::unblock); a pending request is answered
    /// now (with an element if there is one).
    pub fn block(&self) {
        self.req.block(|| self.pop_oldest());
    }

    /// Takes requests again.
    pub fn unblock(&self) {
        self.req.unblock();
    }

    /// Makes this deque's steals give up on a victim that leaves a request untaken for a
    /// short while, although it advertises work ([`StealRequests::set_impatient`]).
    pub fn set_impatient(&self, impatient: bool) {
        self.req.set_impatient(impatient);
    }

    /// Asks deque `victim` for its oldest element and waits for the answer, answering requests
    /// to this deque meanwhile. `Empty` if the victim advertises no work, declines, stops
    /// advertising while the request waits (it is taken back), leaves it untaken for a short
    /// while when this deque is impatient, or has been dropped, `Retry`
    /// if another thief's request is pending or being answered there (or it is blocked).
    pub fn steal_from(&self, victim: usize) -> Steal<T> {
        self.req.steal_from(victim, || self.poll())
    }
}

impl<T> Drop for PrivateDeque<T> {
    fn drop(&mut self) {
        let h = self.head.get();
        let items = self.items.get_mut();
        // SAFETY: `items[..h]` were read out; drop only the live elements.
        unsafe {
            let live = items.len() - h;
            let p = items.as_mut_ptr().add(h);
            items.set_len(0);
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(p, live));
        }
    }
}
