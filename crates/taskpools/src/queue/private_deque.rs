//! Private deques with steal requests (Acar, Charguéraud & Rainey, "Scheduling parallel
//! programs by work stealing with private deques", PPoPP 2013).
//!
//! Each worker's deque is private: the owner pushes and pops without atomics or fences. A
//! thief does not touch another worker's deque; it asks for work by writing its index into the
//! victim's *request cell* (a CAS from "no request"), then waits on its own *answer cell*.
//! The owner looks at its request cell at every [`PrivateDeque::poll`] (one plain load when
//! nobody asks) and, when asked, hands its oldest element to the thief through the thief's
//! answer cell, or declines when it has none. This is the seed's private/public split (seed 004
//! §3.3, pools dq7/dq8) taken to the limit: the "public queue" is the one answer cell per
//! request, filled on demand, so the owner pays for sharing only when someone is hungry.
//!
//! Rules that keep the protocol live:
//! - A thief keeps polling its own request cell while it waits for an answer, so two thieves
//!   that ask each other both get declined instead of waiting on each other.
//! - A worker that stops polling for a while (sleeps, blocks, exits) first [`block`]s its
//!   request cell, which declines a pending request and refuses new ones, and [`unblock`]s it
//!   when it polls again.
//! - A thief asks only victims that advertise work (`has_work`, a hint updated by the owner
//!   when its deque turns empty or non-empty); a request to a victim that has just run out is
//!   declined, never lost.
//! - A thief whose victim stops advertising while it waits takes its request back (a CAS from
//!   its index to "no request"), so it does not wait for a victim that took its last element
//!   and now runs it without polling. The victim claims a request with a CAS from the same
//!   index before it answers (or, when it blocks or is dropped, a swap), so exactly one of
//!   the two happens: an answer, or a withdrawn request.
//!
//! - Dropping a handle (or its [`PrivateDeque`]) withdraws its work hint, declines a pending
//!   request and closes its request cell for good: a later request is answered `Empty` at
//!   once, so no thief waits on a worker that is gone.
//!
//! The answer cell's item is a `crate::sync::UnsafeCell`: the loom models check that the
//! thief's read of it is ordered after the victim's write (Release store / Acquire load of
//! `FILLED`).
//!
//! The owner's latency to answer is the time to its next poll, or until it withdraws its work
//! hint (the thief then takes the request back); the fork-join runtime polls at every fork and
//! in every wait loop.
//!
//! [`block`]: PrivateDeque::block
//! [`unblock`]: PrivateDeque::unblock

use std::cell::{Cell, UnsafeCell as OwnerUnsafeCell};
use std::marker::PhantomData;
use std::mem::{size_of, ManuallyDrop};
use std::ptr::NonNull;

use crossbeam_utils::CachePadded;

use super::chase_lev::Steal;
use crate::sync::{Arc, AtomicBool, AtomicUsize, Backoff, Ordering, UnsafeCell};

/// The request cell holds this when nobody is asking.
const NO_REQUEST: usize = usize::MAX;
/// The request cell holds this while its owner does not poll.
const BLOCKED: usize = usize::MAX - 1;
/// The request cell holds this once its handle is dropped.
const CLOSED: usize = usize::MAX - 2;
/// The request cell holds this while its owner answers a request it has claimed; every value
/// below is a thief's index (a pending request).
const SERVING: usize = usize::MAX - 3;

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

/// Answer states.
const WAITING: usize = 0;
const DECLINED: usize = 1;
const FILLED: usize = 2;

/// One worker's cells. The request cell and the work hint share a line (thieves read the hint
/// and then write the request); the answer cell, written by victims, has its own.
struct Slot<T> {
    request: CachePadded<(AtomicUsize, AtomicBool)>,
    answer: CachePadded<Answer<T>>,
}

struct Answer<T> {
    state: AtomicUsize,
    item: UnsafeCell<Option<T>>,
}

