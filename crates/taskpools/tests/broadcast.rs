//! Broadcasts as rayon defines them: a context per call, results in worker order; broadcasts do
//! not exclude each other (they nest, also across runtimes); a working phase holds its runtime,
//! so a broadcast (or a scope's `spawn_broadcast`) from its runtime's workers is refused while
//! it runs, and one from elsewhere waits for it; `spawn_broadcast` on the runtime, from a
//! worker, and in a scope.
#![cfg(not(loom))]

#[path = "common/watchdog.rs"]
mod watchdog;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::time::Duration;

use taskpools::forkjoin::{Pool, Runtime};
use taskpools::{Builder, Ctx, Error, Task};

/// `try_broadcast` on the phase's runtime from a phase task returns the error.
struct TriesBroadcast(Arc<Runtime>, Arc<Mutex<Option<bool>>>);

impl Task for TriesBroadcast {
    fn run(self, _ctx: &mut Ctx<'_, Self>) {
        let busy = matches!(self.0.try_broadcast(|_| ()), Err(Error::PhaseBusy));
        *self.1.lock().unwrap() = Some(busy);
    }
}
use watchdog::within;

#[test]
fn a_broadcast_gives_each_call_its_worker_and_the_runtime_size() {
    within(30, "a broadcast", || {
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
    });
}

/// Broadcasts nest inside each other's shares, on one runtime and across two, three levels
/// deep, and from two threads in opposite orders at once: rayon finishes all of these (an
/// exclusive broadcast, as this runtime had before, refused or deadlocked some).
#[test]
fn broadcasts_nest_within_and_across_runtimes() {
    within(60, "nested broadcasts", || {
        let a = Arc::new(Runtime::new(2).unwrap());
        let b = Arc::new(Runtime::new(2).unwrap());
        let same = a.broadcast(|_| a.broadcast(|ctx| ctx.index()));
        assert_eq!(same, [vec![0, 1], vec![0, 1]]);
        for _ in 0..10 {
            let deep = a
                .broadcast(|x| b.broadcast(|y| a.broadcast(|z| (x.index(), y.index(), z.index()))));
            assert_eq!(deep.len(), 2);
            assert!(deep
                .iter()
                .all(|v| v.len() == 2 && v.iter().all(|w| w.len() == 2)));
        }
        let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
        let other = std::thread::spawn(move || {
            for _ in 0..20 {
                b2.broadcast(|_| a2.broadcast(|c| c.index()));
            }
        });
        for _ in 0..20 {
            a.broadcast(|_| b.broadcast(|c| c.index()));
        }
        other.join().unwrap();
    });
}

/// A broadcast from a job on a worker of the runtime while another thread's broadcast is in
/// flight: both finish (each worker runs the shares addressed to it in order).
#[test]
fn a_broadcast_from_a_job_runs_beside_another_threads_broadcast() {
    within(30, "two broadcasts at once", || {
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
    });
}

/// A phase task that asks for a broadcast (directly, through a scope's `spawn_broadcast`, or in
/// a spawn that another worker steals) while the phase holds the runtime.
struct AsksForBroadcast(u8);

impl Task for AsksForBroadcast {
    fn run(self, _ctx: &mut Ctx<'_, Self>) {
        match self.0 {
            0 => {
                taskpools::broadcast(|_| ());
            }
            1 => taskpools::forkjoin::scope(|s| s.spawn_broadcast(|_, _| ())),
            _ => taskpools::forkjoin::scope(|s| {
                // Spawned: on a phase narrower than its runtime, the free worker may steal it.
                s.spawn(|_| {
                    taskpools::broadcast(|_| ());
                });
                std::thread::sleep(Duration::from_millis(5));
            }),
        }
    }
}

/// On the phase's runtime, each of these is refused (a panic with `PhaseBusy`'s message that
/// ends the phase) instead of waiting for the phase, which waits for it. Before, a stolen
/// spawn that broadcast on a phase over fewer workers than the runtime has waited forever.
#[test]
fn a_broadcast_inside_a_working_phase_is_refused() {
    within(60, "a broadcast inside a working phase", || {
        let rt = Runtime::new(2).unwrap();
        for (kind, threads) in [(0, 2), (1, 2), (2, 1), (2, 2)] {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                Builder::new()
                    .threads(threads)
                    .runtime(&rt)
                    .run([AsksForBroadcast(kind)])
            }));
            let p = r.expect_err("the phase must end with the broadcast's panic");
            let msg = p.downcast_ref::<String>().cloned().unwrap_or_default();
            assert!(
                msg.contains("already running on this runtime"),
                "kind {kind}, {threads} workers: {msg}"
            );
        }
        // The runtime is fine afterwards.
        assert_eq!(rt.broadcast(|c| c.index()), [0, 1]);
        let rt = Arc::new(rt);
        let seen = Arc::new(Mutex::new(None));
        Builder::new()
            .threads(2)
            .runtime(&rt)
            .run([TriesBroadcast(Arc::clone(&rt), Arc::clone(&seen))])
            .unwrap();
        assert_eq!(*seen.lock().unwrap(), Some(true));
    });
}

