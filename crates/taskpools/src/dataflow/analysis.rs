//! The dependence analysis of one spawn: where the look-up tables report the new task's
//! edges and commutative groups (`Analysis`), the edges themselves (pushed on the earlier
//! siblings' notify lists), the links of an access in a region made from a weak part, and the
//! checks of a spawn's declarations.

use std::ptr;

use super::commute::CommuteLock;
use super::footprint::Mode;
use super::frame::RegionInfo;
use super::lut::Sink;
use super::notify::{NotifyNode, Push};
use super::task::TaskDesc;
use super::weak::{link_leave, WeakGate};
use super::Footprint;
use crate::mem::region::Region as Arena;
use crate::runtime::trace::{EventKind, TraceBuf};
use crate::sync::Ordering;

/// Where the look-up tables report a new task's edges and commutative groups.
pub(super) struct Analysis<'a> {
    /// What the edges found lead to: the task, or a weak part's enter gate.
    pub(super) desc: *const TaskDesc,
    pub(super) tr: Option<&'a TraceBuf>,
    pub(super) trace_id: u64,
    /// The frame's region for descriptors, nodes and locks.
    pub(super) arena: &'a mut Arena,
    pub(super) found: &'a mut usize,
    pub(super) locks: &'a mut Vec<*const CommuteLock>,
    /// Links to outer gates to make once the spawn can no longer fail (see `link_outer`).
    pub(super) links: &'a mut Vec<(*const WeakGate, *const TaskDesc, *const TaskDesc)>,
}

/// The analysis of a weak part of the task `owner` (see `gate_edge`): edges lead to the
/// part's enter gate (`inner.desc`), and the part's leave gate is `leave`, with the edges
/// found into it.
pub(super) struct WeakSink<'a, 'b> {
    pub(super) inner: &'b mut Analysis<'a>,
    pub(super) owner: *const TaskDesc,
    pub(super) leave: *const TaskDesc,
    pub(super) leave_found: usize,
}

/// A sink that also records links to the gates of the weak part a region was made from.
pub(super) trait Spawning: Sink<TaskDesc> {
    /// `registered` (the task, or its own gate) is an access to a region made from a weak
    /// part with gates `gates` (see `link_outer`).
    fn link(&mut self, gates: *const WeakGate, registered: *const TaskDesc);
}

impl Spawning for Analysis<'_> {
    fn link(&mut self, gates: *const WeakGate, registered: *const TaskDesc) {
        link_outer(gates, registered, self);
    }
}

impl Spawning for WeakSink<'_, '_> {
    fn link(&mut self, gates: *const WeakGate, registered: *const TaskDesc) {
        link_outer(gates, registered, self.inner);
    }
}

impl Sink<TaskDesc> for WeakSink<'_, '_> {
    fn edge(&mut self, pred: *const TaskDesc) {
        self.gate_edge(pred);
    }

    fn new_lock(&mut self) -> *const () {
        self.inner.new_lock()
    }

    fn hold(&mut self, lock: *const ()) {
        self.inner.hold(lock);
    }
}

impl Sink<TaskDesc> for Analysis<'_> {
    /// A strong access's edge: from an earlier sibling, or from another task's gate, which
    /// is an ordinary predecessor (the task's own gates come after its strong accesses, and
    /// the tables never report the task itself).
    #[inline(always)]
    fn edge(&mut self, pred: *const TaskDesc) {
        add_edge(
            pred,
            self.desc,
            self.tr,
            self.trace_id,
            self.arena,
            self.found,
        );
    }

    fn new_lock(&mut self) -> *const () {
        // In the descriptors' region: the threads that run the group's members use it, and it
        // lives until the frame has seen all its children complete.
        self.arena
            .alloc(CommuteLock::new())
            .as_ptr()
            .cast_const()
            .cast()
    }

    fn hold(&mut self, lock: *const ()) {
        self.locks.push(lock.cast());
    }
}

