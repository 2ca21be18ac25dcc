//! What a schedule trace is: where a worker found a job ([`Source`]), what happened
//! ([`EventKind`], [`Event`]), and the collected [`Trace`] with its well-formedness check.

/// Where a worker found the job it ran.
///
/// ```
/// use taskpools::runtime::trace::{EventKind, Source};
///
/// let rt = taskpools::Runtime::builder().threads(1).trace(1 << 10).build()?;
/// rt.install(|| ());
/// let t = rt.take_trace()?.unwrap();
/// // Handed over from this thread, the closure came through the injector.
/// assert!(t.events.iter().any(|e| e.kind == EventKind::Start(Source::Injected)));
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Source {
    /// Its own deque (a `join` half or `scope` spawn it queued itself).
    Own,
    /// Its place's shared deque.
    Place,
    /// Another place's deque (a steal between places).
    PlaceSteal {
        /// The victim place.
        place: u32,
    },
    /// Another worker's deque (a steal).
    Steal {
        /// The victim worker.
        victim: u32,
    },
    /// The injector: work from a thread outside the runtime.
    Injected,
    /// Its mailbox: a broadcast's share (a working phase).
    Mail,
    /// A working phase's task, taken from the pool without a steal.
    Pool,
    /// A working phase's task taken right after a steal in the pool.
    PoolSteal {
        /// The worker stolen from.
        victim: u32,
        /// Tasks the steal moved (a block or half a segment can be several).
        tasks: u32,
    },
}

impl Source {
    /// A short name (`own`, `place`, `place-steal`, `steal`, `injected`, `mail`, `pool`,
    /// `pool-steal`).
    ///
    /// ```
    /// use taskpools::runtime::trace::Source;
    ///
    /// assert_eq!(Source::Steal { victim: 1 }.name(), "steal");
    /// assert_eq!(Source::PoolSteal { victim: 0, tasks: 4 }.name(), "pool-steal");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Source::Own => "own",
            Source::Place => "place",
            Source::PlaceSteal { .. } => "place-steal",
            Source::Steal { .. } => "steal",
            Source::Injected => "injected",
            Source::Mail => "mail",
            Source::Pool => "pool",
            Source::PoolSteal { .. } => "pool-steal",
        }
    }
}

