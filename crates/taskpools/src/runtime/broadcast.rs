//! Work for each worker at once: a *broadcast* posts one share per worker to the workers'
//! mailboxes and waits until every share has run; `spawn_broadcast` posts a fire-and-forget
//! job to every worker. A working phase is a broadcast whose shares run the phase loop.
//!
//! # Why it cannot hang
//!
//! Every place where a worker looks for work — its loop, and every wait of a join, scope,
//! install or broadcast, at any nesting depth — takes a job from its mailbox first (mailboxes
//! are queues), and a post wakes sleeping workers (see `registry.rs`). So a share waits only
//! for its worker to finish what it is running *now*, and broadcasts need not exclude each
//! other: as in rayon, any number may be in flight, nested inside each other's shares or
//! across runtimes, and each worker runs the shares addressed to it in order, also while it
//! waits inside one.
//!
//! A working phase is the exception: its shares run the phase loop, which does not look at the
//! mailbox until the phase ends. So a phase *claims* its runtime (`Registry::broadcast_busy`),
//! one at a time, and while it holds it:
//!
//! - a broadcast (or a scope's `spawn_broadcast`, which a scope then waits for) started on one
//!   of that runtime's workers is refused ([`Error::PhaseBusy`]: `try_broadcast` returns it,
//!   `broadcast` panics with it). Its shares would wait for the phase's workers, and the phase
//!   may wait for the caller: a phase task, or a job stolen from one (a phase over fewer
//!   workers than the runtime has leaves some workers free to steal);
//! - a broadcast from any other thread waits for the phase to end: a thread outside every
//!   runtime blocks; a worker of another runtime runs its own runtime's work meanwhile.
//!
//! A phase started on a worker while another holds the runtime is refused the same way
//! (`claim`), and its entry then tries another runtime.
//!
//! While a worker runs a share it declines fork-join steal requests (on the private-deque pool
//! a thief waits for an answer that the share's loop would not give); it answers them again
//! when the share ends.

use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use super::job::StackJob;
use super::registry::Registry;
use super::spawn::post_counted;
use super::worker::WorkerThread;
use super::{global, install_in, Runtime};
use crate::panics::drop_payload;
use crate::sync::{lock, Arc, Ordering};
use crate::Error;

/// Where a broadcast's call runs: the worker's index and the runtime's size (rayon's
/// `BroadcastContext`).
///
/// ```
/// let rt = taskpools::Runtime::new(2)?;
/// // Each worker sums its own stripe of 0..100.
/// let parts = rt.broadcast(|ctx| {
///     (0..100u64).skip(ctx.index()).step_by(ctx.num_threads()).sum::<u64>()
/// });
/// assert_eq!(parts.iter().sum::<u64>(), 4950);
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Debug)]
pub struct BroadcastContext<'a> {
    index: usize,
    num_threads: usize,
    _marker: PhantomData<&'a mut ()>,
}

impl BroadcastContext<'_> {
    pub(crate) fn new(index: usize, num_threads: usize) -> Self {
        BroadcastContext {
            index,
            num_threads,
            _marker: PhantomData,
        }
    }

    /// The index of the worker this call runs on (`0..num_threads()`).
    ///
    /// ```
    /// let rt = taskpools::Runtime::new(2)?;
    /// assert_eq!(rt.broadcast(|ctx| ctx.index()), [0, 1]);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of workers of the runtime, so the number of calls of the broadcast.
    ///
    /// ```
    /// let rt = taskpools::Runtime::new(2)?;
    /// assert_eq!(rt.broadcast(|ctx| ctx.num_threads()), [2, 2]);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn num_threads(&self) -> usize {
        self.num_threads
    }
}

