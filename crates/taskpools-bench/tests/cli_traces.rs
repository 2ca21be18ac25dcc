//! Schedule traces from the `taskpools` binary: `--trace` files (Chrome trace-event JSON,
//! Gantt charts) and their summary by `taskpools trace`.

mod common;

use common::{refused, refused_within_2gib, taskpools, SMALL_PLACES};

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

/// A Chrome trace-event file of one process (pid 1) holding `events` (JSON objects).
fn crafted(dir: &std::path::Path, name: &str, events: &[String]) -> String {
    let f = dir.join(name);
    std::fs::write(
        &f,
        format!("{{\"traceEvents\":[\n{}\n]}}\n", events.join(",\n")),
    )
    .unwrap();
    f.to_str().unwrap().to_string()
}

/// A data-flow instant event on worker `tid` at `ts` µs.
fn instant(tid: u64, ts: f64, name: &str, args: &str) -> String {
    format!(
        r#"{{"name":"{name}","cat":"dataflow","ph":"i","s":"t","ts":{ts},"pid":1,"tid":{tid},"args":{{{args}}}}}"#
    )
}

/// A job on worker `tid` from `t0` to `t1` µs that is data-flow task `id`, spawned by
/// `parent`.
fn task(tid: u64, t0: f64, t1: f64, id: u64, parent: u64) -> Vec<String> {
    vec![
        instant(
            tid,
            t0,
            "spawn",
            &format!(r#""parent":{parent},"child":{id}"#),
        ),
        format!(
            r#"{{"name":"own","cat":"job","ph":"B","ts":{t0},"pid":1,"tid":{tid},"args":{{"from":"own"}}}}"#
        ),
        instant(tid, t0, "task", &format!(r#""id":{id}"#)),
        format!(r#"{{"ph":"E","ts":{t1},"pid":1,"tid":{tid}}}"#),
    ]
}

/// Trace files are input: ids read from them are not trusted. A parent relation with a cycle
/// (which made the critical path walk it without end, growing memory by gigabytes a second)
/// is refused naming a task of the cycle.
#[test]
fn a_trace_whose_tasks_are_their_own_ancestors_is_refused() {
    let dir = std::env::temp_dir().join(format!("taskpools-trace-cycle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Root scope 5 is also a task spawned by itself.
    let mut own = vec![instant(0, 0.0, "spawn", r#""parent":0,"child":5"#)];
    own.extend(task(0, 1.0, 3.0, 5, 5));
    let own = crafted(&dir, "own-parent.json", &own);
    refused_within_2gib(&["trace", &own], "task 5 is its own ancestor");
    // Root scope 7 is a task spawned by task 8, which task 7 spawned.
    let mut pair = vec![instant(0, 0.0, "spawn", r#""parent":0,"child":7"#)];
    pair.extend(task(0, 1.0, 3.0, 7, 8));
    pair.extend(task(1, 1.0, 3.0, 8, 7));
    let pair = crafted(&dir, "each-other.json", &pair);
    refused_within_2gib(&["trace", &pair], "is its own ancestor");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Worker ids (`tid`) and victims read from a trace file are bounded by the runtime's limit
/// of 4096 workers (a `tid` of 10^12 sized a vector by it: an abort on an allocation of
/// 8 TB); timestamps at the ends of the range are summarized without an overflow.
#[test]
fn trace_fields_that_size_or_index_arrays_are_bounded() {
    let dir = std::env::temp_dir().join(format!("taskpools-trace-bounds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let put = |tid: u64, ts: f64| {
        format!(r#"{{"name":"put","cat":"phase","ph":"i","s":"t","ts":{ts},"pid":1,"tid":{tid}}}"#)
    };
    let huge = crafted(
        &dir,
        "huge-tid.json",
        &[put(0, 1.0), put(1_000_000_000_000, 2.0)],
    );
    refused_within_2gib(
        &["trace", &huge],
        "worker 1000000000000: beyond the limit of 4096",
    );
    let just = crafted(&dir, "tid-4096.json", &[put(4096, 1.0)]);
    refused(&["trace", &just], "worker 4096: beyond the limit of 4096");
    let meta = crafted(
        &dir,
        "huge-meta-tid.json",
        &[r#"{"name":"thread_name","ph":"M","pid":1,"tid":18446744073709551615,"args":{"name":"w"}}"#.to_string(), put(0, 1.0)],
    );
    refused(
        &["trace", &meta],
        "worker 18446744073709551615: beyond the limit of 4096",
    );
    let victim = crafted(
        &dir,
        "huge-victim.json",
        &[
            r#"{"name":"pool-steal","cat":"job","ph":"B","ts":1,"pid":1,"tid":0,"args":{"from":"pool-steal","victim":4294967297,"tasks":1}}"#.to_string(),
            r#"{"ph":"E","ts":2,"pid":1,"tid":0}"#.to_string(),
        ],
    );
    refused(
        &["trace", &victim],
        "victim 4294967297: beyond the limit of 4096",
    );
    // The first phase event at 0, the last where nanoseconds no longer fit in 64 bits.
    let far = crafted(&dir, "far.json", &[put(0, 0.0), put(1, 1.0e17)]);
    let out = taskpools(&["trace", &far]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("the working phase over time"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
