//! One driver run in a child process: the job the parent sends (`taskpools peer-run JOB`, the
//! job as JSON), the child's lines, and the parent's checks of them.
//!
//! The child prints `runtime PATH` (the shared object its driver's runtime calls reach, see
//! [`super::Driver::identity`]) and then `time SECONDS result HASH`: the timed run's seconds,
//! measured inside the driver once its threads are up, and a hash of the result that the
//! parent compares with the hash of its own sequential result.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::{child, PeerRuntime};
use crate::experiments::pinning::unpin_current;

/// What a child runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    /// The runtime (its [`PeerRuntime::name`]).
    pub runtime: String,
    /// Threads.
    pub threads: usize,
    /// Pin thread `i` to core `i mod cores`.
    pub pin: bool,
    /// The experiment (`suite`, `dataflow`).
    pub experiment: String,
    /// The experiment's own description of the work (its input and variant).
    pub work: serde_json::Value,
    /// Runtime settings for the child's environment (e.g. `OMP_MAX_TASK_PRIORITY`, which
    /// libgomp reads when it is loaded, before any code of the child runs).
    #[serde(default)]
    pub env: Vec<(String, String)>,
}

impl Job {
    /// The job that runs `work` of `experiment` on `runtime` with `threads` threads.
    pub fn new(
        runtime: PeerRuntime,
        threads: usize,
        pin: bool,
        experiment: &str,
        work: impl Serialize,
    ) -> Result<Job> {
        Ok(Job {
            runtime: runtime.name().into(),
            threads,
            pin,
            experiment: experiment.into(),
            work: serde_json::to_value(work)?,
            env: Vec::new(),
        })
    }

    /// The job with `key=value` in the child's environment.
    pub fn with_env(mut self, key: &str, value: &str) -> Job {
        self.env.push((key.into(), value.into()));
        self
    }
}

/// What a child reported.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The timed run's seconds.
    pub seconds: f64,
    /// The result's hash.
    pub hash: u64,
    /// The shared object the runtime's calls reached.
    pub identity: String,
}

/// The executable that runs jobs: the workbench itself, set by its `main`. Unset in unit
/// tests (their executable is the test harness), where peer rows are not available.
static HOST: OnceLock<PathBuf> = OnceLock::new();

/// Makes this process's executable the host of peer jobs (`main` calls it).
pub fn set_host() {
    if let Ok(p) = std::env::current_exe() {
        let _ = HOST.set(p);
    }
}

/// Whether peer jobs can run from this process.
pub fn host_available() -> bool {
    HOST.get().is_some()
}

/// Runs `job` in a child process and checks what it printed.
pub fn run(job: &Job) -> Result<Outcome> {
    let runtime = PeerRuntime::from_name(&job.runtime)
        .with_context(|| format!("unknown peer runtime `{}`", job.runtime))?;
    let host = HOST
        .get()
        .context("peer runs need the taskpools executable (not available in unit tests)")?;
    let what = format!("{} on {} x{}", job.experiment, runtime.name(), job.threads);
    let mut cmd = Command::new(host);
    cmd.arg("peer-run").arg(serde_json::to_string(job)?);
    child::configure(&mut cmd);
    for (k, v) in &job.env {
        cmd.env(k, v);
    }
    parse(runtime, &what, &child::output(cmd, &what)?)
}

/// Runs `job` in a child process, with this thread unpinned meanwhile (the child takes its
/// cores' mask from it), and checks its result against `expected`: the seconds it measured.
pub fn run_checked(job: &Job, expected: u64, repin: impl Fn()) -> Result<f64> {
    unpin_current();
    let o = run(job);
    repin();
    let o = o?;
    if o.hash != expected {
        bail!(
            "{} on {} x{}: the result differs from the sequential run's",
            job.experiment,
            job.runtime,
            job.threads
        );
    }
    Ok(o.seconds)
}

/// Reads a child's output: the runtime line, checked, then the timed run.
fn parse(runtime: PeerRuntime, what: &str, stdout: &str) -> Result<Outcome> {
    let (identity, seconds, hash) = child::parse(stdout, what, |id| {
        if runtime.is(id) {
            Ok(())
        } else {
            bail!(
                "{what}: the runtime that ran is `{id}`, not {}",
                runtime.name()
            )
        }
    })?;
    let hash = u64::from_str_radix(hash, 16)
        .with_context(|| format!("{what}: `{hash}` is not a result hash"))?;
    Ok(Outcome {
        seconds,
        hash,
        identity: identity.to_string(),
    })
}

/// The child's lines for a run that took `seconds` and left a result hashed to `hash`.
pub fn report(identity: &str, seconds: f64, hash: u64) -> String {
    format!("runtime {identity}\ntime {seconds:e} result {hash:016x}\n")
}

/// The results' hash: FNV-1a over the words' bytes (little-endian), so that a change in any
/// bit reaches every bit of the hash (over whole words, two flips of a top bit cancel).
pub fn hash_words(words: impl IntoIterator<Item = u64>) -> u64 {
    words
        .into_iter()
        .flat_map(u64::to_le_bytes)
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_report_reads_back() {
        let r = report("/usr/lib/x86_64-linux-gnu/libgomp.so.1", 0.0125, 0xdead);
        let o = parse(PeerRuntime::Libgomp, "t", &r).unwrap();
        assert_eq!((o.seconds, o.hash), (0.0125, 0xdead));
    }

    #[test]
    fn a_runtime_that_is_not_the_one_named_is_refused() {
        let r = report("/usr/lib/x86_64-linux-gnu/libgomp.so.1", 0.5, 1);
        let e = parse(PeerRuntime::Libomp, "t", &r).unwrap_err();
        assert!(e.to_string().contains("not libomp"), "{e}");
        let r = report("/usr/lib/llvm-14/lib/libomp.so.5", 0.5, 1);
        assert!(parse(PeerRuntime::Libomp, "t", &r).is_ok());
    }

    #[test]
    fn malformed_lines_are_errors() {
        for bad in [
            "",
            "runtime libgomp.so.1\n",
            "runtime libgomp.so.1\ntime x result 1\n",
            "runtime libgomp.so.1\ntime -1 result 1\n",
            "runtime libgomp.so.1\ntime NaN result 1\n",
            "runtime libgomp.so.1\ntime 1 result zz\n",
        ] {
            assert!(parse(PeerRuntime::Libgomp, "t", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_hash_of_nothing_is_the_offset_basis() {
        assert_eq!(hash_words([]), 0xcbf2_9ce4_8422_2325);
    }

    #[test]
    fn sign_flips_do_not_cancel_in_the_hash() {
        let sign = 1u64 << 63;
        assert_ne!(hash_words([sign, sign]), hash_words([0, 0]));
        assert_ne!(hash_words([sign, 0]), hash_words([0, sign]));
        assert_ne!(hash_words([1, 2]), hash_words([2, 1]));
    }
}
