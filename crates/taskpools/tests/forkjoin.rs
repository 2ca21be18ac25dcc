//! Fork-join: results against sequential code, nesting, panics, where `join` may be called
//! from, and runtime shutdown.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicUsize, Ordering};

use taskpools::forkjoin::{self, Pool, Runtime};

fn rt(pool: Pool, threads: usize) -> Runtime {
    Runtime::builder()
        .threads(threads)
        .pool(pool)
        .build()
        .unwrap()
}

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
fn fib_matches_sequential_on_every_pool_and_globally() {
    for pool in Pool::ALL {
        for t in [1, 2, 4] {
            let rt = rt(pool, t);
            assert_eq!(rt.install(|| fib(22)), fib_seq(22), "{pool}, {t} threads");
        }
    }
    assert_eq!(
        fib(18),
        fib_seq(18),
        "global runtime from a non-worker thread"
    );
}

#[test]
fn fib_32_at_one_thread_does_not_overflow_the_stack() {
    for pool in Pool::ALL {
        assert_eq!(rt(pool, 1).install(|| fib(32)), 2_178_309, "{pool}");
    }
}

#[test]
fn pools_by_name_and_alias_and_clear_errors() {
    assert_eq!(
        Pool::from_name("private-deque").unwrap(),
        Pool::PrivateDeque
    );
    assert_eq!(Pool::from_name("acr13").unwrap(), Pool::PrivateDeque);
    assert_eq!("acr13".parse::<Pool>().unwrap(), Pool::PrivateDeque);
    // The old names are refused with the new name, not silently mapped.
    for old in ["private-public", "dq8"] {
        let e = Pool::from_name(old).unwrap_err();
        assert!(
            matches!(e, taskpools::Error::RenamedPool { .. }),
            "{old}: {e}"
        );
        let e = e.to_string();
        assert!(e.contains(old) && e.contains("private-deque"), "{e}");
    }
    assert_eq!(Pool::from_name("dcwq").unwrap(), Pool::ChaseLev);
    assert_eq!("chase-lev".parse::<Pool>().unwrap(), Pool::ChaseLev);
    for bad in ["sq1", "nope", ""] {
        let e = Runtime::builder().pool_name(bad).unwrap_err().to_string();
        assert!(
            e.contains("private-deque") && e.contains("chase-lev"),
            "{e}"
        );
    }
    let rt = Runtime::builder()
        .threads(2)
        .pool_name("dcwq")
        .unwrap()
        .pin(true)
        .build()
        .unwrap();
    assert_eq!(rt.pool(), Pool::ChaseLev);
    assert_eq!(rt.threads(), 2);
    assert_eq!(rt.install(|| fib(20)), fib_seq(20));
}

/// Many small spawns that each fork: every spawn runs exactly once on both pools, with thieves
/// taking work from owners that are themselves waiting.
#[test]
fn wide_scopes_with_nested_joins_run_every_spawn_once() {
    for pool in Pool::ALL {
        let rt = rt(pool, 3);
        let hits: Vec<AtomicUsize> = (0..2000).map(|_| AtomicUsize::new(0)).collect();
        rt.scope(|s| {
            for h in &hits {
                s.spawn(move |_| {
                    let (a, b) = forkjoin::join(|| fib(8), || fib(7));
                    assert_eq!(a + b, 34);
                    h.fetch_add(1, Ordering::Relaxed);
                });
            }
        });
        assert!(
            hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
            "{pool}: a spawn ran twice or not at all"
        );
    }
}

#[test]
fn nested_scopes_three_deep_borrow_from_their_stacks() {
    for pool in Pool::ALL {
        nested_scopes(pool);
    }
}

fn nested_scopes(pool: Pool) {
    let rt = rt(pool, 2);
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
    for pool in Pool::ALL {
        panics(pool);
    }
}

