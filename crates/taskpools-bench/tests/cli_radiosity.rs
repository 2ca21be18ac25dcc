//! `taskpools radiosity`: hierarchical radiosity on the task pools, scored as Korch and Rauber
//! score it (visible interactions per second), every parallel result checked against the
//! sequential program's.

mod common;

use common::{json_rows, refused, taskpools};

fn f(r: &serde_json::Value, k: &str) -> f64 {
    r[k].as_f64().unwrap_or_else(|| panic!("{k} in {r}"))
}

fn u(r: &serde_json::Value, k: &str) -> u64 {
    r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"))
}

/// A small run: the sequential row first, then one row per pool (memory manager for the
/// list-based ones), thread count and the fork-join driver; every row has the sequential
/// program's counts (the solver's result does not depend on task order), and the rates and
/// speed-ups are what its own times and counts give.
#[test]
fn small_scene_rows_have_the_sequential_counts_and_their_own_rates() {
    let rows = json_rows(&[
        "radiosity",
        "--scene",
        "small",
        "--pool",
        "dq2,sq3,dcwq",
        "--mem",
        "dgbko,bs",
        "--threads",
        "1,2,3",
        "--reps",
        "2",
        "--json",
        "-",
    ]);
    let seq = &rows[0];
    assert_eq!(seq["pool"], "sequential");
    assert_eq!(seq["alias"], "seq");
    assert_eq!(seq["scene"], "small");
    assert!(f(seq, "speedup_time") == 1.0 && f(seq, "speedup_rate") == 1.0);
    // dq2 with two memory managers, sq3 and dcwq with none, and fork-join: five rows per
    // thread count; the ceiling at 2 and 3.
    assert_eq!(rows.len(), 1 + 5 * 3 + 2, "{rows:#?}");
    let counts = [
        "iterations",
        "interactions",
        "visible",
        "fully_visible",
        "elements",
    ];
    for r in &rows {
        assert_eq!(r["experiment"], "radiosity");
        assert_eq!(u(r, "reps"), 2);
        for k in counts {
            assert_eq!(r[k], seq[k], "{k} of {r}");
        }
        assert!(u(r, "visible") > 0 && u(r, "visible") <= u(r, "interactions"));
        assert!(u(r, "fully_visible") <= u(r, "visible"));
        let (t, lo, hi) = (f(r, "time_s"), f(r, "min_s"), f(r, "max_s"));
        assert!(0.0 < lo && lo <= t && t <= hi, "{r}");
        // The median of the repetitions' rates (each its visible count over its time).
        let (rate, v) = (f(r, "rate"), u(r, "visible") as f64);
        assert!(
            v / hi * (1.0 - 1e-9) <= rate && rate <= v / lo * (1.0 + 1e-9),
            "{r}"
        );
        let by_rate = rate / f(seq, "rate");
        assert!(
            (f(r, "speedup_rate") - by_rate).abs() <= 1e-9 * by_rate,
            "{r}"
        );
        let by_time = f(seq, "time_s") / t;
        assert!(
            (f(r, "speedup_time") - by_time).abs() <= 1e-9 * by_time,
            "{r}"
        );
    }
    let has = |pool: &str, mem: &str, t: u64| {
        rows.iter()
            .any(|r| r["pool"] == pool && r["mem"] == mem && u(r, "threads") == t)
    };
    for t in 1..=3 {
        assert!(has("steal-working-end", "dgbko", t), "dq2 dgbko x{t}");
        assert!(has("steal-working-end", "bs", t), "dq2 bs x{t}");
        assert!(has("central-fifo-node-locks", "-", t), "sq3 x{t}");
        assert!(has("chase-lev", "-", t), "dcwq x{t}");
        assert!(has("fork-join", "-", t), "fork-join x{t}");
        assert_eq!(has("ceiling", "-", t), t > 1, "ceiling x{t}");
    }
    // The paper's Table 7 measured largeroom, not this scene.
    assert!(rows.iter().all(|r| r["paper_speedup"].is_null()));
}

/// `--no-fork-join` leaves the fork-join rows out; the table, CSV and chart are written where
/// asked.
#[test]
fn outputs_and_no_fork_join() {
    let dir = std::env::temp_dir().join(format!("taskpools-radiosity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = |n: &str| dir.join(n).to_str().unwrap().to_string();
    let out = taskpools(&[
        "radiosity",
        "--scene",
        "small",
        "--pool",
        "dq8",
        "--threads",
        "2",
        "--reps",
        "1",
        "--no-fork-join",
        "--json",
        &p("r.json"),
        "--csv",
        &p("r.csv"),
        "--plot",
        &p("r.svg"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("private-public"), "{table}");
    assert!(!table.contains("fork-join"), "{table}");
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(p("r.json")).unwrap()).unwrap();
    assert_eq!(rows.len(), 3, "sequential, dq8 and the ceiling");
    let csv = std::fs::read_to_string(p("r.csv")).unwrap();
    assert_eq!(csv.lines().count(), 4, "a header and three rows:\n{csv}");
    assert!(
        table.contains("ceiling: 2 sequential programs at once"),
        "{table}"
    );
    let svg = std::fs::read_to_string(p("r.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("dq8"), "{svg}");
    std::fs::remove_dir_all(dir).ok();
}

/// Bad input gets one clear line before any work.
#[test]
fn bad_input_is_refused_with_one_line() {
    let r = |extra: &[&str], expect: &str| {
        let mut args = vec!["radiosity", "--scene", "small"];
        args.extend_from_slice(extra);
        if !extra.contains(&"--reps") {
            args.extend_from_slice(&["--reps", "1"]);
        }
        refused(&args, expect);
    };
    refused(&["radiosity", "--scene", "halle"], "halle");
    r(&["--pool", "dq9"], "dq9");
    r(&["--mem", "slab"], "slab");
    r(&["--wake", "never"], "never");
    r(&["--threads", "0"], "thread");
    r(&["--reps", "0"], "at least 1");
    r(&["--area-epsilon", "0"], "--area-epsilon 0");
    r(&["--area-epsilon", "0.001"], "more than 1e7");
    r(&["--area-epsilon", "1e-300"], "--area-epsilon 1e-300:");
    // A BF epsilon of 0 refines every pair down to the area epsilon: the sequential run
    // finds the bound exceeded before any measured run.
    r(
        &["--bf-epsilon", "0", "--max-interactions", "100000"],
        "more than 1e5 interactions",
    );
    r(&["--max-interactions", "3"], "at least 4");
    r(&["--area-epsilon=-5"], "area epsilon");
    r(&["--bf-epsilon", "NaN"], "BF epsilon");
    r(&["--energy-tolerance=-1"], "energy tolerance");
    r(&["--json", "/nonexistent/dir/r.json"], "/nonexistent/dir");
    // The Gantt charts' folder beside the trace is a file: refused before the work, not after.
    let dir =
        std::env::temp_dir().join(format!("taskpools-radiosity-gantt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t.gantt"), "a file").unwrap();
    let trace = dir.join("t.json");
    r(
        &[
            "--trace",
            trace.to_str().unwrap(),
            "--pool",
            "dq2",
            "--threads",
            "1",
            "--no-fork-join",
        ],
        "is not a folder",
    );
    assert!(!trace.exists(), "refused before any work: no trace written");
    std::fs::remove_dir_all(dir).ok();
}
