//! Merge sort with locality hints (LASSI): sorters fill and sort their parts, mergers go up
//! a binary tree at their left predecessor's place (best) or the other one (worst).

use anyhow::{bail, Result};

use super::spawn::{Hints, Rt};
use super::Locality;
use crate::experiments::suite::kernels;

pub(super) struct Mergesort {
    n: usize,
    leaves: usize,
    data: Vec<u32>,
    tmp: Vec<u32>,
    expected: Vec<u32>,
}

impl Mergesort {
    pub(super) fn new(n: usize, leaves: usize) -> Self {
        let mut m = Mergesort {
            n,
            leaves,
            data: vec![0; n],
            tmp: vec![0; n],
            expected: Vec::new(),
        };
        // The expected result: every sorter's part filled as `fill` does, sorted.
        let mut all = vec![0u32; n];
        for (k, part) in split_leaves(&mut all, leaves).into_iter().enumerate() {
            fill(part, k);
        }
        all.sort_unstable();
        m.expected = all;
        m
    }

    /// The place of a node's own work (its sort or merge) over leaves `lo..hi`.
    fn place(lo: usize, hi: usize, leaves: usize, loc: Locality, places: usize) -> usize {
        if hi - lo == 1 {
            // Sorters: the first half of the leaves at place 0, the second at place 1 (more
            // places: in equal runs).
            return lo * places / leaves;
        }
        let left = Self::place(lo, (lo + hi) / 2, leaves, loc, places);
        match loc {
            Locality::Worst => (left + 1) % places,
            _ => left,
        }
    }

    pub(super) fn run(&mut self, rt: Rt<'_>, h: Hints) -> Result<()> {
        let leaves = self.leaves;
        let sh = Shape { n: self.n, leaves };
        let (data, tmp) = (&mut self.data[..], &mut self.tmp[..]);
        rt.scope(|s| {
            let p = h.pick(Self::place(0, leaves, leaves, h.loc, h.places), 0);
            s.spawn(p, move |_| node(rt, h, data, tmp, 0, leaves, sh));
        });
        if self.data != self.expected {
            bail!("mergesort: the result differs from the sequential sort");
        }
        Ok(())
    }
}

/// The leaves' parts: `leaves` nearly equal consecutive slices.
fn split_leaves(d: &mut [u32], leaves: usize) -> Vec<&mut [u32]> {
    let n = d.len();
    let mut out = Vec::with_capacity(leaves);
    let mut rest = d;
    for k in 0..leaves {
        let len = (k + 1) * n / leaves - k * n / leaves;
        let (a, b) = std::mem::take(&mut rest).split_at_mut(len);
        out.push(a);
        rest = b;
    }
    out
}

/// A sorter's random part (seeded by its leaf index, so every run sorts the same data).
fn fill(part: &mut [u32], leaf: usize) {
    let mut rng = fastrand::Rng::with_seed(leaf as u64 + 1);
    part.iter_mut().for_each(|x| *x = rng.u32(..));
}

/// The shape of a sort: its elements and sorters.
#[derive(Clone, Copy)]
struct Shape {
    n: usize,
    leaves: usize,
}

impl Shape {
    /// Where leaf `k`'s part starts in the whole array (as [`split_leaves`] cuts it).
    fn start(self, k: usize) -> usize {
        k * self.n / self.leaves
    }
}

/// Sorts leaves `lo..hi` held in `d` (through `tmp`): a sorter fills and sorts; a merger
/// spawns its two halves at their places, waits, and merges here.
fn node(rt: Rt<'_>, h: Hints, d: &mut [u32], tmp: &mut [u32], lo: usize, hi: usize, sh: Shape) {
    if hi - lo == 1 {
        fill(d, lo);
        kernels::leaf_sort(d);
        return;
    }
    let mid = (lo + hi) / 2;
    let cut = sh.start(mid) - sh.start(lo);
    {
        let (dl, dr) = d.split_at_mut(cut);
        let (tl, tr) = tmp.split_at_mut(cut);
        rt.nested(|s| {
            let pl = h.pick(
                Mergesort::place(lo, mid, sh.leaves, h.loc, h.places),
                (lo * 2 + 1) as u64,
            );
            let pr = h.pick(
                Mergesort::place(mid, hi, sh.leaves, h.loc, h.places),
                (mid * 2 + 1) as u64,
            );
            s.spawn(pl, move |_| node(rt, h, dl, tl, lo, mid, sh));
            s.spawn(pr, move |_| node(rt, h, dr, tr, mid, hi, sh));
        });
    }
    kernels::merge(d, tmp, cut);
}
