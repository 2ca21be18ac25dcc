//! A scope's counts of its unfinished spawns, split between the owner's own thread and every
//! other thread: every spawn is waited for, whichever thread spawns it, runs it or steals it,
//! and a spawn keeps its meaning (a job may wait for a sibling spawned after it).
#![cfg(not(loom))]

#[path = "common/watchdog.rs"]
mod watchdog;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use taskpools::forkjoin::{self, Pool, Runtime};
use watchdog::within;

fn rt(pool: Pool, threads: usize) -> Runtime {
    Runtime::builder()
        .threads(threads)
        .pool(pool)
        .build()
        .unwrap()
}

/// A spawned job that spins until a sibling spawned after it has run: spawns are jobs, not
/// calls made at the spawn, so this finishes on 1 and on 2 threads.
#[test]
fn a_spawn_may_wait_for_a_sibling_spawned_after_it() {
    within(60, "a spawn waiting for a later sibling", || {
        for pool in Pool::ALL {
            for threads in [1, 2] {
                let rt = rt(pool, threads);
                for _ in 0..200 {
                    let later_ran = AtomicBool::new(false);
                    let waited = AtomicBool::new(false);
                    rt.scope(|s| {
                        s.spawn(|_| {
                            while !later_ran.load(Ordering::Acquire) {
                                std::thread::yield_now();
                            }
                            waited.store(true, Ordering::Relaxed);
                        });
                        s.spawn(|_| later_ran.store(true, Ordering::Release));
                    });
                    assert!(waited.load(Ordering::Relaxed), "{pool}, {threads} threads");
                }
            }
        }
    });
}

/// A tree of scopes whose jobs also spawn into an enclosing scope, from whichever worker runs
/// them: spawns and finishes land on the owner's thread and on thieves in every mix, and the
/// scope waits for all of them (each job counts itself once).
fn spawn_across<'s>(s: &forkjoin::Scope<'s>, depth: u32, ran: &'s AtomicUsize) {
    ran.fetch_add(1, Ordering::Relaxed);
    if depth == 0 {
        return;
    }
    forkjoin::scope(|inner| {
        for _ in 0..3 {
            inner.spawn(move |inner| spawn_across(inner, depth - 1, ran));
        }
    });
    // Into the enclosing scope, from a job that may run on a thief.
    s.spawn(move |_| {
        ran.fetch_add(1, Ordering::Relaxed);
    });
}

#[test]
fn every_spawn_is_counted_wherever_it_is_made_and_run() {
    within(120, "counting spawns across threads", || {
        // Per call at `depth`: itself, one job spawned into its scope, and three calls at
        // `depth - 1`; at depth 0 only itself.
        fn expected(depth: u32) -> usize {
            if depth == 0 {
                1
            } else {
                2 + 3 * expected(depth - 1)
            }
        }
        for pool in Pool::ALL {
            for threads in [1, 2, 3] {
                let rt = rt(pool, threads);
                for _ in 0..20 {
                    let ran = AtomicUsize::new(0);
                    rt.scope(|outer| {
                        for _ in 0..4 {
                            let ran = &ran;
                            outer.spawn(move |s| spawn_across(s, 6, ran));
                        }
                    });
                    assert_eq!(
                        ran.load(Ordering::Relaxed),
                        4 * expected(6),
                        "{pool}, {threads} threads"
                    );
                }
            }
        }
    });
}

/// A scope lent to a plain thread (`in_place_scope`) takes spawns from other plain threads
/// too: none of them is the scope's owner, and every spawn is waited for.
#[test]
fn spawns_from_plain_threads_into_an_in_place_scope_are_waited_for() {
    within(60, "spawns from plain threads", || {
        let rt = rt(Pool::PrivateDeque, 2);
        let ran = AtomicUsize::new(0);
        rt.in_place_scope(|s| {
            std::thread::scope(|ts| {
                for _ in 0..4 {
                    ts.spawn(|| {
                        for _ in 0..250 {
                            s.spawn(|_| {
                                ran.fetch_add(1, Ordering::Relaxed);
                            });
                        }
                    });
                }
            });
        });
        assert_eq!(ran.load(Ordering::Relaxed), 1000);
    });
}

/// A panic in a spawned job, whichever thread runs it, reaches the scope's caller after every
/// other spawn has finished.
#[test]
fn a_spawned_panic_is_resumed_after_every_spawn_finished() {
    within(60, "a spawned panic", || {
        for pool in Pool::ALL {
            for threads in [1, 2] {
                let rt = rt(pool, threads);
                let ran = AtomicUsize::new(0);
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    rt.scope(|s| {
                        for i in 0..64 {
                            let ran = &ran;
                            s.spawn(move |_| {
                                if i == 17 {
                                    panic!("job 17");
                                }
                                ran.fetch_add(1, Ordering::Relaxed);
                            });
                        }
                    })
                }));
                let p = r.expect_err("the panic is resumed");
                assert_eq!(p.downcast_ref::<&str>(), Some(&"job 17"));
                assert_eq!(ran.load(Ordering::Relaxed), 63, "{pool}, {threads} threads");
            }
        }
    });
}
