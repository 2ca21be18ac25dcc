//! Nested fork-join on the work-stealing runtime (seed 002 §3.1–3.3, the Cilk model): `join`,
//! `scope` with spawns that borrow from the enclosing stack, and `Runtime::install`.
//!
//! Each worker owns a deque of the pool chosen when the runtime is built ([`Pool`]): by default
//! a private deque that thieves reach only through steal requests
//! ([`crate::queue::private_deque`], Acar, Charguéraud & Rainey 2013: the owner's push and pop
//! are plain memory operations, and a fork is where it answers a pending request), or a
//! Chase–Lev deque ([`crate::queue::chase_lev`], thieves take directly; the owner's pop pays a
//! fence). `join(a, b)` on a worker pushes a reference to `b` (which lives on the caller's
//! stack: no allocation), runs `a`, and then pops: if it gets `b` back it runs it inline; if a
//! thief took `b`, it keeps running other work — its own deque first, then stolen jobs — until
//! `b` is done (seed §3.3: a worker waiting at a sync does not idle). Those waits nest when a
//! stolen job waits in turn; beyond 32 nested waits a worker runs only its own jobs while it
//! waits, so stealing cannot grow its stack without bound. Panics in either half are caught
//! and resumed in the caller after *both* halves have finished (a half may borrow the caller's
//! stack). Outside a worker, `join` and `install` hand the work to a worker and block until it
//! is done.
//!
//! ```
//! use taskpools::forkjoin::{Pool, Runtime};
//! let rt = Runtime::builder().threads(2).pool(Pool::ChaseLev).build()?;
//! let (a, b) = rt.join(|| 1 + 1, || 2 + 2);
//! assert_eq!((a, b), (2, 4));
//! # Ok::<(), taskpools::Error>(())
//! ```
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
//! # Progress
//!
//! A join waits for its second half, and a scope for its spawns, by running other work, so
//! fork-join programs never block a worker. What the pools differ in is a job that waits for
//! another job *by other means* (a spin on a flag, a channel polled in a loop): on
//! [`Pool::ChaseLev`] every queued job can be stolen without its owner's help, so such a wait
//! finishes when another worker is free. On the default [`Pool::PrivateDeque`] a worker's
//! queued jobs reach other workers only when the owner answers their requests — at a fork, a
//! join, a scope's end, an `install`, or [`yield_now`] — so such a wait must call
//! [`yield_now`] in its loop, or it may wait forever for a job queued behind it. The runtime
//! does not hang silently then: a thief whose request goes unanswered for [`STALL_REPORT`]
//! prints one diagnostic per runtime to stderr naming the cause and the fix. Keeping the
//! private pool's push and pop free of fences is the point of that pool; the design note in
//! `liveness.rs` says why a public slot for the oldest job would not make this guarantee.
//!
//! Work belongs to a runtime: a scope's spawns run on the scope's runtime whichever thread
//! spawns them, and a worker of one runtime that calls [`Runtime::install`] on another keeps
//! running its own runtime's work while it waits.
//!
//! Spawned closures of up to 88 bytes (a slot's 96 less the scope pointer that the runtime adds)
//! live in per-thread recycled slots, so a scope that spawns in a loop stops allocating once
//! warm; larger ones get a box each (`tests/forkjoin_alloc.rs` counts both).

mod frames;
mod job;
mod liveness;
#[cfg(all(test, loom))]
mod loom_models;
mod scope;

use liveness::StallWatch;
pub use liveness::{yield_now, Yield, STALL_REPORT};
pub use scope::{scope, Scope};

use std::cell::Cell;
use std::collections::VecDeque;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::OnceLock;
use std::thread::JoinHandle;

use crossbeam_utils::CachePadded;

use crate::queue::chase_lev::{self, Steal, Stealer};
use crate::queue::private_deque::{StealRequests, StealTable};
use crate::sync::{fence, lock, Arc, AtomicBool, AtomicUsize, Condvar, Mutex, Ordering};
use frames::FrameStack;
use job::{JobRef, LockJob, StackJob};

/// The work-stealing pool that a runtime's workers share: which deque each worker owns and
/// how thieves take from it. Chosen when the runtime is built, so that one fork-join program
/// can be compared across pools.
///
/// Names are unique across the crate: `private-public`/`dq8` is the task-pool family's
/// [`PoolKind::PrivatePublic`](crate::PoolKind::PrivatePublic), a different structure, and is
/// refused here with [`Error::RenamedPool`](crate::Error::RenamedPool) naming
/// `private-deque` (what this front end called `private-public` before).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pool {
    /// Private deques with steal requests (`private-deque`, alias `acr13`): each worker's
    /// frame stack is private, the owner pushes and pops without atomics or fences; a thief
    /// sends a steal request, which the owner answers with its oldest job at its next fork or
    /// wait (Acar, Charguéraud & Rainey, "Scheduling parallel programs by work stealing with
    /// private deques", PPoPP 2013). See [`crate::queue::private_deque`].
    PrivateDeque,
    /// One Chase–Lev deque per worker (`chase-lev`, alias `dcwq`): thieves take the oldest job
    /// directly; the owner's pop pays a store-load fence (seed 002 §3.2). The same deque as
    /// [`PoolKind::ChaseLev`](crate::PoolKind::ChaseLev).
    ChaseLev,
}

