//! Private deques with steal requests (Acar, Charguéraud & Rainey, "Scheduling parallel
//! programs by work stealing with private deques", PPoPP 2013).
//!
//! Each worker's deque is private: the owner pushes and pops without atomics or fences. A
//! thief does not touch another worker's deque; it asks for work by writing its index into the
//! victim's *request cell* (a CAS from "no request"), then waits on its own *answer cell*.
//! The owner looks at its request cell at every [`PrivateDeque::poll`] (one plain load when
//! nobody asks) and, when asked, hands its oldest element to the thief through the thief's
//! answer cell, or declines when it has none. This is the private/public split of Korch &
//! Rauber, "A Comparison of Task Pools for Dynamic Load Balancing of Irregular Algorithms"
//! (2002), §3.3, pools dq7/dq8, taken to the limit: the "public queue" is the one answer cell
//! per request, filled on demand, so the owner pays for sharing only when someone is hungry.
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

mod deque;
mod owner_stack;
mod steal_requests;
mod table;

#[cfg(all(test, loom))]
mod loom_models;
#[cfg(all(test, not(loom)))]
mod tests;

pub use deque::PrivateDeque;
pub use owner_stack::OwnerStack;
pub use steal_requests::StealRequests;
pub use table::{RequestCell, StealTable};
