//! Stopping a fork-join scope early (oneTBB's `task_group::cancel`): [`Scope::cancel`],
//! [`Scope::try_spawn`] and [`try_scope`]. The stop state and its ordering are
//! `crate::cancel`'s; a job checks it just before it starts (`Scope::run_spawned`).

use super::scope::{run_on, Scope};
use crate::cancel::{BoxError, ScopeError};
use crate::runtime::global;
use crate::runtime::worker::WorkerThread;

impl<'scope> Scope<'scope> {
    /// Cancels the scope: every spawn of it that has not started yet is skipped (its closure
    /// is dropped unrun), including spawns made after this call. Running jobs go on; they may
    /// poll [`is_cancelled`](Self::is_cancelled) to end early. A scope opened inside a job is
    /// a scope of its own, which this does not cancel.
    ///
    /// [`scope`](super::scope()) then returns its closure's value; [`try_scope`] returns
    /// [`Cause::Cancelled`](crate::Cause::Cancelled) with the number of skipped spawns.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// // Search for a needle; the first job that finds it stops the others. One worker runs
    /// // the newest spawn first: the last chunk, which holds the needle.
    /// let rt = taskpools::Runtime::new(1)?;
    /// let hay: Vec<u32> = (0..100_000).collect();
    /// let (found, looked) = (AtomicUsize::new(usize::MAX), AtomicUsize::new(0));
    /// let err = rt.try_scope(|s| {
    ///     for (i, chunk) in hay.chunks(1000).enumerate() {
    ///         let (found, looked) = (&found, &looked);
    ///         s.spawn(move |s| {
    ///             looked.fetch_add(1, Ordering::Relaxed);
    ///             if let Some(j) = chunk.iter().position(|&x| x == 99_500) {
    ///                 found.store(i * 1000 + j, Ordering::Relaxed);
    ///                 s.cancel();
    ///             }
    ///         });
    ///     }
    /// })
    /// .unwrap_err();
    /// assert_eq!(found.into_inner(), 99_500);
    /// assert_eq!((looked.into_inner(), err.skipped), (1, 99));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn cancel(&self) {
        self.stop.cancel();
    }

    /// Whether the scope was cancelled, or a [`try_spawn`](Self::try_spawn) job failed: a
    /// long job may poll this to stop early.
    pub fn is_cancelled(&self) -> bool {
        self.stop.is_stopped()
    }

    /// Spawns a job that may fail: if `f` returns an error, the scope keeps the first one
    /// and is cancelled ([`cancel`](Self::cancel)). [`try_scope`] returns the error;
    /// [`scope`](super::scope()) panics with its message.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let rt = taskpools::Runtime::new(2)?;
    /// let ran = AtomicUsize::new(0);
    /// let err = rt.install(|| {
    ///     taskpools::forkjoin::try_scope(|s| {
    ///         for line in ["1", "2", "x", "4"] {
    ///             let ran = &ran;
    ///             s.try_spawn(move |_| {
    ///                 ran.fetch_add(1, Ordering::Relaxed);
    ///                 line.parse::<u32>().map(|_| ())
    ///             });
    ///         }
    ///     })
    /// })
    /// .unwrap_err();
    /// assert_eq!(err.error().unwrap().to_string(), "invalid digit found in string");
    /// // Every spawn either ran or was skipped.
    /// assert_eq!(ran.into_inner() + err.skipped, 4);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn try_spawn<F, E>(&self, f: F)
    where
        F: FnOnce(&Scope<'scope>) -> Result<(), E> + Send + 'scope,
        E: Into<BoxError>,
    {
        self.spawn(move |s| {
            if let Err(e) = f(s) {
                s.stop.fail(e.into());
            }
        });
    }
}

/// [`scope`](super::scope()) that returns how it stopped instead of panicking: `Ok` with the
/// closure's value when every spawn ran, or a [`ScopeError`] saying what stopped it (a
/// panic, a job's error, a [`cancel`](Scope::cancel)) and how many spawns never started.
/// It waits for every running job either way, and never unwinds. A panic does not cancel the
/// scope's other spawns (as in [`scope`](super::scope())); an error or a cancel does.
///
/// ```
/// let r = taskpools::forkjoin::try_scope(|s| {
///     s.spawn(|_| ());
///     7
/// });
/// assert_eq!(r.ok(), Some(7));
/// let r = taskpools::forkjoin::try_scope(|s| s.spawn(|_| panic!("oops")));
/// assert_eq!(r.unwrap_err().to_string(), "a task panicked: oops");
/// ```
pub fn try_scope<'scope, OP, R>(op: OP) -> Result<R, ScopeError>
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    match WorkerThread::current() {
        Some(w) => {
            let (ended, skipped) = run_on(w, op, false);
            ended.into_result(skipped)
        }
        None => global().install(|| try_scope(op)),
    }
}