impl Pool {
    /// The old name of [`Pool::PrivateDeque`]: `private-public` (`dq8`) names the pool
    /// family's private/public blocks ([`PoolKind::PrivatePublic`](crate::PoolKind)), a
    /// different structure.
    #[deprecated(note = "renamed to Pool::PrivateDeque (`private-deque`, alias `acr13`)")]
    #[allow(non_upper_case_globals)]
    pub const PrivatePublic: Pool = Pool::PrivateDeque;

    /// Every pool, the default first.
    pub const ALL: [Pool; 2] = [Pool::PrivateDeque, Pool::ChaseLev];

    /// Names this front end used before that now mean something else, with the pool they
    /// meant: refused by [`Pool::from_name`] with a message naming the new name.
    pub const RENAMED: [(&'static str, Pool); 2] = [
        ("private-public", Pool::PrivateDeque),
        ("dq8", Pool::PrivateDeque),
    ];

    /// The descriptive name.
    pub fn name(self) -> &'static str {
        match self {
            Pool::PrivateDeque => "private-deque",
            Pool::ChaseLev => "chase-lev",
        }
    }

    /// The paper-style alias (`acr13`: Acar, Charguéraud & Rainey 2013; `dcwq`: seed 002).
    pub fn alias(self) -> &'static str {
        match self {
            Pool::PrivateDeque => "acr13",
            Pool::ChaseLev => "dcwq",
        }
    }

    /// One line for `taskpools list`.
    pub fn description(self) -> &'static str {
        match self {
            Pool::PrivateDeque => {
                "private frame stack per worker; thieves send steal requests (default)"
            }
            Pool::ChaseLev => "lock-free Chase-Lev deque per worker; thieves take the oldest job",
        }
    }

    /// The pool with this name or alias. The other members of the task-pool family are not
    /// work-stealing deques and are refused with a list of the ones that are; the old names
    /// `private-public`/`dq8` are refused with [`Error::RenamedPool`](crate::Error::RenamedPool).
    pub fn from_name(name: &str) -> Result<Pool, crate::Error> {
        if let Some(&(old, pool)) = Pool::RENAMED.iter().find(|(old, _)| *old == name) {
            return Err(crate::Error::RenamedPool {
                old: old.to_string(),
                new: pool.name(),
                alias: pool.alias(),
            });
        }
        Pool::ALL
            .into_iter()
            .find(|p| p.name() == name || p.alias() == name)
            .ok_or_else(|| crate::Error::UnknownPool {
                name: name.to_string(),
                known: Pool::ALL
                    .iter()
                    .map(|p| format!("{} ({})", p.name(), p.alias()))
                    .collect::<Vec<_>>()
                    .join(", ")
                    + " (fork-join runs on the work-stealing pools only)",
            })
    }
}

impl std::fmt::Display for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Pool {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Pool::from_name(s)
    }
}

/// How thieves reach the workers' deques.
enum Stealers {
    ChaseLev(Box<[Stealer<JobRef>]>),
    Private(Arc<StealTable<JobRef>>),
}

/// A worker's own deque.
enum LocalDeque {
    ChaseLev(chase_lev::Worker<JobRef>),
    Private(PrivateFrames),
}

/// The `private-deque` pool's side of a worker: its frame stack (owner only) and its end of
/// the steal-request protocol.
struct PrivateFrames {
    frames: FrameStack,
    req: StealRequests<JobRef>,
}

impl PrivateFrames {
    /// Queues a job; returns whether work is newly advertised (then a sleeper may be woken).
    #[inline(always)]
    fn push(&self, job: JobRef) -> bool {
        // SAFETY: every job pushed is live until it is popped, taken back, or run by a thief
        // (stack jobs are waited for; spawned jobs own their storage).
        let was_empty = unsafe { self.frames.push(job.header()) };
        if was_empty && !self.req.advertised() {
            self.req.advertise(true);
            return true;
        }
        false
    }

    /// A join takes its own job back (see [`FrameStack::take_back`]); when that empties the
    /// stack, the work hint is withdrawn, so that thieves stop asking and idle workers may
    /// sleep while this worker runs the job.
    #[inline(always)]
    fn take_back(&self, h: &job::JobHeader) -> bool {
        if self.frames.take_back(h) {
            if self.frames.is_empty() {
                self.req.advertise(false);
            }
            true
        } else {
            false
        }
    }

    /// Pops the newest job; when the stack is (or becomes) empty, withdraws the work hint. The
    /// hint is therefore set exactly while the stack holds a job, which is what idle workers
    /// check before they sleep.
    #[inline]
    fn pop(&self) -> Option<JobRef> {
        let j = self.frames.pop();
        if self.frames.is_empty() {
            self.req.advertise(false);
        }
        j
    }

