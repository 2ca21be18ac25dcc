//! The entries of the working phase: [`run_pool`], [`run_pool_with`] and [`run_pool_on`] (and
//! the crate's own `run_phase`, under [`Builder`](crate::Builder)), their options, and the
//! choice and claim of the runtime a phase runs on.

use std::panic::resume_unwind;

use super::hints;
use super::remote::NoRemote;
use super::{run_shares, Coordinator, Remote, RunReport, WakePolicy};
use crate::pool::TaskPool;
use crate::runtime::broadcast::{claim, Claim};
use crate::runtime::worker::WorkerThread;
use crate::runtime::{global, Registry, Runtime};
use crate::sync::Arc;
use crate::task::Task;
use crate::Error;

#[cfg(doc)]
use crate::task::Ctx;

/// How the working phase runs, independent of the pool.
///
/// ```
/// use taskpools::pool::{CentralFifoPool, PoolConfig, TaskPool};
/// use taskpools::{run_pool, BoxedTask, RunOptions, WakePolicy};
///
/// let opts = RunOptions { wake: WakePolicy::EveryPut, ..RunOptions::default() };
/// let pool: CentralFifoPool<BoxedTask> = TaskPool::new(&PoolConfig::new(2));
/// let report = run_pool(&pool, &opts, (0..10).map(|_| BoxedTask::new(|_| {})))?;
/// assert_eq!(report.tasks_run(), 10);
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    /// Which puts wake sleeping workers.
    pub wake: WakePolicy,
    /// Pin worker i to CPU i mod (number of CPUs). Pinning is a property of a runtime's
    /// workers: this applies when the phase starts a runtime of its own (see [`run_pool`]),
    /// and a pinned phase never runs on the unpinned global runtime.
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

/// Runs a working phase on `pool` with one worker per pool slot, on a runtime chosen as
/// [`Builder::run`](crate::Builder::run) chooses one (the calling worker's runtime, the global
/// runtime, or a runtime started for this phase).
///
/// The initial tasks are distributed round-robin over the workers' `init` (the sequential
/// initialization phase). Returns when every task, initial or created, has run. If a task
/// panics, the phase ends, every worker leaves it, and the panic is resumed in the caller;
/// tasks that did not run are dropped.
///
/// ```
/// use taskpools::pool::{PoolConfig, StealingPool, TaskPool};
/// use taskpools::queue::DList;
/// use taskpools::{run_pool, BoxedTask, RunOptions};
///
/// // `steal-opposite-end` (dq5), built by hand for two workers.
/// let pool: StealingPool<BoxedTask, DList<BoxedTask>> = TaskPool::new(&PoolConfig::new(2));
/// let root = BoxedTask::new(|ctx| (0..50).for_each(|_| ctx.put(BoxedTask::new(|_| {}))));
/// assert_eq!(run_pool(&pool, &RunOptions::default(), [root])?.tasks_run(), 51);
/// # Ok::<(), taskpools::Error>(())
/// ```
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
///
/// ```
/// use taskpools::pool::{PoolConfig, RandomizedPool, TaskPool};
/// use taskpools::{run_pool_with, BoxedTask, RunOptions};
///
/// let pool: RandomizedPool<BoxedTask<u64>> = TaskPool::new(&PoolConfig::new(2));
/// let tasks = (1..=20u64).map(|i| BoxedTask::new(move |ctx| *ctx.local() += i));
/// let (_, sums) = run_pool_with(&pool, &RunOptions::default(), |_| 0u64, tasks)?;
/// assert_eq!(sums.len(), 2);
/// assert_eq!(sums.iter().sum::<u64>(), 210);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn run_pool_with<L: Send, T: Task<L>, P: TaskPool<T>>(
    pool: &P,
    opts: &RunOptions,
    init: impl Fn(usize) -> L + Sync,
    initial: impl IntoIterator<Item = T>,
) -> Result<(RunReport, Vec<L>), Error> {
    run_phase(None, opts.pin, pool, opts.wake, init, initial)
}

/// [`run_pool_with`] on the workers of `rt`: worker `i` of the phase is worker `i` of the
/// runtime (the pool's worker count must not exceed the runtime's, or
/// [`Error::PhaseWider`]). No thread is started. Fails with [`Error::PhaseBusy`] when called
/// on a worker while another phase or broadcast holds `rt`.
///
/// This is the layer under [`Builder`](crate::Builder), for a pool built by hand:
///
/// ```
/// use taskpools::pool::{ChaseLevPool, PoolConfig};
/// use taskpools::{run_pool_on, Ctx, Runtime, Task, TaskPool, WakePolicy};
///
/// struct Count(u32);
/// impl Task<u64> for Count {
///     fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
///         *ctx.local() += 1;
///         if self.0 > 0 {
///             ctx.put(Count(self.0 - 1));
///             ctx.put(Count(self.0 - 1));
///         }
///     }
/// }
///
/// let rt = Runtime::new(2)?;
/// let pool: ChaseLevPool<Count> = TaskPool::new(&PoolConfig::new(2));
/// let (report, counts) = run_pool_on(&rt, &pool, WakePolicy::OnEmpty, |_| 0u64, [Count(9)])?;
/// assert_eq!(counts.iter().sum::<u64>(), 1023);
/// assert_eq!(report.tasks_run(), 1023);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn run_pool_on<L: Send, T: Task<L>, P: TaskPool<T>>(
    rt: &Runtime,
    pool: &P,
    wake: WakePolicy,
    init: impl Fn(usize) -> L + Sync,
    initial: impl IntoIterator<Item = T>,
) -> Result<(RunReport, Vec<L>), Error> {
    run_phase(Some(rt), false, pool, wake, init, initial)
}

