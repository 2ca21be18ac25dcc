//! The worker's loops: its main loop (find work, run it, park when there is none, drain at
//! shutdown) and the wait that runs other jobs until a condition holds (`wait_until`).

use super::{WorkerThread, MAX_STEALING_WAITS, MIN_SPIN_FRACTION, STARVING_ROUNDS};
use crate::runtime::job::JobRef;
use crate::sync::lock;

impl WorkerThread {
    /// Runs jobs until `done()` holds, without sleeping (the job we wait for is running).
    ///
    /// Every caller waits for a job that other threads can reach (a stolen join half on the
    /// caller's stack, an injected install, a scope's spawns), so this must not unwind before
    /// `done()`: jobs catch their own panics, and a panic from the runtime's own code here
    /// aborts the process instead of freeing a frame that another thread still uses.
    pub(crate) fn wait_until(&self, done: impl Fn() -> bool) {
        struct AbortOnUnwind;
        impl Drop for AbortOnUnwind {
            fn drop(&mut self) {
                super::eprintln_best_effort(
                    "taskpools: a fork-join wait unwound while other threads could still use \
                     the job it waits for; aborting",
                );
                std::process::abort();
            }
        }
        let guard = AbortOnUnwind;
        let mut idle = 0u32;
        while !done() {
            if self.run_own_newest() || self.run_one_or_starve(idle >= STARVING_ROUNDS) {
                idle = 0;
            } else {
                idle += 1;
                if idle < 64 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        }
        std::mem::forget(guard);
    }

    /// One step of a wait: answers a pending steal request, then runs one job if there is one
    /// (a job addressed to this worker first, at any depth: a broadcast waits for it; then its
    /// own deque; then, below `MAX_STEALING_WAITS` nested waits, stolen work; then
    /// work injected into this runtime). Injected work is taken at any depth: it may be what
    /// another runtime's worker, itself waiting on us, needs to finish (installs that cross
    /// back and forth between one-thread runtimes), and it grows the stack no more than a pop.
    /// Returns whether it ran a job.
    pub(crate) fn run_one(&self) -> bool {
        self.run_one_or_starve(false)
    }

    /// A wait's fast path, the step [`run_one`](Self::run_one) takes first when nothing is
    /// addressed to this worker: answers a pending steal request and runs the newest job of
    /// its own deque, if any (in a fine-grained scope, the child it just spawned). Returns
    /// whether it ran one; if not, the full step follows.
    #[inline(always)]
    fn run_own_newest(&self) -> bool {
        self.poll();
        if self.registry.has_mail(self.index) {
            return false;
        }
        let Some(j) = self.pop_own() else {
            return false;
        };
        if self.has_places {
            self.idle_since.set(None);
        }
        // SAFETY: popped from our own deque, so executed once, here.
        unsafe { self.run_nested(j) };
        true
    }

    /// One job of this worker's own, if any, run here (`yield_local`): one addressed to it
    /// (a broadcast's share, a `spawn_broadcast` job), else the newest of its deque; answers a
    /// pending steal request first. Returns whether it ran one.
    pub(crate) fn run_own(&self) -> bool {
        self.poll();
        let Some(j) = self.take_mail().or_else(|| self.pop_own()) else {
            return false;
        };
        // SAFETY: taken from our mailbox or our own deque, so executed once, here.
        unsafe { self.run_nested(j) };
        true
    }

    /// Runs `j` inside a wait, one level deeper (`waits`), and restores the depth (jobs catch
    /// their own panics, so it always is).
    ///
    /// # Safety
    /// As [`run_job`](Self::run_job): `j` was taken from a queue and runs once, here.
    #[inline(always)]
    pub(crate) unsafe fn run_nested(&self, j: JobRef) {
        let depth = self.waits.get();
        self.waits.set(depth + 1);
        // SAFETY: the caller's.
        unsafe { self.run_job(j) };
        self.waits.set(depth);
    }

    /// [`run_one`](Self::run_one). A deep wait takes from the places' deques only the tasks
    /// this worker pushed at its depth or deeper (its own subtree's): a place's deque holds
    /// other workers' tasks too, and taking those at any depth let nested waits pile up
    /// unrelated subtrees until the stack overflowed. A `starving` deep wait (one that found
    /// nothing for a long while) takes any place work, so that a wait for a task another
    /// worker pushed into a place deque cannot last forever when every worker is deep.
    pub(crate) fn run_one_or_starve(&self, starving: bool) -> bool {
        self.poll();
        let depth = self.waits.get();
        let job = if depth < MAX_STEALING_WAITS {
            self.find_work()
        } else {
            self.take_mail()
                .or_else(|| self.pop_own())
                .or_else(|| self.take_injected())
                .or_else(|| self.take_own_placed(depth))
                .or_else(|| {
                    if starving {
                        self.pop_place().or_else(|| self.steal_places())
                    } else {
                        None
                    }
                })
        };
        match job {
            Some(j) => {
                if self.has_places {
                    self.idle_since.set(None);
                }
                // SAFETY: a job popped or stolen is executed once, here.
                unsafe { self.run_nested(j) };
                true
            }
            None => false,
        }
    }

    /// Under the adaptive place policy: a worker that sleeps after spinning in vain halves its
    /// spin budget before the next sleep (failures dominate, down to a fiftieth of the
    /// runtime's budget); one that finds work after idling doubles it back (up to the
    /// runtime's budget, `RuntimeBuilder::spin`).
    #[inline]
    fn adapt_spin(&self, found: bool) {
        if !self
            .registry
            .places
            .as_ref()
            .is_some_and(|p| p.policy.adaptive)
        {
            return;
        }
        let (b, max) = (self.spin_budget.get(), self.registry.spin);
        self.spin_budget.set(if found {
            (b * 2).min(max)
        } else {
            (b / 2).max(max / MIN_SPIN_FRACTION)
        });
    }

    /// The worker's loop: runs work until the runtime has shut down, every fire-and-forget job
    /// has finished, and no broadcast holds the runtime (see `spawn.rs`); between pieces of
    /// work it spins a while, then sleeps.
    pub(crate) fn main_loop(&self) {
        // Since when this worker has looked for work in vain (the spin budget's clock).
        let mut idle: Option<std::time::Instant> = None;
        loop {
            self.poll();
            match self.find_work() {
                // SAFETY: as in `wait_until`.
                Some(j) => unsafe {
                    if idle.take().is_some() {
                        self.adapt_spin(true);
                    }
                    self.run_job(j)
                },
                None if idle.get_or_insert_with(std::time::Instant::now).elapsed()
                    < self.spin_budget.get() =>
                {
                    std::thread::yield_now();
                }
                None => {
                    idle = None;
                    if self.may_leave() {
                        break;
                    }
                    self.adapt_spin(false);
                    self.block_requests();
                    if let Some(t) = &self.trace {
                        t.reserve_for_sleep();
                    }
                    let slept = self.registry.sleep_until_work(self.index, || {
                        self.registry.counters[self.index].sleep();
                        if let Some(t) = &self.trace {
                            t.sleep();
                        }
                    });
                    // The idle time keeps counting through a sleep: a worker woken for
                    // another place's hinted task may take it once the delay has passed
                    // (nothing else might wake it again while that place is busy).
                    if slept {
                        if let Some(t) = &self.trace {
                            t.wake();
                        }
                    }
                    self.unblock_requests();
                }
            }
        }
        self.block_requests();
    }

    /// Whether this worker may leave the runtime, having found no work: the runtime has shut
    /// down and every fire-and-forget job has finished (no other job can still be given to it:
    /// `install`, scopes and broadcasts from outside borrow the runtime, and those inside jobs
    /// run inside counted ones). A broadcast that a job started before the shutdown keeps the
    /// worker for its share (`broadcast::claim` refuses new ones after the shutdown).
    fn may_leave(&self) -> bool {
        self.registry.may_exit() && !*lock(&self.registry.broadcast_busy)
    }
}
