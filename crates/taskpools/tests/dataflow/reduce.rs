//! Reductions from the outside: random programs of reductions (two operators), reads and
//! writes against the sequential fold; members that must run together; one copy per worker;
//! nesting; folding before `wait_for`, `sync` and the scope's end; panics and cancels.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use taskpools::dataflow::{self, Cause, Config};
use taskpools::Runtime;

use crate::{message, wait_until, within};

const N: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Read,
    InOut,
    Sum,
    Max,
}

#[derive(Clone, Debug)]
struct Acc {
    lo: usize,
    hi: usize,
    kind: Kind,
}

fn add(a: &mut u64, x: u64) {
    *a = a.wrapping_add(x);
}

fn max(a: &mut u64, x: u64) {
    *a = (*a).max(x);
}

fn mix(a: u64, b: u64) -> u64 {
    let mut x = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^ (x >> 32)
}

/// What task `id` folds into element `j` of a reduction.
fn contribution(id: usize, j: usize) -> u64 {
    mix(id as u64, j as u64) >> 8
}

fn gen_program(seed: u64) -> Vec<Vec<Acc>> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let kinds = [Kind::Read, Kind::InOut, Kind::Sum, Kind::Sum, Kind::Max];
    (0..rng.usize(4..60))
        .map(|_| {
            let mut accs: Vec<Acc> = Vec::new();
            for _ in 0..rng.usize(1..=2) {
                // Few distinct parts, so that groups form (and some overlap partly).
                let (lo, hi) = [(0, 4), (4, 8), (0, 8), (8, N), (2, 6)][rng.usize(..5)];
                let kind = kinds[rng.usize(..kinds.len())];
                let clash = accs.iter().any(|b| {
                    lo < b.hi && b.lo < hi && !(kind == Kind::Read && b.kind == Kind::Read)
                });
                if !clash {
                    accs.push(Acc { lo, hi, kind });
                }
            }
            accs
        })
        .collect()
}

/// The program run in order: the data at the end and what each task read.
fn sequential(prog: &[Vec<Acc>]) -> (Vec<u64>, Vec<u64>) {
    let mut data: Vec<u64> = (0..N as u64).collect();
    let mut seen = vec![0u64; prog.len()];
    for (id, accs) in prog.iter().enumerate() {
        for a in accs {
            for (j, x) in data.iter_mut().enumerate().take(a.hi).skip(a.lo) {
                match a.kind {
                    Kind::Read => seen[id] = mix(seen[id], *x),
                    Kind::InOut => *x = mix(*x, id as u64),
                    Kind::Sum => add(x, contribution(id, j)),
                    Kind::Max => max(x, contribution(id, j)),
                }
            }
        }
    }
    (data, seen)
}

fn parallel(prog: &[Vec<Acc>], config: Config) -> (Vec<u64>, Vec<u64>) {
    let mut data: Vec<u64> = (0..N as u64).collect();
    let mut seen = vec![0u64; prog.len()];
    dataflow::scope_with(config, |df| {
        let (d, s) = (df.region(&mut data), df.region(&mut seen));
        for (id, accs) in prog.iter().enumerate() {
            let of = |k: Kind| accs.iter().filter(move |a| a.kind == k);
            let reads: Vec<_> = of(Kind::Read).map(|a| d.part(a.lo..a.hi).read()).collect();
            let inouts: Vec<_> = of(Kind::InOut)
                .map(|a| d.part(a.lo..a.hi).inout())
                .collect();
            let sums: Vec<_> = of(Kind::Sum)
                .map(|a| d.part(a.lo..a.hi).reduce(0, add))
                .collect();
            let maxes: Vec<_> = of(Kind::Max)
                .map(|a| d.part(a.lo..a.hi).reduce(0, max))
                .collect();
            let lo = |k: Kind| of(k).map(|a| a.lo).collect::<Vec<_>>();
            let (sum_lo, max_lo) = (lo(Kind::Sum), lo(Kind::Max));
            df.spawn(
                (reads, inouts, sums, maxes, s.at(id).out()),
                move |_, (reads, inouts, sums, maxes, seen)| {
                    // The parts of one task are disjoint (or all read): any order will do.
                    for v in reads {
                        v.iter().for_each(|x| *seen = mix(*seen, *x));
                    }
                    for v in inouts {
                        v.iter_mut().for_each(|x| *x = mix(*x, id as u64));
                    }
                    for (mut p, lo) in sums.into_iter().zip(sum_lo) {
                        for (k, x) in p.iter_mut().enumerate() {
                            add(x, contribution(id, lo + k));
                        }
                    }
                    for (mut p, lo) in maxes.into_iter().zip(max_lo) {
                        for (k, x) in p.iter_mut().enumerate() {
                            max(x, contribution(id, lo + k));
                        }
                    }
                },
            );
        }
    });
    (data, seen)
}

