//! The distributed working phase under mpirun (cargo feature `mpi`; the test command runs
//! these when `mpirun` exists). Each test starts `mpirun` on the `taskpools` binary with a
//! time limit, so a hang fails the test instead of stalling it.
#![cfg(feature = "mpi")]

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `mpirun -n ranks taskpools distributed ARGS`, killed after `limit`.
fn mpirun(ranks: usize, args: &[&str], limit: Duration) -> Output {
    let mut cmd = Command::new("mpirun");
    cmd.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "--bind-to",
        "none",
        "-n",
    ])
    .arg(ranks.to_string())
    .arg(env!("CARGO_BIN_EXE_taskpools"))
    .arg("distributed")
    .args(args)
    .env("RUST_BACKTRACE", "0")
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("mpirun starts (is Open MPI installed?)");
    let t0 = Instant::now();
    loop {
        if child.try_wait().expect("waiting for mpirun").is_some() {
            return child.wait_with_output().expect("mpirun's output");
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("mpirun's output");
            panic!(
                "mpirun {args:?} did not finish within {limit:?}\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The JSON records of a successful run (rank 0 writes them to stdout).
fn records(o: &Output) -> Vec<serde_json::Value> {
    let (out, err) = text(o);
    assert!(
        o.status.success(),
        "mpirun failed\nstdout:\n{out}\nstderr:\n{err}"
    );
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("JSON on stdout ({e}):\n{out}\n{err}"))
}

fn check_exact(recs: &[serde_json::Value], configs: usize) {
    assert_eq!(recs.len(), configs, "{recs:#?}");
    for r in recs {
        let tasks = r["tasks"].as_u64().expect("tasks");
        assert_eq!(
            tasks,
            r["expected_tasks"].as_u64().expect("expected"),
            "{r:#}"
        );
        if r["config"] == "one-process" {
            continue;
        }
        let per: u64 = r["per_rank"]
            .as_array()
            .expect("per rank")
            .iter()
            .map(|q| q["tasks_run"].as_u64().expect("tasks_run"))
            .sum();
        // Queens counts its root node outside the phase.
        let root = u64::from(r["workload"] == "queens");
        assert_eq!(per + root, tasks, "per-rank counts add up: {r:#}");
        let sent: u64 = r["per_rank"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| q["tasks_sent"].as_u64().unwrap())
            .sum();
        let recvd: u64 = r["per_rank"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| q["tasks_received"].as_u64().unwrap())
            .sum();
        assert_eq!(sent, recvd, "every task sent was received: {r:#}");
        if r["config"] == "static" {
            assert_eq!(sent, 0);
        }
    }
}

#[test]
fn ten_million_tasks_over_four_ranks_exactly_with_every_search() {
    // P(31) = 11 405 739 synthetic tasks, all starting on rank 0.
    let o = mpirun(
        4,
        &[
            "--workload",
            "synthetic",
            "--k",
            "31",
            "--f",
            "0",
            "--reps",
            "1",
            "--no-one-process",
            "--json",
            "-",
        ],
        Duration::from_secs(300),
    );
    let recs = records(&o);
    check_exact(&recs, 4);
    assert!(recs.iter().all(|r| r["expected_tasks"] == 11_405_739u64));
    // With stealing, every rank ran tasks; with the static split only rank 0 did.
    for r in &recs {
        let busy = r["per_rank"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|q| q["tasks_run"].as_u64().unwrap() > 0)
            .count();
        if r["config"] == "static" {
            assert_eq!(busy, 1, "{r:#}");
        } else {
            assert_eq!(busy, 4, "{r:#}");
        }
    }
}

#[test]
fn termination_is_exact_under_random_message_delays() {
    // Small steal replies and random delays before every message is handled: many
    // messages, many token rounds, replies overtaken by tokens.
    for pool in [
        "private-public",
        "central-fifo",
        "steal-half",
        "private-deque",
        "distributed-list",
    ] {
        let o = mpirun(
            4,
            &[
                "--k",
                "18",
                "--f",
                "2",
                "--queens",
                "9",
                "--reps",
                "2",
                "--max-batch",
                "2",
                "--jitter-us",
                "300",
                "--start",
                "spread",
                "--pool",
                pool,
                "--threads",
                "2",
                "--no-one-process",
                "--json",
                "-",
            ],
            Duration::from_secs(300),
        );
        check_exact(&records(&o), 8);
    }
}

/// Synthetic A(22) on 3 ranks with a fault injected on `rank`: mpirun must fail, in time,
/// and stderr must say `expect`.
fn fault(option: &str, rank: &str, expect: &str) {
    let args = [
        "--workload",
        "synthetic",
        "--k",
        "22",
        "--f",
        "1",
        "--reps",
        "1",
        "--no-one-process",
        option,
        rank,
    ];
    let o = mpirun(3, &args, Duration::from_secs(120));
    let (out, err) = text(&o);
    assert!(!o.status.success(), "{out}\n{err}");
    assert!(err.contains(expect), "stdout:\n{out}\nstderr:\n{err}");
}

#[test]
fn a_panic_on_a_non_root_rank_ends_every_rank_and_rank_0_reports_it() {
    fault(
        "--panic-on-rank",
        "2",
        "error: a task panicked on rank 2: injected panic (--panic-on-rank)",
    );
}

#[test]
fn a_rank_that_dies_ends_the_job_with_an_error() {
    fault("--die-on-rank", "1", "injected failure");
}

#[test]
fn ranks_with_different_configurations_are_refused_at_the_start() {
    let bin = env!("CARGO_BIN_EXE_taskpools");
    let mut cmd = Command::new("mpirun");
    cmd.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "--bind-to",
        "none",
    ]);
    cmd.args([
        "-n",
        "1",
        bin,
        "distributed",
        "--workload",
        "synthetic",
        "--k",
        "10",
        "--reps",
        "1",
        "--no-one-process",
    ]);
    cmd.arg(":");
    cmd.args([
        "-n",
        "1",
        bin,
        "distributed",
        "--workload",
        "synthetic",
        "--k",
        "10",
        "--reps",
        "1",
        "--no-one-process",
        "--max-batch",
        "7",
    ]);
    let o = cmd.output().expect("mpirun runs");
    let (out, err) = text(&o);
    assert!(!o.status.success(), "{out}\n{err}");
    assert!(
        err.contains("error: rank 1 differs from rank 0 in the distributed configuration"),
        "stdout:\n{out}\nstderr:\n{err}"
    );
}

