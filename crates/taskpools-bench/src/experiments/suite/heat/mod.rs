//! Heat diffusion: a 5-point stencil over an `n` × `n` grid for a number of steps, two arrays
//! swapped each step, one task per band of rows. The data-flow variant spawns every step's
//! bands at once: a band waits only for the three bands of the previous step it reads (and
//! for the readers of the band it overwrites), so steps overlap. It runs at two look-up-table
//! granularities: PARTEE's 2 KiB blocks (a band of rows is hundreds of blocks, each a table
//! entry: PARTEE's §4 overhead) and exact ranges indexed by one block per band. ND syncs
//! after each step; rayon runs each step as a parallel loop over the bands.
//!
//! The `tiles` variants are the same sweep blocked in two dimensions (a blocked Jacobi, as an
//! OpenMP port writes it): square tiles of `tile` × `tile`, each task writing its tile and
//! reading its tile and the four neighbours the grid has (whole tiles: the declarations are
//! the tiles themselves), every step's tiles spawned at once; the same with each task
//! declaring its tile and halo as one read (`halo tiles`: sub-matrices that overlap in part,
//! which the exact tables take in grid mode); and the same tiles with a fork-join scope per
//! step.
//!
//! The `nested` and `weak` variants nest the band sweep two levels, an outer task per group
//! of bands and a child per band, with strong and with weak accesses (`nested.rs`).

use rayon::prelude::*;
use taskpools::dataflow::{self, Config, TileMut, TileRef};
use taskpools::forkjoin::scope;

use anyhow::Result;

use super::kernels::{self, Around};
use super::{timed, Aligned, Ctx, Program};

mod nested;
use crate::experiments::drivers::{process::hash_words, Driver};

/// The grid, its copy and the result.
pub struct Heat {
    n: usize,
    steps: usize,
    band: usize,
    tile: usize,
    input: Vec<f64>,
    a: Aligned,
    b: Aligned,
    expected: Vec<f64>,
}

impl Heat {
    /// An `n` × `n` grid, hot on its left and top edges, random inside; `steps` steps of
    /// bands of `band` rows (or tiles of `tile` × `tile`).
    pub fn new(n: usize, steps: usize, band: usize, tile: usize) -> Self {
        let mut rng = fastrand::Rng::with_seed(9);
        let mut input: Vec<f64> = (0..n * n).map(|_| rng.f64()).collect();
        for i in 0..n {
            input[i] = 100.0;
            input[i * n] = 100.0;
        }
        Heat {
            n,
            steps,
            band,
            tile,
            input,
            a: Aligned::new(n * n),
            b: Aligned::new(n * n),
            expected: Vec::new(),
        }
    }

    /// The array that holds the last step's result.
    fn result(&self) -> &[f64] {
        if self.steps % 2 == 0 {
            self.a.as_slice()
        } else {
            self.b.as_slice()
        }
    }

    /// Exact mode indexed by one block per band.
    fn coarse(&self) -> Config {
        let bytes = (self.band * self.n * std::mem::size_of::<f64>()).min(Config::MAX_BLOCK);
        Config::exact()
            .with_index_block(bytes)
            .expect("band size checked")
    }
}

/// The rows a band reads: one above and one below, where the grid has them.
fn halo(r0: usize, r1: usize, n: usize) -> (usize, usize) {
    (r0.saturating_sub(1), (r1 + 1).min(n))
}

fn sequential(a: &mut [f64], b: &mut [f64], n: usize, steps: usize, band: usize) {
    let (mut src, mut dst) = (a, b);
    for _ in 0..steps {
        for (k, out) in dst.chunks_mut(band * n).enumerate() {
            let r0 = k * band;
            let (s0, s1) = halo(r0, r0 + out.len() / n, n);
            kernels::heat_band(&src[s0 * n..s1 * n], s0, out, r0, n);
        }
        std::mem::swap(&mut src, &mut dst);
    }
}

