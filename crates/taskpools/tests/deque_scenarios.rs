//! Scenario tests for the three lock-free deques (Chase–Lev, FCDQ, private deques with steal
//! requests): smoke, one producer and one ordered thief (spsc), a stampede of thieves on a
//! full deque, a randomized stress with exactly-once accounting, no starvation of thieves while
//! the owner keeps working, and exact destructor counts. Sized for a 2-core machine (each well
//! under 2 s in release); every test runs under a watchdog so that a hang fails instead.
#![cfg(not(loom))]

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use taskpools::queue::chase_lev::{self, Steal};
use taskpools::queue::private_deque::{PrivateDeque, StealRequests};
use taskpools::queue::Fcdq;

const THIEVES: usize = 2;

/// Runs `f` on its own thread; fails if it does not finish within `secs` seconds (instead of
/// hanging the test run), and re-raises its panic if it panicked.
fn with_timeout(secs: u64, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let h = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(()) => h.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(p) = h.join() {
                std::panic::resume_unwind(p);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("timed out after {secs} s (a hang)"),
    }
}

/// Marks `v` taken in `seen`; fails on a second take.
fn mark(seen: &[AtomicU8], v: usize) {
    assert_eq!(
        seen[v].fetch_add(1, Ordering::Relaxed),
        0,
        "{v} taken twice"
    );
}

fn assert_all_once(seen: &[AtomicU8]) {
    let bad: Vec<(usize, u8)> = seen
        .iter()
        .enumerate()
        .map(|(i, c)| (i, c.load(Ordering::Relaxed)))
        .filter(|&(_, c)| c != 1)
        .take(5)
        .collect();
    assert!(bad.is_empty(), "(value, times taken), should be 1: {bad:?}");
}

fn bitmap(n: usize) -> Arc<Vec<AtomicU8>> {
    Arc::new((0..n).map(|_| AtomicU8::new(0)).collect())
}

/// A value whose drop is counted per id.
struct Tracked {
    id: usize,
    drops: Arc<Vec<AtomicU8>>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops[self.id].fetch_add(1, Ordering::Relaxed);
    }
}

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

// ---------------------------------------------------------------------------------------------
// Private deques: thieves are deques of the same set and ask the owner, which must poll.

/// A set of `1 + THIEVES` deques: the owner (index 0) and the thieves.
fn pd_set<V>() -> (PrivateDeque<V>, Vec<PrivateDeque<V>>) {
    let mut d = PrivateDeque::set(1 + THIEVES);
    let thieves = d.split_off(1);
    (d.pop().unwrap(), thieves)
}

#[test]
fn private_deque_smoke() {
    with_timeout(10, || {
        let (o, mut ts) = pd_set::<usize>();
        let t = ts.pop().unwrap();
        assert!(o.pop().is_none());
        assert!(matches!(t.steal_from(0), Steal::Empty));
        for i in 0..10 {
            o.push(i);
        }
        assert_eq!(o.pop(), Some(9), "the owner's end is LIFO");
        std::thread::scope(|s| {
            let h = s.spawn(move || t.steal_from(0));
            while !h.is_finished() {
                o.poll();
                std::thread::yield_now();
            }
            assert!(
                matches!(h.join().unwrap(), Steal::Success(0)),
                "thieves get the oldest"
            );
        });
        let rest: Vec<usize> = std::iter::from_fn(|| o.pop()).collect();
        assert_eq!(rest, (1..9).rev().collect::<Vec<_>>());
    });
}

#[test]
fn private_deque_spsc() {
    const N: usize = 20_000;
    with_timeout(30, || {
        let (o, mut ts) = pd_set::<usize>();
        let t = ts.pop().unwrap();
        let got = AtomicUsize::new(0);
        std::thread::scope(|s| {
            let got = &got;
            s.spawn(move || {
                let mut next = 0;
                while next < N {
                    match t.steal_from(0) {
                        Steal::Success(v) => {
                            assert_eq!(v, next, "a single thief takes in push order");
                            next += 1;
                            got.store(next, Ordering::Relaxed);
                        }
                        _ => std::thread::yield_now(),
                    }
                }
            });
            for i in 0..N {
                o.push(i);
                o.poll();
            }
            while got.load(Ordering::Relaxed) < N {
                o.poll();
                // Let the thief run (2 shared cores, or valgrind's one-at-a-time threads).
                std::thread::yield_now();
            }
        });
        assert!(o.pop().is_none());
    });
}

