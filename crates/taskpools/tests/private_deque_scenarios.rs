//! Scenario tests for the private deques with steal requests (Acar, Charguéraud & Rainey,
//! PPoPP 2013), whose thieves ask the owner: the scenarios of `deque_scenarios.rs` (smoke,
//! spsc, stampede, stress with exactly-once accounting, no starvation, exact destructor
//! counts), then drops and re-entries of deques and request handles, which must never leave
//! a thief waiting. Sized for a 2-core machine; every test runs under a watchdog so that a hang
//! fails instead.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use taskpools::queue::chase_lev::Steal;
use taskpools::queue::private_deque::{PrivateDeque, StealRequests};

#[path = "common/deques.rs"]
mod common;
use common::*;

// ---------------------------------------------------------------------------------------------
// Private deques: thieves are deques of the same set and ask the owner, which must poll.

/// A set of `1 + THIEVES` deques: the owner (index 0) and the thieves.
fn pd_set<V>() -> (PrivateDeque<V>, Vec<PrivateDeque<V>>) {
    let mut d = PrivateDeque::set(1 + THIEVES);
    let thieves = d.split_off(1);
    (d.pop().unwrap(), thieves)
}

#[test]
fn private_deque_smoke() {
    with_timeout(10, || {
        let (o, mut ts) = pd_set::<usize>();
        let t = ts.pop().unwrap();
        assert!(o.pop().is_none());
        assert!(matches!(t.steal_from(0), Steal::Empty));
        for i in 0..10 {
            o.push(i);
        }
        assert_eq!(o.pop(), Some(9), "the owner's end is LIFO");
        std::thread::scope(|s| {
            let h = s.spawn(move || t.steal_from(0));
            while !h.is_finished() {
                o.poll();
                std::thread::yield_now();
            }
            assert!(
                matches!(h.join().unwrap(), Steal::Success(0)),
                "thieves get the oldest"
            );
        });
        let rest: Vec<usize> = std::iter::from_fn(|| o.pop()).collect();
        assert_eq!(rest, (1..9).rev().collect::<Vec<_>>());
    });
}

#[test]
fn private_deque_spsc() {
    const N: usize = 20_000;
    with_timeout(30, || {
        let (o, mut ts) = pd_set::<usize>();
        let t = ts.pop().unwrap();
        let got = AtomicUsize::new(0);
        std::thread::scope(|s| {
            let got = &got;
            s.spawn(move || {
                let mut next = 0;
                while next < N {
                    match t.steal_from(0) {
                        Steal::Success(v) => {
                            assert_eq!(v, next, "a single thief takes in push order");
                            next += 1;
                            got.store(next, Ordering::Relaxed);
                        }
                        _ => std::thread::yield_now(),
                    }
                }
            });
            for i in 0..N {
                o.push(i);
                o.poll();
            }
            while got.load(Ordering::Relaxed) < N {
                o.poll();
                // Let the thief run (2 shared cores, or valgrind's one-at-a-time threads).
                std::thread::yield_now();
            }
        });
        assert!(o.pop().is_none());
    });
}

