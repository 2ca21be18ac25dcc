//! The tree-sum kernel's input: a complete binary tree laid out level by level.

/// A complete binary tree with a value in every node.
pub struct Node {
    pub(super) value: u64,
    pub(super) children: Option<Box<(Node, Node)>>,
}

/// A complete binary tree of the given depth, its nodes allocated level by level (breadth
/// first), each with a pseudo-random value. The layout is mirror-symmetric: a depth-first walk
/// reads every level's nodes in increasing addresses when it goes left first and in decreasing
/// ones when it goes right first, so the order in which a runtime runs a join's halves gives
/// it no advantage. (A tree built by recursion is laid out in post-order, which a right-first
/// walk — chili's and forte's order for a join that is not shared — reads as one backward
/// stream, three times faster than the left-first sequential walk.)
pub(super) fn build(depth: u32, next: &mut u64) -> Node {
    let mut value = || {
        *next = next.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        *next >> 40
    };
    let mut root = Node {
        value: value(),
        children: None,
    };
    let mut level: Vec<&mut Node> = vec![&mut root];
    for _ in 0..depth {
        let mut below = Vec::with_capacity(level.len() * 2);
        for n in level {
            let leaf = |value: u64| Node {
                value,
                children: None,
            };
            let pair = n.children.insert(Box::new((leaf(value()), leaf(value()))));
            below.push(&mut pair.0);
            below.push(&mut pair.1);
        }
        level = below;
    }
    root
}
