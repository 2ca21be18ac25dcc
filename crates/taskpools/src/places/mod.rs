//! Locality-aware places (Weibel, "An Advanced Scheduler for Intervals", LASSI 2010). A
//! runtime built with [`Places`] groups its workers into places: each place has a fixed set of
//! workers, pinned to the place's cores, and one **shared deque** that its workers take work
//! from. A spawn may carry a locality hint ([`Scope::spawn_at`], the
//! data-flow [`Scope::spawn_at`](crate::dataflow::Scope::spawn_at)): the task goes to that
//! place's deque. A spawn without a hint stays on the spawning worker's own deque, as without
//! places ([`Unhinted::Local`], the default), or goes to the places in turn
//! ([`Unhinted::RoundRobin`], Weibel's rule). A worker whose place has no
//! work steals from a **victim place chosen at random**, oldest task first; so a hinted task
//! may still run elsewhere, and exactly once.
//!
//! Places are virtual: a [`Places`] description maps cores to places. It comes from the
//! machine's [`Topology`] (`cores`, `ll_caches`, `numa_domains`, `sockets`, as in
//! `OMP_PLACES`), from an explicit list of cores per place (`{0,1},{2,3}`), or from a shape
//! (`2x4`: two places of four workers each, pinned round-robin over the process's cores, so
//! that any shape can be tried on any machine).
//!
//! ```
//! use taskpools::places::{PlaceId, Places};
//! use taskpools::Runtime;
//!
//! let rt = Runtime::builder().places(Places::parse("2x1")?).build()?;
//! let data = vec![1u64; 1 << 12];
//! let (left, right) = data.split_at(data.len() / 2);
//! let sums = [std::sync::atomic::AtomicU64::new(0), std::sync::atomic::AtomicU64::new(0)];
//! rt.scope(|s| -> Result<(), taskpools::Error> {
//!     // Each half is summed at its own place (its workers share that place's cache).
//!     for (i, half) in [left, right].into_iter().enumerate() {
//!         let sums = &sums;
//!         s.spawn_at(PlaceId(i), move |_| {
//!             sums[i].fetch_add(half.iter().sum(), std::sync::atomic::Ordering::Relaxed);
//!         })?;
//!     }
//!     Ok(())
//! })?;
//! assert_eq!(sums[0].load(std::sync::atomic::Ordering::Relaxed), 2048);
//! // A place that does not exist is an error value, not a panic.
//! assert!(rt.scope(|s| s.spawn_at(PlaceId(7), |_| ())).is_err());
//! # Ok::<(), taskpools::Error>(())
//! ```
//!
//! # What the runtime does with places (design note)
//! - **Where a worker looks for work**: its mailbox, its own deque (joins stay per worker:
//!   the join fast path does not change), its place's shared deque (newest first), then a
//!   random victim place's deque (oldest first) and the other places in turn, then the
//!   other workers' deques, then the injector.
//! - **No lost wake-up**: a push onto a place deque stores the deque's length mirror under
//!   its lock, then wakes a sleeper through the runtime's Dekker pair (`SeqCst` fence, read
//!   the sleeper count), exactly like the injector; a would-be sleeper's second look
//!   (`Registry::has_work`) reads every place's length mirror. The loom model
//!   `loom_a_place_push_wakes_a_sleeping_worker` checks it, with a planted twin.
//! - **No lost or duplicated task**: a place deque is a `VecDeque` under a mutex; a task is
//!   removed under the lock by exactly one taker, who runs it.
//! - **Weibel's future work** ([`PlacePolicy`]): thieves may leave hinted tasks alone for a
//!   while (a delay and a backlog threshold), idle workers park sooner when their steal
//!   attempts keep failing, and a thief may take half of a victim place's backlog at once.
//!   None of them can strand a task: a declined steal leaves the task in its deque, which
//!   keeps `has_work` true, so the would-be thief does not sleep; its idle time grows until
//!   the delay has passed and it takes the task.
//!
//! [`Scope::spawn_at`]: crate::forkjoin::Scope::spawn_at

pub(crate) mod cores;
mod current;
mod spec;
pub mod topology;

use std::time::Duration;

pub use current::current_place;
pub(crate) use current::set_current_place;
pub use spec::Places;
pub use topology::{Cpu, Level, Topology};

