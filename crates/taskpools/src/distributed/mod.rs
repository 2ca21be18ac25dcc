//! The working phase spread over MPI ranks (cargo feature `mpi`): Manber's concurrent pool
//! (Kotz & Ellis, "Evaluation of Concurrent Pools" (1989)) with one segment per *process*, as
//! Manber designed it for machines on a network.
//!
//! Each rank runs an ordinary working phase ([`run_pool_on`](crate::run_pool_on)'s loop) on
//! its own [`Runtime`](crate::Runtime) with any pool of the family. The ranks together form
//! one pool: when every worker of a rank is idle, the rank asks another rank for work (chosen
//! by the [`Search`](crate::pool::Search) strategies lifted to ranks), and the victim sends
//! **half** of what it can spare (steal-half). Tasks that cross ranks are serialized with
//! `postcard`; a task that never leaves its rank is never serialized. The phase ends on every
//! rank at once, when Safra's token-ring algorithm (the `termination` module) proves that
//! every rank is idle and no task is on the wire.
//!
//! ```no_run
//! # #[cfg(feature = "mpi")] {
//! use mpi::traits::*;
//! use taskpools::distributed::{run_distributed, DistributedConfig};
//! use taskpools::pool::{ChaseLevPool, PoolConfig};
//! use taskpools::{Ctx, Runtime, Task, TaskPool};
//!
//! #[derive(serde::Serialize, serde::Deserialize)]
//! struct Count(u32);
//! impl Task<u64> for Count {
//!     fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
//!         *ctx.local() += 1;
//!         if self.0 > 0 {
//!             ctx.put(Count(self.0 - 1));
//!             ctx.put(Count(self.0 - 1));
//!         }
//!     }
//! }
//!
//! let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled).unwrap();
//! let world = universe.world();
//! let rt = Runtime::new(2)?;
//! let pool: ChaseLevPool<Count> = TaskPool::new(&PoolConfig::new(2));
//! // Rank 0 holds the root; the others start empty and steal.
//! let roots = if world.rank() == 0 { vec![Count(20)] } else { vec![] };
//! let (report, counts) =
//!     run_distributed(&world, &rt, &pool, &DistributedConfig::default(), |_| 0u64, roots)?;
//! let total = taskpools::distributed::sum_across(&world, counts.iter().sum());
//! assert_eq!(total, (1 << 21) - 1);
//! assert_eq!(report.tasks_run(), total);
//! # }
//! # Ok::<(), taskpools::Error>(())
//! ```
//!
//! A task type that cannot cross ranks does not compile: tasks must implement `serde`'s
//! `Serialize` and `Deserialize`.
//!
//! ```compile_fail
//! use taskpools::distributed::{run_distributed, DistributedConfig};
//! use taskpools::pool::{ChaseLevPool, PoolConfig};
//! use taskpools::{Ctx, Runtime, Task, TaskPool};
//!
//! struct Plain(u32); // no Serialize/Deserialize
//! impl Task for Plain {
//!     fn run(self, _: &mut Ctx<'_, Self>) {}
//! }
//! # let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled).unwrap();
//! let rt = Runtime::new(1).unwrap();
//! let pool: ChaseLevPool<Plain> = TaskPool::new(&PoolConfig::new(1));
//! let cfg = DistributedConfig::default();
//! let _ = run_distributed(&universe.world(), &rt, &pool, &cfg, |_| (), vec![Plain(1)]);
//! ```
//!
//! # How a rank works
//!
//! The calling thread is the rank's *agent*: it alone calls MPI (so `Threading::Funneled`
//! suffices), while the runtime's workers run tasks. Workers and agent meet in a small
//! shared `Link`:
//!
//! - a steal request from another rank is a flag; a busy worker looks at it between two tasks
//!   (one relaxed load), takes up to `2 × max_batch` tasks out of the pool with `get`, puts
//!   back the newer half and hands the older half to the agent, which sends it;
//! - tasks from another rank go into an inbox that idle workers check before they sleep,
//!   exactly like a shared queue of the pool (same fence pair, so no wake-up is lost);
//! - the worker whose idleness makes all of them idle wakes the agent, which then asks other
//!   ranks for work — a worker never ends the phase by itself.
//!
//! # Ending
//!
//! Normal end: rank 0 concludes termination and sends `Terminate` to every rank. Panics: a
//! rank whose task panicked sends `Abort` with the message to every rank, and every rank
//! returns [`Error::RankPanicked`] naming the rank and the message. In both cases every rank
//! then waits for the answer to its own outstanding steal request (every request gets exactly
//! one answer) and answers requests it receives until a non-blocking barrier completes, so no
//! task message is left on the wire when the phase returns. Each phase runs on a duplicate of
//! the caller's communicator, so its messages never mix with the caller's or another phase's.

mod agent;
mod config;
mod link;
mod messages;
mod reduce;
mod report;
mod run;
mod termination;
mod victims;

pub use config::DistributedConfig;
pub use reduce::{fold_across, sum_across};
pub use report::{DistReport, RankStats};
pub use run::run_distributed;

use crate::Error;

fn mpi_error(message: String) -> Error {
    Error::Distributed { message }
}
