//! `taskpools places`: the locality benchmarks, their sections, and bad input.

mod common;

use common::{refused, taskpools, SMALL_PLACES};

#[test]
fn places_runs_every_benchmark_variant_and_section() {
    let dir = std::env::temp_dir().join(format!("taskpools-places-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("places.json");
    let out = taskpools(&[SMALL_PLACES, &["--json", json.to_str().unwrap()]].concat());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for s in [
        "Locality variants",
        "Cache Stress as a working phase",
        "shared deque per place",
        "steal policies",
    ] {
        assert!(stdout.contains(s), "`{s}` missing:\n{stdout}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = v.as_array().unwrap();
    // 3 benchmarks x 6 rows, 6 working-phase rows, 3 x 5 claims rows, 4 + 4 policy rows.
    assert_eq!(rows.len(), 18 + 6 + 15 + 8, "{rows:?}");
    // The working-phase rows count every hinted leaf once (2 workers x 8 tasks), at its place
    // or away from it, and no leaf of the unhinted rows.
    let phase: Vec<_> = rows.iter().filter(|r| r["section"] == "phase").collect();
    assert_eq!(phase.len(), 6);
    for r in phase {
        let placed = r["local_tasks"].as_u64().unwrap() + r["remote_tasks"].as_u64().unwrap();
        let hinted =
            r["config"].as_str().unwrap().ends_with("hinted phase") && r["locality"] != "ignorant";
        assert_eq!(placed, if hinted { 16 } else { 0 }, "{r}");
    }
    for loc in ["best", "worst", "ignorant", "random"] {
        for b in ["cache-stress", "mergesort", "matmul"] {
            assert!(
                rows.iter().any(|r| r["locality"] == loc && r["bench"] == b),
                "{b} {loc}"
            );
        }
    }
    // The best-locality rows are the reference of their benchmark.
    for r in rows
        .iter()
        .filter(|r| r["section"] == "locality" && r["locality"] == "best")
    {
        assert!(r["config"].as_str().unwrap().starts_with("places"));
        assert!((r["vs_ref"].as_f64().unwrap() - 1.0).abs() < 1e-12, "{r}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn places_bad_input_is_refused_at_once() {
    refused(&["places", "--places", "1x2"], "at least 2 places");
    refused(&["places", "--places", "0x1"], "at least one place");
    refused(
        &["places", "--places", "{0},{0}"],
        "core 0 is in two places",
    );
    refused(&["places", "--places", "{0,0},{1}"], "listed twice");
    refused(
        &["places", "--places", "{0},{4096}"],
        "core 4096 does not exist",
    );
    refused(&["places", "--places", "{0},{}"], "place 1 is empty");
    refused(&["places", "--places", "numa"], "not a shape");
    refused(&["places", "--bench", "fft"], "unknown benchmark `fft`");
    refused(&["places", "--mat-n", "300"], "--mat-n 300");
    refused(&["places", "--reps", "0"], "--reps");
    refused(
        &["places", "--sort-n", "10", "--places", "2x1"],
        "--sort-n 10",
    );
    refused(&["places", "--json", "/nonexistent/dir/x.json"], "--json");
}
