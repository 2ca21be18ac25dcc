//! Three task types, as a user's crate might have: a tree walk without state, a range sum
//! with a per-worker sum, and N-queens with a per-worker count of solutions.

use taskpools::{Ctx, Task};

/// Counts the nodes of a complete binary tree, one task per node.
pub struct Tree(pub u32);

impl Task for Tree {
    fn run(self, ctx: &mut Ctx<'_, Self>) {
        if self.0 > 0 {
            ctx.put(Tree(self.0 - 1));
            ctx.put(Tree(self.0 - 1));
        }
    }
}

/// Sums `lo..hi`, splitting ranges longer than 64.
pub struct Range(pub u64, pub u64);

impl Task<u64> for Range {
    fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
        let Range(lo, hi) = self;
        if hi - lo <= 64 {
            *ctx.local() += (lo..hi).sum::<u64>();
        } else {
            let mid = lo + (hi - lo) / 2;
            ctx.put(Range(lo, mid));
            ctx.put(Range(mid, hi));
        }
    }
}

/// Places queens row by row on an `n`×`n` board: the queens so far, one column per row.
pub struct Queens {
    pub n: u8,
    pub cols: Vec<u8>,
}

impl Task<u64> for Queens {
    fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
        if self.cols.len() == usize::from(self.n) {
            *ctx.local() += 1;
            return;
        }
        let row = self.cols.len();
        for c in 0..self.n {
            let safe = self
                .cols
                .iter()
                .enumerate()
                .all(|(r, &q)| q != c && usize::from(q.abs_diff(c)) != row - r);
            if safe {
                let mut cols = self.cols.clone();
                cols.push(c);
                ctx.put(Queens { n: self.n, cols });
            }
        }
    }
}

/// Checks the three phases' results.
pub fn check(tree_tasks: u64, range_sum: u64, solutions: u64) {
    assert_eq!(tree_tasks, (1 << 13) - 1);
    assert_eq!(range_sum, (0..100_000u64).sum::<u64>());
    assert_eq!(solutions, 92);
    println!("ok: {tree_tasks} tree tasks, sum {range_sum}, {solutions} solutions");
}
