//! [`Scope`] and [`ScopeFifo`]: rayon's two scope types, over the runtime's one.
//!
//! The runtime has a single `taskpools::forkjoin::Scope`; one made by `scope_fifo` starts its
//! spawns in spawn order. rayon names the two kinds differently, and hands each spawned
//! closure a reference to the kind of scope it was spawned into. So both types here are
//! `repr(transparent)` wrappers of the runtime's scope: a `&taskpools::forkjoin::Scope` that
//! the runtime hands to a spawned job is turned into a `&Scope` or `&ScopeFifo` in place,
//! without copying or allocating.

use std::fmt;

use taskpools::forkjoin as tp;

use crate::global::ensure_global;
use crate::BroadcastContext;

/// A scope to spawn jobs into that may borrow anything outliving it; [`scope()`] and
/// [`in_place_scope()`] wait for every job spawned into it before they return.
#[repr(transparent)]
pub struct Scope<'scope> {
    inner: tp::Scope<'scope>,
}

/// A scope whose jobs start in the order they were spawned in; made by [`scope_fifo()`] and
/// [`in_place_scope_fifo()`], which wait for every job spawned into it.
#[repr(transparent)]
pub struct ScopeFifo<'scope> {
    inner: tp::Scope<'scope>,
}

impl<'scope> Scope<'scope> {
    pub(crate) fn from_runtime<'a>(inner: &'a tp::Scope<'scope>) -> &'a Self {
        // SAFETY: `Scope` is `repr(transparent)` over `tp::Scope<'scope>`, its only field, so
        // both have the same layout and the reference stays valid for the same lifetime `'a`.
        unsafe { &*(inner as *const tp::Scope<'scope>).cast::<Self>() }
    }

    /// Spawns `body` into the scope: it runs on the scope's pool, maybe in parallel with the
    /// caller, and the scope waits for it before it ends. A panic in `body` is resumed by the
    /// scope's caller once every job has finished.
    pub fn spawn<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.inner.spawn(move |s| body(Scope::from_runtime(s)))
    }

    /// Spawns `body` once on every worker of the scope's pool; the scope waits for all of them.
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&Scope<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        self.inner
            .spawn_broadcast(move |s, ctx| body(Scope::from_runtime(s), ctx))
    }
}

impl<'scope> ScopeFifo<'scope> {
    pub(crate) fn from_runtime<'a>(inner: &'a tp::Scope<'scope>) -> &'a Self {
        // SAFETY: `ScopeFifo` is `repr(transparent)` over `tp::Scope<'scope>`, its only field,
        // so both have the same layout and the reference stays valid for the same lifetime.
        unsafe { &*(inner as *const tp::Scope<'scope>).cast::<Self>() }
    }

    /// Spawns `body` into the scope, as [`Scope::spawn`]; the scope's jobs start in the order
    /// they were spawned in, whichever thread spawned them and whichever worker runs them.
    pub fn spawn_fifo<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&ScopeFifo<'scope>) + Send + 'scope,
    {
        self.inner.spawn(move |s| body(ScopeFifo::from_runtime(s)))
    }

    /// Spawns `body` once on every worker of the scope's pool; the scope waits for all of them.
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&ScopeFifo<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        self.inner
            .spawn_broadcast(move |s, ctx| body(ScopeFifo::from_runtime(s), ctx))
    }
}

impl fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope").finish_non_exhaustive()
    }
}

impl fmt::Debug for ScopeFifo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopeFifo").finish_non_exhaustive()
    }
}

/// Runs `op` with a new [`Scope`] on a worker of the current pool (the global one, from a
/// thread that is not a worker), and waits for every job spawned into it before returning
/// `op`'s result. Jobs may borrow anything that outlives the scope and may spawn more. If
/// `op` or a job panics, the panic is resumed here once every job has finished (`op`'s
/// first, else one of the jobs').
///
/// ```
/// # use rayon_core as rayon;
/// let mut parts = [0u64; 4];
/// rayon::scope(|s| {
///     for (i, p) in parts.iter_mut().enumerate() {
///         s.spawn(move |_| *p = i as u64 * 10);
///     }
/// });
/// assert_eq!(parts, [0, 10, 20, 30]);
/// ```
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    ensure_global();
    tp::scope(|s| op(Scope::from_runtime(s)))
}

/// As [`scope()`], with a [`ScopeFifo`]: the scope's jobs start in the order they were
/// spawned in.
///
/// ```
/// # use rayon_core as rayon;
/// let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
/// let order = std::sync::Mutex::new(Vec::new());
/// pool.scope_fifo(|s| {
///     for i in 0..4 {
///         let order = &order;
///         s.spawn_fifo(move |_| order.lock().unwrap().push(i));
///     }
/// });
/// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3]);
/// # Ok::<(), rayon::ThreadPoolBuildError>(())
/// ```
pub fn scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
    R: Send,
{
    ensure_global();
    tp::scope_fifo(|s| op(ScopeFifo::from_runtime(s)))
}

/// As [`scope()`], but `op` runs on the calling thread, whatever it is (so it need not be
/// `Send`); the jobs go to the current pool (the global one, from a thread that is not a
/// worker). A thread that is not a worker waits for them without running any.
///
/// ```
/// # use rayon_core as rayon;
/// let not_sync = std::cell::Cell::new(0);
/// let mut v = [1, 2, 3];
/// rayon::in_place_scope(|s| {
///     not_sync.set(1); // `op` may use it; the jobs may not
///     for x in v.iter_mut() {
///         s.spawn(move |_| *x *= 2);
///     }
/// });
/// assert_eq!((not_sync.get(), v), (1, [2, 4, 6]));
/// ```
pub fn in_place_scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    ensure_global();
    tp::in_place_scope(|s| op(Scope::from_runtime(s)))
}

/// As [`in_place_scope()`], with a [`ScopeFifo`].
pub fn in_place_scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    ensure_global();
    tp::in_place_scope_fifo(|s| op(ScopeFifo::from_runtime(s)))
}
