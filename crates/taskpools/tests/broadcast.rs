//! Broadcasts as rayon defines them: a context per call, results in worker order; concurrent
//! broadcasts wait for each other wherever waiting cannot deadlock (rayon makes them all
//! wait), and refuse only where they would wait for themselves; `spawn_broadcast` on the
//! runtime, from a worker, and in a scope.
#![cfg(not(loom))]

#[path = "common/watchdog.rs"]
mod watchdog;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::time::Duration;

use taskpools::forkjoin::{Pool, Runtime};
use taskpools::Error;
use watchdog::within;

#[test]
fn a_broadcast_gives_each_call_its_worker_and_the_runtime_size() {
    for pool in Pool::ALL {
        let rt = Runtime::builder().threads(3).pool(pool).build().unwrap();
        let seen = rt.broadcast(|ctx| {
            assert_eq!(taskpools::current_thread_index(), Some(ctx.index()));
            (ctx.index(), ctx.num_threads())
        });
        assert_eq!(seen, [(0, 3), (1, 3), (2, 3)], "{pool}");
        // The free function: on the calling worker's runtime.
        let inner = rt.install(|| taskpools::broadcast(|ctx| ctx.num_threads()));
        assert_eq!(inner, [3, 3, 3], "{pool}");
    }
}

/// Two workers of runtime A broadcast on runtime B at the same time: the second waits for the
/// first (it used to fail with `PhaseBusy`), running A's work meanwhile.
#[test]
fn broadcasts_from_workers_of_another_runtime_wait_for_each_other() {
    within(
        30,
        "concurrent broadcasts from another runtime's workers",
        || {
            let a = Runtime::new(2).unwrap();
            let b = Runtime::new(2).unwrap();
            for _ in 0..20 {
                let results = a.broadcast(|ctx| {
                    b.broadcast(|inner| {
                        std::thread::sleep(Duration::from_micros(200));
                        ctx.index() * 10 + inner.index()
                    })
                });
                assert_eq!(results, [vec![0, 1], vec![10, 11]]);
            }
        },
    );
}

/// A fork-join job on a worker of the runtime (not inside a share) broadcasts while another
/// thread's broadcast holds the runtime: it waits, running its own share of the other one.
#[test]
fn a_broadcast_from_a_job_waits_for_the_runtimes_other_broadcast() {
    within(
        30,
        "a broadcast from a job while another held the runtime",
        || {
            let rt = Arc::new(Runtime::new(2).unwrap());
            for _ in 0..10 {
                let barrier = Arc::new(Barrier::new(2));
                let (r2, b2) = (Arc::clone(&rt), Arc::clone(&barrier));
                let other = std::thread::spawn(move || {
                    b2.wait();
                    r2.broadcast(|_| std::thread::sleep(Duration::from_millis(2)))
                        .len()
                });
                let n = rt.install(|| {
                    barrier.wait();
                    std::thread::sleep(Duration::from_millis(1));
                    rt.broadcast(|ctx| ctx.index()).len()
                });
                assert_eq!(n, 2);
                assert_eq!(other.join().unwrap(), 2);
            }
        },
    );
}

/// Inside a share (or a working phase's task), a broadcast on the same runtime would wait for
/// itself: `try_broadcast` returns `PhaseBusy`, `broadcast` panics with that message, and the
/// outer broadcast still finishes.
#[test]
fn a_broadcast_inside_a_share_is_refused() {
    let rt = Runtime::new(2).unwrap();
    let inner = rt.broadcast(|_| matches!(rt.try_broadcast(|_| ()), Err(Error::PhaseBusy)));
    assert_eq!(inner, [true, true]);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.broadcast(|_| rt.broadcast(|_| ()))
    }));
    let p = r.unwrap_err();
    let msg = p.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("already running on this runtime"), "{msg}");
    assert_eq!(rt.broadcast(|c| c.index()), [0, 1]);
}

/// `spawn_broadcast` runs its closure once on every worker, from outside and from a worker,
/// without waiting; the workers stay for it at shutdown.
#[test]
fn spawn_broadcast_runs_once_per_worker() {
    for pool in Pool::ALL {
        let rt = Runtime::builder().threads(3).pool(pool).build().unwrap();
        let hits = Arc::new(AtomicUsize::new(0));
        let h = Arc::clone(&hits);
        rt.spawn_broadcast(move |ctx| {
            h.fetch_add(1 << (ctx.index() * 8), Ordering::SeqCst);
        });
        let h = Arc::clone(&hits);
        rt.install(move || {
            taskpools::spawn_broadcast(move |ctx| {
                h.fetch_add(1 << (ctx.index() * 8), Ordering::SeqCst);
            })
        });
        rt.shutdown_and_wait().unwrap();
        assert_eq!(hits.load(Ordering::SeqCst), 0x02_02_02, "{pool}");
    }
}

/// A scope's `spawn_broadcast` jobs borrow from the stack and are waited for by the scope.
#[test]
fn a_scopes_spawn_broadcast_is_waited_for() {
    let rt = Runtime::new(2).unwrap();
    let mut per_worker = [0usize; 2];
    let cells: Vec<std::sync::Mutex<&mut usize>> =
        per_worker.iter_mut().map(std::sync::Mutex::new).collect();
    rt.scope(|s| {
        s.spawn_broadcast(|_, ctx| **cells[ctx.index()].lock().unwrap() += 1);
        s.spawn_broadcast(|_, ctx| **cells[ctx.index()].lock().unwrap() += 10);
    });
    drop(cells);
    assert_eq!(per_worker, [11, 11]);
    // One blocked worker does not hold a broadcast's job for it: each is addressed to its own
    // worker, so the scope waits until that worker is free.
    let (tx, rx) = mpsc::channel::<()>();
    rt.scope(|s| {
        s.spawn(move |_| rx.recv().unwrap());
        s.spawn_broadcast(|_, _| ());
        tx.send(()).unwrap();
    });
}
