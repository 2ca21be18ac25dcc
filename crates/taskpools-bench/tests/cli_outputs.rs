//! The `taskpools` binary's outputs: a small synthetic run with JSON, CSV and SVG, and
//! outputs that cannot be written, refused before the run.

mod common;

use common::{refused, taskpools};

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
