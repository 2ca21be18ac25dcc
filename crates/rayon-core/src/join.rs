//! [`join`](join()) and [`join_context`]: the runtime's strict join.
//!
//! rayon runs both closures whatever happens, and resumes the first closure's panic if both
//! panic. The runtime's plain `join` may skip `b` when `a` panics on its serial path (it runs
//! the two halves as plain calls when enough work is queued); its `join_strict` and
//! `join_context_strict` keep rayon's rule, with one `catch_unwind` per join, as rayon's own.

use taskpools::forkjoin as tp;

use crate::global::ensure_global;
use crate::FnContext;

/// Runs `oper_a` and `oper_b`, potentially in parallel, and returns both results. On a worker
/// it forks onto that worker's pool: `oper_b` is offered to other workers while this one runs
/// `oper_a`. From a thread that is not a worker, both run on the global pool and the caller
/// blocks until they are done.
///
/// Both closures always run. If one panics, the panic is resumed here after both have
/// finished; if both do, the panic of `oper_a`.
///
/// The program must be correct if the two closures run one after the other on this thread:
/// the runtime does so when its worker already has a few jobs queued and no other worker asks
/// for one. `oper_a` must not wait for `oper_b` by other means than joins and scopes (a
/// spin on a flag, a channel); work that something waits for belongs in a
/// [`scope`](crate::scope()) spawn.
///
/// ```
/// # use rayon_core as rayon;
/// fn sum(v: &[u64]) -> u64 {
///     if v.len() <= 1000 {
///         return v.iter().sum();
///     }
///     let (l, r) = v.split_at(v.len() / 2);
///     let (a, b) = rayon::join(|| sum(l), || sum(r));
///     a + b
/// }
/// let v: Vec<u64> = (1..=100_000).collect();
/// assert_eq!(sum(&v), 5_000_050_000);
/// ```
#[inline]
pub fn join<A, B, RA, RB>(oper_a: A, oper_b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    ensure_global();
    tp::join_strict(oper_a, oper_b)
}

/// As [`join`](join()), with a [`FnContext`] for each closure that says whether it runs on another
/// thread than the one that called `join_context`: for `oper_b`, that another worker took it;
/// for both, that the call came from outside the pool. rayon's parallel iterators split their
/// work again when `oper_b` migrated, to give the thief its share.
///
/// ```
/// # use rayon_core as rayon;
/// let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
/// let (a, b) = pool.install(|| rayon::join_context(|c| c.migrated(), |c| c.migrated()));
/// assert_eq!((a, b), (false, false)); // one worker: nothing moves
/// let (a, _) = rayon::join_context(|c| c.migrated(), |_| ());
/// assert!(a); // from outside any pool: both run on the global pool
/// # Ok::<(), rayon::ThreadPoolBuildError>(())
/// ```
#[inline]
pub fn join_context<A, B, RA, RB>(oper_a: A, oper_b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    ensure_global();
    tp::join_context_strict(oper_a, oper_b)
}
