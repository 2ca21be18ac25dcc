//! A worker's own deque: a Chase–Lev deque, or on the `private-deque` pool its private frame
//! stack with a public spawn deque and its end of the steal requests; and [`EXPOSED`], how
//! many jobs the frame stack holds before a join runs as plain calls (the serial elision).

use std::cell::Cell;

use crate::queue::chase_lev;
use crate::queue::private_deque::StealRequests;
use crate::runtime::frames::FrameStack;
use crate::runtime::job::{self, JobRef};

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
