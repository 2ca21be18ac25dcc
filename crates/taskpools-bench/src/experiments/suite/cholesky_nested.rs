//! The tiled Cholesky factorization on two levels of tiles: a task per kernel on tiles of
//! `2 bs` (the outer level), each of which spawns the kernel's blocked form on its tiles'
//! sub-tiles of `bs` (the inner level). Strong nesting (`dataflow nested`) gives each outer
//! task its tiles, and the task's end releases them all; weak nesting (`dataflow weak`) gives
//! it weak sub-matrices ([`Sub::weak_inout`](taskpools::dataflow::Sub::weak_inout)), so each
//! inner task waits only for the inner tasks of earlier outer tasks on its own sub-tiles, and
//! a tile is released as its inner tasks finish, not when its outer task ends (OmpSs-2's
//! model).
//!
//! Every sub-tile receives the same kernel calls with the same operands in the same order as
//! in the one-level factorization with tiles of `bs` (the outer steps, then the inner ones,
//! go through the sub-columns in order), so the result is the sequential one bit for bit.

use taskpools::dataflow::{self, Config, Matrix, MatrixRef, Scope};

use super::kernels;

/// Whether the outer tasks hand their tiles on weakly.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Nesting {
    Strong,
    Weak,
}

/// The factorization of the `n` × `n` matrix `a` (rows `ld` apart), outer tiles of `2 bs`,
/// inner tiles of `bs`.
pub(super) fn cholesky_nested(
    a: &mut [f64],
    n: usize,
    ld: usize,
    bs: usize,
    config: Config,
    nesting: Nesting,
) {
    let obs = 2 * bs;
    let nt = n.div_ceil(obs);
    dataflow::scope_with(config, |df| {
        let m = df.region(a).matrix_ld(n, n, ld);
        let t = |i: usize, j: usize| m.tile(i, j, obs);
        for k in 0..nt {
            match nesting {
                Nesting::Strong => df.spawn(t(k, k).inout(), move |df, a| {
                    potrf(df, df.matrix(a), bs);
                }),
                Nesting::Weak => df.spawn(t(k, k).weak_inout(), move |df, a| {
                    potrf(df, df.weak_matrix(a), bs);
                }),
            };
            for i in k + 1..nt {
                match nesting {
                    Nesting::Strong => {
                        df.spawn((t(k, k).read(), t(i, k).inout()), move |df, (l, b)| {
                            trsm(df, df.matrix_ref(l), df.matrix(b), bs);
                        })
                    }
                    Nesting::Weak => df.spawn(
                        (t(k, k).weak_read(), t(i, k).weak_inout()),
                        move |df, (l, b)| trsm(df, df.weak_matrix_ref(l), df.weak_matrix(b), bs),
                    ),
                };
            }
            for i in k + 1..nt {
                match nesting {
                    Nesting::Strong => {
                        df.spawn((t(i, k).read(), t(i, i).inout()), move |df, (x, c)| {
                            syrk(df, df.matrix_ref(x), df.matrix(c), bs);
                        })
                    }
                    Nesting::Weak => df.spawn(
                        (t(i, k).weak_read(), t(i, i).weak_inout()),
                        move |df, (x, c)| syrk(df, df.weak_matrix_ref(x), df.weak_matrix(c), bs),
                    ),
                };
                for j in k + 1..i {
                    match nesting {
                        Nesting::Strong => df.spawn(
                            (t(i, k).read(), t(j, k).read(), t(i, j).inout()),
                            move |df, (x, y, c)| {
                                gemm(df, df.matrix_ref(x), df.matrix_ref(y), df.matrix(c), bs)
                            },
                        ),
                        Nesting::Weak => df.spawn(
                            (
                                t(i, k).weak_read(),
                                t(j, k).weak_read(),
                                t(i, j).weak_inout(),
                            ),
                            move |df, (x, y, c)| {
                                let (x, y) = (df.weak_matrix_ref(x), df.weak_matrix_ref(y));
                                gemm(df, x, y, df.weak_matrix(c), bs)
                            },
                        ),
                    };
                }
            }
        }
    });
}

