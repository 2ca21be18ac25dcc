//! Unit tests of the private deque: the owner's stack and its lending, compaction, the
//! request cell, requests answered, taken back or declined, and the size limits.

use super::table::{CLOSED, DECLINED, NO_REQUEST};
use super::*;
use crate::queue::chase_lev::Steal;
use crate::sync::Ordering;

#[test]
fn a_lent_stack_holds_the_live_elements_and_comes_back_in_order() {
    let d = PrivateDeque::<u32>::set(2);
    for i in 0..4 {
        d[0].push(i);
    }
    assert_eq!(d[0].pop_oldest(), Some(0));
    let mut s = d[0].lend();
    assert!(d[0].is_empty(), "the deque is empty while lent");
    assert_eq!(s.len(), 3);
    assert_eq!(s.pop(), Some(3));
    s.push(7);
    // A push into the deque while the stack is lent stays the newest.
    d[0].push(9);
    d[0].give_back(s);
    assert_eq!(d[0].len(), 4);
    assert_eq!(d[0].pop_oldest(), Some(1));
    let rest: Vec<u32> = std::iter::from_fn(|| d[0].pop()).collect();
    assert_eq!(rest, [9, 7, 2]);
    // Down to the dead prefix and no further.
    let mut s = d[0].lend();
    assert_eq!(s.pop(), None);
    assert!(s.is_empty());
    d[0].give_back(s);
}

#[test]
fn dropping_a_lent_stack_drops_its_live_elements_once() {
    let token = std::rc::Rc::new(());
    let d = PrivateDeque::set(1);
    for _ in 0..5 {
        d[0].push(std::rc::Rc::clone(&token));
    }
    // One given away (a dead prefix in the lent vector), one popped.
    drop(d[0].pop_oldest());
    let mut s = d[0].lend();
    drop(s.pop());
    assert_eq!(std::rc::Rc::strong_count(&token), 4);
    drop(s);
    assert_eq!(std::rc::Rc::strong_count(&token), 1);
    drop(d);
    assert_eq!(std::rc::Rc::strong_count(&token), 1);
}

#[test]
fn a_lent_stack_grows_past_its_capacity_and_keeps_every_element_once() {
    let token = std::rc::Rc::new(());
    let d = PrivateDeque::set(1);
    for i in 0..4u32 {
        d[0].push((i, std::rc::Rc::clone(&token)));
    }
    // A dead prefix of two, then far more pushes than the 64 the vector starts with.
    drop(d[0].pop_oldest());
    drop(d[0].pop_oldest());
    let mut s = d[0].lend();
    for i in 4..1000u32 {
        s.push((i, std::rc::Rc::clone(&token)));
    }
    assert_eq!(s.len(), 998);
    assert_eq!(std::rc::Rc::strong_count(&token), 999);
    for i in (500..1000u32).rev() {
        assert_eq!(s.pop().map(|(i, _)| i), Some(i));
    }
    // Pushes into the deque while lent, more than the stack has room for: the vector
    // grows when it comes back.
    let spare = s.cap - s.len;
    for i in 0..spare as u32 + 10 {
        d[0].push((5000 + i, std::rc::Rc::clone(&token)));
    }
    d[0].give_back(s);
    assert_eq!(d[0].len(), 498 + spare + 10);
    assert_eq!(d[0].pop_oldest().map(|(i, _)| i), Some(2));
    assert_eq!(d[0].pop().map(|(i, _)| i), Some(5000 + spare as u32 + 9));
    drop(d);
    assert_eq!(std::rc::Rc::strong_count(&token), 1);
}

#[test]
fn a_lent_stack_of_zero_sized_elements_counts_them() {
    let d = PrivateDeque::<()>::set(1);
    d[0].push(());
    d[0].push(());
    assert_eq!(d[0].pop_oldest(), Some(()));
    let mut s = d[0].lend();
    for _ in 0..100 {
        s.push(());
    }
    assert_eq!(s.len(), 101);
    assert_eq!(s.pop(), Some(()));
    d[0].give_back(s);
    assert_eq!(d[0].len(), 100);
    let mut s = d[0].lend();
    while s.pop().is_some() {}
    assert!(s.is_empty());
    drop(s);
    // An empty default stack drops nothing.
    drop(OwnerStack::<String>::default());
}

