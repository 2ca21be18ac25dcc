//! Tasks handed to a running working phase outside its pool: the distributed phase's agent
//! delivers tasks received from other processes here, and a phase with place hints keeps one
//! inbox per place (the `hints` module).
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
//! inbox and every worker idle. A worker leaves the idle count (or has not joined it yet)
//! *before* it takes tasks out of the inbox,
//! so a reader that sees the inbox empty and then the idle count full knows that the worker
//! which emptied it (if any) has since finished the tasks and become idle again; and by the
//! termination argument of the `idle` module no task is then left in the pool.

use std::collections::VecDeque;

use crossbeam_utils::CachePadded;

use super::Coordinator;
#[cfg(all(loom, test))]
use super::Remote;
use crate::pool::{PutOutcome, TaskPool};
use crate::sync::{lock, AtomicUsize, Mutex, Ordering};

pub(crate) struct Inbox<T> {
    tasks: Mutex<VecDeque<T>>,
    /// Mirror of `tasks.len()`, read without the lock.
    len: CachePadded<AtomicUsize>,
    /// Test of the loom test: deliver without the wake-up.
    #[cfg(all(loom, test))]
    pub(crate) broken_wake: bool,
}

impl<T: Send> Inbox<T> {
    pub(crate) fn new() -> Self {
        Inbox {
            tasks: Mutex::new(VecDeque::new()),
            len: CachePadded::new(AtomicUsize::new(0)),
            #[cfg(all(loom, test))]
            broken_wake: false,
        }
    }

    /// Hands `tasks` to the phase coordinated by `coord` (called outside its workers).
    #[cfg_attr(not(any(feature = "mpi", all(loom, test))), allow(dead_code))]
    pub(crate) fn deliver(&self, tasks: impl IntoIterator<Item = T>, coord: &Coordinator) {
        {
            let mut g = lock(&self.tasks);
            g.extend(tasks);
            self.len.store(g.len(), Ordering::SeqCst);
        }
        #[cfg(all(loom, test))]
        if self.broken_wake {
            return;
        }
        coord.wake_for_incoming();
    }

    /// Adds one task from a worker of the phase, without waking anyone; returns whether the
    /// inbox was empty (the caller then signals by the phase's wake-up policy, after this
    /// `SeqCst` store of the length, like a put into a shared queue).
    pub(crate) fn push(&self, task: T) -> bool {
        let mut g = lock(&self.tasks);
        g.push_back(task);
        self.len.store(g.len(), Ordering::SeqCst);
        g.len() == 1
    }

    /// Whether tasks wait (idle workers look here).
    #[inline]
    pub(crate) fn has_tasks(&self) -> bool {
        self.len.load(Ordering::SeqCst) > 0
    }

    /// Moves the oldest waiting task into `pool` through a worker's `local`; returns whether
    /// there was one.
    pub(crate) fn take_oldest_into<P: TaskPool<T>>(
        &self,
        pool: &P,
        local: &mut P::Local,
        coord: &Coordinator,
    ) -> bool {
        if !self.has_tasks() {
            return false;
        }
        let task = {
            let mut g = lock(&self.tasks);
            let t = g.pop_front();
            self.len.store(g.len(), Ordering::SeqCst);
            t
        };
        match task {
            Some(t) => {
                if let PutOutcome::Shared { was_empty } = pool.put(local, t) {
                    coord.on_shared_put(was_empty);
                }
                true
            }
            None => false,
        }
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
    #[cfg_attr(not(any(feature = "mpi", all(loom, test))), allow(dead_code))]
    pub(crate) fn quiescent(&self, coord: &Coordinator, workers: usize) -> bool {
        !self.has_tasks() && coord.idle_count() == workers
    }
}

/// A phase fed only through an inbox and ended from outside (the loom models' remote; the
/// distributed phase adds steal requests on top).
#[cfg(all(loom, test))]
pub(crate) struct InboxOnly<T>(pub(crate) Inbox<T>);

#[cfg(all(loom, test))]
impl<T: Send> Remote<T> for InboxOnly<T> {
    const EXTERNAL_END: bool = true;
    fn between_tasks<P: TaskPool<T>>(
        &self,
        _: usize,
        _: &P,
        _: &mut P::Local,
        _: &mut crate::stats::WorkerStats,
        _: &Coordinator,
    ) {
    }
    fn has_incoming(&self) -> bool {
        self.0.has_tasks()
    }
    fn take_incoming<P: TaskPool<T>>(
        &self,
        _: usize,
        pool: &P,
        local: &mut P::Local,
        coord: &Coordinator,
    ) {
        let _ = self.0.take_into(pool, local, coord);
    }
    fn all_idle(&self) {}
    type Hints<'a>
        = crate::phase::NoHints
    where
        Self: 'a;
    fn hints(&self) -> crate::phase::NoHints {
        crate::phase::NoHints
    }
}
