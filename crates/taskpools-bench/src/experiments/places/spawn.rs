//! Spawning on either runtime: a scope of ours (hints go to our places) or of rayon (hints
//! mean nothing there), and the hints a locality variant gives.

use taskpools::places::PlaceId;
use taskpools::Runtime;

use super::Locality;

/// A scope of either runtime: hints go to our places, rayon ignores them.
#[derive(Clone, Copy)]
pub(super) enum Sc<'a, 's> {
    Ours(&'a taskpools::forkjoin::Scope<'s>),
    Rayon(&'a rayon::Scope<'s>),
}

impl<'s> Sc<'_, 's> {
    pub(super) fn spawn(
        self,
        place: Option<usize>,
        f: impl for<'b> FnOnce(Sc<'b, 's>) + Send + 's,
    ) {
        match (self, place) {
            (Sc::Ours(s), Some(p)) => s
                .spawn_at(PlaceId(p), move |s| f(Sc::Ours(s)))
                .expect("places were checked"),
            (Sc::Ours(s), None) => s.spawn(move |s| f(Sc::Ours(s))),
            (Sc::Rayon(s), _) => s.spawn(move |s| f(Sc::Rayon(s))),
        }
    }
}

/// Where a program runs.
#[derive(Clone, Copy)]
pub(super) enum Rt<'a> {
    Ours(&'a Runtime),
    Rayon(&'a rayon::ThreadPool),
}

impl Rt<'_> {
    pub(super) fn scope<'s, R: Send>(self, f: impl for<'b> FnOnce(Sc<'b, 's>) -> R + Send) -> R {
        match self {
            Rt::Ours(rt) => rt.scope(|s| f(Sc::Ours(s))),
            Rt::Rayon(p) => p.scope(|s| f(Sc::Rayon(s))),
        }
    }
    /// A nested scope inside a task.
    pub(super) fn nested<'s, R: Send>(self, f: impl for<'b> FnOnce(Sc<'b, 's>) -> R + Send) -> R {
        match self {
            Rt::Ours(_) => taskpools::forkjoin::scope(|s| f(Sc::Ours(s))),
            Rt::Rayon(_) => rayon::scope(|s| f(Sc::Rayon(s))),
        }
    }
}

/// Places a hint: `None` for ignorant programs and runtimes without places.
#[derive(Clone, Copy)]
pub(super) struct Hints {
    pub(super) places: usize,
    pub(super) loc: Locality,
    pub(super) on: bool,
}

impl Hints {
    pub(super) fn pick(self, wanted: usize, seed: u64) -> Option<usize> {
        if !self.on {
            return None;
        }
        match self.loc {
            Locality::Ignorant => None,
            Locality::Random => Some(mix(seed) as usize % self.places),
            _ => Some(wanted % self.places),
        }
    }
}

pub(super) fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    x = (x ^ (x >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}
