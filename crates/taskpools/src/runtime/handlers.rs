//! What a runtime's builder may ask to run outside the jobs themselves: a handler for the
//! panics of fire-and-forget jobs, and handlers run on each worker thread as it starts and
//! as it leaves (rayon's `panic_handler`, `start_handler` and `exit_handler`).
//!
//! A panic of a job that somebody waits for (a `join` half, a scope's spawn, an `install`, a
//! broadcast share) is resumed in the waiter. A fire-and-forget job (`spawn`, `spawn_fifo`,
//! `spawn_broadcast`) has no waiter: its panic goes to the panic handler, or, without one, to
//! one line on stderr; the worker goes on either way. (rayon aborts the process without a
//! handler; a long-running program should not lose every worker to one job's panic, and the
//! line says what was lost.) A handler that panics in turn, and a payload whose `Drop` panics,
//! are reported the same way and never unwind into the worker.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::panics::drop_payload;

/// Called with the payload of a fire-and-forget job's panic.
pub(crate) type PanicHandler = Arc<dyn Fn(Box<dyn Any + Send>) + Send + Sync>;
/// Called with a worker's index on that worker's thread.
pub(crate) type WorkerHandler = Arc<dyn Fn(usize) + Send + Sync>;

/// The handlers a runtime was built with.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub(crate) panic: Option<PanicHandler>,
    pub(crate) start: Option<WorkerHandler>,
    pub(crate) exit: Option<WorkerHandler>,
}

impl Handlers {
    /// Hands the payload of a fire-and-forget job's panic to the panic handler, or reports it
    /// on stderr (`what` names the job). Never unwinds.
    pub(crate) fn job_panicked(&self, what: &str, payload: Box<dyn Any + Send>) {
        match &self.panic {
            Some(h) => {
                if let Err(again) = catch_unwind(AssertUnwindSafe(|| h(payload))) {
                    report(
                        &format!("the panic handler panicked on {what}'s panic"),
                        again,
                    );
                }
            }
            None => report(&format!("{what} panicked"), payload),
        }
    }

    /// Runs the start or exit handler (if any) for worker `index`; a panic there is reported as
    /// a job's would be.
    pub(crate) fn run_worker_handler(&self, h: Option<&WorkerHandler>, index: usize, what: &str) {
        if let Some(h) = h {
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| h(index))) {
                self.job_panicked(&format!("the {what} handler of worker {index}"), p);
            }
        }
    }
}

/// One line on stderr for a payload no one will resume, then the payload dropped without
/// letting a panicking `Drop` unwind.
fn report(what: &str, payload: Box<dyn Any + Send>) {
    let msg = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(a non-string payload)");
    super::eprintln_best_effort(&format!("taskpools: {what}: {msg}"));
    // The payload's own destructor could panic in turn.
    drop_payload(payload);
}
