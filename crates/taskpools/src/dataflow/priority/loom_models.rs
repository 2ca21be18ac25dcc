//! Loom models of the ready heaps' tickets, run with the shipped heaps, spare counts and
//! [`take`] on loom's locks and atomics. Worker 0 has readied tasks (entries of its heap,
//! their tickets in its deque); it and one or two thieves take tickets from that deque and
//! run them as `run_ticket` does, a thief moving entries into its own heap with tickets of
//! its own. Then worker 0 ends the scope: it waits for every completion and for every
//! slot's spare count to reach 0, and frees the slots. Every task must run exactly once,
//! and no ticket may touch a slot after the free (each slot access of `take` reads the
//! slot's memory cell, which the free writes, so loom reports an access the end does not
//! wait for). Planted-bug twins that must fail: a thief that moves entries without counting
//! their tickets spare, and a spare ticket that counts itself off Relaxed.
//!
//! A second model scripts three workers around a ticket that finds its heap empty: thief A
//! takes a ticket of worker 0's heap of three tasks, thief B another (moving one entry to
//! its own heap: one spare unit), worker 0 the third, then worker 0 readies a fourth task,
//! whose ticket B takes. If A found the heap empty and B counted the spare unit off
//! meanwhile, A must look again and take the fourth task; a count-off that decremented
//! regardless (the planted bug) leaves that task without a ticket and the count below zero.

use super::*;
use crate::sync::Arc;

/// Whether some execution moved an entry (outside loom: across executions).
static MOVED_ONCE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

struct World {
    slots: Box<[Slot]>,
    /// Tickets of heap 0 queued in worker 0's deque (taken by any thread).
    deque0: AtomicUsize,
    /// Tasks readied so far; runs per task (ids 1 to `runs.len()`).
    readied: AtomicUsize,
    runs: Vec<AtomicUsize>,
    /// Completed tasks (the frame's count: Release, read with Acquire at the end).
    completed: AtomicUsize,
}

// SAFETY (test): the descriptors in the heaps are ids, never dereferenced.
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

/// Worker 0 readies task `id`: an entry of its heap, then a ticket in its deque.
fn ready(w: &World, id: usize) {
    lock(&w.slots[0].heap).push(id as i16 % 2, id as *const TaskDesc);
    w.readied.fetch_add(1, Ordering::Relaxed);
    w.deque0.fetch_add(1, Ordering::Release);
}

