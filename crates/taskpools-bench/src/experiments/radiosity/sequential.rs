//! The sequential driver: the same steps as the task driver, in plain loops and recursion, on
//! the calling thread. It is the reference the task pools are checked and timed against.

use std::convert::Infallible;

use super::element::Element;
use super::gather::gather_patch;
use super::refine::{Engine, Worker};
use super::{solve_with, Driver, Outcome, Scene, Settings, Step, StepReport};

/// Solves `scene` on the calling thread (no pool): [`Outcome::tasks`] and
/// [`Outcome::steals`] are 0. The scene is not changed; solve it again as often as you like.
///
/// Panics if `s` does not pass [`Settings::validate`].
pub fn solve_sequential(scene: &Scene, s: &Settings) -> Outcome {
    match solve_with(scene, s, &mut Sequential) {
        Ok(out) => out,
        Err(never) => match never {},
    }
}

/// Runs every step in order on this thread.
struct Sequential;

impl Driver for Sequential {
    type Error = Infallible;

    fn step<'a>(
        &mut self,
        step: Step,
        engine: Engine<'_>,
        roots: &'a [Element<'a>],
    ) -> Result<StepReport, Infallible> {
        let mut w = Worker::default();
        match step {
            Step::Link => (0..roots.len()).for_each(|p| engine.link(roots, p)),
            Step::Refine => roots.iter().for_each(|e| refine(&engine, e, &mut w)),
            Step::Gather => {
                for (e, patch) in roots.iter().zip(engine.patches) {
                    gather_patch(e, patch, engine.cur, &mut w.counts);
                }
            }
        }
        Ok(StepReport {
            counts: w.counts,
            ..StepReport::default()
        })
    }
}

/// Refines element `e`, then its subtree.
fn refine<'a>(engine: &Engine<'_>, e: &'a Element<'a>, w: &mut Worker) {
    let mut list = engine.begin(e, w);
    while !list.is_empty() {
        engine.visibility(e, &mut list, w);
        list = engine.after_visibility(e, list, w);
    }
    if let Some(children) = e.children() {
        for c in children {
            refine(engine, c, w);
        }
    }
}
