//! Unit and randomized tests of rectangle mode and grid mode: driven as the spawn path
//! drives them (rectangle or grid mode while it takes the accesses, then the per-row
//! trie), against the edges the per-row rules call for.

use super::*;

/// Runs tasks of rectangle accesses `(lo, len, rows, stride, write)` through one table;
/// returns each task's predecessors (sorted, deduplicated) and whether the table was still
/// in rectangle mode at the end (grid mode included).
fn rect_edges(tasks: &[Vec<RectAccess>], (exact, block): (bool, usize)) -> (Vec<Vec<usize>>, bool) {
    let (e, mode) = rect_edges_mode(tasks, (exact, block));
    (e, mode.is_some())
}

/// [`rect_edges`], with the mode at the end: `None` (row by row), `Some(false)` (rectangle
/// mode) or `Some(true)` (grid mode).
fn rect_edges_mode(
    tasks: &[Vec<RectAccess>],
    (exact, block): (bool, usize),
) -> (Vec<Vec<usize>>, Option<bool>) {
    rect_edges_mode_sized(tasks, (exact, block), 256)
}

/// [`rect_edges_mode`] on a region of `size` bytes.
fn rect_edges_mode_sized(
    tasks: &[Vec<RectAccess>],
    (exact, block): (bool, usize),
    size: usize,
) -> (Vec<Vec<usize>>, Option<bool>) {
    let mut region = Region::new();
    // As the data-flow spawn path drives them: rectangle mode while it takes the
    // accesses, then the trie.
    let mut trie: Trie<u16> = Trie::new(size, block);
    let mut rects: Option<RectMode<u16>> = exact.then(|| RectMode::new(size));
    let ids = vec![0u16; tasks.len()];
    let base = ids.as_ptr();
    let found = tasks
        .iter()
        .enumerate()
        .map(|(i, fps)| {
            let mut found = Vec::new();
            for &(lo, len, rows, stride, w) in fps {
                let rect = Rect {
                    lo,
                    len,
                    rows,
                    stride: if rows == 1 { 0 } else { stride },
                };
                // SAFETY (test): pointers into `ids`, used as identities only.
                let me = unsafe { base.add(i) };
                let mut edge = Edges(|p: *const u16| {
                    // SAFETY (test): as above.
                    found.push(unsafe { p.offset_from(base) } as usize)
                });
                if let Some(rm) = &mut rects {
                    if rm.access(rect, rw(w), block, me, &mut region, &mut edge) {
                        continue;
                    }
                }
                if let Some(rm) = rects.take() {
                    rm.leave(&mut trie, block, &mut region);
                }
                for r in 0..rows {
                    let (lo, hi) = rect.row(r);
                    trie.access(lo..hi, rw(w), (exact, block), me, &mut region, &mut edge);
                }
            }
            found.sort_unstable();
            found.dedup();
            found
        })
        .collect();
    (found, rects.map(|r| r.in_grid()))
}

/// Tiles of a 16-byte-wide matrix (4 × 4 tiles of 4 × 4 bytes): the same tile is ordered
/// by the usual rule, other tiles are independent, and all of it in rectangle mode.
#[test]
fn rectangle_mode_orders_tiles_at_one_state_each() {
    let tile = |i: usize, j: usize, w: bool| (i * 64 + j * 4, 4, 4, 16, w);
    let tasks = vec![
        vec![tile(0, 0, true)],                                       // 0
        vec![tile(0, 0, false), tile(1, 0, true)],                    // 1: after 0
        vec![tile(0, 0, false), tile(1, 1, true)],                    // 2: after 0
        vec![tile(1, 0, false), tile(1, 1, false), tile(2, 2, true)], // 3: after 1, 2
        vec![tile(0, 0, true)],                                       // 4: after readers 1, 2
        vec![tile(3, 3, true)],                                       // 5: nothing
    ];
    for block in [4, 8, 64] {
        let (e, rect_mode) = rect_edges(&tasks, (true, block));
        assert!(rect_mode, "block {block}");
        assert_eq!(e[0], Vec::<usize>::new());
        assert_eq!(e[1], [0]);
        assert_eq!(e[2], [0]);
        assert_eq!(e[3], [1, 2]);
        assert_eq!(e[4], [1, 2]);
        assert_eq!(e[5], Vec::<usize>::new());
        // The per-row trie finds the same edges.
        let (rows, _) = rect_edges(
            &tasks
                .iter()
                .map(|t| {
                    t.iter()
                        .flat_map(|&(lo, len, rows, stride, w)| {
                            (0..rows).map(move |r| (lo + r * stride, len, 1, 0, w))
                        })
                        .collect()
                })
                .collect::<Vec<_>>(),
            (true, block),
        );
        assert_eq!(e, rows, "block {block}");
    }
}