fn dataflow_run(a: &mut [f64], b: &mut [f64], n: usize, steps: usize, band: usize, c: Config) {
    dataflow::scope_with(c, |df| {
        let (ra, rb) = (df.region(a), df.region(b));
        for s in 0..steps {
            let (src, dst) = if s % 2 == 0 { (&ra, &rb) } else { (&rb, &ra) };
            for r0 in (0..n).step_by(band) {
                let r1 = (r0 + band).min(n);
                let (s0, s1) = halo(r0, r1, n);
                df.spawn(
                    (
                        src.part(s0 * n..s1 * n).read(),
                        dst.part(r0 * n..r1 * n).out(),
                    ),
                    move |_, (sv, dv)| kernels::heat_band(sv, s0, dv, r0, n),
                );
            }
        }
    });
}

fn nd(a: &mut [f64], b: &mut [f64], n: usize, steps: usize, band: usize) {
    let (mut src, mut dst) = (a, b);
    for _ in 0..steps {
        let s: &[f64] = src;
        scope(|sc| {
            for (k, out) in dst.chunks_mut(band * n).enumerate() {
                sc.spawn(move |_| {
                    let r0 = k * band;
                    let (s0, s1) = halo(r0, r0 + out.len() / n, n);
                    kernels::heat_band(&s[s0 * n..s1 * n], s0, out, r0, n);
                });
            }
        });
        std::mem::swap(&mut src, &mut dst);
    }
}

/// The tiles' grid: tile `(i, j)` of side `t` (the last row and column of tiles shorter).
#[derive(Clone, Copy)]
struct Tiles {
    n: usize,
    t: usize,
}

impl Tiles {
    fn count(self) -> usize {
        self.n.div_ceil(self.t)
    }

    /// Tile `(i, j)`'s first row and column, rows and columns.
    fn at(self, i: usize, j: usize) -> (usize, usize, usize, usize) {
        let (r, c) = (i * self.t, j * self.t);
        (r, c, self.t.min(self.n - r), self.t.min(self.n - c))
    }

    /// The neighbours of tile `(i, j)` that the grid has: up, down, left, right.
    fn around(self, i: usize, j: usize) -> [Option<(usize, usize)>; 4] {
        let k = self.count();
        [
            (i > 0).then(|| (i - 1, j)),
            (i + 1 < k).then(|| (i + 1, j)),
            (j > 0).then(|| (i, j - 1)),
            (j + 1 < k).then(|| (i, j + 1)),
        ]
    }
}

/// The 2-D blocked sweep as data-flow tasks, as an OpenMP port declares it: a task reads its
/// tile and its four neighbours and writes its tile of the other grid, so it waits for those
/// five tiles of the previous step and for the readers of the tile it overwrites.
fn dataflow_tiles(a: &mut [f64], b: &mut [f64], n: usize, steps: usize, t: usize) {
    let g = Tiles { n, t };
    dataflow::scope(|df| {
        let (ma, mb) = (df.region(a).matrix(n, n), df.region(b).matrix(n, n));
        for s in 0..steps {
            let (src, dst) = if s % 2 == 0 { (&ma, &mb) } else { (&mb, &ma) };
            let read = |(i, j): (usize, usize)| {
                let (r, c, h, w) = g.at(i, j);
                src.sub(r, c, h, w).read()
            };
            for i in 0..g.count() {
                for j in 0..g.count() {
                    let (r, c, h, w) = g.at(i, j);
                    let [up, down, left, right] = g.around(i, j).map(|x| x.map(read));
                    df.spawn(
                        (
                            read((i, j)),
                            up,
                            down,
                            left,
                            right,
                            dst.sub(r, c, h, w).out(),
                        ),
                        move |_, (own, up, down, left, right, out)| {
                            let a = Around {
                                own,
                                up,
                                down,
                                left,
                                right,
                            };
                            kernels::heat_tile(a, out, (r, c), n)
                        },
                    );
                }
            }
        }
    });
}

