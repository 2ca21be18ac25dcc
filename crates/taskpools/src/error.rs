//! The crate's error type, at the bottom of the layers so that every module can name it.

/// Everything that can go wrong before or around a working phase. (A panicking task is not an
/// error value: its panic is resumed in the caller of `run`.)
///
/// New variants may be added (it is `#[non_exhaustive]`): match with a `_` arm.
///
/// ```
/// use taskpools::{Builder, Error, Runtime, MAX_THREADS};
///
/// // Bad input is refused before anything starts, with an error that names the problem.
/// let e = Builder::new().pool_name("dq42").unwrap_err();
/// assert!(matches!(&e, Error::UnknownPool { name, .. } if name == "dq42"));
/// assert!(e.to_string().contains("private-public (dq8)")); // the known pools, listed
/// let e = Runtime::new(MAX_THREADS + 1).unwrap_err();
/// assert!(matches!(e, Error::TooManyThreads { requested, max } if requested == max + 1));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A pool needs at least one worker.
    #[error("the number of threads must be at least 1")]
    ZeroThreads,
    /// `--pool` named no pool of the family.
    #[error("unknown pool `{name}`; known pools: {known}")]
    UnknownPool {
        /// What was asked for.
        name: String,
        /// Every known name with its alias.
        known: String,
    },
    /// A fork-join pool was asked for by a name it had before a rename.
    #[error(
        "fork-join pool `{old}` is now called `{new}` (alias `{alias}`); \
         `private-public`/`dq8` name the task-pool family's private/public pool, a different structure"
    )]
    RenamedPool {
        /// The old name that was asked for.
        old: String,
        /// The pool's name now.
        new: &'static str,
        /// The pool's alias now.
        alias: &'static str,
    },
    /// [`RuntimeBuilder::build_global`](crate::RuntimeBuilder::build_global) was called when the global runtime already
    /// existed.
    #[error(
        "the global fork-join runtime already exists (build_global must come before its first use)"
    )]
    GlobalExists,
    /// `--mem` named no memory manager.
    #[error("unknown memory manager `{name}`; known: {known}")]
    UnknownMem {
        /// What was asked for.
        name: String,
        /// Every known name with its alias.
        known: String,
    },
    /// `--wake` named no wake-up policy.
    #[error(
        "unknown wake-up policy `{name}`; known: every-put (java-dq2), on-empty (java-dq9), spin (java-dq10)"
    )]
    UnknownWake {
        /// What was asked for.
        name: String,
    },
    /// `--search` named no search strategy.
    #[error("unknown search strategy `{name}`; known: tree (tree-search), linear (linear-search), random (random-search)")]
    UnknownSearch {
        /// What was asked for.
        name: String,
    },
    /// More worker threads than [`MAX_THREADS`](crate::MAX_THREADS) were asked for.
    #[error("{requested} threads asked for; at most {max} are allowed")]
    TooManyThreads {
        /// What was asked for.
        requested: usize,
        /// [`MAX_THREADS`](crate::MAX_THREADS).
        max: usize,
    },
    /// A working phase or broadcast was started on a worker (inside a fork-join task, or
    /// inside a task of a running phase) while another one held the same runtime. A worker
    /// cannot wait for it (the running one may need this very worker), so it is refused.
    #[error(
        "a working phase (or broadcast) is already running on this runtime; one started from \
         inside a task of that runtime cannot wait for it: start phases one after another, \
         or on another Runtime"
    )]
    PhaseBusy,
    /// [`RuntimeBuilder::use_current_thread`](crate::RuntimeBuilder::use_current_thread) on a
    /// thread that is already a worker of a runtime.
    #[error(
        "use_current_thread: this thread is already a worker of a runtime (build the runtime \
         on a thread of your own, or without use_current_thread)"
    )]
    CurrentThreadInRuntime,
    /// [`Runtime::shutdown_and_wait`](crate::Runtime::shutdown_and_wait) on one of the
    /// runtime's own workers, which cannot wait for itself to leave; the shutdown was signalled.
    #[error(
        "shutdown_and_wait on one of the runtime's own workers cannot wait for itself: the \
         shutdown was signalled, and the workers leave once their work is done"
    )]
    WaitOnOwnWorker,
    /// A working phase or broadcast was started on a runtime that is being dropped (from a
    /// job that runs during its shutdown).
    #[error("the runtime is shutting down: no working phase or broadcast can start on it")]
    ShuttingDown,
    /// A size that cannot finish or fit (the synthetic algorithm's `k` and `f`, say).
    #[error("{what}: exceeds the limit of {limit}")]
    TooLarge {
        /// What was asked for, with its value.
        what: String,
        /// The limit, with its unit.
        limit: String,
    },
    /// A working phase asked for more workers than its runtime has.
    #[error(
        "a working phase of {workers} workers cannot run on a runtime of {threads} thread{}",
        if *.threads == 1 { "" } else { "s" }
    )]
    PhaseWider {
        /// The phase's workers (the builder's `threads`).
        workers: usize,
        /// The runtime's worker threads.
        threads: usize,
    },
    /// A working phase with place hints ([`Builder::run_hinted`](crate::Builder::run_hinted))
    /// was asked for on a runtime without places.
    #[error(
        "a working phase with place hints needs a runtime built with places \
         (RuntimeBuilder::places), given to the phase with Builder::runtime"
    )]
    PhaseWithoutPlaces,
    /// [`Ctx::put_at`](crate::Ctx::put_at) in a working phase that takes no place hints.
    #[error(
        "Ctx::put_at: this working phase takes no place hints; start it with \
         Builder::run_hinted, run_hinted_with or run_hinted_reduce on a runtime with places"
    )]
    PhaseWithoutHints,
    /// The operating system refused a worker thread.
    #[error("could not start a worker thread: {0}")]
    Spawn(#[from] std::io::Error),
    /// A run executed a different number of tasks than the algorithm defines.
    #[error("task count mismatch: expected {}, {actual} ran", counted(*.expected, "task"))]
    TaskCount {
        /// Tasks the algorithm creates.
        expected: u64,
        /// Tasks that ran.
        actual: u64,
    },
    /// A places description ([`Places`](crate::places::Places)) that cannot be used.
    #[error("bad places `{spec}`: {why}")]
    BadPlaces {
        /// The description.
        spec: String,
        /// What is wrong with it.
        why: String,
    },
    /// The machine's topology could not be read from sysfs (a recorded tree, in tests).
    #[error("cannot read the topology at {}: {why}", path.display())]
    Topology {
        /// The file that could not be read or parsed.
        path: std::path::PathBuf,
        /// Why.
        why: String,
    },
    /// A locality hint named a place the runtime does not have.
    #[error("{}", no_such_place(*place, *places))]
    NoSuchPlace {
        /// The place asked for.
        place: usize,
        /// The places of the runtime (0: built without places).
        places: usize,
    },
    /// A distributed phase (feature `mpi`) cannot run as asked.
    #[error("distributed phase: {message}")]
    Distributed {
        /// What is wrong.
        message: String,
    },
    /// The ranks of a distributed phase disagree at its start.
    #[error("rank {rank} differs from rank 0 in {what}: every rank must run the same binary with the same configuration")]
    RankMismatch {
        /// The first rank that differs.
        rank: usize,
        /// What differs.
        what: String,
    },
    /// A task graph that cannot be analysed (built from a corrupt trace file, say): its
    /// parent relation has a cycle.
    #[error("bad task graph: {why}")]
    BadTaskGraph {
        /// What is wrong, naming a task.
        why: String,
    },
    /// A task panicked on a rank of a distributed phase; the phase ended on every rank.
    #[error("a task panicked on rank {rank}: {message}")]
    RankPanicked {
        /// The rank where it panicked.
        rank: usize,
        /// The panic's message.
        message: String,
    },
}

/// `n` and `noun`, with an `s` unless `n` is 1 ("1 task", "3 tasks").
pub(crate) fn counted(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

fn no_such_place(place: usize, places: usize) -> String {
    if places == 0 {
        format!("place {place} does not exist: this runtime was built without places (RuntimeBuilder::places)")
    } else {
        format!(
            "place {place} does not exist: this runtime has {}, numbered from 0",
            counted(places as u64, "place")
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_runtime_of_one_thread_is_singular() {
        let e = super::Error::PhaseWider {
            workers: 2,
            threads: 1,
        };
        assert_eq!(
            e.to_string(),
            "a working phase of 2 workers cannot run on a runtime of 1 thread"
        );
        let e = super::Error::PhaseWider {
            workers: 4,
            threads: 2,
        };
        assert!(e.to_string().ends_with("a runtime of 2 threads"), "{e}");
        let e = super::Error::TaskCount {
            expected: 1,
            actual: 0,
        };
        assert_eq!(e.to_string(), "task count mismatch: expected 1 task, 0 ran");
        let e = super::Error::NoSuchPlace {
            place: 3,
            places: 1,
        };
        assert!(e.to_string().contains("this runtime has 1 place,"), "{e}");
    }
}
