//! Nested fork-join on the runtime's workers (Papakonstantinou, PARTEE (2015), §3.1–3.3, the
//! Cilk model): `join`, `scope` with spawns that borrow from the enclosing stack, and
//! `Runtime::install`. The workers, their deques and their sleep/wake belong to
//! [`crate::runtime`]; this module is the front end that forks onto them.
//!
//! Each worker owns a deque of the pool chosen when the runtime is built ([`Pool`]): by default
//! a private deque that thieves reach only through steal requests
//! ([`crate::queue::private_deque`], Acar, Charguéraud & Rainey 2013: the owner's push and pop
//! are plain memory operations, and a fork is where it answers a pending request), or a
//! Chase–Lev deque ([`crate::queue::chase_lev`], thieves take directly; the owner's pop pays a
//! fence). `join(a, b)` on a worker pushes a reference to `b` (which lives on the caller's
//! stack: no allocation), runs `a`, and then pops: if it gets `b` back it runs it inline; if a
//! thief took `b`, it keeps running other work — its own deque first, then stolen jobs — until
//! `b` is done (PARTEE §3.3: a worker waiting at a sync does not idle). Those waits nest when a
//! stolen job waits in turn; beyond 32 nested waits a worker runs only its own jobs while it
//! waits, so stealing cannot grow its stack without bound. Panics in either half are caught
//! and resumed in the caller once neither half can still be running (a half may borrow the
//! caller's stack).
//!
//! On the default pool a worker keeps only a few jobs queued: a `join` made while three jobs
//! already wait in its deque and no thief is asking runs `a` and then `b` as two plain calls
//! (the join's *serial elision*), which costs two loads and a compare. The queued jobs are
//! those of the outermost joins — the ones with the most work under them, which thieves take
//! first — and a join that finds a thief asking queues its `b` and answers, so the deque
//! refills from wherever its owner is as thieves drain it. This is the lazy side of
//! heartbeat scheduling (Acar, Charguéraud & Rainey, PLDI 2018): parallelism is exposed at
//! the rate thieves can use it, not at every fork. A `scope`'s spawns, which are usually
//! coarser, go to a second, public deque per worker (Chase–Lev) that other workers steal from
//! without the owner's help, so a worker busy in a long job, or descheduled, does not hold its
//! spawns back. So does the second half of a join made while its worker has nothing queued
//! (its first join, or the first after thieves took all it had queued: the worker's outermost
//! queued join, the one with the most work under it): a thief takes it at once, instead of
//! waiting for the owner's next fork, which may be far away (quicksort partitions the whole
//! left half before it forks again). It counts as one of the three queued jobs. This is for
//! throughput; which joins find nothing queued depends on the schedule, so it changes nothing
//! in the progress rules below. Outside a worker, `join` and `install` hand the work to a
//! worker and block until it is done.
//!
//! ```
//! use taskpools::forkjoin::{Pool, Runtime};
//! let rt = Runtime::builder().threads(2).pool(Pool::ChaseLev).build()?;
//! let (a, b) = rt.join(|| 1 + 1, || 2 + 2);
//! assert_eq!((a, b), (2, 4));
//! # Ok::<(), taskpools::Error>(())
//! ```
//!
//! `scope(|s| …)` waits for every `s.spawn` before it returns (the implicit sync at the end of
//! a task), so spawns may borrow anything that outlives the scope:
//!
//! ```
//! let mut parts = vec![0u64; 4];
//! taskpools::forkjoin::scope(|s| {
//!     for (i, p) in parts.iter_mut().enumerate() {
//!         s.spawn(move |_| *p = (i as u64 + 1) * 10);
//!     }
//! });
//! assert_eq!(parts, [10, 20, 30, 40]);
//! ```
//!
//! Borrowing rules the compiler enforces (these must not compile):
//!
//! ```compile_fail,E0373
//! // A spawn may not borrow something that dies before the scope ends.
//! taskpools::forkjoin::scope(|s| {
//!     let local = 5;
//!     s.spawn(|_| println!("{local}"));
//! });
//! ```
//!
//! ```compile_fail,E0499
//! // The two halves of a join may not both borrow the same data mutably.
//! let mut v = vec![1];
//! taskpools::forkjoin::join(|| v.push(2), || v.push(3));
//! ```
//!
//! # Progress
//!
//! A join waits for its second half, and a scope for its spawns, by running other work, so
//! fork-join programs never block a worker. A program must also be correct when every `join`
//! runs sequentially, `a` then `b` (its serial elision, the rule of Cilk): on the default
//! [`Pool::PrivateDeque`] a join may run that way, so an `a` that waits for `b` by other means
//! (a spin on a flag, a channel) can wait forever, even if it calls [`yield_now`]. (In rayon,
//! and on [`Pool::ChaseLev`], `b` is always queued; at one thread such a wait finishes there
//! only if it yields.) Work that must run while something else waits for it belongs in a
//! `scope` spawn, which is always queued (or build the runtime with
//! [`RuntimeBuilder::serial_elision(false)`](RuntimeBuilder::serial_elision), which queues every
//! join's `b` at about twice the cost per join). A job that waits for a queued spawn by other
//! means finishes on either pool when another worker is free, since spawns are stolen without
//! their owner's help; with one worker, or every other one busy, it must call [`yield_now`] in
//! its loop (which runs the spawn here). What the pools differ in is a wait for a queued join
//! half (with the elision off, or above the first three): on [`Pool::ChaseLev`] it can be
//! stolen without its owner's help. On the default pool a worker's queued join halves (except
//! those of joins made while it had nothing queued, public for throughput) reach other
//! workers only when the owner answers their requests — at a fork, a join, a scope's end, an
//! `install`, or [`yield_now`] — and which joins find nothing queued depends on the schedule,
//! so such a wait must call [`yield_now`] in its loop, or it may wait forever. The runtime
//! does not hang silently then: a thief whose request goes unanswered for [`STALL_REPORT`]
//! prints one diagnostic per runtime to stderr naming the cause and the fix. Keeping the
//! private pool's push and pop free of fences is the point of that pool, which is why only a
//! join that finds nothing queued pays for a public half.
//!
//! Work belongs to a runtime: a scope's spawns run on the scope's runtime whichever thread
//! spawns them, and a worker of one runtime that calls [`Runtime::install`] on another keeps
//! running its own runtime's work while it waits.
//!
//! Spawned closures of up to 88 bytes (a slot's 96 less the scope pointer that the runtime adds)
//! live in per-thread recycled slots, so a scope that spawns in a loop stops allocating once
//! warm; larger ones get a box each (`tests/forkjoin_alloc.rs` counts both).