impl WeakSink<'_, '_> {
    /// An edge from the task being spawned or from a gate (see `weak`). Any other task's
    /// gate is an ordinary predecessor. The task's own accesses meet each other only in
    /// block mode (one block holding two of its element-disjoint parts), where a weak part
    /// (analysed after the strong ones) may take the block's place from the task or from an
    /// earlier weak part of it: then its leave gate waits for what it replaced (the task, or
    /// that part's leave gate), so the block's later accesses still wait for both, and its
    /// enter gate for what that part waits for (its enter gate; not the task, whose children
    /// start after it does anyway).
    #[cold]
    #[inline(never)]
    fn gate_edge(&mut self, pred: *const TaskDesc) {
        let replaced = if pred == self.owner {
            pred
        } else {
            // SAFETY: a descriptor of this frame's region (a sibling or a gate), reported by
            // the tables, alive until the frame's next sync or end.
            match WeakGate::of(unsafe { &*pred }) {
                Some(g) if g.owner == self.owner => {
                    if !ptr::eq(&g.enter, self.inner.desc) {
                        add_edge(
                            &g.enter,
                            self.inner.desc,
                            self.inner.tr,
                            self.inner.trace_id,
                            self.inner.arena,
                            self.inner.found,
                        );
                    }
                    ptr::addr_of!(g.leave)
                }
                _ => {
                    return add_edge(
                        pred,
                        self.inner.desc,
                        self.inner.tr,
                        self.inner.trace_id,
                        self.inner.arena,
                        self.inner.found,
                    )
                }
            }
        };
        if replaced != self.leave {
            add_edge(
                replaced,
                self.leave,
                None,
                0,
                self.inner.arena,
                &mut self.leave_found,
            );
        }
    }
}

/// The analysis of one strong or weak access: its edges from the region's outer enter gate
/// (a region made from a weak part, see `weak`) and from the earlier siblings in the look-up
/// table, where `registered` (the task, or the access's leave gate) takes its place; the
/// outer leave gate waits for `registered`.
#[inline(always)]
pub(super) fn analyse<S: Spawning>(
    info: &mut RegionInfo,
    fp: &Footprint,
    registered: *const TaskDesc,
    table_arena: &mut Arena,
    config: super::Config,
    sink: &mut S,
) {
    if !info.gates.is_null() {
        sink.link(info.gates, registered);
    }
    if info.rects.is_some() && rect_access(info, fp, registered, table_arena, config.block, sink) {
        return;
    }
    let (elem, bytes) = (info.elem, info.bytes);
    for (lo, hi) in fp.row_ranges() {
        let (lo, hi) = if elem == 0 {
            (0, 1)
        } else {
            (lo * elem, hi * elem)
        };
        assert!(
            lo < hi && hi <= bytes,
            "taskpools::dataflow: an access outside its region (a bug in the access's \
             constructor)"
        );
        info.trie.access(
            lo..hi,
            fp.mode,
            (config.exact, config.block),
            registered,
            table_arena,
            sink,
        );
    }
}

/// An access to a region made from a weak part: it will wait for the part's enter gate
/// (`target`: the task, or its own enter gate for a weak access), and the part's leave gate
/// for it (`registered`). Both links touch the enclosing frame's gates, with nodes in this
/// frame's region, so they are made only once the spawn can no longer fail (`spawn`, with
/// `link_weak`): a spawn that panics before leaves nothing on them.
#[cold]
#[inline(never)]
fn link_outer(gates: *const WeakGate, registered: *const TaskDesc, sink: &mut Analysis<'_>) {
    sink.links.push((gates, registered, sink.desc));
}

/// Makes a link recorded by `link_outer`: an edge from the outer enter gate to `target`,
/// counted in `found` (the task's) or in the target gate's own count, and the outer leave
/// gate held for `registered`.
///
/// # Safety
/// After the spawn's last panic point, before `target` and `registered` are armed; the
/// gates are those of a region of this frame, whose owner's body runs on this thread.
pub(super) unsafe fn link_weak(
    (gates, registered, target): (*const WeakGate, *const TaskDesc, *const TaskDesc),
    task: (*const TaskDesc, &mut usize),
    tr: Option<&TraceBuf>,
    trace_id: u64,
    arena: &mut Arena,
) {
    // SAFETY: per the contract.
    let g = unsafe { &*gates };
    let mut n = 0;
    add_edge(&g.enter, target, tr, trace_id, arena, &mut n);
    if target == task.0 {
        *task.1 += n;
    } else {
        // SAFETY: `target` is an enter gate of this spawn.
        let tg = WeakGate::of(unsafe { &*target }).expect("a weak access's own enter gate");
        tg.found.set(tg.found.get() + n);
    }
    // SAFETY: per the contract.
    unsafe { link_leave(g, &*registered, arena) };
}

