//! Manber's tree search (Kotz and Ellis, "Evaluation of Concurrent Pools" (1989), §2, Figures 1 and
//! 2): a complete binary tree over the segments (leaves; missing leaves up to the next power of two
//! are permanently empty), with a round counter per node meaning "this subtree was found empty in
//! every round up to this one".
//!
//! Arriving at an internal node from child `c`, with sibling `s`:
//! 1. a child's counter exceeds our round: we are behind; adopt the higher round and restart at
//!    our own leaf (case 3);
//! 2. otherwise mark `c` with our round; if `s` also carries our round, the whole node is empty
//!    this round: go up (case 2), and at the root start a new round (the caller learns that a
//!    round was completed);
//! 3. else descend into `s`, jumping straight to the *matching descendant* of the last leaf we
//!    visited: the leaf at the same position inside `s` (case 1).
//!
//! Nodes are heap-indexed (root 1, children 2i and 2i+1, leaves `L..2L`); the matching
//! descendant of leaf `x` across a node whose children have height `h` is `x ^ (1 << h)`.
//! Counters are atomics and only grow (`fetch_max`), so a stale read can only make a searcher
//! look at a subtree once more, never skip one that another searcher has not marked.

use crate::sync::{AtomicU64, Ordering};

/// The shared round counters.
pub(crate) struct Tree {
    leaves: usize,
    segments: usize,
    counters: Box<[AtomicU64]>,
}

/// A searcher's position and round (Figure 2's `MyRound` and `LastLeaf`).
#[derive(Clone, Debug)]
pub(crate) struct Cursor {
    my_leaf: usize,
    last_leaf: usize,
    my_round: u64,
}

/// What a tree search did.
pub(crate) enum TreeOutcome<R> {
    /// `examine` returned this.
    Found(R),
    /// A round ended at the root with every leaf found empty.
    RoundCompleted,
}

impl Tree {
    pub(crate) fn new(segments: usize) -> Self {
        let leaves = segments.max(1).next_power_of_two();
        Tree {
            leaves,
            segments,
            counters: (0..2 * leaves).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    pub(crate) fn cursor(&self, segment: usize) -> Cursor {
        Cursor {
            my_leaf: self.leaves + segment,
            last_leaf: self.leaves + segment,
            my_round: 1,
        }
    }

    /// Height of node `i` (leaves 0).
    fn height(&self, i: usize) -> u32 {
        self.leaves.trailing_zeros() - i.ilog2()
    }

    /// Runs Figure 2 from the cursor's last leaf. `examine(segment)` looks at one segment and
    /// returns `Some` to stop; `visit_node()` is called for every internal node touched (for
    /// counting and remote-cost emulation).
    pub(crate) fn search<R>(
        &self,
        c: &mut Cursor,
        mut examine: impl FnMut(usize) -> Option<R>,
        mut visit_node: impl FnMut(),
    ) -> TreeOutcome<R> {
        let mut leaf = c.last_leaf;
        'leaf: loop {
            c.last_leaf = leaf;
            let seg = leaf - self.leaves;
            if seg < self.segments {
                if let Some(r) = examine(seg) {
                    return TreeOutcome::Found(r);
                }
            }
            if self.leaves == 1 {
                c.my_round += 1;
                return TreeOutcome::RoundCompleted;
            }
            let mut from = leaf;
            loop {
                let node = from / 2;
                visit_node();
                let l = self.counters[2 * node].load(Ordering::Acquire);
                let r = self.counters[2 * node + 1].load(Ordering::Acquire);
                if l > c.my_round || r > c.my_round {
                    // Case 3: someone found more recent emptiness; we are behind.
                    c.my_round = l.max(r);
                    leaf = c.my_leaf;
                    continue 'leaf;
                }
                self.counters[from].fetch_max(c.my_round, Ordering::AcqRel);
                let sib = self.counters[from ^ 1].load(Ordering::Acquire);
                if sib >= c.my_round {
                    // Case 2: both children empty in this round.
                    if node == 1 {
                        c.my_round += 1;
                        c.last_leaf = c.my_leaf;
                        return TreeOutcome::RoundCompleted;
                    }
                    from = node;
                } else {
                    // Case 1: jump to the matching descendant in the sibling subtree.
                    leaf = c.last_leaf ^ (1 << self.height(from));
                    continue 'leaf;
                }
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn one_round_visits_every_segment_exactly_once_when_alone() {
        for n in [1, 2, 3, 4, 5, 8, 13, 16, 32] {
            for start in 0..n {
                // A fresh tree each time: counters left by an earlier search in the same round
                // would (correctly) make this searcher skip those leaves.
                let t = Tree::new(n);
                let mut c = t.cursor(start);
                let mut seen = Vec::new();
                let out = t.search(
                    &mut c,
                    |s| {
                        seen.push(s);
                        None::<()>
                    },
                    || {},
                );
                assert!(matches!(out, TreeOutcome::RoundCompleted));
                let mut sorted = seen.clone();
                sorted.sort_unstable();
                assert_eq!(
                    sorted,
                    (0..n).collect::<Vec<_>>(),
                    "n={n} start={start}: {seen:?}"
                );
                assert_eq!(seen[0], start, "a search starts at the last leaf");
            }
        }
    }

    #[test]
    fn matching_descendant_jumps_to_the_same_position() {
        // 16 segments, start at segment 5: the first jump is to its neighbour 4; then, across
        // the node of height 2, to the leaf matching the *last* leaf visited (4): 4 ^ 2 = 6.
        let t = Tree::new(16);
        let mut c = t.cursor(5);
        let mut seen = Vec::new();
        let _ = t.search(
            &mut c,
            |s| {
                seen.push(s);
                None::<()>
            },
            || {},
        );
        assert_eq!(&seen[..2], &[5, 4]);
        assert_eq!(
            seen[2],
            4 ^ 2,
            "matching descendant of the last leaf (4) across height 2"
        );
        assert_eq!(seen.len(), 16);
    }

    #[test]
    fn a_second_searcher_skips_subtrees_marked_in_its_round() {
        let t = Tree::new(8);
        let mut a = t.cursor(0);
        let _ = t.search(&mut a, |s| (s == 3).then_some(()), || {});
        // `a` found segments 0..=2 empty and marked leaves 0, 1 and the pair (0, 1).
        let mut b = t.cursor(1);
        let mut seen = Vec::new();
        let _ = t.search(
            &mut b,
            |s| {
                seen.push(s);
                (s == 6).then_some(())
            },
            || {},
        );
        assert!(
            !seen.contains(&0),
            "leaf 0 was marked empty this round: {seen:?}"
        );
    }

    #[test]
    fn a_searcher_that_is_behind_restarts_at_its_own_leaf_with_the_newer_round() {
        let t = Tree::new(4);
        let mut a = t.cursor(0);
        for _ in 0..3 {
            let _ = t.search(&mut a, |_| None::<()>, || {});
        }
        let mut b = t.cursor(2);
        let mut seen = Vec::new();
        let _ = t.search(
            &mut b,
            |s| {
                seen.push(s);
                None::<()>
            },
            || {},
        );
        assert!(b.my_round > 1, "adopted the newer round");
        assert_eq!(
            seen.iter().filter(|&&s| s == 2).count(),
            2,
            "restarted at its own leaf"
        );
    }
}