/// The owner's deque is filled first; thieves stampede while the owner pops (and polls).
#[test]
fn private_deque_stampede() {
    const M: usize = 20_000;
    with_timeout(30, || {
        let (o, ts) = pd_set::<usize>();
        for i in 0..M {
            o.push(i);
        }
        let seen = bitmap(M);
        let taken = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in ts {
                let (seen, taken) = (&seen, &taken);
                s.spawn(move || {
                    while taken.load(Ordering::Relaxed) < M {
                        if let Steal::Success(v) = t.steal_from(0) {
                            mark(seen, v);
                            taken.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
            let mut i = 0u64;
            while taken.load(Ordering::Relaxed) < M {
                o.poll();
                i += 1;
                if i % 4 == 0 {
                    if let Some(v) = o.pop() {
                        mark(&seen, v);
                        taken.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            // A thief may still ask after the last element went (the hint is withdrawn lazily):
            // decline it and refuse new requests, or it would wait for an answer forever.
            o.block();
        });
        assert_all_once(&seen);
    });
}

/// The owner pushes and pops at random (polling) while thieves steal: exactly once.
#[test]
fn private_deque_stress_exactly_once() {
    const N: usize = 100_000;
    with_timeout(30, || {
        let (o, ts) = pd_set::<usize>();
        let seen = bitmap(N);
        let taken = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in ts {
                let (seen, taken) = (&seen, &taken);
                s.spawn(move || {
                    while taken.load(Ordering::Relaxed) < N {
                        if let Steal::Success(v) = t.steal_from(0) {
                            mark(seen, v);
                            taken.fetch_add(1, Ordering::Relaxed);
                        } else {
                            std::thread::yield_now();
                        }
                    }
                });
            }
            let mut rng = fastrand::Rng::with_seed(11);
            let mut next = 0;
            while taken.load(Ordering::Relaxed) < N {
                o.poll();
                if next < N && rng.u8(..3) < 2 {
                    o.push(next);
                    next += 1;
                } else if let Some(v) = o.pop() {
                    mark(&seen, v);
                    taken.fetch_add(1, Ordering::Relaxed);
                }
            }
            // A thief may still ask after the last element went (the hint is withdrawn lazily):
            // decline it and refuse new requests, or it would wait for an answer forever.
            o.block();
        });
        assert_all_once(&seen);
    });
}

/// The owner keeps pushing, popping and polling; every thief must get something.
#[test]
fn private_deque_no_starvation() {
    const WANT: usize = 10;
    // Generous deadlines: under valgrind threads run one at a time, and on a loaded 2-core
    // host a thief's turns can be seconds apart (a 10 s deadline failed there once in four).
    with_timeout(90, || {
        let (o, ts) = pd_set::<usize>();
        let hits: Vec<AtomicUsize> = (0..THIEVES).map(|_| AtomicUsize::new(0)).collect();
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            for (t, hits) in ts.into_iter().zip(&hits) {
                let stop = &stop;
                s.spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        if let Steal::Success(_) = t.steal_from(0) {
                            hits.fetch_add(1, Ordering::Relaxed);
                        } else {
                            std::thread::yield_now();
                        }
                    }
                });
            }
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut i = 0;
            while hits.iter().any(|h| h.load(Ordering::Relaxed) < WANT) {
                assert!(Instant::now() < deadline, "a thief starved");
                o.push(i);
                o.poll();
                if i % 2 == 1 {
                    o.pop();
                }
                i += 1;
            }
            stop.store(true, Ordering::Relaxed);
            // Thieves may be waiting on us: keep answering until they are gone.
            o.block();
        });
    });
}

/// Values taken by the owner, by thieves, and left behind at the drop (while thieves may
/// still be asking): each is dropped exactly once.
#[test]
fn private_deque_destructors_run_exactly_once() {
    const N: usize = 20_000;
    with_timeout(30, || {
        let drops = bitmap(N);
        let (o, ts) = pd_set::<Tracked>();
        std::thread::scope(|s| {
            let hs: Vec<_> = ts
                .into_iter()
                .map(|t| {
                    s.spawn(move || {
                        let mut n = 0;
                        while n < 500 {
                            match t.steal_from(0) {
                                Steal::Success(v) => {
                                    drop(v);
                                    n += 1;
                                }
                                _ => std::thread::yield_now(),
                            }
                        }
                    })
                })
                .collect();
            for i in 0..N {
                o.push(Tracked {
                    id: i,
                    drops: Arc::clone(&drops),
                });
                o.poll();
                if i % 4 == 0 {
                    drop(o.pop());
                }
            }
            while !hs.iter().all(|h| h.is_finished()) {
                o.poll();
                std::thread::yield_now();
            }
        });
        let left = N - drops
            .iter()
            .filter(|c| c.load(Ordering::Relaxed) == 1)
            .count();
        assert!(left > 0, "some values are left in the deque");
        drop(o);
        assert_all_once(&drops);
    });
}

// ---------------------------------------------------------------------------------------------
// Dropping a private deque or a request handle: thieves are answered, never left waiting.

