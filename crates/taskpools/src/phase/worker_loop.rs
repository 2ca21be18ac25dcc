//! A worker's share of the working phase (Korch and Rauber (2002), §2, `tpool_run`): the busy
//! loop that gets a task and runs it until the pool has none for it, then the idle protocol,
//! and the sinks through which the running task's puts reach the pool. The sinks are kept in
//! this file with the loop that inlines them.

use std::cell::Cell;

use super::remote::HintSink;
use super::trace::{traced_idle, traced_put, traced_task, TaskSpan};
use super::{Coordinator, Remote, WakePolicy, WorkerStats};
use crate::pool::{PutOutcome, TaskPool};
use crate::queue::private_deque::{OwnerStack, PrivateDeque};
use crate::runtime::trace::TraceBuf;
use crate::runtime::worker::WorkerThread;
use crate::sync::Arc;
use crate::task::{Ctx, PutAtError, PutSink, Task};
use crate::Error;

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

pub(super) fn worker<L, T: Task<L>, P: TaskPool<T>, R: Remote<T>>(
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
    // A share taken inside a wait of another job does not wait long for a victim's answer
    // (the termination notes of `idle`, "Leaving early"); set on every share, since the deque
    // serves the next phase's share too.
    if let Some(d) = pool.owner_deque(&local) {
        d.set_impatient(super::idle::nested_in_a_wait());
    }
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
