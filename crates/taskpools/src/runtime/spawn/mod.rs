//! Fire-and-forget jobs: `spawn`, `spawn_fifo` and the jobs of `spawn_broadcast`.
//!
//! **Order.** A job spawned on one of the runtime's workers goes onto that worker's own deque
//! (on the default pool its public spawn deque), so the worker runs its spawns newest first,
//! while they are hot in its cache (rayon: "generally prioritized in a LIFO order on the thread
//! from which they were spawned"); `spawn_fifo` queues the job in the worker's FIFO and a
//! *ticket* on its deque, and whoever runs a ticket (the worker, or a thief) runs the oldest
//! job of that FIFO, so the worker's `spawn_fifo` jobs start in spawn order. A job spawned from
//! any other thread is injected, and injected jobs are taken oldest first.
//!
//! **Progress.** A spawned job never waits for its spawner's help: on the default pool the
//! spawn deque is a Chase–Lev deque that other workers steal from directly, and every spawn
//! wakes a sleeping worker. So `spawn(move || tx.send(())); rx.recv()` on a worker of a
//! two-worker runtime finishes, as it does on rayon.
//!
//! **Shutdown.** Dropping a [`Runtime`](super::Runtime) signals the shutdown and returns; the
//! workers leave only once every fire-and-forget job has finished (`Registry::live_spawns`,
//! counted up at the spawn and down when the job has run), so no spawned job is lost, and a
//! job that blocks its worker until another spawned job runs (the drop does not wait for it,
//! so it cannot deadlock the dropping thread) still finds workers to run that job.
//! `Runtime::shutdown_and_wait` waits for the workers to leave. Why no wake-up is lost: a
//! worker that finds no work after the shutdown checks `live_spawns` and the shutdown under
//! the sleep lock and waits on it (`Registry::sleep_until_work`); the shutdown is stored under
//! that lock, and the job that brings the count to zero takes the lock to look at the shutdown
//! and wake the sleepers (`done`): in the lock's order one of them comes first, and the other
//! sees what it did (the loom models in `spawn/loom_models.rs`, with planted-bug twins).

#[cfg(all(test, loom))]
mod loom_models;

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::job::{JobRef, SpawnJob};
use super::worker::WorkerThread;
use super::Registry;
use crate::sync::{lock, Ordering};

/// How a spawned job is ordered on its worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    /// Newest first on the spawning worker (`spawn`).
    Lifo,
    /// Oldest first among the spawning worker's `spawn_fifo` jobs.
    Fifo,
}

/// Spawns `f` on the runtime of `registry`: onto the current worker's deque if it is one of
/// that runtime's workers, else into the injector.
pub(crate) fn spawn_in(registry: &Registry, f: impl FnOnce() + Send + 'static, order: Order) {
    let job = counted(registry, f);
    match WorkerThread::current() {
        Some(w) if std::ptr::eq(&*w.registry, registry) => match order {
            Order::Lifo => w.push_spawn(job),
            Order::Fifo => push_fifo(w, job),
        },
        _ => registry.inject(job),
    }
}

/// Posts a counted job running `f` to worker `to` of the runtime of `registry` (the jobs of
/// `spawn_broadcast`).
pub(crate) fn post_counted(registry: &Registry, to: usize, f: impl FnOnce() + Send + 'static) {
    let job = counted(registry, f);
    registry.post(to, job);
}

/// A job that runs `f` (its panic goes to the runtime's panic handler) and then counts itself
/// finished; counted as live from now.
fn counted(registry: &Registry, f: impl FnOnce() + Send + 'static) -> JobRef {
    registry.live_spawns.fetch_add(1, Ordering::Relaxed);
    let job = move || {
        let result = catch_unwind(AssertUnwindSafe(f));
        // Every counted job runs on a worker of its own runtime (pushed there, stolen only by
        // its workers, or injected into it): that worker's registry is the one that counted it.
        let w = WorkerThread::current().expect("a spawned job runs on a worker of its runtime");
        if let Err(p) = result {
            w.registry.handlers.job_panicked("a spawned job", p);
        }
        done(&w.registry);
    };
    // SAFETY: `f` is `'static`, so it borrows nothing that can go away. The reference is
    // executed exactly once: it is pushed onto one deque or FIFO, or injected, or posted, and
    // the workers do not leave before `live_spawns`, which counts it until it has run, is zero.
    unsafe { SpawnJob::into_job_ref(job) }
}

/// Counts one fire-and-forget job finished; the last one after a shutdown wakes the sleeping
/// workers, which may now leave. The count is read by a would-be sleeper under the sleep lock,
/// after it announced itself; the last job looks at the shutdown under the same lock, which
/// `Registry::signal_shutdown` stores under: so either the shutdown comes after this in the
/// lock's order, and a sleeper that sees it sees the count at zero too, or this sees it and
/// wakes them.
pub(crate) fn done(registry: &Registry) {
    // Release: what the job did happens before a worker's Acquire read of zero, and so before
    // `shutdown_and_wait` returns.
    if registry.live_spawns.fetch_sub(1, Ordering::Release) != 1 {
        return;
    }
    #[cfg(loom)]
    if registry.broken_done_no_notify {
        return;
    }
    let _g = lock(&registry.sleep);
    if registry.shutdown.load(Ordering::Relaxed) {
        registry.wake.notify_all();
    }
}

/// `spawn_fifo` on worker `w`: the job into `w`'s FIFO, a ticket onto its deque.
fn push_fifo(w: &WorkerThread, job: JobRef) {
    let me = w.index;
    lock(&w.registry.fifos[me]).push_back(job);
    let ticket = move || {
        let w = WorkerThread::current().expect("a ticket runs on a worker of its runtime");
        let j = lock(&w.registry.fifos[me])
            .pop_front()
            .expect("one job in the FIFO per ticket");
        // SAFETY: taken from the FIFO once, so executed once; a counted spawned job that owns
        // its storage.
        unsafe { j.execute() };
    };
    // SAFETY: the ticket borrows nothing; it is pushed once and runs once (before the workers
    // leave: its job in the FIFO is counted in `live_spawns` until it has run, which only a
    // ticket does).
    let ticket = unsafe { SpawnJob::into_job_ref(ticket) };
    w.push_spawn(ticket);
}