/// An access that meets a rectangle in part turns rectangle mode to grid mode, and what the
/// rectangles recorded still orders it: it waits for the writers and readers of every tile
/// it overlaps, and later accesses wait for it where they overlap it. An access of another
/// stride ends grid mode with the state kept.
#[test]
fn a_partial_overlap_turns_to_grid_mode_with_the_state_kept() {
    let tile = |i: usize, j: usize, w: bool| (i * 64 + j * 4, 4, 4, 16, w);
    let mut tasks = vec![
        vec![tile(0, 0, true)],             // 0
        vec![tile(0, 1, true)],             // 1
        vec![tile(0, 0, false)],            // 2: after 0
        vec![(2 * 16 + 2, 4, 3, 16, true)], // 3: rows 2-4, bytes 2-5: tiles (0,0), (0,1), (1,0), (1,1)
        vec![tile(0, 1, false)],            // 4: after 3 (not 1: 3 took over part of its bytes)
        vec![tile(1, 1, true)],             // 5: after 3
    ];
    for block in [4, 8, 64] {
        let (e, mode) = rect_edges_mode(&tasks, (true, block));
        assert_eq!(mode, Some(true), "block {block}");
        assert_eq!(e[3], [1, 2]); // the readers of (0,0) since 0, and the writer of (0,1)
        assert_eq!(e[4], [1, 3]); // rows 0-1 of the tile were last written by 1
        assert_eq!(e[5], [3]);
    }
    // Rows 32 bytes apart: grid mode ends, the cells' states go into the per-row entries.
    tasks.push(vec![(3 * 16 + 4, 2, 2, 32, false)]); // 6: bytes 4-5 of rows 3 and 5: after 3, 5
    tasks.push(vec![tile(1, 1, true)]); //               7: after 6, and 5 for the rest of the tile
    let (e, mode) = rect_edges_mode(&tasks, (true, 8));
    assert_eq!(mode, None);
    assert_eq!(e[6], [3, 5]);
    assert_eq!(e[7], [5, 6]);
    // A rectangle whose rows overlap each other goes row by row at once.
    let (_, rect_mode) = rect_edges(&[vec![(0, 8, 2, 4, true)]], (true, 8));
    assert!(!rect_mode);
    // So does a partial overlap of rectangles with different strides.
    let (_, mode) = rect_edges_mode(
        &[vec![(0, 4, 2, 16, true)], vec![(0, 4, 2, 32, true)]],
        (true, 8),
    );
    assert_eq!(mode, None);
}

/// A grid that would pass its cell limit ends grid mode and goes row by row, with its state
/// kept. On a 512 × 512-byte matrix: two overlapping 2 × 2 squares (grid mode), then 299
/// one-byte-wide columns of rows 0-1 (the column cuts, while the grid is two row bands
/// tall), then 2 × 1 pieces down column 0 (a row cut each, at the grid's end) until the
/// grid would pass [`MAX_CELLS`](super::grid::MAX_CELLS), far below its budget of copies. A
/// read of the whole matrix then waits for every writer (each still owns some bytes).
#[test]
fn a_grid_past_its_cells_goes_row_by_row_with_the_state_kept() {
    let mut tasks: Vec<Vec<RectAccess>> =
        vec![vec![(0, 2, 2, 512, true)], vec![(1, 2, 2, 512, true)]];
    tasks.extend((3..302).map(|c| vec![(c, 1, 2, 512, true)]));
    tasks.extend((1..256).map(|r| vec![(2 * r * 512, 1, 2, 512, true)]));
    let mut region = Region::new();
    let mut rm: RectMode<u16> = RectMode::new(512 * 512);
    let ids = vec![0u16; tasks.len()];
    let mut last = None;
    let mut left_at = None;
    for (i, t) in tasks.iter().enumerate() {
        let (lo, len, rows, stride, _) = t[0];
        let rect = Rect {
            lo,
            len,
            rows,
            stride,
        };
        // SAFETY (test): pointers into `ids`, used as identities only.
        let me = unsafe { ids.as_ptr().add(i) };
        if !rm.access(rect, Mode::Write, 64, me, &mut region, &mut Edges(|_| {})) {
            left_at = Some(i);
            break;
        }
        last = rm.grid_stats();
    }
    let (cells, copied) = last.expect("grid mode before the limit");
    let at = left_at.expect("the grid passed its cell limit");
    assert!(
        at > 301,
        "left grid mode at access {at}, before the row cuts"
    );
    assert!(
        cells + 303 > super::grid::MAX_CELLS && copied < 4 * super::grid::MAX_CELLS,
        "left grid mode at {cells} cells, {copied} copied: not for its cells"
    );
    tasks.push(vec![(0, 512, 512, 512, false)]);
    let (e, mode) = rect_edges_mode_sized(&tasks, (true, 64), 512 * 512);
    assert_eq!(mode, None);
    assert_eq!(e[tasks.len() - 1], (0..tasks.len() - 1).collect::<Vec<_>>());
}

