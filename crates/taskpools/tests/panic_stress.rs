//! Exactly-once under panics: tasks of a tree panic at random points (before or after they put
//! their children) on every pool, thread count and wake-up policy. Whatever happens, every task
//! value that was created is dropped exactly once, no task runs twice, the first panic reaches
//! the caller, and a run without a panic runs every task.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use taskpools::{Builder, Ctx, PoolKind, Task, WakePolicy};

const DEPTH: u32 = 11;
const NODES: usize = (1 << (DEPTH + 1)) - 1;

struct Book {
    ran: Vec<AtomicU8>,
    dropped: Vec<AtomicU8>,
    created: Vec<AtomicU8>,
    panics: AtomicUsize,
    seed: u64,
    /// One task in `one_in` panics.
    one_in: u64,
}

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

struct Node<'a> {
    id: usize,
    depth: u32,
    book: &'a Book,
}

impl<'a> Node<'a> {
    fn new(id: usize, depth: u32, book: &'a Book) -> Self {
        assert_eq!(book.created[id].fetch_add(1, Ordering::Relaxed), 0);
        Node { id, depth, book }
    }
}

impl Drop for Node<'_> {
    fn drop(&mut self) {
        self.book.dropped[self.id].fetch_add(1, Ordering::Relaxed);
    }
}

impl Task for Node<'_> {
    fn run(self, ctx: &mut Ctx<'_, Self>) {
        let b = self.book;
        b.ran[self.id].fetch_add(1, Ordering::Relaxed);
        let h = mix(b.seed ^ (self.id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let explode = h % b.one_in == 0;
        // Half of the bombs go off before the children exist, half after they were put.
        if explode && h & (1 << 40) == 0 {
            b.panics.fetch_add(1, Ordering::Relaxed);
            panic!("task {} exploded before its children", self.id);
        }
        if self.depth < DEPTH {
            ctx.put(Node::new(2 * self.id + 1, self.depth + 1, b));
            ctx.put(Node::new(2 * self.id + 2, self.depth + 1, b));
        }
        if explode {
            b.panics.fetch_add(1, Ordering::Relaxed);
            panic!("task {} exploded after its children", self.id);
        }
    }
}

fn one(pool: PoolKind, threads: usize, wake: WakePolicy, seed: u64, one_in: u64) {
    let book = Book {
        ran: (0..NODES).map(|_| AtomicU8::new(0)).collect(),
        dropped: (0..NODES).map(|_| AtomicU8::new(0)).collect(),
        created: (0..NODES).map(|_| AtomicU8::new(0)).collect(),
        panics: AtomicUsize::new(0),
        seed,
        one_in,
    };
    let what = format!("{pool} x{threads} {wake} seed {seed}");
    let b = Builder::new().threads(threads).pool(pool).wake(wake);
    let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        b.run([Node::new(0, 0, &book)])
    }));
    let panics = book.panics.load(Ordering::Relaxed);
    match res {
        Ok(report) => {
            let report = report.unwrap();
            assert_eq!(panics, 0, "{what}: a panic was swallowed");
            assert_eq!(report.tasks_run(), NODES as u64, "{what}");
        }
        Err(payload) => {
            assert!(panics >= 1, "{what}: a panic from nowhere");
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default();
            assert!(msg.contains("exploded"), "{what}: {msg}");
        }
    }
    for id in 0..NODES {
        let (c, r, d) = (
            book.created[id].load(Ordering::Relaxed),
            book.ran[id].load(Ordering::Relaxed),
            book.dropped[id].load(Ordering::Relaxed),
        );
        assert!(r <= c, "{what}: task {id} ran {r} times, created {c}");
        assert_eq!(d, c, "{what}: task {id} created {c}, dropped {d} times");
        if panics == 0 {
            assert_eq!(r, 1, "{what}: task {id} never ran");
        }
    }
}

#[test]
fn every_task_is_dropped_exactly_once_when_tasks_panic_at_random_points() {
    // Hundreds of expected panics: keep their messages out of the test log.
    std::panic::set_hook(Box::new(|_| {}));
    // A lost wake-up or a worker that never leaves would hang here: fail after a deadline
    // instead (the whole sweep takes well under a second on 2 cores).
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        sweep();
        let _ = tx.send(());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(120)) {
        Ok(()) => h.join().unwrap(),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            // The sweep panicked: show its assertion.
            let _ = std::panic::take_hook();
            std::panic::resume_unwind(h.join().unwrap_err())
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("the panic sweep did not finish in 120 s: a working phase hangs")
        }
    }
}

fn sweep() {
    for pool in PoolKind::ALL {
        for threads in [1, 2, 3] {
            for (k, wake) in WakePolicy::ALL.into_iter().enumerate() {
                for seed in 0..3u64 {
                    let seed = seed * 31 + k as u64 * 7 + threads as u64;
                    // About one bomb per run, some runs with none (the control).
                    one(pool, threads, wake, seed, NODES as u64);
                }
            }
            // Many bombs at once: several workers panic concurrently.
            one(pool, threads, WakePolicy::OnEmpty, 99, 64);
        }
    }
}
