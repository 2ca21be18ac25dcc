//! Data-flow tasks: nested tasks whose order follows the data they declare (seed 002, PARTEE,
//! chapter 2 and §3.4), on the same runtime as `join`, `scope` and the working phases.
//!
//! A task is spawned with its *footprint*: the parts of the data it reads (`in`, here
//! [`read`](Part::read)), writes ([`out`](Part::out)) or both ([`inout`](Part::inout)), whole
//! slices or strided sub-matrices (the seed's *stride* arguments, [`Matrix`]). The runtime
//! runs it once every earlier sibling whose footprint conflicts with its own (same data, one
//! of them writing) has completed — read after write, write after read, write after write —
//! and lets readers of the same data run together. A task receives its data only through its
//! declarations (`&[T]` for a read, `&mut [T]` for a write, [`TileRef`] / [`TileMut`] for a
//! sub-matrix), so what it touches is what the analysis saw: the compiler rejects a task that
//! reaches for undeclared data.
//!
//! ```
//! use taskpools::dataflow;
//!
//! // A blocked prefix sum: each block adds its left neighbour's last element. The tasks are
//! // spawned in any order the program likes; the declared accesses order them.
//! let mut v = vec![1u64; 1000];
//! dataflow::scope(|df| {
//!     let r = df.region(&mut v);
//!     let blocks: Vec<_> = r.chunks(100).collect();
//!     df.spawn(blocks[0].inout(), |_, b| {
//!         for i in 1..b.len() { b[i] += b[i - 1]; }
//!     });
//!     for w in blocks.windows(2) {
//!         df.spawn((w[0].read(), w[1].inout()), |_, (left, b)| {
//!             b[0] += left[left.len() - 1];
//!             for i in 1..b.len() { b[i] += b[i - 1]; }
//!         });
//!     }
//! });
//! assert_eq!(v[999], 1000);
//! ```
//!
//! # Nesting
//!
//! A task may spawn children of its own, over the data it received: its `&mut [T]` (or
//! [`TileMut`]) becomes a region of the task's scope ([`Scope::region`], [`Scope::matrix`]).
//! A task's footprint therefore covers its descendants', dependences are looked for only
//! between siblings, each task's children are analysed in the task's own look-up table, and a
//! task completes (releasing its successors) only after all its children have: the implicit
//! sync at the end of every task. Data a task only reads can be captured by reference in
//! its children's closures — the seed's `safe` arguments, which need no analysis because the
//! borrow checker already proves nobody writes them.
//!
//! # What is rejected
//!
//! - Two declarations in one spawn that overlap where one of them writes: a panic at the
//!   spawn, before anything is queued (declare the data once, as `inout`).
//! - A declaration from another task's scope: a panic at the spawn. Declarations cannot be
//!   captured by a task's closure (they are not `Send`), nor can the data a task receives
//!   escape it:
//!
//! ```compile_fail
//! let mut v = vec![0u32; 4];
//! let (tx, rx) = std::sync::mpsc::channel::<&mut [u32]>();
//! taskpools::dataflow::scope(|df| {
//!     let r = df.region(&mut v);
//!     // The task's `&mut [u32]` lives only as long as the task: it cannot be sent away.
//!     df.spawn(r.inout(), move |_, a| tx.send(a).unwrap());
//! });
//! ```
//!
//! ```compile_fail
//! let mut v = vec![0u32; 4];
//! taskpools::dataflow::scope(|df| {
//!     let r = df.region(&mut v);
//!     let part = r.part(0..2);
//!     // A declaration cannot be smuggled into a task to be used there without a dependence.
//!     df.spawn((), move |df2, ()| { let _ = part.read(); });
//! });
//! ```
//!
//! ```compile_fail
//! let mut v = vec![0u32; 4];
//! taskpools::dataflow::scope(|df| {
//!     let _r = df.region(&mut v);
//!     // `v` belongs to the scope now: a task cannot touch it without declaring it.
//!     df.spawn((), |_, ()| v[0] = 1);
//! });
//! ```
//!
//! A cycle cannot be expressed: a task can only wait for siblings spawned before it.
//!
//! # Panics
//!
//! A panicking task's dependents (and theirs) do not run: they are cancelled. Its other
//! siblings finish, and the scope then resumes the first panic in its caller ([`try_scope`]
//! returns it with the number of cancelled tasks instead). The runtime stays usable.
//!
//! # Design note
//!
//! - **Descriptors and regions.** Each running task that spawns (and each root scope) has a
//!   *frame* on the stack of the thread that runs it, made at the first use of its
//!   [`Scope`] (a leaf task, which never uses it, makes, waits on and frees nothing),
//!   holding its look-up table and two
//!   [regions](crate::mem::region::Region): one for its children's descriptors, closures and
//!   notify-list nodes, which the threads that run and complete the children touch too, and
//!   one for the table's leaves, entries and reader lists, which only the frame's thread
//!   touches (kept apart so that the spawning thread's table never shares a cache line with
//!   what other threads write or read). Only that thread spawns the task's children, so
//!   neither region needs a lock. The frame lives until every child has completed (each
//!   child's last access to it is the increment of its `completed` counter, which the
//!   frame's thread compares with the spawns it counted itself), and then frees
//!   both regions in one go. [`Scope::sync`] frees them early, once the children so far are
//!   done.
//! - **Dependences.** At a spawn the parent finds, in its look-up table, the earlier
//!   siblings the new task must wait for, pushes a node for the new task onto each one's
//!   notify list (a push that finds the list closed means that sibling is done: no edge),
//!   and arms the new task's counter with the number of edges. In exact mode, while a
//!   region's accesses are whole rectangles (tiles, several rows apart) each equal to an
//!   earlier one or disjoint from all, the table keeps one state per rectangle, found by its
//!   first row, instead of one entry per row; the first partial overlap or one-row access
//!   turns it into per-row entries with the same state. Whoever brings the counter to
//!   zero — the arm itself, or the last predecessor to complete — queues the task on its own
//!   worker. The docs of the source's `notify` module say why no notification is lost or
//!   doubled (also `docs/dataflow.md` in the repository); the loom models there cover a spawn racing a completion and two predecessors completing at once.
//! - **Safety.** The data handed to a task is exclusive for writes and shared for reads
//!   because (a) regions are made from `&mut` borrows for the scope's lifetime, (b) every
//!   access the task gets is one it declared, checked for self-overlap at the spawn, (c) the
//!   analysis orders every conflicting pair of siblings (in block mode conservatively), and
//!   (d) a task's lifetime `'t` ends before it completes, so nothing it received outlives the
//!   point where its successors start.
//! - **ND mode** (the seed's analysis switched off, with explicit syncs) would hand the same
//!   data to tasks the programmer promises are independent: in Rust that promise is a borrow.
//!   Programs without dependence analysis are written with `join` / `forkjoin::scope` over
//!   disjoint [`TileMut`]s ([`TileMut::into_tiles`], [`TileMut::quadrants`]), which the
//!   compiler checks; [`Scope::sync`] is the seed's `sync` inside a data-flow scope.

