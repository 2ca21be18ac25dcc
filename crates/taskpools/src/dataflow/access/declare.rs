//! Declared accesses — what [`Scope::spawn`](crate::dataflow::Scope::spawn) takes — and the
//! [`Accesses`] trait that turns them into the data a task receives.

use std::marker::PhantomData;

use crate::dataflow::reduce::Groups;
use crate::dataflow::tile::{TileMut, TileRef};
use crate::dataflow::weak::WeakGate;
use crate::dataflow::{Footprint, TaskHandle};

/// A declared read of a [`Part`](super::Part) (the task gets `&[T]`).
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
    pub(super) fp: Footprint,
    pub(super) ptr: *const T,
    pub(super) marker: PhantomData<&'s [T]>,
}

/// A declared write of a [`Part`](super::Part) (the task gets `&mut [T]`).
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
    pub(super) fp: Footprint,
    pub(super) ptr: *mut T,
    pub(super) marker: PhantomData<&'s mut [T]>,
}

/// A declared read of a [`Sub`](super::Sub) (the task gets a [`TileRef`]).
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
    pub(super) fp: Footprint,
    pub(super) tile: (*mut T, usize, usize, usize),
    pub(super) marker: PhantomData<&'s [T]>,
}

/// A declared write of a [`Sub`](super::Sub) (the task gets a [`TileMut`]).
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
    pub(super) fp: Footprint,
    pub(super) tile: (*mut T, usize, usize, usize),
    pub(super) marker: PhantomData<&'s mut [T]>,
}

pub(in crate::dataflow) mod sealed {
    pub trait Sealed {}
}

/// What [`Scope::spawn`](crate::dataflow::Scope::spawn) accepts: one declared access, a tuple
/// of up to eight, an array, a `Vec` or an `Option` of them, or `()` for none. `Data<'t>` is
/// what the task receives: the same shape, with `&[T]`, `&mut [T]`, [`TileRef`] or
/// [`TileMut`] in place of each declaration (and a [`Partial`](crate::dataflow::Partial)
/// copy for a reduction).
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
    /// Whether the accesses may include a weak one: a spawn of any other type skips every
    /// step of weak accesses at compile time.
    #[doc(hidden)]
    const WEAK: bool = false;
    #[doc(hidden)]
    fn footprints(&self, out: &mut Vec<Footprint>);
    /// Binds each reduction among the accesses to its group, as a member `task` (its
    /// handle), at the spawn, after the groups it closes are closed; `runtime` is the
    /// scope's runtime (its address and workers), whose workers a new group keeps copies for.
    #[doc(hidden)]
    fn bind_reductions(
        &mut self,
        _groups: &mut Groups,
        _runtime: (usize, usize),
        _task: TaskHandle<'static>,
    ) {
    }
    /// Hands each weak access among the accesses its gates (see `weak`), in the order of
    /// their footprints, taking them from the chain at `cursor`.
    ///
    /// # Safety
    /// `cursor` heads a chain of live gates, at least one per weak access.
    #[doc(hidden)]
    unsafe fn bind_weak(&mut self, _cursor: &mut *const WeakGate) {}
    /// The gates of the first weak access among the accesses, once bound (null: none).
    #[doc(hidden)]
    fn weak_head(&self) -> *const WeakGate {
        std::ptr::null()
    }
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
    const WEAK: bool = A::WEAK;
    fn footprints(&self, out: &mut Vec<Footprint>) {
        for a in self {
            a.footprints(out);
        }
    }
    fn bind_reductions(
        &mut self,
        groups: &mut Groups,
        runtime: (usize, usize),
        task: TaskHandle<'static>,
    ) {
        for a in self {
            a.bind_reductions(groups, runtime, task);
        }
    }
    unsafe fn bind_weak(&mut self, cursor: &mut *const WeakGate) {
        for a in self {
            // SAFETY: the contract is the container's.
            unsafe { a.bind_weak(cursor) };
        }
    }
    fn weak_head(&self) -> *const WeakGate {
        first_head(self.iter())
    }
    unsafe fn into_data<'t>(self) -> Self::Data<'t> {
        // SAFETY: each element's contract is the array's.
        self.map(|a| unsafe { a.into_data() })
    }
}

