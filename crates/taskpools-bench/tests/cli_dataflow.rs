//! The data-flow experiments of the `taskpools` binary: `dataflow` and `suite`.

mod common;

use common::{drivers_built, refused, taskpools, SMALL_SUITE};

/// The OpenMP runtimes whose drivers the build script built.
fn openmp_built() -> usize {
    drivers_built().iter().filter(|r| **r != "starpu").count()
}

/// Whether the StarPU driver was built.
fn starpu_built() -> usize {
    usize::from(drivers_built().contains(&"starpu"))
}

#[test]
fn dataflow_runs_every_graph_and_variant_and_checks_results() {
    let out = taskpools(&[
        "dataflow", "--tasks", "3000", "--width", "16", "--reps", "1", "--json", "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let recs = v.as_array().unwrap();
    // Per graph: sequential + 4 data-flow variants (three tables, and priorities) and one
    // `depend` per peer runtime built (libgomp, libomp, StarPU), x 2 thread counts (+ 3 row
    // variants and one per peer runtime, x 2, on the four graphs with rows; random and
    // accumulate have none; + ours commutative and one commutative row per peer runtime, x 2,
    // on accumulate; + ours reduction (per bin and over all bins), atomics and per-task copies
    // and one reduction row per peer runtime, x 2, on accumulate). Every result was checked
    // against the sequential one.
    let p = openmp_built() + starpu_built();
    assert_eq!(
        recs.len(),
        6 + 6 * (4 + p) * 2 + 4 * (3 + p) * 2 + (1 + p) * 2 + (4 + p) * 2
    );
    assert!(recs.iter().any(|r| r["variant"] == "dataflow priorities"));
    let commutes = |v: &str| {
        v == "dataflow commutative" || v.ends_with(" mutexinoutset") || v == "starpu commute"
    };
    assert_eq!(
        recs.iter()
            .filter(|r| r["graph"] == "accumulate" && commutes(r["variant"].as_str().unwrap()))
            .count(),
        (1 + p) * 2
    );
    let reduces =
        |v: &str| v == "dataflow reduction" || v.ends_with(" in_reduction") || v == "starpu redux";
    assert_eq!(
        recs.iter()
            .filter(|r| r["graph"] == "accumulate" && reduces(r["variant"].as_str().unwrap()))
            .count(),
        (1 + p) * 2
    );
    for g in [
        "independent",
        "chains",
        "fan-in-2",
        "fan-in-4",
        "random",
        "accumulate",
    ] {
        assert!(recs
            .iter()
            .any(|r| r["graph"] == g && r["variant"] == "dataflow b64" && r["threads"] == 2));
    }
    // Every row has a figure (a peer that was not built has no row).
    assert!(recs.iter().all(|r| r["ns_per_task"].is_f64()), "{v}");
}

#[test]
fn dataflow_bad_input_is_refused_at_once() {
    refused(&["dataflow", "--width", "2"], "--width 2");
    refused(&["dataflow", "--tasks", "0"], "--tasks 0");
    refused(&["dataflow", "--tasks", "20000000"], "--tasks 20000000");
    refused(&["dataflow", "--graphs", "tree"], "unknown graph `tree`");
    refused(&["dataflow", "--reps", "0"], "--reps 0");
}

#[test]
fn suite_runs_every_benchmark_and_variant_and_writes_figures() {
    let dir = std::env::temp_dir().join(format!("taskpools-suite-{}", std::process::id()));
    let (plots, trace) = (
        dir.to_str().unwrap().to_string(),
        dir.join("trace.json").to_str().unwrap().to_string(),
    );
    let args: Vec<&str> = ["suite", "--reps", "1"]
        .into_iter()
        .chain(SMALL_SUITE.iter().copied())
        .chain(["--plot-dir", &plots, "--trace", &trace, "--json", "-"])
        .collect();
    let out = taskpools(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let recs = v.as_array().unwrap();
    // The traced data-flow runs: a task graph per benchmark, the critical path marked, and
    // the summary's available parallelism. Heat's 5 steps over 8 bands make a critical path
    // of one task per step.
    for (k, b) in [
        "black-scholes",
        "cholesky",
        "heat",
        "lu",
        "matmul",
        "mergesort",
    ]
    .iter()
    .enumerate()
    {
        let f = dir.join(format!("trace.dot/{:02}-{b}-dataflow-x2.dot", k + 1));
        let dot = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(
            dot.starts_with("digraph") && dot.contains("color=red"),
            "{b}"
        );
        assert!(dir
            .join(format!("trace.gantt/{:02}-{b}-dataflow-x2.svg", k + 1))
            .exists());
    }
    let sum = taskpools(&["trace", dir.join("trace.json").to_str().unwrap()]);
    let sum = String::from_utf8_lossy(&sum.stdout);
    let heat = sum
        .lines()
        .skip_while(|l| !l.starts_with("== heat"))
        .find(|l| l.contains("data-flow:"))
        .unwrap_or_else(|| panic!("{sum}"));
    // The span is at most the work (tiny tasks: the root's spawning may be most of it).
    let parallelism: f64 = heat
        .rsplit("available parallelism ")
        .next()
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("{heat}"));
    assert!(parallelism >= 0.99, "{heat}");
    // Per benchmark: sequential + its variants at 1 and 2 threads; every result was checked
    // against the sequential one (a mismatch fails the run).
    // OpenMP runs all six, StarPU those with dependences; Cholesky has a variant with
    // priorities, ours and OpenMP's, and two on two levels of tiles (strong and weak nesting).
    let (p, s) = (openmp_built(), starpu_built());
    let variants = [
        ("black-scholes", 3 + p),
        ("cholesky", 5 + 2 * p + s),
        ("heat", 9 + p + s),
        ("lu", 2 + p + s),
        ("matmul", 3 + p),
        ("mergesort", 3 + p),
    ];
    assert_eq!(
        recs.len(),
        variants.iter().map(|(_, v)| 1 + 2 * v).sum::<usize>()
    );
    for (b, _) in variants {
        assert!(recs
            .iter()
            .any(|r| r["bench"] == b && r["variant"] == "dataflow" && r["threads"] == 2));
        assert!(dir.join(format!("suite-{b}.svg")).exists(), "{b}");
    }
    assert!(recs
        .iter()
        .all(|r| r["ms"].is_f64() && r["speedup"].is_f64()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn suite_bad_input_is_refused_at_once() {
    refused(&["suite", "--bench", "fft"], "unknown benchmark `fft`");
    refused(&["suite", "--heat-tile", "0"], "--heat-tile 0");
    refused(
        &["suite", "--cholesky-n", "1000", "--cholesky-tile", "128"],
        "--cholesky-tile 128 must divide --cholesky-n 1000",
    );
    refused(&["suite", "--matmul-n", "768"], "--matmul-n 768");
    refused(&["suite", "--heat-band", "0"], "--heat-band 0");
    refused(&["suite", "--lu-n", "100000"], "--lu-n 100000");
    refused(&["suite", "--lut", "fuzzy"], "--lut fuzzy");
    refused(&["suite", "--lut-block", "0"], "--lut-block");
    refused(&["suite", "--reps", "0"], "--reps 0");
    refused(&["suite", "--threads", "0"], "--threads");
    refused(&["suite", "--json", "/nonexistent/dir/x.json"], "--json");
    // An existing directory that cannot be written: refused before the run, not after it.
    refused(
        &["suite", "--plot-dir", "/sys/kernel"],
        "--plot-dir /sys/kernel",
    );
    refused(&["suite", "--options", "100000000"], "--options 100000000");
    refused(&["suite", "--peers", "icc"], "unknown runtime 'icc'");
}
