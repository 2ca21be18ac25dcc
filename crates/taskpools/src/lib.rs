//! # taskpools
//!
//! Interchangeable task pools for dynamic load balancing of irregular parallel programs, after
//! Korch and Rauber, "A Comparison of Task Pools for Dynamic Load Balancing of Irregular
//! Algorithms" (2002). Write a task type once; run it on any pool of the family — central,
//! randomized, distributed, stealing, private/public, combined — with any memory manager and
//! wake-up policy, and compare.
//!
//! ```
//! use taskpools::{Builder, Ctx, Task};
//!
//! /// Counts the nodes of a complete binary tree of the given depth, one task per node.
//! struct Node(u32);
//!
//! impl Task for Node {
//!     fn run(self, ctx: &mut Ctx<'_, Self>) {
//!         if self.0 > 0 {
//!             ctx.put(Node(self.0 - 1));
//!             ctx.put(Node(self.0 - 1));
//!         }
//!     }
//! }
//!
//! let report = Builder::new()
//!     .threads(2)
//!     .pool_name("dq8")?     // or "private-public"
//!     .mem_name("dgbko")?    // memory manager for list-based pools
//!     .run([Node(10)])?;
//! assert_eq!(report.tasks_run(), (1 << 11) - 1);
//! # Ok::<(), taskpools::Error>(())
//! ```
//!
//! Each worker can also keep a state of your type, reached by its tasks with
//! [`Ctx::local`] and returned by [`Builder::run_with`] (or folded by [`Builder::run_reduce`]),
//! so counting and reducing need no atomics.
//!
//! Every front end runs on one [`Runtime`]: persistent workers, started once. `Builder::run`
//! uses the calling worker's runtime, the global one, or (for a wider or pinned phase) one it
//! starts; [`Builder::runtime`] names one, so repeated phases reuse the same threads. Nested
//! fork-join (`join`, `scope`, `spawn`) is in [`forkjoin`], and a `join` inside a task runs on
//! that task's worker:
//!
//! ```
//! let (a, b) = taskpools::forkjoin::join(|| 1 + 1, || 2 * 2);
//! assert_eq!((a, b), (2, 4));
//! ```
//!
//! # Coming from rayon
//!
//! rayon-core's API is here under its names: `join`, `join_context`, `scope`, `scope_fifo`,
//! `in_place_scope`, `spawn`, `spawn_fifo`, `broadcast`, `spawn_broadcast`, `yield_now`,
//! `yield_local`, `current_num_threads`, `current_thread_index` in [`forkjoin`]; `ThreadPool`
//! is [`Runtime`] and `ThreadPoolBuilder` is [`RuntimeBuilder`] (`threads` for `num_threads`;
//! the handlers, `spawn_handler`, `build_scoped` and `use_current_thread` as in rayon). A rayon
//! program that uses them ports by changing its imports:
//!
//! ```
//! use taskpools::forkjoin::{join, scope, Runtime};
//!
//! let pool = Runtime::builder().threads(2).thread_name(|i| format!("w{i}")).build()?;
//! let total = pool.install(|| {
//!     let (a, b) = join(|| (1..=50u64).sum::<u64>(), || (51..=100u64).sum::<u64>());
//!     let mut parts = [0u64; 4];
//!     scope(|s| for (i, p) in parts.iter_mut().enumerate() { s.spawn(move |_| *p = i as u64) });
//!     a + b + parts.iter().sum::<u64>()
//! });
//! assert_eq!(total, 5050 + 6);
//! # Ok::<(), taskpools::Error>(())
//! ```
//!
//! The differences (a join may run its halves as plain calls once a few jobs are queued; a
//! spawned job's panic without a handler is reported instead of aborting; a broadcast inside a
//! share of the same runtime is refused) and their reasons are listed in the repository's
//! `docs/forkjoin.md`, "Coming from rayon: what differs, and why". [`spawn_async`] is ours: a
//! spawned job that async code awaits. To run rayon's parallel iterators (and crates built on
//! rayon) unchanged on this runtime, patch in the drop-in `rayon-core` of this repository
//! (`crates/rayon-core`; the README, and `docs/iter.md`, "Use rayon's iterators on
//! taskpools").
//!
//! Nested tasks that declare what they read and write, ordered by a dependence analysis
//! (PARTEE's data-flow model), are in [`dataflow`].
//!
//! Layers, bottom to top: the foundations, among them [`places`] (place descriptions and
//! machine topology); [`queue`] and [`mem`] (queues, deques, node memory managers); [`pool`]
//! (the family behind [`TaskPool`], which a pool of your own can implement too); [`runtime`]
//! (the persistent workers, grouped into places when built with
//! [`RuntimeBuilder::places`]); and the front ends on it: [`phase`] (the working phase,
//! driven by [`Builder`]), [`forkjoin`], [`dataflow`], and `distributed` (the working phase
//! over MPI ranks, with the feature `mpi`). On a runtime with places, the working phase, the
//! fork-join scopes and the data-flow scopes take locality hints ([`Ctx::put_at`],
//! [`forkjoin::Scope::spawn_at`], [`dataflow::Scope::spawn_at`]). The synthetic algorithm of
//! Korch and Rauber is in [`synthetic`].

#![deny(missing_docs)]

