//! Stopping a scope early, for the fork-join and the data-flow scopes alike: a task returns an
//! error (`try_spawn`) or someone calls `cancel()`, and no task of the scope that has not
//! started yet runs (oneTBB's `task_group::cancel`, OpenMP's `cancel taskgroup`). What stopped
//! a scope, and how many of its tasks never ran, is a [`ScopeError`], which `try_scope`
//! returns.
//!
//! Design note. A scope's [`Stop`] is a flag, the first error and a count of skipped tasks.
//! Every task reads the flag (Relaxed) just before it would start, and skips its closure when
//! it is set: a task whose start happens after a `cancel()` (the same thread later, or a
//! thread it handed work to, or the successor of a task that cancelled) sees the flag by
//! coherence, and any other task started before the cancel in the only sense that matters. A
//! task records its error, or counts itself skipped, before it counts itself done, which is a
//! Release the scope's end reads with Acquire; so the scope's end sees every error and every
//! skip. Loom model: `forkjoin/loom_models.rs`.

use std::any::Any;
use std::error::Error as StdError;

use crate::panics::{drop_payload, Payload};
use crate::sync::{lock, AtomicBool, AtomicUsize, Mutex, Ordering};

/// The error a fallible task returns, boxed: anything that converts into it (any
/// `std::error::Error + Send + Sync`, a `String`, a `&str`) may be returned.
pub type BoxError = Box<dyn StdError + Send + Sync>;

/// What stopped a scope before all its tasks ran.
#[non_exhaustive]
pub enum Cause {
    /// A task, or the scope's own closure, panicked: the first panic.
    Panic(TaskPanic),
    /// A task spawned with `try_spawn` returned this error (the first one).
    Error(BoxError),
    /// `cancel()` was called.
    Cancelled,
}

/// A scope that did not run to its end: what stopped it, and how many of its tasks never
/// started. Returned by [`forkjoin::try_scope`](crate::forkjoin::try_scope) and
/// [`dataflow::try_scope`](crate::dataflow::try_scope). It is an [`std::error::Error`],
/// `Send`, `Sync` and `'static`, so `?` turns it into a `Box<dyn Error + Send + Sync>` (or an
/// `anyhow::Error`).
///
/// ```
/// let rt = taskpools::Runtime::new(1)?;
/// let err = rt.install(|| {
///     taskpools::forkjoin::try_scope(|s| {
///         for i in 0..10 {
///             s.try_spawn(move |_| if i == 9 { Err("no") } else { Ok(()) });
///         }
///     })
/// })
/// .unwrap_err();
/// // One worker runs the newest spawn first: it fails, and the other nine never start.
/// assert_eq!(err.error().map(|e| e.to_string()), Some("no".to_string()));
/// assert_eq!(err.skipped, 9);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct ScopeError {
    /// What stopped the scope.
    pub cause: Cause,
    /// Tasks that never started: skipped after the scope was stopped, or (in a data-flow
    /// scope) after a task they depend on panicked.
    pub skipped: usize,
}

impl ScopeError {
    /// The panic, if a panic stopped the scope.
    pub fn panic(&self) -> Option<&TaskPanic> {
        match &self.cause {
            Cause::Panic(p) => Some(p),
            _ => None,
        }
    }

    /// The task's error, if an error stopped the scope.
    pub fn error(&self) -> Option<&(dyn StdError + Send + Sync + 'static)> {
        match &self.cause {
            Cause::Error(e) => Some(&**e),
            _ => None,
        }
    }

    /// The panic, taken out, if a panic stopped the scope.
    pub fn into_panic(self) -> Option<TaskPanic> {
        match self.cause {
            Cause::Panic(p) => Some(p),
            _ => None,
        }
    }

    /// Whether `cancel()` stopped the scope.
    pub fn is_cancelled(&self) -> bool {
        matches!(self.cause, Cause::Cancelled)
    }

    /// Resumes the panic if a panic stopped the scope; otherwise returns the error unchanged.
    pub fn resume_panic(self) -> ScopeError {
        match self.cause {
            Cause::Panic(p) => p.resume(),
            _ => self,
        }
    }
}