#[test]
fn the_request_cell_sees_what_the_deque_sees() {
    let d = PrivateDeque::<u32>::set(2);
    d[0].unblock();
    d[1].unblock();
    let cell = d[0].table().request_cell(0);
    assert!(!cell.pending() && !d[0].pending());
    d[0].push(1);
    // A thief's request, sent by hand: the cell and the deque both see it pending.
    assert!(d[0].table().slots[0]
        .request
        .0
        .compare_exchange(NO_REQUEST, 1, Ordering::AcqRel, Ordering::Relaxed)
        .is_ok());
    assert!(cell.pending() && d[0].pending());
    d[0].poll();
    assert!(!cell.pending());
}

#[test]
fn owner_is_lifo_and_gives_away_the_oldest() {
    let d = PrivateDeque::<u32>::set(2);
    for i in 0..5 {
        d[0].push(i);
    }
    assert_eq!(d[0].pop(), Some(4));
    assert_eq!(d[0].pop_oldest(), Some(0));
    assert_eq!(d[0].len(), 3);
    assert!(d[0].table().has_work(0));
    assert_eq!(d[0].pop(), Some(3));
    assert_eq!(d[0].pop(), Some(2));
    assert_eq!(d[0].pop(), Some(1));
    assert_eq!(d[0].pop(), None);
    assert!(
        !d[0].table().has_work(0),
        "an empty deque stops advertising"
    );
    assert!(matches!(d[1].steal_from(0), Steal::Empty));
}

#[test]
fn compaction_keeps_order_and_drops_each_element_once() {
    use std::rc::Rc;
    let counter = Rc::new(());
    let d = PrivateDeque::<(usize, Rc<()>)>::set(1);
    for i in 0..1000 {
        d[0].push((i, Rc::clone(&counter)));
    }
    for i in 0..700 {
        assert_eq!(d[0].pop_oldest().unwrap().0, i);
    }
    assert!(d[0].items().len() < 1000, "the dead prefix was compacted");
    assert_eq!(d[0].pop().unwrap().0, 999);
    assert_eq!(Rc::strong_count(&counter), 1 + 299);
    drop(d);
    assert_eq!(Rc::strong_count(&counter), 1);
}

#[test]
fn a_request_is_answered_at_the_next_poll_or_block() {
    let mut d = PrivateDeque::<u32>::set(2);
    let thief = d.pop().unwrap();
    let owner = d.pop().unwrap();
    owner.push(7);
    owner.push(8);
    std::thread::scope(|s| {
        let h = s.spawn(move || thief.steal_from(0));
        // Poll until the request has come and gone.
        loop {
            owner.poll();
            if owner.len() == 1 {
                break;
            }
            std::thread::yield_now();
        }
        assert!(matches!(h.join().unwrap(), Steal::Success(7)));
    });
    owner.block();
    assert_eq!(owner.pop(), Some(8));
}

const PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// Waits (at most [`PATIENCE`]) until a thief's request reaches `owner`.
fn wait_pending<T>(owner: &StealRequests<T>) -> bool {
    let t = std::time::Instant::now();
    while !owner.pending() {
        if t.elapsed() > PATIENCE {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

/// The thief's result from `rx`; if none comes within [`PATIENCE`], declines thief
/// `thief` of `table` by hand (so that a failing test fails instead of hanging) and
/// returns `None`.
fn result_or_free<T, R>(
    rx: &std::sync::mpsc::Receiver<R>,
    table: &StealTable<T>,
    thief: usize,
) -> Option<R> {
    match rx.recv_timeout(PATIENCE) {
        Ok(r) => Some(r),
        Err(_) => {
            table.slots[thief]
                .answer
                .state
                .store(DECLINED, Ordering::Release);
            None
        }
    }
}

/// The owner takes its last element while a thief's request is pending and runs it
/// without polling: the thief takes its request back (it would otherwise wait until the
/// owner's next poll; the test then frees it after 10 s and fails).
#[test]
fn a_thief_takes_back_its_request_when_the_owner_runs_out() {
    let mut d = PrivateDeque::<u32>::set(2);
    let thief = d.pop().unwrap();
    let owner = d.pop().unwrap();
    owner.push(1);
    let (asked, got, reopened) = std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel();
        s.spawn(move || {
            let _ = tx.send(thief.steal_from(0));
        });
        let asked = wait_pending(&owner.req);
        assert_eq!(owner.pop(), Some(1));
        owner.withdraw_if_empty();
        let got = result_or_free(&rx, owner.table(), 1);
        (asked, got, !owner.req.pending())
    });
    assert!(asked, "the thief never asked");
    assert!(
        matches!(got, Some(Steal::Empty)),
        "the thief waited for the owner's next poll"
    );
    assert!(reopened, "the request cell is open again");
    owner.block();
}

/// A panic in the owner's `oldest` closure after it claimed a request: the thief is
/// declined, the cell reopens, and the next request is answered.
#[test]
fn a_panic_while_serving_declines_the_thief_and_reopens_the_cell() {
    let mut reqs = StealRequests::<u32>::set(2);
    let thief = reqs.pop().unwrap();
    let owner = reqs.pop().unwrap();
    owner.advertise(true);
    let (tx, rx) = std::sync::mpsc::channel();
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let (panicked, first, reopened, second) = std::thread::scope(|s| {
        let h = s.spawn(move || {
            // (The receiver may be gone if the test failed.)
            let _ = tx.send(thief.steal_from(0, || thief.poll(|| None)));
            // Asks again only when told (or never, if the test failed before).
            wait.recv().ok()?;
            Some(thief.steal_from(0, || thief.poll(|| None)))
        });
        let asked = wait_pending(&owner);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            owner.poll(|| panic!("oldest failed"))
        }));
        let first = result_or_free(&rx, owner.table(), 1);
        // The thief waits for `go`: nobody else writes the cell now.
        let reopened = owner.table().slots[0].request.0.load(Ordering::Relaxed) == NO_REQUEST;
        go.send(()).unwrap();
        if wait_pending(&owner) {
            owner.poll(|| Some(9));
        }
        (asked && r.is_err(), first, reopened, h.join().unwrap())
    });
    assert!(panicked, "the thief asked and the owner's closure panicked");
    assert!(
        matches!(first, Some(Steal::Empty)),
        "the thief was declined"
    );
    assert!(reopened, "the request cell is open again after the panic");
    assert!(matches!(second, Some(Steal::Success(9))));
    owner.block(|| None);
}

/// `block` from inside the closure of `poll` panics before it touches the cell (it would
/// otherwise block a cell that `poll` then reopens), and the thief is declined.
#[test]
fn block_inside_a_poll_closure_panics() {
    let mut reqs = StealRequests::<u32>::set(2);
    let thief = reqs.pop().unwrap();
    let owner = reqs.pop().unwrap();
    owner.advertise(true);
    let (tx, rx) = std::sync::mpsc::channel();
    let (asked, msg, got, reopened) = std::thread::scope(|s| {
        s.spawn(move || {
            let _ = tx.send(thief.steal_from(0, || thief.poll(|| None)));
        });
        let asked = wait_pending(&owner);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            owner.poll(|| {
                owner.block(|| None);
                Some(1)
            })
        }));
        let got = result_or_free(&rx, owner.table(), 1);
        let e = r.expect_err("a nested block must panic");
        let msg = e
            .downcast_ref::<&str>()
            .map(|m| m.to_string())
            .or_else(|| e.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let reopened = owner.table().slots[0].request.0.load(Ordering::Relaxed) == NO_REQUEST;
        (asked, msg, got, reopened)
    });
    assert!(asked, "the thief never asked");
    assert!(msg.contains("inside the closure"), "{msg}");
    assert!(matches!(got, Some(Steal::Empty)), "the thief was declined");
    assert!(reopened, "the cell is open (not blocked, not claimed)");
    owner.block(|| None);
}

#[test]
#[should_panic(expected = "exceed the limit")]
fn a_set_of_usize_max_deques_is_rejected() {
    let _ = PrivateDeque::<u64>::set(usize::MAX);
}

#[test]
#[should_panic(expected = "exceed the limit")]
fn a_set_of_two_to_the_63_deques_is_rejected() {
    let _ = PrivateDeque::<u64>::set(1 << 63);
}

#[test]
#[should_panic(expected = "exceed the limit")]
fn a_set_of_usize_max_request_handles_is_rejected() {
    let _ = StealRequests::<u64>::set(usize::MAX);
}

#[test]
fn a_dropped_deque_stops_advertising_and_closes_its_cell() {
    let mut d = PrivateDeque::<u32>::set(2);
    let v = d.pop().unwrap();
    let t = d.pop().unwrap();
    v.push(1);
    assert!(t.table().has_work(1));
    drop(v);
    assert!(!t.table().has_work(1));
    assert_eq!(t.table().slots[1].request.0.load(Ordering::Relaxed), CLOSED);
    assert!(matches!(t.steal_from(1), Steal::Empty));
}
