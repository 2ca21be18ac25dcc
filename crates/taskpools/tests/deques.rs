//! Multi-threaded stress tests for the deques: one owner pushes and pops, thieves steal, and
//! every pushed element must be taken exactly once (by the owner or a thief). Sized for a
//! 2-core machine: 4 threads, a few hundred thousand elements each. The node-locked list
//! (`sq3`/`dq6`) also runs as a FIFO queue, producers against consumers.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use taskpools::queue::chase_lev::{self, Steal};
use taskpools::queue::{Fcdq, MutexDeque, NodeLockedDList, SpinDeque, SpinLock};

/// Elements per stress run: 300 000, or 15 000 with `TASKPOOLS_STRESS=small` (the test script
/// sets it under valgrind, which runs one thread at a time).
fn n() -> u64 {
    scaled(300_000)
}

fn scaled(n: u64) -> u64 {
    if small() {
        n / 20
    } else {
        n
    }
}

fn small() -> bool {
    std::env::var_os("TASKPOOLS_STRESS").is_some_and(|v| v == "small")
}
const THIEVES: usize = 3;

/// The operations a stress run needs; `push` may fail (bounded deques), the owner then retries.
trait Deque: Send + Sync + 'static {
    fn push(&self, v: u64) -> Result<(), u64>;
    fn pop(&self) -> Option<u64>;
    fn steal(&self) -> Option<u64>;
}

/// A Chase–Lev deque; the flag (third field) makes every other push a `push_quiet`
/// (capacity checked against the owner's last reading of `top`), so that both kinds wrap
/// around, reuse stolen slots and grow while thieves steal.
struct Cl(
    chase_lev::Worker<u64>,
    chase_lev::Stealer<u64>,
    bool,
    std::cell::Cell<u64>,
);
// The owner half is only used by the owner thread in `stress` (the test's protocol).
unsafe impl Sync for Cl {}
impl Deque for Cl {
    fn push(&self, v: u64) -> Result<(), u64> {
        let k = self.3.get();
        self.3.set(k + 1);
        if self.2 && k % 2 == 0 {
            self.0.push_quiet(v);
        } else {
            self.0.push(v);
        }
        Ok(())
    }
    fn pop(&self) -> Option<u64> {
        self.0.pop()
    }
    fn steal(&self) -> Option<u64> {
        loop {
            match self.1.steal() {
                Steal::Success(v) => return Some(v),
                Steal::Empty => return None,
                Steal::Retry => {}
            }
        }
    }
}

impl Deque for Fcdq<u64> {
    fn push(&self, v: u64) -> Result<(), u64> {
        // SAFETY: only the owner thread of `stress` pushes and pops.
        unsafe { self.enqueue(v) }
    }
    fn pop(&self) -> Option<u64> {
        // SAFETY: as above.
        unsafe { self.dequeue_front() }
    }
    fn steal(&self) -> Option<u64> {
        self.dequeue_back()
    }
}

impl Deque for MutexDeque<u64> {
    fn push(&self, v: u64) -> Result<(), u64> {
        MutexDeque::push(self, v)
    }
    fn pop(&self) -> Option<u64> {
        MutexDeque::pop(self)
    }
    fn steal(&self) -> Option<u64> {
        MutexDeque::steal(self)
    }
}

impl Deque for SpinDeque<u64> {
    fn push(&self, v: u64) -> Result<(), u64> {
        SpinDeque::push(self, v)
    }
    fn pop(&self) -> Option<u64> {
        SpinDeque::pop(self)
    }
    fn steal(&self) -> Option<u64> {
        SpinDeque::steal(self)
    }
}

/// `dq6`'s use: the owner at the front, thieves at the back.
impl Deque for NodeLockedDList<u64> {
    fn push(&self, v: u64) -> Result<(), u64> {
        self.push_front(v);
        Ok(())
    }
    fn pop(&self) -> Option<u64> {
        self.pop_front()
    }
    fn steal(&self) -> Option<u64> {
        self.pop_back()
    }
}

