//! A rank's agent: the thread that called the phase, the only one that calls MPI. It tracks
//! whether the rank is passive, asks other ranks for work (the victims' search), passes the
//! termination token, and ends the phase — on termination, or on a failure anywhere — with
//! every request answered and a closing barrier (see "How a rank works" and "Ending" in the
//! module docs).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mpi::request::Request;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::CommunicatorCollectives;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::link::Link;
use super::messages::{Ctrl, PendingSend, MAX_ABORT_TEXT};
use super::report::RankStats;
use super::termination::{Safra, TokenAction};
use super::victims::Victims;
use super::DistributedConfig;
use crate::phase::Coordinator;

#[derive(Debug)]
pub(super) enum End {
    Terminated,
    Aborted { rank: usize, message: String },
}

pub(super) struct Agent<'a, T> {
    pub(super) comm: &'a SimpleCommunicator,
    pub(super) cfg: &'a DistributedConfig,
    pub(super) coord: &'a Coordinator,
    pub(super) link: &'a Link<T>,
    pub(super) workers: usize,
    pub(super) rank: usize,
    pub(super) size: usize,
    pub(super) safra: Safra,
    pub(super) victims: Option<Victims>,
    /// The rank asked for work whose answer has not come.
    pub(super) outstanding: Option<usize>,
    /// Steal requests received while another one waits for a worker (in arrival order).
    pub(super) waiting: std::collections::VecDeque<usize>,
    /// No request before this instant (backing off after a round found no work).
    pub(super) quiet_until: Instant,
    pub(super) backoff: Duration,
    /// Sends in flight, with the buffers they read (freed when they complete).
    pub(super) sends: Vec<PendingSend>,
    pub(super) end: Option<End>,
    pub(super) rng: fastrand::Rng,
    pub(super) idle_since: Option<Instant>,
    pub(super) stats: RankStats,
}

impl<'a, T: Serialize + DeserializeOwned + Send> Agent<'a, T> {
    pub(super) fn new(
        comm: &'a SimpleCommunicator,
        cfg: &'a DistributedConfig,
        coord: &'a Coordinator,
        link: &'a Link<T>,
        workers: usize,
    ) -> Self {
        let rank = comm.rank() as usize;
        let size = comm.size() as usize;
        Agent {
            comm,
            cfg,
            coord,
            link,
            workers,
            rank,
            size,
            safra: Safra::new(rank, size),
            victims: cfg
                .search
                .filter(|_| size > 1)
                .map(|s| Victims::new(s, rank, size, cfg.seed)),
            outstanding: None,
            waiting: std::collections::VecDeque::new(),
            quiet_until: Instant::now(),
            backoff: Duration::ZERO,
            sends: Vec::new(),
            end: None,
            rng: fastrand::Rng::with_seed(cfg.seed ^ (rank as u64 + 1).wrapping_mul(0x2545_f491)),
            idle_since: None,
            stats: RankStats {
                rank,
                workers,
                ..RankStats::default()
            },
        }
    }

    /// The rank has no task anywhere: nothing in the inbox, every worker idle, nothing in
    /// the outbox. (Order matters: a worker empties the inbox only after leaving the idle
    /// count — `Inbox::quiescent` — and fills the outbox before joining it again.)
    pub(super) fn passive(&self) -> bool {
        self.link.inbox.quiescent(self.coord, self.workers)
            && self.link.outbox_len.load(Ordering::SeqCst) == 0
    }

    pub(super) fn run(&mut self) {
        let mut barrier: Option<Request<'static, ()>> = None;
        loop {
            self.receive_all();
            self.flush_outbox();
            self.reap_sends();
            if self.end.is_none() {
                if let Some(message) = self.coord.panic_message().filter(|_| self.coord.is_done()) {
                    // A task of this rank panicked: tell everyone.
                    self.abort_all(message);
                }
            }
            if self.end.is_none() && self.link.workers_left.load(Ordering::SeqCst) {
                // The local phase returned although nobody ended it: a panic, or it could not
                // start.
                let why = self
                    .link
                    .failure
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take();
                self.abort_all(why.unwrap_or_else(|| "the local working phase ended early".into()));
            }
            if self.end.is_none() {
                self.step_running();
            } else {
                // Ending: answer whatever asks, wait for our own answer, then the barrier.
                self.refuse_waiting_requests();
                if barrier.is_none()
                    && self.outstanding.is_none()
                    && self.link.workers_left.load(Ordering::SeqCst)
                    && self.link.outbox_len.load(Ordering::SeqCst) == 0
                {
                    barrier = Some(self.comm.immediate_barrier());
                }
                if let Some(b) = barrier.take() {
                    match b.test() {
                        Ok(_) => {
                            self.wait_sends();
                            return;
                        }
                        Err(b) => barrier = Some(b),
                    }
                }
            }
            std::thread::park_timeout(self.nap());
        }
    }

