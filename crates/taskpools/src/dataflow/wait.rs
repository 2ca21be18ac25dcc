//! Waiting on data: OpenMP's `taskwait depend` ([`Scope::wait_for`]). The spawner waits only
//! for the earlier tasks that touch the data it names, then uses that data itself, while
//! every other task goes on. It also lifts the limit the PARTEE thesis states in §2.2: a task
//! that needs one child's result no longer has to `sync` all of them.
//!
//! How: the wait is a task of the scope like any other, looked up in the table with the
//! declared accesses (so it waits for exactly what a spawned task would, and a later sibling
//! that conflicts waits for it), but placed nowhere when it becomes ready: the spawner, which
//! helps with other work meanwhile, sees its counter reach zero, runs the closure on the data,
//! and then completes the task, releasing the later siblings that wait for it.

use std::panic::resume_unwind;

use super::footprint::Mode;
use super::task::{run_task, TaskDesc, WAIT_PLACE};
use super::{Accesses, Footprint, Scope};
use crate::runtime::worker::WorkerThread;
use crate::sync::Ordering;

/// Completes a wait whose closure unwinds, as a failed task (its successors are cancelled),
/// so that the scope's final sync does not wait for it forever.
struct InWait<'a, 's, 'e> {
    scope: &'a Scope<'s, 'e>,
    desc: *const TaskDesc,
}

impl Drop for InWait<'_, '_, '_> {
    fn drop(&mut self) {
        // SAFETY: the frame's thread; the reference ends here.
        unsafe { self.scope.frame().local() }.in_wait = false;
        // SAFETY: the wait's descriptor lives until the frame's next sync or end (neither can
        // have come: the closure ran inside `wait_for`); it is ready and queued nowhere, so
        // this is its one execution, and only this thread reads its cancel flag now (its
        // predecessors have completed).
        unsafe {
            (*self.desc).cancelled.store(true, Ordering::Relaxed);
            run_task(self.desc.cast());
        }
    }
}

/// The footprints of a wait's accesses, as the declarations of its task (which gets no
/// data: the spawner takes it from the accesses themselves).
pub(super) struct Declared(pub(super) Vec<Footprint>);

impl super::access::sealed::Sealed for Declared {}
impl Accesses for Declared {
    type Data<'t> = ();
    fn footprints(&self, out: &mut Vec<Footprint>) {
        out.extend_from_slice(&self.0);
    }
    unsafe fn into_data<'t>(self) -> Self::Data<'t> {}
}

impl<'s, 'e> Scope<'s, 'e> {
    /// Waits until every earlier task of this scope whose declarations conflict with
    /// `accesses` has completed (running other work meanwhile), then calls `f` with the data,
    /// here, on this thread: OpenMP's `taskwait depend`. Tasks spawned later that conflict
    /// with `accesses` run after `f` returns; the rest is not waited for.
    ///
    /// `accesses` are reads, writes or `concurrent` accesses (a `commutative` one or a
    /// reduction panics: its lock or copy is taken by tasks, not by a wait). Open reductions
    /// on the data are folded in before `f` runs. If a task it waits for panicked, the panic is
    /// resumed here, as [`sync`](Self::sync) does, and `f` does not run. If `f` panics, the
    /// panic goes on from here and the later tasks that wait for this one are cancelled, as
    /// a panicking task's successors are.
    ///
    /// Inside `f`, [`spawn`](Self::spawn) works as anywhere (a conflicting task runs after
    /// `f` returns), but `sync` and another `wait_for` on this scope panic: they could wait
    /// for this wait, which ends only when `f` returns. Name all the data in one `wait_for`
    /// instead.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = vec![1u64; 8];
    /// let mut other = vec![0u64; 8];
    /// taskpools::dataflow::scope(|df| {
    ///     let (r, o) = (df.region(&mut v), df.region(&mut other));
    ///     df.spawn(r.part(0..4).inout(), |_, a| a.iter_mut().for_each(|x| *x *= 10));
    ///     df.spawn(o.out(), |_, o| o.fill(7)); // not waited for below
    ///     // Only the first task touches elements 0..4.
    ///     let sum = df.wait_for(r.part(0..4).read(), |a| a.iter().sum::<u64>());
    ///     assert_eq!(sum, 40);
    ///     // The spawner replaces data between spawns: later tasks see it.
    ///     df.wait_for(r.at(7).out(), |x| *x = sum);
    ///     df.spawn(r.read(), |_, v| assert_eq!(v[7], 40));
    /// });
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn wait_for<A, F, R>(&self, accesses: A, f: F) -> R
    where
        A: Accesses,
        F: for<'t> FnOnce(A::Data<'t>) -> R,
    {
        // SAFETY: the frame's thread; the reference ends here.
        assert!(
            !self.frame().weak,
            "taskpools::dataflow: wait_for in a task with weak accesses, which may start \
             before its weak parts' predecessors end and so never waits on them; spawn a child \
             that reads what it needs instead"
        );
        assert!(
            !unsafe { self.frame().local() }.in_wait,
            "taskpools::dataflow: wait_for inside the closure of another wait_for could wait for \
             that wait, which ends only when its closure returns; name all the data in one \
             wait_for"
        );
        let mut fps = Vec::new();
        accesses.footprints(&mut fps);
        assert!(
            fps.iter()
                .all(|fp| fp.mode != Mode::Commutative && fp.reduce.is_none() && !fp.weak),
            "taskpools::dataflow: wait_for takes read, out, inout and concurrent accesses, not \
             commutative, reduction or weak ones"
        );
        let desc = self.spawn_to(WAIT_PLACE, 0, &[], Declared(fps), |_, ()| {});
        let w = WorkerThread::current().expect("a data-flow scope runs on a worker");
        // SAFETY: the wait's descriptor lives in this frame's region until the next sync or
        // the frame's end, neither of which can come before this function returns.
        let d = unsafe { &*desc };
        w.wait_until(|| d.deps.is_ready());
        let out = if d.cancelled.load(Ordering::Relaxed) {
            None
        } else {
            let guard = InWait { scope: self, desc };
            // SAFETY: the frame's thread; the reference ends here.
            unsafe { self.frame().local() }.in_wait = true;
            // SAFETY: the task is ready: every earlier sibling that conflicts with these
            // accesses has completed, and every later one waits for the task, which completes
            // only after `f` returns (below, or in the guard if it unwinds); the accesses
            // were checked against each other at the spawn.
            let r = f(unsafe { accesses.into_data() });
            std::mem::forget(guard);
            // SAFETY: as above.
            unsafe { self.frame().local() }.in_wait = false;
            Some(r)
        };
        // SAFETY: ready and queued nowhere (its place queues nothing), so this is its one
        // execution; its parent (this frame) outlives it. It completes the task (or, if a
        // predecessor failed, cancels it and its successors).
        unsafe { run_task(desc.cast()) };
        match out {
            Some(r) => r,
            None => match self.frame().take_panic() {
                Some(p) => resume_unwind(p),
                None => panic!("taskpools::dataflow: a task this wait_for waits for failed"),
            },
        }
    }
}
