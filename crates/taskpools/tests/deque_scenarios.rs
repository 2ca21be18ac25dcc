//! Scenario tests for the lock-free deques whose thieves take directly (Chase–Lev, FCDQ; the
//! private deques with steal requests are in `private_deque_scenarios.rs`): smoke, one producer
//! and one ordered thief (spsc), a stampede of thieves on a full deque, a randomized stress
//! with exactly-once accounting, no starvation of thieves while the owner keeps working, and
//! exact destructor counts. Sized for a 2-core machine (each well under 2 s in release); every
//! test runs under a watchdog so that a hang fails instead.
#![cfg(not(loom))]

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use taskpools::queue::chase_lev::{self, Steal};
use taskpools::queue::Fcdq;

#[path = "common/deques.rs"]
mod common;
use common::*;

// ---------------------------------------------------------------------------------------------
// Chase–Lev and FCDQ: an owner handle and cloneable thief handles.

trait Owner<V>: Send + 'static {
    type Thief: Thief<V>;
    /// A deque with room for `cap` elements (FCDQ) or initial capacity `cap` (Chase–Lev).
    fn make(cap: usize) -> (Self, Self::Thief)
    where
        Self: Sized;
    fn push(&self, v: V) -> Result<(), V>;
    fn pop(&self) -> Option<V>;
}

trait Thief<V>: Clone + Send + 'static {
    fn steal(&self) -> Steal<V>;
}

impl<V: Send + 'static> Owner<V> for chase_lev::Worker<V> {
    type Thief = chase_lev::Stealer<V>;
    fn make(cap: usize) -> (Self, Self::Thief) {
        chase_lev::deque(cap)
    }
    fn push(&self, v: V) -> Result<(), V> {
        chase_lev::Worker::push(self, v);
        Ok(())
    }
    fn pop(&self) -> Option<V> {
        chase_lev::Worker::pop(self)
    }
}

impl<V: Send + 'static> Thief<V> for chase_lev::Stealer<V> {
    fn steal(&self) -> Steal<V> {
        chase_lev::Stealer::steal(self)
    }
}

/// The owner's handle on an FCDQ: one per deque, `Send` but not `Sync` and not `Clone`, so
/// that only one thread at a time makes owner calls.
struct FcdqOwner<V>(Arc<Fcdq<V>>, PhantomData<Cell<()>>);

struct FcdqThief<V>(Arc<Fcdq<V>>);

impl<V> Clone for FcdqThief<V> {
    fn clone(&self) -> Self {
        FcdqThief(Arc::clone(&self.0))
    }
}

impl<V: Send + 'static> Owner<V> for FcdqOwner<V> {
    type Thief = FcdqThief<V>;
    fn make(cap: usize) -> (Self, Self::Thief) {
        let q = Arc::new(Fcdq::new(cap));
        (FcdqOwner(Arc::clone(&q), PhantomData), FcdqThief(q))
    }
    fn push(&self, v: V) -> Result<(), V> {
        // SAFETY: `FcdqOwner` is the only owner handle and is not `Sync`.
        unsafe { self.0.enqueue(v) }
    }
    fn pop(&self) -> Option<V> {
        // SAFETY: as above.
        unsafe { self.0.dequeue_front() }
    }
}

impl<V: Send + 'static> Thief<V> for FcdqThief<V> {
    fn steal(&self) -> Steal<V> {
        match self.0.dequeue_back() {
            Some(v) => Steal::Success(v),
            None => Steal::Empty,
        }
    }
}

/// Pushes, yielding while a bounded deque is full.
fn push_wait<V, O: Owner<V>>(o: &O, mut v: V) {
    while let Err(back) = o.push(v) {
        v = back;
        std::thread::yield_now();
    }
}

/// Steals until success or `Empty` (retrying on `Retry`).
fn steal_one<V>(t: &impl Thief<V>) -> Option<V> {
    loop {
        match t.steal() {
            Steal::Success(v) => return Some(v),
            Steal::Empty => return None,
            Steal::Retry => std::hint::spin_loop(),
        }
    }
}

