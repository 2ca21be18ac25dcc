//! The kernels against closed forms and brute force: the form-factor estimate, the BSP
//! visibility query, energy balance in a closed box, and a blocker that halves the light.

use super::super::*;
use geometry::{Surface, Vec3};
use scene::Polygon;

/// Form factor between unit squares by the estimator, both subdivided `level` times (each
/// triangle into 4^level): the area-weighted mean over receiver elements of the sum over
/// source elements.
fn squares_form_factor(rcv: [Vec3; 3], src: [Vec3; 3], level: u32) -> f64 {
    fn triangles(p: [Vec3; 3], level: u32) -> Vec<[Vec3; 3]> {
        let [p1, p2, p3] = p;
        let mut out = vec![p, [p2 + p3 - p1, p3, p2]];
        for _ in 0..level {
            out = out.iter().flat_map(geometry::subdivide).collect();
        }
        out
    }
    let normal = |p: [Vec3; 3]| geometry::Plane::through(&p).n;
    let (nr, ns) = (normal(rcv), normal(src));
    let (rt, st) = (triangles(rcv, level), triangles(src, level));
    let mut sum = 0.0;
    for r in &rt {
        let ar = geometry::area(r);
        let rs = Surface {
            tri: r,
            normal: nr,
            area: ar,
        };
        for s in &st {
            let ss = Surface {
                tri: s,
                normal: ns,
                area: geometry::area(s),
            };
            sum += ar * geometry::form_factor(&rs, &ss).0;
        }
    }
    sum / rt.iter().map(geometry::area).sum::<f64>()
}

/// Parallel coaxial rectangles a × b at distance c (Howell's catalogue, C-11).
fn parallel_closed_form(a: f64, b: f64, c: f64) -> f64 {
    let (x, y) = (a / c, b / c);
    let (sx, sy) = ((1.0 + x * x).sqrt(), (1.0 + y * y).sqrt());
    2.0 / (std::f64::consts::PI * x * y)
        * (((1.0 + x * x) * (1.0 + y * y) / (1.0 + x * x + y * y))
            .sqrt()
            .ln()
            + x * sy * (x / sy).atan()
            + y * sx * (y / sx).atan()
            - x * x.atan()
            - y * y.atan())
}

/// Perpendicular rectangles with a common edge of length l, widths w (source) and h
/// (receiver) (Howell's catalogue, C-14), from the receiver.
fn perpendicular_closed_form(l: f64, w: f64, h: f64) -> f64 {
    let (h, w) = (h / l, w / l);
    let a = (1.0 + h * h) * (1.0 + w * w) / (1.0 + h * h + w * w);
    let b = w * w * (1.0 + h * h + w * w) / ((1.0 + w * w) * (h * h + w * w));
    let c = h * h * (1.0 + h * h + w * w) / ((1.0 + h * h) * (h * h + w * w));
    let hw = (h * h + w * w).sqrt();
    (w * (1.0 / w).atan() + h * (1.0 / h).atan() - hw * (1.0 / hw).atan()
        + 0.25 * (a.ln() + w * w * b.ln() + h * h * c.ln()))
        / (std::f64::consts::PI * w)
}

#[test]
fn closed_forms_are_the_textbook_values() {
    assert!((parallel_closed_form(1.0, 1.0, 1.0) - 0.19982).abs() < 1e-5);
    assert!((perpendicular_closed_form(1.0, 1.0, 1.0) - 0.20004).abs() < 1e-5);
}

/// The estimator on two parallel coaxial unit squares at distance 1: one element each (how
/// an initial link sees them) within 5 % (it gives 0.2040 for 0.1998), three levels of
/// subdivision within 0.5 % (0.19988).
#[test]
fn form_factor_parallel_squares() {
    let v = Vec3::new;
    // Receiver at z = 0 facing +z, source at z = 1 facing -z.
    let rcv = [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0)];
    let src = [v(0.0, 0.0, 1.0), v(0.0, 1.0, 1.0), v(1.0, 0.0, 1.0)];
    let exact = parallel_closed_form(1.0, 1.0, 1.0);
    let coarse = squares_form_factor(rcv, src, 0);
    let fine = squares_form_factor(rcv, src, 3);
    println!("parallel: exact {exact:.5}, one element {coarse:.5}, 3 levels {fine:.5}");
    assert!(
        (coarse - exact).abs() < 0.05 * exact,
        "one element: {coarse} against {exact}"
    );
    assert!(
        (fine - exact).abs() < 0.005 * exact,
        "3 levels: {fine} against {exact}"
    );
}

