//! The inner kernels of the suite, in Rust, shared by every variant: the Rust variants call
//! them directly, the OpenMP drivers (C) through the `extern "C"` shims at the end, so every
//! variant runs the same machine code for the work itself and the comparison is between
//! runtimes. Each kernel is deterministic and every program applies the kernels to each
//! tile or band in the same order in every variant, so the results are bit-exact. The kernels
//! are never inlined, so that no variant gets its own compilation of the work.

use taskpools::dataflow::{TileMut, TileRef};

// ---------------------------------------------------------------- Black-Scholes

/// One European option (the PARSEC input's fields), laid out for the C driver as well.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OptionData {
    /// Spot price.
    pub spot: f64,
    /// Strike price.
    pub strike: f64,
    /// Risk-free rate.
    pub rate: f64,
    /// Volatility.
    pub volatility: f64,
    /// Time to maturity in years.
    pub time: f64,
    /// 0 for a call, 1 for a put.
    pub put: f64,
}

/// The standard normal distribution function, by the polynomial approximation of
/// Abramowitz & Stegun 26.2.17 (PARSEC's `CNDF`), error below 7.5e-8.
#[inline]
fn cndf(x: f64) -> f64 {
    let ax = x.abs();
    let k = 1.0 / (1.0 + 0.231_641_9 * ax);
    let poly = k
        * (0.319_381_530
            + k * (-0.356_563_782
                + k * (1.781_477_937 + k * (-1.821_255_978 + k * 1.330_274_429))));
    let pdf = (-0.5 * ax * ax).exp() * 0.398_942_280_401_432_7;
    let n = 1.0 - pdf * poly;
    if x < 0.0 {
        1.0 - n
    } else {
        n
    }
}

/// The Black-Scholes price of one option without dividends.
#[inline]
fn price(o: &OptionData) -> f64 {
    let sqrt_t = o.time.sqrt();
    let vs = o.volatility * sqrt_t;
    let d1 =
        ((o.spot / o.strike).ln() + (o.rate + 0.5 * o.volatility * o.volatility) * o.time) / vs;
    let d2 = d1 - vs;
    let discounted = o.strike * (-o.rate * o.time).exp();
    if o.put == 0.0 {
        o.spot * cndf(d1) - discounted * cndf(d2)
    } else {
        discounted * (1.0 - cndf(d2)) - o.spot * (1.0 - cndf(d1))
    }
}

/// Prices a block of options.
#[inline(never)]
pub fn blackscholes(opts: &[OptionData], prices: &mut [f64]) {
    for (o, p) in opts.iter().zip(prices.iter_mut()) {
        *p = price(o);
    }
}

// ---------------------------------------------------------------- dense tiles

/// `x · y` with eight independent partial sums (so the loop vectorizes without reordering
/// any one sum), added in a fixed order.
#[inline]
fn dot(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len().min(y.len());
    let (x, y) = (&x[..n], &y[..n]);
    let mut acc = [0.0f64; 8];
    let (xc, yc) = (x.chunks_exact(8), y.chunks_exact(8));
    let (xr, yr) = (xc.remainder(), yc.remainder());
    for (a, b) in xc.zip(yc) {
        for k in 0..8 {
            acc[k] += a[k] * b[k];
        }
    }
    let mut s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (a, b) in xr.iter().zip(yr) {
        s += a * b;
    }
    s
}

/// `y += alpha · x`.
#[inline]
fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) {
    for (y, x) in y.iter_mut().zip(x) {
        *y += alpha * x;
    }
}

/// In-place Cholesky factor of a square tile: its lower triangle becomes `L` with `A = L Lᵀ`
/// (the upper triangle is left as it was).
#[inline(never)]
pub fn potrf(mut a: TileMut<'_, f64>) {
    let n = a.rows();
    let mut rj = vec![0.0f64; n];
    for j in 0..n {
        rj[..j].copy_from_slice(&a.row(j)[..j]);
        let d = (a[(j, j)] - dot(&rj[..j], &rj[..j])).sqrt();
        a[(j, j)] = d;
        rj[j] = d;
        for i in j + 1..n {
            let row = a.row_mut(i);
            row[j] = (row[j] - dot(&row[..j], &rj[..j])) / d;
        }
    }
}

/// `B := B L⁻ᵀ` for the lower-triangular factor `L` (a Cholesky panel tile).
#[inline(never)]
pub fn trsm_llt(l: TileRef<'_, f64>, mut b: TileMut<'_, f64>) {
    let n = l.rows();
    for r in 0..b.rows() {
        let row = b.row_mut(r);
        for j in 0..n {
            let lj = l.row(j);
            let (done, rest) = row.split_at_mut(j);
            rest[0] = (rest[0] - dot(&lj[..j], done)) / lj[j];
        }
    }
}

