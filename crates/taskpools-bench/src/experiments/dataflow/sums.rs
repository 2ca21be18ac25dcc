//! The accumulate graph's additions as a reduction (per bin, or over all the bins), as atomic
//! adds and as per-task copies: ways to sum into shared bins, run beside its `inout` and
//! `commutative` variants.

use std::sync::atomic::{AtomicU64, Ordering};

use taskpools::dataflow::{self, Config};

use super::graphs::Tasks;
use super::STRIDE;

/// How the accumulate graph's additions are written.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Sums {
    /// Each task's bin a reduction of its own (a group per bin).
    Reduce,
    /// Every task a reduction over all the bins (one group, as OpenMP's `task_reduction`
    /// over the array is).
    ReduceWhole,
    /// No declaration: each task adds atomically into the bins, which it captures.
    Atomic,
    /// Each task writes its 1 into an element of its own; one last task adds them into the
    /// bins.
    Copies,
}

fn wrapping_add(a: &mut u64, x: u64) {
    *a = a.wrapping_add(x);
}

/// What a variant works on besides the bins, made once, outside the timing.
pub(super) struct Scratch {
    pub atomics: Vec<AtomicU64>,
    pub ones: Vec<u64>,
}

impl Scratch {
    pub(super) fn new(t: &Tasks) -> Self {
        Scratch {
            atomics: (0..t.blocks * STRIDE).map(|_| AtomicU64::new(0)).collect(),
            ones: vec![0; t.out.len()],
        }
    }
}

pub(super) fn accumulate_run(t: &Tasks, d: &mut [u64], how: Sums, x: &mut Scratch) {
    let atomics = &x.atomics[..];
    dataflow::scope_with(Config::default(), |df| match how {
        Sums::Reduce => {
            let r = df.region(d);
            for &o in &t.out {
                let at = r.at(o as usize * STRIDE).reduce(0, wrapping_add);
                df.spawn(at, |_, mut x| *x = x.wrapping_add(1));
            }
        }
        Sums::ReduceWhole => {
            let r = df.region(d);
            for &o in &t.out {
                let i = o as usize * STRIDE;
                df.spawn(r.reduce(0, wrapping_add), move |_, mut p| {
                    p[i] = p[i].wrapping_add(1)
                });
            }
        }
        Sums::Atomic => {
            for &o in &t.out {
                df.spawn((), move |_, ()| {
                    atomics[o as usize * STRIDE].fetch_add(1, Ordering::Relaxed);
                });
            }
        }
        Sums::Copies => {
            let c = df.region(&mut x.ones);
            for i in 0..t.out.len() {
                df.spawn(c.at(i).out(), |_, x| *x = 1);
            }
            let r = df.region(d);
            df.spawn((c.read(), r.inout()), |_, (c, d)| {
                for (&o, &x) in t.out.iter().zip(c) {
                    d[o as usize * STRIDE] = d[o as usize * STRIDE].wrapping_add(x);
                }
            });
        }
    });
    if how == Sums::Atomic {
        for (x, a) in d.iter_mut().zip(atomics) {
            *x = a.swap(0, Ordering::Relaxed);
        }
    }
}
