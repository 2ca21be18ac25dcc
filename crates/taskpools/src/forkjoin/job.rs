//! Jobs: type-erased references to closures that live on a stack ([`StackJob`], used by
//! `join`), in recycled per-thread storage ([`SpawnJob`], used by `scope`'s spawns), or on
//! the stack of a blocked non-worker thread ([`LockJob`], used by `install`).

use std::any::Any;
use std::cell::{RefCell, UnsafeCell};
use std::mem::{ManuallyDrop, MaybeUninit};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::sync::{lock, Arc, AtomicBool, Condvar, Mutex, Ordering};

/// A pointer to a job and the function that runs it. Two `JobRef`s are equal when they point
/// to the same job (live jobs have distinct addresses).
#[derive(Clone, Copy, Debug)]
pub(crate) struct JobRef {
    data: *const (),
    run: unsafe fn(*const ()),
}

// SAFETY: a `JobRef` is handed to another thread only for jobs whose closures are `Send`, and
// the job outlives its execution (a stack job is waited for; a heap job owns itself).
unsafe impl Send for JobRef {}

impl PartialEq for JobRef {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.data, other.data)
    }
}

impl Eq for JobRef {}

impl JobRef {
    /// Runs the job.
    ///
    /// # Safety
    /// Each `JobRef` may be executed at most once, while its job is alive.
    pub(crate) unsafe fn execute(self) {
        // SAFETY: per the contract.
        unsafe { (self.run)(self.data) }
    }
}

/// The outcome of a closure: its value or its panic.
pub(crate) type Outcome<R> = Result<R, Box<dyn Any + Send>>;

/// A job on the stack of the thread that waits for it (`join`'s second half).
pub(crate) struct StackJob<F, R> {
    /// Taken exactly once, by whoever got the job's reference out of the deque: a thief (in
    /// `run`) or the owner (in `run_inline`); never dropped in place.
    func: UnsafeCell<ManuallyDrop<F>>,
    result: UnsafeCell<Option<Outcome<R>>>,
    done: AtomicBool,
}

// SAFETY: `func` is taken by exactly one thread (the executor, or the owner when it pops the
// job back, never both: the deque hands a job out once); `result` is written by the executor
// before `done` is set with Release and read by the owner after seeing `done` with Acquire.
unsafe impl<F: Send, R: Send> Sync for StackJob<F, R> {}

impl<F: FnOnce() -> R + Send, R: Send> StackJob<F, R> {
    pub(crate) fn new(f: F) -> Self {
        StackJob {
            func: UnsafeCell::new(ManuallyDrop::new(f)),
            result: UnsafeCell::new(None),
            done: AtomicBool::new(false),
        }
    }

    /// A reference for a deque. The job must stay in place until it is done or taken back.
    pub(crate) fn as_job_ref(&self) -> JobRef {
        JobRef {
            data: (self as *const Self).cast(),
            run: Self::run,
        }
    }

    unsafe fn run(data: *const ()) {
        // SAFETY: `data` came from `as_job_ref` and the owner keeps the job alive until `done`.
        let this = unsafe { &*data.cast::<Self>() };
        // SAFETY: only the executor reaches here, once (see the `Sync` impl).
        let f = unsafe { ManuallyDrop::take(&mut *this.func.get()) };
        let r = catch_unwind(AssertUnwindSafe(f));
        // SAFETY: the owner reads `result` only after `done`.
        unsafe { *this.result.get() = Some(r) };
        // Last access: after this store the owner may return and free the stack frame.
        this.done.store(true, Ordering::Release);
    }

    /// Whether another thread has finished the job.
    #[inline]
    pub(crate) fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// Runs the job here, catching a panic (the owner popped it back, so no one else can).
    #[inline(always)]
    pub(crate) fn run_inline(&self) -> Outcome<R> {
        // SAFETY: the owner popped the job's only reference back from its deque, so the
        // closure is still there and nobody else takes it.
        let f = unsafe { ManuallyDrop::take(&mut *self.func.get()) };
        catch_unwind(AssertUnwindSafe(f))
    }

    /// The outcome after `is_done`.
    pub(crate) fn take_outcome(&self) -> Outcome<R> {
        // SAFETY: the executor wrote `result` before setting `done` (Release), which the
        // caller has seen (Acquire); nobody touches the job afterwards.
        unsafe { (*self.result.get()).take() }.expect("done jobs have a result")
    }
}

