//! Loom models of the node-locked list: the two ends racing where they meet (0, 1 and 2
//! nodes), for each protocol the pools use: the owner's pop at the front against a thief's
//! pop at the back (`dq6`), the owner's push at the front against a thief (`dq6`), two
//! thieves (`dq6`), a push at the back against a pop at the front (`sq3`), two pushes at the
//! back (`sq3` with several producers), and a list dropped with tasks in it.
//!
//! The tasks live under the nodes' locks (`crate::sync::Mutex`, loom's here), so the models
//! see every access to them through the locks' happens-before order. The models empty the
//! list before it is dropped, but the last, which drops it with three tasks in it and checks
//! that every task (and so every node) was freed. The `*_finds_*` twins run a model with one
//! planted bug ([`Mutation`]) and must fail: back operations that act on what they read
//! without re-validating it (a task lost, or an unlinked node unlinked again), and a
//! `pop_back` that locks right to left (a deadlock, which loom reports), and a `drop` that
//! leaves neighbours linked (a leak, which the tasks' token shows).
use super::*;
use loom::thread;

fn bounded(preemptions: usize) -> loom::model::Builder {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(preemptions);
    b
}

/// A thread's handle on the list that is not dropped when the thread unwinds: a loom `Arc`
/// cannot be dropped once a failed execution is over (the deadlock twin's thief unwinds
/// from loom's report), and the drop would abort the test run instead of failing it.
struct Handle(Option<Arc<NodeLockedDList<u32>>>);

impl std::ops::Deref for Handle {
    type Target = NodeLockedDList<u32>;
    fn deref(&self) -> &Self::Target {
        self.0.as_ref().expect("present until drop")
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        if std::thread::panicking() {
            std::mem::forget(self.0.take());
        }
    }
}

/// Takes everything left, from the front.
fn drain(q: &NodeLockedDList<u32>) -> Vec<u32> {
    std::iter::from_fn(|| q.pop_front()).collect()
}

/// `n` tasks pushed at the front (1 newest … n oldest); the owner pops the front once while
/// a thief pops the back once: each task is taken exactly once (on one node by one of
/// them), on two the owner's the newest and the thief's the oldest.
fn owner_pop_races_thief(n: u32, m: Mutation) {
    bounded(3).check(move || {
        let q = Arc::new(NodeLockedDList::<u32>::with_mutation(m));
        for v in (1..=n).rev() {
            q.push_front(v);
        }
        let q2 = Handle(Some(Arc::clone(&q)));
        let thief = thread::spawn(move || q2.pop_back());
        let mine = q.pop_front();
        let theirs = thief.join().unwrap();
        if n > 1 {
            assert_eq!(mine, Some(1), "the owner takes the newest");
            assert_eq!(theirs, Some(n), "a thief takes the oldest");
        }
        let mut got: Vec<u32> = mine.into_iter().chain(theirs).chain(drain(&q)).collect();
        got.sort_unstable();
        assert_eq!(got, (1..=n).collect::<Vec<_>>(), "every task exactly once");
        assert_eq!(q.len_hint(), 0);
    });
}

#[test]
fn loom_owner_pop_races_thief_on_one_node() {
    owner_pop_races_thief(1, Mutation::None);
}

#[test]
fn loom_owner_pop_races_thief_on_two_nodes() {
    owner_pop_races_thief(2, Mutation::None);
}

/// Twin: a `pop_back` that locks `tail`, then the last node, then the one before it meets a
/// `pop_front` that locks `head` first: each holds what the other waits for.
#[test]
#[should_panic(expected = "deadlock")]
fn loom_finds_the_deadlock_of_a_right_to_left_pop_back() {
    owner_pop_races_thief(2, Mutation::RightToLeft);
}

