//! The threads a pool's workers run on: [`ThreadBuilder`], the handle a spawn handler gets for
//! each worker, and the builder's `S` parameter ([`DefaultSpawn`], [`CustomSpawn`]), which
//! decides how each worker's thread is started.
//!
//! The runtime itself starts no thread here: every pool is built through
//! `taskpools::RuntimeBuilder::build_with_spawn_handler`, and the handler is `S`. So the default
//! starts the threads as rayon does (named only if `thread_name` was given), and a custom
//! handler sees exactly the [`ThreadBuilder`]s rayon's would.

use std::fmt;
use std::io;

/// One worker of a pool being built, handed to the spawn handler
/// ([`ThreadPoolBuilder::spawn_handler`](crate::ThreadPoolBuilder::spawn_handler)), which
/// starts a thread and calls [`run`](Self::run) on it.
pub struct ThreadBuilder {
    inner: taskpools::ThreadBuilder,
    name: Option<String>,
}

impl ThreadBuilder {
    pub(crate) fn new(inner: taskpools::ThreadBuilder, name: Option<String>) -> Self {
        ThreadBuilder { inner, name }
    }

    /// The worker's index in its pool, in `0..num_threads`.
    pub fn index(&self) -> usize {
        self.inner.index()
    }

    /// The name that [`ThreadPoolBuilder::thread_name`](crate::ThreadPoolBuilder::thread_name)
    /// gave this worker, or `None` if the builder was given no names.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The stack size set with
    /// [`ThreadPoolBuilder::stack_size`](crate::ThreadPoolBuilder::stack_size), if any.
    pub fn stack_size(&self) -> Option<usize> {
        self.inner.stack_size()
    }

    /// Makes the calling thread this worker: it takes part in the pool's work and returns once
    /// the pool has been dropped and every job spawned into it has finished.
    ///
    /// # Panics
    /// If the calling thread is already a worker of a pool.
    pub fn run(self) {
        self.inner.run()
    }
}

impl fmt::Debug for ThreadBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadBuilder")
            .field("index", &self.index())
            .field("name", &self.name)
            .field("stack_size", &self.stack_size())
            .finish()
    }
}

mod sealed {
    /// Keeps [`ThreadSpawn`](super::ThreadSpawn) implemented by this crate's types only.
    pub trait Sealed {}
}

/// How a pool's worker threads are started: the `S` of
/// [`ThreadPoolBuilder<S>`](crate::ThreadPoolBuilder). Public only because it appears in the
/// builder's bounds; it is sealed and cannot be named from outside this crate.
pub trait ThreadSpawn: sealed::Sealed {
    /// Starts a thread that calls `thread.run()`.
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<()>;
}

/// The builder's default way of starting a worker: a `std::thread::Builder` with the name and
/// stack size asked for.
#[derive(Debug, Default)]
pub struct DefaultSpawn;

impl sealed::Sealed for DefaultSpawn {}

impl ThreadSpawn for DefaultSpawn {
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<()> {
        let mut b = std::thread::Builder::new();
        if let Some(name) = thread.name() {
            b = b.name(name.to_owned());
        }
        if let Some(bytes) = thread.stack_size() {
            b = b.stack_size(bytes);
        }
        // Detached, as rayon's: the pool's drop does not wait for its threads.
        b.spawn(move || thread.run())?;
        Ok(())
    }
}

/// A worker started by the caller's closure
/// ([`ThreadPoolBuilder::spawn_handler`](crate::ThreadPoolBuilder::spawn_handler)).
#[derive(Debug)]
pub struct CustomSpawn<F>(pub(crate) F);

impl<F> sealed::Sealed for CustomSpawn<F> where F: FnMut(ThreadBuilder) -> io::Result<()> {}

impl<F> ThreadSpawn for CustomSpawn<F>
where
    F: FnMut(ThreadBuilder) -> io::Result<()>,
{
    fn spawn(&mut self, thread: ThreadBuilder) -> io::Result<()> {
        (self.0)(thread)
    }
}
