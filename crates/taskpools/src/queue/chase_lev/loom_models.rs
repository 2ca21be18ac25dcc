//! Loom models of the Chase–Lev deque: pops racing steals for the last elements, pushes
//! racing a steal, a quiet push reusing a stolen slot, growth and reclamation during one or
//! two steals (hazard records, and the `readers` fallback), two growths during steals, a batch
//! steal during growth, and a batch steal racing pops.
//!
//! Every model runs on the real code; the `*_finds_*` twins run it with one planted bug
//! ([`Mutation`]) and must fail, either on the values or because loom sees a slot read or
//! write that the atomics do not order ("Causality violation").
use super::*;
use crate::sync::{Arc, AtomicUsize, Ordering};
use loom::thread;

fn bounded(preemptions: usize) -> loom::model::Builder {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(preemptions);
    b
}

/// Owner pop and one thief race for the last element: exactly one gets it (both sides
/// CAS `top` here, so this case holds even without the fences).
#[test]
fn loom_pop_races_one_thief_on_the_last_element() {
    bounded(3).check(|| {
        let (w, s) = deque::<u32>(4);
        w.push(7);
        let h = thread::spawn(move || s.steal().success());
        let mine = w.pop();
        let theirs = h.join().unwrap();
        assert!(mine.is_some() != theirs.is_some(), "{mine:?} / {theirs:?}");
    });
}

/// Two elements, two thieves, one owner pop: every element is taken exactly once. This is
/// where the owner's SeqCst fence matters: without it the owner can read a stale `top`,
/// believe two elements remain, and take the one a thief is taking, without a CAS.
fn pop_races_two_thieves(m: Mutation) {
    bounded(3).check(move || {
        let (w, s) = deque_with_mutation::<u32>(4, m);
        w.push(1);
        w.push(2);
        let s2 = s.clone();
        let h1 = thread::spawn(move || s.steal().success());
        let h2 = thread::spawn(move || s2.steal().success());
        let mut got: Vec<u32> = w.pop().into_iter().collect();
        got.extend(h1.join().unwrap());
        got.extend(h2.join().unwrap());
        got.extend(std::iter::from_fn(|| w.pop()));
        got.sort_unstable();
        assert_eq!(got, vec![1, 2], "every element must be taken exactly once");
    });
}

#[test]
fn loom_pop_races_two_thieves() {
    pop_races_two_thieves(Mutation::None);
}

/// Twin: with the owner's SeqCst fence weakened to AcqRel, the model must find the double
/// take.
#[test]
#[should_panic(expected = "exactly once")]
fn loom_finds_the_double_take_with_a_weak_owner_fence() {
    pop_races_two_thieves(Mutation::WeakOwnerFence);
}

/// The owner pushes while a thief already runs: a thief that sees the new bottom must see
/// the slot written before it (release fence / acquire load of bottom).
fn push_races_a_steal(m: Mutation) {
    bounded(3).check(move || {
        let (w, s) = deque_with_mutation::<u32>(2, m);
        let h = thread::spawn(move || s.steal().success());
        w.push(1);
        let mut got: Vec<u32> = h.join().unwrap().into_iter().collect();
        got.extend(std::iter::from_fn(|| w.pop()));
        assert_eq!(got, vec![1]);
    });
}

#[test]
fn loom_push_races_a_steal() {
    push_races_a_steal(Mutation::None);
}

/// Twin: without the owner's release fence the thief reads the slot unordered.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_finds_the_unpublished_slot_without_the_release_fence() {
    push_races_a_steal(Mutation::NoReleaseFence);
}

/// Twin: with a Relaxed load of bottom the thief reads the slot unordered.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_finds_the_unpublished_slot_with_a_relaxed_bottom_load() {
    push_races_a_steal(Mutation::RelaxedBottomLoad);
}