    /// The oldest job, for a thief.
    fn give_oldest(&self) -> Option<JobRef> {
        let j = self.frames.take_oldest();
        if self.frames.is_empty() {
            self.req.advertise(false);
        }
        j
    }

    /// Answers a pending steal request: one load when there is none.
    #[inline(always)]
    fn poll(&self) {
        self.req.poll(|| self.give_oldest());
    }
}

/// State shared by a runtime's workers.
struct Registry {
    threads: usize,
    stealers: Stealers,
    injector: Mutex<VecDeque<JobRef>>,
    injected: CachePadded<AtomicUsize>,
    sleepers: CachePadded<AtomicUsize>,
    sleep: Mutex<()>,
    wake: Condvar,
    shutdown: AtomicBool,
    /// Whether a thief has reported an owner that does not answer steal requests (the
    /// diagnostic is printed once per runtime; see [`StallWatch`]).
    stall_reported: AtomicBool,
    /// Loom-only switch for a test of the tests: a would-be sleeper that does not look for
    /// work again after announcing itself, so an injection can slip in between.
    #[cfg(loom)]
    broken_no_recheck: bool,
}

impl Registry {
    fn new(threads: usize, stealers: Stealers) -> Registry {
        Registry {
            threads,
            stealers,
            injector: Mutex::new(VecDeque::new()),
            injected: CachePadded::new(AtomicUsize::new(0)),
            sleepers: CachePadded::new(AtomicUsize::new(0)),
            sleep: Mutex::new(()),
            wake: Condvar::new(),
            shutdown: AtomicBool::new(false),
            stall_reported: AtomicBool::new(false),
            #[cfg(loom)]
            broken_no_recheck: false,
        }
    }

