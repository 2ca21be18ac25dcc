//! The peers of `taskpools dataflow` and `taskpools suite` with drivers (C, one shared object
//! per runtime: libgomp, libomp, StarPU) that the workbench runs in child processes of
//! itself. Where the
//! build made a runtime's driver, its rows are there, named by the runtime, and the run
//! checked that the runtime that ran is the one named and that every result equals the
//! sequential program's (the run fails otherwise). On a machine where a runtime is installed,
//! a build that did not make its driver fails here instead of passing untested.

mod common;

use std::process::Command;

use common::{drivers_built, json_rows_and_notes, taskpools, SMALL_SUITE};

const LIBGOMP: &str = env!("TASKPOOLS_DRIVER_LIBGOMP");
const LIBOMP: &str = env!("TASKPOOLS_DRIVER_LIBOMP");
const STARPU: &str = env!("TASKPOOLS_DRIVER_STARPU");

/// The runtimes built, by name.
fn built() -> Vec<&'static str> {
    drivers_built()
}

#[test]
fn every_built_peer_runtime_has_checked_dataflow_rows() {
    let (recs, notes) = json_rows_and_notes(&[
        "dataflow",
        "--tasks",
        "2000",
        "--width",
        "16",
        "--reps",
        "2",
        "--graphs",
        "chains,fan-in-4",
        "--peers",
        "all",
        "--json",
        "-",
    ]);
    for rt in built() {
        for g in ["chains", "fan-in-4"] {
            for t in [1, 2] {
                for v in ["depend", "rows"] {
                    let n = recs
                        .iter()
                        .filter(|r| {
                            r["graph"] == g
                                && r["threads"] == t
                                && r["variant"] == format!("{rt} {v}").as_str()
                        })
                        .inspect(|r| {
                            assert!(
                                r["ns_per_task"].as_f64().is_some_and(|ns| ns > 0.0),
                                "{r}; the run's notes: {notes}"
                            )
                        })
                        .count();
                    assert_eq!(n, 1, "{rt} {v} {g} x{t}; the run's notes: {notes}");
                }
            }
        }
    }
    // Every non-sequential row is compared with the fastest `depend` row, where there is one.
    if !built().is_empty() {
        assert!(
            recs.iter()
                .filter(|r| r["variant"] != "sequential")
                .all(|r| r["vs_openmp_depend"].is_f64()),
            "a row without its ratio to the fastest depend row; the run's notes: {notes}"
        );
    }
}

#[test]
fn every_built_peer_runtime_has_checked_suite_rows() {
    let args: Vec<&str> = ["suite", "--reps", "1", "--threads", "2"]
        .into_iter()
        .chain(SMALL_SUITE.iter().copied())
        .chain(["--json", "-"])
        .collect();
    let (recs, notes) = json_rows_and_notes(&args);
    for rt in built() {
        for (b, construct) in [
            ("black-scholes", "tasks"),
            ("cholesky", "depend"),
            ("heat", "depend"),
            ("lu", "depend"),
            ("matmul", "tasks"),
            ("mergesort", "tasks"),
        ] {
            if rt == "starpu" && construct == "tasks" {
                // StarPU runs the programs with dependences only.
                assert!(!recs
                    .iter()
                    .any(|r| r["bench"] == b && r["variant"] == "starpu tasks"));
                continue;
            }
            let v = format!("{rt} {construct}");
            assert!(
                recs.iter()
                    .any(|r| r["bench"] == b && r["variant"] == v.as_str() && r["ms"].is_f64()),
                "{v} {b}: no row with a time; the run's notes: {notes}"
            );
        }
    }
    assert!(
        recs.iter()
            .filter(|r| r["variant"] != "sequential")
            .all(|r| r["vs_best_peer"].is_f64()),
        "a row without its ratio to the best peer; the run's notes: {notes}"
    );
}

/// Whether `compiler` compiles and links a program with `flags` (an OpenMP runtime is
/// installed for it).
fn compiles(compiler: &str, flags: &[&str]) -> bool {
    let dir = std::env::temp_dir().join(format!("taskpools-omp-probe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!("{compiler}.c"));
    std::fs::write(
        &src,
        "#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n",
    )
    .unwrap();
    let ok = Command::new(compiler)
        .args(flags)
        .arg(&src)
        .arg("-o")
        .arg(dir.join(format!("{compiler}.out")))
        .output()
        .is_ok_and(|o| o.status.success());
    let _ = std::fs::remove_dir_all(&dir);
    ok
}

#[test]
fn an_installed_peer_runtime_has_its_driver_built() {
    if compiles("gcc", &["-fopenmp"]) {
        assert!(
            !LIBGOMP.is_empty(),
            "gcc -fopenmp works here, but the libgomp driver was not built"
        );
    }
    let libomp_dir = (11..=20)
        .map(|v| format!("/usr/lib/llvm-{v}/lib"))
        .find(|d| std::path::Path::new(d).join("libomp.so").exists());
    if let Some(d) = libomp_dir {
        let l = format!("-L{d}");
        if compiles("clang", &["-fopenmp=libomp", &l]) {
            assert!(
                !LIBOMP.is_empty(),
                "clang and libomp are installed, but the libomp driver was not built"
            );
        }
    }
    let starpu = Command::new("pkg-config")
        .args(["--exists", "starpu-1.3"])
        .status()
        .is_ok_and(|s| s.success());
    if starpu {
        assert!(
            !STARPU.is_empty(),
            "StarPU 1.3 is installed (pkg-config), but its driver was not built"
        );
    }
}

#[test]
fn a_malformed_peer_job_is_one_clear_line() {
    for (job, says) in [
        ("{", "malformed job"),
        (
            r#"{"runtime":"icc","threads":1,"pin":false,"experiment":"suite","work":{}}"#,
            "unknown runtime `icc`",
        ),
    ] {
        let out = taskpools(&["peer-run", job]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{err}");
    }
    if let Some(rt) = built().first() {
        let job = format!(
            r#"{{"runtime":"{rt}","threads":2,"pin":false,"experiment":"dataflow","work":{{"graph":"chains","tasks":0,"width":16,"rows":false}}}}"#
        );
        let out = taskpools(&["peer-run", &job]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("out of range"), "{err}");
    }
}
