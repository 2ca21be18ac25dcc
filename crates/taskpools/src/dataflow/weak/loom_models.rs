//! Loom models of a weak part's leave gate, run with the shipped counting (`link_out`, the
//! dependence counter and the notify lists) on loom's atomics and cells: the owner's body
//! links a child and ends while the child completes and the spawner links a successor of the
//! part; the successor runs once, after the child's write, and the gate completes once. Each
//! planted-bug twin must fail.

use super::link_out;
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
