//! Grid mode of an exact look-up table: what rectangle mode becomes when rectangles of one
//! matrix overlap in part (a stencil's reads of a tile with its halo beside the writes of
//! the tiles), so that such programs keep one state per piece instead of going row by row.
//!
//! Every access so far is a rectangle of the same row stride whose columns lie within one
//! row, so together their edges cut the matrix into a grid: *row bands* between consecutive
//! row cuts and *column bands* between consecutive column cuts. No access ends inside a cell
//! (a row band by a column band), so every byte of a cell has had the same accesses, and one
//! state per cell orders accesses as exactly as per-row entries would (commutative accesses
//! join a group per cell, as in block mode, where the per-row entries join one only on the
//! very same range: two that overlap in part share the lock of the cells they share, instead
//! of being ordered; both are what `commutative` allows). A new rectangle adds its
//! four edges as cuts (a cut splits a band in two, each half keeping the band's states) and
//! then makes one block-mode access per cell it covers: a tile read with its one-element
//! halo, among tiles so read, covers 5 × 5 cells. An access of another stride, or whose
//! columns wrap into the next row, or one that would take the grid past [`MAX_CELLS`] cells
//! or past its budget of copies ([`FREE_COPIES`]), ends grid mode: each cell's state goes
//! into per-row entries ([`Grid::leave`]), as rectangle mode's do.

use super::rect::{put_range, Rect};
use super::{block_access, Mode, Sink, State, Trie};
use crate::mem::region::Region;

/// The most cells a grid holds (16 bytes each); an access that would need more ends grid
/// mode. Tiles of `t`² read with their halos make about (3 · tiles per side)² cells: 8 836
/// for tiles of 128² on a 4096² matrix; tiles of 64² on an 8192² one would make 145 924, and
/// go row by row.
pub(super) const MAX_CELLS: usize = 1 << 16;

/// Cells a grid may copy for its cuts (a row cut moves the cells after it, a column cut
/// rebuilds the grid) beyond [`COPIES_PER_ACCESS`] per access: past that, an access that
/// needs a cut ends grid mode. A stencil's cuts all come with its first two sweeps (for the
/// halo reads, then the tile writes, of each matrix): about 256 000 cells copied in all for
/// tiles of 128² on a 4096² matrix, 2.1 million on an 8192² one, 4.1 million on a 10240²
/// one, whose 56 644 cells are near the limit; a stream of ever new sub-matrices in no
/// order, whose cuts would cost time quadratic in their number, goes row by row instead.
const FREE_COPIES: usize = 128 * MAX_CELLS;

/// See [`FREE_COPIES`].
const COPIES_PER_ACCESS: usize = 64;

/// Grid mode's state (see the module docs).
pub(super) struct Grid<D> {
    /// Bytes from one row of the matrix to the next (not 0).
    stride: usize,
    /// Row cuts (row numbers: byte offset / `stride`), increasing, from 0 to past the last
    /// row: row band `i` is rows `rows[i]..rows[i + 1]`.
    rows: Vec<usize>,
    /// Column cuts (byte offsets in a row), increasing, from 0 to `stride`.
    cols: Vec<usize>,
    /// One state per cell, row band after row band.
    cells: Vec<State<D>>,
    /// Cells copied by cuts so far, and the copies allowed (see [`FREE_COPIES`]).
    copied: usize,
    allowed: usize,
}

impl<D> Grid<D> {
    /// An empty grid (one cell, never accessed) of rows `stride` bytes apart over a region
    /// of `bytes` bytes.
    pub(super) fn new(stride: usize, bytes: usize) -> Grid<D> {
        assert!(stride > 0, "a grid of rows 0 bytes apart");
        Grid {
            stride,
            rows: vec![0, bytes.div_ceil(stride).max(1)],
            cols: vec![0, stride],
            cells: vec![State::EMPTY],
            copied: 0,
            allowed: FREE_COPIES,
        }
    }

    /// The row range and column range of `rect` in this grid's terms, if it is a rectangle
    /// of the grid's stride (or a single row) whose columns lie within one row.
    fn span(&self, rect: &Rect) -> Option<((usize, usize), (usize, usize))> {
        if rect.rows > 1 && rect.stride != self.stride {
            return None;
        }
        let (r0, c0) = (rect.lo / self.stride, rect.lo % self.stride);
        let c1 = c0.checked_add(rect.len)?;
        let r1 = r0.checked_add(rect.rows)?;
        (c1 <= self.stride && r1 <= *self.rows.last().expect("cuts"))
            .then_some(((r0, r1), (c0, c1)))
    }

    /// Whether the cuts of `(r, c)` keep the grid within [`MAX_CELLS`] cells and its copies
    /// within those allowed.
    fn fits(&self, (r0, r1): (usize, usize), (c0, c1): (usize, usize)) -> bool {
        let new = |cuts: &[usize], a: usize, b: usize| {
            usize::from(cuts.binary_search(&a).is_err())
                + usize::from(cuts.binary_search(&b).is_err())
        };
        let (nr, nc) = (new(&self.rows, r0, r1), new(&self.cols, c0, c1));
        let h = self.rows.len() - 1 + nr;
        let w = self.cols.len() - 1 + nc;
        // Each row cut copies at most the grid it ends with, and the column cuts rebuild it
        // once.
        let cuts = nr + usize::from(nc > 0);
        h.checked_mul(w)
            .is_some_and(|n| n <= MAX_CELLS && self.copied + cuts * n <= self.allowed)
    }

