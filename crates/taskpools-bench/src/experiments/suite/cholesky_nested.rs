//! The tiled Cholesky factorization's data-flow spawns: the one-level program ([`potrf`],
//! which `tiled.rs` runs as `dataflow` and `dataflow prio`), and the same on two levels of
//! tiles: a task per kernel on tiles of `2 bs` (the outer level), each of which spawns the
//! kernel's blocked form on its tiles' sub-tiles of `bs` (the inner level). Strong nesting (`dataflow nested`) gives each outer
//! task its tiles, and a later outer task on them starts when the earlier one has ended, its
//! inner tasks included. Weak nesting (`dataflow weak`) has each outer task declare every
//! sub-tile of its tiles as a weak part of its own
//! ([`Sub::weak_inout`](taskpools::dataflow::Sub::weak_inout)): the outer tasks start at once,
//! and each inner task waits only for the earlier inner tasks on its own sub-tiles, as
//! release is per weak part (OmpSs-2's model).
//!
//! Every sub-tile receives the same kernel calls with the same operands in the same order as
//! in the one-level factorization with tiles of `bs` (the outer steps, then the inner ones,
//! go through the sub-columns in order), so the result is the sequential one bit for bit.

use taskpools::dataflow::{self, Accesses, Config, Matrix, Scope, Sub, SubRef};

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
    match nesting {
        Nesting::Strong => strong(a, n, ld, bs, config),
        Nesting::Weak => weak(a, n, ld, bs, config),
    }
}

/// Sub-tiles per side of a tile side of `len` (the last one smaller).
fn subs(len: usize, bs: usize) -> usize {
    len.div_ceil(bs)
}

fn strong(a: &mut [f64], n: usize, ld: usize, bs: usize, config: Config) {
    let nt = n.div_ceil(2 * bs);
    dataflow::scope_with(config, |df| {
        let m = df.region(a).matrix_ld(n, n, ld);
        let t = |i: usize, j: usize| m.tile(i, j, 2 * bs);
        for k in 0..nt {
            df.spawn(t(k, k).inout(), move |df, a| {
                let a = df.matrix(a);
                potrf(df, |p, q| a.tile(p, q, bs), subs(a.rows(), bs), false);
            });
            for i in k + 1..nt {
                df.spawn((t(k, k).read(), t(i, k).inout()), move |df, (l, b)| {
                    let (l, b) = (df.matrix_ref(l), df.matrix(b));
                    let (rows, cols) = (subs(b.rows(), bs), subs(b.cols(), bs));
                    trsm(
                        df,
                        |p, q| l.tile(p, q, bs),
                        |p, q| b.tile(p, q, bs),
                        rows,
                        cols,
                    );
                });
            }
            for i in k + 1..nt {
                df.spawn((t(i, k).read(), t(i, i).inout()), move |df, (x, c)| {
                    let (x, c) = (df.matrix_ref(x), df.matrix(c));
                    let (nb, depth) = (subs(c.rows(), bs), subs(x.cols(), bs));
                    syrk(
                        df,
                        |p, q| x.tile(p, q, bs),
                        |p, q| c.tile(p, q, bs),
                        nb,
                        depth,
                    );
                });
                for j in k + 1..i {
                    df.spawn(
                        (t(i, k).read(), t(j, k).read(), t(i, j).inout()),
                        move |df, (x, y, c)| {
                            let (x, y) = (df.matrix_ref(x), df.matrix_ref(y));
                            let c = df.matrix(c);
                            let shape =
                                (subs(c.rows(), bs), subs(c.cols(), bs), subs(x.cols(), bs));
                            gemm(
                                df,
                                |p, q| x.tile(p, q, bs),
                                |p, q| y.tile(p, q, bs),
                                |p, q| c.tile(p, q, bs),
                                shape,
                            );
                        },
                    );
                }
            }
        }
    });
}

