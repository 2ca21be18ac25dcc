//! `taskpools idle`: CPU and wall time per burst against rayon, and its refusals.

mod common;

use common::{json_rows, refused};

#[test]
fn idle_reports_cpu_and_wall_per_burst_for_both_runtimes() {
    let rows = json_rows(&[
        "idle",
        "--periods",
        "2",
        "--duration",
        "0.05",
        "--samples",
        "3",
        "--spin",
        "5",
        "--json",
        "-",
    ]);
    assert_eq!(rows.len(), 2, "{rows:?}");
    let ours = &rows[0];
    assert_eq!(ours["runtime"], "taskpools (spin 5 µs)");
    assert_eq!(rows[1]["runtime"], "rayon");
    for r in &rows {
        assert_eq!(r["period_ms"], 2.0);
        assert_eq!(r["samples"], 3);
        assert!(r["bursts"].as_u64().unwrap() >= 10, "{r}");
        // A burst does about 40 µs of work, so its workers used at least some of that.
        assert!(r["cpu_us"].as_f64().unwrap() > 5.0, "{r}");
        assert!(r["wall_us"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["cpu_min_us"].as_f64() <= r["cpu_max_us"].as_f64(), "{r}");
    }
    assert!(ours["cpu_vs_rayon"].as_f64().unwrap() > 0.0);
    assert!(rows[1]["cpu_vs_rayon"].is_null());
}

#[test]
fn idle_refuses_bad_arguments_at_once() {
    refused(&["idle", "--samples", "2"], "at least 3");
    refused(&["idle", "--periods", "0"], "0.1 to 1000 ms");
    refused(&["idle", "--duration", "100"], "0.05 to 60 seconds");
    refused(&["idle", "--spin", "2000000"], "at most 1,000,000");
    refused(&["idle", "--threads", "0"], "--threads");
    refused(&["idle", "--json", "/no/such/dir/x.json"], "/no/such/dir");
}
