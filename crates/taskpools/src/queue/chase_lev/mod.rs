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
//! Old buffers are freed by the owner once no thief can still read them. A thief's fast path
//! does no read-modify-write for this: each thread has a *hazard record* of its own (module
//! `hazard`: a cache-line-aligned `deque` word in a process-wide list that only grows; a
//! thread takes a record at its first steal, reusing one that a finished thread gave back).
//!
//! * Thief (`Stealer::steal`): store the deque's id (the address of its shared state) into its
//!   record (`Release`), load `top`, run the steal's `SeqCst` fence (the one the Dekker pair
//!   with `pop` needs anyway), load `bottom`, load the buffer pointer, read the slot, then
//!   store 0 into its record (`Release`), and only then CAS `top`. A thief pays two plain
//!   stores to a line that no other thief writes.
//! * Owner (`Worker::reclaim`, after a growth has stored the new pointer, and again at each
//!   pop that finds the deque empty while buffers are retired): run a `SeqCst` fence, read
//!   every record (`Acquire`); if none holds this deque's id, free every retired buffer, else
//!   keep them for the next check. The owner never waits.
//!
//! Why no thief reads a freed buffer: take a thief's fence `F_t` and the owner's fence `F_o`,
//! which the `SeqCst` total order puts one before the other. If `F_o` comes first, the
//! owner's store of the current pointer (sequenced before `F_o`) is visible to the thief's
//! pointer load (sequenced after `F_t`): the thief loads the current buffer or a newer one,
//! never one retired before `F_o`. If `F_t` comes first, the owner's read of the thief's record
//! (after `F_o`) returns the announcement or a later store of that record (the same rule,
//! for the record: the announcement is sequenced before `F_t`), and the record's list entry
//! is likewise visible (published with a release CAS before the announcement). Reading the
//! announcement, the owner keeps the buffers; reading a later store, which is a release
//! store made after the thief's last read (the withdrawal, a later announcement, or a store
//! by the next thread to take the record, which acquired it after the previous thread's
//! release), the owner acquires it, so the thief's read happens before the free. The same
//! argument covers every buffer retired before `F_o`, so the owner frees them all at once.
//! The loom models check this with the free poisoning the buffer (a late read is a detected
//! race); each of the announcement, the owner's fence and the release withdrawal has a
//! planted-bug twin that must fail.
//!
//! Why a thief cannot skip even this when no growth is in progress: a thief that writes
//! nothing between loading the pointer and reading through it leaves the owner no way to tell
//! it from no thief at all; stalled there, it would read whatever the owner freed meanwhile.
//! Some per-steal trace is the price of freeing at all; a thread-private store is the cheapest
//! one, where a shared counter (this deque's design until issue 40) costs two contended
//! read-modify-writes per steal and crossbeam-deque's epoch pin a thread-local store and a
//! full fence of its own.
//!
//! A thread whose thread-locals are being destroyed has no record: its steals register in
//! the `readers` counter instead (an `Acquire` RMW before the pointer load, a `Release` RMW
//! after the last read). The owner, after its scan, does an `AcqRel` RMW on `readers`
//! (`fetch_add(0)`) and frees only if it reads 0: the RMWs on `readers` are totally ordered,
//! so a thief registering after the owner's RMW reads from it (or a later RMW of its release
//! sequence) and so loads the current pointer, and a thief registering before it has also
//! left before it (the count read is 0), its releasing exit happening before the free.
//!
//! Memory stays bounded: if a thief is announced at every check, retired buffers wait for a
//! later check or for the drop. Because capacities double, the retired buffers together are
//! always smaller than the current one: the memory in use stays below twice the current
//! buffer. A thief is announced only inside one steal (a bounded number of its own steps),
//! so the first check after every thief has left frees them. The deque never shrinks.
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
mod hazard;
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
