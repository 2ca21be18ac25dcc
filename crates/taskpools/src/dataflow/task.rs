//! A data-flow task's descriptor (Papakonstantinou, PARTEE (2015), §2) and running it: the
//! job the runtime runs, its body, and its completion, which fires its successors.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use super::cancel::skips;
use super::commute::{lock_all, unlock_all, CommuteLock, Waiter};
use super::frame::{Frame, LazyFrame};
use super::notify::{DepCounter, NotifyList};
use super::weak::{child_completes, complete_gate, owner_defers, release, WeakGate};
use super::{Accesses, Scope};
use crate::panics::first_of;
use crate::runtime::job::{JobHeader, JobRef};
use crate::runtime::trace::{EventKind, TraceBuf};
use crate::runtime::worker::WorkerThread;
use crate::sync::{AtomicBool, Ordering};

/// A task descriptor (Papakonstantinou, PARTEE (2015), §2): the job the runtime runs, the
/// dependence counter, the notify list, and the type-erased closure with its declared
/// accesses. Lives in the parent's
/// region until the parent completes. Aligned to a cache line, and so a whole number of
/// lines: the thread that completes a task writes its notify list while the spawning thread
/// writes the next task's closure and descriptor just after it in the region.
#[repr(C, align(64))]
pub(super) struct TaskDesc {
    pub(super) header: JobHeader,
    pub(super) deps: DepCounter,
    pub(super) notify: NotifyList,
    /// A predecessor panicked or was cancelled: do not run, cancel the successors.
    pub(super) cancelled: AtomicBool,
    /// The task has weak accesses (`weak`): its frame lives on the heap and its last child
    /// completes it. In the padding after `cancelled`.
    pub(super) weak: bool,
    /// The priority ([`Scope::spawn_with_priority`]; 0 by default); in the padding after
    /// `cancelled`.
    pub(super) priority: i16,
    /// The place hint (`NO_PLACE`: none).
    pub(super) place: u32,
    /// The last sibling whose node was pushed on this task's notify list, or that registered
    /// any edge to it while tracing (only the thread that analyses the spawns that add edges
    /// to it: its parent's; for a weak part's gate, also the owner's body's, which starts
    /// after the spawn that made the gate and links the owner's children): skips duplicate pushes from a
    /// footprint that meets this task in several blocks. An edge to a completed task leaves
    /// it alone and reads the closed list again, which gives the same answer (the check only
    /// saves work: a duplicate node would fire once and balance its own count).
    pub(super) last_succ: Cell<*const TaskDesc>,
    pub(super) parent: *const Frame,
    /// The task's id in the schedule trace (0: the spawning worker does not trace).
    pub(super) trace_id: u64,
    pub(super) body: *mut u8,
    /// Runs the body with the task's frame, or drops it unrun (`None`); either way it first
    /// stores the head of the task's weak gates (`weak`) in the cell.
    pub(super) call: unsafe fn(*mut u8, Option<&LazyFrame>, &Cell<*const WeakGate>),
    /// The locks of the commutative groups the task joined (`nlocks` of them, distinct, in
    /// address order), taken before it runs: an array in the parent's region, or `one`
    /// when there is one.
    pub(super) locks: *const *const CommuteLock,
    pub(super) nlocks: usize,
    pub(super) one: *const CommuteLock,
    /// The task's link while it is queued on one of those locks.
    pub(super) waiter: Waiter,
}

// Two cache lines: the commutative fields fit in what was padding.
#[cfg(not(loom))]
const _: () = assert!(std::mem::size_of::<TaskDesc>() == 128);

impl TaskDesc {
    fn locks(&self) -> &[*const CommuteLock] {
        if self.nlocks == 0 {
            return &[];
        }
        // SAFETY: `nlocks` pointers written at the spawn: `one` in this descriptor, or an
        // array in the parent's region.
        unsafe { std::slice::from_raw_parts(self.locks, self.nlocks) }
    }
}

/// Takes the task's commutative locks, or queues it on one that is held (false).
///
/// # Safety
/// The locks live in the parent's region; `d` is the descriptor's own pointer (the job's, so
/// that [`wake`] may step back from its waiter to the whole descriptor), which runs now
/// (queued nowhere) and is alive until it completes.
#[inline(never)]
unsafe fn take_locks(d: *const TaskDesc, locks: &[*const CommuteLock]) -> bool {
    // SAFETY: per the contract; the waiter's pointer is derived from the descriptor's raw
    // pointer, not from a reference to it.
    unsafe {
        let waiter = ptr::addr_of!((*d).waiter).cast_mut();
        lock_all(locks, waiter, &mut wake)
    }
}

