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
//!   by row, for overlap. The first access that is a single row or has overlapping rows ends
//!   rectangle mode for the region (one that overlaps a rectangle in part turns it into grid
//!   mode, below, where it can): each rectangle's writer and readers are copied into per-row
//!   entries ([`RectMode::leave`]) and the table goes on as above. Same edges as the per-row
//!   table, found with fewer look-ups.
//!
//! - **Grid mode** (after rectangle mode): the first rectangle that overlaps one in part
//!   (a stencil's read of a tile with its halo beside the writes of the tiles) turns the
//!   table to one state per cell of the grid that all the rectangles' edges cut, if they
//!   share one row stride and each one's columns lie within a row; each access then makes a
//!   block-mode access per cell it covers. Cells are never accessed in part, so the edges
//!   are exact. (Commutative accesses join a group per cell, as in block mode, not only on
//!   the very same range: two that overlap in part share the lock of the cells they share.)
//!   An access of another stride, one whose columns wrap into the next row, or one that
//!   would make more than [`grid::MAX_CELLS`] cells or pass the grid's budget of copies for
//!   its cuts ends it as rectangle mode ends ([`grid`]).
//!
//! - **Shared kinds** (OmpSs-2's `concurrent` and `commutative`, OpenMP's `inoutset` and
//!   `mutexinoutset`). Reads are one of three kinds of access that do not order each other:
//!   a range's (or a block's) accesses since its last writer form a *group* of one kind, and
//!   a new access of the group's kind joins it, waiting for what the group waits for (its
//!   *before* set: the last writer, or the whole group that came before). An access of
//!   another shared kind closes the group: it waits for all of the group's members, and the
//!   group becomes the before set of the new group it starts. A write waits for the group's
//!   members (or the before set when there are none) as before. Commutative groups get a
//!   lock (made by the caller, [`Sink::new_lock`]) that each member takes at run time, so
//!   they run one at a time in any order; in exact mode an access joins a commutative group
//!   only on the very same range (on an overlap in part it waits for the members), so that
//!   two commutative tasks whose bytes overlap either share a lock or are ordered. In block
//!   mode the group is the block's, and two commutative accesses to one block share its lock.
//!
//! Either way, every access that conflicts with an earlier sibling's (same bytes, one of them
//! a write) is ordered after it, directly or through a chain of edges: what makes the data
//! handed to tasks exclusive.

use std::ptr::{self, NonNull};

use super::footprint::Mode;
use crate::mem::region::Region;

mod grid;
mod rect;
#[cfg(test)]
mod tests;

pub(crate) use rect::{Rect, RectMode};

/// Slots per trie leaf.
pub(crate) const LEAF: usize = 256;

/// Where the analysis of one access reports what it found.
pub(crate) trait Sink<D> {
    /// The access must wait for `pred` (possibly reported more than once per task: the
    /// caller removes duplicates).
    fn edge(&mut self, pred: *const D);
    /// A new commutative group starts: the lock its members will hold, in memory that the
    /// threads running them can reach.
    fn new_lock(&mut self) -> *const () {
        NonNull::dangling().as_ptr()
    }
    /// The access joined a commutative group whose lock is `lock`.
    fn hold(&mut self, _lock: *const ()) {}
}

impl<D, S: Sink<D> + ?Sized> Sink<D> for &mut S {
    fn edge(&mut self, pred: *const D) {
        (**self).edge(pred)
    }
    fn new_lock(&mut self) -> *const () {
        (**self).new_lock()
    }
    fn hold(&mut self, lock: *const ()) {
        (**self).hold(lock)
    }
}

/// A sink that only takes edges, to a closure (the table's tests).
#[cfg(test)]
pub(crate) struct Edges<F>(pub(crate) F);

#[cfg(test)]
impl<D, F: FnMut(*const D)> Sink<D> for Edges<F> {
    fn edge(&mut self, pred: *const D) {
        (self.0)(pred)
    }
}