/// Owner: pushes 0..n() (retrying when full), popping after every third push, and leaves the
/// rest to the thieves, who steal until the owner is done and the deque is empty. Each value
/// must be seen exactly once, and the thieves must have taken at least what the owner left.
fn stress<D: Deque>(d: D) {
    let d = Arc::new(d);
    let n = n();
    let seen: Arc<Vec<AtomicU8>> = Arc::new((0..n).map(|_| AtomicU8::new(0)).collect());
    let done = Arc::new(AtomicBool::new(false));
    let stolen = Arc::new(AtomicU64::new(0));
    let mark = |seen: &[AtomicU8], v: u64| {
        assert_eq!(
            seen[v as usize].fetch_add(1, Ordering::Relaxed),
            0,
            "{v} taken twice"
        );
    };
    std::thread::scope(|s| {
        for _ in 0..THIEVES {
            let (d, seen, done, stolen) = (&d, &seen, &done, &stolen);
            s.spawn(move || loop {
                let finished = done.load(Ordering::Acquire);
                match d.steal() {
                    Some(v) => {
                        mark(seen, v);
                        stolen.fetch_add(1, Ordering::Relaxed);
                    }
                    None if finished => break,
                    None => std::thread::yield_now(),
                }
            });
        }
        let mut popped = 0u64;
        for i in 0..n {
            let mut v = i;
            while let Err(back) = d.push(v) {
                v = back;
                std::thread::yield_now();
            }
            if i % 3 == 2 {
                if let Some(v) = d.pop() {
                    mark(&seen, v);
                    popped += 1;
                }
            }
        }
        done.store(true, Ordering::Release);
        assert!(popped <= n / 3);
    });
    let missing: Vec<usize> = (0..n as usize)
        .filter(|&i| seen[i].load(Ordering::Relaxed) != 1)
        .take(5)
        .collect();
    assert!(missing.is_empty(), "never taken: {missing:?}");
    assert!(
        stolen.load(Ordering::Relaxed) >= n - n / 3,
        "the owner popped at most n/3"
    );
}

#[test]
fn chase_lev_every_element_exactly_once_with_growth() {
    let (w, s) = chase_lev::deque::<u64>(2);
    stress(Cl(w, s, false, Default::default()));
}

#[test]
fn chase_lev_quiet_pushes_every_element_exactly_once_with_growth() {
    let (w, s) = chase_lev::deque::<u64>(2);
    stress(Cl(w, s, true, Default::default()));
}

/// Growth and reclamation under concurrent thieves, counted: each round makes a deque of
/// capacity 2 and fills it in bursts that outrun the thieves, so that it grows through about
/// a dozen doublings while three thieves (two stealing one at a time, one taking about half
/// into its own deque) read its buffers; the owner pops now and then (an empty pop is also
/// where it retries freeing what growth retired). Every value is taken exactly once. Once
/// the thieves are gone, one empty pop frees every retired buffer (no announcement is left
/// behind). New thieves each round give their hazard records back when they end and take
/// them again the next round.
#[test]
fn chase_lev_every_element_once_across_growths_with_thieves_and_reclamation() {
    const ROUNDS: u64 = 20;
    let per_round = scaled(20_000);
    let burst = 2048u64;
    let n = ROUNDS * per_round;
    let seen: Vec<AtomicU8> = (0..n).map(|_| AtomicU8::new(0)).collect();
    let mark = |v: u64| {
        assert_eq!(
            seen[v as usize].fetch_add(1, Ordering::Relaxed),
            0,
            "{v} taken twice"
        );
    };
    let mut grown = 0;
    for round in 0..ROUNDS {
        let (w, s) = chase_lev::deque::<u64>(2);
        let done = AtomicBool::new(false);
        std::thread::scope(|sc| {
            for k in 0..THIEVES {
                let (s, done, mark) = (s.clone(), &done, &mark);
                sc.spawn(move || {
                    let (mine, _) = chase_lev::deque::<u64>(16);
                    loop {
                        let finished = done.load(Ordering::Acquire);
                        let got = if k == 0 {
                            match s.steal_half_into(&mine, 64) {
                                Steal::Success(_) => {
                                    while let Some(v) = mine.pop() {
                                        mark(v);
                                    }
                                    true
                                }
                                _ => false,
                            }
                        } else {
                            match s.steal() {
                                Steal::Success(v) => {
                                    mark(v);
                                    true
                                }
                                _ => false,
                            }
                        };
                        if !got && finished && s.is_empty() {
                            break;
                        }
                        if !got {
                            std::thread::yield_now();
                        }
                    }
                });
            }
            let base = round * per_round;
            for i in 0..per_round {
                w.push(base + i);
                if i % burst == burst - 1 {
                    // Between bursts, take a few back (and let the thieves catch up).
                    for _ in 0..burst / 8 {
                        if let Some(v) = w.pop() {
                            mark(v);
                        }
                    }
                }
            }
            done.store(true, Ordering::Release);
        });
        // The thieves are gone: what is left is the owner's, and one empty pop frees every
        // retired buffer.
        while let Some(v) = w.pop() {
            mark(v);
        }
        assert_eq!(w.pop(), None);
        assert_eq!(
            w.retired_buffers(),
            0,
            "round {round}: a retired buffer outlived the thieves"
        );
        grown = grown.max(w.capacity());
    }
    assert!(
        grown >= 64,
        "the deque never grew much (largest capacity {grown})"
    );
    let missing: Vec<usize> = (0..n as usize)
        .filter(|&i| seen[i].load(Ordering::Relaxed) != 1)
        .take(5)
        .collect();
    assert!(
        missing.is_empty(),
        "never taken, or taken twice: {missing:?}"
    );
}