fn configs() -> Vec<Config> {
    vec![
        Config::default(),
        Config::thesis(),
        Config::blocks(16).unwrap(),
    ]
}

#[test]
fn random_programs_of_reductions_match_the_sequential_fold() {
    let small = std::env::var_os("TASKPOOLS_STRESS").is_some_and(|v| v == "small");
    let seeds = if small { 20u64 } else { 150 };
    for threads in [1, 2, 4] {
        within("random programs", move || {
            let rt = Runtime::new(threads).unwrap();
            for (ci, config) in configs().into_iter().enumerate() {
                for seed in 0..seeds {
                    let seed = seed + 1000 * ci as u64;
                    let prog = gen_program(seed);
                    let want = sequential(&prog);
                    let got = rt.install(|| parallel(&prog, config));
                    assert_eq!(
                        got.0, want.0,
                        "data, seed {seed}, {threads} threads, {config:?}"
                    );
                    assert_eq!(
                        got.1, want.1,
                        "reads, seed {seed}, {threads} threads, {config:?}"
                    );
                }
            }
        });
    }
}

#[test]
fn two_reductions_into_one_part_run_together() {
    // A barrier of two between two members of a group: run as `inout`, the first would wait
    // for the second forever (here: five seconds, then fail).
    let rt = Runtime::new(2).unwrap();
    for config in configs() {
        let mut v = vec![1u64; 4];
        let (arrived, met) = (AtomicUsize::new(0), AtomicUsize::new(0));
        rt.install(|| {
            dataflow::scope_with(config, |df| {
                let r = df.region(&mut v);
                for _ in 0..2 {
                    df.spawn(r.reduce(0, add), |_, mut p| {
                        p[0] += 1;
                        arrived.fetch_add(1, Ordering::SeqCst);
                        if wait_until(|| arrived.load(Ordering::SeqCst) == 2) {
                            met.fetch_add(1, Ordering::SeqCst);
                        }
                    });
                }
                df.spawn(r.read(), |_, v| assert_eq!(v[0], 3));
            })
        });
        assert_eq!(met.into_inner(), 2, "{config:?}: the members never met");
        assert_eq!(v, [3, 1, 1, 1]);
    }
}

#[test]
fn one_worker_keeps_one_copy_for_the_whole_group() {
    // A copy per worker, not per task: on one worker, each member finds what the earlier
    // ones added (a copy per task would start every member at 0).
    let rt = Runtime::new(1).unwrap();
    let mut v = vec![0u64];
    let starts = std::sync::Mutex::new(Vec::new());
    rt.install(|| {
        dataflow::scope(|df| {
            let r = df.region(&mut v);
            for _ in 0..10 {
                df.spawn(r.at(0).reduce(0, add), |_, mut p| {
                    starts.lock().unwrap().push(*p);
                    *p += 1;
                });
            }
        })
    });
    let mut starts = starts.into_inner().unwrap();
    starts.sort_unstable();
    assert_eq!(starts, (0..10).collect::<Vec<u64>>());
    assert_eq!(v, [10]);
}

#[test]
fn groups_closed_and_opened_again_keep_their_members_apart() {
    // Groups close and open while members of other parts and operators come between: each
    // member joins the group of its own part and operator, whatever group it or its
    // predecessor found before (a group's place is reused once it closes).
    for threads in [1, 2] {
        let rt = Runtime::new(threads).unwrap();
        let mut v = vec![0u64; 3];
        rt.install(|| {
            dataflow::scope(|df| {
                let r = df.region(&mut v);
                for _ in 0..3 {
                    df.spawn(r.at(0).reduce(0, add), |_, mut p| *p += 1);
                }
                // Closes the group on element 0; the next opens on element 1.
                df.spawn(r.at(0).inout(), |_, x| *x += 100);
                df.spawn(r.at(1).reduce(0, add), |_, mut p| *p += 1);
                for i in 0..4u64 {
                    df.spawn(r.at(0).reduce(0, add), |_, mut p| *p += 1);
                    df.spawn(r.at(2).reduce(0, max), move |_, mut p| *p = (*p).max(i));
                    df.spawn(r.at(1).reduce(0, add), |_, mut p| *p += 10);
                }
                // Another operator on element 0 closes its sums, then opens a group of its own.
                df.spawn(r.at(0).reduce(0, max), |_, mut p| *p = (*p).max(1000));
                df.spawn(r.at(0).reduce(0, max), |_, mut p| *p = (*p).max(7));
                df.spawn(r.at(2).reduce(0, add), |_, mut p| *p += 5);
            })
        });
        assert_eq!(v, [1000, 41, 8], "{threads} threads");
    }
}

