//! Fork-join operations offered on a [`Runtime`]: `rt.join`, `rt.scope` and `rt.scope_fifo`
//! run the front end's [`join`](super::join), [`scope`](fn@super::scope) and
//! [`scope_fifo`](super::scope_fifo) on that runtime's workers. They live here, with the front
//! end, so that the runtime knows no front end.

use crate::runtime::{Runtime, Yield};

impl Runtime {
    /// `join` on this runtime.
    ///
    /// ```
    /// let rt = taskpools::Runtime::new(2)?;
    /// let v: Vec<u64> = (1..=100).collect();
    /// let (l, r) = v.split_at(50);
    /// let (a, b) = rt.join(|| l.iter().sum::<u64>(), || r.iter().sum::<u64>());
    /// assert_eq!(a + b, 5050);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
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
    ///
    /// ```
    /// let rt = taskpools::Runtime::new(2)?;
    /// let mut squares = vec![0u64; 8];
    /// rt.scope(|s| {
    ///     for (i, q) in squares.iter_mut().enumerate() {
    ///         s.spawn(move |_| *q = (i * i) as u64);
    ///     }
    /// });
    /// assert_eq!(squares.iter().sum::<u64>(), 140); // 0² + 1² + … + 7²
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&crate::forkjoin::Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| crate::forkjoin::scope(op))
    }

    /// [`try_scope`](crate::forkjoin::try_scope) on this runtime.
    ///
    /// ```
    /// let rt = taskpools::Runtime::new(2)?;
    /// let r = rt.try_scope(|s| {
    ///     s.spawn(|s| s.cancel());
    /// });
    /// assert!(r.unwrap_err().is_cancelled());
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn try_scope<'scope, OP, R>(&self, op: OP) -> Result<R, crate::ScopeError>
    where
        OP: FnOnce(&crate::forkjoin::Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| crate::forkjoin::try_scope(op))
    }

    /// [`scope_fifo`](crate::forkjoin::scope_fifo) on this runtime.
    ///
    /// ```
    /// use std::sync::Mutex;
    ///
    /// let rt = taskpools::Runtime::new(1)?;
    /// let order = Mutex::new(Vec::new());
    /// rt.scope_fifo(|s| {
    ///     for i in 0..5 {
    ///         let order = &order;
    ///         s.spawn(move |_| order.lock().unwrap().push(i));
    ///     }
    /// });
    /// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3, 4]); // spawn order
    /// # Ok::<(), taskpools::Error>(())
    /// ```
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
    ///
    /// ```
    /// let rt = taskpools::Runtime::new(2)?;
    /// let not_sync = std::cell::Cell::new(0); // `op` runs here, so it may use it
    /// let mut out = [0u32; 4];
    /// rt.in_place_scope_fifo(|s| {
    ///     for (i, o) in out.iter_mut().enumerate() {
    ///         not_sync.set(not_sync.get() + 1);
    ///         s.spawn(move |_| *o = i as u32 + 1);
    ///     }
    /// });
    /// assert_eq!((not_sync.get(), out), (4, [1, 2, 3, 4]));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&super::Scope<'scope>) -> R,
    {
        super::scope::in_place(Some(&self.registry), op, true)
    }

    /// [`yield_now`](super::yield_now) if the calling thread is one of this runtime's
    /// workers, else `None` (rayon's `ThreadPool::yield_now`).
    ///
    /// ```
    /// use taskpools::forkjoin::Yield;
    ///
    /// let rt = taskpools::Runtime::new(1)?;
    /// assert_eq!(rt.yield_now(), None); // not one of `rt`'s workers
    /// // On its worker with nothing to do, it answers requests and finds no job.
    /// assert_eq!(rt.install(|| rt.yield_now()), Some(Yield::Idle));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn yield_now(&self) -> Option<Yield> {
        self.current_thread_index()?;
        super::yield_now()
    }

    /// [`yield_local`](super::yield_local) if the calling thread is one of this runtime's
    /// workers, else `None` (rayon's `ThreadPool::yield_local`).
    ///
    /// ```
    /// use taskpools::forkjoin::Yield;
    ///
    /// let rt = taskpools::Runtime::new(1)?;
    /// let other = taskpools::Runtime::new(1)?;
    /// assert_eq!(other.install(|| rt.yield_local()), None); // a worker, but of another runtime
    /// assert_eq!(rt.install(|| rt.yield_local()), Some(Yield::Idle)); // its deque is empty
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn yield_local(&self) -> Option<Yield> {
        self.current_thread_index()?;
        super::yield_local()
    }
}
