//! Fire-and-forget jobs as rayon defines them: `spawn` runs newest first on the spawning
//! worker and oldest first from outside, `spawn_fifo` oldest first; a spawned job runs without
//! its spawner's help; a drop signals and returns while the workers finish every spawned job;
//! `shutdown_and_wait` waits; panics go to the panic handler.
#![cfg(not(loom))]

#[path = "common/watchdog.rs"]
mod watchdog;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use taskpools::forkjoin::{Pool, Runtime};
use watchdog::within;

fn rt(pool: Pool, threads: usize) -> Runtime {
    Runtime::builder()
        .threads(threads)
        .pool(pool)
        .build()
        .unwrap()
}

/// The order in which a one-worker runtime runs 100 jobs spawned by `spawn_one(i)` from
/// inside `install` (on the worker) or from the test's thread.
fn order(pool: Pool, on_worker: bool, fifo: bool) -> Vec<usize> {
    let rt = rt(pool, 1);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let spawn_all = {
        let seen = Arc::clone(&seen);
        move || {
            for i in 0..100 {
                let seen = Arc::clone(&seen);
                let job = move || seen.lock().unwrap().push(i);
                if fifo {
                    taskpools::spawn_fifo(job);
                } else {
                    taskpools::spawn(job);
                }
            }
        }
    };
    if on_worker {
        rt.install(spawn_all);
    } else {
        // From outside: through the runtime's methods (the free functions would use the
        // global runtime here).
        for i in 0..100 {
            let seen = Arc::clone(&seen);
            let job = move || seen.lock().unwrap().push(i);
            if fifo {
                rt.spawn_fifo(job);
            } else {
                rt.spawn(job);
            }
        }
        drop(spawn_all);
    }
    rt.shutdown_and_wait().unwrap();
    seen.lock().unwrap().clone()
}

#[test]
fn spawns_from_a_worker_run_newest_first() {
    within(60, "spawn order", || {
        for pool in Pool::ALL {
            let expect: Vec<usize> = (0..100).rev().collect();
            assert_eq!(order(pool, true, false), expect, "{pool}");
        }
    });
}

#[test]
fn spawn_fifo_from_a_worker_runs_oldest_first() {
    within(60, "spawn_fifo order", || {
        for pool in Pool::ALL {
            let expect: Vec<usize> = (0..100).collect();
            assert_eq!(order(pool, true, true), expect, "{pool}");
        }
    });
}

#[test]
fn spawns_from_outside_run_oldest_first() {
    within(60, "injected order", || {
        for pool in Pool::ALL {
            let expect: Vec<usize> = (0..100).collect();
            assert_eq!(order(pool, false, false), expect, "{pool}");
            assert_eq!(order(pool, false, true), expect, "{pool} fifo");
        }
    });
}

/// `spawn(move || tx.send(())); rx.recv()` on a worker of a two-worker runtime: the spawner
/// blocks in `recv` and never answers a steal request, so only a thief that takes the job
/// without its help can run it (as on rayon).
#[test]
fn a_spawned_job_runs_while_its_spawner_blocks() {
    for pool in Pool::ALL {
        for fifo in [false, true] {
            within(
                30,
                "a spawned job waited for its blocked spawner",
                move || {
                    let rt = rt(pool, 2);
                    for _ in 0..20 {
                        rt.install(|| {
                            let (tx, rx) = mpsc::channel();
                            let job = move || tx.send(()).unwrap();
                            if fifo {
                                taskpools::spawn_fifo(job);
                            } else {
                                taskpools::spawn(job);
                            }
                            rx.recv().unwrap();
                        });
                    }
                },
            );
        }
    }
}

/// The audit's repro: a spawned job blocks until the thread that drops the runtime sends it
/// something after the drop. The drop must return (it signals and does not wait), and the job
/// still runs to its end.
#[test]
fn dropping_a_runtime_does_not_wait_for_its_spawned_jobs() {
    for pool in Pool::ALL {
        within(30, "the drop waited for a spawned job", move || {
            let rt = rt(pool, 2);
            let (tx, rx) = mpsc::channel::<()>();
            let (done_tx, done_rx) = mpsc::channel();
            rt.spawn(move || {
                rx.recv().unwrap();
                done_tx.send(()).unwrap();
            });
            drop(rt);
            tx.send(()).unwrap();
            done_rx.recv_timeout(Duration::from_secs(20)).unwrap();
        });
    }
}

/// A spawned job that blocks its worker until a job it spawned has run, while the runtime is
/// being dropped: the other worker stays for that job (workers leave only when every spawned
/// job has finished), so both finish.
#[test]
fn workers_stay_for_jobs_spawned_after_the_drop() {
    for pool in Pool::ALL {
        within(
            30,
            "a job spawned during the shutdown was lost",
            move || {
                let rt = rt(pool, 2);
                let (done_tx, done_rx) = mpsc::channel();
                let (go_tx, go_rx) = mpsc::channel::<()>();
                rt.spawn(move || {
                    go_rx.recv().unwrap(); // sent after the drop
                    let (tx, rx) = mpsc::channel();
                    taskpools::spawn(move || tx.send(()).unwrap());
                    rx.recv().unwrap();
                    done_tx.send(()).unwrap();
                });
                drop(rt);
                go_tx.send(()).unwrap();
                done_rx.recv_timeout(Duration::from_secs(20)).unwrap();
            },
        );
    }
}

