//! [`ThreadPoolBuildError`]: why a pool, or the global pool, was not built.

use std::error::Error;
use std::fmt;
use std::io;

/// Why [`ThreadPoolBuilder::build`](crate::ThreadPoolBuilder::build) or
/// [`build_global`](crate::ThreadPoolBuilder::build_global) failed.
///
/// ```
/// # use rayon_core as rayon;
/// let first = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
/// let second = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
/// assert!(first.is_ok());
/// let e = second.unwrap_err();
/// assert!(e.to_string().contains("global thread pool"), "{e}");
/// ```
#[derive(Debug)]
pub struct ThreadPoolBuildError {
    kind: ErrorKind,
}

#[derive(Debug)]
enum ErrorKind {
    /// `build_global` after the global pool was built (or first used).
    GlobalPoolAlreadyInitialized,
    /// `use_current_thread` on a thread that is already a worker.
    CurrentThreadAlreadyInPool,
    /// The operating system (or the spawn handler) refused a worker thread.
    IOError(io::Error),
    /// Anything else the runtime refused, with its own message.
    Runtime(taskpools::Error),
}

impl From<taskpools::Error> for ThreadPoolBuildError {
    fn from(e: taskpools::Error) -> Self {
        let kind = match e {
            taskpools::Error::GlobalExists => ErrorKind::GlobalPoolAlreadyInitialized,
            taskpools::Error::CurrentThreadInRuntime => ErrorKind::CurrentThreadAlreadyInPool,
            taskpools::Error::Spawn(io) => ErrorKind::IOError(io),
            other => ErrorKind::Runtime(other),
        };
        ThreadPoolBuildError { kind }
    }
}

impl fmt::Display for ThreadPoolBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::GlobalPoolAlreadyInitialized => f.write_str(
                "the global thread pool already exists: build_global must be called once, \
                 before the global pool is first used",
            ),
            ErrorKind::CurrentThreadAlreadyInPool => f.write_str(
                "use_current_thread: this thread is already a worker of a thread pool, so it \
                 cannot join another one",
            ),
            ErrorKind::IOError(e) => e.fmt(f),
            ErrorKind::Runtime(e) => e.fmt(f),
        }
    }
}

impl Error for ThreadPoolBuildError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match &self.kind {
            ErrorKind::IOError(e) => Some(e),
            ErrorKind::Runtime(e) => Some(e),
            ErrorKind::GlobalPoolAlreadyInitialized | ErrorKind::CurrentThreadAlreadyInPool => None,
        }
    }
}