fn weak(a: &mut [f64], n: usize, ld: usize, bs: usize, config: Config) {
    let nt = n.div_ceil(2 * bs);
    dataflow::scope_with(config, |df| {
        let m = df.region(a).matrix_ld(n, n, ld);
        let w = |i, j| {
            let (t, cols) = sub_tiles(m, n, bs, i, j);
            (t.into_iter().map(Sub::weak_inout).collect::<Vec<_>>(), cols)
        };
        let r = |i, j| {
            let (t, cols) = sub_tiles(m, n, bs, i, j);
            (t.into_iter().map(Sub::weak_read).collect::<Vec<_>>(), cols)
        };
        for k in 0..nt {
            let (akk, cols) = w(k, k);
            df.spawn(akk, move |df, a| {
                let a: Vec<_> = a.into_iter().map(|a| df.weak_matrix(a)).collect();
                potrf(df, |p, q| a[p * cols + q].tile(0, 0, bs), cols, false);
            });
            for i in k + 1..nt {
                let ((lkk, lc), (bik, bc)) = (r(k, k), w(i, k));
                df.spawn((lkk, bik), move |df, (l, b)| {
                    let l: Vec<_> = l.into_iter().map(|l| df.weak_matrix_ref(l)).collect();
                    let b: Vec<_> = b.into_iter().map(|b| df.weak_matrix(b)).collect();
                    trsm(
                        df,
                        |p, q| l[p * lc + q].tile(0, 0, bs),
                        |p, q| b[p * bc + q].tile(0, 0, bs),
                        b.len() / bc,
                        bc,
                    );
                });
            }
            for i in k + 1..nt {
                let ((xik, xc), (cii, cc)) = (r(i, k), w(i, i));
                df.spawn((xik, cii), move |df, (x, c)| {
                    let x: Vec<_> = x.into_iter().map(|x| df.weak_matrix_ref(x)).collect();
                    let c: Vec<_> = c.into_iter().map(|c| df.weak_matrix(c)).collect();
                    syrk(
                        df,
                        |p, q| x[p * xc + q].tile(0, 0, bs),
                        |p, q| c[p * cc + q].tile(0, 0, bs),
                        cc,
                        xc,
                    );
                });
                for j in k + 1..i {
                    let ((xik, xc), (yjk, yc), (cij, cc)) = (r(i, k), r(j, k), w(i, j));
                    df.spawn((xik, yjk, cij), move |df, (x, y, c)| {
                        let x: Vec<_> = x.into_iter().map(|x| df.weak_matrix_ref(x)).collect();
                        let y: Vec<_> = y.into_iter().map(|y| df.weak_matrix_ref(y)).collect();
                        let c: Vec<_> = c.into_iter().map(|c| df.weak_matrix(c)).collect();
                        gemm(
                            df,
                            |p, q| x[p * xc + q].tile(0, 0, bs),
                            |p, q| y[p * yc + q].tile(0, 0, bs),
                            |p, q| c[p * cc + q].tile(0, 0, bs),
                            (c.len() / cc, cc, xc),
                        );
                    });
                }
            }
        }
    });
}

/// Outer tile `(i, j)`'s sub-tiles of `bs`, row by row, and how many per row (the matrix is
/// `n` × `n`, its outer tiles `2 bs`).
fn sub_tiles<'s>(
    m: Matrix<'s, f64>,
    n: usize,
    bs: usize,
    i: usize,
    j: usize,
) -> (Vec<Sub<'s, f64>>, usize) {
    let side = |i: usize| subs((2 * bs).min(n - i * 2 * bs), bs);
    let (rows, cols) = (side(i), side(j));
    let tiles = (0..rows * cols)
        .map(|s| m.tile(2 * i + s / cols, 2 * j + s % cols, bs))
        .collect();
    (tiles, cols)
}

