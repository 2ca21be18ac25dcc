//! Fork-join operations offered on a [`Runtime`]: `rt.join`, `rt.scope` and `rt.scope_fifo`
//! run the front end's [`join`](super::join), [`scope`](fn@super::scope) and
//! [`scope_fifo`](super::scope_fifo) on that runtime's workers. They live here, with the front
//! end, so that the runtime knows no front end.

use crate::runtime::Runtime;

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
}
