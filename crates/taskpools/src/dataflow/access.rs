//! What a data-flow task may touch: access declarations, made from a scope's regions (the views
//! of the data that a task receives through them are in `tile.rs`).
//!
//! A [`Region`] is data handed to a scope (`&mut [T]`, borrowed for the scope's lifetime).
//! Parts of it — the whole, a range ([`Part`]), a sub-matrix ([`Sub`], PARTEE's *stride*
//! argument) — are declared with a mode: [`read`](Part::read) (PARTEE's `in`),
//! [`out`](Part::out) or [`inout`](Part::inout). A task receives `&[T]` / [`TileRef`] for what it
//! reads and `&mut [T]` / [`TileMut`] for what it writes, and nothing else of the region.
//! Declarations are neither `Send` nor `Sync`, so they cannot be captured by a task's
//! closure: a task reaches data only through the accesses it declared.

use std::marker::PhantomData;
use std::ops::Range;

use super::tile::{TileMut, TileRef};
use super::Footprint;

/// Data handed to a data-flow scope: made by [`Scope::region`](super::Scope::region). Declare
/// accesses to it, whole or in parts, and pass them to [`Scope::spawn`](super::Scope::spawn).
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// use taskpools::dataflow;
///
/// let mut a = vec![1u32; 8];
/// let mut b = vec![0u32; 8];
/// dataflow::scope(|df| {
///     let (ra, rb) = (df.region(&mut a), df.region(&mut b));
///     df.spawn((ra.read(), rb.out()), |_, (a, b)| b.copy_from_slice(a));
///     df.spawn(rb.inout(), |_, b| b.iter_mut().for_each(|x| *x += 1)); // after the copy
/// });
/// assert_eq!(b, [2; 8]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct Region<'s, T> {
    pub(super) frame: *const (),
    pub(super) id: u32,
    pub(super) ptr: *mut T,
    pub(super) len: usize,
    pub(super) marker: PhantomData<&'s mut [T]>,
}

