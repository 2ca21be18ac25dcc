//! Writable regions and their contiguous parts: [`Region`], [`Part`].

use std::marker::PhantomData;
use std::ops::Range;

use super::span::Span;
use super::{Elem, Matrix, Read, Write};

/// Data handed to a data-flow scope: made by
/// [`Scope::region`](crate::dataflow::Scope::region). Declare accesses to it, whole or in
/// parts, and pass them to [`Scope::spawn`](crate::dataflow::Scope::spawn).
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
    span: Span<T>,
    marker: PhantomData<&'s mut [T]>,
}

impl<'s, T> Region<'s, T> {
    /// The region of `span`, a whole `&'s mut [T]` registered with its scope.
    pub(in crate::dataflow) fn new(span: Span<T>) -> Self {
        Region {
            span,
            marker: PhantomData,
        }
    }

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
        self.span.len
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
        self.span.len == 0
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
        Part::new(self.span)
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
        Part::new(self.span.part(range, "region"))
    }

    /// Element `i` of the region, for a task that uses one element: it gets `&T` or `&mut T`
    /// instead of a one-element slice. Panics if `i` is out of bounds.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = vec![0u32; 3];
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region(&mut v);
    ///     df.spawn(r.at(2).out(), |_, x: &mut u32| *x = 5);
    /// });
    /// assert_eq!(v, [0, 0, 5]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn at(&self, i: usize) -> Elem<'s, T> {
        Elem::new(self.span.at(i, "region"))
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
        self.span.chunks(size).map(Part::new)
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
        Matrix::new(self.span.grid(rows, cols, ld))
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
    pub(super) span: Span<T>,
    marker: PhantomData<&'s mut [T]>,
}

impl<T> Clone for Part<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Part<'_, T> {}

impl<'s, T> Part<'s, T> {
    fn new(span: Span<T>) -> Self {
        Part {
            span,
            marker: PhantomData,
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
        self.span.len
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
        self.span.len == 0
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
        Part::new(self.span.part(range, "part"))
    }

    /// Element `i` of this part (counted from the part's start): the task gets `&T` or
    /// `&mut T`. Panics if `i` is out of bounds.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = vec![1u32; 6];
    /// taskpools::dataflow::scope(|df| {
    ///     let hi = df.region(&mut v).part(3..6);
    ///     df.spawn(hi.at(0).inout(), |_, x| *x += 1); // element 3 of the region
    /// });
    /// assert_eq!(v, [1, 1, 1, 2, 1, 1]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn at(&self, i: usize) -> Elem<'s, T> {
        Elem::new(self.span.at(i, "part"))
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
        self.span.read()
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
        self.span.write()
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