impl Runtime {
    /// Runs `f` once on every worker of this runtime, all at the same time, and returns the
    /// results in worker order (rayon's `broadcast`). A panic in any call is resumed here after
    /// every call has ended.
    ///
    /// Broadcasts do not exclude each other (they may nest, also across runtimes). While a
    /// working phase holds the runtime, this waits for it to end, except on one of the
    /// runtime's own workers, which could be what the phase waits for: there it panics with
    /// [`Error::PhaseBusy`]'s message ([`try_broadcast`] returns the error instead). It also
    /// panics on a runtime that is shutting down.
    ///
    /// [`try_broadcast`]: Self::try_broadcast
    ///
    /// ```
    /// let rt = taskpools::Runtime::new(2)?;
    /// let seen = rt.broadcast(|ctx| (ctx.index(), ctx.num_threads()));
    /// assert_eq!(seen, [(0, 2), (1, 2)]);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn broadcast<R: Send>(&self, f: impl Fn(BroadcastContext<'_>) -> R + Sync) -> Vec<R> {
        match self.try_broadcast(f) {
            Ok(r) => r,
            Err(e) => panic!("Runtime::broadcast: {e}"),
        }
    }

    /// [`broadcast`](Self::broadcast), returning [`Error::PhaseBusy`] where it would wait for
    /// a working phase that may wait for it, and [`Error::ShuttingDown`] on a runtime that is
    /// shutting down.
    ///
    /// ```
    /// let rt = taskpools::Runtime::new(2)?;
    /// // Broadcasts nest: each share broadcasts again.
    /// let inner = rt.broadcast(|_| rt.try_broadcast(|ctx| ctx.index()).unwrap());
    /// assert_eq!(inner, [vec![0, 1], vec![0, 1]]);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn try_broadcast<R: Send>(
        &self,
        f: impl Fn(BroadcastContext<'_>) -> R + Sync,
    ) -> Result<Vec<R>, Error> {
        broadcast_in(&self.registry, f)
    }

    /// Runs `f` once on every worker of this runtime without waiting for it (rayon's
    /// `spawn_broadcast`): each call is a fire-and-forget job addressed to its worker, which
    /// runs it at its next look for work (after a working phase that holds it has ended);
    /// panics go to the [`panic_handler`](super::RuntimeBuilder::panic_handler).
    ///
    /// ```
    /// use std::sync::mpsc;
    /// let rt = taskpools::Runtime::new(2)?;
    /// let (tx, rx) = mpsc::channel();
    /// let tx = std::sync::Mutex::new(tx);
    /// rt.spawn_broadcast(move |ctx| tx.lock().unwrap().send(ctx.index()).unwrap());
    /// let mut seen: Vec<usize> = rx.iter().take(2).collect();
    /// seen.sort();
    /// assert_eq!(seen, [0, 1]);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn spawn_broadcast(&self, f: impl Fn(BroadcastContext<'_>) + Send + Sync + 'static) {
        spawn_broadcast_in(&self.registry, f);
    }
}

/// [`Runtime::broadcast`] on the current worker's runtime, or, on a thread that is not a
/// worker, on the global runtime (rayon's `broadcast`).
///
/// ```
/// let n = taskpools::broadcast(|ctx| ctx.num_threads()).len();
/// assert_eq!(n, taskpools::current_num_threads());
/// ```
///
/// # Panics
/// On a worker while a working phase holds its runtime ([`Error::PhaseBusy`]'s message), or on
/// a runtime that is shutting down.
pub fn broadcast<R: Send>(f: impl Fn(BroadcastContext<'_>) -> R + Sync) -> Vec<R> {
    match WorkerThread::current() {
        Some(w) => match broadcast_in(&w.registry, f) {
            Ok(r) => r,
            Err(e) => panic!("broadcast: {e}"),
        },
        None => global().broadcast(f),
    }
}

/// [`Runtime::spawn_broadcast`] on the current worker's runtime, or, on a thread that is not a
/// worker, on the global runtime (rayon's `spawn_broadcast`).
///
/// ```
/// use std::sync::{mpsc, Mutex};
///
/// let rt = taskpools::Runtime::new(2)?;
/// let (tx, rx) = mpsc::channel();
/// let tx = Mutex::new(tx);
/// // Called on a worker, it addresses that worker's runtime: one call per worker.
/// rt.install(|| {
///     taskpools::spawn_broadcast(move |ctx| tx.lock().unwrap().send(ctx.index()).unwrap())
/// });
/// let mut seen: Vec<usize> = rx.iter().take(2).collect();
/// seen.sort();
/// assert_eq!(seen, [0, 1]);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn spawn_broadcast(f: impl Fn(BroadcastContext<'_>) + Send + Sync + 'static) {
    match WorkerThread::current() {
        Some(w) => spawn_broadcast_in(&w.registry, f),
        None => global().spawn_broadcast(f),
    }
}

