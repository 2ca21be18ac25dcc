//! How a step of the blocked kernels opens its scope on each runtime compared (ours with
//! `scope` or `scope_fifo`, rayon's, or inline for the sequential versions), and the raw
//! view the spawns write through.

/// A raw view of a row-major `f64` array, for spawns that write disjoint parts of it.
#[derive(Clone, Copy)]
pub(super) struct View {
    pub(super) ptr: *mut f64,
    pub(super) stride: usize,
}
// SAFETY: spawns given a `View` write only elements no other running spawn reads or writes
// (their own block), and read only elements no running spawn writes (the other grid).
unsafe impl Send for View {}
// SAFETY: as above.
unsafe impl Sync for View {}

/// The spawning side of a scope, for the runtimes compared.
pub(super) trait Spawner<'s>: Sync {
    fn spawn_job(&self, f: impl FnOnce() + Send + 's);
}
impl<'s> Spawner<'s> for taskpools::forkjoin::Scope<'s> {
    fn spawn_job(&self, f: impl FnOnce() + Send + 's) {
        self.spawn(move |_| f());
    }
}
impl<'s> Spawner<'s> for rayon::Scope<'s> {
    fn spawn_job(&self, f: impl FnOnce() + Send + 's) {
        self.spawn(move |_| f());
    }
}
impl<'s> Spawner<'s> for rayon::ScopeFifo<'s> {
    fn spawn_job(&self, f: impl FnOnce() + Send + 's) {
        self.spawn_fifo(move |_| f());
    }
}
/// Runs spawns at once (the sequential blocked version).
pub(super) struct Inline;
impl<'s> Spawner<'s> for Inline {
    fn spawn_job(&self, f: impl FnOnce() + Send + 's) {
        f()
    }
}

/// How a step opens its scope.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Rt {
    Sequential,
    /// Sequential, but in blocks in spawn order (the Jacobi baseline that prices blocking
    /// itself; for the LU the sequential code is blocked already).
    SequentialBlocked,
    Ours {
        pool: usize,
        fifo: bool,
    },
    Rayon {
        fifo: bool,
    },
}

/// Opens a scope of runtime `rt` around `body` (which gets a spawner), on the current thread
/// (the caller is inside that runtime's `install`).
macro_rules! with_scope {
    ($rt:expr, |$s:ident| $body:expr) => {
        match $rt {
            Rt::Sequential | Rt::SequentialBlocked => {
                let $s = &Inline;
                $body
            }
            Rt::Ours { fifo: false, .. } => taskpools::forkjoin::scope(|$s| $body),
            Rt::Ours { fifo: true, .. } => taskpools::forkjoin::scope_fifo(|$s| $body),
            Rt::Rayon { fifo: false } => rayon::scope(|$s| $body),
            Rt::Rayon { fifo: true } => rayon::scope_fifo(|$s| $body),
        }
    };
}
pub(super) use with_scope;
