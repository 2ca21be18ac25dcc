//! Sequential behaviour of the node-locked list, its drop, and quick two-thread checks (the
//! counted stress tests are in `tests/deques.rs`, the interleavings in the loom models).

use super::*;

#[test]
fn front_is_lifo_back_takes_the_oldest_and_push_back_pop_front_is_fifo() {
    let q = NodeLockedDList::new();
    assert_eq!((q.pop_front(), q.pop_back()), (None, None));
    for i in 0..100 {
        assert_eq!(q.push_front(i), i == 0);
    }
    assert_eq!(q.len_hint(), 100);
    assert_eq!(q.pop_front(), Some(99));
    assert_eq!(q.pop_back(), Some(0));
    assert_eq!(q.pop_back(), Some(1));
    let rest: Vec<i32> = std::iter::from_fn(|| q.pop_front()).collect();
    assert_eq!(rest, (2..99).rev().collect::<Vec<_>>());
    assert!(q.is_empty());
    for i in 0..100 {
        assert_eq!(q.push_back(i), i == 0);
    }
    let fifo: Vec<i32> = std::iter::from_fn(|| q.pop_front()).collect();
    assert_eq!(fifo, (0..100).collect::<Vec<_>>());
    assert_eq!((q.pop_front(), q.pop_back(), q.len_hint()), (None, None, 0));
}

#[test]
fn the_ends_meet_at_one_and_two_elements() {
    let q = NodeLockedDList::new();
    for n in 1..=3 {
        // Every mix of ends to fill and to empty: the sentinels must agree afterwards.
        for fill in 0..(1 << n) {
            for take in 0..(1 << n) {
                for i in 0..n {
                    if fill >> i & 1 == 0 {
                        q.push_front(i);
                    } else {
                        q.push_back(i);
                    }
                }
                let mut got: Vec<u32> = (0..n)
                    .map(|i| {
                        if take >> i & 1 == 0 {
                            q.pop_front()
                        } else {
                            q.pop_back()
                        }
                        .expect("n pushed, n taken")
                    })
                    .collect();
                got.sort_unstable();
                assert_eq!(got, (0..n).collect::<Vec<_>>(), "{n} {fill:b} {take:b}");
                assert_eq!((q.pop_front(), q.pop_back()), (None, None));
                assert!(lock(&q.head).next.is_none() && lock(&q.tail).prev.is_none());
            }
        }
    }
}

#[test]
fn drop_drops_every_remaining_task_once_and_frees_every_node() {
    let tracker = std::sync::Arc::new(());
    let q = NodeLockedDList::new();
    // Long enough that a recursive drop of the `next` chain would overflow the stack (Miri,
    // hundreds of times slower, checks the drop's memory accesses on fewer).
    const N: usize = if cfg!(miri) { 500 } else { 200_000 };
    for i in 0..N {
        if i % 2 == 0 {
            q.push_front(std::sync::Arc::clone(&tracker));
        } else {
            q.push_back(std::sync::Arc::clone(&tracker));
        }
    }
    let taken = [q.pop_front(), q.pop_back()];
    assert_eq!(std::sync::Arc::strong_count(&tracker), N + 1);
    drop(taken);
    drop(q);
    assert_eq!(std::sync::Arc::strong_count(&tracker), 1);
}

#[test]
fn an_owner_and_a_thief_take_each_element_once() {
    const N: u64 = if cfg!(miri) { 100 } else { 50_000 };
    let q = NodeLockedDList::new();
    let done = std::sync::atomic::AtomicBool::new(false);
    let (mut mine, theirs) = std::thread::scope(|s| {
        let thief = s.spawn(|| {
            let mut got = Vec::new();
            loop {
                let finished = done.load(std::sync::atomic::Ordering::Acquire);
                match q.pop_back() {
                    Some(v) => got.push(v),
                    None if finished => break got,
                    None => std::thread::yield_now(),
                }
            }
        });
        let mut mine = Vec::new();
        for i in 0..N {
            q.push_front(i);
            if i % 2 == 1 {
                mine.extend(q.pop_front());
            }
        }
        done.store(true, std::sync::atomic::Ordering::Release);
        (mine, thief.join().unwrap())
    });
    mine.extend(theirs);
    mine.extend(std::iter::from_fn(|| q.pop_front()));
    mine.sort_unstable();
    assert_eq!(mine, (0..N).collect::<Vec<_>>());
}
