//! The task driver: each step of an iteration is one working phase of a [`taskpools::Builder`]
//! on any pool, with the task kinds described in the module docs (`Link`, `Refine`,
//! `Visibility`, `Gather`). Counters live in each worker's state; nothing shared is counted.

use std::sync::{Arc, Mutex};

use taskpools::{Builder, Ctx, Task};

use super::element::{Element, Interaction};
use super::gather::gather_patch;
use super::refine::{Engine, Worker};
use super::{solve_with, Driver, Outcome, Scene, Settings, Step, StepReport};

/// Solves `scene` with tasks on the pool, threads, memory manager and wake-up policy of `b`,
/// one working phase per step (links; per iteration refinement, then gathering). Same result
/// as [`solve_sequential`](super::solve_sequential), whatever the pool and thread count;
/// [`Outcome::tasks`] and [`Outcome::steals`] sum the phases' reports.
///
/// Panics if `s` does not pass [`Settings::validate`].
pub fn solve_tasks(
    scene: &Scene,
    s: &Settings,
    b: &Builder<'_>,
) -> Result<Outcome, taskpools::Error> {
    solve_with(scene, s, &mut Pooled { builder: b })
}

struct Pooled<'b, 'rt> {
    builder: &'b Builder<'rt>,
}

impl Driver for Pooled<'_, '_> {
    type Error = taskpools::Error;

    fn step<'a>(
        &mut self,
        step: Step,
        engine: Engine<'_>,
        roots: &'a [Element<'a>],
    ) -> Result<StepReport, taskpools::Error> {
        let jobs: Vec<Job<'a>> = match step {
            Step::Link => (0..roots.len()).map(Job::Link).collect(),
            Step::Refine => roots.iter().map(Job::Refine).collect(),
            Step::Gather => (0..roots.len()).map(Job::Gather).collect(),
        };
        let init = |_| Local {
            engine,
            roots,
            w: Worker::default(),
        };
        let (report, locals) = self.builder.run_with(init, jobs)?;
        let mut out = StepReport {
            tasks: report.tasks_run(),
            steals: report.total().steals,
            ..StepReport::default()
        };
        for l in &locals {
            out.counts += &l.w.counts;
        }
        Ok(out)
    }
}

/// A worker's state in a phase: what every task reads, and the worker's own counters.
struct Local<'s, 'a> {
    engine: Engine<'s>,
    roots: &'a [Element<'a>],
    w: Worker,
}

/// The tasks (see the module docs).
enum Job<'a> {
    /// The initial links of a patch.
    Link(usize),
    /// Refine an element, then its subtree.
    Refine(&'a Element<'a>),
    /// Test the visibility of a chunk of an element's new interactions.
    Visibility(Chunk<'a>),
    /// Gather and push–pull a patch tree.
    Gather(usize),
}

/// Part `index` of an element's new interactions, and where the parts meet.
struct Chunk<'a> {
    e: &'a Element<'a>,
    index: usize,
    list: Vec<Interaction<'a>>,
    join: Arc<Join<'a>>,
}

/// Collects the chunks of one visibility round; the last one in gets them all back, in order.
struct Join<'a> {
    parts: Mutex<(usize, Vec<Vec<Interaction<'a>>>)>,
}

impl<'a> Join<'a> {
    fn new(n: usize) -> Self {
        Join {
            parts: Mutex::new((n, vec![Vec::new(); n])),
        }
    }

    /// Deposits part `index`; returns all parts joined if it was the last.
    fn finish(&self, index: usize, part: Vec<Interaction<'a>>) -> Option<Vec<Interaction<'a>>> {
        let mut g = self.parts.lock().unwrap_or_else(|e| e.into_inner());
        g.1[index] = part;
        g.0 -= 1;
        (g.0 == 0).then(|| std::mem::take(&mut g.1).concat())
    }
}

impl<'s, 'a> Task<Local<'s, 'a>> for Job<'a> {
    fn run(self, ctx: &mut Ctx<'_, Self, Local<'s, 'a>>) {
        match self {
            Job::Link(p) => {
                let l = ctx.local();
                l.engine.link(l.roots, p);
            }
            Job::Refine(e) => refine(e, ctx),
            Job::Visibility(mut c) => {
                let l = ctx.local();
                l.engine.visibility(c.e, &mut c.list, &mut l.w);
                if let Some(list) = c.join.finish(c.index, c.list) {
                    let next = l.engine.after_visibility(c.e, list, &mut l.w);
                    proceed(c.e, next, ctx);
                }
            }
            Job::Gather(p) => {
                let l = ctx.local();
                let patch = &l.engine.patches[p];
                gather_patch(&l.roots[p], patch, l.engine.cur, &mut l.w.counts);
            }
        }
    }
}

/// Refines `e` on this worker: its first round, then [`proceed`].
fn refine<'s, 'a>(e: &'a Element<'a>, ctx: &mut Ctx<'_, Job<'a>, Local<'s, 'a>>) {
    let l = ctx.local();
    let list = l.engine.begin(e, &mut l.w);
    proceed(e, list, ctx);
}

/// Continues `e`'s refinement with `list`, its new interactions: their visibility in chunk
/// tasks when there are at least two chunks and room in the queue (the last chunk continues),
/// else here; once nothing is new, the children.
fn proceed<'s, 'a>(
    e: &'a Element<'a>,
    mut list: Vec<Interaction<'a>>,
    ctx: &mut Ctx<'_, Job<'a>, Local<'s, 'a>>,
) {
    let s = ctx.local().engine.settings;
    let (per, limit) = (s.visibility_per_task, s.queue_limit);
    while !list.is_empty() {
        if list.len() >= 2 * per && ctx.queued() < limit {
            let parts: Vec<_> = list.chunks(per).map(<[_]>::to_vec).collect();
            let join = Arc::new(Join::new(parts.len()));
            for (index, list) in parts.into_iter().enumerate() {
                let join = Arc::clone(&join);
                ctx.put(Job::Visibility(Chunk {
                    e,
                    index,
                    list,
                    join,
                }));
            }
            return;
        }
        // Here, a chunk at a time: reading `queued()` between chunks lets the owner of a
        // `private-deque` answer thieves during a long round.
        for piece in list.chunks_mut(per) {
            let l = ctx.local();
            l.engine.visibility(e, piece, &mut l.w);
            ctx.queued();
        }
        let l = ctx.local();
        list = l.engine.after_visibility(e, list, &mut l.w);
    }
    let Some(children) = e.children() else {
        return;
    };
    let min = s.refine_task_min;
    for c in children {
        if c.interaction_count() >= min && ctx.queued() < limit {
            ctx.put(Job::Refine(c));
        } else {
            refine(c, ctx);
        }
    }
}
