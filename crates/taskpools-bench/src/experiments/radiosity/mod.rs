//! Hierarchical radiosity (Hanrahan, Salzman and Aupperle, "A Rapid Hierarchical Radiosity
//! Algorithm", SIGGRAPH 1991), structured as the SPLASH-2 radiosity application (Woo et al.,
//! "The SPLASH-2 Programs", ISCA 1995) that Korch and Rauber (2002) run on their task pools
//! (§7.2, §8.3): the same scene, parameters, refinement oracle and task kinds, in our own
//! Rust code. SPLASH-2's notice allows non-commercial use, copying and modification and
//! forbids redistribution in whole or in part without permission: no line of its code is
//! here, only the scene's coordinates and materials (as data, see [`Scene`]) and its
//! parameter values.
//!
//! # What it computes
//! The diffuse light in a scene of triangles: every patch is the root of a quadtree of
//! elements; interactions (receiver ← source) carry a form factor `F` (point-to-disc estimate,
//! [`geometry`]) and a visibility `V` (the fraction of 10 test rays that no patch blocks, cast
//! through a BSP tree of the patches, [`bsp`]). Each iteration refines every interaction whose
//! error `B·F` exceeds `bf_epsilon` by subdividing the larger of its two elements (none below
//! `area_epsilon`), then every element gathers `ρ·Σ F·V·B` and push–pull makes the hierarchy
//! consistent; iterations stop when the total energy `Σ B·A` changes by at most
//! `energy_tolerance` (relative). The [`Outcome`] counts what SPLASH-2's statistics count for
//! the final mesh: interactions, those with `V > 0` ("completely + partially visible", Korch and
//! Rauber's score is these per second), and elements; and, for the curious, the completely
//! visible ones, visibility tests and rays over the whole run.
//!
//! # Scenes
//! `largeroom` is SPLASH-2's input of that name (model data courtesy of Pat Hanrahan, shipped
//! with SPLASH-2; transcribed as data into `largeroom.txt`): a room of 1 694 × 1 600 × 3 402
//! units with tables, chairs, shelves, a blackboard and ceiling lights, 506 triangles before
//! the BSP build. `small` is ours, a furnished box for tests. See [`Scene`].
//!
//! # Parameters
//! [`Settings::default`] has SPLASH-2's defaults (Korch and Rauber name no others): BF
//! epsilon 0.015, area epsilon 2000, energy tolerance 0.005, 10 visibility rays, refinement
//! as a task from 5 interactions on (`N_inter_parallel_bf_refine`), 4 visibility tests per
//! task (`N_visibility_per_task`), and a worker solves at once what it would queue when its
//! queue holds 200 tasks (`n_tasks_per_queue`).
//!
//! # Task kinds ([`solve_tasks`])
//! One working phase per barrier-separated step of SPLASH-2, each on any task pool:
//! - `Link(patch)` (SPLASH-2's `TASK_FF_REFINEMENT` at patch level): the initial interactions
//!   of a patch with every patch it faces. One phase.
//! - `Refine(element)` (the refinement half of `TASK_RAY`): re-examine an element's
//!   interactions, subdivide, test the new ones' visibility, then refine the children — as
//!   tasks of their own (class D_H: children are created by the running task) when they hold
//!   at least `refine_task_min` interactions and the worker's queue is not full, else at once.
//! - `Visibility(element, chunk)` (`TASK_VISIBILITY`): the visibility of `visibility_per_task`
//!   of an element's new interactions, when it has at least two such chunks; the last chunk to
//!   finish continues the element's refinement (SPLASH-2's continuation).
//! - `Gather(patch)` (the gathering half of `TASK_RAY`, and push–pull): one patch tree.
//!
//! Per iteration, a refinement phase then a gather phase. The BSP build stays sequential, as
//! in the paper, and outside the timed part (it is [`Scene::by_name`]'s). SPLASH-2's
//! `TASK_RAD_AVERAGE` (vertex radiosities for display) is not done: nothing here displays.
//!
//! [`solve_forkjoin`] runs the same steps as the recursion they are, with `join` on a
//! [`taskpools::Runtime`] (patches in halves, heavy children in parallel, visibility rounds in
//! halves): the Cilk model's version of the same algorithm, for comparison.
//!
//! # Sequential and parallel results
//! SPLASH-2's counts vary with task order (about 1 %) because a task reads radiosities that
//! others are updating. Here radiosity is double-buffered and an element's lists are touched
//! only by its own task (see [`element`]), so every decision and every sum is the same in any
//! order: [`solve_tasks`] on any pool and thread count, and [`solve_forkjoin`], give exactly
//! the counts and radiosities of [`solve_sequential`], which [`check_identical`] holds them
//! to; [`check`] alone allows the tolerances of an order-dependent solver.
//!
//! # What largeroom gives
//! 532 patches after the BSP build (Korch and Rauber: 532), 8 iterations (5 to 8; SPLASH-2's
//! printed count is one more than the passes it runs, as its final convergence check counts
//! too), 243 514 interactions (about 240 000) and 21 116 elements (about 21 000). Of the
//! interactions, 194 085 are visible: 109 139 completely and 84 946 partly. 1.5 s
//! sequentially in release on the workbench's machine.
//!
//! Korch and Rauber report about 89 000 visible, and that gap is not explained by how
//! visibility is computed or counted. Our query agrees with brute-force ray–triangle tests.
//! A trial build that followed SPLASH-2's visibility rules instead of ours gave 183 975
//! visible of 238 346 interactions (77 %). Those rules: its sample-point pairs; a ray that
//! counts only when the walk up from the receiver's BSP node reaches the source's node; blockers
//! tested up to 1 % of the segment beyond both ends; a ray parallel to a plane and within
//! `COPLANAR` (0.05 units) of it counted as blocked; and that walk's narrowing of the range
//! past each ancestor's crossing, which lets about 3 % of blocked rays through (the
//! per-processor patch cache catches some of them, depending on task order, which may be
//! the 1.2 % run-to-run spread Korch and Rauber see in the visible count at a fixed mesh).
//! SPLASH-2's statistics classify, as ours do, the final interaction lists of all elements
//! by `V = 0`, `V = 1` or between. And the mesh follows the visibility: forcing `V = 0` on
//! 30 % of the tested interactions left 147 000 interactions, 12 300 elements and 48 %
//! visible, so a run with 37 % visible would not also give 240 000 interactions and 21 000
//! elements. The nearest count that SPLASH-2 prints is the completely visible one: ours is
//! 109 139, and under SPLASH-2's rules 96 401.
//!
//! # Where this departs from SPLASH-2
//! Iterations are Jacobi steps (all of an iteration reads the last iteration's radiosities)
//! where SPLASH-2 lets tasks see radiosities updated in the same iteration; largeroom still
//! converges in 8. Initial links are made in a phase of their own, after the BSP build, where
//! SPLASH-2 makes them as each patch enters the tree (the same pairs: every two patches that
//! face each other). Split points of the BSP build are computed for each triangle where
//! SPLASH-2 shares them between the triangles of a common edge (the same points up to
//! rounding). Visibility rays ignore blockers within 0.1 % of the segment's
//! length from its ends (the end points lie on the two surfaces). A `Visibility` round is
//! split into tasks only when it makes at least two chunks. The sample points of the test rays
//! are ours (centroids of a 4 × 4 subdivision, on SPLASH-2's twelfths lattice).

