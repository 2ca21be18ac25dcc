//! The run: builds the runtimes with and without places and rayon, then measures the
//! locality variants, the working phase, the shared deque per place and the steal policies.

use std::cell::RefCell;
use std::time::Duration;

use anyhow::Result;
use taskpools::places::{PlacePolicy, Places, Unhinted};
use taskpools::runtime::trace::Trace;
use taskpools::Runtime;

use super::cache_stress::CacheStress;
use super::chain::chain;
use super::matmul::Matmul;
use super::measure::{measure, Config};
use super::mergesort::Mergesort;
use super::spawn::{Hints, Rt};
use super::{Bench, Locality, Params, Record, TRACE_EVENTS};
use crate::report::Progress;

/// A program of section 1, any locality, on any runtime.
fn program_run(
    b: Bench,
    progs: &(CacheStress, RefCell<Mergesort>, RefCell<Matmul>),
    rt: Rt<'_>,
    h: Hints,
) -> Result<()> {
    match b {
        Bench::CacheStress => progs.0.run(rt, h),
        Bench::Mergesort => progs.1.borrow_mut().run(rt, h),
        Bench::Matmul => progs.2.borrow_mut().run(rt, h),
    }
}

/// Builds the runtimes and runs the sections.
pub fn run(p: &Params, progress: &Progress) -> Result<Vec<Record>> {
    let places = p.check()?;
    let threads = places.workers();
    let np = places.len();
    let spec = places.spec().to_string();
    let trace_cap = p.trace.as_ref().map(|_| TRACE_EVENTS);
    let traced = |b: taskpools::RuntimeBuilder| match trace_cap {
        Some(cap) => b.trace(cap),
        None => b,
    };
    let build = |pl: Places, policy: PlacePolicy| -> Result<Runtime> {
        Ok(traced(Runtime::builder().places(pl).place_policy(policy).pin(true)).build()?)
    };
    let on_places = build(places.clone(), PlacePolicy::default())?;
    let plain = traced(Runtime::builder().threads(threads).pin(true)).build()?;
    let mut traces: Option<Vec<(String, Trace)>> = p.trace.as_ref().map(|_| Vec::new());
    let pin = crate::experiments::pinning::pinner(true);
    let rayon = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .start_handler(pin)
        .build()?;

    progress.set_message("preparing the inputs and the sequential results".into());
    let progs = (
        CacheStress::new(p.cache_bytes, p.passes, threads * p.tasks_per_worker),
        RefCell::new(Mergesort::new(p.sort_n, threads * p.sorters_per_worker)),
        RefCell::new(Matmul::new(p.mat_n, p.mat_leaf)),
    );
    let progs = &progs;
    let mut total = p.benches.len() * 6 * p.reps;
    if p.benches.contains(&Bench::CacheStress) {
        total += 6 * p.reps;
    }
    if p.policies {
        total += (3 * 5 + 4 + 4) * p.reps;
    }
    progress.set_length(total as u64);
    let mut records = Vec::new();

    // Section 1: the four locality variants on places, and the ignorant program on the
    // runtime without places and on rayon (where hints mean nothing).
    for &b in &p.benches {
        let bench = b.name();
        let mut cfgs: Vec<Config<'_>> = Vec::new();
        for loc in Locality::ALL {
            let h = Hints {
                places: np,
                loc,
                on: true,
            };
            let rt = Rt::Ours(&on_places);
            cfgs.push(Config {
                section: "locality",
                bench,
                name: format!("places {spec}"),
                loc,
                rt: Some(&on_places),
                cpu_of: None,
                run: Box::new(move || program_run(b, progs, rt, h)),
                is_ref: loc == Locality::Best,
                counts: None,
            });
        }
        let off = Hints {
            places: np,
            loc: Locality::Ignorant,
            on: false,
        };
        for (name, rt, ours) in [
            ("no places", Rt::Ours(&plain), Some(&plain)),
            ("rayon", Rt::Rayon(&rayon), None),
        ] {
            cfgs.push(Config {
                section: "locality",
                bench,
                name: name.to_string(),
                loc: Locality::Ignorant,
                rt: ours,
                cpu_of: None,
                run: Box::new(move || program_run(b, progs, rt, off)),
                is_ref: false,
                counts: None,
            });
        }
        records.extend(measure(cfgs, p.reps, threads, progress, traces.as_mut())?);
    }
    // Section 1b: the Cache Stress Test as a task-pool working phase, its leaves put with
    // hints (`Ctx::put_at`), against the plain phase on the same runtime and on the runtime
    // without places.
    if p.benches.contains(&Bench::CacheStress) {
        let counts: Vec<std::cell::Cell<[u64; 4]>> =
            (0..6).map(|_| std::cell::Cell::new([0; 4])).collect();
        let mut cfgs: Vec<Config<'_>> = Vec::new();
        let cs = &progs.0;
        for (k, loc) in Locality::ALL.into_iter().enumerate() {
            let h = Hints {
                places: np,
                loc,
                on: true,
            };
            let (rt, c) = (&on_places, &counts[k]);
            cfgs.push(Config {
                section: "phase",
                bench: "cache-stress",
                name: format!("places {spec}, hinted phase"),
                loc,
                rt: Some(rt),
                cpu_of: None,
                run: Box::new(move || cs.run_phase(rt, h, true, c)),
                is_ref: loc == Locality::Best,
                counts: Some(c),
            });
        }
        let off = Hints {
            places: np,
            loc: Locality::Ignorant,
            on: false,
        };
        for (k, name, rt) in [
            (4, format!("places {spec}, plain phase"), &on_places),
            (5, "no places, plain phase".to_string(), &plain),
        ] {
            let c = &counts[k];
            cfgs.push(Config {
                section: "phase",
                bench: "cache-stress",
                name,
                loc: Locality::Ignorant,
                rt: Some(rt),
                cpu_of: None,
                run: Box::new(move || cs.run_phase(rt, off, false, c)),
                is_ref: false,
                counts: Some(c),
            });
        }
        records.extend(measure(cfgs, p.reps, threads, progress, traces.as_mut())?);
    }
    if !p.policies {
        write_traces(p, traces)?;
        return Ok(records);
    }

    // Section 2: Weibel's claims. A shared deque per place against one per worker, on the
    // locality-ignorant programs: one place of all workers (`1xW`, one shared deque), one
    // place per worker (`Wx1`), and the runtime without places (per-worker deques).
    let rr = PlacePolicy {
        unhinted: Unhinted::RoundRobin,
        ..PlacePolicy::default()
    };
    let shared = build(Places::uniform(1, threads)?, rr.clone())?;
    let per_worker = build(Places::uniform(threads, 1)?, rr.clone())?;
    let on_places_rr = build(places.clone(), rr.clone())?;
    for b in [Bench::Mergesort, Bench::Matmul, Bench::CacheStress] {
        let mut cfgs: Vec<Config<'_>> = Vec::new();
        let ignorant = Hints {
            places: np,
            loc: Locality::Ignorant,
            on: true,
        };
        for (name, rt, is_ref) in [
            ("no places".to_string(), &plain, true),
            (format!("places {spec} (unhinted local)"), &on_places, false),
            (format!("places {spec} round-robin"), &on_places_rr, false),
            (
                format!("places {threads}x1 round-robin"),
                &per_worker,
                false,
            ),
            (
                format!("places 1x{threads} round-robin (shared)"),
                &shared,
                false,
            ),
        ] {
            cfgs.push(Config {
                section: "claims",
                bench: b.name(),
                name,
                loc: Locality::Ignorant,
                rt: Some(rt),
                cpu_of: None,
                run: Box::new(move || program_run(b, progs, Rt::Ours(rt), ignorant)),
                is_ref,
                counts: None,
            });
        }
        records.extend(measure(cfgs, p.reps, threads, progress, traces.as_mut())?);
    }

    // Section 3: the future work's policies, on the random Cache Stress variant (hinted
    // tasks that often sit at the wrong place) and on a chain of tasks.
    let guarded = PlacePolicy {
        remote_delay: Duration::from_micros(200),
        remote_backlog: 2 * p.tasks_per_worker,
        ..PlacePolicy::default()
    };
    let named = |k: usize, policy: PlacePolicy| -> Result<Runtime> {
        Ok(traced(
            Runtime::builder()
                .places(places.clone())
                .place_policy(policy)
                .pin(true)
                .thread_name(move |i| format!("tp-pol{k}-{i}")),
        )
        .build()?)
    };
    let policies: Vec<(&str, Runtime)> = vec![
        ("default", named(0, PlacePolicy::default())?),
        ("guarded 200us/backlog", named(1, guarded)?),
        (
            "steal-half",
            named(
                2,
                PlacePolicy {
                    steal_half: true,
                    ..PlacePolicy::default()
                },
            )?,
        ),
        (
            "adaptive",
            named(
                3,
                PlacePolicy {
                    adaptive: true,
                    ..PlacePolicy::default()
                },
            )?,
        ),
    ];
    let random = Hints {
        places: np,
        loc: Locality::Random,
        on: true,
    };
    let mut cfgs: Vec<Config<'_>> = Vec::new();
    for (k, (name, rt)) in policies.iter().enumerate() {
        cfgs.push(Config {
            section: "policies",
            bench: "cache-stress",
            name: name.to_string(),
            loc: Locality::Random,
            rt: Some(rt),
            cpu_of: Some(format!("tp-pol{k}-")),
            run: Box::new(move || program_run(Bench::CacheStress, progs, Rt::Ours(rt), random)),
            is_ref: *name == "default",
            counts: None,
        });
    }
    records.extend(measure(cfgs, p.reps, threads, progress, traces.as_mut())?);
    let mut cfgs: Vec<Config<'_>> = Vec::new();
    for (k, (name, rt)) in policies.iter().enumerate() {
        cfgs.push(Config {
            section: "policies",
            bench: "chain",
            name: name.to_string(),
            loc: Locality::Random,
            rt: Some(rt),
            cpu_of: Some(format!("tp-pol{k}-")),
            run: Box::new(move || {
                chain(rt, 4000, Duration::from_micros(20));
                Ok(())
            }),
            is_ref: *name == "default",
            counts: None,
        });
    }
    records.extend(measure(cfgs, p.reps, threads, progress, traces.as_mut())?);
    write_traces(p, traces)?;
    Ok(records)
}

/// Writes the traces of a run (see [`crate::report::trace::write_files`]).
fn write_traces(p: &Params, traces: Option<Vec<(String, Trace)>>) -> Result<()> {
    match (&p.trace, traces) {
        (Some(path), Some(traces)) => crate::report::trace::write_files(path, &traces),
        _ => Ok(()),
    }
}
