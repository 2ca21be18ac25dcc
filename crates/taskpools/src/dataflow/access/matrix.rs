//! Writable matrices and their sub-matrices: [`Matrix`], [`Sub`] (PARTEE's *stride*
//! arguments).

use std::marker::PhantomData;

use super::span::{Block, Grid};
use super::{TileRead, TileWrite};

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
    grid: Grid<T>,
    marker: PhantomData<&'s mut [T]>,
}

impl<T> Clone for Matrix<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Matrix<'_, T> {}

impl<'s, T> Matrix<'s, T> {
    /// The matrix of `grid`, which lies in a writable region.
    pub(in crate::dataflow) fn new(grid: Grid<T>) -> Self {
        Matrix {
            grid,
            marker: PhantomData,
        }
    }

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
        self.grid.rows
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
        self.grid.cols
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
        Sub::new(self.grid.sub(r, c, h, w))
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
        Sub::new(self.grid.tile(i, j, bs))
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
    pub(super) block: Block<T>,
    marker: PhantomData<&'s mut [T]>,
}

impl<T> Clone for Sub<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Sub<'_, T> {}

impl<'s, T> Sub<'s, T> {
    fn new(block: Block<T>) -> Self {
        Sub {
            block,
            marker: PhantomData,
        }
    }

    /// Declares a read: the task gets a [`TileRef`](crate::dataflow::TileRef).
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
        self.block.read()
    }

    /// Declares a write that does not read the old contents: the task gets a
    /// [`TileMut`](crate::dataflow::TileMut).
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
        self.block.write()
    }

    /// Declares a read and write: the task gets a [`TileMut`](crate::dataflow::TileMut).
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
