//! Panic payloads whose own `Drop` panics, in every front end: two of them at once (two join
//! halves, two scope spawns, two broadcast shares, two working-phase tasks, two data-flow tasks
//! run inline past the throttle, queued or stolen), and a closure's panic beside its
//! children's. Where one payload is kept and the other dropped, the drop must neither escape
//! (skipping the bookkeeping that ends a scope: a hang) nor happen during the unwind of the
//! kept one (a panic while panicking: an abort). Each program must end with the panic
//! propagated (or the documented error).
//!
//! Each scenario runs in a child process (this test binary, run again with the scenario's
//! name in [`CHILD`]) under a deadline, so that an abort or a hang fails its test alone,
//! naming what happened, instead of killing or hanging the whole run.
#![cfg(not(loom))]

use std::io::Read;
use std::panic::{catch_unwind, panic_any, AssertUnwindSafe};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use taskpools::dataflow::{self, Config};
use taskpools::forkjoin::{self, Runtime};
use taskpools::{Builder, Ctx, Task};

/// The environment variable that names the scenario a child process runs.
const CHILD: &str = "TASKPOOLS_PAYLOAD_CHILD";

/// How long a scenario may take (each takes milliseconds; a hang is what this catches).
const DEADLINE: Duration = Duration::from_secs(60);

/// A payload whose drop panics unless the thread is already unwinding.
struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("payload drop panics")
        }
    }
}

/// A payload whose drop always panics: dropped during an unwind, it aborts the process.
struct Grenade;

impl Drop for Grenade {
    fn drop(&mut self) {
        panic!("payload drop panics, even during an unwind")
    }
}

/// Runs `f`, which must panic; the payload that comes out is leaked (dropping a `Grenade`
/// would panic here).
fn must_panic(what: &str, f: impl FnOnce()) {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(()) => panic!("{what}: returned instead of propagating the panic"),
        Err(p) => std::mem::forget(p),
    }
}

/// Waits (spinning, at most `max`) until `n` parties have arrived at `count`. Never blocks
/// for good: if the parties are not all running at once, the scenario goes on after `max`.
fn meet(count: &AtomicUsize, n: usize, max: Duration) {
    count.fetch_add(1, Ordering::SeqCst);
    let start = Instant::now();
    while count.load(Ordering::SeqCst) < n && start.elapsed() < max {
        std::thread::yield_now();
    }
}

/// Both halves of a join panic (on one thread: in turn; on two: at once when `b` is stolen).
fn join_halves(threads: usize) {
    let rt = Runtime::new(threads).unwrap();
    for _ in 0..20 {
        must_panic("join", || {
            rt.install(|| {
                forkjoin::join(|| panic_any(Grenade), || panic_any(Grenade));
            })
        });
    }
}

/// Two spawns of a fork-join scope panic.
fn scope_spawns(threads: usize) {
    let rt = Runtime::new(threads).unwrap();
    for _ in 0..20 {
        must_panic("scope", || {
            rt.scope(|s| {
                s.spawn(|_| panic_any(Grenade));
                s.spawn(|_| panic_any(Grenade));
            })
        });
    }
}

/// A fork-join scope's closure panics, and so does one of its spawns.
fn scope_closure_and_spawn(threads: usize) {
    let rt = Runtime::new(threads).unwrap();
    must_panic("scope", || {
        rt.scope(|s| {
            s.spawn(|_| panic_any(Grenade));
            panic_any(Grenade)
        })
    });
}

/// Every share of a broadcast panics, the two at once.
fn broadcast_shares() {
    let rt = Runtime::new(2).unwrap();
    for _ in 0..10 {
        let met = AtomicUsize::new(0);
        must_panic("broadcast", || {
            let _ = rt.broadcast(|_| {
                meet(&met, 2, Duration::from_secs(5));
                panic_any(Grenade)
            });
        });
    }
}

/// A working-phase task that waits for its sibling to start, then panics.
struct Boom<'a>(&'a AtomicUsize);

