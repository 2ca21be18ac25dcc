//! The views of a sub-matrix that a data-flow task receives for a tile it declared
//! ([`TileRef`] for a read, [`TileMut`] for a write), also usable on their own: cut into
//! disjoint tiles for `join` or `forkjoin::scope`.

use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

/// A read-only view of a sub-matrix: `rows` × `cols` elements whose rows start `ld` apart.
pub struct TileRef<'t, T> {
    pub(super) ptr: *const T,
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) ld: usize,
    pub(super) marker: PhantomData<&'t [T]>,
}

impl<T> Clone for TileRef<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for TileRef<'_, T> {}
// SAFETY: a shared view of `T`s, like `&[T]`.
unsafe impl<T: Sync> Send for TileRef<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for TileRef<'_, T> {}

/// A mutable view of a sub-matrix: `rows` × `cols` elements whose rows start `ld` apart.
/// Also usable without data-flow scopes: [`TileMut::from_slice`] and the `split_*` methods
/// cut a matrix into disjoint tiles for `join` or `forkjoin::scope` (the borrow checker then
/// proves what the dependence analysis would check).
pub struct TileMut<'t, T> {
    pub(super) ptr: *mut T,
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) ld: usize,
    pub(super) marker: PhantomData<&'t mut [T]>,
}

// SAFETY: an exclusive view of `T`s, like `&mut [T]`.
unsafe impl<T: Send> Send for TileMut<'_, T> {}
// SAFETY: shared access to it gives only `&T`.
unsafe impl<T: Sync> Sync for TileMut<'_, T> {}

macro_rules! tile_common {
    ($ty:ident) => {
        impl<'t, T> $ty<'t, T> {
            /// Rows of the tile.
            pub fn rows(&self) -> usize {
                self.rows
            }

            /// Columns of the tile.
            pub fn cols(&self) -> usize {
                self.cols
            }

            /// Elements between the starts of two rows.
            pub fn ld(&self) -> usize {
                self.ld
            }

            /// Row `i` of the tile.
            pub fn row(&self, i: usize) -> &[T] {
                assert!(i < self.rows, "row {i} of a tile of {} rows", self.rows);
                // SAFETY: row `i` is `cols` elements inside the viewed matrix.
                unsafe { std::slice::from_raw_parts(self.ptr.add(i * self.ld), self.cols) }
            }

            /// Pointer to element (0, 0) (for FFI kernels: rows `ld` apart).
            pub fn as_ptr(&self) -> *const T {
                self.ptr
            }

            /// Rows `[0, r)` and `[r, rows)`, disjoint. Panics if `r > rows`.
            pub fn split_at_row(self, r: usize) -> ($ty<'t, T>, $ty<'t, T>) {
                assert!(
                    r <= self.rows,
                    "split at row {r} of a tile of {} rows",
                    self.rows
                );
                let top = $ty { rows: r, ..self };
                let bottom = $ty {
                    ptr: self.ptr.wrapping_add(r * self.ld),
                    rows: self.rows - r,
                    ..self
                };
                (top, bottom)
            }

            /// Columns `[0, c)` and `[c, cols)`, disjoint. Panics if `c > cols`.
            pub fn split_at_col(self, c: usize) -> ($ty<'t, T>, $ty<'t, T>) {
                assert!(
                    c <= self.cols,
                    "split at column {c} of a tile of {} columns",
                    self.cols
                );
                let left = $ty { cols: c, ..self };
                let right = $ty {
                    ptr: self.ptr.wrapping_add(c),
                    cols: self.cols - c,
                    ..self
                };
                (left, right)
            }

            /// The four quadrants (top-left, top-right, bottom-left, bottom-right) split at
            /// row `r` and column `c`.
            pub fn quadrants(self, r: usize, c: usize) -> [$ty<'t, T>; 4] {
                let (top, bottom) = self.split_at_row(r);
                let (a, b) = top.split_at_col(c);
                let (cc, d) = bottom.split_at_col(c);
                [a, b, cc, d]
            }
        }

        impl<T> Index<(usize, usize)> for $ty<'_, T> {
            type Output = T;
            fn index(&self, (i, j): (usize, usize)) -> &T {
                &self.row(i)[j]
            }
        }
    };
}
tile_common!(TileRef);
tile_common!(TileMut);

