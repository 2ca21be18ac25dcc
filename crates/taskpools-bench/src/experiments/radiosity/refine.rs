//! Refinement of interactions (Hanrahan, Salzman and Aupperle (1991) §3, "BF refinement"; the
//! oracle and its constants as in SPLASH-2's `bf_error_analysis`) and their visibility by ray
//! casting through the BSP tree, plus the initial links between patches that face each other
//! (SPLASH-2's `TASK_FF_REFINEMENT` at patch level).
//!
//! An element's refinement in one iteration ([`Engine::begin`], then rounds of
//! [`Engine::visibility`] and [`Engine::after_visibility`] until nothing is pending):
//! 1. re-examine its kept interactions with the current radiosities; an interaction whose
//!    estimated error `B·F` exceeds the threshold is replaced by up to four: with the children
//!    of the receiver (handed to them, they test their visibility when they run) or with the
//!    children of the source (tested here, next round); the larger of the two elements is
//!    subdivided, and neither below the area threshold;
//! 2. test the visibility of the new interactions of this element, and examine them the same
//!    way; repeat until no new interaction is left;
//! 3. then its children are refined, each once this element is done.
//!
//! Every decision reads only the element's own lists and the radiosities of buffer `cur`,
//! which no one writes during refinement, so the order in which elements are refined (the
//! task order) changes nothing in the result.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use super::bsp::{BlockerCache, Bsp, Patch};
use super::element::{Element, Interaction, VIS_UNKNOWN};
use super::geometry::{self, Vec3};
use super::Settings;

/// At most this many test rays per interaction.
pub(crate) const MAX_RAYS: usize = 16;

/// Barycentric sample points for the test rays, in twelfths along the edges `p1→p2` and
/// `p1→p3`: the centroids of the 16 triangles of a 4-by-4 subdivision, ordered so that any
/// first `n` of them spread over the triangle. Ray `k` runs from `FROM[k]` on the receiver to
/// `TO[k]` on the source (a different point, so that rays cross rather than run parallel).
const FROM: [(u8, u8); MAX_RAYS] = [
    (1, 1),
    (10, 1),
    (1, 10),
    (4, 4),
    (7, 1),
    (1, 7),
    (7, 4),
    (4, 7),
    (4, 1),
    (1, 4),
    (2, 2),
    (5, 2),
    (8, 2),
    (2, 5),
    (5, 5),
    (2, 8),
];
const TO: [(u8, u8); MAX_RAYS] = [
    (10, 1),
    (1, 10),
    (1, 1),
    (4, 4),
    (1, 7),
    (7, 4),
    (4, 7),
    (7, 1),
    (1, 4),
    (4, 1),
    (5, 2),
    (8, 2),
    (2, 5),
    (5, 5),
    (2, 8),
    (2, 2),
];

/// What a worker counts (summed over workers at the end; no shared counter).
#[derive(Clone, Debug, Default)]
pub(crate) struct Counters {
    /// Elements created by subdivision.
    pub elements: u64,
    /// Interactions whose visibility was computed.
    pub visibility_tests: u64,
    /// Rays cast (those not rejected by the facing test).
    pub rays: u64,
    /// BSP nodes visited by the rays.
    pub bsp_visits: u64,
    /// Subdivision decisions (each replaces one interaction by up to four).
    pub subdivisions: u64,
    /// Interactions in the lists at the last gather (final mesh).
    pub interactions: u64,
    /// Of those, with visibility above 0.
    pub visible: u64,
    /// Of those, with visibility 1.
    pub fully_visible: u64,
}

impl std::ops::AddAssign<&Counters> for Counters {
    fn add_assign(&mut self, o: &Counters) {
        self.elements += o.elements;
        self.subdivisions += o.subdivisions;
        self.visibility_tests += o.visibility_tests;
        self.rays += o.rays;
        self.bsp_visits += o.bsp_visits;
        self.interactions += o.interactions;
        self.visible += o.visible;
        self.fully_visible += o.fully_visible;
    }
}

/// A worker's state: its counters and its blocker cache.
#[derive(Clone, Debug, Default)]
pub(crate) struct Worker {
    pub counts: Counters,
    pub cache: BlockerCache,
}

impl Worker {
    /// Takes over what `other`, the state of a finished part of this worker's work, counted.
    pub fn absorb(&mut self, other: Worker) {
        self.counts += &other.counts;
    }
}