mod bsp;
mod chart;
mod command;
mod element;
mod forkjoin;
mod gather;
mod geometry;
mod refine;
mod run;
mod scene;
mod sequential;
mod table;
mod tasks;
#[cfg(test)]
mod tests;

pub use command::{exec, run_and_emit, RadiosityArgs};
pub use forkjoin::solve_forkjoin;
pub use run::{Params, Record, CEILING, FORK_JOIN};
pub use scene::Scene;
pub use sequential::solve_sequential;
pub use tasks::solve_tasks;

use element::Element;
use refine::{Budget, Counters, Engine, MAX_RAYS};

/// The solver's parameters. [`Default`] is SPLASH-2's defaults (see the module docs).
#[derive(Clone, Debug)]
pub struct Settings {
    /// Refine an interaction whose estimated error `B·F` exceeds this.
    pub bf_epsilon: f64,
    /// Never subdivide an element of this area or less (scene units²).
    pub area_epsilon: f64,
    /// Stop when the total energy changes by at most this fraction from one iteration to the
    /// next.
    pub energy_tolerance: f64,
    /// Stop after this many iterations in any case.
    pub max_iterations: u32,
    /// Make at most about this many interactions by subdivision over the whole solve; a
    /// solve that would make more stops refining and is [`Outcome::truncated`] (a small BF
    /// epsilon makes interactions grow with the square of the elements).
    pub max_interactions: u64,
    /// Test rays per interaction, 1 to 16.
    pub rays: usize,
    /// Refine a child element as a task of its own when it holds at least this many
    /// interactions (SPLASH-2's `N_inter_parallel_bf_refine`); below, at once.
    pub refine_task_min: usize,
    /// Visibility tests per `Visibility` task (SPLASH-2's `N_visibility_per_task`).
    pub visibility_per_task: usize,
    /// A worker whose own queue holds this many tasks runs new work at once instead of
    /// queueing it (SPLASH-2's `n_tasks_per_queue`).
    pub queue_limit: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            bf_epsilon: 0.015,
            area_epsilon: 2000.0,
            energy_tolerance: 0.005,
            max_iterations: 100,
            max_interactions: 10_000_000,
            rays: 10,
            refine_task_min: 5,
            visibility_per_task: 4,
            queue_limit: 200,
        }
    }
}

