//! Work for each worker at once: a *broadcast* posts one share per worker to the workers'
//! mailboxes and waits until every share has run. A working phase is a broadcast whose shares
//! run the phase loop.
//!
//! # Why it cannot hang
//!
//! Every place where a worker looks for work — its loop, and every wait of a join, scope,
//! install or broadcast, at any nesting depth — takes a job from its mailbox first, and a post
//! wakes sleeping workers (see `registry.rs`). So a share waits only for its worker to finish
//! what it is running *now*. A worker running a share of broadcast A cannot be expected to take
//! a share of broadcast B; so one broadcast holds a runtime at a time, claimed through
//! `Registry::broadcast_busy`: a thread outside the runtime waits for the claim (it holds no
//! worker), while a worker — of this runtime or of another — that finds the runtime claimed
//! returns [`Error::PhaseBusy`] instead of waiting (it may be a
//! worker that the running broadcast needs, directly or through a job it stole).
//!
//! While a worker runs a share it declines fork-join steal requests (on the private-deque pool
//! a thief waits for an answer that the share's loop would not give); it answers them again
//! when the share ends.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use super::job::StackJob;
use super::registry::Registry;
use super::worker::WorkerThread;
use super::{install_in, Runtime};
use crate::panics::drop_payload;
use crate::sync::{lock, Arc, Ordering};
use crate::Error;

impl Runtime {
    /// Runs `f(i)` once on every worker `i` of this runtime, all at the same time, and returns
    /// the results in worker order (rayon's `broadcast`). A panic in any call is resumed here
    /// after every call has ended.
    ///
    /// Fails with [`Error::PhaseBusy`] when called on a worker while another broadcast or
    /// working phase holds this runtime (from a thread outside the runtime it waits instead).
    pub fn broadcast<R: Send>(&self, f: impl Fn(usize) -> R + Sync) -> Result<Vec<R>, Error> {
        let claim = claim(&self.registry)?;
        Ok(broadcast_claimed(&self.registry, claim, self.threads(), &f).0)
    }
}

/// The right to broadcast on one runtime; released when dropped (also when a share's panic
/// is resumed).
pub(crate) struct Claim<'a>(&'a Registry);

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        *lock(&self.0.broadcast_busy) = false;
        self.0.broadcast_free.notify_all();
    }
}

/// Claims `registry` for one broadcast: waits for the claim on a thread outside every runtime,
/// and fails at once on a worker (module docs).
pub(crate) fn claim(registry: &Registry) -> Result<Claim<'_>, Error> {
    let mut busy = lock(&registry.broadcast_busy);
    // Checked under the lock: a worker that leaves at shutdown looks at the claim under the
    // same lock, so either it sees this claim (and stays for its share) or this sees the
    // shutdown.
    if registry.shutdown.load(Ordering::Acquire) {
        return Err(Error::ShuttingDown);
    }
    if WorkerThread::current().is_some() {
        if *busy {
            return Err(Error::PhaseBusy);
        }
    } else {
        while *busy {
            busy = registry
                .broadcast_free
                .wait(busy)
                .unwrap_or_else(|e| e.into_inner());
            if registry.shutdown.load(Ordering::Acquire) {
                return Err(Error::ShuttingDown);
            }
        }
    }
    *busy = true;
    Ok(Claim(registry))
}

/// Runs `f(i)` on workers `0..n` of the runtime of `registry` (`1 <= n <= threads`), which
/// `claim` holds; returns the results and the time from the first post to the last share's
/// end (the wait for the claim not included).
pub(crate) fn broadcast_claimed<R: Send, F: Fn(usize) -> R + Sync>(
    registry: &Arc<Registry>,
    claim: Claim<'_>,
    n: usize,
    f: &F,
) -> (Vec<R>, Duration) {
    assert!(
        std::ptr::eq(claim.0, &**registry),
        "the claim is on the broadcast's runtime"
    );
    assert!(
        (1..=registry.threads).contains(&n),
        "a broadcast over {n} of {} workers",
        registry.threads
    );
    let r = install_in(registry, || {
        let w = WorkerThread::current().expect("install runs on a worker of this runtime");
        let start = Instant::now();
        let results = broadcast_on(w, n, f);
        (results, start.elapsed())
    });
    drop(claim);
    r
}

/// The broadcast itself, on worker `w` of the claimed runtime: posts the other workers'
/// shares, runs its own (if `w.index < n`), and waits for the rest by running other work.
fn broadcast_on<R: Send, F: Fn(usize) -> R + Sync>(w: &WorkerThread, n: usize, f: &F) -> Vec<R> {
    // A share, on the worker it is addressed to.
    let share = |i: usize| {
        let me = WorkerThread::current().expect("a share runs on a worker");
        debug_assert_eq!(me.index, i, "a share runs on its addressee");
        struct Unblock<'a>(&'a WorkerThread);
        impl Drop for Unblock<'_> {
            fn drop(&mut self) {
                self.0.unblock_requests();
            }
        }
        me.block_requests();
        let _unblock = Unblock(me);
        f(i)
    };
    let others: Vec<usize> = (0..n).filter(|&i| i != w.index).collect();
    // The jobs stay in this vector, which is not resized after this, until all have run.
    let jobs: Vec<_> = others
        .iter()
        .map(|&i| StackJob::new(move || share(i)))
        .collect();
    {
        // A job once posted lives in `jobs`, in this frame, until it has run: nothing may
        // unwind out of here before `wait_until` below has seen every one done. (`post` cannot
        // panic while the claim is held — every mailbox is empty between broadcasts — but
        // this does not depend on it.)
        struct AbortOnUnwind;
        impl Drop for AbortOnUnwind {
            fn drop(&mut self) {
                super::eprintln_best_effort(
                    "taskpools: posting a broadcast's shares failed after some were posted; \
                     aborting",
                );
                std::process::abort();
            }
        }
        let guard = AbortOnUnwind;
        for (job, &i) in jobs.iter().zip(&others) {
            w.registry.post(i, job.as_job_ref());
        }
        std::mem::forget(guard);
    }
    let own = (w.index < n).then(|| catch_unwind(AssertUnwindSafe(|| share(w.index))));
    // The posted jobs live in this frame: `wait_until` does not return (or unwind) before
    // every one of them has run.
    w.wait_until(|| jobs.iter().all(StackJob::is_done));
    let mut outcomes: Vec<Option<std::thread::Result<R>>> = (0..n).map(|_| None).collect();
    for (job, &i) in jobs.iter().zip(&others) {
        outcomes[i] = Some(job.take_outcome());
    }
    if let Some(o) = own {
        outcomes[w.index] = Some(o);
    }
    let mut results = Vec::with_capacity(n);
    let mut panic = None;
    for o in outcomes {
        match o.expect("every share ran") {
            Ok(r) => results.push(r),
            // The first share's panic is resumed; the others' are dropped now, not during
            // its unwind.
            Err(p) if panic.is_none() => panic = Some(p),
            Err(p) => drop_payload(p),
        }
    }
    if let Some(p) = panic {
        drop(results);
        resume_unwind(p);
    }
    results
}