mod cancel;
mod context;
#[cfg(all(test, loom))]
mod loom_models;
mod on_runtime;
mod scope;

pub use crate::cancel::{BoxError, Cause, ScopeError, TaskPanic};
pub use crate::runtime::{
    broadcast, current_num_threads, current_thread_has_pending_tasks, current_thread_index,
    max_num_threads, spawn, spawn_broadcast, spawn_fifo, yield_local, yield_now, BroadcastContext,
    Pool, Runtime, RuntimeBuilder, ThreadBuilder, Yield, NUM_THREADS_ENV, STALL_REPORT,
};
pub use cancel::try_scope;
pub use context::{join_context, join_context_strict, FnContext};
pub use scope::{in_place_scope, in_place_scope_fifo, scope, scope_fifo, Scope};

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use crate::panics::first_of;
use crate::runtime::global;
use crate::runtime::job::{self, StackJob};
use crate::runtime::worker::{LocalDeque, PrivateFrames, WorkerThread};

/// Runs `a` and `b`, potentially in parallel, and returns both results. On a worker it forks
/// onto that worker's runtime; elsewhere it runs on the global runtime (one worker per CPU).
/// A panic in either closure is resumed here, once neither can still be running.
///
/// ```
/// use taskpools::forkjoin::join;
///
/// fn sum(v: &[u64]) -> u64 {
///     if v.len() <= 1024 {
///         return v.iter().sum();
///     }
///     let (l, r) = v.split_at(v.len() / 2);
///     let (a, b) = join(|| sum(l), || sum(r));
///     a + b
/// }
///
/// let v: Vec<u64> = (0..100_000).collect();
/// assert_eq!(sum(&v), 4_999_950_000);
/// ```
///
/// The program must be correct if `a` and `b` run one after the other on this thread (the
/// join's serial elision, which the default pool uses once a few jobs are queued): `a` must not
/// wait for `b` except through fork-join itself. Work that something waits for belongs in a
/// [`scope()`] spawn. See the module docs, "Progress". If `a` panics, `b` may or may not have run.
#[inline]
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    match WorkerThread::current() {
        Some(w) => join_on::<false, _, _, _, _>(w, a, b),
        None => join_outside::<false, _, _, _, _>(a, b),
    }
}

