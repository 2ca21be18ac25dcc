//! Every pool of the family, with every wake-up policy and memory manager: tasks are neither
//! lost nor duplicated, the working phase ends, panics propagate, bad input is an error.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use taskpools::synthetic::{self, task_count};
use taskpools::{Builder, Ctx, Error, MemKind, PoolKind, Task, WakePolicy};

#[test]
fn synthetic_runs_exactly_p_k_tasks_on_every_pool_thread_count_and_policy() {
    for pool in PoolKind::ALL {
        for threads in [1, 2, 4] {
            for wake in WakePolicy::ALL {
                let b = Builder::new().threads(threads).pool(pool).wake(wake);
                let r = synthetic::run(&b, 15, 0)
                    .unwrap_or_else(|e| panic!("{pool} x{threads} {wake}: {e}"));
                assert_eq!(r.tasks_run(), 5_149, "{pool} x{threads} {wake}");
                assert_eq!(r.workers.len(), threads);
                // Every task but the k initial ones was put by a running task.
                assert_eq!(r.total().puts, 5_149 - 15, "{pool} x{threads} {wake}");
            }
        }
    }
}

#[test]
fn every_memory_manager_on_every_list_based_pool() {
    for pool in PoolKind::ALL.into_iter().filter(|p| p.uses_mem()) {
        for mem in MemKind::ALL {
            let b = Builder::new().threads(2).pool(pool).mem(mem);
            let r = synthetic::run(&b, 18, 0).unwrap_or_else(|e| panic!("{pool}/{mem}: {e}"));
            assert_eq!(r.tasks_run(), task_count(18));
        }
    }
}

/// The pools that keep no list nodes of a memory manager (arrays, blocks, deques, and the
/// per-task-lock lists of `sq3` and `dq6`, whose nodes are reference-counted) accept every
/// memory manager all the same, and run the same tasks.
#[test]
fn every_memory_manager_is_accepted_by_the_pools_that_ignore_it() {
    for pool in PoolKind::ALL.into_iter().filter(|p| !p.uses_mem()) {
        for mem in MemKind::ALL {
            let b = Builder::new().threads(2).pool(pool).mem(mem);
            let r = synthetic::run(&b, 12, 0).unwrap_or_else(|e| panic!("{pool}/{mem}: {e}"));
            assert_eq!(r.tasks_run(), task_count(12), "{pool}/{mem}");
        }
    }
}

/// A task tree whose node ids are recorded: each id must be seen exactly once.
struct Tree<'a> {
    id: u64,
    depth: u32,
    fanout: u64,
    seen: &'a [AtomicU64],
}

impl Task for Tree<'_> {
    fn run(self, ctx: &mut Ctx<'_, Self>) {
        self.seen[self.id as usize].fetch_add(1, Ordering::Relaxed);
        if self.depth > 0 {
            for c in 0..self.fanout {
                ctx.put(Tree {
                    id: self.id * self.fanout + 1 + c,
                    depth: self.depth - 1,
                    fanout: self.fanout,
                    seen: self.seen,
                });
            }
        }
    }
}

#[test]
fn stress_every_task_id_exactly_once() {
    // A complete 4-ary tree of depth 8: 87 381 tasks with distinct ids, 4 threads on 2 cores.
    let fanout = 4u64;
    let depth = 8u32;
    let n: u64 = (0..=depth).map(|d| fanout.pow(d)).sum();
    for pool in PoolKind::ALL {
        for wake in WakePolicy::ALL {
            let seen: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
            let r = Builder::new()
                .threads(4)
                .pool(pool)
                .wake(wake)
                .run([Tree {
                    id: 0,
                    depth,
                    fanout,
                    seen: &seen,
                }])
                .unwrap();
            assert_eq!(r.tasks_run(), n, "{pool} {wake}");
            for (id, s) in seen.iter().enumerate() {
                assert_eq!(s.load(Ordering::Relaxed), 1, "{pool} {wake}: task {id}");
            }
        }
    }
}