/// A fire-and-forget job running `f` posted to every worker of the runtime of `registry`.
fn spawn_broadcast_in(
    registry: &Registry,
    f: impl Fn(BroadcastContext<'_>) + Send + Sync + 'static,
) {
    let f = std::sync::Arc::new(f);
    let n = registry.threads;
    for i in 0..n {
        let f = std::sync::Arc::clone(&f);
        post_counted(registry, i, move || f(BroadcastContext::new(i, n)));
    }
}

/// A broadcast (not a phase) on the runtime of `registry`, once no working phase holds it
/// (module docs).
fn broadcast_in<R: Send>(
    registry: &Arc<Registry>,
    f: impl Fn(BroadcastContext<'_>) -> R + Sync,
) -> Result<Vec<R>, Error> {
    wait_for_phases(registry)?;
    let n = registry.threads;
    Ok(install_in(registry, || {
        let w = WorkerThread::current().expect("install runs on a worker of this runtime");
        broadcast_on(w, n, &|i| f(BroadcastContext::new(i, n)))
    }))
}

/// Returns once no working phase holds the runtime of `registry`: at once if none does;
/// [`Error::PhaseBusy`] on one of its workers while one does (the phase may be waiting for this
/// very worker); else it waits for the phase to end, blocking on a thread outside every runtime,
/// running its own runtime's work on a worker of another. [`Error::ShuttingDown`] if the
/// runtime is shutting down. (A phase may claim the runtime right after this returns: the
/// broadcast's shares then queue behind or before the phase's, which is safe, see the module
/// docs.)
pub(crate) fn wait_for_phases(registry: &Registry) -> Result<(), Error> {
    let worker = WorkerThread::current();
    let mut busy = lock(&registry.broadcast_busy);
    loop {
        if registry.shutdown.load(Ordering::Acquire) {
            return Err(Error::ShuttingDown);
        }
        if !*busy {
            return Ok(());
        }
        match worker {
            Some(w) if std::ptr::eq(&*w.registry, registry) => return Err(Error::PhaseBusy),
            Some(w) => {
                drop(busy);
                if !w.run_one() {
                    std::thread::yield_now();
                }
                busy = lock(&registry.broadcast_busy);
            }
            None => {
                busy = registry
                    .broadcast_free
                    .wait(busy)
                    .unwrap_or_else(|e| e.into_inner());
            }
        }
    }
}

/// A working phase's hold on one runtime (module docs); released when dropped (also when a
/// share's panic is resumed).
pub(crate) struct Claim<'a>(&'a Registry);

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        *lock(&self.0.broadcast_busy) = false;
        self.0.broadcast_free.notify_all();
        // Workers of a runtime that shut down while this phase held it stayed for it; those
        // asleep may leave now.
        if self.0.shutdown.load(Ordering::Acquire) {
            self.0.notify_all();
        }
    }
}

/// Claims `registry` for one working phase: waits for the claim on a thread outside every
/// runtime, and fails at once on a worker (module docs).
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

/// Runs `f(i)` on workers `0..n` of the runtime of `registry` (`1 <= n <= threads`) for the
/// working phase that holds `claim`; returns the results and the time from the first post to
/// the last share's end (the wait for the claim not included).
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

/// The broadcast itself, on worker `w` of its runtime: posts the other workers' shares, runs
/// its own (if `w.index < n`), and waits for the rest by running other work (mail first).
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
        // unwind out of here before `wait_until` below has seen every one done. (`post` does
        // not panic, but this does not depend on it.)
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
