//! Read-only regions and their parts, matrices and sub-matrices: [`RegionRef`], [`PartRef`],
//! [`MatrixRef`], [`SubRef`]. Data the scope borrows shared (`&[T]`): its parts can only be
//! declared [`read`](PartRef::read), which is all OpenMP's `depend(in: …)` on data nobody
//! writes says. They are registered and analysed like writable regions (reads never
//! conflict with reads, so they never wait), and hand out the same [`Read`] and
//! [`TileRead`] declarations: a read of a `&[T]` is sound for the reasons a read of a
//! `&mut [T]` region is, and more simply, since nothing may write the data while the scope
//! borrows it.

use std::marker::PhantomData;
use std::ops::Range;

use super::span::{Block, Grid, Span};
use super::{ElemRef, Read, TileRead};

/// Data handed to a data-flow scope read-only: made by
/// [`Scope::region_ref`](crate::dataflow::Scope::region_ref) from a `&[T]`. Its parts can be
/// declared [`read`](Self::read) only; the task gets `&[T]` (or a
/// [`TileRef`](crate::dataflow::TileRef) for a sub-matrix).
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// let table: Vec<u32> = (0..8).collect(); // shared, and nobody writes it
/// let mut out = vec![0u32; 2];
/// taskpools::dataflow::scope(|df| {
///     let (t, o) = (df.region_ref(&table), df.region(&mut out));
///     df.spawn((t.part(0..4).read(), o.part(0..1).out()), |_, (t, o)| o[0] = t.iter().sum());
///     df.spawn((t.part(4..8).read(), o.part(1..2).out()), |_, (t, o)| o[0] = t.iter().sum());
/// });
/// assert_eq!(out, [6, 22]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
///
/// It offers no write (`PartRef` has no `inout`, `RegionRef` no `out`):
///
/// ```compile_fail,E0599
/// let table = vec![0u32; 4];
/// taskpools::dataflow::scope(|df| {
///     let t = df.region_ref(&table);
///     df.spawn(t.part(0..2).inout(), |_, t| t[0] = 1);
/// });
/// ```
///
/// ```compile_fail,E0599
/// let table = vec![0u32; 4];
/// taskpools::dataflow::scope(|df| {
///     let t = df.region_ref(&table);
///     df.spawn(t.out(), |_, t| t[0] = 1);
/// });
/// ```
pub struct RegionRef<'s, T> {
    span: Span<T>,
    marker: PhantomData<&'s [T]>,
}

impl<'s, T> RegionRef<'s, T> {
    /// The read-only region of `span`, a whole `&'s [T]` registered with its scope. Nothing
    /// is written through `span.ptr`: this type offers no write.
    pub(in crate::dataflow) fn new(span: Span<T>) -> Self {
        RegionRef {
            span,
            marker: PhantomData,
        }
    }

