//! Unit tests of the concurrent pool: the steal-half split and bad configurations.

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