mod access;
mod lut;
pub(crate) mod notify;

use std::any::Any;
use std::cell::{Cell, OnceCell, UnsafeCell};
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr;

pub use access::{
    Accesses, Matrix, Part, Read, Region, Sub, TileMut, TileRead, TileRef, TileWrite, Write,
};

use crate::mem::region::Region as Arena;
use crate::runtime::job::{JobHeader, JobRef};
use crate::runtime::trace::{EventKind, Source, TraceBuf};
use crate::runtime::worker::WorkerThread;
use crate::runtime::{global, Registry};
use crate::sync::{lock, AtomicBool, AtomicUsize, Mutex, Ordering};
use crate::Error;
use lut::{Rect, RectMode, Trie};
use notify::{DepCounter, NotifyList, NotifyNode, Push};

/// One declared access, as the analysis sees it: rows of `len` elements, `ld` apart, starting
/// at element `start` of region `region` of the scope `frame`.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Footprint {
    frame: *const (),
    region: u32,
    start: usize,
    len: usize,
    ld: usize,
    rows: usize,
    write: bool,
}

impl Footprint {
    /// The footprint's bytes in a region of `elem`-byte elements (`bytes` in all), as a
    /// rectangle; `None` if it is empty. Zero-sized elements: the region's one byte.
    ///
    /// # Panics
    /// If it reaches past the region, or its byte offsets do not fit in `usize` (a bug in the
    /// access's constructor).
    fn bytes(&self, elem: usize, bytes: usize) -> Option<Rect> {
        if self.len == 0 || self.rows == 0 {
            return None;
        }
        if elem == 0 {
            return Some(Rect {
                lo: 0,
                len: 1,
                rows: 1,
                stride: 0,
            });
        }
        let stride = if self.rows == 1 { 0 } else { self.ld };
        // Every product and sum checked: a wrapped bound would let an access pass as inside.
        let rect = (|| {
            let rect = Rect {
                lo: self.start.checked_mul(elem)?,
                len: self.len.checked_mul(elem)?,
                rows: self.rows,
                stride: stride.checked_mul(elem)?,
            };
            let end = (rect.rows - 1)
                .checked_mul(rect.stride)?
                .checked_add(rect.lo)?
                .checked_add(rect.len)?;
            (end <= bytes).then_some(rect)
        })();
        assert!(
            rect.is_some(),
            "taskpools::dataflow: an access outside its region, or whose byte offsets \
             overflow (a bug in the access's constructor)"
        );
        rect
    }

    /// Element ranges `[lo, hi)` of the footprint's non-empty rows.
    fn row_ranges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let n = if self.len == 0 { 0 } else { self.rows };
        (0..n).map(move |r| {
            let lo = self.start + r * self.ld;
            (lo, lo + self.len)
        })
    }

    /// Whether the two footprints (of the same region) share an element.
    fn overlaps(&self, o: &Footprint) -> bool {
        if self.len == 0 || o.len == 0 || self.rows == 0 || o.rows == 0 {
            return false;
        }
        if self.rows == 1 && o.rows == 1 {
            return self.start < o.start + o.len && o.start < self.start + self.len;
        }
        // Same layout: rectangles in (row, column) space when no row wraps past `ld`.
        if self.ld == o.ld && self.ld > 0 {
            let (r1, c1) = (self.start / self.ld, self.start % self.ld);
            let (r2, c2) = (o.start / o.ld, o.start % o.ld);
            if c1 + self.len <= self.ld && c2 + o.len <= o.ld {
                return r1 < r2 + o.rows
                    && r2 < r1 + self.rows
                    && c1 < c2 + o.len
                    && c2 < c1 + self.len;
            }
        }
        self.row_ranges()
            .any(|(a, b)| o.row_ranges().any(|(c, d)| a < d && c < b))
    }
}

/// How the look-up tables key the data: blocks of a fixed size (the seed's design; accesses
/// to the same block are ordered even if their bytes do not overlap) or exact byte ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    block: usize,
    exact: bool,
}

impl Default for Config {
    /// Blocks of 2 KiB (the seed's setting), block mode.
    fn default() -> Self {
        Config {
            block: Self::DEFAULT_BLOCK,
            exact: false,
        }
    }
}

