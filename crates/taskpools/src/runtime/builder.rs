//! [`RuntimeBuilder`]: how a [`Runtime`]'s workers are made.

use std::sync::Arc;

use super::{Pool, Runtime, GLOBAL};

/// Builds a [`Runtime`]: thread count, fork-join pool, pinning, stack size, thread names.
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
}

type ThreadName = Arc<dyn Fn(usize) -> String + Send + Sync>;

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
            .finish()
    }
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
            thread_name: None,
            serial_elision: true,
            places: None,
            place_policy: Default::default(),
            threads_set: false,
            trace: None,
        }
    }
}

impl RuntimeBuilder {
    /// Worker threads (default: one per CPU). Zero, or more than
    /// [`MAX_THREADS`](crate::MAX_THREADS), is refused by [`build`](Self::build).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n;
        self.threads_set = true;
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

    /// The name of worker `i`'s thread, as debuggers and `top -H` show it (default
    /// `taskpools-{i}`).
    ///
    /// ```
    /// let rt = taskpools::Runtime::builder()
    ///     .threads(2)
    ///     .thread_name(|i| format!("solver-{i}"))
    ///     .build()?;
    /// let names = rt.broadcast(|_| std::thread::current().name().map(String::from))?;
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
    pub fn place_policy(mut self, policy: crate::places::PlacePolicy) -> Self {
        self.place_policy = policy;
        self
    }

    /// Records a schedule trace (see [`trace`](super::trace)): each worker keeps up to
    /// `events_per_worker` events (40 bytes each) and then stops recording, counting what it
    /// drops. Off by default; [`Runtime::take_trace`] collects it. Refused by
    /// [`build`](Self::build) below 16 or above 2^28.
    pub fn trace(mut self, events_per_worker: usize) -> Self {
        self.trace = Some(events_per_worker);
        self
    }

    /// Starts the workers.
    pub fn build(self) -> Result<Runtime, crate::Error> {
        Runtime::start(self)
    }

    /// Builds the global runtime, the one that [`join`](crate::forkjoin::join),
    /// [`scope`](crate::forkjoin::scope), [`spawn`](crate::forkjoin::spawn) and
    /// [`current_num_threads`](crate::current_num_threads) use outside a worker. Fails with
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
