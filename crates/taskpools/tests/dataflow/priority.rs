//! Priorities: on one worker, every task that starts is a most urgent one among the tasks
//! ready at that moment (checked against the program's dependences; programs of up to 200
//! tasks, past the spawner's throttle at 64), and on two workers
//! random prioritized programs equal their sequential elision, nested tasks and panics
//! included.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use taskpools::dataflow::{self, Config};
use taskpools::Runtime;

use super::within;

const N: usize = 6;

/// A random program: each task writes one element (or reads one) with a random priority.
struct Task {
    elem: usize,
    write: bool,
    priority: i16,
}

fn program(seed: u64) -> Vec<Task> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..rng.usize(1..200))
        .map(|_| Task {
            elem: rng.usize(..N),
            write: rng.bool(),
            priority: rng.i16(-3..4),
        })
        .collect()
}

/// The earlier tasks task `j` waits for (same element, one of the two writes).
fn preds(p: &[Task], j: usize) -> Vec<usize> {
    (0..j)
        .filter(|&i| p[i].elem == p[j].elem && (p[i].write || p[j].write))
        .collect()
}

#[test]
fn on_one_worker_each_task_that_starts_is_a_most_urgent_ready_one() {
    let rt = Runtime::new(1).unwrap();
    for seed in 0..300 {
        let p = program(seed);
        // (task, tasks spawned when it started), in the order they ran.
        let log = Mutex::new(Vec::new());
        let spawned = AtomicUsize::new(0);
        let mut data = [0u64; N];
        rt.install(|| {
            dataflow::scope(|df| {
                let r = df.region(&mut data);
                for (j, t) in p.iter().enumerate() {
                    let (log, spawned) = (&log, &spawned);
                    let body = move |x: u64| {
                        log.lock()
                            .unwrap()
                            .push((j, spawned.load(Ordering::Relaxed)));
                        x
                    };
                    // The first task has a priority, so every task goes through the heap.
                    if t.write {
                        df.spawn_with_priority(t.priority, r.at(t.elem).inout(), move |_, x| {
                            *x = body(*x).wrapping_mul(31).wrapping_add(j as u64)
                        });
                    } else {
                        df.spawn_with_priority(t.priority, r.at(t.elem).read(), move |_, x| {
                            body(*x);
                        });
                    }
                    spawned.store(j + 1, Ordering::Relaxed);
                }
            })
        });
        let log = log.into_inner().unwrap();
        assert_eq!(log.len(), p.len(), "seed {seed}: every task ran once");
        let mut done = vec![false; p.len()];
        for &(j, seen) in &log {
            let ready: Vec<usize> = (0..seen.max(j + 1))
                .filter(|&i| !done[i] && preds(&p, i).iter().all(|&q| done[q]))
                .collect();
            assert!(
                ready.contains(&j),
                "seed {seed}: task {j} ran before it was ready"
            );
            let best = ready.iter().map(|&i| p[i].priority).max().unwrap();
            assert_eq!(
                p[j].priority, best,
                "seed {seed}: task {j} ran while a more urgent one was ready ({ready:?})"
            );
            done[j] = true;
        }
    }
}

#[test]
fn prioritized_programs_equal_their_sequential_elision_on_two_workers() {
    let rt = Runtime::new(2).unwrap();
    within("prioritized programs", move || {
        for seed in 0..300 {
            let p = program(seed);
            let mut expect = [0u64; N];
            for (j, t) in p.iter().enumerate() {
                if t.write {
                    expect[t.elem] = expect[t.elem].wrapping_mul(31).wrapping_add(j as u64);
                }
            }
            let mut data = [0u64; N];
            let ran = AtomicUsize::new(0);
            rt.install(|| {
                dataflow::scope(|df| {
                    let r = df.region(&mut data);
                    for (j, t) in p.iter().enumerate() {
                        let ran = &ran;
                        // Half the tasks nest: a child does the work, with a priority too.
                        let nest = j % 2 == 1;
                        if t.write {
                            df.spawn_with_priority(
                                t.priority,
                                r.at(t.elem).inout(),
                                move |df, x| {
                                    ran.fetch_add(1, Ordering::Relaxed);
                                    if nest {
                                        let x = df.region(std::slice::from_mut(x));
                                        df.spawn_with_priority(
                                            -t.priority,
                                            x.at(0).inout(),
                                            move |_, x| {
                                                *x = x.wrapping_mul(31).wrapping_add(j as u64)
                                            },
                                        );
                                    } else {
                                        *x = x.wrapping_mul(31).wrapping_add(j as u64);
                                    }
                                },
                            );
                        } else {
                            df.spawn(r.at(t.elem).read(), move |_, _| {
                                ran.fetch_add(1, Ordering::Relaxed);
                            });
                        }
                    }
                })
            });
            assert_eq!((data, ran.into_inner()), (expect, p.len()), "seed {seed}");
        }
    });
}

#[test]
fn a_panic_in_a_prioritized_scope_cancels_its_dependents_and_loses_nothing() {
    let rt = Runtime::new(2).unwrap();
    within("a panic with priorities", move || {
        for _ in 0..100 {
            let ran = AtomicUsize::new(0);
            let mut v = [0u32; 4];
            let e = rt
                .install(|| {
                    dataflow::try_scope(Config::default(), |df| {
                        let r = df.region(&mut v);
                        df.spawn_with_priority(3, r.at(0).inout(), |_, _| panic!("first"));
                        for i in 0..40 {
                            let ran = &ran;
                            df.spawn_with_priority(
                                i % 5,
                                r.at(i as usize % 4).inout(),
                                move |_, x| {
                                    *x += 1;
                                    ran.fetch_add(1, Ordering::Relaxed);
                                },
                            );
                        }
                    })
                })
                .unwrap_err();
            // Tasks on element 0 come after the panicking one: cancelled; the rest ran.
            assert_eq!((ran.into_inner(), e.skipped), (30, 10));
            assert_eq!(v, [0, 10, 10, 10]);
        }
    });
}

#[test]
fn thieves_that_move_prioritized_tasks_lose_none_and_run_none_twice() {
    // Many small independent tasks: the spawner's heap fills, and thieves take half of it
    // at a time, leaving spare tickets that each scope's end waits for. Scopes follow one
    // another at once, so a ticket that outlived its scope's heaps would use freed memory
    // (ASan and valgrind run this test too).
    let tasks = if std::env::var_os("TASKPOOLS_STRESS").is_some_and(|v| v == "small") {
        300
    } else {
        3000
    };
    for threads in [2, 4] {
        let rt = Runtime::new(threads).unwrap();
        within("prioritized tasks moved by thieves", move || {
            for round in 0..40 {
                let runs: Vec<AtomicUsize> = (0..tasks).map(|_| AtomicUsize::new(0)).collect();
                let mut data = vec![0u32; tasks];
                rt.install(|| {
                    dataflow::scope(|df| {
                        let r = df.region(&mut data);
                        for (i, c) in runs.iter().enumerate() {
                            let p = ((i * 7 + round) % 5) as i16;
                            df.spawn_with_priority(p, r.at(i).inout(), move |_, x| {
                                *x += 1;
                                c.fetch_add(1, Ordering::Relaxed);
                            });
                        }
                    })
                });
                assert!(
                    data.iter().all(|&x| x == 1),
                    "round {round}: a task lost or run twice"
                );
                for (i, c) in runs.iter().enumerate() {
                    assert_eq!(c.load(Ordering::Relaxed), 1, "round {round}, task {i}");
                }
            }
        });
    }
}
