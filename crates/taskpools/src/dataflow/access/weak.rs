//! Weak accesses (OmpSs-2's `weakin` and `weakinout`): a task declares a part it only hands to
//! its children ([`Part::weak_inout`], [`Part::weak_read`], also on whole regions, read-only
//! parts and sub-matrices: [`Sub::weak_inout`]), receives a token for it ([`WeakMut`],
//! [`WeakRef`]) instead of the data, and its scope makes the token a region
//! ([`Scope::weak_region`], [`Scope::weak_region_ref`]) or a matrix ([`Scope::weak_matrix`],
//! [`Scope::weak_matrix_ref`]) for its children to declare accesses on. The gates that move
//! the dependences to the children are in `dataflow/weak`.

use std::marker::PhantomData;

use super::declare::sealed;
use super::matrix::Sub;
use super::shared::SubRef;
use super::span::{Grid, Span};
use super::{Accesses, Matrix, MatrixRef, Part, PartRef, Region, RegionRef};
use crate::dataflow::footprint::Mode;
use crate::dataflow::weak::WeakGate;
use crate::dataflow::{Footprint, Scope};

/// Makes a type invariant in `'t`.
type Invariant<'t> = fn(&'t ()) -> &'t ();

/// A declared weak read-write access (made by [`Part::weak_inout`]): the task gets a
/// [`WeakMut`].
pub struct WeakWrite<'s, T> {
    fp: Footprint,
    ptr: *mut T,
    gate: *const WeakGate,
    marker: PhantomData<&'s mut [T]>,
}

/// A declared weak read (made by [`Part::weak_read`]): the task gets a [`WeakRef`].
pub struct WeakRead<'s, T> {
    fp: Footprint,
    ptr: *const T,
    gate: *const WeakGate,
    marker: PhantomData<&'s [T]>,
}

/// A part a task declared weak with [`Part::weak_inout`] (or a sub-matrix, with
/// [`Sub::weak_inout`]): not the data, which the task's predecessors may still be writing, but
/// the right to hand it to the task's children, through [`Scope::weak_region`] (or
/// [`Scope::weak_matrix`]). Only the task's own scope takes it, and it cannot leave the task.
pub struct WeakMut<'t, T> {
    ptr: *mut T,
    shape: Shape,
    gate: *const WeakGate,
    /// Invariant in `'t` (only the task's own scope, of exactly that lifetime, takes it);
    /// neither `Send` nor `Sync` (raw pointers): it stays on the task's thread.
    marker: PhantomData<(&'t mut [T], Invariant<'t>)>,
}

/// A part a task declared weak with [`Part::weak_read`] (or a sub-matrix, with
/// [`Sub::weak_read`] or [`SubRef::weak_read`]): the right to hand it to the task's children
/// to read, through [`Scope::weak_region_ref`] (or [`Scope::weak_matrix_ref`]).
pub struct WeakRef<'t, T> {
    ptr: *const T,
    shape: Shape,
    gate: *const WeakGate,
    /// As for [`WeakMut`].
    marker: PhantomData<(&'t [T], Invariant<'t>)>,
}

/// A weak part's elements: `rows` rows of `cols`, `ld` apart (one row for a contiguous
/// part).
#[derive(Clone, Copy)]
struct Shape {
    rows: usize,
    cols: usize,
    ld: usize,
}

impl Shape {
    /// The shape a weak footprint declares.
    fn of(fp: &Footprint) -> Shape {
        Shape {
            rows: fp.rows,
            cols: fp.len,
            ld: fp.ld,
        }
    }

    fn len(self) -> usize {
        self.rows * self.cols
    }

    /// Whether the elements are one run (what a region covers): none, one row, or rows
    /// exactly their width apart.
    fn contiguous(self) -> bool {
        self.rows <= 1 || self.cols == 0 || self.cols == self.ld
    }

    /// The elements from the first to the last, those of other rows between included.
    fn extent(self) -> usize {
        if self.len() == 0 {
            0
        } else {
            (self.rows - 1) * self.ld + self.cols
        }
    }
}

impl<T> WeakMut<'_, T> {
    /// The number of elements of the part.
    pub fn len(&self) -> usize {
        self.shape.len()
    }

    /// Whether the part has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> WeakRef<'_, T> {
    /// The number of elements of the part.
    pub fn len(&self) -> usize {
        self.shape.len()
    }

    /// Whether the part has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn weak_fp<T>(span: &Span<T>, mode: Mode) -> Footprint {
    Footprint {
        weak: true,
        ..span.footprint(mode)
    }
}

