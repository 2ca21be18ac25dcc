//! The working phase (seed 004 §2, `tpool_run`): one loop for every pool — get a task, run it,
//! repeat — with per-worker counters, wake-up policies, correct termination (the `idle`
//! module's docs) and panic propagation. A phase runs on the workers of a [`Runtime`]: worker
//! `i` of the runtime is worker `i` of the phase, so no thread is started per phase.

mod hints;
mod idle;
pub(crate) mod inbox;
#[cfg(all(test, loom))]
mod loom_tests;

pub use crate::stats::{RunReport, WorkerStats};
pub use idle::WakePolicy;

use std::cell::Cell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

pub(crate) use idle::Coordinator;

use crate::pool::{PutOutcome, TaskPool};
use crate::queue::private_deque::{OwnerStack, PrivateDeque};
use crate::runtime::broadcast::{broadcast_claimed, claim, Claim};
use crate::runtime::trace::{Source, TraceBuf};
use crate::runtime::worker::WorkerThread;
use crate::runtime::{global, Registry, Runtime};
use crate::sync::Arc;
use crate::task::{Ctx, PutAtError, PutSink, Task};
use crate::Error;

/// How the working phase runs, independent of the pool.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    /// Which puts wake sleeping workers.
    pub wake: WakePolicy,
    /// Pin worker i to CPU i mod (number of CPUs). Pinning is a property of a runtime's
    /// workers: this applies when the phase starts a runtime of its own (see [`run_pool`]),
    /// and a pinned phase never runs on the unpinned global runtime.
    pub pin: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            wake: WakePolicy::OnEmpty,
            pin: false,
        }
    }
}

struct Sink<'a, T: Send, P: TaskPool<T>, H: HintSink<T>> {
    pool: &'a P,
    local: &'a mut P::Local,
    coord: &'a Coordinator,
    /// Zero-sized in a plain phase, so the plain sink is what it was before hints.
    hints: H,
    puts: u64,
    trace: Option<&'a TraceBuf>,
    /// The phase's wake-up policy (read once per phase).
    policy: WakePolicy,
    /// Pools with [`TaskPool::PUTS_WAIT_FOR_OWNER`]: a put since the last flush made the
    /// worker's deque non-empty.
    wake_due: Cell<bool>,
    /// Pools with [`TaskPool::PUTS_WAIT_FOR_OWNER`]: how many of `puts` are handled (recorded
    /// and woken for): those flushed, and puts to other places, which an inbox handles at
    /// once.
    flushed: Cell<u64>,
}

impl<T: Send, P: TaskPool<T>, H: HintSink<T>> Sink<'_, T, P, H> {
    /// Pools with [`TaskPool::PUTS_WAIT_FOR_OWNER`]: records the pending puts in the trace
    /// and wakes sleepers for them, as each put would have done.
    #[cold]
    #[inline(never)]
    fn flush(&self) {
        let puts = self.puts - self.flushed.replace(self.puts);
        if let Some(tr) = self.trace {
            for _ in 0..puts {
                tr.put();
            }
        }
        if self.wake_owed_for(puts) {
            self.coord.on_deferred_puts(puts);
        }
        self.wake_due.set(false);
    }

    /// Pools with [`TaskPool::PUTS_WAIT_FOR_OWNER`]: whether puts are owed a wake-up.
    #[inline]
    fn wake_owed(&self) -> bool {
        self.wake_owed_for(self.puts - self.flushed.get())
    }

    #[inline]
    fn wake_owed_for(&self, pending: u64) -> bool {
        match self.policy {
            WakePolicy::OnEmpty => self.wake_due.get(),
            WakePolicy::EveryPut => pending > 0,
            WakePolicy::Spin => false,
        }
    }
}

