//! loom model of the concurrent pool's exhaustion protocol on an empty pool, for every search
//! strategy.

use super::*;
use crate::sync::Arc;
use loom::thread;

/// Both participants search an empty pool (the livelock Kotz and Ellis describe): both are
/// told it is exhausted.
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