impl Settings {
    /// Checks the values: a clear one-line error for the first that cannot work.
    pub fn validate(&self) -> anyhow::Result<()> {
        let finite_nonneg = |v: f64| v.is_finite() && v >= 0.0;
        if !finite_nonneg(self.bf_epsilon) {
            anyhow::bail!("BF epsilon must be a number >= 0, not {}", self.bf_epsilon);
        }
        if !finite_nonneg(self.area_epsilon) {
            anyhow::bail!(
                "area epsilon must be a number >= 0, not {}",
                self.area_epsilon
            );
        }
        if !finite_nonneg(self.energy_tolerance) {
            anyhow::bail!(
                "energy tolerance must be a number >= 0, not {}",
                self.energy_tolerance
            );
        }
        if self.max_interactions < 4 {
            anyhow::bail!("the interaction bound must be at least 4 (one subdivision)");
        }
        if self.max_iterations == 0 {
            anyhow::bail!("at least 1 iteration is needed");
        }
        if !(1..=MAX_RAYS).contains(&self.rays) {
            anyhow::bail!(
                "rays per interaction must be 1 to {MAX_RAYS}, not {}",
                self.rays
            );
        }
        if self.visibility_per_task == 0 {
            anyhow::bail!("visibility tests per task must be at least 1");
        }
        Ok(())
    }
}

/// What a solve produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Iterations run.
    pub iterations: u32,
    /// Interactions of the final mesh (SPLASH-2's "total number of interactions").
    pub interactions: u64,
    /// Of those, completely or partially visible (`V > 0`).
    pub visible: u64,
    /// Elements of the final mesh, roots included.
    pub elements: u64,
    /// Total energy `Σ B·A` over the patches, `B` the mean of the RGB radiosities.
    pub energy: f64,
    /// Final radiosity of each patch (mean of RGB), in patch order.
    pub patch_radiosity: Vec<f64>,
    /// Tasks run, over all phases (0 for the sequential driver).
    pub tasks: u64,
    /// Steals, over all phases (0 for the sequential driver).
    pub steals: u64,
    /// Of the visible interactions, the completely visible ones (`V = 1`).
    pub fully_visible: u64,
    /// Visibility tests (interactions whose visibility was computed), over all iterations.
    pub visibility_tests: u64,
    /// Rays cast through the BSP tree, over all iterations.
    pub rays: u64,
    /// Subdivision decisions over the whole solve (what [`Settings::max_interactions`]
    /// bounds, four interactions each).
    pub subdivisions: u64,
    /// The solve stopped early because refinement would have made more than
    /// [`Settings::max_interactions`]: its counts and radiosities are not a solution.
    pub truncated: bool,
}

/// Relative tolerance of [`check`] on each patch's radiosity, of the larger of the patch's
/// value and the mean patch radiosity (so that dark patches are not held to a relative
/// precision of their own).
pub const PATCH_TOLERANCE: f64 = 1.0e-3;

/// Compares a run with a reference run of the same scene and settings: interactions, visible
/// interactions and elements within 2 %, total energy within 1e-3 (relative), every patch's
/// radiosity within [`PATCH_TOLERANCE`]. The error says which failed and by how much.
pub fn check(reference: &Outcome, got: &Outcome) -> Result<(), String> {
    if reference.truncated || got.truncated {
        return Err("a solve stopped at the interaction bound".into());
    }
    let count = |what: &str, r: u64, g: u64| {
        let off = (g as f64 - r as f64).abs() / (r as f64).max(1.0);
        if off > 0.02 {
            Err(format!(
                "{what}: {g} against {r} ({:.2} % off, 2 % allowed)",
                off * 100.0
            ))
        } else {
            Ok(())
        }
    };
    count("interactions", reference.interactions, got.interactions)?;
    count("visible interactions", reference.visible, got.visible)?;
    count("elements", reference.elements, got.elements)?;
    let off = (got.energy - reference.energy).abs() / reference.energy.abs().max(f64::MIN_POSITIVE);
    if off > 1e-3 {
        return Err(format!(
            "energy: {} against {} (relative difference {off:.2e}, 1e-3 allowed)",
            got.energy, reference.energy
        ));
    }
    let (r, g) = (&reference.patch_radiosity, &got.patch_radiosity);
    if r.len() != g.len() {
        return Err(format!("patches: {} against {}", g.len(), r.len()));
    }
    let mean = r.iter().sum::<f64>() / r.len().max(1) as f64;
    for (i, (a, b)) in r.iter().zip(g).enumerate() {
        let scale = a.abs().max(mean.abs()).max(f64::MIN_POSITIVE);
        if (a - b).abs() > PATCH_TOLERANCE * scale {
            return Err(format!(
                "radiosity of patch {i}: {b} against {a} (relative difference {:.2e}, {PATCH_TOLERANCE:e} allowed)",
                (a - b).abs() / scale
            ));
        }
    }
    Ok(())
}

