//! The accumulate graph's additions as a reduction, as atomic adds and as per-task copies:
//! three ways to sum into shared bins, run beside its `inout` and `commutative` variants.

use std::sync::atomic::{AtomicU64, Ordering};

use taskpools::dataflow::{self, Config};

use super::graphs::Tasks;
use super::STRIDE;

/// The accumulate graph's additions three more ways: each task's block a `reduction`
/// (`Sums::Reduce`), `concurrent` with atomic adds (`Sums::Atomic`), or per-task copies: each
/// task writes its 1 into an element of its own and one last task adds them into the blocks
/// (`Sums::Copies`).
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Sums {
    Reduce,
    Atomic,
    Copies,
}

fn wrapping_add(a: &mut u64, x: u64) {
    *a = a.wrapping_add(x);
}

pub(super) fn accumulate_run(t: &Tasks, d: &mut [u64], how: Sums, atomics: &mut [AtomicU64]) {
    dataflow::scope_with(Config::default(), |df| match how {
        Sums::Reduce => {
            let r = df.region(d);
            for &o in &t.out {
                let at = r.at(o as usize * STRIDE).reduce(0, wrapping_add);
                df.spawn(at, |_, mut x| *x = x.wrapping_add(1));
            }
        }
        Sums::Atomic => {
            let r = df.region(atomics);
            let blocks: Vec<_> = r.chunks(STRIDE).collect();
            for &o in &t.out {
                df.spawn(blocks[o as usize].concurrent(), |_, b| {
                    b[0].fetch_add(1, Ordering::Relaxed);
                });
            }
        }
        Sums::Copies => {
            let mut ones = vec![0u64; t.out.len()];
            dataflow::scope_with(Config::default(), |inner| {
                let c = inner.region(&mut ones);
                for i in 0..t.out.len() {
                    inner.spawn(c.at(i).out(), |_, x| *x = 1);
                }
                let r = inner.region(d);
                inner.spawn((c.read(), r.inout()), |_, (c, d)| {
                    for (&o, &x) in t.out.iter().zip(c) {
                        d[o as usize * STRIDE] = d[o as usize * STRIDE].wrapping_add(x);
                    }
                });
            });
        }
    });
    if how == Sums::Atomic {
        for (x, a) in d.iter_mut().zip(atomics.iter()) {
            *x = a.swap(0, Ordering::Relaxed);
        }
    }
}