fn panics(pool: Pool) {
    let rt = rt(pool, 2);
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

/// `join_strict` at every depth of a join tree (the outer joins queue `b`, the deeper ones take
/// the serial elision on the default pool): `b` always runs, and with both panicking the first
/// half's panic wins; on every pool, at 1 and 2 threads. With the plain `join`, the tree
/// depth where `b` was skipped would be seen here as a missing count.
#[test]
fn join_strict_runs_b_when_a_panics_at_every_depth() {
    fn nest(depth: u32, at: u32, b_runs: &AtomicUsize, both: bool) {
        if depth == at {
            forkjoin::join_strict(
                || panic!("a at {at}"),
                || {
                    b_runs.fetch_add(1, Ordering::SeqCst);
                    if both {
                        panic!("b at {at}");
                    }
                },
            );
            return;
        }
        forkjoin::join_strict(|| nest(depth + 1, at, b_runs, both), || ());
    }
    for pool in Pool::ALL {
        for threads in [1, 2] {
            let rt = rt(pool, threads);
            for at in 0..8 {
                for both in [false, true] {
                    let b_runs = AtomicUsize::new(0);
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        rt.install(|| nest(0, at, &b_runs, both))
                    }));
                    let what = format!("{pool:?}, {threads} threads, depth {at}, both {both}");
                    assert_eq!(message(r.unwrap_err()), format!("a at {at}"), "{what}");
                    assert_eq!(b_runs.load(Ordering::SeqCst), 1, "{what}: b ran once");
                }
            }
            // join_context_strict too, and the results when nothing panics.
            let (a, b) = rt.install(|| forkjoin::join_context_strict(|_| fib(10), |_| fib(11)));
            assert_eq!((a, b), (fib_seq(10), fib_seq(11)));
        }
    }
}

/// A second half that panics after the first returned, at every depth of a join tree (the
/// queued halves taken back and run uncaught, the elided ones as plain calls), with plain and
/// strict joins, on every pool at 1 and 2 threads: the panic reaches the caller, every first
/// half ran, and the runtime runs joins correctly afterwards.
#[test]
fn a_panicking_second_half_at_every_depth_leaves_the_runtime_usable() {
    fn nest(depth: u32, at: u32, strict: bool, a_runs: &AtomicUsize) {
        let (a, b) = (
            || {
                a_runs.fetch_add(1, Ordering::SeqCst);
                if depth < at {
                    nest(depth + 1, at, strict, a_runs);
                }
            },
            || {
                if depth == at {
                    panic!("b at {at}");
                }
            },
        );
        if strict {
            forkjoin::join_strict(a, b);
        } else {
            forkjoin::join(a, b);
        }
    }
    for pool in Pool::ALL {
        for threads in [1, 2] {
            let rt = rt(pool, threads);
            for at in 0..8 {
                for strict in [false, true] {
                    let a_runs = AtomicUsize::new(0);
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        rt.install(|| nest(0, at, strict, &a_runs))
                    }));
                    let what = format!("{pool:?}, {threads} threads, depth {at}, strict {strict}");
                    assert_eq!(message(r.unwrap_err()), format!("b at {at}"), "{what}");
                    assert_eq!(a_runs.load(Ordering::SeqCst), at as usize + 1, "{what}");
                    assert_eq!(rt.install(|| fib(16)), fib_seq(16), "{what}: afterwards");
                }
            }
        }
    }
}

#[test]
fn join_from_a_non_worker_a_worker_and_a_worker_of_another_runtime() {
    for (pa, pb) in [
        (Pool::PrivateDeque, Pool::ChaseLev),
        (Pool::ChaseLev, Pool::PrivateDeque),
        (Pool::PrivateDeque, Pool::PrivateDeque),
    ] {
        join_from_everywhere(pa, pb);
    }
}

fn join_from_everywhere(pa: Pool, pb: Pool) {
    let a = rt(pa, 2);
    let b = rt(pb, 2);
    // Non-worker thread.
    assert_eq!(a.join(|| 1, || 2), (1, 2));
    // A worker of `a` (forks onto `a`).
    assert_eq!(
        a.install(|| forkjoin::join(|| fib(10), || fib(11))),
        (55, 89)
    );
    // A worker of `a` calling into `b`.
    assert_eq!(a.install(|| b.join(|| fib(12), || fib(13))), (144, 233));
    // Both workers of `a` busy forking while one of them blocks on `b`: the other keeps
    // stealing from it, so the blocked worker must keep answering (or refusing) requests.
    let r = a.install(|| {
        forkjoin::join(
            || b.install(|| fib(18)),
            || forkjoin::join(|| fib(17), || fib(16)),
        )
    });
    assert_eq!(r, (2584, (1597, 987)));
}

