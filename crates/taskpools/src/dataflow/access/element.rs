//! One-element accesses: [`Elem`] (from a writable region or part, by
//! [`Region::at`](super::Region::at)) and [`ElemRef`] (from a read-only one), declared as
//! [`ElemRead`] (the task gets `&T`) or [`ElemWrite`] (`&mut T`) instead of one-element
//! slices. Their footprints are ordinary footprints of one element.

use std::marker::PhantomData;

use super::declare::sealed;
use super::span::Span;
use super::Accesses;
use crate::dataflow::footprint::Mode;
use crate::dataflow::Footprint;

/// One element of a writable region: made by [`Region::at`](super::Region::at) or
/// [`Part::at`](super::Part::at). Declare how a task uses it; the task gets `&T` or `&mut T`.
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// // A chain of increments of one counter, and a task per element that reads it after.
/// let mut v = vec![0u64; 4];
/// taskpools::dataflow::scope(|df| {
///     let r = df.region(&mut v);
///     for _ in 0..10 {
///         df.spawn(r.at(0).inout(), |_, x: &mut u64| *x += 1);
///     }
///     for i in 1..4 {
///         df.spawn((r.at(0).read(), r.at(i).out()), |_, (c, x)| *x = *c * 10);
///     }
/// });
/// assert_eq!(v, [10, 100, 100, 100]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
///
/// A read gives `&T`, which cannot be written:
///
/// ```compile_fail,E0594
/// let mut v = vec![0u32; 4];
/// taskpools::dataflow::scope(|df| {
///     let r = df.region(&mut v);
///     df.spawn(r.at(1).read(), |_, x| *x = 1);
/// });
/// ```
pub struct Elem<'s, T> {
    pub(super) span: Span<T>,
    marker: PhantomData<&'s mut [T]>,
}

impl<T> Clone for Elem<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Elem<'_, T> {}

impl<'s, T> Elem<'s, T> {
    /// The element `span` (one element of a writable region) names.
    pub(super) fn new(span: Span<T>) -> Self {
        Elem {
            span,
            marker: PhantomData,
        }
    }

    /// Declares a read (PARTEE's `in`): the task gets `&T`.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = vec![3u32, 4];
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region(&mut v);
    ///     df.spawn((r.at(0).read(), r.at(1).inout()), |_, (a, b)| *b += *a);
    /// });
    /// assert_eq!(v, [3, 7]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn read(self) -> ElemRead<'s, T> {
        ElemRead {
            fp: self.span.footprint(Mode::Read),
            ptr: self.span.ptr,
            marker: PhantomData,
        }
    }

    /// Declares a write that does not read the old value (`out`): the task gets `&mut T`.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = vec![String::new(); 2];
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region(&mut v);
    ///     df.spawn(r.at(1).out(), |_, s: &mut String| *s = "one".into());
    /// });
    /// assert_eq!(v, ["", "one"]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn out(self) -> ElemWrite<'s, T> {
        ElemWrite {
            fp: self.span.footprint(Mode::Write),
            ptr: self.span.ptr,
            marker: PhantomData,
        }
    }

    /// Declares a read and write (`inout`): the task gets `&mut T`.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = vec![1u32; 3];
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region(&mut v);
    ///     for _ in 0..3 {
    ///         df.spawn(r.at(2).inout(), |_, x| *x *= 2); // one after another
    ///     }
    /// });
    /// assert_eq!(v, [1, 1, 8]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn inout(self) -> ElemWrite<'s, T> {
        self.out()
    }
}

/// One element of a read-only region: made by [`RegionRef::at`](super::RegionRef::at) or
/// [`PartRef::at`](super::PartRef::at). It can only be read (the task gets `&T`).
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// let params = [2u64, 5];
/// let mut v = vec![1u64; 4];
/// taskpools::dataflow::scope(|df| {
///     let (p, r) = (df.region_ref(&params), df.region(&mut v));
///     for c in r.chunks(2) {
///         df.spawn((p.at(1).read(), c.inout()), |_, (k, c)| c.iter_mut().for_each(|x| *x *= k));
///     }
/// });
/// assert_eq!(v, [5; 4]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct ElemRef<'s, T> {
    span: Span<T>,
    marker: PhantomData<&'s [T]>,
}

