//! Which rank a rank without work asks next: Manber's search strategies (Kotz & Ellis,
//! "Evaluation of Concurrent Pools" (1989), §2) lifted from segments in shared memory to
//! ranks. Pure logic, no MPI.
//!
//! - **linear**: around the ring of ranks, starting after the rank that last gave work;
//! - **random**: a uniformly random other rank each time;
//! - **tree**: the ranks are the leaves of a binary tree; a searcher first asks its sibling,
//!   then the sibling subtree one level up starting at the *matching descendant* (the rank
//!   at its own position inside that subtree), and so on up to the root, so nearby ranks are
//!   asked first. A round is one pass over every other rank. The round counters travel with
//!   the replies: a "no work" reply says which round the victim is in when it is searching
//!   too, and a searcher that learns it is behind adopts the newer round and restarts from
//!   its own leaf (case 3 of Kotz & Ellis's tree search). What is not lifted: the shared
//!   per-node marks that let a searcher skip a subtree another searcher found empty this
//!   round — ranks share no memory, so each searcher asks every rank once per round.
//!
//! A round without work makes the caller back off (see the agent).

use crate::pool::Search;

pub(crate) struct Victims {
    search: Search,
    size: usize,
    /// The other ranks in asking order (linear and tree).
    order: Vec<usize>,
    pos: usize,
    failures: usize,
    round: u64,
    rng: fastrand::Rng,
}

impl Victims {
    pub(crate) fn new(search: Search, rank: usize, size: usize, seed: u64) -> Self {
        let order = match search {
            Search::Linear | Search::Random => (1..size).map(|d| (rank + d) % size).collect(),
            Search::Tree => tree_order(rank, size),
        };
        Victims {
            search,
            size,
            order,
            pos: 0,
            failures: 0,
            round: 1,
            rng: fastrand::Rng::with_seed(seed ^ (rank as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        }
    }

    /// The searcher's round.
    pub(crate) fn round(&self) -> u64 {
        self.round
    }

    /// The rank to ask next (`size >= 2`).
    pub(crate) fn next(&mut self) -> usize {
        debug_assert!(self.size >= 2);
        match self.search {
            Search::Random => {
                let v = self.rng.usize(0..self.size - 1);
                self.order[v]
            }
            Search::Linear | Search::Tree => self.order[self.pos % self.order.len()],
        }
    }

    /// The victim answered without work; `victim_round` is its round if it is searching too.
    /// Returns `true` when a whole round found no work (the caller backs off).
    pub(crate) fn failed(&mut self, victim_round: Option<u64>) -> bool {
        if self.search == Search::Tree {
            if let Some(r) = victim_round.filter(|&r| r > self.round) {
                self.round = r;
                self.pos = 0;
                self.failures = 0;
                return false;
            }
        }
        self.pos += 1;
        self.failures += 1;
        if self.failures >= self.size - 1 {
            self.failures = 0;
            self.round += 1;
            if self.search == Search::Tree {
                self.pos = 0;
            }
            return true;
        }
        false
    }

    /// `victim` gave work.
    pub(crate) fn found(&mut self, victim: usize) {
        self.failures = 0;
        match self.search {
            // Next time, start where work was found.
            Search::Linear => {
                self.pos = self.order.iter().position(|&r| r == victim).unwrap_or(0);
            }
            // Next time, start again next to home.
            Search::Tree => self.pos = 0,
            Search::Random => {}
        }
    }
}

/// The other ranks in tree order: sibling subtrees level by level, each from the matching
/// descendant (`rank ^ (1 << h)`) on; leaves past `size` are absent.
pub(crate) fn tree_order(rank: usize, size: usize) -> Vec<usize> {
    let leaves = size.next_power_of_two();
    let mut order = Vec::with_capacity(size.saturating_sub(1));
    let mut h = 0;
    while (1usize << h) < leaves {
        for m in 0..(1usize << h) {
            let x = rank ^ (1 << h) ^ m;
            if x < size {
                order.push(x);
            }
        }
        h += 1;
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_order_visits_every_other_rank_once_nearest_first() {
        assert_eq!(tree_order(0, 8), vec![1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(tree_order(5, 8), vec![4, 7, 6, 1, 0, 3, 2]);
        for size in 1..20 {
            for rank in 0..size {
                let mut o = tree_order(rank, size);
                assert!(!o.contains(&rank));
                o.sort_unstable();
                assert_eq!(o, (0..size).filter(|&r| r != rank).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn a_round_ends_after_every_other_rank_said_no() {
        for search in Search::ALL {
            let mut v = Victims::new(search, 2, 5, 7);
            let mut asked = Vec::new();
            for i in 0..4 {
                let r = v.next();
                assert_ne!(r, 2);
                asked.push(r);
                assert_eq!(v.failed(None), i == 3, "{search:?}");
            }
            if search != Search::Random {
                asked.sort_unstable();
                assert_eq!(asked, vec![0, 1, 3, 4], "{search:?}");
            }
            assert_eq!(v.round(), 2);
        }
    }

    #[test]
    fn linear_starts_where_work_was_found_and_tree_adopts_newer_rounds() {
        let mut v = Victims::new(Search::Linear, 0, 4, 1);
        assert_eq!(v.next(), 1);
        v.failed(None);
        assert_eq!(v.next(), 2);
        v.found(2);
        assert_eq!(v.next(), 2);
        let mut t = Victims::new(Search::Tree, 0, 4, 1);
        t.failed(None);
        assert_eq!(t.next(), 2);
        assert!(!t.failed(Some(9)));
        assert_eq!(t.round(), 9);
        assert_eq!(t.next(), 1, "restarts from its own leaf");
    }
}