/// The owner pushes a task at the front (and then, if `pop`, pops the front) while a thief
/// pops the back, starting from `n` tasks (0 or 1): the thief reads the last node, or an
/// empty list, while the front changes under it. Each task exactly once; the owner's pop
/// meets the thief on one node.
fn owner_push_races_thief(n: u32, pop: bool, m: Mutation) {
    bounded(3).check(move || {
        let q = Arc::new(NodeLockedDList::<u32>::with_mutation(m));
        if n == 1 {
            q.push_front(1);
        }
        let q2 = Arc::clone(&q);
        let thief = thread::spawn(move || q2.pop_back());
        q.push_front(2);
        let mut got: Vec<u32> = Vec::new();
        if pop {
            got.extend(q.pop_front());
        }
        let theirs = thief.join().unwrap();
        if n == 1 && !pop {
            assert_eq!(theirs, Some(1), "a thief takes the oldest");
        }
        got.extend(theirs);
        got.extend(drain(&q));
        got.sort_unstable();
        let want: Vec<u32> = if n == 1 { vec![1, 2] } else { vec![2] };
        assert_eq!(got, want, "every task exactly once");
        assert_eq!(q.len_hint(), 0);
    });
}

#[test]
fn loom_owner_push_and_pop_race_thief_on_an_empty_list() {
    owner_push_races_thief(0, true, Mutation::None);
}

#[test]
fn loom_owner_push_and_pop_race_thief_on_one_node() {
    owner_push_races_thief(1, true, Mutation::None);
}

#[test]
fn loom_owner_push_races_thief_on_one_node() {
    owner_push_races_thief(1, false, Mutation::None);
}

/// Twin: the thief read the only node and its left neighbour (`head`); the owner pushed in
/// front of it meanwhile. Without re-validation the thief unlinks the node as if it were
/// still first and sets `head.next` past it: the owner's new task is lost.
#[test]
#[should_panic(expected = "every task exactly once")]
fn loom_finds_the_lost_push_of_a_pop_back_without_revalidation() {
    owner_push_races_thief(1, false, Mutation::SkipRevalidation);
}

/// Twin: with the owner's pop too, the thief may read the node before the last, the owner
/// unlink it, and the thief, not re-validating, unlink the last node from beside the
/// unlinked one, leaving `head` pointing to a node it unlinked: the next pop at the front
/// finds it without its task, which the list's own check reports.
#[test]
#[should_panic(expected = "a linked node holds its task")]
fn loom_finds_the_stale_neighbour_of_a_pop_back_without_revalidation() {
    owner_push_races_thief(1, true, Mutation::SkipRevalidation);
}

/// Two thieves pop the back of two nodes while the owner pops the front: the second thief's
/// read of the last node is stale after the first took it. Each task exactly once.
fn two_thieves_and_the_owner(m: Mutation) {
    bounded(2).check(move || {
        let q = Arc::new(NodeLockedDList::<u32>::with_mutation(m));
        q.push_front(2);
        q.push_front(1);
        let thieves: Vec<_> = (0..2)
            .map(|_| {
                let q = Arc::clone(&q);
                thread::spawn(move || q.pop_back())
            })
            .collect();
        let mut got: Vec<u32> = q.pop_front().into_iter().collect();
        for t in thieves {
            got.extend(t.join().unwrap());
        }
        got.extend(drain(&q));
        got.sort_unstable();
        assert_eq!(got, vec![1, 2], "every task exactly once");
    });
}

#[test]
fn loom_two_thieves_race_the_owner_on_two_nodes() {
    two_thieves_and_the_owner(Mutation::None);
}

/// Twin: the second thief unlinks the node the first one took (already unlinked, its task
/// gone), which the list's own check reports.
#[test]
#[should_panic(expected = "a linked node holds its task")]
fn loom_finds_the_double_unlink_of_two_thieves_without_revalidation() {
    two_thieves_and_the_owner(Mutation::SkipRevalidation);
}

/// `sq3`: a producer pushes two tasks at the back while a consumer pops the front twice,
/// starting from `n` tasks (0 or 1): the producer reads a last node that the consumer may be
/// unlinking. Every task exactly once, in FIFO order.
fn push_back_races_pop_front(n: u32, m: Mutation) {
    bounded(3).check(move || {
        let q = Arc::new(NodeLockedDList::<u32>::with_mutation(m));
        if n == 1 {
            q.push_back(0);
        }
        let q2 = Arc::clone(&q);
        let producer = thread::spawn(move || {
            q2.push_back(1);
            q2.push_back(2);
        });
        let mut got: Vec<u32> = Vec::new();
        for _ in 0..2 {
            got.extend(q.pop_front());
        }
        producer.join().unwrap();
        got.extend(drain(&q));
        let want: Vec<u32> = (1 - n..=2).collect();
        assert_eq!(got, want, "every task exactly once, first in first out");
        assert_eq!(q.len_hint(), 0);
    });
}

