//! The working phase (Korch and Rauber, "A Comparison of Task Pools for Dynamic Load Balancing
//! of Irregular Algorithms" (2002), §2, `tpool_run`): one loop for every pool — get a task, run
//! it, repeat — with per-worker counters, wake-up policies, correct termination (the `idle`
//! module's docs) and panic propagation. A phase runs on the workers of a [`Runtime`]: worker
//! `i` of the runtime is worker `i` of the phase, so no thread is started per phase.

mod entry;
mod hints;
mod idle;
pub(crate) mod inbox;
#[cfg(all(test, loom))]
mod loom_tests;
mod remote;
mod shares;
mod trace;
mod worker_loop;

pub use crate::stats::{RunReport, WorkerStats};
pub use entry::{run_pool, run_pool_on, run_pool_with, RunOptions};
pub use idle::WakePolicy;

pub(crate) use entry::{run_phase, run_phase_hinted};
pub(crate) use idle::Coordinator;
#[cfg(any(feature = "mpi", all(test, loom)))]
pub(crate) use remote::NoHints;
pub(crate) use remote::Remote;
pub(crate) use shares::run_shares;

#[cfg(doc)]
use crate::runtime::Runtime;
