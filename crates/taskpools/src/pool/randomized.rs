//! Randomized task pool (Korch and Rauber (2002) §3.2, `rq1`–`rq3`): 4×P locked queues not owned by
//! anyone. A put goes to a random queue; a get visits all queues starting at a random one. (Korch
//! and Rauber's three variants differ only in the random number generator; this one uses
//! `fastrand`'s wyrand, so one variant stands for all three.)

use crossbeam_utils::CachePadded;

use super::{Brand, PoolConfig, PutOutcome, TaskPool};
use crate::queue::{ListStack, Locked, SeqQueue};
use crate::stats::WorkerStats;

type Q<T> = ListStack<T>;

/// Queues per worker.
pub const QUEUES_PER_WORKER: usize = 4;

/// `rq`: randomly chosen central queues.
///
/// ```
/// use taskpools::pool::RandomizedPool;
/// use taskpools::pool::{PoolConfig, TaskPool};
/// use taskpools::{run_pool_on, BoxedTask, Runtime, WakePolicy};
///
/// // `randomized` (rq), built by hand for the two workers of `rt`.
/// let rt = Runtime::new(2)?;
/// let pool: RandomizedPool<BoxedTask> = TaskPool::new(&PoolConfig::new(2));
/// let root = BoxedTask::new(|ctx| (0..100).for_each(|_| ctx.put(BoxedTask::new(|_| {}))));
/// let (report, _) = run_pool_on(&rt, &pool, WakePolicy::OnEmpty, |_| (), [root])?;
/// assert_eq!(report.tasks_run(), 101);
/// # Ok::<(), taskpools::Error>(())
/// ```
pub struct RandomizedPool<T: Send> {
    queues: Box<[CachePadded<Locked<Q<T>>>]>,
    alloc: <Q<T> as SeqQueue<T>>::Alloc,
    workers: usize,
    brand: Brand,
}

/// A worker's state: its node cache and random number generator.
pub struct RandomizedLocal<T: Send> {
    cache: <Q<T> as SeqQueue<T>>::Cache,
    rng: fastrand::Rng,
    brand: Brand,
}

impl<T: Send> TaskPool<T> for RandomizedPool<T> {
    type Local = RandomizedLocal<T>;

    fn new(cfg: &PoolConfig) -> Self {
        let alloc = Q::<T>::new_alloc(cfg.mem);
        let queues = (0..QUEUES_PER_WORKER * cfg.workers)
            .map(|_| CachePadded::new(Locked::new(Q::new(&alloc))))
            .collect();
        RandomizedPool {
            queues,
            alloc,
            workers: cfg.workers,
            brand: Brand::new(),
        }
    }

    fn workers(&self) -> usize {
        self.workers
    }

    fn local(&self, worker: usize) -> Self::Local {
        RandomizedLocal {
            cache: Q::cache(&self.alloc),
            rng: fastrand::Rng::with_seed(0x5eed_0000 + worker as u64),
            brand: self.brand,
        }
    }

    #[inline]
    fn put(&self, l: &mut Self::Local, task: T) -> PutOutcome {
        self.brand.check(l.brand);
        let q = l.rng.usize(..self.queues.len());
        let was_empty = self.queues[q].push(task, &mut l.cache);
        PutOutcome::Shared { was_empty }
    }

    #[inline]
    fn get(&self, l: &mut Self::Local, _stats: &mut WorkerStats) -> Option<T> {
        self.brand.check(l.brand);
        let m = self.queues.len();
        let start = l.rng.usize(..m);
        for k in 0..m {
            let q = &self.queues[(start + k) % m];
            if q.len_hint() > 0 {
                if let Some(t) = q.pop(&mut l.cache) {
                    return Some(t);
                }
            }
        }
        None
    }

    fn has_shared_work(&self) -> bool {
        self.queues.iter().any(|q| q.len_hint() > 0)
    }
}
