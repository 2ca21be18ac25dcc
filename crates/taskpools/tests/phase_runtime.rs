//! Working phases on a persistent runtime, and front ends nested in each other: a phase runs on
//! the runtime's own threads (no thread per phase), `join`/`scope` inside a task run on the
//! task's worker, a phase inside a fork-join task runs or is refused with a clear error, and
//! nothing hangs. Every test builds its own runtime (tests of one binary run in parallel).
#![cfg(not(loom))]

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::{self, ThreadId};

use taskpools::forkjoin::{self, Pool};
use taskpools::{Builder, Ctx, Error, PoolKind, Runtime, Task, WakePolicy};

fn fib(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        let (a, b) = forkjoin::join(|| fib(n - 1), || fib(n - 2));
        a + b
    }
}

fn fib_seq(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

/// A binary tree of tasks; each records the thread it ran on in its worker's state.
struct Where(u32);

impl Task<HashSet<ThreadId>> for Where {
    fn run(self, ctx: &mut Ctx<'_, Self, HashSet<ThreadId>>) {
        ctx.local().insert(thread::current().id());
        if self.0 > 0 {
            ctx.put(Where(self.0 - 1));
            ctx.put(Where(self.0 - 1));
        }
    }
}

/// A binary tree of tasks with no per-worker state.
struct Plain(u32);

impl Task for Plain {
    fn run(self, ctx: &mut Ctx<'_, Self>) {
        if self.0 > 0 {
            ctx.put(Plain(self.0 - 1));
            ctx.put(Plain(self.0 - 1));
        }
    }
}

#[test]
fn every_phase_runs_on_the_runtime_s_own_threads() {
    let rt = Runtime::new(2).unwrap();
    let workers: Vec<ThreadId> = rt.broadcast(|_| thread::current().id());
    let workers_set: HashSet<ThreadId> = workers.iter().copied().collect();
    assert_eq!(workers_set.len(), 2);
    for pool in PoolKind::ALL {
        for _ in 0..5 {
            let (report, seen) = Builder::new()
                .threads(2)
                .pool(pool)
                .runtime(&rt)
                .run_with(|_| HashSet::new(), [Where(12)])
                .unwrap_or_else(|e| panic!("{pool}: {e}"));
            assert_eq!(report.tasks_run(), (1 << 13) - 1, "{pool}");
            for (i, s) in seen.iter().enumerate() {
                // Worker i of the phase is worker i of the runtime, whichever tasks it ran.
                assert!(
                    s.iter().all(|t| *t == workers[i]),
                    "{pool}: phase worker {i} ran tasks on a thread that is not runtime worker {i}"
                );
            }
        }
    }
}

#[test]
fn a_phase_narrower_than_the_runtime_uses_its_first_workers_and_a_wider_one_is_refused() {
    let rt = Runtime::new(2).unwrap();
    let report = Builder::new()
        .threads(1)
        .runtime(&rt)
        .run([Plain(8)])
        .unwrap();
    assert_eq!(report.workers.len(), 1);
    assert_eq!(report.tasks_run(), (1 << 9) - 1);
    let err = Builder::new()
        .threads(3)
        .runtime(&rt)
        .run([Plain(3)])
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::PhaseWider {
                workers: 3,
                threads: 2
            }
        ),
        "{err}"
    );
    // The runtime is still usable.
    assert_eq!(rt.join(|| 1, || 2), (1, 2));
}

/// A task that computes `fib(n)` with fork-join, or with a scope of spawns.
struct FibTask {
    n: u32,
    scoped: bool,
}

impl Task<u64> for FibTask {
    fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
        let v = if self.scoped {
            let (mut a, mut b) = (0, 0);
            forkjoin::scope(|s| {
                s.spawn(|_| a = fib(self.n - 1));
                s.spawn(|_| b = fib(self.n - 2));
            });
            a + b
        } else {
            fib(self.n)
        };
        *ctx.local() += v;
        // The task runs on a worker of the runtime the phase runs on.
        assert!(forkjoin::current_thread_index().is_some());
    }
}

