//! Manber's concurrent pool of arbitrary elements, as Kotz and Ellis, "Evaluation of Concurrent
//! Pools" (1989), evaluate it: one segment per participant, steal-half, and three ways to search
//! for a non-empty segment (tree, linear, random).
//!
//! * **Segments**: a participant adds to and removes from its own segment (a `VecDeque` at the
//!   back, O(1)) without touching the others. When its segment is empty it searches; on finding
//!   a non-empty segment it takes the oldest ⌈n/2⌉ elements into its own segment. The split is
//!   **O(stolen)** (elements are moved, not relinked), and a thief never holds two segment
//!   locks at once, so two thieves stealing from each other cannot deadlock.
//! * **Search** ([`Search`]): Manber's tree of round counters (`tree.rs`), linear from the
//!   segment where it last found elements around the ring, or random.
//! * **Exhaustion without livelock** (Kotz and Ellis §3.2): when every active participant is
//!   searching, none can add, so an empty pool stays empty. After a pass that found nothing, a
//!   searcher checks `searching == active`, examines every segment under its lock, and checks both
//!   again along with `version`, which every successful steal bumps *while it still holds the
//!   victim's lock* (so elements in flight are seen). Unchanged → the pool was empty while everyone
//!   searched: every searcher gets [`Removed::Exhausted`]. An element that exists is either in a
//!   segment (the scan sees it) or in the hands of a participant that left the search (the version
//!   or the count changes), so there is no false "exhausted".
//! * **Waiting mode** (Kotz and Ellis's future work): a remover that found nothing registers a
//!   request and parks; an `add` that sees a request hands its element straight to the waiter.
//!   Waiters also wake on a timeout to search again, so an element added just before the
//!   request was registered is not stranded.
//! * **Remote-cost emulation**: an optional busy-wait on every access to a non-local segment
//!   and to a tree node, like Kotz and Ellis's adjustable penalty.

#[cfg(all(test, loom))]
mod loom_empty;
#[cfg(all(test, loom))]
mod loom_tests;
mod search;
mod segments;
mod task_pool;
#[cfg(all(test, not(loom)))]
mod tests;
mod tree;

pub use search::Search;
pub use segments::{ConcurrentConfig, ConcurrentPool, Participant, PoolStats, Removed};
pub use task_pool::StealHalfPool;
