//! The look-up table of a task: which of its children last wrote, and which read, each part of
//! the data the task hands to its children (seed 002 §2, Figures 2.6–2.7, and §3.4.3).
//!
//! Only the task that owns the table reads or writes it (the parent runs its children's
//! dependence analysis itself), so it needs no synchronization. Its memory lives in a region of
//! the task's own, apart from the children's descriptors (which other threads write), and is
//! freed with it.
//!
//! Keys are blocks: a data region of the scope is cut into blocks of `block` bytes, counted
//! from the region's first byte, and a two-level trie maps a block number to its slot (the
//! first level indexed by the high bits, leaves of [`LEAF`] slots allocated on first use).
//!
//! - **Block mode** (the seed's): a slot holds the block's last writer and the readers since.
//!   A read depends on the writer and joins the readers (read after read adds no edge); a
//!   write depends on the readers, or on the writer when there are none (the readers
//!   themselves depend on it), and becomes the writer. Two accesses to the same block are
//!   ordered even when their bytes do not overlap: a false dependence, fewer with smaller
//!   blocks, at more slots per access.
//! - **Exact mode** (no false dependences, §5.1): a slot holds one entry per distinct byte
//!   range accessed in the block, each with the range's last writer and the readers since
//!   (block mode's rule, per range). A new access looks at every entry whose range overlaps
//!   its own: a read depends on the entry's writer; a write depends on the entry's readers,
//!   or on its writer when there are none (the readers read the writer's very range, so they
//!   depend on it). A write then drops the entries whose range it covers: any later access
//!   that overlaps a dropped entry overlaps the write too, and so waits for it, and the write
//!   waited for the entry. (An entry of exactly the write's range is not dropped but taken
//!   over: it becomes the write's, with no readers, as a new entry would be.) A read of a range that has an entry joins its readers, so a range
//!   read by many tasks is still one entry to look at. Unaligned and odd-sized ranges cost
//!   nothing extra.
//!
//! Either way, every access that conflicts with an earlier sibling's (same bytes, one of them
//! a write) is ordered after it, directly or through a chain of edges: what makes the data
//! handed to tasks exclusive.

use std::ptr::{self, NonNull};

use crate::mem::region::Region;

/// Slots per trie leaf.
pub(crate) const LEAF: usize = 256;

/// A reader in a block's readers list (block mode).
struct Reader<D> {
    task: *const D,
    next: *mut Reader<D>,
}

/// A byte range recorded in exact mode: bytes `[lo, hi)` of the region, inside the block,
/// with its last writer (null if none) and the readers since.
struct Entry<D> {
    lo: usize,
    hi: usize,
    writer: *const D,
    readers: *mut Reader<D>,
    next: *mut Entry<D>,
}

/// One block's state. All-zero is the empty slot.
struct Slot<D> {
    writer: *const D,
    readers: *mut Reader<D>,
    entries: *mut Entry<D>,
}

/// The trie of one data region.
pub(crate) struct Trie<D> {
    leaves: Vec<*mut Slot<D>>,
}

impl<D> Trie<D> {
    /// A trie for a region of `bytes` bytes in blocks of `block` bytes.
    pub(crate) fn new(bytes: usize, block: usize) -> Trie<D> {
        let blocks = bytes.div_ceil(block).max(1);
        Trie {
            leaves: vec![ptr::null_mut(); blocks.div_ceil(LEAF)],
        }
    }

    fn slot(&mut self, b: usize, region: &mut Region) -> &mut Slot<D> {
        let leaf = &mut self.leaves[b / LEAF];
        if leaf.is_null() {
            *leaf = region.alloc_zeroed_array::<Slot<D>>(LEAF).as_ptr();
        }
        // SAFETY: the leaf is a zeroed array of `LEAF` slots in the owner's region, alive
        // while the table is; an all-zero slot is valid (null pointers); the `&mut self`
        // borrow makes this the only reference.
        unsafe { &mut *leaf.add(b % LEAF) }
    }

    /// Records an access of `task` to `bytes` of the region (not empty), keyed `(exact, block)`, calling
    /// `edge` for each earlier access it must wait for (possibly more than once per task:
    /// the caller removes duplicates).
    pub(crate) fn access(
        &mut self,
        bytes: std::ops::Range<usize>,
        write: bool,
        (exact, block): (bool, usize),
        task: *const D,
        region: &mut Region,
        edge: &mut impl FnMut(*const D),
    ) {
        let (lo, hi) = (bytes.start, bytes.end);
        debug_assert!(hi > lo);
        for b in lo / block..=(hi - 1) / block {
            let slot = self.slot(b, region);
            if exact {
                let (l, h) = (lo.max(b * block), hi.min((b + 1) * block));
                exact_access(slot, l, h, write, task, region, edge);
            } else {
                block_access(slot, write, task, region, edge);
            }
        }
    }
}

fn block_access<D>(
    slot: &mut Slot<D>,
    write: bool,
    task: *const D,
    region: &mut Region,
    edge: &mut impl FnMut(*const D),
) {
    if !write {
        if !slot.writer.is_null() && slot.writer != task {
            edge(slot.writer);
        }
        // SAFETY: reader nodes live in the owner's region.
        if slot.readers.is_null() || unsafe { (*slot.readers).task } != task {
            slot.readers = region
                .alloc(Reader {
                    task,
                    next: slot.readers,
                })
                .as_ptr();
        }
        return;
    }
    if slot.readers.is_null() {
        if !slot.writer.is_null() && slot.writer != task {
            edge(slot.writer);
        }
    } else {
        let mut r = slot.readers;
        while !r.is_null() {
            // SAFETY: as above.
            let (t, next) = unsafe { ((*r).task, (*r).next) };
            if t != task {
                edge(t);
            }
            r = next;
        }
        // A task that reads and writes the same block (two accesses) is both a reader and the
        // writer: its later siblings wait for it through the writer.
    }
    slot.readers = ptr::null_mut();
    slot.writer = task;
}

