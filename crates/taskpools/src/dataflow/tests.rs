//! Unit tests of the spawn path's rectangle mode and of footprints' byte rectangles.

use std::ptr;

use super::lut::Rect;
use super::*;

/// Whether each region of the scope's frame is still in rectangle mode.
fn rect_modes(df: &Scope<'_, '_>) -> Vec<bool> {
    // SAFETY (test): the frame's thread, and no other reference into its local state.
    let l = unsafe { df.frame().local() };
    l.regions.iter().map(|r| r.rects.is_some()).collect()
}

/// Each region's mode: `None` row by row, `Some(false)` rectangle mode, `Some(true)` grid
/// mode.
fn grid_modes(df: &Scope<'_, '_>) -> Vec<Option<bool>> {
    // SAFETY (test): the frame's thread, and no other reference into its local state.
    let l = unsafe { df.frame().local() };
    l.regions
        .iter()
        .map(|r| r.rects.as_ref().map(|m| m.in_grid()))
        .collect()
}

/// The spawn path takes tile accesses of an exact table in rectangle mode, leaves it at
/// the first one-row access, and starts it again after a sync; block tables never use it.
#[test]
fn exact_spawns_use_rectangle_mode_until_a_row_access() {
    let mut data = vec![0u32; 16 * 16];
    let mut other = vec![0u32; 64];
    scope_with(Config::exact().with_index_block(64).unwrap(), |df| {
        let r = df.region(&mut data[..]);
        let m = r.matrix(16, 16);
        let s = df.region(&mut other[..]);
        df.spawn((m.tile(0, 0, 4).inout(),), |_, (mut t,)| {
            t.row_mut(0)[0] += 1
        });
        df.spawn(
            (m.tile(0, 0, 4).read(), m.tile(1, 0, 4).inout()),
            |_, (a, mut b)| {
                b.row_mut(0)[0] += a.row(0)[0];
            },
        );
        assert_eq!(rect_modes(df), [true, true]);
        // A whole slice is one row: that region leaves, the other stays.
        df.spawn((s.all().inout(),), |_, (o,)| o[0] += 1);
        assert_eq!(rect_modes(df), [true, false]);
        // One row of the matrix ends it there too.
        df.spawn((m.sub(3, 0, 1, 16).read(),), |_, _| {});
        assert_eq!(rect_modes(df), [false, false]);
        df.sync();
        assert_eq!(rect_modes(df), [true, true]);
        df.spawn((m.tile(1, 1, 4).inout(),), |_, (mut t,)| {
            t.row_mut(3)[3] = 7
        });
        assert_eq!(rect_modes(df), [true, true]);
    });
    assert_eq!((data[0], data[4 * 16], data[7 * 16 + 7]), (1, 1, 7));
    assert_eq!(other[0], 1);
    let mut data = vec![0u32; 16 * 16];
    scope_with(Config::blocks(64).unwrap(), |df| {
        let m = df.region(&mut data[..]).matrix(16, 16);
        df.spawn((m.tile(0, 0, 4).inout(),), |_, _| {});
        assert_eq!(rect_modes(df), [false]);
    });
}

/// A tile read with its one-element halo overlaps the tiles around it in part: the spawn
/// path turns rectangle mode into grid mode (still one state per piece, not per row), and
/// an access of another row stride ends it; the results are those of the sequential sweep.
#[test]
fn halo_reads_turn_rectangle_mode_into_grid_mode() {
    let n = 16;
    let mut src: Vec<u32> = (0..(n * n) as u32).collect();
    let mut dst = vec![0u32; n * n];
    // Each tile of 4 x 4 of `dst` gets the sum of its halo in `src`, sequentially.
    let sum = |s: &[u32], (r0, c0, h, w): (usize, usize, usize, usize)| -> u32 {
        (r0..r0 + h)
            .flat_map(|r| (c0..c0 + w).map(move |c| s[r * n + c]))
            .sum()
    };
    let halo = |i: usize, j: usize| {
        let (r0, c0) = ((4 * i).saturating_sub(1), (4 * j).saturating_sub(1));
        (r0, c0, (4 * i + 5).min(n) - r0, (4 * j + 5).min(n) - c0)
    };
    let mut expect = vec![0u32; n * n];
    for i in 0..4 {
        for j in 0..4 {
            let v = sum(&src, halo(i, j));
            for r in 4 * i..4 * i + 4 {
                for c in 4 * j..4 * j + 4 {
                    expect[r * n + c] = v;
                }
            }
        }
    }
    scope_with(Config::exact(), |df| {
        let rs = df.region(&mut src[..]);
        let (ms, md) = (rs.matrix(n, n), df.region(&mut dst[..]).matrix(n, n));
        for i in 0..4 {
            for j in 0..4 {
                let (r0, c0, h, w) = halo(i, j);
                df.spawn(
                    (ms.sub(r0, c0, h, w).read(), md.tile(i, j, 4).out()),
                    move |_, (a, mut t)| {
                        let v: u32 = (0..a.rows()).flat_map(|r| a.row(r).iter().copied()).sum();
                        for r in 0..4 {
                            t.row_mut(r).fill(v);
                        }
                    },
                );
            }
        }
        // Halos overlap the tiles around them: grid mode on the source; the tiles written
        // are disjoint: rectangle mode on the output.
        assert_eq!(grid_modes(df), [Some(true), Some(false)]);
        // The source as 8 rows of 32: rows twice as far apart, row by row from now on.
        df.spawn((rs.matrix(8, 32).sub(0, 0, 2, 1).read(),), |_, _| {});
        assert_eq!(grid_modes(df), [None, Some(false)]);
        // A write of a tile that four halos read (the table's state kept across both
        // changes of mode): it must run after them, or their sums would see its zero.
        df.spawn((ms.tile(1, 1, 4).inout(),), |_, (mut t,)| {
            t.row_mut(0)[0] = 0
        });
    });
    assert_eq!(dst, expect);
    // The write ran.
    assert_eq!(src[4 * n + 4], 0);
}

