//! The checks every experiment makes on its arguments before any work starts: thread
//! counts, counts that must be at least 1, and the files and folders it will write.

use std::fs;
use std::path::Path;

use anyhow::{bail, Context, Result};

/// The most threads (or participants) one run may ask for: the library's limit.
const MAX_THREADS: usize = taskpools::MAX_THREADS;

/// `--threads` (or `--participants`): each count `min..=MAX_THREADS`, none given twice.
pub fn check_threads(opt: &str, counts: &[usize], min: usize) -> Result<()> {
    if counts.is_empty() {
        bail!("{opt}: give at least one count");
    }
    for (i, &t) in counts.iter().enumerate() {
        if t < min {
            bail!("{opt} {t}: each count must be at least {min}");
        }
        if t > MAX_THREADS {
            bail!("{opt} {t}: each count must be at most {MAX_THREADS}");
        }
        if counts[..i].contains(&t) {
            bail!("{opt}: {t} is given twice (each count at most once)");
        }
    }
    Ok(())
}

/// A count that must be at least 1.
pub fn check_positive(opt: &str, n: usize) -> Result<()> {
    if n == 0 {
        bail!("{opt} 0: must be at least 1");
    }
    Ok(())
}

/// An output file: `-` (stdout) where `stdout` allows it, else a file whose folder exists and
/// which can be opened for writing. A file that did not exist is removed again.
pub fn check_output(opt: &str, path: Option<&Path>, stdout: bool) -> Result<()> {
    let Some(path) = path else { return Ok(()) };
    if path == Path::new("-") {
        if stdout {
            return Ok(());
        }
        bail!("{opt} -: only --json can write to stdout; give a file path");
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!(
            "{opt} {}: the folder {} does not exist",
            path.display(),
            dir.display()
        );
    }
    // Only a path that is absent or a regular file is test-opened: opening a FIFO would look
    // like a finished writer to its reader, and `exists()` on a dangling symlink says no, so
    // the test file would be made at its target and the link removed. Others (a FIFO, a
    // device, a symlink) are left for the real write to report.
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => bail!("{opt} {}: is a folder, not a file", path.display()),
        Ok(m) if m.is_file() => {
            fs::OpenOptions::new()
                .append(true)
                .open(path)
                .with_context(|| format!("{opt} {}: cannot write", path.display()))?;
        }
        Ok(_) => {}
        Err(_) => {
            fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .with_context(|| format!("{opt} {}: cannot write", path.display()))?;
            let _ = fs::remove_file(path);
        }
    }
    Ok(())
}

/// Creates `dir` if needed and checks that a file can be written there (before any work).
pub fn check_dir_writable(opt: &str, dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("{opt} {}: cannot create", dir.display()))?;
    let probe = dir.join(format!(".taskpools-probe-{}", std::process::id()));
    fs::write(&probe, b"")
        .with_context(|| format!("{opt} {}: cannot write there", dir.display()))?;
    let _ = fs::remove_file(&probe);
    Ok(())
}
