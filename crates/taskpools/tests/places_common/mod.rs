//! What the places tests share: the shape of their hinted test trees (`tests/places.rs`,
//! `tests/places_phase.rs`).

/// The children of node `lo..hi` of the hinted test trees (a node per index): their ranges
/// and hints, `None` for none. A third of the nodes hint everything at place 0 (so the other
/// places must steal); about one child in seven is unhinted; the rest hint pseudo-random places.
pub fn tree_children(lo: usize, hi: usize, np: usize) -> Vec<(usize, usize, Option<usize>)> {
    let mut out = Vec::new();
    if hi - lo == 1 {
        return out;
    }
    let mid = (lo + hi) / 2;
    let mut seed = (lo as u64 ^ 0x9e37_79b9).wrapping_mul(0x2545_f491_4f6c_dd1d);
    for (a, b) in [(lo + 1, mid.max(lo + 1)), (mid.max(lo + 1), hi)] {
        if a >= b {
            continue;
        }
        seed ^= seed >> 29;
        let p = if lo % 3 == 0 { 0 } else { seed as usize % np };
        out.push((a, b, (seed % 7 != 0).then_some(p)));
    }
    out
}
