//! Fire-and-forget jobs ([`spawn`], [`spawn_fifo`], [`spawn_broadcast`]) and [`broadcast`], on
//! the current pool, else the global one.

use crate::global::ensure_global;
use crate::BroadcastContext;

/// Runs `func` on the current pool (the global one, from a thread that is not a worker)
/// without waiting for it. A job spawned on a worker goes onto that worker's deque, newest
/// first, where other workers may take it; from any other thread it is queued for the pool's
/// workers, oldest first.
///
/// A panic in `func` goes to the pool's
/// [`panic_handler`](crate::ThreadPoolBuilder::panic_handler); without one the process aborts.
/// The global pool is never dropped, so a job still queued when the process exits does not
/// run: wait for what must finish (a channel, a counter, or a [`scope`](crate::scope())).
///
/// ```
/// # use rayon_core as rayon;
/// let (tx, rx) = std::sync::mpsc::channel();
/// rayon::spawn(move || tx.send(6 * 7).unwrap());
/// assert_eq!(rx.recv().unwrap(), 42);
/// ```
pub fn spawn<F>(func: F)
where
    F: FnOnce() + Send + 'static,
{
    ensure_global();
    taskpools::spawn(func)
}

/// As [`spawn`], but the jobs that one worker spawns this way start in the order they were
/// spawned in.
pub fn spawn_fifo<F>(func: F)
where
    F: FnOnce() + Send + 'static,
{
    ensure_global();
    taskpools::spawn_fifo(func)
}

/// Runs `op` once on every worker of the current pool (the global one, from a thread that is
/// not a worker), all at the same time, and returns the results in worker order. A panic in
/// any call is resumed here once every call has ended.
///
/// ```
/// # use rayon_core as rayon;
/// let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build()?;
/// let seen = pool.install(|| rayon::broadcast(|ctx| (ctx.index(), ctx.num_threads())));
/// assert_eq!(seen, [(0, 2), (1, 2)]);
/// # Ok::<(), rayon::ThreadPoolBuildError>(())
/// ```
pub fn broadcast<OP, R>(op: OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    ensure_global();
    taskpools::broadcast(op)
}

/// Runs `op` once on every worker of the current pool (the global one, from a thread that is
/// not a worker) without waiting for it. Panics are handled as [`spawn`]'s.
pub fn spawn_broadcast<OP>(op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    ensure_global();
    taskpools::spawn_broadcast(op)
}
