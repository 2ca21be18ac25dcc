//! The Cache Stress Test of LASSI (Weibel, "An Advanced Scheduler for Intervals", 2010):
//! two arrays, tasks that sweep one of them, placed by locality; also as a task-pool
//! working phase whose root puts the leaves with hints.

use std::hint::black_box;

use anyhow::{bail, Result};
use taskpools::places::PlaceId;
use taskpools::Runtime;

use super::spawn::{Hints, Rt};
use super::Locality;

pub(super) struct CacheStress {
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
    pub(super) fn new(bytes: usize, passes: usize, tasks: usize) -> Self {
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

    pub(super) fn run(&self, rt: Rt<'_>, h: Hints) -> Result<()> {
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
    pub(super) fn run_phase(
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
