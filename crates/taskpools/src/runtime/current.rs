//! The current runtime: the worker's own, or else the global one, created on first use and
//! sized by [`NUM_THREADS_ENV`]; and what runs on it (rayon's `current_num_threads`,
//! `current_thread_index` and `spawn`). `current_place` is the places layer's
//! (`places/current.rs`, re-exported here): the worker sets it when it starts.

use std::sync::OnceLock;

use super::worker::WorkerThread;
use super::{eprintln_best_effort, spawn_in, Runtime};

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

pub(crate) fn global() -> &'static Runtime {
    GLOBAL.get_or_init(|| {
        let cpus = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(crate::MAX_THREADS);
        let env = std::env::var(NUM_THREADS_ENV).ok();
        let n = match threads_from_env(env.as_deref()) {
            Ok(n) => n.unwrap_or(cpus),
            Err(why) => {
                eprintln_best_effort(&format!(
                    "taskpools: {why}; the global runtime uses {cpus} threads (one per CPU)"
                ));
                cpus
            }
        };
        Runtime::new(n).expect("could not start the global runtime")
    })
}

/// Number of worker threads of the current worker's runtime, or, on a thread that is not a
/// worker, of the global runtime (which this creates if it does not exist yet, like `join`
/// would). Rayon's `current_num_threads`.
pub fn current_num_threads() -> usize {
    match WorkerThread::current() {
        Some(w) => w.registry.threads,
        None => global().threads(),
    }
}

/// The index (`0..threads`) of the worker running this code in its runtime, or `None` on a
/// thread that is not a worker. Rayon's `current_thread_index`.
pub fn current_thread_index() -> Option<usize> {
    WorkerThread::current().map(|w| w.index)
}

/// Runs `f` without waiting for it on the current worker's runtime, or, on a thread that is
/// not a worker, on the global runtime; see [`Runtime::spawn`] (a panic in `f` is caught and
/// reported on stderr). The global runtime is never dropped: a job still queued there when
/// the process exits does not run, so wait for what must finish (a channel, a counter).
pub fn spawn(f: impl FnOnce() + Send + 'static) {
    match WorkerThread::current() {
        Some(w) => spawn_in(&w.registry, f),
        None => global().spawn(f),
    }
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
