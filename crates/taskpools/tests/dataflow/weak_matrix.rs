//! Weak sub-matrices: two levels of tiles (a task per tile, declared weak, hands its tile to
//! tasks on sub-tiles) against the sequential elision on 1, 2 and 4 threads under exact and
//! block tables; early release of one tile while the same task's children on the tile beside
//! it (whose rows interleave with it in memory) still run; weak reads; a strided weak part
//! refused as a region.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use taskpools::dataflow::{self, Config};
use taskpools::Runtime;

use crate::{message, wait_until, within};

fn mix(a: u64, b: u64) -> u64 {
    let mut x = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^ (x >> 32)
}

const N: usize = 12;
const TILE: usize = 4;
const SUB: usize = 2;

/// What one step does to a sub-tile of `SUB` × `SUB` at element (r, c): each element folds in
/// its left neighbour in the sub-tile and the step's number, so the result depends on the
/// order of the steps on each element.
fn step(m: &mut [u64], ld: usize, r: usize, c: usize, k: u64) {
    for i in 0..SUB {
        for j in 0..SUB {
            let left = if j > 0 {
                m[(r + i) * ld + c + j - 1]
            } else {
                k
            };
            let x = &mut m[(r + i) * ld + c + j];
            *x = mix(*x, left ^ k);
        }
    }
}

/// The program: for each of `rounds`, a weak task per tile whose children update its
/// sub-tiles, then a strong task per tile row that folds each row into the next tile row's
/// first column. Run as data-flow tasks, or sequentially (the elision) when `df` is `None`.
fn program(m: &mut [u64], rounds: u64, config: Option<Config>) {
    let tiles = N / TILE;
    let Some(config) = config else {
        for k in 0..rounds {
            for (ti, tj) in (0..tiles).flat_map(|i| (0..tiles).map(move |j| (i, j))) {
                for (si, sj) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                    let (r, c) = (ti * TILE + si * SUB, tj * TILE + sj * SUB);
                    step(m, N, r, c, k * 100 + (ti * tiles + tj) as u64);
                }
            }
            for ti in 0..tiles - 1 {
                let s: u64 = m[ti * TILE * N..(ti + 1) * TILE * N]
                    .iter()
                    .fold(0, |h, &x| mix(h, x));
                m[(ti + 1) * TILE * N] ^= s;
            }
        }
        return;
    };
    dataflow::scope_with(config, |df| {
        let r = df.region(m);
        let a = r.matrix(N, N);
        for k in 0..rounds {
            for (ti, tj) in (0..tiles).flat_map(|i| (0..tiles).map(move |j| (i, j))) {
                let id = k * 100 + (ti * tiles + tj) as u64;
                df.spawn(a.tile(ti, tj, TILE).weak_inout(), move |df, w| {
                    let t = df.weak_matrix(w);
                    for (si, sj) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                        df.spawn(t.tile(si, sj, SUB).inout(), move |_, mut s| {
                            // The same step on the sub-tile's own rows.
                            let mut buf = [0u64; SUB * SUB];
                            for i in 0..SUB {
                                buf[i * SUB..(i + 1) * SUB].copy_from_slice(s.row(i));
                            }
                            step(&mut buf, SUB, 0, 0, id);
                            for i in 0..SUB {
                                s.row_mut(i).copy_from_slice(&buf[i * SUB..(i + 1) * SUB]);
                            }
                        });
                    }
                });
            }
            for ti in 0..tiles - 1 {
                let rows = r.part(ti * TILE * N..(ti + 1) * TILE * N).read();
                let next = r.at((ti + 1) * TILE * N).inout();
                df.spawn((rows, next), |_, (rows, next)| {
                    *next ^= rows.iter().fold(0, |h, &x| mix(h, x));
                });
            }
        }
    });
}

#[test]
fn two_levels_of_weak_tiles_match_the_sequential_elision() {
    let start: Vec<u64> = (0..(N * N) as u64).map(|i| mix(i, 7)).collect();
    let mut expected = start.clone();
    program(&mut expected, 3, None);
    for threads in [1, 2, 4] {
        let rt = Runtime::new(threads).unwrap();
        for config in [
            Config::default(),
            Config::blocks(64).unwrap(),
            Config::thesis(),
        ] {
            for _ in 0..10 {
                let mut m = start.clone();
                rt.install(|| program(&mut m, 3, Some(config)));
                assert_eq!(m, expected, "{threads} threads");
            }
        }
    }
}

