//! The look-up table of a task: which of its children last wrote, and which read, each part of
//! the data the task hands to its children (Papakonstantinou, PARTEE (2015), §2,
//! Figures 2.6–2.7, and §3.4.3).
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
//! - **Block mode** (PARTEE's): a slot holds the block's last writer and the readers since.
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

mod rect;
#[cfg(test)]
mod tests;

pub(crate) use rect::{Rect, RectMode};

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
