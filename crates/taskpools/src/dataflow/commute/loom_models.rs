//! Loom models of the commutative lock, run with the shipped code on loom's atomics and
//! cells: tasks contending for one lock and for two, every task counted, each with a
//! planted-bug twin that must fail.

use super::*;
use crate::sync::{Arc, AtomicUsize};

/// A task of the models: its waiter link first (so a handed-back waiter is the task), the
/// locks it needs, and how often its critical section ran.
#[repr(C)]
struct Task {
    waiter: Waiter,
    locks: Vec<*const CommuteLock>,
    runs: AtomicUsize,
}

/// The data the locks guard: one cell per lock, written only inside critical sections.
struct World {
    locks: [CommuteLock; 2],
    data: [UnsafeCell<u64>; 2],
}

// SAFETY (test): the cells are accessed under the protocol being checked; loom reports any
// access it does not order.
unsafe impl Send for World {}
unsafe impl Sync for World {}
unsafe impl Send for Task {}
unsafe impl Sync for Task {}

/// The planted bugs.
#[derive(Clone, Copy, PartialEq)]
enum Bug {
    None,
    /// Unlock stores null: the tasks queued since are dropped, not handed back.
    UnlockStores,
    /// Lock with a Relaxed compare-and-swap: the last holder's writes are not visible.
    RelaxedLock,
}

/// Runs `t` as the runtime would: takes its locks or queues it; once they are held, writes
/// the data of each lock, counts the run and unlocks, then runs every task handed back (as
/// the waker's worker would, having pushed it on its deque).
fn attempt(world: &World, t: &Task, bug: Bug) {
    let mut woken: Vec<*mut Waiter> = Vec::new();
    let w = std::ptr::addr_of!(t.waiter).cast_mut();
    // SAFETY (test): the locks live in `world`; the waiter lives in `t`, alive for the model.
    let got = unsafe {
        if bug == Bug::RelaxedLock {
            let l = &*t.locks[0];
            l.word
                .compare_exchange(
                    std::ptr::null_mut(),
                    held(),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok()
                || l.lock_or_queue(w)
        } else {
            lock_all(&t.locks, w, &mut |w| woken.push(w))
        }
    };
    if got {
        for l in &t.locks {
            let i = world
                .locks
                .iter()
                .position(|m| std::ptr::eq(m, *l))
                .unwrap();
            // SAFETY (test): under the lock, or loom reports the race.
            world.data[i].with_mut(|x| unsafe { *x += 1 });
        }
        t.runs.fetch_add(1, Ordering::Relaxed);
        for &l in &t.locks {
            // SAFETY (test): held just above.
            unsafe {
                if bug == Bug::UnlockStores {
                    (*l).word.store(std::ptr::null_mut(), Ordering::Release);
                } else {
                    (*l).unlock(&mut |w| woken.push(w));
                }
            }
        }
    }
    for w in woken {
        // SAFETY (test): a waiter is the first field of its task (`repr(C)`).
        attempt(world, unsafe { &*w.cast::<Task>() }, bug);
    }
}

/// Two threads run `needs[0]` and `needs[1]` (lock indices each task takes), a third task
/// `needs[2]` (if any) runs on the first thread after its first; every task must run once,
/// and each lock's data must count the tasks that took it.
fn contend(needs: &'static [&'static [usize]], bug: Bug) {
    loom::model(move || {
        let world = Arc::new(World {
            locks: [CommuteLock::new(), CommuteLock::new()],
            data: [UnsafeCell::new(0), UnsafeCell::new(0)],
        });
        let tasks: Vec<Arc<Task>> = needs
            .iter()
            .map(|n| {
                Arc::new(Task {
                    waiter: Waiter::new(),
                    locks: n.iter().map(|&i| &world.locks[i] as *const _).collect(),
                    runs: AtomicUsize::new(0),
                })
            })
            .collect();
        let other = {
            let (world, t) = (world.clone(), tasks[1].clone());
            loom::thread::spawn(move || attempt(&world, &t, bug))
        };
        attempt(&world, &tasks[0], bug);
        if let Some(t) = tasks.get(2) {
            attempt(&world, t, bug);
        }
        other.join().unwrap();
        for (i, t) in tasks.iter().enumerate() {
            assert_eq!(
                t.runs.load(Ordering::Relaxed),
                1,
                "task {i} ran {} times",
                t.runs.load(Ordering::Relaxed)
            );
        }
        for (i, d) in world.data.iter().enumerate() {
            let want = needs.iter().filter(|n| n.contains(&i)).count() as u64;
            // SAFETY (test): every thread has been joined.
            assert_eq!(d.with(|x| unsafe { *x }), want);
        }
    });
}

#[test]
fn loom_commute_two_tasks_one_lock() {
    contend(&[&[0], &[0]], Bug::None);
}

#[test]
fn loom_commute_two_locks_taken_together() {
    // Lock addresses are in index order: each task's list is sorted.
    contend(&[&[0, 1], &[1], &[0]], Bug::None);
}

#[test]
fn loom_commute_two_tasks_both_needing_both_locks() {
    // Each holds one lock while it asks for the other, in the same (address) order: one of
    // them queues on the first lock it cannot take and is handed both later.
    contend(&[&[0, 1], &[0, 1]], Bug::None);
}

/// Twin: with unlock storing "free" over the waiter stack, the task queued on a lock that
/// both need is lost.
#[test]
#[should_panic]
fn loom_commute_unlock_that_stores_loses_a_task_queued_for_both_locks() {
    contend(&[&[0, 1], &[0, 1]], Bug::UnlockStores);
}

#[test]
#[should_panic]
fn loom_commute_unlock_that_stores_loses_a_queued_task() {
    contend(&[&[0], &[0]], Bug::UnlockStores);
}

#[test]
#[should_panic]
fn loom_commute_relaxed_lock_races_on_the_data() {
    contend(&[&[0], &[0]], Bug::RelaxedLock);
}
