//! Fork-join kernels on our runtime, on rayon, and sequentially, in one invocation: time,
//! speedup against the sequential code, and the cost of a join at 1 thread,
//! (T1 − Tseq) / joins. Every parallel result is checked against the sequential one.

use std::time::Instant;

use anyhow::{bail, Result};
use serde::Serialize;

use super::summarize;
use crate::report::Progress;

/// What to run.
#[derive(Clone, Debug)]
pub struct Params {
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Repetitions (median reported).
    pub reps: usize,
    /// fib(n).
    pub fib_n: u64,
    /// Depth of the complete binary tree to sum.
    pub tree_depth: u32,
}

/// One row.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    /// `forkjoin`.
    pub experiment: String,
    /// Kernel name.
    pub kernel: String,
    /// `taskpools`, `rayon` or `sequential`.
    pub runtime: String,
    /// Worker threads (1 for sequential).
    pub threads: usize,
    /// Repetitions.
    pub reps: usize,
    /// Median time.
    pub median_s: f64,
    /// Fastest repetition.
    pub min_s: f64,
    /// Slowest repetition.
    pub max_s: f64,
    /// Sequential median / this median.
    pub speedup_vs_seq: f64,
    /// Joins one run performs.
    pub joins: u64,
    /// At 1 thread: (T1 − Tseq) / joins, in ns.
    pub ns_per_join: Option<f64>,
    /// This median / rayon's median at the same thread count (taskpools rows).
    pub vs_rayon: Option<f64>,
}

/// A `join` implementation to run the kernels with.
trait Join: Sync {
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send;
}

struct Ours;
impl Join for Ours {
    #[inline]
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        taskpools::forkjoin::join(a, b)
    }
}

struct Rayon;
impl Join for Rayon {
    #[inline]
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        rayon::join(a, b)
    }
}

/// Runs both halves here, one after the other (the sequential baseline).
struct Seq;
impl Join for Seq {
    #[inline]
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        (a(), b())
    }
}

fn fib<J: Join>(j: &J, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = j.join(|| fib(j, n - 1), || fib(j, n - 2));
    a + b
}