/// [`check`], then what this solver promises beyond it: since no decision and no sum depends
/// on the task order, the same iterations and counts and bit-identical radiosities as the
/// reference. A run that passes [`check`] but not this one has lost its determinism.
pub fn check_identical(reference: &Outcome, got: &Outcome) -> Result<(), String> {
    check(reference, got)?;
    let pairs = [
        (
            "iterations",
            u64::from(reference.iterations),
            u64::from(got.iterations),
        ),
        ("interactions", reference.interactions, got.interactions),
        ("visible interactions", reference.visible, got.visible),
        (
            "completely visible interactions",
            reference.fully_visible,
            got.fully_visible,
        ),
        ("elements", reference.elements, got.elements),
        ("subdivisions", reference.subdivisions, got.subdivisions),
    ];
    for (what, r, g) in pairs {
        if r != g {
            return Err(format!(
                "{what}: {g} against {r} (the solver gives the same in any order)"
            ));
        }
    }
    let (r, g) = (&reference.patch_radiosity, &got.patch_radiosity);
    if let Some(i) = (0..r.len()).find(|&i| r[i].to_bits() != g[i].to_bits()) {
        return Err(format!(
            "radiosity of patch {i}: {} against {} (the solver gives bit-identical radiosities in any order)",
            g[i], r[i]
        ));
    }
    Ok(())
}

/// The steps of an iteration a driver runs, each a working phase of its own in the task
/// driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Link,
    Refine,
    Gather,
}

/// What one step did.
#[derive(Clone, Debug, Default)]
pub(crate) struct StepReport {
    pub counts: Counters,
    pub tasks: u64,
    pub steals: u64,
}

/// Runs the steps of a solve: sequentially, or as working phases.
pub(crate) trait Driver {
    type Error;
    fn step<'a>(
        &mut self,
        step: Step,
        engine: Engine<'_>,
        roots: &'a [Element<'a>],
    ) -> Result<StepReport, Self::Error>;
}

/// The solve, with the steps run by `driver`: links, then refinement and gathering per
/// iteration until the energy settles.
pub(crate) fn solve_with<D: Driver>(
    scene: &Scene,
    s: &Settings,
    driver: &mut D,
) -> Result<Outcome, D::Error> {
    if let Err(e) = s.validate() {
        panic!("radiosity settings: {e}");
    }
    let patches = &scene.bsp.patches;
    let roots: Vec<Element<'_>> = patches
        .iter()
        .enumerate()
        .map(|(i, p)| Element::root(i as u32, p))
        .collect();
    let roots = &roots[..];
    let budget = Budget::new(s.max_interactions);
    let mut engine = Engine {
        patches,
        bsp: &scene.bsp,
        settings: s,
        budget: &budget,
        cur: 0,
    };
    let mut total = StepReport::default();
    let add = |total: &mut StepReport, r: &StepReport| {
        total.counts += &r.counts;
        total.tasks += r.tasks;
        total.steals += r.steals;
    };
    let r = driver.step(Step::Link, engine, roots)?;
    add(&mut total, &r);
    let (mut iterations, mut previous) = (0, 0.0);
    let mut last = Counters::default();
    let energy = |buf: usize| -> f64 { roots.iter().map(|e| e.rad_mean(buf) * e.area).sum() };
    loop {
        let r = driver.step(Step::Refine, engine, roots)?;
        add(&mut total, &r);
        if budget.exhausted() {
            break;
        }
        let r = driver.step(Step::Gather, engine, roots)?;
        add(&mut total, &r);
        last = r.counts;
        engine.cur = 1 - engine.cur;
        iterations += 1;
        let now = energy(engine.cur);
        // SPLASH-2's test (relative change, 1e-4 keeping the first from dividing by 0), and
        // no change at all (a scene without light).
        let change = (now / (previous + 1e-4) - 1.0).abs();
        if change <= s.energy_tolerance || now == previous || iterations >= s.max_iterations {
            break;
        }
        previous = now;
    }
    Ok(Outcome {
        truncated: budget.exhausted(),
        subdivisions: total.counts.subdivisions,
        iterations,
        interactions: last.interactions,
        visible: last.visible,
        elements: roots.len() as u64 + total.counts.elements,
        energy: energy(engine.cur),
        patch_radiosity: roots.iter().map(|e| e.rad_mean(engine.cur)).collect(),
        tasks: total.tasks,
        steals: total.steals,
        fully_visible: last.fully_visible,
        visibility_tests: total.counts.visibility_tests,
        rays: total.counts.rays,
    })
}
