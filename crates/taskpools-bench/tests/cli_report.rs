//! `taskpools report DIR`: the markdown results table of a tour; the README's results section,
//! which is that table, names only pools, kernels and runtimes that exist; and the refusals of
//! bad input.

mod common;

use std::path::{Path, PathBuf};

use common::{refused, taskpools};

const BEGIN: &str = "<!-- results:begin -->";
const END: &str = "<!-- results:end -->";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report")
}

/// A fresh, empty folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taskpools-report-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn stdout_of(args: &[&str]) -> String {
    let out = taskpools(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The experiments of `taskpools list`'s last section: name -> (kernels, peers).
fn known() -> Vec<(String, Vec<String>, Vec<String>)> {
    let list = stdout_of(&["list"]);
    let section = list
        .split("experiments in `taskpools report`'s table")
        .nth(1)
        .expect("a section of the report's experiments in `taskpools list`");
    let names = |s: &str| -> Vec<String> {
        s.split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty() && x != "-")
            .collect()
    };
    section
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| {
            let l = l.trim();
            let (name, rest) = l.split_once(' ').unwrap();
            let (kernels, peers) = rest.split_once('|').unwrap();
            (name.to_string(), names(kernels), names(peers))
        })
        .collect()
}

/// The first `` `name` `` of a cell.
fn ticked(cell: &str) -> Option<&str> {
    let rest = cell.split_once('`')?.1;
    Some(rest.split_once('`')?.0)
}

/// A figure cell: `-`, or `median (min–max)` with the median bold where it is the row's best;
/// the three numbers, min ≤ median ≤ max.
fn figure(cell: &str) -> Option<(f64, f64, f64)> {
    if cell == "-" {
        return None;
    }
    let (m, range) = cell
        .split_once(" (")
        .unwrap_or_else(|| panic!("`{cell}`: no range"));
    let (lo, hi) = range
        .trim_end_matches(')')
        .split_once('–')
        .unwrap_or_else(|| panic!("`{cell}`: no min–max"));
    let num = |s: &str| -> f64 {
        s.trim_matches('*')
            .parse()
            .unwrap_or_else(|_| panic!("`{cell}`: `{s}` is no number"))
    };
    let (m, lo, hi) = (num(m), num(lo), num(hi));
    assert!(
        lo <= m && m <= hi,
        "`{cell}`: the median is outside its range"
    );
    Some((m, lo, hi))
}

/// Checks a results block against `taskpools list`: every experiment, kernel, pool and peer
/// column it names exists, every figure parses; returns the number of rows.
fn check_block(md: &str) -> usize {
    let known = known();
    let pools: Vec<&str> = taskpools::PoolKind::ALL.iter().map(|p| p.name()).collect();
    let lines: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert!(
        lines.len() >= 3,
        "a header, a rule and a row at least:\n{md}"
    );
    let cells = |l: &str| -> Vec<String> {
        l.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let header = cells(lines[0]);
    assert_eq!(
        header,
        [
            "experiment",
            "kernel",
            "threads",
            "figure",
            "our best",
            "taskpools",
            "best peer",
            "peer",
            "ours vs peer"
        ],
        "{md}"
    );
    for line in &lines[2..] {
        let row = cells(line);
        assert_eq!(row.len(), header.len(), "{line}");
        let (exp, kernels, peers) = known
            .iter()
            .find(|k| k.0 == row[0])
            .unwrap_or_else(|| panic!("{line}: no experiment `{}`", row[0]));
        let kernel = ticked(&row[1]).unwrap_or_else(|| panic!("{line}: no `kernel`"));
        assert!(
            kernels.iter().any(|k| k == kernel),
            "{line}: `{kernel}` is no kernel of {exp} ({kernels:?})"
        );
        let threads: usize = row[2].parse().expect("a thread count");
        assert!(threads >= 1, "{line}");
        assert!(["speedup", "ns/task"].contains(&row[3].as_str()), "{line}");
        let pool = ticked(&row[4]).unwrap_or_else(|| panic!("{line}: no `pool`"));
        assert!(pools.contains(&pool), "{line}: `{pool}` is no pool");
        let ours = figure(&row[5])
            .unwrap_or_else(|| panic!("{line}: our best has no figure"))
            .0;
        if row[6] == "-" {
            assert_eq!((row[7].as_str(), row[8].as_str()), ("-", "-"), "{line}");
        } else {
            assert!(
                peers.contains(&row[6]),
                "{line}: {exp} does not run {}",
                row[6]
            );
            let peer = figure(&row[7])
                .unwrap_or_else(|| panic!("{line}: the peer has no figure"))
                .0;
            // The ratio comes from the unrounded medians: it must point the same way as the
            // rounded figures where they differ by more than rounding can.
            let ratio: f64 = row[8].parse().expect("ours vs peer");
            assert!(ratio > 0.0 && ratio.is_finite(), "{line}");
            let expect = if row[3] == "speedup" {
                ours / peer
            } else {
                peer / ours
            };
            if (expect - 1.0).abs() > 0.1 {
                assert_eq!(ratio > 1.0, expect > 1.0, "{line}: {ratio} vs {expect}");
            }
        }
        let bold = [&row[5], &row[7]]
            .iter()
            .filter(|c| c.starts_with("**"))
            .count();
        assert!(bold >= 1, "{line}: no best marked");
    }
    lines.len() - 2
}

/// The README's results section is a report's output: between its markers, with the machine
/// and date, naming only experiments, kernels, pools and runtimes that exist.
#[test]
fn the_readme_results_table_names_only_what_exists() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let b = readme
        .find(BEGIN)
        .expect("the README's results:begin marker");
    let e = readme.find(END).expect("the README's results:end marker");
    assert!(b < e, "results:begin comes before results:end");
    let block = &readme[b + BEGIN.len()..e];
    assert!(
        block
            .trim_start()
            .starts_with("`taskpools tour` (taskpools "),
        "the block starts with the run's machine and date: {block}"
    );
    let rows = check_block(block);
    assert!(rows >= 10, "{rows} rows: a tour has more");
}

