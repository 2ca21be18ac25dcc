//! `taskpools places`: the locality benchmarks of LASSI (seeds 000/001) on a runtime with
//! places, against the same programs on the runtime without places and on rayon.
//!
//! - **Cache Stress Test**: two randomly initialised arrays (8 MB each); 8 tasks per worker,
//!   half of them sum and multiply every element of array 0 `passes` times, half of
//!   array 1. *best*: array 0's tasks at place 0, array 1's at place 1; *worst*: each place
//!   gets half of each array's tasks; *ignorant*: no hints; *random*: a random place per
//!   task.
//! - **Merge sort** (4 194 304 integers in the talk): 8192 sorters per worker (each fills
//!   its part randomly and sorts it), then mergers up a binary tree. *best*: sorters of the
//!   first half at place 0, of the second at place 1, each merger at its left
//!   predecessor's place; *worst*: each merger at the other place. *ignorant* spawns
//!   without hints; *random* hints a random place.
//! - **Block matrix multiply** (2048² in the talk): C = A B by 8 products of quadrants
//!   (into C and a temporary), then 4 additions. *best*: everything for C's quadrants 0 and 3
//!   at place 0, for 1 and 2 at place 1; *worst*: the additions at the other place than
//!   their products.
//!
//! The Cache Stress Test also runs as a task-pool working phase whose root puts the leaves
//! with hints (`Ctx::put_at`), against the same phase without hints.
//!
//! Every variant's result is checked against a sequential run's. Then the talk's claims
//! and future work: the shared deque per place against one per worker (`1x2` vs `2x1`), and
//! the steal policies on the random Cache Stress variant and on a chain of tasks (where the
//! adaptive policy's parking shows in CPU time).

use std::cell::RefCell;
use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde::Serialize;
use taskpools::dataflow::{TileMut, TileRef};
use taskpools::places::{PlaceId, PlacePolicy, Places, Unhinted};
use taskpools::runtime::trace::Trace;
use taskpools::Runtime;

use super::suite::kernels;
use crate::report::Progress;

/// The benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Bench {
    CacheStress,
    Mergesort,
    Matmul,
}

impl Bench {
    pub const ALL: [Bench; 3] = [Bench::CacheStress, Bench::Mergesort, Bench::Matmul];
    pub fn name(self) -> &'static str {
        match self {
            Bench::CacheStress => "cache-stress",
            Bench::Mergesort => "mergesort",
            Bench::Matmul => "matmul",
        }
    }
    pub fn from_name(s: &str) -> Result<Bench> {
        Bench::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| {
                anyhow::anyhow!("unknown benchmark `{s}`; known: cache-stress, mergesort, matmul")
            })
    }
}

/// Where tasks are hinted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Locality {
    Best,
    Worst,
    Ignorant,
    Random,
}

impl Locality {
    pub const ALL: [Locality; 4] = [
        Locality::Best,
        Locality::Worst,
        Locality::Ignorant,
        Locality::Random,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Locality::Best => "best",
            Locality::Worst => "worst",
            Locality::Ignorant => "ignorant",
            Locality::Random => "random",
        }
    }
}

/// Parameters of a run.
#[derive(Clone, Debug)]
pub struct Params {
    /// The places description (`cores` by default: one place per core).
    pub places: String,
    pub benches: Vec<Bench>,
    pub reps: usize,
    /// Cache Stress: bytes per array, passes per task, tasks per worker.
    pub cache_bytes: usize,
    pub passes: usize,
    pub tasks_per_worker: usize,
    /// Merge sort: elements, sorters per worker.
    pub sort_n: usize,
    pub sorters_per_worker: usize,
    /// Matrix multiply: side, leaf side.
    pub mat_n: usize,
    pub mat_leaf: usize,
    /// Run the claim and policy sections.
    pub policies: bool,
    /// Record a schedule trace of every configuration on our runtimes in an extra
    /// repetition, left out of the medians: Chrome trace-event JSON to this file, a Gantt
    /// chart per configuration into the folder `<file>.gantt/`. Our runtimes then record
    /// during the timed repetitions too (the table says so).
    pub trace: Option<std::path::PathBuf>,
}

/// Trace buffer per worker, in events.
const TRACE_EVENTS: usize = 1 << 20;

impl Params {
    pub const MAX_CACHE_BYTES: usize = 1 << 30;
    pub const MAX_SORT: usize = 1 << 28;
    pub const MAX_MAT: usize = 8192;

