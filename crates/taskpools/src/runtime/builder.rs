//! [`RuntimeBuilder`]: how a [`Runtime`]'s workers are made.

use std::any::Any;
use std::sync::{Arc, Mutex};

use super::handlers::{PanicHandler, WorkerHandler};
use super::{Pool, Runtime, ThreadBuilder, GLOBAL};

/// Builds a [`Runtime`]: thread count, fork-join pool, pinning, stack size, thread names.
///
/// ```
/// use taskpools::forkjoin::{Pool, Runtime};
///
/// let rt = Runtime::builder()
///     .threads(2)
///     .pool(Pool::ChaseLev)
///     .thread_name(|i| format!("worker-{i}"))
///     .build()?;
/// let names = rt.broadcast(|_| std::thread::current().name().unwrap().to_string());
/// assert_eq!(names, ["worker-0", "worker-1"]);
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone)]
pub struct RuntimeBuilder {
    pub(super) threads: usize,
    pub(super) pool: Pool,
    pub(super) pin: bool,
    pub(super) stack_size: Option<usize>,
    pub(super) thread_name: Option<ThreadName>,
    pub(super) serial_elision: bool,
    pub(super) places: Option<crate::places::Places>,
    pub(super) place_policy: crate::places::PlacePolicy,
    /// Whether `threads` was set (it must then agree with the places).
    pub(super) threads_set: bool,
    /// Events per worker's trace buffer (`None`: no trace).
    pub(super) trace: Option<usize>,
    pub(super) panic_handler: Option<PanicHandler>,
    pub(super) start_handler: Option<WorkerHandler>,
    pub(super) exit_handler: Option<WorkerHandler>,
    pub(super) spawn_handler: Option<SpawnHandler>,
    pub(super) use_current_thread: bool,
    pub(super) spin: std::time::Duration,
}

type ThreadName = Arc<dyn Fn(usize) -> String + Send + Sync>;
/// Starts a worker's thread (see [`RuntimeBuilder::spawn_handler`]).
pub(super) type SpawnHandler = Arc<Mutex<dyn FnMut(ThreadBuilder) -> std::io::Result<()> + Send>>;

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("threads", &self.threads)
            .field("pool", &self.pool)
            .field("pin", &self.pin)
            .field("stack_size", &self.stack_size)
            .field("thread_name", &self.thread_name.as_ref().map(|_| "<fn>"))
            .field("serial_elision", &self.serial_elision)
            .field("places", &self.places)
            .field("place_policy", &self.place_policy)
            .field("trace", &self.trace)
            .field(
                "panic_handler",
                &self.panic_handler.as_ref().map(|_| "<fn>"),
            )
            .field(
                "start_handler",
                &self.start_handler.as_ref().map(|_| "<fn>"),
            )
            .field("exit_handler", &self.exit_handler.as_ref().map(|_| "<fn>"))
            .field(
                "spawn_handler",
                &self.spawn_handler.as_ref().map(|_| "<fn>"),
            )
            .field("use_current_thread", &self.use_current_thread)
            .field("spin", &self.spin)
            .finish()
    }
}

impl Default for RuntimeBuilder {
    fn default() -> Self {
        RuntimeBuilder {
            threads: 0,
            pool: Pool::PrivateDeque,
            pin: false,
            stack_size: None,
            thread_name: None,
            serial_elision: true,
            places: None,
            place_policy: Default::default(),
            threads_set: false,
            trace: None,
            panic_handler: None,
            start_handler: None,
            exit_handler: None,
            spawn_handler: None,
            use_current_thread: false,
            spin: super::worker::DEFAULT_SPIN,
        }
    }
}

