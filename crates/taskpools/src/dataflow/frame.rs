//! A frame: the bookkeeping of a running task (or root scope) for its children — its look-up
//! tables, its two regions, the count of completed children and the first panic — made lazily
//! at the first use of the task's scope (see the design note in the `dataflow` module docs).

use std::any::Any;
use std::cell::{Cell, OnceCell, UnsafeCell};

use super::commute::CommuteLock;
use super::lut::{RectMode, Trie};
use super::priority::Priorities;
use super::reduce::Groups;
use super::task::TaskDesc;
use super::weak::WeakGate;
use super::{Config, Footprint};
use crate::cancel::Stop;
use crate::mem::region::Region as Arena;
use crate::panics::keep_first;
use crate::runtime::trace::{EventKind, TraceBuf};
use crate::runtime::worker::WorkerThread;
use crate::runtime::Registry;
use crate::sync::{lock, AtomicBool, AtomicUsize, Mutex, Ordering};

/// State shared by all frames of one root scope.
pub(super) struct Shared {
    pub(super) config: Config,
    /// Cancelled, or failed with a task's error (`crate::cancel`): also counts the tasks
    /// that did not run, for either reason or because a predecessor failed.
    pub(super) stop: Stop,
    /// The ready heap of a scope that uses priorities (`priority`).
    pub(super) prio: Priorities,
}

/// A data region registered with a frame.
pub(super) struct RegionInfo {
    pub(super) elem: usize,
    pub(super) bytes: usize,
    pub(super) trie: Trie<TaskDesc>,
    /// Rectangle mode (exact tables), while it lasts (see [`RectMode`]).
    pub(super) rects: Option<RectMode<TaskDesc>>,
    /// The gates of the weak part this region was made from (`weak`), or null.
    pub(super) gates: *const WeakGate,
}

/// What only the frame's own thread touches.
pub(super) struct FrameLocal {
    /// The children's descriptors, closures and notify-list nodes: read and written by the
    /// threads that run and complete the children too.
    pub(super) arena: Arena,
    /// The look-up tables' leaves, entries and reader lists: this thread's alone. Kept apart
    /// from `arena` so that no cache line holds both table state, which the spawns read, and
    /// a descriptor, which other threads write as they complete it.
    pub(super) table_arena: Arena,
    pub(super) regions: Vec<RegionInfo>,
    pub(super) scratch: Vec<Footprint>,
    /// The commutative locks of the task being spawned (kept for its capacity).
    pub(super) locks: Vec<*const CommuteLock>,
    /// The links to outer gates of the task being spawned (`analysis::link_outer`), made
    /// once it can no longer fail (kept for its capacity).
    pub(super) links: Vec<(*const WeakGate, *const TaskDesc, *const TaskDesc)>,
    /// Children spawned so far (the frame's own count; `Frame::completed` counts their
    /// completions).
    pub(super) spawned: usize,
    /// Of `spawned`, the weak gates (`weak`): children that are not tasks, which the spawn
    /// throttle does not count (`WeakCounts::gates_done` counts their completions).
    pub(super) gates: usize,
    /// A value of `Frame::completed` read earlier: `spawned - seen` bounds the outstanding
    /// children from above without reading the line the children write.
    pub(super) seen: usize,
    /// In the throttled phase: entered at `THROTTLE_PER_THREAD` outstanding tasks per
    /// worker, left at `RESUME_PER_THREAD` (`spawn.rs`).
    pub(super) throttling: bool,
    /// Syncs so far: a task handle of an earlier epoch names a completed task.
    pub(super) epoch: usize,
    /// Inside the closure of a `wait_for` on this frame, whose wait task completes only when
    /// the closure returns: a `sync` or another `wait_for` there could wait for it.
    pub(super) in_wait: bool,
    /// The open reduction groups (`reduce`).
    pub(super) reductions: Groups,
}

/// The counts of a frame's weak children that the spawn throttle reads (see
/// `Frame::outstanding_tasks`).
pub(super) struct WeakCounts {
    /// Weak gates of the frame's children completed so far (each also counts in
    /// `Frame::completed`, after this).
    pub(super) gates_done: AtomicUsize,
    /// Tasks that the frame's weak children had outstanding when their bodies ended, until
    /// each such child completes.
    pub(super) handed_on: AtomicUsize,
}

/// A value on a cache line of its own (64 bytes: frames live on stacks, so no wider).
#[repr(align(64))]
pub(super) struct Line<T>(T);

