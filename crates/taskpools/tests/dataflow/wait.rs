//! Waiting on data (`wait_for`, OpenMP's `taskwait depend`): it waits for the conflicting
//! tasks only, hands the data to the spawner, orders later tasks after it, works inside a task
//! on its children's results, and reports a failed predecessor.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use taskpools::dataflow::{self, Config};
use taskpools::Runtime;

use crate::{message, within};

#[test]
fn a_wait_does_not_wait_for_unrelated_tasks() {
    // One worker: the wait helps by running its own newest job first, which is the writer it
    // waits for; the unrelated task, older, is still queued when the data is handed over (a
    // wait that waited for everything, as `sync` does, would have run it).
    let rt = Runtime::new(1).unwrap();
    let unrelated_ran = AtomicBool::new(false);
    let (mut x, mut y) = (vec![0u32; 4], vec![0u32; 4]);
    let seen = rt.install(|| {
        dataflow::scope(|df| {
            let (rx, ry) = (df.region(&mut x), df.region(&mut y));
            df.spawn(ry.inout(), |_, _| {
                unrelated_ran.store(true, Ordering::SeqCst)
            });
            df.spawn(rx.at(2).out(), |_, v| *v = 5);
            df.wait_for(rx.at(2).read(), |v| {
                (*v, unrelated_ran.load(Ordering::SeqCst))
            })
        })
    });
    assert_eq!(seen, (5, false));
    assert!(unrelated_ran.into_inner());
}

#[test]
fn waits_interleaved_with_spawns_match_the_sequential_program() {
    let rt = Runtime::new(2).unwrap();
    for config in [Config::default(), Config::thesis()] {
        let mut rng = fastrand::Rng::with_seed(5);
        let mut v = vec![0u64; 16];
        let mut want = vec![0u64; 16];
        let mut seen = Vec::new();
        let mut want_seen = Vec::new();
        let ops: Vec<(u8, usize)> = (0..300).map(|_| (rng.u8(..3), rng.usize(..16))).collect();
        for &(op, i) in &ops {
            match op {
                0 => want[i] = want[i] * 3 + 1,
                1 => want_seen.push(want[i]),
                _ => want[i] = 1000 + i as u64,
            }
        }
        rt.install(|| {
            dataflow::scope_with(config, |df| {
                let r = df.region(&mut v);
                for &(op, i) in &ops {
                    match op {
                        0 => df.spawn(r.at(i).inout(), |_, x| *x = *x * 3 + 1),
                        1 => seen.push(df.wait_for(r.at(i).read(), |x| *x)),
                        _ => df.wait_for(r.at(i).out(), |x| *x = 1000 + i as u64),
                    }
                }
            })
        });
        assert_eq!(v, want, "{config:?}");
        assert_eq!(seen, want_seen, "{config:?}");
    }
}

#[test]
fn a_task_waits_for_one_childs_result_without_a_sync() {
    let rt = Runtime::new(2).unwrap();
    let mut v = vec![0u64; 8];
    rt.install(|| {
        dataflow::scope(|df| {
            df.spawn(df.region(&mut v).inout(), |df, v| {
                let r = df.region(v);
                df.spawn(r.part(0..4).out(), |_, a| a.fill(3));
                df.spawn(r.part(4..8).out(), |_, b| b.fill(1));
                // Only the first child's part.
                let s = df.wait_for(r.part(0..4).read(), |a| a.iter().sum::<u64>());
                df.spawn(r.part(4..8).inout(), move |_, b| {
                    b.iter_mut().for_each(|x| *x += s)
                });
            });
        })
    });
    assert_eq!(v, [3, 3, 3, 3, 13, 13, 13, 13]);
}

