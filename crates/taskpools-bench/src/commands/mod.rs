//! The subcommands that are not experiments: `list`, `trace`, `tour`, `scaling` and the
//! hidden `peer-run`. (Each experiment's
//! subcommand lives in its module under `experiments/`.)

pub mod list;
pub mod peer_run;
pub mod scaling;
pub mod tour;
pub mod trace;
