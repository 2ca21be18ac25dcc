//! # rayon-core on taskpools
//!
//! rayon-core 1.13's public API — the same paths, names, signatures and traits — as a thin
//! layer over the [`taskpools`] runtime. rayon's parallel iterators, and every crate built on
//! rayon, run on taskpools' workers when an application replaces rayon-core with this crate:
//!
//! ```toml
//! [patch.crates-io]
//! rayon-core = { git = "<the taskpools repository>" }   # or: path = ".../crates/rayon-core"
//! ```
//!
//! rayon itself and the application's code stay as they are. This crate holds no scheduling
//! code: every pool is a `taskpools::Runtime`, every join a `taskpools::forkjoin::join_strict`. It is
//! not published on crates.io, where `rayon-core` is rayon's own crate; take it from git or a
//! path as above.
//!
//! ```
//! # use rayon_core as rayon;
//! let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build()?;
//! let total = pool.install(|| {
//!     let (a, b) = rayon::join(|| (1..=50u64).sum::<u64>(), || (51..=100u64).sum::<u64>());
//!     let mut parts = [0u64; 4];
//!     rayon::scope(|s| {
//!         for (i, p) in parts.iter_mut().enumerate() {
//!             s.spawn(move |_| *p = i as u64);
//!         }
//!     });
//!     a + b + parts.iter().sum::<u64>()
//! });
//! assert_eq!(total, 5050 + 6);
//! # Ok::<(), rayon::ThreadPoolBuildError>(())
//! ```
//!
//! # What each item is made of
//!
//! | rayon-core | taskpools |
//! |---|---|
//! | [`join`](join()), [`join_context`], [`FnContext`] | `forkjoin::join_strict`, `forkjoin::join_context_strict`, `forkjoin::FnContext` (both halves always run, see below) |
//! | [`scope()`], [`in_place_scope()`], [`Scope`] | `forkjoin::scope`, `in_place_scope`, `Scope` (wrapped in place) |
//! | [`scope_fifo()`], [`in_place_scope_fifo()`], [`ScopeFifo`] (`spawn_fifo`) | `forkjoin::scope_fifo`, `in_place_scope_fifo`, a `Scope` made by them (`spawn`) |
//! | [`spawn()`], [`spawn_fifo()`], [`broadcast()`], [`spawn_broadcast()`], [`BroadcastContext`] | `spawn`, `spawn_fifo`, `broadcast`, `spawn_broadcast`, `BroadcastContext` |
//! | [`yield_now`], [`yield_local`], [`Yield`] | `yield_now`, `yield_local`, `Yield` |
//! | [`current_num_threads`], [`current_thread_index`], [`current_thread_has_pending_tasks`], [`max_num_threads`] | the same names |
//! | [`ThreadPool`] and its methods | `Runtime` and its methods of the same names (`threads` for `current_num_threads`) |
//! | [`ThreadPoolBuilder`] | `RuntimeBuilder`, always built with `build_with_spawn_handler` (or `build_global_with_spawn_handler`): `num_threads` → `threads`, `panic_handler`, `start_handler`, `exit_handler`, `stack_size`, `use_current_thread` passed on; `thread_name` and `spawn_handler` applied here |
//! | [`ThreadPoolBuilder::build_scoped`] | `spawn_handler` with scoped threads, as rayon builds it |
//! | [`ThreadBuilder`] | `ThreadBuilder`, with the name kept here |
//! | [`ThreadPoolBuildError`] | `taskpools::Error` (`GlobalExists`, `CurrentThreadInRuntime`, `Spawn`) |
//! | the global pool | the runtime's global runtime, built on first use with this crate's defaults (`taskpools::runtime::set_global_default`) |
//! | `Configuration`, `initialize`, `ThreadPool::new`, `breadth_first` (deprecated) | this crate's builder |
//!
//! # What differs from rayon
//!
//! All 578 of rayon 1.12's own tests (unit, integration and doc tests) pass on this crate
//! (`scripts/rayon-tests.sh` in the taskpools repository runs them). Where the behaviour
//! differs, it is here:
//!
//! - **The deque.** Every pool this crate builds (the global one too) runs on taskpools'
//!   Chase–Lev deques, rayon's own model: each join queues `oper_b` where an idle worker takes
//!   it at once. `TASKPOOLS_RAYON_POOL=private-deque` picks taskpools' default deque instead,
//!   whose joins are cheaper but which differs from rayon in two ways. A join may run its two
//!   halves as plain calls on the calling thread when its worker already has a few jobs queued
//!   and no other worker asks for one (the join's serial elision): a program whose `oper_a`
//!   waits for `oper_b` by other means than joins and scopes (a spin, a channel) can wait
//!   forever there. And a worker's queued join halves (all but its outermost one) reach other
//!   workers only when it answers their requests, at a join, a scope's end, an `install` or
//!   [`yield_now`], so a job that spins until another job sets a flag must call
//!   [`yield_now`] in its loop; when one job runs for more than a second without forking while
//!   other workers ask for work, the runtime prints one line per pool to stderr naming the
//!   cause (`TASKPOOLS_STALL_REPORT=off` silences it; see `taskpools::forkjoin`, "Progress").
//!   rayon's iterators run each piece of their input as one long fold that forks no more, so
//!   on that deque the other workers wait for the folds to end: at 16 threads they took about
//!   twice stock rayon's time. An unknown name fails the pool's build with the list of pools.
//! - **[`ScopeFifo`] keeps one order per scope**: its jobs start in the order they were
//!   spawned in, whichever thread spawned them. rayon keeps one FIFO per spawning worker, so
//!   jobs spawned from different workers have no order there; every order rayon guarantees
//!   holds here.
//! - **The thread count** of `num_threads(0)` and of the global pool: `RAYON_NUM_THREADS` (or
//!   the older `RAYON_RS_NUM_CPUS`) as in rayon, else `TASKPOOLS_NUM_THREADS`, else one per CPU.
//!   [`max_num_threads`] is 4096, not rayon's 65 535 (255 on 32-bit targets).
//! - **The global pool is shared with taskpools.** It is taskpools' global runtime: code that
//!   uses `taskpools` directly runs on it too. If such code used it before any of this crate's
//!   functions, it was built with taskpools' defaults (`TASKPOOLS_NUM_THREADS`, threads named
//!   `taskpools-N`, a spawned job's panic reported on stderr instead of aborting), and
//!   [`ThreadPoolBuilder::build_global`] then fails. A `build_global` that fails for another
//!   reason (a thread that could not start) leaves the global pool to be built with the
//!   defaults on first use; rayon's first use panics then.
//! - **[`ThreadPoolBuilder::breadth_first`]** (deprecated in rayon, where it is a hint) has no
//!   effect.
//! - **`use_current_thread`**: the building thread's worker state is freed when the thread
//!   ends instead of leaked, and dropping the pool on that thread releases it (it runs what
//!   is queued or addressed to it, then stops being a worker). [`ThreadBuilder::run`] panics
//!   on a thread that is already a worker.
//! - **`build_global`** returns once the worker threads have started; rayon's also waits for
//!   each of them to reach its loop.
//! - **Broadcasts and taskpools' working phases.** A broadcast (or a scope's
//!   `spawn_broadcast`) on a worker of a runtime that a taskpools working phase holds panics
//!   (only programs that also use taskpools' task pools can meet this).
//! - **No WebAssembly fallback.** rayon runs on targets without threads as a one-thread pool;
//!   taskpools needs threads, and building a pool there fails (the global one panics on first
//!   use). The `web_spin_lock` feature exists so that rayon's feature of that name resolves; it
//!   does nothing.
//! - **No `links = "rayon-core"`.** rayon-core declares it so that a build cannot hold two
//!   copies of it (two global pools); this crate does not, because the taskpools workspace
//!   holds both (its benchmarks compare against stock rayon). With `[patch]` there is only one.
//! - **Details**: [`BroadcastContext`] is `Send` and `Sync` here (rayon's is neither); the
//!   `Debug` output of the types differs; a pool has no id; [`ThreadPoolBuildError`]'s
//!   messages are worded differently (its kinds and `source` are rayon's). rayon-core's own
//!   integration tests (`tests/` of rayon-core 1.13.0) pass on this crate except
//!   `double_init_fail`, which compares the message text.
//!
//! Panics follow rayon: both closures of a join always run, and the first one's panic wins; a
//! scope resumes a panic once all its jobs have finished; a panic that no caller can receive
//! (a spawned job's, a start or exit handler's) goes to the
//! [`panic_handler`](ThreadPoolBuilder::panic_handler), and without one the process aborts.

#![warn(missing_docs)]
#![deny(missing_debug_implementations)]

mod builder;
mod current;
mod error;
mod global;
mod join;
mod pool;
mod scope;
mod spawn;
mod thread;

pub use builder::ThreadPoolBuilder;
#[allow(deprecated)]
pub use builder::{initialize, Configuration};
pub use current::{
    current_num_threads, current_thread_has_pending_tasks, current_thread_index, max_num_threads,
    yield_local, yield_now,
};
pub use error::ThreadPoolBuildError;
pub use join::{join, join_context};
pub use pool::ThreadPool;
pub use scope::{in_place_scope, in_place_scope_fifo, scope, scope_fifo, Scope, ScopeFifo};
pub use spawn::{broadcast, spawn, spawn_broadcast, spawn_fifo};
pub use taskpools::forkjoin::FnContext;
pub use taskpools::{BroadcastContext, Yield};
pub use thread::ThreadBuilder;
