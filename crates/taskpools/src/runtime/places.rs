//! The runtime's side of [places](crate::places): one shared deque per place, the place of
//! each worker, and the policy. The argument that no task or wake-up is lost is in the
//! [`places`](crate::places) module docs; the loom model is in `registry.rs`.

use std::collections::VecDeque;

use crossbeam_utils::CachePadded;

use super::job::JobRef;
use crate::places::{PlacePolicy, Places};
use crate::sync::{lock, AtomicUsize, Mutex, Ordering};

/// A queued task and whether it carries a locality hint (thieves of other places may leave
/// hinted tasks alone for a while; see [`PlacePolicy::remote_delay`]).
pub(crate) struct Entry {
    pub(crate) job: JobRef,
    pub(crate) hinted: bool,
    /// The worker that pushed it and its wait depth then (`NOBODY` from outside): a deep
    /// wait takes back only its own tasks (see `WorkerThread::run_one_or_starve`).
    pub(crate) owner: u32,
    pub(crate) depth: u32,
}

/// [`Entry::owner`] of a task pushed from outside the runtime.
pub(crate) const NOBODY: u32 = u32::MAX;

/// The shared deque of one place: its workers push and pop at the back (newest first),
/// thieves of other places take from the front (oldest first). A `VecDeque` under a mutex,
/// with a length mirror that idle workers read without the lock.
pub(crate) struct PlaceDeque {
    len: AtomicUsize,
    q: Mutex<VecDeque<Entry>>,
    /// Per worker: how many of the queued entries it pushed (written under the lock, read
    /// without it), so that a deep wait scans the deque only when it has tasks there.
    owned: Box<[AtomicUsize]>,
    /// Unhinted entries queued (written under the lock): a thief that may not take hinted
    /// tasks declines at once when there are none, without scanning.
    unhinted: AtomicUsize,
}

/// What a thief got from a victim place.
pub(crate) enum Take {
    /// The deque was empty.
    Empty,
    /// It holds only hinted tasks, and the policy says to leave them.
    Declined,
    /// A task to run, and (steal-half) the others taken with it, oldest first.
    Got(JobRef, Vec<Entry>),
}

impl PlaceDeque {
    fn new(workers: usize) -> PlaceDeque {
        PlaceDeque {
            len: AtomicUsize::new(0),
            q: Mutex::new(VecDeque::new()),
            owned: (0..workers).map(|_| AtomicUsize::new(0)).collect(),
            unhinted: AtomicUsize::new(0),
        }
    }

    /// Counts `e` in (`+1`) or out (`-1`) of its owner's entries and the unhinted ones;
    /// under the lock.
    fn own(&self, e: &Entry, delta: isize) {
        let add = |c: &AtomicUsize| {
            let v = c.load(Ordering::Relaxed).wrapping_add_signed(delta);
            c.store(v, Ordering::Relaxed);
        };
        if let Some(c) = self.owned.get(e.owner as usize) {
            add(c);
        }
        if !e.hinted {
            add(&self.unhinted);
        }
    }

    /// Tasks queued (a recent value, read without the lock).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Queues at the back. The length mirror is stored under the lock, before the caller's
    /// wake-up fence (the Dekker pair with a would-be sleeper's second look).
    pub(crate) fn push(&self, e: Entry) {
        let mut q = lock(&self.q);
        self.own(&e, 1);
        q.push_back(e);
        self.len.store(q.len(), Ordering::Relaxed);
    }

    /// Queues several at the back, oldest first (what a steal-half brought home).
    pub(crate) fn push_all(&self, es: Vec<Entry>) {
        if es.is_empty() {
            return;
        }
        let mut q = lock(&self.q);
        for e in &es {
            self.own(e, 1);
        }
        q.extend(es);
        self.len.store(q.len(), Ordering::Relaxed);
    }

    /// A worker of this place: the newest task.
    #[inline]
    pub(crate) fn pop(&self) -> Option<JobRef> {
        if self.len() == 0 {
            return None;
        }
        let mut q = lock(&self.q);
        let e = q.pop_back()?;
        self.own(&e, -1);
        self.len.store(q.len(), Ordering::Relaxed);
        Some(e.job)
    }

    /// A deep wait of worker `owner`: its newest task pushed at wait depth `depth` or deeper
    /// (a task of the subtree it waits in), wherever it is in the deque.
    pub(crate) fn take_own(&self, owner: u32, depth: u32) -> Option<JobRef> {
        let mine = self.owned.get(owner as usize)?;
        if mine.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut q = lock(&self.q);
        let i = q
            .iter()
            .rposition(|e| e.owner == owner && e.depth >= depth)?;
        let e = q.remove(i).expect("found");
        self.own(&e, -1);
        self.len.store(q.len(), Ordering::Relaxed);
        Some(e.job)
    }

    /// A thief of another place: the oldest task it may take. Hinted tasks are taken only
    /// if `allow(len)` says so; otherwise the oldest *unhinted* tasks are taken, if any.
    /// With `half`, up to half of the deque's tasks (at most 64) that it may take, oldest
    /// first; else one.
    pub(crate) fn steal(&self, allow: impl Fn(usize) -> bool, half: bool) -> Take {
        if self.len() == 0 {
            return Take::Empty;
        }
        let mut q = lock(&self.q);
        let n = q.len();
        if n == 0 {
            return Take::Empty;
        }
        let want = if half { (n / 2).clamp(1, 64) } else { 1 };
        let hints_ok = allow(n);
        if !hints_ok && self.unhinted.load(Ordering::Relaxed) == 0 {
            return Take::Declined;
        }
        let mut taken: Vec<Entry> = Vec::new();
        if hints_ok && !half {
            taken.extend(q.pop_front());
        } else {
            let mut i = 0;
            while i < q.len() && taken.len() < want {
                if q[i].hinted && !hints_ok {
                    i += 1;
                } else {
                    taken.push(q.remove(i).expect("in range"));
                }
            }
        }
        for e in &taken {
            self.own(e, -1);
        }
        self.len.store(q.len(), Ordering::Relaxed);
        drop(q);
        if taken.is_empty() {
            return Take::Declined;
        }
        let first = taken.remove(0).job;
        Take::Got(first, taken)
    }
}

/// The places of a runtime, as its workers see them.
pub(crate) struct PlaceSet {
    pub(crate) places: Places,
    /// The place of each worker.
    pub(crate) of_worker: Box<[usize]>,
    pub(crate) deques: Box<[CachePadded<PlaceDeque>]>,
    pub(crate) policy: PlacePolicy,
    /// Round-robin position for unhinted spawns from threads outside the runtime (workers
    /// keep their own).
    outside_rr: AtomicUsize,
}

impl PlaceSet {
    pub(crate) fn new(places: Places, policy: PlacePolicy) -> PlaceSet {
        PlaceSet {
            of_worker: places.place_of_workers().into(),
            deques: (0..places.len())
                .map(|_| CachePadded::new(PlaceDeque::new(places.workers())))
                .collect(),
            places,
            policy,
            outside_rr: AtomicUsize::new(0),
        }
    }

    /// Number of places.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.deques.len()
    }

    /// Whether any place holds a task (a would-be sleeper's second look).
    pub(crate) fn any_work(&self) -> bool {
        self.deques.iter().any(|d| d.len() > 0)
    }

    /// The next place for an unhinted spawn from outside the runtime.
    pub(crate) fn next_outside(&self) -> usize {
        self.outside_rr.fetch_add(1, Ordering::Relaxed) % self.len()
    }
}
