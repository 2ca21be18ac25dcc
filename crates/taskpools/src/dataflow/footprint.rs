//! A declared access as the dependence analysis sees it: rows of elements of one region,
//! their bytes (the rectangle the look-up tables key on), how the task uses them, and whether
//! two of them overlap.

use super::lut::Rect;

/// How a task uses a part it declared: the access kinds of OmpSs-2 and OpenMP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `in`: runs beside other reads, after the last write.
    Read,
    /// OmpSs-2's `concurrent` (OpenMP 5.1's `inoutset`): runs beside other concurrent
    /// accesses, ordered against every other kind.
    Concurrent,
    /// OmpSs-2's `commutative` (OpenMP's `mutexinoutset`): one at a time with other
    /// commutative accesses, in any order; ordered against every other kind.
    Commutative,
    /// `out` / `inout`: alone, after everything before it.
    Write,
}

impl Mode {
    /// Whether the task gets a shared reference (`&[T]`): two accesses of one task may
    /// overlap only if both are.
    pub(crate) fn shared(self) -> bool {
        matches!(self, Mode::Read | Mode::Concurrent)
    }
}

/// One declared access, as the analysis sees it: rows of `len` elements, `ld` apart, starting
/// at element `start` of region `region` of the scope `frame`.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Footprint {
    pub(super) frame: *const (),
    pub(super) region: u32,
    pub(super) start: usize,
    pub(super) len: usize,
    pub(super) ld: usize,
    pub(super) rows: usize,
    pub(super) mode: Mode,
    /// A reduction's key (its reducer's type: see `reduce`), `None` for every other access.
    /// A reduction is not looked up in the tables (it touches only its copy); the key tells
    /// which open group it joins.
    pub(super) reduce: Option<fn() -> std::any::TypeId>,
    /// A weak access (`weak`): the task hands the part to its children and touches none of
    /// it; `mode` says whether they may write it.
    pub(super) weak: bool,
}

impl Footprint {
    /// The footprint's bytes in a region of `elem`-byte elements (`bytes` in all), as a
    /// rectangle; `None` if it is empty. Zero-sized elements: the region's one byte.
    ///
    /// # Panics
    /// If it reaches past the region, or its byte offsets do not fit in `usize` (a bug in the
    /// access's constructor).
    pub(super) fn bytes(&self, elem: usize, bytes: usize) -> Option<Rect> {
        if self.len == 0 || self.rows == 0 {
            return None;
        }
        if elem == 0 {
            return Some(Rect {
                lo: 0,
                len: 1,
                rows: 1,
                stride: 0,
            });
        }
        let stride = if self.rows == 1 { 0 } else { self.ld };
        // Every product and sum checked: a wrapped bound would let an access pass as inside.
        let rect = (|| {
            let rect = Rect {
                lo: self.start.checked_mul(elem)?,
                len: self.len.checked_mul(elem)?,
                rows: self.rows,
                stride: stride.checked_mul(elem)?,
            };
            let end = (rect.rows - 1)
                .checked_mul(rect.stride)?
                .checked_add(rect.lo)?
                .checked_add(rect.len)?;
            (end <= bytes).then_some(rect)
        })();
        assert!(
            rect.is_some(),
            "taskpools::dataflow: an access outside its region, or whose byte offsets \
             overflow (a bug in the access's constructor)"
        );
        rect
    }

    /// Element ranges `[lo, hi)` of the footprint's non-empty rows, in address order.
    pub(super) fn row_ranges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let n = if self.len == 0 { 0 } else { self.rows };
        (0..n).map(move |r| {
            let lo = self.start + r * self.ld;
            (lo, lo + self.len)
        })
    }

    /// Whether the two footprints (of the same region) share an element.
    pub(super) fn overlaps(&self, o: &Footprint) -> bool {
        self.overlaps_counted(o, &mut 0)
    }

    /// [`overlaps`](Self::overlaps), adding to `steps` the pairs of rows it compared.
    pub(super) fn overlaps_counted(&self, o: &Footprint, steps: &mut u64) -> bool {
        if self.len == 0 || o.len == 0 || self.rows == 0 || o.rows == 0 {
            return false;
        }
        if self.rows == 1 && o.rows == 1 {
            return self.start < o.start + o.len && o.start < self.start + self.len;
        }
        // Same layout: rectangles in (row, column) space when no row wraps past `ld`.
        if self.ld == o.ld && self.ld > 0 {
            let (r1, c1) = (self.start / self.ld, self.start % self.ld);
            let (r2, c2) = (o.start / o.ld, o.start % o.ld);
            if c1 + self.len <= self.ld && c2 + o.len <= o.ld {
                return r1 < r2 + o.rows
                    && r2 < r1 + self.rows
                    && c1 < c2 + o.len
                    && c2 < c1 + self.len;
            }
        }
        // A sweep over the rows of both, in address order: each footprint's rows start
        // `ld >= 0` apart and have one length, so both their starts and their ends never
        // decrease. Of two disjoint rows, the one that ends first meets no later row of the
        // other (those start no earlier than the row it missed), nor any row already passed
        // over (each was passed over for the same reason), so it is passed over in turn: at
        // most `self.rows + o.rows` comparisons, where every pair of rows took their product.
        let row = |f: &Footprint, r: usize| {
            let lo = f.start + r * f.ld;
            (lo, lo + f.len)
        };
        let (mut i, mut j) = (0, 0);
        while i < self.rows && j < o.rows {
            *steps += 1;
            let ((a, b), (c, d)) = (row(self, i), row(o, j));
            if a < d && c < b {
                return true;
            }
            if b <= c {
                i += 1;
            } else {
                j += 1;
            }
        }
        false
    }
}