impl<T: Send, P: TaskPool<T>, H: HintSink<T>> PutSink<T> for Sink<'_, T, P, H> {
    #[inline]
    fn put(&mut self, task: T) {
        self.puts += 1;
        // `pool.put` is called in one place only, or the compiler stops inlining it here.
        if !P::PUTS_WAIT_FOR_OWNER {
            if let Some(tr) = self.trace {
                traced_put(tr);
            }
        }
        if let PutOutcome::Shared { was_empty } = self.pool.put(self.local, task) {
            if P::PUTS_WAIT_FOR_OWNER {
                // No call here: the wake-up and the trace record wait for the end of the
                // task (or its next `queued`), where the owner would answer a thief anyway.
                // In a task's loop of puts even a call that is never made costs registers
                // (docs of `TaskPool::PUTS_WAIT_FOR_OWNER`); so does a branch here.
                self.wake_due.set(self.wake_due.get() | was_empty);
            } else {
                self.coord.on_shared_put(was_empty);
            }
        }
    }

    #[inline]
    fn queued(&self) -> usize {
        // The owner may answer a thief in `own_backlog`: the thief must be awake to ask.
        if P::PUTS_WAIT_FOR_OWNER
            && (self.wake_owed() || (self.trace.is_some() && self.puts > self.flushed.get()))
        {
            self.flush();
        }
        self.pool.own_backlog(self.local)
    }

    fn put_at(&mut self, me: usize, place: usize, task: T) -> Result<(), PutAtError<T>> {
        // A constant: a plain phase's sink has no second call of the pool's `put` (which
        // would make the compiler stop inlining `put` into the loop).
        if !H::TAKES_HINTS {
            return Err(PutAtError {
                error: Error::PhaseWithoutHints,
                task,
            });
        }
        match self.hints.put_at(me, place, task, self.coord)? {
            Some(task) => self.put(task),
            None => {
                self.puts += 1;
                if P::PUTS_WAIT_FOR_OWNER {
                    // Recorded and woken for at once, by the place's inbox.
                    self.flushed.set(self.flushed.get() + 1);
                }
                if let Some(tr) = self.trace {
                    traced_put(tr);
                }
            }
        }
        Ok(())
    }

    fn places(&self) -> usize {
        self.hints.places()
    }
}

/// The sink of [`Busy::run_stack`]: puts go onto the lent stack and are counted by its
/// growth; `queued` flushes them (hint, wake-up, trace) and answers a pending request.
struct StackSink<'a, T: Send, P: TaskPool<T>> {
    pool: &'a P,
    local: &'a P::Local,
    /// The lent stack; `queued` (a `&self` method) gives it back and lends it again.
    stack: *mut OwnerStack<T>,
    coord: &'a Coordinator,
    /// The stack's length without the puts not yet flushed (recorded and woken for) by
    /// `queued`: a put is a push and nothing else, and the puts are counted as growth.
    base: Cell<usize>,
    trace: Option<&'a TraceBuf>,
    policy: WakePolicy,
    /// The deque's work hint (set by a flush).
    hint: Cell<bool>,
    /// Puts flushed by `queued`.
    flushed: Cell<u64>,
    _task: std::marker::PhantomData<&'a mut OwnerStack<T>>,
}

impl<T: Send, P: TaskPool<T>> StackSink<'_, T, P> {
    fn deque(&self) -> &PrivateDeque<T> {
        self.pool
            .owner_deque(self.local)
            .expect("checked by the loop")
    }
}

// The sink's rare paths, out of line and given values, not the sink: a call that saw the
// sink's address would keep the lent stack in memory for the whole loop.

/// Records `pending` flushed puts, sets the hint if it was off, and wakes as the policy says.
#[cold]
#[inline(never)]
fn flush_puts<T>(
    deque: &PrivateDeque<T>,
    coord: &Coordinator,
    trace: Option<&TraceBuf>,
    policy: WakePolicy,
    pending: u64,
    was_off: bool,
) {
    if let Some(tr) = trace {
        for _ in 0..pending {
            tr.put();
        }
    }
    #[cfg(loom)]
    let was_off = was_off && !coord.broken_flush_hint;
    if was_off {
        deque.set_hint(true);
    }
    match policy {
        WakePolicy::OnEmpty if was_off => coord.on_deferred_puts(pending),
        WakePolicy::EveryPut => coord.on_deferred_puts(pending),
        _ => {}
    }
}

/// Answers a pending request from the lent stack's oldest element.
#[cold]
#[inline(never)]
fn answer_request<T>(deque: &PrivateDeque<T>, stack: OwnerStack<T>) -> OwnerStack<T> {
    deque.give_back(stack);
    deque.poll();
    deque.lend()
}

impl<T: Send, P: TaskPool<T>> PutSink<T> for StackSink<'_, T, P> {
    #[inline(always)]
    fn put(&mut self, task: T) {
        // SAFETY: `stack` points to the loop's lent stack, which outlives this sink; `&mut
        // self` excludes every other use, and no reference to the stack outlives a call of
        // `put` or `queued`.
        unsafe { (*self.stack).push(task) };
    }

    #[inline]
    fn queued(&self) -> usize {
        // SAFETY: as in `put`: a `&self` method of this sink is the only user of the stack
        // now (`put` needs `&mut self`).
        let stack = unsafe { &mut *self.stack };
        let len = stack.len();
        let pending = len - self.base.replace(len);
        if pending != 0 {
            // A flush: the puts since the last one are recorded and woken for.
            self.flushed.set(self.flushed.get() + pending as u64);
            let was_off = !self.hint.replace(true);
            flush_puts(
                self.deque(),
                self.coord,
                self.trace,
                self.policy,
                pending as u64,
                was_off,
            );
        }
        if self.deque().pending() {
            *stack = answer_request(self.deque(), std::mem::take(stack));
            // After the flush: no put is pending, whatever the thief took.
            self.base.set(stack.len());
            self.hint.set(self.deque().advertised());
        }
        stack.len()
    }

    fn put_at(&mut self, _me: usize, _place: usize, task: T) -> Result<(), PutAtError<T>> {
        // The stack loop runs only plain phases.
        Err(PutAtError {
            error: Error::PhaseWithoutHints,
            task,
        })
    }

    fn places(&self) -> usize {
        0
    }
}