/// A member of a group of accesses that do not order each other (readers, concurrent or
/// commutative accesses). Every node of one list has the group's kind and lock.
struct Reader<D> {
    task: *const D,
    next: *mut Reader<D>,
    /// The group's lock (commutative groups only, else null).
    lock: *const (),
    kind: Mode,
}

/// The state of one range (or block): the accesses a new one may have to wait for.
///
/// `readers` is the group since the last write (its members do not order each other), and
/// what that group waits for is its *before* set: the last writer, or the group of another
/// kind that came before this one (see [`Before`]). With no group, a new access waits for
/// the before set.
struct State<D> {
    before: Before<D>,
    readers: *mut Reader<D>,
}

/// A before set in one word: null, a task (the last writer), or a list of group members
/// (tagged with the low bit; tasks and reader nodes are at least 2-aligned). A pointer, not an
/// integer, so the tag keeps the pointee's provenance (`map_addr`): no integer-to-pointer
/// cast, which Miri's strict provenance checks flag.
struct Before<D>(*const (), std::marker::PhantomData<*const D>);

impl<D> Clone for Before<D> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<D> Copy for Before<D> {}

impl<D> Before<D> {
    const NONE: Before<D> = Before(ptr::null(), std::marker::PhantomData);

    /// The low bit tags a group: both pointees are aligned to at least 2.
    const TAG_FITS: () = assert!(
        std::mem::align_of::<D>() >= 2 && std::mem::align_of::<Reader<D>>() >= 2,
        "a Before word keeps its tag in the pointers' low bit"
    );

    fn writer(task: *const D) -> Before<D> {
        let () = Self::TAG_FITS;
        debug_assert!(task.addr() & 1 == 0);
        Before(task.cast(), std::marker::PhantomData)
    }

    fn group(list: *mut Reader<D>) -> Before<D> {
        let () = Self::TAG_FITS;
        debug_assert!(list.addr() & 1 == 0);
        Before(
            list.cast_const().cast::<()>().map_addr(|a| a | 1),
            std::marker::PhantomData,
        )
    }

    /// The last writer, if this is one (null otherwise).
    fn task(self) -> *const D {
        if self.0.addr() & 1 == 0 {
            self.0.cast()
        } else {
            ptr::null()
        }
    }

    /// Reports the set (every task but `task` itself).
    #[inline(always)]
    fn report(self, task: *const D, sink: &mut impl Sink<D>) {
        if self.0.addr() & 1 == 0 {
            let w = self.0.cast::<D>();
            if !w.is_null() && w != task {
                sink.edge(w);
            }
        } else {
            members(
                self.0.map_addr(|a| a & !1).cast::<Reader<D>>().cast_mut(),
                task,
                sink,
            );
        }
    }
}

impl<D> State<D> {
    const EMPTY: State<D> = State {
        before: Before::NONE,
        readers: ptr::null_mut(),
    };

    /// The state right after a write by `task`.
    fn written(task: *const D) -> State<D> {
        State {
            before: Before::writer(task),
            readers: ptr::null_mut(),
        }
    }

    fn is_empty(&self) -> bool {
        self.before.0.is_null() && self.readers.is_null()
    }

    /// Reports the before set (every task but `task` itself).
    #[inline(always)]
    fn before(&self, task: *const D, sink: &mut impl Sink<D>) {
        self.before.report(task, sink);
    }

    /// The group's kind, if there is a group.
    fn kind(&self) -> Option<Mode> {
        // SAFETY: reader nodes live in the owner's region, alive while the table is.
        (!self.readers.is_null()).then(|| unsafe { (*self.readers).kind })
    }

    /// Closes the group (already waited for): it becomes the before set of a new group.
    fn close(&mut self) {
        self.before = Before::group(self.readers);
        self.readers = ptr::null_mut();
    }
}

impl<D> Clone for State<D> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<D> Copy for State<D> {}

