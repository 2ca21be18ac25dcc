//! Loom model of cancelling a data-flow scope, run with the shipped stop state, notify list,
//! dependence counter, completion count and start check ([`skips`]) on loom's atomics:
//! a task cancels the scope and completes while the spawner links a successor to it. The
//! successor starts after the cancel wherever it runs (in the completer, or in the spawner
//! when the predecessor has completed before the link), so it must skip; it counts itself
//! skipped before it completes, so the scope's end, which waits for the completions, sees
//! the skip. Planted-bug twins that must fail: the start check made at the spawn (the
//! successor runs after the cancel), and the skip counted after the completion (the scope's
//! end misses it).

use super::skips;
use crate::cancel::{Ended, Stop};
use crate::dataflow::notify::{DepCounter, NotifyList, NotifyNode, Push};
use crate::dataflow::weak::child_completes;
use crate::sync::{Arc, AtomicBool, AtomicUsize, Ordering, UnsafeCell};

#[derive(Clone, Copy, PartialEq)]
enum Bug {
    None,
    /// The successor decides whether to skip when it is spawned, before its predecessor
    /// has run.
    CheckAtSpawn,
    /// The successor counts itself skipped after its completion.
    SkipAfterComplete,
}

/// The scope: its stop state, its children's completions, and what the successor did.
struct World {
    stop: Stop,
    /// The frame's count of completed children (`Frame::completed`).
    completed: AtomicUsize,
    pred_list: NotifyList,
    succ_deps: DepCounter,
    /// The successor's output; the body writes it, a skip leaves it.
    out: UnsafeCell<u64>,
    /// The spawner's decision, under `Bug::CheckAtSpawn`.
    decided_at_spawn: AtomicBool,
}

// SAFETY (test): `out` is accessed under the protocol being checked; loom reports any access
// it does not order.
unsafe impl Send for World {}
unsafe impl Sync for World {}

/// `run_task` for the successor: the start check, then the body or the skip, then the
/// completion (`complete`: its own list is empty here, so only the parent's count).
fn run_succ(w: &World, bug: Bug) {
    let skip = if bug == Bug::CheckAtSpawn {
        w.decided_at_spawn.load(Ordering::Relaxed)
    } else {
        skips(false, false, &w.stop)
    };
    if skip {
        if bug != Bug::SkipAfterComplete {
            w.stop.skip();
        }
    } else {
        // SAFETY (test): only the successor writes `out`; the scope's end reads it after
        // the completions.
        w.out.with_mut(|x| unsafe { *x = 1 });
    }
    child_completes(&w.completed);
    if skip && bug == Bug::SkipAfterComplete {
        w.stop.skip();
    }
}

fn cancel_then_complete(bug: Bug) {
    loom::model(move || {
        let w = Arc::new(World {
            stop: Stop::new(),
            completed: AtomicUsize::new(0),
            pred_list: NotifyList::new(),
            succ_deps: DepCounter::new(),
            out: UnsafeCell::new(0),
            decided_at_spawn: AtomicBool::new(false),
        });
        let node = Box::into_raw(Box::new(NotifyNode::new(std::ptr::null())));
        // The predecessor, running on a worker: its body cancels the scope; it completes
        // (closes its list and readies its successor, which `schedule` pushes on this
        // worker's deque) and counts itself; the worker then pops the successor and runs it.
        let t = {
            let w = Arc::clone(&w);
            loom::thread::spawn(move || {
                w.stop.cancel();
                let mut queued = false;
                // SAFETY (test): closed once; the node lives until the model's end.
                unsafe { w.pred_list.close(false, |_| queued = w.succ_deps.fire()) };
                child_completes(&w.completed);
                if queued {
                    run_succ(&w, bug);
                }
            })
        };
        // The spawner: spawns the successor after the predecessor (an edge if it has not
        // completed yet), runs it at once if it is ready, then ends the scope.
        if bug == Bug::CheckAtSpawn {
            let stopped = skips(false, false, &w.stop);
            w.decided_at_spawn.store(stopped, Ordering::Relaxed);
        }
        // SAFETY (test): the node lives until the model's end.
        let found = match unsafe { w.pred_list.push(node) } {
            Push::Pushed => 1,
            Push::Done | Push::Failed => 0,
        };
        if w.succ_deps.arm(found) {
            run_succ(&w, bug);
        }
        // The scope's end (`Frame::wait`): two children spawned.
        while w.completed.load(Ordering::Acquire) != 2 {
            loom::thread::yield_now();
        }
        // SAFETY (test): every child has completed (Acquire above).
        let out = w.out.with(|x| unsafe { *x });
        assert_eq!(out, 0, "the successor ran after its predecessor cancelled");
        assert_eq!(
            w.stop.skipped(),
            1,
            "the scope's end missed the skipped task"
        );
        assert!(matches!(w.stop.end(Ok(()), None), Ended::Cancelled(())));
        t.join().unwrap();
        // SAFETY (test): every thread is done with the node.
        drop(unsafe { Box::from_raw(node) });
    });
}

#[test]
fn loom_cancel_a_successor_readied_by_the_cancelling_task_skips_and_is_counted() {
    cancel_then_complete(Bug::None);
}

#[test]
#[should_panic(expected = "ran after its predecessor cancelled")]
fn loom_cancel_checked_at_the_spawn_runs_a_task_after_the_cancel() {
    cancel_then_complete(Bug::CheckAtSpawn);
}

#[test]
#[should_panic(expected = "missed the skipped task")]
fn loom_cancel_a_skip_counted_after_the_completion_is_missed() {
    cancel_then_complete(Bug::SkipAfterComplete);
}