// The traced phase's recording, out of line: the untraced phase pays one predictable branch
// per task and per put. (The loop is deliberately not compiled twice, traced and untraced:
// with two callers, the compiler stops inlining the pool's `get` and `put` into the loop,
// which costs far more than the branches — about 30 instructions per task on `dq8`.)
#[inline(never)]
fn traced_put(tr: &TraceBuf) {
    tr.put();
}

#[inline(never)]
fn traced_task(tr: &TraceBuf, me: usize, misses: u64) {
    tr.phase_misses(misses);
    tr.start(match crate::stats::take_steal() {
        Some((victim, tasks)) if victim as usize != me => Source::PoolSteal { victim, tasks },
        _ => Source::Pool,
    });
}

/// A traced task's span: its end is recorded when this drops (also when the task panics).
struct TaskSpan<'a> {
    trace: Option<&'a TraceBuf>,
    /// Puts to record before the end (pools with [`TaskPool::PUTS_WAIT_FOR_OWNER`]: those
    /// made since the task's last `queued`; set when the task returns).
    puts: u64,
}

impl Drop for TaskSpan<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Some(tr) = self.trace {
            traced_end(tr, self.puts);
        }
    }
}

#[inline(never)]
fn traced_idle(tr: &TraceBuf, misses: u64) {
    tr.phase_misses(misses);
    tr.idle();
}

#[inline(never)]
fn traced_end(tr: &TraceBuf, puts: u64) {
    for _ in 0..puts {
        tr.put();
    }
    tr.end();
}

/// What a working phase spread over several processes (the `distributed` module) or over
/// places (the `hints` module) adds to the plain one. [`NoRemote`] adds nothing: its hooks are
/// empty and inlined, so a plain phase compiles to the loop it always was. Each kind of phase
/// is its own instantiation of the loop, chosen at compile time by the entry the user calls:
/// a plain phase never pays for hints (a second instantiation of the loop for the same pool
/// and task type makes the compiler stop inlining the pool's `get` and `put` into it).
pub(crate) trait Remote<T: Send>: Sync {
    /// Whether the phase ends only when someone outside the workers calls
    /// [`Coordinator::end`]; if not, the last worker to go idle ends it (local termination).
    const EXTERNAL_END: bool;
    /// Whether the hooks never touch the pool (the plain phase): a worker may then keep its
    /// own deque's elements out of the pool while it runs tasks ([`Busy::run_stack`]).
    const PLAIN: bool = false;
    /// Called by busy worker `me` between two tasks.
    fn between_tasks<P: TaskPool<T>>(
        &self,
        me: usize,
        pool: &P,
        local: &mut P::Local,
        stats: &mut WorkerStats,
        coord: &Coordinator,
    );
    /// Whether tasks from outside the pool wait to be taken into it (idle workers look here
    /// as well as at the pool's shared queues, before they sleep too; with local termination
    /// also before they count themselves idle).
    fn has_incoming(&self) -> bool;
    /// Moves waiting tasks from outside into the pool through worker `me`'s `local`.
    fn take_incoming<P: TaskPool<T>>(
        &self,
        me: usize,
        pool: &P,
        local: &mut P::Local,
        coord: &Coordinator,
    );
    /// The last busy worker of this process has just gone idle (only with `EXTERNAL_END`).
    fn all_idle(&self);
    /// What a running task's [`Ctx::put_at`] reaches.
    type Hints<'a>: HintSink<T>
    where
        Self: 'a;
    fn hints(&self) -> Self::Hints<'_>;
}

/// Where a task's hinted puts go ([`Ctx::put_at`]), kept in the task's sink.
pub(crate) trait HintSink<T>: Copy {
    /// Whether any hint is taken (false: `put_at` always fails).
    const TAKES_HINTS: bool;
    /// A put by worker `me` with a hint to `place`. `Ok(Some(task))`: the place is the
    /// putter's own, put the task into the pool.
    fn put_at(
        self,
        me: usize,
        place: usize,
        task: T,
        coord: &Coordinator,
    ) -> Result<Option<T>, PutAtError<T>>;
    /// The number of places hints can name (0: this phase takes no hints).
    fn places(self) -> usize;
}

