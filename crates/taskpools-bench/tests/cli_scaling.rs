//! `taskpools scaling DIR`: the speedup-vs-threads charts and tables of a folder of experiment
//! JSON files, as `scripts/scale.sh` writes them; and its refusals.

mod common;

use common::{refused, taskpools, SMALL_PLACES};

/// Small runs of five experiments at 1 and 2 threads (places at 2 and 3 places) become one
/// chart per kernel and a table each in `scaling.md`, with a figure per thread count.
#[test]
fn charts_and_tables_from_a_folder_of_runs() {
    let dir = std::env::temp_dir().join(format!("taskpools-scaling-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let runs: Vec<Vec<String>> = vec![
        [
            "forkjoin",
            "--threads",
            "1,2",
            "--reps",
            "1",
            "--kernels",
            "fib,tree-sum",
            "--fib",
            "18",
            "--tree-depth",
            "10",
            "--json",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([p("forkjoin.json")])
        .collect(),
        [
            "queens",
            "--n",
            "7",
            "--threads",
            "1,2",
            "--reps",
            "1",
            "--json",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([p("queens.json")])
        .collect(),
        [
            "dataflow",
            "--tasks",
            "300",
            "--graphs",
            "chains",
            "--threads",
            "1,2",
            "--reps",
            "1",
            "--json",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([p("dataflow.json")])
        .collect(),
        [
            "radiosity",
            "--scene",
            "small",
            "--pool",
            "dq2",
            "--threads",
            "1,2",
            "--reps",
            "1",
            "--json",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([p("radiosity.json")])
        .collect(),
        SMALL_PLACES
            .iter()
            .map(|s| s.to_string())
            .chain(["--no-policies".into(), "--json".into(), p("places-2.json")])
            .collect(),
    ];
    let mut places3: Vec<String> = SMALL_PLACES.iter().map(|s| s.to_string()).collect();
    let i = places3.iter().position(|a| a == "2x1").unwrap();
    places3[i] = "3x1".into();
    places3.extend(["--no-policies".into(), "--json".into(), p("places-3.json")]);
    for args in runs.iter().chain([&places3]) {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = taskpools(&a);
        assert!(
            out.status.success(),
            "{a:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = taskpools(&["scaling", dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let md = std::fs::read_to_string(dir.join("scaling.md")).unwrap();
    for panel in [
        "## fork-join fib",
        "## fork-join tree-sum",
        "## N-Queens 7",
        "## data-flow ns per task, chains",
        "## places cache-stress",
        "## radiosity \"small\" by interaction rate",
    ] {
        assert!(md.contains(panel), "{panel} missing from:\n{md}");
    }
    // Every table has a column per thread count and a figure in each.
    assert!(md.contains("| series | 1 | 2 |"), "{md}");
    assert!(md.contains("| series | 2 | 3 |"), "{md}");
    let fib = md.split("## fork-join fib").nth(1).unwrap();
    let row = fib
        .lines()
        .find(|l| l.starts_with("| private-deque |"))
        .expect("our pool's row");
    let cells: Vec<f64> = row
        .split('|')
        .filter_map(|c| c.trim().parse::<f64>().ok())
        .collect();
    assert_eq!(cells.len(), 2, "{row}");
    assert!(cells.iter().all(|&s| s > 0.0), "{row}");
    // Places: the speed over the runtime without places at 2 and at 3 threads.
    let places = md.split("## places cache-stress").nth(1).unwrap();
    let best = places
        .lines()
        .find(|l| l.starts_with("| places, best hints |"))
        .unwrap_or_else(|| panic!("no best-hints row in {places}"));
    let cells: Vec<f64> = best
        .split('|')
        .filter_map(|c| c.trim().parse::<f64>().ok())
        .collect();
    assert_eq!(cells.len(), 2, "{best}");
    assert!(
        !places.contains("| no places |"),
        "the baseline is not a series: {places}"
    );
    let svgs = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            let n = e.as_ref().unwrap().file_name();
            let n = n.to_str().unwrap();
            n.starts_with("scaling-") && n.ends_with(".svg")
        })
        .count();
    assert!(svgs >= 5, "{svgs} charts");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn refuses_what_is_not_a_folder_of_runs() {
    refused(&["scaling", "/no/such/folder"], "not a folder");
    let dir = std::env::temp_dir().join(format!("taskpools-scaling-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap();
    refused(&["scaling", d], "no experiment JSON files");
    std::fs::write(dir.join("broken.json"), "[{\"experiment\": \"forkjoin\",").unwrap();
    refused(&["scaling", d], "broken.json: not JSON records");
    std::fs::write(dir.join("broken.json"), "{\"experiment\": \"forkjoin\"}").unwrap();
    refused(&["scaling", d], "not a JSON array of records");
    std::fs::write(
        dir.join("broken.json"),
        "[{\"experiment\": \"forkjoin\", \"kernel\": \"fib\", \"runtime\": \"rayon\", \"speedup_vs_seq\": 1.0}]",
    )
    .unwrap();
    refused(&["scaling", d], "without `threads`");
    std::fs::remove_dir_all(&dir).unwrap();
}