/// A known tour (hand-written records with round numbers) gives a known table: the speedup
/// median (min–max) with the sequential median held fixed, each runtime's best, ns per task
/// for data-flow graphs (lower is better), what is left out.
#[test]
fn a_known_tour_gives_a_known_table() {
    let dir = fixture();
    let md = stdout_of(&["report", dir.to_str().unwrap()]);
    let expected = std::fs::read_to_string(dir.join("expected.md")).unwrap();
    assert_eq!(md, expected);
    // The figures by hand: sequential 1.0 s; ours (private-deque, the faster pool) 0.5 s,
    // fastest 0.4, slowest 0.625; rayon 0.625 s (0.5 to 1.0).
    assert!(md.contains(
        "| forkjoin | `fib` | 2 | speedup | `private-deque` | **2.00** (1.60–2.50) | rayon | 1.60 (1.00–2.00) | 1.25 |"
    ));
    // The fastest variant per runtime: dataflow b64 (40 ns) over exact (45), libgomp depend
    // (80) over libgomp rows (120); rayon rows not in this build.
    assert!(md.contains(
        "| dataflow | `chains` 1 access | 2 | ns/task | `private-deque` dataflow b64 | **40.0** (30.0–50.0) | libgomp | 80.0 (60.0–100) | 2.00 |"
    ));
    assert!(md.contains(
        "Example CPU (2 cores, 4 logical CPUs), linux x86_64, 2026-11-28 00:10 UTC, load \
             average 1.5 at the start, 2.5 at the end"
    ));
    assert!(md.contains("`deque.json` (Mops/s"));
    assert_eq!(check_block(&md), 2);
}

/// A tour written before the peers had processes of their own names its libgomp rows
/// `openmp …`: it reads as the same table.
#[test]
fn an_older_tours_openmp_rows_read_as_libgomp() {
    let dir = scratch("openmp-names");
    for f in std::fs::read_dir(fixture()).unwrap() {
        let f = f.unwrap().path();
        let text = std::fs::read_to_string(&f).unwrap();
        let old = text
            .replace("\"libgomp depend\"", "\"openmp depend\"")
            .replace("\"libgomp rows\"", "\"openmp rows\"");
        std::fs::write(dir.join(f.file_name().unwrap()), old).unwrap();
    }
    assert!(std::fs::read_to_string(dir.join("dataflow.json"))
        .unwrap()
        .contains("openmp depend"));
    let md = stdout_of(&["report", dir.to_str().unwrap()]);
    let expected = std::fs::read_to_string(fixture().join("expected.md")).unwrap();
    assert_eq!(md, expected);
    std::fs::remove_dir_all(dir).ok();
}

