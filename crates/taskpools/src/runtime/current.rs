//! The current runtime: the worker's own, or else the global one, created on first use and
//! sized by [`NUM_THREADS_ENV`]; and what runs on it (rayon's `current_num_threads`,
//! `current_thread_index` and `spawn`). `current_place` is the places layer's
//! (`places/current.rs`, re-exported here): the worker sets it when it starts.

use std::sync::OnceLock;

use super::worker::WorkerThread;
use super::{eprintln_best_effort, spawn_in, Order, Runtime};

/// The global runtime, created on first use or by
/// [`RuntimeBuilder::build_global`](super::RuntimeBuilder::build_global).
pub(super) static GLOBAL: OnceLock<Runtime> = OnceLock::new();

/// The environment variable that sizes the global runtime when it is created on first use.
pub const NUM_THREADS_ENV: &str = "TASKPOOLS_NUM_THREADS";

/// Parses a value of [`NUM_THREADS_ENV`]: `Ok(None)` when unset or empty (use one worker per
/// CPU), the thread count, or why the value is refused.
fn threads_from_env(v: Option<&str>) -> Result<Option<usize>, String> {
    let v = match v.map(str::trim) {
        None | Some("") => return Ok(None),
        Some(v) => v,
    };
    match v.parse::<usize>() {
        Ok(n) if (1..=crate::MAX_THREADS).contains(&n) => Ok(Some(n)),
        _ => Err(format!(
            "{NUM_THREADS_ENV}={v:?} is not a thread count from 1 to {}",
            crate::MAX_THREADS
        )),
    }
}

/// The thread count a runtime built with `threads(0)` (the default) gets: the value of
/// [`NUM_THREADS_ENV`] if it is a valid count, else one per CPU. An invalid value is reported
/// once per process on stderr.
pub(crate) fn default_threads() -> usize {
    static REPORTED: std::sync::Once = std::sync::Once::new();
    let cpus = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(crate::MAX_THREADS);
    let env = std::env::var(NUM_THREADS_ENV).ok();
    match threads_from_env(env.as_deref()) {
        Ok(n) => n.unwrap_or(cpus),
        Err(why) => {
            REPORTED.call_once(|| {
                eprintln_best_effort(&format!(
                    "taskpools: {why}; using {cpus} threads (one per CPU)"
                ))
            });
            cpus
        }
    }
}

/// How the global runtime is built on its first use, if [`set_global_default`] was called.
static GLOBAL_DEFAULT: OnceLock<fn() -> Result<Runtime, crate::Error>> = OnceLock::new();

/// Sets how the global runtime is built when it is first used without
/// [`RuntimeBuilder::build_global`](super::RuntimeBuilder::build_global): `build` is called
/// once, on that first use, instead of `Runtime::builder().threads(0).build()`. For a layer
/// with defaults of its own (the drop-in `rayon-core` builds it with rayon's). Returns `false`,
/// changing nothing, if a default was set before; it has no effect once the global runtime
/// exists. If `build` fails, that first use panics with its error.
///
/// ```no_run
/// fn two_workers() -> Result<taskpools::Runtime, taskpools::Error> {
///     taskpools::Runtime::builder().threads(2).build()
/// }
/// assert!(taskpools::runtime::set_global_default(two_workers));
/// assert_eq!(taskpools::current_num_threads(), 2);
/// ```
pub fn set_global_default(build: fn() -> Result<Runtime, crate::Error>) -> bool {
    GLOBAL_DEFAULT.set(build).is_ok()
}

pub(crate) fn global() -> &'static Runtime {
    GLOBAL.get_or_init(|| {
        let built = match GLOBAL_DEFAULT.get() {
            Some(build) => build(),
            None => Runtime::builder().threads(0).build(),
        };
        built.expect("could not start the global runtime")
    })
}

/// Number of worker threads of the current worker's runtime, or, on a thread that is not a
/// worker, of the global runtime (which this creates if it does not exist yet, like `join`
/// would). Rayon's `current_num_threads`.
///
/// ```
/// let rt = taskpools::Runtime::new(2)?;
/// assert_eq!(rt.install(taskpools::current_num_threads), 2); // on a worker: its runtime's
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn current_num_threads() -> usize {
    match WorkerThread::current() {
        Some(w) => w.registry.threads,
        None => global().threads(),
    }
}