/// `threads(0)` means the default (as rayon's `num_threads(0)`): one worker per CPU, unless
/// `TASKPOOLS_NUM_THREADS` says otherwise (not set in this test binary).
#[test]
fn zero_threads_means_the_default() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(
        Runtime::new(0).unwrap().threads(),
        cpus.min(taskpools::MAX_THREADS)
    );
    let rt = Runtime::builder().threads(0).build().unwrap();
    assert_eq!(rt.threads(), cpus.min(taskpools::MAX_THREADS));
}

/// A random mix of joins and scopes (with joins inside spawns and scopes inside joins), whose
/// result is known sequentially: thieves take jobs from owners that are forking, waiting, or
/// running stolen work, on 4 workers sharing 2 cores.
fn mixed(seed: u64, depth: u32, par: bool) -> u64 {
    let x = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    if depth == 0 {
        return x >> 48;
    }
    match (x >> 33) % 3 {
        0 | 1 => {
            let (a, b) = if par {
                forkjoin::join(
                    || mixed(x ^ 1, depth - 1, par),
                    || mixed(x ^ 2, depth - 1, par),
                )
            } else {
                (mixed(x ^ 1, depth - 1, par), mixed(x ^ 2, depth - 1, par))
            };
            a.wrapping_add(b)
        }
        _ => {
            let k = 1 + (x >> 40) % 4;
            let parts: Vec<AtomicUsize> = (0..k).map(|_| AtomicUsize::new(0)).collect();
            if par {
                forkjoin::scope(|s| {
                    for (i, p) in parts.iter().enumerate() {
                        s.spawn(move |_| {
                            let v = mixed(x ^ (i as u64 + 7), depth - 1, true);
                            p.store(v as usize, Ordering::Relaxed);
                        });
                    }
                });
            } else {
                for (i, p) in parts.iter().enumerate() {
                    let v = mixed(x ^ (i as u64 + 7), depth - 1, false);
                    p.store(v as usize, Ordering::Relaxed);
                }
            }
            parts
                .iter()
                .map(|p| p.load(Ordering::Relaxed) as u64)
                .fold(0, u64::wrapping_add)
        }
    }
}

#[test]
fn random_mixes_of_joins_and_scopes_match_sequential() {
    for pool in Pool::ALL {
        let rt = rt(pool, 4);
        for seed in 0..12 {
            let expected = mixed(seed, 15, false);
            assert_eq!(
                rt.install(|| mixed(seed, 15, true)),
                expected,
                "{pool}, seed {seed}"
            );
        }
    }
}

/// Spawns from inside spawns of the same scope, mixed with joins: a worker that steals such a
/// spawn while it waits inside a join ends up with the new spawns on top of its own queued
/// join half. Every spawn must still run exactly once, and every join must finish.
#[test]
fn spawns_inside_stolen_spawns_run_exactly_once() {
    for pool in Pool::ALL {
        let rt = rt(pool, 4);
        for round in 0..50 {
            let hits: Vec<AtomicUsize> = (0..100 * 8).map(|_| AtomicUsize::new(0)).collect();
            let hits = &hits;
            let r = rt.install(|| {
                forkjoin::join(
                    || {
                        forkjoin::scope(|s| {
                            for i in 0..100 {
                                s.spawn(move |s| {
                                    let (a, b) = forkjoin::join(|| fib(12), || fib(11));
                                    for j in 0..8 {
                                        s.spawn(move |_| {
                                            hits[i * 8 + j].fetch_add(1, Ordering::Relaxed);
                                        });
                                    }
                                    assert_eq!(a + b, 233);
                                });
                            }
                        });
                        fib(15)
                    },
                    || {
                        let (x, y) = forkjoin::join(|| fib(19), || fib(18));
                        x + y
                    },
                )
            });
            assert_eq!(r, (610, 4181 + 2584), "{pool}, round {round}");
            assert!(
                hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
                "{pool}, round {round}: a nested spawn ran twice or not at all"
            );
        }
    }
}