/// The estimator on two perpendicular unit squares sharing an edge: one element each within
/// 10 % (it gives 0.2003 for 0.2000, errors of the two triangle pairs cancelling), four
/// levels within 1 % (0.1996; the point-to-disc estimate converges slowest where elements
/// touch).
#[test]
fn form_factor_perpendicular_squares() {
    let v = Vec3::new;
    // Receiver: the floor z = 0 (facing +z); source: the wall y = 0 (facing +y); common
    // edge along x.
    let rcv = [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0)];
    let src = [v(0.0, 0.0, 0.0), v(0.0, 0.0, 1.0), v(1.0, 0.0, 0.0)];
    let exact = perpendicular_closed_form(1.0, 1.0, 1.0);
    let coarse = squares_form_factor(rcv, src, 0);
    let fine = squares_form_factor(rcv, src, 4);
    println!("perpendicular: exact {exact:.5}, one element {coarse:.5}, 4 levels {fine:.5}");
    assert!(
        (coarse - exact).abs() < 0.10 * exact,
        "one element: {coarse} against {exact}"
    );
    assert!(
        (fine - exact).abs() < 0.01 * exact,
        "4 levels: {fine} against {exact}"
    );
}

fn quad(p1: [f64; 3], p2: [f64; 3], p3: [f64; 3], rho: f64, emit: f64) -> Polygon {
    let v = |p: [f64; 3]| Vec3::new(p[0], p[1], p[2]);
    Polygon {
        parallelogram: true,
        p: [v(p1), v(p2), v(p3)],
        color: [rho; 3],
        emit: [emit; 3],
    }
}

/// A closed cube of side 600 facing in, all faces of reflectance `rho`, the top emitting 10.
fn closed_box(rho: f64) -> Scene {
    let h = 300.0;
    Scene::from_polygons(
        "box",
        &[
            quad([-h, -h, h], [h, -h, h], [-h, -h, -h], rho, 0.0),
            quad([-h, h, -h], [h, h, -h], [-h, h, h], rho, 10.0),
            quad([-h, -h, -h], [h, -h, -h], [-h, h, -h], rho, 0.0),
            quad([h, -h, h], [-h, -h, h], [h, h, h], rho, 0.0),
            quad([-h, -h, h], [-h, -h, -h], [-h, h, h], rho, 0.0),
            quad([h, -h, -h], [h, -h, h], [h, h, -h], rho, 0.0),
        ],
    )
}

/// Energy balance in a closed box of uniform reflectance ρ: what is emitted is absorbed, so
/// at steady state `Σ B·A = Σ E·A / (1 - ρ)` (with exact form factors, whose rows sum to 1).
/// The estimator's form factors do not sum exactly to 1, and the more often light bounces
/// (the higher ρ) the more that shows: within 3 %.
#[test]
fn closed_box_balances_energy() {
    for rho in [0.3, 0.5] {
        let scene = closed_box(rho);
        let s = Settings {
            bf_epsilon: 0.1,
            energy_tolerance: 1e-7,
            max_iterations: 200,
            ..Settings::default()
        };
        let out = solve_sequential(&scene, &s);
        let emitted = 10.0 * 600.0 * 600.0;
        let expected = emitted / (1.0 - rho);
        let off = (out.energy - expected).abs() / expected;
        println!(
            "rho {rho}: energy {:.4e} against {expected:.4e} ({:.2} % off), {} interactions, {} iterations",
            out.energy,
            off * 100.0,
            out.interactions,
            out.iterations
        );
        assert!(
            off < 0.03,
            "rho {rho}: energy {} against {expected}",
            out.energy
        );
        assert_eq!(
            out.visible, out.interactions,
            "nothing blocks inside an empty box"
        );
    }
}

