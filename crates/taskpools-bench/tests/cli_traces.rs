//! Schedule traces from the `taskpools` binary: `--trace` files (Chrome trace-event JSON,
//! Gantt charts) and their summary by `taskpools trace`.

mod common;

use common::{refused, taskpools, SMALL_PLACES};

/// `places --trace` writes a Chrome trace-event file that parses, with the fields the format
/// needs on every event, Gantt charts, and `taskpools trace` summarizes it.
#[test]
fn traces_are_written_as_chrome_json_and_gantt_charts_and_summarized() {
    let dir = std::env::temp_dir().join(format!("taskpools-trace-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("t.json");
    let out = taskpools(
        &[
            SMALL_PLACES,
            &["--no-policies", "--trace", file.to_str().unwrap()],
        ]
        .concat(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let mut begins = 0;
    let mut ends = 0;
    for e in events {
        let ph = e["ph"].as_str().expect("every event has a phase");
        assert!(e["pid"].is_u64(), "{e}");
        if ph != "M" {
            assert!(e["ts"].is_f64() || e["ts"].is_u64(), "{e}");
            assert!(e["tid"].is_u64(), "{e}");
        }
        match ph {
            "B" => begins += 1,
            "E" => ends += 1,
            "M" | "s" | "f" | "i" => {}
            other => panic!("unexpected phase {other}"),
        }
    }
    assert!(
        begins > 100 && begins == ends,
        "{begins} begins, {ends} ends"
    );
    // 3 benchmarks x (4 localities on places + the runtime without places), and the 6
    // working-phase rows of Cache Stress.
    let pids: std::collections::BTreeSet<u64> =
        events.iter().map(|e| e["pid"].as_u64().unwrap()).collect();
    assert_eq!(pids.len(), 21);
    let gantt = dir.join("t.gantt");
    let svgs: Vec<_> = std::fs::read_dir(&gantt).unwrap().flatten().collect();
    assert_eq!(svgs.len(), 21);
    for f in &svgs {
        let s = std::fs::read_to_string(f.path()).unwrap();
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains("worker 1") && s.matches("<rect").count() > 3);
    }
    let out = taskpools(&["trace", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("mergesort / places 2x1 / worst") && s.contains("busy %"),
        "{s}"
    );
    refused(&["trace", "/nonexistent.json"], "reading /nonexistent.json");
    std::fs::write(dir.join("bad.json"), "{\"x\":1}").unwrap();
    refused(
        &["trace", dir.join("bad.json").to_str().unwrap()],
        "no `traceEvents`",
    );
    refused(&["trace"], "needs a FILE");
    refused(&["places", "--trace", "/nonexistent/dir/t.json"], "--trace");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `synthetic --trace` writes the working phase's schedule (Figure 1 of the task-pool
/// paper): a track per worker with the phase's tasks, steals as flows, puts, idle time; and
/// `taskpools trace` shows the phase over time.
#[test]
fn synthetic_traces_show_the_working_phase() {
    let dir = std::env::temp_dir().join(format!("taskpools-syn-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.json");
    let out = taskpools(&[
        "synthetic",
        "--k",
        "13",
        "--f",
        "20",
        "--threads",
        "2",
        "--reps",
        "1",
        "--pool",
        "private-public,steal-half",
        "--trace",
        file.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let count = |name: &str| events.iter().filter(|e| e["name"] == name).count();
    // P(13) = 1 957 tasks per configuration, two configurations.
    assert_eq!(count("pool") + count("pool-steal"), 2 * 1957);
    assert!(count("put") > 2 * 1000, "{}", count("put"));
    assert!(count("idle") >= 4, "each worker idles at least at the end");
    let svgs = std::fs::read_dir(dir.join("s.gantt")).unwrap().count();
    assert_eq!(svgs, 2);
    let out = taskpools(&["trace", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("the working phase over time") && s.contains("phase idle %"),
        "{s}"
    );
    assert!(!s.contains("note: put"), "puts are not notes: {s}");
    refused(
        &["synthetic", "--trace", "/nonexistent/dir/t.json"],
        "--trace",
    );
    let _ = std::fs::remove_dir_all(&dir);
}
