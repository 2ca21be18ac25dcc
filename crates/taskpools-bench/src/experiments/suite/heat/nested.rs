//! The band sweep nested two levels, for weak accesses against strong nesting (OmpSs-2's
//! weak dependences; Perez et al., IPDPS 2017): each step spawns one task per *superband* of
//! `GROUP` bands, and each of those spawns one child per band, with the same declarations as
//! the flat `dataflow` variant.
//!
//! - **nested** (strong, PARTEE's model): the outer task reads its superband with the rows
//!   around it and writes the superband, so the next step's outer task on a superband waits
//!   for the whole outer tasks on it and on both neighbours, children included.
//! - **weak**: the outer task declares one weak read per band (the band with the rows around
//!   it) and one weak write per band, and hands each to one child. The next step's outer task
//!   waits only for the children of those neighbours whose bands it touches (their edge
//!   bands), each part released as its child ends.

use taskpools::dataflow::{self, Config};

use super::{halo, kernels};

/// Bands per outer task.
pub(super) const GROUP: usize = 4;

/// The outer tasks' superbands, as `(first row, end row)`.
fn superbands(n: usize, band: usize) -> impl Iterator<Item = (usize, usize)> {
    let rows = band * GROUP;
    (0..n).step_by(rows).map(move |r0| (r0, (r0 + rows).min(n)))
}

/// The bands of rows `[r0, r1)`.
fn bands(r0: usize, r1: usize, band: usize) -> impl Iterator<Item = (usize, usize)> {
    (r0..r1)
        .step_by(band)
        .map(move |b0| (b0, (b0 + band).min(r1)))
}

/// Strong nesting: each outer task owns its superband (and reads the rows around it) until it
/// and its children end.
pub(super) fn strong(a: &mut [f64], b: &mut [f64], n: usize, steps: usize, band: usize, c: Config) {
    dataflow::scope_with(c, |df| {
        let (ra, rb) = (df.region(a), df.region(b));
        for s in 0..steps {
            let (src, dst) = if s % 2 == 0 { (&ra, &rb) } else { (&rb, &ra) };
            for (r0, r1) in superbands(n, band) {
                let (s0, s1) = halo(r0, r1, n);
                df.spawn(
                    (
                        src.part(s0 * n..s1 * n).read(),
                        dst.part(r0 * n..r1 * n).out(),
                    ),
                    move |df, (sv, dv)| {
                        let (sr, dr) = (df.region_ref(sv), df.region(dv));
                        for (b0, b1) in bands(r0, r1, band) {
                            let (h0, h1) = halo(b0, b1, n);
                            df.spawn(
                                (
                                    sr.part((h0 - s0) * n..(h1 - s0) * n).read(),
                                    dr.part((b0 - r0) * n..(b1 - r0) * n).out(),
                                ),
                                move |_, (sv, dv)| kernels::heat_band(sv, h0, dv, b0, n),
                            );
                        }
                    },
                );
            }
        }
    });
}

/// Weak nesting: each outer task declares its bands weak, one part per child.
pub(super) fn weak(a: &mut [f64], b: &mut [f64], n: usize, steps: usize, band: usize, c: Config) {
    dataflow::scope_with(c, |df| {
        let (ra, rb) = (df.region(a), df.region(b));
        for s in 0..steps {
            let (src, dst) = if s % 2 == 0 { (&ra, &rb) } else { (&rb, &ra) };
            for (r0, r1) in superbands(n, band) {
                let (mut reads, mut writes) = (Vec::new(), Vec::new());
                for (b0, b1) in bands(r0, r1, band) {
                    let (h0, h1) = halo(b0, b1, n);
                    reads.push(src.part(h0 * n..h1 * n).weak_read());
                    writes.push(dst.part(b0 * n..b1 * n).weak_inout());
                }
                df.spawn((reads, writes), move |df, (reads, writes)| {
                    let parts = reads.into_iter().zip(writes);
                    for ((b0, b1), (r, w)) in bands(r0, r1, band).zip(parts) {
                        let h0 = halo(b0, b1, n).0;
                        let (sr, dr) = (df.weak_region_ref(r), df.weak_region(w));
                        df.spawn((sr.read(), dr.out()), move |_, (sv, dv)| {
                            kernels::heat_band(sv, h0, dv, b0, n)
                        });
                    }
                });
            }
        }
    });
}
