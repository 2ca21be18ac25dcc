//! The views of a sub-matrix that a data-flow task receives for a tile it declared
//! ([`TileRef`] for a read, [`TileMut`] for a write), also usable on their own: cut into
//! disjoint tiles for `join` or `forkjoin::scope`.

use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

/// A read-only view of a sub-matrix: `rows` × `cols` elements whose rows start `ld` apart.
///
/// ```
/// use taskpools::dataflow::TileRef;
///
/// let v: Vec<u32> = (0..12).collect();
/// let t = TileRef::from_slice(&v, 3, 4);
/// let row_sums: Vec<u32> = (0..t.rows()).map(|r| t.row(r).iter().sum()).collect();
/// assert_eq!(row_sums, [6, 22, 38]);
/// assert_eq!(t[(2, 1)], 9);
/// ```
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
///
/// ```
/// use taskpools::dataflow::TileMut;
///
/// // Four quadrants, filled in parallel: the borrow checker proves them disjoint.
/// let mut m = vec![0u32; 16];
/// let quads = TileMut::from_slice(&mut m, 4, 4).quadrants(2, 2);
/// let rt = taskpools::Runtime::new(2)?;
/// rt.scope(|s| {
///     for (mut q, x) in quads.into_iter().zip(1..) {
///         s.spawn(move |_| (0..q.rows()).for_each(|r| q.row_mut(r).fill(x)));
///     }
/// });
/// assert_eq!(m[..4], [1, 1, 2, 2]);
/// assert_eq!(m[12..], [3, 3, 4, 4]);
/// # Ok::<(), taskpools::Error>(())
/// ```
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
    // `$new`: how an example makes a 2 × 3 tile `t` of this type over `v` (docs only).
    ($ty:ident, $new:literal) => {
        impl<'t, T> $ty<'t, T> {
            /// Rows of the tile.
            ///
            /// ```
            /// # use taskpools::dataflow::{TileMut, TileRef};
            /// let mut v: Vec<u32> = (0..6).collect(); // rows [0, 1, 2] and [3, 4, 5]
            #[doc = concat!("let t = ", $new, ";")]
            /// assert_eq!(t.rows(), 2);
            /// ```
            pub fn rows(&self) -> usize {
                self.rows
            }

            /// Columns of the tile.
            ///
            /// ```
            /// # use taskpools::dataflow::{TileMut, TileRef};
            /// let mut v: Vec<u32> = (0..6).collect(); // rows [0, 1, 2] and [3, 4, 5]
            #[doc = concat!("let t = ", $new, ";")]
            /// assert_eq!(t.cols(), 3);
            /// ```
            pub fn cols(&self) -> usize {
                self.cols
            }

            /// Elements between the starts of two rows.
            ///
            /// ```
            /// # use taskpools::dataflow::{TileMut, TileRef};
            /// let mut v: Vec<u32> = (0..6).collect(); // rows [0, 1, 2] and [3, 4, 5]
            #[doc = concat!("let t = ", $new, ";")]
            /// let (_, right) = t.split_at_col(1);
            /// assert_eq!((right.cols(), right.ld()), (2, 3)); // rows still 3 apart
            /// ```
            pub fn ld(&self) -> usize {
                self.ld
            }

            /// Row `i` of the tile.
            ///
            /// ```
            /// # use taskpools::dataflow::{TileMut, TileRef};
            /// let mut v: Vec<u32> = (0..6).collect(); // rows [0, 1, 2] and [3, 4, 5]
            #[doc = concat!("let t = ", $new, ";")]
            /// assert_eq!(t.row(1), [3, 4, 5]);
            /// ```
            pub fn row(&self, i: usize) -> &[T] {
                assert!(i < self.rows, "row {i} of a tile of {} rows", self.rows);
                // SAFETY: row `i` is `cols` elements inside the viewed matrix.
                unsafe { std::slice::from_raw_parts(self.ptr.add(i * self.ld), self.cols) }
            }

            /// Pointer to element (0, 0) (for FFI kernels: rows `ld` apart).
            ///
            /// ```
            /// # use taskpools::dataflow::{TileMut, TileRef};
            /// let mut v: Vec<u32> = (0..6).collect(); // rows [0, 1, 2] and [3, 4, 5]
            #[doc = concat!("let t = ", $new, ";")]
            /// let p = t.as_ptr();
            /// // SAFETY: element (1, 2) is inside the tile, rows `ld` apart.
            /// assert_eq!(unsafe { *p.add(t.ld() + 2) }, 5);
            /// ```
            pub fn as_ptr(&self) -> *const T {
                self.ptr
            }

            /// Rows `[0, r)` and `[r, rows)`, disjoint. Panics if `r > rows`.
            ///
            /// ```
            /// # use taskpools::dataflow::{TileMut, TileRef};
            /// let mut v: Vec<u32> = (0..6).collect(); // rows [0, 1, 2] and [3, 4, 5]
            #[doc = concat!("let t = ", $new, ";")]
            /// let (top, bottom) = t.split_at_row(1);
            /// assert_eq!((top.rows(), bottom.rows()), (1, 1));
            /// assert_eq!(bottom.row(0), [3, 4, 5]);
            /// ```
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
            ///
            /// ```
            /// # use taskpools::dataflow::{TileMut, TileRef};
            /// let mut v: Vec<u32> = (0..6).collect(); // rows [0, 1, 2] and [3, 4, 5]
            #[doc = concat!("let t = ", $new, ";")]
            /// let (left, right) = t.split_at_col(2);
            /// assert_eq!(left.row(1), [3, 4]);
            /// assert_eq!(right.row(1), [5]);
            /// ```
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
            ///
            /// ```
            /// # use taskpools::dataflow::{TileMut, TileRef};
            /// let mut v: Vec<u32> = (0..6).collect(); // rows [0, 1, 2] and [3, 4, 5]
            #[doc = concat!("let t = ", $new, ";")]
            /// let [a, b, c, d] = t.quadrants(1, 1);
            /// assert_eq!((a.row(0), b.row(0)), (&[0][..], &[1, 2][..]));
            /// assert_eq!((c.row(0), d.row(0)), (&[3][..], &[4, 5][..]));
            /// ```
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
tile_common!(TileRef, "TileRef::from_slice(&v, 2, 3)");
tile_common!(TileMut, "TileMut::from_slice(&mut v, 2, 3)");

impl<'t, T> TileRef<'t, T> {
    /// A view of all of `data` as `rows` × `cols` (row-major, leading dimension `cols`).
    /// Panics if `data` is shorter.
    ///
    /// ```
    /// use taskpools::dataflow::TileRef;
    ///
    /// let v = [1, 2, 3, 4, 5, 6];
    /// let t = TileRef::from_slice(&v, 3, 2);
    /// assert_eq!((t.rows(), t.cols(), t.ld()), (3, 2, 2));
    /// assert_eq!(t.row(2), [5, 6]);
    /// ```
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
    ///
    /// ```
    /// use taskpools::dataflow::TileRef;
    ///
    /// // The 2 × 2 block at the top right of a 3 × 4 matrix stored row-major.
    /// let m: Vec<u32> = (0..12).collect();
    /// // SAFETY: rows 0 and 1, columns 2 and 3, lie in `m`, which nobody writes meanwhile.
    /// let t = unsafe { TileRef::from_raw_parts(m.as_ptr().add(2), 2, 2, 4) };
    /// assert_eq!((t.row(0), t.row(1)), (&[2, 3][..], &[6, 7][..]));
    /// ```
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
    ///
    /// ```
    /// use taskpools::dataflow::TileRef;
    ///
    /// let v: Vec<u32> = (0..6).collect();
    /// // The row outlives the view it came from.
    /// let last: &[u32] = TileRef::from_slice(&v, 2, 3).row_ref(1);
    /// assert_eq!(last, [3, 4, 5]);
    /// ```
    pub fn row_ref(self, i: usize) -> &'t [T] {
        assert!(i < self.rows, "row {i} of a tile of {} rows", self.rows);
        // SAFETY: as for `row`; the view is a shared borrow for `'t`.
        unsafe { std::slice::from_raw_parts(self.ptr.add(i * self.ld), self.cols) }
    }
}

impl<'t, T> TileMut<'t, T> {
    /// A view of all of `data` as `rows` × `cols` (row-major, leading dimension `cols`).
    /// Panics if `data` is shorter.
    ///
    /// ```
    /// use taskpools::dataflow::TileMut;
    ///
    /// let mut v = vec![0u8; 6];
    /// let mut t = TileMut::from_slice(&mut v, 2, 3);
    /// t[(1, 2)] = 7;
    /// assert_eq!(v, [0, 0, 0, 0, 0, 7]);
    /// ```
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
    ///
    /// ```
    /// use taskpools::dataflow::TileMut;
    ///
    /// let mut m = vec![0u32; 12]; // 3 × 4, row-major
    /// // SAFETY: column 1 of `m` (rows 4 apart) lies in `m`, which nothing else touches meanwhile.
    /// let mut col = unsafe { TileMut::from_raw_parts(m.as_mut_ptr().add(1), 3, 1, 4) };
    /// (0..3).for_each(|r| col[(r, 0)] = 1);
    /// assert_eq!(m, [0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0]);
    /// ```
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
    ///
    /// ```
    /// use taskpools::dataflow::{TileMut, TileRef};
    ///
    /// let mut v = vec![1u32; 4];
    /// let mut t = TileMut::from_slice(&mut v, 2, 2);
    /// t[(0, 0)] = 5;
    /// let r: TileRef<'_, u32> = t.into_ref(); // read-only from here on
    /// assert_eq!(r.row_ref(0), [5, 1]);
    /// ```
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
    ///
    /// ```
    /// use taskpools::dataflow::TileMut;
    ///
    /// let mut v = vec![0u32; 6];
    /// let mut t = TileMut::from_slice(&mut v, 2, 3);
    /// t.row_mut(1).copy_from_slice(&[7, 8, 9]);
    /// assert_eq!(v, [0, 0, 0, 7, 8, 9]);
    /// ```
    pub fn row_mut(&mut self, i: usize) -> &mut [T] {
        assert!(i < self.rows, "row {i} of a tile of {} rows", self.rows);
        // SAFETY: row `i` is `cols` elements inside the viewed matrix, and this view is
        // exclusive (borrowed mutably here).
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(i * self.ld), self.cols) }
    }

    /// Pointer to element (0, 0) (for FFI kernels: rows `ld` apart).
    ///
    /// ```
    /// use taskpools::dataflow::TileMut;
    ///
    /// let mut v = vec![0u32; 6];
    /// let mut t = TileMut::from_slice(&mut v, 2, 3);
    /// let (ld, p) = (t.ld(), t.as_mut_ptr());
    /// // SAFETY: element (1, 1) is inside the tile, and `t` is not used while `p` writes.
    /// unsafe { *p.add(ld + 1) = 4 };
    /// assert_eq!(v, [0, 0, 0, 0, 4, 0]);
    /// ```
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr
    }

    /// A shorter-lived mutable view of the same tile.
    ///
    /// ```
    /// use taskpools::dataflow::TileMut;
    ///
    /// fn bump(mut t: TileMut<'_, u32>) {
    ///     (0..t.rows()).for_each(|r| t.row_mut(r).iter_mut().for_each(|x| *x += 1));
    /// }
    /// let mut v = vec![0u32; 4];
    /// let mut t = TileMut::from_slice(&mut v, 2, 2);
    /// bump(t.reborrow()); // `t` stays usable
    /// bump(t.reborrow());
    /// assert_eq!(t[(1, 1)], 2);
    /// ```
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
    ///
    /// ```
    /// use taskpools::dataflow::{TileMut, TileRef};
    ///
    /// fn total(t: TileRef<'_, u32>) -> u32 {
    ///     (0..t.rows()).map(|r| t.row(r).iter().sum::<u32>()).sum()
    /// }
    /// let mut v = vec![2u32; 4];
    /// let mut t = TileMut::from_slice(&mut v, 2, 2);
    /// assert_eq!(total(t.as_ref()), 8);
    /// t[(0, 0)] = 0; // still writable afterwards
    /// assert_eq!(total(t.as_ref()), 6);
    /// ```
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
    ///
    /// ```
    /// use taskpools::dataflow::TileMut;
    ///
    /// let mut m = vec![0u32; 5 * 5];
    /// let tiles = TileMut::from_slice(&mut m, 5, 5).into_tiles(2);
    /// assert_eq!((tiles.len(), tiles[0].len()), (3, 3)); // 2, 2 and 1 wide or high
    /// // Number every tile with its position, in parallel.
    /// let rt = taskpools::Runtime::new(2)?;
    /// rt.scope(|s| {
    ///     for (i, row) in tiles.into_iter().enumerate() {
    ///         for (j, mut t) in row.into_iter().enumerate() {
    ///             let n = (3 * i + j) as u32;
    ///             s.spawn(move |_| (0..t.rows()).for_each(|r| t.row_mut(r).fill(n)));
    ///         }
    ///     }
    /// });
    /// assert_eq!((m[0], m[4], m[24]), (0, 2, 8));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
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
