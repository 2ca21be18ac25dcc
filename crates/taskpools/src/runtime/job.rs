//! Jobs: type-erased references to closures that live on a stack ([`StackJob`], used by
//! `join`), in recycled per-thread storage ([`SpawnJob`], used by `scope`'s spawns), or on
//! the stack of a blocked non-worker thread ([`LockJob`], used by `install`).
//!
//! Every job starts with a [`JobHeader`]: the function that runs it, and the links that put
//! it in its worker's frame stack ([`super::frames`]) without any allocation.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::mem::{ManuallyDrop, MaybeUninit};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::sync::{lock, Arc, AtomicU8, Condvar, Mutex, Ordering, UnsafeCell};

/// States of a job in a frame stack.
pub(crate) const QUEUED: u8 = 0;
/// Handed to a thief.
pub(crate) const TAKEN: u8 = 1;
/// Popped by its owner (and run or about to run).
pub(crate) const POPPED: u8 = 2;
/// The sentinel at the bottom of a frame stack.
pub(crate) const ROOT: u8 = 3;
/// Run to the end (stack jobs only; set by whichever thread ran it, as its last access).
pub(crate) const DONE: u8 = 4;

/// The first field of every job (`#[repr(C)]`, so a pointer to the header is a pointer to the
/// job). `run` is read by whichever thread executes the job; the links belong to the owner's
/// frame stack and are touched only by the owner thread. `state` is written by the owner while
/// the job is its own (queued, popped, taken) and, for stack jobs, set to `DONE` by whichever
/// thread runs the job, as that thread's last access.
#[repr(C)]
pub(crate) struct JobHeader {
    run: unsafe fn(*const JobHeader),
    pub(crate) prev: Cell<*const JobHeader>,
    /// Set by the push of the job above this one; uninitialized until then (it is read only
    /// for jobs below the top, see `frames`), which spares every fork a store.
    pub(crate) next: Cell<MaybeUninit<*const JobHeader>>,
    state: AtomicU8,
}

impl JobHeader {
    pub(crate) fn new(run: unsafe fn(*const JobHeader)) -> Self {
        JobHeader {
            run,
            prev: Cell::new(std::ptr::null()),
            next: Cell::new(MaybeUninit::uninit()),
            state: AtomicU8::new(QUEUED),
        }
    }

    /// The state, as the owner sees it.
    #[inline(always)]
    pub(crate) fn state(&self) -> u8 {
        self.state.load(Ordering::Relaxed)
    }

    /// Sets the state (owner only, while no other thread can reach the job).
    #[inline(always)]
    pub(crate) fn set_state(&self, s: u8) {
        self.state.store(s, Ordering::Relaxed);
    }

    /// The sentinel of a frame stack (never run).
    pub(crate) fn root() -> Self {
        unsafe fn never(_: *const JobHeader) {
            unreachable!("the root of a frame stack is not a job")
        }
        let h = JobHeader::new(never);
        h.set_state(ROOT);
        h
    }
}

/// A pointer to a job. Two `JobRef`s are equal when they point to the same job (live jobs have
/// distinct addresses). One kind of job is queued several times at once: a data-flow scope's
/// priority *ticket* (`dataflow/priority`), whose function may run any number of times and
/// which goes only where jobs are stored by pointer and never compared (public deques, place
/// deques, the injector).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct JobRef(*const JobHeader);

// SAFETY: a `JobRef` is handed to another thread only for jobs whose closures are `Send`, and
// the job outlives its execution (a stack job is waited for; a spawned job owns its storage).
// The executing thread reads only the header's `run`, which nobody writes after construction.
unsafe impl Send for JobRef {}

impl JobRef {
    /// The job's header.
    pub(crate) fn header(self) -> *const JobHeader {
        self.0
    }

    /// # Safety
    /// `h` is the header of a live job.
    pub(crate) unsafe fn from_header(h: *const JobHeader) -> JobRef {
        JobRef(h)
    }

    /// Runs the job.
    ///
    /// # Safety
    /// Each job may be executed at most once, while it is alive (a priority ticket, above,
    /// as often as it was queued).
    pub(crate) unsafe fn execute(self) {
        // SAFETY: per the contract, the header is live; `run` matches the job's type.
        unsafe { ((*self.0).run)(self.0) }
    }
}

