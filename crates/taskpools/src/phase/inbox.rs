//! Tasks handed to a running working phase from outside its workers (the distributed phase's
//! agent delivers tasks received from other processes here).
//!
//! # No lost wake-up
//!
//! Idle workers treat the inbox like one more shared queue: before they sleep they register
//! in `sleepers`, issue a `SeqCst` fence and look at `len` again (the `idle` module's
//! protocol). [`Inbox::deliver`] stores the new `len`, issues a `SeqCst` fence and then reads
//! `sleepers`. By the fences, either the sleeper sees the tasks or the deliverer sees the
//! sleeper and wakes it under the lock the sleeper holds from its check to its wait.
//!
//! # Quiescence
//!
//! [`Inbox::quiescent`] tells the deliverer that the phase holds no task: nothing in the
//! inbox and every worker idle. A worker leaves the idle count *before* it empties the inbox,
//! so a reader that sees the inbox empty and then the idle count full knows that the worker
//! which emptied it (if any) has since finished the tasks and become idle again; and by the
//! termination argument of the `idle` module no task is then left in the pool.

use crossbeam_utils::CachePadded;

use super::Coordinator;
#[cfg(loom)]
use super::Remote;
use crate::pool::{PutOutcome, TaskPool};
use crate::sync::{lock, AtomicUsize, Mutex, Ordering};

pub(crate) struct Inbox<T> {
    tasks: Mutex<Vec<T>>,
    /// Mirror of `tasks.len()`, read without the lock.
    len: CachePadded<AtomicUsize>,
    /// Test of the loom test: deliver without the wake-up.
    #[cfg(loom)]
    pub(crate) broken_wake: bool,
}

impl<T: Send> Inbox<T> {
    pub(crate) fn new() -> Self {
        Inbox {
            tasks: Mutex::new(Vec::new()),
            len: CachePadded::new(AtomicUsize::new(0)),
            #[cfg(loom)]
            broken_wake: false,
        }
    }

    /// Hands `tasks` to the phase coordinated by `coord` (called outside its workers).
    pub(crate) fn deliver(&self, tasks: impl IntoIterator<Item = T>, coord: &Coordinator) {
        {
            let mut g = lock(&self.tasks);
            g.extend(tasks);
            self.len.store(g.len(), Ordering::SeqCst);
        }
        #[cfg(loom)]
        if self.broken_wake {
            return;
        }
        coord.wake_for_incoming();
    }

    /// Whether tasks wait (idle workers look here).
    #[inline]
    pub(crate) fn has_tasks(&self) -> bool {
        self.len.load(Ordering::SeqCst) > 0
    }

    /// Moves the waiting tasks into `pool` through a worker's `local` (called by a worker
    /// that has left the idle count).
    pub(crate) fn take_into<P: TaskPool<T>>(
        &self,
        pool: &P,
        local: &mut P::Local,
        coord: &Coordinator,
    ) -> usize {
        if !self.has_tasks() {
            return 0;
        }
        let tasks = {
            let mut g = lock(&self.tasks);
            self.len.store(0, Ordering::SeqCst);
            std::mem::take(&mut *g)
        };
        let n = tasks.len();
        for t in tasks {
            if let PutOutcome::Shared { was_empty } = pool.put(local, t) {
                coord.on_shared_put(was_empty);
            }
        }
        n
    }

    /// No task in the phase: the inbox empty, then every one of `workers` idle (in this
    /// order; see the module docs).
    pub(crate) fn quiescent(&self, coord: &Coordinator, workers: usize) -> bool {
        !self.has_tasks() && coord.idle_count() == workers
    }
}

/// A phase fed only through an inbox and ended from outside (the loom models' remote; the
/// distributed phase adds steal requests on top).
#[cfg(loom)]
pub(crate) struct InboxOnly<T>(pub(crate) Inbox<T>);

#[cfg(loom)]
impl<T: Send> Remote<T> for InboxOnly<T> {
    const EXTERNAL_END: bool = true;
    fn between_tasks<P: TaskPool<T>>(
        &self,
        _: &P,
        _: &mut P::Local,
        _: &mut crate::stats::WorkerStats,
        _: &Coordinator,
    ) {
    }
    fn has_incoming(&self) -> bool {
        self.0.has_tasks()
    }
    fn take_incoming<P: TaskPool<T>>(&self, pool: &P, local: &mut P::Local, coord: &Coordinator) {
        let _ = self.0.take_into(pool, local, coord);
    }
    fn all_idle(&self) {}
}
