//! `taskpools report DIR`: the markdown results table of a tour, from the JSON files that
//! `taskpools tour --out DIR` wrote, so that the README's figures are regenerated, never typed.
//!
//! One row per kernel (or front end, graph, benchmark) of the experiments that compare with a
//! sequential program: at the run's largest thread count, our best pool or variant against
//! each peer runtime's best, as the median (min–max) over the repetitions. Above the table,
//! the machine and date the tour recorded in `tour.json`.
//!
//! The records are read with the experiments' own types, strictly: a field that this build
//! does not write, a missing field or a pool that does not exist is an error naming the file
//! and record, not a silently wrong table.

mod command;
mod machine;
mod rows;
mod table;

pub use command::{exec, ReportArgs};
pub use machine::{TourInfo, TOUR_FILE};
pub use rows::read_dir;

use super::{blocked, dataflow, forkjoin, queens, suite};

/// The marker lines around the results block of a markdown file (`--readme`).
pub const BEGIN: &str = "<!-- results:begin -->";
/// See [`BEGIN`].
pub const END: &str = "<!-- results:end -->";

/// An experiment the report reads: its name (the subcommand), its kernels (or front ends,
/// graphs, benchmarks: what a row names) and the peer runtimes it runs beside ours.
pub struct Experiment {
    pub name: &'static str,
    pub kernels: Vec<&'static str>,
    pub peers: Vec<&'static str>,
}

/// The kernel name of the synthetic algorithm's rows.
pub const SYNTHETIC_KERNEL: &str = "A(i)";
/// The kernel name of the radiosity rows.
pub const RADIOSITY_KERNEL: &str = "hierarchical radiosity";

/// Every experiment the report reads, in the order of its rows.
pub fn experiments() -> Vec<Experiment> {
    vec![
        Experiment {
            name: "synthetic",
            kernels: vec![SYNTHETIC_KERNEL],
            peers: vec![],
        },
        Experiment {
            name: "radiosity",
            kernels: vec![RADIOSITY_KERNEL],
            peers: vec![],
        },
        Experiment {
            name: "queens",
            kernels: queens::FRONT_ENDS.to_vec(),
            peers: queens::PEERS.to_vec(),
        },
        Experiment {
            name: "forkjoin",
            kernels: forkjoin::KERNELS.to_vec(),
            peers: forkjoin::PEERS.to_vec(),
        },
        Experiment {
            name: "blocked",
            kernels: blocked::KERNELS.to_vec(),
            peers: blocked::PEERS.to_vec(),
        },
        Experiment {
            name: "dataflow",
            kernels: dataflow::Graph::ALL.iter().map(|g| g.name()).collect(),
            peers: dataflow::PEERS.to_vec(),
        },
        Experiment {
            name: "suite",
            kernels: suite::Bench::ALL.iter().map(|b| b.name()).collect(),
            peers: suite::PEERS.to_vec(),
        },
    ]
}
