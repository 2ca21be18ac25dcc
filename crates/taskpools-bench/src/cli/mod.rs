//! The command line's shared parts: the argument groups many experiments take (thread
//! counts, repetitions, pinning, outputs, traces), the checks made before any work starts,
//! names given to comma-separated options, and writing an experiment's outputs. Each
//! experiment's own arguments and command live in its module under `experiments/`.

mod args;
mod checks;
mod names;
mod output;

pub use args::{PeersArgs, PinArgs, RepsArgs, ThreadsArgs, TraceArgs};
pub use checks::{check_dir_writable, check_positive, check_threads};
// Outside `cli`, only `distributed` (which checks each rank's own paths) names it.
#[cfg(feature = "mpi")]
pub use checks::check_output;
pub use names::{names_or_all, parse_pools};
pub use output::{emit, OutputArgs, Outputs, RecordsArgs};