    fn has_work(&self) -> bool {
        self.injected.load(Ordering::Relaxed) > 0
            || match &self.stealers {
                Stealers::ChaseLev(s) => s.iter().any(|s| !s.is_empty()),
                Stealers::Private(t) => t.any_work(),
            }
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
        #[cfg(loom)]
        let recheck = !self.broken_no_recheck;
        #[cfg(not(loom))]
        let recheck = true;
        let work = recheck && self.has_work();
        if !work && !self.shutdown.load(Ordering::Acquire) {
            drop(self.wake.wait(g).unwrap_or_else(|e| e.into_inner()));
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How deeply a worker nests waits that run stolen jobs. Beyond this, a waiting worker runs
/// only jobs from its own deque (which a sequential run would have run on the same stack), so
/// stealing while waiting cannot grow the stack without bound.
const MAX_STEALING_WAITS: u32 = 32;

/// A worker thread's private state, reachable through a thread-local pointer while it runs.
struct WorkerThread {
    index: usize,
    registry: Arc<Registry>,
    deque: LocalDeque,
    rng: Cell<u64>,
    /// Waits (`wait_until`) currently on this thread's stack.
    waits: Cell<u32>,
    /// Steal attempts (rounds over the victims) this worker has made; only tests read it.
    steal_rounds: Cell<u64>,
}

thread_local! {
    static CURRENT: Cell<*const WorkerThread> = const { Cell::new(std::ptr::null()) };
}

impl WorkerThread {
    /// The worker running on this thread, if any.
    #[inline]
    fn current() -> Option<&'static WorkerThread> {
        let p = CURRENT.with(Cell::get);
        // SAFETY: the pointer is set by the worker's thread for as long as its `WorkerThread`
        // lives (on that thread's stack) and cleared before it is dropped.
        unsafe { p.as_ref() }
    }

    fn next_victim(&self) -> usize {
        // xorshift
        let mut x = self.rng.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng.set(x);
        (x as usize) % self.registry.threads
    }

    /// Pushes a job onto this worker's deque (and, on private deques, answers a pending steal
    /// request: the fork is a poll point).
    #[inline(always)]
    fn push(&self, job: JobRef) {
        let was_empty = match &self.deque {
            LocalDeque::ChaseLev(d) => d.push(job),
            LocalDeque::Private(p) => {
                let e = p.push(job);
                p.poll();
                e
            }
        };
        if was_empty && self.registry.threads > 1 {
            self.registry.notify_one();
        }
    }

    #[inline(always)]
    fn pop(&self) -> Option<JobRef> {
        match &self.deque {
            LocalDeque::ChaseLev(d) => d.pop(),
            LocalDeque::Private(p) => p.pop(),
        }
    }

    /// Answers a pending steal request (private deques).
    #[inline]
    fn poll(&self) {
        if let LocalDeque::Private(p) = &self.deque {
            p.poll();
        }
    }

    /// Refuses steal requests while this worker cannot answer them (it sleeps or exits); a
    /// pending one is answered now.
    fn block_requests(&self) {
        if let LocalDeque::Private(p) = &self.deque {
            p.req.block(|| p.give_oldest());
        }
    }

    fn unblock_requests(&self) {
        if let LocalDeque::Private(p) = &self.deque {
            p.req.unblock();
        }
    }

    /// One attempt to find work elsewhere: a random victim first, then around; then the
    /// injector.
    fn steal(&self) -> Option<JobRef> {
        self.steal_rounds.set(self.steal_rounds.get() + 1);
        let n = self.registry.threads;
        let start = self.next_victim();
        for k in 0..n {
            let v = (start + k) % n;
            if v == self.index {
                continue;
            }
            match (&self.deque, &self.registry.stealers) {
                (LocalDeque::ChaseLev(_), Stealers::ChaseLev(s)) => loop {
                    match s[v].steal() {
                        Steal::Success(j) => return Some(j),
                        Steal::Empty => break,
                        Steal::Retry => {}
                    }
                },
                (LocalDeque::Private(p), _) => {
                    let mut watch = StallWatch::default();
                    let serve_own = || {
                        p.poll();
                        watch.tick(&self.registry, self.index, v);
                    };
                    // A busy request cell (`Retry`) means another thief is being served
                    // there: try the next victim instead of queueing up.
                    if let Steal::Success(j) = p.req.steal_from(v, serve_own) {
                        return Some(j);
                    }
                }
                (LocalDeque::ChaseLev(_), Stealers::Private(_)) => {
                    unreachable!("a runtime's workers all use its pool")
                }
            }
        }
        self.registry.take_injected()
    }

    fn find_work(&self) -> Option<JobRef> {
        self.pop().or_else(|| self.steal())
    }

    /// Runs jobs until `done()` holds, without sleeping (the job we wait for is running).
    ///
    /// Every caller waits for a job that other threads can reach (a stolen join half on the
    /// caller's stack, an injected install, a scope's spawns), so this must not unwind before
    /// `done()`: jobs catch their own panics, and a panic from the runtime's own code here
    /// aborts the process instead of freeing a frame that another thread still uses.
    fn wait_until(&self, done: impl Fn() -> bool) {
        struct AbortOnUnwind;
        impl Drop for AbortOnUnwind {
            fn drop(&mut self) {
                eprintln_best_effort(
                    "taskpools: a fork-join wait unwound while other threads could still use \
                     the job it waits for; aborting",
                );
                std::process::abort();
            }
        }
        let guard = AbortOnUnwind;
        let mut idle = 0u32;
        while !done() {
            if self.run_one() {
                idle = 0;
            } else {
                idle += 1;
                if idle < 64 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        }
        std::mem::forget(guard);
    }

    /// One step of a wait: answers a pending steal request, then runs one job if there is one
    /// (its own deque first; then, below `MAX_STEALING_WAITS` nested waits, stolen work; then
    /// work injected into this runtime). Injected work is taken at any depth: it may be what
    /// another runtime's worker, itself waiting on us, needs to finish (installs that cross
    /// back and forth between one-thread runtimes), and it grows the stack no more than a pop.
    /// Returns whether it ran a job.
    fn run_one(&self) -> bool {
        self.poll();
        let depth = self.waits.get();
        let job = if depth < MAX_STEALING_WAITS {
            self.find_work()
        } else {
            self.pop().or_else(|| self.registry.take_injected())
        };
        match job {
            Some(j) => {
                self.waits.set(depth + 1);
                // SAFETY: a job popped or stolen is executed once, here. Jobs catch their own
                // panics, so the depth is restored.
                unsafe { j.execute() };
                self.waits.set(depth);
                true
            }
            None => false,
        }
    }

    fn main_loop(&self) {
        let mut idle = 0u32;
        while !self.registry.shutdown.load(Ordering::Acquire) {
            self.poll();
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
                    self.block_requests();
                    self.registry.sleep_until_work();
                    self.unblock_requests();
                }
            }
        }
        // Shutdown: run what is still injected (fire-and-forget `spawn`s; nothing else can be
        // there, since installs and scopes borrow the runtime that is being dropped). A job
        // that spawns more while this runs is seen here too, by this worker's next look.
        while let Some(j) = self.registry.take_injected() {
            // SAFETY: as in `wait_until`.
            unsafe { j.execute() };
        }
        self.block_requests();
    }
}

/// Builds a [`Runtime`]: thread count, pool, pinning.
#[derive(Clone, Debug)]
pub struct RuntimeBuilder {
    threads: usize,
    pool: Pool,
    pin: bool,
    stack_size: Option<usize>,
}

impl Default for RuntimeBuilder {
    fn default() -> Self {
        RuntimeBuilder {
            threads: std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(crate::MAX_THREADS),
            pool: Pool::PrivateDeque,
            pin: false,
            stack_size: None,
        }
    }
}

impl RuntimeBuilder {
    /// Worker threads (default: one per CPU). Zero, or more than
    /// [`MAX_THREADS`](crate::MAX_THREADS), is refused by [`build`](Self::build).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n;
        self
    }

    /// The work-stealing pool (default [`Pool::PrivateDeque`]).
    pub fn pool(mut self, pool: Pool) -> Self {
        self.pool = pool;
        self
    }

