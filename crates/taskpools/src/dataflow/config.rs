//! The look-up tables' configuration: block mode (PARTEE's block-granular tries) or exact
//! mode, and the block size.

use crate::Error;

/// How the look-up tables key the data: blocks of a fixed size (PARTEE's design; accesses
/// to the same block are ordered even if their bytes do not overlap) or exact byte ranges.
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
    pub fn exact(bytes: usize) -> Result<Config, Error> {
        Ok(Config {
            exact: true,
            ..Self::blocks(bytes)?
        })
    }

    /// The block size in bytes.
    pub fn block_bytes(&self) -> usize {
        self.block
    }

    /// Whether dependences are exact.
    pub fn is_exact(&self) -> bool {
        self.exact
    }
}
