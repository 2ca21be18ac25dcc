//! Fork-join programs that used to hang: installs that cross between runtimes, spawns made on a
//! worker of another runtime, and jobs that wait for queued work by other means. Each scenario runs on
//! a helper thread with a deadline, so a regression fails instead of hanging the test run.
#![cfg(not(loom))]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use taskpools::forkjoin::{self, Pool, Runtime, Yield};

const DEADLINE: Duration = Duration::from_secs(20);

/// Runs `f` on its own thread and returns its result; panics if it takes longer than
/// `DEADLINE` (the thread is left behind; the test process ends anyway) and resumes its panic.
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let h = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(DEADLINE) {
        Ok(v) => v,
        Err(RecvTimeoutError::Timeout) => {
            panic!("{what}: not finished after {DEADLINE:?} (deadlock)")
        }
        Err(RecvTimeoutError::Disconnected) => match h.join() {
            Err(p) => std::panic::resume_unwind(p),
            Ok(()) => unreachable!("the thread sends before it ends"),
        },
    }
}

fn rt(pool: Pool, threads: usize) -> Runtime {
    Runtime::builder()
        .threads(threads)
        .pool(pool)
        .build()
        .unwrap()
}

fn pool_pairs() -> [(Pool, Pool); 4] {
    [
        (Pool::PrivateDeque, Pool::PrivateDeque),
        (Pool::PrivateDeque, Pool::ChaseLev),
        (Pool::ChaseLev, Pool::PrivateDeque),
        (Pool::ChaseLev, Pool::ChaseLev),
    ]
}

/// A worker of `a` that installs into `b` keeps running `a`'s work while it waits, so `b`'s
/// worker can install back into `a` (one thread each: nobody else could run it).
#[test]
fn install_across_one_thread_runtimes_and_back_finishes() {
    for (pa, pb) in pool_pairs() {
        let r = within("a.install(b.install(a.install))", move || {
            let a = rt(pa, 1);
            let b = rt(pb, 1);
            let r = a.install(|| b.install(|| a.install(|| 42)));
            // Deeper, with joins on both sides.
            let r2 = a.install(|| {
                forkjoin::join(
                    || b.install(|| forkjoin::join(|| a.install(|| 1), || 2)),
                    || b.install(|| a.install(|| forkjoin::join(|| 3, || 4))),
                )
            });
            (r, r2)
        });
        assert_eq!(r, (42, ((1, 2), (3, 4))), "{pa} / {pb}");
    }
}

/// A panic inside a cross-runtime install reaches the caller.
#[test]
fn a_panic_in_a_cross_runtime_install_reaches_the_caller() {
    for (pa, pb) in pool_pairs() {
        let msg = within("cross install panic", move || {
            let a = rt(pa, 1);
            let b = rt(pb, 1);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                a.install(|| b.install(|| -> u32 { panic!("boom in b") }))
            }));
            let p = r.unwrap_err();
            // Both runtimes still work.
            assert_eq!(a.install(|| b.install(|| 7)), 7);
            p.downcast_ref::<&str>().map(|s| s.to_string())
        });
        assert_eq!(msg.as_deref(), Some("boom in b"), "{pa} / {pb}");
    }
}

/// A spawn made on a worker of another runtime belongs to the scope's runtime: the scope waits
/// for it (and for what it spawns), and dropping the other runtime in between loses nothing.
#[test]
fn a_spawn_from_another_runtimes_worker_runs_on_the_scopes_runtime() {
    for (pa, pb) in pool_pairs() {
        let ran = within("spawn from b's worker into a's scope", move || {
            let a = rt(pa, 2);
            let b = rt(pb, 2);
            let ran = AtomicUsize::new(0);
            let ran_ref = &ran;
            a.scope(|s| {
                b.install(|| {
                    s.spawn(move |s| {
                        std::thread::sleep(Duration::from_millis(100));
                        ran_ref.fetch_add(1, Ordering::Relaxed);
                        s.spawn(move |_| {
                            ran_ref.fetch_add(1, Ordering::Relaxed);
                        });
                    })
                });
                drop(b);
            });
            ran.into_inner()
        });
        assert_eq!(
            ran, 2,
            "{pa} / {pb}: the scope returned before its spawns ran"
        );
    }
}

