//! [`ThreadPool`]: a `taskpools::Runtime` under rayon's name, its methods rayon's.

use std::fmt;

use crate::{BroadcastContext, Scope, ScopeFifo, Yield};

/// A pool of worker threads (a `taskpools::Runtime`), made by
/// [`ThreadPoolBuilder::build`](crate::ThreadPoolBuilder::build). Work started inside
/// [`install`](Self::install) (joins, scopes, parallel iterators) runs on its workers.
///
/// Dropping the pool returns at once; its workers leave once every job spawned into it has
/// finished.
///
/// ```
/// # use rayon_core as rayon;
/// let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build()?;
/// let (a, b) = pool.install(|| rayon::join(|| 1 + 1, || rayon::current_num_threads()));
/// assert_eq!((a, b), (2, 2));
/// # Ok::<(), rayon::ThreadPoolBuildError>(())
/// ```
pub struct ThreadPool {
    rt: taskpools::Runtime,
}

impl ThreadPool {
    pub(crate) fn from_runtime(rt: taskpools::Runtime) -> Self {
        ThreadPool { rt }
    }

    /// Builds a pool from a [`Configuration`](crate::Configuration).
    #[deprecated(note = "Use `ThreadPoolBuilder::build`")]
    #[allow(deprecated)]
    pub fn new(
        configuration: crate::Configuration,
    ) -> Result<ThreadPool, Box<dyn std::error::Error>> {
        Ok(configuration.into_builder().build()?)
    }

    /// Runs `op` on one of this pool's workers and returns its result; joins, scopes and
    /// parallel iterators inside `op` run on this pool. On a thread outside the pool the caller
    /// blocks until `op` is done (a worker of another pool keeps running that pool's work
    /// meanwhile); on one of its workers `op` runs right there. A panic in `op` is resumed here.
    pub fn install<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        self.rt.install(op)
    }

    /// Runs `op` once on every worker of this pool, all at the same time, and returns the
    /// results in worker order. A panic in any call is resumed here once all have ended.
    ///
    /// ```
    /// # use rayon_core as rayon;
    /// let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build()?;
    /// assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1, 2]);
    /// # Ok::<(), rayon::ThreadPoolBuildError>(())
    /// ```
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        self.rt.broadcast(op)
    }

    /// The number of worker threads of this pool.
    #[inline]
    pub fn current_num_threads(&self) -> usize {
        self.rt.threads()
    }

    /// The index of the calling thread among this pool's workers, or `None` if it is not one
    /// of them (a worker of another pool included).
    #[inline]
    pub fn current_thread_index(&self) -> Option<usize> {
        self.rt.current_thread_index()
    }

    /// Whether the calling thread, a worker of this pool, has jobs queued on its own deque;
    /// `None` on any other thread.
    #[inline]
    pub fn current_thread_has_pending_tasks(&self) -> Option<bool> {
        self.rt.current_thread_has_pending_tasks()
    }

    /// [`join`](crate::join()) on this pool.
    pub fn join<A, B, RA, RB>(&self, oper_a: A, oper_b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.install(|| crate::join(oper_a, oper_b))
    }

    /// [`scope`](crate::scope()) on this pool.
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| crate::scope(op))
    }

    /// [`scope_fifo`](crate::scope_fifo()) on this pool.
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| crate::scope_fifo(op))
    }

    /// [`in_place_scope`](crate::in_place_scope()) whose spawns go to this pool: `op` runs on
    /// the calling thread, whatever it is.
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        self.rt.in_place_scope(|s| op(Scope::from_runtime(s)))
    }

    /// [`in_place_scope_fifo`](crate::in_place_scope_fifo()) whose spawns go to this pool.
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R,
    {
        self.rt
            .in_place_scope_fifo(|s| op(ScopeFifo::from_runtime(s)))
    }

    /// Runs `op` on this pool without waiting for it (see [`spawn`](crate::spawn())).
    pub fn spawn<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        self.rt.spawn(op)
    }

    /// Runs `op` on this pool without waiting for it, in spawn order among the jobs the
    /// calling worker spawns this way (see [`spawn_fifo`](crate::spawn_fifo())).
    pub fn spawn_fifo<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        self.rt.spawn_fifo(op)
    }

    /// Runs `op` once on every worker of this pool without waiting for it.
    pub fn spawn_broadcast<OP>(&self, op: OP)
    where
        OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
    {
        self.rt.spawn_broadcast(op)
    }

    /// [`yield_now`](crate::yield_now) if the calling thread is one of this pool's workers,
    /// else `None`.
    pub fn yield_now(&self) -> Option<Yield> {
        self.rt.yield_now()
    }

    /// [`yield_local`](crate::yield_local) if the calling thread is one of this pool's
    /// workers, else `None`.
    pub fn yield_local(&self) -> Option<Yield> {
        self.rt.yield_local()
    }
}

impl fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPool")
            .field("num_threads", &self.current_num_threads())
            .finish_non_exhaustive()
    }
}
