//! What a distributed phase reports: each rank's counters ([`RankStats`]), gathered on every
//! rank into a [`DistReport`].

use std::time::Duration;

use mpi::topology::Communicator;
use mpi::traits::CommunicatorCollectives;

use crate::RunReport;

/// One rank's counters for one distributed phase.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankStats {
    /// The rank.
    pub rank: usize,
    /// Workers of this rank in the phase.
    pub workers: usize,
    /// Tasks this rank's workers ran.
    pub tasks_run: u64,
    /// Tasks sent to other ranks (in steal replies).
    pub tasks_sent: u64,
    /// Tasks received from other ranks.
    pub tasks_received: u64,
    /// Steal requests this rank sent.
    pub requests_sent: u64,
    /// Steal requests this rank received.
    pub requests_received: u64,
    /// Of those, the ones answered with tasks.
    pub requests_granted: u64,
    /// Messages of every kind this rank sent.
    pub messages_sent: u64,
    /// Bytes of every message this rank sent (payloads, as serialized).
    pub bytes_sent: u64,
    /// Bytes this rank received.
    pub bytes_received: u64,
    /// Termination rounds (the token's trips; rank 0 only).
    pub token_rounds: u64,
    /// Time the whole rank was idle (every worker without a task).
    pub idle: Duration,
    /// Wall-clock time of the phase on this rank.
    pub elapsed: Duration,
}

const STAT_FIELDS: usize = 14;

impl RankStats {
    fn to_words(&self) -> [u64; STAT_FIELDS] {
        [
            self.rank as u64,
            self.workers as u64,
            self.tasks_run,
            self.tasks_sent,
            self.tasks_received,
            self.requests_sent,
            self.requests_received,
            self.requests_granted,
            self.messages_sent,
            self.bytes_sent,
            self.bytes_received,
            self.token_rounds,
            nanos(self.idle),
            nanos(self.elapsed),
        ]
    }

    fn from_words(w: &[u64]) -> RankStats {
        RankStats {
            rank: w[0] as usize,
            workers: w[1] as usize,
            tasks_run: w[2],
            tasks_sent: w[3],
            tasks_received: w[4],
            requests_sent: w[5],
            requests_received: w[6],
            requests_granted: w[7],
            messages_sent: w[8],
            bytes_sent: w[9],
            bytes_received: w[10],
            token_rounds: w[11],
            idle: Duration::from_nanos(w[12]),
            elapsed: Duration::from_nanos(w[13]),
        }
    }
}

pub(super) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// What a distributed phase reports on every rank.
#[derive(Clone, Debug)]
pub struct DistReport {
    /// This rank's working phase (its workers' counters).
    pub local: RunReport,
    /// Every rank's counters, in rank order (the same on every rank).
    pub ranks: Vec<RankStats>,
}

impl DistReport {
    /// Tasks run on all ranks together.
    pub fn tasks_run(&self) -> u64 {
        self.ranks.iter().map(|r| r.tasks_run).sum()
    }

    /// The phase's wall-clock time: the slowest rank's.
    pub fn elapsed(&self) -> Duration {
        self.ranks
            .iter()
            .map(|r| r.elapsed)
            .max()
            .unwrap_or_default()
    }

    /// Counters of all ranks summed (`rank` and `elapsed` are meaningless there).
    pub fn total(&self) -> RankStats {
        let mut t = RankStats::default();
        for r in &self.ranks {
            t.workers += r.workers;
            t.tasks_run += r.tasks_run;
            t.tasks_sent += r.tasks_sent;
            t.tasks_received += r.tasks_received;
            t.requests_sent += r.requests_sent;
            t.requests_received += r.requests_received;
            t.requests_granted += r.requests_granted;
            t.messages_sent += r.messages_sent;
            t.bytes_sent += r.bytes_sent;
            t.bytes_received += r.bytes_received;
            t.token_rounds += r.token_rounds;
            t.idle += r.idle;
            t.elapsed = t.elapsed.max(r.elapsed);
        }
        t
    }
}

pub(super) fn gather_stats<C: Communicator>(comm: &C, mine: &RankStats) -> Vec<RankStats> {
    let words = mine.to_words();
    let mut all = vec![0u64; STAT_FIELDS * comm.size() as usize];
    comm.all_gather_into(&words[..], &mut all[..]);
    all.chunks(STAT_FIELDS).map(RankStats::from_words).collect()
}
