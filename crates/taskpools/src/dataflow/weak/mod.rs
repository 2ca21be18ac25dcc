//! Weak accesses and early release across nesting (OmpSs-2's `weakin` / `weakinout`; Perez,
//! Beltran, Labarta & Ayguadé, "Improving the integration of task nesting and dependencies
//! in OpenMP", IPDPS 2017).
//!
//! In PARTEE's model a task's footprint covers its children's: the task starts once its
//! earlier siblings on that data are done, and its later siblings start once it and all its
//! children are. A *weak* access says the task itself never touches the data, only hands it
//! to its children, and the dependences move to the children: the outer successors of a weak
//! part wait only for the children that touch it (and for the task's body to end, since until
//! then it may spawn more), not for the task's other children or its end. That is early
//! release.
//!
//! **Start.** As in OmpSs-2, a weak access does not delay the task: it starts once its
//! strong accesses allow, spawns its children, and each child waits for the outer
//! predecessors of the part it touches. Such a task must never wait for its children on a
//! worker's stack: a task's end (and `sync`, `wait_for`) waits there, running other jobs
//! meanwhile, and a weak task started early may be running inside the wait of its own
//! predecessor, so a wait for children that wait for that predecessor would never end. So a
//! weak task's frame lives on the heap, its body refuses `sync` and `wait_for` (a child of it
//! may use them), and when its body ends with children still outstanding, the last of them
//! completes it (`owner_defers` / `child_completes`: one counter, no lock).
//!
//! **Gates.** For each weak part, the spawner makes two descriptors in its own frame, counted
//! as its children but never run as jobs:
//! - *enter*: takes the edges the analysis finds into the part (instead of the task). It
//!   completes when those predecessors have; every child of the task that touches the part
//!   gets an edge from it.
//! - *leave*: takes the part's place in the spawner's look-up table (as a read or a write),
//!   so later siblings get their edges from it. Its counter is armed with an edge from the
//!   enter gate and one held by the task's body, and gets one more, before the node is
//!   pushed, for every child of the task that touches the part: it completes, releasing the
//!   successors, when the part's predecessors, the body and those children have completed.
//!
//! A child's own weak access to the part chains the gates: its enter gate waits for the
//! outer enter gate, and the outer leave gate for its leave gate. Completing a gate is what a
//! task's completion is, done inline by whoever brings its counter to zero: close its notify
//! list (failed if a child on the part failed or the task's body did), ready the
//! successors, count the completion in the spawner's frame.
//!
//! Release is per weak part: a task that declares one weak part per block releases block by
//! block. The loom models in `loom_models.rs` check the leave gate's counting (children
//! linked while the body runs, a successor linked meanwhile) and the deferred completion,
//! each with planted-bug twins.

#[cfg(all(test, loom))]
mod loom_models;

use std::cell::Cell;
use std::ptr;

use super::commute::Waiter;
use super::frame::{Frame, LazyFrame};
use super::notify::{DepCounter, NotifyList, NotifyNode, Push};
use super::task::{complete, TaskDesc, GATE_PLACE};
use crate::mem::region::Region as Arena;
use crate::runtime::job::JobHeader;
use crate::sync::{AtomicBool, AtomicUsize, Ordering};

/// The two gates of one weak part of a task (see the module docs), in the spawner's region.
#[doc(hidden)]
#[repr(C)]
pub struct WeakGate {
    pub(super) enter: TaskDesc,
    pub(super) leave: TaskDesc,
    /// The task that declared the part (the analysis of its own spawn skips edges from its
    /// own gates and from itself into them).
    pub(super) owner: *const TaskDesc,
    /// Edges found into `enter` at the spawn, armed with the task.
    pub(super) found: Cell<usize>,
    /// Edges found into `leave` at the spawn (in block mode, from the task itself or its
    /// earlier gates in the same block, see `WeakSink::gate_edge` in `analysis`).
    pub(super) found_leave: Cell<usize>,
    /// The owner's next weak gate (in declaration order).
    pub(super) next: Cell<*const WeakGate>,
    /// The frame of the owner's body, once it runs: only its scope may make a region of the
    /// part.
    pub(super) frame: Cell<*const LazyFrame>,
}

