//! The sparse blocked LU factorization of the BOTS suite (`sparselu`): the matrix pattern,
//! the block kernels, and the factorization as two scopes per step.

use super::scope::{with_scope, Inline, Rt, Spawner};

pub(super) type Blk = Box<[f64]>;

/// The BOTS `genmat` pattern and values.
pub(super) fn lu_matrix(nb: usize, bs: usize) -> Vec<Option<Blk>> {
    let mut init: i64 = 1325;
    let mut m = Vec::with_capacity(nb * nb);
    for ii in 0..nb {
        for jj in 0..nb {
            let mut null =
                (ii < jj && ii % 3 != 0) || (ii > jj && jj % 3 != 0) || ii % 2 == 1 || jj % 2 == 1;
            if ii == jj || ii + 1 == jj || ii == jj + 1 {
                null = false;
            }
            m.push((!null).then(|| {
                (0..bs * bs)
                    .map(|_| {
                        init = (3125 * init) % 65536;
                        (init as f64 - 32768.0) / 16384.0
                    })
                    .collect()
            }));
        }
    }
    m
}

#[inline(never)]
fn lu0(d: &mut [f64], bs: usize) {
    for k in 0..bs {
        for i in k + 1..bs {
            d[i * bs + k] /= d[k * bs + k];
            let f = d[i * bs + k];
            for j in k + 1..bs {
                d[i * bs + j] -= f * d[k * bs + j];
            }
        }
    }
}

#[inline(never)]
fn fwd(d: &[f64], col: &mut [f64], bs: usize) {
    for j in 0..bs {
        for k in 0..bs {
            let c = col[k * bs + j];
            for i in k + 1..bs {
                col[i * bs + j] -= d[i * bs + k] * c;
            }
        }
    }
}

#[inline(never)]
fn bdiv(d: &[f64], row: &mut [f64], bs: usize) {
    for i in 0..bs {
        for k in 0..bs {
            row[i * bs + k] /= d[k * bs + k];
            let f = row[i * bs + k];
            for j in k + 1..bs {
                row[i * bs + j] -= f * d[k * bs + j];
            }
        }
    }
}

#[inline(never)]
fn bmod(row: &[f64], col: &[f64], inner: &mut [f64], bs: usize) {
    for i in 0..bs {
        for k in 0..bs {
            let r = row[i * bs + k];
            for j in 0..bs {
                inner[i * bs + j] -= r * col[k * bs + j];
            }
        }
    }
}

/// Factors `m` in place; returns the spawns made.
pub(super) fn lu(m: &mut [Option<Blk>], nb: usize, bs: usize, rt: Rt) -> u64 {
    let mut spawns = 0u64;
    for k in 0..nb {
        let mut diag = m[k * nb + k].take().expect("the diagonal is never empty");
        lu0(&mut diag, bs);
        let d: &[f64] = &diag;
        // Row k right of the diagonal and column k below it.
        let mut n = 0u64;
        with_scope!(rt, |s| {
            for (idx, b) in m.iter_mut().enumerate() {
                let (i, j) = (idx / nb, idx % nb);
                let Some(b) = b.as_deref_mut() else { continue };
                if i == k && j > k {
                    n += 1;
                    s.spawn_job(move || fwd(d, b, bs));
                } else if j == k && i > k {
                    n += 1;
                    s.spawn_job(move || bdiv(d, b, bs));
                }
            }
        });
        spawns += n;
        m[k * nb + k] = Some(diag);
        // The trailing blocks: take row k and column k out, so that they can be read while
        // the others are written.
        let row: Vec<Option<Blk>> = (0..nb)
            .map(|j| if j > k { m[k * nb + j].take() } else { None })
            .collect();
        let col: Vec<Option<Blk>> = (0..nb)
            .map(|i| if i > k { m[i * nb + k].take() } else { None })
            .collect();
        // Fill-in first (sequential, as in BOTS's allocate_clean_block).
        for i in k + 1..nb {
            for j in k + 1..nb {
                if col[i].is_some() && row[j].is_some() && m[i * nb + j].is_none() {
                    m[i * nb + j] = Some(vec![0.0; bs * bs].into_boxed_slice());
                }
            }
        }
        let mut n = 0u64;
        with_scope!(rt, |s| {
            for (idx, b) in m.iter_mut().enumerate() {
                let (i, j) = (idx / nb, idx % nb);
                if i <= k || j <= k {
                    continue;
                }
                let (Some(r), Some(c), Some(b)) =
                    (col[i].as_deref(), row[j].as_deref(), b.as_deref_mut())
                else {
                    continue;
                };
                n += 1;
                s.spawn_job(move || bmod(r, c, b, bs));
            }
        });
        spawns += n;
        for (j, b) in row.into_iter().enumerate() {
            if j > k {
                m[k * nb + j] = b;
            }
        }
        for (i, b) in col.into_iter().enumerate() {
            if i > k {
                m[i * nb + k] = b;
            }
        }
    }
    spawns
}
