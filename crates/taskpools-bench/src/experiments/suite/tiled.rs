//! The tiled factorizations: Cholesky (`A = L Lᵀ`) and LU without pivoting (`A = L U`) of an
//! `n` × `n` row-major matrix in tiles of `bs` × `bs`, right-looking, not recursive. The
//! data-flow variant declares each kernel's tiles (strided sub-matrices of the one matrix, the
//! *stride* arguments of PARTEE) and lets the dependences order them; ND runs the same kernels
//! with a sync after each phase of each step (factor; panel solves; trailing update); OpenMP
//! uses `depend` on the tiles. Rows are [`padded`] by a cache line.

use taskpools::dataflow::{self, Config, TileMut, TileRef};
use taskpools::forkjoin::scope;

use anyhow::Result;

use super::cholesky_nested::{cholesky_nested, potrf, Nesting};
use super::kernels;
use super::{padded, timed, Aligned, Ctx, Program};
use crate::experiments::drivers::{process::hash_words, Driver};

/// Which factorization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Factor {
    /// Cholesky.
    Cholesky,
    /// LU without pivoting.
    Lu,
}

/// A matrix to factor and its factors.
pub struct Tiled {
    kind: Factor,
    n: usize,
    ld: usize,
    bs: usize,
    input: Vec<f64>,
    a: Aligned,
    expected: Vec<f64>,
}

impl Tiled {
    /// A random symmetric, strictly diagonally dominant `n` × `n` matrix (positive definite,
    /// and safe to factor without pivoting), in tiles of `bs` (which divides `n`).
    pub fn new(kind: Factor, n: usize, bs: usize) -> Self {
        assert!(bs > 0 && n % bs == 0, "tile size {bs} does not divide {n}");
        let ld = padded(n);
        let mut rng = fastrand::Rng::with_seed(5);
        let mut input = vec![0.0; n * ld];
        for i in 0..n {
            for j in 0..i {
                let v = rng.f64() - 0.5;
                input[i * ld + j] = v;
                input[j * ld + i] = v;
            }
            input[i * ld + i] = n as f64;
        }
        Tiled {
            kind,
            n,
            ld,
            bs,
            input,
            a: Aligned::new(n * ld),
            expected: Vec::new(),
        }
    }
}

impl Tiled {
    /// The largest difference between the input and the product of the factors now in the
    /// matrix (`L Lᵀ` or `L U`).
    #[cfg(test)]
    pub fn residual(&self) -> f64 {
        let (n, ld, a) = (self.n, self.ld, self.a.as_slice());
        let l = |i: usize, k: usize| match (self.kind, i.cmp(&k)) {
            (_, std::cmp::Ordering::Greater) => a[i * ld + k],
            (Factor::Cholesky, std::cmp::Ordering::Equal) => a[i * ld + i],
            (Factor::Lu, std::cmp::Ordering::Equal) => 1.0,
            (_, std::cmp::Ordering::Less) => 0.0,
        };
        let r = |k: usize, j: usize| match self.kind {
            Factor::Cholesky => l(j, k),
            Factor::Lu if k <= j => a[k * ld + j],
            Factor::Lu => 0.0,
        };
        let mut worst = 0.0f64;
        for i in 0..n {
            for j in 0..n {
                let s: f64 = (0..n).map(|k| l(i, k) * r(k, j)).sum();
                worst = worst.max((s - self.input[i * ld + j]).abs() / n as f64);
            }
        }
        worst
    }
}

/// Elements `i < j` of `v`, both mutable.
fn two_mut<T>(v: &mut [T], i: usize, j: usize) -> [&mut T; 2] {
    let (a, b) = v.split_at_mut(j);
    [&mut a[i], &mut b[0]]
}