/// The outcome of a closure: its value or its panic.
pub(crate) type Outcome<R> = Result<R, Box<dyn Any + Send>>;

/// A job on the stack of the thread that waits for it (`join`'s second half).
#[repr(C)]
pub(crate) struct StackJob<F, R> {
    header: JobHeader,
    /// Taken exactly once, by whoever got the job: a thief (in `run`) or the owner (in
    /// `run_inline` or `call_inline`); never dropped in place.
    func: UnsafeCell<ManuallyDrop<F>>,
    /// Written by the executor when someone other than the join's inline path runs the job,
    /// before the header's `DONE`; read once by the owner after it sees `DONE`. Uninitialized
    /// otherwise (the inline path never touches it, which spares the fast path a store and a
    /// drop check).
    result: UnsafeCell<MaybeUninit<Outcome<R>>>,
    /// Loom-only switch for a test of the tests: `DONE` stored with `Relaxed`, so the owner
    /// may read `result` before the executor's write is visible.
    #[cfg(all(loom, test))]
    broken_relaxed_done: bool,
}

// SAFETY: `func` is taken by exactly one thread (the executor, or the owner when it takes the
// job back, never both: a job is handed out once); `result` is written by the executor before
// the header's state is set to `DONE` with Release and read by the owner after seeing `DONE`
// with Acquire. Other threads read only the header's `run` and store `DONE`; the header's
// `Cell`s are the owner's alone.
unsafe impl<F: Send, R: Send> Sync for StackJob<F, R> {}

impl<F: FnOnce() -> R + Send, R: Send> StackJob<F, R> {
    #[inline(always)]
    pub(crate) fn new(f: F) -> Self {
        StackJob {
            header: JobHeader::new(Self::run),
            func: UnsafeCell::new(ManuallyDrop::new(f)),
            result: UnsafeCell::new(MaybeUninit::uninit()),
            #[cfg(all(loom, test))]
            broken_relaxed_done: false,
        }
    }

    /// The planted bug for the loom models: `DONE` published with `Relaxed`.
    #[cfg(all(loom, test))]
    pub(crate) fn with_relaxed_done(mut self) -> Self {
        self.broken_relaxed_done = true;
        self
    }

    /// The job's header, for the owner's frame stack.
    #[inline(always)]
    pub(crate) fn header(&self) -> &JobHeader {
        &self.header
    }

    /// A reference for a deque. The job must stay in place until it is done or taken back.
    #[inline(always)]
    pub(crate) fn as_job_ref(&self) -> JobRef {
        // From a pointer to the whole job (not to its header field): `run` reads the job
        // through it.
        JobRef((self as *const Self).cast())
    }

    unsafe fn run(h: *const JobHeader) {
        // SAFETY: the header is the first field of a `StackJob<F, R>` (`repr(C)`), and the
        // owner keeps the job alive until `DONE`.
        let this = unsafe { &*h.cast::<Self>() };
        // SAFETY: only the executor reaches here, once (see the `Sync` impl).
        let f = this
            .func
            .with_mut(|p| unsafe { ManuallyDrop::take(&mut *p) });
        let r = catch_unwind(AssertUnwindSafe(f));
        // SAFETY: the owner reads `result` only after `DONE`.
        this.result.with_mut(|p| unsafe { (*p).write(r) });
        #[cfg(all(loom, test))]
        let order = if this.broken_relaxed_done {
            Ordering::Relaxed
        } else {
            Ordering::Release
        };
        #[cfg(not(all(loom, test)))]
        let order = Ordering::Release;
        // Last access: after this store the owner may return and free the stack frame.
        this.header.state.store(DONE, order);
    }

    /// Whether the job has been run to the end (by another thread, or by the owner from a
    /// wait loop).
    #[inline(always)]
    pub(crate) fn is_done(&self) -> bool {
        self.header.state.load(Ordering::Acquire) == DONE
    }

