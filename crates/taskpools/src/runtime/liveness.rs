//! Progress on the `private-deque` pool: [`yield_now`], and the diagnostic a thief prints
//! when an owner leaves its requests unanswered.
//!
//! # The guarantee
//!
//! On private deques a worker's queued jobs reach other workers only through steal requests
//! that the owner answers when it forks, joins, waits in a scope or an `install`, or calls
//! [`yield_now`]. So a job may run for as long as it likes, but jobs it queued before become
//! stealable only at its next such point. Programs in the fork-join model never notice (a job
//! waits for another only at a join or the end of a scope, and those waits answer requests).
//! A job that waits for another job *by other means* — one half of a join spinning on a flag
//! that the other half sets — does notice: with two workers, the half it waits for stays in
//! the spinning worker's private deque and the program hangs, where on
//! [`Pool::ChaseLev`](super::Pool::ChaseLev) (and in rayon) the other worker steals it. Such a
//! wait must call [`yield_now`] in its loop; that serves requests and runs pending work itself.
//!
//! Why not make every queued job stealable without the owner's help: a thief that takes from
//! a deque the owner pops without synchronisation needs the owner's pop to pay a store-load
//! fence (that is the Chase–Lev deque, and what the private pool exists to avoid). The
//! half-way scheme the pool does use, for speed (see the [`forkjoin`](crate::forkjoin) module
//! docs) — the second half of a join made while its worker has nothing queued goes to its
//! public spawn deque — rescues only such halves: the jobs a blocked owner queued after one of
//! them are as unreachable as before, so programs like the one above still hang a join or
//! more deeper, depending on the schedule. We therefore keep the owner's other joins
//! fence-free and make the hang loud instead of silent: a thief whose request has been
//! unanswered for [`STALL_REPORT`] prints one diagnostic per runtime to stderr, naming the
//! worker, the cause, and the two fixes.

use std::time::{Duration, Instant};

use super::registry::Registry;
use super::worker::WorkerThread;
use crate::sync::Ordering;

/// What [`yield_now`] did.
///
/// ```
/// use taskpools::forkjoin::{yield_now, Runtime, Yield};
///
/// let rt = Runtime::new(1)?;
/// let first = rt.scope(|s| {
///     s.spawn(|_| {});
///     yield_now() // runs the queued spawn here
/// });
/// assert_eq!(first, Some(Yield::Executed));
/// assert_eq!(rt.install(yield_now), Some(Yield::Idle)); // nothing to run
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Yield {
    /// It ran a job (or several nested inside one).
    Executed,
    /// It answered pending steal requests but found no job to run.
    Idle,
}

/// Lets the current worker do pending fork-join work: answers steal requests addressed to it
/// and runs at most one available job (from its own deque first, else stolen or injected).
/// Returns `None` on a thread that is not a fork-join worker.
///
/// A job that waits for a queued job (a `scope` spawn; see [`join`](crate::forkjoin::join) for
/// why not a join's other half) by any means other than `join` or the end of a `scope` (a
/// spin on a flag, a channel polled in a loop) should call this in its wait loop. On the default
/// [`Pool::PrivateDeque`](super::Pool::PrivateDeque) it is *required*: there, jobs that this
/// worker queued reach other workers only when it answers their requests, and the job being
/// waited for may be one of them (see the [`forkjoin`](crate::forkjoin) module docs, "Progress").
///
/// It may run an unrelated job (one this worker queued, or one it steals), on this stack: do
/// not call it while holding a lock or a `RefCell` borrow that such a job could need, and
/// expect the stack to grow by that job's depth.
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use taskpools::forkjoin::{self, Runtime};
///
/// let rt = Runtime::new(2)?;
/// let flag = AtomicBool::new(false);
/// rt.scope(|s| {
///     s.spawn(|_| flag.store(true, Ordering::Release));
///     // The spawn is queued on this worker: without `yield_now`, this loop could wait
///     // for it forever.
///     while !flag.load(Ordering::Acquire) {
///         forkjoin::yield_now();
///     }
/// });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn yield_now() -> Option<Yield> {
    let w = WorkerThread::current()?;
    Some(if w.run_one() {
        Yield::Executed
    } else {
        Yield::Idle
    })
}

/// Lets the current worker run one job from its own deque (answering pending steal requests
/// first), without looking elsewhere: rayon's `yield_local`. `Some(Yield::Executed)` if it ran
/// one, `Some(Yield::Idle)` if its deque was empty, `None` on a thread that is not a worker.
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// let rt = taskpools::Runtime::new(1)?;
/// let ran = AtomicBool::new(false);
/// rt.scope(|s| {
///     s.spawn(|_| ran.store(true, Ordering::Relaxed));
///     assert_eq!(taskpools::yield_local(), Some(taskpools::Yield::Executed));
///     assert!(ran.load(Ordering::Relaxed));
///     assert_eq!(taskpools::yield_local(), Some(taskpools::Yield::Idle));
/// });
/// assert_eq!(taskpools::yield_local(), None);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn yield_local() -> Option<Yield> {
    let w = WorkerThread::current()?;
    Some(if w.run_own() {
        Yield::Executed
    } else {
        Yield::Idle
    })
}

/// How long a thief waits for an answer before it reports the owner. Setting the environment
/// variable `TASKPOOLS_STALL_REPORT=off` turns the report off (for programs whose jobs are
/// long and never fork, where a second without an answer is expected).
pub const STALL_REPORT: Duration = Duration::from_secs(1);

/// Whether the stall report is on (read once per process).
fn stall_report_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        let v = std::env::var_os("TASKPOOLS_STALL_REPORT");
        !matches!(v.as_deref(), Some(v) if v == "off" || v == "0")
    })
}

/// A thief's clock while it waits for one answer: looks at the time every 1024 turns of the
/// wait, and after [`STALL_REPORT`] reports the victim once per runtime.
#[derive(Default)]
pub(super) struct StallWatch {
    turns: u32,
    since: Option<Instant>,
}

impl StallWatch {
    #[inline]
    pub(super) fn tick(&mut self, registry: &Registry, thief: usize, victim: usize) {
        self.turns = self.turns.wrapping_add(1);
        if self.turns % 1024 != 0 {
            return;
        }
        let now = Instant::now();
        let since = *self.since.get_or_insert(now);
        if now.duration_since(since) >= STALL_REPORT
            && stall_report_enabled()
            && !registry.stall_reported.swap(true, Ordering::Relaxed)
        {
            report(thief, victim, now.duration_since(since));
        }
    }
}

#[cold]
fn report(thief: usize, victim: usize, waited: Duration) {
    super::eprintln_best_effort(&format!(
        "taskpools: fork-join worker {thief} has waited {:.1} s for worker {victim} to answer a \
         steal request (pool private-deque). Worker {victim} has queued jobs but has not \
         reached a fork, join, scope end or yield_now since. Either a job there runs for a long \
         time without forking (harmless, only less parallel), or it waits for another job by \
         other means (e.g. one half of a join spinning on a flag that the other half sets), \
         which on this pool keeps the jobs it queued from every other worker and may hang the \
         program. Fix: call taskpools::forkjoin::yield_now() in such wait loops, or build the \
         runtime with Pool::ChaseLev, whose thieves take jobs without the owner's help. \
         (Reported once per runtime; TASKPOOLS_STALL_REPORT=off silences it.)",
        waited.as_secs_f64()
    ));
}
