//! No allocation on the join path, and scope spawns reuse their storage: counted with a global
//! allocator that counts per thread. In its own test binary because of that allocator.
#![cfg(not(loom))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use taskpools::forkjoin::{self, Pool, Runtime};

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the count is a thread-local `Cell` with a const
// initializer and no destructor, so touching it cannot allocate or recurse.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn allocs_here() -> u64 {
    ALLOCS.with(Cell::get)
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = forkjoin::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

#[test]
fn joins_do_not_allocate() {
    for pool in Pool::ALL {
        let rt = Runtime::builder().threads(1).pool(pool).build().unwrap();
        let (r, n) = rt.install(|| {
            fib(20); // warm up: the deque reaches its working size
            let before = allocs_here();
            let r = fib(20);
            (r, allocs_here() - before)
        });
        assert_eq!(r, 6765);
        assert_eq!(n, 0, "{pool}: 10 945 joins allocated {n} times");
    }
}

#[test]
fn scope_spawns_recycle_their_storage() {
    for pool in Pool::ALL {
        let rt = Runtime::builder().threads(1).pool(pool).build().unwrap();
        let n = rt.install(|| {
            let mut out = vec![0u64; 200];
            let round = |out: &mut Vec<u64>| {
                forkjoin::scope(|s| {
                    for (i, o) in out.iter_mut().enumerate() {
                        s.spawn(move |_| *o = i as u64 * 2);
                    }
                });
            };
            round(&mut out); // warm up: slots and deque
            let before = allocs_here();
            for _ in 0..10 {
                round(&mut out);
            }
            assert!(out.iter().enumerate().all(|(i, &o)| o == i as u64 * 2));
            allocs_here() - before
        });
        assert_eq!(n, 0, "{pool}: 2000 spawns allocated {n} times");
    }
}

/// A closure too large for a recycled slot still works (it gets a box of its own).
#[test]
fn large_spawn_closures_are_boxed_and_run() {
    let rt = Runtime::builder().threads(2).build().unwrap();
    let big = [7u64; 64];
    let mut sum = 0u64;
    rt.scope(|s| {
        let sum = &mut sum;
        s.spawn(move |_| *sum = big.iter().sum());
    });
    assert_eq!(sum, 7 * 64);
}

/// The documented boundary: a spawned closure of 88 bytes is recycled once warm (the runtime's
/// wrapper adds a scope pointer, filling the 96-byte slot), one of 96 bytes gets a box per
/// spawn.
#[test]
fn spawns_up_to_88_bytes_recycle_larger_ones_allocate() {
    fn allocs_per_round<const N: usize>(rt: &Runtime) -> u64 {
        rt.install(|| {
            let mut out = vec![0u64; 50];
            let round = |out: &mut Vec<u64>| {
                forkjoin::scope(|s| {
                    for (i, o) in out.iter_mut().enumerate() {
                        let pad = [i as u64; N];
                        let f = move |_: &forkjoin::Scope<'_>| *o = pad.iter().sum();
                        assert_eq!(std::mem::size_of_val(&f), 8 + 8 * N);
                        s.spawn(f);
                    }
                });
            };
            round(&mut out); // warm up
            let before = allocs_here();
            round(&mut out);
            assert!(out.iter().enumerate().all(|(i, &o)| o == (i * N) as u64));
            allocs_here() - before
        })
    }
    for pool in Pool::ALL {
        let rt = Runtime::builder().threads(1).pool(pool).build().unwrap();
        assert_eq!(allocs_per_round::<10>(&rt), 0, "{pool}: 88-byte closures");
        assert!(
            allocs_per_round::<11>(&rt) >= 50,
            "{pool}: 96-byte closures are boxed, one allocation per spawn"
        );
    }
}