impl<'s, T> Part<'s, T> {
    /// Declares a weak read-write access (OmpSs-2's `weakinout`; its `weakout` is the same
    /// here): the task will not touch the part itself, only hand it to its children, which
    /// declare their own accesses on it. So the task waits for nothing on the part: it may
    /// start, and spawn its children, while earlier tasks still write the part. Each child
    /// waits for those, and a later task that touches the part waits only for the children
    /// that touch it and for the end of the task's body (its last chance to spawn one), not
    /// for the task's other children or its end: the part is released early.
    ///
    /// A task with weak accesses never waits for its children: its scope refuses
    /// [`sync`](Scope::sync) and [`wait_for`](Scope::wait_for) (a panic; its children may use
    /// them), and its last child to end completes it. A spawn that declares weak and
    /// commutative accesses together is refused (a panic: the task would hold the lock while
    /// its children wait), and so is a weak access given to `wait_for`.
    ///
    /// The task gets a [`WeakMut`], which its scope makes a region of
    /// ([`Scope::weak_region`]). Release is per weak part, so declare one per block that its
    /// children work on, to release each as soon as they are done with it.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = vec![0u64; 8];
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region(&mut v);
    ///     df.spawn(r.out(), |_, v| v.fill(1));
    ///     // Starts at once; each half is released when its own child is done.
    ///     let halves = [r.part(0..4).weak_inout(), r.part(4..8).weak_inout()];
    ///     df.spawn(halves, |df, halves| {
    ///         for h in halves {
    ///             let h = df.weak_region(h);
    ///             // Waits for the `fill` above.
    ///             df.spawn(h.inout(), |_, h| h.iter_mut().for_each(|x| *x *= 10));
    ///         }
    ///     });
    ///     // Waits for the child on the first half only.
    ///     df.spawn(r.part(0..4).read(), |_, h| assert_eq!(h, [10; 4]));
    /// });
    /// assert_eq!(v, [10; 8]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn weak_inout(self) -> WeakWrite<'s, T> {
        WeakWrite {
            fp: weak_fp(&self.span, Mode::Write),
            ptr: self.span.ptr,
            gate: std::ptr::null(),
            marker: PhantomData,
        }
    }

    /// Declares a weak read (OmpSs-2's `weakin`): as [`weak_inout`](Self::weak_inout), but
    /// the children may only read the part ([`Scope::weak_region_ref`]), and, as for a read,
    /// other readers need not wait.
    pub fn weak_read(self) -> WeakRead<'s, T> {
        WeakRead {
            fp: weak_fp(&self.span, Mode::Read),
            ptr: self.span.ptr,
            gate: std::ptr::null(),
            marker: PhantomData,
        }
    }
}

impl<'s, T> Region<'s, T> {
    /// Declares a weak read-write access to the whole region (see [`Part::weak_inout`]).
    pub fn weak_inout(&self) -> WeakWrite<'s, T> {
        self.all().weak_inout()
    }

    /// Declares a weak read of the whole region (see [`Part::weak_read`]).
    pub fn weak_read(&self) -> WeakRead<'s, T> {
        self.all().weak_read()
    }
}

impl<'s, T> PartRef<'s, T> {
    /// Declares a weak read (see [`Part::weak_read`]).
    pub fn weak_read(self) -> WeakRead<'s, T> {
        WeakRead {
            fp: weak_fp(&self.span, Mode::Read),
            ptr: self.span.ptr,
            gate: std::ptr::null(),
            marker: PhantomData,
        }
    }
}

impl<'s, T> RegionRef<'s, T> {
    /// Declares a weak read of the whole region (see [`Part::weak_read`]).
    pub fn weak_read(&self) -> WeakRead<'s, T> {
        self.all().weak_read()
    }
}