impl Config {
    /// The default block size in bytes.
    pub const DEFAULT_BLOCK: usize = 2048;
    /// The largest block size accepted.
    pub const MAX_BLOCK: usize = 1 << 30;

    /// Block mode with blocks of `bytes` bytes (1 to [`Config::MAX_BLOCK`]): smaller blocks
    /// cost more look-up-table slots per access, larger ones create false dependences. Each
    /// region's table starts with one pointer per 256 blocks (for 1-byte blocks over 1 GiB of
    /// data, 32 MiB per region, again after every [`Scope::sync`]; in exact mode, up to twice
    /// that while the region's accesses are whole tiles, see [`Config::exact`]).
    pub fn blocks(bytes: usize) -> Result<Config, Error> {
        if bytes == 0 || bytes > Self::MAX_BLOCK {
            return Err(Error::TooLarge {
                what: format!("data-flow block size of {bytes} bytes"),
                limit: format!("1 to {} bytes", Self::MAX_BLOCK),
            });
        }
        Ok(Config {
            block: bytes,
            exact: false,
        })
    }

    /// Exact mode: no false dependences, whatever the alignment and size of the accesses; the
    /// tables are indexed by blocks of `bytes` bytes, each holding the exact ranges that touch
    /// it. While a region's accesses are whole tiles (each equal to an earlier one or
    /// disjoint from all), its table keeps one state per tile, in a second trie of the same
    /// size made at the first tile access; the first one-row or partly overlapping access
    /// returns it to per-row entries.
    pub fn exact(bytes: usize) -> Result<Config, Error> {
        Ok(Config {
            exact: true,
            ..Self::blocks(bytes)?
        })
    }

    /// The block size in bytes.
    pub fn block_bytes(&self) -> usize {
        self.block
    }

    /// Whether dependences are exact.
    pub fn is_exact(&self) -> bool {
        self.exact
    }
}

/// A panic from a data-flow scope's tasks (or its own closure), with how many tasks were
/// cancelled because they depended on the panicking one.
pub struct TaskPanic {
    /// The first panic's payload.
    pub payload: Box<dyn Any + Send>,
    /// Tasks that did not run because a task they (transitively) depended on panicked.
    pub cancelled: usize,
}

impl std::fmt::Debug for TaskPanic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let msg = self
            .payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| self.payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(non-string payload)");
        f.debug_struct("TaskPanic")
            .field("message", &msg)
            .field("cancelled", &self.cancelled)
            .finish()
    }
}

/// Outstanding children per worker thread past which a spawn first runs a job itself (the
/// figure libgomp uses for its tasks).
const THROTTLE_PER_THREAD: usize = 64;

/// State shared by all frames of one root scope.
struct Shared {
    config: Config,
    cancelled: AtomicUsize,
}

/// A data region registered with a frame.
struct RegionInfo {
    elem: usize,
    bytes: usize,
    trie: Trie<TaskDesc>,
    /// Rectangle mode (exact tables), while it lasts (see [`RectMode`]).
    rects: Option<RectMode<TaskDesc>>,
}

/// What only the frame's own thread touches.
struct FrameLocal {
    /// The children's descriptors, closures and notify-list nodes: read and written by the
    /// threads that run and complete the children too.
    arena: Arena,
    /// The look-up tables' leaves, entries and reader lists: this thread's alone. Kept apart
    /// from `arena` so that no cache line holds both table state, which the spawns read, and
    /// a descriptor, which other threads write as they complete it.
    table_arena: Arena,
    regions: Vec<RegionInfo>,
    scratch: Vec<Footprint>,
    /// Children spawned so far (the frame's own count; `Frame::completed` counts their
    /// completions).
    spawned: usize,
    /// A value of `Frame::completed` read earlier: `spawned - seen` bounds the outstanding
    /// children from above without reading the line the children write.
    seen: usize,
}

/// A value on a cache line of its own (64 bytes: frames live on stacks, so no wider).
#[repr(align(64))]
struct Line<T>(T);

impl<T> std::ops::Deref for Line<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// A running task's (or root scope's) bookkeeping for its children (see the design note).
#[repr(C)]
struct Frame {
    /// Children completed so far: the one field the children's threads write, alone on its
    /// cache line. The spawning thread counts its spawns in its local state and reads this
    /// line only to wait and, now and then, to throttle, so a child's completion and the
    /// next spawn do not pass the line back and forth.
    completed: Line<AtomicUsize>,
    /// The scope's runtime (kept alive by the root's worker, which holds an `Arc` of it for
    /// longer than any frame of the scope lives).
    registry: *const Registry,
    shared: *const Shared,
    /// Whether `panic` holds a panic (spares a lock per task in the common case).
    panicked: AtomicBool,
    /// The first panic of a child (or of a child's descendants).
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    local: UnsafeCell<FrameLocal>,
    /// The schedule trace's id of the task (or root scope) this frame belongs to (0: not
    /// traced).
    trace_id: u64,
}

impl Frame {
    fn new(registry: *const Registry, shared: *const Shared, trace_id: u64) -> Frame {
        Frame {
            registry,
            shared,
            trace_id,
            completed: Line(AtomicUsize::new(0)),
            panicked: AtomicBool::new(false),
            panic: Mutex::new(None),
            local: UnsafeCell::new(FrameLocal {
                arena: Arena::new(),
                table_arena: Arena::new(),
                regions: Vec::new(),
                scratch: Vec::new(),
                spawned: 0,
                seen: 0,
            }),
        }
    }

    fn shared(&self) -> &Shared {
        // SAFETY: the root scope's `Shared` outlives every frame of the scope (the root waits
        // for all its children, which wait for theirs).
        unsafe { &*self.shared }
    }

