//! The `taskpools` binary's arguments: listing, bad names, sizes that cannot finish or fit,
//! thread counts, zero counts, `--pin`, and the limits the help states.

mod common;

use common::{refused, taskpools};

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
fn bad_input_exits_with_a_clear_message() {
    for (args, needle) in [
        (
            vec!["synthetic", "--pool", "sq5", "--k", "5"],
            "unknown pool `sq5`",
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

/// Output piped into a reader that stops early (`taskpools list | head -1`) ends the process
/// quietly: no panic message, no backtrace. Here the reader is gone before the first write
/// (a pipe whose read end is closed), so every write fails.
#[cfg(unix)]
#[test]
fn a_closed_output_pipe_ends_quietly() {
    use std::os::fd::FromRawFd;
    use std::os::unix::process::ExitStatusExt;
    let mut fds = [0; 2];
    // Close-on-exec, so that a child spawned by another test meanwhile does not inherit the
    // read end (which would keep a reader alive).
    // SAFETY: `fds` has room for the two descriptors `pipe2` writes.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: the read end is ours and used nowhere else; closing it leaves no reader.
    unsafe { libc::close(fds[0]) };
    // SAFETY: the write end is a fresh descriptor that this `OwnedFd` alone owns.
    let write = unsafe { std::os::fd::OwnedFd::from_raw_fd(fds[1]) };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_taskpools"))
        .arg("list")
        .stdout(std::process::Stdio::from(write))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "stderr: {err}");
    assert!(!err.contains("Broken pipe"), "stderr: {err}");
    assert!(
        out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
        "{:?}",
        out.status
    );
}
