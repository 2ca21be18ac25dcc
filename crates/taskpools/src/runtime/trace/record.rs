//! Recording: the trace's clock and each worker's own bounded buffer of events, written by the
//! worker alone (no shared atomics, no locks) and handed over when the trace is taken.

use std::cell::{Cell, RefCell};
use std::time::Instant;

use super::{Event, EventKind, Source};

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
    pub(super) fn raw(&self) -> u64 {
        match self.tsc0 {
            Some(_) => read_tsc(),
            None => self.epoch.elapsed().as_nanos() as u64,
        }
    }

    /// Converts raw stamps taken so far to nanoseconds since the start: one rate for all of
    /// them (a monotone map), measured from the start to now.
    pub(crate) fn converter(&self) -> impl Fn(u64) -> u64 + use<> {
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
