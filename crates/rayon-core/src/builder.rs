//! [`ThreadPoolBuilder`]: rayon's pool options, turned into a `taskpools::RuntimeBuilder`.
//!
//! Every option maps onto the runtime's own: the thread count (resolved here, from
//! `RAYON_NUM_THREADS` as rayon does), the handlers, the stack size and `use_current_thread`.
//! Thread names and the spawn handler stay on this side: the runtime is always built with
//! `build_with_spawn_handler`, and the handler given to it names each worker and hands it to
//! `S` (see `thread.rs`). The only policy added here is rayon's for panics nobody can catch:
//! without a `panic_handler`, the process aborts (see [`ThreadPoolBuilder::panic_handler`]).

use std::any::Any;
use std::fmt;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::thread::{CustomSpawn, DefaultSpawn, ThreadSpawn};
use crate::{ThreadBuilder, ThreadPool, ThreadPoolBuildError};

type PanicHandler = dyn Fn(Box<dyn Any + Send>) + Send + Sync;
type WorkerHandler = dyn Fn(usize) + Send + Sync;

/// Builds a [`ThreadPool`], or configures the global pool with
/// [`build_global`](Self::build_global).
///
/// ```
/// # use rayon_core as rayon;
/// let pool = rayon::ThreadPoolBuilder::new()
///     .num_threads(2)
///     .thread_name(|i| format!("worker-{i}"))
///     .build()?;
/// let names = pool.broadcast(|_| std::thread::current().name().map(str::to_owned));
/// assert_eq!(names, [Some("worker-0".to_owned()), Some("worker-1".to_owned())]);
/// # Ok::<(), rayon::ThreadPoolBuildError>(())
/// ```
pub struct ThreadPoolBuilder<S = DefaultSpawn> {
    num_threads: usize,
    use_current_thread: bool,
    panic_handler: Option<Box<PanicHandler>>,
    thread_name: Option<Box<dyn FnMut(usize) -> String>>,
    stack_size: Option<usize>,
    start_handler: Option<Box<WorkerHandler>>,
    exit_handler: Option<Box<WorkerHandler>>,
    spawn_handler: S,
    breadth_first: bool,
}

impl Default for ThreadPoolBuilder {
    fn default() -> Self {
        ThreadPoolBuilder {
            num_threads: 0,
            use_current_thread: false,
            panic_handler: None,
            thread_name: None,
            stack_size: None,
            start_handler: None,
            exit_handler: None,
            spawn_handler: DefaultSpawn,
            breadth_first: false,
        }
    }
}

impl ThreadPoolBuilder {
    /// A builder with every option at its default: one worker per CPU (or
    /// `RAYON_NUM_THREADS`), unnamed threads, no handlers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds a pool whose workers are scoped threads of this call
    /// ([`std::thread::scope`]): each worker's thread runs `wrapper(thread)`, which must call
    /// [`ThreadBuilder::run`] (and may set up around it what the thread needs, such as a
    /// scoped thread-local); then `with_pool` runs with the pool. When it returns, the pool is
    /// dropped and this call returns once every worker thread has ended, so `wrapper` may
    /// borrow from the caller.
    ///
    /// ```
    /// # use rayon_core as rayon;
    /// let shared = vec![1, 2, 3];
    /// let total = rayon::ThreadPoolBuilder::new().num_threads(2).build_scoped(
    ///     |thread| {
    ///         assert_eq!(shared.len(), 3); // borrowed by every worker thread
    ///         thread.run()
    ///     },
    ///     |pool| pool.install(|| shared.iter().sum::<i32>()),
    /// )?;
    /// assert_eq!(total, 6);
    /// # Ok::<(), rayon::ThreadPoolBuildError>(())
    /// ```
    pub fn build_scoped<W, F, R>(self, wrapper: W, with_pool: F) -> Result<R, ThreadPoolBuildError>
    where
        W: Fn(ThreadBuilder) + Sync,
        F: FnOnce(&ThreadPool) -> R,
    {
        std::thread::scope(|scope| {
            let wrapper = &wrapper;
            let pool = self
                .spawn_handler(|thread| {
                    let mut b = std::thread::Builder::new();
                    if let Some(name) = thread.name() {
                        b = b.name(name.to_owned());
                    }
                    if let Some(bytes) = thread.stack_size() {
                        b = b.stack_size(bytes);
                    }
                    b.spawn_scoped(scope, move || wrapper(thread))?;
                    Ok(())
                })
                .build()?;
            let r = with_pool(&pool);
            // The workers leave once the pool is dropped; the scope then joins their threads.
            drop(pool);
            Ok(r)
        })
    }
}

