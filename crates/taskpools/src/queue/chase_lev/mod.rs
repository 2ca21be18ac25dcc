//! The Chase–Lev work-stealing deque (Chase & Lev, SPAA 2005; Papakonstantinou, PARTEE (2015),
//! §3.2.1 "DCWQ"), with the memory orderings of Lê, Pop, Cohen and Zappa Nardelli, "Correct
//! and Efficient Work-Stealing for Weak Memory Models" (PPoPP 2013), and the growable circular
//! array of the original paper (PARTEE's version has a fixed size).
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

mod buffer;
mod inner;
mod stealer;
mod worker;

#[cfg(all(test, loom))]
mod loom_models;
#[cfg(all(test, not(loom)))]
mod tests;

pub use buffer::{max_capacity, MIN_CAPACITY};
#[cfg(all(loom, test))]
pub(crate) use inner::Mutation;
pub use stealer::{Steal, Stealer};
#[cfg(all(loom, test))]
pub(crate) use worker::deque_with_mutation;
pub use worker::{deque, Worker};