#[test]
fn fcdq_every_element_exactly_once() {
    stress(Fcdq::<u64>::new(64));
}

#[test]
fn fcdq_every_element_exactly_once_tiny() {
    stress(Fcdq::<u64>::new(2));
}

#[test]
fn locked_deques_every_element_exactly_once() {
    stress(MutexDeque::<u64>::new(usize::MAX));
    stress(SpinDeque::<u64>::new(16));
}

#[test]
fn node_locked_list_owner_and_thieves_every_element_exactly_once() {
    stress(NodeLockedDList::new());
}

/// `sq3`'s use: two producers push at the back, two consumers pop the front, the queue
/// running empty and refilling all the time. Every value is taken exactly once, and each
/// consumer sees each producer's values in the order they were pushed (FIFO).
#[test]
fn node_locked_list_producers_and_consumers_every_element_exactly_once_in_order() {
    const PRODUCERS: u64 = 2;
    let per = n() / 2;
    let q = NodeLockedDList::new();
    let seen: Vec<AtomicU8> = (0..PRODUCERS * per).map(|_| AtomicU8::new(0)).collect();
    let produced = AtomicU64::new(0);
    let taken = AtomicU64::new(0);
    std::thread::scope(|s| {
        for p in 0..PRODUCERS {
            let (q, produced) = (&q, &produced);
            s.spawn(move || {
                for i in 0..per {
                    q.push_back(p * per + i);
                    if i % 64 == 63 {
                        // Let the consumers catch up and empty the queue now and then.
                        std::thread::yield_now();
                    }
                }
                produced.fetch_add(1, Ordering::Release);
            });
        }
        for _ in 0..2 {
            let (q, seen, produced, taken) = (&q, &seen, &produced, &taken);
            s.spawn(move || {
                let mut last = [None::<u64>; PRODUCERS as usize];
                loop {
                    let finished = produced.load(Ordering::Acquire) == PRODUCERS;
                    match q.pop_front() {
                        Some(v) => {
                            let p = (v / per) as usize;
                            assert!(last[p].is_none_or(|l| l < v), "{v} after {last:?}");
                            last[p] = Some(v);
                            let before = seen[v as usize].fetch_add(1, Ordering::Relaxed);
                            assert_eq!(before, 0, "{v} taken twice");
                            taken.fetch_add(1, Ordering::Relaxed);
                        }
                        None if finished => break,
                        None => std::thread::yield_now(),
                    }
                }
            });
        }
    });
    assert_eq!(taken.load(Ordering::Relaxed), PRODUCERS * per);
    assert!(seen.iter().all(|s| s.load(Ordering::Relaxed) == 1));
    assert!(q.is_empty() && q.pop_front().is_none() && q.pop_back().is_none());
}

#[test]
fn chase_lev_steal_half_every_element_exactly_once() {
    // Thieves steal about half into their own deque and drain it.
    let (w, s) = chase_lev::deque::<u64>(4);
    let n = n();
    let seen: Vec<AtomicU8> = (0..n).map(|_| AtomicU8::new(0)).collect();
    let done = AtomicBool::new(false);
    let batches = AtomicU64::new(0);
    std::thread::scope(|sc| {
        for _ in 0..THIEVES {
            let (s, seen, done, batches) = (s.clone(), &seen, &done, &batches);
            sc.spawn(move || {
                let (mine, _) = chase_lev::deque::<u64>(16);
                loop {
                    let finished = done.load(Ordering::Acquire);
                    match s.steal_half_into(&mine, 32) {
                        Steal::Success(n) => {
                            assert!((1..=32).contains(&n));
                            batches.fetch_add(1, Ordering::Relaxed);
                            while let Some(v) = mine.pop() {
                                assert_eq!(seen[v as usize].fetch_add(1, Ordering::Relaxed), 0);
                            }
                        }
                        Steal::Empty if finished => break,
                        _ => std::thread::yield_now(),
                    }
                }
            });
        }
        for i in 0..n {
            // Both kinds of push (see `Cl`).
            if i % 2 == 0 {
                w.push_quiet(i);
            } else {
                w.push(i);
            }
            if i % 4 == 3 {
                if let Some(v) = w.pop() {
                    assert_eq!(seen[v as usize].fetch_add(1, Ordering::Relaxed), 0);
                }
            }
        }
        // The rest (at least 3/4 of n) is left to the thieves' batch steals.
        done.store(true, Ordering::Release);
    });
    assert!(seen.iter().all(|c| c.load(Ordering::Relaxed) == 1));
    assert!(batches.load(Ordering::Relaxed) > 0);
}

