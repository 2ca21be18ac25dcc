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
//!   nothing extra. While every access to a block covers the whole block, the slot keeps
//!   that one range's state itself, as in block mode (no entry to allocate and follow); the
//!   first access to a part of the block moves it into an entry.
//!
//! - **Rectangle mode** (exact tables, a fast path for tiled programs): a multi-row access
//!   costs one look-up per row above. While every access to a region is a rectangle (rows of
//!   equal length, a stride apart, not overlapping each other) equal to an earlier one or
//!   disjoint from all earlier ones, the region's table keeps one exact-mode state per
//!   rectangle instead, found through the entry of its first row; a second trie (`cover`)
//!   records which bytes each rectangle covers, so that a new rectangle is checked once, row
//!   by row, for overlap. The first access that is a single row, overlaps a rectangle in
//!   part, or has overlapping rows ends rectangle mode for the region: each rectangle's
//!   writer and readers are copied into per-row entries ([`RectMode::leave`]) and the table
//!   goes on as above. Same edges as the per-row table, found with fewer look-ups.
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
                let whole = (b * block, (b + 1) * block);
                let (l, h) = (lo.max(whole.0), hi.min(whole.1));
                exact_access(slot, (l, h), whole, write, task, region, edge);
            } else {
                block_access(slot, write, task, region, edge);
            }
        }
    }
}

/// A rectangle of bytes: `rows` rows of `len` bytes (`len > 0`, `rows > 0`), `stride` bytes
/// apart, the first starting at byte `lo` of the region. One row: `stride` is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rect {
    pub(crate) lo: usize,
    pub(crate) len: usize,
    pub(crate) rows: usize,
    pub(crate) stride: usize,
}

impl Rect {
    fn row(&self, r: usize) -> (usize, usize) {
        let lo = self.lo + r * self.stride;
        (lo, lo + self.len)
    }
}

/// A rectangle's state in rectangle mode: its last writer and the readers since (block
/// mode's rule, on the whole rectangle), and the next rectangle of the table.
struct RectState<D> {
    rect: Rect,
    state: Slot<D>,
    next: *mut RectState<D>,
}

/// Rectangle mode, for exact tables: the look-up table of a region starts in it, and leaves it
/// for good at the first access it cannot take.
///
/// Strided accesses (a tile of a matrix, say) are many rows, and the trie has an entry per
/// row and block: a 128 × 128 tile of `f64` is 128 entries to look at per access. But most
/// programs access a matrix tile by tile, each access the very tile of an earlier one or
/// apart from all of them. Then one state per rectangle orders them exactly as the per-row
/// entries would (every row of a rectangle has had the same accesses), at one look-up per
/// access. So while every access so far is identical to or disjoint from each earlier one,
/// the table keeps one state per rectangle, and a trie of rectangles (`cover`) only records
/// which bytes each covers: a new rectangle is checked against it once, row by row, when it
/// first comes; an access that meets it again finds it by its first row. The first access
/// that overlaps a rectangle in part, or is a single row (which gains nothing from it), or
/// whose rows overlap each other, ends rectangle mode: each rectangle's state is copied into
/// the per-row entries of the region's trie, and that access and all later ones go row by
/// row.
pub(crate) struct RectMode<D> {
    /// Which bytes each rectangle covers: exact-mode entries whose "writer" is the
    /// rectangle's state. Empty (no leaf vector) until the first rectangle comes, so that a
    /// region whose first access leaves rectangle mode never pays for a second trie.
    cover: Trie<RectState<D>>,
    /// The region's size.
    bytes: usize,
    /// Every rectangle of the table (a list through `RectState::next`).
    all: *mut RectState<D>,
}

impl<D> RectMode<D> {
    /// Rectangle mode for a region of `bytes` bytes.
    pub(crate) fn new(bytes: usize) -> RectMode<D> {
        RectMode {
            cover: Trie { leaves: Vec::new() },
            bytes,
            all: ptr::null_mut(),
        }
    }

    /// Records an access of `task` to `rect` if rectangle mode can take it, calling `edge`
    /// for each earlier access it must wait for; returns whether it did. If not, the caller
    /// ends rectangle mode ([`leave`](Self::leave)) and goes row by row.
    #[inline(never)]
    pub(crate) fn access(
        &mut self,
        rect: Rect,
        write: bool,
        block: usize,
        task: *const D,
        region: &mut Region,
        edge: &mut dyn FnMut(*const D),
    ) -> bool {
        if rect.rows < 2 {
            return false;
        }
        if self.cover.leaves.is_empty() {
            self.cover = Trie::new(self.bytes, block);
        }
        match self.find_or_add(rect, block, region) {
            Some(state) => {
                // SAFETY: rectangle states live in the owner's region, alive while the table
                // is; `&mut self` makes this the only reference.
                block_access(
                    unsafe { &mut (*state).state },
                    write,
                    task,
                    region,
                    &mut &mut *edge,
                );
                true
            }
            None => false,
        }
    }

