//! `taskpools peer-run JOB` (hidden): the child process in which a peer runtime's driver runs
//! (see [`crate::experiments::drivers`]). It loads the one driver the job names, checks which
//! runtime its OpenMP calls reach, runs the job's experiment on it, and prints that runtime,
//! the time and the result's hash for the parent workbench to check.

use anyhow::{bail, Context, Result};

use crate::experiments::drivers::process::{report, Job};
use crate::experiments::drivers::{Driver, PeerRuntime};
use crate::experiments::{dataflow, pinning, suite};

/// Runs the job given as JSON.
pub fn exec(job: &str) -> Result<()> {
    let job: Job = serde_json::from_str(job).context("peer-run: a malformed job")?;
    let runtime = PeerRuntime::from_name(&job.runtime)
        .with_context(|| format!("peer-run: unknown runtime `{}`", job.runtime))?;
    // Every core: the parent may have started this process from a thread pinned to one, and
    // the runtime sizes and places its threads from the mask it starts with.
    pinning::unpin_current();
    let driver = Driver::open(runtime)?;
    let identity = driver.identity()?;
    let (seconds, hash) = match job.experiment.as_str() {
        "suite" => suite::peer_run(&driver, &job)?,
        "dataflow" => dataflow::peer_run(&driver, &job)?,
        e => bail!("peer-run: unknown experiment `{e}`"),
    };
    print!("{}", report(&identity, seconds, hash));
    Ok(())
}