fn exact_access<D>(
    slot: &mut Slot<D>,
    lo: usize,
    hi: usize,
    write: bool,
    task: *const D,
    region: &mut Region,
    edge: &mut impl FnMut(*const D),
) {
    let mut link: *mut *mut Entry<D> = &mut slot.entries;
    // The entry of exactly this range, which a read joins and a write takes over.
    let mut same: *mut Entry<D> = ptr::null_mut();
    // SAFETY: entries and reader nodes live in the owner's region; `link` points at the slot's
    // head or at an entry's `next`, all valid while the table is.
    unsafe {
        while !(*link).is_null() {
            let e = *link;
            if (*e).lo < hi && lo < (*e).hi {
                let writer = (*e).writer;
                if !write || (*e).readers.is_null() {
                    if !writer.is_null() && writer != task {
                        edge(writer);
                    }
                } else {
                    let mut r = (*e).readers;
                    while !r.is_null() {
                        if (*r).task != task {
                            edge((*r).task);
                        }
                        r = (*r).next;
                    }
                }
            }
            let exactly = (*e).lo == lo && (*e).hi == hi;
            if write && lo <= (*e).lo && (*e).hi <= hi && !(exactly && same.is_null()) {
                // Covered by this write: later accesses wait for the write instead.
                *link = (*e).next;
                continue;
            }
            if exactly {
                same = e;
            }
            link = ptr::addr_of_mut!((*e).next);
        }
        if !same.is_null() {
            if write {
                // The write becomes the range's writer, with no readers since (what it
                // covers is dropped above): the entry is reused, not allocated again.
                (*same).writer = task;
                (*same).readers = ptr::null_mut();
                return;
            }
            // A task that declares the same range twice is one reader.
            let head = (*same).readers;
            if head.is_null() || (*head).task != task {
                (*same).readers = region.alloc(Reader { task, next: head }).as_ptr();
            }
            return;
        }
    }
    let readers = if write {
        ptr::null_mut()
    } else {
        region
            .alloc(Reader {
                task,
                next: ptr::null_mut(),
            })
            .as_ptr()
    };
    let e: NonNull<Entry<D>> = region.alloc(Entry {
        lo,
        hi,
        writer: if write { task } else { ptr::null() },
        readers,
        next: slot.entries,
    });
    slot.entries = e.as_ptr();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Edges found for a sequence of (lo, hi, write) accesses, task `i` = access `i`.
    fn edges(accesses: &[(usize, usize, bool)], exact: bool, block: usize) -> Vec<Vec<usize>> {
        let mut region = Region::new();
        let mut t: Trie<u8> = Trie::new(1024, block);
        let ids: Vec<u8> = vec![0; accesses.len()];
        let base = ids.as_ptr();
        accesses
            .iter()
            .enumerate()
            .map(|(i, &(lo, hi, w))| {
                let mut found = Vec::new();
                // SAFETY (test): pointers into `ids`, used as identities only.
                t.access(
                    lo..hi,
                    w,
                    (exact, block),
                    unsafe { base.add(i) },
                    &mut region,
                    &mut |p| found.push(unsafe { p.offset_from(base) } as usize),
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
        let mut t: Trie<u8> = Trie::new(64, 64);
        let ids = [0u8; 6];
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
                t.access(lo..hi, w, (true, 64), me, &mut region, &mut |p| {
                    // SAFETY (test): as above.
                    found[i].push(unsafe { p.offset_from(base) } as usize)
                });
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

    /// Random sequences of tasks with one to three accesses each: every two tasks whose
    /// accesses conflict are ordered by the edges, directly or through others, in both modes;
    /// no edge points at the task itself or at a later one.
    #[test]
    fn random_accesses_leave_no_conflict_unordered() {
        let mut x: u64 = 0x1234_5678_9abc_def1;
        let mut rnd = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        for _ in 0..40_000 {
            let exact = rnd(2) == 0;
            let block = [4usize, 8, 64][rnd(3)];
            let n = 2 + rnd(8);
            let tasks: Vec<Vec<(usize, usize, bool)>> = (0..n)
                .map(|_| {
                    (0..1 + rnd(3))
                        .map(|_| {
                            let lo = rnd(24);
                            (lo, lo + 1 + rnd(24 - lo), rnd(2) == 0)
                        })
                        .collect()
                })
                .collect();
            let mut region = Region::new();
            let mut t: Trie<u8> = Trie::new(64, block);
            let ids = vec![0u8; n];
            let base = ids.as_ptr();
            let mut dep = vec![vec![false; n]; n];
            for (i, fps) in tasks.iter().enumerate() {
                for &(lo, hi, w) in fps {
                    // SAFETY (test): pointers into `ids`, used as identities only.
                    let me = unsafe { base.add(i) };
                    t.access(lo..hi, w, (exact, block), me, &mut region, &mut |p| {
                        // SAFETY (test): as above.
                        let j = unsafe { p.offset_from(base) } as usize;
                        assert!(j < i, "an edge from task {i} to task {j}");
                        dep[i][j] = true;
                    });
                }
            }
            // Transitive closure (Warshall).
            for k in 0..n {
                let via = dep[k].clone();
                for row in dep.iter_mut() {
                    if row[k] {
                        for (d, &v) in row.iter_mut().zip(&via) {
                            *d |= v;
                        }
                    }
                }
            }
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
}
