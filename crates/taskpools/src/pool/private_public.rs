//! Stealing with private and public queues (Korch and Rauber (2002) §3.5, `dq8`).
//!
//! Each worker fills and empties a private block of [`BLOCK_LEN`] tasks without any
//! synchronization. Other workers can only see its public queue, a locked queue of whole
//! blocks. The transfer policy decides when a private block becomes public:
//!
//! * **generous** (`dq8`): as soon as the private block is full, it goes to the public queue;
//!   the worker keeps only the block it is filling. When that is empty it takes back its most
//!   recent public block, and only then steals the oldest block of another worker.
//! * **greedy** (`dq8g`): full blocks stay private; one is published (the oldest) only when the
//!   public queue is empty. Fewer locks, but thieves may find nothing while the owner holds
//!   plenty (Korch and Rauber's caveat).

use crossbeam_utils::CachePadded;

use super::{scan_victims, Brand, PoolConfig, PutOutcome, TaskPool};
use crate::queue::{BlockQueue, PrivateBlocks, BLOCK_LEN};
use crate::stats::WorkerStats;

/// `dq8` (`GREEDY = false`) and `dq8g` (`GREEDY = true`).
///
/// ```
/// use taskpools::pool::PrivatePublicPool;
/// use taskpools::pool::{PoolConfig, TaskPool};
/// use taskpools::{run_pool_on, BoxedTask, Runtime, WakePolicy};
///
/// // `private-public` (dq8), built by hand for the two workers of `rt`.
/// let rt = Runtime::new(2)?;
/// let pool: PrivatePublicPool<BoxedTask, false> = TaskPool::new(&PoolConfig::new(2));
/// let root = BoxedTask::new(|ctx| (0..100).for_each(|_| ctx.put(BoxedTask::new(|_| {}))));
/// let (report, _) = run_pool_on(&rt, &pool, WakePolicy::OnEmpty, |_| (), [root])?;
/// assert_eq!(report.tasks_run(), 101);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct PrivatePublicPool<T, const GREEDY: bool> {
    public: Box<[CachePadded<BlockQueue<T>>]>,
    brand: Brand,
}

/// A worker's private blocks and victim-choosing generator.
pub struct PrivatePublicLocal<T> {
    me: usize,
    private: PrivateBlocks<T>,
    rng: fastrand::Rng,
    brand: Brand,
}

impl<T: Send, const GREEDY: bool> PrivatePublicPool<T, GREEDY> {
    /// Greedy: publish the oldest private full block if the public queue is empty.
    #[inline]
    fn publish_if_starved(&self, l: &mut PrivatePublicLocal<T>) -> PutOutcome {
        let public = &self.public[l.me];
        if GREEDY && !l.private.full.is_empty() && public.len_hint() == 0 {
            let b = l.private.full.pop_front().expect("non-empty");
            let was_empty = public.push_back(b);
            return PutOutcome::Shared { was_empty };
        }
        PutOutcome::Private
    }
}

impl<T: Send, const GREEDY: bool> TaskPool<T> for PrivatePublicPool<T, GREEDY> {
    type Local = PrivatePublicLocal<T>;

    fn new(cfg: &PoolConfig) -> Self {
        PrivatePublicPool {
            public: (0..cfg.workers)
                .map(|_| CachePadded::new(BlockQueue::new()))
                .collect(),
            brand: Brand::new(),
        }
    }

    fn workers(&self) -> usize {
        self.public.len()
    }

    fn local(&self, worker: usize) -> Self::Local {
        PrivatePublicLocal {
            me: worker,
            private: PrivateBlocks::new(),
            rng: fastrand::Rng::with_seed(0xb10c_0000 + worker as u64),
            brand: self.brand,
        }
    }

    #[inline]
    fn put(&self, l: &mut Self::Local, task: T) -> PutOutcome {
        self.brand.check(l.brand);
        let mut outcome = PutOutcome::Private;
        if l.private.cur.is_full() {
            let full = l.private.take_cur();
            if GREEDY {
                l.private.full.push_back(full);
            } else {
                let was_empty = self.public[l.me].push_back(full);
                outcome = PutOutcome::Shared { was_empty };
            }
        }
        l.private.cur.push(task);
        if GREEDY {
            outcome = self.publish_if_starved(l);
        }
        outcome
    }

    #[inline]
    fn get(&self, l: &mut Self::Local, stats: &mut WorkerStats) -> Option<T> {
        self.brand.check(l.brand);
        if let Some(t) = l.private.cur.pop() {
            return Some(t);
        }
        if GREEDY {
            if let Some(b) = l.private.full.pop_back() {
                l.private.set_cur(b);
                // Publishing here can only help; a sleeper wakes on the next shared put.
                let _ = self.publish_if_starved(l);
                return l.private.cur.pop();
            }
        }
        if let Some(b) = self.public[l.me].pop_back() {
            l.private.set_cur(b);
            return l.private.cur.pop();
        }
        let PrivatePublicLocal {
            me, private, rng, ..
        } = l;
        let stolen = scan_victims(*me, self.public.len(), rng, stats, |v| {
            let q = &self.public[v];
            if q.len_hint() == 0 {
                return None;
            }
            q.pop_front().map(|b| {
                let n = b.len() as u64;
                (b, n)
            })
        })?;
        private.set_cur(stolen);
        private.cur.pop()
    }

    #[inline]
    fn own_backlog(&self, l: &Self::Local) -> usize {
        self.brand.check(l.brand);
        l.private.cur.len()
            + (l.private.full.len() + self.public[l.me].len_hint()) * crate::queue::BLOCK_LEN
    }

    fn has_shared_work(&self) -> bool {
        self.public.iter().any(|q| q.len_hint() > 0)
    }
}

const _: () = assert!(BLOCK_LEN >= 1);