/// Two tiles side by side, their rows interleaved in memory, each declared weak by one task:
/// a reader of the first waits only for the child on it, not for the child on the second,
/// which waits for that reader (a strict implementation, which releases the tiles only when
/// the task ends, or one that released the rows' whole extent, never meets).
#[test]
fn a_weak_tile_is_released_while_its_neighbours_children_run() {
    within("early release of a weak tile", || {
        let rt = Runtime::new(2).unwrap();
        let released = AtomicBool::new(false);
        let met = AtomicBool::new(true);
        let mut m = vec![0u64; 4 * 8];
        rt.install(|| {
            dataflow::scope(|df| {
                let a = df.region(&mut m).matrix(4, 8);
                let (released, met) = (&released, &met);
                let tiles = [a.tile(0, 0, 4).weak_inout(), a.tile(0, 1, 4).weak_inout()];
                df.spawn(tiles, move |df, [l, r]| {
                    let (l, r) = (df.weak_matrix(l), df.weak_matrix(r));
                    df.spawn(l.sub(0, 0, 4, 4).inout(), |_, mut t| {
                        (0..4).for_each(|i| t.row_mut(i).fill(1))
                    });
                    df.spawn(r.sub(0, 0, 4, 4).inout(), move |_, mut t| {
                        if !wait_until(|| released.load(Ordering::Acquire)) {
                            met.store(false, Ordering::Relaxed);
                        }
                        (0..4).for_each(|i| t.row_mut(i).fill(2));
                    });
                });
                df.spawn(a.tile(0, 0, 4).read(), move |_, t| {
                    for i in 0..4 {
                        assert_eq!(t.row(i), [1; 4], "the tile was released before its child");
                    }
                    released.store(true, Ordering::Release);
                });
                df.spawn(a.sub(0, 0, 4, 8).read(), |_, t| {
                    for i in 0..4 {
                        assert_eq!(t.row(i), [1, 1, 1, 1, 2, 2, 2, 2]);
                    }
                });
            })
        });
        assert!(
            met.load(Ordering::Relaxed),
            "the first tile waited for the whole task"
        );
    });
}

#[test]
fn weak_reads_of_sub_matrices_hand_read_only_matrices_on() {
    let rt = Runtime::new(2).unwrap();
    let mut m: Vec<u64> = (0..36).collect();
    let mut sums = vec![0u64; 4];
    rt.install(|| {
        dataflow::scope(|df| {
            let a = df.region(&mut m).matrix(6, 6);
            let s = df.region(&mut sums);
            // Written first: the weak readers' children wait for it.
            df.spawn(a.sub(1, 1, 4, 4).inout(), |_, mut t| {
                (0..4).for_each(|i| t.row_mut(i).iter_mut().for_each(|x| *x *= 2))
            });
            df.spawn(
                (a.sub(1, 1, 4, 4).weak_read(), s.weak_inout()),
                |df, (w, s)| {
                    let (t, s) = (df.weak_matrix_ref(w), df.weak_region(s));
                    for q in 0..4 {
                        let (i, j) = (q / 2, q % 2);
                        df.spawn((t.tile(i, j, 2).read(), s.at(q).out()), |_, (t, o)| {
                            *o = (0..2).map(|r| t.row(r).iter().sum::<u64>()).sum();
                        });
                    }
                },
            );
        })
    });
    let at = |r: usize, c: usize| 2 * (r * 6 + c) as u64;
    let quad =
        |r0: usize, c0: usize| at(r0, c0) + at(r0, c0 + 1) + at(r0 + 1, c0) + at(r0 + 1, c0 + 1);
    assert_eq!(sums, [quad(1, 1), quad(1, 3), quad(3, 1), quad(3, 3)]);
}

#[test]
fn a_strided_weak_sub_matrix_is_refused_as_a_region() {
    let rt = Runtime::new(1).unwrap();
    let mut m = vec![0u64; 16];
    let r = rt.install(|| {
        catch_unwind(AssertUnwindSafe(|| {
            dataflow::scope(|df| {
                let a = df.region(&mut m).matrix(4, 4);
                df.spawn(a.sub(0, 0, 2, 2).weak_inout(), |df, w| {
                    let _ = df.weak_region(w);
                });
            })
        }))
    });
    let msg = message(&*r.unwrap_err());
    assert!(msg.contains("weak_matrix"), "{msg}");
    // A full-width sub-matrix is one run of elements: a region, or a matrix of its rows.
    let mut v = vec![0u64; 16];
    rt.install(|| {
        dataflow::scope(|df| {
            let a = df.region(&mut v).matrix(4, 4);
            df.spawn(a.sub(1, 0, 2, 4).weak_inout(), |df, w| {
                let r = df.weak_region(w);
                df.spawn(r.inout(), |_, x| x.fill(3));
            });
            df.spawn(a.sub(3, 0, 1, 4).weak_inout(), |df, w| {
                let m = df.weak_matrix(w);
                assert_eq!((m.rows(), m.cols()), (1, 4));
                df.spawn(m.sub(0, 1, 1, 2).inout(), |_, mut t| t.row_mut(0).fill(5));
            });
        })
    });
    assert_eq!(v, [0, 0, 0, 0, 3, 3, 3, 3, 3, 3, 3, 3, 0, 5, 5, 0]);
}

