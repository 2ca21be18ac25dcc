//! Where a declaration lies in its region, whatever the region lets a task do with it: the
//! bounds-checked arithmetic shared by the writable handles ([`Region`](super::Region),
//! [`Part`](super::Part), [`Matrix`](super::Matrix), [`Sub`](super::Sub)) and their read-only
//! twins, which add only a lifetime and the modes they offer.

use std::marker::PhantomData;
use std::ops::Range;

use super::{Read, TileRead, TileWrite, Write};
use crate::dataflow::footprint::Mode;
use crate::dataflow::Footprint;

/// Elements `[start, start + len)` of region `id` of the scope `frame`; `ptr` points at
/// element `start`. Made only from a borrow of the whole region (`&mut [T]` for a writable
/// one, `&[T]` for a read-only one) and narrowed by bounds-checked steps, so every element it
/// names lies in the region. A read-only region's `ptr` is never written through: only its
/// read-only handles, which offer no write, hold it.
pub(in crate::dataflow) struct Span<T> {
    pub(in crate::dataflow) frame: *const (),
    pub(in crate::dataflow) id: u32,
    pub(in crate::dataflow) ptr: *mut T,
    pub(in crate::dataflow) start: usize,
    pub(in crate::dataflow) len: usize,
}

impl<T> Clone for Span<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Span<T> {}

impl<T> Span<T> {
    /// Elements `range` of the span (counted from its start); `what` names the span in the
    /// panic message if the range is out of bounds.
    pub(super) fn part(&self, range: Range<usize>, what: &str) -> Span<T> {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "data-flow part {range:?} is out of bounds: the {what} has {} elements",
            self.len
        );
        Span {
            ptr: self.ptr.wrapping_add(range.start),
            start: self.start + range.start,
            len: range.end - range.start,
            ..*self
        }
    }

    /// Element `i` of the span, as a span of one element.
    pub(super) fn at(&self, i: usize, what: &str) -> Span<T> {
        assert!(
            i < self.len,
            "data-flow element {i} is out of bounds: the {what} has {} elements",
            self.len
        );
        self.part(i..i + 1, what)
    }

    /// Consecutive spans of `size` elements (the last may be shorter).
    pub(super) fn chunks(self, size: usize) -> impl Iterator<Item = Span<T>> {
        assert!(size > 0, "data-flow region chunks of 0 elements");
        (0..self.len)
            .step_by(size)
            .map(move |s| self.part(s..(s + size).min(self.len), "region"))
    }

    pub(super) fn footprint(&self, mode: Mode) -> Footprint {
        Footprint {
            frame: self.frame,
            region: self.id,
            start: self.start,
            len: self.len,
            ld: self.len,
            rows: 1,
            mode,
            reduce: None,
            weak: false,
        }
    }

    pub(super) fn read<'s>(self) -> Read<'s, T> {
        self.shared(Mode::Read)
    }

    /// A `concurrent` access: shared, like a read, in a group of its own kind.
    pub(super) fn concurrent<'s>(self) -> Read<'s, T> {
        self.shared(Mode::Concurrent)
    }

    fn shared<'s>(self, mode: Mode) -> Read<'s, T> {
        Read {
            fp: self.footprint(mode),
            ptr: self.ptr,
            marker: PhantomData,
        }
    }

    /// A write: only for a span of a writable region.
    pub(super) fn write<'s>(self) -> Write<'s, T> {
        self.exclusive(Mode::Write)
    }

    /// A `commutative` access: exclusive at run time, in any order among its group. Only
    /// for a span of a writable region.
    pub(super) fn commutative<'s>(self) -> Write<'s, T> {
        self.exclusive(Mode::Commutative)
    }

    fn exclusive<'s>(self, mode: Mode) -> Write<'s, T> {
        Write {
            fp: self.footprint(mode),
            ptr: self.ptr,
            marker: PhantomData,
        }
    }

    /// The span seen as a row-major matrix of `rows` × `cols` elements whose rows start `ld`
    /// apart. Panics if that does not fit.
    pub(super) fn grid(&self, rows: usize, cols: usize, ld: usize) -> Grid<T> {
        assert!(
            ld >= cols,
            "data-flow matrix: leading dimension {ld} < {cols} columns"
        );
        let need = if rows == 0 {
            Some(0)
        } else {
            (rows - 1).checked_mul(ld).and_then(|x| x.checked_add(cols))
        };
        let need = need.unwrap_or(usize::MAX);
        assert!(
            need <= self.len,
            "data-flow matrix of {rows}×{cols} (leading dimension {ld}) needs {need} elements; \
             the region has {}",
            self.len
        );
        Grid {
            frame: self.frame,
            id: self.id,
            ptr: self.ptr,
            offset: self.start,
            rows,
            cols,
            ld,
        }
    }
}