/// A phase without hints.
#[derive(Clone, Copy)]
pub(crate) struct NoHints;

impl<T> HintSink<T> for NoHints {
    const TAKES_HINTS: bool = false;
    fn put_at(
        self,
        _: usize,
        _: usize,
        task: T,
        _: &Coordinator,
    ) -> Result<Option<T>, PutAtError<T>> {
        Err(PutAtError {
            error: Error::PhaseWithoutHints,
            task,
        })
    }
    fn places(self) -> usize {
        0
    }
}

/// The local phase: no hooks.
pub(crate) struct NoRemote;

impl<T: Send> Remote<T> for NoRemote {
    const EXTERNAL_END: bool = false;
    const PLAIN: bool = true;
    #[inline(always)]
    fn between_tasks<P: TaskPool<T>>(
        &self,
        _: usize,
        _: &P,
        _: &mut P::Local,
        _: &mut WorkerStats,
        _: &Coordinator,
    ) {
    }
    #[inline(always)]
    fn has_incoming(&self) -> bool {
        false
    }
    #[inline(always)]
    fn take_incoming<P: TaskPool<T>>(&self, _: usize, _: &P, _: &mut P::Local, _: &Coordinator) {}
    #[inline(always)]
    fn all_idle(&self) {}
    type Hints<'a> = NoHints;
    #[inline(always)]
    fn hints(&self) -> NoHints {
        NoHints
    }
}

fn worker<L, T: Task<L>, P: TaskPool<T>, R: Remote<T>>(
    me: usize,
    pool: &P,
    mut local: P::Local,
    coord: &Coordinator,
    remote: &R,
    state: &mut L,
) -> WorkerStats {
    let n = pool.workers();
    let mut stats = WorkerStats::default();
    // A traced runtime records the phase's tasks, puts and idle times.
    let trace = WorkerThread::current().and_then(|w| w.trace.as_deref());
    if let Some(tr) = trace {
        crate::stats::take_steal(); // a steal before this phase is not its own
        tr.phase_begin();
    }
    let policy = coord.policy();
    pool.resume(&mut local);
    loop {
        let busy = Busy {
            me,
            n,
            pool,
            coord,
            remote,
            trace,
            policy,
        };
        match busy.run(&mut local, state, &mut stats) {
            // Only an abort ends the phase while a task exists (module docs of `idle`).
            Stop::Aborted => return stats,
            Stop::Wake(puts) => {
                coord.on_deferred_puts(puts);
                continue;
            }
            Stop::Empty => {}
        }
        pool.pause(&mut local);
        if let Some(tr) = trace {
            traced_idle(tr, stats.steal_attempts - stats.steals);
        }
        let more = coord.idle(pool, remote, &mut stats);
        if let Some(tr) = trace {
            tr.resume();
        }
        pool.resume(&mut local);
        if !more {
            return stats;
        }
        remote.take_incoming(me, pool, &mut local, coord);
    }
}

/// What a worker's busy loop reads but never changes.
struct Busy<'a, P, R> {
    me: usize,
    n: usize,
    pool: &'a P,
    coord: &'a Coordinator,
    remote: &'a R,
    trace: Option<&'a TraceBuf>,
    policy: WakePolicy,
}

/// Why [`Busy::run`] returned.
enum Stop {
    /// The pool had no task for this worker.
    Empty,
    /// The phase was aborted.
    Aborted,
    /// A task's puts (this many) are owed a wake-up ([`TaskPool::PUTS_WAIT_FOR_OWNER`]).
    Wake(u64),
}

