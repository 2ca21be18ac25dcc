//! One worker's end of the steal-request protocol (Acar, Charguéraud & Rainey, PPoPP 2013):
//! [`StealRequests`] answers the requests in its cell at each poll, blocks and unblocks it,
//! and asks a victim for its oldest element ([`StealRequests::steal_from`]).

use std::cell::Cell;
use std::mem::size_of;

use crossbeam_utils::CachePadded;

use super::table::{
    Answer, Slot, StealTable, BLOCKED, CLOSED, DECLINED, FILLED, NO_REQUEST, SERVING, WAITING,
};
#[cfg(doc)]
use super::PrivateDeque;
use crate::queue::chase_lev::Steal;
use crate::sync::{Arc, AtomicBool, AtomicUsize, Backoff, Ordering, UnsafeCell};

/// `$order`, or `Relaxed` where a loom planted-bug model sets the flag `$weak` (a field that
/// exists only under loom; outside it the flag is not looked at).
macro_rules! weakened {
    ($weak:expr, $order:expr) => {{
        #[cfg(loom)]
        let order = if $weak.get() {
            Ordering::Relaxed
        } else {
            $order
        };
        #[cfg(not(loom))]
        let order = $order;
        order
    }};
}

/// One worker's end of the request protocol: its request cell (answered by [`poll`]), its
/// work hint, and its answer cell for its own steals ([`steal_from`]). Not `Sync`: only the
/// owner thread uses it. What "the oldest element" is belongs to the owner's storage, which
/// passes it in as a closure: [`PrivateDeque`] keeps a vector, the fork-join runtime a list
/// of stack frames.
///
/// [`poll`]: StealRequests::poll
/// [`steal_from`]: StealRequests::steal_from
pub struct StealRequests<T> {
    pub(super) index: usize,
    pub(super) table: Arc<StealTable<T>>,
    /// `&table.slots[index]`, kept to spare the owner's polls two dependent loads.
    me: *const Slot<T>,
    /// What the owner last wrote to its `has_work` hint.
    advertised: Cell<bool>,
    /// Inside `serve`/`block` (between taking a thief's request and answering it). The
    /// closures these methods take are caller code. `block` or `unblock` from either closure,
    /// and `poll` from the closure of `poll`, would answer a thief twice or change the cell
    /// under its owner, so they panic before touching it; `poll` from the closure of `block`
    /// finds the cell blocked and does nothing.
    serving: Cell<bool>,
    /// Inside `steal_from` (a request of ours may be out). A second request while one is out
    /// would let two victims write our one answer cell, so nesting panics instead.
    stealing: Cell<bool>,
    /// Gives up on an unanswered request once its wait's backoff has completed, taking the
    /// request back while the victim still advertises work (see
    /// [`set_impatient`](Self::set_impatient)).
    impatient: Cell<bool>,
    /// Loom-only switch for a test of the tests: a thief that does not answer requests while
    /// it waits for its own answer (two such thieves that ask each other wait forever).
    #[cfg(loom)]
    pub(super) broken_no_poll_while_waiting: Cell<bool>,
    /// Loom-only planted bug: the victim's store of FILLED is Relaxed.
    #[cfg(loom)]
    pub(super) weak_filled_store: Cell<bool>,
    /// Loom-only planted bug: the thief's load of its answer state is Relaxed.
    #[cfg(loom)]
    pub(super) weak_filled_load: Cell<bool>,
    /// Loom-only planted bug: dropping the handle leaves its cells as they are.
    #[cfg(loom)]
    pub(super) broken_drop_keeps_requests: Cell<bool>,
    /// Loom-only planted bug: `unblock` stores "no request" unconditionally, erasing a
    /// pending request when the handle was not blocked.
    #[cfg(loom)]
    pub(super) broken_unblock_overwrites: Cell<bool>,
    /// Loom-only planted bug: a thief never takes back a request to a victim that stopped
    /// advertising work (it waits for the victim's next poll, however far off).
    #[cfg(loom)]
    pub(super) broken_never_takes_back: Cell<bool>,
    /// Loom-only planted bug: a victim answers a request without claiming it first (a thief
    /// that takes it back meanwhile loses the element).
    #[cfg(loom)]
    pub(super) broken_serve_without_claim: Cell<bool>,
    /// Loom-only planted bug: the victim's claim CAS is Relaxed.
    #[cfg(loom)]
    pub(super) weak_claim: Cell<bool>,
    /// Loom-only planted bug: an impatient thief gives up without taking its request back
    /// (the victim may still claim it and answer into a cell nobody reads).
    #[cfg(loom)]
    pub(super) broken_give_up_keeps_request: Cell<bool>,
}

