//! Unit and randomized tests of the look-up tables: block mode and exact mode against the
//! edges their rules call for (rectangle and grid mode: `rect.rs`).

use super::*;

mod rect;

/// `Write` for a write, else `Read`.
fn rw(w: bool) -> Mode {
    if w {
        Mode::Write
    } else {
        Mode::Read
    }
}

/// A rectangle access in the tests: `(lo, len, rows, stride, write)`.
type RectAccess = (usize, usize, usize, usize, bool);

/// Edges found for a sequence of (lo, hi, write) accesses, task `i` = access `i`.
fn edges(accesses: &[(usize, usize, bool)], exact: bool, block: usize) -> Vec<Vec<usize>> {
    let mut region = Region::new();
    let mut t: Trie<u16> = Trie::new(1024, block);
    let ids: Vec<u16> = vec![0; accesses.len()];
    let base = ids.as_ptr();
    accesses
        .iter()
        .enumerate()
        .map(|(i, &(lo, hi, w))| {
            let mut found = Vec::new();
            // SAFETY (test): pointers into `ids`, used as identities only.
            t.access(
                lo..hi,
                rw(w),
                (exact, block),
                unsafe { base.add(i) },
                &mut region,
                &mut Edges(|p: *const u16| found.push(unsafe { p.offset_from(base) } as usize)),
            );
            found.sort_unstable();
            found.dedup();
            found
        })
        .collect()
}

#[test]
fn block_mode_orders_conflicts_and_has_false_dependences() {
    // write [0,8), read [0,8), read [4,12), write [0,4), write [100,104)
    let a = [
        (0, 8, true),
        (0, 8, false),
        (4, 12, false),
        (0, 4, true),
        (100, 104, true),
    ];
    let e = edges(&a, false, 64);
    assert_eq!(e[0], Vec::<usize>::new());
    assert_eq!(e[1], [0]); // read after write
    assert_eq!(e[2], [0]); // read after write; no edge to the other reader
    assert_eq!(e[3], [1, 2]); // write after the readers
    assert_eq!(e[4], Vec::<usize>::new()); // another block
                                           // [100,104) and [64,68) share a 64-byte block: a false dependence.
    let e = edges(&[(64, 68, true), (100, 104, true)], false, 64);
    assert_eq!(e[1], [0]);
}

#[test]
fn exact_mode_has_no_false_dependences() {
    let e = edges(
        &[(64, 68, true), (100, 104, true), (66, 101, false)],
        true,
        64,
    );
    assert_eq!(e[1], Vec::<usize>::new());
    assert_eq!(e[2], [0, 1]);
    // A covering write drops what it covers: the next reader waits for the write only.
    let e = edges(
        &[(0, 3, true), (5, 9, false), (0, 10, true), (1, 2, false)],
        true,
        4,
    );
    assert_eq!(e[2], [0, 1]);
    assert_eq!(e[3], [2]);
    // A partial write keeps the older entry: the next reader waits for both.
    let e = edges(&[(0, 8, true), (0, 4, true), (2, 6, false)], true, 64);
    assert_eq!(e[1], [0]);
    assert_eq!(e[2], [0, 1]);
}

#[test]
fn exact_mode_groups_the_readers_of_a_range() {
    // write [0,8); three reads of [0,8); a read of [2,4); a write of [0,8); a read.
    let e = edges(
        &[
            (0, 8, true),
            (0, 8, false),
            (0, 8, false),
            (0, 8, false),
            (2, 4, false),
            (0, 8, true),
            (0, 8, false),
        ],
        true,
        64,
    );
    for (r, found) in e.iter().enumerate().take(5).skip(1) {
        assert_eq!(found, &[0], "reader {r}");
    }
    assert_eq!(e[5], [1, 2, 3, 4]); // after every reader, not the first writer
    assert_eq!(e[6], [5]);
    // A write overlapping a read group in part waits for its readers, and the group
    // stays for later writes.
    let e = edges(
        &[(0, 8, false), (0, 8, false), (4, 12, true), (0, 2, true)],
        true,
        64,
    );
    assert_eq!(e[2], [0, 1]);
    assert_eq!(e[3], [0, 1]);
}

/// A write takes over the entry of its exact range: the readers before it are its
/// predecessors, and later accesses see the write alone (not its predecessors).
#[test]
fn exact_mode_a_write_takes_over_its_range() {
    // 0 writes [8,16); 1 reads it; 2 reads and then writes it (one task, two accesses);
    // 3 reads it; 4 writes it; 5 reads [0,12), overlapping it.
    let mut region = Region::new();
    let mut t: Trie<u16> = Trie::new(64, 64);
    let ids = [0u16; 6];
    let base = ids.as_ptr();
    let accesses: [&[(usize, usize, bool)]; 6] = [
        &[(8, 16, true)],
        &[(8, 16, false)],
        &[(8, 16, false), (8, 16, true)],
        &[(8, 16, false)],
        &[(8, 16, true)],
        &[(0, 12, false)],
    ];
    let mut found = vec![Vec::new(); 6];
    for (i, fps) in accesses.iter().enumerate() {
        for &(lo, hi, w) in *fps {
            // SAFETY (test): pointers into `ids`, used as identities only.
            let me = unsafe { base.add(i) };
            t.access(
                lo..hi,
                rw(w),
                (true, 64),
                me,
                &mut region,
                &mut Edges(|p: *const u16| {
                    // SAFETY (test): as above.
                    found[i].push(unsafe { p.offset_from(base) } as usize)
                }),
            );
        }
        found[i].sort_unstable();
        found[i].dedup();
    }
    assert_eq!(found[1], [0]);
    assert_eq!(found[2], [0, 1]); // its read waits for 0, its write for reader 1
    assert_eq!(found[3], [2]); // the range's writer is now 2
    assert_eq!(found[4], [3]); // the reader since
    assert_eq!(found[5], [4]); // only the last write
}