/// One long task creates its children only at the end: idle workers must wait for them, not
/// leave the working phase.
struct Late<'a> {
    generation: u32,
    ran: &'a AtomicUsize,
}

impl Task for Late<'_> {
    fn run(self, ctx: &mut Ctx<'_, Self>) {
        self.ran.fetch_add(1, Ordering::Relaxed);
        if self.generation == 0 {
            std::thread::sleep(Duration::from_millis(50));
            for _ in 0..64 {
                ctx.put(Late {
                    generation: 1,
                    ran: self.ran,
                });
            }
        } else if self.generation == 1 {
            std::thread::sleep(Duration::from_micros(200));
            ctx.put(Late {
                generation: 2,
                ran: self.ran,
            });
        }
    }
}

#[test]
fn termination_waits_for_children_created_late_by_a_long_task() {
    for pool in PoolKind::ALL {
        for wake in WakePolicy::ALL {
            let ran = AtomicUsize::new(0);
            let r = Builder::new()
                .threads(3)
                .pool(pool)
                .wake(wake)
                .run([Late {
                    generation: 0,
                    ran: &ran,
                }])
                .unwrap();
            assert_eq!(ran.load(Ordering::Relaxed), 1 + 64 + 64, "{pool} {wake}");
            assert_eq!(r.tasks_run(), 129);
            if !matches!(pool, PoolKind::DistributedList | PoolKind::DistributedArray) {
                // The other workers had nothing to do for 50 ms and were still there to help
                // with the late children (a distributed pool may let them leave: nothing can
                // ever reach them).
                let helpers = r.workers.iter().filter(|w| w.tasks_run > 0).count();
                assert!(helpers >= 2, "{pool} {wake}: {:?}", r.workers);
            }
        }
    }
}

struct Bomb<'a> {
    depth: u32,
    at: u32,
    created: &'a AtomicUsize,
    dropped: &'a AtomicUsize,
}

impl<'a> Bomb<'a> {
    fn new(depth: u32, at: u32, created: &'a AtomicUsize, dropped: &'a AtomicUsize) -> Self {
        created.fetch_add(1, Ordering::Relaxed);
        Bomb {
            depth,
            at,
            created,
            dropped,
        }
    }
}

impl Task for Bomb<'_> {
    fn run(self, ctx: &mut Ctx<'_, Self>) {
        if self.depth == self.at {
            panic!("task at depth {} exploded", self.depth);
        }
        for _ in 0..2 {
            ctx.put(Bomb::new(
                self.depth + 1,
                self.at,
                self.created,
                self.dropped,
            ));
        }
    }
}

impl Drop for Bomb<'_> {
    fn drop(&mut self) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_panicking_task_ends_the_phase_and_the_panic_reaches_the_caller() {
    for pool in PoolKind::ALL {
        for wake in WakePolicy::ALL {
            let (created, dropped) = (AtomicUsize::new(0), AtomicUsize::new(0));
            let b = Builder::new().threads(3).pool(pool).wake(wake);
            let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                b.run([Bomb::new(0, 6, &created, &dropped)])
            }));
            let payload = res.expect_err("the panic must reach the caller");
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default();
            assert!(msg.contains("exploded"), "{pool} {wake}: {msg}");
            // Every task created was dropped exactly once: run (and consumed), or discarded
            // with the pool; none leaked in a queue, none dropped twice.
            assert!(created.load(Ordering::Relaxed) >= 7);
            assert_eq!(
                dropped.load(Ordering::Relaxed),
                created.load(Ordering::Relaxed),
                "{pool} {wake}"
            );
        }
    }
    // The library is usable afterwards.
    let r = synthetic::run(&Builder::new().threads(2), 12, 0).unwrap();
    assert_eq!(r.tasks_run(), task_count(12));
}