/// The index (`0..threads`) of the worker running this code in its runtime, or `None` on a
/// thread that is not a worker. Rayon's `current_thread_index`.
///
/// ```
/// let rt = taskpools::Runtime::new(2)?;
/// assert_eq!(taskpools::current_thread_index(), None); // not a worker
/// assert_eq!(rt.broadcast(|_| taskpools::current_thread_index()), [Some(0), Some(1)]);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn current_thread_index() -> Option<usize> {
    WorkerThread::current().map(|w| w.index)
}

/// Runs `f` without waiting for it on the current worker's runtime, or, on a thread that is
/// not a worker, on the global runtime; see [`Runtime::spawn`] (a panic in `f` is caught and
/// reported on stderr). The global runtime is never dropped: a job still queued there when
/// the process exits does not run, so wait for what must finish (a channel, a counter).
///
/// ```
/// use std::sync::mpsc;
///
/// let rt = taskpools::Runtime::new(2)?;
/// let (tx, rx) = mpsc::channel();
/// rt.install(move || {
///     // On a worker: the job goes to this runtime, and `install` does not wait for it.
///     taskpools::spawn(move || tx.send((1..=10u32).product::<u32>()).unwrap());
/// });
/// assert_eq!(rx.recv().unwrap(), 3_628_800);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn spawn(f: impl FnOnce() + Send + 'static) {
    match WorkerThread::current() {
        Some(w) => spawn_in(&w.registry, f, Order::Lifo),
        None => global().spawn(f),
    }
}

/// [`spawn`], ordered as [`Runtime::spawn_fifo`]: on the current worker's runtime, or, on a
/// thread that is not a worker, on the global runtime (rayon's `spawn_fifo`).
///
/// ```
/// use std::sync::mpsc;
///
/// let rt = taskpools::Runtime::new(1)?;
/// let (tx, rx) = mpsc::channel();
/// rt.install(move || {
///     for i in 0..3 {
///         let tx = tx.clone();
///         taskpools::spawn_fifo(move || tx.send(i).unwrap());
///     }
/// });
/// assert_eq!(rx.iter().take(3).collect::<Vec<_>>(), [0, 1, 2]); // in spawn order
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn spawn_fifo(f: impl FnOnce() + Send + 'static) {
    match WorkerThread::current() {
        Some(w) => spawn_in(&w.registry, f, Order::Fifo),
        None => global().spawn_fifo(f),
    }
}

/// The most worker threads a runtime may have ([`MAX_THREADS`](crate::MAX_THREADS)); rayon's
/// `max_num_threads`.
///
/// ```
/// assert_eq!(taskpools::max_num_threads(), taskpools::MAX_THREADS);
/// ```
pub fn max_num_threads() -> usize {
    crate::MAX_THREADS
}

/// Whether the current worker has jobs queued on its own deque, or `None` on a thread that is
/// not a worker; rayon's `current_thread_has_pending_tasks`.
///
/// ```
/// assert_eq!(taskpools::current_thread_has_pending_tasks(), None);
/// let rt = taskpools::Runtime::new(1)?;
/// let seen = rt.install(|| {
///     taskpools::spawn(|| {});
///     taskpools::current_thread_has_pending_tasks()
/// });
/// assert_eq!(seen, Some(true));
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn current_thread_has_pending_tasks() -> Option<bool> {
    WorkerThread::current().map(|w| w.has_queued_jobs())
}

#[cfg(all(test, not(loom)))]
mod env_tests {
    use super::threads_from_env;

    #[test]
    fn num_threads_env_values() {
        assert_eq!(threads_from_env(None), Ok(None));
        assert_eq!(threads_from_env(Some("")), Ok(None));
        assert_eq!(threads_from_env(Some(" 3 ")), Ok(Some(3)));
        for bad in ["0", "-1", "two", "99999999"] {
            let e = threads_from_env(Some(bad)).unwrap_err();
            assert!(
                e.contains("TASKPOOLS_NUM_THREADS") && e.contains(bad),
                "{e}"
            );
        }
    }
}
