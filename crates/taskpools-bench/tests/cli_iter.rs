//! `taskpools iter`: every kernel on the sequential loop, stock rayon and rayon on taskpools
//! (the two kernel programs, built here with `--build` when missing or stale), and on the
//! peers the build made (oneTBB, libomp), every result checked against the sequential one; a
//! wrong result refused, and bad input refused at once. On a machine where a peer's runtime is
//! installed, a build that did not make its program fails here instead of passing untested.

#![cfg(unix)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use common::{json_rows, libomp_installed, refused, taskpools, tbb_installed};

/// The peers' programs as the build script left them (empty: not built).
const TBB: &str = env!("TASKPOOLS_ITER_PEER_TBB");
const LIBOMP: &str = env!("TASKPOOLS_ITER_PEER_LIBOMP");

/// The peers built, as the first word of their rows' runtime.
fn peers() -> Vec<&'static str> {
    [("tbb", TBB), ("libomp", LIBOMP)]
        .into_iter()
        .filter(|(_, exe)| !exe.is_empty())
        .map(|(name, _)| name)
        .collect()
}

#[test]
fn each_installed_peer_was_built() {
    assert!(
        !(TBB.is_empty() && tbb_installed()),
        "oneTBB is installed but the build did not make the iter peer (see build.rs)"
    );
    assert!(
        !(LIBOMP.is_empty() && libomp_installed()),
        "clang and libomp are installed but the build did not make the iter peer (see build.rs)"
    );
}

