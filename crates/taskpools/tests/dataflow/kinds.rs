//! The shared access kinds, `concurrent` and `commutative`, from the outside: random programs
//! against the sequential elision with every overlapping pair of commutative tasks checked
//! for exclusion, and the liveness a stricter implementation (every kind run as `inout`)
//! would lose.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use taskpools::dataflow::{self, Config};
use taskpools::Runtime;

use crate::wait_until;

const N: usize = 24;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Read,
    Concurrent,
    Commutative,
    InOut,
}

#[derive(Clone, Debug)]
struct Acc {
    lo: usize,
    hi: usize,
    kind: Kind,
}

fn shared(k: Kind) -> bool {
    matches!(k, Kind::Read | Kind::Concurrent)
}

fn gen_program(seed: u64) -> Vec<Vec<Acc>> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let kinds = [Kind::Read, Kind::Concurrent, Kind::Commutative, Kind::InOut];
    (0..rng.usize(4..40))
        .map(|_| {
            let mut accs: Vec<Acc> = Vec::new();
            for _ in 0..rng.usize(1..=2) {
                // Few distinct ranges, so that groups form.
                let lo = [0, 4, 8, rng.usize(..N)][rng.usize(..4)];
                let hi = (lo + [4, 8, rng.usize(1..=N - lo)][rng.usize(..3)]).min(N);
                let kind = kinds[rng.usize(..4)];
                let clash = accs
                    .iter()
                    .any(|b| lo < b.hi && b.lo < hi && !(shared(kind) && shared(b.kind)));
                if !clash {
                    accs.push(Acc { lo, hi, kind });
                }
            }
            accs
        })
        .collect()
}

fn mix(a: u64, b: u64) -> u64 {
    let mut x = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^ (x >> 32)
}

/// What task `id` does to one access, on data it may share (`concurrent`: atomic adds) or
/// own (`commutative`: a plain read-modify-write add; `inout`: an order-dependent mix).
/// Adds commute, so any order inside a group gives the sequential result; a read folds what
/// it sees into `seen`.
fn act(id: usize, a: &Acc, data: &[AtomicU64], seen: &mut u64) {
    match a.kind {
        Kind::Read => {
            for x in data {
                *seen = mix(*seen, x.load(Ordering::Relaxed));
            }
        }
        Kind::Concurrent => {
            for (j, x) in data.iter().enumerate() {
                x.fetch_add((id * 31 + j) as u64, Ordering::Relaxed);
            }
        }
        Kind::Commutative | Kind::InOut => unreachable!("exclusive kinds get `&mut`"),
    }
}

fn act_mut(id: usize, a: &Acc, data: &mut [AtomicU64]) {
    for (j, x) in data.iter_mut().enumerate() {
        let x = x.get_mut();
        *x = match a.kind {
            // A non-atomic add: two at once lose one.
            Kind::Commutative => x.wrapping_add((id * 7 + j + 1) as u64),
            Kind::InOut => mix(*x, id as u64),
            Kind::Read | Kind::Concurrent => unreachable!("shared kinds get `&`"),
        };
    }
}

fn initial() -> Vec<AtomicU64> {
    (0..N as u64).map(|i| AtomicU64::new(i * 1000)).collect()
}

/// The sequential elision: every task in spawn order.
fn sequential(prog: &[Vec<Acc>]) -> (Vec<u64>, Vec<u64>) {
    let mut data = initial();
    let mut seen = vec![0u64; prog.len()];
    for (id, accs) in prog.iter().enumerate() {
        for a in accs {
            if shared(a.kind) {
                act(id, a, &data[a.lo..a.hi], &mut seen[id]);
            } else {
                act_mut(id, a, &mut data[a.lo..a.hi]);
            }
        }
    }
    (data.into_iter().map(|x| x.into_inner()).collect(), seen)
}