fn smoke<O: Owner<usize>>() {
    let (o, t) = O::make(16);
    assert!(o.pop().is_none());
    assert!(matches!(t.steal(), Steal::Empty));
    for i in 0..10 {
        push_wait(&o, i);
    }
    assert_eq!(o.pop(), Some(9), "the owner's end is LIFO");
    assert_eq!(steal_one(&t), Some(0), "the thief's end is FIFO");
    assert_eq!(steal_one(&t.clone()), Some(1));
    let rest: Vec<usize> = std::iter::from_fn(|| o.pop()).collect();
    assert_eq!(rest, (2..9).rev().collect::<Vec<_>>());
    assert!(matches!(t.steal(), Steal::Empty));
}

/// One producer that never pops, one thief: the thief sees every value, in push order.
fn spsc<O: Owner<usize>>(cap: usize) {
    const N: usize = 100_000;
    with_timeout(30, move || {
        let (o, t) = O::make(cap);
        std::thread::scope(|s| {
            s.spawn(move || {
                let mut next = 0;
                while next < N {
                    if let Some(v) = steal_one(&t) {
                        assert_eq!(v, next, "a single thief takes in push order");
                        next += 1;
                    } else {
                        std::thread::yield_now();
                    }
                }
            });
            for i in 0..N {
                push_wait(&o, i);
            }
        });
        assert!(o.pop().is_none());
    });
}

/// The deque is filled first; then thieves stampede while the owner pops: every element is
/// taken exactly once.
fn stampede<O: Owner<usize>>() {
    const M: usize = 20_000;
    with_timeout(30, || {
        let (o, t) = O::make(M);
        for i in 0..M {
            o.push(i).unwrap_or_else(|_| panic!("room for {M}"));
        }
        let seen = bitmap(M);
        let stolen = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..THIEVES {
                let (t, seen, stolen) = (t.clone(), &seen, &stolen);
                // No pushes from now on, so the first Empty is final.
                s.spawn(move || {
                    while let Some(v) = steal_one(&t) {
                        mark(seen, v);
                        stolen.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
            while let Some(v) = o.pop() {
                mark(&seen, v);
            }
        });
        assert_all_once(&seen);
    });
}

/// The owner pushes and pops at random while thieves steal: exactly-once accounting.
fn stress<O: Owner<usize>>(cap: usize) {
    const N: usize = 200_000;
    with_timeout(30, move || {
        let (o, t) = O::make(cap);
        let seen = bitmap(N);
        let done = AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..THIEVES {
                let (t, seen, done) = (t.clone(), &seen, &done);
                s.spawn(move || loop {
                    let finished = done.load(Ordering::Acquire);
                    match steal_one(&t) {
                        Some(v) => mark(seen, v),
                        None if finished => break,
                        None => std::thread::yield_now(),
                    }
                });
            }
            let mut rng = fastrand::Rng::with_seed(7);
            let mut next = 0;
            while next < N {
                if rng.u8(..3) < 2 {
                    push_wait(&o, next);
                    next += 1;
                } else if let Some(v) = o.pop() {
                    mark(&seen, v);
                }
            }
            done.store(true, Ordering::Release);
        });
        assert!(o.pop().is_none());
        assert_all_once(&seen);
    });
}

/// The owner keeps pushing and popping; every thief must get something within the deadline.
fn no_starvation<O: Owner<usize>>(cap: usize) {
    const WANT: usize = 10;
    with_timeout(30, move || {
        let (o, t) = O::make(cap);
        let hits: Vec<AtomicUsize> = (0..THIEVES).map(|_| AtomicUsize::new(0)).collect();
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            for hits in &hits {
                let (t, stop) = (t.clone(), &stop);
                s.spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        match t.steal() {
                            Steal::Success(_) => {
                                hits.fetch_add(1, Ordering::Relaxed);
                            }
                            _ => std::thread::yield_now(),
                        }
                    }
                });
            }
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut i = 0;
            while hits.iter().any(|h| h.load(Ordering::Relaxed) < WANT) {
                assert!(Instant::now() < deadline, "a thief starved");
                if o.push(i).is_err() {
                    o.pop();
                }
                if i % 2 == 1 {
                    o.pop();
                }
                i += 1;
            }
            stop.store(true, Ordering::Relaxed);
        });
    });
}