/// `push_quiet` checks the capacity against an old reading of `top`: with two elements in
/// a buffer of two, the third push reads `top` afresh, and if the thief took the first
/// element, reuses its slot (else grows). The Acquire reading orders the thief's read of
/// the slot before the owner's write to it.
fn quiet_push_reuses_a_stolen_slot(m: Mutation) {
    bounded(3).check(move || {
        let (w, s) = deque_with_mutation::<u32>(2, m);
        w.push_quiet(1);
        w.push_quiet(2);
        // Relaxed on both sides: the flag only lets the owner wait for the steal; it
        // orders nothing, so that the slot's reuse is ordered by `top` alone.
        let stolen = Arc::new(AtomicUsize::new(0));
        let flag = Arc::clone(&stolen);
        let h = thread::spawn(move || {
            let got = s.steal().success();
            flag.store(1, Ordering::Relaxed);
            got
        });
        while stolen.load(Ordering::Relaxed) == 0 {
            thread::yield_now();
        }
        w.push_quiet(3);
        let mut got: Vec<u32> = h.join().unwrap().into_iter().collect();
        got.extend(std::iter::from_fn(|| w.pop()));
        got.sort_unstable();
        assert_eq!(got, vec![1, 2, 3]);
    });
}

#[test]
fn loom_quiet_push_reuses_a_stolen_slot() {
    quiet_push_reuses_a_stolen_slot(Mutation::None);
}

/// Twin: with a Relaxed reading of `top`, the owner's write to the reused slot is not
/// ordered after the thief's read of it.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_finds_the_unordered_slot_reuse_with_a_relaxed_top_reading() {
    quiet_push_reuses_a_stolen_slot(Mutation::RelaxedTopSeen);
}

/// The owner grows the buffer (capacity 2 → 4) while a thief steals, and frees the old
/// buffer when no thief announces the deque (at the growth, or at the final empty pop).
/// Freeing poisons the buffer (every slot written), so a thief read that the protocol does
/// not order before the free is a detected race.
fn growth_during_a_steal(m: Mutation) {
    bounded(3).check(move || {
        let (w, s) = deque_with_mutation::<u32>(2, m);
        w.push(1);
        w.push(2);
        let h = thread::spawn(move || s.steal().success());
        w.push(3);
        let mut got: Vec<u32> = h.join().unwrap().into_iter().collect();
        got.extend(std::iter::from_fn(|| w.pop()));
        got.sort_unstable();
        assert_eq!(got, vec![1, 2, 3]);
        assert_eq!(w.retired_buffers(), 0, "the empty pop reclaims");
    });
}

#[test]
fn loom_growth_and_reclamation_during_a_steal() {
    growth_during_a_steal(Mutation::None);
}

/// Twin: a thief that loads the new buffer pointer Relaxed reads the copied slot unordered.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_finds_the_unordered_copy_with_a_relaxed_buffer_load() {
    growth_during_a_steal(Mutation::RelaxedBufferLoad);
}

/// Twin: an owner that frees the old buffer without checking for readers frees it under a
/// thief that is reading it.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_finds_the_early_free_without_the_reader_check() {
    growth_during_a_steal(Mutation::EagerFree);
}

/// Twin: a thief that does not announce the deque before loading the buffer pointer is
/// invisible to the owner's scan, which frees the buffer under it.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_finds_the_early_free_without_the_announcement() {
    growth_during_a_steal(Mutation::NoAnnounce);
}

/// Twin: with the owner's fence before its scan weakened to AcqRel, the store-buffering
/// outcome is allowed: the thief loads the old pointer and the owner reads no announcement.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_finds_the_early_free_with_a_weak_reclaim_fence() {
    growth_during_a_steal(Mutation::WeakReclaimFence);
}

/// Twin: a Relaxed withdrawal does not order the thief's read before the owner's free.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_finds_the_early_free_with_a_relaxed_withdrawal() {
    growth_during_a_steal(Mutation::RelaxedClear);
}

/// The fallback for a thread without a hazard record (its thread-locals are being
/// destroyed): the thief takes the `readers` count around its read.
#[test]
fn loom_growth_and_reclamation_during_a_counted_steal() {
    growth_during_a_steal(Mutation::CounterPath);
}

/// Twin: on the counter path, an owner that does not read `readers` frees under the thief.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_finds_the_early_free_without_the_readers_check() {
    growth_during_a_steal(Mutation::CounterPathNoReaderCheck);
}