    /// # Safety
    /// Only the frame's own thread, and not while another reference from this call is alive.
    #[allow(clippy::mut_from_ref)]
    unsafe fn local(&self) -> &mut FrameLocal {
        // SAFETY: per the contract.
        unsafe { &mut *self.local.get() }
    }

    fn registry(&self) -> &Registry {
        // SAFETY: see the field.
        unsafe { &*self.registry }
    }

    fn keep_panic(&self, p: Box<dyn Any + Send>) {
        let mut slot = lock(&self.panic);
        if slot.is_none() {
            *slot = Some(p);
        }
        self.panicked.store(true, Ordering::Relaxed);
    }

    /// The first panic kept, once every child has completed (their `completed` increments,
    /// which the caller has seen with Acquire, come after their `keep_panic`).
    fn take_panic(&self) -> Option<Box<dyn Any + Send>> {
        if self.panicked.load(Ordering::Relaxed) {
            lock(&self.panic).take()
        } else {
            None
        }
    }

    /// Records that this frame's task begins to wait for its children (when it has any
    /// left: the critical path leaves the wait out of the task's own work).
    #[cold]
    fn note_wait(&self, t: &TraceBuf) {
        // SAFETY: called by the frame's thread (its task or scope, about to wait).
        if self.trace_id != 0 && self.completed.load(Ordering::Relaxed) != unsafe { self.spawned() }
        {
            t.note(EventKind::Wait {
                task: self.trace_id,
            });
        }
    }

    /// Waits (running other work) until every child so far has completed.
    fn wait_children(&self, w: &WorkerThread) {
        // SAFETY: a frame's waits run on its own thread (its task's end, `sync`, the root).
        let spawned = unsafe { self.spawned() };
        w.wait_until(|| self.completed.load(Ordering::Acquire) == spawned);
    }

    /// The children spawned so far.
    ///
    /// # Safety
    /// Only the frame's own thread (the one that spawns), as for [`local`](Self::local).
    unsafe fn spawned(&self) -> usize {
        // SAFETY: per the contract, the only thread that writes the local state; a read
        // through the raw pointer creates no reference that could overlap another.
        unsafe { (*self.local.get()).spawned }
    }
}

/// What a scope refers to: its frame, made at the scope's first use. Most data-flow tasks
/// are leaves that never use their scope, and so never make, wait on or drop a frame.
struct LazyFrame {
    registry: *const Registry,
    shared: *const Shared,
    trace_id: u64,
    /// Stays where it is once made (the `LazyFrame` does not move while its scope is in
    /// use): the children's descriptors point at it.
    frame: OnceCell<Frame>,
}

impl LazyFrame {
    fn new(registry: *const Registry, shared: *const Shared, trace_id: u64) -> LazyFrame {
        LazyFrame {
            registry,
            shared,
            trace_id,
            frame: OnceCell::new(),
        }
    }

    #[inline]
    fn get(&self) -> &Frame {
        self.frame
            .get_or_init(|| Frame::new(self.registry, self.shared, self.trace_id))
    }

    /// The frame's end, if the scope made one: records the wait in the trace, waits for the
    /// children (running other work meanwhile) and returns the first panic among them.
    fn finish(&self, w: &WorkerThread, tr: Option<&TraceBuf>) -> Option<Box<dyn Any + Send>> {
        let frame = self.frame.get()?;
        if let Some(t) = tr {
            frame.note_wait(t);
        }
        frame.wait_children(w);
        frame.take_panic()
    }
}

/// A task descriptor (seed 002 §2): the job the runtime runs, the dependence counter, the
/// notify list, and the type-erased closure with its declared accesses. Lives in the parent's
/// region until the parent completes. Aligned to a cache line, and so a whole number of
/// lines: the thread that completes a task writes its notify list while the spawning thread
/// writes the next task's closure and descriptor just after it in the region.
#[repr(C, align(64))]
struct TaskDesc {
    header: JobHeader,
    deps: DepCounter,
    notify: NotifyList,
    /// A predecessor panicked or was cancelled: do not run, cancel the successors.
    cancelled: AtomicBool,
    /// The place hint (`NO_PLACE`: none); in the padding after `cancelled`.
    place: u32,
    /// The last sibling whose node was pushed on this task's notify list, or that registered
    /// any edge to it while tracing (parent's thread only): skips duplicate pushes from a
    /// footprint that meets this task in several blocks. An edge to a completed task leaves
    /// it alone and reads the closed list again, which gives the same answer (the check only
    /// saves work: a duplicate node would fire once and balance its own count).
    last_succ: Cell<*const TaskDesc>,
    parent: *const Frame,
    /// The task's id in the schedule trace (0: the spawning worker does not trace).
    trace_id: u64,
    body: *mut u8,
    /// Runs the body with the task's frame, or drops it unrun (`None`).
    call: unsafe fn(*mut u8, Option<&LazyFrame>),
}

// SAFETY: shared between the parent's thread (analysis: `last_succ`, pushes) and the threads
// that complete predecessors (atomics only) or run the task (after it is handed over through
// the counter and a deque); `last_succ` is touched by the parent's thread only.
unsafe impl Sync for TaskDesc {}

struct Body<F, A> {
    f: F,
    a: A,
}

unsafe fn call_body<'e, F, A>(body: *mut u8, frame: Option<&LazyFrame>)
where
    A: Accesses,
    F: for<'t> FnOnce(&'t Scope<'t, 'e>, A::Data<'t>),
{
    // SAFETY: `body` holds the `Body<F, A>` written at the spawn, read out exactly once here
    // (the descriptor runs or is cancelled once).
    let Body { f, a } = unsafe { body.cast::<Body<F, A>>().read() };
    if let Some(frame) = frame {
        let s = Scope::<'_, 'e>::new(frame);
        // SAFETY: the task's dependences are satisfied: the declared data is exclusive for
        // its writes and unwritten by others for its reads until the task completes, which
        // is after `f` returns and the frame's children are done.
        f(&s, unsafe { a.into_data() });
    }
}

