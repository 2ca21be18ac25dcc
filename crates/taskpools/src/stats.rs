//! Per-worker counters (DESIGN.md: "Counters are per-worker and summed at the end, never a
//! shared atomic on the hot path").

use std::ops::AddAssign;
use std::time::Duration;

/// What one worker did in a working phase. Each worker owns its counters; the runtime sums
/// them into a [`RunReport`] when the phase ends.
///
/// ```
/// use taskpools::{BoxedTask, Builder};
///
/// let root = BoxedTask::new(|ctx| (0..100).for_each(|_| ctx.put(BoxedTask::new(|_| {}))));
/// let report = Builder::new().threads(2).pool_name("chase-lev")?.run([root])?;
/// let total = report.total();
/// assert_eq!((total.tasks_run, total.puts), (101, 100)); // initial tasks are not puts
/// assert!(total.steals <= total.steal_attempts);
/// assert!(total.asleep <= total.idle);
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerStats {
    /// Tasks this worker executed.
    pub tasks_run: u64,
    /// Tasks this worker created with `put` (initial tasks are not counted).
    pub puts: u64,
    /// Foreign queues this worker examined while looking for work.
    pub steal_attempts: u64,
    /// Examinations that took at least one task.
    pub steals: u64,
    /// Tasks moved by those steals (blocks count all their tasks).
    pub tasks_stolen: u64,
    /// Time spent without a task (spinning or asleep).
    pub idle: Duration,
    /// The part of `idle` spent asleep.
    pub asleep: Duration,
    /// Times this worker went to sleep.
    pub sleeps: u64,
    /// The worker left the phase before it ended: it ran dry while its thread was inside a
    /// wait of another job, which may be what the phase needs (see the working phase's
    /// termination notes).
    pub retired: bool,
}

impl AddAssign<&WorkerStats> for WorkerStats {
    fn add_assign(&mut self, o: &WorkerStats) {
        self.tasks_run += o.tasks_run;
        self.puts += o.puts;
        self.steal_attempts += o.steal_attempts;
        self.steals += o.steals;
        self.tasks_stolen += o.tasks_stolen;
        self.idle += o.idle;
        self.asleep += o.asleep;
        self.sleeps += o.sleeps;
        self.retired |= o.retired;
    }
}

/// The result of a working phase: per-worker counters and the wall time.
///
/// ```
/// use taskpools::{BoxedTask, Builder};
///
/// let report = Builder::new().threads(2).run((0..10).map(|_| BoxedTask::new(|_| {})))?;
/// assert_eq!(report.workers.len(), 2); // per worker, in worker order
/// assert_eq!(report.tasks_run(), 10);
/// println!("{} tasks in {:?}", report.tasks_run(), report.elapsed);
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RunReport {
    /// One entry per worker, in worker order.
    pub workers: Vec<WorkerStats>,
    /// Wall-clock time of the working phase (thread start to the last worker's exit).
    pub elapsed: Duration,
}

impl RunReport {
    /// The counters of all workers summed.
    ///
    /// ```
    /// use taskpools::{BoxedTask, Builder};
    ///
    /// let report = Builder::new().threads(2).run((0..10).map(|_| BoxedTask::new(|_| {})))?;
    /// let by_worker: u64 = report.workers.iter().map(|w| w.tasks_run).sum();
    /// assert_eq!(report.total().tasks_run, by_worker);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn total(&self) -> WorkerStats {
        let mut t = WorkerStats::default();
        for w in &self.workers {
            t += w;
        }
        t
    }

    /// Tasks executed by all workers.
    ///
    /// ```
    /// use taskpools::synthetic::{initial_tasks, task_count};
    /// use taskpools::Builder;
    ///
    /// let report = Builder::new().threads(2).run(initial_tasks(10, 1))?;
    /// assert_eq!(report.tasks_run(), task_count(10));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn tasks_run(&self) -> u64 {
        self.workers.iter().map(|w| w.tasks_run).sum()
    }
}

thread_local! {
    /// The last successful steal of a pool on this thread: (victim, tasks moved). Written by
    /// the pools where they count a steal, read by a traced working phase.
    static LAST_STEAL: std::cell::Cell<Option<(u32, u32)>> = const { std::cell::Cell::new(None) };
}

/// Notes a successful steal for the schedule trace (a thread-local write, kept out of line:
/// steals are rare next to tasks).
#[cold]
#[inline(never)]
pub(crate) fn note_steal(victim: usize, tasks: u64) {
    LAST_STEAL.with(|c| {
        c.set(Some((
            victim as u32,
            u32::try_from(tasks).unwrap_or(u32::MAX),
        )))
    });
}

/// Takes the steal noted since the last call, if any.
#[inline]
pub(crate) fn take_steal() -> Option<(u32, u32)> {
    LAST_STEAL.with(|c| c.take())
}