impl<T> std::ops::Deref for Line<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// A running task's (or root scope's) bookkeeping for its children (see the design note).
#[repr(C)]
pub(super) struct Frame {
    /// Children completed so far: the one field the children's threads write, alone on its
    /// cache line. The spawning thread counts its spawns in its local state and reads this
    /// line only to wait and, now and then, to throttle, so a child's completion and the
    /// next spawn do not pass the line back and forth.
    pub(super) completed: Line<AtomicUsize>,
    /// What the spawn throttle counts besides (`Frame::outstanding_tasks`), in a frame with
    /// weak children only; written by the children's threads, on a line of its own.
    pub(super) weak_counts: Line<WeakCounts>,
    /// The scope's runtime (kept alive by the root's worker, which holds an `Arc` of it for
    /// longer than any frame of the scope lives).
    pub(super) registry: *const Registry,
    pub(super) shared: *const Shared,
    /// Whether `panic` holds a panic (spares a lock per task in the common case).
    panicked: AtomicBool,
    /// The first panic of a child (or of a child's descendants).
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    local: UnsafeCell<FrameLocal>,
    /// The schedule trace's id of the task (or root scope) this frame belongs to (0: not
    /// traced).
    pub(super) trace_id: u64,
    /// The frame of a task with weak accesses (`weak`): on the heap, never waited on on a
    /// stack (no `sync`, no `wait_for`); its last child completes the task.
    pub(super) weak: bool,
    /// A weak task's completion, left to its last child (see `task::defer`): the
    /// task, whether it failed, and the frame's own allocation. Written by the frame's thread
    /// before the deferring read-modify-write, read by the child whose completion ends the
    /// count, after its own.
    deferred: Cell<(*const TaskDesc, bool, *mut LazyFrame)>,
    /// A weak task's outstanding tasks at the end of its body, added to its parent's
    /// `handed_on` then and taken off as it completes (written and read as `deferred` is).
    handed: Cell<usize>,
}

impl Frame {
    fn new(registry: *const Registry, shared: *const Shared, trace_id: u64, weak: bool) -> Frame {
        Frame {
            registry,
            shared,
            trace_id,
            weak,
            deferred: Cell::new((std::ptr::null(), false, std::ptr::null_mut())),
            handed: Cell::new(0),
            weak_counts: Line(WeakCounts {
                gates_done: AtomicUsize::new(0),
                handed_on: AtomicUsize::new(0),
            }),
            completed: Line(AtomicUsize::new(0)),
            panicked: AtomicBool::new(false),
            panic: Mutex::new(None),
            local: UnsafeCell::new(FrameLocal {
                arena: Arena::new(),
                table_arena: Arena::new(),
                regions: Vec::new(),
                scratch: Vec::new(),
                locks: Vec::new(),
                links: Vec::new(),
                spawned: 0,
                gates: 0,
                seen: 0,
                throttling: false,
                epoch: 0,
                in_wait: false,
                reductions: Groups::new(),
            }),
        }
    }

    pub(super) fn shared(&self) -> &Shared {
        // SAFETY: the root scope's `Shared` outlives every frame of the scope (the root waits
        // for all its children, which wait for theirs).
        unsafe { &*self.shared }
    }