/// Hands a task that waited on a commutative lock back to the scheduler, to try again.
fn wake(w: *mut Waiter) {
    let off = std::mem::offset_of!(TaskDesc, waiter);
    // SAFETY: every queued waiter is the `waiter` field of a live descriptor (its parent waits
    // for it), so stepping back to the descriptor's start stays in the same allocation.
    let d = unsafe { w.cast::<u8>().sub(off).cast::<TaskDesc>() };
    // SAFETY: as above; its parent frame outlives it.
    schedule(d, unsafe { &*(*d).parent });
}

// SAFETY: shared between the parent's thread (analysis: `last_succ`, pushes) and the threads
// that complete predecessors (atomics only) or run the task (after it is handed over through
// the counter and a deque); `last_succ` is touched by one analysing thread at a time (the
// parent's, and for a gate afterwards its owner's body's, ordered by the owner's start).
unsafe impl Sync for TaskDesc {}

pub(super) struct Body<F, A> {
    pub(super) f: F,
    pub(super) a: A,
}

pub(super) unsafe fn call_body<'e, F, A>(
    body: *mut u8,
    frame: Option<&LazyFrame>,
    weak: &Cell<*const WeakGate>,
) where
    A: Accesses,
    F: for<'t> FnOnce(&'t Scope<'t, 'e>, A::Data<'t>),
{
    // SAFETY: `body` holds the `Body<F, A>` written at the spawn, read out exactly once here
    // (the descriptor runs or is cancelled once).
    let Body { f, a } = unsafe { body.cast::<Body<F, A>>().read() };
    let head = a.weak_head();
    if !head.is_null() {
        weak.set(head);
        if let Some(frame) = frame {
            // Only this body's scope may make regions of its weak parts.
            let mut g = head;
            while !g.is_null() {
                // SAFETY: the task's gates, alive until after its body (their leave gates
                // hold an edge for it).
                let gate = unsafe { &*g };
                gate.frame.set(frame);
                g = gate.next.get();
            }
        }
    }
    if let Some(frame) = frame {
        let s = Scope::<'_, 'e>::new(frame);
        // SAFETY: the task's dependences are satisfied: the declared data is exclusive for
        // its writes and unwritten by others for its reads until the task completes, which
        // is after `f` returns and the frame's children are done.
        f(&s, unsafe { a.into_data() });
        // The task's open reductions are folded in by tasks of its own, before its end.
        s.close_reductions();
    }
}

/// A data-flow task without a place hint.
pub(super) const NO_PLACE: u32 = u32::MAX;

/// The place of a weak access's gate (`weak`): completed inline once ready, never queued.
pub(super) const GATE_PLACE: u32 = u32::MAX - 2;

/// The place of a task that its spawner runs itself once it is ready ([`Scope::wait_for`]):
/// readying it queues nothing.
pub(super) const WAIT_PLACE: u32 = u32::MAX - 1;

/// Queues a ready task of `parent` on the current worker (every data-flow task is readied on
/// a worker of its scope's runtime: by its parent, or by a predecessor as it completes), or on
/// its place's deque when it has a hint, or, in a scope that uses priorities, in the scope's
/// ready heap (`priority`).
///
/// Takes `parent` as a raw pointer: once the task is queued, another thread may run it and
/// complete its parent (a weak task's heap frame, freed by its last child) before this call
/// returns, so the frame's fields are copied out first and not touched after.
pub(super) fn schedule(d: *const TaskDesc, parent: *const Frame) {
    // SAFETY: the parent frame is alive until the task completes, which it cannot before
    // it is queued below; the runtime and the root scope's shared state outlive every frame
    // of the scope (see `Frame::registry`, `Frame::shared`).
    let (registry, shared) = unsafe { (&*(*parent).registry, &*(*parent).shared) };
    // SAFETY: the header is the descriptor's first field; the descriptor lives until its
    // parent completes, which waits for it to have run.
    let job = unsafe { JobRef::from_header(d.cast()) };
    // SAFETY: as above.
    let place = unsafe { &*d }.place;
    if place != NO_PLACE {
        debug_assert!(place != GATE_PLACE, "a gate is completed, never queued");
        if place != WAIT_PLACE {
            registry.push_place(place as usize, job, true);
        }
        return;
    }
    let prio = &shared.prio;
    if prio.in_use() {
        prio.push(d, registry);
        return;
    }
    match WorkerThread::current() {
        Some(w) if ptr::eq(&*w.registry, registry) => w.push_spawn(job),
        _ => registry.inject(job),
    }
}

