//! Reduction accesses (OmpSs-2's `reduction`, OpenMP 5's `in_reduction`): [`Reduce`] on a
//! region or part (the task gets a [`Partial`] copy) and [`ReduceOne`] on one element (a
//! [`PartialOne`]). The groups, copies and combine are in `dataflow/reduce`.

use std::any::TypeId;
use std::marker::PhantomData;

use super::declare::sealed;
use super::span::Span;
use super::{Accesses, Elem, Part, Region};
use crate::dataflow::footprint::Mode;
use crate::dataflow::reduce::{Groups, Nowhere, Partial, PartialOne, Reducer};
use crate::dataflow::{Footprint, TaskHandle};

/// A declared reduction into a part (the task gets a [`Partial`]): made by
/// [`Part::reduce`] or [`Region::reduce`].
pub struct Reduce<'s, T, F> {
    fp: Footprint,
    ptr: *mut T,
    /// The identity and operator, until the spawn opens a group with them.
    make: Option<(T, F)>,
    /// The group's reducer, from the spawn on.
    reducer: *const Reducer<T, F>,
    marker: PhantomData<&'s mut [T]>,
}

/// A declared reduction into one element (the task gets a [`PartialOne`]): made by
/// [`Elem::reduce`].
pub struct ReduceOne<'s, T, F>(Reduce<'s, T, F>);

/// The key of a reducer's type: reductions with the same key on the same part join a group.
fn key<T: 'static, F: 'static>() -> TypeId {
    TypeId::of::<Reducer<T, F>>()
}

impl<T, F> Reduce<'_, T, F>
where
    T: Clone + Send + Sync + 'static,
    F: Fn(&mut T, T) + Send + Sync + 'static,
{
    fn new(span: Span<T>, identity: T, op: F) -> Self {
        const {
            assert!(
                std::mem::size_of::<F>() == 0,
                "taskpools::dataflow: a reduction's operator is a function or a closure that \
                 captures nothing (its type names it; put state in the identity)"
            )
        };
        Reduce {
            fp: Footprint {
                reduce: Some(key::<T, F>),
                ..span.footprint(Mode::Concurrent)
            },
            ptr: span.ptr,
            make: Some((identity, op)),
            reducer: std::ptr::null(),
            marker: PhantomData,
        }
    }
}

impl<'s, T> Region<'s, T> {
    /// Declares a reduction into the whole region (see [`Part::reduce`]).
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// use std::ops::AddAssign;
    ///
    /// let words = ["a", "bb", "a", "ccc", "bb", "a"];
    /// let mut counts = [0u32; 3]; // by length
    /// taskpools::dataflow::scope(|df| {
    ///     let c = df.region(&mut counts);
    ///     for w in words {
    ///         // `AddAssign::add_assign` is one operator wherever it is named: one group.
    ///         df.spawn(c.reduce(0, AddAssign::add_assign), move |_, mut c| c[w.len() - 1] += 1);
    ///     }
    /// });
    /// assert_eq!(counts, [3, 2, 1]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn reduce<F>(&self, identity: T, op: F) -> Reduce<'s, T, F>
    where
        T: Clone + Send + Sync + 'static,
        F: Fn(&mut T, T) + Send + Sync + 'static,
    {
        self.all().reduce(identity, op)
    }
}

impl<'s, T> Part<'s, T> {
    /// Declares a reduction (OmpSs-2's `reduction`, OpenMP 5's `in_reduction`, StarPU's
    /// `STARPU_REDUX`): the task gets a [`Partial`] (bind it `mut`), a private copy of the
    /// part, and folds values into it; `op(acc, x)` folds `x` into `acc`. Only fold into the
    /// copy (never assign or read it): it starts as `identity` in every element, or as the
    /// copy an earlier task of the group left on the same worker. So `identity` must be a
    /// true identity of `op`, and `op` associative and commutative (the copies are folded in
    /// no fixed order).
    ///
    /// Consecutive reductions into the same part with the same operator form a group, whose
    /// members run at once, with a copy per worker (a later member's `identity` is not used).
    /// The operator's type names it, so it is a function (such as `AddAssign::add_assign`),
    /// a closure that captures nothing, or one such closure in a variable (annotate its
    /// arguments: `let add = |a: &mut u64, x: u64| *a += x;`). One closure expression (as in
    /// a loop) is one operator; two written apart are two, whose groups are folded one after
    /// the other (used in turn, they fold after every task). A function pointer or a
    /// capturing closure is refused when the program is built (`cargo build`, not
    /// `cargo check`):
    ///
    /// ```compile_fail,E0080
    /// let mut v = vec![0u64; 4];
    /// let k = 3;
    /// taskpools::dataflow::scope(|df| {
    ///     let r = df.region(&mut v);
    ///     df.spawn(r.reduce(0, move |a, x| *a += k * x), |_, mut p| p[0] += 1);
    /// });
    /// ```
    ///
    /// The copies are folded into the data, by a task the scope spawns, before the next task
    /// that touches the part in another way, a [`wait_for`](crate::dataflow::Scope::wait_for)
    /// on it, a [`sync`](crate::dataflow::Scope::sync) or the scope's end. A task that
    /// panics leaves its copy unfolded, and what comes after it on the part is cancelled, as
    /// for any failed task; a cancelled scope may leave groups unfolded. A copy that is never
    /// dropped (`mem::forget`) makes the fold panic rather than lose what it held.
    ///
    /// Each group keeps a copy of the part per worker: one reduction over a whole region of
    /// bins costs far less than one per bin.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let xs: Vec<f64> = (1..=1000).map(f64::from).collect();
    /// let mut stats = vec![0.0f64; 2]; // sum, sum of squares
    /// let mut mean_sq = [0.0f64];
    /// taskpools::dataflow::scope(|df| {
    ///     let (s, m) = (df.region(&mut stats), df.region(&mut mean_sq));
    ///     for chunk in xs.chunks(100) {
    ///         df.spawn(s.all().reduce(0.0, |a, x| *a += x), move |_, mut p| {
    ///             for x in chunk {
    ///                 p[0] += x;
    ///                 p[1] += x * x;
    ///             }
    ///         });
    ///     }
    ///     // After the copies are folded in.
    ///     df.spawn((s.read(), m.out()), |_, (s, m)| m[0] = s[1] / 1000.0);
    /// });
    /// assert_eq!(stats, [500500.0, 333833500.0]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn reduce<F>(self, identity: T, op: F) -> Reduce<'s, T, F>
    where
        T: Clone + Send + Sync + 'static,
        F: Fn(&mut T, T) + Send + Sync + 'static,
    {
        Reduce::new(self.span, identity, op)
    }
}