fn fib_joins(n: u64) -> u64 {
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

/// A complete binary tree with a value in every node.
pub struct Node {
    value: u64,
    children: Option<Box<(Node, Node)>>,
}

fn build(depth: u32, next: &mut u64) -> Node {
    *next = next.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let value = *next >> 40;
    let children = (depth > 0).then(|| Box::new((build(depth - 1, next), build(depth - 1, next))));
    Node { value, children }
}

fn tree_sum<J: Join>(j: &J, n: &Node) -> u64 {
    match &n.children {
        None => n.value,
        Some(c) => {
            let (a, b) = j.join(|| tree_sum(j, &c.0), || tree_sum(j, &c.1));
            n.value.wrapping_add(a).wrapping_add(b)
        }
    }
}

type Kernel<'a> = Box<dyn Fn(usize, &str) -> Result<(f64, u64)> + 'a>;

/// Runs every kernel.
pub fn run(p: &Params, progress: &Progress) -> Result<Vec<Record>> {
    if p.reps == 0 || p.threads.is_empty() || p.threads.contains(&0) {
        bail!("--reps and every thread count must be at least 1");
    }
    let tree = build(p.tree_depth, &mut 1);
    let fib_n = p.fib_n;
    let fib_expected = fib(&Seq, fib_n);
    let tree_expected = tree_sum(&Seq, &tree);
    let ours: Vec<_> = p
        .threads
        .iter()
        .map(|&t| taskpools::forkjoin::Runtime::new(t))
        .collect::<Result<_, _>>()?;
    let rayons: Vec<_> = p
        .threads
        .iter()
        .map(|&t| rayon::ThreadPoolBuilder::new().num_threads(t).build())
        .collect::<Result<_, _>>()?;
    // Each kernel: (name, joins, run(thread index or usize::MAX for sequential, runtime)).
    let timed = |f: &dyn Fn() -> u64, expected: u64, what: &str| -> Result<f64> {
        let t0 = Instant::now();
        let got = std::hint::black_box(f());
        let s = t0.elapsed().as_secs_f64();
        if got != expected {
            bail!("{what}: wrong result {got}, expected {expected}");
        }
        Ok(s)
    };
    let kernels: Vec<(&str, u64, Kernel<'_>)> = vec![
        (
            "fib",
            fib_joins(fib_n),
            Box::new(|ti, rt| {
                let s = match rt {
                    "sequential" => timed(&|| fib(&Seq, fib_n), fib_expected, "fib")?,
                    "taskpools" => timed(
                        &|| ours[ti].install(|| fib(&Ours, fib_n)),
                        fib_expected,
                        "fib",
                    )?,
                    _ => timed(
                        &|| rayons[ti].install(|| fib(&Rayon, fib_n)),
                        fib_expected,
                        "fib",
                    )?,
                };
                Ok((s, 0))
            }),
        ),
        (
            "tree-sum",
            (1u64 << p.tree_depth) - 1,
            Box::new(|ti, rt| {
                let s = match rt {
                    "sequential" => timed(&|| tree_sum(&Seq, &tree), tree_expected, "tree-sum")?,
                    "taskpools" => timed(
                        &|| ours[ti].install(|| tree_sum(&Ours, &tree)),
                        tree_expected,
                        "tree-sum",
                    )?,
                    _ => timed(
                        &|| rayons[ti].install(|| tree_sum(&Rayon, &tree)),
                        tree_expected,
                        "tree-sum",
                    )?,
                };
                Ok((s, 0))
            }),
        ),
    ];
    let runtimes = ["taskpools", "rayon"];
    progress.set_length((p.reps * kernels.len() * (1 + runtimes.len() * p.threads.len())) as u64);
    let mut out = Vec::new();
    for (name, joins, k) in &kernels {
        let mut seq = Vec::new();
        let mut par = vec![vec![Vec::new(); p.threads.len()]; runtimes.len()];
        for _ in 0..p.reps {
            progress.set_message(format!("{name} sequential"));
            seq.push(k(0, "sequential")?.0);
            progress.inc();
            for (rt, times) in runtimes.iter().zip(par.iter_mut()) {
                for (ti, (t, samples)) in p.threads.iter().zip(times.iter_mut()).enumerate() {
                    progress.set_message(format!("{name} {rt} x{t}"));
                    samples.push(k(ti, rt)?.0);
                    progress.inc();
                }
            }
        }
        let (sm, smin, smax) = summarize(&seq);
        out.push(Record {
            experiment: "forkjoin".into(),
            kernel: name.to_string(),
            runtime: "sequential".into(),
            threads: 1,
            reps: p.reps,
            median_s: sm,
            min_s: smin,
            max_s: smax,
            speedup_vs_seq: 1.0,
            joins: 0,
            ns_per_join: None,
            vs_rayon: None,
        });
        for (ri, rt) in runtimes.iter().enumerate() {
            for (ti, &t) in p.threads.iter().enumerate() {
                let (m, mn, mx) = summarize(&par[ri][ti]);
                let (rayon_m, _, _) = summarize(&par[1][ti]);
                out.push(Record {
                    experiment: "forkjoin".into(),
                    kernel: name.to_string(),
                    runtime: rt.to_string(),
                    threads: t,
                    reps: p.reps,
                    median_s: m,
                    min_s: mn,
                    max_s: mx,
                    speedup_vs_seq: sm / m,
                    joins: *joins,
                    ns_per_join: (t == 1).then(|| (m - sm) * 1e9 / *joins as f64),
                    vs_rayon: (*rt == "taskpools").then(|| m / rayon_m),
                });
            }
        }
    }
    Ok(out)
}