fn fp(start: usize, len: usize, rows: usize, ld: usize) -> Footprint {
    Footprint {
        frame: ptr::null(),
        region: 0,
        start,
        len,
        ld,
        rows,
        mode: super::footprint::Mode::Read,
        reduce: None,
        weak: false,
    }
}

#[test]
fn footprint_bytes_are_the_rectangle_or_none() {
    let r = |lo, len, rows, stride| {
        Some(Rect {
            lo,
            len,
            rows,
            stride,
        })
    };
    // 4-byte elements, a region of 100 elements.
    assert_eq!(fp(2, 3, 4, 10).bytes(4, 400), r(8, 12, 4, 40));
    // One row: no stride.
    assert_eq!(fp(2, 3, 1, 10).bytes(4, 400), r(8, 12, 1, 0));
    // Up to the region's last byte, exactly.
    assert_eq!(fp(90, 10, 1, 0).bytes(4, 400), r(360, 40, 1, 0));
    assert_eq!(fp(0, 10, 10, 10).bytes(4, 400), r(0, 40, 10, 40));
    // Empty.
    assert_eq!(fp(5, 0, 3, 10).bytes(4, 400), None);
    assert_eq!(fp(5, 3, 0, 10).bytes(4, 400), None);
    // Zero-sized elements: the region's one byte, whatever the indices.
    assert_eq!(fp(usize::MAX - 1, 7, 9, 3).bytes(0, 0), r(0, 1, 1, 0));
}

#[test]
#[should_panic(expected = "an access outside its region")]
fn a_footprint_one_element_past_the_region_panics() {
    let _ = fp(0, 10, 10, 10).bytes(4, 399);
}

#[test]
#[should_panic(expected = "an access outside its region")]
fn a_footprint_whose_bytes_overflow_panics() {
    // Without checked arithmetic this would wrap to a small end inside the region.
    let _ = fp(2, 1, 2, usize::MAX / 4 + 1).bytes(4, 400);
}

/// The self-overlap check as it was before the sweep: fast paths for two single rows and for
/// two rectangles of one layout, else every row of one against every row of the other. The
/// oracle of the property test below.
fn overlaps_by_pairs(s: &Footprint, o: &Footprint) -> bool {
    if s.len == 0 || o.len == 0 || s.rows == 0 || o.rows == 0 {
        return false;
    }
    if s.rows == 1 && o.rows == 1 {
        return s.start < o.start + o.len && o.start < s.start + s.len;
    }
    if s.ld == o.ld && s.ld > 0 {
        let (r1, c1) = (s.start / s.ld, s.start % s.ld);
        let (r2, c2) = (o.start / o.ld, o.start % o.ld);
        if c1 + s.len <= s.ld && c2 + o.len <= o.ld {
            return r1 < r2 + o.rows && r2 < r1 + s.rows && c1 < c2 + o.len && c2 < c1 + s.len;
        }
    }
    s.row_ranges()
        .any(|(a, b)| o.row_ranges().any(|(c, d)| a < d && c < b))
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]
    /// The check gives the old check's answer on small footprints of any shape (rows wider
    /// than their stride included), and that answer is whether they share an element.
    #[test]
    fn the_overlap_check_agrees_with_comparing_every_pair_of_rows(
        a in (0usize..40, 0usize..8, 0usize..12, 0usize..8),
        b in (0usize..40, 0usize..8, 0usize..12, 0usize..8),
    ) {
        let (a, b) = (fp(a.0, a.1, a.3, a.2), fp(b.0, b.1, b.3, b.2));
        let elems = |f: &Footprint| -> std::collections::BTreeSet<usize> {
            f.row_ranges().flat_map(|(lo, hi)| lo..hi).collect()
        };
        let shared = !elems(&a).is_disjoint(&elems(&b));
        proptest::prop_assert_eq!(overlaps_by_pairs(&a, &b), shared, "{:?} {:?}", a, b);
        proptest::prop_assert_eq!(a.overlaps(&b), shared, "{:?} {:?}", a, b);
        proptest::prop_assert_eq!(b.overlaps(&a), shared, "{:?} {:?}", a, b);
    }
}

