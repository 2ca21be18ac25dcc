//! Jobs: type-erased references to closures that live on a stack ([`StackJob`], used by
//! `join`) or on the heap ([`HeapJob`], used by `scope`'s spawns).

use std::any::Any;
use std::cell::UnsafeCell;
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
    func: UnsafeCell<Option<F>>,
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
            func: UnsafeCell::new(Some(f)),
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
        // SAFETY: only the executor reaches here (see the `Sync` impl).
        let f = unsafe { (*this.func.get()).take() }.expect("a job runs once");
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

    /// Runs the job here (the owner popped it back, so no one else can).
    pub(crate) fn run_inline(&self) -> Outcome<R> {
        // SAFETY: the owner popped the job's only reference back from its deque.
        let f = unsafe { (*self.func.get()).take() }.expect("a job runs once");
        catch_unwind(AssertUnwindSafe(f))
    }

    /// The outcome after `is_done`.
    pub(crate) fn into_outcome(self) -> Outcome<R> {
        self.result.into_inner().expect("done jobs have a result")
    }
}

/// A boxed job that frees itself after running (`scope`'s spawns).
pub(crate) struct HeapJob<F> {
    func: F,
}

impl<F: FnOnce() + Send> HeapJob<F> {
    /// Boxes `f` and returns a reference that owns the box until executed.
    pub(crate) fn into_job_ref(f: F) -> JobRef {
        let b = Box::new(HeapJob { func: f });
        JobRef {
            data: Box::into_raw(b).cast_const().cast(),
            run: Self::run,
        }
    }

    unsafe fn run(data: *const ()) {
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