    /// Elements in the region.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let v = [0u8; 10];
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region_ref(&v);
    ///     assert_eq!((r.len(), r.is_empty()), (10, false));
    /// });
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.span.len
    }

    /// Whether the region has no elements.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// taskpools::dataflow::scope(|df| assert!(df.region_ref::<u8>(&[]).is_empty()));
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.span.len == 0
    }

    /// The whole region.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let v = [3u32; 6];
    /// let mut n = [0usize];
    /// taskpools::dataflow::scope(|df| {
    ///     let (r, n) = (df.region_ref(&v), df.region(&mut n));
    ///     df.spawn((r.all().read(), n.out()), |_, (v, n)| n[0] = v.len());
    /// });
    /// assert_eq!(n, [6]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn all(&self) -> PartRef<'s, T> {
        PartRef::new(self.span)
    }

    /// Elements `range` of the region. Panics if the range is out of bounds.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let v: Vec<u32> = (0..10).collect();
    /// let mut s = [0u32];
    /// taskpools::dataflow::scope(|df| {
    ///     let (r, s) = (df.region_ref(&v), df.region(&mut s));
    ///     df.spawn((r.part(2..5).read(), s.out()), |_, (p, s)| s[0] = p.iter().sum());
    /// });
    /// assert_eq!(s, [2 + 3 + 4]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn part(&self, range: Range<usize>) -> PartRef<'s, T> {
        PartRef::new(self.span.part(range, "region"))
    }

    /// Element `i` of the region: the task gets `&T`. Panics if `i` is out of bounds.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let v = [4u32, 5, 6];
    /// let mut out = [0u32];
    /// taskpools::dataflow::scope(|df| {
    ///     let (r, o) = (df.region_ref(&v), df.region(&mut out));
    ///     df.spawn((r.at(2).read(), o.at(0).out()), |_, (x, o)| *o = *x);
    /// });
    /// assert_eq!(out, [6]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn at(&self, i: usize) -> ElemRef<'s, T> {
        ElemRef::new(self.span.at(i, "region"))
    }

    /// The region cut into consecutive parts of `size` elements (the last may be shorter).
    /// Panics if `size` is zero.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let v: Vec<u64> = (1..=10).collect();
    /// let mut sums = vec![0u64; 3];
    /// taskpools::dataflow::scope(|df| {
    ///     let (r, s) = (df.region_ref(&v), df.region(&mut sums));
    ///     for (c, s) in r.chunks(4).zip(s.chunks(1)) {
    ///         df.spawn((c.read(), s.out()), |_, (c, s)| s[0] = c.iter().sum());
    ///     }
    /// });
    /// assert_eq!(sums, [10, 26, 19]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn chunks(&self, size: usize) -> impl Iterator<Item = PartRef<'s, T>> + '_ {
        self.span.chunks(size).map(PartRef::new)
    }

    /// Declares a read of the whole region (PARTEE's `in`): the task gets `&[T]`.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// use std::sync::atomic::{AtomicU64, Ordering};
    ///
    /// let v: Vec<u64> = (1..=10).collect();
    /// let sum = AtomicU64::new(0);
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region_ref(&v);
    ///     let sum = &sum;
    ///     for _ in 0..3 {
    ///         // Readers never wait for each other.
    ///         df.spawn(r.read(), move |_, v| {
    ///             sum.fetch_add(v.iter().sum(), Ordering::Relaxed);
    ///         });
    ///     }
    /// });
    /// assert_eq!(sum.into_inner(), 165);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn read(&self) -> Read<'s, T> {
        self.span.read()
    }

    /// The region seen as a row-major matrix of `rows` × `cols` elements (leading dimension
    /// `cols`). Panics if that does not fit.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let m: Vec<u32> = (0..16).collect();
    /// let mut diag = [0u32; 2];
    /// taskpools::dataflow::scope(|df| {
    ///     let (a, d) = (df.region_ref(&m).matrix(4, 4), df.region(&mut diag));
    ///     df.spawn((a.tile(1, 1, 2).read(), d.out()), |_, (t, d)| {
    ///         d.copy_from_slice(&[t[(0, 0)], t[(1, 1)]]);
    ///     });
    /// });
    /// assert_eq!(diag, [10, 15]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn matrix(&self, rows: usize, cols: usize) -> MatrixRef<'s, T> {
        self.matrix_ld(rows, cols, cols)
    }

    /// The region seen as a row-major matrix of `rows` × `cols` elements whose rows start
    /// `ld` elements apart (`ld >= cols`). Panics if that does not fit.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// // A 2 × 3 matrix stored with rows 4 elements apart.
    /// let m = [1u32, 2, 3, 0, 4, 5, 6, 0];
    /// let mut s = [0u32];
    /// taskpools::dataflow::scope(|df| {
    ///     let (a, s) = (df.region_ref(&m).matrix_ld(2, 3, 4), df.region(&mut s));
    ///     df.spawn((a.sub(0, 0, 2, 3).read(), s.out()), |_, (t, s)| {
    ///         s[0] = (0..2).map(|r| t.row(r).iter().sum::<u32>()).sum();
    ///     });
    /// });
    /// assert_eq!(s, [21]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn matrix_ld(&self, rows: usize, cols: usize, ld: usize) -> MatrixRef<'s, T> {
        MatrixRef::new(self.span.grid(rows, cols, ld))
    }
}

/// A contiguous part of a [`RegionRef`]: it can only be read.
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// let v: Vec<u32> = (0..8).collect();
/// let mut out = [0u32; 2];
/// taskpools::dataflow::scope(|df| {
///     let (r, o) = (df.region_ref(&v), df.region(&mut out));
///     let (lo, hi) = (r.part(0..4), r.part(4..8));
///     // Both read `hi`: neither waits for the other.
///     df.spawn((lo.read(), hi.read(), o.part(0..1).out()), |_, (a, b, o)| o[0] = a[0] + b[0]);
///     df.spawn((hi.read(), o.part(1..2).out()), |_, (b, o)| o[0] = b[3]);
/// });
/// assert_eq!(out, [4, 7]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct PartRef<'s, T> {
    pub(super) span: Span<T>,
    marker: PhantomData<&'s [T]>,
}