#[test]
fn join_and_scope_inside_a_task_run_on_the_task_s_worker() {
    for fj in Pool::ALL {
        let rt = Runtime::builder().threads(2).pool(fj).build().unwrap();
        for pool in PoolKind::ALL {
            for scoped in [false, true] {
                let tasks = (10..20).map(|n| FibTask { n, scoped });
                let (_, sum) = Builder::new()
                    .threads(2)
                    .pool(pool)
                    .runtime(&rt)
                    .run_reduce(|_| 0u64, tasks, |a, b| a + b)
                    .unwrap_or_else(|e| panic!("{fj}/{pool}: {e}"));
                let expected: u64 = (10..20).map(fib_seq).sum();
                assert_eq!(sum, expected, "{fj}/{pool}, scoped {scoped}");
            }
        }
    }
}

#[test]
fn a_join_inside_a_task_works_on_a_phase_narrower_than_the_runtime() {
    // Worker 1 is not in the phase: it may steal the joins' halves.
    for fj in Pool::ALL {
        let rt = Runtime::builder().threads(2).pool(fj).build().unwrap();
        let (_, sum) = Builder::new()
            .threads(1)
            .runtime(&rt)
            .run_reduce(
                |_| 0u64,
                (15..22).map(|n| FibTask { n, scoped: false }),
                |a, b| a + b,
            )
            .unwrap();
        assert_eq!(sum, (15..22).map(fib_seq).sum::<u64>(), "{fj}");
    }
}

#[test]
fn a_phase_inside_a_fork_join_task_runs_on_that_runtime() {
    for fj in Pool::ALL {
        let rt = Runtime::builder().threads(2).pool(fj).build().unwrap();
        let workers: HashSet<ThreadId> = rt
            .broadcast(|_| thread::current().id())
            .into_iter()
            .collect();
        let (r, seen) = rt.install(|| {
            // No runtime named: the calling worker's runtime is used.
            Builder::new()
                .threads(2)
                .run_with(|_| HashSet::new(), [Where(10)])
                .unwrap()
        });
        assert_eq!(r.tasks_run(), (1 << 11) - 1, "{fj}");
        assert!(seen.iter().flatten().all(|t| workers.contains(t)), "{fj}");
        // Also from inside a join half, with the other half busy meanwhile.
        let (a, b) = rt.join(
            || {
                Builder::new()
                    .threads(2)
                    .run_reduce(
                        |_| 0u64,
                        [FibTask {
                            n: 15,
                            scoped: false,
                        }],
                        |a, b| a + b,
                    )
                    .map(|(_, s)| s)
            },
            || fib(18),
        );
        assert_eq!(a.unwrap(), fib_seq(15), "{fj}");
        assert_eq!(b, fib_seq(18), "{fj}");
    }
}

/// A task that starts a phase: on the runtime it runs on if `on` is given, else wherever
/// `Builder` chooses.
struct Nested<'r> {
    on: Option<&'r Runtime>,
}

type Outcome = Option<Result<(u64, HashSet<ThreadId>), String>>;

impl Task<Outcome> for Nested<'_> {
    fn run(self, ctx: &mut Ctx<'_, Self, Outcome>) {
        let b = Builder::new().threads(2);
        let r = match self.on {
            Some(rt) => b.runtime(rt).run_with(|_| HashSet::new(), [Where(6)]),
            None => b.run_with(|_| HashSet::new(), [Where(6)]),
        };
        *ctx.local() = Some(
            r.map(|(r, seen)| (r.tasks_run(), seen.into_iter().flatten().collect()))
                .map_err(|e| e.to_string()),
        );
    }
}

