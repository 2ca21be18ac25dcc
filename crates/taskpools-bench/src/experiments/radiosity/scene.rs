//! The scenes: SPLASH-2's "largeroom" (its model data, in `largeroom.txt`) and "small", a
//! scene of ours for tests, and the preparation every scene goes through: polygons to
//! triangles (a parallelogram gives two, as in SPLASH-2's `process_rectangle`), then the
//! sequential BSP build.

use anyhow::{bail, Context, Result};

use super::bsp::{Bsp, Piece};
use super::geometry::{Plane, Vec3};

/// The model data of largeroom: materials and polygons, one a line (see the file's header).
const LARGEROOM: &str = include_str!("largeroom.txt");

/// A scene prepared for solving: its patches after the BSP build, and the tree.
#[derive(Clone, Debug)]
pub struct Scene {
    name: String,
    pub(crate) bsp: Bsp,
    /// Triangles before the BSP build.
    input_triangles: usize,
}

/// A polygon of a scene description: a parallelogram (corners `p1`, `p2`, `p3` and
/// `p2 + p3 - p1`) or a triangle, its normal `(p2 - p1) × (p3 - p1)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Polygon {
    pub parallelogram: bool,
    pub p: [Vec3; 3],
    pub color: [f64; 3],
    pub emit: [f64; 3],
}

impl Polygon {
    /// The polygon's triangles: one, or two for a parallelogram (the second `(p2+p3-p1, p3,
    /// p2)`, so both face the same way).
    fn triangles(&self) -> Vec<Piece> {
        let plane = Plane::through(&self.p);
        let piece = |tri| Piece {
            tri,
            plane,
            color: self.color,
            emit: self.emit,
        };
        let [p1, p2, p3] = self.p;
        let mut out = vec![piece(self.p)];
        if self.parallelogram {
            out.push(piece([p2 + p3 - p1, p3, p2]));
        }
        out
    }
}

impl Scene {
    /// The scenes [`by_name`](Self::by_name) knows.
    pub const NAMES: &'static [&'static str] = &["largeroom", "small"];

    /// Builds a scene by name (BSP included): `largeroom` (SPLASH-2's input, 506 triangles)
    /// or `small` (a furnished box of ours for tests).
    pub fn by_name(name: &str) -> Result<Scene> {
        let polygons = match name {
            "largeroom" => parse(LARGEROOM).context("the largeroom model data")?,
            "small" => small(),
            _ => bail!(
                "no scene named {name:?}: choose one of {}",
                Scene::NAMES.join(", ")
            ),
        };
        Ok(Scene::from_polygons(name, &polygons))
    }

    /// A scene of the given polygons, triangulated and inserted into the BSP tree in order.
    pub(crate) fn from_polygons(name: &str, polygons: &[Polygon]) -> Scene {
        let pieces: Vec<Piece> = polygons.iter().flat_map(Polygon::triangles).collect();
        let input_triangles = pieces.len();
        Scene {
            name: name.to_string(),
            bsp: Bsp::build(pieces),
            input_triangles,
        }
    }

    /// The scene's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of patches after the BSP build (largeroom: 506 input triangles become more).
    pub fn patches(&self) -> usize {
        self.bsp.len()
    }

    /// The patches' total area (scene units²): with an area epsilon `a`, a solve makes at most
    /// about `4/3 · area / a` elements.
    pub fn area(&self) -> f64 {
        self.bsp.patches.iter().map(|p| p.area).sum()
    }

    /// Number of triangles before the BSP build.
    pub fn input_triangles(&self) -> usize {
        self.input_triangles
    }
}

/// Parses the model format of `largeroom.txt`.
fn parse(text: &str) -> Result<Vec<Polygon>> {
    let mut materials: Vec<(&str, [f64; 3], [f64; 3])> = Vec::new();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let nums = |from: usize| -> Result<Vec<f64>> {
            words[from..]
                .iter()
                .map(|w| {
                    w.parse::<f64>()
                        .with_context(|| format!("line {}: {w:?}", i + 1))
                })
                .collect()
        };
        match words[0] {
            "mat" if words.len() == 8 => {
                let v = nums(2)?;
                materials.push((words[1], [v[0], v[1], v[2]], [v[3], v[4], v[5]]));
            }
            "R" | "T" if words.len() == 11 => {
                let (_, color, emit) = *materials
                    .iter()
                    .find(|m| m.0 == words[1])
                    .with_context(|| format!("line {}: no material {:?}", i + 1, words[1]))?;
                let v = nums(2)?;
                let pt = |k: usize| Vec3::new(v[3 * k], v[3 * k + 1], v[3 * k + 2]);
                out.push(Polygon {
                    parallelogram: words[0] == "R",
                    p: [pt(0), pt(1), pt(2)],
                    color,
                    emit,
                });
            }
            _ => bail!("line {}: not a material or polygon: {line:?}", i + 1),
        }
    }
    Ok(out)
}

/// A parallelogram with one reflectance for all channels.
fn quad(p1: [f64; 3], p2: [f64; 3], p3: [f64; 3], rho: f64, emit: f64) -> Polygon {
    let v = |p: [f64; 3]| Vec3::new(p[0], p[1], p[2]);
    Polygon {
        parallelogram: true,
        p: [v(p1), v(p2), v(p3)],
        color: [rho; 3],
        emit: [emit; 3],
    }
}

/// "small": a closed room 800 × 600 × 800 (SPLASH-2's units, so its default area epsilon
/// fits), a light in the ceiling, a table (top and underside) and a partition (two faces)
/// that throw shadows. 11 parallelograms; ours, not SPLASH-2's.
fn small() -> Vec<Polygon> {
    let (x, y, z) = (400.0, 300.0, 400.0);
    vec![
        // Floor (up), ceiling (down), four walls facing in.
        quad([-x, -y, z], [x, -y, z], [-x, -y, -z], 0.5, 0.0),
        quad([-x, y, -z], [x, y, -z], [-x, y, z], 0.7, 0.0),
        quad([-x, -y, -z], [x, -y, -z], [-x, y, -z], 0.6, 0.0),
        quad([x, -y, z], [-x, -y, z], [x, y, z], 0.6, 0.0),
        quad([-x, -y, z], [-x, -y, -z], [-x, y, z], 0.4, 0.0),
        quad([x, -y, -z], [x, -y, z], [x, y, -z], 0.4, 0.0),
        // The light, just below the ceiling, facing down.
        quad(
            [-60.0, 299.0, -60.0],
            [60.0, 299.0, -60.0],
            [-60.0, 299.0, 60.0],
            0.0,
            100.0,
        ),
        // The table top (up) and its underside (down).
        quad(
            [-150.0, -100.0, 100.0],
            [150.0, -100.0, 100.0],
            [-150.0, -100.0, -100.0],
            0.6,
            0.0,
        ),
        quad(
            [-150.0, -101.0, -100.0],
            [150.0, -101.0, -100.0],
            [-150.0, -101.0, 100.0],
            0.6,
            0.0,
        ),
        // The partition at x = 250, both faces.
        quad(
            [250.0, -300.0, -400.0],
            [250.0, -300.0, 0.0],
            [250.0, 150.0, -400.0],
            0.5,
            0.0,
        ),
        quad(
            [251.0, -300.0, 0.0],
            [251.0, -300.0, -400.0],
            [251.0, 150.0, 0.0],
            0.5,
            0.0,
        ),
    ]
}