impl<S> ThreadPoolBuilder<S>
where
    S: ThreadSpawn,
{
    /// Builds a new pool with these options.
    ///
    /// # Errors
    /// [`ThreadPoolBuildError`]: a worker thread could not be started (the spawn handler's
    /// error), or `use_current_thread` was asked on a thread that is already a worker.
    pub fn build(self) -> Result<ThreadPool, ThreadPoolBuildError> {
        Ok(ThreadPool::from_runtime(self.build_runtime()?))
    }

    /// Builds the global pool with these options: the pool that [`join`](crate::join()),
    /// [`scope`](crate::scope()), [`spawn`](crate::spawn()), parallel iterators and the rest
    /// use on a thread that is not a worker. Optional; without it the global pool is built
    /// with the default options when it is first used. It can be built once: a second call, or
    /// a call after the global pool's first use, fails with an error that says so.
    ///
    /// The global pool is `taskpools`' global runtime, so code that uses `taskpools` directly
    /// shares it; if that code created it first, this fails the same way.
    pub fn build_global(self) -> Result<(), ThreadPoolBuildError> {
        self.with_runtime_builder(|b, spawn| b.build_global_with_spawn_handler(spawn))
            .map_err(ThreadPoolBuildError::from)
    }

    /// The runtime these options describe.
    pub(crate) fn build_runtime(self) -> Result<taskpools::Runtime, taskpools::Error> {
        self.with_runtime_builder(|b, spawn| b.build_with_spawn_handler(spawn))
    }

    /// Turns these options into a runtime builder and hands it, with a spawn handler that
    /// names each worker and starts it through `S`, to `build`.
    fn with_runtime_builder<T>(
        self,
        build: impl FnOnce(
            taskpools::RuntimeBuilder,
            &mut dyn FnMut(taskpools::ThreadBuilder) -> io::Result<()>,
        ) -> Result<T, taskpools::Error>,
    ) -> Result<T, taskpools::Error> {
        let ThreadPoolBuilder {
            num_threads,
            use_current_thread,
            panic_handler,
            mut thread_name,
            stack_size,
            start_handler,
            exit_handler,
            mut spawn_handler,
            breadth_first: _,
        } = self;
        let mut b = taskpools::Runtime::builder()
            .threads(resolve_num_threads(num_threads))
            .pool(rayon_pool()?)
            .panic_handler(panic_policy(panic_handler));
        if let Some(bytes) = stack_size {
            b = b.stack_size(bytes);
        }
        if let Some(h) = start_handler {
            b = b.start_handler(h);
        }
        if let Some(h) = exit_handler {
            b = b.exit_handler(h);
        }
        if use_current_thread {
            b = b.use_current_thread();
        }
        let mut spawn = |worker: taskpools::ThreadBuilder| {
            let name = thread_name.as_mut().map(|f| f(worker.index()));
            spawn_handler.spawn(ThreadBuilder::new(worker, name))
        };
        build(b, &mut spawn)
    }
}

/// What happens to a panic that no caller can receive (a spawned job's, a handler's): the
/// user's handler gets it; without one, or if the handler panics in turn, the process aborts,
/// as rayon's documentation says.
fn panic_policy(
    handler: Option<Box<PanicHandler>>,
) -> impl Fn(Box<dyn Any + Send>) + Send + Sync + 'static {
    move |payload| {
        let handled = match &handler {
            Some(h) => catch_unwind(AssertUnwindSafe(|| h(payload))).is_ok(),
            None => false,
        };
        if !handled {
            let _ = writeln_stderr(if handler.is_some() {
                "rayon-core: the thread pool's panic_handler panicked; aborting"
            } else {
                "rayon-core: a job panicked where no caller can receive the panic and the \
                 thread pool has no panic_handler; aborting"
            });
            std::process::abort();
        }
    }
}

