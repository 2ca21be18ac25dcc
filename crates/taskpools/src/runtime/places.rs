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
}

/// What a thief got from a victim place.
pub(crate) enum Take {
    /// The deque was empty.
    Empty,
    /// Its oldest task is hinted and the policy says to leave it.
    Declined,
    /// A task to run, and (steal-half) the others taken with it, oldest first.
    Got(JobRef, Vec<Entry>),
}

impl PlaceDeque {
    fn new() -> PlaceDeque {
        PlaceDeque {
            len: AtomicUsize::new(0),
            q: Mutex::new(VecDeque::new()),
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
        q.push_back(e);
        self.len.store(q.len(), Ordering::Relaxed);
    }

    /// Queues several at the back, oldest first (what a steal-half brought home).
    pub(crate) fn push_all(&self, es: Vec<Entry>) {
        if es.is_empty() {
            return;
        }
        let mut q = lock(&self.q);
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
        let e = q.pop_back();
        self.len.store(q.len(), Ordering::Relaxed);
        e.map(|e| e.job)
    }

    /// A deep wait of worker `owner`: its newest task pushed at wait depth `depth` or deeper
    /// (a task of the subtree it waits in), wherever it is in the deque.
    pub(crate) fn take_own(&self, owner: u32, depth: u32) -> Option<JobRef> {
        if self.len() == 0 {
            return None;
        }
        let mut q = lock(&self.q);
        let i = q
            .iter()
            .rposition(|e| e.owner == owner && e.depth >= depth)?;
        let e = q.remove(i).expect("found");
        self.len.store(q.len(), Ordering::Relaxed);
        Some(e.job)
    }

    /// A thief of another place: the oldest task, unless it is hinted and `allow(len)` says
    /// no; with `half`, also up to half of the rest (at most 64 in all).
    pub(crate) fn steal(&self, allow: impl Fn(usize) -> bool, half: bool) -> Take {
        if self.len() == 0 {
            return Take::Empty;
        }
        let mut q = lock(&self.q);
        let n = q.len();
        let Some(front) = q.front() else {
            return Take::Empty;
        };
        if front.hinted && !allow(n) {
            return Take::Declined;
        }
        let first = q.pop_front().expect("not empty").job;
        let more = if half {
            let k = (n / 2).saturating_sub(1).min(63);
            q.drain(..k).collect()
        } else {
            Vec::new()
        };
        self.len.store(q.len(), Ordering::Relaxed);
        Take::Got(first, more)
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
                .map(|_| CachePadded::new(PlaceDeque::new()))
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