/// Two strided accesses of 60 000 rows each with different leading dimensions (one on the
/// even elements, the other on every fourth odd one): the check compares at most one pair of
/// rows per row of either (a count, not a time, so it cannot flake; comparing every pair was
/// 3.6e9 comparisons, 4.5 s). They do not overlap; moved onto the even elements, they do, and
/// the sweep finds the first shared row at once.
#[test]
fn the_overlap_check_of_two_strided_accesses_is_linear_in_their_rows() {
    const ROWS: usize = 60_000;
    let evens = fp(0, 1, ROWS, 2);
    let odds = fp(1, 1, ROWS, 4);
    let mut steps = 0;
    assert!(!evens.overlaps_counted(&odds, &mut steps));
    assert!(steps <= 2 * ROWS as u64, "{steps} row pairs compared");
    let mut steps = 0;
    assert!(!odds.overlaps_counted(&evens, &mut steps));
    assert!(steps <= 2 * ROWS as u64, "{steps} row pairs compared");
    let mut steps = 0;
    assert!(evens.overlaps_counted(&fp(ROWS * 2 - 4, 1, ROWS, 4), &mut steps));
    assert!(steps <= 2 * ROWS as u64, "{steps} row pairs compared");
}

/// Under Miri (`scripts/test.sh` runs `dataflow::tests::miri_`): prioritized tasks through
/// the per-worker heaps and their tickets, stolen and not, moved by a thief and spare, with
/// a dependence and a cancel (the ticket's pointer must reach the whole slice of slots).
#[test]
fn miri_prioritized_tasks_run_once_through_their_tickets() {
    let _one = PRIORITIZED.lock().unwrap_or_else(|e| e.into_inner());
    let rt = crate::Runtime::new(2).unwrap();
    let mut v = [0u32; 4];
    rt.install(|| {
        scope(|df| {
            let r = df.region(&mut v[..]);
            for i in 0..4 {
                df.spawn_with_priority(i as i16, r.at(i).inout(), |_, x| *x += 1);
            }
            df.spawn_with_priority(1, r.at(0).inout(), |_, x| *x += 10);
        })
    });
    assert_eq!(v, [11, 1, 1, 1]);
    // Independent tasks, all queued in the spawner's heap before it throttles: a thief that
    // takes a ticket moves half of the rest into its own heap (spare tickets left behind,
    // which the scope's end waits for).
    let mut w = [0u8; 100];
    rt.install(|| {
        scope(|df| {
            let r = df.region(&mut w[..]);
            for i in 0..100 {
                df.spawn_with_priority((i % 3) as i16, r.at(i).inout(), |_, x| {
                    // (Under Miri, lets the other worker run: it steals.)
                    std::thread::yield_now();
                    *x += 1
                });
            }
        })
    });
    assert_eq!(w, [1; 100]);
    let e = rt
        .install(|| {
            try_scope(Config::default(), |df| {
                let r = df.region(&mut v[..]);
                df.spawn_with_priority(2, r.at(0).inout(), |df, _| df.cancel());
                df.spawn_with_priority(1, r.at(0).inout(), |_, x| *x = 0);
            })
        })
        .unwrap_err();
    assert_eq!((e.is_cancelled(), e.skipped, v[0]), (true, 1, 11));
}

