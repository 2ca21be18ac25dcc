//! The five fork-join kernels (fib, tree-sum, mergesort, quicksort, matmul), written once
//! and instantiated per runtime, with the sequential leaves they share.

use super::join::{join_nil, Calls, Counting, Nil, Ours, Rayon, Seq};
use super::tree::Node;

/// Below this many elements the sorts use the standard library's sequential sort.
const SORT_CUTOFF: usize = 2048;

/// The sorts' leaf.
#[inline(never)]
fn sort_leaf(v: &mut [u32]) {
    v.sort_unstable();
}

/// A square block of a row-major matrix: `n × n` elements starting at `ptr`, rows `stride`
/// apart. Blocks handed to the two halves of a join never overlap.
#[derive(Clone, Copy)]
pub(super) struct Block {
    pub(super) ptr: *mut f64,
    pub(super) stride: usize,
    pub(super) n: usize,
}

// SAFETY: a `Block` is a view; the multiply below only ever gives concurrently running halves
// disjoint output blocks, and input blocks are only read.
unsafe impl Send for Block {}
// SAFETY: as above.
unsafe impl Sync for Block {}

impl Block {
    fn quadrant(self, r: usize, c: usize) -> Block {
        let h = self.n / 2;
        // SAFETY: the quadrant lies inside this block.
        Block {
            ptr: unsafe { self.ptr.add(r * h * self.stride + c * h) },
            stride: self.stride,
            n: h,
        }
    }
    /// # Safety
    /// In bounds, and no other thread writes this element concurrently.
    unsafe fn at(self, i: usize, k: usize) -> *mut f64 {
        // SAFETY: per the contract.
        unsafe { self.ptr.add(i * self.stride + k) }
    }
}

/// Below this size the multiply is a plain triple loop.
const MM_CUTOFF: usize = 32;

/// The multiply's leaf: C += A·B with a plain triple loop. The sequential parts of the kernels
/// are not inlined, so that every runtime's instance runs the same machine code between forks
/// (inlined, their code generation varied with the surrounding runtime's code by up to 15 %).
#[inline(never)]
fn matmul_leaf(c: Block, a: Block, b: Block) {
    let n = c.n;
    for i in 0..n {
        for k in 0..n {
            // SAFETY: in bounds; this call owns block `c`.
            let aik = unsafe { *a.at(i, k) };
            for x in 0..n {
                // SAFETY: as above.
                unsafe { *c.at(i, x) += aik * *b.at(k, x) };
            }
        }
    }
}

/// Merges the sorted halves `v[..mid]` and `v[mid..]` into `buf`, then copies back.
#[inline(never)]
fn merge(v: &mut [u32], buf: &mut [u32], mid: usize) {
    let (mut i, mut k) = (0, mid);
    for out in buf.iter_mut() {
        if k >= v.len() || (i < mid && v[i] <= v[k]) {
            *out = v[i];
            i += 1;
        } else {
            *out = v[k];
            k += 1;
        }
    }
    v.copy_from_slice(buf);
}

/// Partitions `v` (longer than the cutoff) around a median-of-three pivot (Lomuto) and returns
/// the pivot's final index.
#[inline(never)]
fn partition(v: &mut [u32]) -> usize {
    let (a, b, c) = (v[0], v[v.len() / 2], v[v.len() - 1]);
    let pivot = a.max(b).min(a.min(b).max(c));
    let last = v.len() - 1;
    let pi = if pivot == a {
        0
    } else if pivot == b {
        v.len() / 2
    } else {
        last
    };
    v.swap(pi, last);
    let mut store = 0;
    for i in 0..last {
        if v[i] < pivot {
            v.swap(i, store);
            store += 1;
        }
    }
    v.swap(store, last);
    store
}