/// A gate's job function, never called: gates are completed inline by whoever readies them
/// (`task::complete`, `release`, `WeakGate::arm`), never queued. Kept so that a gate's header
/// names a function that does the right thing.
unsafe fn run_gate(h: *const JobHeader) {
    // SAFETY: the header of a gate descriptor (first field), alive until its frame ends,
    // which waits for it.
    unsafe { complete_gate(h.cast::<TaskDesc>()) }
}

fn gate_desc(parent: &Frame) -> TaskDesc {
    TaskDesc {
        header: JobHeader::new(run_gate),
        deps: DepCounter::new(),
        notify: NotifyList::new(),
        cancelled: AtomicBool::new(false),
        weak: false,
        priority: 0,
        place: GATE_PLACE,
        last_succ: Cell::new(ptr::null()),
        parent,
        trace_id: 0,
        body: ptr::null_mut(),
        call: no_body,
        locks: ptr::null(),
        nlocks: 0,
        one: ptr::null(),
        waiter: Waiter::new(),
    }
}

/// A gate has no body.
unsafe fn no_body(_: *mut u8, _: Option<&LazyFrame>, _: &Cell<*const WeakGate>) {}

impl WeakGate {
    /// New gates for a weak part of `owner`, a task being spawned in `parent`, allocated in
    /// the parent's region (where `body` of each descriptor points back at the record).
    pub(super) fn alloc(
        arena: &mut Arena,
        parent: &Frame,
        owner: *const TaskDesc,
    ) -> *const WeakGate {
        let g = arena
            .alloc(WeakGate {
                enter: gate_desc(parent),
                leave: gate_desc(parent),
                owner,
                found: Cell::new(0),
                found_leave: Cell::new(0),
                next: Cell::new(ptr::null()),
                frame: Cell::new(ptr::null()),
            })
            .as_ptr();
        // SAFETY: just allocated; nobody else knows it yet.
        unsafe {
            (*g).enter.body = g.cast();
            (*g).leave.body = g.cast();
        }
        g
    }

    /// The gate record of a gate descriptor, if `d` is one.
    pub(super) fn of(d: &TaskDesc) -> Option<&WeakGate> {
        // SAFETY: a gate descriptor's `body` points at its record, which outlives it.
        (d.place == GATE_PLACE).then(|| unsafe { &*d.body.cast::<WeakGate>() })
    }

    /// Arms both gates, once the owner's spawn can no longer fail: the leave gate with the
    /// body's edge and one from the enter gate (the part's successors wait for its
    /// predecessors too, whether or not a child touches it), the enter gate with the edges
    /// found (completing it now if there are none). `node` (in the spawner's region) links
    /// the two. Returns the number of descriptors to count as the spawner's children.
    ///
    /// # Safety
    /// The spawner's thread, once per gate, after every edge into `enter` was registered;
    /// `node` is fresh and lives as long as the gates.
    pub(super) unsafe fn arm(&self, node: *mut NotifyNode) -> usize {
        // SAFETY: per the contract; the enter gate is not armed, so its list is open.
        let pushed = unsafe { self.enter.notify.push(node) };
        debug_assert_eq!(pushed, Push::Pushed);
        self.leave.deps.arm(2 + self.found_leave.get());
        if self.enter.deps.arm(self.found.get()) {
            // SAFETY: ready once; the spawner (this thread) is alive.
            unsafe { complete_gate(&self.enter) };
        }
        2
    }
}

