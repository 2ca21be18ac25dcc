//! Schedule traces: what each worker ran, from where, and when it slept — recorded per worker
//! into its own bounded buffer (no shared atomics, no locks), off unless the runtime was
//! built with [`RuntimeBuilder::trace`](super::RuntimeBuilder::trace), and collected with
//! [`Runtime::take_trace`](super::Runtime::take_trace).
//!
//! A job is anything a worker takes from a queue and runs: a stolen or popped `join` half, a
//! `scope` spawn, a data-flow task, an installed closure, a working phase's share. A `join`
//! whose second half its own worker takes back runs inline and is not an event (it costs a
//! few nanoseconds; recording it would cost more). Jobs nest on a worker when a job waits
//! (a `join` or `scope` inside it runs other jobs meanwhile), so a worker's events form a
//! well-bracketed sequence of starts and ends.
//!
//! Inside a working phase (the task pools' `run`), each task is a job too, nested in the
//! worker's share: found in the pool ([`Source::Pool`]) or right after a steal
//! ([`Source::PoolSteal`], naming the victim and the tasks moved); each `put` is a
//! [`EventKind::Put`] (on `private-deque`, stamped when the putting task ends or calls
//! `Ctx::queued`, where its puts become reachable to thieves), and the time a worker spends
//! without a task of the phase (spinning or asleep) is bracketed by [`EventKind::Idle`] and
//! [`EventKind::Resume`].
//!
//! Steal attempts that find nothing (another worker's deque or a phase's queue, another
//! place's deque) are counted and recorded as one [`EventKind::Misses`] per search, so a
//! worker that searches for long does not fill its buffer; a successful steal is the job's
//! start, naming its victim.
//!
//! Data-flow tasks add their ids ([`EventKind::Task`]), their dependences and releases
//! ([`EventKind::Dep`], [`EventKind::Ready`]), the spawn tree ([`EventKind::Spawn`], root
//! scopes included) and their waits for children ([`EventKind::Wait`], [`EventKind::Sync`]),
//! from which [`Trace::task_graph`] builds the task graph and its critical path.
//!
//! Events are stamped with the cheapest clock the machine offers that is consistent across
//! CPUs: the time-stamp counter where the kernel uses it as its clock, else `Instant`.
//!
//! When a worker's buffer is full it stops recording and counts what it dropped; the trace
//! says so ([`Trace::dropped`]). Room is kept for the ends of the jobs it recorded, so the
//! brackets stay balanced.

use std::cell::{Cell, RefCell};
use std::time::Instant;

/// Where a worker found the job it ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// Nanoseconds since the runtime started.
    pub t_ns: u64,
    /// The worker.
    pub worker: u32,
    /// What happened.
    pub kind: EventKind,
}