#[test]
fn members_with_nested_reductions_into_their_copies() {
    // Each member runs a data-flow scope of its own whose tasks reduce into the member's
    // copy; that scope folds them in before it returns, and the copies go into the data
    // after. (A copy cannot be a region of the member's own scope: it is dropped, and given
    // back, when the member's closure returns, before the member's children are waited for.)
    let rt = Runtime::new(2).unwrap();
    let mut v = vec![5u64; 3];
    within("nested reductions", move || {
        rt.install(|| {
            dataflow::scope(|df| {
                let r = df.region(&mut v);
                for i in 0..20u64 {
                    df.spawn(r.reduce(0, add), move |_, mut p| {
                        dataflow::scope(|inner| {
                            let c = inner.region(&mut p[..]);
                            for j in 0..3u64 {
                                inner.spawn(c.at(j as usize).reduce(0, add), move |_, mut x| {
                                    *x += i * 10 + j;
                                });
                            }
                        });
                    });
                }
            });
        });
        // Sum over i of (10 i + j), plus the initial 5.
        let want: Vec<u64> = (0..3).map(|j| 5 + 10 * 190 + 20 * j).collect();
        assert_eq!(v, want);
    });
}

#[test]
fn wait_for_sync_and_the_end_see_the_folded_value() {
    let rt = Runtime::new(2).unwrap();
    let mut v = vec![0u64; 2];
    let (a, b) = rt.install(|| {
        dataflow::scope(|df| {
            let r = df.region(&mut v);
            for i in 1..=10 {
                df.spawn(r.at(0).reduce(0, add), move |_, mut p| *p += i);
            }
            let a = df.wait_for(r.at(0).read(), |x| *x);
            for i in 1..=10 {
                df.spawn(r.at(1).reduce(0, add), move |_, mut p| *p += i);
            }
            df.sync();
            let b = df.wait_for(r.read(), |v| v.to_vec());
            for _ in 0..3 {
                df.spawn(r.at(1).reduce(1, |m: &mut u64, x| *m *= x), |_, mut p| {
                    *p *= 2
                });
            }
            (a, b)
        })
    });
    assert_eq!((a, b), (55, vec![55, 55]));
    assert_eq!(v, [55, 440]);
}

#[test]
fn a_reduction_of_non_copy_values_drops_each_copy_once() {
    // Vectors: clones, moves and drops (ASan and valgrind run this test too).
    let rt = Runtime::new(2).unwrap();
    let mut v = vec![Vec::<u32>::new(); 2];
    rt.install(|| {
        dataflow::scope(|df| {
            let r = df.region(&mut v);
            for i in 0..50u32 {
                df.spawn(
                    r.reduce(Vec::new(), |a: &mut Vec<u32>, x| a.extend(x)),
                    move |_, mut p| p[(i % 2) as usize].push(i),
                );
            }
        })
    });
    for (k, part) in v.iter_mut().enumerate() {
        part.sort_unstable();
        assert_eq!(
            *part,
            (0..50).filter(|i| i % 2 == k as u32).collect::<Vec<_>>()
        );
    }
}

#[test]
fn a_panicking_member_fails_the_scope_without_a_hang() {
    let rt = Runtime::new(2).unwrap();
    within("a panicking member", move || {
        let mut v = vec![0u64; 4];
        let r = catch_unwind(AssertUnwindSafe(|| {
            rt.install(|| {
                dataflow::scope(|df| {
                    let r = df.region(&mut v);
                    for i in 0..8 {
                        df.spawn(r.reduce(0, add), move |_, mut p| {
                            p[0] += 1;
                            assert!(i != 3, "member three fails");
                        });
                    }
                    df.spawn(r.read(), |_, _| unreachable!("after a failed member"));
                })
            })
        }));
        assert_eq!(message(&*r.unwrap_err()), "member three fails");
        // The combine was cancelled: the data is as it was.
        assert_eq!(v, [0; 4]);
    });
}