/// A Jacobi sweep over 4 × 4 tiles of a 16 × 16-byte matrix, declared as OpenMP ports
/// declare it: each task reads its tile with a one-byte halo (clipped at the edges) of one
/// grid and writes its tile of the other. The table stays in grid mode, every edge is a
/// true conflict, and every conflict is ordered.
#[test]
fn halo_reads_beside_tile_writes_stay_in_grid_mode_and_exact() {
    let halo = |grid: usize, i: usize, j: usize| {
        let (r0, r1) = ((4 * i).saturating_sub(1), (4 * i + 5).min(16));
        let (c0, c1) = ((4 * j).saturating_sub(1), (4 * j + 5).min(16));
        (grid * 256 + r0 * 16 + c0, c1 - c0, r1 - r0, 16, false)
    };
    let tile = |grid: usize, i: usize, j: usize| (grid * 256 + i * 64 + j * 4, 4, 4, 16, true);
    let mut tasks = Vec::new();
    for step in 0..3 {
        let (src, dst) = (step % 2, 1 - step % 2);
        for i in 0..4 {
            for j in 0..4 {
                tasks.push(vec![halo(src, i, j), tile(dst, i, j)]);
            }
        }
    }
    let (e, mode) = rect_edges_mode_sized(&tasks, (true, 8), 512);
    assert_eq!(mode, Some(true));
    check_exact_and_complete(&tasks, &e, 512);
    // Task (1, 1) of step 1 reads around tile (1, 1) of grid 1: it waits for the step-0
    // writers of that tile and its eight neighbours.
    let mut want = Vec::new();
    for i in 0..3 {
        for j in 0..3 {
            want.push(i * 4 + j);
        }
    }
    assert_eq!(e[16 + 5], want);
}

/// Checks the edges found for `tasks` (on a region of `size` bytes) against the bytes they
/// touch: every edge joins two conflicting tasks (exact), and every two conflicting tasks are
/// ordered, directly or through others (complete).
fn check_exact_and_complete(tasks: &[Vec<RectAccess>], edges: &[Vec<usize>], size: usize) {
    let bytes_of = |&(lo, len, rows, stride, _): &RectAccess| {
        let mut set = vec![0u64; size.div_ceil(64)];
        for x in (0..rows).flat_map(move |r| lo + r * stride..lo + r * stride + len) {
            set[x / 64] |= 1 << (x % 64);
        }
        set
    };
    let conflict = |a: &Vec<RectAccess>, b: &Vec<RectAccess>| {
        a.iter().any(|fa| {
            b.iter().any(|fb| {
                let (x, y) = (bytes_of(fa), bytes_of(fb));
                (fa.4 || fb.4) && x.iter().zip(&y).any(|(p, q)| p & q != 0)
            })
        })
    };
    let n = tasks.len();
    let mut dep = vec![vec![false; n]; n];
    for (i, e) in edges.iter().enumerate() {
        for &j in e {
            assert!(j < i, "an edge from task {i} to task {j}");
            assert!(
                conflict(&tasks[i], &tasks[j]),
                "a false dependence {i} -> {j}"
            );
            dep[i][j] = true;
        }
    }
    close(&mut dep);
    for i in 0..n {
        for j in 0..i {
            assert!(
                !conflict(&tasks[i], &tasks[j]) || dep[i][j],
                "task {i} is not ordered after task {j}"
            );
        }
    }
}

