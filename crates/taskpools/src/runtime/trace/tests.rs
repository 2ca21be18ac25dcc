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
    let (path, len) = g.critical_path();
    assert_eq!(len, 10 + 5 + 100 + 1 + 50, "{path:?}");
    assert_eq!(path, vec![1, 2, 3, 2, 4]);
    assert_eq!(g.work_ns(), 10 + 8 + 100 + 50);
    // A task whose parent is unknown starts at 0, alongside the root scopes.
    g.tasks.insert(9, node(77, 0, 0, 500));
    assert_eq!(g.critical_path(), (vec![9], 500));
    // 200 000 nested tasks, each spawned by the one before at the end of its work.
    let mut deep = super::TaskGraph::default();
    deep.roots.push(1);
    deep.root_work.insert(1, 0);
    for id in 2..200_002u64 {
        deep.tasks.insert(id, node(id - 1, 1, 0, 1));
    }
    let (path, len) = deep.critical_path();
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