/// A `&Scope` lent to a plain thread spawns into the scope's runtime from there.
#[test]
fn a_spawn_from_a_plain_thread_runs_in_the_scope() {
    for pool in Pool::ALL {
        let ran = within("spawn from a plain thread", move || {
            let r = rt(pool, 2);
            let ran = AtomicUsize::new(0);
            r.scope(|s| {
                std::thread::scope(|t| {
                    t.spawn(|| {
                        s.spawn(|s| {
                            ran.fetch_add(1, Ordering::Relaxed);
                            s.spawn(|_| {
                                ran.fetch_add(1, Ordering::Relaxed);
                            });
                        })
                    });
                });
            });
            ran.into_inner()
        });
        assert_eq!(ran, 2, "{pool}");
    }
}

/// A scope's body spins until one of its spawns has run. With `yield_now` in the loop this
/// finishes on both pools at two threads and at one (the spawn is queued on the spinning
/// worker); on Chase–Lev a plain spin does too (next test).
#[test]
fn a_job_that_waits_for_a_queued_spawn_finishes_with_yield_now() {
    for pool in Pool::ALL {
        for threads in [1, 2] {
            within("spin-wait on a spawn with yield_now", move || {
                let r = rt(pool, threads);
                let wait_for_spawn = || {
                    let flag = AtomicBool::new(false);
                    forkjoin::scope(|s| {
                        s.spawn(|_| flag.store(true, Ordering::Release));
                        while !flag.load(Ordering::Acquire) {
                            assert!(forkjoin::yield_now().is_some());
                        }
                    });
                };
                for _ in 0..50 {
                    r.install(wait_for_spawn);
                    // Deeper, under joins that queue their other halves (and under enough
                    // of them that the joins below run as plain calls): the spawn is not
                    // the oldest queued job.
                    fn nest(depth: u32, f: &(dyn Fn() + Sync)) {
                        if depth == 0 {
                            return f();
                        }
                        forkjoin::join(|| nest(depth - 1, f), || std::hint::black_box(3));
                    }
                    r.install(|| nest(6, &wait_for_spawn));
                }
            });
        }
    }
    assert_eq!(forkjoin::yield_now(), None, "not a worker");
    let r = rt(Pool::PrivateDeque, 1);
    assert_eq!(r.install(forkjoin::yield_now), Some(Yield::Idle));
}

/// With the serial elision off, every join queues its `b`, so an `a` that waits for its `b`
/// while calling `yield_now` finishes at any depth (the behaviour before the elision).
#[test]
fn without_the_serial_elision_a_half_waiting_for_its_sibling_finishes_with_yield_now() {
    for threads in [1, 2] {
        within("spin-wait join, serial elision off", move || {
            let r = Runtime::builder()
                .threads(threads)
                .serial_elision(false)
                .build()
                .unwrap();
            fn nest(depth: u32, flag: &AtomicBool) {
                if depth == 0 {
                    forkjoin::join(
                        || {
                            while !flag.load(Ordering::Acquire) {
                                forkjoin::yield_now();
                            }
                        },
                        || flag.store(true, Ordering::Release),
                    );
                    return;
                }
                forkjoin::join(|| nest(depth - 1, flag), || std::hint::black_box(3));
            }
            for _ in 0..20 {
                r.install(|| nest(8, &AtomicBool::new(false)));
            }
        });
    }
}