/// The owner's deque is filled first; thieves stampede while the owner pops (and polls).
#[test]
fn private_deque_stampede() {
    const M: usize = 20_000;
    with_timeout(30, || {
        let (o, ts) = pd_set::<usize>();
        for i in 0..M {
            o.push(i);
        }
        let seen = bitmap(M);
        let taken = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in ts {
                let (seen, taken) = (&seen, &taken);
                s.spawn(move || {
                    while taken.load(Ordering::Relaxed) < M {
                        if let Steal::Success(v) = t.steal_from(0) {
                            mark(seen, v);
                            taken.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
            let mut i = 0u64;
            while taken.load(Ordering::Relaxed) < M {
                o.poll();
                i += 1;
                if i % 4 == 0 {
                    if let Some(v) = o.pop() {
                        mark(&seen, v);
                        taken.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            // A thief may still ask after the last element went (the hint is withdrawn lazily):
            // decline it and refuse new requests, or it would wait for an answer forever.
            o.block();
        });
        assert_all_once(&seen);
    });
}

/// The owner pushes and pops at random (polling) while thieves steal: exactly once.
#[test]
fn private_deque_stress_exactly_once() {
    const N: usize = 100_000;
    with_timeout(30, || {
        let (o, ts) = pd_set::<usize>();
        let seen = bitmap(N);
        let taken = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in ts {
                let (seen, taken) = (&seen, &taken);
                s.spawn(move || {
                    while taken.load(Ordering::Relaxed) < N {
                        if let Steal::Success(v) = t.steal_from(0) {
                            mark(seen, v);
                            taken.fetch_add(1, Ordering::Relaxed);
                        } else {
                            std::thread::yield_now();
                        }
                    }
                });
            }
            let mut rng = fastrand::Rng::with_seed(11);
            let mut next = 0;
            while taken.load(Ordering::Relaxed) < N {
                o.poll();
                if next < N && rng.u8(..3) < 2 {
                    o.push(next);
                    next += 1;
                } else if let Some(v) = o.pop() {
                    mark(&seen, v);
                    taken.fetch_add(1, Ordering::Relaxed);
                }
            }
            // A thief may still ask after the last element went (the hint is withdrawn lazily):
            // decline it and refuse new requests, or it would wait for an answer forever.
            o.block();
        });
        assert_all_once(&seen);
    });
}

/// The owner keeps pushing, popping and polling; every thief must get something.
#[test]
fn private_deque_no_starvation() {
    const WANT: usize = 10;
    // Generous deadlines: under valgrind threads run one at a time, and on a loaded 2-core
    // host a thief's turns can be seconds apart (a 10 s deadline failed there once in four).
    with_timeout(90, || {
        let (o, ts) = pd_set::<usize>();
        let hits: Vec<AtomicUsize> = (0..THIEVES).map(|_| AtomicUsize::new(0)).collect();
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            for (t, hits) in ts.into_iter().zip(&hits) {
                let stop = &stop;
                s.spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        if let Steal::Success(_) = t.steal_from(0) {
                            hits.fetch_add(1, Ordering::Relaxed);
                        } else {
                            std::thread::yield_now();
                        }
                    }
                });
            }
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut i = 0;
            while hits.iter().any(|h| h.load(Ordering::Relaxed) < WANT) {
                assert!(Instant::now() < deadline, "a thief starved");
                o.push(i);
                o.poll();
                if i % 2 == 1 {
                    o.pop();
                }
                i += 1;
            }
            stop.store(true, Ordering::Relaxed);
            // Thieves may be waiting on us: keep answering until they are gone.
            o.block();
        });
    });
}

/// Values taken by the owner, by thieves, and left behind at the drop (while thieves may
/// still be asking): each is dropped exactly once.
#[test]
fn private_deque_destructors_run_exactly_once() {
    const N: usize = 20_000;
    with_timeout(30, || {
        let drops = bitmap(N);
        let (o, ts) = pd_set::<Tracked>();
        std::thread::scope(|s| {
            let hs: Vec<_> = ts
                .into_iter()
                .map(|t| {
                    s.spawn(move || {
                        let mut n = 0;
                        while n < 500 {
                            match t.steal_from(0) {
                                Steal::Success(v) => {
                                    drop(v);
                                    n += 1;
                                }
                                _ => std::thread::yield_now(),
                            }
                        }
                    })
                })
                .collect();
            for i in 0..N {
                o.push(Tracked {
                    id: i,
                    drops: Arc::clone(&drops),
                });
                o.poll();
                if i % 4 == 0 {
                    drop(o.pop());
                }
            }
            while !hs.iter().all(|h| h.is_finished()) {
                o.poll();
                std::thread::yield_now();
            }
        });
        let left = N - drops
            .iter()
            .filter(|c| c.load(Ordering::Relaxed) == 1)
            .count();
        assert!(left > 0, "some values are left in the deque");
        drop(o);
        assert_all_once(&drops);
    });
}