    /// Runs the job here, catching a panic (the owner took it back, so no one else can).
    ///
    /// # Safety
    /// The caller is the job's owner and has taken its only queued reference back (popped
    /// it, or taken it back from the frame stack), so no thief ran or will run it; and the
    /// job is run once: `run_inline` or `call_inline`, not both, not twice.
    #[inline(always)]
    pub(crate) unsafe fn run_inline(&self) -> Outcome<R> {
        // SAFETY: the caller took the job's only reference back (see above), so the closure
        // is still there and nobody else takes it.
        let f = self
            .func
            .with_mut(|p| unsafe { ManuallyDrop::take(&mut *p) });
        catch_unwind(AssertUnwindSafe(f))
    }

    /// Runs the job here without catching a panic, which leaves through the caller (the owner
    /// took it back, so no one else can run it, and nothing waits for it).
    ///
    /// # Safety
    /// As [`run_inline`](Self::run_inline): the owner took the job's only reference back, and
    /// runs it once.
    #[inline(always)]
    pub(crate) unsafe fn call_inline(&self) -> R {
        // SAFETY: the caller took the job's only reference back and runs it once (see above).
        let f = self
            .func
            .with_mut(|p| unsafe { ManuallyDrop::take(&mut *p) });
        f()
    }

    /// The outcome after `is_done`; called once.
    pub(crate) fn take_outcome(&self) -> Outcome<R> {
        debug_assert!(self.is_done());
        // SAFETY: the executor wrote `result` before setting `DONE` (Release), which the
        // caller has seen (Acquire); nobody touches the job afterwards, and the caller takes
        // the outcome once.
        self.result.with(|p| unsafe { (*p).assume_init_read() })
    }
}

/// Bytes of closure that a recycled spawn slot holds; larger closures are boxed. The closure
/// stored is the scope's wrapper, which adds a scope pointer to the user's closure, so user
/// closures of up to 88 bytes fit.
pub(crate) const SPAWN_SLOT_BYTES: usize = 96;
/// Slots a thread keeps for reuse (128 bytes each).
const SPAWN_SLOTS_CACHED: usize = 256;

/// Storage for one spawned job: its header, then the closure.
#[repr(C, align(16))]
struct SpawnSlot {
    header: JobHeader,
    closure: MaybeUninit<[u8; SPAWN_SLOT_BYTES]>,
}

// The closure area must be 16-aligned for the closures the size check admits.
const _: () = assert!(std::mem::offset_of!(SpawnSlot, closure) % 16 == 0);

thread_local! {
    /// This thread's free spawn slots. A slot is taken by the thread that spawns and given back
    /// by the thread that runs the job, so slots migrate with stolen work; every thread keeps at
    /// most `SPAWN_SLOTS_CACHED` and frees the rest.
    // Boxes, not slots by value: each slot is handed out as a pointer that must stay put.
    #[allow(clippy::vec_box)]
    static FREE_SLOTS: RefCell<Vec<Box<SpawnSlot>>> = const { RefCell::new(Vec::new()) };
}

fn take_slot(run: unsafe fn(*const JobHeader)) -> Box<SpawnSlot> {
    let mut slot = FREE_SLOTS
        .try_with(|f| f.borrow_mut().pop())
        .ok()
        .flatten()
        .unwrap_or_else(|| {
            Box::new(SpawnSlot {
                header: JobHeader::new(run),
                closure: MaybeUninit::uninit(),
            })
        });
    slot.header = JobHeader::new(run);
    slot
}

fn give_slot(slot: Box<SpawnSlot>) {
    let _ = FREE_SLOTS.try_with(|f| {
        let mut f = f.borrow_mut();
        if f.len() < SPAWN_SLOTS_CACHED {
            f.push(slot);
        }
    });
}

/// A job that owns its closure (`scope`'s spawns): the closure is moved into a recycled slot
/// when it fits, else into a box of its own, and the storage is released when the job runs.
#[repr(C)]
pub(crate) struct SpawnJob<F> {
    header: JobHeader,
    func: F,
}