/// Runs the program in one data-flow scope; returns the data, what each task's reads saw,
/// and each commutative task's (start, end) on a global clock.
fn parallel(prog: &[Vec<Acc>], config: Config) -> (Vec<u64>, Vec<u64>, Vec<(u64, u64)>) {
    let mut data = initial();
    let seen: Vec<AtomicU64> = (0..prog.len()).map(|_| AtomicU64::new(0)).collect();
    let spans: Vec<Mutex<(u64, u64)>> = (0..prog.len()).map(|_| Mutex::new((0, 0))).collect();
    let clock = AtomicU64::new(1);
    dataflow::scope_with(config, |df| {
        let r = df.region(&mut data);
        for (id, accs) in prog.iter().enumerate() {
            let (shared_accs, excl_accs): (Vec<_>, Vec<_>) =
                accs.iter().cloned().partition(|a| shared(a.kind));
            let sh: Vec<_> = shared_accs
                .iter()
                .map(|a| {
                    let p = r.part(a.lo..a.hi);
                    match a.kind {
                        Kind::Read => p.read(),
                        _ => p.concurrent(),
                    }
                })
                .collect();
            let ex: Vec<_> = excl_accs
                .iter()
                .map(|a| {
                    let p = r.part(a.lo..a.hi);
                    match a.kind {
                        Kind::Commutative => p.commutative(),
                        _ => p.inout(),
                    }
                })
                .collect();
            let (seen, spans, clock) = (&seen, &spans, &clock);
            let commutes = excl_accs.iter().any(|a| a.kind == Kind::Commutative);
            df.spawn((sh, ex), move |_, (sd, xd)| {
                let start = clock.fetch_add(1, Ordering::SeqCst);
                let mut s = 0u64;
                for (a, d) in shared_accs.iter().zip(sd) {
                    act(id, a, d, &mut s);
                }
                for (a, d) in excl_accs.iter().zip(xd) {
                    act_mut(id, a, d);
                }
                if commutes {
                    // Long enough for another commutative task to start meanwhile, were the
                    // lock broken.
                    let t = Instant::now();
                    while t.elapsed() < Duration::from_micros(20) {
                        std::hint::spin_loop();
                    }
                }
                seen[id].store(s, Ordering::Relaxed);
                let end = clock.fetch_add(1, Ordering::SeqCst);
                *spans[id].lock().unwrap() = (start, end);
            });
        }
    });
    (
        data.into_iter().map(|x| x.into_inner()).collect(),
        seen.into_iter().map(|x| x.into_inner()).collect(),
        spans.into_iter().map(|m| m.into_inner().unwrap()).collect(),
    )
}

fn configs() -> Vec<Config> {
    vec![
        Config::exact().with_index_block(64).unwrap(),
        Config::blocks(8).unwrap(),
        Config::blocks(64).unwrap(),
        Config::blocks(2048).unwrap(),
    ]
}

#[test]
fn random_programs_of_every_kind_match_the_sequential_elision_with_exclusion() {
    // Fewer programs under valgrind (`TASKPOOLS_STRESS=small`), the same checks.
    let small = std::env::var_os("TASKPOOLS_STRESS").is_some_and(|v| v == "small");
    let (seeds, min_pairs) = if small { (15u64, 100) } else { (60u64, 500) };
    let mut commutative_pairs = 0usize;
    for threads in [1, 2, 4] {
        let rt = Runtime::new(threads).unwrap();
        for (ci, config) in configs().into_iter().enumerate() {
            for seed in 0..seeds {
                let seed = seed + 1000 * ci as u64;
                let prog = gen_program(seed);
                let want = sequential(&prog);
                let (data, seen, spans) = rt.install(|| parallel(&prog, config));
                assert_eq!(
                    data, want.0,
                    "data, seed {seed}, {threads} threads, {config:?}"
                );
                assert_eq!(
                    seen, want.1,
                    "reads, seed {seed}, {threads} threads, {config:?}"
                );
                for i in 0..prog.len() {
                    for j in 0..i {
                        let overlap = prog[i].iter().any(|a| {
                            a.kind == Kind::Commutative
                                && prog[j].iter().any(|b| {
                                    b.kind == Kind::Commutative && a.lo < b.hi && b.lo < a.hi
                                })
                        });
                        if overlap {
                            commutative_pairs += 1;
                            let ((s1, e1), (s2, e2)) = (spans[i], spans[j]);
                            assert!(
                                e1 < s2 || e2 < s1,
                                "commutative tasks {j} and {i} overlap in time, seed {seed}, \
                                 {threads} threads, {config:?}"
                            );
                        }
                    }
                }
            }
        }
    }
    assert!(
        commutative_pairs > min_pairs,
        "too few pairs checked: {commutative_pairs}"
    );
}

#[test]
fn two_concurrent_tasks_on_one_part_run_together() {
    // A barrier of two between two `concurrent` tasks on the same data: run as `inout`, the
    // first would wait for the second forever (here: five seconds, then fail).
    let rt = Runtime::new(2).unwrap();
    for config in configs() {
        let mut v: Vec<AtomicU64> = (0..4).map(|_| AtomicU64::new(0)).collect();
        let arrived = AtomicUsize::new(0);
        let met = AtomicUsize::new(0);
        rt.install(|| {
            dataflow::scope_with(config, |df| {
                let r = df.region(&mut v);
                df.spawn(r.out(), |_, v| v.iter_mut().for_each(|x| *x.get_mut() = 1));
                for _ in 0..2 {
                    df.spawn(r.concurrent(), |_, v| {
                        v[0].fetch_add(1, Ordering::Relaxed);
                        arrived.fetch_add(1, Ordering::SeqCst);
                        if wait_until(|| arrived.load(Ordering::SeqCst) == 2) {
                            met.fetch_add(1, Ordering::SeqCst);
                        }
                    });
                }
                // Ordered after both.
                df.spawn(r.read(), |_, v| assert_eq!(v[0].load(Ordering::Relaxed), 3));
            })
        });
        assert_eq!(
            met.into_inner(),
            2,
            "{config:?}: the concurrent tasks never met"
        );
    }
}

