//! `taskloop`: a two-buffer stencil swept in chunks of random grain, each chunk declaring the
//! neighbours it reads, equals the sequential sweeps; an empty range spawns nothing.

use std::sync::atomic::{AtomicUsize, Ordering};

use taskpools::dataflow;
use taskpools::Runtime;

/// Element `i`'s new value from `src`, which starts at element `off` of a buffer of `n`
/// (the neighbours clamped at the ends).
fn step(src: &[u64], off: usize, n: usize, i: usize) -> u64 {
    let l = src[i.saturating_sub(1) - off];
    let r = src[(i + 1).min(n - 1) - off];
    l.wrapping_mul(3)
        .wrapping_add(src[i - off])
        .wrapping_add(r.rotate_left(7))
}

#[test]
fn stencil_sweeps_in_chunks_equal_the_sequential_sweeps() {
    let rt = Runtime::new(2).unwrap();
    let mut rng = fastrand::Rng::with_seed(7);
    for _ in 0..100 {
        let n = rng.usize(1..300);
        let (grain, sweeps) = (rng.usize(1..64), rng.usize(1..6));
        let init: Vec<u64> = (0..n as u64).map(|i| i * 2654435761 % 1000).collect();
        // Sequential: sweep s reads one buffer and writes the other.
        let (mut a, mut b) = (init.clone(), vec![0u64; n]);
        for _ in 0..sweeps {
            for (i, b) in b.iter_mut().enumerate() {
                *b = step(&a, 0, n, i);
            }
            std::mem::swap(&mut a, &mut b);
        }
        let (mut x, mut y) = (init.clone(), vec![0u64; n]);
        rt.install(|| {
            dataflow::scope(|df| {
                let (xr, yr) = (df.region(&mut x), df.region(&mut y));
                for s in 0..sweeps {
                    let (src, dst) = if s % 2 == 0 { (&xr, &yr) } else { (&yr, &xr) };
                    df.taskloop(
                        0..n,
                        grain,
                        // The chunk's own part of `dst`, and the chunk with its two
                        // neighbours in `src`: each task waits only for the three tasks
                        // of the last sweep that wrote those (a wavefront, no barrier).
                        |c| {
                            let (lo, hi) = (c.start.saturating_sub(1), (c.end + 1).min(n));
                            (src.part(lo..hi).read(), dst.part(c).out())
                        },
                        move |_, (src, dst), c| {
                            let lo = c.start.saturating_sub(1);
                            for (k, i) in c.enumerate() {
                                dst[k] = step(src, lo, n, i);
                            }
                        },
                    );
                }
            })
        });
        let got = if sweeps % 2 == 0 { &x } else { &y };
        assert_eq!(got, &a, "n {n} grain {grain} sweeps {sweeps}");
    }
}

#[test]
fn an_empty_range_spawns_nothing_and_a_zero_grain_is_refused() {
    let rt = Runtime::new(1).unwrap();
    let calls = AtomicUsize::new(0);
    rt.install(|| {
        dataflow::scope(|df| {
            df.taskloop(
                3..3,
                4,
                |_| (),
                |_, (), _| {
                    calls.fetch_add(1, Ordering::Relaxed);
                },
            );
        })
    });
    assert_eq!(calls.into_inner(), 0);
    let p = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.install(|| dataflow::scope(|df| df.taskloop(0..4, 0, |_| (), |_, (), _| ())))
    }))
    .unwrap_err();
    assert_eq!(
        super::message(&*p),
        "taskpools::dataflow: taskloop's grain must be at least 1"
    );
}
