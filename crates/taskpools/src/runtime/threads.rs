//! The threads a runtime's workers run on: started by the runtime (the default), by the
//! caller's spawn handler (rayon's `spawn_handler`: scoped thread-locals, custom stacks, a
//! platform's own threads), inside a scope of the caller (`build_scoped`), or the building
//! thread itself as worker 0 (`use_current_thread`). Whichever thread it is, it becomes a
//! worker through [`ThreadBuilder::run`], which returns once the runtime has shut down and
//! every fire-and-forget job has finished; `Registry::exited` counts the workers that left,
//! for `Runtime::shutdown_and_wait`.

use std::cell::Cell;

use super::registry::Registry;
use super::trace;
use super::worker::{LocalDeque, WorkerThread, CURRENT};
use crate::places::set_current_place;
use crate::sync::{lock, Arc};

/// What a worker needs to start on its thread: made by the runtime's build, moved to the thread.
pub(super) struct WorkerParts {
    pub(super) index: usize,
    pub(super) registry: Arc<Registry>,
    pub(super) deque: LocalDeque,
    pub(super) core: Option<core_affinity::CoreId>,
    pub(super) place: usize,
    pub(super) has_places: bool,
    /// Events per trace buffer and the trace's clock, when the runtime records a trace.
    pub(super) trace: Option<(usize, trace::Clock)>,
}

impl WorkerParts {
    fn into_worker(self) -> WorkerThread {
        let WorkerParts {
            index,
            registry,
            deque,
            core: _,
            place,
            has_places,
            trace,
        } = self;
        let spin = registry.spin;
        WorkerThread {
            index,
            registry,
            deque,
            rng: Cell::new(0x9e37_79b9_7f4a_7c15 ^ (index as u64 + 1)),
            waits: Cell::new(0),
            place,
            has_places,
            rr: Cell::new(place),
            idle_since: Cell::new(None),
            spin_budget: Cell::new(spin),
            trace: trace.map(|(cap, clock)| Box::new(trace::TraceBuf::new(clock, index, cap))),
            source: Cell::new(trace::Source::Own),
        }
    }
}

/// One worker of a runtime being built, handed to a spawn handler
/// ([`RuntimeBuilder::spawn_handler`](super::RuntimeBuilder::spawn_handler),
/// [`build_scoped`](super::RuntimeBuilder::build_scoped)): the handler starts a thread however
/// it likes and calls [`run`](Self::run) on it. (rayon's `ThreadBuilder`.) Until it runs, jobs
/// addressed to its worker wait; dropped without running, it counts as a worker that left.
///
/// ```
/// use taskpools::Runtime;
///
/// let rt = Runtime::builder()
///     .threads(2)
///     .spawn_handler(|worker| {
///         std::thread::Builder::new()
///             .name(format!("my-worker-{}", worker.index()))
///             .spawn(move || worker.run())?;
///         Ok(())
///     })
///     .build()?;
/// let names = rt.broadcast(|_| std::thread::current().name().map(String::from));
/// assert_eq!(names, [Some("my-worker-0".into()), Some("my-worker-1".into())]);
/// rt.shutdown_and_wait()?;
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct ThreadBuilder {
    /// Taken by `run`; still here when the builder is dropped without running.
    pub(super) parts: Option<WorkerParts>,
    pub(super) name: Option<String>,
    pub(super) stack_size: Option<usize>,
}

impl std::fmt::Debug for ThreadBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadBuilder")
            .field("index", &self.index())
            .field("name", &self.name)
            .field("stack_size", &self.stack_size)
            .finish()
    }
}

impl ThreadBuilder {
    /// The worker's index in its runtime (`0..threads`).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let s = Arc::clone(&seen);
    /// let rt = taskpools::Runtime::builder()
    ///     .threads(2)
    ///     .spawn_handler(move |worker| {
    ///         s.lock().unwrap().push(worker.index());
    ///         std::thread::spawn(move || worker.run());
    ///         Ok(())
    ///     })
    ///     .build()?;
    /// assert_eq!(*seen.lock().unwrap(), [0, 1]);
    /// rt.shutdown_and_wait()?;
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn index(&self) -> usize {
        self.parts.as_ref().map_or(usize::MAX, |p| p.index)
    }

    /// The thread name the builder asked for
    /// ([`RuntimeBuilder::thread_name`](super::RuntimeBuilder::thread_name)), if any.
    ///
    /// ```
    /// let rt = taskpools::Runtime::builder()
    ///     .threads(1)
    ///     .thread_name(|i| format!("solver-{i}"))
    ///     .spawn_handler(|worker| {
    ///         assert_eq!(worker.name(), Some("solver-0"));
    ///         let b = std::thread::Builder::new().name(worker.name().unwrap().into());
    ///         b.spawn(move || worker.run())?;
    ///         Ok(())
    ///     })
    ///     .build()?;
    /// rt.shutdown_and_wait()?;
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The stack size the builder asked for
    /// ([`RuntimeBuilder::stack_size`](super::RuntimeBuilder::stack_size)), if any.
    ///
    /// ```
    /// let rt = taskpools::Runtime::builder()
    ///     .threads(1)
    ///     .stack_size(4 << 20)
    ///     .spawn_handler(|worker| {
    ///         assert_eq!(worker.stack_size(), Some(4 << 20));
    ///         let b = std::thread::Builder::new().stack_size(worker.stack_size().unwrap());
    ///         b.spawn(move || worker.run())?;
    ///         Ok(())
    ///     })
    ///     .build()?;
    /// rt.shutdown_and_wait()?;
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn stack_size(&self) -> Option<usize> {
        self.stack_size
    }

