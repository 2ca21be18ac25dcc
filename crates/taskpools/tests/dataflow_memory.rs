//! Descriptors, notify nodes and look-up-table entries are freed: repeated data-flow scopes of
//! many tasks with dependences do not grow the heap (a counting global allocator measures the
//! live bytes after each scope).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use taskpools::dataflow::{self, Config};
use taskpools::forkjoin::{Pool, Runtime};
use taskpools::mem::region;

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
/// Requests for zero bytes (undefined behaviour for a `GlobalAlloc` caller): must stay 0.
static ZERO_SIZED: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator, counting bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if l.size() == 0 {
            ZERO_SIZED.fetch_add(1, Ordering::Relaxed);
        }
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// One scope of `tasks` tasks over 64 blocks: each task updates one block after reading its
/// left neighbour (two dependences per task, chains and fan-out).
fn one_scope(rt: &Runtime, data: &mut [u64], tasks: usize, config: Config) {
    rt.install(|| {
        dataflow::scope_with(config, |df| {
            let r = df.region(data);
            let blocks: Vec<_> = r.chunks(64).collect();
            for t in 0..tasks {
                let i = t % blocks.len();
                let left = blocks[(i + blocks.len() - 1) % blocks.len()];
                df.spawn((left.read(), blocks[i].inout()), |_, (l, b)| {
                    b[0] = b[0].wrapping_add(l[63]).wrapping_add(1);
                });
            }
        })
    });
}

#[test]
fn repeated_scopes_with_a_million_tasks_do_not_grow_the_heap() {
    let tasks = if cfg!(debug_assertions) {
        20_000
    } else {
        200_000
    };
    for pool in Pool::ALL {
        for config in [
            Config::thesis(),
            Config::exact().with_index_block(512).unwrap(),
        ] {
            let rt = Runtime::builder().threads(2).pool(pool).build().unwrap();
            let mut data = vec![0u64; 64 * 64];
            // Two warm-up scopes fill the region chunk pool and the runtime's caches.
            one_scope(&rt, &mut data, tasks, config);
            one_scope(&rt, &mut data, tasks, config);
            // Live bytes outside the global pool of free region chunks (bounded, see
            // `mem::region`: it may go on filling up to its cap as scopes come and go).
            let live = || {
                LIVE.load(Ordering::Relaxed) as i64
                    - (region::pooled_chunks() * region::CHUNK_BYTES) as i64
            };
            let base = live();
            let mut after = Vec::new();
            for _ in 0..5 {
                one_scope(&rt, &mut data, tasks, config);
                after.push(live() - base);
            }
            // 5 × 200 000 tasks ran; what stays is at most a few chunks' jitter.
            assert!(
                after.iter().all(|&d| d < 1 << 20),
                "{pool} {config:?}: live bytes grew by {after:?} after scopes of {tasks} tasks"
            );
            let total: u64 = data.iter().step_by(64).sum();
            assert!(total > 0);
        }
    }
}

#[test]
fn zero_sized_over_aligned_captures_do_not_ask_the_allocator_for_zero_bytes() {
    #[repr(align(128))]
    struct Z;
    let before = ZERO_SIZED.load(Ordering::Relaxed);
    let mut v = vec![0u8; 4];
    dataflow::scope(|df| {
        let r = df.region(&mut v);
        for _ in 0..10 {
            let z = Z;
            df.spawn((), move |_, ()| {
                let _keep = &z;
            });
        }
        df.spawn(r.inout(), |_, x| x[0] = 1);
    });
    assert_eq!(v[0], 1);
    assert_eq!(ZERO_SIZED.load(Ordering::Relaxed), before);
}