/// `join` (or, with `STRICT`, [`join_strict`]) from a thread that is not a worker: on a worker
/// of the global runtime. Out of line, so that the worker path above stays small enough to be
/// inlined into recursive callers.
#[cold]
#[inline(never)]
fn join_outside<const STRICT: bool, A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    global().install(|| {
        let w = WorkerThread::current().expect("install runs on a worker");
        join_on::<STRICT, _, _, _, _>(w, a, b)
    })
}

/// [`join`], except that `b` always runs, also when `a` panics: the panic is resumed once both
/// have finished, and when both panic, `a`'s (rayon's rule, which the drop-in `rayon-core`
/// keeps). The queued paths of `join` already run both halves; what differs is the serial
/// elision, which here runs `a` under `catch_unwind` (about 25 instructions, against the two
/// loads and a compare of `join`'s elision) and, if it panicked, `b` too before resuming.
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use taskpools::forkjoin::join_strict;
///
/// let b_ran = AtomicBool::new(false);
/// let r = std::panic::catch_unwind(|| {
///     join_strict(|| panic!("a"), || b_ran.store(true, Ordering::Relaxed))
/// });
/// assert!(r.is_err()); // `a`'s panic, resumed after `b` ran
/// assert!(b_ran.load(Ordering::Relaxed));
/// ```
#[inline]
pub fn join_strict<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    match WorkerThread::current() {
        Some(w) => join_on::<true, _, _, _, _>(w, a, b),
        None => join_outside::<true, _, _, _, _>(a, b),
    }
}

/// A join on worker `w`; `STRICT` runs `b` even when `a` panics on the serial elision too
/// ([`join_strict`]).
#[inline(always)]
pub(super) fn join_on<const STRICT: bool, A, B, RA, RB>(w: &WorkerThread, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    if let LocalDeque::Private(p) = &w.deque {
        if p.frames.len() >= p.exposed.get() && !p.req.pending() {
            // The serial elision (see `EXPOSED`, in `runtime/worker/local_deque.rs`).
            if STRICT {
                return match catch_unwind(AssertUnwindSafe(a)) {
                    Ok(ra) => (ra, b()),
                    Err(p) => run_then_resume(p, b),
                };
            }
            let ra = a();
            return (ra, b());
        }
    }
    join_queued(w, a, b)
}

/// A strict join's elision after `a` panicked: runs `b`, then resumes `a`'s panic (`b`'s
/// payload, if it panicked too, dropped first).
#[cold]
#[inline(never)]
fn run_then_resume<B: FnOnce() -> RB, RB>(p: crate::panics::Payload, b: B) -> ! {
    let rb = catch_unwind(AssertUnwindSafe(b));
    resume_unwind(first_of(Some(p), rb.err()).expect("a panic"))
}