impl Task for Boom<'_> {
    fn run(self, _: &mut Ctx<'_, Self>) {
        meet(self.0, 2, Duration::from_secs(5));
        panic_any(Grenade)
    }
}

/// Two tasks of a working phase, one on each worker, panic at once.
fn phase_tasks() {
    let rt = Runtime::new(2).unwrap();
    for _ in 0..10 {
        let met = AtomicUsize::new(0);
        must_panic("working phase", || {
            let _ = Builder::new()
                .threads(2)
                .runtime(&rt)
                .run([Boom(&met), Boom(&met)]);
        });
    }
}

/// The data-flow scope ended with a panic (`try_scope`'s error), not by panicking itself.
fn scope_failed<R>(what: &str, r: Result<R, dataflow::ScopeError>) {
    match r {
        Ok(_) => panic!("{what}: the scope succeeded"),
        Err(p) => std::mem::forget(p),
    }
}

/// The repro: on one thread the 65th spawn and those after it run inline (the throttle), and
/// every one of them panics with a `Bomb`.
fn dataflow_inline_repro() {
    let rt = Runtime::new(1).unwrap();
    let r = rt.install(|| {
        dataflow::try_scope(Config::default(), |df| {
            for i in 0..100 {
                df.spawn((), move |_, ()| {
                    if i >= 64 {
                        panic_any(Bomb)
                    }
                });
            }
        })
    });
    scope_failed("inline", r);
}

/// Two threads: the first 128 tasks wait at a gate (one of them on the other worker), so the
/// next spawns are past the throttle and run inline; they panic with `Grenade`s.
fn dataflow_inline_two_threads() {
    let rt = Runtime::new(2).unwrap();
    let gate = AtomicBool::new(false);
    let r = rt.install(|| {
        dataflow::try_scope(Config::default(), |df| {
            for i in 0..140 {
                let gate = &gate;
                df.spawn((), move |_, ()| {
                    if i >= 128 {
                        panic_any(Grenade)
                    }
                    let start = Instant::now();
                    while !gate.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(10)
                    {
                        std::thread::yield_now();
                    }
                });
            }
            gate.store(true, Ordering::Release);
        })
    });
    scope_failed("inline", r);
}

/// Two tasks queued on the spawner's deque, run when the scope waits for them (on one
/// thread), or taken by the other worker (on two).
fn dataflow_queued(threads: usize) {
    let rt = Runtime::new(threads).unwrap();
    for _ in 0..10 {
        let r = rt.install(|| {
            dataflow::try_scope(Config::default(), |df| {
                df.spawn((), |_, ()| panic_any(Grenade));
                df.spawn((), |_, ()| panic_any(Grenade));
            })
        });
        scope_failed("queued", r);
    }
}

/// Two threads: the spawner waits until both tasks have started, so both run on the other
/// worker (stolen), one after the other.
fn dataflow_stolen() {
    let rt = Runtime::new(2).unwrap();
    let started = AtomicUsize::new(0);
    let r = rt.install(|| {
        dataflow::try_scope(Config::default(), |df| {
            for _ in 0..2 {
                let started = &started;
                df.spawn((), move |_, ()| {
                    started.fetch_add(1, Ordering::SeqCst);
                    panic_any(Grenade)
                });
            }
            let start = Instant::now();
            while started.load(Ordering::SeqCst) < 2 && start.elapsed() < Duration::from_secs(10) {
                std::thread::yield_now();
            }
        })
    });
    scope_failed("stolen", r);
}

/// The scope's closure panics, and so does a task of it.
fn dataflow_closure_and_task(threads: usize) {
    let rt = Runtime::new(threads).unwrap();
    let r = rt.install(|| {
        dataflow::try_scope(Config::default(), |df| {
            df.spawn((), |_, ()| panic_any(Grenade));
            panic_any(Grenade)
        })
    });
    scope_failed("closure and task", r);
}