/// The bound on the subdivisions of one solve (`Settings::max_interactions / 4`: each makes
/// at most four interactions), shared by the workers. Each subdivision takes one from it, so
/// it runs out exactly when a solve needs more than the bound, whatever the driver and the
/// task order: the refinement decisions are the same in any order. Subdivisions are few
/// beside the work between them (55 230 against 2.8 million visibility rays on largeroom),
/// so the one counter is no hot spot. Once it runs out, interactions are kept as they are
/// and the solve reports itself [`truncated`](super::Outcome::truncated).
#[derive(Debug)]
pub(crate) struct Budget {
    left: AtomicI64,
    exhausted: AtomicBool,
}

impl Budget {
    pub fn new(max_interactions: u64) -> Self {
        Budget {
            left: AtomicI64::new(i64::try_from(max_interactions / 4).unwrap_or(i64::MAX)),
            exhausted: AtomicBool::new(false),
        }
    }

    /// Whether some subdivision was refused.
    pub fn exhausted(&self) -> bool {
        self.exhausted.load(Ordering::Relaxed)
    }
}

/// What the oracle advises for one interaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Advice {
    Keep,
    /// Subdivide the receiver (this element).
    Receiver,
    /// Subdivide the source.
    Source,
}

/// The refinement of one iteration: the scene, the settings, and the radiosity buffer read.
#[derive(Clone, Copy)]
pub(crate) struct Engine<'s> {
    pub patches: &'s [Patch],
    pub bsp: &'s Bsp,
    pub settings: &'s Settings,
    pub budget: &'s Budget,
    /// The radiosity buffer this iteration reads.
    pub cur: usize,
}

impl<'s> Engine<'s> {
    /// Takes one subdivision from the budget: false once it has run out.
    fn take(&self, w: &mut Worker) -> bool {
        if self.budget.exhausted() || self.budget.left.fetch_sub(1, Ordering::Relaxed) <= 0 {
            self.budget.exhausted.store(true, Ordering::Relaxed);
            return false;
        }
        w.counts.subdivisions += 1;
        true
    }

    /// Whether no light can pass between `a` and `b`: one lies behind the other's plane.
    fn facing_away(&self, a: &Element<'_>, b: &Element<'_>) -> bool {
        self.patches[a.patch as usize].plane.hides(&b.tri)
            || self.patches[b.patch as usize].plane.hides(&a.tri)
    }

