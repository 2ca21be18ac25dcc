//! Explicit edges (`spawn_after`): order without data, beside data, across a sync, a failed
//! predecessor (a handle cannot reach another scope: see the `compile_fail` examples of
//! `TaskHandle`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use taskpools::dataflow::{self, Config, TaskHandle};
use taskpools::Runtime;

#[test]
fn edges_order_tasks_that_share_no_data() {
    // A random DAG of data-less tasks: each records when it ran, and must run after every
    // task it names.
    let rt = Runtime::new(2).unwrap();
    let mut rng = fastrand::Rng::with_seed(11);
    for _ in 0..40 {
        let n = rng.usize(2..60);
        let preds: Vec<Vec<usize>> = (0..n)
            .map(|i| {
                let k = if i == 0 { 0 } else { rng.usize(0..4) };
                (0..k).map(|_| rng.usize(..i)).collect()
            })
            .collect();
        let clock = AtomicUsize::new(1);
        let ran: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
        rt.install(|| {
            dataflow::scope(|df| {
                let mut hs: Vec<TaskHandle<'_>> = Vec::new();
                for (i, p) in preds.iter().enumerate() {
                    let after: Vec<_> = p.iter().map(|&j| hs[j]).collect();
                    let (clock, ran, p) = (&clock, &ran, p.clone());
                    hs.push(df.spawn_after(&after, (), move |_, ()| {
                        if i % 3 == 0 {
                            std::thread::sleep(Duration::from_micros(50));
                        }
                        for j in p {
                            assert!(
                                ran[j].load(Ordering::SeqCst) != 0,
                                "task {i} ran before {j}"
                            );
                        }
                        ran[i].store(clock.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
                    }));
                }
            })
        });
        assert!(
            ran.iter().all(|r| r.load(Ordering::SeqCst) != 0),
            "a task did not run"
        );
    }
}

#[test]
fn an_edge_and_data_together() {
    // `b` writes other data than `a`, and reads what `a`'s side effect left.
    let rt = Runtime::new(2).unwrap();
    for config in [Config::default(), Config::thesis()] {
        let flag = AtomicBool::new(false);
        let mut v = vec![0u32; 4];
        rt.install(|| {
            dataflow::scope_with(config, |df| {
                let r = df.region(&mut v);
                let a = df.spawn_after(&[], r.at(0).out(), |_, x| {
                    std::thread::sleep(Duration::from_millis(2));
                    flag.store(true, Ordering::SeqCst);
                    *x = 1;
                });
                df.spawn_after(&[a], r.at(3).out(), |_, y| {
                    *y = u32::from(flag.load(Ordering::SeqCst)) + 1;
                });
            })
        });
        assert_eq!(v, [1, 0, 0, 2], "{config:?}");
    }
}

#[test]
fn a_handle_from_before_a_sync_is_no_edge_and_a_failed_one_cancels() {
    let rt = Runtime::new(2).unwrap();
    let ran = AtomicUsize::new(0);
    let r = rt.install(|| {
        dataflow::try_scope(Config::default(), |df| {
            let a = df.spawn_after(&[], (), |_, ()| {
                ran.fetch_add(1, Ordering::SeqCst);
            });
            df.sync();
            // `a` completed before the sync: this runs.
            df.spawn_after(&[a], (), |_, ()| {
                ran.fetch_add(1, Ordering::SeqCst);
            });
            let bad = df.spawn_after(&[], (), |_, ()| panic!("planted"));
            // After a failed task: cancelled, and so is what comes after it.
            let c = df.spawn_after(&[bad], (), |_, ()| {
                ran.fetch_add(100, Ordering::SeqCst);
            });
            df.spawn_after(&[c], (), |_, ()| {
                ran.fetch_add(100, Ordering::SeqCst);
            });
        })
    });
    let err = r.expect_err("the planted panic is reported");
    assert_eq!(err.skipped, 2);
    assert_eq!(ran.into_inner(), 2);
}