/// One prioritized unit test at a time: `priority::MOVES` counts the moves of the process.
static PRIORITIZED: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Thieves do move prioritized tasks between the heaps (what the stress test in
/// `tests/dataflow/priority.rs` relies on to cover the moves).
#[test]
#[cfg_attr(miri, ignore)]
fn thieves_move_prioritized_tasks_between_heaps() {
    use std::sync::atomic::Ordering::Relaxed;
    let _one = PRIORITIZED.lock().unwrap_or_else(|e| e.into_inner());
    let rt = crate::Runtime::new(2).unwrap();
    let before = super::priority::MOVES.load(Relaxed);
    let mut v = vec![0u8; 2000];
    for round in 0..200 {
        rt.install(|| {
            scope(|df| {
                let r = df.region(&mut v[..]);
                for i in 0..2000 {
                    df.spawn_with_priority((i % 3) as i16, r.at(i).inout(), |_, x| *x += 1);
                }
            })
        });
        if super::priority::MOVES.load(Relaxed) > before {
            assert!(v.iter().all(|&x| usize::from(x) == round + 1));
            return;
        }
    }
    panic!("no thief moved a task in 200 scopes of 2000 tasks");
}

/// Under Miri (`cargo +nightly miri test -p taskpools --lib dataflow::tests::miri_`):
/// reductions, whose members reach their reducer through a raw pointer and whose combine
/// writes the part through another; with non-`Copy` values (clones, moves, drops), a group
/// closed by a later access, one closed by the scope's end, and a member on each worker.
#[test]
fn miri_reductions_fold_their_copies_once() {
    let rt = crate::Runtime::new(2).unwrap();
    let mut v = vec![Vec::<u32>::new(); 2];
    let mut n = [0u64; 1];
    rt.install(|| {
        scope(|df| {
            let (r, c) = (df.region(&mut v[..]), df.region(&mut n[..]));
            for i in 0..6u32 {
                let join = |a: &mut Vec<u32>, x: Vec<u32>| a.extend(x);
                df.spawn(r.reduce(Vec::new(), join), move |_, mut p| {
                    p[(i % 2) as usize].push(i)
                });
                df.spawn(c.at(0).reduce(0, |a, x| *a += x), |_, mut s| *s += 1);
            }
            df.spawn(r.inout(), |_, v| {
                v.iter_mut().for_each(|p| p.sort_unstable())
            });
        })
    });
    assert_eq!((v, n), (vec![vec![0, 2, 4], vec![1, 3, 5]], [6]));
}

/// Weak sub-matrices side by side, their rows interleaved in memory, both declared by one
/// task: its children write each tile's rows (non-`Copy` values) through the weak matrices,
/// on either worker, while a reader of the first tile waits only for that tile's children.
#[test]
fn miri_weak_sub_matrices_with_interleaved_rows() {
    let rt = crate::Runtime::new(2).unwrap();
    let mut m = vec![Vec::<u32>::new(); 2 * 4];
    let mut seen = [0usize; 1];
    rt.install(|| {
        scope(|df| {
            let (r, s) = (df.region(&mut m[..]), df.region(&mut seen[..]));
            let a = r.matrix(2, 4);
            let tiles = [a.tile(0, 0, 2).weak_inout(), a.tile(0, 1, 2).weak_inout()];
            df.spawn(tiles, |df, tiles| {
                for (k, t) in tiles.into_iter().enumerate() {
                    let t = df.weak_matrix(t);
                    for i in 0..2 {
                        df.spawn(t.sub(i, 0, 1, 2).inout(), move |_, mut row| {
                            row.row_mut(0).iter_mut().for_each(|x| x.push(k as u32));
                        });
                    }
                }
            });
            df.spawn((a.tile(0, 0, 2).read(), s.at(0).out()), |_, (t, s)| {
                *s = (0..2)
                    .map(|i| t.row(i).iter().map(Vec::len).sum::<usize>())
                    .sum();
            });
        })
    });
    assert_eq!(
        m,
        [
            vec![0],
            vec![0],
            vec![1],
            vec![1],
            vec![0],
            vec![0],
            vec![1],
            vec![1]
        ]
    );
    assert_eq!(seen, [4]);
}

/// Weak tasks under Miri: a writer still running when the weak task starts, gates linking the
/// children to it, two weak levels, a part released to a reader while the other's child
/// runs, and the deferred completion (a frame on the heap, freed by whichever thread
/// completes its last child), with non-`Copy` values.
#[test]
fn miri_weak_tasks_release_early_and_complete_once() {
    let rt = crate::Runtime::new(2).unwrap();
    let mut v = vec![Vec::<u32>::new(); 4];
    let mut seen = [0usize; 1];
    rt.install(|| {
        scope(|df| {
            let (r, s) = (df.region(&mut v[..]), df.region(&mut seen[..]));
            df.spawn(r.inout(), |_, v| v.iter_mut().for_each(|x| x.push(1)));
            let halves = [r.part(0..2).weak_inout(), r.part(2..4).weak_inout()];
            df.spawn(halves, |df, halves| {
                for h in halves {
                    let h = df.weak_region(h);
                    df.spawn(h.part(0..1).weak_inout(), |df, q| {
                        let q = df.weak_region(q);
                        df.spawn(q.inout(), |_, q| q[0].push(2));
                    });
                    df.spawn(h.part(1..2).inout(), |_, x| x[0].push(3));
                }
            });
            df.spawn((r.part(0..2).read(), s.at(0).out()), |_, (a, s)| {
                *s = a.iter().map(Vec::len).sum();
            });
        })
    });
    assert_eq!(v, [vec![1, 2], vec![1, 3], vec![1, 2], vec![1, 3]]);
    assert_eq!(seen, [4]);
}
