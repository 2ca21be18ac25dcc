//! Stopping scopes early, on both front ends: `cancel()`, `try_spawn` errors and `try_scope`.
//! Every spawned task either runs or is counted as skipped (its closure dropped), none runs
//! after a cancel that happens before its start, and the scope reports what stopped it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use taskpools::dataflow::{self, Config};
use taskpools::{forkjoin, Cause, Runtime};

#[path = "common/watchdog.rs"]
mod watchdog;

/// Counts the drops of the values it is cloned into: a skipped closure is dropped, not lost.
#[derive(Clone)]
struct Token(Arc<AtomicUsize>);

impl Drop for Token {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

fn rt(threads: usize) -> Runtime {
    Runtime::new(threads).expect("a runtime")
}

/// Fails the test if `f` hangs (a lost task or wake-up) for a minute.
fn within<R: Send + 'static>(what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    watchdog::within(60, what, f)
}

#[test]
fn forkjoin_a_cancel_before_the_wait_skips_every_spawn_on_one_thread() {
    let rt = rt(1);
    let (ran, drops) = (AtomicUsize::new(0), Arc::new(AtomicUsize::new(0)));
    let e = rt
        .try_scope(|s| {
            for _ in 0..50 {
                let (ran, t) = (&ran, Token(Arc::clone(&drops)));
                s.spawn(move |_| {
                    let _t = t;
                    ran.fetch_add(1, Ordering::Relaxed);
                });
            }
            // One worker, busy here: none of the spawns has started.
            s.cancel();
            assert!(s.is_cancelled());
        })
        .unwrap_err();
    assert!(e.is_cancelled(), "{e}");
    assert_eq!((ran.into_inner(), e.skipped), (0, 50));
    assert_eq!(
        drops.load(Ordering::Relaxed),
        50,
        "every skipped closure is dropped"
    );
    assert_eq!(
        e.to_string(),
        "the scope was cancelled (50 tasks did not run)"
    );
}

#[test]
fn forkjoin_plain_scope_returns_its_value_when_cancelled() {
    let rt = rt(2);
    let v = rt.scope(|s| {
        s.spawn(|s| s.cancel());
        7
    });
    assert_eq!(v, 7);
    // The runtime goes on: a later scope is not cancelled.
    assert_eq!(rt.try_scope(|s| s.spawn(|_| ())).ok(), Some(()));
}

#[test]
fn forkjoin_spawns_made_after_a_cancel_never_run() {
    within("spawns after a cancel", forkjoin_spawns_after_a_cancel);
}

fn forkjoin_spawns_after_a_cancel() {
    for threads in [1, 2] {
        let rt = rt(threads);
        for _ in 0..200 {
            let ran = AtomicUsize::new(0);
            let e = rt
                .try_scope(|s| {
                    let ran = &ran;
                    s.spawn(move |s| {
                        s.cancel();
                        // Spawned after the cancel, on this thread: whoever takes them sees it.
                        for _ in 0..8 {
                            s.spawn(move |_| {
                                ran.fetch_add(1, Ordering::Relaxed);
                            });
                        }
                    });
                })
                .unwrap_err();
            assert_eq!((ran.into_inner(), e.skipped), (0, 8), "{threads} threads");
        }
    }
}