/// `run_ticket` for a ticket of heap `s` on worker `me`: returns the tickets it queued on
/// `me`'s deque.
fn run_ticket(w: &World, s: usize, me: usize) -> usize {
    // SAFETY (test): the slots are alive until the end frees them, which the model checks.
    let (task, moved) = unsafe { take(w.slots.as_ptr(), w.slots.len(), s, me) };
    if moved > 0 {
        MOVED_ONCE.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    if let Some(d) = task {
        w.runs[d as usize - 1].fetch_add(1, Ordering::Relaxed);
        w.completed.fetch_add(1, Ordering::Release);
    }
    moved
}

/// A ticket of heap `s` on worker `me`, then the tickets it queued for `me`'s own heap.
fn run_with_own(w: &World, s: usize, me: usize) {
    let mut own = run_ticket(w, s, me);
    while own > 0 {
        own -= 1;
        own += run_ticket(w, me, me);
    }
}

/// A thief on worker `me`: takes tickets of heap 0, and runs those it queued for its own.
fn thief(w: &World, me: usize) {
    while claim(w) {
        run_with_own(w, 0, me);
    }
}

/// `tasks` readied before the thieves start, `late` more by worker 0 while they run, with
/// `thieves` thieves.
fn model(mutation: Mutation, tasks: usize, late: usize, thieves: usize) {
    loom::model(move || {
        let w = world(mutation, tasks + late, thieves + 1);
        for id in 1..=tasks {
            ready(&w, id);
        }
        let handles: Vec<_> = (1..=thieves)
            .map(|me| {
                let w = Arc::clone(&w);
                loom::thread::spawn(move || thief(&w, me))
            })
            .collect();
        for id in tasks + 1..=tasks + late {
            ready(&w, id);
        }
        while claim(&w) {
            run_ticket(&w, 0, 0);
        }
        end(&w);
        for h in handles {
            h.join().unwrap();
        }
    });
}

/// The slots of `workers` workers and the counts for `tasks` tasks.
fn world(mutation: Mutation, tasks: usize, workers: usize) -> Arc<World> {
    let mut slots: Vec<Slot> = (0..workers).map(|i| Slot::new(i, workers)).collect();
    for s in &mut slots {
        s.mutation = mutation;
    }
    Arc::new(World {
        slots: slots.into_boxed_slice(),
        deque0: AtomicUsize::new(0),
        readied: AtomicUsize::new(0),
        runs: (0..tasks).map(|_| AtomicUsize::new(0)).collect(),
        completed: AtomicUsize::new(0),
    })
}

/// The root scope's end on worker 0: the completions, then the spare tickets
/// (`wait_spare`), then the free; and every task ran once.
fn end(w: &World) {
    let all = w.runs.len();
    while w.completed.load(Ordering::Acquire) != all {
        loom::thread::yield_now();
    }
    while !w.slots.iter().all(|s| {
        let c = s.spare.0.load(Ordering::Acquire);
        assert!(c <= all, "a spare count went below zero");
        c == 0
    }) {
        loom::thread::yield_now();
    }
    for s in w.slots.iter() {
        // SAFETY (test): the free; loom reports a slot access not ordered before it.
        s.memory.with_mut(|m| unsafe { *m = 1 });
    }
    for (i, r) in w.runs.iter().enumerate() {
        assert_eq!(
            r.load(Ordering::Relaxed),
            1,
            "task {} ran other than once",
            i + 1
        );
    }
}

/// The scripted three-worker model (see the module docs): the first three tickets are
/// handed out by the script (one each), the fourth is queued.
fn empty_then_spare(mutation: Mutation) {
    // The planted bug needs four preemptions (thief A twice, worker 0 and B once each):
    // about 50 s of exploration here.
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(builder.preemption_bound.map_or(4, |p| p.max(4)));
    builder.check(move || {
        let w = world(mutation, 4, 3);
        for id in 1..=3 {
            lock(&w.slots[0].heap).push(id as i16 % 2, id as *const TaskDesc);
        }
        let a = {
            let w = Arc::clone(&w);
            loom::thread::spawn(move || run_with_own(&w, 0, 1))
        };
        let b = {
            let w = Arc::clone(&w);
            loom::thread::spawn(move || {
                run_with_own(&w, 0, 2);
                // The fourth task's ticket.
                while !claim(&w) {
                    loom::thread::yield_now();
                }
                run_with_own(&w, 0, 2);
            })
        };
        run_ticket(&w, 0, 0);
        ready(&w, 4);
        end(&w);
        a.join().unwrap();
        b.join().unwrap();
    });
}

#[test]
fn tickets_take_each_task_once_and_end_before_the_scope() {
    // (The loom run takes one test at a time.)
    MOVED_ONCE.store(false, std::sync::atomic::Ordering::Relaxed);
    model(Mutation::None, 3, 0, 1);
    assert!(
        MOVED_ONCE.load(std::sync::atomic::Ordering::Relaxed),
        "the model never moved an entry"
    );
}

/// (Fails by a count below zero, a task run after the end, or a race on a slot's memory,
/// whichever execution loom reaches first.)
#[test]
#[should_panic]
fn planted_uncounted_move_fails() {
    model(Mutation::UncountedMove, 3, 0, 1);
}

#[test]
#[should_panic(expected = "Causality violation")]
fn planted_relaxed_spare_fails() {
    model(Mutation::RelaxedSpare, 3, 0, 1);
}

#[test]
fn a_ticket_that_finds_its_heap_empty_looks_again_if_its_spare_unit_was_taken() {
    empty_then_spare(Mutation::None);
}

/// (The fourth task is left without a ticket: the scope's end never sees it complete, which
/// loom reports as a spin past its branch limit; or the count goes below zero.)
#[test]
#[should_panic]
fn planted_empty_count_off_fails() {
    empty_then_spare(Mutation::EmptyCountsOff);
}
