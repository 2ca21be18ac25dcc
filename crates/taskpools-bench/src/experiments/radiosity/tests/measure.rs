//! The measurement for the report (an ignored test, run in release):
//! `cargo test --release -p taskpools-bench --bin taskpools radiosity::tests::measure -- --ignored --nocapture`

use super::super::*;

/// The machine's parallel capacity now: time of 2 threads each doing the single-thread work,
/// over the single-thread time (1.0: two free cores; 2.0: one core between them).
fn capacity_probe() -> f64 {
    fn spin(n: u64) -> u64 {
        (0..n).fold(1u64, |x, i| {
            x.wrapping_mul(6364136223846793005).wrapping_add(i)
        })
    }
    let n = 300_000_000;
    let t = std::time::Instant::now();
    std::hint::black_box(spin(std::hint::black_box(n)));
    let one = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| std::hint::black_box(spin(std::hint::black_box(n))));
        }
    });
    t.elapsed().as_secs_f64() / one
}

/// The measurement for the report (not a test): largeroom, sequential, on chase-lev and dq2
/// (steal-working-end) at 1 and 2 threads, and fork-join at 1 and 2 threads; medians of 3
/// interleaved repetitions, each checked against the first sequential run.
#[test]
#[ignore = "a measurement: cargo test --release -p taskpools-bench --bin taskpools radiosity::tests::measure -- --ignored --nocapture"]
fn measure() {
    use taskpools::{Builder, PoolKind, Runtime};
    let t = std::time::Instant::now();
    let scene = Scene::by_name("largeroom").unwrap();
    println!(
        "largeroom: {} triangles -> {} patches, BSP build {:?}",
        scene.input_triangles(),
        scene.patches(),
        t.elapsed()
    );
    let s = Settings::default();
    let rt = Runtime::new(2).unwrap();
    let runs: Vec<(String, Option<Builder<'_>>)> =
        std::iter::once(("sequential".to_string(), None))
            .chain(
                [PoolKind::ChaseLev, PoolKind::StealWorkingEnd]
                    .into_iter()
                    .flat_map(|pool| {
                        [1, 2].map(|n| {
                            let b = Builder::new().runtime(&rt).threads(n).pool(pool);
                            (
                                format!("{} ({}) {n} thr", pool.name(), pool.alias()),
                                Some(b),
                            )
                        })
                    }),
            )
            .collect();
    let fj: Vec<(String, Runtime)> = [1, 2]
        .map(|n| {
            (
                format!("fork-join {n} thr"),
                Runtime::builder().threads(n).build().unwrap(),
            )
        })
        .into();
    let mut times = vec![Vec::new(); runs.len() + fj.len()];
    let mut reference: Option<Outcome> = None;
    let mut probes = Vec::new();
    for _ in 0..3 {
        probes.push(capacity_probe());
        for (k, (_, b)) in runs.iter().enumerate() {
            let t = std::time::Instant::now();
            let out = match b {
                None => solve_sequential(&scene, &s),
                Some(b) => solve_tasks(&scene, &s, b).unwrap(),
            };
            times[k].push(t.elapsed().as_secs_f64());
            match &reference {
                None => reference = Some(out),
                Some(r) => assert_eq!(check(r, &out), Ok(())),
            }
        }
        for (k, (_, rt)) in fj.iter().enumerate() {
            let t = std::time::Instant::now();
            let out = solve_forkjoin(&scene, &s, rt);
            times[runs.len() + k].push(t.elapsed().as_secs_f64());
            assert_eq!(check(reference.as_ref().unwrap(), &out), Ok(()));
        }
    }
    let r = reference.unwrap();
    println!(
        "{} iterations, {} interactions, {} visible ({} complete, {} partial), {} elements, energy {:.5e}, {} visibility tests, {} rays",
        r.iterations, r.interactions, r.visible, r.fully_visible, r.visible - r.fully_visible, r.elements, r.energy, r.visibility_tests, r.rays
    );
    println!("capacity probes (2 threads' time / 1 thread's, 1.0 = two free cores): {probes:.2?}");
    let median = |v: &[f64]| crate::experiments::summarize(v).0;
    let base = median(&times[0]);
    let names = runs.iter().map(|r| &r.0).chain(fj.iter().map(|f| &f.0));
    for (name, t) in names.zip(&times) {
        let m = median(t);
        println!(
            "{name:<32} median {m:.3} s  rate {:.0} visible interactions/s  ratio {:.2}  (runs {t:.3?})",
            r.visible as f64 / m,
            base / m
        );
    }
}