/// The same tiles, each task declaring one read of its tile with the one-element halo
/// around it (a sub-matrix that overlaps each neighbouring tile by a row or a column), as an
/// OmpSs-2 port writes `in(a[i-1;h+2][j-1;w+2])`: the halo form of [`dataflow_tiles`].
fn dataflow_halo_tiles(a: &mut [f64], b: &mut [f64], n: usize, steps: usize, t: usize) {
    let g = Tiles { n, t };
    dataflow::scope(|df| {
        let (ma, mb) = (df.region(a).matrix(n, n), df.region(b).matrix(n, n));
        for s in 0..steps {
            let (src, dst) = if s % 2 == 0 { (&ma, &mb) } else { (&mb, &ma) };
            for i in 0..g.count() {
                for j in 0..g.count() {
                    let (r, c, h, w) = g.at(i, j);
                    let (r0, c0) = (r.saturating_sub(1), c.saturating_sub(1));
                    let (r1, c1) = ((r + h + 1).min(n), (c + w + 1).min(n));
                    df.spawn(
                        (
                            src.sub(r0, c0, r1 - r0, c1 - c0).read(),
                            dst.sub(r, c, h, w).out(),
                        ),
                        move |_, (around, out)| {
                            let at = |(rr, cc, hh, ww): (usize, usize, usize, usize)| {
                                view(around, (rr - r0, cc - c0, hh, ww))
                            };
                            let a = Around {
                                own: at((r, c, h, w)),
                                up: (r > 0).then(|| at((r - 1, c, 1, w))),
                                down: (r + h < n).then(|| at((r + h, c, 1, w))),
                                left: (c > 0).then(|| at((r, c - 1, h, 1))),
                                right: (c + w < n).then(|| at((r, c + w, h, 1))),
                            };
                            kernels::heat_tile(a, out, (r, c), n)
                        },
                    );
                }
            }
        }
    });
}

