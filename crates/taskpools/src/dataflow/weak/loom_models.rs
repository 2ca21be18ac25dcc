//! Loom models of weak tasks, run with the shipped code on loom's atomics and cells, each
//! with planted-bug twins that must fail:
//! - a weak part's leave gate (`link_out`, the dependence counter and the notify lists): the
//!   owner's body links a child and ends while the child completes and the spawner links a
//!   successor of the part; the successor runs once, after the child's write, and the gate
//!   completes once;
//! - a weak task's deferred completion (`owner_defers`, `child_completes`): the owner's body
//!   ends while its two children complete; exactly one of the three completes the task, after
//!   both children's writes and with what the owner left.

use super::{child_completes, link_out, owner_defers};
use crate::dataflow::notify::{DepCounter, NotifyList, NotifyNode, Push};
use crate::sync::{Arc, AtomicUsize, Ordering, UnsafeCell};

/// A task or a gate of the model.
struct Node {
    data: UnsafeCell<u64>,
    list: NotifyList,
    deps: DepCounter,
}

// SAFETY (test): `data` is accessed under the protocol being checked; loom reports any
// access it does not order.
unsafe impl Send for Node {}
unsafe impl Sync for Node {}

fn node() -> Arc<Node> {
    Arc::new(Node {
        data: UnsafeCell::new(0),
        list: NotifyList::new(),
        deps: DepCounter::new(),
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Bug {
    None,
    /// The child's edge counted after its node is pushed: the child's completion can take
    /// the gate to zero before the count.
    CountAfterPush,
    /// No edge held for the body: the gate is ready before the child is linked.
    NoBodyEdge,
}

struct World {
    gate: Arc<Node>,
    child: Arc<Node>,
    succ: Arc<Node>,
    gate_done: AtomicUsize,
    succ_runs: AtomicUsize,
}

/// The successor: reads what the child wrote (ordered by the protocol, or loom reports it).
fn run_succ(w: &World) {
    // SAFETY (test): see above.
    let v = w.child.data.with(|x| unsafe { *x });
    assert_eq!(v, 7, "the successor ran before the child's write");
    w.succ_runs.fetch_add(1, Ordering::Relaxed);
}

/// Completes the gate, as `complete_gate` does: close its list, fire its successors.
fn complete_gate(w: &World) {
    w.gate_done.fetch_add(1, Ordering::Relaxed);
    // SAFETY (test): loom reports a second close through the counter above.
    unsafe {
        w.gate.list.close(false, |_| {
            if w.succ.deps.fire() {
                run_succ(w);
            }
        })
    };
}

fn leave_gate(bug: Bug) {
    loom::model(move || {
        let w = Arc::new(World {
            gate: node(),
            child: node(),
            succ: node(),
            gate_done: AtomicUsize::new(0),
            succ_runs: AtomicUsize::new(0),
        });
        // The spawn of the owner: the gate is armed with the body's edge.
        let body_edge = usize::from(bug != Bug::NoBodyEdge);
        if w.gate.deps.arm(body_edge) {
            complete_gate(&w);
        }
        let gate_node = Box::into_raw(Box::new(NotifyNode::new(std::ptr::null())));
        let succ_node = Box::into_raw(Box::new(NotifyNode::new(std::ptr::null())));
        let (gn, sn) = (gate_node as usize, succ_node as usize);
        // The spawner links a later sibling on the part to the gate, while the owner runs.
        let spawner = {
            let w = w.clone();
            loom::thread::spawn(move || {
                // SAFETY (test): the node lives until the end of the model.
                let found = match unsafe { w.gate.list.push(sn as *mut NotifyNode) } {
                    Push::Pushed => 1,
                    _ => 0,
                };
                if w.succ.deps.arm(found) {
                    run_succ(&w);
                }
            })
        };
        // The owner's body links its child (before arming it), then ends.
        // SAFETY (test): the node lives until the end of the model; the gate is held above
        // zero by the body's edge (not in the `NoBodyEdge` twin).
        unsafe {
            if bug == Bug::CountAfterPush {
                let _ = w.child.list.push(gn as *mut NotifyNode);
            } else {
                link_out(&w.gate.deps, &w.child.list, gn as *mut NotifyNode);
            }
        }
        let child = {
            let w = w.clone();
            loom::thread::spawn(move || {
                // SAFETY (test): only the child writes.
                w.child.data.with_mut(|x| unsafe { *x = 7 });
                // SAFETY (test): closed once.
                unsafe {
                    w.child.list.close(false, |_| {
                        if w.gate.deps.fire() {
                            complete_gate(&w);
                        }
                    })
                };
            })
        };
        if bug == Bug::CountAfterPush {
            w.gate.deps.retain();
        }
        // The body ends: its edge is released.
        if bug != Bug::NoBodyEdge && w.gate.deps.fire() {
            complete_gate(&w);
        }
        child.join().unwrap();
        spawner.join().unwrap();
        assert_eq!(
            w.gate_done.load(Ordering::Relaxed),
            1,
            "the gate completes once"
        );
        assert_eq!(
            w.succ_runs.load(Ordering::Relaxed),
            1,
            "the successor runs once"
        );
        // SAFETY (test): every thread is done with the nodes.
        unsafe {
            drop(Box::from_raw(gate_node));
            drop(Box::from_raw(succ_node));
        }
    });
}

#[test]
fn loom_weak_leave_gate_waits_for_the_child_and_the_body() {
    leave_gate(Bug::None);
}

#[test]
#[should_panic]
fn loom_weak_leave_gate_counted_after_the_push_completes_twice() {
    leave_gate(Bug::CountAfterPush);
}

#[test]
#[should_panic]
fn loom_weak_leave_gate_without_the_body_edge_releases_before_the_child() {
    leave_gate(Bug::NoBodyEdge);
}

#[derive(Clone, Copy, PartialEq)]
enum DeferBug {
    None,
    /// The children count their completion with Release only: the one that ends the count
    /// does not see the other's writes.
    ReleaseOnly,
    /// The owner leaves its task for the last child after deferring, not before.
    InfoAfter,
}

struct Deferral {
    completed: AtomicUsize,
    /// What the owner leaves for the last child (the task, whether it failed, its frame).
    info: UnsafeCell<u64>,
    outputs: [UnsafeCell<u64>; 2],
    finished: AtomicUsize,
}

// SAFETY (test): the cells are accessed under the protocol being checked.
unsafe impl Send for Deferral {}
unsafe impl Sync for Deferral {}

/// The task's completion: reads what the owner left and both children's outputs.
fn finish(d: &Deferral) {
    // SAFETY (test): ordered by the protocol, or loom reports a race.
    let info = d.info.with(|x| unsafe { *x });
    assert_eq!(info, 3, "the last child did not see what the owner left");
    for o in &d.outputs {
        // SAFETY (test): as above.
        assert_eq!(
            o.with(|x| unsafe { *x }),
            7,
            "completed before a child's write"
        );
    }
    d.finished.fetch_add(1, Ordering::Relaxed);
}

fn deferred_completion(bug: DeferBug) {
    loom::model(move || {
        let d = Arc::new(Deferral {
            completed: AtomicUsize::new(0),
            info: UnsafeCell::new(0),
            outputs: [UnsafeCell::new(0), UnsafeCell::new(0)],
            finished: AtomicUsize::new(0),
        });
        // Both children are spawned (counted by the owner: 2) and run now.
        let children: Vec<_> = (0..2)
            .map(|i| {
                let d = d.clone();
                loom::thread::spawn(move || {
                    // SAFETY (test): only this child writes its output.
                    d.outputs[i].with_mut(|x| unsafe { *x = 7 });
                    let last = if bug == DeferBug::ReleaseOnly {
                        d.completed.fetch_add(1, Ordering::Release) == usize::MAX
                    } else {
                        child_completes(&d.completed)
                    };
                    if last {
                        finish(&d);
                    }
                })
            })
            .collect();
        // The owner's body ends.
        let leave = |d: &Deferral| {
            // SAFETY (test): only the owner writes it, before (or, planted, after) deferring.
            d.info.with_mut(|x| unsafe { *x = 3 });
        };
        if bug != DeferBug::InfoAfter {
            leave(&d);
        }
        let deferred = owner_defers(&d.completed, 2);
        if bug == DeferBug::InfoAfter {
            leave(&d);
        }
        if !deferred {
            finish(&d);
        }
        for c in children {
            c.join().unwrap();
        }
        assert_eq!(
            d.finished.load(Ordering::Relaxed),
            1,
            "the task completes once"
        );
    });
}

#[test]
fn loom_weak_deferred_completion_happens_once_after_the_children() {
    deferred_completion(DeferBug::None);
}

#[test]
#[should_panic]
fn loom_weak_deferred_completion_with_release_only_misses_a_childs_write() {
    deferred_completion(DeferBug::ReleaseOnly);
}

#[test]
#[should_panic]
fn loom_weak_deferred_completion_with_the_task_left_late_reads_it_unwritten() {
    deferred_completion(DeferBug::InfoAfter);
}
