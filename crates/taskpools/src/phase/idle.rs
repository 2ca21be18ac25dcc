//! Idle workers: termination of the working phase, sleeping and waking (Korch and Rauber, "A
//! Comparison of Task Pools for Dynamic Load Balancing of Irregular Algorithms" (2002), §4.1,
//! and the wake-up policies of their Java pools `dq2`/`dq9`/`dq10`, aliases `java-dq2`, …).
//!
//! # Termination
//!
//! `idle` counts the workers that have no task. A worker adds itself only right after a
//! *complete* failed `get` (see [`crate::pool`]); the worker whose increment brings the count
//! to N ends the phase. Why no task can exist then: take any task X still in some queue Q. It
//! arrived in Q through a put or transfer by a worker B that was busy at that moment. B is now
//! idle, so after that arrival B made a complete failed `get`, which looked at Q (under Q's
//! lock, or at Q's length mirror, whose last value B's own store precedes in coherence order)
//! and found it without X, so X had left Q — a contradiction. Nobody is running a task either,
//! since all N are counted idle, and a worker leaves the count (`fetch_sub`) before it takes a
//! task again. The count is touched only on the idle path, never per task.
//!
//! # Leaving early
//!
//! A worker can take its share of a phase while it waits inside another job (a join or a
//! scope nested in a job it stole): the share then runs on top of that suspended job. If the
//! phase needs the suspended job (a task of the phase waits for a spawn that this worker stole
//! and is still running underneath), sleeping in the phase until it ends would never end, and
//! so would waiting for more of the phase's work to show up: the tasks it sees may sit with
//! that very waiting task's worker, which cannot hand them over (a `private-deque` victim
//! answers requests only between its tasks). So such a share helps only until its first
//! complete failed `get`, and its steals do not wait long for an answer (the deque is
//! [impatient](crate::queue::private_deque::PrivateDeque::set_impatient)). It then *leaves*
//! the phase (its share returns, its thread goes back to what lies underneath) and stays
//! counted idle for good. The argument above still holds: the worker made a complete failed
//! `get` before it was counted, and it never takes or puts a task again. The phase finishes
//! on the others; [`WorkerStats::retired`](crate::WorkerStats::retired) records it.
//!
//! # Sleeping without lost wake-ups
//!
//! After spinning for a while, an idle worker takes the lock, adds itself to `sleepers`,
//! issues a `SeqCst` fence and looks at the shared queues once more; only if they are all
//! empty does it wait on the condition variable (which releases the lock atomically). A put
//! that must signal first makes its task visible (length mirror), issues a `SeqCst` fence and
//! then reads `sleepers`; if non-zero it takes the lock and notifies. By the fences, either the
//! sleeper sees the task or the putter sees the sleeper, and because the sleeper holds the lock
//! from its check to its wait, the notification cannot fall between the two.
//!
//! Which puts signal is the [`WakePolicy`]. Tasks in private queues never need a signal: the
//! owner is busy and will run them. A pool whose tasks other workers can take only through
//! the owner ([`TaskPool::PUTS_WAIT_FOR_OWNER`],
//! `private-deque`) signals for a task's puts when the task ends or calls
//! [`Ctx::queued`](crate::Ctx::queued), the owner's next chances to answer a thief; the
//! fence then comes later than the put's store, in the same thread, and the argument is
//! unchanged.

use std::any::Any;
use std::fmt;
use std::time::Instant;

use crossbeam_utils::CachePadded;

use super::{Remote, WorkerStats};
use crate::panics::keep_first;
use crate::pool::TaskPool;
use crate::sync::{fence, lock, AtomicBool, AtomicUsize, Backoff, Condvar, Mutex, Ordering};