/// A data-flow task without a place hint.
const NO_PLACE: u32 = u32::MAX;

/// Queues a ready task on the current worker (every data-flow task is readied on a worker of
/// its scope's runtime: by its parent, or by a predecessor as it completes), or on its
/// place's deque when it has a hint.
fn schedule(d: *const TaskDesc, registry: &Registry) {
    // SAFETY: the header is the descriptor's first field; the descriptor lives until its
    // parent completes, which waits for it to have run.
    let job = unsafe { JobRef::from_header(d.cast()) };
    // SAFETY: as above.
    let place = unsafe { &*d }.place;
    if place != NO_PLACE {
        registry.push_place(place as usize, job, true);
        return;
    }
    match WorkerThread::current() {
        Some(w) if ptr::eq(&*w.registry, registry) => w.push_spawn(job),
        _ => registry.inject(job),
    }
}

/// The job function of a data-flow task.
unsafe fn run_task(h: *const JobHeader) {
    // SAFETY: the header of a descriptor (first field, `repr(C)`), alive until its parent
    // completes, which cannot happen before this function's last line.
    let d = unsafe { &*h.cast::<TaskDesc>() };
    // SAFETY: the parent frame waits for this task before it goes.
    let parent = unsafe { &*d.parent };
    let cancelled = d.cancelled.load(Ordering::Relaxed);
    let mut failed = cancelled;
    let tr = if d.trace_id != 0 {
        WorkerThread::current().and_then(|w| w.trace.as_deref())
    } else {
        None
    };
    if let (Some(t), true) = (tr, d.trace_id != 0) {
        t.note(EventKind::Task { id: d.trace_id });
    }
    if cancelled {
        // SAFETY: the body is dropped once, unrun. Dropping runs user destructors, which may
        // panic: keep that panic like a task's.
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe { (d.call)(d.body, None) })) {
            parent.keep_panic(p);
        }
        parent.shared().cancelled.fetch_add(1, Ordering::Relaxed);
    } else {
        // The frame (if the task made one) is dropped where it lives, at the end of this
        // block (a `drop(frame)` moved its bytes first: a `memcpy` per task).
        let (r, child_panic) = {
            let frame = LazyFrame::new(parent.registry, parent.shared, d.trace_id);
            // SAFETY: the body runs once.
            let r = catch_unwind(AssertUnwindSafe(|| unsafe {
                (d.call)(d.body, Some(&frame))
            }));
            let child_panic = if frame.frame.get().is_some() {
                let w = WorkerThread::current().expect("data-flow tasks run on workers");
                frame.finish(w, tr)
            } else {
                None
            };
            (r, child_panic)
        };
        if let Some(p) = r.err().or(child_panic) {
            failed = true;
            parent.keep_panic(p);
        }
    }
    // SAFETY: closed once, at completion; the nodes live in the parent's region.
    unsafe {
        d.notify.close(failed, |s| {
            // SAFETY: a sibling descriptor in the same region.
            let s = &*s.cast::<TaskDesc>();
            if failed {
                s.cancelled.store(true, Ordering::Relaxed);
            }
            if s.deps.fire() {
                if let (Some(t), true) = (tr, s.trace_id != 0) {
                    t.note(EventKind::Ready {
                        task: s.trace_id,
                        by: d.trace_id,
                    });
                }
                schedule(s, parent.registry());
            }
        })
    };
    // The last access to the parent's frame and region (this descriptor included).
    parent.completed.fetch_add(1, Ordering::Release);
}

/// A data-flow scope: hand it data with [`region`](Scope::region), spawn tasks on parts of
/// it with [`spawn`](Scope::spawn). `'s` is how long the scope's data is borrowed; `'e` is
/// the environment the scope lives in.
pub struct Scope<'s, 'e: 's> {
    frame: *const LazyFrame,
    /// Invariant in both lifetimes; not `Send` or `Sync` (raw pointer): a scope is used by the
    /// thread that runs its task.
    marker: PhantomData<(&'s mut &'s (), &'e mut &'e ())>,
}

impl<'s, 'e> Scope<'s, 'e> {
    fn new(frame: &LazyFrame) -> Scope<'s, 'e> {
        Scope {
            frame,
            marker: PhantomData,
        }
    }

    fn frame(&self) -> &Frame {
        // SAFETY: a scope is handed out only by reference while its frame is alive.
        unsafe { &*self.frame }.get()
    }

    fn register(&self, bytes: usize, elem: usize) -> u32 {
        let f = self.frame();
        let config = f.shared().config;
        // SAFETY: the frame's thread (a scope is neither `Send` nor `Sync`).
        let l = unsafe { f.local() };
        let id = u32::try_from(l.regions.len()).expect("fewer than 2^32 regions per task");
        l.regions.push(RegionInfo {
            elem,
            bytes,
            trie: Trie::new(bytes, config.block),
            rects: config.exact.then(|| RectMode::new(bytes)),
        });
        id
    }

    /// Registers a region of `elems` elements of `T`. Zero-sized elements are still places a
    /// `&mut` may claim, but however many there are, they take no memory: the whole region
    /// is then one slot (element size 0 below), so every two accesses to it are ordered.
    fn register_elems<T>(&self, elems: usize) -> u32 {
        match std::mem::size_of::<T>() {
            0 => self.register(usize::from(elems > 0), 0),
            elem => self.register(elems * elem, elem),
        }
    }