    /// Ends rectangle mode: copies every rectangle's state into per-row entries of `trie`
    /// (empty so far: the region's accesses all went here).
    #[cold]
    #[inline(never)]
    pub(crate) fn leave(self, trie: &mut Trie<D>, block: usize, region: &mut Region) {
        debug_assert!(
            trie.leaves.iter().all(|l| l.is_null()),
            "rectangle mode ends on a region whose trie is still empty"
        );
        let mut s = self.all;
        while !s.is_null() {
            // SAFETY: rectangle states live in the owner's region (see `access`).
            let st = unsafe { &*s };
            for r in 0..st.rect.rows {
                let (lo, hi) = st.rect.row(r);
                for b in lo / block..=(hi - 1) / block {
                    let (l, h) = (lo.max(b * block), hi.min((b + 1) * block));
                    let slot = trie.slot(b, region);
                    // The rectangles are disjoint, so the entries of a slot do not overlap,
                    // and reader lists are shared read-only (later accesses only prepend to
                    // a list or drop it).
                    let e = region.alloc(Entry {
                        lo: l,
                        hi: h,
                        writer: st.state.writer,
                        readers: st.state.readers,
                        next: slot.entries,
                    });
                    slot.entries = e.as_ptr();
                }
            }
            s = st.next;
        }
    }
    /// The state of `rect` if every earlier rectangle is `rect` itself or disjoint from it
    /// (adding a state for a new one); `None` if one overlaps it in part.
    fn find_or_add(
        &mut self,
        rect: Rect,
        block: usize,
        region: &mut Region,
    ) -> Option<*mut RectState<D>> {
        // The first row's first piece: an access to a known rectangle finds it here.
        let (lo, hi) = rect.row(0);
        let b = lo / block;
        let h = hi.min((b + 1) * block);
        let slot = self.cover.slot(b, region);
        let mut e = slot.entries;
        let mut met = false;
        while !e.is_null() {
            // SAFETY: entries live in the owner's region (see `Trie::access`).
            let en = unsafe { &*e };
            if en.lo < h && lo < en.hi {
                let owner = en.writer.cast_mut();
                // SAFETY: a cover entry's writer is its rectangle's state, in the region.
                if en.lo == lo && en.hi == h && unsafe { (*owner).rect } == rect {
                    return Some(owner);
                }
                met = true;
            }
            e = en.next;
        }
        if met || (rect.rows > 1 && rect.stride < rect.len) {
            return None;
        }
        // A new rectangle (whose rows do not overlap each other): it must meet no earlier
        // one anywhere.
        for r in 0..rect.rows {
            let (lo, hi) = rect.row(r);
            for b in lo / block..=(hi - 1) / block {
                let (l, h) = (lo.max(b * block), hi.min((b + 1) * block));
                let mut e = self.cover.slot(b, region).entries;
                while !e.is_null() {
                    // SAFETY: as above.
                    let en = unsafe { &*e };
                    if en.lo < h && l < en.hi {
                        return None;
                    }
                    e = en.next;
                }
            }
        }
        let state = region
            .alloc(RectState {
                rect,
                state: Slot {
                    writer: ptr::null(),
                    readers: ptr::null_mut(),
                    entries: ptr::null_mut(),
                },
                next: self.all,
            })
            .as_ptr();
        self.all = state;
        for r in 0..rect.rows {
            let (lo, hi) = rect.row(r);
            for b in lo / block..=(hi - 1) / block {
                let (l, h) = (lo.max(b * block), hi.min((b + 1) * block));
                let slot = self.cover.slot(b, region);
                let e = region.alloc(Entry {
                    lo: l,
                    hi: h,
                    writer: state.cast_const(),
                    readers: ptr::null_mut(),
                    next: slot.entries,
                });
                slot.entries = e.as_ptr();
            }
        }
        Some(state)
    }
}

#[inline(always)]
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

/// An exact-mode access to bytes `[lo, hi)` inside the block `whole` of `slot`.
///
/// While every access to a block has covered the whole block, the slot keeps that range's
/// state in its own `writer` and `readers`, as block mode does (same rules, one look-up
/// less, no entry to allocate); the first access to a part of it moves that state into an
/// entry of the whole block, and the block goes on with entries. A slot never has both.
#[inline(always)]
fn exact_access<D>(
    slot: &mut Slot<D>,
    (lo, hi): (usize, usize),
    whole: (usize, usize),
    write: bool,
    task: *const D,
    region: &mut Region,
    edge: &mut impl FnMut(*const D),
) {
    if slot.entries.is_null() {
        if (lo, hi) == whole {
            block_access(slot, write, task, region, edge);
            return;
        }
        if !slot.writer.is_null() || !slot.readers.is_null() {
            let e = region.alloc(Entry {
                lo: whole.0,
                hi: whole.1,
                writer: slot.writer,
                readers: slot.readers,
                next: ptr::null_mut(),
            });
            slot.entries = e.as_ptr();
            slot.writer = ptr::null();
            slot.readers = ptr::null_mut();
        }
    }
    exact_entries(slot, lo, hi, write, task, region, edge);
}