/// The job function of a data-flow task.
pub(super) unsafe fn run_task(h: *const JobHeader) {
    // SAFETY: the header of a descriptor (first field, `repr(C)`), alive until its parent
    // completes, which cannot happen before this function's last line.
    let d = unsafe { &*h.cast::<TaskDesc>() };
    // SAFETY: the parent frame waits for this task before it goes.
    let parent = unsafe { &*d.parent };
    let cancelled = d.cancelled.load(Ordering::Relaxed);
    // A stopped scope skips its tasks that have not started (`crate::cancel`). A skipped
    // task completes normally, so its successors are readied and skip in turn; a wait's
    // task is the spawner's own code, which goes on (`Scope::wait_for`).
    let skip = skips(cancelled, d.place == WAIT_PLACE, &parent.shared().stop);
    let locks = if skip { &[][..] } else { d.locks() };
    // SAFETY: the locks live in the parent's region; the waiter is this descriptor's, which
    // is queued nowhere now (it runs) and alive until it completes.
    if !locks.is_empty() && !unsafe { take_locks(h.cast(), locks) } {
        // Queued on a held lock: its holder hands it back.
        return;
    }
    let mut failed = cancelled;
    let tr = if d.trace_id != 0 {
        WorkerThread::current().and_then(|w| w.trace.as_deref())
    } else {
        None
    };
    if let (Some(t), true) = (tr, d.trace_id != 0) {
        t.note(EventKind::Task { id: d.trace_id });
    }
    if !skip && d.weak {
        // SAFETY: the task runs once, here; its locks are taken.
        return unsafe { run_weak(d, parent) };
    }
    if skip {
        // SAFETY: the body is dropped once, unrun. Dropping runs user destructors, which may
        // panic: keep that panic like a task's.
        let weak = Cell::new(ptr::null());
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe {
            (d.call)(d.body, None, &weak)
        })) {
            parent.keep_panic(p);
        }
        // SAFETY: once, after the body (dropped unrun).
        unsafe { release(weak.get(), cancelled) };
        parent.shared().stop.skip();
    } else {
        // The frame (if the task made one) is dropped where it lives, at the end of this
        // block (a `drop(frame)` moved its bytes first: a `memcpy` per task).
        let (r, child_panic) = {
            let frame = LazyFrame::new(parent.registry, parent.shared, d.trace_id, false);
            let weak = Cell::new(ptr::null());
            // SAFETY: the body runs once.
            let r = catch_unwind(AssertUnwindSafe(|| unsafe {
                (d.call)(d.body, Some(&frame), &weak)
            }));
            if !weak.get().is_null() {
                // Early release: the weak parts wait only for the children on them now.
                // SAFETY: once, after the body.
                unsafe { release(weak.get(), r.is_err()) };
            }
            let child_panic = if frame.frame.get().is_some() {
                let w = WorkerThread::current().expect("data-flow tasks run on workers");
                frame.finish(w, tr)
            } else {
                None
            };
            (r, child_panic)
        };
        // The body's panic first; a child's, if the body panicked too, is dropped here.
        if let Some(p) = first_of(r.err(), child_panic) {
            failed = true;
            parent.keep_panic(p);
        }
    }
    if !locks.is_empty() {
        // SAFETY: taken above.
        unsafe { unlock_all(locks, &mut wake) };
    }
    // SAFETY: the task completes once, here.
    unsafe { complete(d, failed, tr) };
}

/// Runs a task with weak accesses (see `weak`): it may start before the predecessors of its
/// weak parts end, so it must never wait on this stack for children that wait for them (the
/// predecessor may be below it on this very stack). Its frame lives on the heap, and if
/// children are outstanding when the body ends, the last of them completes the task.
///
/// Takes raw pointers, not references, here and down the completion chain (`finish_weak`,
/// `complete`, `complete_gate`): once the completion may happen on another thread, or
/// frees a frame on this one, the task and its frame may be freed while the call that led
/// there is still on the stack, which a reference argument must outlive.
///
/// # Safety
/// Once per task, ready, its commutative locks taken.
#[cold]
#[inline(never)]
unsafe fn run_weak(d: *const TaskDesc, parent: *const Frame) {
    // SAFETY: the task is alive until it completes, below or in its last child.
    let (body, call, trace_id) = unsafe { ((*d).body, (*d).call, (*d).trace_id) };
    let (frame, failed) = {
        // SAFETY: its parent waits for it; the reference ends in this block.
        let parent = unsafe { &*parent };
        let frame = Box::into_raw(Box::new(LazyFrame::new(
            parent.registry,
            parent.shared,
            trace_id,
            true,
        )));
        let weak = Cell::new(ptr::null());
        // SAFETY: the body runs once; the frame stays where it is until the task completes.
        let r = catch_unwind(AssertUnwindSafe(|| unsafe {
            call(body, Some(&*frame), &weak)
        }));
        // SAFETY: once, after the body.
        unsafe { release(weak.get(), r.is_err()) };
        let failed = r.is_err();
        if let Err(p) = r {
            parent.keep_panic(p);
        }
        (frame, failed)
    };
    // SAFETY: the frame is this task's, alive; this thread made it and is its thread.
    let made = unsafe { (*frame).frame.get() }.map(ptr::from_ref);
    if let Some(f) = made {
        // SAFETY: as above, once, after the body. From here on, nothing touches the frame,
        // the task or its parent: the last child may complete them.
        if unsafe { defer(f, d, failed, frame) } {
            return;
        }
    }
    // SAFETY: every child (if any) has completed.
    unsafe { finish_weak(d, frame, failed) };
}

