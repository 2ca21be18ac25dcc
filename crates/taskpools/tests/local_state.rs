//! Per-worker state (`Ctx::local`, `Builder::run_with`, `Builder::run_reduce`): counts kept in
//! the workers' states add up exactly on every pool, the states come back in worker order, and
//! a panicking run drops them and propagates the panic.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicUsize, Ordering};

use taskpools::{Builder, Ctx, PoolKind, Task};

/// A complete binary tree of tasks; each task counts itself in its worker's state.
struct Count(u32);

impl Task<u64> for Count {
    fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
        *ctx.local() += 1;
        if self.0 > 0 {
            ctx.put(Count(self.0 - 1));
            ctx.put(Count(self.0 - 1));
        }
    }
}

#[test]
fn per_worker_counts_sum_exactly_on_every_pool() {
    const DEPTH: u32 = 19;
    let expected: u64 = (1 << (DEPTH + 1)) - 1; // 1_048_575 tasks
    for pool in PoolKind::ALL {
        let b = Builder::new().threads(2).pool(pool);
        let (report, counts) = b
            .run_with(|_| 0u64, [Count(DEPTH)])
            .unwrap_or_else(|e| panic!("{pool}: {e}"));
        assert_eq!(counts.len(), 2, "{pool}");
        assert_eq!(counts.iter().sum::<u64>(), expected, "{pool}");
        assert_eq!(report.tasks_run(), expected, "{pool}");
        // Each worker's state counted exactly the tasks that worker ran.
        for (i, (c, w)) in counts.iter().zip(&report.workers).enumerate() {
            assert_eq!(*c, w.tasks_run, "{pool}: worker {i}");
        }
    }
}

#[test]
fn run_reduce_folds_the_states() {
    for pool in PoolKind::ALL {
        let b = Builder::new().threads(2).pool(pool);
        let (report, total) = b
            .run_reduce(|_| 0u64, [Count(12), Count(12)], |a, b| a + b)
            .unwrap_or_else(|e| panic!("{pool}: {e}"));
        assert_eq!(total, 2 * ((1 << 13) - 1), "{pool}");
        assert_eq!(total, report.tasks_run(), "{pool}");
    }
}

/// A task that records which worker ran it into that worker's state.
struct Mark;

/// Per-worker state: the index `init` was called with, and the workers seen by its tasks.
struct Seen {
    index: usize,
    workers: Vec<usize>,
}

impl Task<Seen> for Mark {
    fn run(self, ctx: &mut Ctx<'_, Self, Seen>) {
        let me = ctx.worker();
        ctx.local().workers.push(me);
    }
}

#[test]
fn states_come_back_in_worker_order_with_their_init_index() {
    for pool in PoolKind::ALL {
        for threads in [1, 2, 3] {
            let b = Builder::new().threads(threads).pool(pool);
            let (report, states) = b
                .run_with(
                    |i| Seen {
                        index: i,
                        workers: Vec::new(),
                    },
                    (0..64).map(|_| Mark),
                )
                .unwrap_or_else(|e| panic!("{pool} x{threads}: {e}"));
            assert_eq!(states.len(), threads);
            for (i, s) in states.iter().enumerate() {
                assert_eq!(s.index, i, "{pool} x{threads}");
                // A state is only ever reached by tasks running on its own worker.
                assert!(s.workers.iter().all(|&w| w == i), "{pool} x{threads}");
            }
            let marks: usize = states.iter().map(|s| s.workers.len()).sum();
            assert_eq!(marks as u64, report.tasks_run());
            assert_eq!(marks, 64);
        }
    }
}

static MADE: AtomicUsize = AtomicUsize::new(0);
static DROPPED: AtomicUsize = AtomicUsize::new(0);
static COUNTED: AtomicUsize = AtomicUsize::new(0);

/// A per-worker state that counts its drops and, when dropped, hands on its task count.
#[derive(Debug)]
struct Tracked(usize);

impl Tracked {
    fn new() -> Self {
        MADE.fetch_add(1, Ordering::Relaxed);
        Tracked(0)
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::Relaxed);
        COUNTED.fetch_add(self.0, Ordering::Relaxed);
    }
}

/// A tree of tasks; the one at depth `at` panics.
struct Bomb {
    depth: u32,
    at: u32,
}

