//! Loom model of the ready heaps' tickets, run with the shipped heaps, spare counts and
//! [`take`] on loom's locks and atomics: worker 0 has readied three tasks (three entries of
//! its heap, three tickets in its deque); it and a thief (worker 1) take tickets from that
//! deque and run them as `run_ticket` does, the thief moving entries into its own heap with
//! tickets of its own. Then worker 0 ends the scope: it waits for the three completions and
//! for every slot's spare count to reach 0, and frees the slots. Every task must run exactly
//! once, and no ticket may touch the slots after they are freed (a cell written at the free
//! and read by each ticket before its `take`, so loom reports a ticket the end does not
//! wait for as a race). Planted-bug twins that must fail: a thief that moves entries without
//! counting their tickets spare, and a spare ticket that counts itself off Relaxed.

use super::*;
use crate::sync::{Arc, UnsafeCell};

const TASKS: usize = 3;

/// Whether some execution moved an entry (outside loom: across executions).
static MOVED_ONCE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

struct World {
    slots: Box<[Slot]>,
    /// Tickets of heap 0 still queued in worker 0's deque (taken by either thread).
    deque0: AtomicUsize,
    /// Runs per task (ids 1 to 3).
    runs: [AtomicUsize; TASKS],
    /// Completed tasks (the frame's count: Release, read with Acquire at the end).
    completed: AtomicUsize,
    /// The slots' memory: each ticket reads it before its `take`, the end writes it.
    memory: UnsafeCell<u64>,
}

// SAFETY (test): `memory` is accessed under the protocol being checked; loom reports any
// access it does not order. The descriptors in the heaps are never dereferenced.
unsafe impl Send for World {}
unsafe impl Sync for World {}

/// Takes one queued ticket of heap 0, if any (a pop or a steal).
fn claim(w: &World) -> bool {
    let mut n = w.deque0.load(Ordering::Relaxed);
    while n > 0 {
        match w
            .deque0
            .compare_exchange(n, n - 1, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => return true,
            Err(m) => n = m,
        }
    }
    false
}

/// `run_ticket` for a ticket of heap `s` on worker `me`: returns the tickets it queued on
/// `me`'s deque.
fn run_ticket(w: &World, s: usize, me: usize) -> usize {
    // SAFETY (test): a read of the slots' memory; the end writes it after its waits.
    w.memory
        .with(|m| unsafe { assert_eq!(*m, 0, "a ticket ran after the scope's end") });
    let (task, moved) = take(&w.slots, s, me);
    if moved > 0 {
        MOVED_ONCE.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    if let Some(d) = task {
        let id = d as usize;
        w.runs[id - 1].fetch_add(1, Ordering::Relaxed);
        w.completed.fetch_add(1, Ordering::Release);
    }
    moved
}

fn model(mutation: Mutation) {
    loom::model(move || {
        let mut slots: Vec<Slot> = (0..2).map(|i| Slot::new(i, 2)).collect();
        for s in &mut slots {
            s.mutation = mutation;
        }
        {
            let mut h = lock(&slots[0].heap);
            for id in 1..=TASKS {
                h.push(id as i16 % 2, id as *const TaskDesc);
            }
        }
        let w = Arc::new(World {
            slots: slots.into_boxed_slice(),
            deque0: AtomicUsize::new(TASKS),
            runs: std::array::from_fn(|_| AtomicUsize::new(0)),
            completed: AtomicUsize::new(0),
            memory: UnsafeCell::new(0),
        });
        let thief = {
            let w = Arc::clone(&w);
            loom::thread::spawn(move || {
                while claim(&w) {
                    let mut own = run_ticket(&w, 0, 1);
                    while own > 0 {
                        own -= 1;
                        own += run_ticket(&w, 1, 1);
                    }
                }
            })
        };
        while claim(&w) {
            run_ticket(&w, 0, 0);
        }
        // The root scope's end: the completions, then the spare tickets (`wait_spare`).
        while w.completed.load(Ordering::Acquire) != TASKS {
            loom::thread::yield_now();
        }
        while !w.slots.iter().all(|s| {
            let n = s.spare.0.load(Ordering::Acquire);
            assert!(n <= TASKS, "a spare count went below zero");
            n == 0
        }) {
            loom::thread::yield_now();
        }
        // SAFETY (test): the free; loom reports a ticket not ordered before it.
        w.memory.with_mut(|m| unsafe { *m = 1 });
        for r in &w.runs {
            assert_eq!(r.load(Ordering::Relaxed), 1, "a task ran other than once");
        }
        thief.join().unwrap();
    });
}

#[test]
fn tickets_take_each_task_once_and_end_before_the_scope() {
    model(Mutation::None);
    assert!(
        MOVED_ONCE.load(std::sync::atomic::Ordering::Relaxed),
        "the model never moved an entry"
    );
}

#[test]
#[should_panic(expected = "below zero")]
fn planted_uncounted_move_fails() {
    model(Mutation::UncountedMove);
}

#[test]
#[should_panic(expected = "Causality violation")]
fn planted_relaxed_spare_fails() {
    model(Mutation::RelaxedSpare);
}
