//! The concurrent pool itself: one segment per participant, `add` and `remove` on the own
//! segment, the exhaustion protocol that ends a search of an empty pool without livelock, and
//! the waiting mode (the module docs of `manber`).

use std::collections::VecDeque;
use std::thread::Thread;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use super::search::Pass;
use super::tree::{Cursor, Tree};
use super::Search;
use crate::sync::{lock, Arc, AtomicBool, AtomicU64, AtomicUsize, Mutex, Ordering};

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

pub(super) struct Segment<T> {
    pub(super) items: Mutex<VecDeque<T>>,
    pub(super) len: AtomicUsize,
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
    pub(super) segs: Box<[CachePadded<Segment<T>>]>,
    pub(super) tree: Tree,
    pub(super) cfg: ConcurrentConfig,
    pub(super) searching: CachePadded<AtomicUsize>,
    active: CachePadded<AtomicUsize>,
    pub(super) version: CachePadded<AtomicU64>,
    exhausted_gen: CachePadded<AtomicU64>,
    waiting: CachePadded<AtomicUsize>,
    waiters: Mutex<VecDeque<Arc<Waiter<T>>>>,
    claimed: Box<[AtomicBool]>,
}

/// A participant's private state: which segment is its own, where its searches resume, and
/// its counters. Get one with [`ConcurrentPool::join`].
pub struct Participant {
    pub(super) id: usize,
    pub(super) rng: fastrand::Rng,
    pub(super) last_found: usize,
    /// The participant whose `add` handed this one its last hand-off (waiting mode).
    giver: usize,
    pub(super) cursor: Cursor,
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
    pub(super) fn remote_delay(&self) {
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
        let generation = latest64(&self.exhausted_gen);
        self.searching.fetch_add(1, Ordering::SeqCst);
        loop {
            if let Pass::Found(x) = self.pass(p, true) {
                return Removed::Element(x);
            }
            if latest64(&self.exhausted_gen) != generation || self.check_exhausted() {
                self.searching.fetch_sub(1, Ordering::SeqCst);
                p.stats.exhausted += 1;
                return Removed::Exhausted;
            }
            if self.cfg.waiting {
                if let Some(r) = self.wait(p, generation) {
                    return r;
                }
            } else {
                crate::sync::yield_now();
            }
        }
    }

    /// Waiting mode: register, park until handed an element, told the pool is exhausted, or
    /// the timeout passes (then search again). `None` = search again.
    fn wait(&self, p: &mut Participant, generation: u64) -> Option<Removed<T>> {
        let me = Arc::new(Waiter {
            slot: Mutex::new(WaitSlot::Waiting),
            thread: std::thread::current(),
        });
        {
            let mut ws = lock(&self.waiters);
            // Declared while we were getting here?
            if latest64(&self.exhausted_gen) != generation {
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
        let generation = latest64(&self.exhausted_gen);
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
            .compare_exchange(
                generation,
                generation + 1,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
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