/// A deque that advertises work is dropped; a later steal from it returns `Empty` at once.
#[test]
fn private_deque_drop_while_advertising_does_not_hang_a_thief() {
    with_timeout(10, || {
        let mut d = PrivateDeque::<u32>::set(2);
        let v = d.pop().unwrap();
        let t = d.pop().unwrap();
        v.push(1);
        drop(v);
        assert!(matches!(t.steal_from(1), Steal::Empty));
    });
}

/// A deque is dropped while a thief's request may be pending (the thief asks from another
/// thread and the owner never polls): the drop declines it.
#[test]
fn private_deque_drop_declines_a_pending_request() {
    with_timeout(10, || {
        let mut d = PrivateDeque::<u32>::set(2);
        let v = d.pop().unwrap();
        let t = d.pop().unwrap();
        v.push(1);
        let h = std::thread::spawn(move || t.steal_from(1));
        std::thread::sleep(Duration::from_millis(50));
        drop(v);
        assert!(matches!(h.join().unwrap(), Steal::Empty));
    });
}

/// The same with bare request handles, waiting until the request is certainly pending.
#[test]
fn steal_requests_drop_declines_a_pending_request_and_closes() {
    with_timeout(10, || {
        let mut r = StealRequests::<u32>::set(3);
        let late = r.pop().unwrap();
        let victim = r.pop().unwrap();
        let thief = r.pop().unwrap();
        victim.advertise(true);
        let h = std::thread::spawn(move || thief.steal_from(1, || {}));
        while !victim.pending() {
            std::thread::yield_now();
        }
        drop(victim);
        assert!(matches!(h.join().unwrap(), Steal::Empty));
        assert!(!late.table().has_work(1));
        assert!(matches!(late.steal_from(1, || {}), Steal::Empty));
    });
}

/// The closures of `steal_from`, `poll` and `block` are caller code: calling back into the
/// same handle from one must not answer a thief twice or put two requests out at once.
#[test]
fn steal_requests_refuse_reentry_from_their_closures() {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    with_timeout(20, || {
        let mut r = StealRequests::<u32>::set(3);
        let c = r.pop().unwrap();
        let b = r.pop().unwrap();
        let a = r.pop().unwrap();
        b.advertise(true);
        c.advertise(true);
        // Victims b and c answer from their own threads.
        let stop = Arc::new(AtomicBool::new(false));
        let victims: Vec<_> = [b, c]
            .into_iter()
            .map(|v| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut n = 100;
                    while !stop.load(Ordering::Relaxed) {
                        v.poll(|| {
                            n += 1;
                            Some(n)
                        });
                        std::thread::yield_now();
                    }
                })
            })
            .collect();
        // A nested steal from inside serve_own panics; the outer request is still answered
        // (the element dropped), and the handle works afterwards.
        let r = catch_unwind(AssertUnwindSafe(|| {
            a.steal_from(1, || {
                a.steal_from(2, || {});
            })
        }));
        assert!(r.is_err(), "a nested steal_from must panic");
        assert!(matches!(a.steal_from(2, || {}), Steal::Success(_)));
        // A panic in serve_own also leaves no request out.
        let r = catch_unwind(AssertUnwindSafe(|| a.steal_from(1, || panic!("boom"))));
        assert!(r.is_err());
        assert!(matches!(a.steal_from(1, || {}), Steal::Success(_)));
        stop.store(true, Ordering::Relaxed);
        for v in victims {
            v.join().unwrap();
        }
    });
}

#[test]
fn a_poll_from_inside_poll_panics_and_declines_the_thief() {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    with_timeout(20, || {
        let mut r = StealRequests::<u32>::set(2);
        let thief = r.pop().unwrap();
        let victim = r.pop().unwrap();
        victim.advertise(true);
        let h = std::thread::spawn(move || thief.steal_from(0, || {}));
        while !victim.pending() {
            std::thread::yield_now();
        }
        let res = catch_unwind(AssertUnwindSafe(|| {
            victim.poll(|| {
                victim.poll(|| Some(1));
                Some(2)
            })
        }));
        assert!(res.is_err(), "a nested poll must panic");
        // The thief was declined, not left waiting, and the cell takes requests again.
        assert!(matches!(h.join().unwrap(), Steal::Empty));
        assert!(!victim.pending());
    });
}