impl<'s, T> Region<'s, T> {
    /// Elements in the region.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = [0u8; 10];
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region(&mut v);
    ///     assert_eq!((r.len(), r.is_empty()), (10, false));
    /// });
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the region has no elements.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v: [u8; 0] = [];
    /// taskpools::dataflow::scope(|df| assert!(df.region(&mut v).is_empty()));
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The whole region.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = vec![3u32; 6];
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region(&mut v);
    ///     let whole = r.all(); // the same as r.part(0..r.len())
    ///     df.spawn(whole.inout(), |_, v| v[5] = 4);
    /// });
    /// assert_eq!(v, [3, 3, 3, 3, 3, 4]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn all(&self) -> Part<'s, T> {
        self.part(0..self.len)
    }

    /// Elements `range` of the region. Panics if the range is out of bounds.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = vec![0u32; 10];
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region(&mut v);
    ///     // Two disjoint writes: they may run at the same time.
    ///     df.spawn(r.part(0..5).out(), |_, a| a.fill(1));
    ///     df.spawn(r.part(5..10).out(), |_, b| b.fill(2));
    /// });
    /// assert_eq!(v, [1, 1, 1, 1, 1, 2, 2, 2, 2, 2]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn part(&self, range: Range<usize>) -> Part<'s, T> {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "data-flow region part {range:?} is out of bounds: the region has {} elements",
            self.len
        );
        Part {
            frame: self.frame,
            id: self.id,
            ptr: self.ptr.wrapping_add(range.start),
            start: range.start,
            len: range.end - range.start,
            marker: PhantomData,
        }
    }

    /// The region cut into consecutive parts of `size` elements (the last may be shorter).
    /// Panics if `size` is zero.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v: Vec<u64> = (0..10).collect();
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region(&mut v);
    ///     let lens: Vec<usize> = r.chunks(4).map(|c| c.len()).collect();
    ///     assert_eq!(lens, [4, 4, 2]); // the last one is shorter
    ///     for c in r.chunks(4) {
    ///         df.spawn(c.inout(), |_, c| c.iter_mut().for_each(|x| *x *= 10));
    ///     }
    /// });
    /// assert_eq!(v[9], 90);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn chunks(&self, size: usize) -> impl Iterator<Item = Part<'s, T>> + '_ {
        assert!(size > 0, "data-flow region chunks of 0 elements");
        (0..self.len)
            .step_by(size)
            .map(move |s| self.part(s..(s + size).min(self.len)))
    }

    /// Declares a read of the whole region (PARTEE's `in`).
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// use std::sync::atomic::{AtomicU64, Ordering};
    ///
    /// let mut v: Vec<u64> = (1..=10).collect();
    /// let sum = AtomicU64::new(0);
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region(&mut v);
    ///     df.spawn(r.inout(), |_, v| v.iter_mut().for_each(|x| *x *= 2));
    ///     let sum = &sum;
    ///     // Reads after the write above; readers of the same data may run together.
    ///     df.spawn(r.read(), move |_, v| { sum.fetch_add(v.iter().sum(), Ordering::Relaxed); });
    /// });
    /// assert_eq!(sum.into_inner(), 110);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn read(&self) -> Read<'s, T> {
        self.all().read()
    }

    /// Declares a write of the whole region that does not read it first (`out`).
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = vec![7u32; 4];
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region(&mut v);
    ///     df.spawn(r.out(), |_, v| v.copy_from_slice(&[1, 2, 3, 4])); // overwrites, reads nothing
    /// });
    /// assert_eq!(v, [1, 2, 3, 4]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn out(&self) -> Write<'s, T> {
        self.all().out()
    }

    /// Declares a read and write of the whole region (`inout`).
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = vec![1u32; 4];
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region(&mut v);
    ///     for _ in 0..3 {
    ///         df.spawn(r.inout(), |_, v| v.iter_mut().for_each(|x| *x *= 2)); // one after another
    ///     }
    /// });
    /// assert_eq!(v, [8; 4]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn inout(&self) -> Write<'s, T> {
        self.all().inout()
    }

    /// The region seen as a row-major matrix of `rows` × `cols` elements (leading dimension
    /// `cols`). Panics if that does not fit.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// // A 4 × 6 matrix filled tile by tile: each 2 × 2 tile with its number.
    /// let mut m = vec![0u32; 4 * 6];
    /// taskpools::dataflow::scope(|df| {
    ///     let a = df.region(&mut m).matrix(4, 6);
    ///     for i in 0..2 {
    ///         for j in 0..3 {
    ///             df.spawn(a.tile(i, j, 2).out(), move |_, mut t| {
    ///                 (0..t.rows()).for_each(|r| t.row_mut(r).fill((i * 3 + j) as u32));
    ///             });
    ///         }
    ///     }
    /// });
    /// assert_eq!(m[..6], [0, 0, 1, 1, 2, 2]);
    /// assert_eq!(m[18..], [3, 3, 4, 4, 5, 5]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn matrix(&self, rows: usize, cols: usize) -> Matrix<'s, T> {
        self.matrix_ld(rows, cols, cols)
    }

    /// The region seen as a row-major matrix of `rows` × `cols` elements whose rows start
    /// `ld` elements apart (`ld >= cols`). Panics if that does not fit.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// // A 2 × 3 matrix stored with rows 4 elements apart: the padding is never handed out.
    /// let mut m = vec![0u32; 8];
    /// taskpools::dataflow::scope(|df| {
    ///     let a = df.region(&mut m).matrix_ld(2, 3, 4);
    ///     df.spawn(a.sub(0, 0, 2, 3).out(), |_, mut t| {
    ///         (0..2).for_each(|r| t.row_mut(r).fill(1));
    ///     });
    /// });
    /// assert_eq!(m, [1, 1, 1, 0, 1, 1, 1, 0]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn matrix_ld(&self, rows: usize, cols: usize, ld: usize) -> Matrix<'s, T> {
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
        Matrix {
            frame: self.frame,
            id: self.id,
            ptr: self.ptr,
            offset: 0,
            rows,
            cols,
            ld,
            marker: PhantomData,
        }
    }
}