/// [`exact_access`] on a block whose state is kept as entries (none yet at its first
/// partial access).
fn exact_entries<D>(
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

    /// A rectangle access in the tests: `(lo, len, rows, stride, write)`.
    type RectAccess = (usize, usize, usize, usize, bool);

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

    /// Runs tasks of rectangle accesses `(lo, len, rows, stride, write)` through one table;
    /// returns each task's predecessors (sorted, deduplicated) and whether the table was still
    /// in rectangle mode at the end.
    fn rect_edges(
        tasks: &[Vec<RectAccess>],
        (exact, block): (bool, usize),
    ) -> (Vec<Vec<usize>>, bool) {
        let mut region = Region::new();
        // As the data-flow spawn path drives them: rectangle mode while it takes the
        // accesses, then the trie.
        let mut trie: Trie<u8> = Trie::new(256, block);
        let mut rects: Option<RectMode<u8>> = exact.then(|| RectMode::new(256));
        let ids = vec![0u8; tasks.len()];
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
                    let mut edge = |p: *const u8| {
                        // SAFETY (test): as above.
                        found.push(unsafe { p.offset_from(base) } as usize)
                    };
                    if let Some(rm) = &mut rects {
                        if rm.access(rect, w, block, me, &mut region, &mut edge) {
                            continue;
                        }
                    }
                    if let Some(rm) = rects.take() {
                        rm.leave(&mut trie, block, &mut region);
                    }
                    for r in 0..rows {
                        let (lo, hi) = rect.row(r);
                        trie.access(lo..hi, w, (exact, block), me, &mut region, &mut edge);
                    }
                }
                found.sort_unstable();
                found.dedup();
                found
            })
            .collect();
        (found, rects.is_some())
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

    /// An access that meets a rectangle in part ends rectangle mode, and what the
    /// rectangles recorded still orders it: it waits for the writers and readers of every
    /// tile it overlaps.
    #[test]
    fn a_partial_overlap_leaves_rectangle_mode_with_the_state_kept() {
        let tile = |i: usize, j: usize, w: bool| (i * 64 + j * 4, 4, 4, 16, w);
        let tasks = vec![
            vec![tile(0, 0, true)],             // 0
            vec![tile(0, 1, true)],             // 1
            vec![tile(0, 0, false)],            // 2: after 0
            vec![(2 * 16 + 2, 4, 3, 16, true)], // 3: rows 2-4, bytes 2-5: tiles (0,0), (0,1), (1,0), (1,1)
            vec![tile(0, 1, false)],            // 4: after 3 (not 1: 3 took over part of its bytes)
            vec![tile(1, 1, true)],             // 5: after 3
        ];
        let (e, rect_mode) = rect_edges(&tasks, (true, 8));
        assert!(!rect_mode);
        assert_eq!(e[3], [1, 2]); // the readers of (0,0) since 0, and the writer of (0,1)
        assert_eq!(e[4], [1, 3]); // rows 0-1 of the tile were last written by 1
        assert_eq!(e[5], [3]);
        // A rectangle whose rows overlap each other goes row by row too.
        let (_, rect_mode) = rect_edges(&[vec![(0, 8, 2, 4, true)]], (true, 8));
        assert!(!rect_mode);
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

    /// Random tasks of one to three rectangle accesses over a 16 × 16-byte matrix, most of
    /// them tiles of a 4 × 4 grid (so that rectangle mode lasts a while), some arbitrary:
    /// every conflicting pair is ordered, and in exact mode every edge is a true conflict.
    #[test]
    fn random_rectangles_leave_no_conflict_unordered() {
        let mut rnd = xorshift(0x0dd_ba11_cafe_f00d);
        let (mut left_rect_mode, mut stayed) = (0, 0);
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
            let (edges, rect_mode) = rect_edges(&tasks, (exact, block));
            if exact && !rect_mode {
                left_rect_mode += 1;
            }
            if exact && rect_mode {
                stayed += 1;
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
        // Both ways were taken: sequences that stayed in rectangle mode and ones that left.
        assert!(
            left_rect_mode > 1000 && stayed > 1000,
            "{left_rect_mode} {stayed}"
        );
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
            let mut t: Trie<u8> = Trie::new(size, block);
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
                    });
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
}
