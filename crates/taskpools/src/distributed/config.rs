//! How the ranks of a distributed phase share work: the search strategy, the batch size of a
//! steal reply, the wake policy inside a rank, and the emulated cost of crossing ranks.

use std::time::Duration;

use crate::pool::Search;
use crate::WakePolicy;

/// How the ranks share work.
#[derive(Clone, Copy, Debug)]
pub struct DistributedConfig {
    /// How a rank without work chooses the rank it asks (`None`: ranks never ask, each runs
    /// only its own initial tasks — a static split, the distributed analogue of the pools
    /// without load balancing of Korch & Rauber (2002), `dq1` and `dq3`).
    pub search: Option<Search>,
    /// The most tasks one steal reply carries (at least 1). A victim takes up to twice this
    /// out of its pool and sends half.
    pub max_batch: usize,
    /// Which puts wake sleeping workers inside a rank.
    pub wake: WakePolicy,
    /// Emulated cost of crossing ranks: the agent waits this long before sending each task
    /// message and each steal request (remote operations being dearer than local ones, as in
    /// Kotz & Ellis, "Evaluation of Concurrent Pools" (1989)). Zero by default.
    pub remote_delay: Duration,
    /// Adversarial timing for tests: before handling each incoming message the agent waits a
    /// random time up to this. Zero by default.
    pub jitter: Duration,
    /// Seed of the random choices (victims, jitter); each rank mixes in its rank.
    pub seed: u64,
}

impl Default for DistributedConfig {
    fn default() -> Self {
        DistributedConfig {
            search: Some(Search::Random),
            max_batch: 256,
            wake: WakePolicy::OnEmpty,
            remote_delay: Duration::ZERO,
            jitter: Duration::ZERO,
            seed: 0x5eed,
        }
    }
}
