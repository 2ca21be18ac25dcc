//! What a member of a reduction holds: its private copy, given back when dropped.

use std::ops::{Deref, DerefMut};

use super::copies::Home;

/// A task's private copy in a reduction: dereferences to `[T]` (one element per element of
/// the part: identity values when the task starts, or the copy an earlier task of the group
/// left on the same worker, so fold into it and nothing else), and goes back to its reducer
/// when dropped.
///
/// A copy cannot be a region of its task's own scope (a region is borrowed for the scope's
/// whole life, longer than the closure that owns the copy): a member that splits its work
/// moves the copy into a child task, runs an inner [`scope`](crate::dataflow::scope()) on
/// it, or [`join`](crate::forkjoin::join)s over it.
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// use taskpools::dataflow::Partial;
///
/// let mut sums = [0u64; 2];
/// taskpools::dataflow::scope(|df| {
///     let s = df.region(&mut sums);
///     for i in 0..10u64 {
///         df.spawn(s.reduce(0, |a, x| *a += x), move |_, mut p: Partial<'_, u64>| {
///             p[0] += i;
///             p[1] += 1;
///         });
///     }
/// });
/// assert_eq!(sums, [45, 10]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct Partial<'t, T> {
    copy: Option<Box<[T]>>,
    home: &'t dyn Home<T>,
}

impl<'t, T> Partial<'t, T> {
    pub(crate) fn new(copy: Box<[T]>, home: &'t dyn Home<T>) -> Self {
        Partial {
            copy: Some(copy),
            home,
        }
    }
}

impl<T> Deref for Partial<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.copy.as_deref().unwrap_or(&[])
    }
}

impl<T> DerefMut for Partial<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.copy.as_deref_mut().unwrap_or(&mut [])
    }
}

impl<T> Drop for Partial<'_, T> {
    fn drop(&mut self) {
        let Some(copy) = self.copy.take() else { return };
        // While unwinding, the copy is kept unfolded (a fold runs the operator, which must
        // not panic now): if the task fails, the combine is cancelled with it; if the unwind
        // is caught and the task completes, the combine folds the copy in.
        if std::thread::panicking() {
            self.home.spill(copy);
        } else {
            self.home.give_back_here(copy);
        }
    }
}

/// A task's private copy of one element in a reduction ([`Partial`] of one element):
/// dereferences to `T`.
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// let mut v = vec![0u64; 3];
/// taskpools::dataflow::scope(|df| {
///     let r = df.region(&mut v);
///     for i in 1..=100u64 {
///         df.spawn(r.at(1).reduce(0, |a, x| *a += x), move |_, mut p| *p += i);
///     }
/// });
/// assert_eq!(v, [0, 5050, 0]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct PartialOne<'t, T>(pub(crate) Partial<'t, T>);

impl<T> Deref for PartialOne<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0[0]
    }
}

impl<T> DerefMut for PartialOne<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0[0]
    }
}
