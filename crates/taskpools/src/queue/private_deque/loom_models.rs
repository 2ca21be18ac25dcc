//! Loom models of the steal-request protocol, each with a planted-bug twin that must fail
//! (the `loom_finds_*` models; the switches are the loom-only fields of `StealRequests`).

use super::*;
use loom::thread;

use crate::queue::chase_lev::Steal;
use crate::sync::{Arc, AtomicBool, Ordering};

/// Deques 0 (the owner) and 1 (the thief) of a set of two.
fn owner_and_thief() -> (PrivateDeque<u32>, PrivateDeque<u32>) {
    let mut d = PrivateDeque::<u32>::set(2);
    let thief = d.pop().unwrap();
    let owner = d.pop().unwrap();
    (owner, thief)
}

/// Checks a model whose threads wait by spinning: loom counts every turn as a branch, so
/// the limit is raised, and a planted-bug twin's endless wait is reported as "maximum
/// number of branches".
fn check_spinning(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 10_000;
    builder.check(f);
}

fn taken(v: &mut Vec<u32>, s: Steal<u32>) {
    if let Steal::Success(x) = s {
        v.push(x);
    }
}

/// The owner pushes two elements and pops them, polling in between, while a thief asks
/// once: every element is taken exactly once and the thief is always answered.
#[test]
fn loom_owner_answers_a_thief_while_popping() {
    owner_answers_a_thief_while_popping(false, false);
}

/// Twin: a victim that stores FILLED Relaxed; the thief's read of the item is unordered.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_finds_the_unordered_answer_with_a_relaxed_filled_store() {
    owner_answers_a_thief_while_popping(true, false);
}

/// Twin: a thief that loads its answer state Relaxed; its read of the item is unordered.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_finds_the_unordered_answer_with_a_relaxed_filled_load() {
    owner_answers_a_thief_while_popping(false, true);
}

fn owner_answers_a_thief_while_popping(weak_store: bool, weak_load: bool) {
    loom::model(move || {
        let (owner, thief) = owner_and_thief();
        owner.req.weak_filled_store.set(weak_store);
        thief.req.weak_filled_load.set(weak_load);
        owner.push(1);
        owner.push(2);
        let h = thread::spawn(move || {
            let mut got = Vec::new();
            taken(&mut got, thief.steal_from(0));
            got
        });
        let mut got = Vec::new();
        owner.poll();
        got.extend(owner.pop());
        owner.poll();
        got.extend(owner.pop());
        owner.block();
        let mut all = h.join().unwrap();
        all.extend(got);
        all.sort_unstable();
        assert_eq!(all, vec![1, 2]);
    });
}

/// Two workers with one element each ask each other for work: each answers the other's
/// request while it waits for its own answer, so neither waits forever, and every element
/// ends up taken exactly once.
#[test]
fn loom_thieves_that_ask_each_other_are_both_answered() {
    mutual_requests(false);
}

/// Test of the test above: with thieves that do not answer while they wait, loom finds the
/// schedule where both ask each other and wait forever (it reports the endless spin).
#[test]
#[should_panic(expected = "maximum number of branches")]
fn loom_finds_the_mutual_wait_without_polling_while_waiting() {
    mutual_requests(true);
}

fn mutual_requests(broken: bool) {
    check_spinning(move || {
        let mut d = PrivateDeque::<u32>::set(2);
        let b = d.pop().unwrap();
        let a = d.pop().unwrap();
        a.req.broken_no_poll_while_waiting.set(broken);
        b.req.broken_no_poll_while_waiting.set(broken);
        a.push(10);
        b.push(20);
        let h = thread::spawn(move || {
            let mut got = Vec::new();
            taken(&mut got, b.steal_from(0));
            b.block();
            got.extend(b.pop());
            got
        });
        let mut got = Vec::new();
        taken(&mut got, a.steal_from(1));
        a.block();
        got.extend(a.pop());
        got.extend(h.join().unwrap());
        got.sort_unstable();
        assert_eq!(got, vec![10, 20]);
    });
}

/// The owner, which advertises work, is dropped (without polling) while a thief asks it:
/// the thief is declined or finds the cell closed, and never waits forever.
fn owner_dropped_while_a_thief_asks(broken: bool) {
    check_spinning(move || {
        let (owner, thief) = owner_and_thief();
        owner.req.broken_drop_keeps_requests.set(broken);
        owner.push(1);
        let h = thread::spawn(move || thief.steal_from(0));
        drop(owner);
        assert!(matches!(h.join().unwrap(), Steal::Empty));
    });
}

#[test]
fn loom_owner_dropped_while_a_thief_asks() {
    owner_dropped_while_a_thief_asks(false);
}