/// Closes a "task i waits for task j" relation transitively (Warshall).
fn close(dep: &mut [Vec<bool>]) {
    for k in 0..dep.len() {
        let via = dep[k].clone();
        for row in dep.iter_mut() {
            if row[k] {
                for (d, &v) in row.iter_mut().zip(&via) {
                    *d |= v;
                }
            }
        }
    }
}

/// A xorshift generator from `seed` (not 0): each call a number below `n`.
fn xorshift(seed: u64) -> impl FnMut(usize) -> usize {
    let mut x = seed;
    move |n| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    }
}

/// Random sequences of tasks with one to three accesses each: every two tasks whose
/// accesses conflict are ordered by the edges, directly or through others, in both modes;
/// no edge points at the task itself or at a later one.
#[test]
fn random_accesses_leave_no_conflict_unordered() {
    let mut rnd = xorshift(0x1234_5678_9abc_def1);
    for _ in 0..40_000 {
        let exact = rnd(2) == 0;
        let block = [4usize, 8, 64][rnd(3)];
        let n = 2 + rnd(8);
        // 17 to 24 bytes: with blocks of 4 or 8, often a partial last block.
        let size = 17 + rnd(8);
        let tasks: Vec<Vec<(usize, usize, bool)>> = (0..n)
            .map(|_| {
                (0..1 + rnd(3))
                    .map(|_| {
                        let lo = rnd(size);
                        (lo, lo + 1 + rnd(size - lo), rnd(2) == 0)
                    })
                    .collect()
            })
            .collect();
        let mut region = Region::new();
        let mut t: Trie<u16> = Trie::new(size, block);
        let ids = vec![0u16; n];
        let base = ids.as_ptr();
        let mut dep = vec![vec![false; n]; n];
        for (i, fps) in tasks.iter().enumerate() {
            for &(lo, hi, w) in fps {
                // SAFETY (test): pointers into `ids`, used as identities only.
                let me = unsafe { base.add(i) };
                t.access(
                    lo..hi,
                    rw(w),
                    (exact, block),
                    me,
                    &mut region,
                    &mut Edges(|p: *const u16| {
                        // SAFETY (test): as above.
                        let j = unsafe { p.offset_from(base) } as usize;
                        assert!(j < i, "an edge from task {i} to task {j}");
                        // Exact mode: every edge is a true conflict of this access.
                        assert!(
                            !exact
                                || tasks[j]
                                    .iter()
                                    .any(|&(c, d, w2)| lo < d && c < hi && (w || w2)),
                            "block {block}: a false dependence of task {i} on task {j}: \
                         {tasks:?}"
                        );
                        dep[i][j] = true;
                    }),
                );
            }
        }
        close(&mut dep);
        for i in 0..n {
            for j in 0..i {
                let conflict = tasks[i].iter().any(|&(a, b, w)| {
                    tasks[j]
                        .iter()
                        .any(|&(c, d, w2)| a < d && c < b && (w || w2))
                });
                assert!(
                    !conflict || dep[i][j],
                    "exact {exact}, block {block}: task {i} is not ordered after task {j}: \
                     {tasks:?}"
                );
            }
        }
    }
}

/// A sink that records edges and the locks a task holds (fake locks: numbered addresses).
struct Recorder<'a> {
    base: *const u16,
    edges: &'a mut Vec<usize>,
    locks: &'a mut Vec<usize>,
    next_lock: &'a mut usize,
}

impl Sink<u16> for Recorder<'_> {
    fn edge(&mut self, pred: *const u16) {
        // SAFETY (test): pointers into one vector of identities.
        self.edges
            .push(unsafe { pred.offset_from(self.base) } as usize);
    }
    fn new_lock(&mut self) -> *const () {
        *self.next_lock += 1;
        (*self.next_lock * 8) as *const ()
    }
    fn hold(&mut self, lock: *const ()) {
        self.locks.push(lock as usize);
    }
}

const MODES: [Mode; 4] = [Mode::Read, Mode::Concurrent, Mode::Commutative, Mode::Write];

/// Whether two accesses of these modes must be ordered (if their bytes overlap).
fn must_order(a: Mode, b: Mode) -> bool {
    !(a == b && a != Mode::Write)
}