/// The events of every worker since the last [`Runtime::take_trace`](super::Runtime::take_trace),
/// ordered by time.
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

    /// Appends this trace's events in the Chrome trace-event format (what Perfetto and
    /// `chrome://tracing` open) to `out`, as process `pid` named `name`: one track per
    /// worker, a slice per job (named by where it was found) and per sleep or idle time, a
    /// flow arrow from the victim's track to the thief's for every steal between workers, and
    /// one from the completion that released a data-flow task to that task's start.
    /// Each event is one JSON object followed by a comma and a newline; wrap them with
    /// [`chrome_json`](Self::chrome_json) or as `{"traceEvents":[ … ]}`.
    pub fn chrome_events(&self, pid: u32, name: &str, out: &mut String) {
        use std::fmt::Write;
        let esc = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        let _ = writeln!(
            out,
            r#"{{"name":"process_name","ph":"M","pid":{pid},"args":{{"name":"{}"}}}},"#,
            esc(name)
        );
        for w in 0..self.workers {
            let _ = writeln!(
                out,
                r#"{{"name":"thread_name","ph":"M","pid":{pid},"tid":{w},"args":{{"name":"worker {w}"}}}},"#
            );
        }
        let us = |t: u64| t as f64 / 1000.0;
        let mut flow = 0u64;
        // Data-flow releases whose task has not started yet: an arrow goes from the release
        // (on the worker that completed the predecessor) to the task's start.
        let mut released = std::collections::HashSet::new();
        let started: std::collections::HashSet<u64> = self
            .events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::Task { id } => Some(id),
                _ => None,
            })
            .collect();
        for e in &self.events {
            let (w, ts) = (e.worker, us(e.t_ns));
            let instant = |out: &mut String, name: &str, cat: &str, args: &str| {
                let args = if args.is_empty() {
                    String::new()
                } else {
                    format!(r#","args":{{{args}}}"#)
                };
                let _ = writeln!(
                    out,
                    r#"{{"name":"{name}","cat":"{cat}","ph":"i","s":"t","ts":{ts:.3},"pid":{pid},"tid":{w}{args}}},"#
                );
            };
            match e.kind {
                EventKind::Start(src) => {
                    let extra = match src {
                        Source::Steal { victim } => format!(r#","victim":{victim}"#),
                        Source::PoolSteal { victim, tasks } => {
                            format!(r#","victim":{victim},"tasks":{tasks}"#)
                        }
                        Source::PlaceSteal { place } => format!(r#","victim_place":{place}"#),
                        _ => String::new(),
                    };
                    let _ = writeln!(
                        out,
                        r#"{{"name":"{}","cat":"job","ph":"B","ts":{ts:.3},"pid":{pid},"tid":{w},"args":{{"from":"{}"{extra}}}}},"#,
                        src.name(),
                        src.name()
                    );
                    if let Source::Steal { victim } | Source::PoolSteal { victim, .. } = src {
                        flow += 1;
                        let _ = writeln!(
                            out,
                            r#"{{"name":"steal","cat":"steal","ph":"s","id":{flow},"ts":{ts:.3},"pid":{pid},"tid":{victim}}},"#
                        );
                        let _ = writeln!(
                            out,
                            r#"{{"name":"steal","cat":"steal","ph":"f","bp":"e","id":{flow},"ts":{ts:.3},"pid":{pid},"tid":{w}}},"#
                        );
                    }
                }
                EventKind::End | EventKind::Wake | EventKind::Resume => {
                    let _ = writeln!(out, r#"{{"ph":"E","ts":{ts:.3},"pid":{pid},"tid":{w}}},"#);
                }
                EventKind::Idle => {
                    let _ = writeln!(
                        out,
                        r#"{{"name":"idle","cat":"idle","ph":"B","ts":{ts:.3},"pid":{pid},"tid":{w}}},"#
                    );
                }
                EventKind::Put => instant(out, "put", "phase", ""),
                EventKind::Sleep => {
                    let _ = writeln!(
                        out,
                        r#"{{"name":"sleep","cat":"idle","ph":"B","ts":{ts:.3},"pid":{pid},"tid":{w}}},"#
                    );
                }
                EventKind::Task { id } => {
                    instant(out, "task", "dataflow", &format!(r#""id":{id}"#));
                    if released.remove(&id) {
                        let _ = writeln!(
                            out,
                            r#"{{"name":"release","cat":"dependence","ph":"f","bp":"e","id":"d{id}","ts":{ts:.3},"pid":{pid},"tid":{w}}},"#
                        );
                    }
                }
                EventKind::Misses { attempts } => instant(
                    out,
                    "steal misses",
                    "steal",
                    &format!(r#""attempts":{attempts}"#),
                ),
                EventKind::Export { tasks } => instant(
                    out,
                    "sent to another process",
                    "phase",
                    &format!(r#""tasks":{tasks}"#),
                ),
                EventKind::Moved { victim, tasks } => instant(
                    out,
                    "moved from another worker",
                    "phase",
                    &format!(r#""victim":{victim},"tasks":{tasks}"#),
                ),
                EventKind::Import { tasks } => instant(
                    out,
                    "received from another process",
                    "phase",
                    &format!(r#""tasks":{tasks}"#),
                ),
                EventKind::Spawn { parent, child } => instant(
                    out,
                    "spawn",
                    "dataflow",
                    &format!(r#""parent":{parent},"child":{child}"#),
                ),
                EventKind::Wait { task } => instant(
                    out,
                    "wait for children",
                    "dataflow",
                    &format!(r#""task":{task}"#),
                ),
                EventKind::Sync { task } => {
                    instant(out, "sync", "dataflow", &format!(r#""task":{task}"#))
                }
                EventKind::Dep { from, to } => instant(
                    out,
                    "dep",
                    "dataflow",
                    &format!(r#""from":{from},"to":{to}"#),
                ),
                EventKind::Ready { task, by } => {
                    instant(
                        out,
                        "ready",
                        "dataflow",
                        &format!(r#""task":{task},"by":{by}"#),
                    );
                    if started.contains(&task) && released.insert(task) {
                        let _ = writeln!(
                            out,
                            r#"{{"name":"release","cat":"dependence","ph":"s","id":"d{task}","ts":{ts:.3},"pid":{pid},"tid":{w}}},"#
                        );
                    }
                }
            }
        }
        if self.dropped > 0 {
            let ts = self.events.last().map_or(0.0, |e| us(e.t_ns));
            let _ = writeln!(
                out,
                r#"{{"name":"trace incomplete: {} events dropped (buffer of {} events per worker)","ph":"i","s":"p","ts":{ts:.3},"pid":{pid},"tid":0}},"#,
                self.dropped, self.capacity
            );
        }
    }

    /// The whole trace as a Chrome trace-event JSON document.
    pub fn chrome_json(&self, name: &str) -> String {
        let mut body = String::new();
        self.chrome_events(1, name, &mut body);
        wrap_chrome_events(&body)
    }

    /// The data-flow task graph of this trace: each task that ran (with its worker, times,
    /// own work, parent and where in its parent's work it was spawned), the dependences
    /// between siblings, the root scopes, and the `sync`s.
    ///
    /// A task's own work is its duration less the jobs its worker ran nested inside it and
    /// less its waits for its children (at a `sync` or at its end).
    pub fn task_graph(&self) -> TaskGraph {
        use std::collections::HashMap;
        struct Open {
            start: u64,
            task: Option<u64>,
            nested: u64,
        }
        // Where a task's (or root scope's) own work is counted: its worker, the stack depth
        // of its job, when it began and the job's nested time then.
        struct Origin {
            worker: u32,
            depth: usize,
            t0: u64,
            nested0: u64,
        }
        let mut stacks: Vec<Vec<Open>> = (0..self.workers).map(|_| Vec::new()).collect();
        let mut origin: HashMap<u64, Origin> = HashMap::new();
        // Per task: its waits so far (ns, nested jobs left out) and the one under way.
        let mut waited: HashMap<u64, u64> = HashMap::new();
        let mut waiting: HashMap<u64, (u64, u64)> = HashMap::new();
        let mut spawned: HashMap<u64, (u64, u64, usize)> = HashMap::new();
        let mut spawn_count: HashMap<u64, usize> = HashMap::new();
        let mut g = TaskGraph::default();
        for e in &self.events {
            let w = e.worker as usize;
            let Some(stack) = stacks.get_mut(w) else {
                continue;
            };
            // The own work of `id` so far, if it runs here (as the innermost job).
            let own = |id: u64, stack: &Vec<Open>, waited: &HashMap<u64, u64>| -> Option<u64> {
                let o = origin.get(&id)?;
                if o.worker != e.worker || o.depth != stack.len() {
                    return None;
                }
                let nested = stack.last().map_or(0, |t| t.nested);
                Some(
                    e.t_ns
                        .saturating_sub(o.t0)
                        .saturating_sub(nested.saturating_sub(o.nested0))
                        .saturating_sub(waited.get(&id).copied().unwrap_or(0)),
                )
            };
            match e.kind {
                EventKind::Start(_) => stack.push(Open {
                    start: e.t_ns,
                    task: None,
                    nested: 0,
                }),
                EventKind::Task { id } => {
                    let depth = stack.len();
                    if let Some(top) = stack.last_mut() {
                        if top.task.is_none() {
                            top.task = Some(id);
                            origin.insert(
                                id,
                                Origin {
                                    worker: e.worker,
                                    depth,
                                    t0: top.start,
                                    nested0: 0,
                                },
                            );
                        }
                    }
                }
                EventKind::Spawn { parent: 0, child } => {
                    g.roots.push(child);
                    g.root_work.insert(child, 0);
                    origin.insert(
                        child,
                        Origin {
                            worker: e.worker,
                            depth: stack.len(),
                            t0: e.t_ns,
                            nested0: stack.last().map_or(0, |t| t.nested),
                        },
                    );
                }
                EventKind::Spawn { parent, child } => {
                    let at = own(parent, stack, &waited).unwrap_or(0);
                    let count = spawn_count.entry(parent).or_default();
                    spawned.insert(child, (parent, at, *count));
                    *count += 1;
                    if let Some(r) = g.root_work.get_mut(&parent) {
                        *r = (*r).max(at);
                    }
                }
                EventKind::Wait { task } => {
                    if let Some(at) = own(task, stack, &waited) {
                        let nested = stack.last().map_or(0, |t| t.nested);
                        waiting.insert(task, (e.t_ns, nested));
                        if let Some(r) = g.root_work.get_mut(&task) {
                            *r = (*r).max(at);
                        }
                    }
                }
                EventKind::Sync { task } => {
                    if let Some((t, n)) = waiting.remove(&task) {
                        let nested = stack.last().map_or(0, |t| t.nested);
                        *waited.entry(task).or_default() += e
                            .t_ns
                            .saturating_sub(t)
                            .saturating_sub(nested.saturating_sub(n));
                    }
                    if let Some(at) = own(task, stack, &waited) {
                        if let Some(r) = g.root_work.get_mut(&task) {
                            *r = (*r).max(at);
                        }
                        let before = spawn_count.get(&task).copied().unwrap_or(0);
                        g.syncs.entry(task).or_default().push((at, before));
                    }
                }
                EventKind::End => {
                    if let Some(o) = stack.pop() {
                        let dur = e.t_ns.saturating_sub(o.start);
                        if let Some(parent) = stack.last_mut() {
                            parent.nested += dur;
                        }
                        if let Some(id) = o.task {
                            let mut wait = waited.remove(&id).unwrap_or(0);
                            if let Some((t, n)) = waiting.remove(&id) {
                                wait += e
                                    .t_ns
                                    .saturating_sub(t)
                                    .saturating_sub(o.nested.saturating_sub(n));
                            }
                            // Filled in below (a child's end may sort before its
                            // parent's spawn event where clocks of CPUs differ slightly).
                            let (parent, spawned_after_ns, spawn_index) = (0, 0, 0);
                            g.tasks.insert(
                                id,
                                TaskNode {
                                    worker: e.worker,
                                    start_ns: o.start,
                                    end_ns: e.t_ns.max(o.start),
                                    work_ns: dur.saturating_sub(o.nested).saturating_sub(wait),
                                    parent,
                                    spawned_after_ns,
                                    spawn_index,
                                },
                            );
                        }
                    }
                }
                EventKind::Dep { from, to } => g.deps.push((from, to)),
                _ => {}
            }
        }
        for (child, (parent, at, index)) in spawned {
            if let Some(n) = g.tasks.get_mut(&child) {
                n.parent = parent;
                n.spawned_after_ns = at;
                n.spawn_index = index;
            }
        }
        g
    }

    /// Number of jobs started.
    pub fn jobs(&self) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Start(_)))
            .count()
    }
}

/// The trace's clock. Where the kernel itself keeps time with the CPU's time-stamp counter
/// (Linux on x86-64 with `tsc` as its clock source, which Linux chooses only for a counter
/// that is constant-rate and synchronised across CPUs), events are stamped with the counter
/// (about 10 ns a read here, against 30 for [`Instant`]) and converted to nanoseconds when a
/// trace is taken, at the rate measured between the clock's start and the take. Elsewhere it
/// is [`Instant`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    epoch: Instant,
    /// The counter at `epoch` (`None`: stamps are nanoseconds from `Instant`).
    tsc0: Option<u64>,
}

impl Clock {
    /// A clock that starts now.
    pub(crate) fn start() -> Clock {
        if tsc_is_the_clock() {
            let (tsc0, epoch) = tsc_and_instant();
            Clock {
                epoch,
                tsc0: Some(tsc0),
            }
        } else {
            Clock {
                epoch: Instant::now(),
                tsc0: None,
            }
        }
    }

    /// A raw stamp.
    #[inline]
    fn raw(&self) -> u64 {
        match self.tsc0 {
            Some(_) => read_tsc(),
            None => self.epoch.elapsed().as_nanos() as u64,
        }
    }

    /// Converts raw stamps taken so far to nanoseconds since the start: one rate for all of
    /// them (a monotone map), measured from the start to now.
    pub(crate) fn converter(&self) -> impl Fn(u64) -> u64 {
        let scale = self.tsc0.map(|t0| {
            let (now, at) = tsc_and_instant();
            let ns = at.saturating_duration_since(self.epoch).as_nanos() as f64;
            (t0, ns / (now.saturating_sub(t0).max(1)) as f64)
        });
        move |raw| match scale {
            Some((t0, per_tick)) => (raw.saturating_sub(t0) as f64 * per_tick) as u64,
            None => raw,
        }
    }
}

/// A counter reading and an `Instant` taken at the same moment: the instant bracketed by two
/// counter reads, the closest pair of a few tries (a thread preempted between two reads
/// would skew the rate), the counter at their midpoint.
fn tsc_and_instant() -> (u64, Instant) {
    let mut best: Option<(u64, u64, Instant)> = None;
    for _ in 0..16 {
        let a = read_tsc();
        let i = Instant::now();
        let b = read_tsc();
        let Some(gap) = b.checked_sub(a) else {
            continue;
        };
        if best.is_none_or(|(g, _, _)| gap < g) {
            best = Some((gap, a + gap / 2, i));
        }
        if gap < 200 {
            break;
        }
    }
    match best {
        Some((_, tsc, i)) => (tsc, i),
        None => (read_tsc(), Instant::now()),
    }
}

/// Whether the kernel keeps time with the time-stamp counter (read once per process).
fn tsc_is_the_clock() -> bool {
    static TSC: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TSC.get_or_init(|| {
        cfg!(all(target_arch = "x86_64", target_os = "linux", not(miri)))
            && std::fs::read_to_string(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            )
            .is_ok_and(|s| s.trim() == "tsc")
    })
}

#[inline]
fn read_tsc() -> u64 {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        // SAFETY: `rdtsc` exists on every x86-64 CPU, reads a register, and touches no
        // memory.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    {
        0 // never used: `tsc_is_the_clock` is false here
    }
}

/// One worker's buffer (owned by its thread).
///
/// Bookkeeping of the jobs running on the worker (`depth` of them, nested): the outermost
/// `base` were open at the last [`take`](Self::take) (their ends belong to a trace already
/// handed over, and are not recorded); the innermost `dropped_open` had their start dropped
/// (the buffer was full; once full it stays full until a take, so dropped starts are always
/// the innermost jobs); the others were recorded and their ends will be.
pub(crate) struct TraceBuf {
    clock: Clock,
    worker: u32,
    cap: usize,
    events: RefCell<Vec<Event>>,
    dropped: Cell<u64>,
    depth: Cell<u32>,
    base: Cell<u32>,
    dropped_open: Cell<u32>,
    next_task: Cell<u64>,
    /// Whether the last thing recorded is a job's start (a `Task` names that job only then:
    /// a data-flow task run without a start of its own, by a join popping it directly,
    /// must not take over the enclosing job).
    fresh: Cell<bool>,
    /// The last `Idle` was recorded (its `Resume` will be).
    idle_recorded: Cell<bool>,
    /// Failed steal attempts not recorded yet, and when the first of them was made.
    misses: Cell<u32>,
    miss_t: Cell<u64>,
    /// A working phase's failed attempts already counted into `misses`.
    phase_misses: Cell<u64>,
}

impl TraceBuf {
    pub(crate) fn new(clock: Clock, worker: usize, cap: usize) -> TraceBuf {
        TraceBuf {
            clock,
            worker: worker as u32,
            cap,
            events: RefCell::new(Vec::with_capacity(cap.min(1 << 16))),
            dropped: Cell::new(0),
            depth: Cell::new(0),
            base: Cell::new(0),
            dropped_open: Cell::new(0),
            next_task: Cell::new(0),
            fresh: Cell::new(false),
            idle_recorded: Cell::new(false),
            misses: Cell::new(0),
            miss_t: Cell::new(0),
            phase_misses: Cell::new(0),
        }
    }

    /// A raw stamp ([`Clock`]); `take` converts them.
    #[inline]
    fn now(&self) -> u64 {
        self.clock.raw()
    }

    /// Recorded jobs still open.
    fn open(&self) -> u32 {
        self.depth.get() - self.base.get() - self.dropped_open.get()
    }

    fn record(&self, kind: EventKind) {
        self.flush_misses();
        self.fresh.set(matches!(kind, EventKind::Start(_)));
        self.events.borrow_mut().push(Event {
            t_ns: self.now(),
            worker: self.worker,
            kind,
        });
    }

    /// Whether an event that opens something fits, keeping room for the ends of the open
    /// jobs and for a wake after a sleep (a full buffer still closes what it holds).
    fn fits(&self) -> bool {
        let fits = self.events.borrow().len() + self.open() as usize + 2 <= self.cap;
        if !fits {
            self.dropped.set(self.dropped.get() + 1);
        }
        fits
    }

    /// One queue of another examined in vain (counted; recorded as one
    /// [`EventKind::Misses`] before the next event).
    #[inline]
    pub(crate) fn miss(&self) {
        self.misses_n(1);
    }

    fn misses_n(&self, n: u64) {
        if n == 0 {
            return;
        }
        let m = self.misses.get();
        if m == 0 {
            self.miss_t.set(self.now());
        }
        self.misses
            .set(u32::try_from(u64::from(m) + n).unwrap_or(u32::MAX));
    }

    /// A working phase's worker: `misses` is its failed attempts so far in this phase
    /// (attempts less steals, from its counters); the new ones are counted.
    pub(crate) fn phase_misses(&self, misses: u64) {
        let seen = self.phase_misses.replace(misses);
        self.misses_n(misses.saturating_sub(seen));
    }

    /// A working phase begins on this worker (its counters start from zero).
    pub(crate) fn phase_begin(&self) {
        self.phase_misses.set(0);
    }

    /// Records the failed attempts counted so far, as one event, if that leaves room for
    /// what the buffer keeps room for (else they are dropped and counted).
    fn flush_misses(&self) {
        let m = self.misses.replace(0);
        if m == 0 {
            return;
        }
        let mut ev = self.events.borrow_mut();
        if ev.len() + self.open() as usize + 3 <= self.cap {
            ev.push(Event {
                t_ns: self.miss_t.get(),
                worker: self.worker,
                kind: EventKind::Misses { attempts: m },
            });
        } else {
            self.dropped.set(self.dropped.get() + 1);
        }
    }

    #[inline]
    pub(crate) fn start(&self, src: Source) {
        self.flush_misses();
        if self.dropped_open.get() == 0 && self.fits() {
            self.record(EventKind::Start(src));
        } else {
            self.fresh.set(false);
            if self.dropped_open.get() > 0 {
                self.dropped.set(self.dropped.get() + 1);
            }
            self.dropped_open.set(self.dropped_open.get() + 1);
        }
        self.depth.set(self.depth.get() + 1);
    }

    #[inline]
    pub(crate) fn end(&self) {
        let depth = self.depth.get();
        if depth > self.base.get() {
            if self.dropped_open.get() > 0 {
                self.dropped_open.set(self.dropped_open.get() - 1);
            } else {
                self.record(EventKind::End);
            }
        } else {
            // Opened before the last take.
            self.base.set(self.base.get() - 1);
        }
        self.fresh.set(false);
        self.depth.set(depth - 1);
    }

    /// A new data-flow task id: the worker (plus one) above bit 40, a sequence number below
    /// (never 0; below 2^53, so JavaScript viewers show it exactly).
    pub(crate) fn next_id(&self) -> u64 {
        let n = self.next_task.get() + 1;
        self.next_task.set(n);
        ((self.worker as u64 + 1) << 40) | n
    }

    /// Records a data-flow fact (task, dependence, release) if there is room.
    pub(crate) fn note(&self, kind: EventKind) {
        if matches!(kind, EventKind::Task { .. }) && !self.fresh.get() {
            // Its job's start was dropped (buffer full: counted), or the task runs without
            // a job of its own (a join popped it and ran it directly): nothing to attach
            // it to, and the graph goes without it.
            if self.dropped_open.get() > 0 {
                self.dropped.set(self.dropped.get() + 1);
            }
            return;
        }
        self.flush_misses();
        if self.fits() {
            self.record(kind);
        }
    }

    /// A working phase's task put a child (recorded if there is room).
    #[inline]
    pub(crate) fn put(&self) {
        self.flush_misses();
        if self.dropped_open.get() == 0 && self.fits() {
            self.record(EventKind::Put);
        }
    }

    /// A worker of a working phase found no task.
    pub(crate) fn idle(&self) {
        self.flush_misses();
        // Only inside a recorded job (the share; a share that runs inside a job whose start
        // went to an earlier take has no recorded job around it).
        let rec = self.dropped_open.get() == 0 && self.open() > 0 && self.fits();
        if rec {
            self.record(EventKind::Idle);
        }
        self.idle_recorded.set(rec);
    }

    /// It leaves the idle path (recorded exactly when its `idle` was).
    pub(crate) fn resume(&self) {
        if self.idle_recorded.replace(false) {
            self.record(EventKind::Resume);
        }
    }

    /// Makes room for a sleep and its wake (and failed attempts before them) before the worker takes the sleep lock (no
    /// allocation under it).
    pub(crate) fn reserve_for_sleep(&self) {
        self.events.borrow_mut().reserve(3);
    }

    /// Just before the worker waits, under the sleep lock.
    pub(crate) fn sleep(&self) {
        self.flush_misses();
        if self.dropped_open.get() == 0 && self.fits() {
            self.record(EventKind::Sleep);
        }
    }

    pub(crate) fn wake(&self) {
        // Recorded exactly when its sleep was (keeps the pair balanced).
        let slept = self
            .events
            .borrow()
            .last()
            .is_some_and(|e| e.kind == EventKind::Sleep);
        if slept {
            self.record(EventKind::Wake);
        }
    }

    /// Hands over what was recorded (raw stamps: [`Clock::converter`] turns them into
    /// nanoseconds), from inside the job that collects the trace (a
    /// broadcast's share, or the installed job of a broadcast from outside): that job's own
    /// start is removed (it is the take's doing), and the other recorded jobs still open
    /// are closed in the handed-over part at the time of the take. The ends of every job
    /// open now will not be recorded.
    pub(crate) fn take(&self) -> (Vec<Event>, u64) {
        self.flush_misses();
        let mut ev = std::mem::take(&mut *self.events.borrow_mut());
        let open = self.open();
        let mut to_close = open;
        // The collecting job is the innermost one; its start is in `ev` only if it was
        // recorded (no dropped start is open).
        if open > 0 && self.dropped_open.get() == 0 {
            let mut depth = 0u32;
            let mut found = None;
            for (i, e) in ev.iter().enumerate().rev() {
                match e.kind {
                    EventKind::End => depth += 1,
                    EventKind::Start(_) if depth == 0 => {
                        found = Some(i);
                        break;
                    }
                    EventKind::Start(_) => depth -= 1,
                    _ => {}
                }
            }
            if let Some(i) = found {
                ev.remove(i);
                to_close -= 1;
            }
        }
        let t = self.now();
        for _ in 0..to_close {
            ev.push(Event {
                t_ns: t,
                worker: self.worker,
                kind: EventKind::End,
            });
        }
        self.base.set(self.depth.get());
        self.dropped_open.set(0);
        let dropped = self.dropped.replace(0);
        // Monotone per worker (a thread that moves to a CPU whose counter lags slightly must
        // not reorder its own events).
        let mut last = 0;
        for e in &mut ev {
            e.t_ns = e.t_ns.max(last);
            last = e.t_ns;
        }
        (ev, dropped)
    }
}

/// Wraps events written by [`Trace::chrome_events`] (several traces may share one file, one
/// `pid` each) into a Chrome trace-event JSON document.
pub fn wrap_chrome_events(events: &str) -> String {
    let body = events.trim_end().trim_end_matches(',');
    format!("{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n{body}\n]}}\n")
}

/// A data-flow task as a trace saw it run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskNode {
    /// The worker that ran it.
    pub worker: u32,
    /// When its job started and ended (ns since the runtime started).
    pub start_ns: u64,
    /// See `start_ns`.
    pub end_ns: u64,
    /// Its own work: its duration less the jobs its worker ran nested inside it and less
    /// its waits for its children.
    pub work_ns: u64,
    /// The task or root scope that spawned it (0: the trace does not say).
    pub parent: u64,
    /// The parent's own work before it spawned this task (ns).
    pub spawned_after_ns: u64,
    /// How many children the parent had spawned before this one.
    pub spawn_index: usize,
}

/// The data-flow tasks of a trace and their dependences ([`Trace::task_graph`]).
#[derive(Clone, Debug, Default)]
pub struct TaskGraph {
    /// The tasks that ran, by id.
    pub tasks: std::collections::BTreeMap<u64, TaskNode>,
    /// Dependences `(from, to)` between siblings, as spawned.
    pub deps: Vec<(u64, u64)>,
    /// The root scopes (scopes entered outside any data-flow task), in the order they began.
    pub roots: Vec<u64>,
    /// Per root scope, its own work (its code's time less nested jobs and waits) up to its
    /// last spawn, `sync` or wait for its children (ns).
    pub root_work: std::collections::BTreeMap<u64, u64>,
    /// Per task or root scope, each `sync` it returned from: its own work at that point
    /// (ns) and how many children it had spawned before.
    pub syncs: std::collections::BTreeMap<u64, Vec<(u64, usize)>>,
}

/// A time in the ideal schedule and the chain of tasks that decides it (an index into the
/// chain arena, `usize::MAX`: none).
#[derive(Clone, Copy)]
struct Timed {
    t: u64,
    chain: usize,
}

impl TaskGraph {
    /// The critical path (span): the longest chain of work that must run in order, and its
    /// length in ns: its tasks and root scopes in order (a root scope's own work is its
    /// spawning; a task or scope appears again where its own work goes on after a child it
    /// waited for). The chain follows
    /// - a parent's own work up to a spawn into the child (a child starts no earlier than
    ///   its parent spawns it),
    /// - a dependence between siblings into the later one,
    /// - a child's completion into its parent's work after a `sync`, and into the parent's
    ///   completion (a task completes when its children have).
    ///
    /// The length is the finish time of the last root scope with unboundedly many workers
    /// and no overheads, root scopes one after the other (as they are when a program runs
    /// its scopes in sequence; a scope opened inside a data-flow task, or scopes run at the
    /// same time by several threads, are counted as root scopes too, which overstates the
    /// span and, for a scope inside a task, the work). Tasks whose spawn the trace did not
    /// see (dropped events, or a task run without a job of its own) start at time 0,
    /// alongside the root scopes; dependences on tasks it did not see run are left out.
    pub fn critical_path(&self) -> (Vec<u64>, u64) {
        use std::collections::{BTreeMap, HashMap, HashSet};
        let known: HashSet<u64> = self.roots.iter().copied().collect();
        // Children per parent, in spawn order; tasks without a known parent hang off the
        // synthetic root 0.
        let mut children: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for (&id, t) in &self.tasks {
            let p = if self.tasks.contains_key(&t.parent) || known.contains(&t.parent) {
                t.parent
            } else {
                0
            };
            children.entry(p).or_default().push(id);
        }
        for kids in children.values_mut() {
            kids.sort_by_key(|c| (self.tasks[c].spawn_index, *c));
        }
        let mut preds: HashMap<u64, Vec<u64>> = HashMap::new();
        for &(f, t) in &self.deps {
            if self.tasks.contains_key(&f) && self.tasks.contains_key(&t) && f != t {
                preds.entry(t).or_default().push(f);
            }
        }
        // The chain arena: (task or scope, previous link).
        let mut chain: Vec<(u64, usize)> = Vec::new();
        let mut work = |at: Timed, id: u64, ns: u64| -> Timed {
            if ns == 0 {
                return at;
            }
            let link = match chain.get(at.chain) {
                Some(&(top, _)) if top == id => at.chain,
                _ => {
                    chain.push((id, at.chain));
                    chain.len() - 1
                }
            };
            Timed {
                t: at.t + ns,
                chain: link,
            }
        };
        let later = |a: Timed, b: Timed| if b.t > a.t { b } else { a };
        let none = Timed {
            t: 0,
            chain: usize::MAX,
        };
        let no_syncs = Vec::new();
        // One task or scope being walked (an explicit stack: nesting can be deep).
        struct Walk<'g> {
            id: u64,
            kids: &'g [u64],
            syncs: &'g [(u64, usize)],
            next_sync: usize,
            next_kid: usize,
            cur: Timed,
            done: Timed,
            off: u64,
        }
        let mut fin: HashMap<u64, Timed> = HashMap::new();
        let mut walk_from =
            |root: u64, est: Timed, work: &mut dyn FnMut(Timed, u64, u64) -> Timed| {
                let open = |id: u64, est: Timed| Walk {
                    id,
                    kids: children.get(&id).map_or(&[][..], |v| &v[..]),
                    syncs: self.syncs.get(&id).unwrap_or(&no_syncs),
                    next_sync: 0,
                    next_kid: 0,
                    cur: est,
                    done: est,
                    off: 0,
                };
                let mut stack = vec![open(root, est)];
                let mut returned: Option<Timed> = None;
                loop {
                    let w = stack.last_mut().expect("a walk");
                    if let Some(f) = returned.take() {
                        fin.insert(w.kids[w.next_kid], f);
                        w.done = later(w.done, f);
                        w.next_kid += 1;
                    }
                    if let Some(&c) = w.kids.get(w.next_kid) {
                        let node = &self.tasks[&c];
                        // The parent's syncs before this spawn.
                        while let Some(&(at, _)) =
                            w.syncs.get(w.next_sync).filter(|s| s.1 <= node.spawn_index)
                        {
                            w.cur = work(w.cur, w.id, at.saturating_sub(w.off));
                            w.off = w.off.max(at);
                            w.cur = later(w.cur, w.done);
                            w.next_sync += 1;
                        }
                        // (Tasks of unknown parents start at 0.)
                        let at = if w.id == 0 { 0 } else { node.spawned_after_ns };
                        w.cur = work(w.cur, w.id, at.saturating_sub(w.off));
                        w.off = w.off.max(at);
                        let mut start = w.cur;
                        for p in preds.get(&c).map_or(&[][..], |v| &v[..]) {
                            if let Some(&f) = fin.get(p) {
                                start = later(start, f);
                            }
                        }
                        stack.push(open(c, start));
                        continue;
                    }
                    for &(at, _) in &w.syncs[w.next_sync..] {
                        w.cur = work(w.cur, w.id, at.saturating_sub(w.off));
                        w.off = w.off.max(at);
                        w.cur = later(w.cur, w.done);
                    }
                    let total = match self.tasks.get(&w.id) {
                        Some(t) => t.work_ns,
                        None => self.root_work.get(&w.id).copied().unwrap_or(w.off),
                    };
                    w.cur = work(w.cur, w.id, total.saturating_sub(w.off));
                    let f = later(w.cur, w.done);
                    stack.pop();
                    if stack.is_empty() {
                        return f;
                    }
                    returned = Some(f);
                }
            };
        // Tasks of unknown parents from time 0; the root scopes one after the other.
        let orphans = walk_from(0, none, &mut work);
        let mut t = none;
        for &r in &self.roots {
            t = walk_from(r, t, &mut work);
        }
        let t = later(t, orphans);
        let mut path = Vec::new();
        let mut at = t.chain;
        while let Some(&(id, prev)) = chain.get(at) {
            if id != 0 {
                path.push(id);
            }
            at = prev;
        }
        path.reverse();
        path.dedup();
        (path, t.t)
    }

    /// The work: the tasks' own work and the root scopes' own work (spawning), summed (ns).
    /// At least the critical path's length.
    pub fn work_ns(&self) -> u64 {
        self.tasks.values().map(|t| t.work_ns).sum::<u64>() + self.root_work.values().sum::<u64>()
    }

    /// The graph in Graphviz DOT: a box per task (its worker and own work in µs), an ellipse
    /// per root scope (its own work), an arrow per dependence, a dashed one per spawn (parent to child), the critical path in red
    /// (dotted where it goes from a child back to the parent that waited for it).
    pub fn dot(&self, name: &str) -> String {
        use std::fmt::Write;
        let (path, len) = self.critical_path();
        let on: std::collections::BTreeSet<u64> = path.iter().copied().collect();
        let crit: std::collections::BTreeSet<(u64, u64)> =
            path.windows(2).map(|w| (w[0], w[1])).collect();
        let mut s = String::new();
        let _ = writeln!(
            s,
            "digraph \"{}\" {{\n  label=\"{}: {} tasks, work {:.3} ms, critical path {:.3} ms\";\n  node [shape=box, fontsize=10];",
            name.replace('"', "'"),
            name.replace('"', "'"),
            self.tasks.len(),
            self.work_ns() as f64 / 1e6,
            len as f64 / 1e6
        );
        for (id, w) in &self.root_work {
            let _ = writeln!(
                s,
                "  t{id} [shape=ellipse, label=\"root scope {:.1} us\"{}];",
                *w as f64 / 1e3,
                if on.contains(id) {
                    ", color=red, penwidth=2"
                } else {
                    ""
                }
            );
        }
        for (id, t) in &self.tasks {
            let _ = writeln!(
                s,
                "  t{id} [label=\"w{} {:.1} us\"{}];",
                t.worker,
                t.work_ns as f64 / 1e3,
                if on.contains(id) {
                    ", color=red, penwidth=2"
                } else {
                    ""
                }
            );
        }
        let mut drawn = std::collections::BTreeSet::new();
        for &(f, t) in &self.deps {
            if self.tasks.contains_key(&f) && self.tasks.contains_key(&t) && drawn.insert((f, t)) {
                let _ = writeln!(
                    s,
                    "  t{f} -> t{t}{};",
                    if crit.contains(&(f, t)) {
                        " [color=red, penwidth=2]"
                    } else {
                        ""
                    }
                );
            }
        }
        // Spawns (dashed): a child starts no earlier than its parent spawns it.
        for (&c, t) in &self.tasks {
            let p = t.parent;
            let known = self.tasks.contains_key(&p) || self.root_work.contains_key(&p);
            if known && drawn.insert((p, c)) {
                let _ = writeln!(
                    s,
                    "  t{p} -> t{c} [style=dashed, {}];",
                    if crit.contains(&(p, c)) {
                        "color=red, penwidth=2"
                    } else {
                        "color=grey"
                    }
                );
            }
        }
        // Steps of the critical path that are a child's completion its parent waited for.
        for &(a, b) in &crit {
            if drawn.insert((a, b)) {
                let _ = writeln!(
                    s,
                    "  t{a} -> t{b} [style=dotted, color=red, penwidth=2, label=\"waited\"];"
                );
            }
        }
        s.push_str("}\n");
        s
    }
}

#[cfg(test)]
mod tests {
    /// The documented event size ([`RuntimeBuilder::trace`](super::super::RuntimeBuilder::trace)).
    #[test]
    fn an_event_is_40_bytes() {
        assert_eq!(std::mem::size_of::<super::Event>(), 40);
    }

    fn node(parent: u64, after: u64, index: usize, work: u64) -> super::TaskNode {
        super::TaskNode {
            worker: 0,
            start_ns: 0,
            end_ns: 0,
            work_ns: work,
            parent,
            spawned_after_ns: after,
            spawn_index: index,
        }
    }

    /// The span of a hand-built graph: root scope 1 works 10 ns and spawns task 2, which
    /// works 5, spawns 3 (100 ns) and a child the trace did not see, `sync`s, works 1 more,
    /// spawns 4 (50 ns) and works 2 more. Then a task of unknown parent (500 ns), and a
    /// chain of nested tasks deeper than any call stack.
    #[test]
    fn critical_path_follows_spawns_syncs_and_unknown_parents() {
        let mut g = super::TaskGraph::default();
        g.roots.push(1);
        g.root_work.insert(1, 10);
        g.tasks.insert(2, node(1, 10, 0, 8));
        g.tasks.insert(3, node(2, 5, 0, 100));
        // Spawned after the unseen child (index 1) and after the sync (which followed 2
        // spawns): it starts only once 3 has finished.
        g.tasks.insert(4, node(2, 6, 2, 50));
        g.syncs.insert(2, vec![(5, 2)]);
        let (path, len) = g.critical_path();
        assert_eq!(len, 10 + 5 + 100 + 1 + 50, "{path:?}");
        assert_eq!(path, vec![1, 2, 3, 2, 4]);
        assert_eq!(g.work_ns(), 10 + 8 + 100 + 50);
        // A task whose parent is unknown starts at 0, alongside the root scopes.
        g.tasks.insert(9, node(77, 0, 0, 500));
        assert_eq!(g.critical_path(), (vec![9], 500));
        // 200 000 nested tasks, each spawned by the one before at the end of its work.
        let mut deep = super::TaskGraph::default();
        deep.roots.push(1);
        deep.root_work.insert(1, 0);
        for id in 2..200_002u64 {
            deep.tasks.insert(id, node(id - 1, 1, 0, 1));
        }
        let (path, len) = deep.critical_path();
        // The root scope spawns the first at 1 ns: it is on the path too.
        assert_eq!((path.len(), len), (200_001, 200_001));
    }

    /// Stamps convert to nanoseconds since the clock's start that agree with `Instant`
    /// (whichever source the clock uses here).
    #[test]
    fn the_clock_agrees_with_instant() {
        let before = std::time::Instant::now();
        let c = super::Clock::start();
        let a = c.raw();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let b = c.raw();
        let ns = c.converter();
        let outer = before.elapsed().as_nanos() as u64;
        let (a, b) = (ns(a), ns(b));
        // Within 5 % (the rate is measured over this short run).
        assert!(a <= b && b - a >= 19_000_000, "{a} {b}");
        assert!(b <= outer + outer / 20, "{b} after {outer} ns");
    }
}