/// The one-level tiled factorization of `nb` × `nb` tiles (`a(i, j)` is tile `(i, j)`): the
/// whole program of `dataflow` and `dataflow prio`, and each diagonal outer task's inner
/// work here. With `prio`, the critical path's tasks (the diagonal `potrf` and the panel's
/// `trsm`s) get priorities 2 and 1 (the others 0), as in the OpenMP `priority` examples.
pub(super) fn potrf<'s>(
    df: &Scope<'s, '_>,
    a: impl Fn(usize, usize) -> Sub<'s, f64>,
    nb: usize,
    prio: bool,
) {
    for k in 0..nb {
        spawn_at(df, prio.then_some(2), a(k, k).inout(), |_, a| {
            kernels::potrf(a)
        });
        for i in k + 1..nb {
            spawn_at(
                df,
                prio.then_some(1),
                (a(k, k).read(), a(i, k).inout()),
                |_, (l, b)| kernels::trsm_llt(l, b),
            );
        }
        for i in k + 1..nb {
            df.spawn((a(i, k).read(), a(i, i).inout()), |_, (x, c)| {
                kernels::syrk(x, c)
            });
            for j in k + 1..i {
                df.spawn(
                    (a(i, k).read(), a(j, k).read(), a(i, j).inout()),
                    |_, (x, y, c)| kernels::gemm_nt(x, y, c),
                );
            }
        }
    }
}

/// Spawns at priority `p`, or as a plain spawn (no ready heaps) without one.
fn spawn_at<'s, A, F>(df: &Scope<'s, '_>, p: Option<i16>, accesses: A, f: F)
where
    A: Accesses,
    F: for<'t> FnOnce(&'t Scope<'t, 's>, A::Data<'t>) + Send + 's,
{
    match p {
        Some(p) => df.spawn_with_priority(p, accesses, f),
        None => df.spawn(accesses, f),
    }
}

/// `B := B L⁻ᵀ` on `rows` × `cols` sub-tiles, sub-column by sub-column: each takes the
/// updates of the columns before it, then its own triangular solve.
fn trsm<'s>(
    df: &Scope<'s, '_>,
    l: impl Fn(usize, usize) -> SubRef<'s, f64>,
    b: impl Fn(usize, usize) -> Sub<'s, f64>,
    rows: usize,
    cols: usize,
) {
    for q in 0..cols {
        for p in 0..rows {
            for r in 0..q {
                df.spawn(
                    (b(p, r).read(), l(q, r).read(), b(p, q).inout()),
                    |_, (x, y, c)| kernels::gemm_nt(x, y, c),
                );
            }
            df.spawn((l(q, q).read(), b(p, q).inout()), |_, (l, c)| {
                kernels::trsm_llt(l, c)
            });
        }
    }
}

/// `C := C − A Aᵀ` on the lower triangle of a diagonal tile of `nb` × `nb` sub-tiles, `A`
/// being `depth` sub-tiles wide.
fn syrk<'s>(
    df: &Scope<'s, '_>,
    x: impl Fn(usize, usize) -> SubRef<'s, f64>,
    c: impl Fn(usize, usize) -> Sub<'s, f64>,
    nb: usize,
    depth: usize,
) {
    for r in 0..depth {
        for p in 0..nb {
            df.spawn((x(p, r).read(), c(p, p).inout()), |_, (x, c)| {
                kernels::syrk(x, c)
            });
            for q in 0..p {
                df.spawn(
                    (x(p, r).read(), x(q, r).read(), c(p, q).inout()),
                    |_, (x, y, c)| kernels::gemm_nt(x, y, c),
                );
            }
        }
    }
}

/// `C := C − A Bᵀ` on a tile below the diagonal; `shape`: its sub-tile rows and columns, and
/// the sub-tiles of `A` and `B` per row.
fn gemm<'s>(
    df: &Scope<'s, '_>,
    x: impl Fn(usize, usize) -> SubRef<'s, f64>,
    y: impl Fn(usize, usize) -> SubRef<'s, f64>,
    c: impl Fn(usize, usize) -> Sub<'s, f64>,
    shape: (usize, usize, usize),
) {
    let (rows, cols, depth) = shape;
    for r in 0..depth {
        for p in 0..rows {
            for q in 0..cols {
                df.spawn(
                    (x(p, r).read(), y(q, r).read(), c(p, q).inout()),
                    |_, (x, y, c)| kernels::gemm_nt(x, y, c),
                );
            }
        }
    }
}