impl std::fmt::Display for ScopeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.cause {
            Cause::Panic(p) => write!(f, "a task panicked: {p}")?,
            Cause::Error(e) => write!(f, "a task failed: {e}")?,
            Cause::Cancelled => write!(f, "the scope was cancelled")?,
        }
        match self.skipped {
            0 => Ok(()),
            1 => write!(f, " (1 task did not run)"),
            n => write!(f, " ({n} tasks did not run)"),
        }
    }
}

/// A panic that stopped a scope: its message, and its payload to resume or take.
///
/// ```
/// let e = taskpools::forkjoin::try_scope(|s| {
///     for i in 0..4 {
///         s.spawn(move |_| assert!(i < 3, "{i} is too big"));
///     }
/// })
/// .unwrap_err();
/// assert_eq!(e.panic().and_then(|p| p.message()), Some("3 is too big"));
/// // The payload, as `catch_unwind` would have returned it.
/// let payload = e.into_panic().expect("a panic").into_payload();
/// assert_eq!(*payload.downcast::<String>().unwrap(), "3 is too big");
/// ```
pub struct TaskPanic {
    payload: Payload,
}

// SAFETY: the payload is `Send` only. Through `&TaskPanic` it is reached only by
// `downcast_ref` to `&'static str` and `String` (`message`), which are `Sync` (the type check
// calls `type_id`, which reads no data), so threads that share a `TaskPanic` can only read
// values that may be read from many threads at once; every other use of the payload
// (`payload_mut`, `into_payload`, `resume`, the drop) takes the `TaskPanic` by `&mut` or by
// value, on one thread.
unsafe impl Sync for TaskPanic {}

impl TaskPanic {
    /// A panic from its payload (as [`std::panic::catch_unwind`] returns it).
    pub fn new(payload: Box<dyn Any + Send>) -> TaskPanic {
        TaskPanic { payload }
    }

    /// The payload, to inspect one that is not a string (`downcast_mut`).
    pub fn payload_mut(&mut self) -> &mut (dyn Any + Send) {
        &mut *self.payload
    }

    /// The panic's message, if its payload is a string (as `panic!` with a message makes it).
    pub fn message(&self) -> Option<&str> {
        let p = &*self.payload;
        if let Some(s) = p.downcast_ref::<&'static str>() {
            Some(s)
        } else {
            p.downcast_ref::<String>().map(String::as_str)
        }
    }

    /// The payload, as [`std::panic::catch_unwind`] returns it.
    pub fn into_payload(self) -> Box<dyn Any + Send> {
        self.payload
    }

    /// Resumes the panic ([`std::panic::resume_unwind`]).
    pub fn resume(self) -> ! {
        std::panic::resume_unwind(self.payload)
    }
}

impl std::fmt::Display for TaskPanic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            self.message()
                .unwrap_or("a panic with a payload that is not a string"),
        )
    }
}

impl std::fmt::Debug for TaskPanic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.message() {
            Some(m) => write!(f, "{m:?}"),
            None => f.write_str("<a payload that is not a string>"),
        }
    }
}

impl std::fmt::Debug for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cause::Panic(p) => write!(f, "Panic({p:?})"),
            Cause::Error(e) => write!(f, "Error({e:?})"),
            Cause::Cancelled => write!(f, "Cancelled"),
        }
    }
}

impl std::fmt::Debug for ScopeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopeError")
            .field("cause", &self.cause)
            .field("skipped", &self.skipped)
            .finish()
    }
}

impl StdError for ScopeError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match &self.cause {
            Cause::Error(e) => Some(&**e),
            _ => None,
        }
    }
}

/// Drops `v`, catching a panic of its destructor (and of that panic's payload's).
fn drop_quietly<T>(v: T) {
    if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(v))) {
        drop_payload(p);
    }
}

/// How a scope ended, before the caller decides between returning and unwinding.
pub(crate) enum Ended<R> {
    /// Every task ran.
    Done(R),
    /// `cancel()` stopped the scope; the closure returned `R`.
    Cancelled(R),
    /// A panic or an error.
    Failed(Cause),
}

impl<R> Ended<R> {
    /// For `try_scope`: anything but a clean end is an error (the closure's value of a
    /// cancelled scope is dropped, a panic of its destructor caught).
    pub(crate) fn into_result(self, skipped: usize) -> Result<R, ScopeError> {
        match self {
            Ended::Done(r) => Ok(r),
            Ended::Cancelled(r) => {
                drop_quietly(r);
                Err(ScopeError {
                    cause: Cause::Cancelled,
                    skipped,
                })
            }
            Ended::Failed(cause) => Err(ScopeError { cause, skipped }),
        }
    }

