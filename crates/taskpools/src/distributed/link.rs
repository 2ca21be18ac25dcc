//! The workers' side of a distributed phase: where a rank's workers and its agent meet. A busy
//! worker answers a steal request from another rank between two tasks (steal-half); idle
//! workers take the tasks received from other ranks out of the inbox; the last worker to go
//! idle wakes the agent.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread::Thread;

use crossbeam_utils::CachePadded;

use crate::phase::inbox::Inbox;
use crate::phase::{Coordinator, Remote};
use crate::pool::{PutOutcome, TaskPool};
use crate::runtime::trace::EventKind;
use crate::runtime::worker::WorkerThread;
use crate::WorkerStats;

/// Where a rank's workers and its agent meet.
pub(super) struct Link<T> {
    /// Tasks received from other ranks, waiting for an idle worker to put them in the pool.
    pub(super) inbox: Inbox<T>,
    /// Steal replies prepared by workers: (requesting rank, tasks), for the agent to send.
    pub(super) outbox: Mutex<Vec<(usize, Vec<T>)>>,
    pub(super) outbox_len: AtomicUsize,
    /// A steal request waiting for a busy worker: requesting rank + 1, or 0.
    pub(super) request: CachePadded<AtomicUsize>,
    pub(super) agent: Thread,
    pub(super) max_batch: usize,
    /// The local phase has returned on every worker.
    pub(super) workers_left: AtomicBool,
    /// Why the local phase returned without being ended (a panic's message), set before
    /// `workers_left`.
    pub(super) failure: Mutex<Option<String>>,
}

impl<T: Send> Link<T> {
    #[cold]
    #[inline(never)]
    fn answer<P: TaskPool<T>>(
        &self,
        pool: &P,
        local: &mut P::Local,
        stats: &mut WorkerStats,
        coord: &Coordinator,
    ) {
        let r = self.request.swap(0, Ordering::AcqRel);
        if r == 0 {
            return; // another worker or the agent took it
        }
        let tr = WorkerThread::current().and_then(|w| w.trace.as_deref());
        let mut got = Vec::new();
        while got.len() < 2 * self.max_batch {
            match pool.get(local, stats) {
                Some(t) => got.push(t),
                None => break,
            }
            if let Some(tr) = tr {
                // A `get` that stole moved tasks from another worker of this rank into this
                // worker's queue, without running one.
                if let Some((victim, tasks)) = crate::stats::take_steal() {
                    tr.note(EventKind::Moved { victim, tasks });
                }
            }
        }
        // `get` hands out the task it would run next first; the older half (the end of
        // `got`, for the LIFO pools the larger subproblems) goes away, the newer half goes
        // back in reverse so the next `get` sees the same order as before.
        let give = got.len() / 2;
        let sent = got.split_off(got.len() - give);
        for t in got.into_iter().rev() {
            if let PutOutcome::Shared { was_empty } = pool.put(local, t) {
                coord.on_shared_put(was_empty);
            }
        }
        if let (Some(t), false) = (tr, sent.is_empty()) {
            t.note(EventKind::Export {
                tasks: u32::try_from(sent.len()).unwrap_or(u32::MAX),
            });
        }
        let mut out = self.outbox.lock().unwrap_or_else(|e| e.into_inner());
        out.push((r - 1, sent));
        self.outbox_len.store(out.len(), Ordering::SeqCst);
        drop(out);
        self.agent.unpark();
    }
}

impl<T: Send> Remote<T> for Link<T> {
    const EXTERNAL_END: bool = true;

    #[inline]
    fn between_tasks<P: TaskPool<T>>(
        &self,
        _: usize,
        pool: &P,
        local: &mut P::Local,
        stats: &mut WorkerStats,
        coord: &Coordinator,
    ) {
        if self.request.load(Ordering::Relaxed) != 0 {
            self.answer(pool, local, stats, coord);
        }
    }

    #[inline]
    fn has_incoming(&self) -> bool {
        self.inbox.has_tasks()
    }

    fn take_incoming<P: TaskPool<T>>(
        &self,
        _: usize,
        pool: &P,
        local: &mut P::Local,
        coord: &Coordinator,
    ) {
        let n = self.inbox.take_into(pool, local, coord);
        if n > 0 {
            if let Some(t) = WorkerThread::current().and_then(|w| w.trace.as_deref()) {
                t.note(EventKind::Import {
                    tasks: u32::try_from(n).unwrap_or(u32::MAX),
                });
            }
        }
    }

    fn all_idle(&self) {
        self.agent.unpark();
    }
    type Hints<'a>
        = crate::phase::NoHints
    where
        Self: 'a;
    fn hints(&self) -> crate::phase::NoHints {
        crate::phase::NoHints
    }
}