/// `shutdown_and_wait` returns after every spawned job and every job those spawned, and the
/// closures (and their captures) are dropped: nothing is lost or leaked.
#[test]
fn shutdown_and_wait_runs_spawns_of_spawns() {
    within(60, "shutdown_and_wait", || {
        for pool in Pool::ALL {
            for threads in [1, 2, 3] {
                let count = Arc::new(AtomicUsize::new(0));
                let rt = rt(pool, threads);
                for _ in 0..50 {
                    let c = Arc::clone(&count);
                    rt.spawn(move || {
                        for _ in 0..4 {
                            let c = Arc::clone(&c);
                            taskpools::spawn_fifo(move || {
                                let c2 = Arc::clone(&c);
                                taskpools::spawn(move || {
                                    c2.fetch_add(1, Ordering::Relaxed);
                                });
                                c.fetch_add(1, Ordering::Relaxed);
                            });
                        }
                        c.fetch_add(1, Ordering::Relaxed);
                    });
                }
                rt.shutdown_and_wait().unwrap();
                assert_eq!(
                    count.load(Ordering::Relaxed),
                    50 * (1 + 4 * 2),
                    "{pool} x{threads}"
                );
                assert_eq!(
                    Arc::strong_count(&count),
                    1,
                    "{pool} x{threads}: a closure leaked"
                );
            }
        }
    });
}

/// On one of its own workers, `shutdown_and_wait` cannot wait for itself: an error, and the
/// workers still leave.
#[test]
fn shutdown_and_wait_on_its_own_worker_is_refused() {
    let rt = rt(Pool::PrivateDeque, 2);
    let (hand_tx, hand_rx) = mpsc::channel::<Runtime>();
    let (tx, rx) = mpsc::channel();
    rt.spawn(move || {
        let rt = hand_rx.recv().expect("the runtime");
        tx.send(rt.shutdown_and_wait()).unwrap();
    });
    hand_tx.send(rt).unwrap();
    let r = rx.recv_timeout(Duration::from_secs(20)).unwrap();
    assert!(matches!(r, Err(taskpools::Error::WaitOnOwnWorker)), "{r:?}");
}

/// Panics of fire-and-forget jobs go to the panic handler (spawn, spawn_fifo, spawn_broadcast),
/// and the workers go on; a handler that panics is reported, and the workers still go on.
#[test]
fn the_panic_handler_gets_the_panics_of_spawned_jobs() {
    within(60, "the panic handler", || {
        let (tx, rx) = mpsc::channel::<String>();
        let tx = Mutex::new(tx);
        let rt = Runtime::builder()
            .threads(2)
            .panic_handler(move |p| {
                let msg = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                if msg == "handler, panic!" {
                    panic!("the handler itself panics");
                }
                tx.lock().unwrap().send(msg).unwrap();
            })
            .build()
            .unwrap();
        rt.spawn(|| panic!("from spawn"));
        rt.spawn_fifo(|| panic!("from spawn_fifo"));
        rt.spawn_broadcast(|ctx| panic!("from worker {}", ctx.index()));
        rt.spawn(|| panic!("handler, panic!"));
        let mut got: Vec<String> = (0..4)
            .map(|_| rx.recv_timeout(Duration::from_secs(20)).unwrap())
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                "from spawn",
                "from spawn_fifo",
                "from worker 0",
                "from worker 1"
            ]
        );
        // The workers are still there.
        assert_eq!(rt.join(|| 1, || 2), (1, 2));
        rt.shutdown_and_wait().unwrap();
    });
}

/// Without a handler, a spawned job's panic is reported and the worker goes on (rayon would
/// abort); a payload whose `Drop` panics does not take the worker down either.
#[test]
fn without_a_panic_handler_the_workers_go_on() {
    within(60, "panics without a handler", || {
        struct Bomb;
        impl Drop for Bomb {
            fn drop(&mut self) {
                if !std::thread::panicking() {
                    panic!("payload drop panics");
                }
            }
        }
        let rt = rt(Pool::PrivateDeque, 1);
        rt.spawn(|| panic!("expected test panic in a spawned job"));
        rt.spawn(|| std::panic::panic_any(Bomb));
        let (tx, rx) = mpsc::channel();
        rt.spawn(move || tx.send(7).unwrap());
        assert_eq!(rx.recv_timeout(Duration::from_secs(20)), Ok(7));
        rt.shutdown_and_wait().unwrap();
    });
}

/// `shutdown_and_wait` on a worker of another runtime waits running that runtime's work: here
/// the last job of the runtime being shut down installs onto the waiting worker's runtime,
/// whose one worker is the waiter.
#[test]
fn shutdown_and_wait_from_another_runtimes_worker_runs_its_work() {
    within(30, "shutdown_and_wait on another runtime's worker", || {
        let b = Arc::new(rt(Pool::PrivateDeque, 1));
        let a = rt(Pool::PrivateDeque, 1);
        let b2 = Arc::clone(&b);
        let r = b.install(move || {
            a.spawn(move || {
                assert_eq!(b2.install(|| 6 * 7), 42);
            });
            a.shutdown_and_wait()
        });
        r.unwrap();
    });
}