/// A broadcast from a thread outside the runtime while a working phase holds it waits for the
/// phase, and then runs.
#[test]
fn a_broadcast_from_outside_waits_for_a_working_phase() {
    struct Slow(u32);
    impl Task for Slow {
        fn run(self, ctx: &mut Ctx<'_, Self>) {
            std::thread::sleep(Duration::from_micros(200));
            if self.0 > 0 {
                ctx.put(Slow(self.0 - 1));
                ctx.put(Slow(self.0 - 1));
            }
        }
    }
    within(60, "a broadcast waiting for a phase", || {
        let rt = Arc::new(Runtime::new(2).unwrap());
        let r2 = Arc::clone(&rt);
        let phase = std::thread::spawn(move || {
            Builder::new()
                .threads(2)
                .runtime(&r2)
                .run([Slow(6)])
                .unwrap()
        });
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(rt.broadcast(|c| c.index()), [0, 1]);
        assert_eq!(phase.join().unwrap().tasks_run(), 127);
    });
}

/// `spawn_broadcast` runs its closure once on every worker, from outside and from a worker,
/// without waiting; the workers stay for it at shutdown.
#[test]
fn spawn_broadcast_runs_once_per_worker() {
    within(30, "spawn_broadcast", || {
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
    });
}

/// A scope's `spawn_broadcast` jobs borrow from the stack and are waited for by the scope; a
/// blocked worker holds back only its own job: here worker 1's spawn blocks until worker 0's
/// broadcast job has run.
#[test]
fn a_scopes_spawn_broadcast_is_waited_for() {
    within(30, "a scope's spawn_broadcast", || {
        let rt = Runtime::new(2).unwrap();
        let mut per_worker = [0usize; 2];
        let cells: Vec<Mutex<&mut usize>> = per_worker.iter_mut().map(Mutex::new).collect();
        rt.scope(|s| {
            s.spawn_broadcast(|_, ctx| **cells[ctx.index()].lock().unwrap() += 1);
            s.spawn_broadcast(|_, ctx| **cells[ctx.index()].lock().unwrap() += 10);
        });
        drop(cells);
        assert_eq!(per_worker, [11, 11]);
        for _ in 0..10 {
            let (tx, rx) = mpsc::channel::<usize>();
            let tx = Mutex::new(tx);
            rt.scope(|s| {
                s.spawn(move |_| {
                    // Blocks this worker until the *other* worker's broadcast job ran.
                    let me = taskpools::current_thread_index().unwrap();
                    loop {
                        let from = rx.recv().unwrap();
                        if from != me {
                            break;
                        }
                    }
                });
                // The blocked job may have had its message and gone (with the receiver) before
                // the last broadcast job sends: that send finds nobody, which is fine.
                s.spawn_broadcast(|_, ctx| {
                    let _ = tx.lock().unwrap().send(ctx.index());
                });
            });
        }
    });
}

/// The closure of a scope's `spawn_broadcast` (and what it owns) is dropped before the scope
/// returns: its jobs let go of it before they count themselves done. (A drop that runs after
/// the scope returned would use what the scope's caller may already have freed.)
#[test]
fn a_scopes_spawn_broadcast_closure_is_dropped_before_the_scope_returns() {
    struct Flag<'a>(&'a AtomicBool);
    impl Drop for Flag<'_> {
        fn drop(&mut self) {
            std::thread::sleep(Duration::from_millis(5));
            self.0.store(true, Ordering::SeqCst);
        }
    }
    within(30, "a scope's spawn_broadcast closure", || {
        let rt = Runtime::new(2).unwrap();
        for _ in 0..5 {
            let dropped = AtomicBool::new(false);
            rt.scope(|s| {
                let flag = Flag(&dropped);
                s.spawn_broadcast(move |_, _| {
                    let _ = &flag;
                });
            });
            assert!(
                dropped.load(Ordering::SeqCst),
                "dropped after the scope returned"
            );
        }
    });
}
