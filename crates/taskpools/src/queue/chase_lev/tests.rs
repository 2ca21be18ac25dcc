//! Unit tests of the Chase–Lev deque: the capacity limits and the reclamation of retired
//! buffers.

use super::buffer::{grown_capacity, initial_capacity};
use super::*;

#[test]
#[should_panic(expected = "exceeds the limit")]
fn capacity_usize_max_is_rejected() {
    let _ = deque::<u64>(usize::MAX);
}

#[test]
#[should_panic(expected = "exceeds the limit")]
fn capacity_two_to_the_63_is_rejected() {
    let _ = deque::<u64>(1 << 63);
}

#[test]
#[should_panic(expected = "exceeds the limit")]
fn capacity_of_zero_sized_elements_is_limited_too() {
    let _ = deque::<()>(1 << 63);
}

#[test]
#[should_panic(expected = "cannot grow beyond")]
fn growth_beyond_the_limit_is_rejected() {
    let _ = grown_capacity::<u64>(max_capacity::<u64>());
}

#[test]
fn limits_are_powers_of_two_that_fit() {
    assert_eq!(max_capacity::<u64>(), 1 << 59);
    assert_eq!(max_capacity::<()>(), 1 << 62);
    assert_eq!(max_capacity::<[u8; 3]>(), 1 << 61);
    assert_eq!(grown_capacity::<u64>(1 << 58), 1 << 59);
    assert_eq!(initial_capacity::<u64>(1 << 59), 1 << 59);
}

#[test]
fn retired_buffers_are_freed_when_no_thief_reads() {
    let (w, s) = deque::<u32>(2);
    for i in 0..100 {
        w.push(i);
    }
    assert_eq!(w.capacity(), 128);
    assert_eq!(w.retired_buffers(), 0, "no thief was inside a steal");
    assert_eq!(s.steal(), Steal::Success(0));
    // A thief stuck inside `steal` (simulated, on another thread) holds back the
    // reclamation ...
    let (entered, go) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
    std::thread::scope(|sc| {
        sc.spawn(|| {
            let g = s.guard();
            s.enter(&g);
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            let buf = s.load_buffer();
            entered.wait();
            go.wait();
            // SAFETY: we are announced; `buf` is the retired 128-slot buffer, still allocated.
            assert_eq!(unsafe { (*buf).cap() }, 128);
            s.leave(&g);
        });
        entered.wait();
        for i in 100..200 {
            w.push(i);
        }
        assert_eq!(w.retired_buffers(), 1);
        go.wait();
    });
    // ... until the owner's next check (an empty pop here).
    while w.pop().is_some() {}
    assert_eq!(w.retired_buffers(), 0);
}

/// The same with the owner's own thread as the stuck thief (its announcement is in the
/// owner thread's record, which the owner reads like any other).
#[test]
fn an_announcement_on_the_owners_thread_holds_back_the_free_too() {
    let (w, s) = deque::<u32>(2);
    for i in 0..4 {
        w.push(i);
    }
    let g = s.guard();
    s.enter(&g);
    for i in 4..40 {
        w.push(i);
    }
    assert!(w.retired_buffers() > 0);
    s.leave(&g);
    while w.pop().is_some() {}
    assert_eq!(w.retired_buffers(), 0);
}
