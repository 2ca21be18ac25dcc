//! The suite's problem sizes: ours by default, a short set for the tour, PARTEE's (Table 4.1),
//! and the limits each size is checked against.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Problem sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sizes {
    /// Black-Scholes: options.
    pub options: usize,
    /// Black-Scholes: options per task.
    pub options_block: usize,
    /// Cholesky: matrix side.
    pub cholesky_n: usize,
    /// Cholesky: tile side.
    pub cholesky_tile: usize,
    /// Heat: grid side.
    pub heat_n: usize,
    /// Heat: steps.
    pub heat_steps: usize,
    /// Heat: rows per task.
    pub heat_band: usize,
    /// Heat: tile side of the 2-D blocked variants (a Jacobi sweep in square tiles).
    #[serde(default = "default_heat_tile")]
    pub heat_tile: usize,
    /// LU: matrix side.
    pub lu_n: usize,
    /// LU: tile side.
    pub lu_tile: usize,
    /// Matrix multiply: matrix side.
    pub matmul_n: usize,
    /// Matrix multiply: leaf side.
    pub matmul_leaf: usize,
    /// Mergesort: keys.
    pub sort_n: usize,
    /// Mergesort: keys per leaf.
    pub sort_leaf: usize,
}

impl Sizes {
    /// Sizes for a run of the whole suite in about a minute on 2 cores (3 repetitions at 1
    /// and 2 threads).
    pub const DEFAULT: Sizes = Sizes {
        options: 1 << 22,
        options_block: 128,
        cholesky_n: 1536,
        cholesky_tile: 128,
        heat_n: 1536,
        heat_steps: 60,
        heat_band: 32,
        heat_tile: 128,
        lu_n: 1280,
        lu_tile: 128,
        matmul_n: 1024,
        matmul_leaf: 64,
        sort_n: 1 << 22,
        sort_leaf: 4096,
    };

    /// Sizes for the tour: about a tenth of the default work.
    pub const TOUR: Sizes = Sizes {
        options: 1 << 20,
        options_block: 128,
        cholesky_n: 768,
        cholesky_tile: 128,
        heat_n: 768,
        heat_steps: 40,
        heat_band: 32,
        heat_tile: 128,
        lu_n: 768,
        lu_tile: 128,
        matmul_n: 512,
        matmul_leaf: 64,
        sort_n: 1 << 20,
        sort_leaf: 4096,
    };

    /// PARTEE's sizes (Table 4.1): 30 M options in blocks of 128; Cholesky 2048² in 256²
    /// tiles; heat 2048² (100 steps, bands of 64 rows: PARTEE does not give these); LU
    /// 4096² (256² tiles); matrix multiply 2048² (leaves of 64²); mergesort 1,048,576 keys.
    pub const PAPER: Sizes = Sizes {
        options: 30_000_000,
        options_block: 128,
        cholesky_n: 2048,
        cholesky_tile: 256,
        heat_n: 2048,
        heat_steps: 100,
        heat_band: 64,
        heat_tile: 128,
        lu_n: 4096,
        lu_tile: 256,
        matmul_n: 2048,
        matmul_leaf: 64,
        sort_n: 1 << 20,
        sort_leaf: 4096,
    };

    /// The largest matrix or grid side accepted (its doubles take 512 MiB, and a run keeps
    /// three copies).
    pub const MAX_SIDE: usize = 8192;
    /// The most options accepted (48 bytes each, plus two prices: 2 GiB).
    pub const MAX_OPTIONS: usize = 1 << 25;
    /// The most keys accepted (four buffers of 4 bytes per key: 2 GiB).
    pub const MAX_KEYS: usize = 1 << 27;
    /// The most heat steps accepted.
    pub const MAX_STEPS: usize = 100_000;

    /// Checks that every size can run and fit; the error names the option and its limits.
    pub fn check(&self) -> Result<()> {
        let within = |opt: &str, v: usize, lo: usize, hi: usize| -> Result<()> {
            if !(lo..=hi).contains(&v) {
                bail!("{opt} {v}: must be {lo} to {hi}");
            }
            Ok(())
        };
        within("--options", self.options, 1, Self::MAX_OPTIONS)?;
        within("--options-block", self.options_block, 1, self.options)?;
        for (opt, n, topt, t) in [
            (
                "--cholesky-n",
                self.cholesky_n,
                "--cholesky-tile",
                self.cholesky_tile,
            ),
            ("--lu-n", self.lu_n, "--lu-tile", self.lu_tile),
        ] {
            within(opt, n, 1, Self::MAX_SIDE)?;
            within(topt, t, 1, n)?;
            if n % t != 0 {
                bail!("{topt} {t} must divide {opt} {n}");
            }
        }
        within("--heat-n", self.heat_n, 3, Self::MAX_SIDE)?;
        within("--heat-steps", self.heat_steps, 1, Self::MAX_STEPS)?;
        within("--heat-band", self.heat_band, 1, self.heat_n)?;
        within("--heat-tile", self.heat_tile, 1, self.heat_n)?;
        within("--matmul-n", self.matmul_n, 1, Self::MAX_SIDE)?;
        within("--matmul-leaf", self.matmul_leaf, 1, self.matmul_n)?;
        let q = self.matmul_n / self.matmul_leaf;
        if self.matmul_n % self.matmul_leaf != 0 || !q.is_power_of_two() {
            bail!(
                "--matmul-n {} must be --matmul-leaf {} times a power of two (the recursion \
                 halves it down to the leaves)",
                self.matmul_n,
                self.matmul_leaf
            );
        }
        within("--sort-n", self.sort_n, 1, Self::MAX_KEYS)?;
        within("--sort-leaf", self.sort_leaf, 1, self.sort_n)?;
        Ok(())
    }
}

/// The tile side of records written before the 2-D blocked heat variants existed.
fn default_heat_tile() -> usize {
    128
}