/// Three levels: a task declares the two halves of a tile weak (release is per weak part),
/// and hands each to a child that declares it weak in turn, whose own child writes it. A
/// reader of one half waits only for that half's grandchild, while the other half's
/// grandchild waits for the reader.
#[test]
fn weak_sub_matrices_of_weak_matrices_release_per_part() {
    within("three weak levels", || {
        let rt = Runtime::new(2).unwrap();
        let released = AtomicBool::new(false);
        let met = AtomicBool::new(true);
        let mut m = vec![0u64; 8 * 8];
        rt.install(|| {
            dataflow::scope(|df| {
                let a = df.region(&mut m).matrix(8, 8);
                let (released, met) = (&released, &met);
                let halves = [
                    a.sub(4, 4, 4, 2).weak_inout(),
                    a.sub(4, 6, 4, 2).weak_inout(),
                ];
                df.spawn(halves, move |df, halves| {
                    for (k, h) in halves.into_iter().enumerate() {
                        let h = df.weak_matrix(h);
                        df.spawn(h.sub(0, 0, 4, 2).weak_inout(), move |df, h| {
                            let h = df.weak_matrix(h);
                            df.spawn(h.sub(0, 0, 4, 2).inout(), move |_, mut s| {
                                if k == 1 && !wait_until(|| released.load(Ordering::Acquire)) {
                                    met.store(false, Ordering::Relaxed);
                                }
                                (0..4).for_each(|i| s.row_mut(i).fill(k as u64 + 1));
                            });
                        });
                    }
                });
                df.spawn(a.sub(4, 4, 4, 2).read(), move |_, s| {
                    for i in 0..4 {
                        assert_eq!(s.row(i), [1, 1], "the half was released before its writer");
                    }
                    released.store(true, Ordering::Release);
                });
                df.spawn(a.sub(4, 4, 4, 4).read(), |_, s| {
                    for i in 0..4 {
                        assert_eq!(s.row(i), [1, 1, 2, 2]);
                    }
                });
            })
        });
        assert!(
            met.load(Ordering::Relaxed),
            "the first half waited for the whole task"
        );
    });
}

#[test]
fn weak_reads_of_read_only_sub_matrices_and_empty_weak_parts() {
    let rt = Runtime::new(2).unwrap();
    let data: Vec<u64> = (0..16).collect();
    let mut out = vec![0u64; 2];
    let mut m = vec![7u64; 16];
    rt.install(|| {
        dataflow::scope(|df| {
            let a = df.region_ref(&data).matrix(4, 4);
            let o = df.region(&mut out);
            df.spawn(
                (a.sub(1, 1, 2, 2).weak_read(), o.weak_inout()),
                |df, (w, o)| {
                    let (t, o) = (df.weak_matrix_ref(w), df.weak_region(o));
                    df.spawn((t.sub(0, 0, 2, 1).read(), o.at(0).out()), |_, (c, o)| {
                        *o = c.row(0)[0] + c.row(1)[0];
                    });
                    df.spawn((t.sub(0, 1, 2, 1).read(), o.at(1).out()), |_, (c, o)| {
                        *o = c.row(0)[0] + c.row(1)[0];
                    });
                },
            );
            // Empty weak sub-matrices: no rows, or rows of no elements; either way taken.
            let b = df.region(&mut m).matrix(4, 4);
            df.spawn(
                (
                    b.sub(1, 2, 3, 0).weak_inout(),
                    b.sub(4, 0, 0, 4).weak_inout(),
                ),
                |df, (w, z)| {
                    assert!(w.is_empty() && z.is_empty());
                    let r = df.weak_region(w);
                    assert!(r.is_empty());
                    let z = df.weak_matrix(z);
                    assert_eq!((z.rows(), z.cols()), (0, 4));
                },
            );
            df.spawn(b.sub(0, 0, 4, 4).inout(), |_, mut t| t[(3, 3)] = 9);
        })
    });
    assert_eq!(out, [5 + 9, 6 + 10]);
    assert_eq!(m[15], 9);
}