// ---------------------------------------------------------------------------------------------
// Dropping a private deque or a request handle: thieves are answered, never left waiting.

/// A deque that advertises work is dropped; a later steal from it returns `Empty` at once.
#[test]
fn private_deque_drop_while_advertising_does_not_hang_a_thief() {
    with_timeout(10, || {
        let mut d = PrivateDeque::<u32>::set(2);
        let v = d.pop().unwrap();
        let t = d.pop().unwrap();
        v.push(1);
        drop(v);
        assert!(matches!(t.steal_from(1), Steal::Empty));
    });
}

/// A deque is dropped while a thief's request may be pending (the thief asks from another
/// thread and the owner never polls): the drop declines it.
#[test]
fn private_deque_drop_declines_a_pending_request() {
    with_timeout(10, || {
        let mut d = PrivateDeque::<u32>::set(2);
        let v = d.pop().unwrap();
        let t = d.pop().unwrap();
        v.push(1);
        let h = std::thread::spawn(move || t.steal_from(1));
        std::thread::sleep(Duration::from_millis(50));
        drop(v);
        assert!(matches!(h.join().unwrap(), Steal::Empty));
    });
}

/// The same with bare request handles, waiting until the request is certainly pending.
#[test]
fn steal_requests_drop_declines_a_pending_request_and_closes() {
    with_timeout(10, || {
        let mut r = StealRequests::<u32>::set(3);
        let late = r.pop().unwrap();
        let victim = r.pop().unwrap();
        let thief = r.pop().unwrap();
        victim.advertise(true);
        let h = std::thread::spawn(move || thief.steal_from(1, || {}));
        while !victim.pending() {
            std::thread::yield_now();
        }
        drop(victim);
        assert!(matches!(h.join().unwrap(), Steal::Empty));
        assert!(!late.table().has_work(1));
        assert!(matches!(late.steal_from(1, || {}), Steal::Empty));
    });
}

/// The closures of `steal_from`, `poll` and `block` are caller code: calling back into the
/// same handle from one must not answer a thief twice or put two requests out at once.
#[test]
fn steal_requests_refuse_reentry_from_their_closures() {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    with_timeout(20, || {
        let mut r = StealRequests::<u32>::set(3);
        let c = r.pop().unwrap();
        let b = r.pop().unwrap();
        let a = r.pop().unwrap();
        b.advertise(true);
        c.advertise(true);
        // Victims b and c answer from their own threads.
        let stop = Arc::new(AtomicBool::new(false));
        let victims: Vec<_> = [b, c]
            .into_iter()
            .map(|v| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut n = 100;
                    while !stop.load(Ordering::Relaxed) {
                        v.poll(|| {
                            n += 1;
                            Some(n)
                        });
                        std::thread::yield_now();
                    }
                })
            })
            .collect();
        // A nested steal from inside serve_own panics; the outer request is still answered
        // (the element dropped), and the handle works afterwards.
        let r = catch_unwind(AssertUnwindSafe(|| {
            a.steal_from(1, || {
                a.steal_from(2, || {});
            })
        }));
        assert!(r.is_err(), "a nested steal_from must panic");
        assert!(matches!(a.steal_from(2, || {}), Steal::Success(_)));
        // A panic in serve_own also leaves no request out.
        let r = catch_unwind(AssertUnwindSafe(|| a.steal_from(1, || panic!("boom"))));
        assert!(r.is_err());
        assert!(matches!(a.steal_from(1, || {}), Steal::Success(_)));
        stop.store(true, Ordering::Relaxed);
        for v in victims {
            v.join().unwrap();
        }
    });
}

#[test]
fn a_poll_from_inside_poll_panics_and_declines_the_thief() {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    with_timeout(20, || {
        let mut r = StealRequests::<u32>::set(2);
        let thief = r.pop().unwrap();
        let victim = r.pop().unwrap();
        victim.advertise(true);
        let h = std::thread::spawn(move || thief.steal_from(0, || {}));
        while !victim.pending() {
            std::thread::yield_now();
        }
        let res = catch_unwind(AssertUnwindSafe(|| {
            victim.poll(|| {
                victim.poll(|| Some(1));
                Some(2)
            })
        }));
        assert!(res.is_err(), "a nested poll must panic");
        // The thief was declined, not left waiting, and the cell takes requests again.
        assert!(matches!(h.join().unwrap(), Steal::Empty));
        assert!(!victim.pending());
    });
}
