//! Jacobi sweeps of the 5-point stencil in blocks, one scope per sweep and a spawn per
//! block, against the plain loop.

use super::scope::{with_scope, Inline, Rt, Spawner, View};

pub(super) fn grid_init(n: usize) -> Vec<f64> {
    let mut rng = fastrand::Rng::with_seed(7);
    (0..n * n).map(|_| rng.f64()).collect()
}

/// One sweep's update of the interior rows `r0..r1`, columns `c0..c1` (row by row, on row
/// slices, so that the inner loop vectorizes).
///
/// # Safety
/// `src` and `dst` view distinct `n × n` arrays (stride `n`) that live through the call;
/// nothing writes `src` meanwhile, and nothing else reads or writes this block of `dst`.
#[inline(never)]
unsafe fn sweep_block(
    src: View,
    dst: View,
    n: usize,
    (r0, r1): (usize, usize),
    (c0, c1): (usize, usize),
) {
    let (c0, c1) = (c0.max(1), c1.min(n - 1));
    if c0 >= c1 {
        return;
    }
    let w = c1 - c0;
    for i in r0.max(1)..r1.min(n - 1) {
        // SAFETY: rows i-1..=i+1 and columns c0-1..=c1 are inside the n × n grid (rows and
        // columns are clamped to the interior); the rest is the function's contract, and the
        // slices do not outlive the call.
        let (up, mid, down, out) = unsafe {
            let row = |v: View, r: usize, c: usize, len: usize| {
                std::slice::from_raw_parts(v.ptr.add(r * v.stride + c), len)
            };
            (
                row(src, i - 1, c0, w),
                row(src, i, c0 - 1, w + 2),
                row(src, i + 1, c0, w),
                std::slice::from_raw_parts_mut(dst.ptr.add(i * dst.stride + c0), w),
            )
        };
        for j in 0..w {
            out[j] = 0.25 * (up[j] + down[j] + mid[j] + mid[j + 2]);
        }
    }
}

/// `sweeps` Jacobi sweeps between `a` and `b` (which start equal); returns the spawns made.
/// The sequential variant is the plain loop over the whole grid.
pub(super) fn jacobi(
    a: &mut [f64],
    b: &mut [f64],
    n: usize,
    bl: usize,
    sweeps: usize,
    rt: Rt,
) -> u64 {
    assert!(a.len() == n * n && b.len() == n * n && n >= 3 && bl > 0 && n % bl == 0);
    let mut spawns = 0;
    let (mut src, mut dst) = (
        View {
            ptr: a.as_mut_ptr(),
            stride: n,
        },
        View {
            ptr: b.as_mut_ptr(),
            stride: n,
        },
    );
    for _ in 0..sweeps {
        if rt == Rt::Sequential {
            // SAFETY: `src` and `dst` view `a` and `b` (distinct, n × n, checked above), which
            // this function borrows mutably; only this call touches them.
            unsafe { sweep_block(src, dst, n, (0, n), (0, n)) };
        } else {
            let blocks = n / bl;
            with_scope!(rt, |s| {
                for bi in 0..blocks {
                    for bj in 0..blocks {
                        // SAFETY: as above; within this sweep's scope every spawn writes its own
                        // block of `dst` and only reads `src`, and the scope ends before the
                        // next sweep swaps them.
                        s.spawn_job(move || unsafe {
                            sweep_block(
                                src,
                                dst,
                                n,
                                (bi * bl, (bi + 1) * bl),
                                (bj * bl, (bj + 1) * bl),
                            )
                        });
                    }
                }
            });
            spawns += (blocks * blocks) as u64;
        }
        std::mem::swap(&mut src, &mut dst);
    }
    spawns
}
