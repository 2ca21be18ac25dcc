//! `join_context`: a join whose closures learn whether they run on another thread than the one
//! that called the join (rayon's `join_context` and `FnContext`). rayon's parallel iterators
//! split again when a half was stolen (`migrated()`), to use the thief adaptively.

use std::marker::PhantomData;

use crate::runtime::global;
use crate::runtime::worker::WorkerThread;

/// What a closure of [`join_context`] is told about where it runs.
///
/// ```
/// use taskpools::forkjoin::{join_context, Runtime};
///
/// /// Joins down a binary tree of depth `d`: (joins, second halves run by another worker).
/// fn walk(d: u32) -> (u32, u32) {
///     if d == 0 {
///         return (0, 0);
///     }
///     let ((j1, m1), (j2, m2)) = join_context(
///         |_| walk(d - 1),
///         |cb| {
///             let (j, m) = walk(d - 1);
///             (j, m + cb.migrated() as u32)
///         },
///     );
///     (1 + j1 + j2, m1 + m2)
/// }
/// let rt = Runtime::new(2)?;
/// let (joins, migrated) = rt.install(|| walk(8));
/// assert_eq!(joins, 255);
/// assert!(migrated <= joins); // how many were stolen depends on the schedule
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Debug)]
pub struct FnContext {
    migrated: bool,
    /// Not `Send` or `Sync`, as rayon's.
    _marker: PhantomData<*mut ()>,
}

impl FnContext {
    fn new(migrated: bool) -> Self {
        FnContext {
            migrated,
            _marker: PhantomData,
        }
    }

    /// Whether the closure runs on another thread than the one that called `join_context`:
    /// for the second closure, that another worker took it; for both, that the join was
    /// called from a thread that is not a worker and so handed to one.
    ///
    /// ```
    /// let rt = taskpools::Runtime::new(1)?;
    /// // On a one-worker runtime nothing is stolen: both closures run where the join was called.
    /// let both = rt.install(|| {
    ///     taskpools::forkjoin::join_context(|a| a.migrated(), |b| b.migrated())
    /// });
    /// assert_eq!(both, (false, false));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn migrated(&self) -> bool {
        self.migrated
    }
}

/// [`join`](super::join), with a [`FnContext`] for each closure (rayon's `join_context`).
///
/// ```
/// let rt = taskpools::Runtime::new(1)?;
/// let (a, b) = rt.install(|| {
///     taskpools::forkjoin::join_context(|ca| ca.migrated(), |cb| cb.migrated())
/// });
/// assert_eq!((a, b), (false, false)); // one worker: nothing can move
/// let (a, _) = taskpools::forkjoin::join_context(|ca| ca.migrated(), |_| ());
/// assert!(a); // called outside the runtime: handed to a worker
/// # Ok::<(), taskpools::Error>(())
/// ```
#[inline]
pub fn join_context<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    match WorkerThread::current() {
        Some(w) => join_context_on::<false, _, _, _, _>(w, a, b, false),
        None => join_context_outside::<false, _, _, _, _>(a, b),
    }
}

/// [`join_context`] with [`join_strict`](super::join_strict)'s panic rule: `b` always runs,
/// also when `a` panics, and the first closure's panic wins (rayon's `join_context`).
///
/// ```
/// use std::panic::AssertUnwindSafe;
/// use std::sync::atomic::{AtomicBool, Ordering};
///
/// let rt = taskpools::Runtime::new(1)?;
/// let b_ran = AtomicBool::new(false);
/// let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
///     rt.install(|| {
///         taskpools::forkjoin::join_context_strict(
///             |_| panic!("a"),
///             |cb| b_ran.store(!cb.migrated(), Ordering::Relaxed), // one worker: not moved
///         )
///     })
/// }));
/// assert!(r.is_err() && b_ran.load(Ordering::Relaxed));
/// # Ok::<(), taskpools::Error>(())
/// ```
#[inline]
pub fn join_context_strict<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    match WorkerThread::current() {
        Some(w) => join_context_on::<true, _, _, _, _>(w, a, b, false),
        None => join_context_outside::<true, _, _, _, _>(a, b),
    }
}

#[cold]
#[inline(never)]
fn join_context_outside<const STRICT: bool, A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    global().install(|| {
        let w = WorkerThread::current().expect("install runs on a worker");
        join_context_on::<STRICT, _, _, _, _>(w, a, b, true)
    })
}

#[inline(always)]
fn join_context_on<const STRICT: bool, A, B, RA, RB>(
    w: &WorkerThread,
    a: A,
    b: B,
    injected: bool,
) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    // The caller's worker, as an address: `b` compares it with the worker it runs on.
    let me = w as *const WorkerThread as usize;
    super::join_on::<STRICT, _, _, _, _>(
        w,
        move || a(FnContext::new(injected)),
        move || {
            let here = WorkerThread::current().map_or(0, |w| w as *const WorkerThread as usize);
            b(FnContext::new(injected || here != me))
        },
    )
}
