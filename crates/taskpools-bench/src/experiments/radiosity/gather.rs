//! Gathering and push–pull (Hanrahan, Salzman and Aupperle (1991) §3, "SolveSystem"; SPLASH-2's
//! `gather_rays` and `elem_join_operation`): each element gathers `ρ·Σ F·V·B_source` over its
//! interactions; what an element gathers is pushed down to its descendants, a leaf's radiosity
//! is `E + ρ·(gathered here and above)`, and an inner element's is the area-weighted mean of
//! its children's (they are of equal area). One patch tree at a time, reading radiosity
//! buffer `cur` and writing buffer `next`; the sums run in list order, so the result is the
//! same whichever worker does it.

use super::bsp::Patch;
use super::element::Element;
use super::refine::Counters;

/// Gathers, pushes and pulls the tree of `root` (a patch's root element); counts its
/// interactions.
pub(crate) fn gather_patch(root: &Element<'_>, patch: &Patch, cur: usize, c: &mut Counters) {
    let next = 1 - cur;
    visit(root, [0.0; 3], patch, cur, next, c);
}

/// Returns the element's subtree value: what it and (area-weighted) its descendants gathered,
/// without what came from above.
fn visit(
    e: &Element<'_>,
    from_above: [f64; 3],
    patch: &Patch,
    cur: usize,
    next: usize,
    c: &mut Counters,
) -> [f64; 3] {
    let mut gathered = [0.0f64; 3];
    {
        let kept = e.kept();
        c.interactions += kept.len() as u64;
        for i in kept.iter() {
            c.visible += (i.vis > 0.0) as u64;
            c.fully_visible += (i.vis >= 1.0) as u64;
            let fv = i.ff as f64 * i.vis as f64;
            let b = i.src.rad(cur);
            for k in 0..3 {
                gathered[k] += fv * b[k] as f64;
            }
        }
    }
    for (g, rho) in gathered.iter_mut().zip(patch.color) {
        *g *= rho;
    }
    let mut subtree = gathered;
    if let Some(children) = e.children() {
        let down = [0, 1, 2].map(|k| from_above[k] + gathered[k]);
        for ch in children {
            let s = visit(ch, down, patch, cur, next, c);
            for k in 0..3 {
                subtree[k] += 0.25 * s[k];
            }
        }
    }
    e.set_rad(
        next,
        [0, 1, 2].map(|k| from_above[k] + subtree[k] + patch.emit[k]),
    );
    subtree
}
