//! The look-up tables' configuration: exact dependences (the default) or PARTEE's block mode,
//! and the size of the tables' blocks.

use crate::Error;

/// How precisely the look-up tables tell accesses apart.
///
/// - [`Config::exact()`] (the default): two accesses depend on each other only if they share
///   an element (one of them writing), whatever their size and alignment. The tables are
///   indexed by blocks ([`Config::DEFAULT_BLOCK`] bytes unless
///   [`with_index_block`](Config::with_index_block) says otherwise), but a block is only an
///   index: it never creates a dependence.
/// - [`Config::blocks(bytes)`](Config::blocks): PARTEE's block mode. `bytes` is the
///   *dependence unit*: two accesses that touch the same block depend on each other even if
///   they share no element (a false dependence), which makes the tables cheaper.
/// - [`Config::thesis()`]: block mode with 2 KiB blocks, the thesis' semantics and defaults,
///   for reproducing its figures.
///
/// ```
/// use taskpools::dataflow::{self, Config};
///
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// // 16-byte elements (an array of pointers, say): under the default, tasks on neighbouring
/// // elements are independent; under `Config::thesis()`, 128 of them share a 2 KiB block.
/// let mut v = vec![[0u64; 2]; 256];
/// dataflow::scope_with(Config::default(), |df| {
///     let r = df.region(&mut v);
///     for i in 0..256 {
///         df.spawn(r.at(i).out(), move |_, e| e[0] = i as u64); // no dependence between them
///     }
/// });
/// assert_eq!(v[255][0], 255);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub(super) block: usize,
    pub(super) exact: bool,
}

impl Default for Config {
    /// [`Config::exact()`]: exact dependences, tables indexed by blocks of
    /// [`Config::DEFAULT_BLOCK`] bytes.
    fn default() -> Self {
        Config::exact()
    }
}

impl Config {
    /// The size of the tables' blocks unless one is chosen, in bytes: the index block of
    /// [`Config::exact()`] and the dependence unit of [`Config::thesis()`] (PARTEE's 2 KiB).
    pub const DEFAULT_BLOCK: usize = 2048;
    /// The largest block size accepted.
    pub const MAX_BLOCK: usize = 1 << 30;

    /// Exact dependences (the default): no false dependences, whatever the alignment and
    /// size of the accesses. The tables are indexed by blocks of [`Config::DEFAULT_BLOCK`]
    /// bytes, each holding the exact ranges that touch it (see
    /// [`with_index_block`](Self::with_index_block)). While a region's accesses are whole
    /// tiles (each equal to an earlier one or disjoint from all), its table keeps one state
    /// per tile, in a second trie of the same size made at the first tile access; a partly
    /// overlapping one (a tile read with its halo) turns that into one state per cell of the
    /// grid that the tiles' edges cut. A one-row access before that, or, after it, one of
    /// another row stride, one that wraps into the next row, or one that the grid's limits
    /// refuse, returns the table to per-row entries.
    ///
    /// ```
    /// use taskpools::dataflow::{self, Config};
    ///
    /// assert_eq!(Config::exact(), Config::default());
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = vec![0u8; 64];
    /// dataflow::scope_with(Config::exact(), |df| {
    ///     let r = df.region(&mut v);
    ///     // Eight-byte parts of one block: exact ranges let them run side by side.
    ///     for i in 0..8 {
    ///         df.spawn(r.part(8 * i..8 * i + 8).out(), move |_, p| p.fill(i as u8));
    ///     }
    /// });
    /// assert_eq!((v[0], v[63]), (0, 7));
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub const fn exact() -> Config {
        Config {
            block: Self::DEFAULT_BLOCK,
            exact: true,
        }
    }

    /// This exact configuration with the tables indexed by blocks of `bytes` bytes (1 to
    /// [`Config::MAX_BLOCK`]). The dependences stay exact whatever `bytes` is; it trades
    /// memory for look-up work: an access touches one table slot per index block it covers,
    /// and each region's table starts with one pointer per 256 blocks (twice that while its
    /// accesses are whole tiles), again after every [`Scope::sync`](super::Scope::sync).
    ///
    /// # Panics
    ///
    /// On a block-mode configuration, where the block is the dependence unit: choose it with
    /// [`Config::blocks`].
    ///
    /// ```
    /// use taskpools::dataflow::Config;
    ///
    /// let c = Config::exact().with_index_block(512)?;
    /// assert!(c.is_exact());
    /// assert_eq!(c.block_bytes(), 512);
    /// assert!(Config::exact().with_index_block(0).is_err());
    /// assert!(Config::exact().with_index_block(Config::MAX_BLOCK + 1).is_err());
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn with_index_block(self, bytes: usize) -> Result<Config, Error> {
        assert!(
            self.exact,
            "Config::with_index_block on a block-mode configuration: there the block is the \
             dependence unit; choose it with Config::blocks"
        );
        Ok(Config {
            exact: true,
            ..Self::blocks(bytes)?
        })
    }

    /// PARTEE's block mode with blocks of `bytes` bytes (1 to [`Config::MAX_BLOCK`]): the
    /// block is the dependence unit, so accesses that touch the same block are ordered even
    /// if they share no element (false dependences); smaller blocks cost more table slots
    /// per access. Each region's table starts with one pointer per 256 blocks (for 1-byte
    /// blocks over 1 GiB of data, 32 MiB per region, again after every
    /// [`Scope::sync`](super::Scope::sync)).
    ///
    /// ```
    /// use taskpools::dataflow::{self, Config};
    ///
    /// let config = Config::blocks(256)?;
    /// assert!(!config.is_exact());
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

    /// The thesis' semantics and defaults, for reproducing its figures: PARTEE's block mode
    /// with blocks of [`Config::DEFAULT_BLOCK`] (2 KiB), so accesses within 2 KiB of each
    /// other may be ordered although they share no element. (This was `Config::default()`
    /// before exact dependences became the default.)
    ///
    /// ```
    /// use taskpools::dataflow::{self, Config};
    ///
    /// assert_eq!(Config::thesis(), Config::blocks(2048)?);
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut v = vec![0u64; 8];
    /// dataflow::scope_with(Config::thesis(), |df| {
    ///     let r = df.region(&mut v);
    ///     // The same 2 KiB block: the second task waits for the first.
    ///     df.spawn(r.at(0).out(), |_, x| *x = 1);
    ///     df.spawn(r.at(1).out(), |_, x| *x = 2);
    /// });
    /// assert_eq!(v[..2], [1, 2]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub const fn thesis() -> Config {
        Config {
            block: Self::DEFAULT_BLOCK,
            exact: false,
        }
    }

    /// The tables' block size in bytes: in block mode the dependence unit, in exact mode
    /// only the index block.
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

    /// Whether dependences are exact (no false dependences between accesses in one block).
    ///
    /// ```
    /// use taskpools::dataflow::Config;
    ///
    /// assert!(Config::default().is_exact());
    /// assert!(!Config::thesis().is_exact()); // block mode, as PARTEE
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn is_exact(&self) -> bool {
        self.exact
    }
}