/// A contiguous part of a [`Region`]; declare how a task uses it.
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// let mut v: Vec<u32> = (0..8).collect();
/// taskpools::dataflow::scope(|df| {
///     let r = df.region(&mut v);
///     let (lo, hi) = (r.part(0..4), r.part(4..8));
///     // `hi` is written only after the task that reads `lo` and `hi` together has run.
///     df.spawn((lo.read(), hi.read()), |_, (a, b)| assert_eq!(a.len() + b.len(), 8));
///     df.spawn(hi.inout(), |_, b| b.iter_mut().for_each(|x| *x = 0));
/// });
/// assert_eq!(v, [0, 1, 2, 3, 0, 0, 0, 0]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct Part<'s, T> {
    frame: *const (),
    id: u32,
    ptr: *mut T,
    start: usize,
    len: usize,
    marker: PhantomData<&'s mut [T]>,
}

impl<T> Clone for Part<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Part<'_, T> {}

impl<'s, T> Part<'s, T> {
    fn footprint(&self, write: bool) -> Footprint {
        Footprint {
            frame: self.frame,
            region: self.id,
            start: self.start,
            len: self.len,
            ld: self.len,
            rows: 1,
            write,
        }
    }

    /// Elements in the part.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = [0u8; 10];
    /// taskpools::dataflow::scope(|df| {
    ///     let p = df.region(&mut v).part(2..7);
    ///     assert_eq!((p.len(), p.is_empty()), (5, false));
    /// });
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the part has no elements.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = [0u8; 10];
    /// taskpools::dataflow::scope(|df| assert!(df.region(&mut v).part(3..3).is_empty()));
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Elements `range` of this part (counted from the part's start). Panics if out of
    /// bounds.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = vec![0u32; 10];
    /// taskpools::dataflow::scope(|df| {
    ///     let middle = df.region(&mut v).part(2..8);
    ///     df.spawn(middle.part(1..3).out(), |_, s| s.fill(9)); // elements 3 and 4 of the region
    /// });
    /// assert_eq!(v, [0, 0, 0, 9, 9, 0, 0, 0, 0, 0]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn part(&self, range: Range<usize>) -> Part<'s, T> {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "data-flow part {range:?} is out of bounds: the part has {} elements",
            self.len
        );
        Part {
            ptr: self.ptr.wrapping_add(range.start),
            start: self.start + range.start,
            len: range.end - range.start,
            ..*self
        }
    }

    /// Declares a read (PARTEE's `in`): the task gets `&[T]`.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v: Vec<u32> = (1..=4).collect();
    /// let mut out = [0u32];
    /// taskpools::dataflow::scope(|df| {
    ///     let (r, o) = (df.region(&mut v), df.region(&mut out));
    ///     df.spawn((r.part(1..3).read(), o.out()), |_, (s, o)| o[0] = s.iter().sum());
    /// });
    /// assert_eq!(out, [5]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn read(self) -> Read<'s, T> {
        Read {
            fp: self.footprint(false),
            ptr: self.ptr,
            marker: PhantomData,
        }
    }

    /// Declares a write that does not read the old contents (`out`): the task gets `&mut [T]`.
    /// (Ordered like `inout`; the difference is a promise about the task's code.)
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = vec![0u32; 6];
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region(&mut v);
    ///     df.spawn(r.part(0..3).out(), |_, s| s.copy_from_slice(&[1, 2, 3]));
    /// });
    /// assert_eq!(v, [1, 2, 3, 0, 0, 0]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn out(self) -> Write<'s, T> {
        Write {
            fp: self.footprint(true),
            ptr: self.ptr,
            marker: PhantomData,
        }
    }

    /// Declares a read and write (`inout`): the task gets `&mut [T]`.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = vec![1u32; 6];
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region(&mut v);
    ///     df.spawn(r.part(3..6).inout(), |_, s| s.iter_mut().for_each(|x| *x += 1));
    /// });
    /// assert_eq!(v, [1, 1, 1, 2, 2, 2]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn inout(self) -> Write<'s, T> {
        self.out()
    }
}