/// A row-major matrix of `rows` × `cols` elements, rows `ld` apart, whose first element is
/// element `offset` of its region (at `ptr`). Checked to fit its region when made.
pub(in crate::dataflow) struct Grid<T> {
    frame: *const (),
    id: u32,
    ptr: *mut T,
    offset: usize,
    pub(super) rows: usize,
    pub(super) cols: usize,
    ld: usize,
}

impl<T> Clone for Grid<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Grid<T> {}

impl<T> Grid<T> {
    /// A tile's rows and columns over `span`, the tile's whole extent
    /// (`(rows - 1) * ld + cols` elements, or none): the tile's constructors checked that it
    /// lies in memory, and a tile of one row may have `ld < cols`, which
    /// [`Span::grid`] refuses.
    pub(in crate::dataflow) fn of_tile(span: Span<T>, rows: usize, cols: usize, ld: usize) -> Self {
        Grid {
            frame: span.frame,
            id: span.id,
            ptr: span.ptr,
            offset: span.start,
            rows,
            cols,
            ld,
        }
    }

    /// The sub-matrix of `h` × `w` at row `r`, column `c`. Panics if it does not fit.
    pub(super) fn sub(&self, r: usize, c: usize, h: usize, w: usize) -> Block<T> {
        assert!(
            r.checked_add(h).is_some_and(|e| e <= self.rows)
                && c.checked_add(w).is_some_and(|e| e <= self.cols),
            "data-flow sub-matrix {h}×{w} at ({r}, {c}) does not fit a {}×{} matrix",
            self.rows,
            self.cols
        );
        let off = r * self.ld + c;
        Block {
            frame: self.frame,
            id: self.id,
            ptr: self.ptr.wrapping_add(off),
            start: self.offset + off,
            rows: h,
            cols: w,
            ld: self.ld,
        }
    }

    /// Tile `(i, j)` of `bs` × `bs`, smaller at the right and bottom edges.
    pub(super) fn tile(&self, i: usize, j: usize, bs: usize) -> Block<T> {
        assert!(bs > 0, "data-flow tiles of size 0");
        let (r, c) = (i.saturating_mul(bs), j.saturating_mul(bs));
        assert!(
            r < self.rows && c < self.cols,
            "data-flow tile ({i}, {j}) of {bs}×{bs} is outside a {}×{} matrix",
            self.rows,
            self.cols
        );
        self.sub(r, c, bs.min(self.rows - r), bs.min(self.cols - c))
    }
}

/// A sub-matrix of a [`Grid`]: `rows` × `cols` elements, rows `ld` apart, from element
/// `start` of the region (at `ptr`).
pub(in crate::dataflow) struct Block<T> {
    frame: *const (),
    id: u32,
    ptr: *mut T,
    start: usize,
    rows: usize,
    cols: usize,
    ld: usize,
}

impl<T> Clone for Block<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Block<T> {}

impl<T> Block<T> {
    /// The block's first element.
    pub(super) fn ptr(&self) -> *mut T {
        self.ptr
    }

    pub(super) fn footprint(&self, mode: Mode) -> Footprint {
        Footprint {
            frame: self.frame,
            region: self.id,
            start: self.start,
            len: self.cols,
            ld: self.ld,
            rows: self.rows,
            mode,
            reduce: None,
            weak: false,
        }
    }

    pub(super) fn read<'s>(self) -> TileRead<'s, T> {
        self.shared(Mode::Read)
    }

    /// A `concurrent` access (see [`Span::concurrent`]).
    pub(super) fn concurrent<'s>(self) -> TileRead<'s, T> {
        self.shared(Mode::Concurrent)
    }

    fn shared<'s>(self, mode: Mode) -> TileRead<'s, T> {
        TileRead {
            fp: self.footprint(mode),
            tile: (self.ptr, self.rows, self.cols, self.ld),
            marker: PhantomData,
        }
    }

    /// A write: only for a block of a writable region.
    pub(super) fn write<'s>(self) -> TileWrite<'s, T> {
        self.exclusive(Mode::Write)
    }

    /// A `commutative` access (see [`Span::commutative`]).
    pub(super) fn commutative<'s>(self) -> TileWrite<'s, T> {
        self.exclusive(Mode::Commutative)
    }

    fn exclusive<'s>(self, mode: Mode) -> TileWrite<'s, T> {
        TileWrite {
            fp: self.footprint(mode),
            tile: (self.ptr, self.rows, self.cols, self.ld),
            marker: PhantomData,
        }
    }
}