/// A join's `b` that spins on a flag its `a` sets finishes on any pool: `a` runs first, on this
/// worker, in the serial elision as in the queued fork.
#[test]
fn a_join_half_that_waits_for_the_first_half_finishes() {
    for pool in Pool::ALL {
        for threads in [1, 2] {
            within("b waits for a", move || {
                let r = rt(pool, threads);
                let flag = AtomicBool::new(false);
                r.install(|| {
                    fn nest(depth: u32, flag: &AtomicBool) {
                        if depth == 0 {
                            forkjoin::join(
                                || flag.store(true, Ordering::Release),
                                || {
                                    while !flag.load(Ordering::Acquire) {
                                        forkjoin::yield_now();
                                    }
                                },
                            );
                            return;
                        }
                        forkjoin::join(|| nest(depth - 1, flag), || std::hint::black_box(3));
                    }
                    nest(6, &flag)
                });
            });
        }
    }
}

/// `$join(a, b)` where `a` spins (without `yield_now`) until `b` has run.
macro_rules! spin_join {
    ($($join:tt)+) => {{
        let flag = AtomicBool::new(false);
        $($join)+(
            || {
                while !flag.load(Ordering::Acquire) {
                    std::hint::spin_loop();
                }
            },
            || flag.store(true, Ordering::Release),
        )
    }};
}

#[test]
fn a_join_half_that_spins_on_its_sibling_finishes_on_chase_lev() {
    within("plain spin-wait join on chase-lev", || {
        let r = rt(Pool::ChaseLev, 2);
        for _ in 0..20 {
            spin_join!(r.join);
        }
    });
}

/// On the private pool the second half of a join made while its worker has nothing queued is
/// public: another worker takes it while the first half runs without forking (here it waits
/// for it; a long partition before the next fork is the case this is for). A throughput
/// feature, not a progress promise (which joins find nothing queued depends on the schedule):
/// this checks that the mechanism works where the schedule is clear.
#[test]
fn a_join_made_with_nothing_queued_has_its_half_taken_without_the_owner() {
    within("join with nothing queued, spin-wait, private pool", || {
        let r = rt(Pool::PrivateDeque, 2);
        for _ in 0..20 {
            // The worker's first join.
            spin_join!(r.join);
            // The same in a scope's spawn, run by whichever worker takes it (one waiting at
            // the scope's end, or the other): nothing else is queued there either.
            r.scope(|s| {
                s.spawn(|_| {
                    spin_join!(forkjoin::join);
                })
            });
            // A join inside the first half of another, made after the other worker took the
            // outer half: nothing is queued again, so this half is public too.
            let (outer, inner) = (AtomicBool::new(false), AtomicBool::new(false));
            r.join(
                || {
                    while !outer.load(Ordering::Acquire) {
                        std::hint::spin_loop();
                    }
                    forkjoin::join(
                        || {
                            while !inner.load(Ordering::Acquire) {
                                std::hint::spin_loop();
                            }
                        },
                        || inner.store(true, Ordering::Release),
                    );
                },
                || outer.store(true, Ordering::Release),
            );
        }
    });
}

const CHILD: &str = "TASKPOOLS_LIVENESS_CHILD";

/// The program that hangs on the private pool: a half spins on its sibling without
/// `yield_now`, in a join inside two others whose halves are still queued (a join made while
/// nothing is queued has its half public, so a thief would take the sibling there; deeper it
/// sits in the private frame stack). The outermost half sleeps, so a thief that takes it is
/// away while the owner makes the inner joins, and the middle half keeps the innermost join
/// from finding nothing queued unless the owner is descheduled for that long.
/// Run only as the child of the test below (it gives up after 60 s).
#[test]
fn blocked_owner_child_program() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let r = rt(Pool::PrivateDeque, 2);
    let flag = AtomicBool::new(false);
    let start = Instant::now();
    r.join(
        || {
            forkjoin::join(
                || {
                    forkjoin::join(
                        || {
                            while !flag.load(Ordering::Acquire)
                                && start.elapsed() < Duration::from_secs(60)
                            {
                                std::hint::spin_loop();
                            }
                        },
                        || flag.store(true, Ordering::Release),
                    )
                },
                || std::hint::black_box(1),
            )
        },
        || std::thread::sleep(Duration::from_millis(200)),
    );
}