/// A place of a runtime built with [`Places`], numbered from 0 in the order of the
/// description.
///
/// ```
/// use taskpools::places::{current_place, PlaceId, Places};
///
/// let rt = taskpools::Runtime::builder().places(Places::parse("2x1")?).build()?;
/// assert_eq!(rt.broadcast(|_| current_place()), [Some(PlaceId(0)), Some(PlaceId(1))]);
/// assert_eq!(PlaceId(1).to_string(), "place 1");
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PlaceId(pub usize);

impl std::fmt::Display for PlaceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "place {}", self.0)
    }
}

/// Where a spawn without a locality hint goes on a runtime with places.
///
/// ```
/// use taskpools::places::{PlacePolicy, Places, Unhinted};
///
/// assert_eq!(PlacePolicy::default().unhinted, Unhinted::Local);
/// let rt = taskpools::Runtime::builder()
///     .places(Places::parse("2x1")?)
///     .place_policy(PlacePolicy { unhinted: Unhinted::RoundRobin, ..Default::default() })
///     .build()?;
/// let n = rt.scope(|s| {
///     (0..10).for_each(|_| s.spawn(|_| ())); // spread over the places' deques
///     10
/// });
/// assert_eq!(n, 10);
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Unhinted {
    /// To the places in turn (per spawning worker), as in Weibel's scheduler: the load is
    /// spread, and nothing is assumed about the data. Every such spawn takes a place deque's
    /// lock.
    RoundRobin,
    /// Onto the spawning worker's own deque, as on a runtime without places (the default: no
    /// locking, the spawn stays near the data its parent touched, and locality-ignorant
    /// programs run as they do without places).
    #[default]
    Local,
}

/// How workers of different places treat each other's work: Weibel's future work, built.
/// The default is Weibel's design (steal anything, one task at a time, park after a fixed
/// number of empty rounds), except that unhinted spawns stay local ([`Unhinted::Local`]);
/// Weibel's round-robin measured 5–13 % slower on locality-ignorant programs here.
///
/// ```
/// use std::time::Duration;
/// use taskpools::places::{PlaceId, PlacePolicy, Places};
///
/// // Leave hinted tasks to their place for 50 µs, unless 8 or more wait there; steal half.
/// let policy = PlacePolicy {
///     remote_delay: Duration::from_micros(50),
///     remote_backlog: 8,
///     steal_half: true,
///     ..PlacePolicy::default()
/// };
/// let rt = taskpools::Runtime::builder()
///     .places(Places::parse("2x1")?)
///     .place_policy(policy)
///     .build()?;
/// let mut out = [0u32; 16];
/// rt.scope(|s| {
///     for (i, o) in out.iter_mut().enumerate() {
///         s.spawn_at(PlaceId(0), move |_| *o = i as u32).unwrap(); // all hinted to place 0
///     }
/// });
/// assert_eq!(out.iter().sum::<u32>(), 120); // every task ran once, wherever
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacePolicy {
    /// Spawns without a hint (default [`Unhinted::Local`]).
    pub unhinted: Unhinted,
    /// Avoid counter-productive steals: a worker takes a *hinted* task from another place
    /// only once it has looked for work without success for this long (default zero: at
    /// once)...
    pub remote_delay: Duration,
    /// ... or when the victim place holds more than this many tasks (default `usize::MAX`:
    /// the delay alone decides). Unhinted tasks are always taken.
    pub remote_backlog: usize,
    /// Take half of the victim place's tasks at once (up to 64) instead of one, moving the
    /// others to the thief's place (Manber's steal-half between places).
    pub steal_half: bool,
    /// Adapt the active workers to contention: a worker whose recent steal attempts mostly
    /// failed parks sooner (its spin budget halves, down to a fiftieth of the runtime's
    /// [`spin`](crate::RuntimeBuilder::spin)), and a worker that finds work again earns its
    /// budget back. Pushes wake a sleeper whenever sleepers exist, so
    /// growing backlogs bring parked workers back.
    pub adaptive: bool,
}

impl Default for PlacePolicy {
    fn default() -> Self {
        PlacePolicy {
            unhinted: Unhinted::Local,
            remote_delay: Duration::ZERO,
            remote_backlog: usize::MAX,
            steal_half: false,
            adaptive: false,
        }
    }
}

impl PlacePolicy {
    /// Whether hinted tasks are held back from thieves of other places at all.
    pub(crate) fn guards_hints(&self) -> bool {
        !self.remote_delay.is_zero()
    }
}
