//! Black-Scholes (PARSEC): price every option of a portfolio, one task per block of options;
//! no dependences between the tasks.

use rayon::prelude::*;
use taskpools::dataflow;

use anyhow::Result;

use super::kernels::{self, OptionData};
use super::{timed, Ctx, Program};
use crate::experiments::drivers::{process::hash_words, Driver};

/// The portfolio and its prices.
pub struct BlackScholes {
    opts: Vec<OptionData>,
    prices: Vec<f64>,
    expected: Vec<f64>,
    block: usize,
}

impl BlackScholes {
    /// `n` random options (PARSEC's ranges), priced in blocks of `block`.
    pub fn new(n: usize, block: usize) -> Self {
        let mut rng = fastrand::Rng::with_seed(11);
        let opts = (0..n)
            .map(|_| OptionData {
                spot: 10.0 + 90.0 * rng.f64(),
                strike: 10.0 + 90.0 * rng.f64(),
                rate: 0.0275 + 0.075 * rng.f64(),
                volatility: 0.05 + 0.6 * rng.f64(),
                time: 0.1 + 2.0 * rng.f64(),
                put: f64::from(u8::from(rng.bool())),
            })
            .collect();
        BlackScholes {
            opts,
            prices: vec![0.0; n],
            expected: Vec::new(),
            block,
        }
    }
}

/// Recursive halving down to one block, each split a `join` (the fork-join formulation).
fn forkjoin(opts: &[OptionData], prices: &mut [f64], block: usize) {
    if opts.len() <= block {
        kernels::blackscholes(opts, prices);
        return;
    }
    let mid = (opts.len() / block).div_ceil(2) * block;
    let (o1, o2) = opts.split_at(mid);
    let (p1, p2) = prices.split_at_mut(mid);
    taskpools::forkjoin::join(|| forkjoin(o1, p1, block), || forkjoin(o2, p2, block));
}

impl Program for BlackScholes {
    fn setup(&self) -> String {
        format!("{} options, blocks of {}", self.opts.len(), self.block)
    }

    fn variants(&self) -> Vec<&'static str> {
        vec!["dataflow", "forkjoin", "rayon"]
    }

    fn reset(&mut self) {
        self.prices.fill(0.0);
    }

    fn run(&mut self, variant: &str, ctx: &Ctx<'_>) -> Option<f64> {
        let (opts, prices, block) = (&self.opts[..], &mut self.prices[..], self.block);
        match variant {
            "sequential" => timed(|| {
                for (o, p) in opts.chunks(block).zip(prices.chunks_mut(block)) {
                    kernels::blackscholes(o, p);
                }
            }),
            "dataflow" => timed(|| {
                ctx.rt.install(|| {
                    dataflow::scope_with(ctx.dataflow, |df| {
                        // The options are only read: captured by reference (PARTEE's
                        // `safe` arguments); the prices are declared.
                        let rp = df.region(prices);
                        for s in (0..opts.len()).step_by(block) {
                            let r = s..(s + block).min(opts.len());
                            let o = &opts[r.clone()];
                            df.spawn(rp.part(r).out(), move |_, p| kernels::blackscholes(o, p));
                        }
                    })
                })
            }),
            "forkjoin" => timed(|| ctx.rt.install(|| forkjoin(opts, prices, block))),
            "rayon" => timed(|| {
                ctx.pool.install(|| {
                    opts.par_chunks(block)
                        .zip(prices.par_chunks_mut(block))
                        .for_each(|(o, p)| kernels::blackscholes(o, p))
                })
            }),
            _ => unreachable!("unknown variant {variant}"),
        }
    }

    fn keep_as_expected(&mut self) {
        self.expected = self.prices.clone();
    }

    fn matches_expected(&self) -> bool {
        self.prices == self.expected
    }

    fn peer_construct(&self) -> &'static str {
        "tasks"
    }

    fn run_driver(&mut self, d: &Driver, threads: usize, pin: bool) -> Result<f64> {
        type F = unsafe extern "C" fn(
            *const OptionData,
            i64,
            *mut f64,
            i64,
            i64,
            unsafe extern "C" fn(*const OptionData, *mut f64, i64),
            i32,
            i32,
        ) -> f64;
        // SAFETY: every suite driver that has it (suite_omp.c; starpu.c for the programs
        // with dependences) defines it with this signature.
        let f: F = unsafe { d.function("taskpools_suite_blackscholes")? };
        let (opts, prices) = (&self.opts[..], &mut self.prices[..]);
        // SAFETY: `opts` and `prices` hold `n` elements each; the driver's tasks price
        // disjoint blocks and it returns after all of them.
        Ok(unsafe {
            f(
                opts.as_ptr(),
                std::mem::size_of::<OptionData>() as i64,
                prices.as_mut_ptr(),
                opts.len() as i64,
                self.block as i64,
                kernels::ffi::blackscholes,
                threads as i32,
                i32::from(pin),
            )
        })
    }

    fn result_hash(&self) -> u64 {
        hash_words(self.prices.iter().map(|x| x.to_bits()))
    }
}