fn writeln_stderr(msg: &str) -> io::Result<()> {
    use std::io::Write;
    writeln!(io::stderr().lock(), "{msg}")
}

/// The worker count for `num_threads(n)`: `n` if it is not 0; else `RAYON_NUM_THREADS`, else
/// the older `RAYON_RS_NUM_CPUS`, if one holds a count above 0; else 0, which lets the runtime
/// choose (`TASKPOOLS_NUM_THREADS` if set, else one per CPU). Capped at
/// [`max_num_threads`](crate::max_num_threads), as rayon caps it.
fn resolve_num_threads(n: usize) -> usize {
    let from_env = |var: &str| {
        std::env::var(var)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
    };
    let n = if n > 0 {
        n
    } else {
        match from_env("RAYON_NUM_THREADS") {
            Some(n) if n > 0 => n,
            // 0 means "the default", and hides the older variable.
            Some(_) => 0,
            None => from_env("RAYON_RS_NUM_CPUS").unwrap_or(0),
        }
    };
    n.min(crate::max_num_threads())
}

impl<S> ThreadPoolBuilder<S> {
    /// Starts each worker's thread with `spawn` instead of `std::thread::Builder`: it gets a
    /// [`ThreadBuilder`] per worker and must start a thread that calls
    /// [`ThreadBuilder::run`] (or return the error that prevented it, which fails the build).
    /// The handler is used only while the pool is built, so it may borrow from the caller;
    /// the threads it starts stay until the pool is dropped and its jobs have finished.
    ///
    /// ```
    /// # use rayon_core as rayon;
    /// let pool = rayon::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .spawn_handler(|thread| {
    ///         std::thread::Builder::new()
    ///             .stack_size(4 << 20)
    ///             .spawn(move || thread.run())?;
    ///         Ok(())
    ///     })
    ///     .build()?;
    /// assert_eq!(pool.install(|| rayon::current_num_threads()), 2);
    /// # Ok::<(), rayon::ThreadPoolBuildError>(())
    /// ```
    pub fn spawn_handler<F>(self, spawn: F) -> ThreadPoolBuilder<CustomSpawn<F>>
    where
        F: FnMut(ThreadBuilder) -> io::Result<()>,
    {
        ThreadPoolBuilder {
            num_threads: self.num_threads,
            use_current_thread: self.use_current_thread,
            panic_handler: self.panic_handler,
            thread_name: self.thread_name,
            stack_size: self.stack_size,
            start_handler: self.start_handler,
            exit_handler: self.exit_handler,
            spawn_handler: CustomSpawn(spawn),
            breadth_first: self.breadth_first,
        }
    }

    /// Names worker `i`'s thread `closure(i)`. Without it, worker threads have no name.
    pub fn thread_name<F>(mut self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.thread_name = Some(Box::new(closure));
        self
    }

    /// The number of worker threads. 0, the default, means `RAYON_NUM_THREADS` if it holds a
    /// count above 0 (else the older `RAYON_RS_NUM_CPUS`), else the runtime's default:
    /// `TASKPOOLS_NUM_THREADS` if set, else one per CPU. Counts above
    /// [`max_num_threads`](crate::max_num_threads) are lowered to it.
    pub fn num_threads(mut self, num_threads: usize) -> Self {
        self.num_threads = num_threads;
        self
    }

    /// Makes the thread that builds the pool its worker 0. The thread does not run a worker
    /// loop: it takes part in the pool's work when it waits in it (`join`, `scope`,
    /// `install`, [`yield_now`](crate::yield_now), [`yield_local`](crate::yield_local)), so
    /// jobs queued on it are run by the other workers, or when it waits. The start and exit
    /// handlers do not run for it. Drop the pool on this thread to release it (see
    /// `taskpools::RuntimeBuilder::use_current_thread`).
    pub fn use_current_thread(mut self) -> Self {
        self.use_current_thread = true;
        self
    }