    /// # Safety
    /// Only the frame's own thread, and not while another reference from this call is alive.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn local(&self) -> &mut FrameLocal {
        // SAFETY: per the contract.
        unsafe { &mut *self.local.get() }
    }

    pub(super) fn registry(&self) -> &Registry {
        // SAFETY: see the field.
        unsafe { &*self.registry }
    }

    /// Keeps `p` if it is the first panic, else drops it (a drop that panics in turn is
    /// caught: the caller must go on to complete the task).
    pub(super) fn keep_panic(&self, p: Box<dyn Any + Send>) {
        keep_first(&self.panic, p);
        self.panicked.store(true, Ordering::Relaxed);
    }

    /// The first panic kept, once every child has completed (their `completed` increments,
    /// which the caller has seen with Acquire, come after their `keep_panic`).
    pub(super) fn take_panic(&self) -> Option<Box<dyn Any + Send>> {
        if self.panicked.load(Ordering::Relaxed) {
            lock(&self.panic).take()
        } else {
            None
        }
    }

    /// Records that this frame's task begins to wait for its children (when it has any
    /// left: the critical path leaves the wait out of the task's own work).
    #[cold]
    pub(super) fn note_wait(&self, t: &TraceBuf) {
        // SAFETY: called by the frame's thread (its task or scope, about to wait).
        if self.trace_id != 0 && self.completed.load(Ordering::Relaxed) != unsafe { self.spawned() }
        {
            t.note(EventKind::Wait {
                task: self.trace_id,
            });
        }
    }

    /// Waits (running other work) until every child so far has completed.
    pub(super) fn wait_children(&self, w: &WorkerThread) {
        // SAFETY: a frame's waits run on its own thread (its task's end, `sync`, the root).
        let spawned = unsafe { self.spawned() };
        w.wait_until(|| self.completed.load(Ordering::Acquire) == spawned);
        // Each weak child took what it handed on before its completion (Release), which the
        // wait's Acquire saw.
        debug_assert_eq!(
            self.weak_counts.handed_on.load(Ordering::Relaxed),
            0,
            "tasks left handed on"
        );
    }

    /// Records a weak task's completion (`d`, `failed`, the frame's allocation `boxed`) for
    /// the child that ends the count (`task::defer`).
    pub(super) fn set_deferred(&self, d: *const TaskDesc, failed: bool, boxed: *mut LazyFrame) {
        self.deferred.set((d, failed, boxed));
    }

    /// This frame's outstanding tasks, for the spawn throttle: its outstanding children
    /// less its outstanding weak gates, plus what its weak children handed on. Each count
    /// is read on its own (Relaxed), so the figure may be off by the children that complete
    /// meanwhile.
    ///
    /// # Safety
    /// The frame's thread, with no reference to its local state alive (it reads the local
    /// counts through the cell): between spawns. A spawn, which holds one, uses
    /// [`outstanding_tasks_of`](Self::outstanding_tasks_of).
    pub(super) unsafe fn outstanding_tasks(&self) -> usize {
        // SAFETY: per the contract.
        self.outstanding_tasks_of(unsafe { &*self.local.get() })
    }

    /// [`outstanding_tasks`](Self::outstanding_tasks), with the frame's local state `local`
    /// (the reference its thread holds).
    pub(super) fn outstanding_tasks_of(&self, local: &FrameLocal) -> usize {
        let children = local
            .spawned
            .wrapping_sub(self.completed.load(Ordering::Relaxed));
        if local.gates == 0 {
            return children;
        }
        let w = &*self.weak_counts;
        let gates = local
            .gates
            .wrapping_sub(w.gates_done.load(Ordering::Relaxed));
        children.saturating_sub(gates) + w.handed_on.load(Ordering::Relaxed)
    }

    /// A weak task's frame, at the end of its body (its thread): adds its outstanding tasks
    /// to its parent's `handed_on`, until `take_handed` takes them off. (They stay counted
    /// there until the weak task completes, as they complete: a bound of what the task
    /// hands on, not a live count.)
    ///
    /// # Safety
    /// The frame's thread.
    pub(super) unsafe fn hand_on(&self, parent: &Frame) {
        // SAFETY: per the contract.
        let tasks = unsafe { self.outstanding_tasks() };
        if tasks != 0 {
            self.handed.set(tasks);
            parent
                .weak_counts
                .handed_on
                .fetch_add(tasks, Ordering::Relaxed);
        }
    }

    /// Takes what `hand_on` added off the parent's count: by whoever completes the weak
    /// task, before it completes it (after that, the parent may be gone).
    pub(super) fn take_handed(&self, parent: &Frame) {
        let tasks = self.handed.get();
        if tasks != 0 {
            parent
                .weak_counts
                .handed_on
                .fetch_sub(tasks, Ordering::Relaxed);
        }
    }

    /// What `set_deferred` recorded: read by the child that ended the count.
    pub(super) fn deferred(&self) -> (*const TaskDesc, bool, *mut LazyFrame) {
        self.deferred.get()
    }

    /// The children spawned so far.
    ///
    /// # Safety
    /// Only the frame's own thread (the one that spawns), as for [`local`](Self::local).
    pub(super) unsafe fn spawned(&self) -> usize {
        // SAFETY: per the contract, the only thread that writes the local state; a read
        // through the raw pointer creates no reference that could overlap another.
        unsafe { (*self.local.get()).spawned }
    }
}

/// What a scope refers to: its frame, made at the scope's first use. Most data-flow tasks
/// are leaves that never use their scope, and so never make, wait on or drop a frame.
pub(super) struct LazyFrame {
    registry: *const Registry,
    shared: *const Shared,
    trace_id: u64,
    /// A weak task's frame (see [`Frame::weak`]).
    weak: bool,
    /// Stays where it is once made (the `LazyFrame` does not move while its scope is in
    /// use): the children's descriptors point at it.
    pub(super) frame: OnceCell<Frame>,
}

impl LazyFrame {
    pub(super) fn new(
        registry: *const Registry,
        shared: *const Shared,
        trace_id: u64,
        weak: bool,
    ) -> LazyFrame {
        LazyFrame {
            registry,
            shared,
            trace_id,
            weak,
            frame: OnceCell::new(),
        }
    }

    /// The root scope's shared state, without making the frame.
    pub(super) fn shared(&self) -> &Shared {
        // SAFETY: as for `Frame::shared`.
        unsafe { &*self.shared }
    }

    #[inline]
    pub(super) fn get(&self) -> &Frame {
        self.frame
            .get_or_init(|| Frame::new(self.registry, self.shared, self.trace_id, self.weak))
    }

    /// The frame's end, if the scope made one: records the wait in the trace, waits for the
    /// children (running other work meanwhile) and returns the first panic among them.
    pub(super) fn finish(
        &self,
        w: &WorkerThread,
        tr: Option<&TraceBuf>,
    ) -> Option<Box<dyn Any + Send>> {
        let frame = self.frame.get()?;
        if let Some(t) = tr {
            frame.note_wait(t);
        }
        frame.wait_children(w);
        frame.take_panic()
    }
}
