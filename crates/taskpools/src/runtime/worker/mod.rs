//! A worker thread of the runtime: its deque, how it finds work (its mailbox, its own deque,
//! a random victim, the injector), how it waits without blocking (`wait_until`), and its loop.

use std::cell::Cell;

use super::frames::FrameStack;
use super::job::{self, JobRef};
use super::liveness::StallWatch;
use super::registry::{Registry, Stealers};
use crate::queue::chase_lev::{self, Steal};
use crate::queue::private_deque::StealRequests;
use crate::sync::{lock, Arc, Ordering};

/// A worker's own deque.
pub(crate) enum LocalDeque {
    ChaseLev(chase_lev::Worker<JobRef>),
    Private(PrivateFrames),
}

/// The `private-deque` pool's side of a worker: its frame stack (owner only) and its end of
/// the steal-request protocol.
pub(crate) struct PrivateFrames {
    pub(crate) frames: FrameStack,
    /// `scope` spawns, and the second half of a join made while nothing was queued: a
    /// Chase–Lev deque that other workers steal from directly, so that a worker busy in a long
    /// job (or descheduled) does not hold its spawns, or its coarsest join half, back. The
    /// other joins stay in `frames`, whose owner pays no fence.
    pub(crate) spawns: chase_lev::Worker<JobRef>,
    pub(crate) req: StealRequests<JobRef>,
    /// A join runs as plain calls once this many jobs are queued in `frames`: `base_exposed`,
    /// less one while a join of this worker that queued its half in `spawns` runs its first
    /// half (the public half counts as one of them, even after a thief took it: tracking that
    /// would cost a load on every join).
    pub(crate) exposed: Cell<u32>,
    /// [`EXPOSED`], or `u32::MAX` when the runtime was built with
    /// `serial_elision(false)`.
    pub(crate) base_exposed: u32,
    /// Joins of this worker that put their second half in `spawns` and are still running
    /// their first half.
    pub(crate) public_joins: Cell<u32>,
}

impl PrivateFrames {
    /// The frames of a worker that has nothing queued, with its spawn deque and its end of the
    /// steal requests; joins run as plain calls once `exposed` jobs are queued.
    pub(crate) fn new(
        spawns: chase_lev::Worker<JobRef>,
        req: StealRequests<JobRef>,
        exposed: u32,
    ) -> Self {
        PrivateFrames {
            frames: FrameStack::new(),
            spawns,
            req,
            exposed: Cell::new(exposed),
            base_exposed: exposed,
            public_joins: Cell::new(0),
        }
    }

    /// Queues a job; returns whether work is newly advertised (then a sleeper may be woken).
    #[inline(always)]
    pub(crate) fn push(&self, job: JobRef) -> bool {
        // SAFETY: every job pushed is live until it is popped, taken back, or run by a thief
        // (stack jobs are waited for; spawned jobs own their storage).
        let was_empty = unsafe { self.frames.push(job.header()) };
        if was_empty && !self.req.advertised() {
            self.req.advertise(true);
            return true;
        }
        false
    }

    /// A join takes its own job back (see [`FrameStack::take_back`]); when that empties the
    /// stack, the work hint is withdrawn, so that thieves stop asking and idle workers may
    /// sleep while this worker runs the job.
    #[inline(always)]
    pub(crate) fn take_back(&self, h: &job::JobHeader) -> bool {
        if self.frames.take_back(h) {
            if self.frames.is_empty() {
                self.req.advertise(false);
            }
            true
        } else {
            false
        }
    }

    /// Whether the worker has nothing queued, in either deque: then its next join queues its
    /// second half publicly (`forkjoin::join_public`). A steal can only make `spawns` look
    /// fuller than it is (a stale `top`), never emptier.
    #[inline]
    pub(crate) fn nothing_queued(&self) -> bool {
        self.frames.is_empty() && self.spawns.is_empty()
    }