#[test]
fn the_peer_programs_refuse_bad_arguments_with_one_line() {
    for exe in [TBB, LIBOMP].into_iter().filter(|e| !e.is_empty()) {
        for args in [
            &["fob", "--threads", "1"][..],
            &["sum-squares"],
            &["sum-squares", "--threads", "0"],
            &["sum-squares", "--threads", "1", "--scale", "5"],
            &["sum-squares", "--threads", "1", "--runs", "x"],
        ] {
            let out = std::process::Command::new(exe).args(args).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{exe} {args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{exe} {args:?}: {err}");
            assert!(err.starts_with("error: "), "{exe} {args:?}: {err}");
        }
    }
}

/// A stand-in for a kernel program: `--info` says `core`; a run answers with the size of
/// sum-squares at scale 1e-4 and a checksum of 0 (a wrong result).
fn fake_bin(name: &str, core: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("taskpools-iter-{name}-{}.sh", std::process::id()));
    let script = format!(
        r#"#!/bin/sh
if [ "$1" = --info ]; then echo '{{"rayon_core":"{core}","max_num_threads":1}}'; exit 0; fi
t=1; [ "$3" = rayon ] && t=$5
echo "{{\"kernel\":\"$1\",\"rayon_core\":\"{core}\",\"runtime\":\"$3\",\"threads\":$t,\"size\":10000,\"times_s\":[0.001],\"checksum\":\"0000000000000000\"}}"
"#
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn iter_runs_every_kernel_on_every_runtime_and_refuses_a_wrong_result() {
    // `--build` runs scripts/build-iter-kernels.sh: incremental, seconds when nothing changed
    // (about 70 s on 2 cores the first time, more when taskpools changed).
    let rows = json_rows(&[
        "iter",
        "--build",
        "--scale",
        "1e-4",
        "--threads",
        "1,2",
        "--invocations",
        "2",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--json",
        "-",
    ]);
    // Per kernel: the sequential row, then at 1 and 2 threads rayon, rayon on taskpools and
    // each peer built.
    let peers = peers();
    let per_threads = 2 + peers.len();
    let per_kernel = 1 + 2 * per_threads;
    assert_eq!(rows.len(), 8 * per_kernel, "{rows:?}");
    let kernels: Vec<&str> = rows
        .iter()
        .step_by(per_kernel)
        .map(|r| r["kernel"].as_str().unwrap())
        .collect();
    assert_eq!(
        kernels,
        [
            "sum-squares",
            "mandelbrot",
            "nbody",
            "wordfreq",
            "sort-u64",
            "sort-strings",
            "filter-collect",
            "flat-map"
        ]
    );
    for (i, r) in rows.iter().enumerate() {
        let (runtime, threads) = match i % per_kernel {
            0 => ("sequential", 1),
            j => {
                let names = [&["rayon", "rayon-on-taskpools"][..], &peers].concat();
                (names[(j - 1) % per_threads], 1 + (j - 1) / per_threads)
            }
        };
        // A peer's rows name it and its construct (`tbb parallel_reduce`).
        let got = r["runtime"].as_str().unwrap();
        if peers.contains(&runtime) {
            assert!(got.starts_with(&format!("{runtime} ")), "{r}");
        } else {
            assert_eq!(got, runtime, "{r}");
        }
        assert_eq!(r["threads"], threads, "{r}");
        assert_eq!(r["invocations"], 2);
        assert_eq!(r["warmup"], 0);
        let (med, min, max) = (
            r["median_s"].as_f64().unwrap(),
            r["min_s"].as_f64().unwrap(),
            r["max_s"].as_f64().unwrap(),
        );
        assert!(0.0 < min && min <= med && med <= max, "{r}");
        assert_eq!(
            r["vs_rayon"].is_null(),
            runtime != "rayon-on-taskpools",
            "{r}"
        );
        assert_eq!(r["vs_sequential"].is_null(), runtime == "sequential", "{r}");
        assert_eq!(
            r["pair_ratio"].is_null(),
            runtime != "rayon-on-taskpools",
            "{r}"
        );
        // Rayon on taskpools against the faster peer, where one ran.
        assert_eq!(
            r["vs_best_peer"].is_null(),
            runtime != "rayon-on-taskpools" || peers.is_empty(),
            "{r}"
        );
        if runtime != "rayon-on-taskpools" {
            continue;
        }
        if !peers.is_empty() {
            let best = r["best_peer"].as_str().unwrap();
            assert!(peers.iter().any(|p| best.starts_with(p)), "{r}");
        }
        let (m, lo, hi) = (
            r["pair_ratio"].as_f64().unwrap(),
            r["pair_ratio_min"].as_f64().unwrap(),
            r["pair_ratio_max"].as_f64().unwrap(),
        );
        assert!(0.0 < lo && lo <= m && m <= hi, "{r}");
    }
    // Only wordfreq counts the pieces rayon cut its work into: at least one per run.
    for r in &rows {
        let counted = r["kernel"] == "wordfreq"
            && (r["runtime"] == "rayon" || r["runtime"] == "rayon-on-taskpools");
        assert_eq!(
            r["pieces"].as_f64().is_some_and(|p| p >= 1.0),
            counted,
            "{r}"
        );
    }
    assert_eq!(rows[0]["size"], 10_000, "sum-squares at scale 1e-4");

    // A stock build whose result differs from the patched one's is an error, not a row.
    let fake = fake_bin("wrong", "rayon");
    let out = taskpools(&[
        "iter",
        "--kernels",
        "sum-squares",
        "--scale",
        "1e-4",
        "--invocations",
        "1",
        "--runs",
        "1",
        "--stock-bin",
        fake.to_str().unwrap(),
        "--json",
        "-",
    ]);
    let _ = std::fs::remove_file(&fake);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(out.stdout.is_empty(), "no rows");
    assert!(
        err.contains("sum-squares: wrong result on rayon-on-taskpools"),
        "{err}"
    );
}

#[test]
fn iter_refuses_bad_input_at_once() {
    refused(&["iter", "--peers", "icc"], "unknown runtime 'icc'");
    refused(&["iter", "--kernels", "sum-squares,quicksort"], "quicksort");
    refused(&["iter", "--scale", "0"], "--scale 0: more than 0");
    refused(&["iter", "--scale", "5"], "at most 4");
    refused(&["iter", "--scale", "NaN"], "--scale NaN");
    refused(
        &["iter", "--invocations", "0"],
        "--invocations 0: 1 to 1000",
    );
    refused(&["iter", "--runs", "5000"], "--runs 5000: 1 to 1000");
    refused(&["iter", "--warmup", "5000"], "--warmup 5000: 0 to 1000");
    refused(&["iter", "--threads", "0"], "--threads");
    refused(&["iter", "--json", "/no/such/dir/x.json"], "/no/such/dir");
    refused(
        &["iter", "--stock-bin", "/no/such/kernels"],
        "--stock-bin /no/such/kernels: not found; build both with scripts/build-iter-kernels.sh",
    );
    // The builds are told apart by what they run on.
    let stock = fake_bin("stock", "rayon");
    let ours = fake_bin("ours", "rayon");
    refused(
        &[
            "iter",
            "--stock-bin",
            stock.to_str().unwrap(),
            "--patched-bin",
            "/no/such/kernels",
        ],
        "--patched-bin /no/such/kernels: not found",
    );
    refused(
        &[
            "iter",
            "--stock-bin",
            stock.to_str().unwrap(),
            "--patched-bin",
            ours.to_str().unwrap(),
        ],
        "runs on rayon-core \"rayon\", expected \"taskpools\"",
    );
    let _ = std::fs::remove_file(&stock);
    let _ = std::fs::remove_file(&ours);
}
