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
//! [`EventKind::Put`], and the time a worker spends without a task of the phase (spinning or
//! asleep) is bracketed by [`EventKind::Idle`] and [`EventKind::Resume`].
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
                EventKind::Dep { .. } | EventKind::Ready { .. } => {}
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
                EventKind::Put => {
                    let _ = writeln!(
                        out,
                        r#"{{"name":"put","cat":"phase","ph":"i","s":"t","ts":{ts:.3},"pid":{pid},"tid":{w}}},"#
                    );
                }
                EventKind::Sleep => {
                    let _ = writeln!(
                        out,
                        r#"{{"name":"sleep","cat":"idle","ph":"B","ts":{ts:.3},"pid":{pid},"tid":{w}}},"#
                    );
                }
                EventKind::Task { id } => {
                    let _ = writeln!(
                        out,
                        r#"{{"name":"task","cat":"dataflow","ph":"i","s":"t","ts":{ts:.3},"pid":{pid},"tid":{w},"args":{{"id":{id}}}}},"#
                    );
                    if released.remove(&id) {
                        let _ = writeln!(
                            out,
                            r#"{{"name":"release","cat":"dependence","ph":"f","bp":"e","id":"d{id}","ts":{ts:.3},"pid":{pid},"tid":{w}}},"#
                        );
                    }
                }
                EventKind::Dep { from, to } => {
                    let _ = writeln!(
                        out,
                        r#"{{"name":"dep","cat":"dataflow","ph":"i","s":"t","ts":{ts:.3},"pid":{pid},"tid":{w},"args":{{"from":{from},"to":{to}}}}},"#
                    );
                }
                EventKind::Ready { task, by } => {
                    let _ = writeln!(
                        out,
                        r#"{{"name":"ready","cat":"dataflow","ph":"i","s":"t","ts":{ts:.3},"pid":{pid},"tid":{w},"args":{{"task":{task},"by":{by}}}}},"#
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

    /// The data-flow task graph of this trace: each task that ran (with its worker, times
    /// and exclusive time, i.e. without the jobs its worker ran nested inside it while it
    /// waited) and the dependences between them.
    pub fn task_graph(&self) -> TaskGraph {
        struct Open {
            start: u64,
            task: Option<u64>,
            nested: u64,
        }
        let mut stacks: Vec<Vec<Open>> = (0..self.workers).map(|_| Vec::new()).collect();
        let mut g = TaskGraph::default();
        for e in &self.events {
            let w = e.worker as usize;
            let Some(stack) = stacks.get_mut(w) else {
                continue;
            };
            match e.kind {
                EventKind::Start(_) => stack.push(Open {
                    start: e.t_ns,
                    task: None,
                    nested: 0,
                }),
                EventKind::Task { id } => {
                    if let Some(top) = stack.last_mut() {
                        top.task.get_or_insert(id);
                    }
                }
                EventKind::End => {
                    if let Some(o) = stack.pop() {
                        let dur = e.t_ns.saturating_sub(o.start);
                        if let Some(parent) = stack.last_mut() {
                            parent.nested += dur;
                        }
                        if let Some(id) = o.task {
                            g.tasks.insert(
                                id,
                                TaskNode {
                                    worker: e.worker,
                                    start_ns: o.start,
                                    end_ns: e.t_ns.max(o.start),
                                    work_ns: dur.saturating_sub(o.nested),
                                },
                            );
                        }
                    }
                }
                EventKind::Dep { from, to } => g.deps.push((from, to)),
                _ => {}
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

/// One worker's buffer (owned by its thread).
///
/// Bookkeeping of the jobs running on the worker (`depth` of them, nested): the outermost
/// `base` were open at the last [`take`](Self::take) (their ends belong to a trace already
/// handed over, and are not recorded); the innermost `dropped_open` had their start dropped
/// (the buffer was full; once full it stays full until a take, so dropped starts are always
/// the innermost jobs); the others were recorded and their ends will be.
pub(crate) struct TraceBuf {
    epoch: Instant,
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
}

impl TraceBuf {
    pub(crate) fn new(epoch: Instant, worker: usize, cap: usize) -> TraceBuf {
        TraceBuf {
            epoch,
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
        }
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Recorded jobs still open.
    fn open(&self) -> u32 {
        self.depth.get() - self.base.get() - self.dropped_open.get()
    }

    fn record(&self, kind: EventKind) {
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

    #[inline]
    pub(crate) fn start(&self, src: Source) {
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
        if self.fits() {
            self.record(kind);
        }
    }

    /// A working phase's task put a child (recorded if there is room).
    #[inline]
    pub(crate) fn put(&self) {
        if self.dropped_open.get() == 0 && self.fits() {
            self.record(EventKind::Put);
        }
    }

    /// A worker of a working phase found no task.
    pub(crate) fn idle(&self) {
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

    /// Makes room for a sleep and its wake before the worker takes the sleep lock (no
    /// allocation under it).
    pub(crate) fn reserve_for_sleep(&self) {
        self.events.borrow_mut().reserve(2);
    }

    /// Just before the worker waits, under the sleep lock.
    pub(crate) fn sleep(&self) {
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

    /// Hands over what was recorded, from inside the job that collects the trace (a
    /// broadcast's share, or the installed job of a broadcast from outside): that job's own
    /// start is removed (it is the take's doing), and the other recorded jobs still open
    /// are closed in the handed-over part at the time of the take. The ends of every job
    /// open now will not be recorded.
    pub(crate) fn take(&self) -> (Vec<Event>, u64) {
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
    /// Its own work: its duration less the jobs its worker ran nested inside it.
    pub work_ns: u64,
}

/// The data-flow tasks of a trace and their dependences ([`Trace::task_graph`]).
#[derive(Clone, Debug, Default)]
pub struct TaskGraph {
    /// The tasks that ran, by id.
    pub tasks: std::collections::BTreeMap<u64, TaskNode>,
    /// Dependences `(from, to)` between siblings, as spawned.
    pub deps: Vec<(u64, u64)>,
}

impl TaskGraph {
    /// The longest chain of dependences weighted by the tasks' own work: its tasks in
    /// order and its length in ns. Dependences on tasks the trace did not see run are left
    /// out. Parent-child nesting is not an edge here (a parent's work runs before and after
    /// its children's), so for nested programs this is the longest chain among siblings.
    pub fn critical_path(&self) -> (Vec<u64>, u64) {
        use std::collections::BTreeMap;
        let mut succ: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        let mut indeg: BTreeMap<u64, usize> = self.tasks.keys().map(|&k| (k, 0)).collect();
        for &(f, t) in &self.deps {
            if self.tasks.contains_key(&f) && self.tasks.contains_key(&t) && f != t {
                succ.entry(f).or_default().push(t);
                *indeg.get_mut(&t).expect("a task") += 1;
            }
        }
        // Longest path ending at each task, in a topological order (Kahn).
        let mut best: BTreeMap<u64, (u64, Option<u64>)> = self
            .tasks
            .iter()
            .map(|(&k, t)| (k, (t.work_ns, None)))
            .collect();
        let mut ready: Vec<u64> = indeg
            .iter()
            .filter(|(_, &d)| d == 0)
            .map(|(&k, _)| k)
            .collect();
        while let Some(k) = ready.pop() {
            let len = best[&k].0;
            for &t in succ.get(&k).map_or(&[][..], |v| &v[..]) {
                let cand = len + self.tasks[&t].work_ns;
                let e = best.get_mut(&t).expect("a task");
                if cand > e.0 {
                    *e = (cand, Some(k));
                }
                let d = indeg.get_mut(&t).expect("a task");
                *d -= 1;
                if *d == 0 {
                    ready.push(t);
                }
            }
        }
        let Some((&end, &(len, _))) = best.iter().max_by_key(|(_, (l, _))| *l) else {
            return (Vec::new(), 0);
        };
        let mut path = vec![end];
        let mut at = end;
        while let Some(&(_, Some(p))) = best.get(&at) {
            path.push(p);
            at = p;
        }
        path.reverse();
        (path, len)
    }

    /// The tasks' own work, summed (ns).
    pub fn work_ns(&self) -> u64 {
        self.tasks.values().map(|t| t.work_ns).sum()
    }

    /// The graph in Graphviz DOT: a box per task (its worker and own work in µs), an arrow
    /// per dependence, the critical path in red.
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
        for &(f, t) in &self.deps {
            if self.tasks.contains_key(&f) && self.tasks.contains_key(&t) {
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
}
