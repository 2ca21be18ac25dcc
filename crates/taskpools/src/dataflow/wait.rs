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
use super::task::{run_task, WAIT_PLACE};
use super::{Accesses, Footprint, Scope};
use crate::runtime::worker::WorkerThread;
use crate::sync::Ordering;

/// The footprints of a wait's accesses, as the declarations of its task (which gets no
/// data: the spawner takes it from the accesses themselves).
struct Declared(Vec<Footprint>);

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
    /// `accesses` are reads, writes or `concurrent` accesses (a `commutative` one panics: its
    /// lock is taken by tasks, not by a wait). If a task it waits for panicked, the panic is
    /// resumed here, as [`sync`](Self::sync) does, and `f` does not run.
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
        let mut fps = Vec::new();
        accesses.footprints(&mut fps);
        assert!(
            fps.iter().all(|fp| fp.mode != Mode::Commutative),
            "taskpools::dataflow: wait_for takes read, out, inout and concurrent accesses, not \
             commutative ones"
        );
        let desc = self.spawn_to(WAIT_PLACE, &[], Declared(fps), |_, ()| {});
        let w = WorkerThread::current().expect("a data-flow scope runs on a worker");
        // SAFETY: the wait's descriptor lives in this frame's region until the next sync or
        // the frame's end, neither of which can come before this function returns.
        let d = unsafe { &*desc };
        w.wait_until(|| d.deps.is_ready());
        let out = if d.cancelled.load(Ordering::Relaxed) {
            None
        } else {
            // SAFETY: the task is ready: every earlier sibling that conflicts with these
            // accesses has completed, and every later one waits for the task, which completes
            // only after `f` returns (below); the accesses were checked against each other
            // at the spawn.
            Some(f(unsafe { accesses.into_data() }))
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