    /// The fork of a join made while nothing was queued (`forkjoin::join_public`): queues its
    /// second half in the public spawn deque; while its first half runs, one job fewer is
    /// queued in `frames` before the serial elision (the public half counts as one). The
    /// caller wakes a sleeper, as for a spawn.
    #[inline]
    pub(crate) fn push_public_join(&self, job: JobRef) {
        self.spawns.push_quiet(job);
        self.public_joins.set(self.public_joins.get() + 1);
        self.exposed.set(self.base_exposed.saturating_sub(1));
    }

    /// The first half of such a join has returned (or panicked).
    #[inline]
    pub(crate) fn end_public_join(&self) {
        let n = self.public_joins.get() - 1;
        self.public_joins.set(n);
        if n == 0 {
            self.exposed.set(self.base_exposed);
        }
    }

    /// Pops the newest job; when the stack is (or becomes) empty, withdraws the work hint. The
    /// hint is therefore set exactly while the stack holds a job, which is what idle workers
    /// check before they sleep.
    #[inline]
    pub(crate) fn pop(&self) -> Option<JobRef> {
        let j = self.frames.pop();
        if self.frames.is_empty() {
            self.req.advertise(false);
        }
        j
    }

    /// The oldest job, for a thief.
    pub(crate) fn give_oldest(&self) -> Option<JobRef> {
        let j = self.frames.take_oldest();
        if self.frames.is_empty() {
            self.req.advertise(false);
        }
        j
    }

    /// Answers a pending steal request: one load when there is none.
    #[inline(always)]
    pub(crate) fn poll(&self) {
        self.req.poll(|| self.give_oldest());
    }
}

/// How many jobs a worker keeps queued before `join` runs its halves as plain calls: a join
/// made while at least this many jobs wait in the worker's frame stack, and no thief is
/// asking, runs `a` and then `b` on this worker (the join's serial elision) without queueing
/// anything. Jobs are queued by the outermost joins that find fewer waiting (those with the
/// most work under them), a thief always takes the oldest, and a join that finds a thief
/// asking queues its `b` and answers, so the queue refills from where the owner is whenever
/// thieves drain it. In a recursion of depth `D` only about `D^K / K!` joins queue anything;
/// the others cost two loads and a compare.
pub(crate) const EXPOSED: u32 = 3;

/// How deeply a worker nests waits that run stolen jobs. Beyond this, a waiting worker runs
/// only jobs from its own deque (which a sequential run would have run on the same stack), so
/// stealing while waiting cannot grow the stack without bound.
pub(crate) const MAX_STEALING_WAITS: u32 = 32;

/// A worker thread's private state, reachable through a thread-local pointer while it runs.
pub(crate) struct WorkerThread {
    pub(crate) index: usize,
    pub(crate) registry: Arc<Registry>,
    pub(crate) deque: LocalDeque,
    pub(crate) rng: Cell<u64>,
    /// Waits (`wait_until`) currently on this thread's stack.
    pub(crate) waits: Cell<u32>,
    /// This worker's place (0 on a runtime without places).
    pub(crate) place: usize,
    /// Whether the runtime has places (kept here, beside the other hot fields, so that the
    /// paths without places do not load the registry's).
    pub(crate) has_places: bool,
    /// The next place for an unhinted spawn (round-robin; starts at the worker's own).
    pub(crate) rr: Cell<usize>,
    /// Since when this worker has looked for work without finding any (places with a
    /// remote-steal delay only).
    pub(crate) idle_since: Cell<Option<std::time::Instant>>,
    /// Empty rounds before the main loop parks (adapted under `PlacePolicy::adaptive`).
    pub(crate) spin_budget: Cell<u32>,
    /// The schedule trace's buffer, when the runtime records one.
    pub(crate) trace: Option<Box<super::trace::TraceBuf>>,
    /// Where the job about to run was found (kept only while tracing).
    pub(crate) source: Cell<super::trace::Source>,
}