/// Values are taken by the owner and by thieves and some are left in the deque when it is
/// dropped: each one is dropped exactly once (not in a retired Chase–Lev buffer, not twice).
fn destructors<O: Owner<Tracked>>(cap: usize) {
    const N: usize = 20_000;
    const LEFT: usize = 10;
    with_timeout(30, move || {
        let drops = bitmap(N + LEFT);
        let push = |o: &O, id: usize| {
            let mut v = Tracked {
                id,
                drops: Arc::clone(&drops),
            };
            // A bounded deque that is full: make room ourselves (thieves may be gone).
            while let Err(back) = o.push(v) {
                v = back;
                drop(o.pop());
            }
        };
        let (o, t) = O::make(cap);
        std::thread::scope(|s| {
            for _ in 0..THIEVES {
                let t = t.clone();
                s.spawn(move || {
                    for _ in 0..2_000 {
                        drop(steal_one(&t));
                        std::hint::spin_loop();
                    }
                });
            }
            for i in 0..N {
                push(&o, i);
                if i % 4 == 0 {
                    drop(o.pop());
                }
            }
        });
        // The thieves are gone: these (at least) stay in the deque until it is dropped.
        for i in N..N + LEFT {
            push(&o, i);
        }
        let left = N + LEFT
            - drops
                .iter()
                .filter(|c| c.load(Ordering::Relaxed) == 1)
                .count();
        assert!(left >= LEFT, "values are left in the deque");
        drop(o);
        drop(t);
        assert_all_once(&drops);
    });
}

macro_rules! scenarios {
    ($m:ident, $owner:ident, $cap:expr) => {
        mod $m {
            use super::*;

            #[test]
            fn smoke() {
                with_timeout(10, super::smoke::<$owner<usize>>);
            }
            #[test]
            fn spsc() {
                super::spsc::<$owner<usize>>($cap);
            }
            #[test]
            fn stampede() {
                super::stampede::<$owner<usize>>();
            }
            #[test]
            fn stress_exactly_once() {
                super::stress::<$owner<usize>>($cap);
            }
            #[test]
            fn no_starvation() {
                super::no_starvation::<$owner<usize>>($cap);
            }
            #[test]
            fn destructors_run_exactly_once() {
                super::destructors::<$owner<Tracked>>($cap);
            }
        }
    };
}

use chase_lev::Worker as ClWorker;
// Chase–Lev from capacity 2, so that it grows (and retires and frees buffers) under load.
scenarios!(chase_lev_scenarios, ClWorker, 2);
scenarios!(fcdq_scenarios, FcdqOwner, 64);

/// Chase–Lev buffers retired while thieves read are all reclaimed eventually, and the deque
/// still hands every element out once (a stress of the reclamation).
#[test]
fn chase_lev_retired_buffers_are_reclaimed_under_steals() {
    with_timeout(30, || {
        const ROUNDS: usize = 40;
        let seen = bitmap(ROUNDS * 4096);
        let (w, s) = chase_lev::deque::<usize>(2);
        let done = AtomicBool::new(false);
        std::thread::scope(|sc| {
            for _ in 0..THIEVES {
                let (s, seen, done) = (s.clone(), &seen, &done);
                sc.spawn(move || loop {
                    let finished = done.load(Ordering::Acquire);
                    match steal_one(&s) {
                        Some(v) => mark(seen, v),
                        None if finished => break,
                        None => std::hint::spin_loop(),
                    }
                });
            }
            let mut next = 0;
            for _ in 0..ROUNDS {
                // Fill (growing while thieves read), then drain: the empty pop at the end
                // of each round is a reclamation point.
                for _ in 0..4096 {
                    w.push(next);
                    next += 1;
                }
                while let Some(v) = w.pop() {
                    mark(&seen, v);
                }
            }
            done.store(true, Ordering::Release);
        });
        assert_all_once(&seen);
        // No thief is inside a steal any more: the next check frees whatever is left.
        assert!(w.pop().is_none());
        assert_eq!(w.retired_buffers(), 0);
    });
}