impl<P, R> Busy<'_, P, R> {
    /// Gets and runs tasks until the pool has none for this worker, the phase is aborted,
    /// or (pools with [`TaskPool::PUTS_WAIT_FOR_OWNER`]) a task's puts are owed a
    /// wake-up, which the caller then makes: the wake-up leaves the loop instead of being a
    /// call in it, as it leaves the puts (the loop, with the task's body inlined into it,
    /// keeps more of its values in registers when nothing on its common paths is a call).
    #[inline(always)]
    fn run<L, T: Task<L>>(
        &self,
        local: &mut P::Local,
        state: &mut L,
        stats: &mut WorkerStats,
    ) -> Stop
    where
        P: TaskPool<T>,
        R: Remote<T>,
    {
        // Out of line for the pools whose puts wait for their owner (N-Queens 13 at 1 thread
        // on `private-deque`: 0.64× the sequential search against 0.59× inlined, in a
        // scratch harness), inlined for the others (`private-public` out of line ran a sixth
        // slower in the workbench: the compiler stopped inlining its `put`).
        if P::OWNER_DEQUE && R::PLAIN {
            self.run_stack(local, state, stats)
        } else if P::PUTS_WAIT_FOR_OWNER {
            self.run_out_of_line(local, state, stats)
        } else {
            self.run_loop(local, state, stats)
        }
    }

    #[inline(never)]
    fn run_out_of_line<L, T: Task<L>>(
        &self,
        local: &mut P::Local,
        state: &mut L,
        stats: &mut WorkerStats,
    ) -> Stop
    where
        P: TaskPool<T>,
        R: Remote<T>,
    {
        self.run_loop(local, state, stats)
    }

    /// [`run_loop`](Self::run_loop) for a pool with an owner deque
    /// ([`TaskPool::owner_deque`], `private-deque`) in a plain phase: the deque's elements
    /// are lent to this loop as a stack in a local variable
    /// ([`PrivateDeque::lend`]), and given back whenever the deque itself is needed (a
    /// request to answer, an empty stack, the loop's end). A task's put is then a push onto
    /// that stack and nothing else; the work hint, the wake-up and the trace record of its
    /// puts follow when it ends or calls `queued` ([`TaskPool::PUTS_WAIT_FOR_OWNER`]).
    /// When it was introduced (N-Queens 13 at 1 thread, medians of 4 alternated invocations):
    /// 0.75× the sequential search against 0.70× with the deque's own `get` and `put`; with
    /// the later changes (the stack in registers, the hint tested first) 0.80×.
    #[inline(never)]
    fn run_stack<L, T: Task<L>>(
        &self,
        local: &mut P::Local,
        state: &mut L,
        stats: &mut WorkerStats,
    ) -> Stop
    where
        P: TaskPool<T>,
        R: Remote<T>,
    {
        let Busy {
            me,
            n,
            pool,
            coord,
            remote: _,
            trace,
            policy,
        } = *self;
        fn deque<'l, T: Send, P: TaskPool<T>>(pool: &P, l: &'l P::Local) -> &'l PrivateDeque<T> {
            pool.owner_deque(l)
                .expect("a pool whose puts wait for their owner has an owner deque")
        }
        let on_empty = policy == WakePolicy::OnEmpty;
        let every_put = policy == WakePolicy::EveryPut;
        let (mut ran, mut puts) = (0u64, 0u64);
        // The request cell, read before every task: through a table handle of its own, one
        // load (through the local, three).
        let table = Arc::clone(deque(pool, local).table());
        let requests = table.request_cell(deque(pool, local).index());
        let mut stack = deque(pool, local).lend();
        // The deque's work hint, kept meaning "the stack is not empty" (give or take a
        // lazily withdrawn hint, as in the deque).
        let mut hint = deque(pool, local).advertised();
        let stop = loop {
            // Tasks reach `run` only from `stack.pop()`: a task from the pool's `get` is pushed
            // first. (With a second source, the compiler merged the two into one 16-byte
            // value, loaded whole from the slot that the previous task's puts had just
            // written field by field: a store-forwarding stall per task.)
            let popped = if requests.pending() {
                None
            } else {
                stack.pop()
            };
            let Some(task) = popped else {
                // A request to answer, or no task of its own: the deque's own `get`.
                deque(pool, local).give_back(std::mem::take(&mut stack));
                let got = pool.get(local, stats);
                stack = deque(pool, local).lend();
                hint = deque(pool, local).advertised();
                match got {
                    Some(t) => {
                        stack.push(t);
                        continue;
                    }
                    None => break Stop::Empty,
                }
            };
            if hint && stack.is_empty() {
                hint = false;
                deque(pool, local).set_hint(false);
            }
            if coord.is_done_relaxed() {
                break Stop::Aborted;
            }
            ran += 1;
            if let Some(tr) = trace {
                traced_task(tr, me, stats.steal_attempts - stats.steals);
            }
            let mut span = TaskSpan { trace, puts: 0 };
            let base = stack.len();
            let mut sink = StackSink {
                pool,
                local: &*local,
                stack: &mut stack,
                coord,
                base: Cell::new(base),
                trace,
                policy,
                hint: Cell::new(hint),
                flushed: Cell::new(0),
                _task: std::marker::PhantomData,
            };
            task.run(&mut Ctx::new(&mut sink, state, me, n));
            // SAFETY: as in `StackSink::put`; the sink is not used after this.
            let pending = (unsafe { (*sink.stack).len() } - sink.base.get()) as u64;
            puts += pending + sink.flushed.get();
            hint = sink.hint.get();
            span.puts = pending;
            let mut wake = None;
            // The hint first (policy on-empty): it is almost always on, so the branch is
            // predictable. Written with `pending != 0` first, the compiler branched on whether
            // the task put anything, which varies from task to task (N-Queens: leaf or not).
            if (!hint | every_put) && pending != 0 {
                // Puts onto an empty stack: the hint goes on, and sleepers are woken.
                let was_off = !hint;
                if was_off {
                    deque(pool, local).set_hint(true);
                    hint = true;
                }
                if (was_off & on_empty) | every_put {
                    wake = Some(pending);
                }
            }
            drop(span);
            if trace.is_some() {
                crate::stats::take_steal();
            }
            if let Some(puts) = wake {
                break Stop::Wake(puts);
            }
        };
        deque(pool, local).give_back(stack);
        stats.tasks_run += ran;
        stats.puts += puts;
        stop
    }

    #[inline(always)]
    fn run_loop<L, T: Task<L>>(
        &self,
        local: &mut P::Local,
        state: &mut L,
        stats: &mut WorkerStats,
    ) -> Stop
    where
        P: TaskPool<T>,
        R: Remote<T>,
    {
        let Busy {
            me,
            n,
            pool,
            coord,
            remote,
            trace,
            policy,
        } = *self;
        let on_empty = policy == WakePolicy::OnEmpty;
        let every_put = policy == WakePolicy::EveryPut;
        // Counted in locals (registers) and added to `stats` when the loop ends: `stats` is
        // passed by reference to `get`, so its fields live in memory.
        let (mut ran, mut puts) = (0u64, 0u64);
        let stop = loop {
            let Some(task) = pool.get(local, stats) else {
                break Stop::Empty;
            };
            if coord.is_done_relaxed() {
                break Stop::Aborted;
            }
            ran += 1;
            if let Some(tr) = trace {
                traced_task(tr, me, stats.steal_attempts - stats.steals);
            }
            let mut span = TaskSpan { trace, puts: 0 };
            let mut sink = Sink {
                pool,
                local,
                coord,
                hints: remote.hints(),
                puts: 0,
                trace,
                policy,
                wake_due: Cell::new(false),
                flushed: Cell::new(0),
            };
            task.run(&mut Ctx::new(&mut sink, state, me, n));
            puts += sink.puts;
            let mut wake = None;
            if P::PUTS_WAIT_FOR_OWNER {
                if trace.is_some() {
                    // Recorded by the span's end (one call with it, inside the span).
                    span.puts = sink.puts - sink.flushed.get();
                }
                // Testing the policy here instead of two flags made the loop slower
                // (N-Queens 13, 1 thread: 0.62× the sequential search against 0.64×).
                let pending = sink.puts - sink.flushed.get();
                if (sink.wake_due.get() & on_empty) | (every_put & (pending != 0)) {
                    wake = Some(pending);
                }
            }
            drop(span);
            remote.between_tasks(me, pool, local, stats, coord);
            if trace.is_some() {
                // A steal made outside a task's own `get` (a distributed phase's worker
                // answering another rank) belongs to no task.
                crate::stats::take_steal();
            }
            if let Some(puts) = wake {
                break Stop::Wake(puts);
            }
        };
        stats.tasks_run += ran;
        stats.puts += puts;
        stop
    }
}

