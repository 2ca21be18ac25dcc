//! Nested fork-join on the work-stealing runtime (seed 002 §3.1–3.3, the Cilk model): `join`,
//! `scope` with spawns that borrow from the enclosing stack, and `Runtime::install`.
//!
//! Each worker owns a Chase–Lev deque ([`crate::queue::chase_lev`]). `join(a, b)` on a worker
//! pushes a reference to `b` (which lives on the caller's stack: no allocation), runs `a`, and
//! then pops: if it gets `b` back it runs it inline; if a thief took `b`, it keeps running
//! other work — its own deque first, then stolen jobs — until `b` is done (seed §3.3: a worker
//! waiting at a sync does not idle). Panics in either half are caught and resumed in the caller
//! after *both* halves have finished (a half may borrow the caller's stack). Outside a worker,
//! `join` and `install` hand the work to a worker and block until it is done.
//!
//! `scope(|s| …)` waits for every `s.spawn` before it returns (the implicit sync at the end of
//! a task), so spawns may borrow anything that outlives the scope:
//!
//! ```
//! let mut parts = vec![0u64; 4];
//! taskpools::forkjoin::scope(|s| {
//!     for (i, p) in parts.iter_mut().enumerate() {
//!         s.spawn(move |_| *p = (i as u64 + 1) * 10);
//!     }
//! });
//! assert_eq!(parts, [10, 20, 30, 40]);
//! ```
//!
//! Borrowing rules the compiler enforces (these must not compile):
//!
//! ```compile_fail,E0373
//! // A spawn may not borrow something that dies before the scope ends.
//! taskpools::forkjoin::scope(|s| {
//!     let local = 5;
//!     s.spawn(|_| println!("{local}"));
//! });
//! ```
//!
//! ```compile_fail,E0499
//! // The two halves of a join may not both borrow the same data mutably.
//! let mut v = vec![1];
//! taskpools::forkjoin::join(|| v.push(2), || v.push(3));
//! ```
//!
//! What is not there yet (issue 5): the choice of other stealing pools at construction, storage
//! recycling for scope spawns, and a per-join cost below rayon's by the factor the issue asks.

mod job;

use std::any::Any;
use std::cell::Cell;
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::OnceLock;
use std::thread::JoinHandle;

use crossbeam_utils::CachePadded;

use crate::queue::chase_lev::{self, Steal, Stealer};
use crate::sync::{fence, lock, Arc, AtomicBool, AtomicUsize, Condvar, Mutex, Ordering};
use job::{HeapJob, JobRef, LockJob, StackJob};

/// State shared by a runtime's workers.
struct Registry {
    stealers: Box<[Stealer<JobRef>]>,
    injector: Mutex<VecDeque<JobRef>>,
    injected: CachePadded<AtomicUsize>,
    sleepers: CachePadded<AtomicUsize>,
    sleep: Mutex<()>,
    wake: Condvar,
    shutdown: AtomicBool,
}

impl Registry {
    fn has_work(&self) -> bool {
        self.injected.load(Ordering::Relaxed) > 0 || self.stealers.iter().any(|s| !s.is_empty())
    }