#[test]
fn loom_push_back_races_pop_front_on_an_empty_list() {
    push_back_races_pop_front(0, Mutation::None);
}

#[test]
fn loom_push_back_races_pop_front_on_one_node() {
    push_back_races_pop_front(1, Mutation::None);
}

/// Twin: the producer read the last node; the consumer unlinked it meanwhile. Without
/// re-validation the producer links its task after the unlinked node, where no pop reaches.
#[test]
#[should_panic(expected = "every task exactly once")]
fn loom_finds_the_lost_push_back_without_revalidation() {
    push_back_races_pop_front(1, Mutation::SkipRevalidation);
}

/// `sq3` with several producers: two push at the back at once, starting from `n` tasks (0 or
/// 1): both read the same last node, and the second must see that it is no longer last.
fn two_producers(n: u32, m: Mutation) {
    bounded(3).check(move || {
        let q = Arc::new(NodeLockedDList::<u32>::with_mutation(m));
        if n == 1 {
            q.push_back(0);
        }
        let q2 = Arc::clone(&q);
        let producer = thread::spawn(move || {
            q2.push_back(1);
        });
        q.push_back(2);
        producer.join().unwrap();
        let mut got = drain(&q);
        if n == 1 {
            assert_eq!(got.first(), Some(&0), "the oldest first");
        }
        got.sort_unstable();
        let want: Vec<u32> = (1 - n..=2).collect();
        assert_eq!(got, want, "every task exactly once");
        assert_eq!(q.len_hint(), 0);
    });
}

#[test]
fn loom_two_producers_push_back_on_an_empty_list() {
    two_producers(0, Mutation::None);
}

#[test]
fn loom_two_producers_push_back_on_one_node() {
    two_producers(1, Mutation::None);
}

/// Twin: both producers read the same last node; without re-validation the second links its
/// task after that node in place of the first one's, which no pop reaches any more.
#[test]
#[should_panic(expected = "every task exactly once")]
fn loom_finds_the_lost_push_of_two_producers_without_revalidation() {
    two_producers(1, Mutation::SkipRevalidation);
}

/// A list dropped with tasks in it, after a thief raced the owner: every node is freed, which
/// the tasks show: each holds a clone of one token (a plain `std` `Arc`, outside the model),
/// and once the list is gone the test's is the only one left.
fn dropped_with_tasks(m: Mutation) {
    bounded(2).check(move || {
        let token = std::sync::Arc::new(());
        let task = |v: u32| (v, std::sync::Arc::clone(&token));
        let q = Arc::new(NodeLockedDList::<(u32, std::sync::Arc<()>)>::with_mutation(
            m,
        ));
        q.push_front(task(1));
        q.push_front(task(2));
        q.push_back(task(3));
        let q2 = Arc::clone(&q);
        let thief = thread::spawn(move || q2.pop_back().map(|(v, _)| v));
        q.push_front(task(4));
        assert_eq!(thief.join().unwrap(), Some(3), "a thief takes the oldest");
        assert_eq!(q.len_hint(), 3);
        drop(q);
        assert_eq!(
            std::sync::Arc::strong_count(&token),
            1,
            "every node freed with its task"
        );
    });
}

#[test]
fn loom_a_list_dropped_with_tasks_frees_every_node() {
    dropped_with_tasks(Mutation::None);
}

/// Twin: a `drop` that unhooks the ends but leaves the links between nodes: neighbours keep
/// each other, and their tasks, alive.
#[test]
#[should_panic(expected = "every node freed with its task")]
fn loom_finds_the_leak_of_a_drop_that_keeps_links() {
    dropped_with_tasks(Mutation::KeepLinksOnDrop);
}
