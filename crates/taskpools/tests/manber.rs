//! Manber's concurrent pool under stress: no element lost or duplicated under every search
//! strategy and workload, with and without waiting mode; exhaustion is prompt and never false.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use taskpools::pool::manber::{ConcurrentConfig, ConcurrentPool, Removed, Search};
use taskpools::{synthetic, Builder, PoolKind};

const P: usize = 6;
const INITIAL: u64 = 60;
const OPS: usize = 30_000;

/// Runs a workload; every value (initial and added) must be removed or left exactly once.
/// `is_add(participant, rng)` decides each operation.
fn stress(
    search: Search,
    waiting: bool,
    is_add: impl Fn(usize, &mut fastrand::Rng) -> bool + Sync,
) {
    let pool = ConcurrentPool::new(ConcurrentConfig {
        participants: P,
        search,
        waiting,
        remote_delay_ns: 0,
    })
    .unwrap();
    // Values: initial ones 0..INITIAL spread over the segments; added ones are unique per
    // participant: (p + 1) << 32 | k.
    for v in 0..INITIAL {
        pool.fill((v as usize) % P, [v]);
    }
    let ops = AtomicUsize::new(0);
    let removed = std::sync::Mutex::new(Vec::new());
    let added = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for id in 0..P {
            let (pool, ops, removed, added, is_add) = (&pool, &ops, &removed, &added, &is_add);
            s.spawn(move || {
                let mut me = pool.join(id);
                let mut rng = fastrand::Rng::with_seed(id as u64);
                let (mut mine_r, mut mine_a) = (Vec::new(), Vec::new());
                let mut k = 0u64;
                while ops.fetch_add(1, Ordering::Relaxed) < OPS {
                    if is_add(id, &mut rng) {
                        let v = ((id as u64 + 1) << 32) | k;
                        k += 1;
                        pool.add(&mut me, v);
                        mine_a.push(v);
                    } else if let Removed::Element(v) = pool.remove(&mut me) {
                        mine_r.push(v);
                    }
                }
                pool.leave(me);
                removed.lock().unwrap().extend(mine_r);
                added.lock().unwrap().extend(mine_a);
            });
        }
    });
    let mut out = removed.into_inner().unwrap();
    out.extend(pool.drain());
    let mut expected: Vec<u64> = (0..INITIAL).collect();
    expected.extend(added.into_inner().unwrap());
    out.sort_unstable();
    expected.sort_unstable();
    assert_eq!(
        out.len(),
        expected.len(),
        "{search} waiting={waiting}: count"
    );
    assert_eq!(
        out, expected,
        "{search} waiting={waiting}: lost or duplicated"
    );
}

#[test]
fn random_job_mixes_lose_and_duplicate_nothing() {
    for search in Search::ALL {
        for waiting in [false, true] {
            for mix in [0.0, 0.3, 0.5, 0.8] {
                stress(search, waiting, |_, rng| rng.f64() < mix);
            }
        }
    }
}

#[test]
fn producer_consumer_contiguous_and_balanced_lose_and_duplicate_nothing() {
    for search in Search::ALL {
        for waiting in [false, true] {
            // 2 producers of 6: contiguous {0, 1} and spread out {0, 3}.
            stress(search, waiting, |id, _| id < 2);
            stress(search, waiting, |id, _| id % 3 == 0);
            // No producers at all: only the initial elements, then exhaustion.
            stress(search, waiting, |_, _| false);
        }
    }
}

/// Runs `f` on another thread and fails (instead of hanging the test run) if it does not
/// finish within a generous limit.
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("{what}: did not finish (livelock?)"))
}

#[test]
fn all_searching_on_an_empty_pool_all_get_exhausted_promptly() {
    for search in Search::ALL {
        for waiting in [false, true] {
            let got = within("exhaustion", move || {
                let pool = ConcurrentPool::<u64>::new(ConcurrentConfig {
                    participants: 8,
                    search,
                    waiting,
                    remote_delay_ns: 0,
                })
                .unwrap();
                std::thread::scope(|s| {
                    let hs: Vec<_> = (0..8)
                        .map(|id| {
                            let pool = &pool;
                            s.spawn(move || {
                                let mut me = pool.join(id);
                                pool.remove(&mut me)
                            })
                        })
                        .collect();
                    hs.into_iter()
                        .map(|h| h.join().unwrap())
                        .collect::<Vec<_>>()
                })
            });
            assert!(
                got.iter().all(|r| *r == Removed::Exhausted),
                "{search} waiting={waiting}: {got:?}"
            );
        }
    }
}