#[test]
fn a_cancelled_scope_with_open_reductions_ends() {
    let rt = Runtime::new(2).unwrap();
    let mut v = vec![0u64; 4];
    let r = rt.install(|| {
        dataflow::try_scope(Config::default(), |df| {
            let r = df.region(&mut v);
            for _ in 0..8 {
                df.spawn(r.reduce(0, add), |_, mut p| p[0] += 1);
            }
            df.cancel();
        })
    });
    assert!(matches!(r.unwrap_err().cause, Cause::Cancelled));
}

#[test]
fn misuses_are_refused_with_a_message() {
    let rt = Runtime::new(2).unwrap();
    let mut v = vec![0u64; 4];
    let e = catch_unwind(AssertUnwindSafe(|| {
        rt.install(|| {
            dataflow::scope(|df| {
                let r = df.region(&mut v);
                df.spawn((r.reduce(0, add), r.at(0).read()), |_, _| {});
            })
        })
    }));
    assert!(message(&*e.unwrap_err()).contains("one of them is a reduction"));
    let e = catch_unwind(AssertUnwindSafe(|| {
        rt.install(|| {
            dataflow::scope(|df| {
                let r = df.region(&mut v);
                df.wait_for(r.reduce(0, add), |_| {});
            })
        })
    }));
    assert!(message(&*e.unwrap_err()).contains("not commutative, reduction or weak ones"));
}

#[test]
fn empty_reductions_fold_nothing_and_disturb_no_group() {
    // Ranges from CSR-like bounds (one empty), and an empty reduction inside an open group:
    // neither may hide the group from a later read or merge with a neighbour.
    let rt = Runtime::new(2).unwrap();
    let mut v = vec![0u64; 10];
    let seen = rt.install(|| {
        dataflow::scope(|df| {
            let r = df.region(&mut v);
            df.spawn(r.part(0..10).reduce(0, add), |_, mut p| p[7] += 1);
            df.spawn(r.part(5..5).reduce(0, add), |_, p| assert!(p.is_empty()));
            let seen = df.wait_for(r.part(6..8).read(), |s| s[1]);
            for w in [0usize, 2, 2, 5].windows(2) {
                df.spawn(r.part(w[0]..w[1]).reduce(0, max), move |_, mut p| {
                    p.iter_mut().for_each(|x| *x = 9);
                });
            }
            seen
        })
    });
    assert_eq!(seen, 1);
    assert_eq!(v, [9, 9, 9, 9, 9, 0, 0, 1, 0, 0]);
}

#[test]
fn a_forgotten_copy_fails_the_combine_instead_of_losing_contributions() {
    let rt = Runtime::new(1).unwrap();
    let mut v = vec![5u64];
    let r = catch_unwind(AssertUnwindSafe(|| {
        rt.install(|| {
            dataflow::scope(|df| {
                let r = df.region(&mut v);
                for i in 0..4 {
                    df.spawn(r.at(0).reduce(0, add), move |_, mut p| {
                        *p += 1;
                        if i == 2 {
                            std::mem::forget(p);
                        }
                    });
                }
            })
        })
    }));
    let m = message(&*r.unwrap_err());
    assert!(m.contains("were never given back"), "{m}");
    assert_eq!(v, [5]);
}

#[test]
fn a_copy_dropped_in_a_caught_unwind_is_still_folded() {
    // The member catches its own panic and completes: its copy (and what earlier members
    // on its worker left in it) is kept unfolded during the unwind and folded by the combine.
    let rt = Runtime::new(1).unwrap();
    let mut v = vec![0u64];
    rt.install(|| {
        dataflow::scope(|df| {
            let r = df.region(&mut v);
            for i in 0..6 {
                df.spawn(r.at(0).reduce(0, add), move |_, mut p| {
                    *p += 1;
                    if i == 3 {
                        let _ = catch_unwind(AssertUnwindSafe(move || {
                            let _keep = p;
                            panic!("caught inside the member");
                        }));
                    }
                });
            }
        })
    });
    assert_eq!(v, [6]);
}