impl<T> Clone for PartRef<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for PartRef<'_, T> {}

impl<'s, T> PartRef<'s, T> {
    fn new(span: Span<T>) -> Self {
        PartRef {
            span,
            marker: PhantomData,
        }
    }

    /// Elements in the part.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let v = [0u8; 10];
    /// taskpools::dataflow::scope(|df| {
    ///     let p = df.region_ref(&v).part(2..7);
    ///     assert_eq!((p.len(), p.is_empty()), (5, false));
    /// });
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.span.len
    }

    /// Whether the part has no elements.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let v = [0u8; 10];
    /// taskpools::dataflow::scope(|df| assert!(df.region_ref(&v).part(3..3).is_empty()));
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.span.len == 0
    }

    /// Elements `range` of this part (counted from the part's start). Panics if out of
    /// bounds.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let v: Vec<u32> = (0..10).collect();
    /// let mut s = [0u32];
    /// taskpools::dataflow::scope(|df| {
    ///     let (middle, s) = (df.region_ref(&v).part(2..8), df.region(&mut s));
    ///     // Elements 3 and 4 of the region.
    ///     df.spawn((middle.part(1..3).read(), s.out()), |_, (p, s)| s[0] = p[0] + p[1]);
    /// });
    /// assert_eq!(s, [7]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn part(&self, range: Range<usize>) -> PartRef<'s, T> {
        PartRef::new(self.span.part(range, "part"))
    }

    /// Element `i` of this part (counted from the part's start): the task gets `&T`. Panics
    /// if `i` is out of bounds.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let v: Vec<u32> = (0..6).collect();
    /// let mut out = [0u32];
    /// taskpools::dataflow::scope(|df| {
    ///     let (hi, o) = (df.region_ref(&v).part(3..6), df.region(&mut out));
    ///     df.spawn((hi.at(1).read(), o.at(0).out()), |_, (x, o)| *o = *x); // element 4
    /// });
    /// assert_eq!(out, [4]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn at(&self, i: usize) -> ElemRef<'s, T> {
        ElemRef::new(self.span.at(i, "part"))
    }

    /// Declares a read (PARTEE's `in`): the task gets `&[T]`.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let v: Vec<u32> = (1..=4).collect();
    /// let mut out = [0u32];
    /// taskpools::dataflow::scope(|df| {
    ///     let (r, o) = (df.region_ref(&v), df.region(&mut out));
    ///     df.spawn((r.part(1..3).read(), o.out()), |_, (s, o)| o[0] = s.iter().sum());
    /// });
    /// assert_eq!(out, [5]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn read(self) -> Read<'s, T> {
        self.span.read()
    }
}

/// A [`RegionRef`] seen as a row-major matrix: cut it into tiles or sub-matrices, which can
/// only be read.
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// // Row sums of a shared 4 × 4 matrix, one task per band of two rows.
/// let m: Vec<u32> = (0..16).collect();
/// let mut sums = vec![0u32; 4];
/// taskpools::dataflow::scope(|df| {
///     let (a, s) = (df.region_ref(&m).matrix(4, 4), df.region(&mut sums));
///     assert_eq!((a.rows(), a.cols()), (4, 4));
///     for i in 0..2 {
///         df.spawn((a.sub(2 * i, 0, 2, 4).read(), s.part(2 * i..2 * i + 2).out()), |_, (t, s)| {
///             (0..2).for_each(|r| s[r] = t.row(r).iter().sum());
///         });
///     }
/// });
/// assert_eq!(sums, [6, 22, 38, 54]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct MatrixRef<'s, T> {
    grid: Grid<T>,
    marker: PhantomData<&'s [T]>,
}

impl<T> Clone for MatrixRef<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for MatrixRef<'_, T> {}

impl<'s, T> MatrixRef<'s, T> {
    /// The read-only matrix of `grid`.
    pub(in crate::dataflow) fn new(grid: Grid<T>) -> Self {
        MatrixRef {
            grid,
            marker: PhantomData,
        }
    }

