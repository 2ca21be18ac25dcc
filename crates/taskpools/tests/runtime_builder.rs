//! What the runtime's builder offers as rayon-core's does: handlers at each worker's start and
//! exit, threads the caller starts (`spawn_handler`, `build_scoped`), the building thread as
//! worker 0 (`use_current_thread`), `threads(0)` as the default.
#![cfg(not(loom))]

#[path = "common/watchdog.rs"]
mod watchdog;

use std::cell::Cell;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use taskpools::forkjoin::{Pool, Runtime};
use taskpools::Error;
use watchdog::within;

thread_local! {
    static TAG: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// The start handler runs on each worker before its first job (a thread-local it sets is seen
/// by every job there); the exit handler once per worker when it leaves, before
/// `shutdown_and_wait` returns.
#[test]
fn start_and_exit_handlers_run_once_per_worker_on_its_thread() {
    within(60, "start and exit handlers", || {
        for pool in Pool::ALL {
            let started = Arc::new(Mutex::new(Vec::new()));
            let exited = Arc::new(Mutex::new(Vec::new()));
            let (s, e) = (Arc::clone(&started), Arc::clone(&exited));
            let rt = Runtime::builder()
                .threads(3)
                .pool(pool)
                .start_handler(move |i| {
                    TAG.with(|t| t.set(i * 10));
                    s.lock().unwrap().push(i);
                })
                .exit_handler(move |i| e.lock().unwrap().push(i))
                .build()
                .unwrap();
            let tags = rt.broadcast(|ctx| (ctx.index(), TAG.with(Cell::get)));
            assert_eq!(tags, [(0, 0), (1, 10), (2, 20)], "{pool}");
            assert!(exited.lock().unwrap().is_empty(), "{pool}");
            rt.shutdown_and_wait().unwrap();
            let mut s = started.lock().unwrap().clone();
            let mut e = exited.lock().unwrap().clone();
            s.sort();
            e.sort();
            assert_eq!(s, [0, 1, 2], "{pool}");
            assert_eq!(e, [0, 1, 2], "{pool}");
        }
    });
}

/// A start handler that panics is reported (here to the panic handler) and its worker starts
/// anyway.
#[test]
fn a_panicking_start_handler_does_not_lose_its_worker() {
    within(60, "a panicking start handler", || {
        let reported = Arc::new(AtomicUsize::new(0));
        let r = Arc::clone(&reported);
        let rt = Runtime::builder()
            .threads(2)
            .start_handler(|i| {
                if i == 1 {
                    panic!("start handler of worker 1");
                }
            })
            .panic_handler(move |_| {
                r.fetch_add(1, Ordering::SeqCst);
            })
            .build()
            .unwrap();
        assert_eq!(rt.broadcast(|ctx| ctx.index()), [0, 1]);
        assert_eq!(reported.load(Ordering::SeqCst), 1);
    });
}

/// A spawn handler starts every worker's thread (with the builder's names), and the runtime
/// runs on them; `shutdown_and_wait` returns once they left.
#[test]
fn a_spawn_handler_starts_the_worker_threads() {
    within(60, "a spawn handler", || {
        let handles = Arc::new(Mutex::new(Vec::new()));
        let h = Arc::clone(&handles);
        let rt = Runtime::builder()
            .threads(3)
            .thread_name(|i| format!("custom-{i}"))
            .spawn_handler(move |worker| {
                assert!(worker.stack_size().is_none());
                let name = worker.name().expect("a name").to_string();
                let handle = std::thread::Builder::new()
                    .name(format!("{name}!"))
                    .spawn(move || worker.run())?;
                h.lock().unwrap().push(handle);
                Ok(())
            })
            .build()
            .unwrap();
        let names = rt.broadcast(|_| std::thread::current().name().unwrap().to_string());
        assert_eq!(names, ["custom-0!", "custom-1!", "custom-2!"]);
        assert_eq!(rt.join(|| 1, || 2), (1, 2));
        rt.shutdown_and_wait().unwrap();
        for h in handles.lock().unwrap().drain(..) {
            h.join().unwrap();
        }
    });
}

/// A spawn handler's error fails the build (`Error::Spawn`); the workers started before it
/// leave.
#[test]
fn a_spawn_handler_error_fails_the_build() {
    let started = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&started);
    let e = Runtime::builder()
        .threads(4)
        .spawn_handler(move |worker| {
            if worker.index() == 2 {
                return Err(std::io::Error::other("no thread for worker 2"));
            }
            let h = std::thread::spawn(move || worker.run());
            s.lock().unwrap().push(h);
            Ok(())
        })
        .build()
        .unwrap_err();
    assert!(matches!(e, Error::Spawn(_)), "{e}");
    assert!(e.to_string().contains("no thread for worker 2"), "{e}");
    // Workers 0 and 1 were started; the failed build signalled them to leave.
    within(20, "the workers of a failed build stayed", move || {
        for h in started.lock().unwrap().drain(..) {
            h.join().unwrap();
        }
    });
}