/// Twin: a drop that leaves the hint and the request cell as they are; loom finds the
/// thief that waits forever (the endless spin).
#[test]
#[should_panic(expected = "maximum number of branches")]
fn loom_finds_the_endless_wait_when_a_drop_keeps_requests() {
    owner_dropped_while_a_thief_asks(true);
}

/// The owner of one element resumes (unblocks) without having paused, answers at a
/// poll, then pauses (blocks), while a thief asks: the thief is answered or refused, never
/// left waiting, and the element is taken once. This is the task pool's `resume`/`pause`.
fn unblock_while_a_thief_asks(broken: bool) {
    check_spinning(move || {
        let (owner, thief) = owner_and_thief();
        owner.req.broken_unblock_overwrites.set(broken);
        owner.push(1);
        let h = thread::spawn(move || {
            let mut v = Vec::new();
            taken(&mut v, thief.steal_from(0));
            v
        });
        owner.unblock();
        owner.poll();
        owner.block();
        let mut all: Vec<u32> = owner.pop().into_iter().collect();
        all.extend(h.join().unwrap());
        assert_eq!(all, vec![1]);
    });
}

#[test]
fn loom_unblock_keeps_a_pending_request() {
    unblock_while_a_thief_asks(false);
}

/// Twin: an `unblock` that overwrites the cell erases the thief's request; loom finds the
/// thief that waits forever.
#[test]
#[should_panic(expected = "maximum number of branches")]
fn loom_finds_the_lost_request_when_unblock_overwrites() {
    unblock_while_a_thief_asks(true);
}

/// The owner takes its last element and runs it without polling again (it withdrew its
/// work hint) while a thief asks: the thief takes its request back instead of waiting for
/// the owner's next poll. This is a worker of the task pool starting a long task.
fn thief_takes_back_its_request(broken: bool) {
    check_spinning(move || {
        let (owner, thief) = owner_and_thief();
        thief.req.broken_never_takes_back.set(broken);
        owner.push(1);
        let h = thread::spawn(move || thief.steal_from(0));
        let mine = owner.pop();
        owner.withdraw_if_empty();
        // "Runs the task": no poll until the thief is done.
        assert!(matches!(h.join().unwrap(), Steal::Empty));
        assert_eq!(mine, Some(1));
        owner.block();
    });
}

#[test]
fn loom_a_thief_takes_back_its_request_to_a_victim_that_ran_out() {
    thief_takes_back_its_request(false);
}

/// Twin: a thief that never takes its request back waits for a poll that comes only after
/// the thief is done; loom finds the endless spin.
#[test]
#[should_panic(expected = "maximum number of branches")]
fn loom_finds_the_endless_wait_without_taking_back() {
    thief_takes_back_its_request(true);
}

/// The owner runs out (withdrawing its hint), gets a new element and polls, while a thief
/// that asked before sees the hint down and takes its request back: either the owner
/// claims the request and answers it, or the thief withdraws it and the owner keeps the
/// element; no element is lost or handed out twice.
fn take_back_races_an_answer(broken: bool) {
    loom::model(move || {
        let (owner, thief) = owner_and_thief();
        owner.req.broken_serve_without_claim.set(broken);
        owner.push(1);
        let h = thread::spawn(move || {
            let mut v = Vec::new();
            taken(&mut v, thief.steal_from(0));
            v
        });
        let mut all: Vec<u32> = owner.pop().into_iter().collect();
        owner.withdraw_if_empty();
        owner.push(2);
        owner.poll();
        owner.block();
        all.extend(owner.pop());
        all.extend(h.join().unwrap());
        all.sort_unstable();
        assert_eq!(all, vec![1, 2], "an element was lost or taken twice");
    });
}

#[test]
fn loom_a_take_back_and_an_answer_never_both_happen() {
    take_back_races_an_answer(false);
}

/// Twin: a victim that answers without claiming the request (load, answer, plain store)
/// writes the element into the cell of a thief that has taken its request back; loom
/// finds the lost element.
#[test]
#[should_panic(expected = "an element was lost or taken twice")]
fn loom_finds_the_lost_element_when_serving_without_a_claim() {
    take_back_races_an_answer(true);
}

/// The owner advertises an element but does not poll until the thief is done (it waits,
/// inside a task, for something the thief holds): an impatient thief takes its request back
/// and returns `Empty`, and the owner keeps the element. This is a working-phase share
/// taken inside a wait of another job.
fn impatient_thief_leaves_a_silent_victim(patient: bool) {
    check_spinning(move || {
        let (owner, thief) = owner_and_thief();
        thief.set_impatient(!patient);
        owner.push(1);
        let h = thread::spawn(move || thief.steal_from(0));
        // "Waits for the thief": no poll until it is done.
        assert!(matches!(h.join().unwrap(), Steal::Empty));
        owner.block();
        assert_eq!(owner.pop(), Some(1));
    });
}