#[test]
fn a_phase_inside_a_phase_task_runs_elsewhere_or_is_a_clear_error() {
    let rt = Runtime::new(2).unwrap();
    let workers: HashSet<ThreadId> = rt
        .broadcast(|_| thread::current().id())
        .into_iter()
        .collect();
    // Named runtime: it is held by the outer phase, so the inner one is refused.
    let (_, results) = Builder::new()
        .runtime(&rt)
        .run_with(|_| None, [Nested { on: Some(&rt) }])
        .unwrap();
    let r = results.into_iter().flatten().next().expect("the task ran");
    let e = r.expect_err("a nested phase on the same named runtime is refused");
    assert!(e.contains("already running on this runtime"), "{e}");
    // No runtime named: the inner phase runs on another runtime, and completes.
    let (_, results) = Builder::new()
        .runtime(&rt)
        .run_with(|_| None, [Nested { on: None }])
        .unwrap();
    let (n, seen) = results.into_iter().flatten().next().unwrap().unwrap();
    assert_eq!(n, 127);
    assert!(
        seen.is_disjoint(&workers),
        "the inner phase ran on other threads"
    );
    // The runtime works afterwards.
    let report = Builder::new().runtime(&rt).run([Plain(4)]).unwrap();
    assert_eq!(report.tasks_run(), 31);
}

#[test]
fn two_phases_in_the_halves_of_a_join_both_finish() {
    for fj in Pool::ALL {
        let rt = Runtime::builder().threads(2).pool(fj).build().unwrap();
        for _ in 0..20 {
            // No runtime named: a phase that finds the runtime held runs elsewhere.
            let phase = || {
                Builder::new()
                    .threads(2)
                    .run([Plain(9)])
                    .map(|r| r.tasks_run())
            };
            let (a, b) = rt.join(phase, phase);
            assert_eq!(a.unwrap(), (1 << 10) - 1, "{fj}");
            assert_eq!(b.unwrap(), (1 << 10) - 1, "{fj}");
            // Named: each finishes or is refused with PhaseBusy, never hangs.
            let named = || {
                Builder::new()
                    .runtime(&rt)
                    .run([Plain(9)])
                    .map(|r| r.tasks_run())
            };
            let (a, b) = rt.join(named, named);
            let mut ok = 0;
            for r in [a, b] {
                match r {
                    Ok(n) => {
                        assert_eq!(n, (1 << 10) - 1);
                        ok += 1;
                    }
                    Err(Error::PhaseBusy) => {}
                    Err(e) => panic!("{fj}: unexpected error {e}"),
                }
            }
            assert!(ok >= 1, "{fj}: at least the first phase runs");
        }
    }
}

#[test]
fn a_pinned_phase_inside_an_unpinned_runtime_s_task_gets_a_pinned_runtime() {
    let rt = Runtime::new(2).unwrap();
    assert!(!rt.pinned());
    let workers: HashSet<ThreadId> = rt
        .broadcast(|_| thread::current().id())
        .into_iter()
        .collect();
    let seen = rt.install(|| {
        Builder::new()
            .threads(2)
            .pin(true)
            .run_with(|_| HashSet::new(), [Where(6)])
            .unwrap()
            .1
    });
    assert!(seen.into_iter().flatten().all(|t| !workers.contains(&t)));
}

#[test]
fn a_named_runtime_sets_the_default_thread_count() {
    let rt = Runtime::new(1).unwrap();
    // Without .threads(..), the phase takes the runtime's width, whatever the CPU count.
    let report = Builder::new().runtime(&rt).run([Plain(5)]).unwrap();
    assert_eq!(report.workers.len(), 1);
}

#[test]
fn phases_from_several_outside_threads_wait_for_each_other() {
    let rt = Runtime::new(2).unwrap();
    let total = AtomicU64::new(0);
    thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..5 {
                    let r = Builder::new()
                        .threads(2)
                        .runtime(&rt)
                        .wake(WakePolicy::EveryPut)
                        .run([Plain(8)])
                        .expect("outside threads wait for the runtime");
                    total.fetch_add(r.tasks_run(), Ordering::Relaxed);
                }
            });
        }
    });
    assert_eq!(total.load(Ordering::Relaxed), 20 * ((1 << 9) - 1));
}

