//! The global pool: `taskpools`' global runtime, built with rayon's defaults
//! (`RAYON_NUM_THREADS`, unnamed threads, abort on a spawned job's uncaught panic) when it is
//! first used, or with the options given to
//! [`ThreadPoolBuilder::build_global`](crate::ThreadPoolBuilder::build_global) before that.
//!
//! The runtime creates its global runtime itself, on first use; `taskpools::runtime::
//! set_global_default` tells it how. Every entry point of this crate that may reach the global
//! runtime calls [`ensure_global`] first, which registers this crate's defaults once per
//! process (one load and a branch after that). Nothing is started until the global pool is
//! used, and a program that uses only its own pools never starts it, as in rayon. If
//! `taskpools` code used the global runtime before any of this crate's entry points, it was
//! built with the runtime's defaults, and rayon's work runs on it.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::ThreadPoolBuilder;

/// Set once this crate's defaults are registered with the runtime.
static REGISTERED: AtomicBool = AtomicBool::new(false);

/// Registers rayon's defaults for the global runtime, once (see the module docs).
#[inline]
pub(crate) fn ensure_global() {
    // Relaxed: the flag only saves the call below; registering twice is harmless (the second
    // one is refused), and the runtime's own cells order what they hold.
    if !REGISTERED.load(Ordering::Relaxed) {
        register_defaults();
    }
}

#[cold]
#[inline(never)]
fn register_defaults() {
    taskpools::runtime::set_global_default(build_default);
    REGISTERED.store(true, Ordering::Relaxed);
}

/// The global runtime as `ThreadPoolBuilder::new()` would build it.
fn build_default() -> Result<taskpools::Runtime, taskpools::Error> {
    ThreadPoolBuilder::new().build_runtime()
}