/// The five kernels, written once and instantiated per runtime: module `$m` holds them with
/// `$cx` as the context each passes down its recursion, and `$join!(cx, |cx| a, |cx| b)` as
/// the fork. Runtimes whose `join` takes plain closures pass [`Nil`]; chili's join passes its
/// `&mut Scope` and forte's its `&Worker`, as their docs show. The kernels' sequential parts
/// (leaf loops, merge, partition) are shared functions, so every runtime runs the same code
/// between its forks.
macro_rules! kernels {
    ($m:ident, $cx:ty, $join:ident) => {
        #[allow(dead_code)]
        pub(super) mod $m {
            use super::*;

            pub(crate) fn fib(n: u64, cx: $cx) -> u64 {
                if n < 2 {
                    return n;
                }
                let (a, b) = $join!(cx, |cx| fib(n - 1, cx), |cx| fib(n - 2, cx));
                a + b
            }

            pub(crate) fn tree_sum(n: &Node, cx: $cx) -> u64 {
                match &n.children {
                    None => n.value,
                    Some(c) => {
                        let (a, b) = $join!(cx, |cx| tree_sum(&c.0, cx), |cx| tree_sum(&c.1, cx));
                        n.value.wrapping_add(a).wrapping_add(b)
                    }
                }
            }

            pub(crate) fn mergesort(v: &mut [u32], buf: &mut [u32], cx: $cx) {
                if v.len() <= SORT_CUTOFF {
                    sort_leaf(v);
                    return;
                }
                let mid = v.len() / 2;
                {
                    let (l, r) = v.split_at_mut(mid);
                    let (bl, br) = buf.split_at_mut(mid);
                    $join!(cx, |cx| mergesort(l, bl, cx), |cx| mergesort(r, br, cx));
                }
                merge(v, buf, mid);
            }

            pub(crate) fn quicksort(v: &mut [u32], cx: $cx) {
                if v.len() <= SORT_CUTOFF {
                    sort_leaf(v);
                    return;
                }
                let store = partition(v);
                let (l, r) = v.split_at_mut(store);
                $join!(cx, |cx| quicksort(l, cx), |cx| quicksort(&mut r[1..], cx));
            }

            /// C += A·B with the 8-way block decomposition: the four products into distinct
            /// quadrants of C run in parallel, then the other four.
            pub(crate) fn matmul(c: Block, a: Block, b: Block, cx: $cx) {
                if c.n <= MM_CUTOFF {
                    matmul_leaf(c, a, b);
                    return;
                }
                let q = |m: Block, r, s| m.quadrant(r, s);
                for t in 0..2 {
                    // t = 0: C_rs += A_r0 · B_0s; t = 1: C_rs += A_r1 · B_1s
                    $join!(
                        cx,
                        |cx| $join!(
                            cx,
                            |cx| matmul(q(c, 0, 0), q(a, 0, t), q(b, t, 0), cx),
                            |cx| matmul(q(c, 0, 1), q(a, 0, t), q(b, t, 1), cx)
                        ),
                        |cx| $join!(
                            cx,
                            |cx| matmul(q(c, 1, 0), q(a, 1, t), q(b, t, 0), cx),
                            |cx| matmul(q(c, 1, 1), q(a, 1, t), q(b, t, 1), cx)
                        )
                    );
                }
            }
        }
    };
}

macro_rules! join_seq {
    ($cx:expr, $a:expr, $b:expr) => {{
        let _: Nil = $cx;
        join_nil::<Seq, _, _, _, _>($a, $b)
    }};
}
macro_rules! join_calls {
    ($cx:expr, $a:expr, $b:expr) => {{
        let _: Nil = $cx;
        join_nil::<Calls, _, _, _, _>($a, $b)
    }};
}
macro_rules! join_counting {
    ($cx:expr, $a:expr, $b:expr) => {{
        let _: Nil = $cx;
        join_nil::<Counting, _, _, _, _>($a, $b)
    }};
}
macro_rules! join_ours {
    ($cx:expr, $a:expr, $b:expr) => {{
        let _: Nil = $cx;
        join_nil::<Ours, _, _, _, _>($a, $b)
    }};
}
macro_rules! join_rayon {
    ($cx:expr, $a:expr, $b:expr) => {{
        let _: Nil = $cx;
        join_nil::<Rayon, _, _, _, _>($a, $b)
    }};
}
/// chili's and forte's `join` are methods of the context they pass down.
macro_rules! join_method {
    ($cx:expr, $a:expr, $b:expr) => {
        $cx.join($a, $b)
    };
}

kernels!(k_seq, Nil, join_seq);
kernels!(k_calls, Nil, join_calls);
kernels!(k_counting, Nil, join_counting);
kernels!(k_ours, Nil, join_ours);
kernels!(k_rayon, Nil, join_rayon);
kernels!(k_chili, &mut chili::Scope<'_>, join_method);
kernels!(k_forte, &forte::Worker, join_method);

pub(super) fn fib_joins(n: u64) -> u64 {
    let (mut a, mut b) = (0u64, 0u64); // joins for n-2, n-1
    for _ in 2..=n {
        let c = a + b + 1;
        a = b;
        b = c;
    }
    if n < 2 {
        0
    } else {
        b
    }
}