/// An emitter above a receiver, and a black blocker between them over half the receiver's
/// view: the light the receiver gathers halves (within 10 %).
#[test]
fn blocker_halves_the_light() {
    let receiver_energy = |blocked: bool| {
        let mut polygons = vec![
            // Receiver at y = 0 facing up, emitter at y = 200 facing down, 200 × 200 each.
            quad(
                [-100.0, 0.0, 100.0],
                [100.0, 0.0, 100.0],
                [-100.0, 0.0, -100.0],
                0.5,
                0.0,
            ),
            quad(
                [-100.0, 200.0, -100.0],
                [100.0, 200.0, -100.0],
                [-100.0, 200.0, 100.0],
                0.0,
                100.0,
            ),
        ];
        if blocked {
            // Black, at mid height over x < 0, facing the receiver: every ray whose midpoint
            // has x < 0 ends on it.
            polygons.push(quad(
                [-100.0, 100.0, -100.0],
                [0.0, 100.0, -100.0],
                [-100.0, 100.0, 100.0],
                0.0,
                0.0,
            ));
        }
        let scene = Scene::from_polygons("blocker", &polygons);
        let s = Settings {
            bf_epsilon: 0.05,
            area_epsilon: 200.0,
            ..Settings::default()
        };
        let out = solve_sequential(&scene, &s);
        let emitter = 100.0 * 200.0 * 200.0;
        (out.energy - emitter, out)
    };
    let (open, o) = receiver_energy(false);
    let (half, h) = receiver_energy(true);
    println!(
        "open {open:.4e} ({} interactions), blocked {half:.4e} ({} interactions, {} partly visible), ratio {:.3}",
        o.interactions,
        h.interactions,
        h.visible - h.fully_visible,
        half / open
    );
    assert!(open > 0.0);
    assert!((half / open - 0.5).abs() < 0.05, "ratio {}", half / open);
    assert!(
        h.visible > h.fully_visible,
        "some interactions are partly visible"
    );
}

/// Brute force: does any patch but `ends` cross the segment (its END_MARGIN ends excepted)?
fn blocked_brute(bsp: &bsp::Bsp, a: Vec3, b: Vec3, ends: [u32; 2]) -> bool {
    let d = b - a;
    bsp.patches.iter().enumerate().any(|(i, p)| {
        if ends.contains(&(i as u32)) {
            return false;
        }
        let dn = p.plane.n.dot(d);
        if dn == 0.0 {
            return false;
        }
        let t = -p.plane.distance(a) / dn;
        (1e-3..=1.0 - 1e-3).contains(&t) && p.bary.contains(a + d * t)
    })
}

#[test]
fn bsp_query_agrees_with_brute_force() {
    let scene = Scene::by_name("largeroom").unwrap();
    let bsp = &scene.bsp;
    let n = bsp.patches.len();
    let mut rng = fastrand::Rng::with_seed(7);
    let mut cache = bsp::BlockerCache::default();
    let (mut visits, mut disagree, mut blocked) = (0, 0, 0);
    let point = |rng: &mut fastrand::Rng, p: &bsp::Patch| {
        let (mut u, mut v) = (rng.f64(), rng.f64());
        if u + v > 1.0 {
            (u, v) = (1.0 - u, 1.0 - v);
        }
        p.tri[0] + (p.tri[1] - p.tri[0]) * u + (p.tri[2] - p.tri[0]) * v
    };
    let trials = 20_000;
    for _ in 0..trials {
        let (i, j) = (rng.usize(0..n), rng.usize(0..n));
        if i == j {
            continue;
        }
        let (a, b) = (
            point(&mut rng, &bsp.patches[i]),
            point(&mut rng, &bsp.patches[j]),
        );
        let ends = [i as u32, j as u32];
        let fast = bsp.blocked(a, b, ends, &mut cache, &mut visits);
        let slow = blocked_brute(bsp, a, b, ends);
        disagree += (fast != slow) as u32;
        blocked += slow as u32;
    }
    println!(
        "{blocked} of {trials} blocked, {disagree} disagree, {} visits per query",
        visits / trials
    );
    assert_eq!(disagree, 0);
}