    /// For `scope`: a panic is resumed, an error becomes a panic with its message (use
    /// `try_scope` to get it as a value), and a cancelled scope returns its closure's value.
    pub(crate) fn into_value(self, front_end: &str) -> R {
        match self {
            Ended::Done(r) | Ended::Cancelled(r) => r,
            Ended::Failed(Cause::Panic(p)) => p.resume(),
            Ended::Failed(Cause::Error(e)) => {
                let msg = format!(
                    "taskpools::{front_end}: a task of the scope failed: {e} (try_scope returns \
                     the error)"
                );
                // Dropped before the unwind: a destructor that panics would abort during it.
                drop_payload(Box::new(e));
                panic!("{msg}")
            }
            Ended::Failed(Cause::Cancelled) => unreachable!("a cancel keeps the value"),
        }
    }
}

/// A scope's stop state (see the module's design note).
pub(crate) struct Stop {
    stopped: AtomicBool,
    /// Whether `error` holds an error: the scope's end locks it only then.
    failed: AtomicBool,
    error: Mutex<Option<BoxError>>,
    skipped: AtomicUsize,
}

impl Stop {
    pub(crate) fn new() -> Stop {
        Stop {
            stopped: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            error: Mutex::new(None),
            skipped: AtomicUsize::new(0),
        }
    }

    /// Stops the scope: tasks not yet started will not run.
    #[inline]
    pub(crate) fn cancel(&self) {
        self.stopped.store(true, Ordering::Relaxed);
    }

    /// Whether the scope was stopped (a task about to start skips its closure then; a running
    /// one may poll this to end early).
    #[inline]
    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }

    /// Keeps `e` if it is the first error, and stops the scope. Never unwinds (a later
    /// error's destructor is user code: it runs under `catch_unwind`, outside the lock).
    pub(crate) fn fail(&self, e: BoxError) {
        let lost = {
            let mut slot = lock(&self.error);
            match *slot {
                None => {
                    *slot = Some(e);
                    None
                }
                Some(_) => Some(e),
            }
        };
        self.failed.store(true, Ordering::Relaxed);
        self.cancel();
        if let Some(e) = lost {
            drop_payload(Box::new(e));
        }
    }

    /// Counts a task that did not run.
    #[inline]
    pub(crate) fn skip(&self) {
        self.skipped.fetch_add(1, Ordering::Relaxed);
    }

    /// Tasks that did not run, once every task has counted itself done (the caller has read
    /// the counts that say so with Acquire).
    pub(crate) fn skipped(&self) -> usize {
        self.skipped.load(Ordering::Relaxed)
    }

    /// How the scope ended, once every task has counted itself done: from the closure's
    /// result `r` and the first panic of a task. Panics come first (the closure's before a
    /// task's, the other dropped), then an error, then a cancel.
    pub(crate) fn end<R>(
        &self,
        r: std::thread::Result<R>,
        task_panic: Option<Payload>,
    ) -> Ended<R> {
        let r = match (r, task_panic) {
            (Ok(r), None) => r,
            (r, p) => {
                let p = crate::panics::first_of(r.err(), p).expect("a panic");
                // A panic wins over an error, which is dropped here, not with the scope
                // (its destructor is user code: it must not escape `try_scope`).
                if self.failed.load(Ordering::Relaxed) {
                    if let Some(e) = lock(&self.error).take() {
                        drop_payload(Box::new(e));
                    }
                }
                return Ended::Failed(Cause::Panic(TaskPanic::new(p)));
            }
        };
        if self.failed.load(Ordering::Relaxed) {
            if let Some(e) = lock(&self.error).take() {
                drop_quietly(r);
                return Ended::Failed(Cause::Error(e));
            }
        }
        if self.is_stopped() {
            Ended::Cancelled(r)
        } else {
            Ended::Done(r)
        }
    }

    /// Loom models: whether an error was recorded, read as the scope's end reads it.
    #[cfg(loom)]
    pub(crate) fn has_error(&self) -> bool {
        self.failed.load(Ordering::Relaxed) && lock(&self.error).is_some()
    }
}
