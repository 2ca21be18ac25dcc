//! A spawned job that async code awaits: [`Runtime::spawn_async`] runs a closure on the
//! runtime's workers and returns a [`SpawnFuture`] that completes with its result (rayon issues
//! #679 and #1135 ask for this). CPU-bound work started from an async task then neither blocks
//! the executor's thread nor runs inside `poll`.
//!
//! The job and the future share one slot under a lock: `Pending` with the waker of the last
//! poll, then `Done` with the closure's outcome. The job stores its outcome and takes the waker
//! under the lock, and wakes after releasing it; a poll stores its waker under the same lock, so
//! a poll either sees `Done` or leaves a waker the job will take: no wake-up is lost. No
//! executor is needed: a `std::task::Waker` is all the future uses.

use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use super::worker::WorkerThread;
use super::{global, spawn_in, Order, Runtime};
use crate::panics::drop_payload;

/// The slot a job and its future share.
enum Slot<T> {
    /// Not finished; the waker of the last poll, if any.
    Pending(Option<Waker>),
    /// Finished, with the closure's value or panic.
    Done(std::thread::Result<T>),
    /// The outcome was taken by the future.
    Taken,
}

/// The result of a job started with [`Runtime::spawn_async`] or [`spawn_async`]: completes with
/// the closure's value, or resumes its panic in the task that awaits it. Dropping it does not
/// cancel the job: the job runs to its end, and its value is dropped then.
///
/// ```
/// # use std::future::Future;
/// # use std::task::{Context, Poll, Wake, Waker};
/// # struct Unpark(std::thread::Thread);
/// # impl Wake for Unpark {
/// #     fn wake(self: std::sync::Arc<Self>) { self.0.unpark() }
/// # }
/// # fn block_on<F: Future>(f: F) -> F::Output {
/// #     let waker = Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
/// #     let mut f = std::pin::pin!(f);
/// #     loop {
/// #         if let Poll::Ready(v) = f.as_mut().poll(&mut Context::from_waker(&waker)) {
/// #             return v;
/// #         }
/// #         std::thread::park();
/// #     }
/// # }
/// // `block_on` is any executor's (a few hidden lines here: poll, park until woken).
/// let rt = taskpools::Runtime::new(2)?;
/// let fut = rt.spawn_async(|| (1..=20u64).sum::<u64>());
/// assert_eq!(block_on(fut), 210);
/// // Awaiting resumes the job's panic.
/// let bad = rt.spawn_async(|| -> u32 { panic!("inside the job") });
/// assert!(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| block_on(bad))).is_err());
/// # Ok::<(), taskpools::Error>(())
/// ```
#[must_use = "a SpawnFuture does nothing unless awaited (the job runs anyway)"]
pub struct SpawnFuture<T> {
    slot: Arc<Mutex<Slot<T>>>,
}

impl<T> std::fmt::Debug for SpawnFuture<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &*lock(&self.slot) {
            Slot::Pending(_) => "pending",
            Slot::Done(Ok(_)) => "done",
            Slot::Done(Err(_)) => "panicked",
            Slot::Taken => "taken",
        };
        f.debug_struct("SpawnFuture")
            .field("state", &state)
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<T> Future for SpawnFuture<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut slot = lock(&self.slot);
        match &mut *slot {
            Slot::Pending(w) => {
                if !w.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    *w = Some(cx.waker().clone());
                }
                Poll::Pending
            }
            Slot::Done(_) => match std::mem::replace(&mut *slot, Slot::Taken) {
                Slot::Done(Ok(v)) => Poll::Ready(v),
                Slot::Done(Err(p)) => {
                    drop(slot);
                    resume_unwind(p)
                }
                _ => unreachable!("matched Done"),
            },
            Slot::Taken => panic!("SpawnFuture polled after it completed"),
        }
    }
}

impl<T> Drop for SpawnFuture<T> {
    fn drop(&mut self) {
        // A panic no one awaited: its payload's `Drop` may panic in turn, which must not unwind
        // out of this drop (it may run during another unwind).
        let unawaited = match &mut *lock(&self.slot) {
            s @ Slot::Done(Err(_)) => std::mem::replace(s, Slot::Taken),
            _ => return,
        };
        if let Slot::Done(Err(p)) = unawaited {
            drop_payload(p);
        }
    }
}