/// A region seen as a row-major matrix: cut it into tiles or sub-matrices (PARTEE's
/// *stride* arguments), each tracked by its own rows only.
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// // Doubles a 4 × 4 matrix, one task per 2 × 2 tile.
/// let mut m: Vec<u32> = (0..16).collect();
/// taskpools::dataflow::scope(|df| {
///     let a = df.region(&mut m).matrix(4, 4);
///     assert_eq!((a.rows(), a.cols()), (4, 4));
///     for (i, j) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
///         df.spawn(a.tile(i, j, 2).inout(), |_, mut t| {
///             (0..t.rows()).for_each(|r| t.row_mut(r).iter_mut().for_each(|x| *x *= 2));
///         });
///     }
/// });
/// assert_eq!(m.iter().sum::<u32>(), 2 * 120);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct Matrix<'s, T> {
    pub(super) frame: *const (),
    pub(super) id: u32,
    pub(super) ptr: *mut T,
    /// Element offset of the matrix's first element in its region.
    pub(super) offset: usize,
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) ld: usize,
    pub(super) marker: PhantomData<&'s mut [T]>,
}

impl<T> Clone for Matrix<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Matrix<'_, T> {}

impl<'s, T> Matrix<'s, T> {
    /// Rows of the matrix.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = [0u8; 12];
    /// taskpools::dataflow::scope(|df| assert_eq!(df.region(&mut v).matrix(3, 4).rows(), 3));
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns of the matrix.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = [0u8; 12];
    /// taskpools::dataflow::scope(|df| assert_eq!(df.region(&mut v).matrix(3, 4).cols(), 4));
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The sub-matrix of `h` rows and `w` columns at row `r`, column `c`. Panics if it does not
    /// fit.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// // Row 1 and column 1 of a 3 × 3 matrix, written by two tasks that share element (1, 1):
    /// // the analysis orders them.
    /// let mut m = vec![0u32; 9];
    /// taskpools::dataflow::scope(|df| {
    ///     let a = df.region(&mut m).matrix(3, 3);
    ///     df.spawn(a.sub(1, 0, 1, 3).inout(), |_, mut row| {
    ///         row.row_mut(0).iter_mut().for_each(|x| *x += 1);
    ///     });
    ///     df.spawn(a.sub(0, 1, 3, 1).inout(), |_, mut col| {
    ///         (0..3).for_each(|r| col[(r, 0)] += 10);
    ///     });
    /// });
    /// assert_eq!(m, [0, 10, 0, 1, 11, 1, 0, 10, 0]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn sub(&self, r: usize, c: usize, h: usize, w: usize) -> Sub<'s, T> {
        assert!(
            r.checked_add(h).is_some_and(|e| e <= self.rows)
                && c.checked_add(w).is_some_and(|e| e <= self.cols),
            "data-flow sub-matrix {h}×{w} at ({r}, {c}) does not fit a {}×{} matrix",
            self.rows,
            self.cols
        );
        let off = r * self.ld + c;
        Sub {
            frame: self.frame,
            id: self.id,
            ptr: self.ptr.wrapping_add(off),
            start: self.offset + off,
            rows: h,
            cols: w,
            ld: self.ld,
            marker: PhantomData,
        }
    }

    /// Tile `(i, j)` of `bs` × `bs` (tiles at the right and bottom edges are smaller when `bs`
    /// does not divide the sides). Panics if the tile starts outside the matrix.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut m = vec![0u8; 5 * 5];
    /// taskpools::dataflow::scope(|df| {
    ///     let a = df.region(&mut m).matrix(5, 5);
    ///     // Tiles of 2 × 2; those at the right and bottom edges are 1 wide or high.
    ///     df.spawn(a.tile(2, 2, 2).out(), |_, t| assert_eq!((t.rows(), t.cols()), (1, 1)));
    ///     df.spawn(a.tile(0, 2, 2).out(), |_, t| assert_eq!((t.rows(), t.cols()), (2, 1)));
    /// });
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn tile(&self, i: usize, j: usize, bs: usize) -> Sub<'s, T> {
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

/// A sub-matrix of a [`Matrix`]: declare how a task uses it.
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// let mut m = vec![1u32; 16];
/// let mut trace = [0u32];
/// taskpools::dataflow::scope(|df| {
///     let (a, t) = (df.region(&mut m).matrix(4, 4), df.region(&mut trace));
///     let diag: Vec<_> = (0..4).map(|i| a.sub(i, i, 1, 1)).collect();
///     df.spawn(diag[2].inout(), |_, mut x| x[(0, 0)] = 5);
///     // Reads the four diagonal elements (after the write above).
///     let reads: Vec<_> = diag.iter().map(|d| d.read()).collect();
///     df.spawn((reads, t.out()), |_, (d, t)| t[0] = d.iter().map(|x| x[(0, 0)]).sum());
/// });
/// assert_eq!(trace, [8]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct Sub<'s, T> {
    frame: *const (),
    id: u32,
    ptr: *mut T,
    start: usize,
    rows: usize,
    cols: usize,
    ld: usize,
    marker: PhantomData<&'s mut [T]>,
}