#[test]
fn forkjoin_the_first_error_stops_the_rest() {
    // One worker runs the spawns after the closure returns, one at a time: the first fails
    // and the rest are skipped.
    let rt1 = rt(1);
    let ran = AtomicUsize::new(0);
    let e = rt1
        .try_scope(|s| {
            for i in 0..20 {
                let ran = &ran;
                s.try_spawn(move |_| {
                    ran.fetch_add(1, Ordering::Relaxed);
                    Err(format!("job {i}"))
                });
            }
        })
        .unwrap_err();
    assert_eq!((ran.into_inner(), e.skipped), (1, 19));
    assert!(e.error().unwrap().to_string().starts_with("job "), "{e}");
    assert!(matches!(e.cause, Cause::Error(_)));
    // Two workers: every spawn either ran or was skipped, and exactly one error is kept.
    let rt2 = rt(2);
    for _ in 0..200 {
        let ran = AtomicUsize::new(0);
        let drops = Arc::new(AtomicUsize::new(0));
        let e = rt2
            .try_scope(|s| {
                for i in 0..64 {
                    let (ran, t) = (&ran, Token(Arc::clone(&drops)));
                    s.try_spawn(move |_| {
                        let _t = t;
                        ran.fetch_add(1, Ordering::Relaxed);
                        if i % 16 == 5 {
                            Err("bad")
                        } else {
                            Ok(())
                        }
                    });
                }
            })
            .unwrap_err();
        assert_eq!(ran.into_inner() + e.skipped, 64);
        assert_eq!(drops.load(Ordering::Relaxed), 64);
        assert_eq!(e.error().unwrap().to_string(), "bad");
    }
}

#[test]
fn forkjoin_plain_scope_panics_with_the_error() {
    let rt = rt(2);
    let p = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.scope(|s| s.try_spawn(|_| "x".parse::<u8>().map(|_| ())))
    }))
    .unwrap_err();
    let msg = p.downcast_ref::<String>().expect("a message");
    assert!(
        msg.contains("a task of the scope failed: invalid digit found in string"),
        "{msg}"
    );
}

#[test]
fn forkjoin_a_panic_wins_over_an_error_and_cancels_nothing() {
    let rt = rt(1);
    let ran = AtomicUsize::new(0);
    let e = rt
        .try_scope(|s| {
            for _ in 0..10 {
                let ran = &ran;
                s.spawn(move |_| {
                    ran.fetch_add(1, Ordering::Relaxed);
                });
            }
            s.spawn(|_| panic!("boom"));
        })
        .unwrap_err();
    // rayon's rule: a panic does not stop the scope's other spawns.
    assert_eq!((ran.into_inner(), e.skipped), (10, 0));
    assert_eq!(e.to_string(), "a task panicked: boom");
    let e = rt
        .try_scope(|s| {
            s.try_spawn(|_| Err("an error"));
            panic!("the closure");
        })
        .unwrap_err();
    assert_eq!(e.to_string(), "a task panicked: the closure");
}

#[test]
fn forkjoin_try_scope_off_the_runtime_and_a_scope_inside_a_job_is_its_own() {
    // Off any runtime: the global one. A job's own scope is not cancelled by the outer one.
    let inner_ran = AtomicUsize::new(0);
    let e = forkjoin::try_scope(|s| {
        s.cancel();
        forkjoin::scope(|t| {
            t.spawn(|_| {
                inner_ran.fetch_add(1, Ordering::Relaxed);
            });
        });
        s.spawn(|_| unreachable!("cancelled"));
    })
    .unwrap_err();
    assert_eq!((inner_ran.into_inner(), e.skipped), (1, 1));
}

#[test]
fn dataflow_a_chain_stops_where_a_task_cancels() {
    let rt = rt(2);
    within("a cancelled chain", move || {
        for stop_at in [0, 1, 10, 99] {
            let drops = Arc::new(AtomicUsize::new(0));
            let mut x = [0u64];
            let e = rt
                .install(|| {
                    dataflow::try_scope(Config::default(), |df| {
                        let r = df.region(&mut x);
                        for i in 0..100u64 {
                            let t = Token(Arc::clone(&drops));
                            df.spawn(r.at(0).inout(), move |df, x| {
                                let _t = t;
                                assert_eq!(*x, i, "ran in order, none skipped before");
                                *x += 1;
                                if i == stop_at {
                                    df.cancel();
                                }
                            });
                        }
                    })
                })
                .unwrap_err();
            assert!(e.is_cancelled());
            assert_eq!(x[0], stop_at + 1);
            assert_eq!(e.skipped as u64, 99 - stop_at);
            assert_eq!(drops.load(Ordering::Relaxed), 100);
        }
    });
}

