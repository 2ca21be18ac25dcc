//! The rest of rayon-core's fork-join surface under our names: `join_context` and
//! `FnContext::migrated`, `in_place_scope(_fifo)`, `yield_local`,
//! `current_thread_has_pending_tasks`, `max_num_threads`, `Runtime::current_thread_index`.
#![cfg(not(loom))]

#[path = "common/watchdog.rs"]
mod watchdog;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use taskpools::forkjoin::{self, join_context, Pool, Runtime};
use taskpools::Yield;
use watchdog::within;

/// On a worker, `a` never migrates; `b` migrates exactly when another worker ran it. Here `a`
/// spins until `b` has run, which only a thief can do meanwhile (the first join of a worker
/// with nothing queued is stealable on both pools).
#[test]
fn join_context_tells_b_that_it_was_stolen() {
    for pool in Pool::ALL {
        within(30, "join_context's b was never stolen", move || {
            let rt = Runtime::builder().threads(2).pool(pool).build().unwrap();
            for _ in 0..20 {
                let done = AtomicBool::new(false);
                let (a, b) = rt.install(|| {
                    join_context(
                        |ca| {
                            while !done.load(Ordering::Acquire) {
                                std::hint::spin_loop();
                            }
                            ca.migrated()
                        },
                        |cb| {
                            done.store(true, Ordering::Release);
                            cb.migrated()
                        },
                    )
                });
                assert_eq!((a, b), (false, true), "{pool}");
            }
            // Run inline on one worker: neither migrates.
            let one = Runtime::builder().threads(1).pool(pool).build().unwrap();
            let r = one.install(|| join_context(|c| c.migrated(), |c| c.migrated()));
            assert_eq!(r, (false, false), "{pool}");
        });
    }
}

/// From a thread that is not a worker, the join is handed to a worker: both closures migrated.
#[test]
fn join_context_from_outside_is_migrated() {
    within(60, "join_context from outside", || {
        let (a, b) = join_context(|c| c.migrated(), |c| c.migrated());
        assert_eq!((a, b), (true, true));
    });
}

/// `in_place_scope` runs its body on the calling thread (which may use what is not `Send`);
/// the spawns run on the runtime's workers, and the scope waits for them; a spawn's panic is
/// resumed after all of them ran.
#[test]
fn in_place_scope_runs_its_body_here() {
    within(60, "in_place_scope", || {
        let here = std::thread::current().id();
        let local = std::rc::Rc::new(5); // not Send: only the body touches it
        let ran = Mutex::new(Vec::new());
        forkjoin::in_place_scope(|s| {
            assert_eq!(std::thread::current().id(), here);
            assert_eq!(*local, 5);
            for i in 0..32 {
                let ran = &ran;
                s.spawn(move |_| {
                    assert!(taskpools::current_thread_index().is_some(), "on a worker");
                    ran.lock().unwrap().push(i);
                });
            }
        });
        let mut v = ran.into_inner().unwrap();
        v.sort();
        assert_eq!(v, (0..32).collect::<Vec<_>>());
        let r = std::panic::catch_unwind(|| {
            forkjoin::in_place_scope(|s| {
                s.spawn(|_| panic!("a spawn of an in-place scope"));
                s.spawn(|_| ());
            })
        });
        assert!(r.is_err());
    });
}

/// On a worker, `in_place_scope_fifo` starts the worker's own spawns in spawn order, as
/// `scope_fifo` does.
#[test]
fn in_place_scope_fifo_on_a_worker_keeps_spawn_order() {
    within(60, "in_place_scope_fifo", || {
        let rt = Runtime::new(1).unwrap();
        let order = Mutex::new(Vec::new());
        rt.install(|| {
            forkjoin::in_place_scope_fifo(|s| {
                for i in 0..8 {
                    let order = &order;
                    s.spawn(move |_| order.lock().unwrap().push(i));
                }
            })
        });
        assert_eq!(order.into_inner().unwrap(), (0..8).collect::<Vec<_>>());
    });
}