impl<T> Clone for Sub<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Sub<'_, T> {}

impl<'s, T> Sub<'s, T> {
    fn footprint(&self, write: bool) -> Footprint {
        Footprint {
            frame: self.frame,
            region: self.id,
            start: self.start,
            len: self.cols,
            ld: self.ld,
            rows: self.rows,
            write,
        }
    }

    /// Declares a read: the task gets a [`TileRef`].
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut m: Vec<u32> = (0..9).collect();
    /// let mut out = [0u32];
    /// taskpools::dataflow::scope(|df| {
    ///     let (a, o) = (df.region(&mut m).matrix(3, 3), df.region(&mut out));
    ///     df.spawn((a.sub(1, 1, 2, 2).read(), o.out()), |_, (t, o)| {
    ///         o[0] = (0..2).map(|r| t.row(r).iter().sum::<u32>()).sum();
    ///     });
    /// });
    /// assert_eq!(out, [4 + 5 + 7 + 8]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn read(self) -> TileRead<'s, T> {
        TileRead {
            fp: self.footprint(false),
            tile: (self.ptr, self.rows, self.cols, self.ld),
            marker: PhantomData,
        }
    }

    /// Declares a write that does not read the old contents: the task gets a [`TileMut`].
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut m = vec![9u32; 4];
    /// taskpools::dataflow::scope(|df| {
    ///     let a = df.region(&mut m).matrix(2, 2);
    ///     df.spawn(a.sub(0, 0, 2, 2).out(), |_, mut t| {
    ///         t.row_mut(0).copy_from_slice(&[1, 0]);
    ///         t.row_mut(1).copy_from_slice(&[0, 1]);
    ///     });
    /// });
    /// assert_eq!(m, [1, 0, 0, 1]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn out(self) -> TileWrite<'s, T> {
        TileWrite {
            fp: self.footprint(true),
            tile: (self.ptr, self.rows, self.cols, self.ld),
            marker: PhantomData,
        }
    }

    /// Declares a read and write: the task gets a [`TileMut`].
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut m = vec![1u32; 4];
    /// taskpools::dataflow::scope(|df| {
    ///     let a = df.region(&mut m).matrix(2, 2);
    ///     df.spawn(a.sub(0, 1, 2, 1).inout(), |_, mut col| (0..2).for_each(|r| col[(r, 0)] *= 3));
    /// });
    /// assert_eq!(m, [1, 3, 1, 3]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn inout(self) -> TileWrite<'s, T> {
        self.out()
    }
}

/// A declared read of a [`Part`] (the task gets `&[T]`).
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// use taskpools::dataflow::Read;
///
/// let mut v = vec![2u32; 4];
/// let mut out = [0u32];
/// taskpools::dataflow::scope(|df| {
///     let (r, o) = (df.region(&mut v), df.region(&mut out));
///     let input: Read<'_, u32> = r.read(); // the task receives `&[u32]`
///     df.spawn((input, o.out()), |_, (v, o)| o[0] = v.iter().product());
/// });
/// assert_eq!(out, [16]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct Read<'s, T> {
    fp: Footprint,
    ptr: *const T,
    marker: PhantomData<&'s [T]>,
}

/// A declared write of a [`Part`] (the task gets `&mut [T]`).
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// use taskpools::dataflow::Write;
///
/// let mut v = vec![0u32; 4];
/// taskpools::dataflow::scope(|df| {
///     let w: Write<'_, u32> = df.region(&mut v).out(); // the task receives `&mut [u32]`
///     df.spawn(w, |_, v| v.iter_mut().enumerate().for_each(|(i, x)| *x = i as u32));
/// });
/// assert_eq!(v, [0, 1, 2, 3]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct Write<'s, T> {
    fp: Footprint,
    ptr: *mut T,
    marker: PhantomData<&'s mut [T]>,
}