/// Records written before the tour started (an earlier run into the same folder) are left
/// out with a note, not mixed into this tour's table: here a copy of the fork-join records
/// that would win every row, dated a day before the tour.
#[test]
fn records_older_than_the_tour_are_left_out() {
    let dir = scratch("stale");
    for f in ["tour.json", "forkjoin.json", "dataflow.json", "deque.json"] {
        std::fs::copy(fixture().join(f), dir.join(f)).unwrap();
    }
    let fj = std::fs::read_to_string(fixture().join("forkjoin.json")).unwrap();
    // Every parallel time a tenth (the sequential program's kept): faster than anything in
    // the tour.
    let v: serde_json::Value = serde_json::from_str(&fj).unwrap();
    let mut rows = v.as_array().unwrap().clone();
    for r in &mut rows {
        if r.get("runtime").and_then(serde_json::Value::as_str) == Some("sequential") {
            continue;
        }
        for key in ["median_s", "min_s", "max_s"] {
            if let Some(t) = r.get(key).and_then(serde_json::Value::as_f64) {
                r[key] = serde_json::json!(t / 10.0);
            }
        }
    }
    let old = dir.join("old-forkjoin.json");
    std::fs::write(&old, serde_json::to_string(&rows).unwrap()).unwrap();
    let day_before = std::time::SystemTime::now() - std::time::Duration::from_secs(86_400);
    std::fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(day_before)
        .unwrap();
    let md = stdout_of(&["report", dir.to_str().unwrap()]);
    assert!(
        md.contains("`old-forkjoin.json` (written before this tour started"),
        "{md}"
    );
    assert!(md.contains(
        "| forkjoin | `fib` | 2 | speedup | `private-deque` | **2.00** (1.60–2.50) | rayon | 1.60 (1.00–2.00) | 1.25 |"
    ));
    // Dated now, the same file is read (the check is the date alone).
    std::fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(std::time::SystemTime::now())
        .unwrap();
    let md = stdout_of(&["report", dir.to_str().unwrap()]);
    assert!(!md.contains("old-forkjoin.json"), "{md}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--readme FILE` replaces what lies between the markers and keeps the rest of the file.
#[test]
fn readme_block_is_replaced_and_the_rest_kept() {
    let dir = scratch("readme");
    let readme = dir.join("README.md");
    std::fs::write(
        &readme,
        format!("# title\n\nbefore\n\n{BEGIN}\nold table\n{END}\n\nafter\n"),
    )
    .unwrap();
    stdout_of(&[
        "report",
        fixture().to_str().unwrap(),
        "--readme",
        readme.to_str().unwrap(),
    ]);
    let expected = std::fs::read_to_string(fixture().join("expected.md")).unwrap();
    assert_eq!(
        std::fs::read_to_string(&readme).unwrap(),
        format!("# title\n\nbefore\n\n{BEGIN}\n{expected}{END}\n\nafter\n")
    );
    std::fs::write(&readme, "# no markers\n").unwrap();
    refused(
        &[
            "report",
            fixture().to_str().unwrap(),
            "--readme",
            readme.to_str().unwrap(),
        ],
        "no `<!-- results:begin -->` line",
    );
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), "# no markers\n");
    std::fs::remove_dir_all(dir).ok();
}

/// Records written by this build's experiments (small runs) are read back: the report's
/// strict reading agrees with what the experiments write.
#[test]
fn this_builds_records_are_read_back() {
    let dir = scratch("fresh");
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    for args in [
        vec![
            "forkjoin",
            "--threads",
            "1,2",
            "--reps",
            "2",
            "--kernels",
            "fib",
            "--fib",
            "18",
            "--peers",
            "rayon",
            "--json",
        ],
        vec![
            "queens",
            "--n",
            "7",
            "--threads",
            "1,2",
            "--reps",
            "2",
            "--json",
        ],
        vec![
            "radiosity",
            "--scene",
            "small",
            "--pool",
            "dq2,dcwq",
            "--threads",
            "1,2",
            "--reps",
            "1",
            "--json",
        ],
        vec![
            "dataflow",
            "--tasks",
            "300",
            "--graphs",
            "chains",
            "--threads",
            "1,2",
            "--reps",
            "2",
            "--json",
        ],
    ] {
        let file = p(&format!("{}.json", args[0]));
        let args: Vec<&str> = args.into_iter().chain([file.as_str()]).collect();
        stdout_of(&args);
    }
    std::fs::copy(fixture().join("tour.json"), dir.join("tour.json")).unwrap();
    let md = stdout_of(&["report", dir.to_str().unwrap()]);
    assert_eq!(
        check_block(&md),
        7,
        "fib, queens' four front ends, radiosity, chains:\n{md}"
    );
    std::fs::remove_dir_all(dir).ok();
}

/// Bad input gets one clear line before any work: no folder, no JSON in it, no `tour.json`,
/// malformed JSON, a field this build does not write, a pool that does not exist.
#[test]
fn bad_input_is_refused_with_one_line() {
    refused(&["report", "/nonexistent/taskpools-tour"], "no such folder");
    let dir = scratch("bad");
    let d = dir.to_str().unwrap().to_string();
    refused(&["report", &d], "no JSON files");
    let fj = std::fs::read_to_string(fixture().join("forkjoin.json")).unwrap();
    std::fs::write(dir.join("forkjoin.json"), &fj).unwrap();
    refused(&["report", &d], "tour.json: missing");
    std::fs::copy(fixture().join("tour.json"), dir.join("tour.json")).unwrap();
    std::fs::write(dir.join("forkjoin.json"), "[{\"experiment\": \"forkjoin\",").unwrap();
    refused(&["report", &d], "forkjoin.json: malformed JSON");
    std::fs::write(
        dir.join("forkjoin.json"),
        fj.replacen("\"reps\": 3,", "\"reps\": 3, \"surprise\": 1,", 1),
    )
    .unwrap();
    refused(&["report", &d], "record 1: unknown field `surprise`");
    std::fs::write(
        dir.join("forkjoin.json"),
        fj.replace("\"chase-lev\"", "\"spiral-deque\""),
    )
    .unwrap();
    refused(&["report", &d], "`spiral-deque` is not a fork-join pool");
    std::fs::write(dir.join("forkjoin.json"), "{\"experiment\": \"forkjoin\"}").unwrap();
    refused(&["report", &d], "not a JSON array of records");
    std::fs::remove_dir_all(dir).ok();
}