fn cholesky_seq(a: &mut [f64], n: usize, ld: usize, bs: usize) {
    let nt = n / bs;
    let mut t = TileMut::from_slice(a, n, ld)
        .split_at_col(n)
        .0
        .into_tiles(bs);
    for k in 0..nt {
        kernels::potrf(t[k][k].reborrow());
        for i in k + 1..nt {
            let [lk, li] = two_mut(&mut t, k, i);
            kernels::trsm_llt(lk[k].as_ref(), li[k].reborrow());
        }
        for i in k + 1..nt {
            {
                let row = &mut t[i];
                let [aik, aii] = two_mut(row, k, i);
                kernels::syrk(aik.as_ref(), aii.reborrow());
            }
            for j in k + 1..i {
                let [rj, ri] = two_mut(&mut t, j, i);
                let [aik, aij] = two_mut(ri, k, j);
                kernels::gemm_nt(aik.as_ref(), rj[k].as_ref(), aij.reborrow());
            }
        }
    }
}

/// The tiled Cholesky as data-flow tasks; with `prio`, the critical path's tasks get
/// priorities (see [`potrf`]).
fn cholesky_dataflow(a: &mut [f64], n: usize, ld: usize, bs: usize, config: Config, prio: bool) {
    dataflow::scope_with(config, |df| {
        let m = df.region(a).matrix_ld(n, n, ld);
        potrf(df, |i, j| m.tile(i, j, bs), n / bs, prio);
    });
}

/// Splits the tile rows below step `k` into their column-`k` tiles (read-only) and their
/// tiles right of column `k` (mutable).
#[allow(clippy::type_complexity)]
fn split_below<'a, 'm>(
    rows: &'a mut [Vec<TileMut<'m, f64>>],
    k: usize,
) -> (Vec<TileRef<'a, f64>>, Vec<&'a mut [TileMut<'m, f64>]>) {
    let mut col = Vec::with_capacity(rows.len());
    let mut rights = Vec::with_capacity(rows.len());
    for row in rows.iter_mut() {
        let (left, right) = row.split_at_mut(k + 1);
        let left: &'a [TileMut<'m, f64>] = left;
        col.push(left[k].as_ref());
        rights.push(right);
    }
    (col, rights)
}

fn cholesky_nd(a: &mut [f64], n: usize, ld: usize, bs: usize) {
    let nt = n / bs;
    let mut t = TileMut::from_slice(a, n, ld)
        .split_at_col(n)
        .0
        .into_tiles(bs);
    for k in 0..nt {
        kernels::potrf(t[k][k].reborrow());
        let (upper, lower) = t.split_at_mut(k + 1);
        let l = upper[k][k].as_ref();
        scope(|s| {
            for row in lower.iter_mut() {
                let b = row[k].reborrow();
                s.spawn(move |_| kernels::trsm_llt(l, b));
            }
        });
        let (col, rights) = split_below(lower, k);
        let col = &col;
        scope(|s| {
            for (ii, right) in rights.into_iter().enumerate() {
                let aik = col[ii];
                for (jj, c) in right.iter_mut().take(ii + 1).enumerate() {
                    let c = c.reborrow();
                    if jj == ii {
                        s.spawn(move |_| kernels::syrk(aik, c));
                    } else {
                        let ajk = col[jj];
                        s.spawn(move |_| kernels::gemm_nt(aik, ajk, c));
                    }
                }
            }
        });
    }
}

fn lu_seq(a: &mut [f64], n: usize, ld: usize, bs: usize) {
    let nt = n / bs;
    let mut t = TileMut::from_slice(a, n, ld)
        .split_at_col(n)
        .0
        .into_tiles(bs);
    for k in 0..nt {
        kernels::getrf(t[k][k].reborrow());
        {
            let (left, right) = t[k].split_at_mut(k + 1);
            for b in right {
                kernels::trsm_lower(left[k].as_ref(), b.reborrow());
            }
        }
        for i in k + 1..nt {
            let [rk, ri] = two_mut(&mut t, k, i);
            kernels::trsm_upper(rk[k].as_ref(), ri[k].reborrow());
        }
        for i in k + 1..nt {
            for j in k + 1..nt {
                let [rk, ri] = two_mut(&mut t, k, i);
                let [aik, aij] = two_mut(ri, k, j);
                kernels::gemm_nn_sub(aik.as_ref(), rk[j].as_ref(), aij.reborrow());
            }
        }
    }
}