/// `C := C − A Aᵀ`, lower triangle only (the Cholesky diagonal update).
#[inline(never)]
pub fn syrk(a: TileRef<'_, f64>, mut c: TileMut<'_, f64>) {
    for r in 0..c.rows() {
        let ar = a.row(r);
        let crow = c.row_mut(r);
        for (cc, x) in crow.iter_mut().enumerate().take(r + 1) {
            *x -= dot(ar, a.row(cc));
        }
    }
}

/// `C := C − A Bᵀ` (the Cholesky trailing update).
#[inline(never)]
pub fn gemm_nt(a: TileRef<'_, f64>, b: TileRef<'_, f64>, mut c: TileMut<'_, f64>) {
    for r in 0..c.rows() {
        let ar = a.row(r);
        let crow = c.row_mut(r);
        for (cc, x) in crow.iter_mut().enumerate() {
            *x -= dot(ar, b.row(cc));
        }
    }
}

/// In-place LU factor of a square tile without pivoting: `A = L U`, `L` unit lower (below
/// the diagonal), `U` upper (on and above it).
#[inline(never)]
pub fn getrf(mut a: TileMut<'_, f64>) {
    let n = a.rows();
    for k in 0..n {
        let (top, mut bottom) = a.reborrow().split_at_row(k + 1);
        let rk = top.row(k);
        let pivot = rk[k];
        for i in 0..bottom.rows() {
            let ri = bottom.row_mut(i);
            let f = ri[k] / pivot;
            ri[k] = f;
            axpy(-f, &rk[k + 1..], &mut ri[k + 1..]);
        }
    }
}

/// `B := L⁻¹ B` for the unit lower factor `L` of an LU diagonal tile (a row-panel tile).
#[inline(never)]
pub fn trsm_lower(l: TileRef<'_, f64>, mut b: TileMut<'_, f64>) {
    for i in 1..b.rows() {
        let li = l.row(i);
        let (top, mut bottom) = b.reborrow().split_at_row(i);
        let bi = bottom.row_mut(0);
        for (m, &f) in li[..i].iter().enumerate() {
            axpy(-f, top.row(m), bi);
        }
    }
}

/// `B := B U⁻¹` for the upper factor `U` of an LU diagonal tile (a column-panel tile).
#[inline(never)]
pub fn trsm_upper(u: TileRef<'_, f64>, mut b: TileMut<'_, f64>) {
    let n = u.rows();
    for r in 0..b.rows() {
        let x = b.row_mut(r);
        for j in 0..n {
            let uj = u.row(j);
            x[j] /= uj[j];
            let xj = x[j];
            axpy(-xj, &uj[j + 1..], &mut x[j + 1..]);
        }
    }
}

/// `C := C − A B` (the LU trailing update).
#[inline(never)]
pub fn gemm_nn_sub(a: TileRef<'_, f64>, b: TileRef<'_, f64>, mut c: TileMut<'_, f64>) {
    for r in 0..c.rows() {
        let ar = a.row(r);
        let crow = c.row_mut(r);
        for (m, &f) in ar.iter().enumerate() {
            axpy(-f, b.row(m), crow);
        }
    }
}

/// `C := C + A B` (the matrix multiply's leaf).
#[inline(never)]
pub fn gemm_nn_add(a: TileRef<'_, f64>, b: TileRef<'_, f64>, mut c: TileMut<'_, f64>) {
    for r in 0..c.rows() {
        let ar = a.row(r);
        let crow = c.row_mut(r);
        for (m, &f) in ar.iter().enumerate() {
            axpy(f, b.row(m), crow);
        }
    }
}

// ---------------------------------------------------------------- heat diffusion

/// The diffusion coefficient (stable for the 5-point stencil: below 1/4).
const HEAT_C: f64 = 0.2;

/// One step of the 5-point stencil for rows `[dst_row0, dst_row0 + rows)` of an `n` × `n`
/// grid: `src` holds rows `[src_row0, …)` (at least one above and below the band, where the
/// grid has them), `dst` the band. Boundary rows and columns are copied (fixed temperature).
#[inline(never)]
pub fn heat_band(src: &[f64], src_row0: usize, dst: &mut [f64], dst_row0: usize, n: usize) {
    for (k, out) in dst.chunks_exact_mut(n).enumerate() {
        let g = dst_row0 + k;
        let at = |row: usize| &src[(row - src_row0) * n..(row - src_row0 + 1) * n];
        let mid = at(g);
        if g == 0 || g + 1 == n {
            out.copy_from_slice(mid);
            continue;
        }
        let (up, down) = (at(g - 1), at(g + 1));
        out[0] = mid[0];
        out[n - 1] = mid[n - 1];
        for j in 1..n - 1 {
            out[j] = mid[j] + HEAT_C * (up[j] + down[j] + mid[j - 1] + mid[j + 1] - 4.0 * mid[j]);
        }
    }
}

