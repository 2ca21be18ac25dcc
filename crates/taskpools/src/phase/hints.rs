//! Place hints for the working phase's puts ([`Ctx::put_at`](crate::Ctx::put_at)): a phase on
//! a runtime with [places](crate::places), started with
//! [`Builder::run_hinted`](crate::Builder::run_hinted) or its siblings.
//!
//! The task pools are the family's own queues, one part per worker, and know nothing of places.
//! So each place gets an [`Inbox`]: a hinted put to another place pushes the task there (a
//! hint to the putter's own place is an ordinary put into its own queue). Between two tasks, a
//! busy worker moves its place's inbox into its own queue (one load when it is empty), where
//! the pool's stealing shares it among the place's workers as usual. An idle worker takes its
//! own place's inbox first and otherwise the oldest task of the next non-empty inbox (the
//! places after its own, in turn), one at a time, so a
//! hinted task may still run elsewhere (as in the runtime's places), but only when a worker
//! has nothing else to do.
//!
//! # Termination and wake-ups
//!
//! The inboxes are shared queues of the phase, outside the pool. A worker looks at every inbox
//! before it counts itself idle (`Coordinator::idle`), and a worker takes tasks out of an
//! inbox only while it is not counted idle; so the termination argument of the `idle` module
//! holds with the inboxes as more queues: a task X in an inbox was pushed by a busy worker B,
//! which after that push looked at that inbox's length (the `SeqCst` mirror, whose last value
//! B's own store precedes in coherence order) before it counted itself idle, found it empty,
//! so X had left, taken by a worker that was not idle and that put X into the pool.
//!
//! A hinted put pushes, stores the inbox's length (`SeqCst`) and then signals by the phase's
//! [`WakePolicy`](super::WakePolicy) as a put into a shared queue does (an inbox made
//! non-empty counts as a shared queue made non-empty); sleepers re-check the inboxes after
//! their `SeqCst` fence. The loom models in `loom_tests` cover a hint to a worker that spins,
//! sleeps or is counted idle, with a planted twin that ignores the inboxes.

use super::inbox::Inbox;
use super::remote::HintSink;
use super::{Coordinator, Remote, WorkerStats};
use crate::pool::TaskPool;
use crate::task::PutAtError;
use crate::Error;

/// The hooks of a hinted phase: one inbox per place of the runtime.
pub(crate) struct PlaceHints<T> {
    inboxes: Box<[Inbox<T>]>,
    /// The place of each worker of the phase.
    of_worker: Box<[usize]>,
    /// Test of the loom test: idle workers ignore the inboxes.
    #[cfg(all(loom, test))]
    pub(crate) broken_idle: bool,
}

impl<T: Send> PlaceHints<T> {
    /// Hooks for `places` places, phase worker `i` being at place `of_worker[i]`.
    pub(crate) fn new(places: usize, of_worker: &[usize]) -> Self {
        debug_assert!(of_worker.iter().all(|&p| p < places));
        PlaceHints {
            inboxes: (0..places).map(|_| Inbox::new()).collect(),
            of_worker: of_worker.into(),
            #[cfg(all(loom, test))]
            broken_idle: false,
        }
    }

    /// Whether any inbox holds a task, broken or not (the loom models' final check).
    #[cfg(all(loom, test))]
    pub(crate) fn has_incoming_for_test(&self) -> bool {
        self.inboxes.iter().any(Inbox::has_tasks)
    }

    #[inline(never)]
    fn take_own<P: TaskPool<T>>(
        &self,
        place: usize,
        pool: &P,
        local: &mut P::Local,
        coord: &Coordinator,
    ) {
        self.inboxes[place].take_into(pool, local, coord);
    }
}

impl<T: Send> Remote<T> for PlaceHints<T> {
    const EXTERNAL_END: bool = false;

    #[inline]
    fn between_tasks<P: TaskPool<T>>(
        &self,
        me: usize,
        pool: &P,
        local: &mut P::Local,
        _: &mut WorkerStats,
        coord: &Coordinator,
    ) {
        let place = self.of_worker[me];
        if self.inboxes[place].has_tasks() {
            self.take_own(place, pool, local, coord);
        }
    }

    fn has_incoming(&self) -> bool {
        #[cfg(all(loom, test))]
        if self.broken_idle {
            return false;
        }
        self.inboxes.iter().any(Inbox::has_tasks)
    }

    fn take_incoming<P: TaskPool<T>>(
        &self,
        me: usize,
        pool: &P,
        local: &mut P::Local,
        coord: &Coordinator,
    ) {
        let own = self.of_worker[me];
        if self.inboxes[own].take_into(pool, local, coord) > 0 {
            return;
        }
        let n = self.inboxes.len();
        for k in 1..n {
            if self.inboxes[(own + k) % n].take_oldest_into(pool, local, coord) {
                return;
            }
        }
    }

    fn all_idle(&self) {}

    type Hints<'a>
        = &'a PlaceHints<T>
    where
        T: 'a;

    fn hints(&self) -> &PlaceHints<T> {
        self
    }
}

impl<T: Send> HintSink<T> for &PlaceHints<T> {
    const TAKES_HINTS: bool = true;
    fn put_at(
        self,
        me: usize,
        place: usize,
        task: T,
        coord: &Coordinator,
    ) -> Result<Option<T>, PutAtError<T>> {
        if place >= self.inboxes.len() {
            return Err(PutAtError {
                error: Error::NoSuchPlace {
                    place,
                    places: self.inboxes.len(),
                },
                task,
            });
        }
        if place == self.of_worker[me] {
            return Ok(Some(task));
        }
        let was_empty = self.inboxes[place].push(task);
        coord.on_shared_put(was_empty);
        Ok(None)
    }

    fn places(self) -> usize {
        self.inboxes.len()
    }
}