/// Runs a working phase on `pool` with one worker per pool slot, on a runtime chosen as
/// [`Builder::run`](crate::Builder::run) chooses one (the calling worker's runtime, the global
/// runtime, or a runtime started for this phase).
///
/// The initial tasks are distributed round-robin over the workers' `init` (the sequential
/// initialization phase). Returns when every task, initial or created, has run. If a task
/// panics, the phase ends, every worker leaves it, and the panic is resumed in the caller;
/// tasks that did not run are dropped.
pub fn run_pool<T: Task, P: TaskPool<T>>(
    pool: &P,
    opts: &RunOptions,
    initial: impl IntoIterator<Item = T>,
) -> Result<RunReport, Error> {
    run_pool_with(pool, opts, |_| (), initial).map(|(report, _)| report)
}

/// [`run_pool`] with per-worker state: worker `i` creates its state with `init(i)` on its own
/// thread before its first task, every task it runs reaches the state with
/// [`Ctx::local`], and the states are returned in worker order when the phase ends.
///
/// If a task (or `init`) panics, every state is dropped and the panic is resumed in the caller.
pub fn run_pool_with<L: Send, T: Task<L>, P: TaskPool<T>>(
    pool: &P,
    opts: &RunOptions,
    init: impl Fn(usize) -> L + Sync,
    initial: impl IntoIterator<Item = T>,
) -> Result<(RunReport, Vec<L>), Error> {
    run_phase(None, opts.pin, pool, opts.wake, init, initial)
}