/// Deterministic form of the case above: the first half of a join spawns into an enclosing
/// scope and returns without waiting. On Chase–Lev the spawn sits above the join's second half
/// in the one deque, so the join runs it first; on the private pool spawns have a deque of
/// their own, so the join takes its half back at once and the scope's end runs the spawn.
/// Either way both run once and the scope sees the spawn done.
#[test]
fn a_spawn_left_above_a_join_half_runs_before_it() {
    for pool in Pool::ALL {
        for threads in [1, 2] {
            let rt = rt(pool, threads);
            let order = std::sync::Mutex::new(Vec::new());
            rt.scope(|s| {
                let order = &order;
                let (a, b) = forkjoin::join(
                    || {
                        s.spawn(move |_| order.lock().unwrap().push("spawn"));
                        1
                    },
                    || {
                        order.lock().unwrap().push("b");
                        2
                    },
                );
                assert_eq!((a, b), (1, 2));
            });
            let order = order.into_inner().unwrap();
            assert_eq!(order.len(), 2, "{pool}: {order:?}");
            if threads == 1 {
                let expect = match pool {
                    Pool::ChaseLev => ["spawn", "b"],
                    Pool::PrivateDeque => ["b", "spawn"],
                    // `Pool` is `#[non_exhaustive]`: a new pool needs its order stated here.
                    other => panic!("{other}: state the order this pool gives on one worker"),
                };
                assert_eq!(order, expect, "{pool}: one worker");
            }
        }
    }
}

/// A job that recurses far deeper than the default 2 MiB stack allows runs on workers built
/// with a larger stack.
#[test]
fn stack_size_is_applied_to_workers() {
    #[inline(never)]
    fn deep(n: u64, pad: [u64; 8]) -> u64 {
        if n == 0 {
            return pad.iter().sum();
        }
        let mut p = pad;
        p[(n % 8) as usize] += 1;
        1 + deep(n - 1, std::hint::black_box(p))
    }
    let rt = Runtime::builder()
        .threads(1)
        .stack_size(256 << 20)
        .build()
        .unwrap();
    // About 100 bytes a frame in debug builds and more: well past 2 MiB at this depth.
    let n = 200_000;
    assert_eq!(rt.install(|| deep(n, [0; 8])), n + n);
}

#[test]
fn an_absurd_thread_count_is_an_error_not_a_panic() {
    for pool in Pool::ALL {
        for n in [taskpools::MAX_THREADS + 1, 99_999_999_999, usize::MAX] {
            let Err(e) = Runtime::builder().threads(n).pool(pool).build() else {
                panic!("{pool}: {n} threads accepted");
            };
            assert!(
                matches!(e, taskpools::Error::TooManyThreads { requested, .. } if requested == n),
                "{pool}: {e}"
            );
        }
    }
}

#[test]
fn spawned_jobs_all_run_and_see_their_worker() {
    use std::sync::mpsc::channel;
    use std::time::Duration;
    for pool in Pool::ALL {
        let r = rt(pool, 2);
        let (tx, rx) = channel();
        for i in 0..100 {
            let tx = tx.clone();
            r.spawn(move || {
                let idx = taskpools::forkjoin::current_thread_index();
                tx.send((i, idx, taskpools::forkjoin::current_num_threads()))
                    .unwrap();
            });
        }
        let mut seen = [false; 100];
        for _ in 0..100 {
            let (i, idx, n) = rx
                .recv_timeout(Duration::from_secs(20))
                .expect("a spawned job ran");
            assert!(idx.is_some_and(|x| x < 2) && n == 2, "{pool}: {idx:?} {n}");
            assert!(
                !std::mem::replace(&mut seen[i], true),
                "{pool}: job {i} ran twice"
            );
        }
        // `forkjoin::spawn` inside a worker goes to that worker's runtime.
        let tx2 = tx.clone();
        r.install(move || {
            taskpools::forkjoin::spawn(move || {
                tx2.send((0, taskpools::forkjoin::current_thread_index(), 0))
                    .unwrap()
            })
        });
        let (_, idx, _) = rx.recv_timeout(Duration::from_secs(20)).unwrap();
        assert!(idx.is_some_and(|x| x < 2), "{pool}");
    }
}

#[test]
fn current_thread_index_inside_install_and_outside() {
    assert_eq!(taskpools::forkjoin::current_thread_index(), None);
    for pool in Pool::ALL {
        let r = rt(pool, 3);
        let (i, n) = r.install(|| {
            (
                taskpools::forkjoin::current_thread_index(),
                taskpools::forkjoin::current_num_threads(),
            )
        });
        assert!(i.is_some_and(|i| i < 3) && n == 3, "{pool}: {i:?} {n}");
    }
}