#[test]
fn loom_an_impatient_thief_leaves_a_victim_that_does_not_poll() {
    impatient_thief_leaves_a_silent_victim(false);
}

/// Twin: a patient thief waits for a poll that comes only after it is done; loom finds the
/// endless spin.
#[test]
#[should_panic(expected = "maximum number of branches")]
fn loom_finds_the_endless_wait_of_a_patient_thief_on_a_silent_victim() {
    impatient_thief_leaves_a_silent_victim(true);
}

/// An impatient thief gives up while the owner, which advertises two elements, polls once:
/// either the owner claims the request first and the thief gets its answer, or the thief
/// takes the request back first and the owner keeps both; no element is lost or taken twice.
fn impatient_give_up_races_an_answer(broken: bool) {
    loom::model(move || {
        let (owner, thief) = owner_and_thief();
        thief.set_impatient(true);
        thief.req.broken_give_up_keeps_request.set(broken);
        owner.push(1);
        owner.push(2);
        let h = thread::spawn(move || {
            let mut v = Vec::new();
            taken(&mut v, thief.steal_from(0));
            v
        });
        owner.poll();
        let mut all = h.join().unwrap();
        owner.block();
        all.extend(owner.pop());
        all.extend(owner.pop());
        all.sort_unstable();
        assert_eq!(all, vec![1, 2], "an element was lost or taken twice");
    });
}

#[test]
fn loom_an_impatient_give_up_and_an_answer_never_both_happen() {
    impatient_give_up_races_an_answer(false);
}

/// Twin: a thief that gives up without taking its request back; the owner's later poll
/// claims it and answers into a cell the thief no longer reads: loom finds the lost element.
#[test]
#[should_panic(expected = "an element was lost or taken twice")]
fn loom_finds_the_lost_element_when_giving_up_keeps_the_request() {
    impatient_give_up_races_an_answer(true);
}

/// The ABA case of the claim: the owner V loads a thief's request, the thief takes it
/// back (it saw V's hint down), steals an element from W, and asks V again; V's claim CAS
/// then succeeds on the new request. V's write of its answer must follow the thief's read
/// of W's element from the same answer cell: the claim CAS acquires the new request.
fn claim_of_a_renewed_request(weak: bool) {
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 100_000;
    builder.preemption_bound = Some(3);
    builder.check(move || {
        let mut d = PrivateDeque::<u32>::set(3);
        let w = d.pop().unwrap();
        let t = d.pop().unwrap();
        let v = d.pop().unwrap();
        v.req.weak_claim.set(weak);
        v.push(1);
        w.push(5);
        let done = Arc::new(AtomicBool::new(false));
        let done2 = Arc::clone(&done);
        let hw = thread::spawn(move || {
            while !done2.load(Ordering::Acquire) {
                w.poll();
                thread::yield_now();
            }
            w.block();
            w.pop()
        });
        let ht = thread::spawn(move || {
            let mut got = Vec::new();
            taken(&mut got, t.steal_from(0));
            taken(&mut got, t.steal_from(2));
            taken(&mut got, t.steal_from(0));
            done.store(true, Ordering::Release);
            got
        });
        let mut all: Vec<u32> = v.pop().into_iter().collect();
        v.withdraw_if_empty();
        v.push(2);
        v.poll();
        v.block();
        all.extend(v.pop());
        all.extend(ht.join().unwrap());
        all.extend(hw.join().unwrap());
        all.sort_unstable();
        assert_eq!(all, vec![1, 2, 5], "an element was lost or taken twice");
    });
}

#[test]
fn loom_the_claim_of_a_renewed_request_follows_the_thiefs_last_read() {
    claim_of_a_renewed_request(false);
}

/// Twin: a Relaxed claim CAS; loom finds the answer's write racing the thief's read of
/// the element W handed over before.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_finds_the_racing_answer_with_a_relaxed_claim() {
    claim_of_a_renewed_request(true);
}

/// Two thieves race for one request cell; the loser gets `Retry`, the winner an answer,
/// and the element is taken once.
#[test]
fn loom_two_thieves_one_victim() {
    loom::model(|| {
        let mut d = PrivateDeque::<u32>::set(3);
        let t2 = d.pop().unwrap();
        let t1 = d.pop().unwrap();
        let owner = d.pop().unwrap();
        owner.push(5);
        let h1 = thread::spawn(move || {
            let mut v = Vec::new();
            taken(&mut v, t1.steal_from(0));
            v
        });
        let h2 = thread::spawn(move || {
            let mut v = Vec::new();
            taken(&mut v, t2.steal_from(0));
            v
        });
        owner.poll();
        let mut all: Vec<u32> = owner.pop().into_iter().collect();
        owner.block();
        all.extend(h1.join().unwrap());
        all.extend(h2.join().unwrap());
        assert_eq!(all, vec![5]);
    });
}