/// What happened.
///
/// ```
/// use taskpools::runtime::trace::{EventKind, Source};
/// use taskpools::{BoxedTask, Builder, Runtime};
///
/// // A traced working phase: every task is a job started from the pool, every put an event.
/// let rt = Runtime::builder().threads(2).trace(1 << 12).build()?;
/// let root = BoxedTask::new(|ctx| (0..20).for_each(|_| ctx.put(BoxedTask::new(|_| {}))));
/// Builder::new().runtime(&rt).pool_name("chase-lev")?.run([root])?;
/// let t = rt.take_trace()?.unwrap();
/// assert_eq!(t.dropped, 0);
/// let count = |f: &dyn Fn(&EventKind) -> bool| t.events.iter().filter(|e| f(&e.kind)).count();
/// assert_eq!(count(&|k| *k == EventKind::Put), 20);
/// let tasks = count(&|k| matches!(k, EventKind::Start(Source::Pool | Source::PoolSteal { .. })));
/// assert_eq!(tasks, 21);
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventKind {
    /// A job started (found at `Source`).
    Start(Source),
    /// The innermost running job ended.
    End,
    /// The worker went to sleep for lack of work.
    Sleep,
    /// It woke up.
    Wake,
    /// The job just started is the data-flow task `id` (ids are unique within a runtime).
    Task {
        /// The task.
        id: u64,
    },
    /// Data-flow task `to` depends on its earlier sibling `from` (recorded at `to`'s spawn,
    /// also when `from` had already completed).
    Dep {
        /// The predecessor.
        from: u64,
        /// The dependent task.
        to: u64,
    },
    /// Data-flow task `by` completed and so made `task` ready (its last dependence).
    Ready {
        /// The task made ready.
        task: u64,
        /// The predecessor whose completion did it.
        by: u64,
    },
    /// A working phase's task put a child task into the pool.
    Put,
    /// A worker of a working phase found no task: it spins or sleeps inside its share until
    /// [`Resume`](EventKind::Resume).
    Idle,
    /// It has a task again (or the phase ended).
    Resume,
    /// A search for work that found nothing: the worker looked into `attempts` queues of
    /// others (workers' deques or a working phase's queues, places' deques) in vain before
    /// its next event. Stamped at the first failed attempt in the runtime's own search; in a
    /// working phase, where the pool counts the attempts, when the worker notices them (at
    /// the end of the `get` that made them). Consecutive failed attempts are one event, so
    /// a worker that searches for a long time does not fill its buffer; a successful steal
    /// is the [`Start`](EventKind::Start) that follows, with its victim.
    Misses {
        /// Queues examined without finding a task.
        attempts: u32,
    },
    /// A worker of a distributed phase took `tasks` tasks out of its queue and handed them
    /// to its process's agent, which sends them to another process (an answered steal
    /// request).
    Export {
        /// Tasks sent away.
        tasks: u32,
    },
    /// A worker of a working phase moved `tasks` tasks from worker `victim`'s queue into its
    /// own without running one (a distributed phase's worker gathering tasks to send away;
    /// a steal that runs a task is that task's [`Source::PoolSteal`] start instead).
    Moved {
        /// The worker taken from.
        victim: u32,
        /// Tasks moved.
        tasks: u32,
    },
    /// A worker of a distributed phase put `tasks` tasks received from other processes into
    /// its queue.
    Import {
        /// Tasks received.
        tasks: u32,
    },
    /// Data-flow task `child` was spawned by `parent`: a data-flow task, or a root scope
    /// (a scope entered outside any data-flow task has an id of its own, announced by a
    /// `Spawn` with `parent` 0 when it begins).
    Spawn {
        /// The spawning task or root scope (0: none; `child` is a root scope).
        parent: u64,
        /// The new task (or root scope).
        child: u64,
    },
    /// Data-flow task (or root scope) `task` begins to wait for its children: at a `sync`,
    /// or at its end, when some are still running. The wait is not the task's own work.
    Wait {
        /// The waiting task.
        task: u64,
    },
    /// Data-flow task (or root scope) `task` returned from a `sync`: every child it had
    /// spawned before has completed.
    Sync {
        /// The task that waited.
        task: u64,
    },
}

/// One event of one worker.
///
/// ```
/// let rt = taskpools::Runtime::builder().threads(2).trace(1 << 10).build()?;
/// rt.broadcast(|_| ());
/// let t = rt.take_trace()?.unwrap();
/// assert!(t.events.iter().all(|e| (e.worker as usize) < t.workers));
/// assert!(t.events.windows(2).all(|w| w[0].t_ns <= w[1].t_ns)); // ordered by time
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// Nanoseconds since the runtime started.
    pub t_ns: u64,
    /// The worker.
    pub worker: u32,
    /// What happened.
    pub kind: EventKind,
}

/// The events of every worker since the last [`Runtime::take_trace`](crate::runtime::Runtime::take_trace),
/// ordered by time.
///
/// ```
/// use taskpools::runtime::trace::EventKind;
///
/// let rt = taskpools::Runtime::builder().threads(2).trace(1 << 12).build()?;
/// rt.scope(|s| (0..10).for_each(|_| s.spawn(|_| ())));
/// let t = rt.take_trace()?.expect("built with a trace");
/// assert_eq!((t.workers, t.dropped, t.capacity), (2, 0, 1 << 12));
/// let starts = t.events.iter().filter(|e| matches!(e.kind, EventKind::Start(_))).count();
/// assert_eq!(starts, t.jobs());
/// assert_eq!(t.jobs(), 11); // the scope's body and its 10 spawns
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// Number of workers.
    pub workers: usize,
    /// The events, by time (ties keep each worker's order).
    pub events: Vec<Event>,
    /// Events not recorded because a worker's buffer was full (0: the trace is complete).
    pub dropped: u64,
    /// The buffer size per worker, in events.
    pub capacity: usize,
}