    /// Rows of the matrix.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let v = [0u8; 12];
    /// taskpools::dataflow::scope(|df| assert_eq!(df.region_ref(&v).matrix(3, 4).rows(), 3));
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn rows(&self) -> usize {
        self.grid.rows
    }

    /// Columns of the matrix.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let v = [0u8; 12];
    /// taskpools::dataflow::scope(|df| assert_eq!(df.region_ref(&v).matrix(3, 4).cols(), 4));
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn cols(&self) -> usize {
        self.grid.cols
    }

    /// The sub-matrix of `h` rows and `w` columns at row `r`, column `c`. Panics if it does
    /// not fit.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let m: Vec<u32> = (0..9).collect();
    /// let mut col = [0u32; 3];
    /// taskpools::dataflow::scope(|df| {
    ///     let (a, c) = (df.region_ref(&m).matrix(3, 3), df.region(&mut col));
    ///     df.spawn((a.sub(0, 1, 3, 1).read(), c.out()), |_, (t, c)| {
    ///         (0..3).for_each(|r| c[r] = t[(r, 0)]);
    ///     });
    /// });
    /// assert_eq!(col, [1, 4, 7]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn sub(&self, r: usize, c: usize, h: usize, w: usize) -> SubRef<'s, T> {
        SubRef::new(self.grid.sub(r, c, h, w))
    }

    /// Tile `(i, j)` of `bs` × `bs` (tiles at the right and bottom edges are smaller when `bs`
    /// does not divide the sides). Panics if the tile starts outside the matrix.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let m = [0u8; 5 * 5];
    /// taskpools::dataflow::scope(|df| {
    ///     let a = df.region_ref(&m).matrix(5, 5);
    ///     df.spawn(a.tile(2, 2, 2).read(), |_, t| assert_eq!((t.rows(), t.cols()), (1, 1)));
    ///     df.spawn(a.tile(0, 2, 2).read(), |_, t| assert_eq!((t.rows(), t.cols()), (2, 1)));
    /// });
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn tile(&self, i: usize, j: usize, bs: usize) -> SubRef<'s, T> {
        SubRef::new(self.grid.tile(i, j, bs))
    }
}

/// A sub-matrix of a [`MatrixRef`]: it can only be read (the task gets a
/// [`TileRef`](crate::dataflow::TileRef)).
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// let m: Vec<u32> = (0..16).collect();
/// let mut trace = [0u32];
/// taskpools::dataflow::scope(|df| {
///     let (a, t) = (df.region_ref(&m).matrix(4, 4), df.region(&mut trace));
///     let reads: Vec<_> = (0..4).map(|i| a.sub(i, i, 1, 1).read()).collect();
///     df.spawn((reads, t.out()), |_, (d, t)| t[0] = d.iter().map(|x| x[(0, 0)]).sum());
/// });
/// assert_eq!(trace, [0 + 5 + 10 + 15]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
///
/// Nor can it be written (`SubRef` has no `out`):
///
/// ```compile_fail,E0599
/// let m = vec![0u32; 4];
/// taskpools::dataflow::scope(|df| {
///     let a = df.region_ref(&m).matrix(2, 2);
///     df.spawn(a.tile(0, 0, 1).out(), |_, mut t| t[(0, 0)] = 1);
/// });
/// ```
pub struct SubRef<'s, T> {
    pub(super) block: Block<T>,
    marker: PhantomData<&'s [T]>,
}

impl<T> Clone for SubRef<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SubRef<'_, T> {}

impl<'s, T> SubRef<'s, T> {
    fn new(block: Block<T>) -> Self {
        SubRef {
            block,
            marker: PhantomData,
        }
    }

    /// Declares a read: the task gets a [`TileRef`](crate::dataflow::TileRef).
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let m: Vec<u32> = (0..9).collect();
    /// let mut out = [0u32];
    /// taskpools::dataflow::scope(|df| {
    ///     let (a, o) = (df.region_ref(&m).matrix(3, 3), df.region(&mut out));
    ///     df.spawn((a.sub(1, 1, 2, 2).read(), o.out()), |_, (t, o)| {
    ///         o[0] = (0..2).map(|r| t.row(r).iter().sum::<u32>()).sum();
    ///     });
    /// });
    /// assert_eq!(out, [4 + 5 + 7 + 8]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn read(self) -> TileRead<'s, T> {
        self.block.read()
    }
}
