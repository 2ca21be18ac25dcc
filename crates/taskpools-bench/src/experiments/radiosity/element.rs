//! The element hierarchy (Hanrahan, Salzman and Aupperle (1991) §3): every patch is the root of
//! a quadtree of triangles, each element split at its edge midpoints into four children on
//! demand, and every element keeps the interactions through which it gathers light.
//!
//! Shared state and who touches it, so that the tasks need no `unsafe` and the result does not
//! depend on the order they run in:
//! - children are created once, by whichever task subdivides first ([`OnceLock`]); a child
//!   starts with its parent's radiosity of the current iteration, which no task changes while
//!   the tree grows;
//! - an element's interaction lists are touched by the one task refining that element (its
//!   parent's task hands over the `pending` list before the element's own task starts), so
//!   their mutexes are never contended;
//! - radiosity is double-buffered: an iteration reads buffer `cur` everywhere and writes buffer
//!   `1 - cur` of each patch's elements from that patch's own task.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use super::bsp::Patch;
use super::geometry::{self, Surface, Vec3};

/// Visibility not computed yet.
pub(crate) const VIS_UNKNOWN: f32 = -1.0;

/// Light that a receiving element gathers from a source element.
#[derive(Clone, Copy)]
pub(crate) struct Interaction<'a> {
    /// The element the light comes from.
    pub src: &'a Element<'a>,
    /// Form factor from the receiver to the source.
    pub ff: f32,
    /// Its error bound.
    pub ff_err: f32,
    /// Fraction of the test rays that got through, 0 to 1, or [`VIS_UNKNOWN`].
    pub vis: f32,
}

/// A node of a patch's quadtree.
pub(crate) struct Element<'a> {
    pub tri: [Vec3; 3],
    pub area: f64,
    /// The patch (its index in the scene).
    pub patch: u32,
    /// Radiosity, RGB, as `f32` bits, in two buffers (see the module docs).
    rad: [[AtomicU32; 3]; 2],
    children: OnceLock<Box<[Element<'a>; 4]>>,
    /// Interactions accepted by the refinement (SPLASH-2's `interactions`).
    kept: Mutex<Vec<Interaction<'a>>>,
    /// New interactions whose visibility is not known yet (SPLASH-2's `vis_undef_inter`):
    /// the initial links, and those the parent's refinement created for this element.
    pending: Mutex<Vec<Interaction<'a>>>,
}

fn lock<'g, T>(m: &'g Mutex<T>) -> MutexGuard<'g, T> {
    // A poisoned list means a task panicked; the phase resumes that panic anyway.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<'a> Element<'a> {
    fn new(tri: [Vec3; 3], area: f64, patch: u32, rad: [f32; 3]) -> Self {
        let bits = |_| rad.map(|c| AtomicU32::new(c.to_bits()));
        Element {
            tri,
            area,
            patch,
            rad: [0, 1].map(bits),
            children: OnceLock::new(),
            kept: Mutex::new(Vec::new()),
            pending: Mutex::new(Vec::new()),
        }
    }

    /// The root element of patch `id`, its radiosity the patch's emittance.
    pub fn root(id: u32, p: &Patch) -> Self {
        Element::new(p.tri, p.area, id, p.emit.map(|e| e as f32))
    }

    /// Radiosity in buffer `buf`.
    pub fn rad(&self, buf: usize) -> [f32; 3] {
        // Relaxed: a buffer is written only in the phase that does not read it, and phases
        // are ordered by the runtime's end-of-phase synchronisation.
        self.rad[buf]
            .each_ref()
            .map(|c| f32::from_bits(c.load(Ordering::Relaxed)))
    }

    /// Mean of the three channels of buffer `buf`.
    pub fn rad_mean(&self, buf: usize) -> f64 {
        let r = self.rad(buf);
        (r[0] as f64 + r[1] as f64 + r[2] as f64) * (1.0 / 3.0)
    }

    /// Sets buffer `buf` (only the task of this element's patch, in the gather phase).
    pub fn set_rad(&self, buf: usize, rgb: [f64; 3]) {
        for (c, v) in self.rad[buf].iter().zip(rgb) {
            c.store((v as f32).to_bits(), Ordering::Relaxed);
        }
    }

    /// The children, if this element has been subdivided.
    pub fn children(&self) -> Option<&[Element<'a>; 4]> {
        self.children.get().map(|b| &**b)
    }

    /// The children, creating them if needed: each starts with this element's radiosity of
    /// buffer `cur`. Adds 4 to `created` if this call created them.
    pub fn subdivide(&self, cur: usize, created: &mut u64) -> &[Element<'a>; 4] {
        self.children.get_or_init(|| {
            *created += 4;
            let rad = self.rad(cur);
            let quarter = self.area * 0.25;
            Box::new(
                geometry::subdivide(&self.tri).map(|t| Element::new(t, quarter, self.patch, rad)),
            )
        })
    }

    /// The form-factor view of this element.
    pub fn surface<'t>(&'t self, patches: &'t [Patch]) -> Surface<'t> {
        Surface {
            tri: &self.tri,
            normal: patches[self.patch as usize].plane.n,
            area: self.area,
        }
    }

    /// The kept list.
    pub fn kept(&self) -> MutexGuard<'_, Vec<Interaction<'a>>> {
        lock(&self.kept)
    }

    /// The pending list.
    pub fn pending(&self) -> MutexGuard<'_, Vec<Interaction<'a>>> {
        lock(&self.pending)
    }

    /// Interactions this element holds now (kept and pending), for the decision whether its
    /// refinement is worth a task of its own.
    pub fn interaction_count(&self) -> usize {
        self.kept().len() + self.pending().len()
    }
}