/// Leaves the completion of the weak task `d` (its frame `frame`, allocated as `boxed`) to
/// its last outstanding child: false if none is outstanding (the caller completes it now).
///
/// # Safety
/// The frame's thread, once, after the task's body; `boxed` holds `frame`. When it returns
/// true, the frame may already be freed.
unsafe fn defer(
    frame: *const Frame,
    d: *const TaskDesc,
    failed: bool,
    boxed: *mut LazyFrame,
) -> bool {
    // SAFETY: alive until the count below lets the last child free it; the reference is not
    // used after the count.
    let f = unsafe { &*frame };
    f.set_deferred(d, failed, boxed);
    // SAFETY: the task's parent frame waits for it; this thread is the frame's.
    unsafe { f.hand_on(&*(*d).parent) };
    // SAFETY: the frame's thread.
    let spawned = unsafe { f.spawned() };
    owner_defers(&f.completed, spawned)
}

/// Completes a weak task whose children have all completed: keeps their first panic, frees
/// its frame, gives its locks back, completes it.
///
/// # Safety
/// Once per weak task, after its body and all its children; `frame` is its frame's
/// allocation, used by no one else now.
unsafe fn finish_weak(d: *const TaskDesc, frame: *mut LazyFrame, mut failed: bool) {
    {
        // SAFETY: the task is alive until `complete` below; its parent frame waits for it.
        let (t, parent) = unsafe { (&*d, &*(*d).parent) };
        // SAFETY: per the contract (the children's completions, seen with Acquire, came after
        // their panics were kept).
        let frame = unsafe { Box::from_raw(frame) };
        if let Some(f) = frame.frame.get() {
            f.take_handed(parent);
        }
        if let Some(p) = frame.frame.get().and_then(Frame::take_panic) {
            failed = true;
            parent.keep_panic(p);
        }
        drop(frame);
        let locks = t.locks();
        if !locks.is_empty() {
            // SAFETY: taken before the body ran.
            unsafe { unlock_all(locks, &mut wake) };
        }
    }
    // SAFETY: the task completes once, here.
    unsafe { complete(d, failed, None) };
}

/// Completes a task (or a weak access's gate): closes its notify list, readies each
/// successor whose last edge this was (cancelling them if it `failed`; a gate is completed
/// at once), and counts the completion in its parent frame.
///
/// # Safety
/// Once per descriptor; its parent frame is alive (it waits for this count). Once the count
/// is in, the descriptor and its frame may be freed.
#[inline(always)]
pub(super) unsafe fn complete(d: *const TaskDesc, failed: bool, tr: Option<&TraceBuf>) {
    // SAFETY: alive until the count below; the references are not used after it.
    let (t, parent) = unsafe { (&*d, &*(*d).parent) };
    // SAFETY: closed once, at completion; the nodes live in the parents' regions.
    unsafe {
        t.notify.close(failed, |s| {
            let s = s.cast::<TaskDesc>();
            // SAFETY: a successor's descriptor: a sibling, or (for a weak access's gate) a
            // descriptor of a frame nested in or around this one, alive until it completes.
            let succ = &*s;
            if failed {
                succ.cancelled.store(true, Ordering::Relaxed);
            }
            if succ.deps.fire() {
                if succ.place == GATE_PLACE {
                    complete_gate(s);
                    return;
                }
                if let (Some(tb), true) = (tr, succ.trace_id != 0) {
                    tb.note(EventKind::Ready {
                        task: succ.trace_id,
                        by: t.trace_id,
                    });
                }
                schedule(s, succ.parent);
            }
        })
    };
    // The last access to the parent's frame and region (this descriptor included), unless
    // the parent is a weak task that left its completion to its last child, and this is it.
    if child_completes(&parent.completed) {
        let (w, failed, frame) = parent.deferred();
        // SAFETY: `parent` deferred its task's completion (its thread wrote what `deferred`
        // reads before the read-modify-write this one follows, with AcqRel on both), and
        // every child of it has completed: the frame is this thread's to free.
        unsafe { finish_weak(w, frame, failed) };
    }
}