#[test]
fn a_phase_from_a_worker_of_another_runtime_finishes() {
    let a = Runtime::new(1).unwrap();
    let b = Runtime::new(2).unwrap();
    let n = a.install(|| {
        Builder::new()
            .threads(2)
            .runtime(&b)
            .run([Plain(8)])
            .unwrap()
            .tasks_run()
    });
    assert_eq!(n, (1 << 9) - 1);
}

struct Boom(u32);

impl Task for Boom {
    fn run(self, ctx: &mut Ctx<'_, Self>) {
        if self.0 == 0 {
            panic!("boom in a phase task");
        }
        ctx.put(Boom(self.0 - 1));
        ctx.put(Boom(self.0 - 1));
    }
}

#[test]
fn a_panic_in_a_phase_reaches_the_caller_and_the_runtime_stays_usable() {
    let rt = Runtime::new(2).unwrap();
    for pool in PoolKind::ALL {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Builder::new()
                .threads(2)
                .pool(pool)
                .runtime(&rt)
                .run([Boom(6)])
        }));
        let p = r.expect_err("the panic propagates");
        assert_eq!(p.downcast_ref::<&str>(), Some(&"boom in a phase task"));
        let report = Builder::new()
            .threads(2)
            .pool(pool)
            .runtime(&rt)
            .run([Plain(5)])
            .unwrap();
        assert_eq!(report.tasks_run(), 63, "{pool}");
    }
    assert_eq!(rt.join(|| fib(10), || 7), (55, 7));
}

#[test]
fn broadcast_runs_once_per_worker_and_propagates_panics() {
    let rt = Runtime::new(2).unwrap();
    assert_eq!(rt.broadcast(|c| c.index() + 100), [100, 101]);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.broadcast(|c| {
            let i = c.index();
            if i == 1 {
                panic!("share 1");
            }
            i
        })
    }));
    assert!(r.is_err());
    assert_eq!(rt.broadcast(|c| c.index()), [0, 1]);
}

/// Names of the threads that ran a phase's tasks.
struct Named(u32);

impl Task<HashSet<String>> for Named {
    fn run(self, ctx: &mut Ctx<'_, Self, HashSet<String>>) {
        let name = thread::current().name().unwrap_or("?").to_string();
        ctx.local().insert(name);
        if self.0 > 0 {
            ctx.put(Named(self.0 - 1));
            ctx.put(Named(self.0 - 1));
        }
    }
}