fn lu_dataflow(a: &mut [f64], n: usize, ld: usize, bs: usize, config: Config) {
    let nt = n / bs;
    dataflow::scope_with(config, |df| {
        let m = df.region(a).matrix_ld(n, n, ld);
        let t = |i: usize, j: usize| m.tile(i, j, bs);
        for k in 0..nt {
            df.spawn(t(k, k).inout(), |_, a| kernels::getrf(a));
            for j in k + 1..nt {
                df.spawn((t(k, k).read(), t(k, j).inout()), |_, (l, b)| {
                    kernels::trsm_lower(l, b)
                });
            }
            for i in k + 1..nt {
                df.spawn((t(k, k).read(), t(i, k).inout()), |_, (u, b)| {
                    kernels::trsm_upper(u, b)
                });
            }
            for i in k + 1..nt {
                for j in k + 1..nt {
                    df.spawn(
                        (t(i, k).read(), t(k, j).read(), t(i, j).inout()),
                        |_, (a, b, c)| kernels::gemm_nn_sub(a, b, c),
                    );
                }
            }
        }
    });
}

fn lu_nd(a: &mut [f64], n: usize, ld: usize, bs: usize) {
    let nt = n / bs;
    let mut t = TileMut::from_slice(a, n, ld)
        .split_at_col(n)
        .0
        .into_tiles(bs);
    for k in 0..nt {
        kernels::getrf(t[k][k].reborrow());
        let (upper, lower) = t.split_at_mut(k + 1);
        let (rk_left, rk_right) = upper[k].split_at_mut(k + 1);
        let lkk = rk_left[k].as_ref();
        scope(|s| {
            for b in rk_right.iter_mut() {
                let b = b.reborrow();
                s.spawn(move |_| kernels::trsm_lower(lkk, b));
            }
            for row in lower.iter_mut() {
                let b = row[k].reborrow();
                s.spawn(move |_| kernels::trsm_upper(lkk, b));
            }
        });
        let rowk: Vec<TileRef<'_, f64>> = rk_right.iter().map(|t| t.as_ref()).collect();
        let rowk = &rowk;
        let (col, rights) = split_below(lower, k);
        let col = &col;
        scope(|s| {
            for (ii, right) in rights.into_iter().enumerate() {
                let aik = col[ii];
                for (jj, c) in right.iter_mut().enumerate() {
                    let c = c.reborrow();
                    let akj = rowk[jj];
                    s.spawn(move |_| kernels::gemm_nn_sub(aik, akj, c));
                }
            }
        });
    }
}

impl Program for Tiled {
    fn setup(&self) -> String {
        format!("{0}x{0} doubles, {1}x{1} tiles", self.n, self.bs)
    }