impl<F: FnOnce() + Send> SpawnJob<F> {
    /// Moves `f` into storage owned by the returned reference.
    ///
    /// # Safety
    /// The reference must be executed exactly once, before anything `f` borrows goes away
    /// (the scope guarantees both: it waits for every job it spawned).
    pub(crate) unsafe fn into_job_ref(f: F) -> JobRef {
        if std::mem::size_of::<F>() <= SPAWN_SLOT_BYTES && std::mem::align_of::<F>() <= 16 {
            let slot = Box::into_raw(take_slot(Self::run_slot));
            // SAFETY: the closure area is 16-aligned (the slot is `align(16)` and the header
            // is 32 bytes) and large enough for `F` (checked above); the slot is ours until
            // the job runs.
            unsafe { std::ptr::addr_of_mut!((*slot).closure).cast::<F>().write(f) };
            JobRef(slot.cast_const().cast())
        } else {
            let b = Box::new(SpawnJob {
                header: JobHeader::new(Self::run_boxed),
                func: f,
            });
            JobRef(Box::into_raw(b).cast_const().cast())
        }
    }

    unsafe fn run_slot(h: *const JobHeader) {
        let slot = h.cast_mut().cast::<SpawnSlot>();
        // SAFETY: the header is the first field of the slot that `into_job_ref` leaked and
        // wrote an `F` into; the job runs once, so the closure is read out exactly once.
        let f = unsafe { std::ptr::addr_of!((*slot).closure).cast::<F>().read() };
        // SAFETY: as above; the slot no longer holds anything live.
        give_slot(unsafe { Box::from_raw(slot) });
        f();
    }

    unsafe fn run_boxed(h: *const JobHeader) {
        // SAFETY: the header is the first field of the box leaked by `into_job_ref`, executed
        // once.
        let b = unsafe { Box::from_raw(h.cast_mut().cast::<Self>()) };
        (b.func)();
    }
}

/// A job for a thread that is not a worker and blocks until the job is done (`install`).
/// The executor's last access to the job (which lives on the blocked caller's stack) is the
/// write of the result; it then signals through its own reference to the latch, so the caller
/// may return and free the job as soon as it sees the latch set.
#[repr(C)]
pub(crate) struct LockJob<F, R> {
    header: JobHeader,
    func: UnsafeCell<Option<F>>,
    result: UnsafeCell<Option<Outcome<R>>>,
    latch: Arc<(Mutex<bool>, Condvar)>,
}

// SAFETY: `func` is taken once by the executor; `result` is written by the executor before it
// sets the latch under the mutex and read by the caller after it sees the latch set under the
// same mutex. The header's `Cell`s are not used for injected jobs.
unsafe impl<F: Send, R: Send> Sync for LockJob<F, R> {}

impl<F: FnOnce() -> R + Send, R: Send> LockJob<F, R> {
    pub(crate) fn new(f: F) -> Self {
        LockJob {
            header: JobHeader::new(Self::run),
            func: UnsafeCell::new(Some(f)),
            result: UnsafeCell::new(None),
            latch: Arc::new((Mutex::new(false), Condvar::new())),
        }
    }

    pub(crate) fn as_job_ref(&self) -> JobRef {
        // From a pointer to the whole job (not to its header field): `run` reads the job
        // through it.
        JobRef((self as *const Self).cast())
    }

    unsafe fn run(h: *const JobHeader) {
        // SAFETY: the header is the first field of a `LockJob<F, R>`; the caller blocks until
        // the latch is set.
        let this = unsafe { &*h.cast::<Self>() };
        // SAFETY: executed once, so nobody else touches `func`.
        let f = this.func.with_mut(|p| unsafe { (*p).take() });
        let r = catch_unwind(AssertUnwindSafe(f.expect("a job runs once")));
        let latch = Arc::clone(&this.latch);
        // SAFETY: the caller reads `result` only after the latch is set.
        this.result.with_mut(|p| unsafe { *p = Some(r) });
        // From here on, `this` may be gone.
        let (m, c) = &*latch;
        *lock(m) = true;
        c.notify_all();
    }

    /// Blocks until the job has run and returns its outcome. Takes `&self`: the job must not
    /// move while a `JobRef` to it is queued.
    pub(crate) fn wait(&self) -> Outcome<R> {
        let (m, c) = &*self.latch;
        let mut done = lock(m);
        while !*done {
            done = c.wait(done).unwrap_or_else(|e| e.into_inner());
        }
        drop(done);
        // SAFETY: the executor wrote the result before setting the latch and does not touch
        // the job afterwards.
        self.result
            .with_mut(|p| unsafe { (*p).take() })
            .expect("the latch is set after the result")
    }
}
