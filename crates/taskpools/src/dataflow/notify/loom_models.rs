//! Loom models of the notify list and the dependence counter, run with the shipped code on
//! loom's atomics and cells: a spawn racing a completion and two predecessors completing at
//! once, each with a planted-bug twin that must fail.

use super::*;
use crate::sync::{Arc, AtomicBool, AtomicUsize};

/// A task for the models: its output, its notify list, its counter and its cancel flag.
struct T {
    out: UnsafeCell<u64>,
    list: NotifyList,
    deps: DepCounter,
    cancelled: AtomicBool,
}

// SAFETY (test): the models access `out` under the protocol being checked; loom reports
// any access that the protocol does not order.
unsafe impl Send for T {}
unsafe impl Sync for T {}

impl T {
    fn new() -> T {
        T {
            out: UnsafeCell::new(0),
            list: NotifyList::new(),
            deps: DepCounter::new(),
            cancelled: AtomicBool::new(false),
        }
    }
}

/// Runs the successor: reads every predecessor's output (loom checks each read is ordered
/// after the write), checks it learned of a failed predecessor, and counts the run.
fn run_succ(preds: &[Arc<T>], succ: &T, failed: bool, runs: &AtomicUsize) {
    for p in preds {
        // SAFETY (test): ordered by the protocol, or loom reports a race.
        let v = p.out.with(|x| unsafe { *x });
        assert_eq!(v, 7, "the successor ran before a predecessor's output");
    }
    assert_eq!(
        succ.cancelled.load(Ordering::Relaxed),
        failed,
        "the successor must know whether a predecessor failed"
    );
    runs.fetch_add(1, Ordering::Relaxed);
}

/// The predecessor: writes its output, completes (closes its list, failed or not), fires
/// its successors.
/// `one_sentinel` is a planted bug: the list is closed as completed even when it failed.
fn complete(
    p: &T,
    preds: &[Arc<T>],
    succ: &T,
    runs: &AtomicUsize,
    (failed, relaxed, one_sentinel): (bool, bool, bool),
) {
    // SAFETY (test): only this thread writes `out`.
    p.out.with_mut(|x| unsafe { *x = 7 });
    // SAFETY (test): closed once, nodes alive for the whole model.
    unsafe {
        p.list.close(failed && !one_sentinel, |s| {
            assert_eq!(s, succ as *const T as *const ());
            if failed {
                succ.cancelled.store(true, Ordering::Relaxed);
            }
            let ready = if relaxed {
                succ.deps.0.fetch_sub(1, Ordering::Relaxed) == 1
            } else {
                succ.deps.fire()
            };
            if ready {
                run_succ(preds, succ, failed, runs);
            }
        })
    };
}

/// The parent's side of an edge: push, and on a closed list note a failure.
fn register(pred: &T, succ: &T, node: *mut NotifyNode) -> usize {
    // SAFETY (test): the node lives until the end of the model.
    match unsafe { pred.list.push(node) } {
        Push::Pushed => 1,
        Push::Done => 0,
        Push::Failed => {
            succ.cancelled.store(true, Ordering::Relaxed);
            0
        }
    }
}

/// A spawn racing the completion (or failure) of the task it depends on: the successor
/// runs exactly once, after the predecessor's output, knowing whether it failed.
fn spawn_racing_completion(broken_push: bool, failed: bool, one_sentinel: bool) {
    loom::model(move || {
        let pred = Arc::new(T::new());
        let succ = Arc::new(T::new());
        let runs = Arc::new(AtomicUsize::new(0));
        let node = Box::into_raw(Box::new(NotifyNode::new(&*succ as *const T as *const ())));
        let t = {
            let (pred, succ, runs) = (pred.clone(), succ.clone(), runs.clone());
            loom::thread::spawn(move || {
                complete(
                    &pred,
                    std::slice::from_ref(&pred),
                    &succ,
                    &runs,
                    (failed, false, one_sentinel),
                );
            })
        };
        let found = if broken_push {
            // Planted bug: a blind push that does not look for the sentinel.
            let h = pred.list.head.load(Ordering::Acquire);
            // SAFETY (test): unpublished node.
            unsafe { (*node).next.with_mut(|n| *n = h) };
            usize::from(
                pred.list
                    .head
                    .compare_exchange(h, node, Ordering::Release, Ordering::Acquire)
                    .is_ok(),
            )
        } else {
            register(&pred, &succ, node)
        };
        if succ.deps.arm(found) {
            run_succ(std::slice::from_ref(&pred), &succ, failed, &runs);
        }
        t.join().unwrap();
        assert_eq!(
            runs.load(Ordering::Relaxed),
            1,
            "the successor must run once"
        );
        // SAFETY (test): every thread is done with the node.
        drop(unsafe { Box::from_raw(node) });
    });
}

