//! The hooks by which a phase spread over places (the `hints` module) or over processes (the
//! `distributed` module) extends the plain working phase, and the plain phase's empty hooks.

use super::{Coordinator, WorkerStats};
use crate::pool::TaskPool;
use crate::task::PutAtError;
use crate::Error;

/// What a working phase spread over several processes (the `distributed` module) or over
/// places (the `hints` module) adds to the plain one. [`NoRemote`] adds nothing: its hooks are
/// empty and inlined, so a plain phase compiles to the loop it always was. Each kind of phase
/// is its own instantiation of the loop, chosen at compile time by the entry the user calls:
/// a plain phase never pays for hints (a second instantiation of the loop for the same pool
/// and task type makes the compiler stop inlining the pool's `get` and `put` into it).
pub(crate) trait Remote<T: Send>: Sync {
    /// Whether the phase ends only when someone outside the workers calls
    /// [`Coordinator::end`]; if not, the last worker to go idle ends it (local termination).
    const EXTERNAL_END: bool;
    /// Whether the hooks never touch the pool (the plain phase): a worker may then keep its
    /// own deque's elements out of the pool while it runs tasks (the stack loop, `Busy::run_stack` in `worker_loop.rs`).
    const PLAIN: bool = false;
    /// Called by busy worker `me` between two tasks.
    fn between_tasks<P: TaskPool<T>>(
        &self,
        me: usize,
        pool: &P,
        local: &mut P::Local,
        stats: &mut WorkerStats,
        coord: &Coordinator,
    );
    /// Whether tasks from outside the pool wait to be taken into it (idle workers look here
    /// as well as at the pool's shared queues, before they sleep too; with local termination
    /// also before they count themselves idle).
    fn has_incoming(&self) -> bool;
    /// Moves waiting tasks from outside into the pool through worker `me`'s `local`.
    fn take_incoming<P: TaskPool<T>>(
        &self,
        me: usize,
        pool: &P,
        local: &mut P::Local,
        coord: &Coordinator,
    );
    /// The last busy worker of this process has just gone idle (only with `EXTERNAL_END`).
    fn all_idle(&self);
    /// What a running task's [`Ctx::put_at`](crate::Ctx::put_at) reaches.
    type Hints<'a>: HintSink<T>
    where
        Self: 'a;
    fn hints(&self) -> Self::Hints<'_>;
}

/// Where a task's hinted puts go ([`Ctx::put_at`](crate::Ctx::put_at)), kept in the task's sink.
pub(crate) trait HintSink<T>: Copy {
    /// Whether any hint is taken (false: `put_at` always fails).
    const TAKES_HINTS: bool;
    /// A put by worker `me` with a hint to `place`. `Ok(Some(task))`: the place is the
    /// putter's own, put the task into the pool.
    fn put_at(
        self,
        me: usize,
        place: usize,
        task: T,
        coord: &Coordinator,
    ) -> Result<Option<T>, PutAtError<T>>;
    /// The number of places hints can name (0: this phase takes no hints).
    fn places(self) -> usize;
}

/// A phase without hints.
#[derive(Clone, Copy)]
pub(crate) struct NoHints;

impl<T> HintSink<T> for NoHints {
    const TAKES_HINTS: bool = false;
    fn put_at(
        self,
        _: usize,
        _: usize,
        task: T,
        _: &Coordinator,
    ) -> Result<Option<T>, PutAtError<T>> {
        Err(PutAtError {
            error: Error::PhaseWithoutHints,
            task,
        })
    }
    fn places(self) -> usize {
        0
    }
}

/// The local phase: no hooks.
pub(crate) struct NoRemote;

impl<T: Send> Remote<T> for NoRemote {
    const EXTERNAL_END: bool = false;
    const PLAIN: bool = true;
    #[inline(always)]
    fn between_tasks<P: TaskPool<T>>(
        &self,
        _: usize,
        _: &P,
        _: &mut P::Local,
        _: &mut WorkerStats,
        _: &Coordinator,
    ) {
    }
    #[inline(always)]
    fn has_incoming(&self) -> bool {
        false
    }
    #[inline(always)]
    fn take_incoming<P: TaskPool<T>>(&self, _: usize, _: &P, _: &mut P::Local, _: &Coordinator) {}
    #[inline(always)]
    fn all_idle(&self) {}
    type Hints<'a> = NoHints;
    #[inline(always)]
    fn hints(&self) -> NoHints {
        NoHints
    }
}
