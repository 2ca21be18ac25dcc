//! The peers that run in processes of their own (`taskpools forkjoin --peers tbb,libomp`):
//! where the build found a runtime, its rows are there, named by the runtime, and every
//! result was checked against the sequential one (the run fails otherwise); where it did not,
//! `--peers NAME` is refused with how to install it. On a machine where the runtime is
//! installed, a build that did not make its peer fails here instead of passing untested.

mod common;

use common::{json_rows, refused};

/// A peer's program as the build script left it (empty: not built).
const TBB: &str = env!("TASKPOOLS_PEER_TBB");
const LIBOMP: &str = env!("TASKPOOLS_PEER_LIBOMP");

fn installed(paths: &[&str]) -> bool {
    paths.iter().any(|p| std::path::Path::new(p).exists())
}

fn run_peers(peers: &str) -> Vec<serde_json::Value> {
    json_rows(&[
        "forkjoin",
        "--kernels",
        "fib,tree-sum,mergesort,quicksort,matmul",
        "--fib",
        "18",
        "--tree-depth",
        "10",
        "--sort-len",
        "100000",
        "--matrix",
        "64",
        "--threads",
        "1,2",
        "--reps",
        "1",
        "--peers",
        peers,
        "--json",
        "-",
    ])
}

/// The rows of `runtime`: one per kernel and thread count.
fn check_rows(recs: &[serde_json::Value], runtime: &str) {
    for k in ["fib", "tree-sum", "mergesort", "quicksort", "matmul"] {
        for t in [1, 2] {
            let n = recs
                .iter()
                .filter(|r| r["runtime"] == runtime && r["kernel"] == k && r["threads"] == t)
                .inspect(|r| {
                    let s = r["median_s"].as_f64().unwrap();
                    assert!(s > 0.0 && s.is_finite(), "{r}");
                })
                .count();
            assert_eq!(n, 1, "{runtime} {k} x{t}");
        }
    }
}

#[test]
fn tbb_rows_or_the_install_hint() {
    if TBB.is_empty() {
        assert!(
            !installed(&[
                "/usr/include/oneapi/tbb/task_group.h",
                "/usr/include/tbb/task_group.h"
            ]),
            "oneTBB is installed but the build did not make its peer (see build.rs)"
        );
        refused(
            &["forkjoin", "--peers", "tbb"],
            "apt-get install libtbb-dev",
        );
        return;
    }
    let recs = run_peers("tbb");
    check_rows(&recs, "tbb task_group");
    check_rows(&recs, "tbb parallel_invoke");
    assert!(!recs.iter().any(|r| r["runtime"] == "libomp tasks"));
}

#[test]
fn libomp_rows_or_the_install_hint() {
    if LIBOMP.is_empty() {
        let clang = std::process::Command::new("clang++")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            !(clang && installed(&["/usr/lib/llvm-14/lib/libomp.so"])),
            "clang and libomp are installed but the build did not make the libomp peer"
        );
        refused(
            &["forkjoin", "--peers", "libomp"],
            "apt-get install libomp-dev",
        );
        return;
    }
    let recs = run_peers("libomp");
    check_rows(&recs, "libomp tasks");
    // Its rows carry the usual figures: speedups against the same run's sequential program.
    for r in recs.iter().filter(|r| r["runtime"] == "libomp tasks") {
        assert!(r["speedup_vs_seq"].as_f64().unwrap() > 0.0, "{r}");
    }
}

#[test]
fn both_peers_in_one_run_beside_rayon() {
    if TBB.is_empty() || LIBOMP.is_empty() {
        return; // each is tested on its own above, with its install hint
    }
    let recs = run_peers("rayon,tbb,libomp");
    for rt in [
        "rayon",
        "tbb task_group",
        "tbb parallel_invoke",
        "libomp tasks",
    ] {
        check_rows(&recs, rt);
    }
}

#[test]
fn the_peer_programs_refuse_bad_arguments_with_one_line() {
    for exe in [TBB, LIBOMP].into_iter().filter(|e| !e.is_empty()) {
        for args in [
            &["fob", "1", "1", "10", "0"][..],
            &["fib", "0", "1", "10", "0"],
            &["fib", "1", "1", "99", "0"],
            &["matmul", "1", "1", "48", "0"],
            &["fib", "1", "1", "10", "2"],
            &["fib", "1"],
        ] {
            let out = std::process::Command::new(exe).args(args).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{exe} {args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{exe} {args:?}: {err}");
        }
    }
}
