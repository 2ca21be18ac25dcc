//! N-Queens' fork-join front ends, written once and instantiated per runtime: binary joins
//! over a node's free columns (ours, rayon, chili, forte), a scope per node with a spawn per
//! child (ours, rayon, forte), the same down to [`CUTOFF_DEPTH`] rows (`scope-cutoff`); and
//! oneTBB's `task_group`, a program of its own (`peers/queens_tbb.cpp`).

use super::{sequential, Board, MAX_N};
use crate::experiments::drivers::program::ProcPeer;

/// The `n` lowest set bits of `x`.
#[inline(always)]
pub(super) fn lowest_bits(mut x: u32, n: u32) -> u32 {
    let mut out = 0;
    for _ in 0..n {
        let q = x & x.wrapping_neg();
        out |= q;
        x ^= q;
    }
    out
}

/// The fork-join versions, written once and instantiated per runtime (as the fork-join
/// kernels are): `$join!(cx, |cx| a, |cx| b)` forks, and `$scope!(cx, |s| body)` with
/// `$spawn!(s, |cx| work)` opens a scope and spawns into it (absent for chili).
macro_rules! join_version {
    ($m:ident, $cx:ty, $join:ident) => {
        #[allow(dead_code)]
        pub(super) mod $m {
            use super::*;

            /// Solutions below `b` whose next queen goes into one of the columns `free`.
            pub(in crate::experiments::queens) fn count(b: Board, free: u32, cx: $cx) -> u64 {
                match free.count_ones() {
                    0 => 0,
                    1 => {
                        let c = b.place(free);
                        if c.solved() {
                            1
                        } else {
                            count(c, c.free(), cx)
                        }
                    }
                    k => {
                        let lo = lowest_bits(free, k / 2);
                        let (x, y) =
                            $join!(cx, |cx| count(b, lo, cx), |cx| count(b, free ^ lo, cx));
                        x + y
                    }
                }
            }
        }
    };
}

macro_rules! join_ours {
    ($cx:expr, $a:expr, $b:expr) => {{
        let _: () = $cx;
        let (a, b) = ($a, $b);
        taskpools::forkjoin::join(move || a(()), move || b(()))
    }};
}
macro_rules! join_rayon {
    ($cx:expr, $a:expr, $b:expr) => {{
        let _: () = $cx;
        let (a, b) = ($a, $b);
        rayon::join(move || a(()), move || b(()))
    }};
}
macro_rules! join_method {
    ($cx:expr, $a:expr, $b:expr) => {
        $cx.join($a, $b)
    };
}

join_version!(join_ours_m, (), join_ours);
join_version!(join_rayon_m, (), join_rayon);
join_version!(join_chili_m, &mut chili::Scope<'_>, join_method);
join_version!(join_forte_m, &forte::Worker, join_method);

/// The scope versions: each node opens a scope and spawns one job per child; each child
/// writes its count into its own slot of the parent's array. Below `depth` more rows the
/// sequential recursion counts instead (`u32::MAX`: never, a task per node).
macro_rules! scope_version {
    ($name:ident, $scope:path) => {
        pub(super) fn $name(b: Board, depth: u32) -> u64 {
            if b.solved() {
                return 1;
            }
            if depth == 0 {
                return sequential(b).0;
            }
            let mut counts = [0u64; MAX_N as usize];
            $scope(|s| {
                let mut free = b.free();
                let mut slots = counts.iter_mut();
                while free != 0 {
                    let q = free & free.wrapping_neg();
                    free ^= q;
                    let slot = slots.next().expect("at most n children");
                    s.spawn(move |_| *slot = $name(b.place(q), depth.saturating_sub(1)));
                }
            });
            counts.iter().sum()
        }
    };
}

scope_version!(scope_ours, taskpools::forkjoin::scope);
scope_version!(scope_rayon, rayon::scope);
scope_version!(scope_forte, forte::scope);

/// The depth of the `scope-cutoff` front end: a scope per node in the first rows, the
/// sequential recursion below (n = 13: about 1,500 tasks at this depth, enough for 16
/// threads; the fixed cutoff of oneTBB's and OpenMP's guides).
pub const CUTOFF_DEPTH: u32 = 3;

/// The oneTBB program's variant for [`CUTOFF_DEPTH`].
pub(super) const TBB_CUTOFF_VARIANT: &str = "scope-cutoff-3";

/// oneTBB's `task_group` (`peers/queens_tbb.cpp`) as a program of its own, with the variant
/// it runs (`scope`, `scope-cutoff-D`).
pub(super) fn tbb_peer(variant: &'static str) -> ProcPeer {
    ProcPeer {
        name: "tbb",
        runtime: "tbb task_group",
        variant,
        exe: env!("TASKPOOLS_PEER_QUEENS_TBB"),
        install: "apt-get install libtbb-dev",
        identity: "oneTBB",
    }
}

/// Whether the oneTBB peer was built.
pub fn tbb_built() -> bool {
    tbb_peer("scope").built()
}