impl Runtime {
    /// Runs `f` on one of this runtime's workers and returns a future of its result, for async
    /// code that starts CPU-bound work. The job never runs inside `poll`: it is a
    /// fire-and-forget job (see [`spawn`](Self::spawn)), so the first poll of a job that has
    /// not finished returns `Pending` and the job wakes the awaiting task when it is done.
    /// Awaiting resumes the job's panic; dropping the future does not cancel the job. Works
    /// under any executor (only a `std::task::Waker` is used).
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::pin;
    /// use std::task::{Context, Poll, Wake, Waker};
    ///
    /// // A tiny executor: poll, park until woken.
    /// struct Unpark(std::thread::Thread);
    /// impl Wake for Unpark {
    ///     fn wake(self: std::sync::Arc<Self>) { self.0.unpark() }
    /// }
    /// fn block_on<F: Future>(f: F) -> F::Output {
    ///     let waker = Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    ///     let mut f = pin!(f);
    ///     loop {
    ///         if let Poll::Ready(v) = f.as_mut().poll(&mut Context::from_waker(&waker)) {
    ///             return v;
    ///         }
    ///         std::thread::park();
    ///     }
    /// }
    ///
    /// let rt = taskpools::Runtime::new(2)?;
    /// let sum = block_on(async {
    ///     let a = rt.spawn_async(|| (1..=1000u64).sum::<u64>());
    ///     let b = rt.spawn_async(|| (1..=10u64).product::<u64>());
    ///     a.await + b.await
    /// });
    /// assert_eq!(sum, 500_500 + 3_628_800);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn spawn_async<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> SpawnFuture<T> {
        let (future, job) = async_job(f);
        spawn_in(&self.registry, job, Order::Lifo);
        future
    }
}

/// [`Runtime::spawn_async`] on the current worker's runtime, or, on a thread that is not a
/// worker, on the global runtime.
///
/// ```
/// # use std::future::Future;
/// # use std::task::{Context, Poll, Wake, Waker};
/// # struct Unpark(std::thread::Thread);
/// # impl Wake for Unpark {
/// #     fn wake(self: std::sync::Arc<Self>) { self.0.unpark() }
/// # }
/// # fn block_on<F: Future>(f: F) -> F::Output {
/// #     let waker = Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
/// #     let mut f = std::pin::pin!(f);
/// #     loop {
/// #         if let Poll::Ready(v) = f.as_mut().poll(&mut Context::from_waker(&waker)) {
/// #             return v;
/// #         }
/// #         std::thread::park();
/// #     }
/// # }
/// let rt = taskpools::Runtime::new(2)?;
/// // On a worker it uses that worker's runtime.
/// let fut = rt.install(|| taskpools::spawn_async(|| taskpools::current_num_threads()));
/// assert_eq!(block_on(fut), 2);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn spawn_async<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> SpawnFuture<T> {
    match WorkerThread::current() {
        Some(w) => {
            let (future, job) = async_job(f);
            spawn_in(&w.registry, job, Order::Lifo);
            future
        }
        None => global().spawn_async(f),
    }
}

/// The future, and the job that fills its slot and wakes it.
fn async_job<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> (SpawnFuture<T>, impl FnOnce() + Send + 'static) {
    let slot = Arc::new(Mutex::new(Slot::Pending(None)));
    let job_slot = Arc::clone(&slot);
    let job = move || {
        let outcome = catch_unwind(AssertUnwindSafe(f));
        let waker = match std::mem::replace(&mut *lock(&job_slot), Slot::Done(outcome)) {
            Slot::Pending(w) => w,
            _ => unreachable!("only the job finishes the slot"),
        };
        // Woken after the lock is released: the awaiting task may poll at once.
        if let Some(w) = waker {
            w.wake();
        }
        // If the future was dropped, the outcome goes with this last reference; a panic
        // payload's `Drop` must not reach the runtime as this job's panic.
        if let Ok(m) = Arc::try_unwrap(job_slot) {
            if let Slot::Done(Err(p)) = m.into_inner().unwrap_or_else(|e| e.into_inner()) {
                drop_payload(p);
            }
        }
    };
    (SpawnFuture { slot }, job)
}