impl Task<Tracked> for Bomb {
    fn run(self, ctx: &mut Ctx<'_, Self, Tracked>) {
        ctx.local().0 += 1;
        if self.depth == self.at {
            panic!("task at depth {} exploded", self.depth);
        }
        for _ in 0..2 {
            ctx.put(Bomb {
                depth: self.depth + 1,
                at: self.at,
            });
        }
    }
}

#[test]
fn a_panicking_run_drops_the_states_and_propagates_the_panic() {
    // The only test in this file using MADE / DROPPED, so it runs alone on them.
    for pool in PoolKind::ALL {
        let made = MADE.load(Ordering::Relaxed);
        let dropped = DROPPED.load(Ordering::Relaxed);
        let counted = COUNTED.load(Ordering::Relaxed);
        let b = Builder::new().threads(2).pool(pool);
        let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            b.run_with(|_| Tracked::new(), [Bomb { depth: 0, at: 8 }])
        }));
        let payload = res.expect_err("the panic must reach the caller");
        let msg = payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(msg.contains("exploded"), "{pool}: {msg}");
        let made = MADE.load(Ordering::Relaxed) - made;
        let dropped = DROPPED.load(Ordering::Relaxed) - dropped;
        assert_eq!(made, 2, "{pool}: one state per worker");
        assert_eq!(dropped, made, "{pool}: every state dropped exactly once");
        // The exploding task and its 8 ancestors ran and were counted in the states.
        let counted = COUNTED.load(Ordering::Relaxed) - counted;
        assert!(counted >= 9, "{pool}: {counted} tasks counted");
    }
}

/// A binary tree that puts children only while its worker's own queue is short
/// (`Ctx::queued`), and counts the other subtrees with plain calls; it also checks that the
/// queue it reads grows with its own puts.
struct Cutoff(u32);

/// (nodes, nodes counted by plain calls, whether a put was ever not seen by `queued`).
type CutoffState = (u64, u64, bool);

fn subtree(d: u32) -> u64 {
    (1u64 << (d + 1)) - 1
}

impl Task<CutoffState> for Cutoff {
    fn run(self, ctx: &mut Ctx<'_, Self, CutoffState>) {
        ctx.local().0 += 1;
        if self.0 == 0 {
            return;
        }
        for _ in 0..2 {
            let before = ctx.queued();
            if before < 8 {
                ctx.put(Cutoff(self.0 - 1));
                // Alone, the owner finds its own put in its queue at once (for the pools
                // that report a queue).
                if ctx.queued() == 0 && ctx.workers() == 1 {
                    ctx.local().2 = true;
                }
            } else {
                let n = subtree(self.0 - 1);
                let l = ctx.local();
                l.0 += n;
                l.1 += n;
            }
        }
    }
}

#[test]
fn queued_reports_the_own_queue_and_a_cutoff_loses_no_node() {
    const DEPTH: u32 = 18;
    // The pools without a queue per worker report 0.
    let none = [
        PoolKind::CentralList,
        PoolKind::CentralArray,
        PoolKind::CentralFifo,
        PoolKind::CentralFifoNodeLocks,
        PoolKind::Randomized,
    ];
    for pool in PoolKind::ALL {
        for threads in [1, 2] {
            let b = Builder::new().threads(threads).pool(pool);
            let (report, states) = b
                .run_with(|_| (0, 0, false), [Cutoff(DEPTH)])
                .unwrap_or_else(|e| panic!("{pool}: {e}"));
            let nodes: u64 = states.iter().map(|s| s.0).sum();
            let called: u64 = states.iter().map(|s| s.1).sum();
            assert_eq!(nodes, subtree(DEPTH), "{pool} x{threads}");
            assert_eq!(report.tasks_run() + called, nodes, "{pool} x{threads}");
            if !none.contains(&pool) {
                assert!(
                    !states.iter().any(|s| s.2),
                    "{pool} x{threads}: a put was not in the queue"
                );
                // Subtrees ran as calls. (Not far fewer tasks: below a queue of 8, a task
                // puts one child and calls the other, so each called subtree's root has a
                // chain of tasks above it; a third of the nodes alone. With a thief the
                // queues are shorter and the share varies, so the bound is for 1 thread.)
                assert!(
                    called > 0 && (threads > 1 || report.tasks_run() < nodes / 2),
                    "{pool} x{threads}: {} tasks",
                    report.tasks_run()
                );
            } else {
                // `queued` is 0: every node is a task.
                assert_eq!(called, 0, "{pool} x{threads}");
            }
        }
    }
}
