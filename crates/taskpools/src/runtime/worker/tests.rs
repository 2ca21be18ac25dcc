//! White-box tests of the worker: how deep waits steal.

use super::*;
use crate::runtime::{Pool, Runtime};
use std::sync::atomic::AtomicBool as StdBool;

/// Waits past `MAX_STEALING_WAITS` nested levels do not steal (which bounds the stack);
/// waits below it do. White-box: the depth is set directly, and the worker's steal rounds
/// are counted while it waits for a flag that another thread sets.
#[test]
fn deep_waits_do_not_steal() {
    for pool in Pool::ALL {
        let rt = Runtime::builder().threads(2).pool(pool).build().unwrap();
        let rounds = |depth: u32| {
            rt.install(|| {
                let w = WorkerThread::current().expect("on a worker");
                let flag = StdBool::new(false);
                let before = w.registry.counters[w.index].snapshot().steal_rounds;
                w.waits.set(depth);
                std::thread::scope(|s| {
                    s.spawn(|| {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        flag.store(true, std::sync::atomic::Ordering::Release);
                    });
                    w.wait_until(|| flag.load(std::sync::atomic::Ordering::Acquire));
                });
                assert_eq!(w.waits.get(), depth, "the wait restores the depth");
                w.waits.set(0);
                w.registry.counters[w.index].snapshot().steal_rounds - before
            })
        };
        assert!(rounds(0) > 0, "{pool}: a shallow wait steals");
        assert_eq!(
            rounds(MAX_STEALING_WAITS),
            0,
            "{pool}: a deep wait must not steal"
        );
    }
}