/// Two thieves (two hazard records in the list the owner walks) steal while the owner
/// grows the buffer and frees the old one: every element once, no read of a freed buffer,
/// and nothing left retired after the final empty pop.
fn growth_during_two_steals(m: Mutation) {
    bounded(2).check(move || {
        let (w, s) = deque_with_mutation::<u32>(2, m);
        w.push(1);
        w.push(2);
        let s2 = s.clone();
        let h1 = thread::spawn(move || s.steal().success());
        let h2 = thread::spawn(move || s2.steal().success());
        w.push(3);
        let mut got: Vec<u32> = h1.join().unwrap().into_iter().collect();
        got.extend(h2.join().unwrap());
        got.extend(std::iter::from_fn(|| w.pop()));
        got.sort_unstable();
        assert_eq!(
            got,
            vec![1, 2, 3],
            "every element must be taken exactly once"
        );
        assert_eq!(w.retired_buffers(), 0, "the empty pop reclaims");
    });
}

#[test]
fn loom_growth_and_reclamation_during_two_steals() {
    growth_during_two_steals(Mutation::None);
}

/// Twin: without announcements the owner frees under one of the two thieves.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_finds_the_early_free_under_two_thieves_without_the_announcement() {
    growth_during_two_steals(Mutation::NoAnnounce);
}

/// Two growths (capacity 2 → 4 → 8) while a thief steals twice: the owner checks the
/// records at each growth and frees what is retired once the thief is not announced.
fn two_growths_during_steals(m: Mutation) {
    bounded(2).check(move || {
        let (w, s) = deque_with_mutation::<u32>(2, m);
        w.push(1);
        w.push(2);
        let h = thread::spawn(move || {
            let mut got: Vec<u32> = s.steal().success().into_iter().collect();
            got.extend(s.steal().success());
            got
        });
        for i in 3..=5 {
            w.push(i);
        }
        let mut got = h.join().unwrap();
        got.extend(std::iter::from_fn(|| w.pop()));
        got.sort_unstable();
        assert_eq!(got, vec![1, 2, 3, 4, 5]);
        assert_eq!(w.retired_buffers(), 0, "the empty pop reclaims");
    });
}

#[test]
fn loom_two_growths_during_steals() {
    two_growths_during_steals(Mutation::None);
}

/// Twin: with the owner's fence weakened, one of the growths frees under the thief.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_finds_the_early_free_across_two_growths_with_a_weak_reclaim_fence() {
    two_growths_during_steals(Mutation::WeakReclaimFence);
}

/// A batch steal (it announces the deque again for each element it reads) while the owner
/// grows the buffer and frees the old one.
fn steal_half_during_growth(m: Mutation) {
    bounded(2).check(move || {
        let (w, s) = deque_with_mutation::<u32>(2, m);
        w.push(1);
        w.push(2);
        let h = thread::spawn(move || {
            let (mine, _) = deque::<u32>(4);
            let _ = s.steal_half_into(&mine, 8);
            std::iter::from_fn(|| mine.pop()).collect::<Vec<u32>>()
        });
        w.push(3);
        w.push(4);
        let mut got = h.join().unwrap();
        got.extend(std::iter::from_fn(|| w.pop()));
        got.sort_unstable();
        assert_eq!(got, vec![1, 2, 3, 4]);
        assert_eq!(w.retired_buffers(), 0, "the empty pop reclaims");
    });
}

#[test]
fn loom_steal_half_during_growth() {
    steal_half_during_growth(Mutation::None);
}

/// Twin: without announcements the owner frees the buffer under the batch steal.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_finds_the_early_free_under_a_batch_steal_without_the_announcement() {
    steal_half_during_growth(Mutation::NoAnnounce);
}

/// A batch steal (about half) races owner pops.
#[test]
fn loom_steal_half_races_owner_pops() {
    bounded(2).check(|| {
        let (w, s) = deque::<u32>(4);
        for i in 1..=3 {
            w.push(i);
        }
        let h = thread::spawn(move || {
            let (mine, _) = deque::<u32>(4);
            let n = s.steal_half_into(&mine, 8);
            let got: Vec<u32> = std::iter::from_fn(|| mine.pop()).collect();
            if let Steal::Success(n) = n {
                assert_eq!(n, got.len());
            }
            got
        });
        let mut got: Vec<u32> = w.pop().into_iter().collect();
        got.extend(w.pop());
        got.extend(h.join().unwrap());
        got.extend(std::iter::from_fn(|| w.pop()));
        got.sort_unstable();
        assert_eq!(got, vec![1, 2, 3]);
    });
}