/// When a put wakes a sleeping worker.
///
/// The aliases name Korch and Rauber's Java pools (2002, §6.3, Table 2) that introduced each
/// policy, prefixed `java-` because the bare names `dq2`, `dq9`, `dq10` denote whole pools
/// there (and `dq2` is the pool [`PoolKind::StealWorkingEnd`](crate::PoolKind::StealWorkingEnd)
/// here): `java-dq2` is the Java `dq2` (`notify()` in every `put()`), `java-dq9` is `dq9`
/// (`notify()` only when a task is inserted into an empty queue), `java-dq10` is `dq10`
/// (a flag with busy waiting instead of `wait()`/`notify()`).
///
/// ```
/// use taskpools::{BoxedTask, Builder, WakePolicy};
///
/// // The policy changes who sleeps and who is woken, never what runs.
/// for wake in WakePolicy::ALL {
///     let root = BoxedTask::new(|ctx| (0..30).for_each(|_| ctx.put(BoxedTask::new(|_| {}))));
///     assert_eq!(Builder::new().threads(2).wake(wake).run([root])?.tasks_run(), 31, "{wake}");
/// }
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WakePolicy {
    /// Every put into a shared queue checks for sleepers and wakes one (`java-dq2`: Korch and
    /// Rauber's C pools and their Java `dq2` signal in every put). Costs a `SeqCst` fence per
    /// shared put. On `private-deque`, whose puts wait for their owner
    /// ([`TaskPool::PUTS_WAIT_FOR_OWNER`]), the
    /// wake-ups of a task's puts are made together when it ends or calls
    /// [`Ctx::queued`](crate::Ctx::queued): one per put since the last such point, at most
    /// one per worker each time.
    EveryPut,
    /// Only a put that makes a shared queue non-empty wakes a sleeper (`java-dq9`); on
    /// `private-deque`, when the putting task ends or calls
    /// [`Ctx::queued`](crate::Ctx::queued).
    OnEmpty,
    /// Idle workers never sleep; they spin (with backoff and yielding) and puts never signal
    /// (`java-dq10`).
    Spin,
}

impl WakePolicy {
    /// Every policy.
    pub const ALL: [WakePolicy; 3] = [WakePolicy::EveryPut, WakePolicy::OnEmpty, WakePolicy::Spin];

    /// The descriptive name.
    ///
    /// ```
    /// use taskpools::WakePolicy;
    ///
    /// assert_eq!(WakePolicy::OnEmpty.name(), "on-empty");
    /// assert_eq!(WakePolicy::Spin.to_string(), "spin");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            WakePolicy::EveryPut => "every-put",
            WakePolicy::OnEmpty => "on-empty",
            WakePolicy::Spin => "spin",
        }
    }

    /// Korch and Rauber's name for the Java pool that introduced the policy, prefixed `java-`.
    ///
    /// ```
    /// use taskpools::WakePolicy;
    ///
    /// assert_eq!(WakePolicy::EveryPut.alias(), "java-dq2");
    /// assert_eq!("java-dq9".parse::<WakePolicy>()?, WakePolicy::OnEmpty);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn alias(self) -> &'static str {
        match self {
            WakePolicy::EveryPut => "java-dq2",
            WakePolicy::OnEmpty => "java-dq9",
            WakePolicy::Spin => "java-dq10",
        }
    }

    /// One line for `taskpools list`.
    ///
    /// ```
    /// for w in taskpools::WakePolicy::ALL {
    ///     println!("{:10} {:10} {}", w.name(), w.alias(), w.description());
    /// }
    /// assert!(taskpools::WakePolicy::Spin.description().contains("never sleep"));
    /// ```
    pub fn description(self) -> &'static str {
        match self {
            WakePolicy::EveryPut => "every put into a shared queue wakes a sleeping worker",
            WakePolicy::OnEmpty => "only a put into an empty shared queue wakes a sleeping worker",
            WakePolicy::Spin => "idle workers spin and yield, never sleep; puts never signal",
        }
    }

    /// Parses a name or alias.
    ///
    /// ```
    /// use taskpools::{Error, WakePolicy};
    ///
    /// assert_eq!(WakePolicy::from_name("every-put")?, WakePolicy::EveryPut);
    /// assert_eq!(WakePolicy::from_name("java-dq10")?, WakePolicy::Spin);
    /// assert!(matches!(WakePolicy::from_name("never"), Err(Error::UnknownWake { .. })));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn from_name(s: &str) -> Result<WakePolicy, crate::Error> {
        WakePolicy::ALL
            .into_iter()
            .find(|w| w.name() == s || w.alias() == s)
            .ok_or_else(|| crate::Error::UnknownWake {
                name: s.to_string(),
            })
    }
}

impl std::str::FromStr for WakePolicy {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        WakePolicy::from_name(s)
    }
}

