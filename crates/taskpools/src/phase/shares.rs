//! A phase's shares: the broadcast that runs worker `i`'s loop on worker `i` of a runtime, hands
//! each its pool-local state and initial tasks, and collects the reports, the states or the
//! first panic. Every phase runs through here, the distributed one (over MPI) included.

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::worker_loop::worker;
use super::{Coordinator, Remote, RunReport};
use crate::pool::TaskPool;
use crate::runtime::broadcast::{broadcast_claimed, Claim};
use crate::runtime::Registry;
use crate::sync::Arc;
use crate::task::Task;
use crate::Error;

/// A task's panic payload, kept to be resumed or reported.
pub(crate) type Panic = Box<dyn std::any::Any + Send>;

/// The shares of a phase coordinated by `coord` (built for `pool.workers()` workers), with
/// the hooks of `remote`. Returns the first panic's payload instead of the results when a
/// task or `init` panicked; every state is dropped then.
pub(crate) fn run_shares<L: Send, T: Task<L>, P: TaskPool<T>, R: Remote<T>>(
    registry: &Arc<Registry>,
    claim: Claim<'_>,
    pool: &P,
    coord: &Coordinator,
    remote: &R,
    init: impl Fn(usize) -> L + Sync,
    initial: impl IntoIterator<Item = T>,
) -> Result<Result<(RunReport, Vec<L>), Panic>, Error> {
    let n = pool.workers();
    if n > registry.threads {
        return Err(Error::PhaseWider {
            workers: n,
            threads: registry.threads,
        });
    }
    let mut locals: Vec<P::Local> = (0..n).map(|i| pool.local(i)).collect();
    for (i, t) in initial.into_iter().enumerate() {
        pool.init(&mut locals[i % n], t);
    }
    // Each share takes its worker's local once; a lock is the simplest safe hand-over.
    let locals: Vec<std::sync::Mutex<Option<P::Local>>> = locals
        .into_iter()
        .map(|l| std::sync::Mutex::new(Some(l)))
        .collect();
    let share = |i: usize| {
        let body = || {
            let local = locals[i]
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .expect("each worker takes its local once");
            let mut state = init(i);
            let stats = worker(i, pool, local, coord, remote, &mut state);
            (stats, state)
        };
        match catch_unwind(AssertUnwindSafe(body)) {
            Ok(done) => Some(done),
            Err(payload) => {
                // The state was dropped while unwinding out of `body`.
                coord.abort(Some(payload));
                None
            }
        }
    };
    let (results, elapsed) = broadcast_claimed(registry, claim, n, &share);
    if let Some(p) = coord.take_panic() {
        drop(results);
        return Ok(Err(p));
    }
    // No panic was recorded, so every worker returned its state.
    let (workers, states) = results
        .into_iter()
        .map(|r| r.expect("a worker without a recorded panic returned its state"))
        .unzip();
    Ok(Ok((RunReport { workers, elapsed }, states)))
}