    /// Refuses what cannot run, naming the option.
    pub fn check(&self) -> Result<Places> {
        let places = Places::parse(&self.places)?;
        if places.len() < 2 {
            bail!(
                "--places {}: the locality benchmarks need at least 2 places (this gives {}); try `2x1`",
                self.places,
                places.len()
            );
        }
        if self.reps == 0 {
            bail!("--reps must be at least 1");
        }
        if !(4096..=Self::MAX_CACHE_BYTES).contains(&self.cache_bytes) {
            bail!("--cache-mb: each array must be 4 KiB to 1 GiB");
        }
        if self.passes == 0
            || self.passes > 10_000
            || self.tasks_per_worker == 0
            || self.tasks_per_worker > 1024
        {
            bail!("--passes must be 1 to 10000 and --tasks-per-worker 1 to 1024");
        }
        let leaves = places.workers() * self.sorters_per_worker;
        if self.sort_n > Self::MAX_SORT || self.sorters_per_worker == 0 || leaves > self.sort_n {
            bail!(
                "--sort-n {} with --sorters-per-worker {}: need 1 to {} elements and at least one element per sorter ({} sorters)",
                self.sort_n, self.sorters_per_worker, Self::MAX_SORT, leaves
            );
        }
        let ok = self.mat_leaf >= 4
            && self.mat_n <= Self::MAX_MAT
            && self.mat_n >= self.mat_leaf
            && self.mat_n % self.mat_leaf == 0
            && (self.mat_n / self.mat_leaf).is_power_of_two();
        if !ok {
            bail!(
                "--mat-n {} --mat-leaf {}: the side must be leaf * 2^k, at most {}, leaf at least 4",
                self.mat_n, self.mat_leaf, Self::MAX_MAT
            );
        }
        Ok(places)
    }
}

/// One row of the table.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    pub section: String,
    pub bench: String,
    /// `places 2x1`, `no places`, `rayon`, or the policy's name.
    pub config: String,
    pub locality: String,
    pub threads: usize,
    pub reps: usize,
    pub median_ms: f64,
    /// Median time ÷ the best-locality median on places (same benchmark), or ÷ the
    /// reference row of the section.
    pub vs_ref: f64,
    /// Summed over workers, per repetition (medians).
    pub local_tasks: u64,
    pub remote_tasks: u64,
    pub place_steals: u64,
    pub declined: u64,
    /// CPU time of the runtime's worker threads ÷ wall time (policies section), else NaN.
    pub cpu_per_wall: f64,
}

// ------------------------------------------------------------------ spawning, ours or rayon's

/// A scope of either runtime: hints go to our places, rayon ignores them.
#[derive(Clone, Copy)]
enum Sc<'a, 's> {
    Ours(&'a taskpools::forkjoin::Scope<'s>),
    Rayon(&'a rayon::Scope<'s>),
}

impl<'s> Sc<'_, 's> {
    fn spawn(self, place: Option<usize>, f: impl for<'b> FnOnce(Sc<'b, 's>) + Send + 's) {
        match (self, place) {
            (Sc::Ours(s), Some(p)) => s
                .spawn_at(PlaceId(p), move |s| f(Sc::Ours(s)))
                .expect("places were checked"),
            (Sc::Ours(s), None) => s.spawn(move |s| f(Sc::Ours(s))),
            (Sc::Rayon(s), _) => s.spawn(move |s| f(Sc::Rayon(s))),
        }
    }
}

/// Where a program runs.
#[derive(Clone, Copy)]
enum Rt<'a> {
    Ours(&'a Runtime),
    Rayon(&'a rayon::ThreadPool),
}

impl Rt<'_> {
    fn scope<'s, R: Send>(self, f: impl for<'b> FnOnce(Sc<'b, 's>) -> R + Send) -> R {
        match self {
            Rt::Ours(rt) => rt.scope(|s| f(Sc::Ours(s))),
            Rt::Rayon(p) => p.scope(|s| f(Sc::Rayon(s))),
        }
    }
    /// A nested scope inside a task.
    fn nested<'s, R: Send>(self, f: impl for<'b> FnOnce(Sc<'b, 's>) -> R + Send) -> R {
        match self {
            Rt::Ours(_) => taskpools::forkjoin::scope(|s| f(Sc::Ours(s))),
            Rt::Rayon(_) => rayon::scope(|s| f(Sc::Rayon(s))),
        }
    }
}

/// Places a hint: `None` for ignorant programs and runtimes without places.
#[derive(Clone, Copy)]
struct Hints {
    places: usize,
    loc: Locality,
    on: bool,
}

