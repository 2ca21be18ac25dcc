//! Fork-join operations offered on a [`Runtime`]: `rt.join`, `rt.scope` and `rt.scope_fifo`
//! run the front end's [`join`](super::join), [`scope`](fn@super::scope) and
//! [`scope_fifo`](super::scope_fifo) on that runtime's workers. They live here, with the front
//! end, so that the runtime knows no front end.

use crate::runtime::{Runtime, Yield};

impl Runtime {
    /// `join` on this runtime.
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.install(|| crate::forkjoin::join(a, b))
    }

    /// `scope` on this runtime.
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&crate::forkjoin::Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| crate::forkjoin::scope(op))
    }

    /// [`scope_fifo`](crate::forkjoin::scope_fifo) on this runtime.
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&crate::forkjoin::Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| crate::forkjoin::scope_fifo(op))
    }

    /// [`in_place_scope`](super::in_place_scope) whose spawns go to this runtime: `op` runs on
    /// the calling thread (rayon's `ThreadPool::in_place_scope`).
    ///
    /// ```
    /// let rt = taskpools::Runtime::new(2)?;
    /// let mut v = [0u8; 3];
    /// rt.in_place_scope(|s| {
    ///     for x in v.iter_mut() {
    ///         s.spawn(move |_| *x = 1);
    ///     }
    /// });
    /// assert_eq!(v, [1, 1, 1]);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&super::Scope<'scope>) -> R,
    {
        super::scope::in_place(Some(&self.registry), op, false)
    }

    /// [`in_place_scope_fifo`](super::in_place_scope_fifo) whose spawns go to this runtime.
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&super::Scope<'scope>) -> R,
    {
        super::scope::in_place(Some(&self.registry), op, true)
    }

    /// [`yield_now`](super::yield_now) if the calling thread is one of this runtime's
    /// workers, else `None` (rayon's `ThreadPool::yield_now`).
    pub fn yield_now(&self) -> Option<Yield> {
        self.current_thread_index()?;
        super::yield_now()
    }

    /// [`yield_local`](super::yield_local) if the calling thread is one of this runtime's
    /// workers, else `None` (rayon's `ThreadPool::yield_local`).
    pub fn yield_local(&self) -> Option<Yield> {
        self.current_thread_index()?;
        super::yield_local()
    }
}