#[test]
fn dataflow_an_error_stops_independent_tasks_and_what_depends_on_them() {
    let rt1 = rt(1);
    let mut v = [0u32; 20];
    let mut total = [0u32];
    let e = rt1
        .install(|| {
            dataflow::try_scope(Config::default(), |df| {
                let (r, t) = (df.region(&mut v), df.region(&mut total));
                for i in 0..20 {
                    df.try_spawn(r.at(i).out(), move |_, x| {
                        *x = 1;
                        Err(format!("task {i}"))
                    });
                }
                df.spawn((r.read(), t.at(0).out()), |_, (v, t)| *t = v.iter().sum());
            })
        })
        .unwrap_err();
    // One worker: the first task that runs fails; the other 19 and the sum never start.
    assert_eq!(v.iter().sum::<u32>(), 1);
    assert_eq!((total[0], e.skipped), (0, 20));
    // Two workers: every task ran or was counted.
    let rt2 = rt(2);
    for _ in 0..100 {
        let mut v = [0u32; 64];
        let e = rt2
            .install(|| {
                dataflow::try_scope(Config::default(), |df| {
                    let r = df.region(&mut v);
                    for i in 0..64 {
                        df.try_spawn(r.at(i).out(), move |_, x| {
                            *x = 1;
                            if i == 20 {
                                Err("bad")
                            } else {
                                Ok(())
                            }
                        });
                    }
                })
            })
            .unwrap_err();
        assert_eq!(v.iter().sum::<u32>() as usize + e.skipped, 64);
        assert_eq!(e.error().unwrap().to_string(), "bad");
    }
}

#[test]
fn dataflow_a_nested_task_cancels_the_whole_scope() {
    let rt = rt(2);
    within("a nested cancel", move || {
        let mut v = [0u32; 8];
        let mut later = [0u32];
        let e = rt
            .install(|| {
                dataflow::try_scope(Config::default(), |df| {
                    let (r, l) = (df.region(&mut v), df.region(&mut later));
                    df.spawn(r.inout(), |df, v| {
                        let v = df.region(v);
                        df.spawn(v.at(0).out(), |df, x| {
                            *x = 1;
                            df.cancel();
                        });
                        // After the child that cancels: skipped.
                        df.spawn(v.at(0).inout(), |_, x| *x = 2);
                    });
                    // After the parent: skipped too (the cancel covers the whole scope).
                    df.spawn((r.read(), l.at(0).out()), |_, (_, l)| *l = 1);
                })
            })
            .unwrap_err();
        assert_eq!((v[0], later[0], e.skipped), (1, 0, 2));
    });
}

#[test]
fn dataflow_skipped_commutative_tasks_release_nothing_they_did_not_take() {
    let rt = rt(2);
    within("commutative tasks after a cancel", move || {
        for _ in 0..100 {
            let mut c = [0u32];
            let mut after = [0u32];
            let e = rt
                .install(|| {
                    dataflow::try_scope(Config::default(), |df| {
                        let (r, a) = (df.region(&mut c), df.region(&mut after));
                        for i in 0..16 {
                            df.spawn(r.commutative(), move |df, c| {
                                c[0] += 1;
                                if i == 3 {
                                    df.cancel();
                                }
                            });
                        }
                        df.spawn((r.read(), a.out()), |_, (c, a)| a[0] = c[0]);
                    })
                })
                .unwrap_err();
            assert!(c[0] >= 1 && c[0] as usize + e.skipped == 17, "{c:?} {e}");
            assert_eq!(after[0], 0);
        }
    });
}