    /// The grid's cells and the cells its cuts have copied (the tests).
    #[cfg(test)]
    pub(super) fn stats(&self) -> (usize, usize) {
        (self.cells.len(), self.copied)
    }

    /// Whether [`access`](Self::access) can take `rect` (a rectangle of the grid's stride
    /// that fits).
    pub(super) fn fits_rect(&self, rect: &Rect) -> bool {
        self.span(rect).is_some_and(|(r, c)| self.fits(r, c))
    }

    /// Cuts the row band holding row `x` at `x` (nothing if `x` is a cut already): both
    /// halves keep the band's states. Returns the band that starts at `x`.
    fn cut_row(&mut self, x: usize) -> usize {
        let i = match self.rows.binary_search(&x) {
            Ok(i) => return i,
            Err(i) => i,
        };
        let w = self.cols.len() - 1;
        let band = (i - 1) * w..i * w;
        self.copied += self.cells.len() - band.start;
        self.rows.insert(i, x);
        let copy: Vec<State<D>> = self.cells[band.clone()].to_vec();
        self.cells.splice(band.end..band.end, copy);
        i
    }

    /// Cuts the column bands holding byte columns `a` and `b` there (nothing for a cut that
    /// is one already), in one rebuild of the grid: each new band keeps the states of the
    /// band it was part of. Returns the bands that start at `a` and at `b`.
    fn cut_cols(&mut self, a: usize, b: usize) -> (usize, usize) {
        let new: Vec<usize> = [a, b]
            .into_iter()
            .filter(|x| self.cols.binary_search(x).is_err())
            .collect();
        if !new.is_empty() {
            let mut cols = self.cols.clone();
            for &x in &new {
                let j = cols.binary_search(&x).expect_err("a new cut");
                cols.insert(j, x);
            }
            cols.dedup();
            // The old band each new band lies in.
            let from: Vec<usize> = cols[..cols.len() - 1]
                .iter()
                .map(|x| match self.cols.binary_search(x) {
                    Ok(k) => k,
                    Err(k) => k - 1,
                })
                .collect();
            let w = self.cols.len() - 1;
            let mut cells = Vec::with_capacity((self.rows.len() - 1) * from.len());
            for row in self.cells.chunks_exact(w) {
                cells.extend(from.iter().map(|&k| row[k]));
            }
            self.copied += cells.len();
            self.cells = cells;
            self.cols = cols;
        }
        let at = |x: usize| self.cols.binary_search(&x).expect("a cut");
        (at(a), at(b))
    }

    /// Cuts the grid at `rect`'s edges and gives `f` the state of each cell it covers;
    /// `false` (and nothing changed) if grid mode cannot take `rect`.
    fn cover(&mut self, rect: &Rect, mut f: impl FnMut(&mut State<D>)) -> bool {
        let Some((r, c)) = self.span(rect) else {
            return false;
        };
        if !self.fits(r, c) {
            return false;
        }
        self.allowed = self.allowed.saturating_add(COPIES_PER_ACCESS);
        let (i0, i1) = (self.cut_row(r.0), self.cut_row(r.1));
        let (j0, j1) = self.cut_cols(c.0, c.1);
        let w = self.cols.len() - 1;
        for i in i0..i1 {
            for st in &mut self.cells[i * w + j0..i * w + j1] {
                f(st);
            }
        }
        true
    }

    /// Places the state of a rectangle of rectangle mode (disjoint from every other placed
    /// one); `false` if grid mode cannot take it.
    pub(super) fn place(&mut self, rect: &Rect, state: State<D>) -> bool {
        self.cover(rect, |st| *st = state)
    }

    /// Records an access of `task` to `rect` if grid mode can take it, calling `sink` for
    /// each earlier access it must wait for (once per cell: the caller removes
    /// duplicates); returns whether it did.
    pub(super) fn access(
        &mut self,
        rect: &Rect,
        mode: Mode,
        task: *const D,
        region: &mut Region,
        sink: &mut dyn Sink<D>,
    ) -> bool {
        self.cover(rect, |st| {
            block_access(st, mode, task, region, &mut &mut *sink)
        })
    }

    /// Ends grid mode: copies every accessed cell's state into per-row entries of `trie`
    /// (empty so far).
    pub(super) fn leave(self, trie: &mut Trie<D>, block: usize, region: &mut Region) {
        let w = self.cols.len() - 1;
        for (k, st) in self.cells.iter().enumerate() {
            if st.is_empty() {
                continue;
            }
            let (i, j) = (k / w, k % w);
            for r in self.rows[i]..self.rows[i + 1] {
                let (lo, hi) = (
                    r * self.stride + self.cols[j],
                    r * self.stride + self.cols[j + 1],
                );
                put_range(trie, block, region, lo, hi, *st);
            }
        }
    }
}