/// Empty rounds of the main loop before a worker parks (the adaptive policy's maximum).
pub(crate) const SPIN_ROUNDS: u32 = 200;
/// Empty rounds after which a deep wait takes place work too (see `run_one_or_starve`).
const STARVING_ROUNDS: u32 = 4096;
/// The adaptive policy's minimum.
const MIN_SPIN_ROUNDS: u32 = 4;

thread_local! {
    pub(crate) static CURRENT: Cell<*const WorkerThread> = const { Cell::new(std::ptr::null()) };
}

impl WorkerThread {
    /// The worker running on this thread, if any.
    #[inline]
    pub(crate) fn current() -> Option<&'static WorkerThread> {
        let p = CURRENT.with(Cell::get);
        // SAFETY: the pointer is set by the worker's thread for as long as its `WorkerThread`
        // lives (on that thread's stack) and cleared before it is dropped.
        unsafe { p.as_ref() }
    }

    fn next_victim(&self) -> usize {
        // xorshift
        let mut x = self.rng.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng.set(x);
        (x as usize) % self.registry.threads
    }

    /// Pushes a job onto this worker's deque (and, on private deques, answers a pending steal
    /// request: the fork is a poll point).
    #[inline(always)]
    pub(crate) fn push(&self, job: JobRef) {
        let was_empty = match &self.deque {
            LocalDeque::ChaseLev(d) => d.push(job),
            LocalDeque::Private(p) => {
                let e = p.push(job);
                p.poll();
                e
            }
        };
        if was_empty && self.registry.threads > 1 {
            self.registry.notify_one();
        }
    }

    #[inline(always)]
    pub(crate) fn pop(&self) -> Option<JobRef> {
        match &self.deque {
            LocalDeque::ChaseLev(d) => d.pop(),
            LocalDeque::Private(p) => p.pop(),
        }
    }

    /// Queues a `scope` spawn: on the private pool into the worker's public spawn deque
    /// (and the fork is a poll point, as for a join), on Chase–Lev into its one deque.
    #[inline]
    pub(crate) fn push_spawn(&self, job: JobRef) {
        if !self.has_places {
            // (the common case: no registry load)
        } else if let Some(ps) = &self.registry.places {
            // Not from a deep wait: its own spawns must stay where it can take them (deep
            // waits take no place work; see `run_one`).
            if ps.policy.unhinted == crate::places::Unhinted::RoundRobin
                && self.waits.get() < MAX_STEALING_WAITS
            {
                let p = self.rr.get();
                self.rr.set(if p + 1 == ps.len() { 0 } else { p + 1 });
                self.registry.push_place(p, job, false);
                return;
            }
        }
        match &self.deque {
            LocalDeque::ChaseLev(d) => {
                d.push_quiet(job);
                if self.registry.threads > 1 {
                    self.registry.notify_one();
                }
            }
            LocalDeque::Private(p) => {
                p.spawns.push_quiet(job);
                p.poll();
                // Every spawn, not only one into an empty deque: a thief that takes one wakes
                // nobody, so with sleepers around, waking one per spawn is what spreads a
                // scope's spawns over all workers. (One fence and one load when nobody
                // sleeps; spawns are coarse next to that.)
                if self.registry.threads > 1 {
                    self.registry.notify_one();
                }
            }
        }
    }

    /// A task from this worker's own place's deque (newest first), counted.
    #[inline]
    fn pop_place(&self) -> Option<JobRef> {
        if !self.has_places {
            return None;
        }
        let ps = self.registry.places.as_ref()?;
        let j = ps.deques[self.place].pop();
        if j.is_some() {
            self.registry.counters[self.index].place_local();
            self.note(super::trace::Source::Place);
        }
        j
    }

    /// A task from another place: a random victim place first, then the others in turn,
    /// oldest task first, as the policy allows (see [`PlacePolicy`]). With steal-half, the
    /// other tasks taken go onto this worker's place.
    ///
    /// [`PlacePolicy`]: crate::places::PlacePolicy
    fn steal_places(&self) -> Option<JobRef> {
        use super::places::Take;
        if !self.has_places {
            return None;
        }
        let ps = self.registry.places.as_ref()?;
        let n = ps.len();
        if n < 2 {
            return None;
        }
        let policy = &ps.policy;
        let idle_long_enough = || {
            if !policy.guards_hints() {
                return true;
            }
            let since = match self.idle_since.get() {
                Some(t) => t,
                None => {
                    let t = std::time::Instant::now();
                    self.idle_since.set(Some(t));
                    t
                }
            };
            since.elapsed() >= policy.remote_delay
        };
        let allow = |len: usize| len > policy.remote_backlog || idle_long_enough();
        let start = self.next_victim() % n;
        let counters = &self.registry.counters[self.index];
        for k in 0..n {
            let v = (start + k) % n;
            if v == self.place {
                continue;
            }
            match ps.deques[v].steal(allow, policy.steal_half) {
                Take::Empty => self.missed(),
                Take::Declined => {
                    counters.declined();
                    self.missed();
                }
                Take::Got(j, more) => {
                    counters.place_steal(more.len() as u64);
                    self.note(super::trace::Source::PlaceSteal { place: v as u32 });
                    if !more.is_empty() {
                        ps.deques[self.place].push_all(more);
                        if self.registry.threads > 1 {
                            // As `push_place` does for hinted tasks under a guard.
                            if ps.policy.guards_hints() {
                                self.registry.notify_all();
                            } else {
                                self.registry.notify_one();
                            }
                        }
                    }
                    return Some(j);
                }
            }
        }
        None
    }

    /// A deep wait's own task from any place's deque: one this worker pushed at wait depth
    /// `depth` or deeper, so part of what the wait waits for (taking it grows the stack no
    /// more than popping the own deque does).
    fn take_own_placed(&self, depth: u32) -> Option<JobRef> {
        if !self.has_places {
            return None;
        }
        let ps = self.registry.places.as_ref()?;
        let n = ps.len();
        let j =
            (0..n).find_map(|k| ps.deques[(self.place + k) % n].take_own(self.index as u32, depth));
        if j.is_some() {
            self.registry.counters[self.index].place_local();
            self.note(super::trace::Source::Own);
        }
        j
    }

    /// Any place's task, ignoring the policy (the shutdown drain).
    fn take_any_place(&self) -> Option<JobRef> {
        if !self.has_places {
            return None;
        }
        let ps = self.registry.places.as_ref()?;
        let j = ps.deques.iter().find_map(|d| d.pop());
        if j.is_some() {
            self.note(super::trace::Source::Place);
        }
        j
    }

    /// Notes where the next job comes from, when tracing.
    #[inline(always)]
    fn note(&self, src: super::trace::Source) {
        if self.trace.is_some() {
            self.source.set(src);
        }
    }

    /// Counts a queue of another examined in vain, when tracing.
    #[inline(always)]
    fn missed(&self) {
        if let Some(t) = &self.trace {
            t.miss();
        }
    }

    /// Runs a job taken from a queue, recording it when tracing.
    ///
    /// # Safety
    /// As [`JobRef::execute`]: `j` was taken from a queue and runs once, here.
    #[inline(always)]
    unsafe fn run_job(&self, j: JobRef) {
        match &self.trace {
            None => {
                // SAFETY: the caller's.
                unsafe { j.execute() }
            }
            Some(t) => {
                t.start(self.source.get());
                // SAFETY: the caller's.
                unsafe { j.execute() };
                t.end();
            }
        }
    }

    /// This worker's newest job. On the private pool: its spawns first, then its join
    /// frames. A wait's own work is in the spawn deque (a scope waits for its spawns; a join
    /// body has taken back or finished its inner joins before it waits), while frames left
    /// in the stack belong to joins that enclose the wait, so they are older. The exception
    /// is the second half of a join made while nothing was queued, which sits in the spawn
    /// deque below the frames of the joins inside its first half: a wait there may run it
    /// before them (each such half once; the join then finds it done), as a wait on a
    /// Chase–Lev deque runs an enclosing join's half.
    #[inline]
    fn pop_own(&self) -> Option<JobRef> {
        let j = match &self.deque {
            LocalDeque::Private(p) => p.spawns.pop().or_else(|| p.pop()),
            LocalDeque::ChaseLev(d) => d.pop(),
        };
        if j.is_some() {
            self.note(super::trace::Source::Own);
        }
        j
    }

    /// Answers a pending steal request (private deques).
    #[inline]
    pub(crate) fn poll(&self) {
        if let LocalDeque::Private(p) = &self.deque {
            p.poll();
        }
    }

    /// Refuses steal requests while this worker cannot answer them (it sleeps or exits); a
    /// pending one is answered now.
    pub(crate) fn block_requests(&self) {
        if let LocalDeque::Private(p) = &self.deque {
            p.req.block(|| p.give_oldest());
        }
    }

    pub(crate) fn unblock_requests(&self) {
        if let LocalDeque::Private(p) = &self.deque {
            p.req.unblock();
        }
    }

    /// One attempt to find work elsewhere: a random victim first, then around; then the
    /// injector.
    pub(crate) fn steal(&self) -> Option<JobRef> {
        let counters = &self.registry.counters[self.index];
        counters.steal_round();
        if let Some(j) = self.steal_places() {
            return Some(j);
        }
        let n = self.registry.threads;
        let start = self.next_victim();
        for k in 0..n {
            let v = (start + k) % n;
            if v == self.index {
                continue;
            }
            match (&self.deque, &self.registry.stealers) {
                (LocalDeque::ChaseLev(_), Stealers::ChaseLev(s)) => loop {
                    match s[v].steal() {
                        Steal::Success(j) => {
                            counters.steal();
                            self.note(super::trace::Source::Steal { victim: v as u32 });
                            return Some(j);
                        }
                        Steal::Empty => {
                            self.missed();
                            break;
                        }
                        Steal::Retry => {}
                    }
                },
                (LocalDeque::Private(p), _) => {
                    // Spawns first: taken without the victim's help.
                    loop {
                        match self.registry.spawn_stealers[v].steal() {
                            Steal::Success(j) => {
                                counters.steal();
                                self.note(super::trace::Source::Steal { victim: v as u32 });
                                return Some(j);
                            }
                            Steal::Empty => break,
                            Steal::Retry => {}
                        }
                    }
                    let mut watch = StallWatch::default();
                    let serve_own = || {
                        p.poll();
                        watch.tick(&self.registry, self.index, v);
                    };
                    // A busy request cell (`Retry`) means another thief is being served
                    // there: try the next victim instead of queueing up.
                    if let Steal::Success(j) = p.req.steal_from(v, serve_own) {
                        counters.steal();
                        self.note(super::trace::Source::Steal { victim: v as u32 });
                        return Some(j);
                    }
                    self.missed();
                }
                (LocalDeque::ChaseLev(_), Stealers::Private(_)) => {
                    unreachable!("a runtime's workers all use its pool")
                }
            }
        }
        self.take_injected()
    }

    /// A job addressed to this worker (a broadcast's share), counted.
    #[inline]
    fn take_mail(&self) -> Option<JobRef> {
        let j = self.registry.take_mail(self.index);
        if j.is_some() {
            self.registry.counters[self.index].share();
            self.note(super::trace::Source::Mail);
        }
        j
    }

    /// A job from the injector, counted.
    #[inline]
    fn take_injected(&self) -> Option<JobRef> {
        let j = self.registry.take_injected();
        if j.is_some() {
            self.registry.counters[self.index].injected();
            self.note(super::trace::Source::Injected);
        }
        j
    }

    /// The next job for this worker: one addressed to it (a broadcast's share, which other
    /// workers wait for), then its own deque, then stolen or injected work.
    pub(crate) fn find_work(&self) -> Option<JobRef> {
        let j = self
            .take_mail()
            .or_else(|| self.pop_own())
            .or_else(|| self.pop_place())
            .or_else(|| self.steal());
        if self.has_places && j.is_some() {
            self.idle_since.set(None);
        }
        j
    }

    /// Runs jobs until `done()` holds, without sleeping (the job we wait for is running).
    ///
    /// Every caller waits for a job that other threads can reach (a stolen join half on the
    /// caller's stack, an injected install, a scope's spawns), so this must not unwind before
    /// `done()`: jobs catch their own panics, and a panic from the runtime's own code here
    /// aborts the process instead of freeing a frame that another thread still uses.
    pub(crate) fn wait_until(&self, done: impl Fn() -> bool) {
        struct AbortOnUnwind;
        impl Drop for AbortOnUnwind {
            fn drop(&mut self) {
                super::eprintln_best_effort(
                    "taskpools: a fork-join wait unwound while other threads could still use \
                     the job it waits for; aborting",
                );
                std::process::abort();
            }
        }
        let guard = AbortOnUnwind;
        let mut idle = 0u32;
        while !done() {
            if self.run_one_or_starve(idle >= STARVING_ROUNDS) {
                idle = 0;
            } else {
                idle += 1;
                if idle < 64 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        }
        std::mem::forget(guard);
    }

    /// One step of a wait: answers a pending steal request, then runs one job if there is one
    /// (a job addressed to this worker first, at any depth: a broadcast waits for it; then its
    /// own deque; then, below `MAX_STEALING_WAITS` nested waits, stolen work; then
    /// work injected into this runtime). Injected work is taken at any depth: it may be what
    /// another runtime's worker, itself waiting on us, needs to finish (installs that cross
    /// back and forth between one-thread runtimes), and it grows the stack no more than a pop.
    /// Returns whether it ran a job.
    pub(crate) fn run_one(&self) -> bool {
        self.run_one_or_starve(false)
    }

    /// [`run_one`](Self::run_one). A deep wait takes from the places' deques only the tasks
    /// this worker pushed at its depth or deeper (its own subtree's): a place's deque holds
    /// other workers' tasks too, and taking those at any depth let nested waits pile up
    /// unrelated subtrees until the stack overflowed. A `starving` deep wait (one that found
    /// nothing for a long while) takes any place work, so that a wait for a task another
    /// worker pushed into a place deque cannot last forever when every worker is deep.
    pub(crate) fn run_one_or_starve(&self, starving: bool) -> bool {
        self.poll();
        let depth = self.waits.get();
        let job = if depth < MAX_STEALING_WAITS {
            self.find_work()
        } else {
            self.take_mail()
                .or_else(|| self.pop_own())
                .or_else(|| self.take_injected())
                .or_else(|| self.take_own_placed(depth))
                .or_else(|| {
                    if starving {
                        self.pop_place().or_else(|| self.steal_places())
                    } else {
                        None
                    }
                })
        };
        match job {
            Some(j) => {
                if self.has_places {
                    self.idle_since.set(None);
                }
                self.waits.set(depth + 1);
                // SAFETY: a job popped or stolen is executed once, here. Jobs catch their own
                // panics, so the depth is restored.
                unsafe { self.run_job(j) };
                self.waits.set(depth);
                true
            }
            None => false,
        }
    }

    /// Under the adaptive place policy: a worker that parks after a run of failed steal
    /// rounds halves its rounds before the next park (failures dominate); one that finds work
    /// after idling doubles them back (up to [`SPIN_ROUNDS`]).
    #[inline]
    fn adapt_spin(&self, found: bool) {
        if !self
            .registry
            .places
            .as_ref()
            .is_some_and(|p| p.policy.adaptive)
        {
            return;
        }
        let b = self.spin_budget.get();
        self.spin_budget.set(if found {
            (b * 2).min(SPIN_ROUNDS)
        } else {
            (b / 2).max(MIN_SPIN_ROUNDS)
        });
    }

    pub(crate) fn main_loop(&self) {
        let mut idle = 0u32;
        while !self.registry.shutdown.load(Ordering::Acquire) {
            self.poll();
            match self.find_work() {
                // SAFETY: as in `wait_until`.
                Some(j) => unsafe {
                    if idle > 0 {
                        self.adapt_spin(true);
                    }
                    idle = 0;
                    self.run_job(j)
                },
                None if idle < self.spin_budget.get() => {
                    idle += 1;
                    std::thread::yield_now();
                }
                None => {
                    idle = 0;
                    self.adapt_spin(false);
                    self.block_requests();
                    if let Some(t) = &self.trace {
                        t.reserve_for_sleep();
                    }
                    let slept = self.registry.sleep_until_work(self.index, || {
                        self.registry.counters[self.index].sleep();
                        if let Some(t) = &self.trace {
                            t.sleep();
                        }
                    });
                    // The idle time keeps counting through a sleep: a worker woken for
                    // another place's hinted task may take it once the delay has passed
                    // (nothing else might wake it again while that place is busy).
                    if slept {
                        if let Some(t) = &self.trace {
                            t.wake();
                        }
                    }
                    self.unblock_requests();
                }
            }
        }
        // Shutdown: run what is still injected (fire-and-forget `spawn`s; nothing else can be
        // there, since installs and scopes borrow the runtime that is being dropped). A job
        // that spawns more while this runs is seen here too, by this worker's next look. Such
        // a job may also have started a broadcast (a working phase) just before the shutdown
        // (`broadcast::claim` refuses one after it): while one holds the runtime, this worker
        // stays to run its share, which the broadcaster waits for.
        loop {
            // Own spawns too: a stolen spawn run here may have spawned into its scope, whose
            // owner waits for it.
            while let Some(j) = self
                .take_mail()
                .or_else(|| self.take_injected())
                .or_else(|| self.pop_own())
                .or_else(|| self.take_any_place())
            {
                // SAFETY: as in `wait_until`.
                unsafe { self.run_job(j) };
            }
            if !*lock(&self.registry.broadcast_busy) {
                break;
            }
            // A share ends by taking steal requests again; this loop does not answer them,
            // so decline them (and answer one that is pending) before waiting.
            self.block_requests();
            std::thread::yield_now();
        }
        self.block_requests();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::runtime::{Pool, Runtime};
    use std::sync::atomic::AtomicBool as StdBool;

    /// Waits past `MAX_STEALING_WAITS` nested levels do not steal (which bounds the stack);
    /// waits below it do. White-box: the depth is set directly, and the worker's steal rounds
    /// are counted while it waits for a flag that another thread sets.
    #[test]
    fn deep_waits_do_not_steal() {
        for pool in Pool::ALL {
            let rt = Runtime::builder().threads(2).pool(pool).build().unwrap();
            let rounds = |depth: u32| {
                rt.install(|| {
                    let w = WorkerThread::current().expect("on a worker");
                    let flag = StdBool::new(false);
                    let before = w.registry.counters[w.index].snapshot().steal_rounds;
                    w.waits.set(depth);
                    std::thread::scope(|s| {
                        s.spawn(|| {
                            std::thread::sleep(std::time::Duration::from_millis(20));
                            flag.store(true, std::sync::atomic::Ordering::Release);
                        });
                        w.wait_until(|| flag.load(std::sync::atomic::Ordering::Acquire));
                    });
                    assert_eq!(w.waits.get(), depth, "the wait restores the depth");
                    w.waits.set(0);
                    w.registry.counters[w.index].snapshot().steal_rounds - before
                })
            };
            assert!(rounds(0) > 0, "{pool}: a shallow wait steals");
            assert_eq!(
                rounds(MAX_STEALING_WAITS),
                0,
                "{pool}: a deep wait must not steal"
            );
        }
    }
}