/// Random tasks of one to three rectangle accesses over a 16 × 16-byte matrix, most of
/// them tiles of a 4 × 4 grid (so that rectangle mode lasts a while), some arbitrary:
/// every conflicting pair is ordered, and in exact mode every edge is a true conflict.
#[test]
fn random_rectangles_leave_no_conflict_unordered() {
    let mut rnd = xorshift(0x0dd_ba11_cafe_f00d);
    let (mut left_rect_mode, mut stayed, mut grid) = (0, 0, 0);
    for _ in 0..20_000 {
        let exact = rnd(4) != 0;
        let block = [2usize, 4, 8, 64][rnd(4)];
        let n = 2 + rnd(10);
        let tasks: Vec<Vec<RectAccess>> = (0..n)
            .map(|_| {
                (0..1 + rnd(3))
                    .map(|_| {
                        let w = rnd(2) == 0;
                        if rnd(8) != 0 {
                            let (i, j) = (rnd(4), rnd(4));
                            (i * 64 + j * 4, 4, 4, 16, w)
                        } else if rnd(6) == 0 {
                            // Rows 32 bytes apart (grid mode cannot take them).
                            let (r, c) = (rnd(8), rnd(16));
                            (r * 16 + c, 1 + rnd(16 - c), 1 + rnd(8 - r), 32, w)
                        } else {
                            let (r, c) = (rnd(16), rnd(16));
                            let rows = 1 + rnd(16 - r);
                            let len = 1 + rnd(16 - c);
                            (r * 16 + c, len, rows, 16, w)
                        }
                    })
                    .collect()
            })
            .collect();
        // The bytes an access covers (all below 256), as a bit set: the oracle compares
        // sets, not every pair of bytes.
        let bytes_of = |&(lo, len, rows, stride, _): &RectAccess| {
            let mut set = [0u64; 4];
            for x in (0..rows).flat_map(move |r| lo + r * stride..lo + r * stride + len) {
                set[x / 64] |= 1 << (x % 64);
            }
            set
        };
        let conflict = |a: &Vec<RectAccess>, b: &Vec<RectAccess>| {
            a.iter().any(|fa| {
                b.iter().any(|fb| {
                    let (x, y) = (bytes_of(fa), bytes_of(fb));
                    (fa.4 || fb.4) && (0..4).any(|k| x[k] & y[k] != 0)
                })
            })
        };
        let (edges, mode) = rect_edges_mode(&tasks, (exact, block));
        if exact {
            match mode {
                None => left_rect_mode += 1,
                Some(false) => stayed += 1,
                Some(true) => grid += 1,
            }
        }
        let mut dep = vec![vec![false; n]; n];
        for (i, e) in edges.iter().enumerate() {
            for &j in e {
                assert!(j < i, "an edge from task {i} to task {j}");
                if exact {
                    assert!(
                        conflict(&tasks[i], &tasks[j]),
                        "block {block}: a false dependence {i} -> {j}: {tasks:?}"
                    );
                }
                dep[i][j] = true;
            }
        }
        close(&mut dep);
        for i in 0..n {
            for j in 0..i {
                assert!(
                    !conflict(&tasks[i], &tasks[j]) || dep[i][j],
                    "exact {exact}, block {block}: task {i} is not ordered after task {j}: \
                     {tasks:?}"
                );
            }
        }
    }
    // Every way was taken: sequences that stayed in rectangle mode, that went on in grid
    // mode, and that left both.
    assert!(
        left_rect_mode > 1000 && stayed > 1000 && grid > 1000,
        "{left_rect_mode} {stayed} {grid}"
    );
}