    /// Hands `data` to the scope for the scope's lifetime: the tasks spawned here reach it
    /// through accesses declared on the returned region.
    pub fn region<T>(&self, data: &'s mut [T]) -> Region<'s, T> {
        let id = self.register_elems::<T>(data.len());
        Region {
            frame: self.frame.cast(),
            id,
            ptr: data.as_mut_ptr(),
            len: data.len(),
            marker: PhantomData,
        }
    }

    /// Hands a tile (a task's [`TileMut`], say) to the scope as a matrix of its rows and
    /// columns, for the task's children to split further.
    pub fn matrix<T>(&self, mut tile: TileMut<'s, T>) -> Matrix<'s, T> {
        let (rows, cols, ld) = (tile.rows(), tile.cols(), tile.ld());
        // The tile lies in memory, so its span fits in `usize` (checked by its constructors).
        let elems = if rows == 0 { 0 } else { (rows - 1) * ld + cols };
        let id = self.register_elems::<T>(elems);
        Matrix {
            frame: self.frame.cast(),
            id,
            ptr: tile.as_mut_ptr(),
            offset: 0,
            rows,
            cols,
            ld,
            marker: PhantomData,
        }
    }

    /// Spawns a task that runs `f` with the data of `accesses` once every earlier sibling
    /// task whose declared accesses conflict with these has completed.
    ///
    /// `accesses` is one declaration, a tuple of them, an array or a `Vec` (see
    /// [`Accesses`]); `f` receives this task's own scope (for children) and the data, in the
    /// same shape. Panics, before anything is queued, if two of the declarations overlap and
    /// one of them writes, or if a declaration belongs to another scope.
    ///
    /// A spawn is a scheduling point (as creating an OpenMP task is): with many children
    /// outstanding, the spawning thread runs the new task, or other queued work, before it
    /// returns. Do not hold a lock or a `RefCell` borrow across spawns that the tasks need.
    pub fn spawn<A, F>(&self, accesses: A, f: F)
    where
        A: Accesses,
        F: for<'t> FnOnce(&'t Scope<'t, 's>, A::Data<'t>) + Send + 's,
    {
        self.spawn_to(NO_PLACE, accesses, f);
    }

    /// [`spawn`](Self::spawn) with a locality hint: once ready, the task goes to `place`'s
    /// shared deque (see [`places`](crate::places)). On a runtime without places, or for a
    /// place it does not have, nothing is spawned and the error says why
    /// ([`Error::NoSuchPlace`]).
    pub fn spawn_at<A, F>(
        &self,
        place: crate::places::PlaceId,
        accesses: A,
        f: F,
    ) -> Result<(), crate::Error>
    where
        A: Accesses,
        F: for<'t> FnOnce(&'t Scope<'t, 's>, A::Data<'t>) + Send + 's,
    {
        let places = self
            .frame()
            .registry()
            .places
            .as_ref()
            .map_or(0, |p| p.len());
        if place.0 >= places {
            return Err(crate::Error::NoSuchPlace {
                place: place.0,
                places,
            });
        }
        // Places are at most MAX_THREADS, far below u32::MAX.
        self.spawn_to(place.0 as u32, accesses, f);
        Ok(())
    }

    fn spawn_to<A, F>(&self, place: u32, accesses: A, f: F)
    where
        A: Accesses,
        F: for<'t> FnOnce(&'t Scope<'t, 's>, A::Data<'t>) + Send + 's,
    {
        let frame = self.frame();
        let tr = if frame.registry().tracing {
            WorkerThread::current().and_then(|w| w.trace.as_deref())
        } else {
            None
        };
        let trace_id = tr.map_or(0, |t| {
            let id = t.next_id();
            if frame.trace_id != 0 {
                t.note(EventKind::Spawn {
                    parent: frame.trace_id,
                    child: id,
                });
            }
            id
        });
        // SAFETY: the frame's thread (a scope is neither `Send` nor `Sync`); no other
        // reference to the local state is alive during this call.
        let local = unsafe { frame.local() };
        let mut fps = std::mem::take(&mut local.scratch);
        fps.clear();
        accesses.footprints(&mut fps);
        check(&fps, self.frame.cast());

        let body = local
            .arena
            .alloc(Body { f, a: accesses })
            .as_ptr()
            .cast::<u8>();
        let desc = local
            .arena
            .alloc(TaskDesc {
                header: JobHeader::new(run_task),
                deps: DepCounter::new(),
                notify: NotifyList::new(),
                cancelled: AtomicBool::new(false),
                last_succ: Cell::new(ptr::null()),
                parent: frame,
                place,
                trace_id,
                body,
                call: call_body::<F, A>,
            })
            .as_ptr()
            .cast_const();

        let config = frame.shared().config;
        let mut found = 0usize;
        let arena = &mut local.arena;
        for fp in &fps {
            let info = &mut local.regions[fp.region as usize];
            if info.rects.is_some()
                && rect_access(
                    info,
                    fp,
                    desc,
                    &mut local.table_arena,
                    config.block,
                    &mut |pred| add_edge(pred, desc, tr, trace_id, arena, &mut found),
                )
            {
                continue;
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
                    fp.write,
                    (config.exact, config.block),
                    desc,
                    &mut local.table_arena,
                    &mut |pred: *const TaskDesc| {
                        add_edge(pred, desc, tr, trace_id, arena, &mut found)
                    },
                );
            }
        }
        local.scratch = fps;
        // Throttle: with many children outstanding, the spawner works before it goes on (as
        // libgomp does), so that a long stream of spawns does not queue up all its
        // descriptors before any runs: it runs the new task at once if it is ready, else one
        // queued job.
        let limit = THROTTLE_PER_THREAD * frame.registry().threads;
        let mut throttled = local.spawned.wrapping_sub(local.seen) >= limit;
        if throttled {
            local.seen = frame.completed.load(Ordering::Relaxed);
            throttled = local.spawned.wrapping_sub(local.seen) >= limit;
        }
        // Counted from here on: nothing below can panic before the task is armed, so a
        // counted child always runs (or is cancelled) and completes.
        local.spawned = local.spawned.wrapping_add(1);
        // `local` is not used past this point: what runs below may be a child of this frame
        // (which never touches `local`) or any other work.
        // SAFETY: the descriptor was just written and is alive.
        if unsafe { &*desc }.deps.arm(found) {
            if throttled && place == NO_PLACE {
                // Run here, as a job of its own in the trace.
                if let Some(t) = tr {
                    t.start(Source::Own);
                }
                // SAFETY: ready, and queued nowhere, so this is its one execution; its parent
                // (this frame) is alive until it completes.
                unsafe { run_task(desc.cast()) };
                if let Some(t) = tr {
                    t.end();
                }
                return;
            }
            schedule(desc, frame.registry());
        }
        if throttled {
            if let Some(w) = WorkerThread::current() {
                w.run_one();
            }
        }
    }

    /// Waits until every task spawned in this scope so far has completed (running other
    /// work meanwhile), then frees their descriptors: the seed's `sync`. If one of them
    /// panicked, the panic is resumed here. Needed only where a
    /// task must see its children's results itself (seed 002 §2.2), or to bound the memory of
    /// a long-running scope; dependences between siblings need no sync.
    pub fn sync(&self) {
        let f = self.frame();
        let w = WorkerThread::current().expect("a data-flow scope runs on a worker");
        let tr = if f.trace_id != 0 {
            w.trace.as_deref()
        } else {
            None
        };
        if let Some(t) = tr {
            f.note_wait(t);
        }
        f.wait_children(w);
        if let Some(t) = tr {
            t.note(EventKind::Sync { task: f.trace_id });
        }
        // SAFETY: the frame's thread; every child has completed, so nothing refers to the
        // region's descriptors, nodes or table leaves any more.
        let l = unsafe { f.local() };
        let config = f.shared().config;
        for r in &mut l.regions {
            r.trie = Trie::new(r.bytes, config.block);
            r.rects = config.exact.then(|| RectMode::new(r.bytes));
        }
        l.arena.reset();
        l.table_arena.reset();
        if let Some(p) = f.take_panic() {
            // A child failed (its dependents were cancelled): the panic goes on now, to the
            // task or scope that called `sync`. If that code catches it, the scope goes on
            // afresh: later spawns are not ordered after the children before the sync.
            resume_unwind(p);
        }
    }
}

/// Registers the new task `desc` as a successor of its sibling `pred` (one node per pair): pushes
/// it on `pred`'s notify list, counting the edge in `found` unless `pred` has completed, and
/// cancelling `desc` if `pred` failed.
#[inline(always)]
fn add_edge(
    pred: *const TaskDesc,
    desc: *const TaskDesc,
    tr: Option<&TraceBuf>,
    trace_id: u64,
    arena: &mut Arena,
    found: &mut usize,
) {
    // SAFETY: a sibling's descriptor in this frame's region.
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
    edge: &mut dyn FnMut(*const TaskDesc),
) -> bool {
    let Some(rect) = fp.bytes(info.elem, info.bytes) else {
        return true;
    };
    if let Some(rm) = &mut info.rects {
        if rm.access(rect, fp.write, block, desc, table_arena, edge) {
            return true;
        }
    }
    if let Some(rm) = info.rects.take() {
        rm.leave(&mut info.trie, block, table_arena);
    }
    false
}

/// Checks a spawn's declarations: all from this scope, no overlap involving a write.
fn check(fps: &[Footprint], frame: *const ()) {
    for (i, a) in fps.iter().enumerate() {
        assert!(
            a.frame == frame,
            "taskpools::dataflow: an access declared on another task's region was passed to \
             spawn; declare accesses on regions of the scope that spawns"
        );
        for (j, b) in fps[..i].iter().enumerate() {
            if a.region == b.region && (a.write || b.write) && a.overlaps(b) {
                panic!(
                    "taskpools::dataflow: accesses {j} and {i} of one spawn overlap and one of \
                     them writes; declare the data once (as inout)"
                );
            }
        }
    }
}

/// Runs `f` with a data-flow scope on the current runtime (the global one outside any), waits
/// for every task spawned in it, and returns `f`'s result; resumes the first panic of a task
/// (see [`try_scope`]). Blocks of [`Config::DEFAULT_BLOCK`] bytes.
pub fn scope<'e, F, R>(f: F) -> R
where
    F: for<'s> FnOnce(&'s Scope<'s, 'e>) -> R + Send,
    R: Send,
{
    scope_with(Config::default(), f)
}