impl<A: Accesses> sealed::Sealed for Option<A> {}
impl<A: Accesses> Accesses for Option<A> {
    type Data<'t> = Option<A::Data<'t>>;
    const WEAK: bool = A::WEAK;
    fn footprints(&self, out: &mut Vec<Footprint>) {
        if let Some(a) = self {
            a.footprints(out);
        }
    }
    fn bind_reductions(
        &mut self,
        groups: &mut Groups,
        runtime: (usize, usize),
        task: TaskHandle<'static>,
    ) {
        if let Some(a) = self {
            a.bind_reductions(groups, runtime, task);
        }
    }
    unsafe fn bind_weak(&mut self, cursor: &mut *const WeakGate) {
        if let Some(a) = self {
            // SAFETY: the contract is the option's.
            unsafe { a.bind_weak(cursor) };
        }
    }
    fn weak_head(&self) -> *const WeakGate {
        first_head(self.iter())
    }
    unsafe fn into_data<'t>(self) -> Self::Data<'t> {
        // SAFETY: the contract is the option's.
        self.map(|a| unsafe { a.into_data() })
    }
}

impl<A: Accesses> sealed::Sealed for Vec<A> {}
impl<A: Accesses> Accesses for Vec<A> {
    type Data<'t> = Vec<A::Data<'t>>;
    const WEAK: bool = A::WEAK;
    fn footprints(&self, out: &mut Vec<Footprint>) {
        for a in self {
            a.footprints(out);
        }
    }
    fn bind_reductions(
        &mut self,
        groups: &mut Groups,
        runtime: (usize, usize),
        task: TaskHandle<'static>,
    ) {
        for a in self {
            a.bind_reductions(groups, runtime, task);
        }
    }
    unsafe fn bind_weak(&mut self, cursor: &mut *const WeakGate) {
        for a in self {
            // SAFETY: the contract is the container's.
            unsafe { a.bind_weak(cursor) };
        }
    }
    fn weak_head(&self) -> *const WeakGate {
        first_head(self.iter())
    }
    unsafe fn into_data<'t>(self) -> Self::Data<'t> {
        // SAFETY: each element's contract is the vector's.
        self.into_iter().map(|a| unsafe { a.into_data() }).collect()
    }
}

/// The first weak access's gates among `accesses` (null: none).
fn first_head<'a, A: Accesses + 'a>(accesses: impl Iterator<Item = &'a A>) -> *const WeakGate {
    accesses
        .map(Accesses::weak_head)
        .find(|g| !g.is_null())
        .unwrap_or(std::ptr::null())
}

macro_rules! tuple_accesses {
    ($($name:ident)+) => {
        impl<$($name: Accesses),+> sealed::Sealed for ($($name,)+) {}
        impl<$($name: Accesses),+> Accesses for ($($name,)+) {
            type Data<'t> = ($($name::Data<'t>,)+);
            const WEAK: bool = $($name::WEAK)||+;
            #[allow(non_snake_case)]
            fn footprints(&self, out: &mut Vec<Footprint>) {
                let ($($name,)+) = self;
                $($name.footprints(out);)+
            }
            #[allow(non_snake_case)]
            fn bind_reductions(&mut self, groups: &mut Groups, runtime: (usize, usize), task: TaskHandle<'static>) {
                let ($($name,)+) = self;
                $($name.bind_reductions(groups, runtime, task);)+
            }
            #[allow(non_snake_case)]
            unsafe fn bind_weak(&mut self, cursor: &mut *const WeakGate) {
                let ($($name,)+) = self;
                // SAFETY: the contract is the tuple's.
                unsafe { $($name.bind_weak(cursor);)+ }
            }
            #[allow(non_snake_case)]
            fn weak_head(&self) -> *const WeakGate {
                let ($($name,)+) = self;
                let mut g: *const WeakGate = std::ptr::null();
                $(if g.is_null() { g = $name.weak_head(); })+
                g
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