    /// The pool by name or alias (`private-deque`/`acr13`, `chase-lev`/`dcwq`).
    pub fn pool_name(self, name: &str) -> Result<Self, crate::Error> {
        Ok(self.pool(Pool::from_name(name)?))
    }

    /// Pins worker `i` to core `i mod cores` (default off).
    pub fn pin(mut self, pin: bool) -> Self {
        self.pin = pin;
        self
    }

    /// Stack size of each worker thread in bytes (default: the standard library's, 2 MiB).
    /// Deeply recursive jobs need more; stealing while waiting adds at most 32 nested jobs.
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Starts the workers.
    pub fn build(self) -> Result<Runtime, crate::Error> {
        Runtime::start(self)
    }

    /// Builds the global runtime, the one that [`join`], [`scope`], [`spawn`] and
    /// [`current_num_threads`] use outside a worker. Fails with
    /// [`Error::GlobalExists`](crate::Error::GlobalExists) if the global runtime already
    /// exists (built here before, or created on first use); call it early in `main`.
    pub fn build_global(self) -> Result<(), crate::Error> {
        if GLOBAL.get().is_some() {
            return Err(crate::Error::GlobalExists);
        }
        let rt = self.build()?;
        // Another thread may have won the race meanwhile: then `rt` is dropped (its workers
        // stop) and the caller learns that the global runtime was not this one.
        GLOBAL.set(rt).map_err(|_| crate::Error::GlobalExists)
    }
}

/// A fork-join thread pool.
pub struct Runtime {
    registry: Arc<Registry>,
    pool: Pool,
    threads: Vec<JoinHandle<()>>,
}

impl Runtime {
    /// A runtime with `threads` workers (at least 1) on the default pool.
    pub fn new(threads: usize) -> Result<Runtime, crate::Error> {
        Runtime::builder().threads(threads).build()
    }

    /// A builder, to choose the pool or pinning.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }

    fn start(b: RuntimeBuilder) -> Result<Runtime, crate::Error> {
        let threads = b.threads;
        if threads == 0 {
            return Err(crate::Error::ZeroThreads);
        }
        if threads > crate::MAX_THREADS {
            return Err(crate::Error::TooManyThreads {
                requested: threads,
                max: crate::MAX_THREADS,
            });
        }
        let (locals, stealers): (Vec<LocalDeque>, Stealers) = match b.pool {
            Pool::ChaseLev => {
                let (w, s): (Vec<_>, Vec<_>) = (0..threads)
                    .map(|_| chase_lev::deque::<JobRef>(256))
                    .unzip();
                (
                    w.into_iter().map(LocalDeque::ChaseLev).collect(),
                    Stealers::ChaseLev(s.into()),
                )
            }
            Pool::PrivateDeque => {
                let r = StealRequests::<JobRef>::set(threads);
                let table = Arc::clone(r[0].table());
                (
                    r.into_iter()
                        .map(|req| {
                            LocalDeque::Private(PrivateFrames {
                                frames: FrameStack::new(),
                                req,
                            })
                        })
                        .collect(),
                    Stealers::Private(table),
                )
            }
        };
        let registry = Arc::new(Registry::new(threads, stealers));
        let cores = crate::runtime::worker_cores(b.pin, threads);
        let mut rt = Runtime {
            registry,
            pool: b.pool,
            threads: Vec::with_capacity(threads),
        };
        for (index, deque) in locals.into_iter().enumerate() {
            let reg = Arc::clone(&rt.registry);
            let core = cores[index];
            let mut tb = std::thread::Builder::new().name(format!("taskpools-fj-{index}"));
            if let Some(bytes) = b.stack_size {
                tb = tb.stack_size(bytes);
            }
            let h = tb.spawn(move || {
                if let Some(c) = core {
                    core_affinity::set_for_current(c);
                }
                let w = WorkerThread {
                    index,
                    registry: reg,
                    deque,
                    rng: Cell::new(0x9e37_79b9_7f4a_7c15 ^ (index as u64 + 1)),
                    waits: Cell::new(0),
                    steal_rounds: Cell::new(0),
                };
                CURRENT.with(|c| c.set(&w));
                w.main_loop();
                CURRENT.with(|c| c.set(std::ptr::null()));
            });
            match h {
                Ok(h) => rt.threads.push(h),
                // Dropping `rt` stops the workers started so far.
                Err(e) => return Err(crate::Error::Spawn(e)),
            }
        }
        Ok(rt)
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.registry.threads
    }

    /// The pool the workers share.
    pub fn pool(&self) -> Pool {
        self.pool
    }