/// Reports every member of the list at `r` but `task`.
#[inline(always)]
fn members<D>(mut r: *mut Reader<D>, task: *const D, sink: &mut impl Sink<D>) {
    while !r.is_null() {
        // SAFETY: reader nodes live in the owner's region, alive while the table is.
        let (t, next) = unsafe { ((*r).task, (*r).next) };
        if t != task {
            sink.edge(t);
        }
        r = next;
    }
}

/// A byte range recorded in exact mode: bytes `[lo, hi)` of the region, inside the block,
/// with its state.
struct Entry<D> {
    lo: usize,
    hi: usize,
    st: State<D>,
    next: *mut Entry<D>,
}

/// One block's state. All-zero is the empty slot.
struct Slot<D> {
    st: State<D>,
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

    /// Records an access of `task` in `mode` to `bytes` of the region (not empty), keyed
    /// `(exact, block)`, reporting to `sink` each earlier access it must wait for and each
    /// commutative group it joins.
    #[inline(always)]
    pub(crate) fn access(
        &mut self,
        bytes: std::ops::Range<usize>,
        mode: Mode,
        (exact, block): (bool, usize),
        task: *const D,
        region: &mut Region,
        sink: &mut impl Sink<D>,
    ) {
        let (lo, hi) = (bytes.start, bytes.end);
        debug_assert!(hi > lo);
        for b in lo / block..=(hi - 1) / block {
            let slot = self.slot(b, region);
            if exact {
                let whole = (b * block, (b + 1) * block);
                let (l, h) = (lo.max(whole.0), hi.min(whole.1));
                exact_access(slot, (l, h), whole, mode, task, region, sink);
            } else {
                block_access(&mut slot.st, mode, task, region, sink);
            }
        }
    }
}

/// A new group member's node: `kind`, and the lock of the group it joins (`head`'s), or a
/// new lock for a new commutative group.
#[inline(always)]
fn member<D>(
    task: *const D,
    mode: Mode,
    head: *mut Reader<D>,
    region: &mut Region,
    sink: &mut impl Sink<D>,
) -> *mut Reader<D> {
    let lock = if mode != Mode::Commutative {
        ptr::null()
    } else {
        group_lock(head, sink)
    };
    region
        .alloc(Reader {
            task,
            next: head,
            lock,
            kind: mode,
        })
        .as_ptr()
}

/// The lock of the commutative group whose newest member is `head` (a new one for a new
/// group), reported held.
#[inline(never)]
fn group_lock<D>(head: *mut Reader<D>, sink: &mut impl Sink<D>) -> *const () {
    let lock = if head.is_null() {
        sink.new_lock()
    } else {
        // SAFETY: reader nodes live in the owner's region.
        unsafe { (*head).lock }
    };
    sink.hold(lock);
    lock
}

/// A group of another kind than `mode` closes: the new group waits for all its members, and
/// they become its before set.
#[cold]
#[inline(never)]
fn close_group<D>(
    st: &mut State<D>,
    mode: Mode,
    task: *const D,
    region: &mut Region,
    sink: &mut impl Sink<D>,
) {
    members(st.readers, task, sink);
    st.close();
    st.readers = member(task, mode, ptr::null_mut(), region, sink);
}

/// An access to the whole of a state's range (a block in block mode, a whole block or a
/// rectangle in exact mode).
#[inline(always)]
fn block_access<D>(
    st: &mut State<D>,
    mode: Mode,
    task: *const D,
    region: &mut Region,
    sink: &mut impl Sink<D>,
) {
    if mode != Mode::Write {
        match st.kind() {
            // No group: start one after the before set.
            None => {
                st.before(task, sink);
                st.readers = member(task, mode, ptr::null_mut(), region, sink);
            }
            // Join the group: wait for what it waits for.
            Some(k) if k == mode => {
                st.before(task, sink);
                // SAFETY: reader nodes live in the owner's region.
                if unsafe { (*st.readers).task } != task {
                    st.readers = member(task, mode, st.readers, region, sink);
                }
            }
            // Another kind: wait for the group, which becomes the new group's before set.
            Some(_) => close_group(st, mode, task, region, sink),
        }
        return;
    }
    if st.readers.is_null() {
        st.before(task, sink);
    } else {
        // The group's members wait for the before set themselves.
        // A task that reads and writes the same block (two accesses) is both a member and
        // the writer: its later siblings wait for it through the writer.
        members(st.readers, task, sink);
    }
    *st = State::written(task);
}

