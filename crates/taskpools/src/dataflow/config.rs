//! The look-up tables' configuration: block mode (PARTEE's block-granular tries) or exact
//! mode, and the block size.

use crate::Error;

/// How the look-up tables key the data: blocks of a fixed size (PARTEE's design; accesses
/// to the same block are ordered even if their bytes do not overlap) or exact byte ranges.
///
/// ```
/// use taskpools::dataflow::{self, Config};
///
/// let config = Config::exact(256)?;
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// let mut v = vec![0u8; 4096];
/// dataflow::scope_with(config, |df| {
///     let r = df.region(&mut v);
///     // Disjoint writes: with exact ranges they never wait for each other.
///     df.spawn(r.part(0..10).out(), |_, a| a.fill(1));
///     df.spawn(r.part(10..20).out(), |_, b| b.fill(2));
/// });
/// assert_eq!((v[9], v[10]), (1, 2));
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub(super) block: usize,
    pub(super) exact: bool,
}

impl Default for Config {
    /// Blocks of 2 KiB (PARTEE's setting), block mode.
    fn default() -> Self {
        Config {
            block: Self::DEFAULT_BLOCK,
            exact: false,
        }
    }
}

impl Config {
    /// The default block size in bytes.
    pub const DEFAULT_BLOCK: usize = 2048;
    /// The largest block size accepted.
    pub const MAX_BLOCK: usize = 1 << 30;

    /// Block mode with blocks of `bytes` bytes (1 to [`Config::MAX_BLOCK`]): smaller blocks
    /// cost more look-up-table slots per access, larger ones create false dependences. Each
    /// region's table starts with one pointer per 256 blocks (for 1-byte blocks over 1 GiB of
    /// data, 32 MiB per region, again after every [`Scope::sync`](super::Scope::sync); in
    /// exact mode, up to twice that while the region's accesses are whole tiles, see
    /// [`Config::exact`]).
    ///
    /// ```
    /// use taskpools::dataflow::{self, Config};
    ///
    /// let config = Config::blocks(256)?;
    /// assert!(Config::blocks(0).is_err());
    /// assert!(Config::blocks(Config::MAX_BLOCK + 1).is_err());
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = vec![0u32; 1024];
    /// dataflow::scope_with(config, |df| {
    ///     for c in df.region(&mut v).chunks(64) {
    ///         df.spawn(c.out(), |_, c| c.fill(1)); // 256 bytes each: one block per task
    ///     }
    /// });
    /// assert_eq!(v.iter().sum::<u32>(), 1024);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn blocks(bytes: usize) -> Result<Config, Error> {
        if bytes == 0 || bytes > Self::MAX_BLOCK {
            return Err(Error::TooLarge {
                what: format!("data-flow block size of {bytes} bytes"),
                limit: format!("1 to {} bytes", Self::MAX_BLOCK),
            });
        }
        Ok(Config {
            block: bytes,
            exact: false,
        })
    }

    /// Exact mode: no false dependences, whatever the alignment and size of the accesses; the
    /// tables are indexed by blocks of `bytes` bytes, each holding the exact ranges that touch
    /// it. While a region's accesses are whole tiles (each equal to an earlier one or
    /// disjoint from all), its table keeps one state per tile, in a second trie of the same
    /// size made at the first tile access; the first one-row or partly overlapping access
    /// returns it to per-row entries.
    ///
    /// ```
    /// use taskpools::dataflow::Config;
    ///
    /// let c = Config::exact(512)?;
    /// assert!(c.is_exact());
    /// assert_eq!(c.block_bytes(), 512);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn exact(bytes: usize) -> Result<Config, Error> {
        Ok(Config {
            exact: true,
            ..Self::blocks(bytes)?
        })
    }

    /// The block size in bytes.
    ///
    /// ```
    /// use taskpools::dataflow::Config;
    ///
    /// assert_eq!(Config::default().block_bytes(), Config::DEFAULT_BLOCK);
    /// assert_eq!(Config::blocks(64)?.block_bytes(), 64);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn block_bytes(&self) -> usize {
        self.block
    }

    /// Whether dependences are exact.
    ///
    /// ```
    /// use taskpools::dataflow::Config;
    ///
    /// assert!(!Config::default().is_exact()); // block mode, as PARTEE
    /// assert!(Config::exact(64)?.is_exact());
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn is_exact(&self) -> bool {
        self.exact
    }
}