    /// Runs `op` on one of this runtime's workers and returns its result; `join` and `scope`
    /// inside it fork onto this runtime. Panics in `op` are resumed here.
    ///
    /// From a thread that is not a worker, the caller blocks until `op` is done. From a worker
    /// of *another* runtime, that worker keeps running its own runtime's jobs while it waits
    /// (it answers steal requests, runs its own deque, steals, and takes jobs injected into its
    /// runtime), so installs that cross back and forth between runtimes, such as
    /// `a.install(|| b.install(|| a.install(|| 42)))` on one-thread runtimes, finish.
    pub fn install<R: Send>(&self, op: impl FnOnce() -> R + Send) -> R {
        match WorkerThread::current() {
            Some(w) if Arc::ptr_eq(&w.registry, &self.registry) => op(),
            Some(w) => self.install_from_foreign_worker(w, op),
            None => {
                let job = LockJob::new(op);
                self.registry.inject(job.as_job_ref());
                match job.wait() {
                    Ok(r) => r,
                    Err(p) => resume_unwind(p),
                }
            }
        }
    }

    /// `install` from a worker `w` of another runtime: the job lives on `w`'s stack and is
    /// injected here; `w` waits for it the way a join waits for a stolen half, running its
    /// own runtime's work meanwhile (rayon's `in_worker_cross`).
    #[cold]
    #[inline(never)]
    fn install_from_foreign_worker<R: Send>(
        &self,
        w: &WorkerThread,
        op: impl FnOnce() -> R + Send,
    ) -> R {
        let job = StackJob::new(op);
        self.registry.inject(job.as_job_ref());
        w.wait_until(|| job.is_done());
        match job.take_outcome() {
            Ok(r) => r,
            Err(p) => resume_unwind(p),
        }
    }

    /// Runs `f` on one of this runtime's workers without waiting for it (fire and forget).
    ///
    /// A panic in `f` does not reach the caller and does not stop the worker: it is caught and
    /// reported with one line on stderr. Dropping the runtime runs every spawned job that has
    /// not run yet (including jobs those jobs spawn) before the workers stop, so none is lost
    /// or leaked; a job that keeps spawning itself keeps the drop waiting.
    pub fn spawn(&self, f: impl FnOnce() + Send + 'static) {
        spawn_in(&self.registry, f);
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
    /// Stops the workers: each runs what is left in the injector (spawned jobs) and exits.
    /// From a thread outside the runtime, the drop waits for them. Dropped on one of its own
    /// workers (the last `Arc<Runtime>` moved into a spawned job, say), it cannot wait for
    /// itself or for a worker that may be waiting on this one: it then only signals the
    /// shutdown and returns; the workers finish and exit on their own (each holds the shared
    /// state it needs).
    fn drop(&mut self) {
        self.registry.shutdown.store(true, Ordering::Release);
        {
            let _g = lock(&self.registry.sleep);
            self.registry.wake.notify_all();
        }
        let on_own_worker =
            WorkerThread::current().is_some_and(|w| Arc::ptr_eq(&w.registry, &self.registry));
        if on_own_worker {
            self.threads.clear();
            return;
        }
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
    }
}

/// The global runtime, created on first use or by [`RuntimeBuilder::build_global`].
static GLOBAL: OnceLock<Runtime> = OnceLock::new();

/// The environment variable that sizes the global runtime when it is created on first use.
pub const NUM_THREADS_ENV: &str = "TASKPOOLS_NUM_THREADS";

/// Parses a value of [`NUM_THREADS_ENV`]: `Ok(None)` when unset or empty (use one worker per
/// CPU), the thread count, or why the value is refused.
fn threads_from_env(v: Option<&str>) -> Result<Option<usize>, String> {
    let v = match v.map(str::trim) {
        None | Some("") => return Ok(None),
        Some(v) => v,
    };
    match v.parse::<usize>() {
        Ok(n) if (1..=crate::MAX_THREADS).contains(&n) => Ok(Some(n)),
        _ => Err(format!(
            "{NUM_THREADS_ENV}={v:?} is not a thread count from 1 to {}",
            crate::MAX_THREADS
        )),
    }
}

fn global() -> &'static Runtime {
    GLOBAL.get_or_init(|| {
        let cpus = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(crate::MAX_THREADS);
        let env = std::env::var(NUM_THREADS_ENV).ok();
        let n = match threads_from_env(env.as_deref()) {
            Ok(n) => n.unwrap_or(cpus),
            Err(why) => {
                eprintln_best_effort(&format!(
                    "taskpools: {why}; the global runtime uses {cpus} threads (one per CPU)"
                ));
                cpus
            }
        };
        Runtime::new(n).expect("could not start the global fork-join runtime")
    })
}

/// Number of worker threads of the current worker's runtime, or, on a thread that is not a
/// worker, of the global runtime (which this creates if it does not exist yet, like `join`
/// would). Rayon's `current_num_threads`.
pub fn current_num_threads() -> usize {
    match WorkerThread::current() {
        Some(w) => w.registry.threads,
        None => global().threads(),
    }
}

/// The index (`0..threads`) of the worker running this code in its runtime, or `None` on a
/// thread that is not a worker. Rayon's `current_thread_index`.
pub fn current_thread_index() -> Option<usize> {
    WorkerThread::current().map(|w| w.index)
}