/// An exact-mode access to bytes `[lo, hi)` inside the block `whole` of `slot`.
///
/// While every access to a block has covered the whole block, the slot keeps that range's
/// state itself, as block mode does (same rules, one look-up less, no entry to allocate);
/// the first access to a part of it moves that state into an entry of the whole block, and
/// the block goes on with entries. A slot never has both.
#[inline(always)]
fn exact_access<D>(
    slot: &mut Slot<D>,
    (lo, hi): (usize, usize),
    whole: (usize, usize),
    mode: Mode,
    task: *const D,
    region: &mut Region,
    sink: &mut impl Sink<D>,
) {
    if slot.entries.is_null() {
        if (lo, hi) == whole {
            block_access(&mut slot.st, mode, task, region, sink);
            return;
        }
        if !slot.st.is_empty() {
            let e = region.alloc(Entry {
                lo: whole.0,
                hi: whole.1,
                st: slot.st,
                next: ptr::null_mut(),
            });
            slot.entries = e.as_ptr();
            slot.st = State::EMPTY;
        }
    }
    exact_entries(slot, lo, hi, mode, task, region, sink);
}

/// [`exact_access`] on a block whose state is kept as entries (none yet at its first
/// partial access).
///
/// Against each entry whose range overlaps `[lo, hi)`: a write waits for the entry's group
/// (or its before set when it has none); an access of a shared kind waits for the entry's
/// before set if it could join the entry's group (same kind; for commutative accesses also
/// the same range, see the module docs) or there is none, else for the group's members.
fn exact_entries<D>(
    slot: &mut Slot<D>,
    lo: usize,
    hi: usize,
    mode: Mode,
    task: *const D,
    region: &mut Region,
    sink: &mut impl Sink<D>,
) {
    let write = mode == Mode::Write;
    let mut link: *mut *mut Entry<D> = &mut slot.entries;
    // The entry of exactly this range, which an access joins (or restarts) and a write
    // takes over.
    let mut same: *mut Entry<D> = ptr::null_mut();
    // SAFETY: entries and reader nodes live in the owner's region; `link` points at the slot's
    // head or at an entry's `next`, all valid while the table is.
    unsafe {
        while !(*link).is_null() {
            let e = *link;
            let exactly = (*e).lo == lo && (*e).hi == hi;
            if (*e).lo < hi && lo < (*e).hi {
                let st = &(*e).st;
                let joins = match st.kind() {
                    None => true,
                    Some(k) => !write && k == mode && (mode != Mode::Commutative || exactly),
                };
                if joins {
                    st.before(task, sink);
                } else {
                    members(st.readers, task, sink);
                }
            }
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
            let st = &mut (*same).st;
            if write {
                // The write becomes the range's writer, with no group since (what it covers
                // is dropped above): the entry is reused, not allocated again.
                *st = State::written(task);
                return;
            }
            match st.kind() {
                None => st.readers = member(task, mode, ptr::null_mut(), region, sink),
                Some(k) if k == mode => {
                    // A task that declares the same range twice is one member.
                    if (*st.readers).task != task {
                        st.readers = member(task, mode, st.readers, region, sink);
                    }
                }
                Some(_) => {
                    // Its members were waited for above.
                    st.close();
                    st.readers = member(task, mode, ptr::null_mut(), region, sink);
                }
            }
            return;
        }
    }
    let st = if write {
        State::written(task)
    } else {
        State {
            readers: member(task, mode, ptr::null_mut(), region, sink),
            ..State::EMPTY
        }
    };
    let e: NonNull<Entry<D>> = region.alloc(Entry {
        lo,
        hi,
        st,
        next: slot.entries,
    });
    slot.entries = e.as_ptr();
}