#[test]
fn an_absurd_thread_count_is_an_error_not_a_panic() {
    for n in [taskpools::MAX_THREADS + 1, 99_999_999_999, usize::MAX] {
        let e = Builder::new()
            .threads(n)
            .run(synthetic::initial_tasks(5, 0))
            .unwrap_err();
        assert!(
            matches!(e, Error::TooManyThreads { requested, .. } if requested == n),
            "{e}"
        );
        assert!(e.to_string().contains("at most 4096"), "{e}");
    }
}

#[test]
fn bad_input_is_a_clear_error() {
    let e = Builder::new()
        .threads(0)
        .run(synthetic::initial_tasks(5, 0))
        .unwrap_err();
    assert!(matches!(e, Error::ZeroThreads), "{e}");
    assert!(e.to_string().contains("at least 1"));
    let e = Builder::new().pool_name("sq5").unwrap_err();
    assert!(e.to_string().contains("unknown pool `sq5`"), "{e}");
    let e = Builder::new().mem_name("cgbkob").unwrap_err();
    assert!(
        e.to_string().contains("unknown memory manager `cgbkob`"),
        "{e}"
    );
    assert!(WakePolicy::from_name("sometimes").is_err());
    // Aliases and names both work.
    assert_eq!(
        Builder::new().pool_name("dq8").unwrap().pool_kind(),
        PoolKind::PrivatePublic
    );
    assert_eq!(
        Builder::new()
            .pool_name("private-public")
            .unwrap()
            .pool_kind(),
        PoolKind::PrivatePublic
    );
}

#[test]
fn an_empty_initial_set_terminates() {
    for pool in PoolKind::ALL {
        let r = Builder::new()
            .threads(2)
            .pool(pool)
            .run(Vec::<synthetic::A>::new())
            .unwrap();
        assert_eq!(r.tasks_run(), 0);
    }
}

#[test]
fn pinning_does_not_change_results() {
    let b = Builder::new().threads(2).pin(true);
    assert_eq!(
        synthetic::run(&b, 14, 0).unwrap().tasks_run(),
        task_count(14)
    );
}

#[test]
fn stealing_pools_steal_and_distributed_pools_do_not() {
    // One initial task: the second worker can only get work by stealing. (Whether it does
    // depends on thread start-up, so allow a few attempts; ~100 ms of work makes a miss
    // practically impossible.)
    let one_root = |b: &Builder| b.run([synthetic::A { i: 22, f: 10 }]).unwrap();
    for pool in [
        PoolKind::StealWorkingEnd,
        PoolKind::StealRandomizedLocal,
        PoolKind::StealOppositeEnd,
        PoolKind::StealOppositeEndNodeLocks,
        PoolKind::StealArray,
        PoolKind::PrivatePublic,
        PoolKind::PrivatePublicGreedy,
        PoolKind::Combined,
    ] {
        let b = Builder::new().threads(2).pool(pool);
        let stole = (0..3).any(|_| {
            let r = one_root(&b);
            let t = r.total();
            assert!(
                t.steal_attempts >= t.steals && t.tasks_stolen >= t.steals,
                "{pool}: {t:?}"
            );
            t.steals > 0 && r.workers.iter().all(|w| w.tasks_run > 0)
        });
        assert!(stole, "{pool}: the idle worker never stole");
    }
    let r = one_root(&Builder::new().threads(2).pool(PoolKind::DistributedList));
    assert_eq!(r.total().steals, 0);
    assert_eq!(r.workers[1].tasks_run, 0, "nothing can reach worker 1");
}