#[test]
fn a_phase_started_by_a_spawn_while_the_runtime_drops_runs_there_or_is_refused() {
    let (mut ran, mut refused) = (0, 0);
    for i in 0..50u64 {
        let rt = Runtime::builder()
            .threads(2)
            .thread_name(|i| format!("dying-{i}"))
            .build()
            .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        rt.spawn(move || {
            // No runtime named: the phase runs on the runtime this job runs on.
            let r = Builder::new()
                .threads(2)
                .run_with(|_| HashSet::new(), [Named(6)])
                .map(|(r, names)| (r.tasks_run(), names));
            tx.send(r).unwrap();
        });
        // Drop at different moments: before the spawn has run, while its phase runs, after.
        thread::sleep(std::time::Duration::from_micros((i % 10) * 40));
        drop(rt); // runs the queued spawn; must not hang on the phase it starts
        match rx.recv().unwrap() {
            Ok((n, names)) => {
                assert_eq!(n, 127);
                let names: HashSet<String> = names.into_iter().flatten().collect();
                assert!(
                    names.iter().all(|n| n.starts_with("dying-")),
                    "the phase ran on the dropped runtime's workers, not elsewhere: {names:?}"
                );
                ran += 1;
            }
            Err(Error::ShuttingDown) => refused += 1,
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    eprintln!("{ran} phases ran, {refused} were refused by the shutdown");
}

/// Runs `f` on its own thread and fails if it has not returned within `secs` (a hang).
fn within(secs: u64, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    rx.recv_timeout(std::time::Duration::from_secs(secs))
        .expect("hung: a claim was held while user code asked for it again");
}

#[test]
fn initial_tasks_made_by_an_iterator_that_uses_the_runtime_do_not_deadlock() {
    // The iterator of initial tasks broadcasts on the phase's own runtime.
    within(30, || {
        let rt = Runtime::new(2).unwrap();
        let initial = (0..2).map(|_| {
            rt.broadcast(|c| c.index());
            Plain(3)
        });
        let r = Builder::new().runtime(&rt).run(initial).unwrap();
        assert_eq!(r.tasks_run(), 30);
    });
    // The iterator runs a phase on the global runtime, as does the outer phase.
    within(30, || {
        let initial = (0..2).map(|_| {
            Builder::new().threads(1).run([Plain(2)]).unwrap();
            Plain(2)
        });
        let r = Builder::new().threads(1).run(initial).unwrap();
        assert_eq!(r.tasks_run(), 14);
    });
}

#[test]
fn worker_counters_count_shares_injections_steals_and_sleeps() {
    let rt = Runtime::builder()
        .threads(2)
        .pool(Pool::ChaseLev)
        .build()
        .unwrap();
    let before: u64 = rt.worker_counters().iter().map(|c| c.shares).sum();
    for _ in 0..3 {
        rt.broadcast(|_| ());
    }
    let c = rt.worker_counters();
    // Each broadcast's caller runs its own share inline; the other worker takes one by mail.
    assert_eq!(c.iter().map(|c| c.shares).sum::<u64>() - before, 3);
    assert!(c.iter().map(|c| c.injected).sum::<u64>() >= 3, "{c:?}");
    // `b` is pushed while `a` sleeps: on Chase–Lev the other worker takes it directly.
    // `a` waits (bounded) until `b` has run, which only a thief can do meanwhile.
    let b_ran = std::sync::atomic::AtomicBool::new(false);
    rt.join(
        || {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while !b_ran.load(std::sync::atomic::Ordering::Acquire)
                && std::time::Instant::now() < deadline
            {
                thread::sleep(std::time::Duration::from_millis(1));
            }
        },
        || b_ran.store(true, std::sync::atomic::Ordering::Release),
    );
    let c = rt.worker_counters();
    assert!(c.iter().map(|c| c.steals).sum::<u64>() >= 1, "{c:?}");
    assert!(c.iter().map(|c| c.steal_rounds).sum::<u64>() >= 1, "{c:?}");
    // An idle worker spins a while before it sleeps; on a loaded host that can take long,
    // so wait for it (bounded) instead of sleeping a fixed time.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut c = rt.worker_counters();
    while !c.iter().all(|c| c.sleeps >= 1) && std::time::Instant::now() < deadline {
        thread::sleep(std::time::Duration::from_millis(20));
        c = rt.worker_counters();
    }
    assert!(c.iter().all(|c| c.sleeps >= 1), "idle workers sleep: {c:?}");
}

/// A worker that steals a spawn of a phase task's scope can take its own share of the phase
/// while it runs that spawn (in a wait nested inside it). The phase then needs the spawn,
/// which is suspended below the share: the share must leave the phase when it runs dry
/// instead of sleeping in it until the phase ends (it hung that way), and on `private-deque`
/// its steals must not wait for the task's own worker, which waits for the spawn inside the
/// task and answers no request (it hung that way too: about 1 run in 100, CI 2026-11-28).
#[test]
fn a_phase_share_taken_on_top_of_a_stolen_spawn_does_not_hold_the_phase() {
    let reps: u32 = if cfg!(debug_assertions) { 300 } else { 3000 };
    within(120, move || {
        for fj in Pool::ALL {
            let rt = Runtime::builder().threads(2).pool(fj).build().unwrap();
            for i in 0..reps {
                let pool = PoolKind::ALL[i as usize % PoolKind::ALL.len()];
                let tasks = (14..17).map(|n| FibTask { n, scoped: true });
                let (_, sum) = Builder::new()
                    .threads(2)
                    .pool(pool)
                    .runtime(&rt)
                    .run_reduce(|_| 0u64, tasks, |a, b| a + b)
                    .unwrap();
                assert_eq!(sum, (14..17).map(fib_seq).sum::<u64>(), "{fj}/{pool}");
            }
        }
    });
}