#[test]
fn dataflow_wait_for_hands_over_the_data_after_a_cancel() {
    let rt = rt(2);
    within("wait_for after a cancel", move || {
        let mut x = [0u32];
        let (seen, v) = rt.install(|| {
            let mut seen = 0;
            let v = dataflow::scope(|df| {
                let r = df.region(&mut x);
                df.spawn(r.at(0).out(), |df, x| {
                    *x = 5;
                    df.cancel();
                });
                df.spawn(r.at(0).inout(), |_, x| *x = 6);
                // Waits for both (the second skipped), then reads what stands.
                seen = df.wait_for(r.at(0).read(), |x| *x);
                "value"
            });
            (seen, v)
        });
        assert_eq!((seen, v, x[0]), (5, "value", 5));
        // The same with `try_scope`: one task skipped; the wait is the spawner's and counts
        // as none.
        let e = rt
            .install(|| {
                dataflow::try_scope(Config::default(), |df| {
                    let r = df.region(&mut x);
                    df.spawn(r.at(0).out(), |df, x| {
                        *x = 7;
                        df.cancel();
                    });
                    df.spawn(r.at(0).inout(), |_, x| *x = 8);
                    df.wait_for(r.at(0).read(), |x| *x)
                })
            })
            .unwrap_err();
        assert_eq!((e.is_cancelled(), e.skipped, x[0]), (true, 1, 7));
    });
}

#[test]
fn dataflow_plain_scope_panics_with_the_error_and_a_panic_wins() {
    let rt = rt(2);
    let p = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.install(|| {
            dataflow::scope(|df| {
                df.try_spawn((), |_, ()| Err("no input"));
            })
        })
    }))
    .unwrap_err();
    let msg = p.downcast_ref::<String>().expect("a message");
    assert!(
        msg.contains("a task of the scope failed: no input"),
        "{msg}"
    );
    let e = rt
        .install(|| {
            dataflow::try_scope(Config::default(), |df| {
                df.try_spawn((), |_, ()| Err("an error"));
                df.sync();
                df.spawn((), |_, ()| panic!("a panic"));
            })
        })
        .unwrap_err();
    // The panicking task was spawned after the error stopped the scope: skipped. The error
    // is what stopped it.
    assert_eq!(
        (e.to_string().as_str(), e.skipped),
        ("a task failed: an error (1 task did not run)", 1)
    );
}

#[test]
fn a_scope_error_goes_into_a_send_sync_error_with_its_panic() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<taskpools::ScopeError>();
    assert_send_sync::<taskpools::TaskPanic>();
    // What `anyhow` needs, checked with std's own boxed error: `?` converts it.
    fn run(rt: &taskpools::Runtime) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let n = std::hint::black_box(3);
        rt.try_scope(|s| s.spawn(move |_| panic!("task {n}")))?;
        Ok(())
    }
    let e = run(&rt(2)).unwrap_err();
    assert_eq!(e.to_string(), "a task panicked: task 3");
    let e = e.downcast::<taskpools::ScopeError>().expect("a ScopeError");
    // Shared between threads: the message is read from both.
    std::thread::scope(|t| {
        for _ in 0..2 {
            t.spawn(|| assert_eq!(e.panic().and_then(|p| p.message()), Some("task 3")));
        }
    });
    let payload = e.into_panic().expect("a panic").into_payload();
    assert_eq!(payload.downcast_ref::<String>().unwrap(), "task 3");
    // A payload that is not a string has no message, and says so.
    let e = rt(1)
        .try_scope(|s| s.spawn(|_| std::panic::panic_any(7u32)))
        .unwrap_err();
    assert_eq!(e.panic().expect("a panic").message(), None, "{e:?}");
    assert_eq!(
        e.to_string(),
        "a task panicked: a panic with a payload that is not a string"
    );
    let mut p = e.into_panic().unwrap();
    assert_eq!(p.payload_mut().downcast_mut::<u32>(), Some(&mut 7));
    assert_eq!(*p.into_payload().downcast::<u32>().unwrap(), 7);
    // Made by hand, as a test of code that handles a ScopeError might.
    let p = taskpools::TaskPanic::new(Box::new("by hand"));
    assert_eq!(
        (p.message(), format!("{p:?}")),
        (Some("by hand"), "\"by hand\"".into())
    );
}