/// Random tasks of random kinds on a 16 × 16-byte matrix, as rectangles: tiles of a 4 × 4
/// grid, the same tiles with their one-byte halos (which overlap the tiles around them in
/// part: grid mode), and some arbitrary rectangles; driven as the spawn path drives the
/// table (rectangle or grid mode while it takes the accesses, then row by row). The rules of
/// `random_kinds_order_what_conflicts_and_lock_what_commutes` hold: conflicting kinds are
/// ordered, overlapping commutative accesses that are not ordered share a lock, and every
/// edge joins overlapping accesses that must be ordered or are commutative.
#[test]
fn random_rectangle_kinds_order_what_conflicts_and_lock_what_commutes() {
    type Access = (usize, usize, usize, Mode);
    let bytes_of = |&(lo, len, rows, _): &Access| {
        let mut set = [0u64; 4];
        for x in (0..rows).flat_map(move |r| lo + r * 16..lo + r * 16 + len) {
            set[x / 64] |= 1 << (x % 64);
        }
        set
    };
    let meet = |a: &Access, b: &Access| {
        let (x, y) = (bytes_of(a), bytes_of(b));
        (0..4).any(|k| x[k] & y[k] != 0)
    };
    let mut rnd = xorshift(0x9e1d_5eed);
    let mut in_grid = 0;
    for round in 0..6000 {
        let block = [4usize, 8, 64][round % 3];
        let n = 2 + rnd(9);
        let tasks: Vec<Vec<Access>> = (0..n)
            .map(|_| {
                let mut fps: Vec<Access> = Vec::new();
                for _ in 0..1 + rnd(2) {
                    let (i, j) = (rnd(4), rnd(4));
                    let (lo, len, rows) = match rnd(8) {
                        0..=2 => (i * 64 + j * 4, 4, 4),
                        3..=6 => {
                            let (r0, c0) = ((4 * i).saturating_sub(1), (4 * j).saturating_sub(1));
                            let (r1, c1) = ((4 * i + 5).min(16), (4 * j + 5).min(16));
                            (r0 * 16 + c0, c1 - c0, r1 - r0)
                        }
                        _ => {
                            let (r, c) = (rnd(16), rnd(16));
                            (r * 16 + c, 1 + rnd(16 - c), 1 + rnd(16 - r))
                        }
                    };
                    let a = (lo, len, rows, MODES[rnd(4)]);
                    // As a spawn checks: overlapping accesses of one task both shared.
                    if fps
                        .iter()
                        .all(|b| !meet(&a, b) || (a.3.shared() && b.3.shared()))
                    {
                        fps.push(a);
                    }
                }
                fps
            })
            .collect();
        let mut region = Region::new();
        let mut trie: Trie<u16> = Trie::new(256, block);
        let mut rects: Option<RectMode<u16>> = Some(RectMode::new(256));
        let ids = vec![0u16; n];
        let base = ids.as_ptr();
        let mut dep = vec![vec![false; n]; n];
        let mut held: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut next_lock = 0;
        for (i, fps) in tasks.iter().enumerate() {
            for &(lo, len, rows, m) in fps {
                let mut edges = Vec::new();
                // SAFETY (test): pointers into `ids`, used as identities only.
                let me = unsafe { base.add(i) };
                let mut sink = Recorder {
                    base,
                    edges: &mut edges,
                    locks: &mut held[i],
                    next_lock: &mut next_lock,
                };
                let rect = Rect {
                    lo,
                    len,
                    rows,
                    stride: if rows == 1 { 0 } else { 16 },
                };
                let taken = rects
                    .as_mut()
                    .is_some_and(|rm| rm.access(rect, m, block, me, &mut region, &mut sink));
                if !taken {
                    if let Some(rm) = rects.take() {
                        rm.leave(&mut trie, block, &mut region);
                    }
                    for r in 0..rows {
                        let (a, b) = rect.row(r);
                        trie.access(a..b, m, (true, block), me, &mut region, &mut sink);
                    }
                }
                for j in edges {
                    assert!(j < i, "an edge from task {i} to task {j}");
                    let a = (lo, len, rows, m);
                    assert!(
                        tasks[j]
                            .iter()
                            .any(|b| meet(&a, b) && (must_order(m, b.3) || m == Mode::Commutative)),
                        "block {block}: a false dependence of task {i} on task {j}: {tasks:?}"
                    );
                    dep[i][j] = true;
                }
            }
        }
        if rects.as_ref().is_some_and(|r| r.in_grid()) {
            in_grid += 1;
        }
        close(&mut dep);
        for i in 0..n {
            for j in 0..i {
                for a in &tasks[i] {
                    for b in &tasks[j] {
                        if !meet(a, b) {
                            continue;
                        }
                        assert!(
                            !must_order(a.3, b.3) || dep[i][j],
                            "block {block}: task {i} ({:?}) is not ordered after task {j} \
                             ({:?}): {tasks:?}",
                            a.3,
                            b.3
                        );
                        if a.3 == Mode::Commutative && b.3 == Mode::Commutative && !dep[i][j] {
                            assert!(
                                held[i].iter().any(|l| held[j].contains(l)),
                                "block {block}: commutative tasks {j} and {i} overlap, \
                                 unordered, with no common lock: {tasks:?}"
                            );
                        }
                    }
                }
            }
        }
    }
    assert!(
        in_grid > 1000,
        "only {in_grid} sequences ended in grid mode"
    );
}