// SAFETY: the table is shared through `Arc` and is `Send + Sync` for `T: Send`; `me` points
// into it; the `Cell`s move with the handle.
unsafe impl<T: Send> Send for StealRequests<T> {}

impl<T> StealRequests<T> {
    /// `n` handles that can steal from one another, indexed `0..n`.
    ///
    /// # Panics
    /// If `n` slots would not fit in `isize::MAX` bytes (the message names the limit).
    pub fn set(n: usize) -> Vec<StealRequests<T>> {
        let per = size_of::<Slot<T>>();
        let max = isize::MAX as usize / per;
        if n > max {
            panic!(
                "StealRequests::set: {n} deques exceed the limit of {max} \
                 (isize::MAX bytes / {per} bytes per deque's cells)"
            );
        }
        debug_assert!(
            max < SERVING,
            "every index is below the special cell values"
        );
        let slots = (0..n)
            .map(|_| Slot {
                request: CachePadded::new((AtomicUsize::new(NO_REQUEST), AtomicBool::new(false))),
                answer: CachePadded::new(Answer {
                    state: AtomicUsize::new(WAITING),
                    item: UnsafeCell::new(None),
                }),
            })
            .collect();
        let table = Arc::new(StealTable { slots });
        (0..n)
            .map(|index| StealRequests {
                index,
                me: &table.slots[index] as *const Slot<T>,
                table: Arc::clone(&table),
                advertised: Cell::new(false),
                serving: Cell::new(false),
                stealing: Cell::new(false),
                impatient: Cell::new(false),
                #[cfg(loom)]
                broken_no_poll_while_waiting: Cell::new(false),
                #[cfg(loom)]
                weak_filled_store: Cell::new(false),
                #[cfg(loom)]
                weak_filled_load: Cell::new(false),
                #[cfg(loom)]
                broken_drop_keeps_requests: Cell::new(false),
                #[cfg(loom)]
                broken_unblock_overwrites: Cell::new(false),
                #[cfg(loom)]
                broken_never_takes_back: Cell::new(false),
                #[cfg(loom)]
                broken_serve_without_claim: Cell::new(false),
                #[cfg(loom)]
                weak_claim: Cell::new(false),
                #[cfg(loom)]
                broken_give_up_keeps_request: Cell::new(false),
            })
            .collect()
    }

    /// This handle's index in its set.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The cells shared with the other handles of the set.
    pub fn table(&self) -> &Arc<StealTable<T>> {
        &self.table
    }

    #[inline(always)]
    fn slot(&self) -> &Slot<T> {
        // SAFETY: `me` points into the table's boxed slots, which our `Arc` keeps alive and
        // in place.
        unsafe { &*self.me }
    }

    /// Makes [`steal_from`](Self::steal_from) give up on a victim that leaves its request
    /// unanswered for a short while (its backoff: microseconds), taking the request back
    /// even though the victim still advertises work. A thief that must not wait for a victim's
    /// next poll sets it: a victim that is itself waiting, inside a task, for something the
    /// thief holds would never poll again. Off by default: a patient thief waits for the
    /// victim's next poll (at most the rest of the victim's task) while the victim advertises.
    pub fn set_impatient(&self, impatient: bool) {
        self.impatient.set(impatient);
    }

    /// Whether the owner currently advertises work.
    #[inline(always)]
    pub fn advertised(&self) -> bool {
        self.advertised.get()
    }

    /// Sets the work hint that thieves read before they ask (written only when it changes).
    #[inline(always)]
    pub fn advertise(&self, work: bool) {
        if self.advertised.get() != work {
            self.advertised.set(work);
            self.slot().request.1.store(work, Ordering::Relaxed);
        }
    }

