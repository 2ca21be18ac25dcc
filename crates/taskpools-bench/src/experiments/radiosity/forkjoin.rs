//! The fork-join driver: the steps of [`solve_tasks`](super::solve_tasks) written as the
//! recursion they are, with [`taskpools::forkjoin::join`] on a [`Runtime`]'s workers (the Cilk
//! model): patches split in halves, an element's heavy children (at least `refine_task_min`
//! interactions) refined in parallel, a visibility round of at least two chunks split in
//! halves down to `visibility_per_task`. A join's second half becomes a task only when a
//! thief wants it (the runtime's lazy splitting), so no queue-length cutoff is needed.

use std::convert::Infallible;

use taskpools::forkjoin::join;
use taskpools::Runtime;

use super::element::{Element, Interaction};
use super::gather::gather_patch;
use super::refine::{Engine, Worker};
use super::{solve_with, Driver, Outcome, Scene, Settings, Step, StepReport};

/// Solves `scene` with fork-join on `rt`'s workers: the same result as
/// [`solve_sequential`](super::solve_sequential). [`Outcome::tasks`] counts the joins (each
/// offers its second half to thieves), [`Outcome::steals`] the runtime's steals meanwhile.
///
/// Panics if `s` does not pass [`Settings::validate`].
pub fn solve_forkjoin(scene: &Scene, s: &Settings, rt: &Runtime) -> Outcome {
    let steals = || rt.worker_counters().iter().map(|c| c.steals).sum::<u64>();
    let before = steals();
    let mut out = match solve_with(scene, s, &mut ForkJoin { rt }) {
        Ok(out) => out,
        Err(never) => match never {},
    };
    out.steals = steals() - before;
    out
}

struct ForkJoin<'r> {
    rt: &'r Runtime,
}

impl Driver for ForkJoin<'_> {
    type Error = Infallible;

    fn step<'a>(
        &mut self,
        step: Step,
        engine: Engine<'_>,
        roots: &'a [Element<'a>],
    ) -> Result<StepReport, Infallible> {
        let (w, joins) = self.rt.install(|| {
            let mut w = Worker::default();
            let each = |e: &'a Element<'a>, w: &mut Worker| match step {
                Step::Link => {
                    engine.link(roots, e.patch as usize);
                    0
                }
                Step::Refine => refine(&engine, e, w),
                Step::Gather => {
                    let patch = &engine.patches[e.patch as usize];
                    gather_patch(e, patch, engine.cur, &mut w.counts);
                    0
                }
            };
            let items: Vec<&'a Element<'a>> = roots.iter().collect();
            let joins = for_each(&items, &mut w, &each);
            (w, joins)
        });
        Ok(StepReport {
            counts: w.counts,
            tasks: joins,
            steals: 0,
        })
    }
}

/// Runs `f` on every element of `items`, splitting the slice in halves with `join`; returns
/// the joins made (here and by `f`). A second half runs with a worker state of its own, whose
/// counts (and unused share of the budget) are merged back when it is done.
fn for_each<'a>(
    items: &[&'a Element<'a>],
    w: &mut Worker,
    f: &(dyn Fn(&'a Element<'a>, &mut Worker) -> u64 + Sync),
) -> u64 {
    match items {
        [] => 0,
        [one] => f(one, w),
        _ => {
            let (a, b) = items.split_at(items.len() / 2);
            let (ja, (jb, wb)) = join(
                || for_each(a, w, f),
                || {
                    let mut wb = Worker::default();
                    (for_each(b, &mut wb, f), wb)
                },
            );
            w.absorb(wb);
            1 + ja + jb
        }
    }
}

/// Refines `e` and its subtree; returns the joins made.
fn refine<'a>(engine: &Engine<'_>, e: &'a Element<'a>, w: &mut Worker) -> u64 {
    let mut joins = 0;
    let mut list = engine.begin(e, w);
    while !list.is_empty() {
        joins += visibility(engine, e, &mut list, w);
        list = engine.after_visibility(e, list, w);
    }
    let Some(children) = e.children() else {
        return joins;
    };
    let min = engine.settings.refine_task_min;
    let mut heavy = Vec::with_capacity(4);
    for c in children {
        if c.interaction_count() >= min {
            heavy.push(c);
        } else {
            joins += refine(engine, c, w);
        }
    }
    joins + for_each(&heavy, w, &|c, w| refine(engine, c, w))
}

/// Tests the visibility of `list`, in halves with `join` while at least two chunks of
/// `visibility_per_task` remain; returns the joins made.
fn visibility(
    engine: &Engine<'_>,
    e: &Element<'_>,
    list: &mut [Interaction<'_>],
    w: &mut Worker,
) -> u64 {
    let per = engine.settings.visibility_per_task;
    if list.len() < 2 * per {
        engine.visibility(e, list, w);
        return 0;
    }
    let mid = list.len() / per / 2 * per;
    let (a, b) = list.split_at_mut(mid);
    let (ja, (jb, wb)) = join(
        || visibility(engine, e, a, w),
        || {
            let mut wb = Worker::default();
            (visibility(engine, e, b, &mut wb), wb)
        },
    );
    w.absorb(wb);
    1 + ja + jb
}