/// Registers the new task `desc` as a successor of its sibling `pred` (one node per pair): pushes
/// it on `pred`'s notify list, counting the edge in `found` unless `pred` has completed, and
/// cancelling `desc` if `pred` failed.
#[inline(always)]
pub(super) fn add_edge(
    pred: *const TaskDesc,
    desc: *const TaskDesc,
    tr: Option<&TraceBuf>,
    trace_id: u64,
    arena: &mut Arena,
    found: &mut usize,
) {
    // SAFETY: a sibling's descriptor in this frame's region, or a gate of the weak part a
    // region of this frame was made from (in the enclosing frame, alive while the owner's
    // body, this thread, runs).
    let p = unsafe { &*pred };
    if p.last_succ.get() == desc {
        return;
    }
    if let Some(t) = tr {
        // Traced: one `Dep` event per pair, completed predecessors included.
        p.last_succ.set(desc);
        if p.trace_id != 0 {
            t.note(EventKind::Dep {
                from: p.trace_id,
                to: trace_id,
            });
        }
    }
    // A completed predecessor is only read: its line stays shared with the thread that
    // completed it, where a write (`last_succ`) would take it over. A second edge to it
    // reads the same closed state again.
    let outcome = match p.notify.closed_state() {
        Some(closed) => closed,
        None => {
            p.last_succ.set(desc);
            let node = arena.alloc(NotifyNode::new(desc.cast())).as_ptr();
            // SAFETY: the node lives in this frame's region, which
            // outlives every sibling's completion.
            unsafe { p.notify.push(node) }
        }
    };
    match outcome {
        Push::Pushed => *found += 1,
        Push::Done => {}
        // A failed predecessor: this task is cancelled too (its `arm`
        // below publishes the flag to whoever runs it).
        // SAFETY: the descriptor was just written and is alive.
        Push::Failed => unsafe { &*desc }.cancelled.store(true, Ordering::Relaxed),
    }
}

/// A footprint on a region in rectangle mode: recorded there if rectangle mode takes it
/// (returns true); else rectangle mode ends, its state copied into the region's trie, and the
/// caller goes row by row (returns false). An empty footprint is done.
#[inline(never)]
fn rect_access(
    info: &mut RegionInfo,
    fp: &Footprint,
    desc: *const TaskDesc,
    table_arena: &mut Arena,
    block: usize,
    sink: &mut dyn Sink<TaskDesc>,
) -> bool {
    let Some(rect) = fp.bytes(info.elem, info.bytes) else {
        return true;
    };
    if let Some(rm) = &mut info.rects {
        if rm.access(rect, fp.mode, block, desc, table_arena, sink) {
            return true;
        }
    }
    if let Some(rm) = info.rects.take() {
        rm.leave(&mut info.trie, block, table_arena);
    }
    false
}

/// Checks a spawn's declarations: all from this scope, no overlap unless both give shared
/// references.
#[inline]
pub(super) fn check(fps: &[Footprint], frame: *const ()) {
    match fps {
        [] => return,
        // One access: nothing to overlap.
        [a] if a.frame == frame => return,
        _ => {}
    }
    check_all(fps, frame);
}

/// [`check`], for any number of accesses.
#[inline(never)]
fn check_all(fps: &[Footprint], frame: *const ()) {
    for (i, a) in fps.iter().enumerate() {
        assert!(
            a.frame == frame,
            "taskpools::dataflow: an access declared on another task's region was passed to \
             spawn; declare accesses on regions of the scope that spawns"
        );
        for (j, b) in fps[..i].iter().enumerate() {
            if a.region == b.region && (a.reduce.is_some() || b.reduce.is_some()) && a.overlaps(b) {
                panic!(
                    "taskpools::dataflow: accesses {j} and {i} of one spawn overlap and one of \
                     them is a reduction; declare the data once"
                );
            }
            let shared = a.mode.shared() && b.mode.shared();
            if a.region == b.region && !shared && a.overlaps(b) {
                panic!(
                    "taskpools::dataflow: accesses {j} and {i} of one spawn overlap and one of \
                     them writes; declare the data once (as inout)"
                );
            }
        }
    }
}

/// Whether a spawn whose accesses may be weak (`Accesses::WEAK`) has a weak one; refuses
/// one beside a commutative access.
#[cold]
#[inline(never)]
pub(super) fn check_weak(fps: &[Footprint]) -> bool {
    let weak = fps.iter().any(|fp| fp.weak);
    if weak && fps.iter().any(|fp| fp.mode == Mode::Commutative) {
        panic!(
            "taskpools::dataflow: a task with weak accesses cannot also have commutative \
             ones: it starts before its weak parts' predecessors end, and would hold the \
             commutative lock while its children wait for them; give the commutative \
             access to a child"
        );
    }
    weak
}