/// A `join` that queues `b`. Out of line, so that a recursion whose joins mostly take the
/// serial elision does not carry this path's frame and saved registers.
#[inline(never)]
fn join_queued<A, B, RA, RB>(w: &WorkerThread, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    match &w.deque {
        LocalDeque::Private(p) => {
            if w.registry.threads > 1 && p.nothing_queued() {
                join_public(w, p, a, b)
            } else {
                join_private(w, p, a, b)
            }
        }
        LocalDeque::ChaseLev(_) => join_chase_lev(w, a, b),
    }
}

/// A join made by a worker that has nothing queued (on the default pool; its first join, or
/// the first after thieves took everything it had queued): `b` goes to the worker's public
/// spawn deque, where other workers take it without the owner's help, instead of the private
/// frame stack, where they would wait for the owner's next fork. This is the worker's
/// outermost queued join, the one with the most work under it, and its first half may run
/// long without forking (quicksort's partition of the left half): a thief should not wait for
/// that. The owner pays a Chase–Lev push, a wake-up check and a pop (two fences) for it;
/// while `a` runs, the joins inside it queue privately as usual, one fewer of them before the
/// serial elision (the public half counts as one, even after a thief took it).
#[inline]
fn join_public<A, B, RA, RB>(w: &WorkerThread, p: &PrivateFrames, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let job_b = StackJob::new(b);
    p.push_public_join(job_b.as_job_ref());
    // Every time, as for a spawn (the deque was empty, so this is also the `was_empty` rule).
    w.registry.notify_one();
    p.poll();
    // A panic in `a` is caught so that `b` (which lives in this frame) is finished first.
    let ra = catch_unwind(AssertUnwindSafe(a));
    p.end_public_join();
    let rb = finish_public_join(&p.spawns, &job_b, |done| w.wait_until(done));
    both(ra, rb)
}

/// Both halves' results, or the first half's panic (else the second's) resumed: once neither
/// half can still be running. When both panicked, the second payload is dropped before the
/// first is resumed (not during its unwind, where a drop that panics would abort).
#[inline(always)]
fn both<RA, RB>(ra: std::thread::Result<RA>, rb: job::Outcome<RB>) -> (RA, RB) {
    match (ra, rb) {
        (Ok(ra), Ok(rb)) => (ra, rb),
        (Err(p), rb) => resume_unwind(first_of(Some(p), rb.err()).expect("a panic")),
        (Ok(_), Err(p)) => resume_unwind(p),
    }
}

/// After the first half of [`join_public`]: every job pushed onto `spawns` while `a` ran has
/// been popped or stolen again (joins take theirs back, scopes wait for theirs), so `b` is on
/// top, unless a thief took it or this worker already ran it while waiting inside `a` (a wait
/// pops spawns first). Jobs that such a wait left above it (spawns made by a stolen spawn, for
/// the scope of another worker) run first. If a thief took `b`, nothing older is left in the
/// deque either (thieves take the oldest first), so the worker waits, running other work.
/// With the wait for a thief passed in (the loom models wait without a worker).
fn finish_public_join<F: FnOnce() -> R + Send, R: Send>(
    spawns: &crate::queue::chase_lev::Worker<job::JobRef>,
    job_b: &StackJob<F, R>,
    wait: impl FnOnce(&dyn Fn() -> bool),
) -> job::Outcome<R> {
    let b_ref = job_b.as_job_ref();
    loop {
        if job_b.is_done() {
            return job_b.take_outcome();
        }
        match spawns.pop() {
            // SAFETY: popped from our own deque: ours alone now, run once, here.
            Some(j) if j == b_ref => return unsafe { job_b.run_inline() },
            // SAFETY: a job popped from our deque is executed once, here.
            Some(j) => unsafe { j.execute() },
            None => {
                wait(&|| job_b.is_done());
                return job_b.take_outcome();
            }
        }
    }
}

