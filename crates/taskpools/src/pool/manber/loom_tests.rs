//! loom models of the concurrent pool: a steal-half split racing the owner, and exhaustion
//! without livelock and without a false "exhausted".

use super::*;
use crate::sync::Arc;
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
