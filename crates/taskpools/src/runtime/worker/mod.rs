//! A worker thread of the runtime: its deque, how it finds work (its mailbox, its own deque,
//! a random victim, the injector), how it waits without blocking (`wait_until`), and its loop.

mod find_work;
mod local_deque;
mod main_loop;
#[cfg(all(test, not(loom)))]
mod tests;

use std::cell::Cell;
use std::time::Duration;

use super::job::JobRef;
use super::registry::Registry;
use crate::sync::Arc;
// The submodules' `impl WorkerThread` blocks name these as `super::trace` and
// `super::eprintln_best_effort`.
use super::{eprintln_best_effort, trace};

pub(crate) use local_deque::{LocalDeque, PrivateFrames, EXPOSED};

/// How deeply a worker nests waits that run stolen jobs. Beyond this, a waiting worker runs
/// only jobs from its own deque (which a sequential run would have run on the same stack), so
/// stealing while waiting cannot grow the stack without bound.
pub(crate) const MAX_STEALING_WAITS: u32 = 32;

/// A worker thread's private state, reachable through a thread-local pointer while it runs.
pub(crate) struct WorkerThread {
    pub(crate) index: usize,
    pub(crate) registry: Arc<Registry>,
    pub(crate) deque: LocalDeque,
    pub(crate) rng: Cell<u64>,
    /// Waits (`wait_until`) currently on this thread's stack.
    pub(crate) waits: Cell<u32>,
    /// This worker's place (0 on a runtime without places).
    pub(crate) place: usize,
    /// Whether the runtime has places (kept here, beside the other hot fields, so that the
    /// paths without places do not load the registry's).
    pub(crate) has_places: bool,
    /// The next place for an unhinted spawn (round-robin; starts at the worker's own).
    pub(crate) rr: Cell<usize>,
    /// Since when this worker has looked for work without finding any (places with a
    /// remote-steal delay only).
    pub(crate) idle_since: Cell<Option<std::time::Instant>>,
    /// How long the main loop looks for work before it sleeps (the runtime's spin budget,
    /// adapted under `PlacePolicy::adaptive`).
    pub(crate) spin_budget: Cell<Duration>,
    /// The schedule trace's buffer, when the runtime records one.
    pub(crate) trace: Option<Box<super::trace::TraceBuf>>,
    /// Where the job about to run was found (kept only while tracing).
    pub(crate) source: Cell<super::trace::Source>,
}

/// How long an idle worker keeps looking for work before it sleeps, by default (see
/// [`RuntimeBuilder::spin`](super::RuntimeBuilder::spin)).
pub(crate) const DEFAULT_SPIN: Duration = Duration::from_micros(20);
/// Empty rounds after which a deep wait takes place work too (see `run_one_or_starve`).
const STARVING_ROUNDS: u32 = 4096;
/// The adaptive policy's minimum, as a fraction of the runtime's budget.
const MIN_SPIN_FRACTION: u32 = 50;

thread_local! {
    pub(crate) static CURRENT: Cell<*const WorkerThread> = const { Cell::new(std::ptr::null()) };
}