/// Runs `f` without waiting for it on the current worker's runtime, or, on a thread that is
/// not a worker, on the global runtime; see [`Runtime::spawn`] (a panic in `f` is caught and
/// reported on stderr). The global runtime is never dropped: a job still queued there when
/// the process exits does not run, so wait for what must finish (a channel, a counter).
pub fn spawn(f: impl FnOnce() + Send + 'static) {
    match WorkerThread::current() {
        Some(w) => spawn_in(&w.registry, f),
        None => global().spawn(f),
    }
}

/// A fire-and-forget job: always injected (never onto a worker's own deque), so that the
/// shutdown drain in `main_loop` finds every one that has not run.
fn spawn_in(registry: &Registry, f: impl FnOnce() + Send + 'static) {
    let job = move || {
        if let Err(p) = catch_unwind(AssertUnwindSafe(f)) {
            let msg = p
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| p.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("(a non-string payload)");
            eprintln_best_effort(&format!("taskpools: a spawned job panicked: {msg}"));
            // The payload's own destructor could panic in turn: drop it under a guard, and
            // leak only such a second payload.
            if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(p))) {
                std::mem::forget(again);
            }
        }
    };
    // SAFETY: `f` is `'static`, so it borrows nothing that can go away; the job is injected,
    // and every injected job is executed exactly once: by a worker, or by the shutdown drain
    // of `main_loop` before the workers stop.
    let job = unsafe { job::SpawnJob::into_job_ref(job) };
    registry.inject(job);
}

/// Runs `a` and `b`, potentially in parallel, and returns both results. On a worker it forks
/// onto that worker's runtime; elsewhere it runs on the global runtime (one worker per CPU).
/// A panic in either closure is resumed here after both have finished.
///
/// `a` and `b` must not wait for each other except through fork-join itself: on the default
/// [`Pool::PrivateDeque`], `b` waits in this worker's private deque until the worker reaches a
/// fork or wait, so an `a` that spins until `b` has run must call [`yield_now`] in its loop
/// (which runs `b` here or hands it to a thief). See the module docs, "Progress".
#[inline]
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    match WorkerThread::current() {
        Some(w) => join_on(w, a, b),
        None => join_outside(a, b),
    }
}

/// `join` from a thread that is not a worker: out of line, so that the worker path above stays
/// small enough to be inlined into recursive callers.
#[cold]
#[inline(never)]
fn join_outside<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    global().install(|| join(a, b))
}

#[inline]
fn join_on<A, B, RA, RB>(w: &WorkerThread, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    match &w.deque {
        LocalDeque::Private(p) => join_private(w, p, a, b),
        LocalDeque::ChaseLev(_) => join_chase_lev(w, a, b),
    }
}

/// `join` on a frame stack: the fork is three stores and a poll, the join's check is one load.
#[inline(always)]
fn join_private<A, B, RA, RB>(w: &WorkerThread, p: &PrivateFrames, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let job_b = StackJob::new(b);
    if p.push(job_b.as_job_ref()) && w.registry.threads > 1 {
        w.registry.notify_one();
    }
    p.poll();
    // A panic in `a` is caught so that `b` (which lives in this frame) is finished first.
    let ra = catch_unwind(AssertUnwindSafe(a));
    let rb = if p.take_back(job_b.header()) {
        job_b.run_inline()
    } else {
        join_private_slow(w, p, &job_b)
    };
    match (ra, rb) {
        (Ok(ra), Ok(rb)) => (ra, rb),
        (Err(p), _) | (_, Err(p)) => resume_unwind(p),
    }
}

/// `b` was not simply on top after `a`: a thief took it, or this worker already ran it while
/// it waited inside `a`, or jobs that such a wait left behind (spawns made by a stolen spawn)
/// sit above it. Runs those first, then `b`; or waits for the thief.
#[cold]
#[inline(never)]
fn join_private_slow<F: FnOnce() -> R + Send, R: Send>(
    w: &WorkerThread,
    p: &PrivateFrames,
    job_b: &StackJob<F, R>,
) -> job::Outcome<R> {
    finish_private_join(p, job_b, |done| w.wait_until(done))
}

/// The body of [`join_private_slow`], with the wait for a thief passed in (the loom models
/// wait without a worker).
fn finish_private_join<F: FnOnce() -> R + Send, R: Send>(
    p: &PrivateFrames,
    job_b: &StackJob<F, R>,
    wait: impl FnOnce(&dyn Fn() -> bool),
) -> job::Outcome<R> {
    while job_b.header().state() == job::QUEUED {
        if p.take_back(job_b.header()) {
            return job_b.run_inline();
        }
        // SAFETY: a job above `b` on our own stack; popped, so executed once, here.
        match p.pop() {
            Some(j) => unsafe { j.execute() },
            None => unreachable!("`b` is queued, so the stack is not empty"),
        }
    }
    if !job_b.is_done() {
        wait(&|| job_b.is_done());
    }
    job_b.take_outcome()
}

