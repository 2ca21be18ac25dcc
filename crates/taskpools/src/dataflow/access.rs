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
pub struct Region<'s, T> {
    pub(super) frame: *const (),
    pub(super) id: u32,
    pub(super) ptr: *mut T,
    pub(super) len: usize,
    pub(super) marker: PhantomData<&'s mut [T]>,
}

impl<'s, T> Region<'s, T> {
    /// Elements in the region.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the region has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The whole region.
    pub fn all(&self) -> Part<'s, T> {
        self.part(0..self.len)
    }

    /// Elements `range` of the region. Panics if the range is out of bounds.
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
    pub fn chunks(&self, size: usize) -> impl Iterator<Item = Part<'s, T>> + '_ {
        assert!(size > 0, "data-flow region chunks of 0 elements");
        (0..self.len)
            .step_by(size)
            .map(move |s| self.part(s..(s + size).min(self.len)))
    }

    /// Declares a read of the whole region (PARTEE's `in`).
    pub fn read(&self) -> Read<'s, T> {
        self.all().read()
    }

    /// Declares a write of the whole region that does not read it first (`out`).
    pub fn out(&self) -> Write<'s, T> {
        self.all().out()
    }

    /// Declares a read and write of the whole region (`inout`).
    pub fn inout(&self) -> Write<'s, T> {
        self.all().inout()
    }

    /// The region seen as a row-major matrix of `rows` × `cols` elements (leading dimension
    /// `cols`). Panics if that does not fit.
    pub fn matrix(&self, rows: usize, cols: usize) -> Matrix<'s, T> {
        self.matrix_ld(rows, cols, cols)
    }

    /// The region seen as a row-major matrix of `rows` × `cols` elements whose rows start
    /// `ld` elements apart (`ld >= cols`). Panics if that does not fit.
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
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the part has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Elements `range` of this part (counted from the part's start). Panics if out of
    /// bounds.
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
    pub fn read(self) -> Read<'s, T> {
        Read {
            fp: self.footprint(false),
            ptr: self.ptr,
            marker: PhantomData,
        }
    }

    /// Declares a write that does not read the old contents (`out`): the task gets `&mut [T]`.
    /// (Ordered like `inout`; the difference is a promise about the task's code.)
    pub fn out(self) -> Write<'s, T> {
        Write {
            fp: self.footprint(true),
            ptr: self.ptr,
            marker: PhantomData,
        }
    }

    /// Declares a read and write (`inout`): the task gets `&mut [T]`.
    pub fn inout(self) -> Write<'s, T> {
        self.out()
    }
}

/// A region seen as a row-major matrix: cut it into tiles or sub-matrices (PARTEE's
/// *stride* arguments), each tracked by its own rows only.
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
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns of the matrix.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The sub-matrix of `h` rows and `w` columns at row `r`, column `c`. Panics if it does not
    /// fit.
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
    pub fn read(self) -> TileRead<'s, T> {
        TileRead {
            fp: self.footprint(false),
            tile: (self.ptr, self.rows, self.cols, self.ld),
            marker: PhantomData,
        }
    }

    /// Declares a write that does not read the old contents: the task gets a [`TileMut`].
    pub fn out(self) -> TileWrite<'s, T> {
        TileWrite {
            fp: self.footprint(true),
            tile: (self.ptr, self.rows, self.cols, self.ld),
            marker: PhantomData,
        }
    }

    /// Declares a read and write: the task gets a [`TileMut`].
    pub fn inout(self) -> TileWrite<'s, T> {
        self.out()
    }
}

/// A declared read of a [`Part`] (the task gets `&[T]`).
pub struct Read<'s, T> {
    fp: Footprint,
    ptr: *const T,
    marker: PhantomData<&'s [T]>,
}

/// A declared write of a [`Part`] (the task gets `&mut [T]`).
pub struct Write<'s, T> {
    fp: Footprint,
    ptr: *mut T,
    marker: PhantomData<&'s mut [T]>,
}

/// A declared read of a [`Sub`] (the task gets a [`TileRef`]).
pub struct TileRead<'s, T> {
    fp: Footprint,
    tile: (*mut T, usize, usize, usize),
    marker: PhantomData<&'s [T]>,
}

/// A declared write of a [`Sub`] (the task gets a [`TileMut`]).
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
