//! What the CLI test files share: running the `taskpools` binary, checking that input is
//! refused at once, and a small `places` run. Each test file uses part of it.

#![allow(dead_code)]

use std::process::Command;

pub fn taskpools(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_taskpools"))
        .args(args)
        .output()
        .expect("run taskpools")
}

/// Runs `taskpools` with `args` (which write JSON to stdout, `--json -`), which must succeed
/// (else the test fails with its stderr), and returns the JSON rows.
pub fn json_rows(args: &[&str]) -> Vec<serde_json::Value> {
    json_rows_and_notes(args).0
}

/// [`json_rows`], with what the run printed on stderr (a peer runtime left out of the run
/// says why there: a test that misses its rows shows it).
pub fn json_rows_and_notes(args: &[&str]) -> (Vec<serde_json::Value>, String) {
    let out = taskpools(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let rows = serde_json::from_slice(&out.stdout).expect("JSON rows on stdout");
    let notes = if stderr.trim().is_empty() {
        "(none)".to_string()
    } else {
        stderr
    };
    (rows, notes)
}

/// Runs `taskpools` with `args`, which must be refused before any work starts: a non-zero exit
/// within a second, one line on stderr containing `expect` (the limit), no panic or backtrace.
pub fn refused(args: &[&str], expect: &str) {
    let t0 = std::time::Instant::now();
    let out = taskpools(args);
    assert_refused(args, expect, out, t0.elapsed());
}

/// [`refused`] for input that once made `taskpools` allocate without bound: it runs with its
/// address space limited to 2 GiB (`ulimit -v`), so that a regression fails on an allocation
/// instead of taking the machine's memory.
pub fn refused_within_2gib(args: &[&str], expect: &str) {
    let t0 = std::time::Instant::now();
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 2097152 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_taskpools"))
        .args(args)
        .output()
        .expect("run taskpools under sh");
    assert_refused(args, expect, out, t0.elapsed());
}

fn assert_refused(
    args: &[&str],
    expect: &str,
    out: std::process::Output,
    elapsed: std::time::Duration,
) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: one line: {err}"
    );
    assert!(err.starts_with("error: "), "{args:?}: {err}");
    assert!(err.contains(expect), "{args:?}: `{expect}` not in: {err}");
    assert!(
        !err.contains("panicked") && !err.to_lowercase().contains("backtrace"),
        "{args:?}: {err}"
    );
    assert!(
        elapsed < std::time::Duration::from_secs(5),
        "{args:?} took {elapsed:?}: the check must come before the work"
    );
}

/// `taskpools places` at sizes that run in well under a second.
pub const SMALL_PLACES: &[&str] = &[
    "places",
    "--places",
    "2x1",
    "--reps",
    "1",
    "--cache-mb",
    "1",
    "--passes",
    "1",
    "--sort-n",
    "65536",
    "--sorters-per-worker",
    "64",
    "--mat-n",
    "128",
    "--mat-leaf",
    "32",
];

/// Whether oneTBB's headers are installed (`libtbb-dev`): its peers must then have been built.
pub fn tbb_installed() -> bool {
    [
        "/usr/include/oneapi/tbb/task_group.h",
        "/usr/include/tbb/task_group.h",
    ]
    .iter()
    .any(|p| std::path::Path::new(p).exists())
}

/// Whether clang++ and LLVM's OpenMP runtime are installed (`libomp-dev clang`): the libomp
/// peers must then have been built.
pub fn libomp_installed() -> bool {
    let clang = Command::new("clang++")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    clang && std::path::Path::new("/usr/lib/llvm-14/lib/libomp.so").exists()
}

/// `taskpools suite`'s sizes for tests: every benchmark in milliseconds, with several tiles,
/// bands, levels and blocks.
pub const SMALL_SUITE: &[&str] = &[
    "--options",
    "5000",
    "--cholesky-n",
    "64",
    "--cholesky-tile",
    "16",
    "--heat-n",
    "64",
    "--heat-steps",
    "5",
    "--heat-band",
    "8",
    "--heat-tile",
    "24",
    "--lu-n",
    "64",
    "--lu-tile",
    "16",
    "--matmul-n",
    "64",
    "--matmul-leaf",
    "16",
    "--sort-n",
    "10000",
    "--sort-leaf",
    "100",
];

/// The peer runtimes whose drivers (`dataflow`, `suite`) the build script built, by name.
#[allow(dead_code)] // not every test binary that shares this module uses it
pub fn drivers_built() -> Vec<&'static str> {
    [
        ("libgomp", env!("TASKPOOLS_DRIVER_LIBGOMP")),
        ("libomp", env!("TASKPOOLS_DRIVER_LIBOMP")),
        ("starpu", env!("TASKPOOLS_DRIVER_STARPU")),
    ]
    .into_iter()
    .filter(|(_, p)| !p.is_empty())
    .map(|(n, _)| n)
    .collect()
}