    fn variants(&self) -> Vec<&'static str> {
        match self.kind {
            Factor::Cholesky => vec![
                "dataflow",
                "dataflow prio",
                "dataflow nested",
                "dataflow weak",
                "nd",
            ],
            Factor::Lu => vec!["dataflow", "nd"],
        }
    }

    fn reset(&mut self) {
        self.a.as_mut_slice().copy_from_slice(&self.input);
    }

    fn run(&mut self, variant: &str, ctx: &Ctx<'_>) -> Option<f64> {
        let (n, ld, bs, kind) = (self.n, self.ld, self.bs, self.kind);
        let a = self.a.as_mut_slice();
        match (variant, kind) {
            ("sequential", Factor::Cholesky) => timed(|| cholesky_seq(a, n, ld, bs)),
            ("sequential", Factor::Lu) => timed(|| lu_seq(a, n, ld, bs)),
            ("dataflow", Factor::Cholesky) => timed(|| {
                ctx.rt
                    .install(|| cholesky_dataflow(a, n, ld, bs, ctx.dataflow, false))
            }),
            ("dataflow prio", Factor::Cholesky) => timed(|| {
                ctx.rt
                    .install(|| cholesky_dataflow(a, n, ld, bs, ctx.dataflow, true))
            }),
            ("dataflow nested", Factor::Cholesky) => timed(|| {
                ctx.rt
                    .install(|| cholesky_nested(a, n, ld, bs, ctx.dataflow, Nesting::Strong))
            }),
            ("dataflow weak", Factor::Cholesky) => timed(|| {
                ctx.rt
                    .install(|| cholesky_nested(a, n, ld, bs, ctx.dataflow, Nesting::Weak))
            }),
            ("dataflow", Factor::Lu) => {
                timed(|| ctx.rt.install(|| lu_dataflow(a, n, ld, bs, ctx.dataflow)))
            }
            ("nd", Factor::Cholesky) => timed(|| ctx.rt.install(|| cholesky_nd(a, n, ld, bs))),
            ("nd", Factor::Lu) => timed(|| ctx.rt.install(|| lu_nd(a, n, ld, bs))),
            _ => unreachable!("unknown variant {variant}"),
        }
    }

    fn keep_as_expected(&mut self) {
        self.expected = self.a.as_slice().to_vec();
    }

    fn matches_expected(&self) -> bool {
        self.a.as_slice() == self.expected.as_slice()
    }

    fn peer_construct(&self) -> &'static str {
        "depend"
    }

    fn peer_constructs(&self) -> Vec<&'static str> {
        match self.kind {
            Factor::Cholesky => vec!["depend", "depend+priority"],
            Factor::Lu => vec!["depend"],
        }
    }

    fn run_driver_construct(
        &mut self,
        d: &Driver,
        construct: &str,
        threads: usize,
        pin: bool,
    ) -> Result<f64> {
        match (construct, self.kind) {
            ("depend", _) => self.run_driver(d, threads, pin),
            ("depend+priority", Factor::Cholesky) => self.run_tiled(d, true, threads, pin),
            _ => anyhow::bail!("no `{construct}` driver for this program"),
        }
    }

    fn run_driver(&mut self, d: &Driver, threads: usize, pin: bool) -> Result<f64> {
        self.run_tiled(d, false, threads, pin)
    }

    fn result_hash(&self) -> u64 {
        hash_words(self.a.as_slice().iter().map(|x| x.to_bits()))
    }
}

impl Tiled {
    /// Runs the factorization on the driver `d`; `prio`: Cholesky with `priority` clauses.
    fn run_tiled(&mut self, d: &Driver, prio: bool, threads: usize, pin: bool) -> Result<f64> {
        type T1 = unsafe extern "C" fn(*mut f64, i64, i64);
        type T2 = unsafe extern "C" fn(*const f64, *mut f64, i64, i64);
        type T3 = unsafe extern "C" fn(*const f64, *const f64, *mut f64, i64, i64);
        type F = unsafe extern "C" fn(*mut f64, i64, i64, i64, T1, T2, T2, T3, i32, i32) -> f64;
        let (name, k1, k2a, k2b, k3): (_, T1, T2, T2, T3) = match self.kind {
            Factor::Cholesky => (
                if prio {
                    "taskpools_suite_cholesky_prio"
                } else {
                    "taskpools_suite_cholesky"
                },
                kernels::ffi::potrf,
                kernels::ffi::trsm_llt,
                kernels::ffi::syrk,
                kernels::ffi::gemm_nt,
            ),
            Factor::Lu => (
                "taskpools_suite_lu",
                kernels::ffi::getrf,
                kernels::ffi::trsm_lower,
                kernels::ffi::trsm_upper,
                kernels::ffi::gemm_nn_sub,
            ),
        };
        // SAFETY: suite_omp.c and starpu.c define both factorizations with this signature.
        let f: F = unsafe { d.function(name)? };
        let (n, ld, bs) = (self.n as i64, self.ld as i64, self.bs as i64);
        let a = self.a.as_mut_slice();
        // SAFETY: `a` holds the n×n matrix; the driver's `depend` clauses order every two
        // kernel calls on the same tile, and it returns after all.
        let secs = unsafe {
            f(
                a.as_mut_ptr(),
                n,
                ld,
                bs,
                k1,
                k2a,
                k2b,
                k3,
                threads as i32,
                i32::from(pin),
            )
        };
        if secs == -2.0 {
            anyhow::bail!(
                "the OpenMP runtime ignores `priority` (OMP_MAX_TASK_PRIORITY is below 2)"
            );
        }
        Ok(secs)
    }
}
