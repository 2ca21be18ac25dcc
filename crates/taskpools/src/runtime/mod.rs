//! The working phase (seed 004 §2, `tpool_run`): one loop for every pool — get a task, run it,
//! repeat — with per-worker counters, optional pinning, wake-up policies, correct termination
//! ([`idle`](self) module docs) and panic propagation.

mod idle;
#[cfg(all(test, loom))]
mod loom_tests;
mod stats;

pub use idle::WakePolicy;
pub use stats::{RunReport, WorkerStats};

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::thread;
use std::time::Instant;

use idle::Coordinator;

use crate::pool::{PutOutcome, TaskPool};
use crate::task::{Ctx, PutSink, Task};
use crate::Error;

/// How the working phase runs, independent of the pool.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    /// Which puts wake sleeping workers.
    pub wake: WakePolicy,
    /// Pin worker i to CPU i mod (number of CPUs).
    pub pin: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            wake: WakePolicy::OnEmpty,
            pin: false,
        }
    }
}

struct Sink<'a, T: Send, P: TaskPool<T>> {
    pool: &'a P,
    local: &'a mut P::Local,
    coord: &'a Coordinator,
    puts: u64,
}

impl<T: Send, P: TaskPool<T>> PutSink<T> for Sink<'_, T, P> {
    #[inline]
    fn put(&mut self, task: T) {
        self.puts += 1;
        if let PutOutcome::Shared { was_empty } = self.pool.put(self.local, task) {
            self.coord.on_shared_put(was_empty);
        }
    }
}

fn worker<L, T: Task<L>, P: TaskPool<T>>(
    me: usize,
    pool: &P,
    mut local: P::Local,
    coord: &Coordinator,
    state: &mut L,
) -> WorkerStats {
    let n = pool.workers();
    let mut stats = WorkerStats::default();
    loop {
        while let Some(task) = pool.get(&mut local, &mut stats) {
            if coord.is_done() {
                // Only an abort ends the phase while a task exists (module docs of `idle`).
                return stats;
            }
            stats.tasks_run += 1;
            let mut sink = Sink {
                pool,
                local: &mut local,
                coord,
                puts: 0,
            };
            task.run(&mut Ctx::new(&mut sink, state, me, n));
            stats.puts += sink.puts;
        }
        if !coord.idle(pool, &mut stats) {
            return stats;
        }
    }
}

/// The core each of `n` workers is pinned to: worker `i` to core `i mod cores` when `pin` is
/// set and the cores can be listed, else none. Shared by the pool runtime and `forkjoin`.
pub(crate) fn worker_cores(pin: bool, n: usize) -> Vec<Option<core_affinity::CoreId>> {
    let cores = if pin {
        core_affinity::get_core_ids().filter(|c| !c.is_empty())
    } else {
        None
    };
    (0..n)
        .map(|i| cores.as_ref().map(|c| c[i % c.len()]))
        .collect()
}

/// Runs a working phase on `pool` with one worker per pool slot.
///
/// The initial tasks are distributed round-robin over the workers' `init` (the sequential
/// initialization phase). Returns when every task, initial or created, has run. If a task
/// panics, the phase ends, every worker exits, and the panic is resumed in the caller; tasks
/// that did not run are dropped.
pub fn run_pool<T: Task, P: TaskPool<T>>(
    pool: &P,
    opts: &RunOptions,
    initial: impl IntoIterator<Item = T>,
) -> Result<RunReport, Error> {
    run_pool_with(pool, opts, |_| (), initial).map(|(report, _)| report)
}

/// [`run_pool`] with per-worker state: worker `i` creates its state with `init(i)` on its own
/// thread before its first task, every task it runs reaches the state with
/// [`Ctx::local`], and the states are returned in worker order when the phase ends.
///
/// If a task (or `init`) panics, every state is dropped and the panic is resumed in the caller.
pub fn run_pool_with<L: Send, T: Task<L>, P: TaskPool<T>>(
    pool: &P,
    opts: &RunOptions,
    init: impl Fn(usize) -> L + Sync,
    initial: impl IntoIterator<Item = T>,
) -> Result<(RunReport, Vec<L>), Error> {
    let n = pool.workers();
    if n == 0 {
        return Err(Error::ZeroThreads);
    }
    let mut locals: Vec<P::Local> = (0..n).map(|i| pool.local(i)).collect();
    for (i, t) in initial.into_iter().enumerate() {
        pool.init(&mut locals[i % n], t);
    }
    let coord = Coordinator::new(n, opts.wake);
    let cores = worker_cores(opts.pin, n);
    let init = &init;
    let start = Instant::now();
    let mut spawn_error = None;
    let results = thread::scope(|s| {
        let mut handles = Vec::with_capacity(n);
        for (i, local) in locals.into_iter().enumerate() {
            let core = cores[i];
            let coord = &coord;
            let spawned = thread::Builder::new()
                .name(format!("taskpools-{i}"))
                .spawn_scoped(s, move || {
                    if let Some(c) = core {
                        core_affinity::set_for_current(c);
                    }
                    let body = || {
                        let mut state = init(i);
                        let stats = worker(i, pool, local, coord, &mut state);
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
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    spawn_error = Some(e);
                    coord.abort(None);
                    break;
                }
            }
        }
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|payload| {
                    coord.abort(Some(payload));
                    None
                })
            })
            .collect::<Vec<_>>()
    });
    let elapsed = start.elapsed();
    if let Some(p) = coord.take_panic() {
        drop(results);
        resume_unwind(p);
    }
    if let Some(e) = spawn_error {
        return Err(Error::Spawn(e));
    }
    // No panic was recorded and every worker was spawned, so every worker returned its state.
    let (workers, states) = results
        .into_iter()
        .map(|r| r.expect("a worker without a recorded panic returned its state"))
        .unzip();
    Ok((RunReport { workers, elapsed }, states))
}
