//! The concurrent pool as a member of the task-pool family (`steal-half`, alias `manber`): a
//! put adds to the worker's segment, a get removes from it or searches with the configured
//! strategy and steals half. Termination is the runtime's (it never uses the pool's own
//! exhaustion protocol); a get that finds nothing after one pass returns `None`, which is
//! complete for the runtime's purpose because it always looks at the worker's own segment,
//! the only place where that worker puts tasks.

use super::{ConcurrentConfig, ConcurrentPool, Participant};
use crate::pool::{PoolConfig, PutOutcome, TaskPool};
use crate::stats::WorkerStats;
use crate::sync::Arc;

/// `steal-half` / `manber`.
pub struct StealHalfPool<T> {
    pool: Arc<ConcurrentPool<T>>,
}

/// A worker's participant state (its slot is released on drop).
pub struct StealHalfLocal<T: Send> {
    pool: Arc<ConcurrentPool<T>>,
    p: Participant,
}

impl<T: Send> Drop for StealHalfLocal<T> {
    fn drop(&mut self) {
        self.pool.release(self.p.id);
    }
}

impl<T: Send> StealHalfPool<T> {
    /// Panics unless `l` was made by this pool (its participant indexes this pool's segments).
    #[inline(always)]
    #[track_caller]
    fn check(&self, l: &StealHalfLocal<T>) {
        assert!(
            Arc::ptr_eq(&self.pool, &l.pool),
            "a pool's per-worker state was used with another pool: each `TaskPool::Local` works \
             only with the pool whose `local` made it"
        );
    }
}

impl<T: Send> TaskPool<T> for StealHalfPool<T> {
    type Local = StealHalfLocal<T>;

    fn new(cfg: &PoolConfig) -> Self {
        let pool = ConcurrentPool::new(ConcurrentConfig {
            participants: cfg.workers,
            search: cfg.search,
            waiting: false,
            remote_delay_ns: 0,
        })
        .expect("the builder checks workers >= 1");
        StealHalfPool {
            pool: Arc::new(pool),
        }
    }

    fn workers(&self) -> usize {
        self.pool.participants()
    }

    fn local(&self, worker: usize) -> Self::Local {
        StealHalfLocal {
            pool: Arc::clone(&self.pool),
            p: self.pool.join(worker),
        }
    }

    #[inline]
    fn put(&self, l: &mut Self::Local, task: T) -> PutOutcome {
        self.check(l);
        let was_empty = self.pool.add(&mut l.p, task);
        PutOutcome::Shared { was_empty }
    }

    #[inline]
    fn get(&self, l: &mut Self::Local, stats: &mut WorkerStats) -> Option<T> {
        self.check(l);
        let before = (l.p.stats.steals, l.p.stats.elements_stolen);
        let examined = l.p.stats.segments_examined + l.p.stats.segments_examined_fruitless;
        let t = self.pool.try_remove(&mut l.p);
        stats.steal_attempts +=
            l.p.stats.segments_examined + l.p.stats.segments_examined_fruitless - examined;
        stats.steals += l.p.stats.steals - before.0;
        stats.tasks_stolen += l.p.stats.elements_stolen - before.1;
        if l.p.stats.steals != before.0 {
            crate::stats::note_steal(l.p.last_found, l.p.stats.elements_stolen - before.1);
        }
        t
    }

    #[inline]
    fn own_backlog(&self, l: &Self::Local) -> usize {
        self.check(l);
        self.pool.segment_len(l.p.id())
    }

    fn has_shared_work(&self) -> bool {
        !self.pool.is_empty()
    }
}
