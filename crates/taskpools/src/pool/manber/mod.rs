//! Manber's concurrent pool of arbitrary elements (seed 003): one segment per participant,
//! steal-half, and three ways to search for a non-empty segment (tree, linear, random).
//!
//! * **Segments**: a participant adds to and removes from its own segment (a `VecDeque` at the
//!   back, O(1)) without touching the others. When its segment is empty it searches; on finding
//!   a non-empty segment it takes the oldest ⌈n/2⌉ elements into its own segment. The split is
//!   **O(stolen)** (elements are moved, not relinked), and a thief never holds two segment
//!   locks at once, so two thieves stealing from each other cannot deadlock.
//! * **Search** ([`Search`]): Manber's tree of round counters (`tree.rs`), linear from the
//!   segment where it last found elements around the ring, or random.
//! * **Exhaustion without livelock** (seed §3.2): when every active participant is searching,
//!   none can add, so an empty pool stays empty. After a pass that found nothing, a searcher
//!   checks `searching == active`, examines every segment under its lock, and checks both again
//!   along with `version`, which every successful steal bumps *while it still holds the victim's
//!   lock* (so elements in flight are seen). Unchanged → the pool was empty while everyone
//!   searched: every searcher gets [`Removed::Exhausted`]. An element that exists is either in a
//!   segment (the scan sees it) or in the hands of a participant that left the search (the
//!   version or the count changes), so there is no false "exhausted".
//! * **Waiting mode** (the seed's future work): a remover that found nothing registers a
//!   request and parks; an `add` that sees a request hands its element straight to the waiter.
//!   Waiters also wake on a timeout to search again, so an element added just before the
//!   request was registered is not stranded.
//! * **Remote-cost emulation**: an optional busy-wait on every access to a non-local segment
//!   and to a tree node, like the seed's adjustable penalty.

mod task_pool;
mod tree;

pub use task_pool::StealHalfPool;

use std::collections::VecDeque;
use std::fmt;
use std::thread::Thread;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use crate::sync::{lock, Arc, AtomicBool, AtomicU64, AtomicUsize, Mutex, Ordering};
use tree::{Cursor, Tree, TreeOutcome};

/// How a participant with an empty segment looks for elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Search {
    /// Manber's tree of round counters (seed Figure 2).
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
    pub fn name(self) -> &'static str {
        match self {
            Search::Tree => "tree",
            Search::Linear => "linear",
            Search::Random => "random",
        }
    }

    /// The seed's name for the algorithm (seed 003, Figures 2–4).
    pub fn alias(self) -> &'static str {
        match self {
            Search::Tree => "tree-search",
            Search::Linear => "linear-search",
            Search::Random => "random-search",
        }
    }

    /// One line for `taskpools list`.
    pub fn description(self) -> &'static str {
        match self {
            Search::Tree => "Manber's tree of round counters leads to a non-empty segment",
            Search::Linear => "around the ring from the segment that last had elements",
            Search::Random => "random segments until a non-empty one",
        }
    }

    /// Parses a name or alias.
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

/// Construction parameters.
#[derive(Clone, Copy, Debug)]
pub struct ConcurrentConfig {
    /// Number of participants (segments), at least 1.
    pub participants: usize,
    /// Search strategy.
    pub search: Search,
    /// Park a remover that found nothing until an `add` hands it an element.
    pub waiting: bool,
    /// Busy-wait this long on every access to a non-local segment or a tree node.
    pub remote_delay_ns: u64,
}

/// The result of [`ConcurrentPool::remove`].
#[derive(Debug, PartialEq, Eq)]
pub enum Removed<T> {
    /// An element.
    Element(T),
    /// Every active participant was searching and the pool was empty.
    Exhausted,
}

/// Per-participant counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Removes that had to search (own segment empty).
    pub searches: u64,
    /// Searches that ended with a steal.
    pub steals: u64,
    /// Segments examined by searches that ended with a steal.
    pub segments_examined: u64,
    /// Segments examined by searches that found nothing.
    pub segments_examined_fruitless: u64,
    /// Elements moved by steals.
    pub elements_stolen: u64,
    /// Tree nodes visited (tree search only).
    pub tree_nodes: u64,
    /// Elements received directly from an `add` (waiting mode).
    pub handoffs_received: u64,
    /// Removes that returned `Exhausted`.
    pub exhausted: u64,
}

