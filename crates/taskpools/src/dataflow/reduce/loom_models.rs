//! Loom models of a reduction's copies, run with the shipped reducer on loom's cells and
//! locks: two members fold into copies (on the shared slot, as two threads that are not
//! workers do, or on a slot each, as two workers do) and complete; the combine, readied by
//! their completions as a successor is, folds the copies into the data. Each with a
//! planted-bug twin that must fail: a lost copy, or a race on a slot's cell.

use super::*;
use crate::sync::{Arc, AtomicUsize, Ordering};

fn add(a: &mut u64, x: u64) {
    *a += x;
}

/// The planted bugs.
#[derive(Clone, Copy, PartialEq)]
enum Bug {
    None,
    /// A copy given back replaces the one in its slot instead of being folded into it.
    GiveBackReplaces,
    /// A member completes before it gives its copy back (as if the task completed before
    /// its view of the copy was dropped).
    CompletesFirst,
    /// A member's completion is Relaxed: the combine reads its slot with no order.
    RelaxedCompletion,
}

type R = Reducer<u64, fn(&mut u64, u64)>;

/// Member `id` (adding `id + 1`) on `slot`, then its completion.
fn member(r: &R, done: &AtomicUsize, id: u64, slot: Slot, bug: Bug) {
    // SAFETY (test): each own slot is used by one model thread.
    let mut copy = unsafe { r.take(slot) };
    copy[0] += id + 1;
    if bug == Bug::CompletesFirst {
        done.fetch_add(1, Ordering::Release);
    }
    if bug == Bug::GiveBackReplaces {
        let mut o = lock(&r.other);
        o.held.out -= 1;
        o.held.copy = Some(copy);
    } else {
        // SAFETY (test): as above.
        unsafe { r.give_back(slot, copy) };
    }
    match bug {
        Bug::CompletesFirst => {}
        Bug::RelaxedCompletion => {
            done.fetch_add(1, Ordering::Relaxed);
        }
        // The task's completion (a Release: `notify::close` and the frame's count).
        _ => {
            done.fetch_add(1, Ordering::Release);
        }
    }
}

fn model(slots: [Slot; 2], bug: Bug) {
    loom::model(move || {
        let r: Arc<R> = Arc::new(Reducer::new(0, add as fn(&mut u64, u64), 1, 0, 2));
        let done = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..2)
            .map(|id| {
                let (r, done) = (Arc::clone(&r), Arc::clone(&done));
                loom::thread::spawn(move || member(&r, &done, id, slots[id as usize], bug))
            })
            .collect();
        // The combine: readied by the members' completions (an Acquire), then it folds.
        while done.load(Ordering::Acquire) < 2 {
            loom::thread::yield_now();
        }
        let mut data = [10u64];
        // SAFETY (test): both members have completed (unless a bug is planted).
        unsafe { r.combine_into(&mut data) };
        assert_eq!(data, [10 + 1 + 2], "a member's contribution was lost");
        for t in threads {
            t.join().unwrap();
        }
    });
}

#[test]
fn loom_reduce_two_members_on_the_shared_slot_and_the_combine() {
    model([Slot::Other, Slot::Other], Bug::None);
}

#[test]
fn loom_reduce_two_members_on_their_own_slots_and_the_combine() {
    model([Slot::Own(0), Slot::Own(1)], Bug::None);
}

#[test]
#[should_panic(expected = "a member's contribution was lost")]
fn loom_reduce_a_give_back_that_replaces_loses_a_copy() {
    model([Slot::Other, Slot::Other], Bug::GiveBackReplaces);
}

#[test]
#[should_panic(expected = "Causality violation")]
fn loom_reduce_a_member_that_completes_before_its_give_back_races_with_the_combine() {
    model([Slot::Own(0), Slot::Own(1)], Bug::CompletesFirst);
}

#[test]
#[should_panic(expected = "Causality violation")]
fn loom_reduce_a_relaxed_completion_races_with_the_combine() {
    model([Slot::Own(0), Slot::Own(1)], Bug::RelaxedCompletion);
}
