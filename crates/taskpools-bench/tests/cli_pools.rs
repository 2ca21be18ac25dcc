//! `taskpools deque` and `taskpools manber`: the deque micro-benchmark and Manber's
//! concurrent pool.

mod common;

use common::taskpools;

#[test]
fn deque_benchmark_json_has_every_row_and_latencies() {
    let out = taskpools(&[
        "deque",
        "--ops",
        "4000",
        "--reps",
        "1",
        "--threads",
        "2",
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON only");
    let recs = v.as_array().unwrap();
    let rows = [
        "chase-lev (fixed)",
        "chase-lev (grows)",
        "fcdq (fixed)",
        "spin lock (fixed)",
        "mutex (fixed)",
        "crossbeam-deque (grows)",
    ];
    assert_eq!(
        recs.len(),
        rows.len() * 2,
        "one throughput and one latency record per row"
    );
    for row in rows {
        let tp = recs
            .iter()
            .find(|r| r["deque"] == row && r["experiment"] == "deque-throughput")
            .unwrap_or_else(|| panic!("{row}"));
        assert!(tp["median_mops"].as_f64().unwrap() > 0.0);
        let s = tp["success"].as_f64().unwrap();
        assert!(s > 0.0 && s <= 1.0);
        // Successful operations per second: no more than all operations per second (within
        // rounding of the medians, taken over the runs separately), and within their range.
        let ok = tp["median_success_mops"].as_f64().unwrap();
        assert!(
            ok > 0.0 && ok <= tp["max_mops"].as_f64().unwrap() * 1.000001,
            "{row}"
        );
        let (lo, hi) = (
            tp["min_success_mops"].as_f64().unwrap(),
            tp["max_success_mops"].as_f64().unwrap(),
        );
        assert!(lo <= ok && ok <= hi, "{row}");
        let lat = recs
            .iter()
            .find(|r| r["deque"] == row && r["experiment"] == "deque-latency")
            .unwrap();
        assert!(lat["push_pop_ns"].as_f64().unwrap() > 0.0);
    }
    let cb = recs
        .iter()
        .find(|r| r["deque"] == "crossbeam-deque (grows)" && r["experiment"] == "deque-throughput")
        .unwrap();
    assert_eq!(cb["vs_crossbeam"].as_f64(), Some(1.0));
    assert_eq!(cb["vs_crossbeam_success"].as_f64(), Some(1.0));
    let bad = taskpools(&["deque", "--threads", "1"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("at least 2"));
}

#[test]
fn manber_writes_points_and_the_paper_figures() {
    let dir = std::env::temp_dir().join(format!("taskpools-manber-{}", std::process::id()));
    let json = dir.join("m.json");
    std::fs::create_dir_all(&dir).unwrap();
    let out = taskpools(&[
        "manber",
        "--participants",
        "4",
        "--ops",
        "800",
        "--fill",
        "5",
        "--mixes",
        "20,80",
        "--producer-step",
        "2",
        "--trials",
        "2",
        "--json",
        json.to_str().unwrap(),
        "--plot-dir",
        dir.to_str().unwrap(),
        "--trace",
        dir.join("t.json").to_str().unwrap(),
        "--waiting",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("segments per steal") && table.contains("balanced producers"));
    // The sampled trials' traces (their replayed segment sizes were checked against the
    // pool's at the end of each trial, hand-offs of the waiting mode included): four
    // processes, each with the over-time table.
    let sum = taskpools(&["trace", dir.join("t.json").to_str().unwrap()]);
    assert!(
        sum.status.success(),
        "{}",
        String::from_utf8_lossy(&sum.stderr)
    );
    let sum = String::from_utf8(sum.stdout).unwrap();
    assert_eq!(sum.matches("== manber").count(), 4, "{sum}");
    assert_eq!(
        sum.matches("the working phase over time").count(),
        4,
        "{sum}"
    );
    // The replayed series start empty and reach the initial fill (5) at time 0, before any
    // operation.
    let samples: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("segment-samples.json")).unwrap())
            .unwrap();
    for s in samples.as_array().unwrap() {
        for seg in s["segments"].as_array().unwrap() {
            let at0: Vec<u64> = seg
                .as_array()
                .unwrap()
                .iter()
                .take_while(|p| p[0].as_f64() == Some(0.0))
                .map(|p| p[1].as_u64().unwrap())
                .collect();
            assert_eq!(at0, [0, 1, 2, 3, 4, 5], "{seg}");
        }
    }
    assert_eq!(
        std::fs::read_dir(dir.join("t.gantt")).unwrap().count(),
        4,
        "a Gantt chart per sampled trial"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let recs = v.as_array().unwrap();
    // 3 strategies x (2 mixes + producers 0, 2, 4 contiguous + 2 balanced)
    assert_eq!(recs.len(), 3 * (2 + 3 + 1));
    for r in recs {
        for key in [
            "search",
            "workload",
            "add_ns",
            "remove_ns",
            "steal_fraction",
            "segments_per_steal",
            "elements_per_steal",
        ] {
            assert!(r.get(key).is_some(), "{key}");
        }
    }
    for f in [
        "fig5-op-time-vs-mix-p4.svg",
        "fig10-elements-per-steal-p4.svg",
        "segments-linear-producers-contiguous.svg",
        "segments-tree-producers-balanced.svg",
        "segment-samples.json",
    ] {
        assert!(dir.join(f).exists(), "{f}");
    }
    std::fs::remove_dir_all(dir).ok();
    let bad = taskpools(&["manber", "--search", "spiral"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown search strategy"));
}