/// A task panics, and so does its child (which the task's end waits for).
fn dataflow_task_and_child(threads: usize) {
    let rt = Runtime::new(threads).unwrap();
    let r = rt.install(|| {
        dataflow::try_scope(Config::default(), |df| {
            df.spawn((), |s, ()| {
                s.spawn((), |_, ()| panic_any(Grenade));
                panic_any(Grenade)
            });
        })
    });
    scope_failed("task and child", r);
}

type Scenario = (&'static str, fn());

const SCENARIOS: &[Scenario] = &[
    ("join-1", || join_halves(1)),
    ("join-2", || join_halves(2)),
    ("scope-spawns-1", || scope_spawns(1)),
    ("scope-spawns-2", || scope_spawns(2)),
    ("scope-closure-1", || scope_closure_and_spawn(1)),
    ("scope-closure-2", || scope_closure_and_spawn(2)),
    ("broadcast-2", broadcast_shares),
    ("phase-2", phase_tasks),
    ("dataflow-inline-repro-1", dataflow_inline_repro),
    ("dataflow-inline-2", dataflow_inline_two_threads),
    ("dataflow-queued-1", || dataflow_queued(1)),
    ("dataflow-queued-2", || dataflow_queued(2)),
    ("dataflow-stolen-2", dataflow_stolen),
    ("dataflow-closure-1", || dataflow_closure_and_task(1)),
    ("dataflow-closure-2", || dataflow_closure_and_task(2)),
    ("dataflow-child-1", || dataflow_task_and_child(1)),
    ("dataflow-child-2", || dataflow_task_and_child(2)),
];

/// The scenario named in [`CHILD`]; does nothing when run as an ordinary test.
#[test]
fn child_program() {
    let Some(name) = std::env::var_os(CHILD) else {
        return;
    };
    let name = name.to_str().expect("a scenario name");
    let (_, f) = SCENARIOS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no scenario `{name}`"));
    f();
    println!("scenario {name} ended");
}

/// Runs scenario `name` in a child process; fails if it aborts, fails or hangs.
fn in_child(name: &str) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_program",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, name)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pipe = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = pipe(Box::new(child.stdout.take().unwrap()));
    let err = pipe(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    let tail: String = {
        let lines: Vec<&str> = err.lines().collect();
        lines[lines.len().saturating_sub(12)..].join("\n")
    };
    match status {
        None => panic!("{name}: hung (killed after {DEADLINE:?}); stderr ends:\n{tail}"),
        Some(s) => assert!(
            s.success() && out.contains(&format!("scenario {name} ended")),
            "{name}: the child ended with {s} (an abort is a signal) instead of the \
             propagated panic; stderr ends:\n{tail}"
        ),
    }
}

#[test]
fn both_join_halves_panic_with_payloads_whose_drop_panics() {
    in_child("join-1");
    in_child("join-2");
}

#[test]
fn two_scope_spawns_panic_with_payloads_whose_drop_panics() {
    in_child("scope-spawns-1");
    in_child("scope-spawns-2");
}

#[test]
fn a_scope_closure_and_its_spawn_panic_with_payloads_whose_drop_panics() {
    in_child("scope-closure-1");
    in_child("scope-closure-2");
}

#[test]
fn two_broadcast_shares_panic_with_payloads_whose_drop_panics() {
    in_child("broadcast-2");
}

#[test]
fn two_working_phase_tasks_panic_with_payloads_whose_drop_panics() {
    in_child("phase-2");
}

#[test]
fn data_flow_tasks_run_inline_panic_with_payloads_whose_drop_panics() {
    in_child("dataflow-inline-repro-1");
    in_child("dataflow-inline-2");
}

#[test]
fn queued_and_stolen_data_flow_tasks_panic_with_payloads_whose_drop_panics() {
    in_child("dataflow-queued-1");
    in_child("dataflow-queued-2");
    in_child("dataflow-stolen-2");
}

#[test]
fn a_data_flow_closure_or_task_and_its_child_panic_with_payloads_whose_drop_panics() {
    in_child("dataflow-closure-1");
    in_child("dataflow-closure-2");
    in_child("dataflow-child-1");
    in_child("dataflow-child-2");
}