mod builder;
mod cancel;
pub mod dataflow;
#[cfg(feature = "mpi")]
pub mod distributed;
mod error;
pub mod forkjoin;
pub mod mem;
mod panics;
pub mod phase;
pub mod places;
pub mod pool;
pub mod queue;
pub mod runtime;
mod stats;
pub(crate) mod sync;
pub mod synthetic;
mod task;
mod typed_builder;

pub use builder::Builder;
pub use cancel::{BoxError, Cause, ScopeError, TaskPanic};
pub use error::Error;
pub use typed_builder::TypedBuilder;

pub use mem::MemKind;
pub use phase::{
    run_pool, run_pool_on, run_pool_with, RunOptions, RunReport, WakePolicy, WorkerStats,
};
pub use pool::{PoolConfig, PoolKind, PutOutcome, Search, TaskPool};
pub use runtime::{
    broadcast, current_num_threads, current_thread_has_pending_tasks, current_thread_index,
    max_num_threads, spawn, spawn_async, spawn_broadcast, spawn_fifo, yield_local, yield_now,
    BroadcastContext, Runtime, RuntimeBuilder, SpawnFuture, ThreadBuilder, Yield, NUM_THREADS_ENV,
};
pub use task::{BoxedTask, Ctx, PutAtError, Task};

/// The most worker threads a pool ([`Builder`]) or a fork-join runtime
/// ([`forkjoin::Runtime`]) may have: more is refused with [`Error::TooManyThreads`] before
/// anything is allocated or started.
pub const MAX_THREADS: usize = 4096;

#[cfg(test)]
mod vocabulary_tests {
    use std::collections::HashMap;
    use std::str::FromStr;

    use crate::{forkjoin, MemKind, PoolKind, Search, WakePolicy};

    /// `(what, name, alias)` for every variant of every enum selectable by name.
    fn all_names() -> Vec<(String, &'static str, &'static str)> {
        let mut v = Vec::new();
        for p in PoolKind::ALL {
            v.push((format!("PoolKind::{p:?}"), p.name(), p.alias()));
        }
        for m in MemKind::ALL {
            v.push((format!("MemKind::{m:?}"), m.name(), m.alias()));
        }
        for w in WakePolicy::ALL {
            v.push((format!("WakePolicy::{w:?}"), w.name(), w.alias()));
        }
        for s in Search::ALL {
            v.push((format!("Search::{s:?}"), s.name(), s.alias()));
        }
        for p in forkjoin::Pool::ALL {
            v.push((format!("forkjoin::Pool::{p:?}"), p.name(), p.alias()));
        }
        v
    }

    /// Variants of different enums that are the same data structure, and so share their names.
    const SAME_STRUCTURE: [(&str, &str); 2] = [
        ("PoolKind::ChaseLev", "forkjoin::Pool::ChaseLev"),
        ("PoolKind::PrivateDeque", "forkjoin::Pool::PrivateDeque"),
    ];

    #[test]
    fn every_name_and_alias_means_one_thing() {
        let mut seen: HashMap<&str, String> = HashMap::new();
        for (what, name, alias) in all_names() {
            assert_ne!(name, alias, "{what}: name and alias are the same");
            for s in [name, alias] {
                assert!(!s.is_empty(), "{what}");
                if let Some(prev) = seen.insert(s, what.clone()) {
                    assert!(
                        SAME_STRUCTURE.contains(&(prev.as_str(), what.as_str())),
                        "`{s}` names both {prev} and {what}"
                    );
                }
            }
        }
        // The fork-join front end's old names now belong to the pool family only.
        for (old, _) in forkjoin::Pool::RENAMED {
            assert_eq!(seen[old], "PoolKind::PrivatePublic");
        }
    }

    fn parses<T: FromStr<Err = crate::Error> + PartialEq + std::fmt::Debug + Copy>(
        all: &[T],
        name: impl Fn(T) -> &'static str,
        alias: impl Fn(T) -> &'static str,
    ) {
        for &x in all {
            assert_eq!(name(x).parse::<T>().unwrap(), x);
            assert_eq!(alias(x).parse::<T>().unwrap(), x);
        }
        let e: crate::Error = "no-such-thing".parse::<T>().unwrap_err();
        assert!(e.to_string().contains("no-such-thing"), "{e}");
    }

    #[test]
    fn from_str_takes_names_and_aliases() {
        parses(&PoolKind::ALL, PoolKind::name, PoolKind::alias);
        parses(&MemKind::ALL, MemKind::name, MemKind::alias);
        parses(&WakePolicy::ALL, WakePolicy::name, WakePolicy::alias);
        parses(&Search::ALL, Search::name, Search::alias);
        parses(
            &forkjoin::Pool::ALL,
            forkjoin::Pool::name,
            forkjoin::Pool::alias,
        );
        for d in PoolKind::ALL.map(PoolKind::description).into_iter().chain(
            WakePolicy::ALL
                .map(WakePolicy::description)
                .into_iter()
                .chain(Search::ALL.map(Search::description))
                .chain(forkjoin::Pool::ALL.map(forkjoin::Pool::description))
                .chain(MemKind::ALL.map(MemKind::description)),
        ) {
            assert!(!d.is_empty());
        }
    }
}