#[test]
fn a_wait_on_a_failed_task_resumes_its_panic() {
    let rt = Runtime::new(2).unwrap();
    let mut v = vec![0u32; 2];
    let ran = AtomicBool::new(false);
    let r = rt.install(|| {
        catch_unwind(AssertUnwindSafe(|| {
            dataflow::scope(|df| {
                let r = df.region(&mut v);
                df.spawn(r.at(0).out(), |_, _| panic!("planted"));
                df.wait_for(r.at(0).read(), |_| ran.store(true, Ordering::SeqCst));
            })
        }))
    });
    let p = r.expect_err("the panic reaches the caller");
    assert_eq!(p.downcast_ref::<&str>(), Some(&"planted"));
    assert!(!ran.into_inner());
}

#[test]
fn a_commutative_wait_is_refused() {
    let rt = Runtime::new(1).unwrap();
    let mut v = vec![0u32; 2];
    let r = rt.install(|| {
        catch_unwind(AssertUnwindSafe(|| {
            dataflow::scope(|df| {
                let r = df.region(&mut v);
                df.wait_for(r.commutative(), |_| ());
            })
        }))
    });
    let p = r.expect_err("refused");
    let msg = p.downcast_ref::<&str>().copied().unwrap_or_default();
    assert!(msg.contains("not commutative"), "{msg}");
}

#[test]
fn a_panic_in_the_wait_closure_reaches_the_caller_and_cancels_its_successors() {
    within("a panicking wait_for closure", || {
        let rt = Runtime::new(2).unwrap();
        let mut v = vec![0u32; 2];
        let after = AtomicBool::new(false);
        let unrelated = AtomicBool::new(false);
        let r = rt.install(|| {
            dataflow::try_scope(Config::default(), |df| {
                let r = df.region(&mut v);
                df.spawn(r.at(0).out(), |_, x| *x = 1);
                df.wait_for(r.at(0).inout(), |x| {
                    *x += 1;
                    // Spawned inside the closure: it conflicts, so it waits for the wait.
                    df.spawn(r.at(0).read(), |_, _| after.store(true, Ordering::SeqCst));
                    df.spawn(r.at(1).out(), |_, _| {
                        unrelated.store(true, Ordering::SeqCst)
                    });
                    panic!("in the wait");
                })
            })
        });
        let err = r.expect_err("the panic reaches the caller");
        assert_eq!(err.panic().and_then(|p| p.message()), Some("in the wait"));
        assert_eq!(err.skipped, 2, "the wait and its successor are cancelled");
        assert!(!after.into_inner(), "the successor of the failed wait ran");
        assert!(unrelated.into_inner(), "an unrelated task was cancelled");
        assert_eq!(v, [2, 0]);
    });
}

#[test]
fn sync_or_another_wait_inside_the_wait_closure_is_refused_not_a_hang() {
    within("sync or wait_for inside a wait_for closure", || {
        let rt = Runtime::new(2).unwrap();
        let mut v = vec![0u32; 2];
        for nested_wait in [false, true] {
            let r = rt.install(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    dataflow::scope(|df| {
                        let r = df.region(&mut v);
                        df.spawn(r.at(0).out(), |_, x| *x = 1);
                        df.wait_for(r.at(0).read(), |_| {
                            if nested_wait {
                                df.wait_for(r.at(0).inout(), |x| *x = 2);
                            } else {
                                df.sync();
                            }
                        })
                    })
                }))
            });
            let msg = message(&*r.expect_err("refused"));
            let want = if nested_wait {
                "wait_for inside the closure of another wait_for"
            } else {
                "sync inside the closure of wait_for"
            };
            assert!(msg.contains(want), "{msg}");
        }
        // After the refusals, the scope still works: waits one after another are fine.
        rt.install(|| {
            dataflow::scope(|df| {
                let r = df.region(&mut v);
                df.spawn(r.at(1).out(), |_, x| *x = 7);
                let a = df.wait_for(r.at(1).read(), |x| *x);
                df.sync();
                let b = df.wait_for(r.at(1).inout(), |x| {
                    *x += a;
                    *x
                });
                assert_eq!(b, 14);
            })
        });
    });
}
