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
}

impl Source {
    /// A short name (`own`, `place`, `place-steal`, `steal`, `injected`, `mail`).
    pub fn name(self) -> &'static str {
        match self {
            Source::Own => "own",
            Source::Place => "place",
            Source::PlaceSteal { .. } => "place-steal",
            Source::Steal { .. } => "steal",
            Source::Injected => "injected",
            Source::Mail => "mail",
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
                    if asleep[w] {
                        return Err(format!("event {i}: worker {w} starts a job asleep"));
                    }
                    if let Source::Steal { victim } = src {
                        if victim as usize >= self.workers || victim as usize == w {
                            return Err(format!("event {i}: worker {w} stole from {victim}"));
                        }
                    }
                    open[w] += 1;
                }
                EventKind::End => {
                    if open[w] == 0 {
                        return Err(format!("event {i}: worker {w} ends a job it did not start"));
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
            }
        }
        match open.iter().position(|&o| o != 0) {
            Some(w) => Err(format!("worker {w} has {} unfinished jobs", open[w])),
            None => Ok(()),
        }
    }

    /// Appends this trace's events in the Chrome trace-event format (what Perfetto and
    /// `chrome://tracing` open) to `out`, as process `pid` named `name`: one track per
    /// worker, a slice per job (named by where it was found) and per sleep, and a flow
    /// arrow from the victim's track to the thief's for every steal between workers.
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
        for e in &self.events {
            let (w, ts) = (e.worker, us(e.t_ns));
            match e.kind {
                EventKind::Start(src) => {
                    let extra = match src {
                        Source::Steal { victim } => format!(r#","victim":{victim}"#),
                        Source::PlaceSteal { place } => format!(r#","victim_place":{place}"#),
                        _ => String::new(),
                    };
                    let _ = writeln!(
                        out,
                        r#"{{"name":"{}","cat":"job","ph":"B","ts":{ts:.3},"pid":{pid},"tid":{w},"args":{{"from":"{}"{extra}}}}},"#,
                        src.name(),
                        src.name()
                    );
                    if let Source::Steal { victim } = src {
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
                EventKind::End | EventKind::Wake => {
                    let _ = writeln!(out, r#"{{"ph":"E","ts":{ts:.3},"pid":{pid},"tid":{w}}},"#);
                }
                EventKind::Sleep => {
                    let _ = writeln!(
                        out,
                        r#"{{"name":"sleep","cat":"idle","ph":"B","ts":{ts:.3},"pid":{pid},"tid":{w}}},"#
                    );
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
        self.depth.set(depth - 1);
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