/// A tile of the source grid and its four neighbours (those the grid has): what one task of
/// the 2-D blocked sweep reads.
#[derive(Clone, Copy)]
pub struct Around<'t> {
    pub own: TileRef<'t, f64>,
    pub up: Option<TileRef<'t, f64>>,
    pub down: Option<TileRef<'t, f64>>,
    pub left: Option<TileRef<'t, f64>>,
    pub right: Option<TileRef<'t, f64>>,
}

/// One step of the same stencil on the tile `dst` at grid row and column `d0`, from the
/// source tile and its neighbours `a`: the same arithmetic as [`heat_band`], element for
/// element, so the results agree bit for bit.
#[inline(never)]
pub fn heat_tile(a: Around<'_>, mut dst: TileMut<'_, f64>, d0: (usize, usize), n: usize) {
    let (h, w) = (dst.rows(), dst.cols());
    let edge = |v: Option<TileRef<'_, f64>>, row: usize, col: Option<usize>| {
        v.map(|t| t.row(row)[col.unwrap_or(t.cols() - 1)])
    };
    for i in 0..h {
        let g = d0.0 + i;
        let mid = a.own.row(i);
        let out = dst.row_mut(i);
        if g == 0 || g + 1 == n {
            out.copy_from_slice(mid);
            continue;
        }
        let up = match (i, a.up) {
            (0, Some(u)) => u.row_ref(u.rows() - 1),
            _ => a.own.row(i - 1),
        };
        let down = match (i + 1 == h, a.down) {
            (true, Some(d)) => d.row_ref(0),
            _ => a.own.row(i + 1),
        };
        // The interior columns of the tile, with both neighbours in it.
        if w > 2 {
            let sides = mid[..w - 2].iter().zip(&mid[2..w]);
            let across = up[1..w - 1].iter().zip(&down[1..w - 1]);
            let inner = out[1..w - 1].iter_mut().zip(&mid[1..w - 1]);
            for (((o, &m), (&l, &r)), (&u, &d)) in inner.zip(sides).zip(across) {
                *o = m + HEAT_C * (u + d + l + r - 4.0 * m);
            }
        }
        // The first and last columns: a neighbour tile's edge, or the grid's.
        let (lv, rv) = (edge(a.left, i, None), edge(a.right, i, Some(0)));
        for j in [0, w - 1] {
            let c = d0.1 + j;
            out[j] = if c == 0 || c + 1 == n {
                mid[j]
            } else {
                let l = if j > 0 {
                    mid[j - 1]
                } else {
                    lv.expect("a left tile")
                };
                let r = if j + 1 < w {
                    mid[j + 1]
                } else {
                    rv.expect("a right tile")
                };
                mid[j] + HEAT_C * (up[j] + down[j] + l + r - 4.0 * mid[j])
            };
        }
    }
}

// ---------------------------------------------------------------- mergesort

/// Sorts a leaf.
#[inline(never)]
pub fn leaf_sort(d: &mut [u32]) {
    d.sort_unstable();
}

/// Merges the sorted halves `d[..mid]` and `d[mid..]` through `tmp` (as long as `d`) back
/// into `d`.
#[inline(never)]
pub fn merge(d: &mut [u32], tmp: &mut [u32], mid: usize) {
    let (a, b) = d.split_at(mid);
    let (mut i, mut j) = (0, 0);
    for t in tmp.iter_mut() {
        if j >= b.len() || (i < a.len() && a[i] <= b[j]) {
            *t = a[i];
            i += 1;
        } else {
            *t = b[j];
            j += 1;
        }
    }
    d.copy_from_slice(tmp);
}

// ---------------------------------------------------------------- C shims

/// The `extern "C"` faces of the kernels, for the OpenMP drivers. Matrices come as a pointer
/// to a tile's first element, the tile's side `bs` and the leading dimension `ld`.
///
/// Every shim's contract (the C drivers keep it): the pointers name live, initialised data of
/// the sizes given, and for the duration of the call no one else writes what the shim reads
/// or touches what it writes (the drivers' `depend` clauses and `taskwait`s order every
/// conflicting pair of calls).
pub mod ffi {
    use super::*;