impl fmt::Display for WakePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Shared state of one working phase's idle workers.
pub(crate) struct Coordinator {
    workers: usize,
    policy: WakePolicy,
    /// Set once: the phase is over (all idle, or a worker panicked). Read by busy workers
    /// once per task, written once, so it sits alone on its cache line.
    done: CachePadded<AtomicBool>,
    idle: CachePadded<AtomicUsize>,
    sleepers: CachePadded<AtomicUsize>,
    lock: Mutex<()>,
    cvar: Condvar,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Test of the loom test: skip the sleeper's recheck (a known lost-wake-up bug).
    #[cfg(loom)]
    pub(crate) broken_recheck: bool,
    /// Test of the loom test: count a worker idle without looking at the inboxes first.
    #[cfg(loom)]
    pub(crate) broken_early_check: bool,
    /// Test of the loom test: deferred puts ([`Coordinator::on_deferred_puts`]) wake nobody.
    #[cfg(loom)]
    pub(crate) broken_deferred_wake: bool,
    /// Test of the loom test: the stack loop's flush in `queued` leaves the deque's work hint
    /// off (thieves never learn of the puts).
    #[cfg(loom)]
    pub(crate) broken_flush_hint: bool,
}

impl Coordinator {
    pub(crate) fn new(workers: usize, policy: WakePolicy) -> Self {
        Coordinator {
            workers,
            policy,
            done: CachePadded::new(AtomicBool::new(false)),
            idle: CachePadded::new(AtomicUsize::new(0)),
            sleepers: CachePadded::new(AtomicUsize::new(0)),
            lock: Mutex::new(()),
            cvar: Condvar::new(),
            panic: Mutex::new(None),
            #[cfg(loom)]
            broken_recheck: false,
            #[cfg(loom)]
            broken_early_check: false,
            #[cfg(loom)]
            broken_deferred_wake: false,
            #[cfg(loom)]
            broken_flush_hint: false,
        }
    }

    /// Whether the phase is over. A busy worker that sees this has been aborted.
    #[inline]
    pub(crate) fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// [`is_done`](Self::is_done) without ordering, for the busy loop's check between tasks: a
    /// worker that sees it only leaves the phase and reads nothing the finisher wrote (the
    /// caller reads the abort's payload after joining the workers).
    #[inline(always)]
    pub(crate) fn is_done_relaxed(&self) -> bool {
        self.done.load(Ordering::Relaxed)
    }

    /// The phase's wake-up policy.
    #[inline]
    pub(crate) fn policy(&self) -> WakePolicy {
        self.policy
    }

    /// After `puts` puts into a pool with
    /// [`TaskPool::PUTS_WAIT_FOR_OWNER`], made by one
    /// task since its last flush, at least one of which made the worker's deque non-empty (or
    /// the policy wakes on every put): what their [`on_shared_put`](Self::on_shared_put)
    /// calls would have done, at once — one wake-up under [`WakePolicy::OnEmpty`], one per put
    /// (at most one per worker) under [`WakePolicy::EveryPut`].
    #[cold]
    #[inline(never)]
    pub(crate) fn on_deferred_puts(&self, puts: u64) {
        #[cfg(loom)]
        if self.broken_deferred_wake {
            return;
        }
        match self.policy {
            WakePolicy::EveryPut => {
                for _ in 0..puts.clamp(1, self.workers as u64) {
                    self.wake_one();
                }
            }
            WakePolicy::OnEmpty => self.wake_one(),
            WakePolicy::Spin => {}
        }
    }

    /// Called after a put into a shared queue.
    #[inline]
    pub(crate) fn on_shared_put(&self, was_empty: bool) {
        match self.policy {
            WakePolicy::EveryPut => self.wake_one(),
            WakePolicy::OnEmpty if was_empty => self.wake_one(),
            WakePolicy::OnEmpty | WakePolicy::Spin => {}
        }
    }