    /// Runs the worker on the calling thread: pins it (if the runtime pins), runs the start
    /// handler, takes part in the runtime's work until the runtime has shut down and its
    /// fire-and-forget jobs have finished, runs the exit handler, and returns.
    ///
    /// # Panics
    /// If the calling thread is already a worker (of any runtime).
    ///
    /// ```
    /// // A worker thread with a scoped setup around the worker's loop.
    /// let rt = taskpools::Runtime::builder()
    ///     .threads(1)
    ///     .spawn_handler(|worker| {
    ///         std::thread::spawn(move || {
    ///             // … set up what the thread needs …
    ///             worker.run(); // returns after the runtime has shut down
    ///             // … tear it down …
    ///         });
    ///         Ok(())
    ///     })
    ///     .build()?;
    /// assert_eq!(rt.install(|| 6 * 7), 42);
    /// rt.shutdown_and_wait()?;
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn run(mut self) {
        assert!(
            WorkerThread::current().is_none(),
            "ThreadBuilder::run: this thread is already a worker of a runtime"
        );
        let parts = self.parts.take().expect("run once");
        if let Some(c) = parts.core {
            core_affinity::set_for_current(c);
        }
        let w = parts.into_worker();
        // Counted as gone however the thread leaves its loop, so that `shutdown_and_wait`
        // cannot wait for it forever.
        struct Exit<'a>(&'a Registry);
        impl Drop for Exit<'_> {
            fn drop(&mut self) {
                *lock(&self.0.exited) += 1;
                self.0.all_exited.notify_all();
            }
        }
        let registry = Arc::clone(&w.registry);
        let _exit = Exit(&registry);
        // The thread stops being a worker before `w` goes, also if the loop unwinds (a bug in
        // the runtime): `WorkerThread::current` must never see a dropped worker.
        struct Detach;
        impl Drop for Detach {
            fn drop(&mut self) {
                detach_current_thread();
            }
        }
        CURRENT.with(|c| c.set(&w));
        let _detach = Detach;
        set_current_place(w.has_places.then_some(crate::places::PlaceId(w.place)));
        let h = &w.registry.handlers;
        h.run_worker_handler(h.start.as_ref(), w.index, "start");
        w.main_loop();
        h.run_worker_handler(h.exit.as_ref(), w.index, "exit");
    }
}

impl Drop for ThreadBuilder {
    /// A worker whose thread never ran counts as one that left, so that
    /// [`Runtime::shutdown_and_wait`](super::Runtime::shutdown_and_wait) does not wait for it.
    /// (Its jobs are another matter: see [`RuntimeBuilder::spawn_handler`](super::RuntimeBuilder::spawn_handler).)
    fn drop(&mut self) {
        if let Some(parts) = self.parts.take() {
            *lock(&parts.registry.exited) += 1;
            parts.registry.all_exited.notify_all();
        }
    }
}

/// Ends the calling thread's membership in the runtime it was made worker 0 of
/// ([`make_current_thread_a_worker`]): it is no longer a worker. Its worker state stays with
/// the thread until the thread ends ([`Adopted`]), for frames that may still hold it.
pub(super) fn detach_current_thread() {
    set_current_place(None);
    CURRENT.with(|c| c.set(std::ptr::null()));
}

/// The worker states a thread was given by [`make_current_thread_a_worker`], as pointers from
/// `Box::into_raw` (each stays put, and `CURRENT` may point at one). A frame on the thread (a
/// `join` whose closure dropped the runtime, say) may hold one after the thread was released,
/// so they are freed only when the thread ends, when no frame of it is left. A thread that
/// builds and drops such runtimes over and over keeps one worker state (and its runtime's
/// registry) per runtime until it ends.
struct Adopted(Vec<*mut WorkerThread>);

impl Drop for Adopted {
    fn drop(&mut self) {
        // A thread-local destructor that runs after this one must not see a freed worker.
        let _ = CURRENT.try_with(|c| {
            if self.0.iter().any(|&w| std::ptr::eq(c.get(), w)) {
                c.set(std::ptr::null());
            }
        });
        for w in self.0.drain(..) {
            // SAFETY: made by `Box::into_raw` in `make_current_thread_a_worker` and freed only
            // here, once; the thread is ending, so no frame of it holds the worker, and
            // `CURRENT` no longer points at it.
            drop(unsafe { Box::from_raw(w) });
        }
    }
}

thread_local! {
    static ADOPTED: std::cell::RefCell<Adopted> = const { std::cell::RefCell::new(Adopted(Vec::new())) };
}

/// Makes the calling thread worker `parts.index` without running the worker loop
/// ([`RuntimeBuilder::use_current_thread`](super::RuntimeBuilder::use_current_thread)): its
/// state lives until the thread ends ([`Adopted`]), and it takes part in the runtime's work
/// whenever it waits in it (`join`, `scope`, `install`, `yield_now`, ...). Its start and exit
/// handlers do not run, and it is not pinned.
pub(super) fn make_current_thread_a_worker(parts: WorkerParts) {
    debug_assert!(WorkerThread::current().is_none());
    let w = Box::new(parts.into_worker());
    let place = w.has_places.then_some(crate::places::PlaceId(w.place));
    let p = Box::into_raw(w);
    // Where the thread's locals are already being destroyed, the state is leaked instead.
    let _ = ADOPTED.try_with(|a| a.borrow_mut().0.push(p));
    CURRENT.with(|c| c.set(p.cast_const()));
    set_current_place(place);
}