/// The one entry of every phase ([`run_pool_with`], [`run_pool_on`], `Builder`): checks the
/// width, runs the user's iterator of initial tasks *before* a runtime is claimed (it may
/// start a phase or broadcast itself), then picks and claims a runtime and runs the phase.
pub(crate) fn run_phase<L: Send, T: Task<L>, P: TaskPool<T>>(
    explicit: Option<&Runtime>,
    pin: bool,
    pool: &P,
    wake: WakePolicy,
    init: impl Fn(usize) -> L + Sync,
    initial: impl IntoIterator<Item = T>,
) -> Result<(RunReport, Vec<L>), Error> {
    let n = pool.workers();
    check_workers(n)?;
    let initial: Vec<T> = initial.into_iter().collect();
    with_runtime(explicit, n, pin, |reg, c| {
        run_on_registry(reg, c, pool, wake, &NoRemote, init, initial)
    })
}

/// [`run_phase`] for a phase that takes place hints ([`Ctx::put_at`]): it must run on a
/// runtime with places, or [`Error::PhaseWithoutPlaces`] (before any task runs). A separate
/// instantiation of the loop, so that plain phases do not pay for the hints.
pub(crate) fn run_phase_hinted<L: Send, T: Task<L>, P: TaskPool<T>>(
    explicit: Option<&Runtime>,
    _pin: bool,
    pool: &P,
    wake: WakePolicy,
    init: impl Fn(usize) -> L + Sync,
    initial: impl IntoIterator<Item = T>,
) -> Result<(RunReport, Vec<L>), Error> {
    let n = pool.workers();
    check_workers(n)?;
    // Only the given runtime or the calling worker's: no fallback to a runtime without
    // places. (`_pin` does not apply: pinning is the runtime's.)
    let reg = match explicit {
        Some(rt) => Arc::clone(&rt.registry),
        None => match WorkerThread::current() {
            Some(w) => Arc::clone(&w.registry),
            None => return Err(Error::PhaseWithoutPlaces),
        },
    };
    let Some(ps) = reg.places.as_ref() else {
        return Err(Error::PhaseWithoutPlaces);
    };
    let Some(of_worker) = ps.of_worker.get(..n) else {
        return Err(Error::PhaseWider {
            workers: n,
            threads: reg.threads,
        });
    };
    let hints = hints::PlaceHints::new(ps.len(), of_worker);
    let initial: Vec<T> = initial.into_iter().collect();
    let c = claim(&reg)?;
    run_on_registry(&reg, c, pool, wake, &hints, init, initial)
}

fn check_workers(n: usize) -> Result<(), Error> {
    if n == 0 {
        return Err(Error::ZeroThreads);
    }
    if n > crate::MAX_THREADS {
        return Err(Error::TooManyThreads {
            requested: n,
            max: crate::MAX_THREADS,
        });
    }
    Ok(())
}

/// Calls `f` with the runtime a phase of `n` workers runs on, claimed for it (user code that
/// could ask for a claim in turn — the iterator of initial tasks — must have run before): `explicit` if
/// given (a worker that finds it claimed gets [`Error::PhaseBusy`]); else the runtime of the
/// calling worker, if it has enough workers, is pinned if `pin` asks for it, and is not
/// claimed by another phase; else the global runtime, if it has enough workers, `pin` is off
/// and (on a worker) it is not claimed; else a runtime started for this call with `n` workers
/// (and `pin`), stopped when `f` returns.
fn with_runtime<R>(
    explicit: Option<&Runtime>,
    n: usize,
    pin: bool,
    f: impl FnOnce(&Arc<Registry>, Claim<'_>) -> Result<R, Error>,
) -> Result<R, Error> {
    if let Some(rt) = explicit {
        if n > rt.threads() {
            return Err(Error::PhaseWider {
                workers: n,
                threads: rt.threads(),
            });
        }
        let c = claim(&rt.registry)?;
        return f(&rt.registry, c);
    }
    if let Some(w) = WorkerThread::current() {
        let reg = Arc::clone(&w.registry);
        if reg.threads >= n && (reg.pinned || !pin) {
            match claim(&reg) {
                Ok(c) => return f(&reg, c),
                // A phase from a job that runs while its runtime shuts down is refused, not
                // moved elsewhere (which could create the global runtime at exit).
                Err(Error::ShuttingDown) => return Err(Error::ShuttingDown),
                // Held by another phase: try the next candidate.
                Err(_) => {}
            }
        }
    }
    if !pin {
        let g = global();
        if g.threads() >= n {
            if let Ok(c) = claim(&g.registry) {
                return f(&g.registry, c);
            }
        }
    }
    let rt = Runtime::builder().threads(n).pin(pin).build()?;
    let c = claim(&rt.registry)?;
    f(&rt.registry, c)
}

/// The phase itself, as a broadcast over workers `0..n` of the runtime of `registry`.
/// With the hooks of `remote` (`NoRemote` for a plain phase); a panic is resumed here (a
/// hinted phase's waiting tasks are dropped with `remote` afterwards).
fn run_on_registry<L: Send, T: Task<L>, P: TaskPool<T>, R: Remote<T>>(
    registry: &Arc<Registry>,
    claim: Claim<'_>,
    pool: &P,
    wake: WakePolicy,
    remote: &R,
    init: impl Fn(usize) -> L + Sync,
    initial: impl IntoIterator<Item = T>,
) -> Result<(RunReport, Vec<L>), Error> {
    let coord = Coordinator::new(pool.workers(), wake);
    match run_shares(registry, claim, pool, &coord, remote, init, initial)? {
        Ok(done) => Ok(done),
        Err(payload) => resume_unwind(payload),
    }
}