    #[inline]
    fn wake_one(&self) {
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::Relaxed) > 0 {
            self.notify_one_slow();
        }
    }

    #[cold]
    fn notify_one_slow(&self) {
        let _g = lock(&self.lock);
        self.cvar.notify_one();
    }

    fn finish(&self) {
        self.done.store(true, Ordering::Release);
        let _g = lock(&self.lock);
        self.cvar.notify_all();
    }

    /// Ends the phase because a worker panicked; the first payload is kept for the caller.
    pub(crate) fn abort(&self, payload: Option<Box<dyn Any + Send>>) {
        if let Some(p) = payload {
            // Never unwinds (a later payload's drop may panic): `finish` must run.
            keep_first(&self.panic, p);
        }
        self.finish();
    }

    pub(crate) fn take_panic(&self) -> Option<Box<dyn Any + Send>> {
        lock(&self.panic).take()
    }

    /// Ends the phase from outside the workers (a phase with an external end, see
    /// [`Remote::EXTERNAL_END`]): every worker leaves it after its current task.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn end(&self) {
        self.finish();
    }

    /// How many workers are counted idle now.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn idle_count(&self) -> usize {
        self.idle.load(Ordering::SeqCst)
    }

    /// Whether a panic was recorded, and its message (the payload stays for `take_panic`).
    #[cfg(feature = "mpi")]
    pub(crate) fn panic_message(&self) -> Option<String> {
        lock(&self.panic)
            .as_ref()
            .map(|p| crate::panics::panic_text(&**p))
    }

    /// Wakes every sleeping worker because tasks from outside arrived (the same fence pair as
    /// a put: the caller made them visible to `has_incoming` before calling).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn wake_for_incoming(&self) {
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::Relaxed) > 0 {
            let _g = lock(&self.lock);
            self.cvar.notify_all();
        }
    }

    /// The idle path of a worker whose complete `get` just failed. Returns `true` when the
    /// worker should try `get` again (it has left the idle count), `false` when the phase is
    /// over. Never inlined: it is the idle path, and inlined into the worker's loop it makes
    /// the loop larger and slower (3–4 % on N-Queens on `chase-lev`).
    #[inline(never)]
    pub(crate) fn idle<T: Send, P: TaskPool<T>, R: Remote<T>>(
        &self,
        pool: &P,
        remote: &R,
        stats: &mut WorkerStats,
    ) -> bool {
        let t0 = Instant::now();
        let r = self.idle_inner(pool, remote, stats);
        stats.idle += t0.elapsed();
        r
    }

    fn idle_inner<T: Send, P: TaskPool<T>, R: Remote<T>>(
        &self,
        pool: &P,
        remote: &R,
        stats: &mut WorkerStats,
    ) -> bool {
        // With local termination, tasks waiting outside the pool (hinted puts, the `hints`
        // module) are part of a complete failed `get`: a worker looks at them before it
        // counts itself idle, so the argument above extends to them.
        #[cfg(loom)]
        let early = !self.broken_early_check;
        #[cfg(not(loom))]
        let early = true;
        if early && !R::EXTERNAL_END && remote.has_incoming() {
            return true;
        }
        if self.idle.fetch_add(1, Ordering::SeqCst) + 1 == self.workers {
            if !R::EXTERNAL_END {
                self.finish();
                return false;
            }
            remote.all_idle();
        }
        if nested_in_a_wait() {
            // Leave the phase, staying counted idle (see "Leaving early" above).
            stats.retired = true;
            return false;
        }
        let backoff = Backoff::new();
        loop {
            if self.is_done() {
                return false;
            }
            if pool.has_shared_work() || remote.has_incoming() {
                self.idle.fetch_sub(1, Ordering::SeqCst);
                return true;
            }
            if self.policy == WakePolicy::Spin || !backoff.is_completed() {
                backoff.snooze();
                continue;
            }
            let g = lock(&self.lock);
            self.sleepers.fetch_add(1, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            #[cfg(loom)]
            let recheck = !self.broken_recheck;
            #[cfg(not(loom))]
            let recheck = true;
            if self.is_done() || (recheck && (pool.has_shared_work() || remote.has_incoming())) {
                self.sleepers.fetch_sub(1, Ordering::SeqCst);
                drop(g);
                continue;
            }
            let t = Instant::now();
            let g = self.cvar.wait(g).unwrap_or_else(|e| e.into_inner());
            self.sleepers.fetch_sub(1, Ordering::SeqCst);
            drop(g);
            stats.asleep += t.elapsed();
            stats.sleeps += 1;
            backoff.reset();
        }
    }
}

/// Whether this thread is a runtime worker inside a wait (running a job on top of a suspended
/// one). Never under loom, whose models run on plain threads.
pub(super) fn nested_in_a_wait() -> bool {
    crate::runtime::worker::WorkerThread::current().is_some_and(|w| w.waits.get() > 0)
}
