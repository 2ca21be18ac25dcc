//! Handing work to a runtime from any thread and waiting for its result: `install` (also from
//! a worker of another runtime). Fire-and-forget jobs are `spawn.rs`'s.

use std::panic::resume_unwind;

use super::job::{LockJob, StackJob};
use super::worker::WorkerThread;
use super::Registry;
use crate::sync::Arc;

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
