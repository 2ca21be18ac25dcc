//! What the front ends share about panics: the message of a payload, for reports that cross a
//! process or thread boundary as text (a distributed phase's `RankPanicked`, a worker's
//! recorded panic); and dropping a payload that is not resumed.
//!
//! A panic payload is a user value, and its `Drop` may panic too. Every payload that the
//! runtime drops (the second panic of a join, a scope or a phase, where the first is kept)
//! goes through [`drop_payload`]: dropped in the open, such a panic would escape the code that
//! ends a scope (whose waiter then hangs, or aborts); dropped during the unwind of the kept
//! payload, it would abort the process.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::sync::{lock, Mutex};

/// A panic's payload, as `catch_unwind` returns it.
pub(crate) type Payload = Box<dyn Any + Send>;

/// The message of a panic payload: its text when it is a `&str` or a `String`, else a line
/// saying that it is not a string.
// Only the distributed phase reports panics as text today.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) fn panic_text(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a payload that is not a string".to_string()
    }
}

/// Drops a payload that will not be resumed, never unwinding: its destructor runs under
/// `catch_unwind`, and so does the destructor of the payload of a panic from that destructor,
/// and so on, up to [`DROP_DEPTH`] payloads deep; a payload deeper than that is leaked (a
/// chain of destructors that keep panicking need not end). Call it before resuming another
/// payload, not during that unwind.
pub(crate) fn drop_payload(p: Payload) {
    let mut p = p;
    for _ in 0..DROP_DEPTH {
        match catch_unwind(AssertUnwindSafe(move || drop(p))) {
            Ok(()) => return,
            Err(again) => p = again,
        }
    }
    std::mem::forget(p);
}

/// How many payloads deep [`drop_payload`] follows destructors that panic.
const DROP_DEPTH: usize = 8;

/// Keeps `p` in `slot` if it holds no payload yet; otherwise drops `p` with
/// [`drop_payload`], after the lock is released (the destructor is user code).
pub(crate) fn keep_first(slot: &Mutex<Option<Payload>>, p: Payload) {
    let lost = {
        let mut slot = lock(slot);
        match *slot {
            None => {
                *slot = Some(p);
                None
            }
            Some(_) => Some(p),
        }
    };
    if let Some(p) = lost {
        drop_payload(p);
    }
}

/// The first of two outcomes' payloads to resume, the other one's (if any) dropped with
/// [`drop_payload`] first, so that its drop neither escapes nor runs during the unwind.
#[inline]
pub(crate) fn first_of(first: Option<Payload>, second: Option<Payload>) -> Option<Payload> {
    match (first, second) {
        (Some(p), Some(q)) => {
            drop_payload(q);
            Some(p)
        }
        (p, q) => p.or(q),
    }
}