    /// # Safety
    /// A `bs` × `bs` tile of live doubles, rows `ld` apart, read by no one else meanwhile.
    unsafe fn tref<'a>(p: *const f64, bs: i64, ld: i64) -> TileRef<'a, f64> {
        // SAFETY: per this function's contract.
        unsafe { TileRef::from_raw_parts(p, bs as usize, bs as usize, ld as usize) }
    }

    /// # Safety
    /// A `bs` × `bs` tile of live doubles, rows `ld` apart, used by no one else meanwhile.
    unsafe fn tmut<'a>(p: *mut f64, bs: i64, ld: i64) -> TileMut<'a, f64> {
        // SAFETY: per this function's contract.
        unsafe { TileMut::from_raw_parts(p, bs as usize, bs as usize, ld as usize) }
    }

    /// # Safety
    /// The module's contract: `n` options at `o` and `n` prices at `p`.
    pub unsafe extern "C" fn blackscholes(o: *const OptionData, p: *mut f64, n: i64) {
        // SAFETY: the module's contract.
        let (o, p) = unsafe {
            (
                std::slice::from_raw_parts(o, n as usize),
                std::slice::from_raw_parts_mut(p, n as usize),
            )
        };
        super::blackscholes(o, p);
    }

    /// # Safety
    /// The module's contract.
    pub unsafe extern "C" fn potrf(a: *mut f64, bs: i64, ld: i64) {
        // SAFETY: the module's contract.
        super::potrf(unsafe { tmut(a, bs, ld) });
    }

    /// # Safety
    /// The module's contract.
    pub unsafe extern "C" fn trsm_llt(l: *const f64, b: *mut f64, bs: i64, ld: i64) {
        // SAFETY: the module's contract.
        super::trsm_llt(unsafe { tref(l, bs, ld) }, unsafe { tmut(b, bs, ld) });
    }

    /// # Safety
    /// The module's contract.
    pub unsafe extern "C" fn syrk(a: *const f64, c: *mut f64, bs: i64, ld: i64) {
        // SAFETY: the module's contract.
        super::syrk(unsafe { tref(a, bs, ld) }, unsafe { tmut(c, bs, ld) });
    }

    /// # Safety
    /// The module's contract.
    pub unsafe extern "C" fn gemm_nt(a: *const f64, b: *const f64, c: *mut f64, bs: i64, ld: i64) {
        // SAFETY: the module's contract.
        super::gemm_nt(
            unsafe { tref(a, bs, ld) },
            unsafe { tref(b, bs, ld) },
            unsafe { tmut(c, bs, ld) },
        );
    }

    /// # Safety
    /// The module's contract.
    pub unsafe extern "C" fn getrf(a: *mut f64, bs: i64, ld: i64) {
        // SAFETY: the module's contract.
        super::getrf(unsafe { tmut(a, bs, ld) });
    }

    /// # Safety
    /// The module's contract.
    pub unsafe extern "C" fn trsm_lower(l: *const f64, b: *mut f64, bs: i64, ld: i64) {
        // SAFETY: the module's contract.
        super::trsm_lower(unsafe { tref(l, bs, ld) }, unsafe { tmut(b, bs, ld) });
    }

    /// # Safety
    /// The module's contract.
    pub unsafe extern "C" fn trsm_upper(u: *const f64, b: *mut f64, bs: i64, ld: i64) {
        // SAFETY: the module's contract.
        super::trsm_upper(unsafe { tref(u, bs, ld) }, unsafe { tmut(b, bs, ld) });
    }

    /// # Safety
    /// The module's contract.
    pub unsafe extern "C" fn gemm_nn_sub(
        a: *const f64,
        b: *const f64,
        c: *mut f64,
        bs: i64,
        ld: i64,
    ) {
        // SAFETY: the module's contract.
        super::gemm_nn_sub(
            unsafe { tref(a, bs, ld) },
            unsafe { tref(b, bs, ld) },
            unsafe { tmut(c, bs, ld) },
        );
    }

    /// # Safety
    /// The module's contract.
    pub unsafe extern "C" fn gemm_nn_add(
        a: *const f64,
        b: *const f64,
        c: *mut f64,
        m: i64,
        ld: i64,
    ) {
        // SAFETY: the module's contract.
        super::gemm_nn_add(
            unsafe { tref(a, m, ld) },
            unsafe { tref(b, m, ld) },
            unsafe { tmut(c, m, ld) },
        );
    }