    /// Whether a thief is waiting for an answer: one plain load.
    #[inline(always)]
    pub fn pending(&self) -> bool {
        // `SERVING` counts too: the owner sees it only from inside `serve`, where `serve`
        // then panics (a nested poll).
        self.slot().request.0.load(Ordering::Relaxed) < CLOSED
    }

    /// Answers a pending request, if any, with `oldest()` (the owner's oldest element, or
    /// `None` to decline).
    #[inline(always)]
    pub fn poll(&self, oldest: impl FnOnce() -> Option<T>) {
        if self.pending() {
            self.serve(oldest);
        }
    }

    #[cold]
    #[inline(never)]
    fn serve(&self, oldest: impl FnOnce() -> Option<T>) {
        assert!(
            !self.serving.get(),
            "StealRequests::poll called from inside the closure of poll"
        );
        let cell = &self.slot().request.0;
        // Acquire only for the planted-bug protocol below; the claim CAS acquires on its own.
        let thief = cell.load(Ordering::Acquire);
        if thief >= SERVING {
            return;
        }
        #[cfg(loom)]
        let claim = !self.broken_serve_without_claim.get();
        #[cfg(not(loom))]
        let claim = true;
        let order = weakened!(self.weak_claim, Ordering::Acquire);
        // Claim the request before answering it: a thief may take its request back while we
        // do not advertise work (`steal_from`), and exactly one of the two CASes wins, so an
        // answer is written only to a thief that waits for it. While we serve, other thieves
        // find the cell taken and move on (`Retry`), as they did while it held the request.
        // Acquire: pairs with the thief's request CAS (Release), which follows its reset of
        // its answer state and its last read of the answer's item; the value may be a newer
        // request of the same thief than the one loaded above (it took that one back and
        // asked anew), so the load's Acquire would not be enough.
        if claim
            && cell
                .compare_exchange(thief, SERVING, order, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let item = self.oldest_for(thief, true, oldest);
        self.answer(thief, item);
        self.end_serving();
    }

    /// Reopens the request cell after a claimed request was answered.
    fn end_serving(&self) {
        let cell = &self.slot().request.0;
        #[cfg(loom)]
        if self.broken_serve_without_claim.get() {
            cell.store(NO_REQUEST, Ordering::Release);
            return;
        }
        // Only the owner moves the cell away from SERVING (thieves CAS from NO_REQUEST or
        // from their own index, and `block` cannot run inside `serve`).
        let r = cell.compare_exchange(SERVING, NO_REQUEST, Ordering::Release, Ordering::Relaxed);
        // (Not checked while unwinding: this also runs in the `Serving` guard's drop.)
        debug_assert!(
            r.is_ok() || std::thread::panicking(),
            "a claimed request cell changed under its owner"
        );
    }

    /// Calls the caller's `oldest` for a request of `thief` that has been taken out of the
    /// request cell, guarding against re-entry; if `oldest` unwinds, the thief is declined
    /// (and, for `poll`, the cell reopened) before the panic goes on, so it does not wait
    /// forever.
    fn oldest_for(
        &self,
        thief: usize,
        reopen: bool,
        oldest: impl FnOnce() -> Option<T>,
    ) -> Option<T> {
        struct Serving<'a, T> {
            req: &'a StealRequests<T>,
            thief: usize,
            reopen: bool,
            armed: bool,
        }
        impl<T> Drop for Serving<'_, T> {
            fn drop(&mut self) {
                self.req.serving.set(false);
                if self.armed {
                    self.req.answer(self.thief, None);
                    if self.reopen {
                        self.req.end_serving();
                    }
                }
            }
        }
        // `serve` and `block` check this on entry, before they take a request: a panic here,
        // after the take and before the guard, would leave the thief waiting.
        debug_assert!(!self.serving.get());
        self.serving.set(true);
        let mut g = Serving {
            req: self,
            thief,
            reopen,
            armed: true,
        };
        let item = oldest();
        g.armed = false;
        item
    }

    /// Hands `item` to `thief`, or declines.
    fn answer(&self, thief: usize, item: Option<T>) {
        let a = &self.table.slots[thief].answer;
        match item {
            Some(v) => {
                // SAFETY: we took the thief's request out of our cell (the CAS in `serve`, the
                // swap in `block` or drop), so it waits for this answer and cannot take the
                // request back; it reads `item` only after the Release store of FILLED below,
                // and no other victim answers it.
                a.item.with_mut(|p| unsafe { *p = Some(v) });
                let order = weakened!(self.weak_filled_store, Ordering::Release);
                a.state.store(FILLED, order);
            }
            None => a.state.store(DECLINED, Ordering::Release),
        }
    }

    /// Stops taking requests until [`unblock`](Self::unblock); a pending request is answered
    /// now, with `oldest()`.
    ///
    /// # Panics
    /// If called from inside the closure of `poll` or `block` (before it touches the cell).
    pub fn block(&self, oldest: impl FnOnce() -> Option<T>) {
        assert!(
            !self.serving.get(),
            "StealRequests::block called from inside the closure of poll or block"
        );
        let prev = self.slot().request.0.swap(BLOCKED, Ordering::AcqRel);
        if prev < SERVING {
            let item = self.oldest_for(prev, false, oldest);
            self.answer(prev, item);
        }
    }

    /// Takes requests again. Idempotent: it only reopens a blocked cell, so a call while
    /// not blocked leaves a pending request in place (to be answered at the next poll).
    ///
    /// # Panics
    /// If called from inside the closure of `poll` or `block`.
    pub fn unblock(&self) {
        assert!(
            !self.serving.get(),
            "StealRequests::unblock called from inside the closure of poll or block"
        );
        #[cfg(loom)]
        if self.broken_unblock_overwrites.get() {
            self.slot().request.0.store(NO_REQUEST, Ordering::Release);
            return;
        }
        let _ = self.slot().request.0.compare_exchange(
            BLOCKED,
            NO_REQUEST,
            Ordering::Release,
            Ordering::Relaxed,
        );
    }

    /// Asks `victim` for its oldest element and waits for the answer, calling `serve_own`
    /// meanwhile (which must answer requests to this handle, e.g. with [`poll`](Self::poll)).
    /// `Empty` if the victim advertises no work, declines, stops advertising before it
    /// takes up the request (which is then taken back), leaves it untaken for a short while
    /// when this thief is [impatient](Self::set_impatient) (taken back too) or is gone
    /// (dropped); `Retry` if
    /// another thief's request is pending or being answered there (or it is blocked).
    ///
    /// # Panics
    /// If called from inside `serve_own` of another `steal_from` on this handle (one request
    /// at a time). If `serve_own` panics, the request is still answered before the panic goes
    /// on (its element, if any, is dropped), so no victim writes into a cell we reuse.
    pub fn steal_from(&self, victim: usize, mut serve_own: impl FnMut()) -> Steal<T> {
        debug_assert_ne!(victim, self.index, "a worker does not steal from itself");
        let v = &self.table.slots[victim];
        if !v.request.1.load(Ordering::Relaxed) {
            return Steal::Empty;
        }
        assert!(
            !self.stealing.replace(true),
            "StealRequests::steal_from called from inside its own serve_own closure"
        );
        let mut g = Stealing {
            req: self,
            victim,
            outstanding: false,
        };
        let me = &self.slot().answer;
        me.state.store(WAITING, Ordering::Relaxed);
        // Release: the victim, which reads the cell with Acquire, sees WAITING before it
        // answers, so its answer is never overwritten by the store above.
        if let Err(now) = v.request.0.compare_exchange(
            NO_REQUEST,
            self.index,
            Ordering::AcqRel,
            Ordering::Relaxed,
        ) {
            return if now == CLOSED {
                Steal::Empty
            } else {
                Steal::Retry
            };
        }
        g.outstanding = true;
        // Spin briefly, then yield, so that a victim sharing our CPU (an oversubscribed or
        // shared machine) gets to run and answer.
        let backoff = Backoff::new();
        let order = weakened!(self.weak_filled_load, Ordering::Acquire);
        loop {
            if let Some(answer) = self.answer_received(order) {
                g.outstanding = false;
                return answer.map_or(Steal::Empty, Steal::Success);
            }
            #[cfg(loom)]
            let poll = !self.broken_no_poll_while_waiting.get();
            #[cfg(not(loom))]
            let poll = true;
            if poll {
                serve_own();
            }
            let give_up = self.impatient.get() && backoff.is_completed();
            if self.take_back(victim, give_up) {
                g.outstanding = false;
                return Steal::Empty;
            }
            backoff.snooze();
        }
    }

    /// Takes our outstanding request to `victim` back if the victim stopped advertising work
    /// (it ran out, and would decline at its next poll, which may be a whole task away: it
    /// took its last element and runs it), or whatever it advertises if `give_up` (an
    /// impatient thief). Fails if the victim has claimed the request (its answer is then on
    /// the way). The hint store is eventually visible, so no fence is needed; the load before
    /// the CAS keeps a waiting thief from taking the victim's line exclusive at every turn
    /// while the victim serves a request.
    #[inline]
    fn take_back(&self, victim: usize, give_up: bool) -> bool {
        #[cfg(loom)]
        if self.broken_never_takes_back.get() {
            return false;
        }
        let v = &self.table.slots[victim].request;
        #[cfg(loom)]
        if give_up && self.broken_give_up_keeps_request.get() {
            return true;
        }
        (give_up || !v.1.load(Ordering::Relaxed))
            && v.0.load(Ordering::Relaxed) == self.index
            && v.0
                .compare_exchange(self.index, NO_REQUEST, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    /// The answer to our outstanding request, once a victim has given it: `Some(Some(v))`
    /// filled, `Some(None)` declined, `None` not yet. `order` is Acquire (Relaxed only in a
    /// loom planted-bug model).
    #[inline]
    fn answer_received(&self, order: Ordering) -> Option<Option<T>> {
        let me = &self.slot().answer;
        match me.state.load(order) {
            // SAFETY: the victim wrote `item` before its Release store of FILLED, which we
            // have seen; nobody writes it again until our next request.
            FILLED => Some(Some(
                me.item
                    .with_mut(|p| unsafe { (*p).take() })
                    .expect("a filled answer holds an item"),
            )),
            DECLINED => Some(None),
            _ => None,
        }
    }
}

/// Resets `stealing` when `steal_from` returns. If it unwinds (a panic in `serve_own`) while
/// its request is out, it first waits for the answer (or takes the request back, as
/// `steal_from` does), declining requests to this handle meanwhile (so two thieves that ask
/// each other are both answered), and drops the element.
struct Stealing<'a, T> {
    req: &'a StealRequests<T>,
    victim: usize,
    outstanding: bool,
}

