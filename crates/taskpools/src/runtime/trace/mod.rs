//! Schedule traces: what each worker ran, from where, and when it slept — recorded per worker
//! into its own bounded buffer (no shared atomics, no locks), off unless the runtime was
//! built with [`RuntimeBuilder::trace`](super::RuntimeBuilder::trace), and collected with
//! [`Runtime::take_trace`](super::Runtime::take_trace).
//!
//! A job is anything a worker takes from a queue and runs: a stolen or popped `join` half, a
//! `scope` spawn, a data-flow task, an installed closure, a working phase's share. A `join`
//! whose second half its own worker takes back runs inline and is not an event (it costs a
//! few nanoseconds; recording it would cost more). Jobs nest on a worker when a job waits
//! (a `join` or `scope` inside it runs other jobs meanwhile), so a worker's events form a
//! well-bracketed sequence of starts and ends.
//!
//! Inside a working phase (the task pools' `run`), each task is a job too, nested in the
//! worker's share: found in the pool ([`Source::Pool`]) or right after a steal
//! ([`Source::PoolSteal`], naming the victim and the tasks moved); each `put` is a
//! [`EventKind::Put`] (on `private-deque`, stamped when the putting task ends or calls
//! `Ctx::queued`, where its puts become reachable to thieves), and the time a worker spends
//! without a task of the phase (spinning or asleep) is bracketed by [`EventKind::Idle`] and
//! [`EventKind::Resume`].
//!
//! Steal attempts that find nothing (another worker's deque or a phase's queue, another
//! place's deque) are counted and recorded as one [`EventKind::Misses`] per search, so a
//! worker that searches for long does not fill its buffer; a successful steal is the job's
//! start, naming its victim.
//!
//! Data-flow tasks add their ids ([`EventKind::Task`]), their dependences and releases
//! ([`EventKind::Dep`], [`EventKind::Ready`]), the spawn tree ([`EventKind::Spawn`], root
//! scopes included) and their waits for children ([`EventKind::Wait`], [`EventKind::Sync`]),
//! from which [`Trace::task_graph`] builds the task graph and its critical path.
//!
//! Events are stamped with the cheapest clock the machine offers that is consistent across
//! CPUs: the time-stamp counter where the kernel uses it as its clock, else `Instant`.
//!
//! When a worker's buffer is full it stops recording and counts what it dropped; the trace
//! says so ([`Trace::dropped`]). Room is kept for the ends of the jobs it recorded, so the
//! brackets stay balanced.

mod chrome;
mod events;
mod graph;
mod record;
#[cfg(test)]
mod tests;

pub use chrome::wrap_chrome_events;
pub use events::{Event, EventKind, Source, Trace};
pub use graph::{TaskGraph, TaskNode};
pub(crate) use record::{Clock, TraceBuf};