/// A declared read of a [`Sub`] (the task gets a [`TileRef`]).
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// use taskpools::dataflow::{TileRead, TileRef};
///
/// let mut m: Vec<u32> = (0..4).collect();
/// let mut out = [0u32];
/// taskpools::dataflow::scope(|df| {
///     let (a, o) = (df.region(&mut m).matrix(2, 2), df.region(&mut out));
///     let t: TileRead<'_, u32> = a.sub(0, 0, 2, 2).read();
///     df.spawn((t, o.out()), |_, (t, o): (TileRef<'_, u32>, &mut [u32])| o[0] = t[(1, 0)]);
/// });
/// assert_eq!(out, [2]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct TileRead<'s, T> {
    fp: Footprint,
    tile: (*mut T, usize, usize, usize),
    marker: PhantomData<&'s [T]>,
}

/// A declared write of a [`Sub`] (the task gets a [`TileMut`]).
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// use taskpools::dataflow::{TileMut, TileWrite};
///
/// let mut m = vec![0u32; 4];
/// taskpools::dataflow::scope(|df| {
///     let a = df.region(&mut m).matrix(2, 2);
///     let t: TileWrite<'_, u32> = a.sub(1, 0, 1, 2).out();
///     df.spawn(t, |_, mut t: TileMut<'_, u32>| t.row_mut(0).fill(7));
/// });
/// assert_eq!(m, [0, 0, 7, 7]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct TileWrite<'s, T> {
    fp: Footprint,
    tile: (*mut T, usize, usize, usize),
    marker: PhantomData<&'s mut [T]>,
}

mod sealed {
    pub trait Sealed {}
}

/// What [`Scope::spawn`](super::Scope::spawn) accepts: one declared access, a tuple of up to
/// eight, an array, a `Vec` or an `Option` of them, or `()` for none. `Data<'t>` is what the
/// task receives:
/// the same shape, with `&[T]`, `&mut [T]`, [`TileRef`] or [`TileMut`] in place of each
/// declaration.
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// let mut v = vec![1u32; 6];
/// let mut sums = [0u32; 2];
/// let flag = true;
/// taskpools::dataflow::scope(|df| {
///     let (r, s) = (df.region(&mut v), df.region(&mut sums));
///     // No access: `()`.
///     df.spawn((), |_, ()| {});
///     // An array of reads and a write, in a tuple: the task gets the same shape.
///     let halves = [r.part(0..3).read(), r.part(3..6).read()];
///     df.spawn((halves, s.out()), |_, ([a, b], s)| {
///         s[0] = a.iter().sum();
///         s[1] = b.iter().sum();
///     });
///     // An `Option`: declared or not, decided at run time.
///     let maybe = flag.then(|| r.inout());
///     df.spawn(maybe, |_, v: Option<&mut [u32]>| {
///         if let Some(v) = v {
///             v.fill(0);
///         }
///     });
/// });
/// assert_eq!((sums, v), ([3, 3], vec![0; 6]));
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub trait Accesses: sealed::Sealed {
    /// The data the task receives.
    type Data<'t>;
    #[doc(hidden)]
    fn footprints(&self, out: &mut Vec<Footprint>);
    /// # Safety
    /// Called once, when the declared accesses are satisfied; the data is valid for `'t`.
    #[doc(hidden)]
    unsafe fn into_data<'t>(self) -> Self::Data<'t>;
}

impl sealed::Sealed for () {}
impl Accesses for () {
    type Data<'t> = ();
    fn footprints(&self, _: &mut Vec<Footprint>) {}
    unsafe fn into_data<'t>(self) -> Self::Data<'t> {}
}

impl<T: Sync + 'static> sealed::Sealed for Read<'_, T> {}
impl<T: Sync + 'static> Accesses for Read<'_, T> {
    type Data<'t> = &'t [T];
    fn footprints(&self, out: &mut Vec<Footprint>) {
        out.push(self.fp);
    }
    unsafe fn into_data<'t>(self) -> &'t [T] {
        // SAFETY: the region's elements `[start, start + len)`, valid for the scope; the
        // dependence analysis lets this task run only while no sibling writes them.
        unsafe { std::slice::from_raw_parts(self.ptr, self.fp.len) }
    }
}