/// `join` on a Chase–Lev deque.
#[inline]
fn join_chase_lev<A, B, RA, RB>(w: &WorkerThread, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let job_b = StackJob::new(b);
    let b_ref = job_b.as_job_ref();
    w.push(b_ref);
    // A panic in `a` is caught so that `b` (which lives in this frame) is finished first.
    let ra = catch_unwind(AssertUnwindSafe(a));
    // Every job pushed while `a` ran has been popped again (joins pop theirs, scopes wait for
    // theirs), so `b` is on top unless a thief took it (then the deque is empty) or this worker
    // already ran it while waiting inside `a`.
    let rb = loop {
        if job_b.is_done() {
            break job_b.take_outcome();
        }
        match w.pop() {
            Some(j) if j == b_ref => break job_b.run_inline(),
            // SAFETY: a job popped from our deque is executed once, here.
            Some(j) => unsafe { j.execute() },
            None => {
                w.wait_until(|| job_b.is_done());
                break job_b.take_outcome();
            }
        }
    };
    match (ra, rb) {
        (Ok(ra), Ok(rb)) => (ra, rb),
        (Err(p), _) | (_, Err(p)) => resume_unwind(p),
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool as StdBool;

    /// Waits past `MAX_STEALING_WAITS` nested levels do not steal (which bounds the stack);
    /// waits below it do. White-box: the depth is set directly, and the worker's steal rounds
    /// are counted while it waits for a flag that another thread sets.
    #[test]
    fn deep_waits_do_not_steal() {
        for pool in Pool::ALL {
            let rt = Runtime::builder().threads(2).pool(pool).build().unwrap();
            let rounds = |depth: u32| {
                rt.install(|| {
                    let w = WorkerThread::current().expect("on a worker");
                    let flag = StdBool::new(false);
                    let before = w.steal_rounds.get();
                    w.waits.set(depth);
                    std::thread::scope(|s| {
                        s.spawn(|| {
                            std::thread::sleep(std::time::Duration::from_millis(20));
                            flag.store(true, std::sync::atomic::Ordering::Release);
                        });
                        w.wait_until(|| flag.load(std::sync::atomic::Ordering::Acquire));
                    });
                    assert_eq!(w.waits.get(), depth, "the wait restores the depth");
                    w.waits.set(0);
                    w.steal_rounds.get() - before
                })
            };
            assert!(rounds(0) > 0, "{pool}: a shallow wait steals");
            assert_eq!(
                rounds(MAX_STEALING_WAITS),
                0,
                "{pool}: a deep wait must not steal"
            );
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use job::JobHeader;
    use loom::thread;

    /// A worker that finds nothing and goes to sleep while `install` injects a job: whatever
    /// the interleaving, the worker wakes and takes the job.
    fn inject_vs_sleep(broken: bool) {
        let mut builder = loom::model::Builder::new();
        builder.max_branches = 10_000;
        builder.check(move || {
            let table = Arc::clone(StealRequests::<JobRef>::set(1)[0].table());
            #[allow(unused_mut)]
            let mut reg = Registry::new(1, Stealers::Private(table));
            reg.broken_no_recheck = broken;
            let reg = Arc::new(reg);
            let header = Box::leak(Box::new(JobHeader::root()));
            // SAFETY: the header is leaked, so it lives for the whole model; it is only taken
            // from the injector, never run.
            let job = unsafe { JobRef::from_header(header) };
            let taken = Arc::new(AtomicBool::new(false));
            let (r2, t2) = (Arc::clone(&reg), Arc::clone(&taken));
            let worker = thread::spawn(move || loop {
                if let Some(j) = r2.take_injected() {
                    t2.store(true, Ordering::Release);
                    return j;
                }
                r2.sleep_until_work();
            });
            reg.inject(job);
            // Wait by spinning, not by joining: with a lost wake-up the model then reports an
            // endless spin instead of a deadlock of two blocked threads.
            while !taken.load(Ordering::Acquire) {
                thread::yield_now();
            }
            assert_eq!(worker.join().unwrap(), job);
        });
    }

    #[test]
    fn loom_an_injected_job_wakes_a_sleeping_worker() {
        inject_vs_sleep(false);
    }

    /// Test of the test above: without the sleeper's second look for work, loom finds the
    /// lost wake-up.
    #[test]
    #[should_panic(expected = "maximum number of branches")]
    fn loom_finds_the_lost_wakeup_without_the_recheck() {
        inject_vs_sleep(true);
    }
}

/// Writes a line to stderr, ignoring errors (a closed stderr must not turn a diagnostic into
/// a panic inside the runtime).
pub(crate) fn eprintln_best_effort(msg: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{msg}");
}

#[cfg(all(test, not(loom)))]
mod env_tests {
    use super::threads_from_env;

    #[test]
    fn num_threads_env_values() {
        assert_eq!(threads_from_env(None), Ok(None));
        assert_eq!(threads_from_env(Some("")), Ok(None));
        assert_eq!(threads_from_env(Some(" 3 ")), Ok(Some(3)));
        for bad in ["0", "-1", "two", "99999999"] {
            let e = threads_from_env(Some(bad)).unwrap_err();
            assert!(
                e.contains("TASKPOOLS_NUM_THREADS") && e.contains(bad),
                "{e}"
            );
        }
    }
}