/// [`run_pool_with`] on the workers of `rt`: worker `i` of the phase is worker `i` of the
/// runtime (the pool's worker count must not exceed the runtime's, or
/// [`Error::PhaseWider`]). No thread is started. Fails with [`Error::PhaseBusy`] when called
/// on a worker while another phase or broadcast holds `rt`.
///
/// This is the layer under [`Builder`](crate::Builder), for a pool built by hand:
///
/// ```
/// use taskpools::pool::{ChaseLevPool, PoolConfig};
/// use taskpools::{run_pool_on, Ctx, Runtime, Task, TaskPool, WakePolicy};
///
/// struct Count(u32);
/// impl Task<u64> for Count {
///     fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
///         *ctx.local() += 1;
///         if self.0 > 0 {
///             ctx.put(Count(self.0 - 1));
///             ctx.put(Count(self.0 - 1));
///         }
///     }
/// }
///
/// let rt = Runtime::new(2)?;
/// let pool: ChaseLevPool<Count> = TaskPool::new(&PoolConfig::new(2));
/// let (report, counts) = run_pool_on(&rt, &pool, WakePolicy::OnEmpty, |_| 0u64, [Count(9)])?;
/// assert_eq!(counts.iter().sum::<u64>(), 1023);
/// assert_eq!(report.tasks_run(), 1023);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn run_pool_on<L: Send, T: Task<L>, P: TaskPool<T>>(
    rt: &Runtime,
    pool: &P,
    wake: WakePolicy,
    init: impl Fn(usize) -> L + Sync,
    initial: impl IntoIterator<Item = T>,
) -> Result<(RunReport, Vec<L>), Error> {
    run_phase(Some(rt), false, pool, wake, init, initial)
}

/// The one entry of every phase ([`run_pool_with`], [`run_pool_on`], `Builder`): checks the
/// width, runs the user's iterator of initial tasks *before* a runtime is claimed (it may
/// start a phase or broadcast itself), then picks and claims a runtime and runs the phase.
pub(crate) fn run_phase<L: Send, T: Task<L>, P: TaskPool<T>>(
    explicit: Option<&Runtime>,
    pin: bool,
    pool: &P,
    wake: WakePolicy,
    init: impl Fn(usize) -> L + Sync,
    initial: impl IntoIterator<Item = T>,
) -> Result<(RunReport, Vec<L>), Error> {
    let n = pool.workers();
    check_workers(n)?;
    let initial: Vec<T> = initial.into_iter().collect();
    with_runtime(explicit, n, pin, |reg, c| {
        run_on_registry(reg, c, pool, wake, &NoRemote, init, initial)
    })
}

/// [`run_phase`] for a phase that takes place hints ([`Ctx::put_at`]): it must run on a
/// runtime with places, or [`Error::PhaseWithoutPlaces`] (before any task runs). A separate
/// instantiation of the loop, so that plain phases do not pay for the hints.
pub(crate) fn run_phase_hinted<L: Send, T: Task<L>, P: TaskPool<T>>(
    explicit: Option<&Runtime>,
    _pin: bool,
    pool: &P,
    wake: WakePolicy,
    init: impl Fn(usize) -> L + Sync,
    initial: impl IntoIterator<Item = T>,
) -> Result<(RunReport, Vec<L>), Error> {
    let n = pool.workers();
    check_workers(n)?;
    // Only the given runtime or the calling worker's: no fallback to a runtime without
    // places. (`_pin` does not apply: pinning is the runtime's.)
    let reg = match explicit {
        Some(rt) => Arc::clone(&rt.registry),
        None => match WorkerThread::current() {
            Some(w) => Arc::clone(&w.registry),
            None => return Err(Error::PhaseWithoutPlaces),
        },
    };
    let Some(ps) = reg.places.as_ref() else {
        return Err(Error::PhaseWithoutPlaces);
    };
    let Some(of_worker) = ps.of_worker.get(..n) else {
        return Err(Error::PhaseWider {
            workers: n,
            threads: reg.threads,
        });
    };
    let hints = hints::PlaceHints::new(ps.len(), of_worker);
    let initial: Vec<T> = initial.into_iter().collect();
    let c = claim(&reg)?;
    run_on_registry(&reg, c, pool, wake, &hints, init, initial)
}

fn check_workers(n: usize) -> Result<(), Error> {
    if n == 0 {
        return Err(Error::ZeroThreads);
    }
    if n > crate::MAX_THREADS {
        return Err(Error::TooManyThreads {
            requested: n,
            max: crate::MAX_THREADS,
        });
    }
    Ok(())
}