#[test]
fn a_commutative_task_that_cannot_run_holds_back_no_ready_sibling() {
    // `a` holds `y` until the second commutative task on `x` has run. The first one waits
    // for `a` (it reads `y`); were commutative tasks ordered as spawned, the second would
    // wait for the first, hence for `a`.
    let rt = Runtime::new(2).unwrap();
    for config in configs() {
        let (mut x, mut y) = (vec![0u64; 2], vec![0u64; 2]);
        let second_ran = AtomicBool::new(false);
        let in_time = AtomicBool::new(false);
        rt.install(|| {
            dataflow::scope_with(config, |df| {
                let (rx, ry) = (df.region(&mut x), df.region(&mut y));
                df.spawn(ry.inout(), |_, y| {
                    in_time.store(
                        wait_until(|| second_ran.load(Ordering::SeqCst)),
                        Ordering::SeqCst,
                    );
                    y[0] = 5;
                });
                df.spawn((rx.commutative(), ry.read()), |_, (x, y)| x[0] += y[0]);
                df.spawn(rx.commutative(), |_, x| {
                    x[0] += 100;
                    second_ran.store(true, Ordering::SeqCst);
                });
            })
        });
        assert!(
            in_time.into_inner(),
            "{config:?}: the ready commutative task was held back"
        );
        assert_eq!(x[0], 105);
    }
}

#[test]
fn a_panicking_commutative_task_releases_its_lock() {
    // The group's other members still run (they do not depend on it), and what comes after
    // the group is cancelled. A lock kept by the panicking task would hang the scope: the
    // test fails after a minute instead.
    crate::within("a panicking commutative task", || {
        let rt = Runtime::new(2).unwrap();
        let mut x = vec![0u64; 1];
        let after = AtomicBool::new(false);
        let r = rt.install(|| {
            dataflow::try_scope(Config::default(), |df| {
                let rx = df.region(&mut x);
                df.spawn(rx.commutative(), |_, _| panic!("planted"));
                for _ in 0..3 {
                    df.spawn(rx.commutative(), |_, x| x[0] += 1);
                }
                df.spawn(rx.read(), |_, _| after.store(true, Ordering::SeqCst));
            })
        });
        let err = r.expect_err("the panic is reported");
        assert_eq!(err.skipped, 1, "the reader after the group is cancelled");
        assert!(!after.into_inner());
        assert_eq!(x[0], 3);
    });
}

#[test]
fn a_spawn_whose_commutative_access_overlaps_another_of_its_accesses_is_refused() {
    // Before anything runs: the refused task's body never runs, nor does a task spawned
    // after it; the part and element forms are checked as the whole-region ones.
    let rt = Runtime::new(2).unwrap();
    // This test's own flag (a `'static`, which the task closures may borrow).
    static RAN: AtomicBool = AtomicBool::new(false);
    type Spawn = fn(&dataflow::Scope<'_, '_>, &dataflow::Region<'_, u64>);
    let cases: [(&str, Spawn); 5] = [
        ("commutative + read", |df, r| {
            df.spawn((r.commutative(), r.read()), |_, _| {
                RAN.store(true, Ordering::SeqCst)
            });
        }),
        ("commutative + concurrent", |df, r| {
            df.spawn(
                (r.part(0..4).commutative(), r.part(2..6).concurrent()),
                |_, _| RAN.store(true, Ordering::SeqCst),
            );
        }),
        ("commutative twice", |df, r| {
            df.spawn((r.commutative(), r.part(1..2).commutative()), |_, _| {
                RAN.store(true, Ordering::SeqCst)
            });
        }),
        ("element commutative + element read", |df, r| {
            df.spawn((r.at(3).commutative(), r.at(3).read()), |_, _| {
                RAN.store(true, Ordering::SeqCst)
            });
        }),
        ("element commutative + part concurrent", |df, r| {
            df.spawn(
                (r.at(3).commutative(), r.part(2..5).concurrent()),
                |_, _| RAN.store(true, Ordering::SeqCst),
            );
        }),
    ];
    for config in configs() {
        for (name, spawn) in cases {
            let mut v = vec![0u64; 8];
            RAN.store(false, Ordering::SeqCst);
            let r = rt.install(|| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    dataflow::scope_with(config, |df| {
                        let r = df.region(&mut v);
                        spawn(df, &r);
                        df.spawn(r.out(), |_, v| v.fill(9));
                    })
                }))
            });
            let p = r.expect_err(name);
            let msg = crate::message(&*p);
            assert!(
                msg.contains("overlap and one of them writes"),
                "{name}, {config:?}: {msg}"
            );
            assert!(
                !RAN.load(Ordering::SeqCst),
                "{name}, {config:?}: the refused task ran"
            );
            assert_eq!(v, [0; 8], "{name}, {config:?}: a later task ran");
        }
    }
}