/// Sub-tiles per side of a tile of `rows` (the last one smaller).
fn subs(rows: usize, bs: usize) -> usize {
    rows.div_ceil(bs)
}

/// `A = L Lᵀ` of a diagonal tile: the one-level factorization on its sub-tiles.
fn potrf<'s>(df: &Scope<'s, '_>, a: Matrix<'s, f64>, bs: usize) {
    let nb = subs(a.rows(), bs);
    let t = |i: usize, j: usize| a.tile(i, j, bs);
    for k in 0..nb {
        df.spawn(t(k, k).inout(), |_, a| kernels::potrf(a));
        for i in k + 1..nb {
            df.spawn((t(k, k).read(), t(i, k).inout()), |_, (l, b)| {
                kernels::trsm_llt(l, b)
            });
        }
        for i in k + 1..nb {
            df.spawn((t(i, k).read(), t(i, i).inout()), |_, (x, c)| {
                kernels::syrk(x, c)
            });
            for j in k + 1..i {
                df.spawn(
                    (t(i, k).read(), t(j, k).read(), t(i, j).inout()),
                    |_, (x, y, c)| kernels::gemm_nt(x, y, c),
                );
            }
        }
    }
}

/// `B := B L⁻ᵀ`, sub-column by sub-column: each takes the updates of the columns before it,
/// then its own triangular solve.
fn trsm<'s>(df: &Scope<'s, '_>, l: MatrixRef<'s, f64>, b: Matrix<'s, f64>, bs: usize) {
    let (rows, cols) = (subs(b.rows(), bs), subs(b.cols(), bs));
    for q in 0..cols {
        for p in 0..rows {
            for r in 0..q {
                df.spawn(
                    (
                        b.tile(p, r, bs).read(),
                        l.tile(q, r, bs).read(),
                        b.tile(p, q, bs).inout(),
                    ),
                    |_, (x, y, c)| kernels::gemm_nt(x, y, c),
                );
            }
            df.spawn(
                (l.tile(q, q, bs).read(), b.tile(p, q, bs).inout()),
                |_, (l, c)| kernels::trsm_llt(l, c),
            );
        }
    }
}

/// `C := C − A Aᵀ` on the lower triangle of a diagonal tile.
fn syrk<'s>(df: &Scope<'s, '_>, x: MatrixRef<'s, f64>, c: Matrix<'s, f64>, bs: usize) {
    let (nb, depth) = (subs(c.rows(), bs), subs(x.cols(), bs));
    for r in 0..depth {
        for p in 0..nb {
            df.spawn(
                (x.tile(p, r, bs).read(), c.tile(p, p, bs).inout()),
                |_, (x, c)| kernels::syrk(x, c),
            );
            for q in 0..p {
                df.spawn(
                    (
                        x.tile(p, r, bs).read(),
                        x.tile(q, r, bs).read(),
                        c.tile(p, q, bs).inout(),
                    ),
                    |_, (x, y, c)| kernels::gemm_nt(x, y, c),
                );
            }
        }
    }
}

/// `C := C − A Bᵀ` on a tile below the diagonal.
fn gemm<'s>(
    df: &Scope<'s, '_>,
    x: MatrixRef<'s, f64>,
    y: MatrixRef<'s, f64>,
    c: Matrix<'s, f64>,
    bs: usize,
) {
    let (rows, cols, depth) = (subs(c.rows(), bs), subs(c.cols(), bs), subs(x.cols(), bs));
    for r in 0..depth {
        for p in 0..rows {
            for q in 0..cols {
                df.spawn(
                    (
                        x.tile(p, r, bs).read(),
                        y.tile(q, r, bs).read(),
                        c.tile(p, q, bs).inout(),
                    ),
                    |_, (x, y, c)| kernels::gemm_nt(x, y, c),
                );
            }
        }
    }
}