impl<'t, T> TileRef<'t, T> {
    /// A view of all of `data` as `rows` × `cols` (row-major, leading dimension `cols`).
    /// Panics if `data` is shorter.
    pub fn from_slice(data: &'t [T], rows: usize, cols: usize) -> TileRef<'t, T> {
        assert!(
            rows.checked_mul(cols).is_some_and(|n| n <= data.len()),
            "a {rows}×{cols} tile does not fit {} elements",
            data.len()
        );
        TileRef {
            ptr: data.as_ptr(),
            rows,
            cols,
            ld: cols,
            marker: PhantomData,
        }
    }

    /// A view of `rows` × `cols` elements at `ptr` whose rows start `ld` elements apart
    /// (for matrices that come through FFI).
    ///
    /// # Safety
    /// `ptr` is non-null and aligned for `T` (even for an empty tile), and for `'t` every
    /// element `ptr.add(i * ld + j)` with `i < rows`, `j < cols` is initialised, inside one
    /// allocation, and not written by anyone; `ld >= cols` when `rows > 1`.
    pub unsafe fn from_raw_parts(ptr: *const T, rows: usize, cols: usize, ld: usize) -> Self {
        TileRef {
            ptr,
            rows,
            cols,
            ld,
            marker: PhantomData,
        }
    }

    /// Row `i`, borrowed for the view's whole lifetime.
    pub fn row_ref(self, i: usize) -> &'t [T] {
        assert!(i < self.rows, "row {i} of a tile of {} rows", self.rows);
        // SAFETY: as for `row`; the view is a shared borrow for `'t`.
        unsafe { std::slice::from_raw_parts(self.ptr.add(i * self.ld), self.cols) }
    }
}

impl<'t, T> TileMut<'t, T> {
    /// A view of all of `data` as `rows` × `cols` (row-major, leading dimension `cols`).
    /// Panics if `data` is shorter.
    pub fn from_slice(data: &'t mut [T], rows: usize, cols: usize) -> TileMut<'t, T> {
        assert!(
            rows.checked_mul(cols).is_some_and(|n| n <= data.len()),
            "a {rows}×{cols} tile does not fit {} elements",
            data.len()
        );
        TileMut {
            ptr: data.as_mut_ptr(),
            rows,
            cols,
            ld: cols,
            marker: PhantomData,
        }
    }

    /// An exclusive view of `rows` × `cols` elements at `ptr` whose rows start `ld` elements
    /// apart (for matrices that come through FFI).
    ///
    /// # Safety
    /// `ptr` is non-null and aligned for `T` (even for an empty tile), and for `'t` every
    /// element `ptr.add(i * ld + j)` with `i < rows`, `j < cols` is initialised, inside one
    /// allocation, and accessed by no one else; `ld >= cols` when `rows > 1`.
    pub unsafe fn from_raw_parts(ptr: *mut T, rows: usize, cols: usize, ld: usize) -> Self {
        TileMut {
            ptr,
            rows,
            cols,
            ld,
            marker: PhantomData,
        }
    }

    /// The view, read-only, for its whole lifetime.
    pub fn into_ref(self) -> TileRef<'t, T> {
        TileRef {
            ptr: self.ptr,
            rows: self.rows,
            cols: self.cols,
            ld: self.ld,
            marker: PhantomData,
        }
    }

    /// Row `i`, mutable.
    pub fn row_mut(&mut self, i: usize) -> &mut [T] {
        assert!(i < self.rows, "row {i} of a tile of {} rows", self.rows);
        // SAFETY: row `i` is `cols` elements inside the viewed matrix, and this view is
        // exclusive (borrowed mutably here).
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(i * self.ld), self.cols) }
    }

    /// Pointer to element (0, 0) (for FFI kernels: rows `ld` apart).
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr
    }

    /// A shorter-lived mutable view of the same tile.
    pub fn reborrow(&mut self) -> TileMut<'_, T> {
        TileMut {
            ptr: self.ptr,
            rows: self.rows,
            cols: self.cols,
            ld: self.ld,
            marker: PhantomData,
        }
    }

    /// A read-only view of the same tile.
    pub fn as_ref(&self) -> TileRef<'_, T> {
        TileRef {
            ptr: self.ptr,
            rows: self.rows,
            cols: self.cols,
            ld: self.ld,
            marker: PhantomData,
        }
    }

    /// All tiles of `bs` × `bs`, row by row (smaller at the right and bottom edges).
    /// Panics if `bs` is zero.
    pub fn into_tiles(self, bs: usize) -> Vec<Vec<TileMut<'t, T>>> {
        assert!(bs > 0, "tiles of size 0");
        let mut out = Vec::new();
        let mut rest = self;
        while rest.rows > 0 {
            let r = bs.min(rest.rows);
            let (band, below) = rest.split_at_row(r);
            let mut row = Vec::new();
            let mut band = band;
            while band.cols > 0 {
                let c = bs.min(band.cols);
                let (t, right) = band.split_at_col(c);
                row.push(t);
                band = right;
            }
            out.push(row);
            rest = below;
        }
        out
    }
}

impl<T> IndexMut<(usize, usize)> for TileMut<'_, T> {
    fn index_mut(&mut self, (i, j): (usize, usize)) -> &mut T {
        &mut self.row_mut(i)[j]
    }
}