/// `build_scoped`: the workers run on scoped threads of the call (so they may borrow from the
/// caller's stack), the closure gets the runtime, and the call returns after the threads ended.
#[test]
fn build_scoped_runs_the_workers_on_scoped_threads() {
    within(60, "build_scoped", || {
        let borrowed = [1u64, 2, 3];
        let entered = AtomicUsize::new(0);
        let sum = Runtime::builder()
            .threads(2)
            .build_scoped(
                |worker| {
                    entered.fetch_add(1, Ordering::SeqCst);
                    assert_eq!(borrowed.len(), 3);
                    worker.run();
                },
                |rt| rt.join(|| borrowed.iter().sum::<u64>(), || borrowed[0]),
            )
            .unwrap();
        assert_eq!(sum, (6, 1));
        assert_eq!(entered.load(Ordering::SeqCst), 2);
    });
}

/// `use_current_thread`: the building thread is worker 0 (without the worker loop); another
/// worker runs jobs while it blocks; a second runtime cannot take the same thread; after the
/// runtime is gone the thread still forks on its own.
#[test]
fn use_current_thread_makes_the_building_thread_worker_0() {
    within(30, "use_current_thread", || {
        let rt = Runtime::builder()
            .threads(2)
            .use_current_thread()
            .build()
            .unwrap();
        assert_eq!(taskpools::current_thread_index(), Some(0));
        assert_eq!(rt.current_thread_index(), Some(0));
        let again = Runtime::builder()
            .threads(2)
            .use_current_thread()
            .build()
            .unwrap_err();
        assert!(matches!(again, Error::CurrentThreadInRuntime), "{again}");
        // Worker 1 runs a spawn while this thread blocks.
        let (tx, rx) = mpsc::channel();
        rt.spawn(move || tx.send(taskpools::current_thread_index()).unwrap());
        assert_eq!(rx.recv_timeout(Duration::from_secs(20)), Ok(Some(1)));
        // Joins fork here; worker 1 may steal.
        fn fib(n: u64) -> u64 {
            if n < 2 {
                return n;
            }
            let (a, b) = taskpools::forkjoin::join(|| fib(n - 1), || fib(n - 2));
            a + b
        }
        assert_eq!(fib(20), 6765);
        let seen: BTreeSet<usize> = rt.broadcast(|ctx| ctx.index()).into_iter().collect();
        assert_eq!(seen, BTreeSet::from([0, 1]));
        drop(rt);
        // Dropped on this thread: it is released, and joins go to the global runtime.
        assert_eq!(taskpools::current_thread_index(), None);
        assert_eq!(fib(12), 144);
    });
}

/// `threads(0)`, like leaving `threads` out, means the default: `TASKPOOLS_NUM_THREADS` if it
/// holds a valid count, else one worker per CPU.
#[test]
fn threads_zero_is_the_default() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let expect = std::env::var(taskpools::NUM_THREADS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| (1..=taskpools::MAX_THREADS).contains(n))
        .unwrap_or(cpus);
    let rt = Runtime::builder().threads(0).build().unwrap();
    assert_eq!(rt.threads(), expect);
    assert_eq!(Runtime::builder().build().unwrap().threads(), expect);
}

/// `use_current_thread`, dropped on the thread that built it: the drop runs what is addressed
/// to worker 0 (here a `spawn_broadcast` job) and releases the thread, the other workers leave
/// (`shutdown_and_wait` from that thread returns), and the thread can be a worker again.
#[test]
fn a_use_current_thread_runtime_shut_down_on_its_thread_releases_it() {
    within(30, "shutting down a use_current_thread runtime", || {
        let rt = Runtime::builder()
            .threads(2)
            .use_current_thread()
            .build()
            .unwrap();
        let hits = Arc::new(AtomicUsize::new(0));
        let h = Arc::clone(&hits);
        rt.spawn_broadcast(move |ctx| {
            h.fetch_add(1 + ctx.index() * 10, Ordering::SeqCst);
        });
        rt.shutdown_and_wait().unwrap();
        assert_eq!(
            hits.load(Ordering::SeqCst),
            1 + 11,
            "both workers' jobs ran"
        );
        assert_eq!(taskpools::current_thread_index(), None, "released");
        let again = Runtime::builder()
            .threads(2)
            .use_current_thread()
            .build()
            .unwrap();
        assert_eq!(again.current_thread_index(), Some(0));
        drop(again);
        assert_eq!(taskpools::current_thread_index(), None);
    });
}

/// A failed build does not leave the building thread a worker.
#[test]
fn a_failed_use_current_thread_build_leaves_the_thread_as_it_was() {
    within(30, "a failed use_current_thread build", || {
        let e = Runtime::builder()
            .threads(2)
            .use_current_thread()
            .spawn_handler(|_| Err(std::io::Error::other("no threads today")))
            .build()
            .unwrap_err();
        assert!(matches!(e, Error::Spawn(_)), "{e}");
        assert_eq!(taskpools::current_thread_index(), None);
    });
}
