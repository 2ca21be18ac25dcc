//! The subcommands that are not experiments: `list`, `trace`, `tour` and `scaling`. (Each experiment's
//! subcommand lives in its module under `experiments/`.)

pub mod list;
pub mod scaling;
pub mod tour;
pub mod trace;