#[test]
fn one_rank_is_a_plain_working_phase() {
    let o = mpirun(
        1,
        &[
            "--k",
            "16",
            "--f",
            "1",
            "--queens",
            "8",
            "--reps",
            "1",
            "--threads",
            "2",
            "--json",
            "-",
        ],
        Duration::from_secs(120),
    );
    let recs = records(&o);
    // one-process + 3 searches + static, per workload
    check_exact(&recs, 10);
}

#[test]
fn each_rank_writes_its_schedule_trace() {
    let dir = std::env::temp_dir().join(format!("taskpools-dist-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("t.json");
    let o = mpirun(
        2,
        &[
            "--k",
            "17",
            "--f",
            "5",
            "--queens",
            "8",
            "--reps",
            "1",
            "--search",
            "random",
            "--no-one-process",
            "--trace",
            file.to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    // (A(17): enough work that the second rank gets some before the first is done, also on
    // a loaded machine.)
    // Per configuration (a process id in each rank's file): tasks sent and received.
    let mut sent = std::collections::BTreeMap::<u64, u64>::new();
    let mut received = std::collections::BTreeMap::<u64, u64>::new();
    for rank in 0..2 {
        let f = dir.join(format!("t.rank{rank}.json"));
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let events = doc["traceEvents"].as_array().unwrap();
        for e in events {
            let name = e["name"].as_str().unwrap_or("");
            assert!(!name.starts_with("trace incomplete"), "rank {rank}: {name}");
            let (pid, n) = (e["pid"].as_u64().unwrap_or(0), e["args"]["tasks"].as_u64());
            if e["name"] == "sent to another process" {
                *sent.entry(pid).or_default() += n.unwrap();
            } else if e["name"] == "received from another process" {
                *received.entry(pid).or_default() += n.unwrap();
            }
        }
        let tasks = events
            .iter()
            .filter(|e| e["name"] == "pool" || e["name"] == "pool-steal")
            .count();
        assert!(tasks > 0, "rank {rank} ran traced tasks");
        // Two workloads x (random + static).
        let svgs = std::fs::read_dir(dir.join(format!("t.rank{rank}.gantt")))
            .unwrap()
            .count();
        assert_eq!(svgs, 4);
    }
    // Every task one rank's workers sent away was put into the other's pool (a phase ends
    // with no task on the wire), and the steal-half runs moved some: rank 0 starts with all
    // of them.
    assert_eq!(sent, received, "tasks sent and received per configuration");
    assert!(sent.values().sum::<u64>() > 0, "{sent:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_output_path_of_one_rank_is_reported_by_that_rank() {
    // Rank 1's trace file is a folder: only rank 1 can find that, before MPI starts.
    let dir = std::env::temp_dir().join(format!("taskpools-dist-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("t.rank1.json")).unwrap();
    let trace = dir.join("t.json");
    let o = mpirun(
        2,
        &[
            "--k",
            "10",
            "--reps",
            "1",
            "--trace",
            trace.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    let (out, err) = text(&o);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!o.status.success(), "{out}\n{err}");
    assert!(
        err.contains("rank 1: --trace") && err.contains("is a folder"),
        "stdout:\n{out}\nstderr:\n{err}"
    );
}
