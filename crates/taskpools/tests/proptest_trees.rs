//! Random task trees (random fan-out and depth per node) run every node exactly once on every
//! pool.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicU32, Ordering};

use proptest::prelude::*;
use taskpools::{Builder, Ctx, PoolKind, Task, WakePolicy};

/// A tree shape: node i has children `children[i]` (indices into the same vector).
#[derive(Debug, Clone)]
struct Shape {
    children: Vec<Vec<usize>>,
}

fn shape() -> impl Strategy<Value = Shape> {
    // Each node gets a random fan-out 0..=4, up to a random total size.
    (1usize..600, proptest::collection::vec(0usize..=4, 600)).prop_map(|(max, fan)| {
        let mut children = vec![Vec::new()];
        let mut next = 0;
        while next < children.len() {
            for _ in 0..fan[next % fan.len()] {
                if children.len() >= max {
                    break;
                }
                let id = children.len();
                children.push(Vec::new());
                children[next].push(id);
            }
            next += 1;
        }
        Shape { children }
    })
}

struct Node<'a> {
    id: usize,
    shape: &'a Shape,
    seen: &'a [AtomicU32],
}

impl Task for Node<'_> {
    fn run(self, ctx: &mut Ctx<'_, Self>) {
        self.seen[self.id].fetch_add(1, Ordering::Relaxed);
        for &c in &self.shape.children[self.id] {
            ctx.put(Node {
                id: c,
                shape: self.shape,
                seen: self.seen,
            });
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_trees_run_every_node_once(s in shape(), threads in 1usize..=3, w in 0usize..3) {
        let wake = WakePolicy::ALL[w];
        for pool in PoolKind::ALL {
            let seen: Vec<AtomicU32> = (0..s.children.len()).map(|_| AtomicU32::new(0)).collect();
            let r = Builder::new()
                .threads(threads)
                .pool(pool)
                .wake(wake)
                .run([Node { id: 0, shape: &s, seen: &seen }])
                .unwrap();
            prop_assert_eq!(r.tasks_run() as usize, s.children.len());
            for (i, c) in seen.iter().enumerate() {
                prop_assert_eq!(c.load(Ordering::Relaxed), 1, "{} node {}", pool, i);
            }
        }
    }
}
