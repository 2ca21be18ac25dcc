//! `taskpools distributed`: the working phase spread over MPI ranks (the outlook of Kotz &
//! Ellis, "Evaluation of Concurrent Pools", 1989), run under `mpirun`. Synthetic A(k) and
//! N-Queens with exact totals, each search strategy between ranks against a static split of
//! the initial tasks (no stealing between ranks) and against the same total number of threads
//! in one process.

mod command;
#[cfg(feature = "mpi")]
mod params;
#[cfg(feature = "mpi")]
mod runner;
#[cfg(feature = "mpi")]
mod table;
#[cfg(feature = "mpi")]
mod tasks;

pub use command::{exec, DistributedArgs};
#[cfg(feature = "mpi")]
pub use params::{rank_trace_path, Params, Start, Workload};
#[cfg(feature = "mpi")]
pub use runner::run;
#[cfg(feature = "mpi")]
pub use table::table;