/// `yield_local` runs a job of the worker's own deque only; `current_thread_has_pending_tasks`
/// says whether there is one; both are `None` off a worker.
#[test]
fn yield_local_and_pending_tasks() {
    within(60, "yield_local", || {
        assert_eq!(taskpools::yield_local(), None);
        assert_eq!(taskpools::current_thread_has_pending_tasks(), None);
        for pool in Pool::ALL {
            let rt = Runtime::builder().threads(1).pool(pool).build().unwrap();
            let ran = AtomicBool::new(false);
            rt.scope(|s| {
                assert_eq!(taskpools::current_thread_has_pending_tasks(), Some(false));
                let ran = &ran;
                s.spawn(move |_| ran.store(true, Ordering::Relaxed));
                assert_eq!(taskpools::current_thread_has_pending_tasks(), Some(true));
                assert_eq!(rt.current_thread_has_pending_tasks(), Some(true));
                assert_eq!(taskpools::yield_local(), Some(Yield::Executed), "{pool}");
                assert!(ran.load(Ordering::Relaxed));
                assert_eq!(taskpools::yield_local(), Some(Yield::Idle), "{pool}");
                assert_eq!(taskpools::current_thread_has_pending_tasks(), Some(false));
            });
        }
    });
}

/// `Runtime::current_thread_index` is the index in *that* runtime: `None` on a worker of
/// another one.
#[test]
fn current_thread_index_is_per_runtime() {
    within(60, "current_thread_index", || {
        let a = Runtime::new(2).unwrap();
        let b = Runtime::new(1).unwrap();
        assert_eq!(a.current_thread_index(), None);
        let (in_a, in_b) = a.install(|| (a.current_thread_index(), b.current_thread_index()));
        assert!(matches!(in_a, Some(0 | 1)));
        assert_eq!(in_b, None);
        assert_eq!(b.current_thread_has_pending_tasks(), None);
        assert_eq!(taskpools::max_num_threads(), taskpools::MAX_THREADS);
    });
}

/// `Runtime::in_place_scope` spawns into *that* runtime, from anywhere: a plain thread, or a
/// worker of another runtime (which waits running its own runtime's work); `Runtime::yield_now`
/// and `yield_local` act only on that runtime's workers.
#[test]
fn runtime_in_place_scope_and_yields_are_per_runtime() {
    within(60, "Runtime::in_place_scope", || {
        let a = Runtime::new(2).unwrap();
        let b = Runtime::new(1).unwrap();
        let on = |rt: &Runtime| {
            let seen = Mutex::new(Vec::new());
            rt.in_place_scope(|s| {
                for _ in 0..4 {
                    let seen = &seen;
                    s.spawn(move |_| seen.lock().unwrap().push(taskpools::current_thread_index()));
                }
            });
            seen.into_inner().unwrap()
        };
        // From this thread: b's one worker runs them all.
        assert_eq!(on(&b), [Some(0); 4]);
        // From a worker of a: still b's worker.
        assert_eq!(a.install(|| on(&b)), [Some(0); 4]);
        assert_eq!(b.yield_now(), None);
        assert_eq!(b.yield_local(), None);
        assert_eq!(a.install(|| b.yield_local()), None);
        assert!(b.install(|| b.yield_local()).is_some());
    });
}

/// `yield_local` also runs a job addressed to this worker (as rayon's takes its broadcast
/// jobs), here a `spawn_broadcast` job on a one-worker runtime.
#[test]
fn yield_local_runs_jobs_addressed_to_this_worker() {
    within(30, "yield_local with mail", || {
        let rt = Runtime::new(1).unwrap();
        let ran = std::sync::Arc::new(AtomicBool::new(false));
        let r = std::sync::Arc::clone(&ran);
        let (first, then) = rt.install(move || {
            taskpools::spawn_broadcast(move |_| r.store(true, Ordering::SeqCst));
            (taskpools::yield_local(), taskpools::yield_local())
        });
        assert_eq!((first, then), (Some(Yield::Executed), Some(Yield::Idle)));
        assert!(ran.load(Ordering::SeqCst));
    });
}
