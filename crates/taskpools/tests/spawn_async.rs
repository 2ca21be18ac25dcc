//! `spawn_async`: a job on the runtime's workers that async code awaits. It never runs inside
//! `poll`, the first poll of an unfinished job is `Pending`, the awaiting task is woken when it
//! is done, its panic is resumed where it is awaited, and dropping the future does not cancel
//! it. Under a minimal executor (a `Waker` that unparks) and under tokio.
#![cfg(not(loom))]

#[path = "common/watchdog.rs"]
mod watchdog;

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use taskpools::Runtime;
use watchdog::within;

/// Counts its wake-ups and unparks the thread that polls.
struct Unpark {
    thread: std::thread::Thread,
    wakes: AtomicUsize,
}

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        self.thread.unpark();
    }
}

/// Polls `f` until it is ready, parking between polls (only a wake-up unparks it: a lost
/// wake-up hangs, which the tests' watchdog reports); returns the output and the number of
/// polls.
fn block_on<F: Future>(f: F) -> (F::Output, usize) {
    let waker_state = Arc::new(Unpark {
        thread: std::thread::current(),
        wakes: AtomicUsize::new(0),
    });
    let waker = Waker::from(Arc::clone(&waker_state));
    let mut f = pin!(f);
    let mut polls = 0;
    loop {
        polls += 1;
        if let Poll::Ready(v) = f.as_mut().poll(&mut Context::from_waker(&waker)) {
            return (v, polls);
        }
        // `park` may return spuriously; the loop polls again then.
        std::thread::park();
    }
}

#[test]
fn the_first_poll_is_pending_and_the_job_runs_on_a_worker() {
    within(30, "spawn_async under a minimal executor", || {
        let rt = Runtime::new(2).unwrap();
        let caller = std::thread::current().id();
        let gate = Arc::new(Barrier::new(2));
        let g = Arc::clone(&gate);
        let fut = rt.spawn_async(move || {
            g.wait(); // not before the first poll has returned
            (
                std::thread::current().id(),
                taskpools::current_thread_index(),
            )
        });
        let mut fut = pin!(fut);
        let waker = Waker::from(Arc::new(Unpark {
            thread: std::thread::current(),
            wakes: AtomicUsize::new(0),
        }));
        assert!(fut
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        gate.wait();
        let ((thread, index), polls) = block_on(fut);
        assert_ne!(thread, caller, "the job ran inside poll");
        assert!(matches!(index, Some(0 | 1)));
        assert!(polls >= 1);
        // A job that takes a while: the first poll is `Pending`, the job's end wakes the
        // poller, and the second poll is `Ready` (spurious unparks aside, at most a few).
        let (v, polls) = block_on(rt.spawn_async(|| {
            std::thread::sleep(Duration::from_millis(20));
            7
        }));
        assert_eq!(v, 7);
        assert!((2..=4).contains(&polls), "{polls} polls");
    });
}

#[test]
fn awaiting_resumes_the_jobs_panic() {
    within(30, "awaiting a panicking job", || {
        let rt = Runtime::new(1).unwrap();
        let fut = rt.spawn_async(|| -> u32 { panic!("inside the job") });
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| block_on(fut)));
        let p = r.unwrap_err();
        assert_eq!(p.downcast_ref::<&str>(), Some(&"inside the job"));
        // The runtime goes on.
        let (v, _) = block_on(rt.spawn_async(|| 41 + 1));
        assert_eq!(v, 42);
    });
}

#[test]
fn dropping_the_future_does_not_cancel_the_job() {
    within(30, "a job whose future was dropped", || {
        let rt = Runtime::new(2).unwrap();
        let (tx, rx) = mpsc::channel();
        let gate = Arc::new(Barrier::new(2));
        let g = Arc::clone(&gate);
        let fut = rt.spawn_async(move || {
            g.wait();
            tx.send(7).unwrap();
            "dropped with the job"
        });
        drop(fut);
        gate.wait();
        assert_eq!(rx.recv_timeout(Duration::from_secs(20)), Ok(7));
        // A dropped future's panic goes nowhere, also one whose payload panics when dropped:
        // once dropped with the future after the job ended (the future's side), once by the
        // job after the future was dropped (the job's side).
        struct Bomb;
        impl Drop for Bomb {
            fn drop(&mut self) {
                if !std::thread::panicking() {
                    panic!("payload drop panics");
                }
            }
        }
        let one = Runtime::new(1).unwrap();
        let fut = one.spawn_async(|| std::panic::panic_any(Bomb));
        // Injected jobs run in order on the one worker: once this one is done, so is `fut`'s.
        block_on(one.spawn_async(|| ()));
        drop(fut);
        drop(one.spawn_async(|| std::panic::panic_any(Bomb)));
        one.shutdown_and_wait().unwrap();
        rt.shutdown_and_wait().unwrap();
    });
}

#[test]
fn the_global_runtime_and_many_futures_at_once() {
    within(30, "many futures", || {
        let futures: Vec<_> = (0..64u64)
            .map(|i| taskpools::spawn_async(move || i * i))
            .collect();
        let (sum, _) = block_on(async {
            let mut sum = 0;
            for f in futures {
                sum += f.await;
            }
            sum
        });
        assert_eq!(sum, (0..64u64).map(|i| i * i).sum::<u64>());
    });
}

#[test]
fn under_tokio() {
    within(30, "spawn_async under tokio", || {
        let tokio_rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let rt = Arc::new(Runtime::new(2).unwrap());
        let r2 = Arc::clone(&rt);
        let (a, b, ticked_meanwhile) = tokio_rt.block_on(async move {
            // The executor's one thread stays free while the jobs run: a timer task ticks five
            // times (10 ms) while job `a` sleeps 200 ms. Had `a` run inside `poll`, the ticker
            // could not have finished before `a` did.
            let ticker = tokio::spawn(async {
                for _ in 0..5 {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
            });
            let a = r2.spawn_async(|| {
                std::thread::sleep(Duration::from_millis(200));
                (1..=100u64).sum::<u64>()
            });
            let b = r2.spawn_async(|| taskpools::forkjoin::join(|| 2, || 3));
            let (a, b) = tokio::join!(a, b);
            let ticked = ticker.is_finished();
            ticker.await.unwrap();
            (a, b, ticked)
        });
        assert_eq!((a, b), (5050, (2, 3)));
        assert!(
            ticked_meanwhile,
            "the executor was blocked while the job ran"
        );
        let multi = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let total: u64 = multi.block_on(async move {
            let mut handles = Vec::new();
            for i in 0..16u64 {
                let rt = Arc::clone(&rt);
                handles.push(tokio::spawn(
                    async move { rt.spawn_async(move || i * 2).await },
                ));
            }
            let mut t = 0;
            for h in handles {
                t += h.await.unwrap();
            }
            t
        });
        assert_eq!(total, (0..16u64).map(|i| i * 2).sum::<u64>());
    });
}