/// Calls `f` with the runtime a phase of `n` workers runs on, claimed for it (user code that
/// could ask for a claim in turn — the iterator of initial tasks — must have run before): `explicit` if
/// given (a worker that finds it claimed gets [`Error::PhaseBusy`]); else the runtime of the
/// calling worker, if it has enough workers, is pinned if `pin` asks for it, and is not
/// claimed by another phase; else the global runtime, if it has enough workers, `pin` is off
/// and (on a worker) it is not claimed; else a runtime started for this call with `n` workers
/// (and `pin`), stopped when `f` returns.
fn with_runtime<R>(
    explicit: Option<&Runtime>,
    n: usize,
    pin: bool,
    f: impl FnOnce(&Arc<Registry>, Claim<'_>) -> Result<R, Error>,
) -> Result<R, Error> {
    if let Some(rt) = explicit {
        if n > rt.threads() {
            return Err(Error::PhaseWider {
                workers: n,
                threads: rt.threads(),
            });
        }
        let c = claim(&rt.registry)?;
        return f(&rt.registry, c);
    }
    if let Some(w) = WorkerThread::current() {
        let reg = Arc::clone(&w.registry);
        if reg.threads >= n && (reg.pinned || !pin) {
            match claim(&reg) {
                Ok(c) => return f(&reg, c),
                // A phase from a job that runs while its runtime shuts down is refused, not
                // moved elsewhere (which could create the global runtime at exit).
                Err(Error::ShuttingDown) => return Err(Error::ShuttingDown),
                // Held by another phase: try the next candidate.
                Err(_) => {}
            }
        }
    }
    if !pin {
        let g = global();
        if g.threads() >= n {
            if let Ok(c) = claim(&g.registry) {
                return f(&g.registry, c);
            }
        }
    }
    let rt = Runtime::builder().threads(n).pin(pin).build()?;
    let c = claim(&rt.registry)?;
    f(&rt.registry, c)
}

/// The phase itself, as a broadcast over workers `0..n` of the runtime of `registry`.
/// With the hooks of `remote` (`NoRemote` for a plain phase); a panic is resumed here (a
/// hinted phase's waiting tasks are dropped with `remote` afterwards).
fn run_on_registry<L: Send, T: Task<L>, P: TaskPool<T>, R: Remote<T>>(
    registry: &Arc<Registry>,
    claim: Claim<'_>,
    pool: &P,
    wake: WakePolicy,
    remote: &R,
    init: impl Fn(usize) -> L + Sync,
    initial: impl IntoIterator<Item = T>,
) -> Result<(RunReport, Vec<L>), Error> {
    let coord = Coordinator::new(pool.workers(), wake);
    match run_shares(registry, claim, pool, &coord, remote, init, initial)? {
        Ok(done) => Ok(done),
        Err(payload) => resume_unwind(payload),
    }
}

/// A task's panic payload, kept to be resumed or reported.
pub(crate) type Panic = Box<dyn std::any::Any + Send>;

/// The shares of a phase coordinated by `coord` (built for `pool.workers()` workers), with
/// the hooks of `remote`. Returns the first panic's payload instead of the results when a
/// task or `init` panicked; every state is dropped then.
pub(crate) fn run_shares<L: Send, T: Task<L>, P: TaskPool<T>, R: Remote<T>>(
    registry: &Arc<Registry>,
    claim: Claim<'_>,
    pool: &P,
    coord: &Coordinator,
    remote: &R,
    init: impl Fn(usize) -> L + Sync,
    initial: impl IntoIterator<Item = T>,
) -> Result<Result<(RunReport, Vec<L>), Panic>, Error> {
    let n = pool.workers();
    if n > registry.threads {
        return Err(Error::PhaseWider {
            workers: n,
            threads: registry.threads,
        });
    }
    let mut locals: Vec<P::Local> = (0..n).map(|i| pool.local(i)).collect();
    for (i, t) in initial.into_iter().enumerate() {
        pool.init(&mut locals[i % n], t);
    }
    // Each share takes its worker's local once; a lock is the simplest safe hand-over.
    let locals: Vec<std::sync::Mutex<Option<P::Local>>> = locals
        .into_iter()
        .map(|l| std::sync::Mutex::new(Some(l)))
        .collect();
    let share = |i: usize| {
        let body = || {
            let local = locals[i]
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .expect("each worker takes its local once");
            let mut state = init(i);
            let stats = worker(i, pool, local, coord, remote, &mut state);
            (stats, state)
        };
        match catch_unwind(AssertUnwindSafe(body)) {
            Ok(done) => Some(done),
            Err(payload) => {
                // The state was dropped while unwinding out of `body`.
                coord.abort(Some(payload));
                None
            }
        }
    };
    let (results, elapsed) = broadcast_claimed(registry, claim, n, &share);
    if let Some(p) = coord.take_panic() {
        drop(results);
        return Ok(Err(p));
    }
    // No panic was recorded, so every worker returned its state.
    let (workers, states) = results
        .into_iter()
        .map(|r| r.expect("a worker without a recorded panic returned its state"))
        .unzip();
    Ok(Ok((RunReport { workers, elapsed }, states)))
}
