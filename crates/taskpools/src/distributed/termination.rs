//! Distributed termination: Dijkstra's token ring with message counting, in Safra's form
//! (Dijkstra, EWD 998). Pure logic, no MPI: the agent feeds it events and sends what it says.
//!
//! # The algorithm
//!
//! Only *basic* messages count: the ones that carry tasks (a steal reply with tasks). Each
//! rank keeps `count` = basic messages sent − basic messages received, and a colour: it turns
//! black when it receives a basic message. A rank is *passive* when it has no task, none of
//! its workers runs one, and nothing it must send is waiting; a passive rank becomes active
//! only by receiving a basic message (steal requests and "no work" replies carry no tasks
//! and do not count).
//!
//! Rank 0, when passive, starts a round: it turns white and sends a white token with `q = 0`
//! to rank 1. A rank `i > 0` holds the token until it is passive, then adds its `count` to
//! `q`, blackens the token if it is black itself, turns white, and passes the token to
//! `i + 1 mod n`. When the token is back at rank 0 and rank 0 is passive, rank 0 concludes
//! termination if the token is white, rank 0 is white, and `q + count₀ = 0`; otherwise it
//! starts a new round.
//!
//! # Why it is exact (sketch)
//!
//! Suppose rank 0 concludes at time t. Let the round start at s. Every rank was passive when
//! it passed the token and white at the end of its visit. Claim: no rank was active and no
//! basic message was in flight at t. Assume otherwise. Then some basic message was received
//! after its receiver passed the token (otherwise the receiver, active again, would still be
//! active when it held the token and would not have passed it — a rank passes the token only
//! when passive — or, having turned passive afterwards, it would have been counted). Take
//! the first rank j that became active after passing the token: it received a message m from
//! a rank that was active after it passed the token (impossible for the first such rank) or
//! before it passed it, i.e. m was sent before the sender's visit and received after j's
//! visit. Sums: the token's `q` adds every rank's `count` at the moment of its visit; a
//! message sent before the sender's visit and received after the receiver's visit adds +1
//! to the total and no −1, while one received before the receiver's visit and sent after the
//! sender's would make the receiver black (it received a basic message during the round, and
//! its colour is cleared only at its own visit, so the token or rank 0 would be black).
//! With all ranks white, the sum of counts taken at the visits equals the number of messages
//! in flight across the cut of visits; `q + count₀ = 0` says there are none, so m cannot
//! exist. The full proof is EWD 998; the test module checks the implementation against a
//! simulation with random delays, and its planted-bug twin (no blackening on receipt) is
//! caught.

/// The token: the sum of the counts of the ranks it has visited, and whether one was black.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Token {
    pub(crate) q: i64,
    pub(crate) black: bool,
}

/// What a passive rank does with the token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TokenAction {
    /// Nothing (no token here, or rank 0's round is still out).
    Keep,
    /// Send this token to that rank.
    Forward(usize, Token),
    /// Rank 0: every rank is passive and no task is on the wire.
    Terminate,
}

/// One rank's part of the algorithm.
#[derive(Debug)]
pub(crate) struct Safra {
    rank: usize,
    size: usize,
    count: i64,
    black: bool,
    holding: Option<Token>,
    /// Rank 0: a round is out.
    round_out: bool,
    rounds: u64,
    /// Planted bug for the test: receipts do not blacken.
    #[cfg(test)]
    broken_colour: bool,
}

impl Safra {
    pub(crate) fn new(rank: usize, size: usize) -> Self {
        Safra {
            rank,
            size,
            count: 0,
            black: false,
            holding: None,
            round_out: false,
            rounds: 0,
            #[cfg(test)]
            broken_colour: false,
        }
    }

    /// A basic message (one carrying tasks) was sent.
    pub(crate) fn sent_basic(&mut self) {
        self.count += 1;
    }

    /// A basic message was received.
    pub(crate) fn received_basic(&mut self) {
        self.count -= 1;
        #[cfg(test)]
        if self.broken_colour {
            return;
        }
        self.black = true;
    }

