//! `taskpools places`: the locality benchmarks of LASSI (Weibel, "An Advanced Scheduler for
//! Intervals", 2010) on a runtime with places, against the same programs on the runtime
//! without places and on rayon.
//!
//! - **Cache Stress Test**: two randomly initialised arrays (8 MB each); 8 tasks per worker,
//!   half of them sum and multiply every element of array 0 `passes` times, half of
//!   array 1. *best*: array 0's tasks at place 0, array 1's at place 1; *worst*: each place
//!   gets half of each array's tasks; *ignorant*: no hints; *random*: a random place per
//!   task.
//! - **Merge sort** (Weibel: 4 194 304 integers): 8192 sorters per worker (each fills
//!   its part randomly and sorts it), then mergers up a binary tree. *best*: sorters of the
//!   first half at place 0, of the second at place 1, each merger at its left
//!   predecessor's place; *worst*: each merger at the other place. *ignorant* spawns
//!   without hints; *random* hints a random place.
//! - **Block matrix multiply** (Weibel: 2048²): C = A B by 8 products of quadrants
//!   (into C and a temporary), then 4 additions. *best*: everything for C's quadrants 0 and 3
//!   at place 0, for 1 and 2 at place 1; *worst*: the additions at the other place than
//!   their products.
//!
//! The Cache Stress Test also runs as a task-pool working phase whose root puts the leaves
//! with hints (`Ctx::put_at`), against the same phase without hints.
//!
//! Every variant's result is checked against a sequential run's. Then Weibel's claims
//! and future work: the shared deque per place against one per worker (`1x2` vs `2x1`), and
//! the steal policies on the random Cache Stress variant and on a chain of tasks (where the
//! adaptive policy's parking shows in CPU time).

mod cache_stress;
mod chain;
mod command;
mod matmul;
mod measure;
mod mergesort;
mod runner;
mod spawn;
mod table;

use anyhow::{bail, Result};
use serde::Serialize;
use taskpools::places::Places;

pub use command::{exec, run_and_emit, PlacesArgs};
pub use runner::run;

/// The benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Bench {
    CacheStress,
    Mergesort,
    Matmul,
}

impl Bench {
    pub const ALL: [Bench; 3] = [Bench::CacheStress, Bench::Mergesort, Bench::Matmul];
    pub fn name(self) -> &'static str {
        match self {
            Bench::CacheStress => "cache-stress",
            Bench::Mergesort => "mergesort",
            Bench::Matmul => "matmul",
        }
    }
    pub fn from_name(s: &str) -> Result<Bench> {
        Bench::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| {
                anyhow::anyhow!("unknown benchmark `{s}`; known: cache-stress, mergesort, matmul")
            })
    }
}

/// Where tasks are hinted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Locality {
    Best,
    Worst,
    Ignorant,
    Random,
}

impl Locality {
    pub const ALL: [Locality; 4] = [
        Locality::Best,
        Locality::Worst,
        Locality::Ignorant,
        Locality::Random,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Locality::Best => "best",
            Locality::Worst => "worst",
            Locality::Ignorant => "ignorant",
            Locality::Random => "random",
        }
    }
}

/// Parameters of a run.
#[derive(Clone, Debug)]
pub struct Params {
    /// The places description (`cores` by default: one place per core).
    pub places: String,
    pub benches: Vec<Bench>,
    pub reps: usize,
    /// Cache Stress: bytes per array, passes per task, tasks per worker.
    pub cache_bytes: usize,
    pub passes: usize,
    pub tasks_per_worker: usize,
    /// Merge sort: elements, sorters per worker.
    pub sort_n: usize,
    pub sorters_per_worker: usize,
    /// Matrix multiply: side, leaf side.
    pub mat_n: usize,
    pub mat_leaf: usize,
    /// Run the claim and policy sections.
    pub policies: bool,
    /// Record a schedule trace of every configuration on our runtimes in an extra
    /// repetition, left out of the medians: Chrome trace-event JSON to this file, a Gantt
    /// chart per configuration into the folder `<file>.gantt/`. Our runtimes then record
    /// during the timed repetitions too (the table says so).
    pub trace: Option<std::path::PathBuf>,
}

/// Trace buffer per worker, in events.
const TRACE_EVENTS: usize = 1 << 20;

impl Params {
    pub const MAX_CACHE_BYTES: usize = 1 << 30;
    pub const MAX_SORT: usize = 1 << 28;
    pub const MAX_MAT: usize = 8192;

    /// Refuses what cannot run, naming the option.
    pub fn check(&self) -> Result<Places> {
        let places = Places::parse(&self.places)?;
        if places.len() < 2 {
            bail!(
                "--places {}: the locality benchmarks need at least 2 places (this gives {}); try `2x1`",
                self.places,
                places.len()
            );
        }
        if self.reps == 0 {
            bail!("--reps must be at least 1");
        }
        if !(4096..=Self::MAX_CACHE_BYTES).contains(&self.cache_bytes) {
            bail!("--cache-mb: each array must be 4 KiB to 1 GiB");
        }
        if self.passes == 0
            || self.passes > 10_000
            || self.tasks_per_worker == 0
            || self.tasks_per_worker > 1024
        {
            bail!("--passes must be 1 to 10000 and --tasks-per-worker 1 to 1024");
        }
        let leaves = places.workers() * self.sorters_per_worker;
        if self.sort_n > Self::MAX_SORT || self.sorters_per_worker == 0 || leaves > self.sort_n {
            bail!(
                "--sort-n {} with --sorters-per-worker {}: need 1 to {} elements and at least one element per sorter ({} sorters)",
                self.sort_n, self.sorters_per_worker, Self::MAX_SORT, leaves
            );
        }
        let ok = self.mat_leaf >= 4
            && self.mat_n <= Self::MAX_MAT
            && self.mat_n >= self.mat_leaf
            && self.mat_n % self.mat_leaf == 0
            && (self.mat_n / self.mat_leaf).is_power_of_two();
        if !ok {
            bail!(
                "--mat-n {} --mat-leaf {}: the side must be leaf * 2^k, at most {}, leaf at least 4",
                self.mat_n, self.mat_leaf, Self::MAX_MAT
            );
        }
        Ok(places)
    }
}

/// One row of the table.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    pub section: String,
    pub bench: String,
    /// `places 2x1`, `no places`, `rayon`, or the policy's name.
    pub config: String,
    pub locality: String,
    pub threads: usize,
    pub reps: usize,
    pub median_ms: f64,
    /// Median time ÷ the best-locality median on places (same benchmark), or ÷ the
    /// reference row of the section.
    pub vs_ref: f64,
    /// Summed over workers, per repetition (medians).
    pub local_tasks: u64,
    pub remote_tasks: u64,
    pub place_steals: u64,
    pub declined: u64,
    /// CPU time of the runtime's worker threads ÷ wall time (policies section), else NaN.
    pub cpu_per_wall: f64,
}