impl<T> Clone for ElemRef<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for ElemRef<'_, T> {}

impl<'s, T> ElemRef<'s, T> {
    /// The element `span` (one element of a read-only region) names.
    pub(super) fn new(span: Span<T>) -> Self {
        ElemRef {
            span,
            marker: PhantomData,
        }
    }

    /// Declares a read (PARTEE's `in`): the task gets `&T`.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let names = ["a".to_string(), "b".to_string()];
    /// let mut out = [0usize];
    /// taskpools::dataflow::scope(|df| {
    ///     let (n, o) = (df.region_ref(&names), df.region(&mut out));
    ///     df.spawn((n.at(1).read(), o.at(0).out()), |_, (s, o)| *o = s.len());
    /// });
    /// assert_eq!(out, [1]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn read(self) -> ElemRead<'s, T> {
        ElemRead {
            fp: self.span.footprint(Mode::Read),
            ptr: self.span.ptr,
            marker: PhantomData,
        }
    }
}

/// A declared read of one element (the task gets `&T`).
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// use taskpools::dataflow::ElemRead;
///
/// let mut v = vec![6u32, 0];
/// taskpools::dataflow::scope(|df| {
///     let r = df.region(&mut v);
///     let x: ElemRead<'_, u32> = r.at(0).read(); // the task receives `&u32`
///     df.spawn((x, r.at(1).out()), |_, (x, y)| *y = *x + 1);
/// });
/// assert_eq!(v, [6, 7]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct ElemRead<'s, T> {
    pub(super) fp: Footprint,
    pub(super) ptr: *const T,
    pub(super) marker: PhantomData<&'s T>,
}

/// A declared write of one element (the task gets `&mut T`).
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// use taskpools::dataflow::ElemWrite;
///
/// let mut v = vec![0u32; 2];
/// taskpools::dataflow::scope(|df| {
///     let w: ElemWrite<'_, u32> = df.region(&mut v).at(1).out(); // the task receives `&mut u32`
///     df.spawn(w, |_, x| *x = 9);
/// });
/// assert_eq!(v, [0, 9]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct ElemWrite<'s, T> {
    pub(super) fp: Footprint,
    pub(super) ptr: *mut T,
    pub(super) marker: PhantomData<&'s mut T>,
}

impl<T: Sync + 'static> sealed::Sealed for ElemRead<'_, T> {}
impl<T: Sync + 'static> Accesses for ElemRead<'_, T> {
    type Data<'t> = &'t T;
    fn footprints(&self, out: &mut Vec<Footprint>) {
        out.push(self.fp);
    }
    unsafe fn into_data<'t>(self) -> &'t T {
        // SAFETY: element `start` of the region, in bounds (checked by `at`) and valid for
        // the scope; the dependence analysis lets this task run only while no sibling writes
        // it (a read-only region has no writer at all).
        unsafe { &*self.ptr }
    }
}

impl<T: Send + 'static> sealed::Sealed for ElemWrite<'_, T> {}
impl<T: Send + 'static> Accesses for ElemWrite<'_, T> {
    type Data<'t> = &'t mut T;
    fn footprints(&self, out: &mut Vec<Footprint>) {
        out.push(self.fp);
    }
    unsafe fn into_data<'t>(self) -> &'t mut T {
        // SAFETY: as for `ElemRead`, and no sibling reads or writes the element while this
        // task runs, nor does another access of this task (checked at spawn). Only `Elem`,
        // made from a writable region, makes an `ElemWrite`.
        unsafe { &mut *self.ptr }
    }
}