    /// The token arrived.
    pub(crate) fn receive_token(&mut self, t: Token) {
        debug_assert!(self.holding.is_none(), "one token circulates");
        self.holding = Some(t);
    }

    /// Rounds started (rank 0).
    pub(crate) fn rounds(&self) -> u64 {
        self.rounds
    }

    /// Called whenever this rank is passive: what to do with the token now.
    pub(crate) fn when_passive(&mut self) -> TokenAction {
        if self.size == 1 {
            return TokenAction::Terminate;
        }
        let next = (self.rank + 1) % self.size;
        if self.rank == 0 {
            match self.holding.take() {
                Some(t) if !t.black && !self.black && t.q + self.count == 0 => {
                    TokenAction::Terminate
                }
                Some(_) => self.new_round(next),
                None if !self.round_out => {
                    self.round_out = true;
                    self.new_round(next)
                }
                None => TokenAction::Keep,
            }
        } else if let Some(mut t) = self.holding.take() {
            t.q += self.count;
            t.black |= self.black;
            self.black = false;
            TokenAction::Forward(next, t)
        } else {
            TokenAction::Keep
        }
    }

    fn new_round(&mut self, next: usize) -> TokenAction {
        self.black = false;
        self.rounds += 1;
        TokenAction::Forward(next, Token { q: 0, black: false })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// A simulated system: each rank holds some units of work; an active rank either works
    /// one unit or sends part of its work to a random rank as a basic message; messages
    /// (basic and token) are delivered after random delays and in random order. Returns
    /// whether every detection was correct (no work anywhere, nothing in flight).
    fn simulate(seed: u64, n: usize, broken: bool) -> bool {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut work: Vec<u64> = (0..n)
            .map(|i| if i == 0 { 200 } else { rng.u64(0..3) })
            .collect();
        let mut safra: Vec<Safra> = (0..n).map(|r| Safra::new(r, n)).collect();
        for s in &mut safra {
            s.broken_colour = broken;
        }
        // (deliver_at, to, Some(work) | None for a token, token)
        let mut wire: VecDeque<(u64, usize, Option<u64>, Token)> = VecDeque::new();
        let mut now = 0u64;
        loop {
            now += 1;
            assert!(now < 10_000_000, "the simulation ends");
            // Deliver due messages in random order.
            let mut i = 0;
            while i < wire.len() {
                if wire[i].0 <= now && rng.bool() {
                    let (_, to, w, t) = wire.remove(i).expect("index in range");
                    match w {
                        Some(w) => {
                            safra[to].received_basic();
                            work[to] += w;
                        }
                        None => safra[to].receive_token(t),
                    }
                } else {
                    i += 1;
                }
            }
            let r = rng.usize(0..n);
            if work[r] > 0 {
                if work[r] >= 2 && rng.u8(0..4) == 0 {
                    let give = work[r] / 2;
                    work[r] -= give;
                    let to = rng.usize(0..n);
                    if to != r {
                        safra[r].sent_basic();
                        wire.push_back((
                            now + rng.u64(0..50),
                            to,
                            Some(give),
                            Token { q: 0, black: false },
                        ));
                    } else {
                        work[r] += give;
                    }
                } else {
                    work[r] -= 1;
                }
            } else {
                match safra[r].when_passive() {
                    TokenAction::Keep => {}
                    TokenAction::Forward(to, t) => {
                        wire.push_back((now + rng.u64(0..50), to, None, t));
                    }
                    TokenAction::Terminate => {
                        return work.iter().all(|&w| w == 0) && wire.iter().all(|m| m.2.is_none());
                    }
                }
            }
        }
    }

    #[test]
    fn detection_is_exact_under_random_delays() {
        for seed in 0..300 {
            for n in [1, 2, 3, 4, 7] {
                assert!(
                    simulate(seed, n, false),
                    "seed {seed}, {n} ranks: early termination"
                );
            }
        }
    }

    #[test]
    fn planted_bug_receipts_that_do_not_blacken_are_caught() {
        let caught = (0..300).any(|seed| !simulate(seed, 4, true));
        assert!(
            caught,
            "dropping the colour rule must give a false termination somewhere"
        );
    }
}