impl WorkerThread {
    /// The worker running on this thread, if any.
    #[inline]
    pub(crate) fn current() -> Option<&'static WorkerThread> {
        let p = CURRENT.with(Cell::get);
        // SAFETY: the pointer is set by the worker's thread for as long as its `WorkerThread`
        // lives (on that thread's stack, in `ThreadBuilder::run`, cleared before it is
        // dropped; or owned by the thread's `ADOPTED` list until the thread ends, for a thread
        // the runtime was built on with `use_current_thread`, cleared before it is freed).
        unsafe { p.as_ref() }
    }

    fn next_victim(&self) -> usize {
        // xorshift
        let mut x = self.rng.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng.set(x);
        (x as usize) % self.registry.threads
    }

    /// Pushes a job onto this worker's deque (and, on private deques, answers a pending steal
    /// request: the fork is a poll point).
    #[inline(always)]
    pub(crate) fn push(&self, job: JobRef) {
        let was_empty = match &self.deque {
            LocalDeque::ChaseLev(d) => d.push(job),
            LocalDeque::Private(p) => {
                let e = p.push(job);
                p.poll();
                e
            }
        };
        if was_empty && self.registry.threads > 1 {
            self.registry.notify_one();
        }
    }

    #[inline(always)]
    pub(crate) fn pop(&self) -> Option<JobRef> {
        match &self.deque {
            LocalDeque::ChaseLev(d) => d.pop(),
            LocalDeque::Private(p) => p.pop(),
        }
    }

    /// Queues a `scope` spawn: on the private pool into the worker's public spawn deque
    /// (and the fork is a poll point, as for a join), on Chase–Lev into its one deque.
    #[inline]
    pub(crate) fn push_spawn(&self, job: JobRef) {
        if !self.has_places {
            // (the common case: no registry load)
        } else if let Some(ps) = &self.registry.places {
            // Not from a deep wait: its own spawns must stay where it can take them (deep
            // waits take no place work; see `run_one`).
            if ps.policy.unhinted == crate::places::Unhinted::RoundRobin
                && self.waits.get() < MAX_STEALING_WAITS
            {
                let p = self.rr.get();
                self.rr.set(if p + 1 == ps.len() { 0 } else { p + 1 });
                self.registry.push_place(p, job, false);
                return;
            }
        }
        match &self.deque {
            LocalDeque::ChaseLev(d) => {
                d.push_quiet(job);
                if self.registry.threads > 1 {
                    self.registry.notify_one();
                }
            }
            LocalDeque::Private(p) => {
                p.spawns.push_quiet(job);
                p.poll();
                // Every spawn, not only one into an empty deque: a thief that takes one wakes
                // nobody, so with sleepers around, waking one per spawn is what spreads a
                // scope's spawns over all workers. (One fence and one load when nobody
                // sleeps; spawns are coarse next to that.)
                if self.registry.threads > 1 {
                    self.registry.notify_one();
                }
            }
        }
    }

    /// Notes where the next job comes from, when tracing.
    #[inline(always)]
    fn note(&self, src: super::trace::Source) {
        if self.trace.is_some() {
            self.source.set(src);
        }
    }

    /// Counts a queue of another examined in vain, when tracing.
    #[inline(always)]
    fn missed(&self) {
        if let Some(t) = &self.trace {
            t.miss();
        }
    }

    /// Runs a job taken from a queue, recording it when tracing.
    ///
    /// # Safety
    /// As [`JobRef::execute`]: `j` was taken from a queue and runs once, here.
    #[inline(always)]
    unsafe fn run_job(&self, j: JobRef) {
        match &self.trace {
            None => {
                // SAFETY: the caller's.
                unsafe { j.execute() }
            }
            Some(t) => {
                t.start(self.source.get());
                // SAFETY: the caller's.
                unsafe { j.execute() };
                t.end();
            }
        }
    }

    /// This worker's newest job. On the private pool: its spawns first, then its join
    /// frames. A wait's own work is in the spawn deque (a scope waits for its spawns; a join
    /// body has taken back or finished its inner joins before it waits), while frames left
    /// in the stack belong to joins that enclose the wait, so they are older. The exception
    /// is the second half of a join made while nothing was queued, which sits in the spawn
    /// deque below the frames of the joins inside its first half: a wait there may run it
    /// before them (each such half once; the join then finds it done), as a wait on a
    /// Chase–Lev deque runs an enclosing join's half.
    #[inline]
    pub(super) fn pop_own(&self) -> Option<JobRef> {
        let j = match &self.deque {
            LocalDeque::Private(p) => p.spawns.pop().or_else(|| p.pop()),
            LocalDeque::ChaseLev(d) => d.pop(),
        };
        if j.is_some() {
            self.note(super::trace::Source::Own);
        }
        j
    }

    /// Whether this worker has jobs queued on its own deque (spawns, or join halves).
    pub(crate) fn has_queued_jobs(&self) -> bool {
        match &self.deque {
            LocalDeque::Private(p) => !p.nothing_queued(),
            LocalDeque::ChaseLev(d) => !d.is_empty(),
        }
    }

    /// Answers a pending steal request (private deques).
    #[inline]
    pub(crate) fn poll(&self) {
        if let LocalDeque::Private(p) = &self.deque {
            p.poll();
        }
    }

    /// Refuses steal requests while this worker cannot answer them (it sleeps or exits); a
    /// pending one is answered now.
    pub(crate) fn block_requests(&self) {
        if let LocalDeque::Private(p) = &self.deque {
            p.req.block(|| p.give_oldest());
        }
    }

    pub(crate) fn unblock_requests(&self) {
        if let LocalDeque::Private(p) = &self.deque {
            p.req.unblock();
        }
    }
}