/// `join` on a frame stack: the fork is three stores and a poll, the join's check is one load.
#[inline(always)]
fn join_private<A, B, RA, RB>(w: &WorkerThread, p: &PrivateFrames, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let job_b = StackJob::new(b);
    if p.push(job_b.as_job_ref()) && w.registry.threads > 1 {
        w.registry.notify_one();
    }
    p.poll();
    // A panic in `a` is caught so that `b` (which lives in this frame) is finished first.
    let ra = catch_unwind(AssertUnwindSafe(a));
    let rb = if p.take_back(job_b.header()) {
        match ra {
            // Nothing to finish first if `b` panics: its panic leaves as it is.
            // SAFETY: taken back from our frame stack: ours alone now, run once, here.
            Ok(ra) => return (ra, unsafe { job_b.call_inline() }),
            // SAFETY: as above.
            Err(_) => unsafe { job_b.run_inline() },
        }
    } else {
        join_private_slow(w, p, &job_b)
    };
    both(ra, rb)
}

/// `b` was not simply on top after `a`: a thief took it, or this worker already ran it while
/// it waited inside `a`, or jobs that such a wait left behind (spawns made by a stolen spawn)
/// sit above it. Runs those first, then `b`; or waits for the thief.
#[cold]
#[inline(never)]
fn join_private_slow<F: FnOnce() -> R + Send, R: Send>(
    w: &WorkerThread,
    p: &PrivateFrames,
    job_b: &StackJob<F, R>,
) -> job::Outcome<R> {
    finish_private_join(p, job_b, |done| w.wait_until(done))
}

/// The body of [`join_private_slow`], with the wait for a thief passed in (the loom models
/// wait without a worker).
fn finish_private_join<F: FnOnce() -> R + Send, R: Send>(
    p: &PrivateFrames,
    job_b: &StackJob<F, R>,
    wait: impl FnOnce(&dyn Fn() -> bool),
) -> job::Outcome<R> {
    while job_b.header().state() == job::QUEUED {
        if p.take_back(job_b.header()) {
            // SAFETY: taken back from our frame stack: ours alone now, run once, here.
            return unsafe { job_b.run_inline() };
        }
        // SAFETY: a job above `b` on our own stack; popped, so executed once, here.
        match p.pop() {
            Some(j) => unsafe { j.execute() },
            None => unreachable!("`b` is queued, so the stack is not empty"),
        }
    }
    if !job_b.is_done() {
        wait(&|| job_b.is_done());
    }
    job_b.take_outcome()
}

/// `join` on a Chase–Lev deque.
#[inline]
fn join_chase_lev<A, B, RA, RB>(w: &WorkerThread, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let job_b = StackJob::new(b);
    let b_ref = job_b.as_job_ref();
    w.push(b_ref);
    // A panic in `a` is caught so that `b` (which lives in this frame) is finished first.
    let ra = catch_unwind(AssertUnwindSafe(a));
    // Every job pushed while `a` ran has been popped again (joins pop theirs, scopes wait for
    // theirs), so `b` is on top unless a thief took it (then the deque is empty) or this worker
    // already ran it while waiting inside `a`.
    let rb = loop {
        if job_b.is_done() {
            break job_b.take_outcome();
        }
        match w.pop() {
            Some(j) if j == b_ref => match ra {
                // Nothing to finish first if `b` panics: its panic leaves as it is.
                // SAFETY: popped from our own deque: ours alone now, run once, here.
                Ok(ra) => return (ra, unsafe { job_b.call_inline() }),
                // SAFETY: as above.
                Err(_) => break unsafe { job_b.run_inline() },
            },
            // SAFETY: a job popped from our deque is executed once, here.
            Some(j) => unsafe { j.execute() },
            None => {
                w.wait_until(|| job_b.is_done());
                break job_b.take_outcome();
            }
        }
    };
    both(ra, rb)
}
