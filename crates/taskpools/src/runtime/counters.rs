//! Per-worker counters of a runtime: what each worker did for fork-join and broadcasts since
//! the runtime started. Each counter has one writer (its worker), which bumps it with a plain
//! load and store (no read-modify-write), only on the paths that look for work elsewhere —
//! never on a join's fast path. Readers on other threads see a recent value.

use crate::sync::{AtomicU64, Ordering};

/// What one worker of a [`Runtime`](super::Runtime) has done since the runtime started
/// ([`Runtime::worker_counters`](super::Runtime::worker_counters)). A working phase's own
/// counters (tasks, puts, steals between its queues) are in its
/// [`RunReport`](crate::RunReport).
///
/// ```
/// let rt = taskpools::Runtime::new(2)?;
/// rt.scope(|s| (0..100).for_each(|_| s.spawn(|_| ())));
/// let c = rt.worker_counters();
/// assert_eq!(c.len(), 2); // one per worker
/// let from_outside: u64 = c.iter().map(|w| w.injected).sum();
/// assert!(from_outside >= 1); // the scope itself was handed over from this thread
/// assert!(c.iter().all(|w| w.place_local == 0)); // no places here
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerCounters {
    /// Rounds over the other workers' deques in search of a fork-join job.
    pub steal_rounds: u64,
    /// Fork-join jobs taken from another worker's deque.
    pub steals: u64,
    /// Jobs taken from the injector: installs, joins and spawns from outside the runtime.
    pub injected: u64,
    /// Broadcast shares run on this worker other than the broadcaster's own (one per working
    /// phase this worker joined at another's request).
    pub shares: u64,
    /// Times the worker went to sleep for lack of work.
    pub sleeps: u64,
    /// Places only: tasks taken from this worker's own place's deque (and its own tasks that
    /// a deep wait took back from any place's deque).
    pub place_local: u64,
    /// Places only: tasks taken from another place's deque and run (remote tasks). Every
    /// task that runs from a place deque counts once, in `place_local` or here.
    pub place_remote: u64,
    /// Places only: tasks a steal-half moved from another place's deque to this worker's
    /// (they count in `place_local` of whoever runs them).
    pub place_moved: u64,
    /// Places only: steals from another place's deque (each takes one task, or half the
    /// victim's with steal-half).
    pub place_steals: u64,
    /// Places only: hinted tasks of another place left alone by the steal policy.
    pub declined: u64,
}

#[derive(Default)]
pub(crate) struct Counters {
    steal_rounds: AtomicU64,
    steals: AtomicU64,
    injected: AtomicU64,
    shares: AtomicU64,
    sleeps: AtomicU64,
    place_local: AtomicU64,
    place_remote: AtomicU64,
    place_moved: AtomicU64,
    place_steals: AtomicU64,
    declined: AtomicU64,
}

/// One writer: a load and a store, not an atomic add.
#[inline]
fn bump(c: &AtomicU64) {
    c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

impl Counters {
    #[inline]
    pub(crate) fn steal_round(&self) {
        bump(&self.steal_rounds);
    }
    #[inline]
    pub(crate) fn steal(&self) {
        bump(&self.steals);
    }
    #[inline]
    pub(crate) fn injected(&self) {
        bump(&self.injected);
    }
    #[inline]
    pub(crate) fn share(&self) {
        bump(&self.shares);
    }
    #[inline]
    pub(crate) fn sleep(&self) {
        bump(&self.sleeps);
    }

    #[inline]
    pub(crate) fn place_local(&self) {
        bump(&self.place_local);
    }
    #[inline]
    pub(crate) fn place_steal(&self, moved: u64) {
        bump(&self.place_remote);
        bump(&self.place_steals);
        let c = &self.place_moved;
        c.store(c.load(Ordering::Relaxed) + moved, Ordering::Relaxed);
    }
    #[inline]
    pub(crate) fn declined(&self) {
        bump(&self.declined);
    }

    pub(crate) fn snapshot(&self) -> WorkerCounters {
        WorkerCounters {
            steal_rounds: self.steal_rounds.load(Ordering::Relaxed),
            steals: self.steals.load(Ordering::Relaxed),
            injected: self.injected.load(Ordering::Relaxed),
            shares: self.shares.load(Ordering::Relaxed),
            sleeps: self.sleeps.load(Ordering::Relaxed),
            place_local: self.place_local.load(Ordering::Relaxed),
            place_remote: self.place_remote.load(Ordering::Relaxed),
            place_moved: self.place_moved.load(Ordering::Relaxed),
            place_steals: self.place_steals.load(Ordering::Relaxed),
            declined: self.declined.load(Ordering::Relaxed),
        }
    }
}