/// [`scope`] with a look-up-table configuration.
pub fn scope_with<'e, F, R>(config: Config, f: F) -> R
where
    F: for<'s> FnOnce(&'s Scope<'s, 'e>) -> R + Send,
    R: Send,
{
    match try_scope(config, f) {
        Ok(r) => r,
        Err(p) => resume_unwind(p.payload),
    }
}

/// [`scope_with`], returning a panic (with the number of tasks it cancelled) instead of
/// resuming it.
pub fn try_scope<'e, F, R>(config: Config, f: F) -> Result<R, TaskPanic>
where
    F: for<'s> FnOnce(&'s Scope<'s, 'e>) -> R + Send,
    R: Send,
{
    match WorkerThread::current() {
        Some(w) => root(w, config, f),
        None => global().install(|| {
            let w = WorkerThread::current().expect("install runs on a worker");
            root(w, config, f)
        }),
    }
}

fn root<'e, F, R>(w: &WorkerThread, config: Config, f: F) -> Result<R, TaskPanic>
where
    F: for<'s> FnOnce(&'s Scope<'s, 'e>) -> R,
{
    let shared = Shared {
        config,
        cancelled: AtomicUsize::new(0),
    };
    // A traced root scope has an id of its own: its tasks' parent.
    let tr = if w.registry.tracing {
        w.trace.as_deref()
    } else {
        None
    };
    let trace_id = tr.map_or(0, |t| {
        let id = t.next_id();
        t.note(EventKind::Spawn {
            parent: 0,
            child: id,
        });
        id
    });
    let frame = LazyFrame::new(&*w.registry, &shared, trace_id);
    let r = {
        let s = Scope::new(&frame);
        catch_unwind(AssertUnwindSafe(|| f(&s)))
    };
    let child_panic = frame.finish(w, tr);
    drop(frame);
    let cancelled = shared.cancelled.load(Ordering::Relaxed);
    match (r, child_panic) {
        (Ok(r), None) => Ok(r),
        (Err(payload), _) | (Ok(_), Some(payload)) => Err(TaskPanic { payload, cancelled }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether each region of the scope's frame is still in rectangle mode.
    fn rect_modes(df: &Scope<'_, '_>) -> Vec<bool> {
        // SAFETY (test): the frame's thread, and no other reference into its local state.
        let l = unsafe { df.frame().local() };
        l.regions.iter().map(|r| r.rects.is_some()).collect()
    }

    /// The spawn path takes tile accesses of an exact table in rectangle mode, leaves it at
    /// the first one-row access, and starts it again after a sync; block tables never use it.
    #[test]
    fn exact_spawns_use_rectangle_mode_until_a_row_access() {
        let mut data = vec![0u32; 16 * 16];
        let mut other = vec![0u32; 64];
        scope_with(Config::exact(64).unwrap(), |df| {
            let r = df.region(&mut data[..]);
            let m = r.matrix(16, 16);
            let s = df.region(&mut other[..]);
            df.spawn((m.tile(0, 0, 4).inout(),), |_, (mut t,)| {
                t.row_mut(0)[0] += 1
            });
            df.spawn(
                (m.tile(0, 0, 4).read(), m.tile(1, 0, 4).inout()),
                |_, (a, mut b)| {
                    b.row_mut(0)[0] += a.row(0)[0];
                },
            );
            assert_eq!(rect_modes(df), [true, true]);
            // A whole slice is one row: that region leaves, the other stays.
            df.spawn((s.all().inout(),), |_, (o,)| o[0] += 1);
            assert_eq!(rect_modes(df), [true, false]);
            // One row of the matrix ends it there too.
            df.spawn((m.sub(3, 0, 1, 16).read(),), |_, _| {});
            assert_eq!(rect_modes(df), [false, false]);
            df.sync();
            assert_eq!(rect_modes(df), [true, true]);
            df.spawn((m.tile(1, 1, 4).inout(),), |_, (mut t,)| {
                t.row_mut(3)[3] = 7
            });
            assert_eq!(rect_modes(df), [true, true]);
        });
        assert_eq!((data[0], data[4 * 16], data[7 * 16 + 7]), (1, 1, 7));
        assert_eq!(other[0], 1);
        let mut data = vec![0u32; 16 * 16];
        scope_with(Config::blocks(64).unwrap(), |df| {
            let m = df.region(&mut data[..]).matrix(16, 16);
            df.spawn((m.tile(0, 0, 4).inout(),), |_, _| {});
            assert_eq!(rect_modes(df), [false]);
        });
    }

    fn fp(start: usize, len: usize, rows: usize, ld: usize) -> Footprint {
        Footprint {
            frame: ptr::null(),
            region: 0,
            start,
            len,
            ld,
            rows,
            write: false,
        }
    }

    #[test]
    fn footprint_bytes_are_the_rectangle_or_none() {
        let r = |lo, len, rows, stride| {
            Some(Rect {
                lo,
                len,
                rows,
                stride,
            })
        };
        // 4-byte elements, a region of 100 elements.
        assert_eq!(fp(2, 3, 4, 10).bytes(4, 400), r(8, 12, 4, 40));
        // One row: no stride.
        assert_eq!(fp(2, 3, 1, 10).bytes(4, 400), r(8, 12, 1, 0));
        // Up to the region's last byte, exactly.
        assert_eq!(fp(90, 10, 1, 0).bytes(4, 400), r(360, 40, 1, 0));
        assert_eq!(fp(0, 10, 10, 10).bytes(4, 400), r(0, 40, 10, 40));
        // Empty.
        assert_eq!(fp(5, 0, 3, 10).bytes(4, 400), None);
        assert_eq!(fp(5, 3, 0, 10).bytes(4, 400), None);
        // Zero-sized elements: the region's one byte, whatever the indices.
        assert_eq!(fp(usize::MAX - 1, 7, 9, 3).bytes(0, 0), r(0, 1, 1, 0));
    }

    #[test]
    #[should_panic(expected = "an access outside its region")]
    fn a_footprint_one_element_past_the_region_panics() {
        let _ = fp(0, 10, 10, 10).bytes(4, 399);
    }

    #[test]
    #[should_panic(expected = "an access outside its region")]
    fn a_footprint_whose_bytes_overflow_panics() {
        // Without checked arithmetic this would wrap to a small end inside the region.
        let _ = fp(2, 1, 2, usize::MAX / 4 + 1).bytes(4, 400);
    }
}