    /// # Safety
    /// The module's contract: `src_rows` rows of `n` at `src`, `dst_rows` rows at `dst`.
    pub unsafe extern "C" fn heat_band(
        src: *const f64,
        src_row0: i64,
        src_rows: i64,
        dst: *mut f64,
        dst_row0: i64,
        dst_rows: i64,
        n: i64,
    ) {
        let n_ = n as usize;
        // SAFETY: the module's contract.
        let (s, d) = unsafe {
            (
                std::slice::from_raw_parts(src, src_rows as usize * n_),
                std::slice::from_raw_parts_mut(dst, dst_rows as usize * n_),
            )
        };
        super::heat_band(s, src_row0 as usize, d, dst_row0 as usize, n_);
    }

    /// # Safety
    /// The module's contract: `n` elements at `d`.
    pub unsafe extern "C" fn leaf_sort(d: *mut u32, n: i64) {
        // SAFETY: the module's contract.
        super::leaf_sort(unsafe { std::slice::from_raw_parts_mut(d, n as usize) });
    }

    /// # Safety
    /// The module's contract: `n` elements at `d` and at `tmp`.
    pub unsafe extern "C" fn merge(d: *mut u32, tmp: *mut u32, n: i64, mid: i64) {
        // SAFETY: the module's contract.
        let (d, t) = unsafe {
            (
                std::slice::from_raw_parts_mut(d, n as usize),
                std::slice::from_raw_parts_mut(tmp, n as usize),
            )
        };
        super::merge(d, t, mid as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spd(n: usize) -> Vec<f64> {
        let mut rng = fastrand::Rng::with_seed(3);
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..=i {
                let v = rng.f64() - 0.5;
                a[i * n + j] = v;
                a[j * n + i] = v;
            }
            a[i * n + i] += n as f64;
        }
        a
    }

    #[test]
    fn potrf_factors() {
        let n = 13;
        let a0 = spd(n);
        let mut a = a0.clone();
        potrf(TileMut::from_slice(&mut a, n, n));
        for i in 0..n {
            for j in 0..=i {
                let s: f64 = (0..=j).map(|k| a[i * n + k] * a[j * n + k]).sum();
                assert!((s - a0[i * n + j]).abs() < 1e-9, "({i},{j})");
            }
        }
    }

    #[test]
    fn getrf_and_solves_factor() {
        let n = 11;
        let a0 = spd(n);
        let mut a = a0.clone();
        getrf(TileMut::from_slice(&mut a, n, n));
        let l = |i: usize, k: usize| match i.cmp(&k) {
            std::cmp::Ordering::Greater => a[i * n + k],
            std::cmp::Ordering::Equal => 1.0,
            std::cmp::Ordering::Less => 0.0,
        };
        let u = |k: usize, j: usize| if k <= j { a[k * n + j] } else { 0.0 };
        for i in 0..n {
            for j in 0..n {
                let s: f64 = (0..n).map(|k| l(i, k) * u(k, j)).sum();
                assert!((s - a0[i * n + j]).abs() < 1e-9);
            }
        }
        // L⁻¹ (L X) = X and (X U) U⁻¹ = X.
        let x: Vec<f64> = (0..n * n).map(|v| (v % 7) as f64).collect();
        let mut lx = vec![0.0; n * n];
        let mut xu = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                lx[i * n + j] = (0..n).map(|k| l(i, k) * x[k * n + j]).sum();
                xu[i * n + j] = (0..n).map(|k| x[i * n + k] * u(k, j)).sum();
            }
        }
        let t = TileRef::from_slice(&a, n, n);
        trsm_lower(t, TileMut::from_slice(&mut lx, n, n));
        trsm_upper(t, TileMut::from_slice(&mut xu, n, n));
        for k in 0..n * n {
            assert!((lx[k] - x[k]).abs() < 1e-9 && (xu[k] - x[k]).abs() < 1e-9);
        }
    }

    #[test]
    fn merge_merges() {
        let mut d = vec![1, 4, 9, 2, 3, 10, 11];
        let mut t = vec![0; 7];
        merge(&mut d, &mut t, 3);
        assert_eq!(d, [1, 2, 3, 4, 9, 10, 11]);
    }

    #[test]
    fn put_call_parity() {
        let c = OptionData {
            spot: 100.0,
            strike: 95.0,
            rate: 0.05,
            volatility: 0.3,
            time: 0.5,
            put: 0.0,
        };
        let p = OptionData { put: 1.0, ..c };
        let parity = c.spot - c.strike * (-c.rate * c.time).exp();
        assert!((price(&c) - price(&p) - parity).abs() < 1e-6);
    }
}