/// The hang is not silent: a thief whose request stays unanswered prints one diagnostic that
/// names the cause and the fix.
#[test]
fn a_blocked_owner_on_the_private_pool_is_reported_on_stderr() {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "blocked_owner_child_program",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + DEADLINE;
    let mut lines = Vec::new();
    let found = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) if l.contains("steal request") => break Some(l),
            Ok(l) => lines.push(l),
            Err(_) => break None,
        }
    };
    // Anything more within another report period would be a second report.
    let more_until = Instant::now() + Duration::from_millis(1500);
    while let Ok(l) = rx.recv_timeout(more_until.saturating_duration_since(Instant::now())) {
        lines.push(l);
    }
    let _ = child.kill();
    let _ = child.wait();
    let line = found.unwrap_or_else(|| panic!("no diagnostic within {DEADLINE:?}: {lines:?}"));
    assert!(
        line.contains("yield_now") && line.contains("Pool::ChaseLev"),
        "the diagnostic names the fixes: {line}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("steal request")),
        "reported once per runtime: {lines:?}"
    );
}

/// The last handle on a runtime dropped inside one of its own spawned jobs: the drop cannot
/// wait for its own thread, so it signals the shutdown and returns; the job finishes.
#[test]
fn dropping_the_last_runtime_handle_on_its_own_worker_returns() {
    within("drop on own worker", || {
        for pool in Pool::ALL {
            let rt = std::sync::Arc::new(rt(pool, 2));
            let inner = std::sync::Arc::clone(&rt);
            let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
            let (done_tx, done_rx) = std::sync::mpsc::channel();
            rt.spawn(move || {
                go_rx.recv().unwrap();
                drop(inner); // the last handle: main dropped its own below
                done_tx.send(()).unwrap();
            });
            drop(rt);
            go_tx.send(()).unwrap();
            done_rx
                .recv_timeout(std::time::Duration::from_secs(10))
                .expect("the job that dropped its runtime finished");
        }
    });
}

/// Two spawned tasks that wait for each other (a barrier of two), started while the runtime's
/// other worker sleeps: the spawning worker runs one of them and blocks, so the other, queued
/// behind it on that worker's deque, runs only if a spawn woke the sleeper (a lost wake-up
/// hangs here and fails at the deadline). Fork-join and data-flow spawns, on both pools.
#[test]
fn spawns_wake_a_sleeping_worker_that_a_blocked_task_needs() {
    for pool in [Pool::PrivateDeque, Pool::ChaseLev] {
        within("two spawns that wait for each other", move || {
            let rt = rt(pool, 2);
            for round in 0..60 {
                // Long enough for the idle worker to fall asleep (it spins and yields first),
                // and, every other round, barely so.
                std::thread::sleep(Duration::from_millis(if round % 2 == 0 { 8 } else { 1 }));
                let b = std::sync::Barrier::new(2);
                let b = &b;
                if round % 3 == 2 {
                    let (mut x, mut y) = (0u32, 0u32);
                    rt.install(|| {
                        taskpools::dataflow::scope(|df| {
                            let (rx, ry) = (
                                df.region(std::slice::from_mut(&mut x)),
                                df.region(std::slice::from_mut(&mut y)),
                            );
                            df.spawn(rx.all().inout(), move |_, x| {
                                b.wait();
                                x[0] += 1;
                            });
                            df.spawn(ry.all().inout(), move |_, y| {
                                b.wait();
                                y[0] += 1;
                            });
                        })
                    });
                    assert_eq!((x, y), (1, 1));
                } else {
                    rt.install(|| {
                        forkjoin::scope(|s| {
                            s.spawn(move |_| {
                                b.wait();
                            });
                            s.spawn(move |_| {
                                b.wait();
                            });
                        })
                    });
                }
            }
        });
    }
}
