//! Tests of the radiosity solver: the scenes, the settings, `check`, and every pool against
//! the sequential run; the geometry kernels in `kernels`; the measurement for the report
//! (ignored) in `measure`.

mod kernels;
mod measure;

use super::*;

#[test]
fn scenes_by_name() {
    let large = Scene::by_name("largeroom").unwrap();
    assert_eq!((large.input_triangles(), large.patches()), (506, 532));
    assert_eq!(large.name(), "largeroom");
    let small = Scene::by_name("small").unwrap();
    assert_eq!(small.input_triangles(), 22);
    assert!(
        small.patches() > 22,
        "the partition and table cut walls: {}",
        small.patches()
    );
    let err = Scene::by_name("hall").unwrap_err().to_string();
    assert_eq!(
        err,
        "no scene named \"hall\": choose one of largeroom, small"
    );
    assert_eq!(Scene::NAMES, ["largeroom", "small"]);
}

#[test]
fn settings_are_validated() {
    let s = Settings::default();
    assert_eq!(
        (s.bf_epsilon, s.area_epsilon, s.energy_tolerance, s.rays),
        (0.015, 2000.0, 0.005, 10)
    );
    assert!(s.validate().is_ok());
    for (bad, what) in [
        (
            Settings {
                rays: 0,
                ..s.clone()
            },
            "rays",
        ),
        (
            Settings {
                rays: 17,
                ..s.clone()
            },
            "rays",
        ),
        (
            Settings {
                bf_epsilon: f64::NAN,
                ..s.clone()
            },
            "BF epsilon",
        ),
        (
            Settings {
                area_epsilon: -1.0,
                ..s.clone()
            },
            "area epsilon",
        ),
        (
            Settings {
                energy_tolerance: f64::INFINITY,
                ..s.clone()
            },
            "energy tolerance",
        ),
        (
            Settings {
                max_iterations: 0,
                ..s.clone()
            },
            "iteration",
        ),
        (
            Settings {
                visibility_per_task: 0,
                ..s.clone()
            },
            "visibility tests",
        ),
    ] {
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains(what), "{e}");
    }
}

/// Settings for tests on "small": a few thousand interactions.
fn small_settings() -> Settings {
    Settings {
        bf_epsilon: 0.2,
        ..Settings::default()
    }
}

#[test]
fn sequential_is_rerunnable_and_deterministic() {
    let scene = Scene::by_name("small").unwrap();
    let a = solve_sequential(&scene, &small_settings());
    let b = solve_sequential(&scene, &small_settings());
    assert_eq!(check(&a, &b), Ok(()));
    assert_eq!(
        (a.interactions, a.visible, a.elements),
        (b.interactions, b.visible, b.elements)
    );
    assert_eq!(a.patch_radiosity, b.patch_radiosity);
    assert!(a.iterations >= 2 && a.iterations < 100);
    assert!(a.elements > scene.patches() as u64, "it refines");
    assert!(
        a.visible < a.interactions,
        "the table and the partition block some"
    );
    assert!(a.fully_visible < a.visible, "and some partly");
}

/// Without light nothing changes: one iteration, no refinement, energy 0.
#[test]
fn a_dark_scene_stops() {
    let v = |x, y, z| geometry::Vec3::new(x, y, z);
    let quad = |p: [geometry::Vec3; 3]| scene::Polygon {
        parallelogram: true,
        p,
        color: [0.5; 3],
        emit: [0.0; 3],
    };
    let scene = Scene::from_polygons(
        "dark",
        &[
            quad([v(0.0, 0.0, 0.0), v(100.0, 0.0, 0.0), v(0.0, 0.0, -100.0)]),
            quad([
                v(0.0, 50.0, -100.0),
                v(100.0, 50.0, -100.0),
                v(0.0, 50.0, 0.0),
            ]),
        ],
    );
    let out = solve_sequential(&scene, &Settings::default());
    assert_eq!((out.iterations, out.energy), (1, 0.0));
    assert_eq!(out.elements, scene.patches() as u64);
    assert_eq!(
        out.interactions, 8,
        "each of the 4 triangles sees the 2 of the other quad"
    );
}

#[test]
fn check_reports_each_difference() {
    let scene = Scene::by_name("small").unwrap();
    let r = solve_sequential(&scene, &small_settings());
    assert_eq!(check(&r, &r), Ok(()));
    let fails = |f: &dyn Fn(&mut Outcome), what: &str| {
        let mut g = r.clone();
        f(&mut g);
        let e = check(&r, &g).unwrap_err();
        assert!(e.starts_with(what), "{e}");
    };
    fails(
        &|g| g.interactions = r.interactions * 103 / 100,
        "interactions",
    );
    fails(
        &|g| g.visible = r.visible * 97 / 100,
        "visible interactions",
    );
    fails(&|g| g.elements = r.elements * 103 / 100, "elements");
    fails(&|g| g.energy = r.energy * 1.002, "energy");
    fails(
        &|g| g.patch_radiosity[3] = r.patch_radiosity[3] * 1.5 + 1.0,
        "radiosity of patch 3",
    );
    fails(
        &|g| g.patch_radiosity.pop().map(drop).unwrap_or(()),
        "patches",
    );
    // Within the tolerances: 1 % more interactions, energy 1e-4 off.
    let mut g = r.clone();
    g.interactions = r.interactions * 101 / 100;
    g.energy = r.energy * (1.0 + 1e-4);
    assert_eq!(check(&r, &g), Ok(()));
    // ... but not identical, which is what this solver gives in any order.
    let e = check_identical(&r, &g).unwrap_err();
    assert!(e.starts_with("interactions"), "{e}");
    assert_eq!(check_identical(&r, &r), Ok(()));
    let differs = |f: &dyn Fn(&mut Outcome), what: &str| {
        let mut g = r.clone();
        f(&mut g);
        assert_eq!(check(&r, &g), Ok(()), "{what} passes the tolerant check");
        let e = check_identical(&r, &g).unwrap_err();
        assert!(e.starts_with(what), "{e}");
    };
    differs(&|g| g.iterations += 1, "iterations");
    differs(&|g| g.fully_visible -= 1, "completely visible");
    differs(
        &|g| g.patch_radiosity[5] = f64::from_bits(r.patch_radiosity[5].to_bits() + 1),
        "radiosity of patch 5",
    );
}

