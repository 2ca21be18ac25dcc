//! Block matrix multiply with locality hints (LASSI): 8 quadrant products, then 4
//! additions, at the place of their C quadrant (best) or the additions elsewhere (worst).

use anyhow::{bail, Result};
use taskpools::dataflow::{TileMut, TileRef};

use super::spawn::{Hints, Rt};
use super::Locality;
use crate::experiments::suite::kernels;

pub(super) struct Matmul {
    n: usize,
    leaf: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    expected: Vec<f64>,
}

/// Quadrant q of C: its place under best locality (0 and 3 at place 0, 1 and 2 at place 1).
const QUADRANT_PLACE: [usize; 4] = [0, 1, 1, 0];

impl Matmul {
    pub(super) fn new(n: usize, leaf: usize) -> Self {
        let mut rng = fastrand::Rng::with_seed(11);
        let a: Vec<f64> = (0..n * n).map(|_| rng.f64() - 0.5).collect();
        let b: Vec<f64> = (0..n * n).map(|_| rng.f64() - 0.5).collect();
        let mut m = Matmul {
            n,
            leaf,
            a,
            b,
            c: vec![0.0; n * n],
            expected: Vec::new(),
        };
        let mut c = vec![0.0; n * n];
        seq_mul(
            TileRef::from_slice(&m.a, n, n),
            TileRef::from_slice(&m.b, n, n),
            TileMut::from_slice(&mut c, n, n),
            leaf,
        );
        m.expected = c;
        m
    }

    pub(super) fn run(&mut self, rt: Rt<'_>, h: Hints) -> Result<()> {
        let (n, leaf) = (self.n, self.leaf);
        let a = TileRef::from_slice(&self.a, n, n);
        let b = TileRef::from_slice(&self.b, n, n);
        let c = TileMut::from_slice(&mut self.c, n, n);
        rt.scope(|s| {
            s.spawn(h.pick(0, 0), move |_| {
                par_mul(rt, h, a, b, c, leaf, None, 1)
            })
        });
        if self.c != self.expected {
            bail!("matmul: the result differs from the sequential product");
        }
        Ok(())
    }
}

/// The products of a level: (C quadrant, A quadrant, B quadrant, into the temporary?):
/// `C_q = A_q0 B_0q + A_q1 B_1q`, the second product into the temporary.
const PRODUCTS: [(usize, usize, usize, bool); 8] = [
    (0, 0, 0, false),
    (0, 1, 2, true),
    (1, 0, 1, false),
    (1, 1, 3, true),
    (2, 2, 0, false),
    (2, 3, 2, true),
    (3, 2, 1, false),
    (3, 3, 3, true),
];

/// `C := A B` at a leaf.
fn leaf_mul(a: TileRef<'_, f64>, b: TileRef<'_, f64>, mut c: TileMut<'_, f64>) {
    for r in 0..c.rows() {
        c.row_mut(r).fill(0.0);
    }
    kernels::gemm_nn_add(a, b, c);
}

/// `C += T`.
fn add(mut c: TileMut<'_, f64>, t: TileRef<'_, f64>) {
    for r in 0..c.rows() {
        for (x, y) in c.row_mut(r).iter_mut().zip(t.row(r)) {
            *x += y;
        }
    }
}

fn seq_mul(a: TileRef<'_, f64>, b: TileRef<'_, f64>, c: TileMut<'_, f64>, leaf: usize) {
    let m = c.rows();
    if m <= leaf {
        return leaf_mul(a, b, c);
    }
    let h = m / 2;
    let mut t = vec![0.0; m * m];
    let (qa, qb) = (a.quadrants(h, h), b.quadrants(h, h));
    let mut qc = c.quadrants(h, h);
    let mut qt = TileMut::from_slice(&mut t, m, m).quadrants(h, h);
    for (ci, ai, bi, into_t) in PRODUCTS {
        let dst = if into_t {
            qt[ci].reborrow()
        } else {
            qc[ci].reborrow()
        };
        seq_mul(qa[ai], qb[bi], dst, leaf);
    }
    for q in 0..4 {
        add(qc[q].reborrow(), qt[q].as_ref());
    }
}

/// `C := A B`, the 8 products in parallel, then the 4 additions. `place` is the place of
/// this product's C quadrant at the top level (`None` above it); `salt` varies the random
/// variant's draws.
#[allow(clippy::too_many_arguments)]
fn par_mul(
    rt: Rt<'_>,
    h: Hints,
    a: TileRef<'_, f64>,
    b: TileRef<'_, f64>,
    c: TileMut<'_, f64>,
    leaf: usize,
    place: Option<usize>,
    salt: u64,
) {
    let m = c.rows();
    if m <= leaf {
        return leaf_mul(a, b, c);
    }
    let hh = m / 2;
    let mut t = vec![0.0; m * m];
    let (qa, qb) = (a.quadrants(hh, hh), b.quadrants(hh, hh));
    let mut qc = c.quadrants(hh, hh);
    let mut qt = TileMut::from_slice(&mut t, m, m).quadrants(hh, hh);
    // Where quadrant q's products run: at the top level its best place, below it the place
    // of the enclosing quadrant.
    let mult_place = |q: usize| place.unwrap_or(QUADRANT_PLACE[q] % h.places);
    let add_place = |q: usize| match h.loc {
        Locality::Worst => (mult_place(q) + 1) % h.places,
        _ => mult_place(q),
    };
    {
        let [c0, c1, c2, c3] = &mut qc;
        let [t0, t1, t2, t3] = &mut qt;
        // (destination, C quadrant, A quadrant, B quadrant): C_q = A_q0 B_0q + A_q1 B_1q.
        let products = [
            (c0, 0, 0, 0),
            (t0, 0, 1, 2),
            (c1, 1, 0, 1),
            (t1, 1, 1, 3),
            (c2, 2, 2, 0),
            (t2, 2, 3, 2),
            (c3, 3, 2, 1),
            (t3, 3, 3, 3),
        ];
        rt.nested(|s| {
            for (k, (dst, ci, ai, bi)) in products.into_iter().enumerate() {
                let dst = dst.reborrow();
                let (x, y) = (qa[ai], qb[bi]);
                let p = mult_place(ci);
                let salt = salt.wrapping_mul(16) + k as u64;
                s.spawn(h.pick(p, salt), move |_| {
                    par_mul(rt, h, x, y, dst, leaf, Some(p), salt)
                });
            }
        });
    }
    rt.nested(|s| {
        for (q, (cq, tq)) in qc.into_iter().zip(qt).enumerate() {
            let salt = salt.wrapping_mul(16) + 8 + q as u64;
            s.spawn(h.pick(add_place(q), salt), move |_| add(cq, tq.into_ref()));
        }
    });
}