    /// Wakes one sleeping worker, if any (Dekker pair with `sleep_until_work`).
    fn notify_one(&self) {
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::Relaxed) > 0 {
            let _g = lock(&self.sleep);
            self.wake.notify_one();
        }
    }

    fn inject(&self, job: JobRef) {
        let mut q = lock(&self.injector);
        q.push_back(job);
        self.injected.store(q.len(), Ordering::Relaxed);
        drop(q);
        self.notify_one();
    }

    fn take_injected(&self) -> Option<JobRef> {
        if self.injected.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut q = lock(&self.injector);
        let j = q.pop_front();
        self.injected.store(q.len(), Ordering::Relaxed);
        j
    }

    fn sleep_until_work(&self) {
        let g = lock(&self.sleep);
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !self.has_work() && !self.shutdown.load(Ordering::Acquire) {
            drop(self.wake.wait(g).unwrap_or_else(|e| e.into_inner()));
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A worker thread's private state, reachable through a thread-local pointer while it runs.
struct WorkerThread {
    index: usize,
    registry: Arc<Registry>,
    deque: chase_lev::Worker<JobRef>,
    rng: Cell<u64>,
}

thread_local! {
    static CURRENT: Cell<*const WorkerThread> = const { Cell::new(std::ptr::null()) };
}

impl WorkerThread {
    /// The worker running on this thread, if any.
    fn current() -> Option<&'static WorkerThread> {
        let p = CURRENT.with(Cell::get);
        // SAFETY: the pointer is set by `main_loop` for the lifetime of the worker's thread
        // and cleared before the `WorkerThread` is dropped.
        unsafe { p.as_ref() }
    }

    fn next_victim(&self) -> usize {
        // xorshift
        let mut x = self.rng.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng.set(x);
        (x as usize) % self.registry.stealers.len()
    }

    /// One attempt to find work elsewhere: a random victim first, then around; then the
    /// injector.
    fn steal(&self) -> Option<JobRef> {
        let n = self.registry.stealers.len();
        let start = self.next_victim();
        for k in 0..n {
            let v = (start + k) % n;
            if v == self.index {
                continue;
            }
            loop {
                match self.registry.stealers[v].steal() {
                    Steal::Success(j) => return Some(j),
                    Steal::Empty => break,
                    Steal::Retry => {}
                }
            }
        }
        self.registry.take_injected()
    }

    fn find_work(&self) -> Option<JobRef> {
        self.deque.pop().or_else(|| self.steal())
    }

    /// Runs jobs until `done()` holds, without sleeping (the job we wait for is running).
    fn wait_until(&self, done: impl Fn() -> bool) {
        let mut idle = 0u32;
        while !done() {
            match self.find_work() {
                // SAFETY: a job popped or stolen is executed once, here.
                Some(j) => unsafe {
                    idle = 0;
                    j.execute()
                },
                None => {
                    idle += 1;
                    if idle < 64 {
                        std::hint::spin_loop();
                    } else {
                        std::thread::yield_now();
                    }
                }
            }
        }
    }

    fn main_loop(&self) {
        let mut idle = 0u32;
        while !self.registry.shutdown.load(Ordering::Acquire) {
            match self.find_work() {
                // SAFETY: as in `wait_until`.
                Some(j) => unsafe {
                    idle = 0;
                    j.execute()
                },
                None if idle < 200 => {
                    idle += 1;
                    std::thread::yield_now();
                }
                None => {
                    idle = 0;
                    self.registry.sleep_until_work();
                }
            }
        }
    }

    fn push(&self, job: JobRef) {
        if self.deque.push(job) {
            self.registry.notify_one();
        }
    }
}

/// A fork-join thread pool.
pub struct Runtime {
    registry: Arc<Registry>,
    threads: Vec<JoinHandle<()>>,
}

impl Runtime {
    /// A runtime with `threads` workers (at least 1).
    pub fn new(threads: usize) -> Result<Runtime, crate::Error> {
        if threads == 0 {
            return Err(crate::Error::ZeroThreads);
        }
        let (workers, stealers): (Vec<_>, Vec<_>) = (0..threads)
            .map(|_| chase_lev::deque::<JobRef>(256))
            .unzip();
        let registry = Arc::new(Registry {
            stealers: stealers.into(),
            injector: Mutex::new(VecDeque::new()),
            injected: CachePadded::new(AtomicUsize::new(0)),
            sleepers: CachePadded::new(AtomicUsize::new(0)),
            sleep: Mutex::new(()),
            wake: Condvar::new(),
            shutdown: AtomicBool::new(false),
        });
        let mut handles = Vec::with_capacity(threads);
        for (index, deque) in workers.into_iter().enumerate() {
            let reg = Arc::clone(&registry);
            let h = std::thread::Builder::new()
                .name(format!("taskpools-fj-{index}"))
                .spawn(move || {
                    let w = WorkerThread {
                        index,
                        registry: reg,
                        deque,
                        rng: Cell::new(0x9e37_79b9_7f4a_7c15 ^ (index as u64 + 1)),
                    };
                    CURRENT.with(|c| c.set(&w));
                    w.main_loop();
                    CURRENT.with(|c| c.set(std::ptr::null()));
                });
            match h {
                Ok(h) => handles.push(h),
                Err(e) => {
                    let rt = Runtime {
                        registry,
                        threads: handles,
                    };
                    drop(rt);
                    return Err(crate::Error::Spawn(e));
                }
            }
        }
        Ok(Runtime {
            registry,
            threads: handles,
        })
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.registry.stealers.len()
    }

    fn owns_current_thread(&self) -> bool {
        WorkerThread::current().is_some_and(|w| Arc::ptr_eq(&w.registry, &self.registry))
    }

    /// Runs `op` on one of this runtime's workers and returns its result; `join` and `scope`
    /// inside it fork onto this runtime. Panics in `op` are resumed here.
    pub fn install<R: Send>(&self, op: impl FnOnce() -> R + Send) -> R {
        if self.owns_current_thread() {
            return op();
        }
        let job = LockJob::new(op);
        self.registry.inject(job.as_job_ref());
        match job.wait() {
            Ok(r) => r,
            Err(p) => resume_unwind(p),
        }
    }

    /// `join` on this runtime.
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.install(|| join(a, b))
    }

    /// `scope` on this runtime.
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| scope(op))
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.registry.shutdown.store(true, Ordering::Release);
        {
            let _g = lock(&self.registry.sleep);
            self.registry.wake.notify_all();
        }
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
    }
}