/// Completes a gate (see the module docs): its successors are readied, its frame counts it.
///
/// # Safety
/// `d` is a gate whose counter just reached zero (once); afterwards its frame may be freed.
pub(super) unsafe fn complete_gate(d: *const TaskDesc) {
    // SAFETY: alive until its completion is counted.
    let failed = unsafe { &*d }.cancelled.load(Ordering::Relaxed);
    // For the spawn throttle, before the completion (after which the frame may be gone).
    // SAFETY: the gate's frame waits for it.
    unsafe { &*(*d).parent }
        .weak_counts
        .gates_done
        .fetch_add(1, Ordering::Relaxed);
    // SAFETY: per the contract.
    unsafe { complete(d, failed, None) };
}

/// The owner's body has ended (`failed`: it panicked, or never ran because a predecessor
/// failed): each of its leave gates drops the body's edge.
///
/// # Safety
/// Once per owner, after its body, with the head of its gates (null: none).
pub(super) unsafe fn release(mut g: *const WeakGate, failed: bool) {
    while !g.is_null() {
        // SAFETY: the owner's gates, in its spawner's region, alive until they complete;
        // the link is read before the gate may complete.
        let gate = unsafe { &*g };
        g = gate.next.get();
        if failed {
            gate.leave.cancelled.store(true, Ordering::Relaxed);
        }
        if gate.leave.deps.fire() {
            // SAFETY: ready once; the gate may be freed after this (its link was read).
            unsafe { complete_gate(&gate.leave) };
        }
    }
}

/// The outer leave gate `g.leave` waits for `registered` (a child of the owner whose access
/// lies in a region made from the weak part, or that access's own leave gate). Runs on the
/// owner's thread, at the child's spawn, before the child is armed.
///
/// # Safety
/// `g`'s owner's body is running on this thread; `registered` is a descriptor of the spawn,
/// not armed yet; `arena` is the owner's frame's region (the node lives there).
pub(super) unsafe fn link_leave(g: &WeakGate, registered: &TaskDesc, arena: &mut Arena) {
    let leave: *const TaskDesc = &g.leave;
    if registered.last_succ.get() == leave {
        return;
    }
    registered.last_succ.set(leave);
    let node = arena.alloc(NotifyNode::new(leave.cast())).as_ptr();
    // SAFETY: the node lives in the owner's frame's region, which outlives the child.
    unsafe { link_out(&g.leave.deps, &registered.notify, node) };
}

/// One more edge into an armed gate held open by its owner's body (see
/// [`DepCounter::retain`]): counted first, then pushed. A push onto a list already closed
/// (not possible for a child not yet armed, but kept sound) gives the count back.
///
/// # Safety
/// As [`NotifyList::push`]; the counter is held above zero by an edge not yet fired.
pub(super) unsafe fn link_out(counter: &DepCounter, list: &NotifyList, node: *mut NotifyNode) {
    counter.retain();
    // SAFETY: per the contract.
    if unsafe { list.push(node) } != Push::Pushed {
        let ready = counter.fire();
        debug_assert!(!ready, "a weak gate held by its body reached zero");
    }
}

/// A child of `completed`'s frame has completed (its last access to the frame): true if that
/// ended the count of a weak task that left its completion to its last child
/// ([`owner_defers`]). Until the owner defers, the count only grows from zero and never reads
/// `usize::MAX`; once it has, the count is (completed − spawned) modulo 2^64, and the child
/// that takes it from −1 to 0 is the last.
pub(super) fn child_completes(completed: &AtomicUsize) -> bool {
    completed.fetch_add(1, Ordering::AcqRel) == usize::MAX
}

/// The owner of a frame, its body ended, subtracts the `spawned` children it counted: false
/// if all of them have completed already (the owner completes the task), else the last of
/// them will ([`child_completes`]). AcqRel: the owner's writes (what the last child reads to
/// complete the task) come before, every completed child's after.
pub(super) fn owner_defers(completed: &AtomicUsize, spawned: usize) -> bool {
    completed.fetch_sub(spawned, Ordering::AcqRel) != spawned
}