/// One long task and nothing else: the other worker must go to sleep, not wait (spinning) for
/// an answer from the busy one. On `private-deque` the busy worker withdraws its work hint
/// when it takes its last task (and when it declines a request), so the thief stops asking,
/// and a request it made just before takes back instead of waiting out the task.
#[test]
fn an_idle_worker_sleeps_while_the_only_task_runs() {
    struct Long;
    impl Task for Long {
        fn run(self, _: &mut Ctx<'_, Self>) {
            std::thread::sleep(Duration::from_millis(150));
        }
    }
    for pool in [PoolKind::PrivateDeque, PoolKind::ChaseLev] {
        let r = Builder::new()
            .threads(2)
            .pool(pool)
            .wake(WakePolicy::OnEmpty)
            .run([Long])
            .unwrap();
        let idle: Vec<_> = r.workers.iter().filter(|w| w.tasks_run == 0).collect();
        assert_eq!(idle.len(), 1, "{pool}: {:?}", r.workers);
        assert!(idle[0].sleeps >= 1, "{pool}: {:?}", r.workers);
    }
}

/// `private-deque` makes the wake-up a put owes at the end of the putting task (its thieves
/// could not take the task earlier anyway): a worker that went to sleep while the only task
/// ran is woken when that task ends, having put two children, and takes one of them.
#[test]
fn a_sleeper_is_woken_for_puts_made_before_the_task_ends() {
    enum T {
        Root,
        Child,
    }
    impl Task for T {
        fn run(self, ctx: &mut Ctx<'_, Self>) {
            // Long enough for the other worker to fall asleep, and for it to wake and ask
            // for a child while the owner runs the other one.
            std::thread::sleep(Duration::from_millis(100));
            if let T::Root = self {
                ctx.put(T::Child);
                ctx.put(T::Child);
            }
        }
    }
    for policy in [WakePolicy::OnEmpty, WakePolicy::EveryPut] {
        let b = Builder::new()
            .threads(2)
            .pool(PoolKind::PrivateDeque)
            .wake(policy);
        // A worker that starts late may find the root queued and take it: allow a few tries.
        let ok = (0..3).any(|_| {
            let r = b.run([T::Root]).unwrap();
            assert_eq!(r.tasks_run(), 3);
            // The worker that did not run the root slept while it ran, then took a child.
            r.workers
                .iter()
                .all(|w| w.tasks_run >= 1 && (w.tasks_run == 2 || w.sleeps >= 1))
        });
        assert!(
            ok,
            "{policy:?}: the sleeping worker was never woken for the children"
        );
    }
}

/// The same wake-up, owed by a task that does not end but waits, calling `Ctx::queued`, for
/// its child to run elsewhere: `queued` makes it (and answers the thief).
#[test]
fn a_task_waiting_in_queued_gets_its_child_run_by_a_sleeper() {
    enum T<'a> {
        Root(&'a std::sync::atomic::AtomicBool),
        Child(&'a std::sync::atomic::AtomicBool),
    }
    impl Task for T<'_> {
        fn run(self, ctx: &mut Ctx<'_, Self>) {
            match self {
                T::Root(done) => {
                    std::thread::sleep(Duration::from_millis(100));
                    ctx.put(T::Child(done));
                    let t0 = std::time::Instant::now();
                    while !done.load(Ordering::Acquire) {
                        ctx.queued();
                        assert!(
                            t0.elapsed() < Duration::from_secs(20),
                            "the child never ran on the other worker"
                        );
                        std::thread::yield_now();
                    }
                }
                T::Child(done) => done.store(true, Ordering::Release),
            }
        }
    }
    for policy in [WakePolicy::OnEmpty, WakePolicy::EveryPut] {
        let done = std::sync::atomic::AtomicBool::new(false);
        let r = Builder::new()
            .threads(2)
            .pool(PoolKind::PrivateDeque)
            .wake(policy)
            .run([T::Root(&done)])
            .unwrap();
        assert_eq!(r.tasks_run(), 2, "{policy:?}");
        assert!(done.load(Ordering::Acquire));
        // The child ran on the worker that had gone to sleep while the root slept.
        assert!(
            r.workers.iter().any(|w| w.sleeps >= 1 && w.tasks_run == 1),
            "{policy:?}: {:?}",
            r.workers
        );
    }
}
