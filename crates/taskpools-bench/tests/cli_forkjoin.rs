//! The fork-join experiments of the `taskpools` binary: `forkjoin`, `queens` and `blocked`.

mod common;

use common::taskpools;

/// The rows per kernel and thread count of the peers in processes of their own that this
/// build made (`--peers all` runs them): tbb task_group and tbb parallel_invoke, libomp tasks.
fn process_peer_rows() -> usize {
    let built = |exe: &str| usize::from(!exe.is_empty());
    2 * built(env!("TASKPOOLS_PEER_TBB")) + built(env!("TASKPOOLS_PEER_LIBOMP"))
}

#[test]
fn forkjoin_compares_with_rayon_and_checks_results() {
    let out = taskpools(&[
        "forkjoin",
        "--fib",
        "18",
        "--tree-depth",
        "10",
        "--reps",
        "1",
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let recs = v.as_array().unwrap();
    // 5 kernels x (sequential + calls + ceiling x2 + 5 runtimes (2 pools, rayon, chili, forte)
    // x 2 thread counts, and the process peers' rows x 2 thread counts); each result was
    // checked against the sequential one (the run fails otherwise).
    assert_eq!(recs.len(), 5 * (13 + 2 * process_peer_rows()));
    let calls: Vec<_> = recs.iter().filter(|r| r["runtime"] == "calls").collect();
    assert_eq!(calls.len(), 5);
    for r in calls {
        assert!(r["threads"] == 1 && r["ns_per_join"].is_number() && r["vs_rayon"].is_null());
    }
    for k in ["fib", "tree-sum", "mergesort", "quicksort", "matmul"] {
        assert!(recs.iter().any(|r| r["kernel"] == k), "{k}");
    }
    for pool in ["private-deque", "chase-lev"] {
        let ours: Vec<_> = recs.iter().filter(|r| r["runtime"] == pool).collect();
        assert_eq!(ours.len(), 5 * 2, "{pool}");
        for r in ours {
            assert!(r["vs_rayon"].is_number() && r["speedup_vs_1"].is_number());
            assert!(r["vs_chili"].is_number());
            assert_eq!(r["ns_per_join"].is_number(), r["threads"] == 1);
        }
    }
    // The peers run every kernel at every thread count, in the same run.
    for peer in ["rayon", "chili", "forte"] {
        let rows: Vec<_> = recs.iter().filter(|r| r["runtime"] == peer).collect();
        assert_eq!(rows.len(), 5 * 2, "{peer}");
        for r in rows {
            assert!(r["vs_rayon"].is_null() && r["vs_chili"].is_null(), "{r}");
        }
    }
    assert!(recs
        .iter()
        .any(|r| r["runtime"] == "ceiling" && r["threads"] == 2));
    // One pool by alias; a pool that is not a stealing deque is refused.
    let one = taskpools(&[
        "forkjoin",
        "--fib",
        "12",
        "--tree-depth",
        "6",
        "--sort-len",
        "5000",
        "--matrix",
        "64",
        "--threads",
        "2",
        "--reps",
        "1",
        "--pool",
        "dcwq",
        "--json",
        "-",
    ]);
    assert!(one.status.success());
    let v: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    assert!(v
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["runtime"] != "private-deque"));
    let bad = taskpools(&["forkjoin", "--pool", "sq1"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("work-stealing pools only"));
}

#[test]
fn forkjoin_kernel_selection_and_join_cost_ratio() {
    // Two kernels, in the order given, at 1 thread: every parallel row has its join cost, and
    // rows of ours its ratio to rayon's from the same run where rayon's was measurable.
    let out = taskpools(&[
        "forkjoin",
        "--kernels",
        "tree-sum,fib",
        "--fib",
        "20",
        "--tree-depth",
        "14",
        "--threads",
        "1",
        "--reps",
        "3",
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let recs = v.as_array().unwrap();
    // 2 kernels x (sequential + calls + 2 pools + rayon + chili + forte + the process peers)
    // at 1 thread.
    assert_eq!(recs.len(), 2 * (7 + process_peer_rows()));
    assert_eq!(recs[0]["kernel"], "tree-sum");
    assert_eq!(recs[recs.len() - 1]["kernel"], "fib");
    for r in recs {
        assert_eq!(r["ns_per_join"].is_number(), r["runtime"] != "sequential");
        let ours = r["runtime"] == "private-deque" || r["runtime"] == "chase-lev";
        let rated = ours || r["runtime"] == "calls";
        if !rated {
            assert!(r["join_vs_rayon"].is_null(), "{r}");
            assert!(r["join_vs_chili"].is_null(), "{r}");
        } else if let Some(ratio) = r["join_vs_chili"].as_f64() {
            let chili = recs
                .iter()
                .find(|x| x["kernel"] == r["kernel"] && x["runtime"] == "chili")
                .unwrap();
            let expect =
                r["ns_per_join"].as_f64().unwrap() / chili["ns_per_join"].as_f64().unwrap();
            assert!((ratio - expect).abs() < 1e-9, "{r}");
        }
        if !rated {
            continue;
        }
        if let Some(ratio) = r["join_vs_rayon"].as_f64() {
            // Given only where rayon's joins were measurable (which timing decides), and then
            // it is the quotient of the two per-join costs.
            let rayon = recs
                .iter()
                .find(|x| x["kernel"] == r["kernel"] && x["runtime"] == "rayon")
                .unwrap();
            let expect =
                r["ns_per_join"].as_f64().unwrap() / rayon["ns_per_join"].as_f64().unwrap();
            assert!((ratio - expect).abs() < 1e-9, "{r}");
        }
    }
    let bad = taskpools(&["forkjoin", "--kernels", "fib,nqueens"]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("unknown kernel `nqueens`") && err.contains("tree-sum"),
        "{err}"
    );
    assert!(!err.contains("backtrace"), "one line, no backtrace: {err}");
}

#[test]
fn queens_runs_every_front_end_and_checks_counts() {
    let out = taskpools(&[
        "queens",
        "--n",
        "8",
        "--reps",
        "1",
        "--pool",
        "acr13,dq8",
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let recs = v.as_array().unwrap();
    // sequential + (2 pools, 2 pools with the cutoff, scope and join on ours, rayon and
    // forte, join on chili, scope-cutoff on ours and rayon, and where oneTBB was built its
    // scope and scope-cutoff) x 2 thread counts; every count was checked against the
    // sequential one (the cutoff rows: tasks and nodes counted by plain calls add up to the
    // tree; oneTBB's count came from its own process).
    let tbb = !env!("TASKPOOLS_PEER_QUEENS_TBB").is_empty();
    assert_eq!(recs.len(), 1 + (13 + 2 * usize::from(tbb)) * 2);
    assert_eq!(recs[0]["front_end"], "sequential");
    assert!(recs.iter().all(|r| r["nodes"] == 2057));
    // Task-pool rows count their tasks: every node, or fewer with the cutoff.
    for r in recs.iter().filter(|r| r["front_end"] == "task-pool") {
        let tasks = r["tasks"].as_u64().unwrap();
        if r["runtime"].as_str().unwrap().contains("cutoff") {
            assert!(tasks < 2057, "{r}");
        } else {
            assert_eq!(tasks, 2057, "{r}");
        }
    }
    for (fe, rt) in [
        ("task-pool", "private-deque"),
        ("task-pool", "private-public"),
        ("task-pool", "private-deque cutoff 8"),
        ("task-pool", "private-public cutoff 8"),
        ("scope", "taskpools"),
        ("join", "taskpools"),
        ("scope", "rayon"),
        ("join", "rayon"),
        ("join", "chili"),
        ("scope", "forte"),
        ("join", "forte"),
        ("scope-cutoff", "taskpools"),
        ("scope-cutoff", "rayon"),
    ]
    .into_iter()
    .chain(
        [
            ("scope", "tbb task_group"),
            ("scope-cutoff", "tbb task_group"),
        ]
        .into_iter()
        .filter(|_| tbb),
    ) {
        let rows: Vec<_> = recs
            .iter()
            .filter(|r| r["front_end"] == fe && r["runtime"] == rt)
            .collect();
        assert_eq!(rows.len(), 2, "{fe} {rt}");
        for r in rows {
            assert_eq!(r["ns_per_node"].is_number(), r["threads"] == 1, "{r}");
        }
    }
    // `--cutoff 0`: no cutoff rows.
    let out = taskpools(&[
        "queens", "--n", "6", "--reps", "1", "--pool", "dq8", "--cutoff", "0", "--json", "-",
    ]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let recs = v.as_array().unwrap();
    assert_eq!(recs.len(), 1 + (10 + 2 * usize::from(tbb)) * 2);
    assert!(recs
        .iter()
        .all(|r| !r["runtime"].as_str().unwrap().contains("cutoff")));
    // Where oneTBB's headers are installed, its peer must have been built.
    if common::tbb_installed() {
        assert!(
            tbb,
            "oneTBB is installed, but the queens peer was not built"
        );
    }
    for (args, msg) in [
        (&["queens", "--n", "3"][..], "4 to 16"),
        (&["queens", "--n", "17"][..], "4 to 16"),
        (&["queens", "--pool", "dq99"][..], "dq99"),
        (&["queens", "--threads", "0"][..], "at least 1"),
    ] {
        let bad = taskpools(args);
        assert!(!bad.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&bad.stderr);
        assert!(err.contains(msg), "{args:?}: {err}");
    }
}

#[test]
fn blocked_runs_both_kernels_and_checks_results() {
    let out = taskpools(&[
        "blocked",
        "--reps",
        "1",
        "--lu-blocks",
        "6",
        "--lu-block",
        "8",
        "--grid",
        "64",
        "--grid-block",
        "16",
        "--sweeps",
        "3",
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let recs = v.as_array().unwrap();
    // lu: sequential + 6 variants x 2 thread counts; jacobi: the same + the blocked
    // sequential row. Every result was compared bit for bit with the sequential one.
    assert_eq!(recs.len(), 13 + 14);
    for r in recs {
        let ours = r["runtime"] == "private-deque" || r["runtime"] == "chase-lev";
        assert_eq!(r["speed_vs_chase_lev"].is_number(), ours, "{r}");
        if r["runtime"] != "sequential" {
            assert!(r["spawns"].as_u64().unwrap() > 0, "{r}");
        }
    }
    assert_eq!(
        recs.iter()
            .filter(|r| r["kernel"] == "jacobi" && r["runtime"] != "sequential")
            .map(|r| r["spawns"].as_u64().unwrap())
            .max(),
        Some(3 * 16)
    );
    // One kernel only: the LU's 13 rows; a chase-lev row is its own reference (paired ratio 1).
    let out = taskpools(&[
        "blocked",
        "--kernels",
        "lu",
        "--reps",
        "3",
        "--lu-blocks",
        "6",
        "--lu-block",
        "8",
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let recs = v.as_array().unwrap();
    assert_eq!(recs.len(), 13);
    assert!(recs.iter().all(|r| r["kernel"] == "lu"));
    for r in recs.iter().filter(|r| r["runtime"] == "chase-lev") {
        assert_eq!(r["speed_vs_chase_lev"].as_f64(), Some(1.0), "{r}");
    }
    for (args, msg) in [
        (
            &["blocked", "--grid", "100", "--grid-block", "16"][..],
            "multiple of the block",
        ),
        (&["blocked", "--lu-blocks", "1"][..], "2 to 256"),
        (&["blocked", "--sweeps", "0"][..], "1 to 1000"),
        (
            &["blocked", "--lu-blocks", "256", "--lu-block", "256"][..],
            "at most 2048 MiB",
        ),
        (&["blocked", "--grid", "16384"][..], "at most 2048 MiB"),
        (
            &["blocked", "--grid", "8192", "--grid-block", "4"][..],
            "at most 1024 blocks",
        ),
        (&["blocked", "--threads", "0"][..], "at least 1"),
        (
            &["blocked", "--kernels", "lu,qr"][..],
            "unknown kernel `qr`",
        ),
    ] {
        let bad = taskpools(args);
        assert!(!bad.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&bad.stderr);
        assert!(err.contains(msg), "{args:?}: {err}");
    }
}