    /// How long the agent sleeps when nothing wakes it: short while it waits for an answer
    /// or the phase ends, longer while the rank's workers are busy.
    fn nap(&self) -> Duration {
        if self.end.is_some() || self.outstanding.is_some() {
            Duration::from_micros(20)
        } else if self.passive() {
            Duration::from_micros(50)
                .max(self.quiet_until.saturating_duration_since(Instant::now()))
        } else {
            Duration::from_micros(200)
        }
    }

    fn step_running(&mut self) {
        let passive = self.passive();
        match (passive, self.idle_since) {
            (true, None) => self.idle_since = Some(Instant::now()),
            (false, Some(t)) => {
                self.stats.idle += t.elapsed();
                self.idle_since = None;
            }
            _ => {}
        }
        if !passive {
            // Hand the next waiting request to the workers once the last one was taken.
            if let Some(&r) = self.waiting.front() {
                if self
                    .link
                    .request
                    .compare_exchange(0, r + 1, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    self.waiting.pop_front();
                }
            }
            return;
        }
        // Requests the workers did not take before they all went idle: none to spare.
        self.refuse_waiting_requests();
        if self.outstanding.is_none() && Instant::now() >= self.quiet_until {
            if let Some(v) = self.victims.as_mut() {
                let victim = v.next();
                let round = v.round();
                self.delay(self.cfg.remote_delay);
                self.send_ctrl(victim, &Ctrl::Request { round });
                self.stats.requests_sent += 1;
                self.outstanding = Some(victim);
            }
        }
        // The passive state is re-checked here: a reply with tasks (received above) would
        // have made the rank active.
        if !self.passive() {
            return;
        }
        match self.safra.when_passive() {
            TokenAction::Keep => {}
            TokenAction::Forward(to, t) => self.send_ctrl(to, &Ctrl::Token(t)),
            TokenAction::Terminate => {
                self.send_to_all(&Ctrl::Terminate);
                self.finish(End::Terminated);
            }
        }
    }

    fn send_to_all(&mut self, c: &Ctrl) {
        let (me, size) = (self.rank, self.size);
        for r in (0..size).filter(|&r| r != me) {
            self.send_ctrl(r, c);
        }
    }

    /// Ends the phase because of a failure on this rank, telling every rank.
    pub(super) fn abort_all(&mut self, message: String) {
        // Kept short, so the message stays under MPI's eager limit: its send completes
        // without the receiver, which may have left the phase already.
        let mut short = message.clone();
        if short.len() > MAX_ABORT_TEXT {
            let mut cut = MAX_ABORT_TEXT;
            while !short.is_char_boundary(cut) {
                cut -= 1;
            }
            short.truncate(cut);
            short.push('…');
        }
        self.send_to_all(&Ctrl::Abort {
            rank: self.rank as u32,
            message: short,
        });
        self.finish(End::Aborted {
            rank: self.rank,
            message,
        });
    }

    /// Answers "no work" to every request not taken by a worker.
    fn refuse_waiting_requests(&mut self) {
        let r = self.link.request.swap(0, Ordering::AcqRel);
        if r != 0 {
            self.waiting.push_front(r - 1);
        }
        while let Some(r) = self.waiting.pop_front() {
            let round = self.searching_round();
            self.send_ctrl(r, &Ctrl::NoWork { round });
        }
    }

    pub(super) fn searching_round(&self) -> Option<u64> {
        self.victims.as_ref().map(|v| v.round())
    }

    pub(super) fn finish(&mut self, end: End) {
        if let Some(t) = self.idle_since.take() {
            self.stats.idle += t.elapsed();
        }
        self.stats.token_rounds = self.safra.rounds();
        self.end = Some(end);
        self.coord.end();
    }

    pub(super) fn delay(&mut self, d: Duration) {
        if d.is_zero() {
            return;
        }
        let until = Instant::now() + d;
        while Instant::now() < until {
            std::hint::spin_loop();
        }
    }
}