/// The interaction bound is exact and the same for every driver: a bound of exactly the
/// subdivisions a solve needs lets every driver finish; one fewer stops every driver early,
/// which every check then refuses (the command refuses such a run: tests/cli_radiosity.rs).
#[test]
fn the_interaction_bound_is_the_same_for_every_driver() {
    use taskpools::{Builder, PoolKind, Runtime};
    let scene = Scene::by_name("small").unwrap();
    let r = solve_sequential(&scene, &small_settings());
    assert!(!r.truncated);
    assert!(r.subdivisions > 100, "{}", r.subdivisions);
    let rt = Runtime::new(3).unwrap();
    for (need, truncated) in [(r.subdivisions, false), (r.subdivisions - 1, true)] {
        let s = Settings {
            max_interactions: 4 * need,
            ..small_settings()
        };
        let seq = solve_sequential(&scene, &s);
        assert_eq!(seq.truncated, truncated, "sequential, bound {need}");
        for pool in [PoolKind::StealWorkingEnd, PoolKind::CentralFifo] {
            let b = Builder::new().runtime(&rt).threads(3).pool(pool);
            let t = solve_tasks(&scene, &s, &b).unwrap();
            assert_eq!(t.truncated, truncated, "{pool}, bound {need}");
        }
        let fj = solve_forkjoin(&scene, &s, &rt);
        assert_eq!(fj.truncated, truncated, "fork-join, bound {need}");
        if truncated {
            assert!(check(&r, &seq).unwrap_err().contains("interaction bound"));
            assert!(seq.elements <= r.elements);
        } else {
            assert_eq!(check_identical(&r, &seq), Ok(()));
            assert_eq!(check_identical(&r, &fj), Ok(()));
        }
    }
}

/// The small scene on every pool at 1, 2 and 3 threads: the same result as the sequential
/// driver (exactly: the solver does not depend on task order), through every task kind.
#[test]
fn every_pool_matches_sequential() {
    use taskpools::{Builder, PoolKind, Runtime};
    let scene = Scene::by_name("small").unwrap();
    let s = small_settings();
    let reference = solve_sequential(&scene, &s);
    let rt = Runtime::new(3).unwrap();
    for pool in PoolKind::ALL {
        for threads in [1, 2, 3] {
            let b = Builder::new().runtime(&rt).threads(threads).pool(pool);
            let out = solve_tasks(&scene, &s, &b).unwrap();
            if let Err(e) = check(&reference, &out) {
                panic!("{pool} on {threads} threads: {e}");
            }
            assert_eq!(
                (out.interactions, out.visible, out.elements, out.iterations),
                (
                    reference.interactions,
                    reference.visible,
                    reference.elements,
                    reference.iterations
                ),
                "{pool} on {threads} threads"
            );
            assert_eq!(
                out.patch_radiosity, reference.patch_radiosity,
                "{pool} on {threads} threads"
            );
            // Links and gathers are one task per patch and phase; refinement adds more.
            let per_patch_tasks = scene.patches() as u64 * (1 + 2 * out.iterations as u64);
            assert!(out.tasks > per_patch_tasks, "{pool}: {} tasks", out.tasks);
        }
    }
}

/// The fork-join driver on "small", both deques of the fork-join runtime, 1 to 3 threads: the
/// sequential result exactly.
#[test]
fn forkjoin_matches_sequential() {
    use taskpools::forkjoin::Pool;
    use taskpools::Runtime;
    let scene = Scene::by_name("small").unwrap();
    let s = small_settings();
    let reference = solve_sequential(&scene, &s);
    for pool in Pool::ALL {
        for threads in [1, 2, 3] {
            let rt = Runtime::builder()
                .threads(threads)
                .pool(pool)
                .build()
                .unwrap();
            let out = solve_forkjoin(&scene, &s, &rt);
            if let Err(e) = check(&reference, &out) {
                panic!("fork-join on {pool:?}, {threads} threads: {e}");
            }
            assert_eq!(
                (out.interactions, out.visible, out.elements),
                (
                    reference.interactions,
                    reference.visible,
                    reference.elements
                )
            );
            assert_eq!(out.patch_radiosity, reference.patch_radiosity);
            assert!(
                out.tasks >= scene.patches() as u64 - 1,
                "{} joins",
                out.tasks
            );
        }
    }
}