impl<'s, T> Sub<'s, T> {
    /// Declares a weak read-write access to the sub-matrix (see [`Part::weak_inout`]): its
    /// children get it as a matrix of their own ([`Scope::weak_matrix`]), to cut into tiles,
    /// and it is released when they are done with it. Two levels of blocking, as in a
    /// blocked Cholesky factorization whose tile tasks spawn tasks on sub-tiles:
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut m = vec![1u32; 8 * 8];
    /// taskpools::dataflow::scope(|df| {
    ///     let a = df.region(&mut m).matrix(8, 8);
    ///     for (i, j) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
    ///         // A task per 4 × 4 tile, which hands its tile on in 2 × 2 sub-tiles.
    ///         df.spawn(a.tile(i, j, 4).weak_inout(), |df, w| {
    ///             let t = df.weak_matrix(w);
    ///             for (k, l) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
    ///                 df.spawn(t.tile(k, l, 2).inout(), |_, mut s| s[(0, 0)] += 1);
    ///             }
    ///         });
    ///     }
    ///     // Waits only for the children on the tile at (0, 0).
    ///     df.spawn(a.tile(0, 0, 4).read(), |_, t| assert_eq!(t[(2, 2)], 2));
    /// });
    /// assert_eq!(m.iter().sum::<u32>(), 64 + 16);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn weak_inout(self) -> WeakWrite<'s, T> {
        WeakWrite {
            fp: Footprint {
                weak: true,
                ..self.block.footprint(Mode::Write)
            },
            ptr: self.block.ptr(),
            gate: std::ptr::null(),
            marker: PhantomData,
        }
    }

    /// Declares a weak read of the sub-matrix (see [`Sub::weak_inout`] and
    /// [`Part::weak_read`]): its children get it as a read-only matrix
    /// ([`Scope::weak_matrix_ref`]).
    pub fn weak_read(self) -> WeakRead<'s, T> {
        weak_read_block(&self.block)
    }
}

impl<'s, T> SubRef<'s, T> {
    /// Declares a weak read of the sub-matrix (see [`Sub::weak_read`]).
    pub fn weak_read(self) -> WeakRead<'s, T> {
        weak_read_block(&self.block)
    }
}

fn weak_read_block<'s, T>(block: &super::span::Block<T>) -> WeakRead<'s, T> {
    WeakRead {
        fp: Footprint {
            weak: true,
            ..block.footprint(Mode::Read)
        },
        ptr: block.ptr(),
        gate: std::ptr::null(),
        marker: PhantomData,
    }
}

/// Takes the next gate of the spawn for a weak access.
///
/// # Safety
/// As `Accesses::bind_weak`.
unsafe fn take(cursor: &mut *const WeakGate) -> *const WeakGate {
    let g = *cursor;
    debug_assert!(!g.is_null(), "a weak access without its gates");
    // SAFETY: per the contract, a live gate of the spawn, in its frame's region.
    *cursor = unsafe { &*g }.next.get();
    g
}

impl<T: Send + 'static> sealed::Sealed for WeakWrite<'_, T> {}
impl<T: Send + 'static> Accesses for WeakWrite<'_, T> {
    type Data<'t> = WeakMut<'t, T>;
    const WEAK: bool = true;
    fn footprints(&self, out: &mut Vec<Footprint>) {
        out.push(self.fp);
    }
    unsafe fn bind_weak(&mut self, cursor: &mut *const WeakGate) {
        // SAFETY: the contract is the trait's.
        self.gate = unsafe { take(cursor) };
    }
    fn weak_head(&self) -> *const WeakGate {
        self.gate
    }
    unsafe fn into_data<'t>(self) -> WeakMut<'t, T> {
        WeakMut {
            ptr: self.ptr,
            shape: Shape::of(&self.fp),
            gate: self.gate,
            marker: PhantomData,
        }
    }
}

impl<T: Sync + 'static> sealed::Sealed for WeakRead<'_, T> {}
impl<T: Sync + 'static> Accesses for WeakRead<'_, T> {
    type Data<'t> = WeakRef<'t, T>;
    const WEAK: bool = true;
    fn footprints(&self, out: &mut Vec<Footprint>) {
        out.push(self.fp);
    }
    unsafe fn bind_weak(&mut self, cursor: &mut *const WeakGate) {
        // SAFETY: the contract is the trait's.
        self.gate = unsafe { take(cursor) };
    }
    fn weak_head(&self) -> *const WeakGate {
        self.gate
    }
    unsafe fn into_data<'t>(self) -> WeakRef<'t, T> {
        WeakRef {
            ptr: self.ptr,
            shape: Shape::of(&self.fp),
            gate: self.gate,
            marker: PhantomData,
        }
    }
}