impl<T: Send + 'static> sealed::Sealed for Write<'_, T> {}
impl<T: Send + 'static> Accesses for Write<'_, T> {
    type Data<'t> = &'t mut [T];
    fn footprints(&self, out: &mut Vec<Footprint>) {
        out.push(self.fp);
    }
    unsafe fn into_data<'t>(self) -> &'t mut [T] {
        // SAFETY: as for `Read`, and no sibling reads or writes them while this task runs,
        // nor does another access of this task (checked at spawn).
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.fp.len) }
    }
}

impl<T: Sync + 'static> sealed::Sealed for TileRead<'_, T> {}
impl<T: Sync + 'static> Accesses for TileRead<'_, T> {
    type Data<'t> = TileRef<'t, T>;
    fn footprints(&self, out: &mut Vec<Footprint>) {
        out.push(self.fp);
    }
    unsafe fn into_data<'t>(self) -> TileRef<'t, T> {
        let (ptr, rows, cols, ld) = self.tile;
        TileRef {
            ptr,
            rows,
            cols,
            ld,
            marker: PhantomData,
        }
    }
}

impl<T: Send + 'static> sealed::Sealed for TileWrite<'_, T> {}
impl<T: Send + 'static> Accesses for TileWrite<'_, T> {
    type Data<'t> = TileMut<'t, T>;
    fn footprints(&self, out: &mut Vec<Footprint>) {
        out.push(self.fp);
    }
    unsafe fn into_data<'t>(self) -> TileMut<'t, T> {
        let (ptr, rows, cols, ld) = self.tile;
        TileMut {
            ptr,
            rows,
            cols,
            ld,
            marker: PhantomData,
        }
    }
}

impl<A: Accesses, const N: usize> sealed::Sealed for [A; N] {}
impl<A: Accesses, const N: usize> Accesses for [A; N] {
    type Data<'t> = [A::Data<'t>; N];
    fn footprints(&self, out: &mut Vec<Footprint>) {
        for a in self {
            a.footprints(out);
        }
    }
    unsafe fn into_data<'t>(self) -> Self::Data<'t> {
        // SAFETY: each element's contract is the array's.
        self.map(|a| unsafe { a.into_data() })
    }
}

impl<A: Accesses> sealed::Sealed for Option<A> {}
impl<A: Accesses> Accesses for Option<A> {
    type Data<'t> = Option<A::Data<'t>>;
    fn footprints(&self, out: &mut Vec<Footprint>) {
        if let Some(a) = self {
            a.footprints(out);
        }
    }
    unsafe fn into_data<'t>(self) -> Self::Data<'t> {
        // SAFETY: the contract is the option's.
        self.map(|a| unsafe { a.into_data() })
    }
}

impl<A: Accesses> sealed::Sealed for Vec<A> {}
impl<A: Accesses> Accesses for Vec<A> {
    type Data<'t> = Vec<A::Data<'t>>;
    fn footprints(&self, out: &mut Vec<Footprint>) {
        for a in self {
            a.footprints(out);
        }
    }
    unsafe fn into_data<'t>(self) -> Self::Data<'t> {
        // SAFETY: each element's contract is the vector's.
        self.into_iter().map(|a| unsafe { a.into_data() }).collect()
    }
}

macro_rules! tuple_accesses {
    ($($name:ident)+) => {
        impl<$($name: Accesses),+> sealed::Sealed for ($($name,)+) {}
        impl<$($name: Accesses),+> Accesses for ($($name,)+) {
            type Data<'t> = ($($name::Data<'t>,)+);
            #[allow(non_snake_case)]
            fn footprints(&self, out: &mut Vec<Footprint>) {
                let ($($name,)+) = self;
                $($name.footprints(out);)+
            }
            #[allow(non_snake_case)]
            unsafe fn into_data<'t>(self) -> Self::Data<'t> {
                let ($($name,)+) = self;
                // SAFETY: each element's contract is the tuple's.
                unsafe { ($($name.into_data(),)+) }
            }
        }
    };
}
tuple_accesses!(A);
tuple_accesses!(A B);
tuple_accesses!(A B C);
tuple_accesses!(A B C D);
tuple_accesses!(A B C D E);
tuple_accesses!(A B C D E F);
tuple_accesses!(A B C D E F G);
tuple_accesses!(A B C D E F G H);