impl Trace {
    /// Checks that the trace is well formed: per worker, times never go back, every end
    /// closes a start, every start is closed, a worker sleeps only outside jobs and wakes
    /// after it slept, and steals name existing workers. Returns the first violation.
    ///
    /// ```
    /// use taskpools::runtime::trace::{Event, EventKind, Trace};
    ///
    /// let rt = taskpools::Runtime::builder().threads(2).trace(1 << 10).build()?;
    /// rt.join(|| (), || ());
    /// assert!(rt.take_trace()?.unwrap().check().is_ok());
    /// // An end without a start is not a schedule.
    /// let bad = Trace {
    ///     workers: 1,
    ///     events: vec![Event { t_ns: 5, worker: 0, kind: EventKind::End }],
    ///     ..Trace::default()
    /// };
    /// assert!(bad.check().is_err());
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn check(&self) -> Result<(), String> {
        let mut open = vec![0usize; self.workers];
        let mut asleep = vec![false; self.workers];
        let mut idle = vec![false; self.workers];
        let mut last = vec![0u64; self.workers];
        for (i, e) in self.events.iter().enumerate() {
            let w = e.worker as usize;
            if w >= self.workers {
                return Err(format!("event {i}: worker {w} does not exist"));
            }
            if e.t_ns < last[w] {
                return Err(format!("event {i}: worker {w}'s time goes back"));
            }
            last[w] = e.t_ns;
            match e.kind {
                EventKind::Start(src) => {
                    if asleep[w] || idle[w] {
                        return Err(format!("event {i}: worker {w} starts a job asleep or idle"));
                    }
                    if let Source::Steal { victim } | Source::PoolSteal { victim, .. } = src {
                        if victim as usize >= self.workers || victim as usize == w {
                            return Err(format!("event {i}: worker {w} stole from {victim}"));
                        }
                    }
                    open[w] += 1;
                }
                EventKind::End => {
                    if open[w] == 0 || idle[w] {
                        return Err(format!(
                            "event {i}: worker {w} ends a job it did not start, or while idle"
                        ));
                    }
                    open[w] -= 1;
                }
                EventKind::Sleep => {
                    if asleep[w] || open[w] != 0 {
                        return Err(format!(
                            "event {i}: worker {w} sleeps inside a job or twice"
                        ));
                    }
                    asleep[w] = true;
                }
                EventKind::Wake => {
                    if !asleep[w] {
                        return Err(format!("event {i}: worker {w} wakes without sleeping"));
                    }
                    asleep[w] = false;
                }
                EventKind::Task { .. } => {
                    if open[w] == 0 {
                        return Err(format!("event {i}: worker {w} names a task outside a job"));
                    }
                }
                EventKind::Dep { .. }
                | EventKind::Ready { .. }
                | EventKind::Spawn { .. }
                | EventKind::Wait { .. }
                | EventKind::Sync { .. }
                | EventKind::Export { .. }
                | EventKind::Import { .. } => {}
                EventKind::Moved { victim, .. } => {
                    if victim as usize >= self.workers || victim as usize == w {
                        return Err(format!("event {i}: worker {w} moved tasks from {victim}"));
                    }
                }
                EventKind::Misses { attempts } => {
                    if attempts == 0 || asleep[w] {
                        return Err(format!(
                            "event {i}: worker {w} records no attempts, or while asleep"
                        ));
                    }
                }
                EventKind::Put => {
                    if open[w] == 0 || idle[w] {
                        return Err(format!("event {i}: worker {w} puts outside a task"));
                    }
                }
                EventKind::Idle => {
                    if idle[w] || asleep[w] || open[w] == 0 {
                        return Err(format!(
                            "event {i}: worker {w} idles outside a share, or twice"
                        ));
                    }
                    idle[w] = true;
                }
                EventKind::Resume => {
                    if !idle[w] {
                        return Err(format!("event {i}: worker {w} resumes without idling"));
                    }
                    idle[w] = false;
                }
            }
        }
        if let Some(w) = idle.iter().position(|&b| b) {
            return Err(format!("worker {w} is still idle at the end"));
        }
        match open.iter().position(|&o| o != 0) {
            Some(w) => Err(format!("worker {w} has {} unfinished jobs", open[w])),
            None => Ok(()),
        }
    }

    /// Number of jobs started.
    ///
    /// ```
    /// let rt = taskpools::Runtime::builder().threads(2).trace(1 << 10).build()?;
    /// rt.install(|| ());
    /// rt.install(|| ());
    /// assert_eq!(rt.take_trace()?.unwrap().jobs(), 2);
    /// assert_eq!(rt.take_trace()?.unwrap().jobs(), 0); // each call starts a new trace
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn jobs(&self) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Start(_)))
            .count()
    }
}