/// The cells that a set of private deques share.
pub struct StealTable<T> {
    slots: Box<[Slot<T>]>,
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

/// One worker's end of the request protocol: its request cell (answered by [`poll`]), its
/// work hint, and its answer cell for its own steals ([`steal_from`]). Not `Sync`: only the
/// owner thread uses it. What "the oldest element" is belongs to the owner's storage, which
/// passes it in as a closure: [`PrivateDeque`] keeps a vector, the fork-join runtime a list
/// of stack frames.
///
/// [`poll`]: StealRequests::poll
/// [`steal_from`]: StealRequests::steal_from
pub struct StealRequests<T> {
    index: usize,
    table: Arc<StealTable<T>>,
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
    /// Loom-only switch for a test of the tests: a thief that does not answer requests while
    /// it waits for its own answer (two such thieves that ask each other wait forever).
    #[cfg(loom)]
    broken_no_poll_while_waiting: Cell<bool>,
    /// Loom-only planted bug: the victim's store of FILLED is Relaxed.
    #[cfg(loom)]
    weak_filled_store: Cell<bool>,
    /// Loom-only planted bug: the thief's load of its answer state is Relaxed.
    #[cfg(loom)]
    weak_filled_load: Cell<bool>,
    /// Loom-only planted bug: dropping the handle leaves its cells as they are.
    #[cfg(loom)]
    broken_drop_keeps_requests: Cell<bool>,
    /// Loom-only planted bug: `unblock` stores "no request" unconditionally, erasing a
    /// pending request when the handle was not blocked.
    #[cfg(loom)]
    broken_unblock_overwrites: Cell<bool>,
    /// Loom-only planted bug: a thief never takes back a request to a victim that stopped
    /// advertising work (it waits for the victim's next poll, however far off).
    #[cfg(loom)]
    broken_never_takes_back: Cell<bool>,
    /// Loom-only planted bug: a victim answers a request without claiming it first (a thief
    /// that takes it back meanwhile loses the element).
    #[cfg(loom)]
    broken_serve_without_claim: Cell<bool>,
    /// Loom-only planted bug: the victim's claim CAS is Relaxed.
    #[cfg(loom)]
    weak_claim: Cell<bool>,
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
    /// takes up the request (which is then taken back) or is gone (dropped); `Retry` if
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
            if self.take_back(victim) {
                g.outstanding = false;
                return Steal::Empty;
            }
            backoff.snooze();
        }
    }

    /// Takes our outstanding request to `victim` back if the victim stopped advertising work:
    /// it ran out, and would decline at its next poll, which may be a whole task away (it
    /// took its last element and runs it). Fails if the victim has claimed the request (its
    /// answer is then on the way). The hint store is eventually visible, so no fence is
    /// needed; the load before the CAS keeps a waiting thief from taking the victim's line
    /// exclusive at every turn while the victim serves a request.
    #[inline]
    fn take_back(&self, victim: usize) -> bool {
        #[cfg(loom)]
        if self.broken_never_takes_back.get() {
            return false;
        }
        let v = &self.table.slots[victim].request;
        !v.1.load(Ordering::Relaxed)
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
                if self.req.take_back(self.victim) {
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

/// A worker's private deque on top of [`StealRequests`]. Not `Sync`: only its owner thread
/// uses it.
pub struct PrivateDeque<T> {
    req: StealRequests<T>,
    /// Live elements are `items[head..]`, oldest first.
    items: OwnerUnsafeCell<Vec<T>>,
    head: Cell<usize>,
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
    fn items(&self) -> &mut Vec<T> {
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
    fn pop_oldest(&self) -> Option<T> {
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

    /// Asks deque `victim` for its oldest element and waits for the answer, answering requests
    /// to this deque meanwhile. `Empty` if the victim advertises no work, declines, stops
    /// advertising while the request waits (it is taken back) or has been dropped, `Retry`
    /// if another thief's request is pending or being answered there (or it is blocked).
    pub fn steal_from(&self, victim: usize) -> Steal<T> {
        self.req.steal_from(victim, || self.poll())
    }
}

/// A deque's elements lent to its owner by [`PrivateDeque::lend`]: a plain stack in the
/// owner's own variable, which pushes and pops without going through the deque. While lent,
/// the deque itself is empty: the owner gives the stack back ([`PrivateDeque::give_back`])
/// before it answers a request or asks the deque anything. Dropping a lent stack drops its
/// elements.
///
/// The stack is the vector's parts (buffer, length, capacity) and the dead prefix's length,
/// not a `Vec`: its own calls that are not inlined (growing, dropping) take them by value, so
/// where its user's calls do not see its address either (the working phase's loop, when the
/// task's `run` is inlined), the compiler can keep its length and buffer in registers across
/// the writes of pushed elements (which, through a `Vec` whose address a call has seen, it
/// must assume could overwrite the length).
pub struct OwnerStack<T> {
    /// The vector's buffer: `ptr[..len]` initialized, of which `ptr[head..len]` are live
    /// (`ptr[..head]` were read out by the deque before it lent them); `cap` elements.
    ptr: NonNull<T>,
    len: usize,
    cap: usize,
    head: usize,
    /// Owns `T`s (for the drop check).
    _own: PhantomData<T>,
}

// SAFETY: the stack owns its buffer and its elements as a `Vec<T>` does (the raw pointer is
// only how it holds the buffer), so it may move to another thread when `T` may, and be shared
// when `T` may: `&OwnerStack` gives no access to the elements at all.
unsafe impl<T: Send> Send for OwnerStack<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for OwnerStack<T> {}

impl<T> Default for OwnerStack<T> {
    /// An empty stack.
    fn default() -> Self {
        OwnerStack::from_vec(Vec::new(), 0)
    }
}

impl<T> OwnerStack<T> {
    /// Takes `v` apart; `v[..head]` are dead (read out).
    #[inline]
    fn from_vec(v: Vec<T>, head: usize) -> Self {
        debug_assert!(head <= v.len());
        let mut v = ManuallyDrop::new(v);
        OwnerStack {
            // A vector's pointer is never null (dangling when it owns no memory).
            ptr: NonNull::new(v.as_mut_ptr()).expect("a vector's pointer is not null"),
            len: v.len(),
            cap: v.capacity(),
            head,
            _own: PhantomData,
        }
    }

    /// Puts the vector back together: `(vector, dead prefix)`. Whoever takes the vector
    /// takes the duty to not drop its dead prefix.
    #[inline]
    fn into_vec(self) -> (Vec<T>, usize) {
        let s = ManuallyDrop::new(self);
        // SAFETY: the parts came from a vector (`from_vec`, `grown`) and were changed only as
        // a vector's `push`/`pop` would change them; `s` is not dropped, so the buffer has
        // one owner again.
        (
            unsafe { Vec::from_raw_parts(s.ptr.as_ptr(), s.len, s.cap) },
            s.head,
        )
    }

    /// Elements in the stack.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len - self.head
    }

    /// Whether the stack is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Pushes `v` as the newest element.
    ///
    /// If growing panics (a capacity overflow), the stack's elements are dropped and it is
    /// left empty (where a `Vec` would keep them): a panic ends a working phase anyway.
    #[inline(always)]
    pub fn push(&mut self, v: T) {
        if self.len == self.cap {
            let grown = std::mem::take(self).grown(1);
            // (The empty stack that `take` left needs no drop.)
            std::mem::forget(std::mem::replace(self, grown));
        }
        // SAFETY: `len < cap` (just checked or made so): the slot is in the buffer and not
        // initialized; it becomes the newest live element.
        unsafe { self.ptr.as_ptr().add(self.len).write(v) };
        self.len += 1;
    }

    /// Pops the newest element.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<T> {
        if self.len > self.head {
            self.len -= 1;
            // SAFETY: `ptr[len]` was the newest live element (`head <= len`); the length
            // now excludes it, so it is read out once.
            Some(unsafe { self.ptr.as_ptr().add(self.len).read() })
        } else {
            None
        }
    }

    /// The stack with room for `extra` more elements, taken and returned by value (see
    /// the type's documentation): its live elements move to a new vector (the dead prefix
    /// is left behind), at least twice as large.
    #[cold]
    #[inline(never)]
    fn grown(self, extra: usize) -> Self {
        let live = self.len();
        let need = live.checked_add(extra).expect("capacity overflow");
        // If this panics (capacity overflow, or allocation failure), `self` still owns
        // everything and drops as usual.
        let mut v = Vec::with_capacity(need.max(self.cap.saturating_mul(2)));
        let (mut old, head) = self.into_vec();
        // SAFETY: `old[head..]` are the live elements; they move (a bitwise copy, the source
        // then forgotten below) into `v`, which has room for `need >= live` and does not
        // overlap `old`. `old`'s length goes to 0, so dropping it frees its buffer and no
        // element (the dead prefix was read out; the live ones now belong to `v`).
        unsafe {
            std::ptr::copy_nonoverlapping(old.as_ptr().add(head), v.as_mut_ptr(), live);
            v.set_len(live);
            old.set_len(0);
        }
        drop(old);
        OwnerStack::from_vec(v, 0)
    }
}

impl<T> Drop for OwnerStack<T> {
    #[inline(always)]
    fn drop(&mut self) {
        /// Out of line, with the parts by value (see the type's documentation).
        #[inline(never)]
        fn drop_parts<T>(s: OwnerStack<T>) {
            let (mut v, h) = s.into_vec();
            // SAFETY: `v[..h]` were read out by the deque before it lent them (dead); drop
            // only the live elements, and leave the vector empty for its own drop.
            unsafe {
                let live = v.len() - h;
                let p = v.as_mut_ptr().add(h);
                v.set_len(0);
                std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(p, live));
            }
        }
        drop_parts(std::mem::take(self));
    }
}

impl<T> PrivateDeque<T> {
    /// Lends the deque's elements to its owner as a plain stack; the deque is empty until
    /// [`give_back`](Self::give_back). The work hint stays as it was: the owner keeps it
    /// meaning "the stack is not empty" ([`advertised`](Self::advertised),
    /// [`set_hint`](Self::set_hint)).
    #[inline]
    pub fn lend(&self) -> OwnerStack<T> {
        OwnerStack::from_vec(std::mem::take(self.items()), self.head.replace(0))
    }

    /// Takes a lent stack back. Elements pushed into the deque meanwhile stay the newest.
    #[inline]
    pub fn give_back(&self, mut s: OwnerStack<T>) {
        let pushed = self.len();
        if s.cap - s.len < pushed {
            // Still inside `s`, whose drop knows its dead prefix (this may panic).
            s = s.grown(pushed);
        }
        let (mut items, head) = s.into_vec();
        let mine = self.items();
        if pushed > 0 {
            // Pushed while lent (not by the working phase): after the lent ones.
            let h = self.head.get();
            // SAFETY: `mine[h..]` are live (`pushed` of them); they move to the end of
            // `items`, which has room for them (grown above), and `mine`'s length then
            // excludes them (its dead prefix was read out already).
            unsafe {
                let live = pushed;
                std::ptr::copy_nonoverlapping(
                    mine.as_ptr().add(h),
                    items.as_mut_ptr().add(items.len()),
                    live,
                );
                items.set_len(items.len() + live);
                mine.set_len(0);
            }
        } else {
            // SAFETY: no live elements; the dead prefix was read out already.
            unsafe { mine.set_len(0) };
        }
        *mine = items;
        self.head.set(head);
    }

    /// Whether a thief waits for an answer: one plain load.
    #[inline(always)]
    pub fn pending(&self) -> bool {
        self.req.pending()
    }

    /// Whether the deque advertises work.
    #[inline(always)]
    pub fn advertised(&self) -> bool {
        self.req.advertised()
    }

    /// Sets the work hint (for an owner whose stack is lent: on when it pushed onto an empty
    /// stack, off when it popped the last element).
    #[inline]
    pub fn set_hint(&self, work: bool) {
        self.req.advertise(work);
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_lent_stack_holds_the_live_elements_and_comes_back_in_order() {
        let d = PrivateDeque::<u32>::set(2);
        for i in 0..4 {
            d[0].push(i);
        }
        assert_eq!(d[0].pop_oldest(), Some(0));
        let mut s = d[0].lend();
        assert!(d[0].is_empty(), "the deque is empty while lent");
        assert_eq!(s.len(), 3);
        assert_eq!(s.pop(), Some(3));
        s.push(7);
        // A push into the deque while the stack is lent stays the newest.
        d[0].push(9);
        d[0].give_back(s);
        assert_eq!(d[0].len(), 4);
        assert_eq!(d[0].pop_oldest(), Some(1));
        let rest: Vec<u32> = std::iter::from_fn(|| d[0].pop()).collect();
        assert_eq!(rest, [9, 7, 2]);
        // Down to the dead prefix and no further.
        let mut s = d[0].lend();
        assert_eq!(s.pop(), None);
        assert!(s.is_empty());
        d[0].give_back(s);
    }

    #[test]
    fn dropping_a_lent_stack_drops_its_live_elements_once() {
        let token = std::rc::Rc::new(());
        let d = PrivateDeque::set(1);
        for _ in 0..5 {
            d[0].push(std::rc::Rc::clone(&token));
        }
        // One given away (a dead prefix in the lent vector), one popped.
        drop(d[0].pop_oldest());
        let mut s = d[0].lend();
        drop(s.pop());
        assert_eq!(std::rc::Rc::strong_count(&token), 4);
        drop(s);
        assert_eq!(std::rc::Rc::strong_count(&token), 1);
        drop(d);
        assert_eq!(std::rc::Rc::strong_count(&token), 1);
    }

    #[test]
    fn a_lent_stack_grows_past_its_capacity_and_keeps_every_element_once() {
        let token = std::rc::Rc::new(());
        let d = PrivateDeque::set(1);
        for i in 0..4u32 {
            d[0].push((i, std::rc::Rc::clone(&token)));
        }
        // A dead prefix of two, then far more pushes than the 64 the vector starts with.
        drop(d[0].pop_oldest());
        drop(d[0].pop_oldest());
        let mut s = d[0].lend();
        for i in 4..1000u32 {
            s.push((i, std::rc::Rc::clone(&token)));
        }
        assert_eq!(s.len(), 998);
        assert_eq!(std::rc::Rc::strong_count(&token), 999);
        for i in (500..1000u32).rev() {
            assert_eq!(s.pop().map(|(i, _)| i), Some(i));
        }
        // Pushes into the deque while lent, more than the stack has room for: the vector
        // grows when it comes back.
        let spare = s.cap - s.len;
        for i in 0..spare as u32 + 10 {
            d[0].push((5000 + i, std::rc::Rc::clone(&token)));
        }
        d[0].give_back(s);
        assert_eq!(d[0].len(), 498 + spare + 10);
        assert_eq!(d[0].pop_oldest().map(|(i, _)| i), Some(2));
        assert_eq!(d[0].pop().map(|(i, _)| i), Some(5000 + spare as u32 + 9));
        drop(d);
        assert_eq!(std::rc::Rc::strong_count(&token), 1);
    }

    #[test]
    fn a_lent_stack_of_zero_sized_elements_counts_them() {
        let d = PrivateDeque::<()>::set(1);
        d[0].push(());
        d[0].push(());
        assert_eq!(d[0].pop_oldest(), Some(()));
        let mut s = d[0].lend();
        for _ in 0..100 {
            s.push(());
        }
        assert_eq!(s.len(), 101);
        assert_eq!(s.pop(), Some(()));
        d[0].give_back(s);
        assert_eq!(d[0].len(), 100);
        let mut s = d[0].lend();
        while s.pop().is_some() {}
        assert!(s.is_empty());
        drop(s);
        // An empty default stack drops nothing.
        drop(OwnerStack::<String>::default());
    }

    #[test]
    fn the_request_cell_sees_what_the_deque_sees() {
        let d = PrivateDeque::<u32>::set(2);
        d[0].unblock();
        d[1].unblock();
        let cell = d[0].table().request_cell(0);
        assert!(!cell.pending() && !d[0].pending());
        d[0].push(1);
        // A thief's request, sent by hand: the cell and the deque both see it pending.
        assert!(d[0].table().slots[0]
            .request
            .0
            .compare_exchange(NO_REQUEST, 1, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok());
        assert!(cell.pending() && d[0].pending());
        d[0].poll();
        assert!(!cell.pending());
    }

    #[test]
    fn owner_is_lifo_and_gives_away_the_oldest() {
        let d = PrivateDeque::<u32>::set(2);
        for i in 0..5 {
            d[0].push(i);
        }
        assert_eq!(d[0].pop(), Some(4));
        assert_eq!(d[0].pop_oldest(), Some(0));
        assert_eq!(d[0].len(), 3);
        assert!(d[0].table().has_work(0));
        assert_eq!(d[0].pop(), Some(3));
        assert_eq!(d[0].pop(), Some(2));
        assert_eq!(d[0].pop(), Some(1));
        assert_eq!(d[0].pop(), None);
        assert!(
            !d[0].table().has_work(0),
            "an empty deque stops advertising"
        );
        assert!(matches!(d[1].steal_from(0), Steal::Empty));
    }

    #[test]
    fn compaction_keeps_order_and_drops_each_element_once() {
        use std::rc::Rc;
        let counter = Rc::new(());
        let d = PrivateDeque::<(usize, Rc<()>)>::set(1);
        for i in 0..1000 {
            d[0].push((i, Rc::clone(&counter)));
        }
        for i in 0..700 {
            assert_eq!(d[0].pop_oldest().unwrap().0, i);
        }
        assert!(d[0].items().len() < 1000, "the dead prefix was compacted");
        assert_eq!(d[0].pop().unwrap().0, 999);
        assert_eq!(Rc::strong_count(&counter), 1 + 299);
        drop(d);
        assert_eq!(Rc::strong_count(&counter), 1);
    }

    #[test]
    fn a_request_is_answered_at_the_next_poll_or_block() {
        let mut d = PrivateDeque::<u32>::set(2);
        let thief = d.pop().unwrap();
        let owner = d.pop().unwrap();
        owner.push(7);
        owner.push(8);
        std::thread::scope(|s| {
            let h = s.spawn(move || thief.steal_from(0));
            // Poll until the request has come and gone.
            loop {
                owner.poll();
                if owner.len() == 1 {
                    break;
                }
                std::thread::yield_now();
            }
            assert!(matches!(h.join().unwrap(), Steal::Success(7)));
        });
        owner.block();
        assert_eq!(owner.pop(), Some(8));
    }

    const PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

    /// Waits (at most [`PATIENCE`]) until a thief's request reaches `owner`.
    fn wait_pending<T>(owner: &StealRequests<T>) -> bool {
        let t = std::time::Instant::now();
        while !owner.pending() {
            if t.elapsed() > PATIENCE {
                return false;
            }
            std::thread::yield_now();
        }
        true
    }

    /// The thief's result from `rx`; if none comes within [`PATIENCE`], declines thief
    /// `thief` of `table` by hand (so that a failing test fails instead of hanging) and
    /// returns `None`.
    fn result_or_free<T, R>(
        rx: &std::sync::mpsc::Receiver<R>,
        table: &StealTable<T>,
        thief: usize,
    ) -> Option<R> {
        match rx.recv_timeout(PATIENCE) {
            Ok(r) => Some(r),
            Err(_) => {
                table.slots[thief]
                    .answer
                    .state
                    .store(DECLINED, Ordering::Release);
                None
            }
        }
    }

    /// The owner takes its last element while a thief's request is pending and runs it
    /// without polling: the thief takes its request back (it would otherwise wait until the
    /// owner's next poll; the test then frees it after 10 s and fails).
    #[test]
    fn a_thief_takes_back_its_request_when_the_owner_runs_out() {
        let mut d = PrivateDeque::<u32>::set(2);
        let thief = d.pop().unwrap();
        let owner = d.pop().unwrap();
        owner.push(1);
        let (asked, got, reopened) = std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::channel();
            s.spawn(move || {
                let _ = tx.send(thief.steal_from(0));
            });
            let asked = wait_pending(&owner.req);
            assert_eq!(owner.pop(), Some(1));
            owner.withdraw_if_empty();
            let got = result_or_free(&rx, owner.table(), 1);
            (asked, got, !owner.req.pending())
        });
        assert!(asked, "the thief never asked");
        assert!(
            matches!(got, Some(Steal::Empty)),
            "the thief waited for the owner's next poll"
        );
        assert!(reopened, "the request cell is open again");
        owner.block();
    }

    /// A panic in the owner's `oldest` closure after it claimed a request: the thief is
    /// declined, the cell reopens, and the next request is answered.
    #[test]
    fn a_panic_while_serving_declines_the_thief_and_reopens_the_cell() {
        let mut reqs = StealRequests::<u32>::set(2);
        let thief = reqs.pop().unwrap();
        let owner = reqs.pop().unwrap();
        owner.advertise(true);
        let (tx, rx) = std::sync::mpsc::channel();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let (panicked, first, reopened, second) = std::thread::scope(|s| {
            let h = s.spawn(move || {
                // (The receiver may be gone if the test failed.)
                let _ = tx.send(thief.steal_from(0, || thief.poll(|| None)));
                // Asks again only when told (or never, if the test failed before).
                wait.recv().ok()?;
                Some(thief.steal_from(0, || thief.poll(|| None)))
            });
            let asked = wait_pending(&owner);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                owner.poll(|| panic!("oldest failed"))
            }));
            let first = result_or_free(&rx, owner.table(), 1);
            // The thief waits for `go`: nobody else writes the cell now.
            let reopened = owner.table().slots[0].request.0.load(Ordering::Relaxed) == NO_REQUEST;
            go.send(()).unwrap();
            if wait_pending(&owner) {
                owner.poll(|| Some(9));
            }
            (asked && r.is_err(), first, reopened, h.join().unwrap())
        });
        assert!(panicked, "the thief asked and the owner's closure panicked");
        assert!(
            matches!(first, Some(Steal::Empty)),
            "the thief was declined"
        );
        assert!(reopened, "the request cell is open again after the panic");
        assert!(matches!(second, Some(Steal::Success(9))));
        owner.block(|| None);
    }

    /// `block` from inside the closure of `poll` panics before it touches the cell (it would
    /// otherwise block a cell that `poll` then reopens), and the thief is declined.
    #[test]
    fn block_inside_a_poll_closure_panics() {
        let mut reqs = StealRequests::<u32>::set(2);
        let thief = reqs.pop().unwrap();
        let owner = reqs.pop().unwrap();
        owner.advertise(true);
        let (tx, rx) = std::sync::mpsc::channel();
        let (asked, msg, got, reopened) = std::thread::scope(|s| {
            s.spawn(move || {
                let _ = tx.send(thief.steal_from(0, || thief.poll(|| None)));
            });
            let asked = wait_pending(&owner);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                owner.poll(|| {
                    owner.block(|| None);
                    Some(1)
                })
            }));
            let got = result_or_free(&rx, owner.table(), 1);
            let e = r.expect_err("a nested block must panic");
            let msg = e
                .downcast_ref::<&str>()
                .map(|m| m.to_string())
                .or_else(|| e.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let reopened = owner.table().slots[0].request.0.load(Ordering::Relaxed) == NO_REQUEST;
            (asked, msg, got, reopened)
        });
        assert!(asked, "the thief never asked");
        assert!(msg.contains("inside the closure"), "{msg}");
        assert!(matches!(got, Some(Steal::Empty)), "the thief was declined");
        assert!(reopened, "the cell is open (not blocked, not claimed)");
        owner.block(|| None);
    }

    #[test]
    #[should_panic(expected = "exceed the limit")]
    fn a_set_of_usize_max_deques_is_rejected() {
        let _ = PrivateDeque::<u64>::set(usize::MAX);
    }

    #[test]
    #[should_panic(expected = "exceed the limit")]
    fn a_set_of_two_to_the_63_deques_is_rejected() {
        let _ = PrivateDeque::<u64>::set(1 << 63);
    }

    #[test]
    #[should_panic(expected = "exceed the limit")]
    fn a_set_of_usize_max_request_handles_is_rejected() {
        let _ = StealRequests::<u64>::set(usize::MAX);
    }

    #[test]
    fn a_dropped_deque_stops_advertising_and_closes_its_cell() {
        let mut d = PrivateDeque::<u32>::set(2);
        let v = d.pop().unwrap();
        let t = d.pop().unwrap();
        v.push(1);
        assert!(t.table().has_work(1));
        drop(v);
        assert!(!t.table().has_work(1));
        assert_eq!(t.table().slots[1].request.0.load(Ordering::Relaxed), CLOSED);
        assert!(matches!(t.steal_from(1), Steal::Empty));
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::thread;

    /// Deques 0 (the owner) and 1 (the thief) of a set of two.
    fn owner_and_thief() -> (PrivateDeque<u32>, PrivateDeque<u32>) {
        let mut d = PrivateDeque::<u32>::set(2);
        let thief = d.pop().unwrap();
        let owner = d.pop().unwrap();
        (owner, thief)
    }

    /// Checks a model whose threads wait by spinning: loom counts every turn as a branch, so
    /// the limit is raised, and a planted-bug twin's endless wait is reported as "maximum
    /// number of branches".
    fn check_spinning(f: impl Fn() + Sync + Send + 'static) {
        let mut builder = loom::model::Builder::new();
        builder.max_branches = 10_000;
        builder.check(f);
    }

    fn taken(v: &mut Vec<u32>, s: Steal<u32>) {
        if let Steal::Success(x) = s {
            v.push(x);
        }
    }

    /// The owner pushes two elements and pops them, polling in between, while a thief asks
    /// once: every element is taken exactly once and the thief is always answered.
    #[test]
    fn loom_owner_answers_a_thief_while_popping() {
        owner_answers_a_thief_while_popping(false, false);
    }

    /// Twin: a victim that stores FILLED Relaxed; the thief's read of the item is unordered.
    #[test]
    #[should_panic(expected = "Causality violation")]
    fn loom_finds_the_unordered_answer_with_a_relaxed_filled_store() {
        owner_answers_a_thief_while_popping(true, false);
    }

    /// Twin: a thief that loads its answer state Relaxed; its read of the item is unordered.
    #[test]
    #[should_panic(expected = "Causality violation")]
    fn loom_finds_the_unordered_answer_with_a_relaxed_filled_load() {
        owner_answers_a_thief_while_popping(false, true);
    }

    fn owner_answers_a_thief_while_popping(weak_store: bool, weak_load: bool) {
        loom::model(move || {
            let (owner, thief) = owner_and_thief();
            owner.req.weak_filled_store.set(weak_store);
            thief.req.weak_filled_load.set(weak_load);
            owner.push(1);
            owner.push(2);
            let h = thread::spawn(move || {
                let mut got = Vec::new();
                taken(&mut got, thief.steal_from(0));
                got
            });
            let mut got = Vec::new();
            owner.poll();
            got.extend(owner.pop());
            owner.poll();
            got.extend(owner.pop());
            owner.block();
            let mut all = h.join().unwrap();
            all.extend(got);
            all.sort_unstable();
            assert_eq!(all, vec![1, 2]);
        });
    }

    /// Two workers with one element each ask each other for work: each answers the other's
    /// request while it waits for its own answer, so neither waits forever, and every element
    /// ends up taken exactly once.
    #[test]
    fn loom_thieves_that_ask_each_other_are_both_answered() {
        mutual_requests(false);
    }

    /// Test of the test above: with thieves that do not answer while they wait, loom finds the
    /// schedule where both ask each other and wait forever (it reports the endless spin).
    #[test]
    #[should_panic(expected = "maximum number of branches")]
    fn loom_finds_the_mutual_wait_without_polling_while_waiting() {
        mutual_requests(true);
    }

    fn mutual_requests(broken: bool) {
        check_spinning(move || {
            let mut d = PrivateDeque::<u32>::set(2);
            let b = d.pop().unwrap();
            let a = d.pop().unwrap();
            a.req.broken_no_poll_while_waiting.set(broken);
            b.req.broken_no_poll_while_waiting.set(broken);
            a.push(10);
            b.push(20);
            let h = thread::spawn(move || {
                let mut got = Vec::new();
                taken(&mut got, b.steal_from(0));
                b.block();
                got.extend(b.pop());
                got
            });
            let mut got = Vec::new();
            taken(&mut got, a.steal_from(1));
            a.block();
            got.extend(a.pop());
            got.extend(h.join().unwrap());
            got.sort_unstable();
            assert_eq!(got, vec![10, 20]);
        });
    }

    /// The owner, which advertises work, is dropped (without polling) while a thief asks it:
    /// the thief is declined or finds the cell closed, and never waits forever.
    fn owner_dropped_while_a_thief_asks(broken: bool) {
        check_spinning(move || {
            let (owner, thief) = owner_and_thief();
            owner.req.broken_drop_keeps_requests.set(broken);
            owner.push(1);
            let h = thread::spawn(move || thief.steal_from(0));
            drop(owner);
            assert!(matches!(h.join().unwrap(), Steal::Empty));
        });
    }

    #[test]
    fn loom_owner_dropped_while_a_thief_asks() {
        owner_dropped_while_a_thief_asks(false);
    }

    /// Twin: a drop that leaves the hint and the request cell as they are; loom finds the
    /// thief that waits forever (the endless spin).
    #[test]
    #[should_panic(expected = "maximum number of branches")]
    fn loom_finds_the_endless_wait_when_a_drop_keeps_requests() {
        owner_dropped_while_a_thief_asks(true);
    }

    /// The owner of one element resumes (unblocks) without having paused, answers at a
    /// poll, then pauses (blocks), while a thief asks: the thief is answered or refused, never
    /// left waiting, and the element is taken once. This is the task pool's `resume`/`pause`.
    fn unblock_while_a_thief_asks(broken: bool) {
        check_spinning(move || {
            let (owner, thief) = owner_and_thief();
            owner.req.broken_unblock_overwrites.set(broken);
            owner.push(1);
            let h = thread::spawn(move || {
                let mut v = Vec::new();
                taken(&mut v, thief.steal_from(0));
                v
            });
            owner.unblock();
            owner.poll();
            owner.block();
            let mut all: Vec<u32> = owner.pop().into_iter().collect();
            all.extend(h.join().unwrap());
            assert_eq!(all, vec![1]);
        });
    }

    #[test]
    fn loom_unblock_keeps_a_pending_request() {
        unblock_while_a_thief_asks(false);
    }

    /// Twin: an `unblock` that overwrites the cell erases the thief's request; loom finds the
    /// thief that waits forever.
    #[test]
    #[should_panic(expected = "maximum number of branches")]
    fn loom_finds_the_lost_request_when_unblock_overwrites() {
        unblock_while_a_thief_asks(true);
    }

    /// The owner takes its last element and runs it without polling again (it withdrew its
    /// work hint) while a thief asks: the thief takes its request back instead of waiting for
    /// the owner's next poll. This is a worker of the task pool starting a long task.
    fn thief_takes_back_its_request(broken: bool) {
        check_spinning(move || {
            let (owner, thief) = owner_and_thief();
            thief.req.broken_never_takes_back.set(broken);
            owner.push(1);
            let h = thread::spawn(move || thief.steal_from(0));
            let mine = owner.pop();
            owner.withdraw_if_empty();
            // "Runs the task": no poll until the thief is done.
            assert!(matches!(h.join().unwrap(), Steal::Empty));
            assert_eq!(mine, Some(1));
            owner.block();
        });
    }

    #[test]
    fn loom_a_thief_takes_back_its_request_to_a_victim_that_ran_out() {
        thief_takes_back_its_request(false);
    }

    /// Twin: a thief that never takes its request back waits for a poll that comes only after
    /// the thief is done; loom finds the endless spin.
    #[test]
    #[should_panic(expected = "maximum number of branches")]
    fn loom_finds_the_endless_wait_without_taking_back() {
        thief_takes_back_its_request(true);
    }

    /// The owner runs out (withdrawing its hint), gets a new element and polls, while a thief
    /// that asked before sees the hint down and takes its request back: either the owner
    /// claims the request and answers it, or the thief withdraws it and the owner keeps the
    /// element; no element is lost or handed out twice.
    fn take_back_races_an_answer(broken: bool) {
        loom::model(move || {
            let (owner, thief) = owner_and_thief();
            owner.req.broken_serve_without_claim.set(broken);
            owner.push(1);
            let h = thread::spawn(move || {
                let mut v = Vec::new();
                taken(&mut v, thief.steal_from(0));
                v
            });
            let mut all: Vec<u32> = owner.pop().into_iter().collect();
            owner.withdraw_if_empty();
            owner.push(2);
            owner.poll();
            owner.block();
            all.extend(owner.pop());
            all.extend(h.join().unwrap());
            all.sort_unstable();
            assert_eq!(all, vec![1, 2], "an element was lost or taken twice");
        });
    }

    #[test]
    fn loom_a_take_back_and_an_answer_never_both_happen() {
        take_back_races_an_answer(false);
    }

    /// Twin: a victim that answers without claiming the request (load, answer, plain store)
    /// writes the element into the cell of a thief that has taken its request back; loom
    /// finds the lost element.
    #[test]
    #[should_panic(expected = "an element was lost or taken twice")]
    fn loom_finds_the_lost_element_when_serving_without_a_claim() {
        take_back_races_an_answer(true);
    }

    /// The ABA case of the claim: the owner V loads a thief's request, the thief takes it
    /// back (it saw V's hint down), steals an element from W, and asks V again; V's claim CAS
    /// then succeeds on the new request. V's write of its answer must follow the thief's read
    /// of W's element from the same answer cell: the claim CAS acquires the new request.
    fn claim_of_a_renewed_request(weak: bool) {
        let mut builder = loom::model::Builder::new();
        builder.max_branches = 100_000;
        builder.preemption_bound = Some(3);
        builder.check(move || {
            let mut d = PrivateDeque::<u32>::set(3);
            let w = d.pop().unwrap();
            let t = d.pop().unwrap();
            let v = d.pop().unwrap();
            v.req.weak_claim.set(weak);
            v.push(1);
            w.push(5);
            let done = Arc::new(AtomicBool::new(false));
            let done2 = Arc::clone(&done);
            let hw = thread::spawn(move || {
                while !done2.load(Ordering::Acquire) {
                    w.poll();
                    thread::yield_now();
                }
                w.block();
                w.pop()
            });
            let ht = thread::spawn(move || {
                let mut got = Vec::new();
                taken(&mut got, t.steal_from(0));
                taken(&mut got, t.steal_from(2));
                taken(&mut got, t.steal_from(0));
                done.store(true, Ordering::Release);
                got
            });
            let mut all: Vec<u32> = v.pop().into_iter().collect();
            v.withdraw_if_empty();
            v.push(2);
            v.poll();
            v.block();
            all.extend(v.pop());
            all.extend(ht.join().unwrap());
            all.extend(hw.join().unwrap());
            all.sort_unstable();
            assert_eq!(all, vec![1, 2, 5], "an element was lost or taken twice");
        });
    }

    #[test]
    fn loom_the_claim_of_a_renewed_request_follows_the_thiefs_last_read() {
        claim_of_a_renewed_request(false);
    }

    /// Twin: a Relaxed claim CAS; loom finds the answer's write racing the thief's read of
    /// the element W handed over before.
    #[test]
    #[should_panic(expected = "Causality violation")]
    fn loom_finds_the_racing_answer_with_a_relaxed_claim() {
        claim_of_a_renewed_request(true);
    }

    /// Two thieves race for one request cell; the loser gets `Retry`, the winner an answer,
    /// and the element is taken once.
    #[test]
    fn loom_two_thieves_one_victim() {
        loom::model(|| {
            let mut d = PrivateDeque::<u32>::set(3);
            let t2 = d.pop().unwrap();
            let t1 = d.pop().unwrap();
            let owner = d.pop().unwrap();
            owner.push(5);
            let h1 = thread::spawn(move || {
                let mut v = Vec::new();
                taken(&mut v, t1.steal_from(0));
                v
            });
            let h2 = thread::spawn(move || {
                let mut v = Vec::new();
                taken(&mut v, t2.steal_from(0));
                v
            });
            owner.poll();
            let mut all: Vec<u32> = owner.pop().into_iter().collect();
            owner.block();
            all.extend(h1.join().unwrap());
            all.extend(h2.join().unwrap());
            assert_eq!(all, vec![5]);
        });
    }
}