/// Bytes of closure that a recycled spawn slot holds; larger closures are boxed.
pub(crate) const SPAWN_SLOT_BYTES: usize = 112;
/// Slots a thread keeps for reuse (128 bytes each).
const SPAWN_SLOTS_CACHED: usize = 256;

/// Storage for one spawned closure.
#[repr(C, align(16))]
struct SpawnSlot(MaybeUninit<[u8; SPAWN_SLOT_BYTES]>);

thread_local! {
    /// This thread's free spawn slots. A slot is taken by the thread that spawns and given back
    /// by the thread that runs the job, so slots migrate with stolen work; every thread keeps at
    /// most `SPAWN_SLOTS_CACHED` and frees the rest.
    // Boxes, not slots by value: each slot is handed out as a pointer that must stay put.
    #[allow(clippy::vec_box)]
    static FREE_SLOTS: RefCell<Vec<Box<SpawnSlot>>> = const { RefCell::new(Vec::new()) };
}

fn take_slot() -> Box<SpawnSlot> {
    FREE_SLOTS
        .try_with(|f| f.borrow_mut().pop())
        .ok()
        .flatten()
        .unwrap_or_else(|| Box::new(SpawnSlot(MaybeUninit::uninit())))
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
pub(crate) struct SpawnJob<F> {
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
            let slot = Box::into_raw(take_slot());
            // SAFETY: the slot is 16-aligned and large enough for `F` (checked above), and
            // it is ours until the job runs.
            unsafe { slot.cast::<F>().write(f) };
            JobRef {
                data: slot.cast_const().cast(),
                run: Self::run_slot,
            }
        } else {
            JobRef {
                data: Box::into_raw(Box::new(SpawnJob { func: f }))
                    .cast_const()
                    .cast(),
                run: Self::run_boxed,
            }
        }
    }

    unsafe fn run_slot(data: *const ()) {
        let slot = data.cast_mut().cast::<SpawnSlot>();
        // SAFETY: `into_job_ref` wrote an `F` into this slot and the job runs once, so the
        // closure is read out exactly once; the slot was leaked from a box by `into_job_ref`.
        let f = unsafe { slot.cast::<F>().read() };
        // SAFETY: as above; the slot no longer holds anything live.
        give_slot(unsafe { Box::from_raw(slot) });
        f();
    }

    unsafe fn run_boxed(data: *const ()) {
        // SAFETY: `data` is the box leaked by `into_job_ref`, executed once.
        let b = unsafe { Box::from_raw(data.cast_mut().cast::<Self>()) };
        (b.func)();
    }
}

/// A job for a thread that is not a worker and blocks until the job is done (`install`).
/// The executor's last access to the job (which lives on the blocked caller's stack) is the
/// write of the result; it then signals through its own reference to the latch, so the caller
/// may return and free the job as soon as it sees the latch set.
pub(crate) struct LockJob<F, R> {
    func: UnsafeCell<Option<F>>,
    result: UnsafeCell<Option<Outcome<R>>>,
    latch: Arc<(Mutex<bool>, Condvar)>,
}

// SAFETY: `func` is taken once by the executor; `result` is written by the executor before it
// sets the latch under the mutex and read by the caller after it sees the latch set under the
// same mutex.
unsafe impl<F: Send, R: Send> Sync for LockJob<F, R> {}

impl<F: FnOnce() -> R + Send, R: Send> LockJob<F, R> {
    pub(crate) fn new(f: F) -> Self {
        LockJob {
            func: UnsafeCell::new(Some(f)),
            result: UnsafeCell::new(None),
            latch: Arc::new((Mutex::new(false), Condvar::new())),
        }
    }

    pub(crate) fn as_job_ref(&self) -> JobRef {
        JobRef {
            data: (self as *const Self).cast(),
            run: Self::run,
        }
    }

    unsafe fn run(data: *const ()) {
        // SAFETY: `data` came from `as_job_ref`; the caller blocks until the latch is set.
        let this = unsafe { &*data.cast::<Self>() };
        // SAFETY: executed once.
        let f = unsafe { (*this.func.get()).take() }.expect("a job runs once");
        let r = catch_unwind(AssertUnwindSafe(f));
        let latch = Arc::clone(&this.latch);
        // SAFETY: the caller reads `result` only after the latch is set.
        unsafe { *this.result.get() = Some(r) };
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
        unsafe { (*self.result.get()).take() }.expect("the latch is set after the result")
    }
}
