//! Matrix multiply, recursive: `C += A B` on `n` × `n` matrices split into quadrants down to
//! leaves of `leaf` × `leaf`; each of C's quadrants gets two products, one after the other.
//! The data-flow variant spawns all eight products of a level at once, each declaring its C
//! quadrant `inout` (A and B are only read: captured, PARTEE's `safe`), so the second
//! product into a quadrant waits for the first and nothing else waits; ND (and rayon, and
//! OpenMP) run the first four products in parallel, sync, then the other four. Rows are
//! [`padded`] by a cache line.

use taskpools::dataflow::{self, Config, Scope, TileMut, TileRef};

use anyhow::Result;

use super::kernels;
use super::{padded, timed, Aligned, Ctx, Join, Ours, Program, Rayon};
use crate::experiments::drivers::{process::hash_words, Driver};

/// A, B and C.
pub struct Matmul {
    n: usize,
    ld: usize,
    leaf: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Aligned,
    expected: Vec<f64>,
}

impl Matmul {
    /// Random `n` × `n` A and B (`n / leaf` a power of two).
    pub fn new(n: usize, leaf: usize) -> Self {
        let ld = padded(n);
        let mut rng = fastrand::Rng::with_seed(13);
        let mut a = vec![0.0; n * ld];
        let mut b = vec![0.0; n * ld];
        a.iter_mut().for_each(|x| *x = rng.f64() - 0.5);
        b.iter_mut().for_each(|x| *x = rng.f64() - 0.5);
        Matmul {
            n,
            ld,
            leaf,
            a,
            b,
            c: Aligned::new(n * ld),
            expected: Vec::new(),
        }
    }
}

type Q<'a> = [TileRef<'a, f64>; 4];

/// The eight products of a level: (C quadrant, A quadrant, B quadrant), the first four before
/// the last four.
const PRODUCTS: [(usize, usize, usize); 8] = [
    (0, 0, 0),
    (1, 0, 1),
    (2, 2, 0),
    (3, 2, 1),
    (0, 1, 2),
    (1, 1, 3),
    (2, 3, 2),
    (3, 3, 3),
];

fn sequential(a: TileRef<'_, f64>, b: TileRef<'_, f64>, c: TileMut<'_, f64>, leaf: usize) {
    let m = c.rows();
    if m <= leaf {
        return kernels::gemm_nn_add(a, b, c);
    }
    let h = m / 2;
    let (qa, qb): (Q, Q) = (a.quadrants(h, h), b.quadrants(h, h));
    let mut qc = c.quadrants(h, h);
    for (ci, ai, bi) in PRODUCTS {
        sequential(qa[ai], qb[bi], qc[ci].reborrow(), leaf);
    }
}

/// ND (and rayon): the first four products in parallel, then the other four.
fn nd<J: Join>(a: TileRef<'_, f64>, b: TileRef<'_, f64>, c: TileMut<'_, f64>, leaf: usize) {
    let m = c.rows();
    if m <= leaf {
        return kernels::gemm_nn_add(a, b, c);
    }
    let h = m / 2;
    let (qa, qb): (Q, Q) = (a.quadrants(h, h), b.quadrants(h, h));
    let [mut c0, mut c1, mut c2, mut c3] = c.quadrants(h, h);
    for half in [0, 4] {
        let p = |k: usize| PRODUCTS[half + k];
        let (x0, x1, x2, x3) = (c0.reborrow(), c1.reborrow(), c2.reborrow(), c3.reborrow());
        J::join(
            || {
                J::join(
                    || nd::<J>(qa[p(0).1], qb[p(0).2], x0, leaf),
                    || nd::<J>(qa[p(1).1], qb[p(1).2], x1, leaf),
                )
            },
            || {
                J::join(
                    || nd::<J>(qa[p(2).1], qb[p(2).2], x2, leaf),
                    || nd::<J>(qa[p(3).1], qb[p(3).2], x3, leaf),
                )
            },
        );
    }
}

/// One level of the data-flow version, inside the task that owns `c`.
fn dataflow_level<'t>(
    df: &Scope<'t, '_>,
    a: TileRef<'t, f64>,
    b: TileRef<'t, f64>,
    c: TileMut<'t, f64>,
    leaf: usize,
) {
    let m = c.rows();
    if m <= leaf {
        return kernels::gemm_nn_add(a, b, c);
    }
    let h = m / 2;
    let (qa, qb): (Q, Q) = (a.quadrants(h, h), b.quadrants(h, h));
    let mc = df.matrix(c);
    for (ci, ai, bi) in PRODUCTS {
        let (x, y) = (qa[ai], qb[bi]);
        let q = mc.sub((ci / 2) * h, (ci % 2) * h, h, h);
        df.spawn(q.inout(), move |df, c| dataflow_level(df, x, y, c, leaf));
    }
}