impl<'s, T> Elem<'s, T> {
    /// Declares a reduction into this element (see [`Part::reduce`]): the task gets a
    /// [`PartialOne`], which dereferences to `T`.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut best = vec![0u32, 0];
    /// taskpools::dataflow::scope(|df| {
    ///     let b = df.region(&mut best);
    ///     for x in [7u32, 42, 3, 19] {
    ///         df.spawn(b.at(0).reduce(0, |m, x| *m = (*m).max(x)), move |_, mut m| {
    ///             *m = (*m).max(x);
    ///         });
    ///     }
    /// });
    /// assert_eq!(best, [42, 0]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn reduce<F>(self, identity: T, op: F) -> ReduceOne<'s, T, F>
    where
        T: Clone + Send + Sync + 'static,
        F: Fn(&mut T, T) + Send + Sync + 'static,
    {
        ReduceOne(Reduce::new(self.span, identity, op))
    }
}

impl<T, F> sealed::Sealed for Reduce<'_, T, F> {}
impl<T, F> Accesses for Reduce<'_, T, F>
where
    T: Clone + Send + Sync + 'static,
    F: Fn(&mut T, T) + Send + Sync + 'static,
{
    type Data<'t> = Partial<'t, T>;
    fn footprints(&self, out: &mut Vec<Footprint>) {
        out.push(self.fp);
    }
    fn bind_reductions(
        &mut self,
        groups: &mut Groups,
        runtime: (usize, usize),
        task: TaskHandle<'static>,
    ) {
        if self.fp.len == 0 {
            // Nothing to fold: no group (an empty one would sit inside others).
            return;
        }
        let (len, make) = (self.fp.len, &mut self.make);
        let (registry, workers) = runtime;
        self.reducer = groups.bind(&self.fp, self.ptr, task, || {
            let (identity, op) = make.take().expect("a reduction is bound once");
            Reducer::new(identity, op, len, registry, workers)
        });
    }
    unsafe fn into_data<'t>(self) -> Partial<'t, T> {
        if self.fp.len == 0 {
            return Partial::new(Box::new([]), &Nowhere);
        }
        assert!(
            !self.reducer.is_null(),
            "taskpools::dataflow: a reduction used outside a spawn"
        );
        // SAFETY: bound at the spawn to its group's reducer, which the group holds until it
        // is closed, and then the combine task, which completes (or is dropped unrun) only
        // after this task has completed.
        let r: &'t Reducer<T, F> = unsafe { &*self.reducer };
        // SAFETY: the current thread's own slot, if any.
        Partial::new(unsafe { r.take(r.here()) }, r)
    }
}

impl<T, F> sealed::Sealed for ReduceOne<'_, T, F> {}
impl<T, F> Accesses for ReduceOne<'_, T, F>
where
    T: Clone + Send + Sync + 'static,
    F: Fn(&mut T, T) + Send + Sync + 'static,
{
    type Data<'t> = PartialOne<'t, T>;
    fn footprints(&self, out: &mut Vec<Footprint>) {
        self.0.footprints(out);
    }
    fn bind_reductions(
        &mut self,
        groups: &mut Groups,
        runtime: (usize, usize),
        task: TaskHandle<'static>,
    ) {
        self.0.bind_reductions(groups, runtime, task);
    }
    unsafe fn into_data<'t>(self) -> PartialOne<'t, T> {
        // SAFETY: the contract is the same.
        PartialOne(unsafe { self.0.into_data() })
    }
}
