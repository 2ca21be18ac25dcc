//! Per-worker state belongs to the pool (or allocator) that made it: using it with another
//! instance panics before any queue is touched, instead of moving node memory or an owner's
//! rights across instances (which freed memory twice or made two owners of one deque).
#![cfg(not(loom))]

use std::panic::{catch_unwind, AssertUnwindSafe};

use taskpools::mem::MemKind;
use taskpools::pool::{CentralFifoPool, CentralPool};
use taskpools::pool::{
    ChaseLevPool, CombinedPool, DistributedPool, FcdqPool, PrivatePublicPool, RandomizedPool,
    StealHalfPool, StealingPool,
};
use taskpools::queue::{ArrayStack, DList, ListStack, SeqQueue, TwoLockQueue};
use taskpools::WorkerStats;
use taskpools::{PoolConfig, TaskPool};

fn panic_message(r: Box<dyn std::any::Any + Send>) -> String {
    r.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| r.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// The audit's repro: a cache of a block allocator used with a queue of the system allocator
/// freed a pointer into the middle of a block when the queue was dropped.
#[test]
fn a_cache_of_another_allocator_is_refused() {
    for (qmem, cmem) in [
        (MemKind::System, MemKind::PerWorkerBlocks),
        (MemKind::PerWorkerBlocks, MemKind::PerWorkerBlocks),
        (MemKind::PerWorker, MemKind::System),
        (MemKind::Central, MemKind::Central),
    ] {
        let sys = ListStack::<u64>::new_alloc(qmem);
        let blk = ListStack::<u64>::new_alloc(cmem);
        let mut c = ListStack::<u64>::cache(&blk);
        let mut q = ListStack::new(&sys);
        let r = catch_unwind(AssertUnwindSafe(|| {
            q.push(1, &mut c);
            q.push(2, &mut c);
        }));
        let msg = panic_message(r.expect_err("a foreign cache must be refused"));
        assert!(msg.contains("another allocator"), "{msg}");
        assert!(q.is_empty(), "nothing entered the queue");
        drop(q);
        drop(c);

        let a = DList::<u64>::new_alloc(qmem);
        let b = DList::<u64>::new_alloc(cmem);
        let mut c = DList::<u64>::cache(&b);
        let mut q = DList::new(&a);
        assert!(catch_unwind(AssertUnwindSafe(|| q.push(1, &mut c))).is_err());
        assert!(catch_unwind(AssertUnwindSafe(|| q.steal(&mut c))).is_err());
        assert!(q.is_empty());
    }
    // The same allocator, of course, works.
    let a = ListStack::<u64>::new_alloc(MemKind::PerWorkerBlocks);
    let (mut c, mut q) = (ListStack::cache(&a), ListStack::new(&a));
    q.push(7, &mut c);
    assert_eq!(q.pop(&mut c), Some(7));
    // Array stacks have no node memory: any cache (the unit) is theirs.
    let mut s = ArrayStack::<u64>::new(&());
    s.push(1, &mut ());
    assert_eq!(s.pop(&mut ()), Some(1));
}

#[test]
fn a_two_lock_queue_refuses_the_cache_of_another_queue() {
    let a = TwoLockQueue::<String>::new(MemKind::PerWorkerBlocks);
    let b = TwoLockQueue::<String>::new(MemKind::PerWorkerBlocks);
    let mut cb = b.cache();
    let r = catch_unwind(AssertUnwindSafe(|| a.enqueue("x".into(), &mut cb)));
    assert!(panic_message(r.unwrap_err()).contains("another allocator"));
    let mut ca = a.cache();
    assert!(a.enqueue("y".into(), &mut ca));
    drop(b);
    assert_eq!(a.dequeue(&mut ca).as_deref(), Some("y"));
}

/// Pool A's local used with pool B of the same type: `put` and `get` panic with a message that
/// says what went wrong, and both pools stay usable and drop cleanly (ASan and valgrind run
/// this binary in the test script).
fn foreign_local_is_refused<P: TaskPool<Box<u64>>>() {
    let cfg = PoolConfig {
        mem: MemKind::PerWorkerBlocks,
        ..PoolConfig::new(2)
    };
    let a = P::new(&cfg);
    let b = P::new(&cfg);
    let mut la = a.local(0);
    let mut stats = WorkerStats::default();
    for i in 0..300 {
        a.put(&mut la, Box::new(i));
    }
    let r = catch_unwind(AssertUnwindSafe(|| b.put(&mut la, Box::new(1))));
    let msg = panic_message(r.expect_err("put with a foreign local"));
    assert!(
        msg.contains("another pool") || msg.contains("another allocator"),
        "{}: {msg}",
        std::any::type_name::<P>()
    );
    let r = catch_unwind(AssertUnwindSafe(|| b.get(&mut la, &mut stats)));
    assert!(r.is_err(), "get with a foreign local");
    // B's own worker 0 still owns its deque and finds nothing; A still has its 300.
    let mut lb = b.local(0);
    assert!(b.get(&mut lb, &mut stats).is_none());
    let mut n = 0;
    while a.get(&mut la, &mut stats).is_some() {
        n += 1;
    }
    assert_eq!(n, 300, "{}", std::any::type_name::<P>());
    drop((la, lb));
    drop(a);
    drop(b);
}

#[test]
fn every_pool_refuses_the_local_of_another_pool() {
    type T = Box<u64>;
    foreign_local_is_refused::<CentralPool<T, ListStack<T>>>();
    foreign_local_is_refused::<CentralFifoPool<T>>();
    foreign_local_is_refused::<RandomizedPool<T>>();
    foreign_local_is_refused::<DistributedPool<T, ListStack<T>>>();
    foreign_local_is_refused::<DistributedPool<T, ArrayStack<T>>>();
    foreign_local_is_refused::<StealingPool<T, ListStack<T>>>();
    foreign_local_is_refused::<StealingPool<T, DList<T>>>();
    foreign_local_is_refused::<StealingPool<T, ArrayStack<T>>>();
    foreign_local_is_refused::<PrivatePublicPool<T, false>>();
    foreign_local_is_refused::<PrivatePublicPool<T, true>>();
    foreign_local_is_refused::<CombinedPool<T>>();
    foreign_local_is_refused::<ChaseLevPool<T>>();
    foreign_local_is_refused::<FcdqPool<T>>();
    foreign_local_is_refused::<StealHalfPool<T>>();
}

/// The audit's second repro: pool A's worker-0 local on pool B made a second owner of B's
/// worker-0 FCDQ while B's own worker 0 used it.
#[test]
fn an_fcdq_local_cannot_become_a_second_owner_of_another_pool_s_deque() {
    let cfg = PoolConfig::new(2);
    let a = FcdqPool::<u64>::new(&cfg);
    let b = FcdqPool::<u64>::new(&cfg);
    let mut la = a.local(0);
    let mut lb = b.local(0);
    b.put(&mut lb, 1);
    assert!(catch_unwind(AssertUnwindSafe(|| b.put(&mut la, 2))).is_err());
    let mut stats = WorkerStats::default();
    assert_eq!(b.get(&mut lb, &mut stats), Some(1));
    assert_eq!(b.get(&mut lb, &mut stats), None);
}