/// `n` × `n` of an `n` × `ld` matrix.
fn square(a: &[f64], n: usize, ld: usize) -> TileRef<'_, f64> {
    TileRef::from_slice(a, n, ld).split_at_col(n).0
}

/// `n` × `n` of an `n` × `ld` matrix, mutable.
fn square_mut(c: &mut [f64], n: usize, ld: usize) -> TileMut<'_, f64> {
    TileMut::from_slice(c, n, ld).split_at_col(n).0
}

fn dataflow_run(
    (a, b, c): (TileRef<'_, f64>, TileRef<'_, f64>, &mut [f64]),
    (n, ld): (usize, usize),
    leaf: usize,
    config: Config,
) {
    dataflow::scope_with(config, |df| {
        let c = df.region(c).matrix_ld(n, n, ld);
        df.spawn(c.sub(0, 0, n, n).inout(), move |df, c| {
            dataflow_level(df, a, b, c, leaf)
        });
    });
}

impl Program for Matmul {
    fn setup(&self) -> String {
        format!("{0}x{0} doubles, leaves of {1}x{1}", self.n, self.leaf)
    }

    fn variants(&self) -> Vec<&'static str> {
        vec!["dataflow", "nd", "rayon"]
    }

    fn reset(&mut self) {
        self.c.as_mut_slice().fill(0.0);
    }

    fn run(&mut self, variant: &str, ctx: &Ctx<'_>) -> Option<f64> {
        let (n, ld, leaf) = (self.n, self.ld, self.leaf);
        let (a, b) = (&self.a[..], &self.b[..]);
        let c = self.c.as_mut_slice();
        let (ta, tb) = (square(a, n, ld), square(b, n, ld));
        match variant {
            "sequential" => timed(|| sequential(ta, tb, square_mut(c, n, ld), leaf)),
            "dataflow" => timed(|| {
                ctx.rt
                    .install(|| dataflow_run((ta, tb, c), (n, ld), leaf, ctx.dataflow))
            }),
            "nd" => timed(|| {
                ctx.rt
                    .install(|| nd::<Ours>(ta, tb, square_mut(c, n, ld), leaf))
            }),
            "rayon" => timed(|| {
                ctx.pool
                    .install(|| nd::<Rayon>(ta, tb, square_mut(c, n, ld), leaf))
            }),
            _ => unreachable!("unknown variant {variant}"),
        }
    }

    fn keep_as_expected(&mut self) {
        self.expected = self.c.as_slice().to_vec();
    }

    fn matches_expected(&self) -> bool {
        self.c.as_slice() == self.expected.as_slice()
    }

    fn peer_construct(&self) -> &'static str {
        "tasks"
    }

    fn run_driver(&mut self, d: &Driver, threads: usize, pin: bool) -> Result<f64> {
        type K = unsafe extern "C" fn(*const f64, *const f64, *mut f64, i64, i64);
        type F = unsafe extern "C" fn(
            *const f64,
            *const f64,
            *mut f64,
            i64,
            i64,
            i64,
            K,
            i32,
            i32,
        ) -> f64;
        // SAFETY: every suite driver that has it (suite_omp.c; starpu.c for the programs
        // with dependences) defines it with this signature.
        let f: F = unsafe { d.function("taskpools_suite_matmul")? };
        let (n, ld, leaf) = (self.n, self.ld, self.leaf);
        let (a, b, c) = (&self.a[..], &self.b[..], self.c.as_mut_slice());
        // SAFETY: a, b and c hold n×n doubles; the driver's tasks write disjoint quadrants of
        // c between taskwaits, and it returns after all of them.
        Ok(unsafe {
            f(
                a.as_ptr(),
                b.as_ptr(),
                c.as_mut_ptr(),
                n as i64,
                ld as i64,
                leaf as i64,
                kernels::ffi::gemm_nn_add,
                threads as i32,
                i32::from(pin),
            )
        })
    }

    fn result_hash(&self) -> u64 {
        hash_words(self.c.as_slice().iter().map(|x| x.to_bits()))
    }
}