fn global() -> &'static Runtime {
    static GLOBAL: OnceLock<Runtime> = OnceLock::new();
    GLOBAL.get_or_init(|| {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        Runtime::new(n).expect("could not start the global fork-join runtime")
    })
}

/// Runs `a` and `b`, potentially in parallel, and returns both results. On a worker it forks
/// onto that worker's runtime; elsewhere it runs on the global runtime (one worker per CPU).
/// A panic in either closure is resumed here after both have finished.
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    match WorkerThread::current() {
        Some(w) => join_on(w, a, b),
        None => global().install(|| join(a, b)),
    }
}

fn join_on<A, B, RA, RB>(w: &WorkerThread, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let job_b = StackJob::new(b);
    let b_ref = job_b.as_job_ref();
    w.push(b_ref);
    let ra = catch_unwind(AssertUnwindSafe(a));
    // Take `b` back if nobody stole it; run what we pop meanwhile.
    let rb = loop {
        if job_b.is_done() {
            break job_b.into_outcome();
        }
        match w.deque.pop() {
            Some(j) if j == b_ref => break job_b.run_inline(),
            // SAFETY: a job popped from our deque is executed once, here.
            Some(j) => unsafe { j.execute() },
            None => {
                w.wait_until(|| job_b.is_done());
                break job_b.into_outcome();
            }
        }
    };
    match (ra, rb) {
        (Ok(ra), Ok(rb)) => (ra, rb),
        (Err(p), _) | (_, Err(p)) => resume_unwind(p),
    }
}

/// A scope for spawning jobs that may borrow anything outliving the scope.
pub struct Scope<'scope> {
    pending: AtomicUsize,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Invariant in `'scope`.
    marker: PhantomData<&'scope mut &'scope ()>,
}

/// Runs `op` with a scope and waits for every job spawned in it (also if `op` or a job
/// panics; the first panic is then resumed here).
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    match WorkerThread::current() {
        Some(w) => scope_on(w, op),
        None => global().install(|| scope(op)),
    }
}

fn scope_on<'scope, OP, R>(w: &WorkerThread, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    let s = Scope {
        pending: AtomicUsize::new(0),
        panic: Mutex::new(None),
        marker: PhantomData,
    };
    let r = catch_unwind(AssertUnwindSafe(|| op(&s)));
    w.wait_until(|| s.pending.load(Ordering::Acquire) == 0);
    let spawned_panic = lock(&s.panic).take();
    match (r, spawned_panic) {
        (Err(p), _) => resume_unwind(p),
        (Ok(_), Some(p)) => resume_unwind(p),
        (Ok(r), None) => r,
    }
}

impl<'scope> Scope<'scope> {
    /// Spawns `f` into the scope; the scope waits for it before it returns.
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        let w = WorkerThread::current().expect("a scope runs on a worker thread");
        self.pending.fetch_add(1, Ordering::Relaxed);
        let scope_ptr = ScopePtr(self as *const Scope<'scope>);
        let job = move || {
            let sp = scope_ptr;
            // SAFETY: the scope waits for `pending` to reach zero before it is dropped, and we
            // decrement only at the very end.
            let s = unsafe { &*sp.0 };
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(s))) {
                let mut slot = lock(&s.panic);
                if slot.is_none() {
                    *slot = Some(p);
                }
            }
            s.pending.fetch_sub(1, Ordering::Release);
        };
        // The job's lifetime is bounded by the scope (see above), but `HeapJob` erases it.
        let job: Box<dyn FnOnce() + Send + 'scope> = Box::new(job);
        // SAFETY: the job only borrows data that outlives `'scope`, and it finishes before the
        // scope returns; erasing the lifetime for the queue does not let it outlive that.
        let job: Box<dyn FnOnce() + Send + 'static> = unsafe { std::mem::transmute(job) };
        w.push(HeapJob::into_job_ref(job));
    }
}

struct ScopePtr<'scope>(*const Scope<'scope>);
// SAFETY: the scope is `Sync` in effect (atomics and a mutex) and outlives every job.
unsafe impl Send for ScopePtr<'_> {}
impl Clone for ScopePtr<'_> {
    fn clone(&self) -> Self {
        *self
    }
}
impl Copy for ScopePtr<'_> {}
