//! How a participant with an empty segment looks for elements: the [`Search`] strategies
//! (Manber's tree of round counters, linear, random) and one pass of a search, which steals
//! the oldest half of the first non-empty segment it finds.

use std::collections::VecDeque;
use std::fmt;

use super::segments::{ConcurrentPool, Participant};
use super::tree::TreeOutcome;
use crate::sync::{lock, Ordering};

/// How a participant with an empty segment looks for elements.
///
/// ```
/// use taskpools::{BoxedTask, Builder, PoolKind, Search};
///
/// // Every search strategy finds every task of the steal-half pool.
/// for search in Search::ALL {
///     let b = Builder::new().threads(2).pool(PoolKind::StealHalf).search(search);
///     let root = BoxedTask::new(|ctx| (0..50).for_each(|_| ctx.put(BoxedTask::new(|_| {}))));
///     assert_eq!(b.run([root])?.tasks_run(), 51, "{search:?}");
/// }
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Search {
    /// Manber's tree of round counters (Kotz and Ellis, Figure 2).
    Tree,
    /// From the segment where it last found elements, around the ring (Figure 3).
    Linear,
    /// Random segments (Figure 4).
    Random,
}

impl Search {
    /// Every strategy.
    pub const ALL: [Search; 3] = [Search::Tree, Search::Linear, Search::Random];

    /// The name used on the command line.
    ///
    /// ```
    /// assert_eq!(taskpools::Search::Linear.name(), "linear");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Search::Tree => "tree",
            Search::Linear => "linear",
            Search::Random => "random",
        }
    }

    /// Kotz and Ellis's name for the algorithm (Figures 2–4).
    ///
    /// ```
    /// use taskpools::Search;
    ///
    /// assert_eq!(Search::Tree.alias(), "tree-search"); // Kotz and Ellis's name
    /// assert_eq!(Search::from_name("random-search")?, Search::Random);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn alias(self) -> &'static str {
        match self {
            Search::Tree => "tree-search",
            Search::Linear => "linear-search",
            Search::Random => "random-search",
        }
    }

    /// One line for `taskpools list`.
    ///
    /// ```
    /// for s in taskpools::Search::ALL {
    ///     println!("{:7} {:14} {}", s.name(), s.alias(), s.description());
    /// }
    /// assert!(taskpools::Search::Tree.description().contains("tree"));
    /// ```
    pub fn description(self) -> &'static str {
        match self {
            Search::Tree => "Manber's tree of round counters leads to a non-empty segment",
            Search::Linear => "around the ring from the segment that last had elements",
            Search::Random => "random segments until a non-empty one",
        }
    }

    /// Parses a name or alias.
    ///
    /// ```
    /// use taskpools::{Error, Search};
    ///
    /// assert_eq!(Search::from_name("tree")?, Search::Tree);
    /// assert_eq!("linear".parse::<Search>()?, Search::Linear);
    /// assert!(matches!(Search::from_name("binary"), Err(Error::UnknownSearch { .. })));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn from_name(s: &str) -> Result<Search, crate::error::Error> {
        Search::ALL
            .into_iter()
            .find(|x| x.name() == s || x.alias() == s)
            .ok_or_else(|| crate::error::Error::UnknownSearch {
                name: s.to_string(),
            })
    }
}

impl std::str::FromStr for Search {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Search::from_name(s)
    }
}

impl fmt::Display for Search {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

pub(super) enum Pass<T> {
    Found(T),
    Nothing,
}

impl<T: Send> ConcurrentPool<T> {
    /// Examines segment `v` and, if it has elements, moves about half of them (the oldest)
    /// into the participant's segment and returns one. `leave_search` makes the steal end the
    /// participant's searching state (version bump and count) under the victim's lock.
    fn try_steal(
        &self,
        p: &mut Participant,
        v: usize,
        leave_search: bool,
        examined: &mut u64,
    ) -> Option<T> {
        if v == p.id {
            return None;
        }
        *examined += 1;
        self.remote_delay();
        let seg = &self.segs[v];
        if seg.len.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut stolen = {
            let mut q = lock(&seg.items);
            if q.is_empty() {
                return None;
            }
            if leave_search {
                self.version.fetch_add(1, Ordering::SeqCst);
                self.searching.fetch_sub(1, Ordering::SeqCst);
            }
            let k = q.len().div_ceil(2);
            let stolen: VecDeque<T> = q.drain(..k).collect();
            seg.len.store(q.len(), Ordering::Relaxed);
            stolen
        };
        p.stats.steals += 1;
        p.stats.elements_stolen += stolen.len() as u64;
        p.last_found = v;
        let x = stolen.pop_back();
        if !stolen.is_empty() {
            let own = &self.segs[p.id];
            let mut q = lock(&own.items);
            q.extend(stolen);
            own.len.store(q.len(), Ordering::Relaxed);
        }
        x
    }

    /// One pass of the strategy: tree = until a round completes, linear = once around the
    /// ring, random = as many random picks as there are segments.
    pub(super) fn pass(&self, p: &mut Participant, leave_search: bool) -> Pass<T> {
        let n = self.segs.len();
        let mut examined = 0u64;
        let found = match self.cfg.search {
            Search::Tree => {
                let mut cursor = p.cursor.clone();
                let mut nodes = 0u64;
                let out = self.tree.search(
                    &mut cursor,
                    |s| self.try_steal(p, s, leave_search, &mut examined),
                    || {
                        nodes += 1;
                        self.remote_delay();
                    },
                );
                p.cursor = cursor;
                p.stats.tree_nodes += nodes;
                match out {
                    TreeOutcome::Found(x) => Some(x),
                    TreeOutcome::RoundCompleted => None,
                }
            }
            Search::Linear => {
                let start = p.last_found;
                (0..n).find_map(|k| self.try_steal(p, (start + k) % n, leave_search, &mut examined))
            }
            Search::Random => (0..n).find_map(|_| {
                let v = p.rng.usize(..n);
                self.try_steal(p, v, leave_search, &mut examined)
            }),
        };
        match found {
            Some(x) => {
                p.stats.segments_examined += examined;
                Pass::Found(x)
            }
            None => {
                p.stats.segments_examined_fruitless += examined;
                Pass::Nothing
            }
        }
    }
}
