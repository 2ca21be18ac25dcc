//! `taskloop` (OpenMP's, with a grain size, and OmpSs-2's with dependences): a loop cut into
//! data-flow tasks of about `grain` iterations each, each declaring what its chunk touches.

use std::ops::Range;

use super::{Accesses, Scope};

impl<'s, 'e> Scope<'s, 'e> {
    /// Spawns the loop over `range` as tasks of `grain` to `2 × grain - 1` iterations each
    /// (OpenMP's `taskloop grainsize(grain)`; one task when the range is shorter), in order:
    /// `declare(chunk)` gives each task's accesses from its chunk of iterations, and
    /// `f(scope, data, chunk)` is its body. The tasks are ordered by what they declare, among
    /// themselves and against the scope's other tasks, as spawned ones are; the loop itself
    /// does not wait for them.
    ///
    /// # Panics
    /// If `grain` is 0.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut x = vec![1.0f64; 1000];
    /// let mut y = vec![0.0f64; 1000];
    /// taskpools::dataflow::scope(|df| {
    ///     let (xr, yr) = (df.region(&mut x), df.region(&mut y));
    ///     // y = 2 x, in tasks of 100 to 199 elements; then x = y + 1 on the same chunks,
    ///     // each task after the one that wrote its part of y.
    ///     df.taskloop(0..1000, 100, |c| (xr.part(c.clone()).read(), yr.part(c).out()), |_, (x, y), _| {
    ///         y.iter_mut().zip(x).for_each(|(y, x)| *y = 2.0 * x);
    ///     });
    ///     df.taskloop(0..1000, 100, |c| (yr.part(c.clone()).read(), xr.part(c).out()), |_, (y, x), _| {
    ///         x.iter_mut().zip(y).for_each(|(x, y)| *x = y + 1.0);
    ///     });
    /// });
    /// assert!(x.iter().all(|&v| v == 3.0));
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn taskloop<A, D, F>(&self, range: Range<usize>, grain: usize, mut declare: D, f: F)
    where
        A: Accesses,
        D: FnMut(Range<usize>) -> A,
        F: for<'t> Fn(&'t Scope<'t, 's>, A::Data<'t>, Range<usize>) + Clone + Send + 's,
    {
        assert!(
            grain > 0,
            "taskpools::dataflow: taskloop's grain must be at least 1"
        );
        for chunk in chunks(range, grain) {
            let body = f.clone();
            let c = chunk.clone();
            self.spawn(declare(chunk), move |df, data| body(df, data, c));
        }
    }
}

/// `range` cut into `max(1, len / grain)` chunks of equal length (the first ones one longer),
/// so each has `grain` to `2 × grain - 1` iterations when `len >= grain`.
fn chunks(range: Range<usize>, grain: usize) -> impl Iterator<Item = Range<usize>> {
    let len = range.end.saturating_sub(range.start);
    let n = (len / grain).max(1);
    let (q, r) = (len / n, len % n);
    let mut lo = range.start;
    (0..n).filter(move |_| len > 0).map(move |i| {
        let hi = lo + q + usize::from(i < r);
        let c = lo..hi;
        lo = hi;
        c
    })
}

#[cfg(test)]
mod tests {
    use super::chunks;

    #[test]
    fn chunks_cover_the_range_in_order_with_the_grain() {
        for len in 0..200 {
            for grain in 1..40 {
                let cs: Vec<_> = chunks(5..5 + len, grain).collect();
                let mut next = 5;
                for c in &cs {
                    assert_eq!(c.start, next);
                    next = c.end;
                    if len >= grain {
                        assert!(
                            c.len() >= grain && c.len() < 2 * grain,
                            "{len} {grain} {c:?}"
                        );
                    }
                }
                assert_eq!(next, 5 + len);
                assert_eq!(cs.is_empty(), len == 0);
            }
        }
    }
}