    /// Where a panic goes that no caller can receive: one in a job started with
    /// [`spawn`](crate::spawn()), [`spawn_fifo`](crate::spawn_fifo()) or
    /// [`spawn_broadcast`](crate::spawn_broadcast()), or in the start or exit handler. The
    /// handler gets the payload on the worker where it happened, which then goes on. Without a
    /// handler the process aborts, and so it does if the handler panics in turn. (Panics in
    /// `join`, `scope`, `install` and `broadcast` are resumed in their caller instead.)
    ///
    /// ```
    /// # use rayon_core as rayon;
    /// use std::sync::mpsc;
    /// let (tx, rx) = mpsc::channel();
    /// let tx = std::sync::Mutex::new(tx);
    /// let pool = rayon::ThreadPoolBuilder::new()
    ///     .num_threads(1)
    ///     .panic_handler(move |_| tx.lock().unwrap().send("caught").unwrap())
    ///     .build()?;
    /// pool.spawn(|| panic!("a spawned job"));
    /// assert_eq!(rx.recv().unwrap(), "caught");
    /// # Ok::<(), rayon::ThreadPoolBuildError>(())
    /// ```
    pub fn panic_handler<H>(mut self, panic_handler: H) -> Self
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.panic_handler = Some(Box::new(panic_handler));
        self
    }

    /// The stack size of each worker thread, in bytes (default: the standard library's).
    pub fn stack_size(mut self, stack_size: usize) -> Self {
        self.stack_size = Some(stack_size);
        self
    }

    /// Accepted and ignored: the runtime has no breadth-first mode for a worker's own jobs.
    /// rayon calls the option a hint and deprecates it; [`scope_fifo`](crate::scope_fifo) and
    /// [`spawn_fifo`](crate::spawn_fifo()) give jobs in spawn order.
    #[deprecated(note = "use `scope_fifo` and `spawn_fifo` for similar effect")]
    pub fn breadth_first(mut self) -> Self {
        self.breadth_first = true;
        self
    }

    /// Runs `start_handler(i)` on worker `i`'s thread when it starts, before it takes any
    /// work. A panic there goes to the [`panic_handler`](Self::panic_handler); if that
    /// returns, the worker starts normally.
    pub fn start_handler<H>(mut self, start_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.start_handler = Some(Box::new(start_handler));
        self
    }

    /// Runs `exit_handler(i)` on worker `i`'s thread when it leaves, after the pool was
    /// dropped and its jobs have finished. A panic there goes to the
    /// [`panic_handler`](Self::panic_handler).
    pub fn exit_handler<H>(mut self, exit_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.exit_handler = Some(Box::new(exit_handler));
        self
    }
}

impl<S> fmt::Debug for ThreadPoolBuilder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = |b: bool| if b { Some("<closure>") } else { None };
        f.debug_struct("ThreadPoolBuilder")
            .field("num_threads", &self.num_threads)
            .field("use_current_thread", &self.use_current_thread)
            .field("thread_name", &set(self.thread_name.is_some()))
            .field("panic_handler", &set(self.panic_handler.is_some()))
            .field("stack_size", &self.stack_size)
            .field("start_handler", &set(self.start_handler.is_some()))
            .field("exit_handler", &set(self.exit_handler.is_some()))
            .field("breadth_first", &self.breadth_first)
            .finish()
    }
}

/// The pool options under their old name; use [`ThreadPoolBuilder`].
#[deprecated(note = "Use `ThreadPoolBuilder`")]
#[derive(Default)]
pub struct Configuration {
    builder: ThreadPoolBuilder,
}

#[allow(deprecated)]
impl Configuration {
    /// [`ThreadPoolBuilder::new`].
    pub fn new() -> Configuration {
        Configuration::default()
    }

