//! Combined central and distributed pool (Korch and Rauber (2002) §3.4, `sdq1`).
//!
//! Each worker keeps up to [`KEEP_BLOCKS`] full blocks plus the block it is working on in
//! private, without locks. When it has more, its oldest full block goes to one central locked
//! queue of blocks; a worker that runs out of private tasks takes the oldest central block.
//! Locks are taken only for these block transfers, but every transfer goes through the same
//! lock, which is the pool's limit on many cores.

use crossbeam_utils::CachePadded;

use super::{Brand, PoolConfig, PutOutcome, TaskPool};
use crate::queue::{BlockQueue, PrivateBlocks};
use crate::stats::WorkerStats;

/// Full blocks a worker keeps before sending its oldest to the central queue (Korch and
/// Rauber's threshold).
pub const KEEP_BLOCKS: usize = 1;

/// `sdq1`.
///
/// ```
/// use taskpools::pool::CombinedPool;
/// use taskpools::pool::{PoolConfig, TaskPool};
/// use taskpools::{run_pool_on, BoxedTask, Runtime, WakePolicy};
///
/// // `combined` (sdq1), built by hand for the two workers of `rt`.
/// let rt = Runtime::new(2)?;
/// let pool: CombinedPool<BoxedTask> = TaskPool::new(&PoolConfig::new(2));
/// let root = BoxedTask::new(|ctx| (0..100).for_each(|_| ctx.put(BoxedTask::new(|_| {}))));
/// let (report, _) = run_pool_on(&rt, &pool, WakePolicy::OnEmpty, |_| (), [root])?;
/// assert_eq!(report.tasks_run(), 101);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct CombinedPool<T> {
    central: CachePadded<BlockQueue<T>>,
    workers: usize,
    brand: Brand,
}

/// A worker's private blocks.
pub struct CombinedLocal<T> {
    blocks: PrivateBlocks<T>,
    brand: Brand,
}

impl<T: Send> TaskPool<T> for CombinedPool<T> {
    type Local = CombinedLocal<T>;

    fn new(cfg: &PoolConfig) -> Self {
        CombinedPool {
            central: CachePadded::new(BlockQueue::new()),
            workers: cfg.workers,
            brand: Brand::new(),
        }
    }

    fn workers(&self) -> usize {
        self.workers
    }

    fn local(&self, _worker: usize) -> Self::Local {
        CombinedLocal {
            blocks: PrivateBlocks::new(),
            brand: self.brand,
        }
    }

    #[inline]
    fn put(&self, l: &mut Self::Local, task: T) -> PutOutcome {
        self.brand.check(l.brand);
        let l = &mut l.blocks;
        let mut outcome = PutOutcome::Private;
        if l.cur.is_full() {
            let full = l.take_cur();
            l.full.push_back(full);
            if l.full.len() > KEEP_BLOCKS {
                let oldest = l.full.pop_front().expect("non-empty");
                let was_empty = self.central.push_back(oldest);
                outcome = PutOutcome::Shared { was_empty };
            }
        }
        l.cur.push(task);
        outcome
    }

    #[inline]
    fn get(&self, l: &mut Self::Local, stats: &mut WorkerStats) -> Option<T> {
        self.brand.check(l.brand);
        let l = &mut l.blocks;
        if let Some(t) = l.cur.pop() {
            return Some(t);
        }
        if let Some(b) = l.full.pop_back() {
            l.set_cur(b);
            return l.cur.pop();
        }
        stats.steal_attempts += 1;
        let b = self.central.pop_front()?;
        stats.steals += 1;
        stats.tasks_stolen += b.len() as u64;
        l.set_cur(b);
        l.cur.pop()
    }

    /// The private blocks only: the central queue is everyone's.
    #[inline]
    fn own_backlog(&self, l: &Self::Local) -> usize {
        self.brand.check(l.brand);
        l.blocks.cur.len() + l.blocks.full.len() * crate::queue::BLOCK_LEN
    }

    fn has_shared_work(&self) -> bool {
        self.central.len_hint() > 0
    }
}