    /// A new interaction of receiver `rcv` with source `src`, visibility unknown, or `None`
    /// if they face away from each other.
    fn interaction<'a>(&self, rcv: &Element<'a>, src: &'a Element<'a>) -> Option<Interaction<'a>> {
        if self.facing_away(rcv, src) {
            return None;
        }
        let (ff, ff_err) =
            geometry::form_factor(&rcv.surface(self.patches), &src.surface(self.patches));
        Some(Interaction {
            src,
            ff: ff as f32,
            ff_err: ff_err as f32,
            vis: VIS_UNKNOWN,
        })
    }

    /// The initial links of patch `p`: an interaction with every patch it faces, into its
    /// root's pending list (in patch order).
    pub fn link<'a>(&self, roots: &'a [Element<'a>], p: usize) {
        let me = &roots[p];
        let links: Vec<_> = roots
            .iter()
            .enumerate()
            .filter(|&(q, _)| q != p)
            .filter_map(|(_, src)| self.interaction(me, src))
            .collect();
        *me.pending() = links;
    }

    fn advice(&self, e: &Element<'_>, i: &Interaction<'_>, kept: usize) -> Advice {
        let s = self.settings;
        let (vis, ff, ff_err) = (i.vis as f64, i.ff as f64, i.ff_err as f64);
        let vis_err = if vis > 0.0 && vis < 1.0 {
            1.0
        } else {
            1.0 / s.rays as f64
        };
        // B·(F + Ferr)(V + Verr) - B·F·V: the error of the light this interaction carries.
        let err = (vis * ff_err + vis_err * ff + vis_err * ff_err) * i.src.rad_mean(self.cur);
        if (err <= s.bf_epsilon && kept <= 10) || err <= s.bf_epsilon * 0.5 {
            Advice::Keep
        } else if e.area > i.src.area {
            if e.area > s.area_epsilon {
                Advice::Receiver
            } else {
                Advice::Keep
            }
        } else if i.src.area > s.area_epsilon {
            Advice::Source
        } else {
            Advice::Keep
        }
    }

    /// Examines `list` (visibility known) for element `e`, which holds `kept` accepted
    /// interactions: returns those to keep; the replacements of the others go to the pending
    /// lists of `e`'s children or, when the source was subdivided, into `next`.
    fn analyse<'a>(
        &self,
        e: &'a Element<'a>,
        list: Vec<Interaction<'a>>,
        kept: usize,
        next: &mut Vec<Interaction<'a>>,
        w: &mut Worker,
    ) -> Vec<Interaction<'a>> {
        let mut keep = Vec::with_capacity(list.len());
        for i in list {
            let advice = match self.advice(e, &i, kept) {
                Advice::Keep => Advice::Keep,
                _ if !self.take(w) => Advice::Keep,
                a => a,
            };
            match advice {
                Advice::Keep => keep.push(i),
                Advice::Receiver => {
                    for c in e.subdivide(self.cur, &mut w.counts.elements) {
                        if let Some(n) = self.interaction(c, i.src) {
                            c.pending().push(n);
                        }
                    }
                }
                Advice::Source => {
                    for c in i.src.subdivide(self.cur, &mut w.counts.elements) {
                        next.extend(self.interaction(e, c));
                    }
                }
            }
        }
        keep
    }

    /// Starts element `e`'s refinement: re-examines its kept interactions and returns the new
    /// ones whose visibility is to be tested (those its parent handed over first).
    pub fn begin<'a>(&self, e: &'a Element<'a>, w: &mut Worker) -> Vec<Interaction<'a>> {
        let old = std::mem::take(&mut *e.kept());
        let mut next = std::mem::take(&mut *e.pending());
        let keep = self.analyse(e, old, 0, &mut next, w);
        *e.kept() = keep;
        next
    }

    /// Examines `list` once its visibility is known; returns the next round's new ones.
    pub fn after_visibility<'a>(
        &self,
        e: &'a Element<'a>,
        list: Vec<Interaction<'a>>,
        w: &mut Worker,
    ) -> Vec<Interaction<'a>> {
        let kept = e.kept().len();
        let mut next = Vec::new();
        let keep = self.analyse(e, list, kept, &mut next, w);
        e.kept().extend(keep);
        next
    }

    /// Tests the visibility of each interaction of `list` from receiver `e`.
    pub fn visibility(&self, e: &Element<'_>, list: &mut [Interaction<'_>], w: &mut Worker) {
        for i in list {
            i.vis = self.visibility_of(e, i.src, w);
        }
    }

    /// The fraction of test rays from `rcv` to `src` that no patch blocks. A ray that cannot
    /// leave the receiver's front or reach the source's front is rejected; when all are,
    /// the interaction gets `1/rays` (SPLASH-2's rule: the elements see each other only
    /// partly, the rays missed that part).
    fn visibility_of(&self, rcv: &Element<'_>, src: &Element<'_>, w: &mut Worker) -> f32 {
        let n = self.settings.rays;
        let (nr, ns) = (
            self.patches[rcv.patch as usize].plane.n,
            self.patches[src.patch as usize].plane.n,
        );
        let (mut through, mut rejected) = (0, 0);
        w.counts.visibility_tests += 1;
        for k in 0..n {
            let a = sample(&rcv.tri, FROM[k]);
            let b = sample(&src.tri, TO[k]);
            let d = b - a;
            if d.dot(nr) <= 0.0 || d.dot(ns) >= 0.0 {
                rejected += 1;
                continue;
            }
            w.counts.rays += 1;
            let ends = [rcv.patch, src.patch];
            if !self
                .bsp
                .blocked(a, b, ends, &mut w.cache, &mut w.counts.bsp_visits)
            {
                through += 1;
            }
        }
        if rejected == n {
            1.0 / n as f32
        } else {
            through as f32 / n as f32
        }
    }
}

/// The point of `t` at barycentric twelfths `(u, v)` along `t0→t1` and `t0→t2`.
fn sample(t: &[Vec3; 3], (u, v): (u8, u8)) -> Vec3 {
    let (u, v) = (u as f64 / 12.0, v as f64 / 12.0);
    t[0] + (t[1] - t[0]) * u + (t[2] - t[0]) * v
}
