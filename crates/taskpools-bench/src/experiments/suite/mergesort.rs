//! Mergesort, recursive: sort the two halves (in parallel), then merge them through a
//! buffer; leaves of `leaf` elements are sorted directly. The data-flow variant spawns the two
//! halves and the merge as three sibling tasks; the merge declares the whole range, so the
//! dependences make it wait for both halves (no sync written). ND, rayon and OpenMP join the
//! halves, then merge.

use taskpools::dataflow::{self, Config, Scope};

use anyhow::Result;

use super::kernels;
use super::{timed, Ctx, Join, Ours, Program, Rayon};
use crate::experiments::drivers::{process::hash_words, Driver};

/// The keys and their sorted copy.
pub struct Mergesort {
    leaf: usize,
    input: Vec<u32>,
    d: Vec<u32>,
    tmp: Vec<u32>,
    expected: Vec<u32>,
}

impl Mergesort {
    /// `n` random keys, leaves of `leaf`.
    pub fn new(n: usize, leaf: usize) -> Self {
        let mut rng = fastrand::Rng::with_seed(17);
        Mergesort {
            leaf,
            input: (0..n).map(|_| rng.u32(..)).collect(),
            d: vec![0; n],
            tmp: vec![0; n],
            expected: Vec::new(),
        }
    }
}

impl Mergesort {
    /// Whether the keys are the input's, sorted.
    #[cfg(test)]
    pub fn sorted(&self) -> bool {
        let mut x = self.input.clone();
        x.sort();
        x == self.d
    }
}

fn sequential(d: &mut [u32], tmp: &mut [u32], leaf: usize) {
    if d.len() <= leaf {
        return kernels::leaf_sort(d);
    }
    let mid = d.len() / 2;
    {
        let (d1, d2) = d.split_at_mut(mid);
        let (t1, t2) = tmp.split_at_mut(mid);
        sequential(d1, t1, leaf);
        sequential(d2, t2, leaf);
    }
    kernels::merge(d, tmp, mid);
}

/// ND (and rayon): the halves in parallel, then the merge.
fn nd<J: Join>(d: &mut [u32], tmp: &mut [u32], leaf: usize) {
    if d.len() <= leaf {
        return kernels::leaf_sort(d);
    }
    let mid = d.len() / 2;
    {
        let (d1, d2) = d.split_at_mut(mid);
        let (t1, t2) = tmp.split_at_mut(mid);
        J::join(|| nd::<J>(d1, t1, leaf), || nd::<J>(d2, t2, leaf));
    }
    kernels::merge(d, tmp, mid);
}

/// The data-flow version, inside the task that owns `d` and `tmp`.
fn dataflow_level<'t>(df: &Scope<'t, '_>, d: &'t mut [u32], tmp: &'t mut [u32], leaf: usize) {
    let n = d.len();
    if n <= leaf {
        return kernels::leaf_sort(d);
    }
    let mid = n / 2;
    let (rd, rt) = (df.region(d), df.region(tmp));
    for r in [0..mid, mid..n] {
        df.spawn(
            (rd.part(r.clone()).inout(), rt.part(r).inout()),
            move |df, (d, t)| dataflow_level(df, d, t, leaf),
        );
    }
    df.spawn((rd.inout(), rt.inout()), move |_, (d, t)| {
        kernels::merge(d, t, mid)
    });
}

fn dataflow_run(d: &mut [u32], tmp: &mut [u32], leaf: usize, config: Config) {
    dataflow::scope_with(config, |df| {
        let (rd, rt) = (df.region(d), df.region(tmp));
        df.spawn((rd.inout(), rt.inout()), move |df, (d, t)| {
            dataflow_level(df, d, t, leaf)
        });
    });
}

impl Program for Mergesort {
    fn setup(&self) -> String {
        format!("{} u32 keys, leaves of {}", self.input.len(), self.leaf)
    }

    fn variants(&self) -> Vec<&'static str> {
        vec!["dataflow", "nd", "rayon"]
    }

    fn reset(&mut self) {
        self.d.copy_from_slice(&self.input);
    }

    fn run(&mut self, variant: &str, ctx: &Ctx<'_>) -> Option<f64> {
        let leaf = self.leaf;
        let (d, tmp) = (&mut self.d[..], &mut self.tmp[..]);
        match variant {
            "sequential" => timed(|| sequential(d, tmp, leaf)),
            "dataflow" => timed(|| ctx.rt.install(|| dataflow_run(d, tmp, leaf, ctx.dataflow))),
            "nd" => timed(|| ctx.rt.install(|| nd::<Ours>(d, tmp, leaf))),
            "rayon" => timed(|| ctx.pool.install(|| nd::<Rayon>(d, tmp, leaf))),
            _ => unreachable!("unknown variant {variant}"),
        }
    }

    fn keep_as_expected(&mut self) {
        self.expected = self.d.clone();
    }

    fn matches_expected(&self) -> bool {
        self.d == self.expected
    }

    fn peer_construct(&self) -> &'static str {
        "tasks"
    }

    fn run_driver(&mut self, d: &Driver, threads: usize, pin: bool) -> Result<f64> {
        type Sort = unsafe extern "C" fn(*mut u32, i64);
        type Merge = unsafe extern "C" fn(*mut u32, *mut u32, i64, i64);
        type F = unsafe extern "C" fn(*mut u32, *mut u32, i64, i64, Sort, Merge, i32, i32) -> f64;
        // SAFETY: every suite driver that has it (suite_omp.c; starpu.c for the programs
        // with dependences) defines it with this signature.
        let f: F = unsafe { d.function("taskpools_suite_mergesort")? };
        let (keys, tmp) = (&mut self.d[..], &mut self.tmp[..]);
        // SAFETY: keys and tmp hold n keys; the driver's two tasks per level sort disjoint
        // halves, the merge follows their taskwait, and it returns after all of them.
        Ok(unsafe {
            f(
                keys.as_mut_ptr(),
                tmp.as_mut_ptr(),
                keys.len() as i64,
                self.leaf as i64,
                kernels::ffi::leaf_sort,
                kernels::ffi::merge,
                threads as i32,
                i32::from(pin),
            )
        })
    }

    fn result_hash(&self) -> u64 {
        hash_words(self.d.iter().map(|&k| u64::from(k)))
    }
}
