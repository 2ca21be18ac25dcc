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
//! Layers, bottom to top: [`queue`] and [`mem`] (queues, deques, node memory managers),
//! [`pool`] (the family behind [`TaskPool`]), [`runtime`] (the persistent workers), and the
//! front ends on it: [`phase`] (the working phase, driven by [`Builder`]) and [`forkjoin`];
//! the synthetic algorithm of the seed is in [`synthetic`].

#![warn(missing_docs)]

mod builder;
pub mod forkjoin;
pub mod mem;
pub mod phase;
pub mod pool;
pub mod queue;
pub mod runtime;
mod stats;
pub(crate) mod sync;
pub mod synthetic;
mod task;

pub use builder::Builder;

/// The README's examples are compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
pub use mem::MemKind;
pub use phase::{
    run_pool, run_pool_on, run_pool_with, RunOptions, RunReport, WakePolicy, WorkerStats,
};
pub use pool::{PoolConfig, PoolKind, PutOutcome, Search, TaskPool};
pub use runtime::{
    current_num_threads, current_thread_index, spawn, Runtime, RuntimeBuilder, NUM_THREADS_ENV,
};
pub use task::{BoxedTask, Ctx, Task};

/// The most worker threads a pool ([`Builder`]) or a fork-join runtime
/// ([`forkjoin::Runtime`]) may have: more is refused with [`Error::TooManyThreads`] before
/// anything is allocated or started.
pub const MAX_THREADS: usize = 4096;

/// Everything that can go wrong before or around a working phase. (A panicking task is not an
/// error value: its panic is resumed in the caller of `run`.)
///
/// New variants may be added (it is `#[non_exhaustive]`): match with a `_` arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A pool needs at least one worker.
    #[error("the number of threads must be at least 1")]
    ZeroThreads,
    /// `--pool` named no pool of the family.
    #[error("unknown pool `{name}`; known pools: {known}")]
    UnknownPool {
        /// What was asked for.
        name: String,
        /// Every known name with its alias.
        known: String,
    },
    /// A fork-join pool was asked for by a name it had before a rename.
    #[error(
        "fork-join pool `{old}` is now called `{new}` (alias `{alias}`); \
         `private-public`/`dq8` name the task-pool family's private/public pool, a different structure"
    )]
    RenamedPool {
        /// The old name that was asked for.
        old: String,
        /// The pool's name now.
        new: &'static str,
        /// The pool's alias now.
        alias: &'static str,
    },
    /// [`forkjoin::RuntimeBuilder::build_global`] was called when the global runtime already
    /// existed.
    #[error(
        "the global fork-join runtime already exists (build_global must come before its first use)"
    )]
    GlobalExists,
    /// `--mem` named no memory manager.
    #[error("unknown memory manager `{name}`; known: {known}")]
    UnknownMem {
        /// What was asked for.
        name: String,
        /// Every known name with its alias.
        known: String,
    },
    /// `--wake` named no wake-up policy.
    #[error(
        "unknown wake-up policy `{name}`; known: every-put (java-dq2), on-empty (java-dq9), spin (java-dq10)"
    )]
    UnknownWake {
        /// What was asked for.
        name: String,
    },
    /// `--search` named no search strategy.
    #[error("unknown search strategy `{name}`; known: tree (tree-search), linear (linear-search), random (random-search)")]
    UnknownSearch {
        /// What was asked for.
        name: String,
    },
    /// More worker threads than [`MAX_THREADS`] were asked for.
    #[error("{requested} threads asked for; at most {max} are allowed")]
    TooManyThreads {
        /// What was asked for.
        requested: usize,
        /// [`MAX_THREADS`].
        max: usize,
    },
    /// A working phase or broadcast was started on a worker (inside a fork-join task, or
    /// inside a task of a running phase) while another one held the same runtime. A worker
    /// cannot wait for it (the running one may need this very worker), so it is refused.
    #[error(
        "a working phase (or broadcast) is already running on this runtime; one started from \
         inside a task of that runtime cannot wait for it: start phases one after another, \
         or on another Runtime"
    )]
    PhaseBusy,
    /// A working phase asked for more workers than its runtime has.
    #[error("a working phase of {workers} workers cannot run on a runtime of {threads} threads")]
    PhaseWider {
        /// The phase's workers (the builder's `threads`).
        workers: usize,
        /// The runtime's worker threads.
        threads: usize,
    },
    /// The operating system refused a worker thread.
    #[error("could not start a worker thread: {0}")]
    Spawn(#[from] std::io::Error),
    /// A run executed a different number of tasks than the algorithm defines.
    #[error("task count mismatch: expected {expected} tasks, {actual} ran")]
    TaskCount {
        /// Tasks the algorithm creates.
        expected: u64,
        /// Tasks that ran.
        actual: u64,
    },
}

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
    const SAME_STRUCTURE: [(&str, &str); 1] = [("PoolKind::ChaseLev", "forkjoin::Pool::ChaseLev")];

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