struct Segment<T> {
    items: Mutex<VecDeque<T>>,
    len: AtomicUsize,
}

struct Waiter<T> {
    slot: Mutex<WaitSlot<T>>,
    thread: Thread,
}

enum WaitSlot<T> {
    Waiting,
    /// An element and the participant that handed it over.
    Filled(T, usize),
    Exhausted,
}

/// The concurrent pool.
pub struct ConcurrentPool<T> {
    segs: Box<[CachePadded<Segment<T>>]>,
    tree: Tree,
    cfg: ConcurrentConfig,
    searching: CachePadded<AtomicUsize>,
    active: CachePadded<AtomicUsize>,
    version: CachePadded<AtomicU64>,
    exhausted_gen: CachePadded<AtomicU64>,
    waiting: CachePadded<AtomicUsize>,
    waiters: Mutex<VecDeque<Arc<Waiter<T>>>>,
    claimed: Box<[AtomicBool]>,
}

/// A participant's private state: which segment is its own, where its searches resume, and
/// its counters. Get one with [`ConcurrentPool::join`].
pub struct Participant {
    id: usize,
    rng: fastrand::Rng,
    last_found: usize,
    /// The participant whose `add` handed this one its last hand-off (waiting mode).
    giver: usize,
    cursor: Cursor,
    /// This participant's counters.
    pub stats: PoolStats,
}

impl Participant {
    /// The participant's (and its segment's) index.
    pub fn id(&self) -> usize {
        self.id
    }

    /// The segment its last successful steal took from (its own index before any).
    pub fn last_victim(&self) -> usize {
        self.last_found
    }

    /// The participant whose `add` handed it its last hand-off in waiting mode (its own
    /// index before any; see [`PoolStats::handoffs_received`]).
    pub fn last_giver(&self) -> usize {
        self.giver
    }
}

/// Reads a counter of the exhaustion protocol with a read-modify-write, which always returns
/// the latest value in the counter's modification order (a plain load may legally return an
/// older one for a while, and loom explores exactly that in spin loops).
#[inline]
fn latest(a: &AtomicUsize) -> usize {
    a.fetch_add(0, Ordering::SeqCst)
}

#[inline]
fn latest64(a: &AtomicU64) -> u64 {
    a.fetch_add(0, Ordering::SeqCst)
}

/// How long a parked waiter sleeps before it searches again on its own.
const WAIT_TIMEOUT: Duration = Duration::from_millis(1);

enum Pass<T> {
    Found(T),
    Nothing,
}