#[test]
fn no_exhaustion_while_a_participant_still_holds_an_element() {
    for search in Search::ALL {
        for waiting in [false, true] {
            within("late add", move || {
                let pool = ConcurrentPool::<u64>::new(ConcurrentConfig {
                    participants: 4,
                    search,
                    waiting,
                    remote_delay_ns: 0,
                })
                .unwrap();
                let exhausted = AtomicUsize::new(0);
                let got = std::array::from_fn::<_, 3, _>(|_| AtomicU8::new(0));
                let added = AtomicBool::new(false);
                std::thread::scope(|s| {
                    for id in 0..3 {
                        let (pool, exhausted, got, added) = (&pool, &exhausted, &got, &added);
                        s.spawn(move || {
                            let mut me = pool.join(id);
                            loop {
                                match pool.remove(&mut me) {
                                    Removed::Element(v) => {
                                        got[v as usize].fetch_add(1, Ordering::Relaxed);
                                    }
                                    Removed::Exhausted => {
                                        // Only legitimate once the last participant left.
                                        assert!(added.load(Ordering::Acquire), "false exhaustion");
                                        exhausted.fetch_add(1, Ordering::Relaxed);
                                        break;
                                    }
                                }
                            }
                            pool.leave(me);
                        });
                    }
                    // Participant 3 is not searching: it works for a while, then adds three
                    // elements and leaves.
                    let mut me = pool.join(3);
                    std::thread::sleep(Duration::from_millis(30));
                    for v in 0..3 {
                        pool.add(&mut me, v);
                    }
                    added.store(true, Ordering::Release);
                    pool.leave(me);
                });
                assert_eq!(exhausted.load(Ordering::Relaxed), 3);
                for g in &got {
                    assert_eq!(g.load(Ordering::Relaxed), 1, "{search} waiting={waiting}");
                }
            });
        }
    }
}

#[test]
fn waiting_mode_hands_elements_straight_to_waiters() {
    let pool = ConcurrentPool::<u64>::new(ConcurrentConfig {
        participants: 3,
        search: Search::Linear,
        waiting: true,
        remote_delay_ns: 0,
    })
    .unwrap();
    let handoffs = std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            let mut me = pool.join(0);
            let mut got = 0;
            while got < 200 {
                if let Removed::Element(_) = pool.remove(&mut me) {
                    got += 1;
                }
            }
            let h = me.stats.handoffs_received;
            pool.leave(me);
            h
        });
        let mut adder = pool.join(1);
        let idle = pool.join(2);
        for v in 0..200 {
            std::thread::sleep(Duration::from_micros(200));
            pool.add(&mut adder, v);
        }
        let h = waiter.join().unwrap();
        pool.leave(adder);
        pool.leave(idle);
        h
    });
    assert!(handoffs > 0, "no element was handed over directly");
}

#[test]
fn remote_delay_is_applied_to_non_local_accesses() {
    let pool = ConcurrentPool::<u64>::new(ConcurrentConfig {
        participants: 2,
        search: Search::Tree,
        waiting: false,
        remote_delay_ns: 2_000_000,
    })
    .unwrap();
    pool.fill(1, [1, 2]);
    let mut me = pool.join(0);
    let t = std::time::Instant::now();
    assert_eq!(pool.remove(&mut me), Removed::Element(1));
    // One non-local segment and at least one tree node were accessed, 2 ms each.
    assert!(t.elapsed() >= Duration::from_millis(4), "{:?}", t.elapsed());
}

#[test]
fn the_steal_half_pool_runs_the_synthetic_algorithm_with_every_search() {
    for search in Search::ALL {
        for threads in [1, 2, 4] {
            let b = Builder::new()
                .threads(threads)
                .pool(PoolKind::StealHalf)
                .search(search);
            let r = synthetic::run(&b, 16, 0).unwrap_or_else(|e| panic!("{search}: {e}"));
            assert_eq!(r.tasks_run(), synthetic::task_count(16));
        }
    }
}