#[test]
fn chase_lev_drop_releases_remaining_elements_once() {
    let tracker = Arc::new(());
    {
        let (w, s) = chase_lev::deque(2);
        for _ in 0..100 {
            w.push(Arc::clone(&tracker)); // grows 2 → 128
        }
        drop(s.steal());
        drop(w.pop());
        assert_eq!(Arc::strong_count(&tracker), 99);
    }
    assert_eq!(Arc::strong_count(&tracker), 1);
    let f = Fcdq::new(8);
    for _ in 0..5 {
        // SAFETY: single-threaded owner.
        unsafe { f.enqueue(Arc::clone(&tracker)).unwrap() };
    }
    drop(f.dequeue_back());
    drop(f);
    assert_eq!(Arc::strong_count(&tracker), 1);
}

#[test]
fn chase_lev_try_push_does_not_grow_and_fcdq_rejects_when_full() {
    let (w, _s) = chase_lev::deque::<u32>(4);
    for i in 0..4 {
        w.try_push(i).unwrap();
    }
    assert_eq!(w.try_push(9), Err(9));
    assert_eq!(w.capacity(), 4);
    w.push(9);
    assert_eq!(w.capacity(), 8);
    let f = Fcdq::<u32>::new(4);
    for i in 0..4 {
        // SAFETY: single-threaded owner.
        unsafe { f.enqueue(i).unwrap() };
    }
    // SAFETY: as above.
    assert_eq!(unsafe { f.enqueue(9) }, Err(9));
    assert_eq!(f.dequeue_back(), Some(0), "back = oldest");
    // SAFETY: as above.
    assert_eq!(unsafe { f.dequeue_front() }, Some(3), "front = newest");
}

#[test]
fn spin_lock_mutual_exclusion() {
    let l = SpinLock::new(0u64);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..50_000 {
                    let mut g = l.lock();
                    // A non-atomic read-modify-write: lost updates would show.
                    let v = *g;
                    *g = v + 1;
                }
            });
        }
    });
    assert_eq!(*l.lock(), 200_000);
}

/// Private deques with steal requests: 4 workers each push 60 000 distinct elements in bursts
/// and pop some of them, polling between bursts; when a worker's deque is empty it asks random
/// others. Worker 0 only produces and answers requests, so at least its 60 000 elements must
/// be stolen. Every element is taken exactly once, and requests are answered between workers
/// that are themselves asking (nobody waits forever).
#[test]
fn private_deques_every_element_exactly_once() {
    use taskpools::queue::private_deque::PrivateDeque;
    const W: usize = 4;
    // Under valgrind (`small`), where threads run one at a time, every steal waits for the
    // victim to be scheduled: 600 elements per worker, not 3 000 (34 s there).
    let per = if small() { 600 } else { 60_000 };
    let total = W as u64 * per;
    let seen: Arc<Vec<AtomicU8>> = Arc::new((0..total).map(|_| AtomicU8::new(0)).collect());
    let taken = Arc::new(AtomicU64::new(0));
    let stolen = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = PrivateDeque::<u64>::set(W)
        .into_iter()
        .map(|d| {
            let (seen, taken, stolen) = (seen.clone(), taken.clone(), stolen.clone());
            std::thread::spawn(move || {
                let me = d.index() as u64;
                let mut rng = fastrand::Rng::with_seed(me);
                let mut next = 0u64;
                let take = |v: u64| {
                    assert_eq!(
                        seen[v as usize].fetch_add(1, Ordering::Relaxed),
                        0,
                        "{v} twice"
                    );
                    taken.fetch_add(1, Ordering::Relaxed);
                };
                while taken.load(Ordering::Relaxed) < total {
                    d.poll();
                    if next < per {
                        // A burst of pushes, then pop a third of it (like forks and joins).
                        let burst = rng.u64(1..64).min(per - next);
                        for _ in 0..burst {
                            d.push(me * per + next);
                            next += 1;
                            d.poll();
                        }
                        for _ in 0..burst / 3 {
                            if me == 0 {
                                break;
                            }
                            if let Some(v) = d.pop() {
                                take(v);
                            }
                        }
                    } else if me == 0 {
                        std::hint::spin_loop();
                    } else if let Some(v) = d.pop() {
                        take(v);
                    } else {
                        let v = rng.usize(..W);
                        if v != d.index() {
                            if let Steal::Success(x) = d.steal_from(v) {
                                stolen.fetch_add(1, Ordering::Relaxed);
                                take(x);
                            }
                        }
                    }
                }
                d.block();
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(taken.load(Ordering::Relaxed), total);
    assert!(seen.iter().all(|s| s.load(Ordering::Relaxed) == 1));
    assert!(
        stolen.load(Ordering::Relaxed) >= per,
        "worker 0's elements are taken by the others"
    );
}
