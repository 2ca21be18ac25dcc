//! What the calling thread can ask about the pool it runs in, and how it lets that pool's
//! work run: rayon's `current_num_threads`, `current_thread_index`,
//! `current_thread_has_pending_tasks`, `yield_now` and `yield_local`.

use crate::global::ensure_global;
use crate::Yield;

/// The most worker threads a pool can have; larger counts given to
/// [`ThreadPoolBuilder::num_threads`](crate::ThreadPoolBuilder::num_threads) (or in
/// `RAYON_NUM_THREADS`) are lowered to it. 4096 here (`taskpools::MAX_THREADS`).
pub fn max_num_threads() -> usize {
    taskpools::max_num_threads()
}

/// The number of worker threads of the current worker's pool, or, on a thread that is not a
/// worker, of the global pool (which this builds if it does not exist yet). Parallel
/// iterators use it to decide how finely to split their work.
pub fn current_num_threads() -> usize {
    ensure_global();
    taskpools::current_num_threads()
}

/// The index (in `0..current_num_threads()`) of the worker running this code in its pool, or
/// `None` on a thread that is not a worker.
///
/// ```
/// # use rayon_core as rayon;
/// assert_eq!(rayon::current_thread_index(), None);
/// let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build()?;
/// assert!(pool.install(|| rayon::current_thread_index()).is_some_and(|i| i < 2));
/// # Ok::<(), rayon::ThreadPoolBuildError>(())
/// ```
#[inline]
pub fn current_thread_index() -> Option<usize> {
    taskpools::current_thread_index()
}

/// Whether the current worker has jobs queued on its own deque; `None` on a thread that is not
/// a worker.
#[inline]
pub fn current_thread_has_pending_tasks() -> Option<bool> {
    taskpools::current_thread_has_pending_tasks()
}

/// Lets the current worker run one job that is waiting in its pool (its own first, else one
/// it takes from another worker or from the pool's queue): `Some(Yield::Executed)` if it ran
/// one, `Some(Yield::Idle)` if there was none, `None` on a thread that is not a worker. A job
/// that waits for other work by its own means (a flag, a channel) should call it in its loop.
pub fn yield_now() -> Option<Yield> {
    taskpools::yield_now()
}

/// As [`yield_now`], but only jobs from the current worker's own deque.
pub fn yield_local() -> Option<Yield> {
    taskpools::yield_local()
}