impl RuntimeBuilder {
    /// Worker threads. 0, the default, means the value of the environment variable
    /// [`TASKPOOLS_NUM_THREADS`](super::NUM_THREADS_ENV) if it holds a valid count, else one
    /// per CPU (as rayon's `num_threads(0)`: configuration files may pass 0 for "the
    /// default"); with [`places`](Self::places), the places' workers. More than
    /// [`MAX_THREADS`](crate::MAX_THREADS) is refused by [`build`](Self::build).
    ///
    /// ```
    /// let rt = taskpools::Runtime::builder().threads(0).build()?;
    /// assert!(rt.threads() >= 1);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n;
        self.threads_set = n != 0;
        self
    }

    /// The work-stealing pool (default [`Pool::PrivateDeque`]).
    ///
    /// ```
    /// use taskpools::forkjoin::{Pool, Runtime};
    ///
    /// let rt = Runtime::builder().threads(2).pool(Pool::ChaseLev).build()?;
    /// assert_eq!(rt.pool(), Pool::ChaseLev);
    /// assert_eq!(rt.join(|| 6, || 7), (6, 7));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn pool(mut self, pool: Pool) -> Self {
        self.pool = pool;
        self
    }

    /// The pool by name or alias (`private-deque`/`acr13`, `chase-lev`/`dcwq`).
    ///
    /// ```
    /// use taskpools::forkjoin::{Pool, Runtime};
    ///
    /// let rt = Runtime::builder().threads(1).pool_name("dcwq")?.build()?;
    /// assert_eq!(rt.pool(), Pool::ChaseLev);
    /// // `dq8` is the task-pool family's private/public pool, not a fork-join deque.
    /// let e = Runtime::builder().pool_name("dq8").unwrap_err();
    /// assert!(matches!(e, taskpools::Error::RenamedPool { new: "private-deque", .. }));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn pool_name(self, name: &str) -> Result<Self, crate::Error> {
        Ok(self.pool(Pool::from_name(name)?))
    }

    /// Pins worker `i` to core `i mod cores` (default off).
    ///
    /// ```
    /// let rt = taskpools::Runtime::builder().threads(2).pin(true).build()?;
    /// assert!(rt.pinned());
    /// assert_eq!(rt.join(|| 1, || 2), (1, 2));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn pin(mut self, pin: bool) -> Self {
        self.pin = pin;
        self
    }

    /// Stack size of each worker thread in bytes (default: the standard library's, 2 MiB).
    /// Deeply recursive jobs need more; stealing while waiting adds at most 32 nested jobs.
    ///
    /// ```
    /// fn depth(n: u64) -> u64 {
    ///     let pad = std::hint::black_box([0u8; 512]); // at least 512 bytes per level
    ///     if n == 0 { pad[0] as u64 } else { 1 + depth(n - 1) }
    /// }
    /// let rt = taskpools::Runtime::builder().threads(1).stack_size(64 << 20).build()?;
    /// // Over 5 MiB deep: more than the default 2 MiB would hold.
    /// assert_eq!(rt.install(|| depth(10_000)), 10_000);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// The name of worker `i`'s thread, as debuggers and `top -H` show it (default
    /// `taskpools-{i}`).
    ///
    /// ```
    /// let rt = taskpools::Runtime::builder()
    ///     .threads(2)
    ///     .thread_name(|i| format!("solver-{i}"))
    ///     .build()?;
    /// let names = rt.broadcast(|_| std::thread::current().name().map(String::from));
    /// assert_eq!(names, [Some("solver-0".into()), Some("solver-1".into())]);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn thread_name(mut self, name: impl Fn(usize) -> String + Send + Sync + 'static) -> Self {
        self.thread_name = Some(Arc::new(name));
        self
    }

    /// Whether a `join` on the default [`Pool::PrivateDeque`] may run its halves as plain
    /// calls once a few jobs wait in the worker's deque (default on; see the
    /// [`forkjoin`](crate::forkjoin) module docs). Off, every join queues its second half, as
    /// before this option existed: joins cost about twice as much on fine-grained recursions,
    /// and an `a` that waits for its `b` while calling
    /// [`yield_now`](crate::forkjoin::yield_now) finishes. Programs that are correct under the
    /// serial elision (as fork-join programs should be) need not touch it.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use taskpools::forkjoin::{self, Runtime};
    ///
    /// let rt = Runtime::builder().threads(1).serial_elision(false).build()?;
    /// fn nest(depth: u32, flag: &AtomicBool) {
    ///     if depth == 0 {
    ///         // `a` waits for `b`: only correct because every `b` is queued here.
    ///         forkjoin::join(
    ///             || while !flag.load(Ordering::Acquire) { forkjoin::yield_now(); },
    ///             || flag.store(true, Ordering::Release),
    ///         );
    ///     } else {
    ///         forkjoin::join(|| nest(depth - 1, flag), || ());
    ///     }
    /// }
    /// rt.install(|| nest(8, &AtomicBool::new(false)));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn serial_elision(mut self, on: bool) -> Self {
        self.serial_elision = on;
        self
    }

    /// Builds the runtime with [places](crate::places): one worker per slot of `places`,
    /// numbered place by place, each pinned to its core (a shape like `2x4` pins only with
    /// [`pin`](Self::pin)); each place gets a shared deque. The thread count comes from the
    /// places; a [`threads`](Self::threads) that disagrees is refused by
    /// [`build`](Self::build).
    ///
    /// ```
    /// use taskpools::places::Places;
    /// let rt = taskpools::Runtime::builder().places(Places::parse("2x1")?).build()?;
    /// assert_eq!((rt.threads(), rt.place_count()), (2, 2));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn places(mut self, places: crate::places::Places) -> Self {
        self.places = Some(places);
        self
    }

    /// How places treat unhinted spawns and each other's work (default: Weibel's design;
    /// see [`PlacePolicy`](crate::places::PlacePolicy)). Ignored without places.
    ///
    /// ```
    /// use taskpools::places::{PlacePolicy, Places, Unhinted};
    ///
    /// let policy = PlacePolicy { unhinted: Unhinted::RoundRobin, ..PlacePolicy::default() };
    /// let rt = taskpools::Runtime::builder()
    ///     .places(Places::parse("2x1")?)
    ///     .place_policy(policy)
    ///     .build()?;
    /// let mut hits = [0u8; 8];
    /// rt.scope(|s| {
    ///     for h in hits.iter_mut() {
    ///         s.spawn(move |_| *h = 1); // unhinted: sent to the places in turn
    ///     }
    /// });
    /// assert_eq!(hits, [1; 8]);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn place_policy(mut self, policy: crate::places::PlacePolicy) -> Self {
        self.place_policy = policy;
        self
    }

    /// Records a schedule trace (see [`trace`](super::trace)): each worker keeps up to
    /// `events_per_worker` events (40 bytes each) and then stops recording, counting what it
    /// drops. Off by default; [`Runtime::take_trace`] collects it. Refused by
    /// [`build`](Self::build) below 16 or above 2^28.
    ///
    /// ```
    /// let rt = taskpools::Runtime::builder().threads(2).trace(1024).build()?;
    /// rt.join(|| (), || ());
    /// let trace = rt.take_trace()?.expect("tracing is on");
    /// assert_eq!(trace.workers, 2);
    /// assert!(trace.jobs() >= 1); // at least the installed join
    /// assert!(taskpools::Runtime::builder().trace(8).build().is_err()); // below 16
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn trace(mut self, events_per_worker: usize) -> Self {
        self.trace = Some(events_per_worker);
        self
    }

    /// Where the panics of fire-and-forget jobs go ([`Runtime::spawn`], `spawn_fifo`,
    /// `spawn_broadcast`, and the free functions of the same names): the payload is handed to
    /// `handler` on the worker that ran the job, which then goes on. Without one, such a
    /// panic is reported with one line on stderr and the worker goes on (rayon aborts the
    /// process instead: a runtime that serves a long-running program should not lose its
    /// workers to one job, and the line says what was lost). A handler that panics is reported
    /// the same way. The panics of jobs that somebody waits for (`join`, `scope`, `install`,
    /// `broadcast`) are resumed in the waiter and never reach the handler.
    ///
    /// ```
    /// use std::sync::mpsc;
    /// let (tx, rx) = mpsc::channel();
    /// let tx = std::sync::Mutex::new(tx);
    /// let rt = taskpools::Runtime::builder()
    ///     .threads(1)
    ///     .panic_handler(move |p| {
    ///         let msg = p.downcast_ref::<&str>().copied().unwrap_or("?");
    ///         tx.lock().unwrap().send(msg.to_string()).unwrap();
    ///     })
    ///     .build()?;
    /// rt.spawn(|| panic!("lost job"));
    /// assert_eq!(rx.recv().unwrap(), "lost job");
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn panic_handler(
        mut self,
        handler: impl Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    ) -> Self {
        self.panic_handler = Some(Arc::new(handler));
        self
    }

    /// Runs `handler(i)` on worker `i`'s thread when it starts, before it takes any work (to
    /// set thread-locals, a thread priority, a profiler's thread name). A panic there is
    /// reported as a fire-and-forget job's ([`panic_handler`](Self::panic_handler)) and the
    /// worker starts anyway.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let started = Arc::new(AtomicUsize::new(0));
    /// let s = Arc::clone(&started);
    /// let rt = taskpools::Runtime::builder()
    ///     .threads(2)
    ///     .start_handler(move |_| { s.fetch_add(1, Ordering::SeqCst); })
    ///     .build()?;
    /// rt.broadcast(|_| ()); // every worker has started once its share ran
    /// assert_eq!(started.load(Ordering::SeqCst), 2);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn start_handler(mut self, handler: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.start_handler = Some(Arc::new(handler));
        self
    }

    /// Runs `handler(i)` on worker `i`'s thread when it leaves, after the runtime's shutdown
    /// (see [`Runtime::shutdown_and_wait`], which returns after every exit handler). A panic
    /// there is reported as a fire-and-forget job's. The handler should not hand the runtime
    /// more work: a job spawned there goes onto the leaving worker's deque, and the other
    /// workers may already have left.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let left = Arc::new(AtomicUsize::new(0));
    /// let l = Arc::clone(&left);
    /// let rt = taskpools::Runtime::builder()
    ///     .threads(3)
    ///     .exit_handler(move |_| { l.fetch_add(1, Ordering::SeqCst); })
    ///     .build()?;
    /// rt.shutdown_and_wait()?;
    /// assert_eq!(left.load(Ordering::SeqCst), 3);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn exit_handler(mut self, handler: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.exit_handler = Some(Arc::new(handler));
        self
    }

    /// Starts each worker's thread with `handler` instead of `std::thread::Builder`: the
    /// handler gets a [`ThreadBuilder`], starts a thread however it likes (its own stack, a
    /// scoped thread-local, a platform's threads) and calls [`ThreadBuilder::run`] on it. An
    /// error it returns fails [`build`](Self::build) (the workers started so far leave). The
    /// runtime keeps no handle of such threads: [`Runtime::shutdown_and_wait`] waits for their
    /// workers to leave, not for the threads to end. (rayon's `spawn_handler`.)
    ///
    /// Every `ThreadBuilder` must be run, soon: until its worker runs, jobs addressed to it (its
    /// share of a broadcast or working phase) wait, and so do their callers. One that is dropped
    /// without running counts as a worker that left (so `shutdown_and_wait` does not wait for
    /// it), but a broadcast on that runtime then waits forever.
    ///
    /// ```
    /// let rt = taskpools::Runtime::builder()
    ///     .threads(2)
    ///     .spawn_handler(|worker| {
    ///         std::thread::Builder::new()
    ///             .stack_size(8 << 20)
    ///             .spawn(move || worker.run())?;
    ///         Ok(())
    ///     })
    ///     .build()?;
    /// assert_eq!(rt.join(|| 1, || 2), (1, 2));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn spawn_handler(
        mut self,
        handler: impl FnMut(ThreadBuilder) -> std::io::Result<()> + Send + 'static,
    ) -> Self {
        self.spawn_handler = Some(Arc::new(Mutex::new(handler)));
        self
    }

    /// Makes the thread that calls [`build`](Self::build) worker 0 of the runtime (rayon's
    /// `use_current_thread`). It does not run the worker loop: it takes part in the runtime's
    /// work when it waits in it (`join`, `scope`, `install`, [`yield_now`](super::yield_now),
    /// [`yield_local`](super::yield_local)), so jobs queued on it are run by the other workers
    /// (which steal them) or when it waits, and jobs addressed to it (its share of a
    /// [`broadcast`](Runtime::broadcast) or working phase from another thread, its
    /// `spawn_broadcast` jobs) wait until it does. Its start and exit handlers do not run and
    /// it is not pinned. [`build`](Self::build) fails with
    /// [`Error::CurrentThreadInRuntime`](crate::Error::CurrentThreadInRuntime) if the thread is
    /// already a worker, and leaves it as it was if the build fails.
    ///
    /// Drop the runtime (or call [`Runtime::shutdown_and_wait`]) on this thread: there, outside
    /// any wait, the drop first runs what is addressed or queued to worker 0 and then ends the
    /// thread's membership, so the thread can be a worker again later. Dropped on another
    /// thread, the runtime leaves this thread a worker of the shut-down runtime, and a job only
    /// it would run keeps the other workers waiting. Either way the worker's state (with the
    /// runtime's registry) is freed when the thread ends, not before: a thread that builds and
    /// drops such runtimes over and over keeps one per runtime until it ends.
    ///
    /// ```
    /// std::thread::spawn(|| {
    ///     let rt = taskpools::Runtime::builder().threads(2).use_current_thread().build()?;
    ///     assert_eq!(taskpools::current_thread_index(), Some(0));
    ///     assert_eq!(rt.current_thread_index(), Some(0));
    ///     let (a, b) = taskpools::forkjoin::join(|| 1, || 2); // forks here, worker 1 may steal
    ///     assert_eq!(a + b, 3);
    ///     Ok::<(), taskpools::Error>(())
    /// })
    /// .join()
    /// .unwrap()?;
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn use_current_thread(mut self) -> Self {
        self.use_current_thread = true;
        self
    }

    /// How long a worker that finds no work keeps looking (stealing, with a `yield` between
    /// looks) before it sleeps; default 20 µs. A program that hands the runtime bursts of work
    /// with pauses in between pays this much CPU per worker after each burst; a longer budget
    /// keeps workers awake across short gaps in a computation (a sleeping worker takes tens of
    /// microseconds to wake), a shorter one, down to zero, saves CPU between bursts.
    /// [`Runtime::spin_budget`] reports it.
    ///
    /// ```
    /// use std::time::Duration;
    /// let rt = taskpools::Runtime::builder().threads(2).spin(Duration::from_micros(10)).build()?;
    /// assert_eq!(rt.spin_budget(), Duration::from_micros(10));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn spin(mut self, budget: std::time::Duration) -> Self {
        self.spin = budget;
        self
    }

    /// Starts the workers.
    ///
    /// ```
    /// use taskpools::{Error, Runtime, MAX_THREADS};
    ///
    /// let rt = Runtime::builder().threads(2).build()?;
    /// assert_eq!(rt.threads(), 2);
    /// let e = Runtime::builder().threads(MAX_THREADS + 1).build().unwrap_err();
    /// assert!(matches!(e, Error::TooManyThreads { .. }));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn build(self) -> Result<Runtime, crate::Error> {
        Runtime::start(self, None)
    }

    /// Builds the runtime with `spawn` starting each worker's thread, as
    /// [`spawn_handler`](Self::spawn_handler) does, for a handler that is not `Send` or not
    /// `'static` (it is used only during the build).
    ///
    /// ```
    /// use std::thread::JoinHandle;
    ///
    /// // The handler borrows `handles` (so it is not `'static`); the caller joins them.
    /// let mut handles: Vec<JoinHandle<()>> = Vec::new();
    /// let rt = taskpools::Runtime::builder().threads(2).build_with_spawn_handler(|worker| {
    ///     handles.push(std::thread::Builder::new().spawn(move || worker.run())?);
    ///     Ok(())
    /// })?;
    /// assert_eq!(rt.join(|| 1, || 2), (1, 2));
    /// rt.shutdown_and_wait()?;
    /// for h in handles {
    ///     h.join().unwrap();
    /// }
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn build_with_spawn_handler(
        self,
        mut spawn: impl FnMut(ThreadBuilder) -> std::io::Result<()>,
    ) -> Result<Runtime, crate::Error> {
        Runtime::start(self, Some(&mut spawn))
    }

    /// Builds a runtime whose worker threads are scoped threads of this call (rayon's
    /// `build_scoped`): each worker runs `wrapper(thread_builder)` on its thread, and `wrapper`
    /// must call [`ThreadBuilder::run`] (around it, it may set up what the worker's thread
    /// needs, such as a scoped thread-local). `with_runtime` then runs with the runtime; when
    /// it returns, the runtime shuts down and this call returns once every worker thread has
    /// ended, so the workers may borrow from the caller's stack.
    ///
    /// ```
    /// let answer = 42;
    /// let seen = taskpools::Runtime::builder().threads(2).build_scoped(
    ///     |worker| { let _borrowed = &answer; worker.run() },
    ///     |rt| rt.join(|| answer, || answer + 1),
    /// )?;
    /// assert_eq!(seen, (42, 43));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn build_scoped<W, F, R>(self, wrapper: W, with_runtime: F) -> Result<R, crate::Error>
    where
        W: Fn(ThreadBuilder) + Sync,
        F: FnOnce(&Runtime) -> R,
    {
        std::thread::scope(|s| {
            let wrapper = &wrapper;
            let rt = self.build_with_spawn_handler(|worker| {
                let mut b = std::thread::Builder::new();
                if let Some(name) = worker.name() {
                    b = b.name(name.to_string());
                }
                if let Some(bytes) = worker.stack_size() {
                    b = b.stack_size(bytes);
                }
                b.spawn_scoped(s, move || wrapper(worker))?;
                Ok(())
            })?;
            let r = with_runtime(&rt);
            // The scope joins the worker threads once they have left (the drop signals it).
            drop(rt);
            Ok(r)
        })
    }

    /// Builds the global runtime, the one that [`join`](crate::forkjoin::join),
    /// [`scope`](crate::forkjoin::scope), [`spawn`](crate::forkjoin::spawn) and
    /// [`current_num_threads`](crate::current_num_threads) use outside a worker. Fails with
    /// [`Error::GlobalExists`](crate::Error::GlobalExists) if the global runtime already
    /// exists (built here before, or created on first use); call it early in `main`.
    ///
    /// ```
    /// use taskpools::{forkjoin, Error, Runtime};
    ///
    /// Runtime::builder().threads(2).build_global()?;
    /// assert_eq!(forkjoin::current_num_threads(), 2);
    /// assert!(matches!(Runtime::builder().build_global(), Err(Error::GlobalExists)));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn build_global(self) -> Result<(), crate::Error> {
        self.start_global(None)
    }

    /// [`build_global`](Self::build_global) with `spawn` starting each worker's thread, as
    /// [`build_with_spawn_handler`](Self::build_with_spawn_handler) does, for a handler that is
    /// not `Send` or not `'static` (rayon's `build_global` on a builder with a
    /// `spawn_handler`). Fails with [`Error::GlobalExists`](crate::Error::GlobalExists) before
    /// calling `spawn` if the global runtime already exists.
    ///
    /// ```no_run
    /// let names = ["first", "second"];
    /// taskpools::Runtime::builder()
    ///     .threads(2)
    ///     .build_global_with_spawn_handler(|worker| {
    ///         std::thread::Builder::new()
    ///             .name(names[worker.index()].to_string())
    ///             .spawn(move || worker.run())?;
    ///         Ok(())
    ///     })?;
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn build_global_with_spawn_handler(
        self,
        mut spawn: impl FnMut(ThreadBuilder) -> std::io::Result<()>,
    ) -> Result<(), crate::Error> {
        self.start_global(Some(&mut spawn))
    }

    fn start_global(
        self,
        spawn: Option<&mut dyn FnMut(ThreadBuilder) -> std::io::Result<()>>,
    ) -> Result<(), crate::Error> {
        if GLOBAL.get().is_some() {
            return Err(crate::Error::GlobalExists);
        }
        let rt = Runtime::start(self, spawn)?;
        // Another thread may have won the race meanwhile: then `rt` is dropped (its workers
        // stop) and the caller learns that the global runtime was not this one.
        GLOBAL.set(rt).map_err(|_| crate::Error::GlobalExists)
    }
}