#[test]
fn loom_notify_list_spawn_racing_completion() {
    spawn_racing_completion(false, false, false);
}

#[test]
fn loom_notify_list_spawn_racing_a_failure_is_cancelled() {
    spawn_racing_completion(false, true, false);
}

#[test]
#[should_panic]
fn loom_notify_list_one_sentinel_lets_a_late_dependent_of_a_failure_run() {
    spawn_racing_completion(false, true, true);
}

#[test]
#[should_panic]
fn loom_notify_list_blind_push_loses_the_successor() {
    spawn_racing_completion(true, false, false);
}

/// A task whose last two predecessors complete at the same time, while the parent is still
/// registering the edges: it runs exactly once, after both outputs.
fn two_predecessors_at_once(relaxed: bool) {
    loom::model(move || {
        let preds = [Arc::new(T::new()), Arc::new(T::new())];
        let succ = Arc::new(T::new());
        let runs = Arc::new(AtomicUsize::new(0));
        let nodes: Vec<*mut NotifyNode> = (0..2)
            .map(|_| Box::into_raw(Box::new(NotifyNode::new(&*succ as *const T as *const ()))))
            .collect();
        let ts: Vec<_> = (0..2)
            .map(|i| {
                let (preds, succ, runs) = (preds.clone(), succ.clone(), runs.clone());
                loom::thread::spawn(move || {
                    complete(&preds[i], &preds, &succ, &runs, (false, relaxed, false));
                })
            })
            .collect();
        let found: usize = preds
            .iter()
            .zip(&nodes)
            .map(|(p, &n)| register(p, &succ, n))
            .sum();
        if succ.deps.arm(found) {
            run_succ(&preds, &succ, false, &runs);
        }
        for t in ts {
            t.join().unwrap();
        }
        assert_eq!(
            runs.load(Ordering::Relaxed),
            1,
            "the successor must run once"
        );
        for n in nodes {
            // SAFETY (test): every thread is done with the nodes.
            drop(unsafe { Box::from_raw(n) });
        }
    });
}

#[test]
fn loom_dep_counter_two_predecessors_at_once() {
    two_predecessors_at_once(false);
}

#[test]
#[should_panic]
fn loom_dep_counter_relaxed_fire_races_on_the_output() {
    two_predecessors_at_once(true);
}

/// PARTEE's two counters read naively: the parent stores how many edges it found, a
/// completing predecessor adds one to `fired` and runs the task if the two are equal, and
/// the parent does the same check after its store. Both may see equality.
#[test]
#[should_panic]
fn loom_two_counters_checked_naively_run_the_task_twice() {
    loom::model(|| {
        let waitfor = Arc::new(AtomicUsize::new(usize::MAX));
        let fired = Arc::new(AtomicUsize::new(0));
        let runs = Arc::new(AtomicUsize::new(0));
        let t = {
            let (waitfor, fired, runs) = (waitfor.clone(), fired.clone(), runs.clone());
            loom::thread::spawn(move || {
                let f = fired.fetch_add(1, Ordering::AcqRel) + 1;
                if f == waitfor.load(Ordering::Acquire) {
                    runs.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        waitfor.store(1, Ordering::Release);
        if fired.load(Ordering::Acquire) == waitfor.load(Ordering::Acquire) {
            runs.fetch_add(1, Ordering::Relaxed);
        }
        t.join().unwrap();
        assert_eq!(runs.load(Ordering::Relaxed), 1, "the task must run once");
    });
}
