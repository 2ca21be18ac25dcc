//! Fork-join: results against sequential code, nesting, panics, where `join` may be called
//! from, and runtime shutdown.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicUsize, Ordering};

use taskpools::forkjoin::{self, Runtime};

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = forkjoin::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

fn fib_seq(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

#[test]
fn fib_matches_sequential_on_1_and_2_threads_and_globally() {
    for t in [1, 2, 4] {
        let rt = Runtime::new(t).unwrap();
        assert_eq!(rt.install(|| fib(22)), fib_seq(22), "{t} threads");
    }
    assert_eq!(
        fib(18),
        fib_seq(18),
        "global runtime from a non-worker thread"
    );
}

#[test]
fn fib_32_at_one_thread_does_not_overflow_the_stack() {
    let rt = Runtime::new(1).unwrap();
    assert_eq!(rt.install(|| fib(32)), 2_178_309);
}

#[test]
fn nested_scopes_three_deep_borrow_from_their_stacks() {
    let rt = Runtime::new(2).unwrap();
    let total = AtomicUsize::new(0);
    let mut outer = vec![0usize; 4];
    rt.scope(|s1| {
        for (i, slot) in outer.iter_mut().enumerate() {
            let total = &total;
            s1.spawn(move |_| {
                let mut mid = [0usize; 3];
                forkjoin::scope(|s2| {
                    for (j, m) in mid.iter_mut().enumerate() {
                        s2.spawn(move |_| {
                            let inner = AtomicUsize::new(0);
                            forkjoin::scope(|s3| {
                                for k in 0..5 {
                                    let inner = &inner;
                                    s3.spawn(move |_| {
                                        inner.fetch_add(k, Ordering::Relaxed);
                                    });
                                }
                            });
                            *m = j + inner.load(Ordering::Relaxed);
                        });
                    }
                });
                *slot = i + mid.iter().sum::<usize>();
                total.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    // mid = [0+10, 1+10, 2+10] → 33; slot i = i + 33
    assert_eq!(outer, vec![33, 34, 35, 36]);
    assert_eq!(total.load(Ordering::Relaxed), 4);
}

fn message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

#[test]
fn panics_in_either_half_or_a_spawn_reach_the_caller_after_the_siblings_finish() {
    let rt = Runtime::new(2).unwrap();
    let finished = AtomicUsize::new(0);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.join(
            || panic!("first half"),
            || {
                std::thread::sleep(std::time::Duration::from_millis(20));
                finished.fetch_add(1, Ordering::SeqCst);
            },
        )
    }));
    assert_eq!(message(r.unwrap_err()), "first half");
    assert_eq!(
        finished.load(Ordering::SeqCst),
        1,
        "the other half finished first"
    );

    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.join(
            || finished.fetch_add(1, Ordering::SeqCst),
            || panic!("second half"),
        )
    }));
    assert_eq!(message(r.unwrap_err()), "second half");
    assert_eq!(finished.load(Ordering::SeqCst), 2);

    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.scope(|s| {
            s.spawn(|_| panic!("in a spawn"));
            for _ in 0..8 {
                s.spawn(|_| {
                    finished.fetch_add(1, Ordering::SeqCst);
                });
            }
        })
    }));
    assert_eq!(message(r.unwrap_err()), "in a spawn");
    assert_eq!(
        finished.load(Ordering::SeqCst),
        10,
        "every sibling spawn ran"
    );

    // The runtime is usable afterwards.
    assert_eq!(rt.install(|| fib(15)), fib_seq(15));
}

#[test]
fn join_from_a_non_worker_a_worker_and_a_worker_of_another_runtime() {
    let a = Runtime::new(2).unwrap();
    let b = Runtime::new(2).unwrap();
    // Non-worker thread.
    assert_eq!(a.join(|| 1, || 2), (1, 2));
    // A worker of `a` (forks onto `a`).
    assert_eq!(
        a.install(|| forkjoin::join(|| fib(10), || fib(11))),
        (55, 89)
    );
    // A worker of `a` calling into `b`.
    assert_eq!(a.install(|| b.join(|| fib(12), || fib(13))), (144, 233));
}

#[test]
fn zero_threads_is_an_error() {
    assert!(Runtime::new(0).is_err());
}
