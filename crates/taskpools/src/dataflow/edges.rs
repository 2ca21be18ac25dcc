//! Explicit edges: a spawned task's handle, and spawning after handles (the *intervals* of
//! Weibel's scheduler, whose constructors take a `Dependency`; Taskflow's `precede`/`succeed`;
//! oneTBB's flow-graph edges). An edge goes through the same notify lists and dependence
//! counters as a data dependence, so a task may wait for both at once.

use std::marker::PhantomData;

use super::task::{TaskDesc, NO_PLACE};
use super::{Accesses, Scope};

/// A task spawned by [`Scope::spawn_after`]: later siblings may run after it
/// ([`Scope::spawn_after`] takes handles), whatever data they declare.
///
/// A handle belongs to the scope that spawned the task (another scope refuses it) and stays
/// valid for the scope's lifetime; after a [`Scope::sync`] (which waits for every task so far)
/// an edge to a task from before it is no edge. Handles cannot be sent to other threads, so
/// neither a task's closure nor a nested scope's can capture one:
///
/// ```compile_fail
/// taskpools::dataflow::scope(|df| {
///     let a = df.spawn_after(&[], (), |_, ()| {});
///     // A child cannot wait for its parent's sibling through a handle.
///     df.spawn((), move |child, ()| { child.spawn_after(&[a], (), |_, ()| {}); });
/// });
/// ```
///
/// ```compile_fail
/// taskpools::dataflow::scope(|outer| {
///     let a = outer.spawn_after(&[], (), |_, ()| {});
///     taskpools::dataflow::scope(|inner| { inner.spawn_after(&[a], (), |_, ()| {}); });
/// });
/// ```
pub struct TaskHandle<'s> {
    pub(super) desc: *const TaskDesc,
    pub(super) frame: *const (),
    pub(super) epoch: usize,
    marker: PhantomData<&'s ()>,
}

impl Clone for TaskHandle<'_> {
    fn clone(&self) -> Self {
        *self
    }
}
impl Copy for TaskHandle<'_> {}

impl TaskHandle<'_> {
    /// The handle of task `desc` of frame `frame`, spawned in epoch `epoch`.
    pub(super) fn new(desc: *const TaskDesc, frame: *const (), epoch: usize) -> Self {
        TaskHandle {
            desc,
            frame,
            epoch,
            marker: PhantomData,
        }
    }
}

impl std::fmt::Debug for TaskHandle<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskHandle")
            .field("task", &self.desc)
            .finish()
    }
}

impl<'s, 'e> Scope<'s, 'e> {
    /// [`spawn`](Self::spawn), and the task also runs only after every task of `after` has
    /// completed (an explicit happens-before edge, beside or instead of declared data);
    /// returns the new task's handle for later siblings. `&[]` is a plain spawn with a
    /// handle. If a task of `after` panicked, this one is cancelled, as a data dependent is.
    ///
    /// Panics, before anything is queued, if a handle belongs to another scope.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let step = AtomicU32::new(0);
    /// let mut out = vec![0u32; 2];
    /// taskpools::dataflow::scope(|df| {
    ///     let o = df.region(&mut out);
    ///     // No data in common: only the edges order these three.
    ///     let a = df.spawn_after(&[], (), |_, ()| assert_eq!(step.swap(1, Ordering::SeqCst), 0));
    ///     let b = df.spawn_after(&[a], (), |_, ()| assert_eq!(step.swap(2, Ordering::SeqCst), 1));
    ///     // An edge beside a data access.
    ///     df.spawn_after(&[b], o.at(0).out(), |_, x| *x = step.load(Ordering::SeqCst));
    /// });
    /// assert_eq!(out[0], 2);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn spawn_after<A, F>(&self, after: &[TaskHandle<'s>], accesses: A, f: F) -> TaskHandle<'s>
    where
        A: Accesses,
        F: for<'t> FnOnce(&'t Scope<'t, 's>, A::Data<'t>) + Send + 's,
    {
        let desc = self.spawn_to(NO_PLACE, 0, after, accesses, f);
        let frame = self.frame();
        // SAFETY: the frame's thread (a scope is neither `Send` nor `Sync`).
        let epoch = unsafe { frame.local() }.epoch;
        TaskHandle {
            desc,
            frame: self.frame.cast(),
            epoch,
            marker: PhantomData,
        }
    }
}