/// A view of rows `r..r + h` and columns `c..c + w` of `v`.
fn view(v: TileRef<'_, f64>, (r, c, h, w): (usize, usize, usize, usize)) -> TileRef<'_, f64> {
    let v = v.split_at_row(r).1.split_at_row(h).0;
    v.split_at_col(c).1.split_at_col(w).0
}

/// The same tiles with a fork-join scope per step.
fn nd_tiles(a: &mut [f64], b: &mut [f64], n: usize, steps: usize, t: usize) {
    let g = Tiles { n, t };
    let (mut src, mut dst) = (a, b);
    for _ in 0..steps {
        let sv = TileRef::from_slice(src, n, n);
        let rows = TileMut::from_slice(dst, n, n).into_tiles(t);
        scope(|sc| {
            for (i, row) in rows.into_iter().enumerate() {
                for (j, out) in row.into_iter().enumerate() {
                    sc.spawn(move |_| {
                        let at = |(i, j)| view(sv, g.at(i, j));
                        let [up, down, left, right] = g.around(i, j).map(|x| x.map(at));
                        let a = Around {
                            own: at((i, j)),
                            up,
                            down,
                            left,
                            right,
                        };
                        kernels::heat_tile(a, out, (i * t, j * t), n)
                    });
                }
            }
        });
        std::mem::swap(&mut src, &mut dst);
    }
}

fn rayon_run(a: &mut [f64], b: &mut [f64], n: usize, steps: usize, band: usize) {
    let (mut src, mut dst) = (a, b);
    for _ in 0..steps {
        let s: &[f64] = src;
        dst.par_chunks_mut(band * n)
            .enumerate()
            .for_each(|(k, out)| {
                let r0 = k * band;
                let (s0, s1) = halo(r0, r0 + out.len() / n, n);
                kernels::heat_band(&s[s0 * n..s1 * n], s0, out, r0, n);
            });
        std::mem::swap(&mut src, &mut dst);
    }
}

impl Program for Heat {
    fn setup(&self) -> String {
        format!(
            "{0}x{0} grid, {1} steps, bands of {2} rows, tiles of {3}x{3}",
            self.n, self.steps, self.band, self.tile
        )
    }

    fn variants(&self) -> Vec<&'static str> {
        vec![
            "dataflow",
            "dataflow b2048",
            "nd",
            "rayon",
            "dataflow tiles",
            "dataflow halo tiles",
            "nd tiles",
            "dataflow nested",
            "dataflow weak",
        ]
    }

    fn reset(&mut self) {
        self.a.as_mut_slice().copy_from_slice(&self.input);
        self.b.as_mut_slice().fill(0.0);
    }

    fn run(&mut self, variant: &str, ctx: &Ctx<'_>) -> Option<f64> {
        let (n, steps, band, tile) = (self.n, self.steps, self.band, self.tile);
        let coarse = self.coarse();
        let (a, b) = (self.a.as_mut_slice(), self.b.as_mut_slice());
        match variant {
            "sequential" => timed(|| sequential(a, b, n, steps, band)),
            "dataflow" => timed(|| {
                ctx.rt
                    .install(|| dataflow_run(a, b, n, steps, band, coarse))
            }),
            "dataflow b2048" => timed(|| {
                ctx.rt
                    .install(|| dataflow_run(a, b, n, steps, band, Config::thesis()))
            }),
            "nd" => timed(|| ctx.rt.install(|| nd(a, b, n, steps, band))),
            "rayon" => timed(|| ctx.pool.install(|| rayon_run(a, b, n, steps, band))),
            "dataflow tiles" => timed(|| ctx.rt.install(|| dataflow_tiles(a, b, n, steps, tile))),
            "dataflow halo tiles" => {
                timed(|| ctx.rt.install(|| dataflow_halo_tiles(a, b, n, steps, tile)))
            }
            "nd tiles" => timed(|| ctx.rt.install(|| nd_tiles(a, b, n, steps, tile))),
            "dataflow nested" => timed(|| {
                ctx.rt
                    .install(|| nested::strong(a, b, n, steps, band, coarse))
            }),
            "dataflow weak" => timed(|| {
                ctx.rt
                    .install(|| nested::weak(a, b, n, steps, band, coarse))
            }),
            _ => unreachable!("unknown variant {variant}"),
        }
    }

    fn keep_as_expected(&mut self) {
        self.expected = self.result().to_vec();
    }

    fn matches_expected(&self) -> bool {
        self.result() == self.expected.as_slice()
    }

    fn peer_construct(&self) -> &'static str {
        "depend"
    }

    fn run_driver(&mut self, d: &Driver, threads: usize, pin: bool) -> Result<f64> {
        type K = unsafe extern "C" fn(*const f64, i64, i64, *mut f64, i64, i64, i64);
        type F = unsafe extern "C" fn(*mut f64, *mut f64, i64, i64, i64, K, i32, i32) -> f64;
        // SAFETY: every suite driver that has it (suite_omp.c; starpu.c for the programs
        // with dependences) defines it with this signature.
        let f: F = unsafe { d.function("taskpools_suite_heat")? };
        let (n, steps, band) = (self.n, self.steps, self.band);
        let (a, b) = (self.a.as_mut_slice(), self.b.as_mut_slice());
        // SAFETY: `a` and `b` hold n×n doubles each; the driver's `depend` clauses order
        // every band with the bands it reads and overwrites, and it returns after all.
        Ok(unsafe {
            f(
                a.as_mut_ptr(),
                b.as_mut_ptr(),
                n as i64,
                steps as i64,
                band as i64,
                kernels::ffi::heat_band,
                threads as i32,
                i32::from(pin),
            )
        })
    }

    fn result_hash(&self) -> u64 {
        hash_words(self.result().iter().map(|x| x.to_bits()))
    }
}