    /// [`ThreadPoolBuilder::build`], with the error boxed.
    pub fn build(self) -> Result<ThreadPool, Box<dyn std::error::Error + 'static>> {
        Ok(self.builder.build()?)
    }

    /// [`ThreadPoolBuilder::thread_name`].
    pub fn thread_name<F>(mut self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.builder = self.builder.thread_name(closure);
        self
    }

    /// [`ThreadPoolBuilder::num_threads`].
    pub fn num_threads(mut self, num_threads: usize) -> Configuration {
        self.builder = self.builder.num_threads(num_threads);
        self
    }

    /// [`ThreadPoolBuilder::panic_handler`].
    pub fn panic_handler<H>(mut self, panic_handler: H) -> Configuration
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.builder = self.builder.panic_handler(panic_handler);
        self
    }

    /// [`ThreadPoolBuilder::stack_size`].
    pub fn stack_size(mut self, stack_size: usize) -> Self {
        self.builder = self.builder.stack_size(stack_size);
        self
    }

    /// [`ThreadPoolBuilder::breadth_first`] (no effect).
    pub fn breadth_first(mut self) -> Self {
        self.builder = self.builder.breadth_first();
        self
    }

    /// [`ThreadPoolBuilder::start_handler`].
    pub fn start_handler<H>(mut self, start_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.builder = self.builder.start_handler(start_handler);
        self
    }

    /// [`ThreadPoolBuilder::exit_handler`].
    pub fn exit_handler<H>(mut self, exit_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.builder = self.builder.exit_handler(exit_handler);
        self
    }

    pub(crate) fn into_builder(self) -> ThreadPoolBuilder {
        self.builder
    }
}

#[allow(deprecated)]
impl fmt::Debug for Configuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.builder.fmt(f)
    }
}

/// [`ThreadPoolBuilder::build_global`] with a [`Configuration`], the error boxed.
#[deprecated(note = "use `ThreadPoolBuilder::build_global`")]
#[allow(deprecated)]
pub fn initialize(config: Configuration) -> Result<(), Box<dyn std::error::Error>> {
    Ok(config.into_builder().build_global()?)
}

/// The environment variable that picks the deque of every pool this crate builds (the global
/// one too): a `taskpools::forkjoin::Pool` name, `chase-lev` (the default) or
/// `private-deque`.
pub(crate) const POOL_ENV: &str = "TASKPOOLS_RAYON_POOL";

/// The runtime's pool for rayon's pools: Chase–Lev unless [`POOL_ENV`] names another.
///
/// Chase–Lev is rayon's own model: every join queues `oper_b` where any idle worker takes it
/// at once. rayon's iterators cut their input into as many pieces as their splitter asks for
/// (`current_num_threads()` to start with, more for each piece that migrated) and run each
/// piece as one long fold that forks no more. The runtime's default private deque hands a
/// queued half to a thief only when its owner reaches a fork, which such a fold does not
/// reach until it ends, and runs joins serially beyond its first few queued ones: at 16
/// threads on a 16-core machine, parallel iterators took about twice stock rayon's time on it
/// (docs/iter.md).
/// An empty value counts as unset; an unknown name is an error that names the variable.
fn rayon_pool() -> Result<taskpools::forkjoin::Pool, taskpools::Error> {
    let name = match std::env::var(POOL_ENV) {
        Ok(name) => name,
        Err(std::env::VarError::NotUnicode(name)) => name.to_string_lossy().into_owned(),
        Err(std::env::VarError::NotPresent) => String::new(),
    };
    let name = name.trim();
    if name.is_empty() {
        return Ok(taskpools::forkjoin::Pool::ChaseLev);
    }
    taskpools::forkjoin::Pool::from_name(name).map_err(|e| match e {
        taskpools::Error::UnknownPool { name, known } => taskpools::Error::UnknownPool {
            // "unknown pool `TASKPOOLS_RAYON_POOL=…`; known pools: …"
            name: format!("{POOL_ENV}={name}"),
            known,
        },
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::resolve_num_threads;

    #[test]
    fn explicit_counts_are_kept_up_to_the_maximum() {
        assert_eq!(resolve_num_threads(3), 3);
        assert_eq!(
            resolve_num_threads(usize::MAX),
            crate::max_num_threads(),
            "rayon lowers a larger count to the maximum"
        );
    }
}