impl<'s, 'e> Scope<'s, 'e> {
    /// Makes a part the task declared weak ([`Part::weak_inout`]) a region of the task's scope,
    /// for its children to declare accesses on, as [`region`](Self::region) does for data the
    /// task received. Each child waits for the task's predecessors on the part, and the
    /// task's successors on the part wait for these children (see [`Part::weak_inout`]).
    /// Panics if the part is not the task's own (a task's weak parts go to its own scope).
    /// Only the task's own scope takes it (its lifetime is the task's, exactly):
    ///
    /// ```compile_fail
    /// use taskpools::dataflow::{Scope, WeakMut};
    ///
    /// fn elsewhere<'a, 'b>(s: &Scope<'a, '_>, w: WeakMut<'b, u64>) {
    ///     let _ = s.weak_region(w);
    /// }
    /// ```
    ///
    /// and it cannot go into a child's closure (it is not `Send`: the compiler says that
    /// `*mut T` cannot be sent between threads); declare the child's access on the region
    /// instead:
    ///
    /// ```compile_fail,E0277
    /// let mut v = vec![0u64; 4];
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region(&mut v);
    ///     df.spawn(r.weak_inout(), |df, w| {
    ///         df.spawn((), move |df, ()| {
    ///             let _ = df.weak_region(w);
    ///         });
    ///     });
    /// });
    /// ```
    ///
    /// A sub-matrix that is not one run of elements (more than one row, and its rows not
    /// exactly its width apart, as in a tile of a wider matrix) becomes a matrix instead
    /// ([`weak_matrix`](Self::weak_matrix)): here it panics.
    pub fn weak_region<T>(&self, part: WeakMut<'s, T>) -> Region<'s, T> {
        contiguous(part.shape);
        Region::new(self.gated(part.ptr, part.shape.len(), part.gate))
    }

    /// Makes a part the task declared weak for reading ([`Part::weak_read`]) a read-only
    /// region of the task's scope (see [`weak_region`](Self::weak_region)).
    pub fn weak_region_ref<T>(&self, part: WeakRef<'s, T>) -> RegionRef<'s, T> {
        contiguous(part.shape);
        // Mutable by type only, as in `region_ref`.
        RegionRef::new(self.gated(part.ptr.cast_mut(), part.shape.len(), part.gate))
    }

    /// Makes a sub-matrix the task declared weak ([`Sub::weak_inout`]) a matrix of the
    /// task's scope, of its rows and columns, for its children to cut into tiles or
    /// sub-matrices (as [`weak_region`](Self::weak_region) does for a contiguous part). A
    /// part of a region declared with [`Part::weak_inout`] becomes a matrix of one row. Panics
    /// if the part is not the task's own.
    pub fn weak_matrix<T>(&self, part: WeakMut<'s, T>) -> Matrix<'s, T> {
        Matrix::new(self.gated_grid(part.ptr, part.shape, part.gate))
    }

    /// Makes a sub-matrix the task declared weak for reading ([`Sub::weak_read`],
    /// [`SubRef::weak_read`]) a read-only matrix of the task's scope (see
    /// [`weak_matrix`](Self::weak_matrix)).
    pub fn weak_matrix_ref<T>(&self, part: WeakRef<'s, T>) -> MatrixRef<'s, T> {
        // Mutable by type only, as in `region_ref`.
        MatrixRef::new(self.gated_grid(part.ptr.cast_mut(), part.shape, part.gate))
    }

    /// The gated region of a weak part's extent, seen as its rows and columns only: the
    /// elements of other rows between them (in the extent, not in the part) are reached by
    /// nothing a matrix hands out.
    fn gated_grid<T>(&self, ptr: *mut T, shape: Shape, gate: *const WeakGate) -> Grid<T> {
        let span = self.gated(ptr, shape.extent(), gate);
        Grid::of_tile(span, shape.rows, shape.cols, shape.ld)
    }

    fn gated<T>(&self, ptr: *mut T, len: usize, gate: *const WeakGate) -> Span<T> {
        // SAFETY: the gates of the task that received the part, alive while its body runs
        // (the leave gate holds an edge for the body), which it does: the part lives for
        // `'s`, the task's lifetime.
        let g = unsafe { &*gate };
        assert!(
            std::ptr::eq(g.frame.get(), self.frame),
            "taskpools::dataflow: a weak part was made a region by another scope than that of \
             the task that declared it"
        );
        let span = self.span(ptr, len);
        // SAFETY: the frame's thread (a scope is neither `Send` nor `Sync`); the region was
        // just registered.
        unsafe { self.frame().local() }.regions[span.id as usize].gates = gate;
        span
    }
}

/// Refuses to make a region of a weak sub-matrix whose rows are not one run of elements.
fn contiguous(shape: Shape) {
    assert!(
        shape.contiguous(),
        "taskpools::dataflow: a weak sub-matrix of {}×{} (rows {} apart) is not one run of \
         elements; make it a matrix with weak_matrix, not a region",
        shape.rows,
        shape.cols,
        shape.ld
    );
}