/// Random tasks of random kinds, in block and exact mode: every overlapping pair of kinds
/// that must be ordered is (transitively); two overlapping commutative accesses that are not
/// ordered hold a common lock; in exact mode every edge is between overlapping accesses of
/// kinds that must be ordered or are both commutative.
#[test]
fn random_kinds_order_what_conflicts_and_lock_what_commutes() {
    let mut rnd = xorshift(0x5eed_c0de);
    for round in 0..3000 {
        let (exact, block) = (round % 2 == 0, [1, 4, 8, 64][round / 2 % 4]);
        let n = 2 + rnd(9);
        let size = 17 + rnd(8);
        let tasks: Vec<Vec<(usize, usize, Mode)>> = (0..n)
            .map(|_| {
                let mut fps: Vec<(usize, usize, Mode)> = Vec::new();
                for _ in 0..1 + rnd(2) {
                    // Few distinct ranges, so that groups form and are joined.
                    let lo = [0, 4, 8, rnd(size)][rnd(4)];
                    let hi = (lo + [4, 8, 1 + rnd(size - lo)][rnd(3)]).min(size);
                    let m = MODES[rnd(4)];
                    // As a spawn checks: overlapping accesses of one task both shared.
                    if fps
                        .iter()
                        .all(|&(c, d, m2)| !(lo < d && c < hi) || (m.shared() && m2.shared()))
                    {
                        fps.push((lo, hi, m));
                    }
                }
                fps
            })
            .collect();
        let mut region = Region::new();
        let mut t: Trie<u16> = Trie::new(size, block);
        let ids = vec![0u16; n];
        let base = ids.as_ptr();
        let mut dep = vec![vec![false; n]; n];
        let mut held: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut next_lock = 0;
        for (i, fps) in tasks.iter().enumerate() {
            for &(lo, hi, m) in fps {
                let mut edges = Vec::new();
                // SAFETY (test): pointers into `ids`, used as identities only.
                let me = unsafe { base.add(i) };
                let mut sink = Recorder {
                    base,
                    edges: &mut edges,
                    locks: &mut held[i],
                    next_lock: &mut next_lock,
                };
                t.access(lo..hi, m, (exact, block), me, &mut region, &mut sink);
                for j in edges {
                    assert!(j < i, "an edge from task {i} to task {j}");
                    assert!(
                        !exact
                            || tasks[j].iter().any(|&(c, d, m2)| lo < d
                                && c < hi
                                && (must_order(m, m2) || m == Mode::Commutative)),
                        "a false dependence of task {i} on task {j}: {tasks:?}"
                    );
                    dep[i][j] = true;
                }
            }
        }
        close(&mut dep);
        for i in 0..n {
            for j in 0..i {
                for &(a, b, m) in &tasks[i] {
                    for &(c, d, m2) in &tasks[j] {
                        if !(a < d && c < b) {
                            continue;
                        }
                        assert!(
                            !must_order(m, m2) || dep[i][j],
                            "exact {exact}, block {block}: task {i} ({m:?}) is not ordered \
                             after task {j} ({m2:?}): {tasks:?}"
                        );
                        if m == Mode::Commutative && !dep[i][j] {
                            assert!(
                                held[i].iter().any(|l| held[j].contains(l)),
                                "exact {exact}, block {block}: commutative tasks {j} and {i} \
                                 overlap, unordered, with no common lock: {tasks:?}"
                            );
                        }
                    }
                }
            }
        }
    }
}

/// The liveness a stricter table would lose: accesses of one shared kind to one range get
/// no edge between them, however many come, and a group of another kind waits for all of
/// them.
#[test]
fn shared_kinds_form_groups() {
    for exact in [false, true] {
        let mut region = Region::new();
        let mut t: Trie<u16> = Trie::new(64, 64);
        let ids = [0u16; 7];
        let base = ids.as_ptr();
        let modes = [
            Mode::Write,
            Mode::Concurrent,
            Mode::Concurrent,
            Mode::Read,
            Mode::Read,
            Mode::Commutative,
            Mode::Commutative,
        ];
        let mut found = Vec::new();
        let mut locks: Vec<Vec<usize>> = vec![Vec::new(); 7];
        let mut next_lock = 0;
        for (i, &m) in modes.iter().enumerate() {
            let mut edges = Vec::new();
            // A part of the block in exact mode, so that entries are used.
            let range = if exact { 8..24 } else { 0..64 };
            // SAFETY (test): pointers into `ids`, used as identities only.
            t.access(
                range,
                m,
                (exact, 64),
                unsafe { base.add(i) },
                &mut region,
                &mut Recorder {
                    base,
                    edges: &mut edges,
                    locks: &mut locks[i],
                    next_lock: &mut next_lock,
                },
            );
            edges.sort_unstable();
            edges.dedup();
            found.push(edges);
        }
        let want: [&[usize]; 7] = [&[], &[0], &[0], &[1, 2], &[1, 2], &[3, 4], &[3, 4]];
        assert_eq!(found, want, "exact {exact}");
        assert!(locks[..5].iter().all(Vec::is_empty));
        assert_eq!(locks[5].len(), 1);
        assert_eq!(locks[5], locks[6], "one lock per commutative group");
    }
}
