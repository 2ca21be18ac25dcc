//! The `taskpools` binary: listing, a small synthetic run with every output, and errors.

use std::process::Command;

fn taskpools(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_taskpools"))
        .args(args)
        .output()
        .expect("run taskpools")
}

#[test]
fn list_prints_every_pool_and_memory_manager_with_alias() {
    let out = taskpools(&["list"]);
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    for p in taskpools::PoolKind::ALL {
        assert!(s.contains(p.name()) && s.contains(p.alias()), "{p}");
    }
    for m in taskpools::MemKind::ALL {
        assert!(s.contains(m.name()) && s.contains(m.alias()), "{m}");
    }
    let fj = s
        .split("fork-join pools")
        .nth(1)
        .expect("a fork-join section");
    for p in taskpools::forkjoin::Pool::ALL {
        assert!(fj.contains(p.name()) && fj.contains(p.alias()), "{p}");
    }
}

#[test]
fn synthetic_json_to_stdout_has_the_documented_records() {
    let out = taskpools(&[
        "synthetic",
        "--k",
        "14",
        "--f",
        "1",
        "--threads",
        "1,2",
        "--pool",
        "dq8,sq1",
        "--mem",
        "dl",
        "--reps",
        "2",
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty(), "no progress bar with --json -");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON only");
    let recs = v.as_array().unwrap();
    assert_eq!(
        recs.len(),
        1 + 2 * 2,
        "sequential + 2 pools x 2 thread counts"
    );
    for r in recs {
        for key in [
            "experiment",
            "pool",
            "alias",
            "mem",
            "threads",
            "k",
            "f",
            "reps",
            "median_s",
            "min_s",
            "max_s",
            "speedup_vs_seq",
            "tasks",
            "steals",
            "steal_attempts",
        ] {
            assert!(r.get(key).is_some(), "missing {key} in {r}");
        }
        assert_eq!(r["tasks"], taskpools::synthetic::task_count(14), "P(14)");
        assert!(r["min_s"].as_f64() <= r["median_s"].as_f64());
        assert!(r["median_s"].as_f64() <= r["max_s"].as_f64());
    }
    assert_eq!(recs[0]["pool"], "sequential");
    assert!(recs
        .iter()
        .any(|r| r["alias"] == "sq1" && r["mem"] == "dl" && r["threads"] == 2));
}

#[test]
fn synthetic_writes_csv_and_svg_and_prints_a_ranked_table() {
    let dir = std::env::temp_dir().join(format!("taskpools-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (csv, svg) = (dir.join("r.csv"), dir.join("r.svg"));
    let out = taskpools(&[
        "synthetic",
        "--k",
        "12",
        "--f",
        "0",
        "--threads",
        "2",
        "--pool",
        "all",
        "--reps",
        "1",
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("rank") && table.contains("best") && table.contains("sequential"));
    let csv = std::fs::read_to_string(csv).unwrap();
    assert_eq!(csv.lines().count(), 1 + 1 + taskpools::PoolKind::ALL.len());
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("speedup"));
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn bad_input_exits_with_a_clear_message() {
    for (args, needle) in [
        (
            vec!["synthetic", "--pool", "sq3", "--k", "5"],
            "unknown pool `sq3`",
        ),
        (
            vec!["synthetic", "--mem", "cgbk", "--k", "5"],
            "unknown memory manager `cgbk`",
        ),
        (
            vec!["synthetic", "--wake", "never", "--k", "5"],
            "unknown wake-up policy `never`",
        ),
        (
            vec!["synthetic", "--threads", "0", "--k", "5"],
            "at least 1",
        ),
        (vec!["synthetic", "--reps", "0", "--k", "5"], "--reps"),
        (
            vec!["synthetic", "--search", "spiral", "--k", "5"],
            "unknown search strategy `spiral`",
        ),
    ] {
        let out = taskpools(&args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

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
    let bad = taskpools(&["deque", "--threads", "1"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("at least 2"));
}

#[test]
fn manber_writes_points_and_the_seed_figures() {
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
        serde_json::from_str(&std::fs::read_to_string(dir.join("segment_samples.json")).unwrap())
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
        "fig5_op_time_vs_mix_p4.svg",
        "fig10_elements_per_steal_p4.svg",
        "segments_linear_producers-contiguous.svg",
        "segments_tree_producers-balanced.svg",
        "segment_samples.json",
    ] {
        assert!(dir.join(f).exists(), "{f}");
    }
    std::fs::remove_dir_all(dir).ok();
    let bad = taskpools(&["manber", "--search", "spiral"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown search strategy"));
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
    // x 2 thread counts); each result was checked against the sequential one (the run fails
    // otherwise).
    assert_eq!(recs.len(), 5 * 13);
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
    // 2 kernels x (sequential + calls + 2 pools + rayon + chili + forte) at 1 thread.
    assert_eq!(recs.len(), 2 * 7);
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

/// Runs `taskpools` with `args`, which must be refused before any work starts: a non-zero exit
/// within a second, one line on stderr containing `expect` (the limit), no panic or backtrace.
fn refused(args: &[&str], expect: &str) {
    let t0 = std::time::Instant::now();
    let out = taskpools(args);
    let elapsed = t0.elapsed();
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

#[test]
fn sizes_that_cannot_finish_or_fit_are_refused_at_once() {
    refused(&["synthetic", "--k", "64"], "at most 40");
    refused(&["synthetic", "--k", "41"], "at most 40");
    refused(&["synthetic", "--k", "4000000000"], "at most 40");
    refused(&["forkjoin", "--fib", "200"], "at most 45");
    refused(&["forkjoin", "--tree-depth", "40"], "1 GiB");
    refused(&["forkjoin", "--tree-depth", "26"], "depth at most 25");
    refused(
        &["forkjoin", "--sort-len", "99999999999999"],
        "at most 2^28",
    );
    refused(&["forkjoin", "--matrix", "100"], "power of two");
    refused(&["forkjoin", "--matrix", "0"], "power of two");
    refused(&["forkjoin", "--matrix", "4096"], "at most 2048");
    refused(
        &["synthetic", "--k", "30", "--f", "4000000000"],
        "exceeds 2^42",
    );
    refused(&["synthetic", "--k", "40", "--f", "40"], "exceeds 2^42");
    refused(&["deque", "--ops", "0"], "1 to 2^28");
    refused(&["deque", "--ops", "999999999999"], "1 to 2^28");
    refused(&["deque", "--capacity", "1"], "2 to 2^24");
    refused(&["deque", "--capacity", "99999999999"], "2 to 2^24");
    refused(&["manber", "--ops", "1000000000"], "at most 10^8");
    refused(&["manber", "--fill", "99999999"], "exceed 2^26");
    refused(&["manber", "--delay-ns", "5,9999999"], "at most 10^6 ns");
}

#[test]
fn pin_has_one_form_everywhere() {
    for args in [
        &[
            "synthetic",
            "--k",
            "3",
            "--reps",
            "1",
            "--pool",
            "dq8",
            "--threads",
            "1",
        ][..],
        &[
            "forkjoin",
            "--fib",
            "5",
            "--tree-depth",
            "3",
            "--sort-len",
            "64",
            "--matrix",
            "16",
            "--reps",
            "1",
            "--threads",
            "1",
            "--kernels",
            "fib",
        ][..],
    ] {
        for pin in [
            &["--pin"][..],
            &["--pin", "true"][..],
            &["--pin", "false"][..],
        ] {
            let mut a = args.to_vec();
            a.extend_from_slice(pin);
            let out = taskpools(&a);
            assert!(
                out.status.success(),
                "{a:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn thread_counts_out_of_range_or_repeated_are_refused_at_once() {
    for cmd in ["synthetic", "forkjoin", "deque"] {
        refused(&[cmd, "--threads", "99999999999"], "at most 4096");
        refused(&[cmd, "--threads", "100000"], "at most 4096");
        refused(&[cmd, "--threads", "4097"], "at most 4096");
        refused(&[cmd, "--threads", "2,2"], "given twice");
    }
    refused(&["synthetic", "--threads", "0"], "at least 1");
    refused(&["forkjoin", "--threads", "1,0"], "at least 1");
    refused(&["deque", "--threads", "1"], "at least 2");
    refused(&["manber", "--participants", "100000"], "at most 4096");
    refused(&["manber", "--participants", "0"], "at least 1");
    refused(&["manber", "--participants", "4,4"], "given twice");
}

#[test]
fn zero_counts_and_bad_mixes_are_refused_at_once() {
    refused(&["synthetic", "--k", "0"], "at least 1");
    for cmd in ["synthetic", "forkjoin", "deque"] {
        refused(&[cmd, "--reps", "0"], "--reps 0: must be at least 1");
    }
    refused(&["manber", "--producer-step", "0"], "at least 1");
    refused(&["manber", "--trials", "0"], "at least 1");
    refused(&["manber", "--mixes", "0,101"], "at most 100");
}

#[test]
fn unwritable_outputs_are_refused_before_the_run() {
    let dir = std::env::temp_dir().join(format!("taskpools-cli-missing-{}", std::process::id()));
    let missing = dir.join("nope").join("out");
    for cmd in ["synthetic", "forkjoin", "deque"] {
        for opt in ["--json", "--csv", "--plot"] {
            let p = missing.with_extension(&opt[2..]);
            refused(&[cmd, opt, p.to_str().unwrap()], p.to_str().unwrap());
        }
        refused(&[cmd, "--csv", "-"], "only --json can write to stdout");
        refused(&[cmd, "--plot", "-"], "only --json can write to stdout");
    }
    for opt in ["--json", "--csv"] {
        let p = missing.with_extension(&opt[2..]);
        refused(&["manber", opt, p.to_str().unwrap()], p.to_str().unwrap());
    }
    refused(&["manber", "--csv", "-"], "only --json can write to stdout");
    // A folder where a file is wanted.
    let tmp = std::env::temp_dir();
    refused(
        &["synthetic", "--csv", tmp.to_str().unwrap()],
        "is a folder",
    );
    assert!(!dir.exists());
    // Names are checked before anything touches the file system: a refused run creates no
    // plot folder and leaves an existing output file as it was.
    let plots = std::env::temp_dir().join(format!("taskpools-cli-plots-{}", std::process::id()));
    refused(
        &[
            "manber",
            "--search",
            "nope",
            "--plot-dir",
            plots.to_str().unwrap(),
        ],
        "unknown search",
    );
    assert!(!plots.exists(), "no plot folder for a refused run");
    let kept = std::env::temp_dir().join(format!("taskpools-cli-kept-{}.json", std::process::id()));
    std::fs::write(&kept, "keep me").unwrap();
    refused(
        &[
            "synthetic",
            "--pool",
            "nope",
            "--json",
            kept.to_str().unwrap(),
        ],
        "unknown pool",
    );
    refused(
        &["synthetic", "--k", "0", "--json", kept.to_str().unwrap()],
        "at least 1",
    );
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "keep me");
    std::fs::remove_file(&kept).unwrap();
}

#[test]
fn every_limit_is_in_the_help() {
    let help = |cmd: &str| {
        let out = taskpools(&[cmd, "--help"]);
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let s = help("synthetic");
    for want in [
        "k ≤ 40",
        "1 to 4096",
        "none given twice",
        "at least 1",
        "folder must",
    ] {
        assert!(s.contains(want), "synthetic --help lacks `{want}`");
    }
    let s = help("forkjoin");
    for want in ["n ≤ 45", "d ≤ 25", "2^28", "at most 2048", "1 to 4096"] {
        assert!(s.contains(want), "forkjoin --help lacks `{want}`");
    }
    let s = help("deque");
    for want in ["2 to 4096", "1 to 2^28", "2 to 2^24"] {
        assert!(s.contains(want), "deque --help lacks `{want}`");
    }
    let s = help("synthetic");
    assert!(s.contains("2^42"), "synthetic --help lacks the work limit");
    let s = help("manber");
    for want in [
        "0 to 100",
        "1 to 4096",
        "at least 1",
        "1 to 10^8",
        "2^26",
        "10^6",
    ] {
        assert!(s.contains(want), "manber --help lacks `{want}`");
    }
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
    // forte, join on chili) x 2 thread counts; every count was checked against the sequential
    // one (the cutoff rows: tasks and nodes counted by plain calls add up to the tree).
    assert_eq!(recs.len(), 1 + 11 * 2);
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
    ] {
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
    assert_eq!(recs.len(), 1 + 8 * 2);
    assert!(recs
        .iter()
        .all(|r| !r["runtime"].as_str().unwrap().contains("cutoff")));
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
    // Per graph: sequential + 4 variants x 2 thread counts (+ 4 row variants x 2 on the
    // four graphs with rows; random has none). Every result was checked against the
    // sequential one.
    assert_eq!(recs.len(), 5 + 5 * 4 * 2 + 4 * 4 * 2);
    for g in ["independent", "chains", "fan-in-2", "fan-in-4", "random"] {
        assert!(recs
            .iter()
            .any(|r| r["graph"] == g && r["variant"] == "dataflow b64" && r["threads"] == 2));
    }
    // Our rows always have a figure; OpenMP's say null only in a build without OpenMP.
    assert!(recs
        .iter()
        .filter(|r| r["variant"].as_str().unwrap().starts_with("dataflow"))
        .all(|r| r["ns_per_task"].is_f64()));
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
    let out = taskpools(&[
        "suite",
        "--reps",
        "1",
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
        "--plot-dir",
        dir.to_str().unwrap(),
        "--trace",
        dir.join("trace.json").to_str().unwrap(),
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
    let variants = [
        ("black-scholes", 4),
        ("cholesky", 3),
        ("heat", 5),
        ("lu", 3),
        ("matmul", 4),
        ("mergesort", 4),
    ];
    assert_eq!(
        recs.len(),
        variants.iter().map(|(_, v)| 1 + 2 * v).sum::<usize>()
    );
    for (b, _) in variants {
        assert!(recs
            .iter()
            .any(|r| r["bench"] == b && r["variant"] == "dataflow" && r["threads"] == 2));
        assert!(dir.join(format!("suite_{b}.svg")).exists(), "{b}");
    }
    assert!(recs
        .iter()
        .filter(|r| !r["variant"].as_str().unwrap().starts_with("openmp"))
        .all(|r| r["ms"].is_f64() && r["speedup"].is_f64()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn suite_bad_input_is_refused_at_once() {
    refused(&["suite", "--bench", "fft"], "unknown benchmark `fft`");
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
}

/// `taskpools places` at sizes that run in well under a second.
const SMALL_PLACES: &[&str] = &[
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
