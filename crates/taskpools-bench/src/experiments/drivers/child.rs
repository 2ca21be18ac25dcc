//! Starting a peer's process and reading what it printed, for both shapes of peer (the
//! programs of [`super::program`] and the driver jobs of [`super::process`]).
//!
//! The child gets a clean configuration: none of the user's `OMP_*`, `KMP_*`, `GOMP_*`,
//! `STARPU_*` or `TBB_*` variables (they would change a runtime's thread count, scheduler or
//! binding behind the row's back), the cores the workbench pins its own workers to
//! (`TASKPOOLS_PEER_CORES`, in its order), and a time limit after which it is killed. Its
//! first line names the runtime that ran (`runtime …`), then `time SECONDS result R`.

use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{bail, Context, Result};

/// How long a peer's process may run before it is killed: far above any run the workbench's
/// sizes allow on one core, so only a runtime that hangs meets it.
pub const LIMIT: Duration = Duration::from_secs(900);

/// The prefixes of the environment variables that configure the peer runtimes.
const RUNTIME_VARS: [&str; 5] = ["OMP_", "KMP_", "GOMP_", "STARPU_", "TBB_"];

/// Prepares `cmd` for a peer: the runtimes' variables removed, the cores passed.
pub fn configure(cmd: &mut Command) {
    for (k, _) in std::env::vars_os() {
        if let Some(k) = k.to_str() {
            if RUNTIME_VARS.iter().any(|p| k.starts_with(p)) {
                cmd.env_remove(k);
            }
        }
    }
    let cores: Vec<String> = crate::experiments::pinning::cores()
        .map(|c| c.iter().map(|c| c.id.to_string()).collect())
        .unwrap_or_default();
    if !cores.is_empty() {
        cmd.env("TASKPOOLS_PEER_CORES", cores.join(","));
    }
}

/// Runs `cmd` (configured) to its end or [`LIMIT`]: its standard output, or one line saying
/// why not (`what` names the run).
pub fn output(mut cmd: Command, what: &str) -> Result<String> {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("{what}: could not start {:?}", cmd.get_program()))?;
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(LIMIT) {
        Ok(r) => r.with_context(|| format!("{what}: waiting for the child"))?,
        Err(_) => {
            // SAFETY: kill(2) with a pid and a signal number; the child is ours and is not
            // reaped before the waiting thread sees it end, which it has not.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            let _ = rx.recv();
            bail!(
                "{what}: no result after {} s; the child was killed",
                LIMIT.as_secs()
            );
        }
    };
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        bail!(
            "{what}: the child failed ({}): {}",
            out.status,
            stderr.lines().last().unwrap_or("no message")
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A child's report: the runtime line's text (checked by `is_runtime`, which gets it) and the
/// timed run's seconds and result word.
pub fn parse<'a>(
    stdout: &'a str,
    what: &str,
    is_runtime: impl Fn(&str) -> Result<()>,
) -> Result<(&'a str, f64, &'a str)> {
    let mut lines = stdout.lines();
    let identity = lines
        .next()
        .and_then(|l| l.strip_prefix("runtime "))
        .with_context(|| format!("{what}: the child printed no `runtime` line"))?;
    is_runtime(identity)?;
    let line = lines.next().unwrap_or("");
    let w: Vec<&str> = line.split_whitespace().collect();
    let parsed = match w[..] {
        ["time", s, "result", r] => s
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| (s, r)),
        _ => None,
    };
    match parsed {
        Some((s, r)) => Ok((identity, s, r)),
        None => bail!("{what}: expected `time SECONDS result R`, got `{line}`"),
    }
}