impl Hints {
    fn pick(self, wanted: usize, seed: u64) -> Option<usize> {
        if !self.on {
            return None;
        }
        match self.loc {
            Locality::Ignorant => None,
            Locality::Random => Some(mix(seed) as usize % self.places),
            _ => Some(wanted % self.places),
        }
    }
}

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    x = (x ^ (x >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

// ------------------------------------------------------------------ Cache Stress Test

struct CacheStress {
    arrays: [Vec<u32>; 2],
    passes: usize,
    tasks: usize,
    expected: [u64; 2],
}

/// One task's work: `passes` times, add and multiply every element of the array.
#[inline(never)]
fn stress(a: &[u32], passes: usize) -> u64 {
    let (mut s, mut p) = (0u32, 1u32);
    for _ in 0..passes {
        for &x in a {
            s = s.wrapping_add(x);
            p = p.wrapping_mul(x | 1);
        }
    }
    ((s as u64) << 32) | p as u64
}

impl CacheStress {
    fn new(bytes: usize, passes: usize, tasks: usize) -> Self {
        let mut rng = fastrand::Rng::with_seed(7);
        let n = bytes / 4;
        let arrays = [
            (0..n).map(|_| rng.u32(..)).collect::<Vec<_>>(),
            (0..n).map(|_| rng.u32(..)).collect::<Vec<_>>(),
        ];
        let expected = [stress(&arrays[0], passes), stress(&arrays[1], passes)];
        CacheStress {
            arrays,
            passes,
            tasks,
            expected,
        }
    }

    /// Task `i`'s array and wanted place.
    fn assign(&self, i: usize, loc: Locality, places: usize) -> (usize, usize) {
        match loc {
            // Array a's tasks at place a (places beyond 2 split each half).
            Locality::Best => {
                let a = i % 2;
                let half = (places / 2).max(1);
                (a, a * half + (i / 2) % half)
            }
            // Every place gets half of each array's tasks.
            Locality::Worst => (i / places % 2, i % places),
            _ => (i % 2, 0),
        }
    }

    fn run(&self, rt: Rt<'_>, h: Hints) -> Result<()> {
        let bad = std::sync::atomic::AtomicUsize::new(0);
        rt.scope(|s| {
            for i in 0..self.tasks {
                let (a, wanted) = self.assign(i, h.loc, h.places);
                let (arr, passes, want, bad) =
                    (&self.arrays[a][..], self.passes, self.expected[a], &bad);
                s.spawn(h.pick(wanted, i as u64), move |_| {
                    if black_box(stress(arr, passes)) != want {
                        bad.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                });
            }
        });
        if bad.into_inner() != 0 {
            bail!("cache stress: a task computed a wrong result");
        }
        Ok(())
    }
}

// ------------------------------------------------------------------ Cache Stress as a working phase

/// The Cache Stress Test as a task-pool working phase: one root task puts the leaves, with
/// [`taskpools::Ctx::put_at`] where the variant hints a place.
enum StressJob<'a> {
    Root(&'a CacheStress, Hints),
    Leaf {
        arr: &'a [u32],
        passes: usize,
        want: u64,
        place: Option<usize>,
    },
}

/// Per worker: hinted leaves that ran at their place, away from it, and wrong results.
#[derive(Default)]
struct LeafCounts {
    local: u64,
    remote: u64,
    bad: u64,
}

/// The place of each runtime worker, read by the leaves.
struct PhaseEnv<'a> {
    worker_place: &'a [usize],
}

impl<'a> taskpools::Task<(LeafCounts, &'a PhaseEnv<'a>)> for StressJob<'a> {
    fn run(self, ctx: &mut taskpools::Ctx<'_, Self, (LeafCounts, &'a PhaseEnv<'a>)>) {
        match self {
            StressJob::Root(cs, h) => {
                for i in 0..cs.tasks {
                    let (a, wanted) = cs.assign(i, h.loc, h.places);
                    let place = h.pick(wanted, i as u64);
                    let leaf = StressJob::Leaf {
                        arr: &cs.arrays[a][..],
                        passes: cs.passes,
                        want: cs.expected[a],
                        place,
                    };
                    match place {
                        Some(p) => ctx.put_at(PlaceId(p), leaf).expect("places were checked"),
                        None => ctx.put(leaf),
                    }
                }
            }
            StressJob::Leaf {
                arr,
                passes,
                want,
                place,
            } => {
                let ok = black_box(stress(arr, passes)) == want;
                let me = ctx.worker();
                let (counts, env) = ctx.local();
                counts.bad += u64::from(!ok);
                if let Some(p) = place {
                    if env.worker_place[me] == p {
                        counts.local += 1;
                    } else {
                        counts.remote += 1;
                    }
                }
            }
        }
    }
}

impl CacheStress {
    /// One run as a working phase on `rt`: with hints (`run_hinted`) or as a plain phase.
    /// Adds the leaves' placement to `counts` (local, remote).
    fn run_phase(
        &self,
        rt: &Runtime,
        h: Hints,
        hinted: bool,
        counts: &std::cell::Cell<[u64; 4]>,
    ) -> Result<()> {
        let worker_place: Vec<usize> = rt.worker_places().iter().map(|p| p.0).collect();
        let env = PhaseEnv {
            worker_place: &worker_place,
        };
        let b = taskpools::Builder::new().threads(rt.threads()).runtime(rt);
        let init = |_| (LeafCounts::default(), &env);
        let root = [StressJob::Root(self, h)];
        let (_, states) = if hinted {
            b.run_hinted_with(init, root)?
        } else {
            b.run_with(init, root)?
        };
        let mut c = counts.get();
        for (s, _) in &states {
            if s.bad != 0 {
                bail!("cache stress (phase): a task computed a wrong result");
            }
            c[0] += s.local;
            c[1] += s.remote;
        }
        counts.set(c);
        Ok(())
    }
}

// ------------------------------------------------------------------ merge sort

struct Mergesort {
    n: usize,
    leaves: usize,
    data: Vec<u32>,
    tmp: Vec<u32>,
    expected: Vec<u32>,
}

impl Mergesort {
    fn new(n: usize, leaves: usize) -> Self {
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

    fn run(&mut self, rt: Rt<'_>, h: Hints) -> Result<()> {
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

// ------------------------------------------------------------------ block matrix multiply

struct Matmul {
    n: usize,
    leaf: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    expected: Vec<f64>,
}

/// Quadrant q of C: its place under best locality (0 and 3 at place 0, 1 and 2 at place 1).
const QUADRANT_PLACE: [usize; 4] = [0, 1, 1, 0];

impl Matmul {
    fn new(n: usize, leaf: usize) -> Self {
        let mut rng = fastrand::Rng::with_seed(11);
        let a: Vec<f64> = (0..n * n).map(|_| rng.f64() - 0.5).collect();
        let b: Vec<f64> = (0..n * n).map(|_| rng.f64() - 0.5).collect();
        let mut m = Matmul {
            n,
            leaf,
            a,
            b,
            c: vec![0.0; n * n],
            expected: Vec::new(),
        };
        let mut c = vec![0.0; n * n];
        seq_mul(
            TileRef::from_slice(&m.a, n, n),
            TileRef::from_slice(&m.b, n, n),
            TileMut::from_slice(&mut c, n, n),
            leaf,
        );
        m.expected = c;
        m
    }

    fn run(&mut self, rt: Rt<'_>, h: Hints) -> Result<()> {
        let (n, leaf) = (self.n, self.leaf);
        let a = TileRef::from_slice(&self.a, n, n);
        let b = TileRef::from_slice(&self.b, n, n);
        let c = TileMut::from_slice(&mut self.c, n, n);
        rt.scope(|s| {
            s.spawn(h.pick(0, 0), move |_| {
                par_mul(rt, h, a, b, c, leaf, None, 1)
            })
        });
        if self.c != self.expected {
            bail!("matmul: the result differs from the sequential product");
        }
        Ok(())
    }
}

/// The products of a level: (C quadrant, A quadrant, B quadrant, into the temporary?):
/// `C_q = A_q0 B_0q + A_q1 B_1q`, the second product into the temporary.
const PRODUCTS: [(usize, usize, usize, bool); 8] = [
    (0, 0, 0, false),
    (0, 1, 2, true),
    (1, 0, 1, false),
    (1, 1, 3, true),
    (2, 2, 0, false),
    (2, 3, 2, true),
    (3, 2, 1, false),
    (3, 3, 3, true),
];

/// `C := A B` at a leaf.
fn leaf_mul(a: TileRef<'_, f64>, b: TileRef<'_, f64>, mut c: TileMut<'_, f64>) {
    for r in 0..c.rows() {
        c.row_mut(r).fill(0.0);
    }
    kernels::gemm_nn_add(a, b, c);
}

/// `C += T`.
fn add(mut c: TileMut<'_, f64>, t: TileRef<'_, f64>) {
    for r in 0..c.rows() {
        for (x, y) in c.row_mut(r).iter_mut().zip(t.row(r)) {
            *x += y;
        }
    }
}

fn seq_mul(a: TileRef<'_, f64>, b: TileRef<'_, f64>, c: TileMut<'_, f64>, leaf: usize) {
    let m = c.rows();
    if m <= leaf {
        return leaf_mul(a, b, c);
    }
    let h = m / 2;
    let mut t = vec![0.0; m * m];
    let (qa, qb) = (a.quadrants(h, h), b.quadrants(h, h));
    let mut qc = c.quadrants(h, h);
    let mut qt = TileMut::from_slice(&mut t, m, m).quadrants(h, h);
    for (ci, ai, bi, into_t) in PRODUCTS {
        let dst = if into_t {
            qt[ci].reborrow()
        } else {
            qc[ci].reborrow()
        };
        seq_mul(qa[ai], qb[bi], dst, leaf);
    }
    for q in 0..4 {
        add(qc[q].reborrow(), qt[q].as_ref());
    }
}

/// `C := A B`, the 8 products in parallel, then the 4 additions. `place` is the place of
/// this product's C quadrant at the top level (`None` above it); `salt` varies the random
/// variant's draws.
#[allow(clippy::too_many_arguments)]
fn par_mul(
    rt: Rt<'_>,
    h: Hints,
    a: TileRef<'_, f64>,
    b: TileRef<'_, f64>,
    c: TileMut<'_, f64>,
    leaf: usize,
    place: Option<usize>,
    salt: u64,
) {
    let m = c.rows();
    if m <= leaf {
        return leaf_mul(a, b, c);
    }
    let hh = m / 2;
    let mut t = vec![0.0; m * m];
    let (qa, qb) = (a.quadrants(hh, hh), b.quadrants(hh, hh));
    let mut qc = c.quadrants(hh, hh);
    let mut qt = TileMut::from_slice(&mut t, m, m).quadrants(hh, hh);
    // Where quadrant q's products run: at the top level its best place, below it the place
    // of the enclosing quadrant.
    let mult_place = |q: usize| place.unwrap_or(QUADRANT_PLACE[q] % h.places);
    let add_place = |q: usize| match h.loc {
        Locality::Worst => (mult_place(q) + 1) % h.places,
        _ => mult_place(q),
    };
    {
        let [c0, c1, c2, c3] = &mut qc;
        let [t0, t1, t2, t3] = &mut qt;
        // (destination, C quadrant, A quadrant, B quadrant): C_q = A_q0 B_0q + A_q1 B_1q.
        let products = [
            (c0, 0, 0, 0),
            (t0, 0, 1, 2),
            (c1, 1, 0, 1),
            (t1, 1, 1, 3),
            (c2, 2, 2, 0),
            (t2, 2, 3, 2),
            (c3, 3, 2, 1),
            (t3, 3, 3, 3),
        ];
        rt.nested(|s| {
            for (k, (dst, ci, ai, bi)) in products.into_iter().enumerate() {
                let dst = dst.reborrow();
                let (x, y) = (qa[ai], qb[bi]);
                let p = mult_place(ci);
                let salt = salt.wrapping_mul(16) + k as u64;
                s.spawn(h.pick(p, salt), move |_| {
                    par_mul(rt, h, x, y, dst, leaf, Some(p), salt)
                });
            }
        });
    }
    rt.nested(|s| {
        for (q, (cq, tq)) in qc.into_iter().zip(qt).enumerate() {
            let salt = salt.wrapping_mul(16) + 8 + q as u64;
            s.spawn(h.pick(add_place(q), salt), move |_| add(cq, tq.into_ref()));
        }
    });
}

// ------------------------------------------------------------------ the chain (policies)

/// `len` tasks, each spinning `work` and then spawning the next at a random place: one task
/// is ready at a time, so every other worker looks for work in vain (where the adaptive
/// policy parks it sooner).
fn chain(rt: &Runtime, len: usize, work: Duration) {
    fn link<'s>(s: &taskpools::forkjoin::Scope<'s>, left: usize, places: usize, work: Duration) {
        let t = Instant::now();
        while t.elapsed() < work {
            std::hint::spin_loop();
        }
        if left > 0 {
            let p = mix(left as u64) as usize % places;
            s.spawn_at(PlaceId(p), move |s| link(s, left - 1, places, work))
                .expect("places were checked");
        }
    }
    let places = rt.place_count();
    rt.scope(|s| link(s, len, places, work));
}

// ------------------------------------------------------------------ the runner

/// CPU time so far of this process's threads whose name starts with `prefix` (Linux:
/// `/proc/self/task/*/schedstat`, nanoseconds on the CPU); `None` where that cannot be read.
fn threads_cpu(prefix: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut seen = false;
    for e in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if !comm.trim().starts_with(prefix) {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("schedstat")).ok()?;
        let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
        total += Duration::from_nanos(ns);
        seen = true;
    }
    seen.then_some(total)
}

/// Place counters summed over the workers.
fn place_counts(rt: Option<&Runtime>) -> [u64; 4] {
    rt.map_or([0; 4], |rt| {
        rt.worker_counters().iter().fold([0; 4], |a, c| {
            [
                a[0] + c.place_local,
                a[1] + c.place_remote,
                a[2] + c.place_steals,
                a[3] + c.declined,
            ]
        })
    })
}

fn median_f(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn median_u(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// One configuration of a section: its name, locality, and how to run one repetition.
struct Config<'a> {
    section: &'static str,
    bench: &'static str,
    name: String,
    loc: Locality,
    rt: Option<&'a Runtime>,
    /// The name prefix of the runtime's worker threads, to time their CPU (policies).
    cpu_of: Option<String>,
    run: Box<dyn FnMut() -> Result<()> + 'a>,
    is_ref: bool,
    /// Counts kept by the program itself (cumulative), instead of the runtime's counters.
    counts: Option<&'a std::cell::Cell<[u64; 4]>>,
}

impl Config<'_> {
    fn counts(&self) -> [u64; 4] {
        match self.counts {
            Some(c) => c.get(),
            None => place_counts(self.rt),
        }
    }
}

struct Samples {
    ms: Vec<f64>,
    counts: [Vec<u64>; 4],
    cpu: Vec<f64>,
}

/// Runs every configuration `reps` times, interleaved (each repetition starts at a
/// different configuration), and makes the records.
fn measure(
    mut cfgs: Vec<Config<'_>>,
    reps: usize,
    threads: usize,
    progress: &Progress,
    traces: Option<&mut Vec<(String, Trace)>>,
) -> Result<Vec<Record>> {
    let n = cfgs.len();
    if let Some(traces) = traces {
        // One traced repetition of each configuration on our runtimes, not timed.
        for c in cfgs.iter_mut() {
            let Some(rt) = c.rt else { continue };
            progress.set_message(format!("tracing {} {} {}", c.bench, c.name, c.loc.name()));
            let _ = rt.take_trace()?;
            (c.run)()?;
            if let Some(t) = rt.take_trace()? {
                traces.push((format!("{} / {} / {}", c.bench, c.name, c.loc.name()), t));
            }
        }
    }
    let mut samples: Vec<Samples> = (0..n)
        .map(|_| Samples {
            ms: Vec::new(),
            counts: Default::default(),
            cpu: Vec::new(),
        })
        .collect();
    for rep in 0..reps {
        for k in 0..n {
            let i = (rep + k) % n;
            let c = &mut cfgs[i];
            progress.set_message(format!("{} {} {}", c.bench, c.name, c.loc.name()));
            let before = c.counts();
            let cpu0 = c.cpu_of.as_deref().and_then(threads_cpu);
            let t = Instant::now();
            (c.run)()?;
            let wall = t.elapsed();
            let cpu = match (cpu0, c.cpu_of.as_deref().and_then(threads_cpu)) {
                (Some(a), Some(b)) => (b - a).as_secs_f64(),
                _ => f64::NAN,
            };
            let after = c.counts();
            // With --trace every runtime records: drop what a timed run recorded, outside
            // the timing, so that the buffers do not fill.
            if let Some(rt) = c.rt {
                let _ = rt.take_trace()?;
            }
            let s = &mut samples[i];
            s.ms.push(wall.as_secs_f64() * 1e3);
            s.cpu.push(cpu / wall.as_secs_f64());
            for j in 0..4 {
                s.counts[j].push(after[j] - before[j]);
            }
            progress.inc();
        }
    }
    let meds: Vec<f64> = samples.iter_mut().map(|s| median_f(&mut s.ms)).collect();
    let reference = cfgs
        .iter()
        .position(|c| c.is_ref)
        .map_or(f64::NAN, |i| meds[i]);
    Ok(cfgs
        .iter()
        .zip(samples.iter_mut())
        .zip(&meds)
        .map(|((c, s), &m)| Record {
            section: c.section.to_string(),
            bench: c.bench.to_string(),
            config: c.name.clone(),
            locality: c.loc.name().to_string(),
            threads,
            reps,
            median_ms: m,
            vs_ref: m / reference,
            local_tasks: median_u(&mut s.counts[0]),
            remote_tasks: median_u(&mut s.counts[1]),
            place_steals: median_u(&mut s.counts[2]),
            declined: median_u(&mut s.counts[3]),
            cpu_per_wall: if c.cpu_of.is_some() {
                median_f(&mut s.cpu)
            } else {
                f64::NAN
            },
        })
        .collect())
}

/// A program of section 1, any locality, on any runtime.
fn program_run(
    b: Bench,
    progs: &(CacheStress, RefCell<Mergesort>, RefCell<Matmul>),
    rt: Rt<'_>,
    h: Hints,
) -> Result<()> {
    match b {
        Bench::CacheStress => progs.0.run(rt, h),
        Bench::Mergesort => progs.1.borrow_mut().run(rt, h),
        Bench::Matmul => progs.2.borrow_mut().run(rt, h),
    }
}

/// Builds the runtimes and runs the sections.
pub fn run(p: &Params, progress: &Progress) -> Result<Vec<Record>> {
    let places = p.check()?;
    let threads = places.workers();
    let np = places.len();
    let spec = places.spec().to_string();
    let trace_cap = p.trace.as_ref().map(|_| TRACE_EVENTS);
    let traced = |b: taskpools::RuntimeBuilder| match trace_cap {
        Some(cap) => b.trace(cap),
        None => b,
    };
    let build = |pl: Places, policy: PlacePolicy| -> Result<Runtime> {
        Ok(traced(Runtime::builder().places(pl).place_policy(policy).pin(true)).build()?)
    };
    let on_places = build(places.clone(), PlacePolicy::default())?;
    let plain = traced(Runtime::builder().threads(threads).pin(true)).build()?;
    let mut traces: Option<Vec<(String, Trace)>> = p.trace.as_ref().map(|_| Vec::new());
    let pin = super::pinning::pinner(true);
    let rayon = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .start_handler(pin)
        .build()?;

    progress.set_message("preparing the inputs and the sequential results".into());
    let progs = (
        CacheStress::new(p.cache_bytes, p.passes, threads * p.tasks_per_worker),
        RefCell::new(Mergesort::new(p.sort_n, threads * p.sorters_per_worker)),
        RefCell::new(Matmul::new(p.mat_n, p.mat_leaf)),
    );
    let progs = &progs;
    let mut total = p.benches.len() * 6 * p.reps;
    if p.benches.contains(&Bench::CacheStress) {
        total += 6 * p.reps;
    }
    if p.policies {
        total += (3 * 5 + 4 + 4) * p.reps;
    }
    progress.set_length(total as u64);
    let mut records = Vec::new();

    // Section 1: the four locality variants on places, and the ignorant program on the
    // runtime without places and on rayon (where hints mean nothing).
    for &b in &p.benches {
        let bench = b.name();
        let mut cfgs: Vec<Config<'_>> = Vec::new();
        for loc in Locality::ALL {
            let h = Hints {
                places: np,
                loc,
                on: true,
            };
            let rt = Rt::Ours(&on_places);
            cfgs.push(Config {
                section: "locality",
                bench,
                name: format!("places {spec}"),
                loc,
                rt: Some(&on_places),
                cpu_of: None,
                run: Box::new(move || program_run(b, progs, rt, h)),
                is_ref: loc == Locality::Best,
                counts: None,
            });
        }
        let off = Hints {
            places: np,
            loc: Locality::Ignorant,
            on: false,
        };
        for (name, rt, ours) in [
            ("no places", Rt::Ours(&plain), Some(&plain)),
            ("rayon", Rt::Rayon(&rayon), None),
        ] {
            cfgs.push(Config {
                section: "locality",
                bench,
                name: name.to_string(),
                loc: Locality::Ignorant,
                rt: ours,
                cpu_of: None,
                run: Box::new(move || program_run(b, progs, rt, off)),
                is_ref: false,
                counts: None,
            });
        }
        records.extend(measure(cfgs, p.reps, threads, progress, traces.as_mut())?);
    }
    // Section 1b: the Cache Stress Test as a task-pool working phase, its leaves put with
    // hints (`Ctx::put_at`), against the plain phase on the same runtime and on the runtime
    // without places.
    if p.benches.contains(&Bench::CacheStress) {
        let counts: Vec<std::cell::Cell<[u64; 4]>> =
            (0..6).map(|_| std::cell::Cell::new([0; 4])).collect();
        let mut cfgs: Vec<Config<'_>> = Vec::new();
        let cs = &progs.0;
        for (k, loc) in Locality::ALL.into_iter().enumerate() {
            let h = Hints {
                places: np,
                loc,
                on: true,
            };
            let (rt, c) = (&on_places, &counts[k]);
            cfgs.push(Config {
                section: "phase",
                bench: "cache-stress",
                name: format!("places {spec}, hinted phase"),
                loc,
                rt: Some(rt),
                cpu_of: None,
                run: Box::new(move || cs.run_phase(rt, h, true, c)),
                is_ref: loc == Locality::Best,
                counts: Some(c),
            });
        }
        let off = Hints {
            places: np,
            loc: Locality::Ignorant,
            on: false,
        };
        for (k, name, rt) in [
            (4, format!("places {spec}, plain phase"), &on_places),
            (5, "no places, plain phase".to_string(), &plain),
        ] {
            let c = &counts[k];
            cfgs.push(Config {
                section: "phase",
                bench: "cache-stress",
                name,
                loc: Locality::Ignorant,
                rt: Some(rt),
                cpu_of: None,
                run: Box::new(move || cs.run_phase(rt, off, false, c)),
                is_ref: false,
                counts: Some(c),
            });
        }
        records.extend(measure(cfgs, p.reps, threads, progress, traces.as_mut())?);
    }
    if !p.policies {
        write_traces(p, traces)?;
        return Ok(records);
    }

    // Section 2: the talk's claims. A shared deque per place against one per worker, on the
    // locality-ignorant programs: one place of all workers (`1xW`, one shared deque), one
    // place per worker (`Wx1`), and the runtime without places (per-worker deques).
    let rr = PlacePolicy {
        unhinted: Unhinted::RoundRobin,
        ..PlacePolicy::default()
    };
    let shared = build(Places::uniform(1, threads)?, rr.clone())?;
    let per_worker = build(Places::uniform(threads, 1)?, rr.clone())?;
    let on_places_rr = build(places.clone(), rr.clone())?;
    for b in [Bench::Mergesort, Bench::Matmul, Bench::CacheStress] {
        let mut cfgs: Vec<Config<'_>> = Vec::new();
        let ignorant = Hints {
            places: np,
            loc: Locality::Ignorant,
            on: true,
        };
        for (name, rt, is_ref) in [
            ("no places".to_string(), &plain, true),
            (format!("places {spec} (unhinted local)"), &on_places, false),
            (format!("places {spec} round-robin"), &on_places_rr, false),
            (
                format!("places {threads}x1 round-robin"),
                &per_worker,
                false,
            ),
            (
                format!("places 1x{threads} round-robin (shared)"),
                &shared,
                false,
            ),
        ] {
            cfgs.push(Config {
                section: "claims",
                bench: b.name(),
                name,
                loc: Locality::Ignorant,
                rt: Some(rt),
                cpu_of: None,
                run: Box::new(move || program_run(b, progs, Rt::Ours(rt), ignorant)),
                is_ref,
                counts: None,
            });
        }
        records.extend(measure(cfgs, p.reps, threads, progress, traces.as_mut())?);
    }

    // Section 3: the future work's policies, on the random Cache Stress variant (hinted
    // tasks that often sit at the wrong place) and on a chain of tasks.
    let guarded = PlacePolicy {
        remote_delay: Duration::from_micros(200),
        remote_backlog: 2 * p.tasks_per_worker,
        ..PlacePolicy::default()
    };
    let named = |k: usize, policy: PlacePolicy| -> Result<Runtime> {
        Ok(traced(
            Runtime::builder()
                .places(places.clone())
                .place_policy(policy)
                .pin(true)
                .thread_name(move |i| format!("tp-pol{k}-{i}")),
        )
        .build()?)
    };
    let policies: Vec<(&str, Runtime)> = vec![
        ("default", named(0, PlacePolicy::default())?),
        ("guarded 200us/backlog", named(1, guarded)?),
        (
            "steal-half",
            named(
                2,
                PlacePolicy {
                    steal_half: true,
                    ..PlacePolicy::default()
                },
            )?,
        ),
        (
            "adaptive",
            named(
                3,
                PlacePolicy {
                    adaptive: true,
                    ..PlacePolicy::default()
                },
            )?,
        ),
    ];
    let random = Hints {
        places: np,
        loc: Locality::Random,
        on: true,
    };
    let mut cfgs: Vec<Config<'_>> = Vec::new();
    for (k, (name, rt)) in policies.iter().enumerate() {
        cfgs.push(Config {
            section: "policies",
            bench: "cache-stress",
            name: name.to_string(),
            loc: Locality::Random,
            rt: Some(rt),
            cpu_of: Some(format!("tp-pol{k}-")),
            run: Box::new(move || program_run(Bench::CacheStress, progs, Rt::Ours(rt), random)),
            is_ref: *name == "default",
            counts: None,
        });
    }
    records.extend(measure(cfgs, p.reps, threads, progress, traces.as_mut())?);
    let mut cfgs: Vec<Config<'_>> = Vec::new();
    for (k, (name, rt)) in policies.iter().enumerate() {
        cfgs.push(Config {
            section: "policies",
            bench: "chain",
            name: name.to_string(),
            loc: Locality::Random,
            rt: Some(rt),
            cpu_of: Some(format!("tp-pol{k}-")),
            run: Box::new(move || {
                chain(rt, 4000, Duration::from_micros(20));
                Ok(())
            }),
            is_ref: *name == "default",
            counts: None,
        });
    }
    records.extend(measure(cfgs, p.reps, threads, progress, traces.as_mut())?);
    write_traces(p, traces)?;
    Ok(records)
}

/// Writes the traces of a run (see [`crate::report::trace::write_files`]).
fn write_traces(p: &Params, traces: Option<Vec<(String, Trace)>>) -> Result<()> {
    match (&p.trace, traces) {
        (Some(path), Some(traces)) => crate::report::trace::write_files(path, &traces),
        _ => Ok(()),
    }
}
