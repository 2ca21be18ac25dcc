//! Unit tests of the trace: the event size, the critical path of hand-built task graphs, the
//! clock.

/// The documented event size ([`RuntimeBuilder::trace`](super::super::RuntimeBuilder::trace)).
#[test]
fn an_event_is_40_bytes() {
    assert_eq!(std::mem::size_of::<super::Event>(), 40);
}

fn node(parent: u64, after: u64, index: usize, work: u64) -> super::TaskNode {
    super::TaskNode {
        worker: 0,
        start_ns: 0,
        end_ns: 0,
        work_ns: work,
        parent,
        spawned_after_ns: after,
        spawn_index: index,
    }
}

/// The span of a hand-built graph: root scope 1 works 10 ns and spawns task 2, which
/// works 5, spawns 3 (100 ns) and a child the trace did not see, `sync`s, works 1 more,
/// spawns 4 (50 ns) and works 2 more. Then a task of unknown parent (500 ns), and a
/// chain of nested tasks deeper than any call stack.
#[test]
fn critical_path_follows_spawns_syncs_and_unknown_parents() {
    let mut g = super::TaskGraph::default();
    g.roots.push(1);
    g.root_work.insert(1, 10);
    g.tasks.insert(2, node(1, 10, 0, 8));
    g.tasks.insert(3, node(2, 5, 0, 100));
    // Spawned after the unseen child (index 1) and after the sync (which followed 2
    // spawns): it starts only once 3 has finished.
    g.tasks.insert(4, node(2, 6, 2, 50));
    g.syncs.insert(2, vec![(5, 2)]);
    let (path, len) = g.critical_path().unwrap();
    assert_eq!(len, 10 + 5 + 100 + 1 + 50, "{path:?}");
    assert_eq!(path, vec![1, 2, 3, 2, 4]);
    assert_eq!(g.work_ns(), 10 + 8 + 100 + 50);
    // A task whose parent is unknown starts at 0, alongside the root scopes.
    g.tasks.insert(9, node(77, 0, 0, 500));
    assert_eq!(g.critical_path().unwrap(), (vec![9], 500));
    // 200 000 nested tasks, each spawned by the one before at the end of its work.
    let mut deep = super::TaskGraph::default();
    deep.roots.push(1);
    deep.root_work.insert(1, 0);
    for id in 2..200_002u64 {
        deep.tasks.insert(id, node(id - 1, 1, 0, 1));
    }
    let (path, len) = deep.critical_path().unwrap();
    // The root scope spawns the first at 1 ns: it is on the path too.
    assert_eq!((path.len(), len), (200_001, 200_001));
}

/// Stamps convert to nanoseconds since the clock's start that agree with `Instant`
/// (whichever source the clock uses here).
#[test]
fn the_clock_agrees_with_instant() {
    let before = std::time::Instant::now();
    let c = super::Clock::start();
    let a = c.raw();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let b = c.raw();
    let ns = c.converter();
    let outer = before.elapsed().as_nanos() as u64;
    let (a, b) = (ns(a), ns(b));
    // Within 5 % (the rate is measured over this short run).
    assert!(a <= b && b - a >= 19_000_000, "{a} {b}");
    assert!(b <= outer + outer / 20, "{b} after {outer} ns");
}

/// A parent relation with a cycle (read from a corrupt trace file) is refused, naming a task
/// on it: a task that is its own parent and a root scope, two tasks each other's parent (one
/// a root scope), a cycle that no root reaches, and a task with id 0 (the id of no task).
#[test]
fn critical_path_refuses_a_cycle_of_parents() {
    let mut own = super::TaskGraph::default();
    own.roots.push(5);
    own.root_work.insert(5, 1);
    own.tasks.insert(5, node(5, 0, 0, 1));
    let refused = |g: &super::TaskGraph, says: &str| {
        let e = g.critical_path().unwrap_err();
        assert!(matches!(e, crate::Error::BadTaskGraph { .. }), "{e:?}");
        assert!(e.to_string().contains(says), "`{e}` should say `{says}`");
        assert!(g.dot("g").is_err());
    };
    refused(&own, "task 5 is its own ancestor");
    let mut pair = super::TaskGraph::default();
    pair.roots.push(7);
    pair.tasks.insert(7, node(8, 0, 0, 1));
    pair.tasks.insert(8, node(7, 0, 0, 1));
    refused(&pair, "is its own ancestor");
    // No root reaches it: still refused (the graph is corrupt).
    let mut hidden = super::TaskGraph::default();
    hidden.roots.push(1);
    hidden.tasks.insert(2, node(1, 0, 0, 1));
    hidden.tasks.insert(3, node(4, 0, 0, 1));
    hidden.tasks.insert(4, node(3, 0, 0, 1));
    refused(&hidden, "is its own ancestor");
    // Task 0 of an unknown parent would hang off the synthetic root 0, itself.
    let mut zero = super::TaskGraph::default();
    zero.tasks.insert(0, node(77, 0, 0, 1));
    refused(
        &zero,
        "task 0 is its own ancestor (a cycle of parents; 0 is the id of no task)",
    );
    // A root scope listed twice, or that is also a task: each copy would walk its tasks again.
    let mut twice = super::TaskGraph::default();
    twice.roots.extend([1, 1]);
    twice.tasks.insert(2, node(1, 0, 0, 1));
    refused(&twice, "root scope 1 is listed twice");
    let mut both = super::TaskGraph::default();
    both.roots.extend([1, 2]);
    both.tasks.insert(2, node(1, 0, 0, 1));
    refused(&both, "task 2 is also a root scope");
    // Times from a file add up saturating.
    let mut long = super::TaskGraph::default();
    long.roots.push(1);
    long.root_work.insert(1, u64::MAX);
    long.tasks.insert(2, node(1, u64::MAX, 0, u64::MAX));
    assert_eq!(long.critical_path().unwrap().1, u64::MAX);
    assert_eq!(long.work_ns(), u64::MAX);
}