#[test]
fn a_panicking_spawn_does_not_kill_the_worker() {
    use std::sync::mpsc::channel;
    use std::time::Duration;
    for pool in Pool::ALL {
        let r = rt(pool, 1);
        r.spawn(|| panic!("expected test panic in a spawned job"));
        let (tx, rx) = channel();
        r.spawn(move || tx.send(42).unwrap());
        assert_eq!(rx.recv_timeout(Duration::from_secs(20)), Ok(42), "{pool}");
        assert_eq!(r.install(|| 7), 7);
    }
}

#[test]
fn shutting_the_runtime_down_runs_queued_spawns() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    for pool in Pool::ALL {
        let done = Arc::new(AtomicUsize::new(0));
        let r = rt(pool, 1);
        // The first job keeps the only worker busy while the rest queue up behind it, and
        // spawns one more job while the runtime is being dropped.
        let d = Arc::clone(&done);
        r.spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            let d2 = Arc::clone(&d);
            taskpools::forkjoin::spawn(move || {
                d2.fetch_add(1, Ordering::SeqCst);
            });
            d.fetch_add(1, Ordering::SeqCst);
        });
        for _ in 0..50 {
            let d = Arc::clone(&done);
            r.spawn(move || {
                d.fetch_add(1, Ordering::SeqCst);
            });
        }
        r.shutdown_and_wait().unwrap();
        assert_eq!(done.load(Ordering::SeqCst), 52, "{pool}");
        // Every closure (and so every clone of the Arc) was run and dropped: no leak.
        assert_eq!(Arc::strong_count(&done), 1, "{pool}");
    }
}

/// `scope_fifo` runs a worker's own spawns in spawn order, `scope` newest first; both run
/// every spawn once, also with a second worker stealing, and nested joins inside still work.
#[test]
fn scope_fifo_runs_own_spawns_oldest_first() {
    for pool in Pool::ALL {
        let one = rt(pool, 1);
        for fifo in [true, false] {
            let order = std::sync::Mutex::new(Vec::new());
            macro_rules! body {
                () => {
                    |s| {
                        for i in 0..16 {
                            let order = &order;
                            s.spawn(move |_| order.lock().unwrap().push(i));
                        }
                    }
                };
            }
            if fifo {
                one.scope_fifo(body!());
            } else {
                one.scope(body!());
            }
            let order = order.into_inner().unwrap();
            let expect: Vec<i32> = if fifo {
                (0..16).collect()
            } else {
                (0..16).rev().collect()
            };
            assert_eq!(order, expect, "{pool}, fifo {fifo}");
        }
        let two = rt(pool, 2);
        let hits: Vec<AtomicUsize> = (0..256).map(|_| AtomicUsize::new(0)).collect();
        two.scope_fifo(|s| {
            for h in &hits {
                s.spawn(move |_| {
                    let (a, b) = forkjoin::join(|| fib(10), || fib(9));
                    assert_eq!(a + b, 89);
                    h.fetch_add(1, Ordering::Relaxed);
                });
            }
        });
        assert!(
            hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
            "{pool}"
        );
    }
}

/// A `scope_fifo` inside each of many spawns of an outer scope: its wait runs only its own
/// jobs (through tickets), not the outer scope's, so the stack stays flat. (A first version
/// took the oldest job on the worker's deque, an outer spawn, nesting one wait per spawn until
/// the stack overflowed.) An outer join's second half is not run inside it either.
#[test]
fn nested_scope_fifo_does_not_run_outer_work() {
    for pool in Pool::ALL {
        for threads in [1, 2] {
            let rt = rt(pool, threads);
            let ran = AtomicUsize::new(0);
            rt.scope(|s| {
                for _ in 0..20_000 {
                    let ran = &ran;
                    s.spawn(move |_| {
                        forkjoin::scope_fifo(|s2| {
                            s2.spawn(move |_| {
                                ran.fetch_add(1, Ordering::Relaxed);
                            })
                        })
                    });
                }
            });
            assert_eq!(ran.load(Ordering::Relaxed), 20_000, "{pool}");
        }
        let one = rt(pool, 1);
        let order = std::sync::Mutex::new(Vec::new());
        one.install(|| {
            forkjoin::join(
                || {
                    forkjoin::scope_fifo(|s| s.spawn(|_| order.lock().unwrap().push("spawn")));
                    order.lock().unwrap().push("a end");
                },
                || order.lock().unwrap().push("b"),
            )
        });
        assert_eq!(
            order.into_inner().unwrap(),
            ["spawn", "a end", "b"],
            "{pool}"
        );
    }
}