impl<T: Send> ConcurrentPool<T> {
    /// A pool with one empty segment per participant.
    pub fn new(cfg: ConcurrentConfig) -> Result<Self, crate::error::Error> {
        if cfg.participants == 0 {
            return Err(crate::error::Error::ZeroThreads);
        }
        let n = cfg.participants;
        Ok(ConcurrentPool {
            segs: (0..n)
                .map(|_| {
                    CachePadded::new(Segment {
                        items: Mutex::new(VecDeque::new()),
                        len: AtomicUsize::new(0),
                    })
                })
                .collect(),
            tree: Tree::new(n),
            cfg,
            searching: CachePadded::new(AtomicUsize::new(0)),
            active: CachePadded::new(AtomicUsize::new(n)),
            version: CachePadded::new(AtomicU64::new(0)),
            exhausted_gen: CachePadded::new(AtomicU64::new(0)),
            waiting: CachePadded::new(AtomicUsize::new(0)),
            waiters: Mutex::new(VecDeque::new()),
            claimed: (0..n).map(|_| AtomicBool::new(false)).collect(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ConcurrentConfig {
        &self.cfg
    }

    /// Becomes participant `id` (each id once at a time; panics otherwise). All participants
    /// count as active from the start; one that stops taking part must [`leave`](Self::leave),
    /// or the others could never be told the pool is exhausted.
    pub fn join(&self, id: usize) -> Participant {
        assert!(
            !self.claimed[id].swap(true, Ordering::AcqRel),
            "participant {id} has already joined"
        );
        Participant {
            id,
            rng: fastrand::Rng::with_seed(0x3a4b_0000 + id as u64),
            last_found: id,
            giver: id,
            cursor: self.tree.cursor(id),
            stats: PoolStats::default(),
        }
    }

    /// Stops taking part: the others no longer wait for this participant to search before they
    /// may conclude that the pool is exhausted. Its segment's elements stay in the pool.
    pub fn leave(&self, p: Participant) {
        self.claimed[p.id].store(false, Ordering::Release);
        self.active.fetch_sub(1, Ordering::SeqCst);
        self.version.fetch_add(1, Ordering::SeqCst);
        // Parked searchers may now be able to conclude exhaustion.
        for w in lock(&self.waiters).iter() {
            w.thread.unpark();
        }
    }

    /// Puts elements into participant `id`'s segment before the participants start (the
    /// initial fill).
    pub fn fill(&self, id: usize, items: impl IntoIterator<Item = T>) {
        let seg = &self.segs[id];
        let mut q = lock(&seg.items);
        q.extend(items);
        seg.len.store(q.len(), Ordering::Relaxed);
    }

    /// The current size of segment `id` (no lock: a snapshot for sampling).
    pub fn segment_len(&self, id: usize) -> usize {
        self.segs[id].len.load(Ordering::Relaxed)
    }

    /// Number of elements in all segments (a snapshot).
    pub fn len(&self) -> usize {
        (0..self.segs.len()).map(|i| self.segment_len(i)).sum()
    }

    /// Whether all segments look empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes everything left (after the participants are done).
    pub fn drain(&self) -> Vec<T> {
        let mut out = Vec::new();
        for seg in self.segs.iter() {
            let mut q = lock(&seg.items);
            out.extend(q.drain(..));
            seg.len.store(0, Ordering::Relaxed);
        }
        out
    }

    #[inline]
    fn remote_delay(&self) {
        let ns = self.cfg.remote_delay_ns;
        if ns > 0 {
            let t = Instant::now();
            while (t.elapsed().as_nanos() as u64) < ns {
                std::hint::spin_loop();
            }
        }
    }

    /// Adds an element: to a waiting remover if there is one (waiting mode), else to the
    /// participant's own segment. Returns whether the own segment was empty before.
    pub fn add(&self, p: &mut Participant, x: T) -> bool {
        let x = match self.hand_off(x, p.id) {
            None => return false,
            Some(x) => x,
        };
        let seg = &self.segs[p.id];
        let mut q = lock(&seg.items);
        let was_empty = q.is_empty();
        q.push_back(x);
        seg.len.store(q.len(), Ordering::Relaxed);
        was_empty
    }

    /// Waiting mode: gives `x` to the oldest waiter; returns it back if there is none.
    fn hand_off(&self, x: T, giver: usize) -> Option<T> {
        if !self.cfg.waiting || self.waiting.load(Ordering::Relaxed) == 0 {
            return Some(x);
        }
        let mut ws = lock(&self.waiters);
        let Some(w) = ws.pop_front() else {
            return Some(x);
        };
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        // The waiter stops searching now, while we (not searching) hold the element.
        self.version.fetch_add(1, Ordering::SeqCst);
        self.searching.fetch_sub(1, Ordering::SeqCst);
        *lock(&w.slot) = WaitSlot::Filled(x, giver);
        drop(ws);
        w.thread.unpark();
        None
    }

    /// Takes from the own segment (the newest element).
    #[inline]
    fn pop_own(&self, p: &Participant) -> Option<T> {
        let seg = &self.segs[p.id];
        if seg.len.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut q = lock(&seg.items);
        let x = q.pop_back();
        seg.len.store(q.len(), Ordering::Relaxed);
        x
    }

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
    fn pass(&self, p: &mut Participant, leave_search: bool) -> Pass<T> {
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

    /// Removes an element: from the own segment if it has one, else by searching and stealing
    /// half of a non-empty segment. Returns [`Removed::Exhausted`] only when every active
    /// participant is searching and the pool is empty.
    pub fn remove(&self, p: &mut Participant) -> Removed<T> {
        if let Some(x) = self.pop_own(p) {
            return Removed::Element(x);
        }
        p.stats.searches += 1;
        // Read the exhaustion generation *before* joining the search: a declaration needs this
        // participant counted as searching, so it cannot fall between the two steps unseen.
        // (In the other order, a declaration that counted us could land between them, we
        // would take its new generation as our start and wait for the others forever; the
        // loom model `loom_all_searching_on_an_empty_pool_are_all_exhausted` found that.)
        let gen = latest64(&self.exhausted_gen);
        self.searching.fetch_add(1, Ordering::SeqCst);
        loop {
            if let Pass::Found(x) = self.pass(p, true) {
                return Removed::Element(x);
            }
            if latest64(&self.exhausted_gen) != gen || self.check_exhausted() {
                self.searching.fetch_sub(1, Ordering::SeqCst);
                p.stats.exhausted += 1;
                return Removed::Exhausted;
            }
            if self.cfg.waiting {
                if let Some(r) = self.wait(p, gen) {
                    return r;
                }
            } else {
                crate::sync::yield_now();
            }
        }
    }

    /// Waiting mode: register, park until handed an element, told the pool is exhausted, or
    /// the timeout passes (then search again). `None` = search again.
    fn wait(&self, p: &mut Participant, gen: u64) -> Option<Removed<T>> {
        let me = Arc::new(Waiter {
            slot: Mutex::new(WaitSlot::Waiting),
            thread: std::thread::current(),
        });
        {
            let mut ws = lock(&self.waiters);
            // Declared while we were getting here?
            if latest64(&self.exhausted_gen) != gen {
                drop(ws);
                self.searching.fetch_sub(1, Ordering::SeqCst);
                p.stats.exhausted += 1;
                return Some(Removed::Exhausted);
            }
            ws.push_back(Arc::clone(&me));
            self.waiting.fetch_add(1, Ordering::SeqCst);
        }
        std::thread::park_timeout(WAIT_TIMEOUT);
        let mut ws = lock(&self.waiters);
        if let Some(i) = ws.iter().position(|w| Arc::ptr_eq(w, &me)) {
            // Nobody served us: withdraw and search again.
            ws.remove(i);
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        drop(ws);
        // Taken off the list by an adder or by the exhaustion broadcast: the slot is set
        // before the waiter list is unlocked, so it is final now.
        let slot = std::mem::replace(&mut *lock(&me.slot), WaitSlot::Waiting);
        match slot {
            WaitSlot::Filled(x, giver) => {
                p.stats.handoffs_received += 1;
                p.giver = giver;
                Some(Removed::Element(x))
            }
            WaitSlot::Exhausted => {
                self.searching.fetch_sub(1, Ordering::SeqCst);
                p.stats.exhausted += 1;
                Some(Removed::Exhausted)
            }
            WaitSlot::Waiting => unreachable!("a waiter leaves the list only with a filled slot"),
        }
    }

    /// The exhaustion check (module docs). Declares exhaustion and wakes every waiter if the
    /// pool was empty while every active participant searched.
    fn check_exhausted(&self) -> bool {
        let gen = latest64(&self.exhausted_gen);
        if latest(&self.searching) != latest(&self.active) {
            return false;
        }
        let v = latest64(&self.version);
        for seg in self.segs.iter() {
            if !lock(&seg.items).is_empty() {
                return false;
            }
        }
        if latest(&self.searching) != latest(&self.active) || latest64(&self.version) != v {
            return false;
        }
        if self
            .exhausted_gen
            .compare_exchange(gen, gen + 1, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            let mut ws = lock(&self.waiters);
            for w in ws.drain(..) {
                self.waiting.fetch_sub(1, Ordering::SeqCst);
                *lock(&w.slot) = WaitSlot::Exhausted;
                w.thread.unpark();
            }
        }
        true
    }

    /// One search without the exhaustion protocol (for the task-pool adapter, whose runtime
    /// decides termination): own segment, then one pass.
    pub(crate) fn try_remove(&self, p: &mut Participant) -> Option<T> {
        if let Some(x) = self.pop_own(p) {
            return Some(x);
        }
        p.stats.searches += 1;
        match self.pass(p, false) {
            Pass::Found(x) => Some(x),
            Pass::Nothing => None,
        }
    }

    /// Number of segments.
    pub fn participants(&self) -> usize {
        self.segs.len()
    }

    /// Gives a participant slot back without the `leave` bookkeeping (task-pool adapter).
    pub(crate) fn release(&self, id: usize) {
        self.claimed[id].store(false, Ordering::Release);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::thread;

    fn cfg(n: usize) -> ConcurrentConfig {
        ConcurrentConfig {
            participants: n,
            search: Search::Linear,
            waiting: false,
            remote_delay_ns: 0,
        }
    }

    /// A thief's steal-half split races the owner's add and remove on the same segment: every
    /// element is taken exactly once.
    #[test]
    fn loom_steal_half_races_owner_add_and_remove() {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(2);
        b.check(|| {
            let pool = Arc::new(ConcurrentPool::new(cfg(2)).unwrap());
            pool.fill(1, [1u32, 2]);
            let p2 = Arc::clone(&pool);
            let h = thread::spawn(move || {
                let mut thief = p2.join(0);
                p2.try_remove(&mut thief)
            });
            let mut owner = pool.join(1);
            pool.add(&mut owner, 3);
            let mine = pool.try_remove(&mut owner);
            let mut got: Vec<u32> = mine.into_iter().collect();
            got.extend(h.join().unwrap());
            got.extend(pool.drain());
            got.sort_unstable();
            assert_eq!(got, vec![1, 2, 3]);
        });
    }

    /// Two participants search an empty pool: both are told it is exhausted (no livelock);
    /// with one element present, exactly one gets it and the other is told "exhausted" only
    /// after that.
    #[test]
    fn loom_exhaustion_without_livelock_and_without_false_exhaustion() {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(2);
        b.check(|| {
            let pool = Arc::new(ConcurrentPool::new(cfg(2)).unwrap());
            pool.fill(1, [9u32]);
            let p2 = Arc::clone(&pool);
            let h = thread::spawn(move || {
                let mut a = p2.join(0);
                let r = p2.remove(&mut a);
                p2.leave(a);
                r
            });
            let mut b = pool.join(1);
            let mine = pool.remove(&mut b);
            pool.leave(b);
            let theirs = h.join().unwrap();
            let got: Vec<_> = [mine, theirs]
                .into_iter()
                .filter_map(|r| match r {
                    Removed::Element(x) => Some(x),
                    Removed::Exhausted => None,
                })
                .collect();
            assert_eq!(
                got,
                vec![9],
                "the element is removed once, and nobody waits forever"
            );
        });
    }
}

#[cfg(all(test, loom))]
mod loom_empty {
    use super::*;
    use loom::thread;

    /// Both participants search an empty pool (the seed's livelock): both are told it is
    /// exhausted.
    #[test]
    fn loom_all_searching_on_an_empty_pool_are_all_exhausted() {
        for search in Search::ALL {
            let mut b = loom::model::Builder::new();
            b.preemption_bound = Some(2);
            b.check(move || {
                let pool = Arc::new(
                    ConcurrentPool::<u32>::new(ConcurrentConfig {
                        participants: 2,
                        search,
                        waiting: false,
                        remote_delay_ns: 0,
                    })
                    .unwrap(),
                );
                let p2 = Arc::clone(&pool);
                let h = thread::spawn(move || {
                    let mut a = p2.join(0);
                    p2.remove(&mut a)
                });
                let mut b = pool.join(1);
                assert_eq!(pool.remove(&mut b), Removed::Exhausted, "{search}");
                assert_eq!(h.join().unwrap(), Removed::Exhausted, "{search}");
            });
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn cfg(n: usize, search: Search, waiting: bool) -> ConcurrentConfig {
        ConcurrentConfig {
            participants: n,
            search,
            waiting,
            remote_delay_ns: 0,
        }
    }

    #[test]
    fn steal_half_takes_the_oldest_half_and_returns_one() {
        for search in Search::ALL {
            let pool = ConcurrentPool::new(cfg(2, search, false)).unwrap();
            pool.fill(1, 0..10u32);
            let mut p0 = pool.join(0);
            let Removed::Element(x) = pool.remove(&mut p0) else {
                panic!()
            };
            assert_eq!(p0.stats.steals, 1);
            assert_eq!(p0.stats.elements_stolen, 5);
            assert!(x < 5, "{search}: stole from the old end, got {x}");
            assert_eq!(pool.segment_len(0), 4);
            assert_eq!(pool.segment_len(1), 5);
        }
    }

    #[test]
    fn zero_participants_is_an_error() {
        assert!(ConcurrentPool::<u32>::new(cfg(0, Search::Tree, false)).is_err());
        assert!(Search::from_name("spiral").is_err());
    }
}
