//! The subcommands that are not experiments: `list`, `trace` and `tour`. (Each experiment's
//! subcommand lives in its module under `experiments/`.)

pub mod list;
pub mod tour;
pub mod trace;
