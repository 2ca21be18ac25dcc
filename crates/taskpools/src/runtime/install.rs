//! Handing work to a runtime from any thread: `install` (run and wait for the result, also
//! from a worker of another runtime) and fire-and-forget `spawn`.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use super::job::{self, LockJob, StackJob};
use super::worker::WorkerThread;
use super::{eprintln_best_effort, Registry};
use crate::panics::drop_payload;
use crate::sync::Arc;

/// A fire-and-forget job: always injected (never onto a worker's own deque), so that the
/// shutdown drain in `main_loop` finds every one that has not run.
pub(crate) fn spawn_in(registry: &Registry, f: impl FnOnce() + Send + 'static) {
    let job = move || {
        if let Err(p) = catch_unwind(AssertUnwindSafe(f)) {
            let msg = p
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| p.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("(a non-string payload)");
            eprintln_best_effort(&format!("taskpools: a spawned job panicked: {msg}"));
            // The payload's own destructor could panic in turn.
            drop_payload(p);
        }
    };
    // SAFETY: `f` is `'static`, so it borrows nothing that can go away; the job is injected,
    // and every injected job is executed exactly once: by a worker, or by the shutdown drain
    // of `main_loop` before the workers stop.
    let job = unsafe { job::SpawnJob::into_job_ref(job) };
    registry.inject(job);
}

/// [`Runtime::install`](super::Runtime::install) on the runtime of `registry`.
pub(crate) fn install_in<R: Send>(registry: &Arc<Registry>, op: impl FnOnce() -> R + Send) -> R {
    match WorkerThread::current() {
        Some(w) if Arc::ptr_eq(&w.registry, registry) => op(),
        Some(w) => install_from_foreign_worker(registry, w, op),
        None => {
            let job = LockJob::new(op);
            registry.inject(job.as_job_ref());
            match job.wait() {
                Ok(r) => r,
                Err(p) => resume_unwind(p),
            }
        }
    }
}

/// `install` from a worker `w` of another runtime: the job lives on `w`'s stack and is
/// injected here; `w` waits for it the way a join waits for a stolen half, running its own
/// runtime's work meanwhile (rayon's `in_worker_cross`).
#[cold]
#[inline(never)]
fn install_from_foreign_worker<R: Send>(
    registry: &Registry,
    w: &WorkerThread,
    op: impl FnOnce() -> R + Send,
) -> R {
    let job = StackJob::new(op);
    registry.inject(job.as_job_ref());
    w.wait_until(|| job.is_done());
    match job.take_outcome() {
        Ok(r) => r,
        Err(p) => resume_unwind(p),
    }
}
