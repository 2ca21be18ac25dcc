//! Rectangle mode of an exact look-up table: one state per tile while a region's accesses are
//! whole rectangles, each equal to an earlier one or disjoint from all (a fast path for tiled
//! programs; see the module docs of the look-up table).

use std::ptr;

use super::grid::Grid;
use super::{block_access, Entry, Mode, Sink, State, Trie};
use crate::mem::region::Region;

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
    pub(super) fn row(&self, r: usize) -> (usize, usize) {
        let lo = self.lo + r * self.stride;
        (lo, lo + self.len)
    }
}

/// A rectangle's state in rectangle mode: its last writer and the group since (block
/// mode's rule, on the whole rectangle), and the next rectangle of the table.
struct RectState<D> {
    rect: Rect,
    state: State<D>,
    next: *mut RectState<D>,
}

/// Rectangle mode, for exact tables: the look-up table of a region starts in it, and leaves it
/// for good at the first access it cannot take (or turns to grid mode, `grid.rs`, at the
/// first one that overlaps a rectangle in part, if grid mode can take them all).
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
/// that is a single row (which gains nothing from it), or whose rows overlap each other, or
/// that overlaps a rectangle in part where grid mode cannot take it, ends rectangle mode:
/// each rectangle's state is copied into the per-row entries of the region's trie, and that
/// access and all later ones go row by row.
pub(crate) struct RectMode<D> {
    /// Which bytes each rectangle covers: exact-mode entries whose "writer" is the
    /// rectangle's state. Empty (no leaf vector) until the first rectangle comes, so that a
    /// region whose first access leaves rectangle mode never pays for a second trie.
    cover: Trie<RectState<D>>,
    /// The region's size.
    bytes: usize,
    /// Every rectangle of the table (a list through `RectState::next`).
    all: *mut RectState<D>,
    /// Grid mode, once a rectangle overlapped another in part (then `cover` and `all` are
    /// no longer used).
    grid: Option<Grid<D>>,
}

impl<D> RectMode<D> {
    /// Rectangle mode for a region of `bytes` bytes.
    pub(crate) fn new(bytes: usize) -> RectMode<D> {
        RectMode {
            cover: Trie { leaves: Vec::new() },
            bytes,
            all: ptr::null_mut(),
            grid: None,
        }
    }

    /// Records an access of `task` to `rect` if rectangle mode can take it, calling `edge`
    /// for each earlier access it must wait for; returns whether it did. If not, the caller
    /// ends rectangle mode ([`leave`](Self::leave)) and goes row by row.
    #[inline(never)]
    pub(crate) fn access(
        &mut self,
        rect: Rect,
        mode: Mode,
        block: usize,
        task: *const D,
        region: &mut Region,
        sink: &mut dyn Sink<D>,
    ) -> bool {
        if let Some(g) = &mut self.grid {
            return g.access(&rect, mode, task, region, sink);
        }
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
                    mode,
                    task,
                    region,
                    &mut &mut *sink,
                );
                true
            }
            None => {
                self.enter_grid(&rect) && {
                    let g = self.grid.as_mut().expect("grid mode");
                    g.access(&rect, mode, task, region, sink)
                }
            }
        }
    }

    /// Whether the table is in grid mode (the tests).
    #[cfg(test)]
    pub(crate) fn in_grid(&self) -> bool {
        self.grid.is_some()
    }

    /// In grid mode, its cells and the cells its cuts have copied (the tests).
    #[cfg(test)]
    pub(crate) fn grid_stats(&self) -> Option<(usize, usize)> {
        self.grid.as_ref().map(|g| g.stats())
    }

    /// Turns to grid mode, with `rect` (which overlaps a rectangle in part) coming next:
    /// returns whether grid mode can take every rectangle so far and `rect`.
    #[cold]
    #[inline(never)]
    fn enter_grid(&mut self, rect: &Rect) -> bool {
        if rect.stride == 0 {
            return false;
        }
        let mut g = Grid::new(rect.stride, self.bytes);
        // In the order the rectangles came (the list is newest first): a tiled program's
        // row cuts then fall near the grid's end, where they move few cells.
        let mut all = Vec::new();
        let mut s = self.all;
        while !s.is_null() {
            // SAFETY: rectangle states live in the owner's region (see `access`).
            let st = unsafe { &*s };
            all.push((st.rect, st.state));
            s = st.next;
        }
        for (r, state) in all.into_iter().rev() {
            if !g.place(&r, state) {
                return false;
            }
        }
        if !g.fits_rect(rect) {
            return false;
        }
        self.grid = Some(g);
        true
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
        if let Some(g) = self.grid {
            g.leave(trie, block, region);
            return;
        }
        let mut s = self.all;
        while !s.is_null() {
            // SAFETY: rectangle states live in the owner's region (see `access`).
            let st = unsafe { &*s };
            for r in 0..st.rect.rows {
                let (lo, hi) = st.rect.row(r);
                put_range(trie, block, region, lo, hi, st.state);
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
                let owner = en.st.before.task().cast_mut();
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
                state: State::EMPTY,
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
                    st: State::written(state.cast_const()),
                    next: slot.entries,
                });
                slot.entries = e.as_ptr();
            }
        }
        Some(state)
    }
}

/// Puts state `st` of bytes `lo..hi` (not empty) into per-row entries of `trie`, one per
/// block it touches: what leaving rectangle or grid mode does for each row of a rectangle or
/// cell. Those are disjoint, so the entries of a slot do not overlap, and reader lists are
/// shared read-only (later accesses only prepend to a list or drop it).
pub(super) fn put_range<D>(
    trie: &mut Trie<D>,
    block: usize,
    region: &mut Region,
    lo: usize,
    hi: usize,
    st: State<D>,
) {
    for b in lo / block..=(hi - 1) / block {
        let (l, h) = (lo.max(b * block), hi.min((b + 1) * block));
        let slot = trie.slot(b, region);
        let e = region.alloc(Entry {
            lo: l,
            hi: h,
            st,
            next: slot.entries,
        });
        slot.entries = e.as_ptr();
    }
}