impl<T> Drop for Stealing<'_, T> {
    fn drop(&mut self) {
        // Under loom a panic here is the model checker's own (a detected race, or a wait that
        // never ends in a planted-bug model): the execution is over, so do not wait on it.
        #[cfg(loom)]
        let outstanding = self.outstanding && !std::thread::panicking();
        #[cfg(not(loom))]
        let outstanding = self.outstanding;
        if outstanding {
            let backoff = Backoff::new();
            // The element, if any, is dropped with the answer.
            while self.req.answer_received(Ordering::Acquire).is_none() {
                if self.req.take_back(self.victim, false) {
                    break;
                }
                // Not from inside a closure of `poll` (a nested poll panics, which would abort
                // here) or `block` (the cell is blocked: nothing to answer).
                if !self.req.serving.get() {
                    self.req.poll(|| None);
                }
                backoff.snooze();
            }
        }
        self.req.stealing.set(false);
    }
}

impl<T> Drop for StealRequests<T> {
    /// Withdraws the work hint, declines a pending request and closes the request cell, so
    /// that no thief waits for this handle (later requests get `Empty` at once).
    fn drop(&mut self) {
        #[cfg(loom)]
        if self.broken_drop_keeps_requests.get() {
            return;
        }
        self.advertised.set(false);
        self.slot().request.1.store(false, Ordering::Relaxed);
        // AcqRel: acquire pairs with a thief's CAS (its answer state is WAITING before we
        // answer); release keeps the hint store above before the close.
        let prev = self.slot().request.0.swap(CLOSED, Ordering::AcqRel);
        if prev < SERVING {
            self.answer(prev, None);
        }
    }
}
