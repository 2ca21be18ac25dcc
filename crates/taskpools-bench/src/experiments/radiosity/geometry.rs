//! Vectors, planes and triangles, and the form-factor estimate of an interaction.
//!
//! The estimate is the one Hanrahan, Salzman and Aupperle (1991) use for their `BF` oracle, in
//! the form SPLASH-2's radiosity (Woo et al. 1995) computes it: the source triangle is replaced
//! by four discs, one per child triangle of its midpoint subdivision, and the form factor from
//! a point `x` of the receiver to a disc of area `a` at distance `r` is
//! `a·cosθx·cosθdisc / (π·r² + a)` (the point-to-disc form factor, which stays bounded where
//! `r` is small). The receiver's value is the mean over the centroids of its four child
//! triangles; the spread of the point values over the receiver's centroid and corners is the
//! estimate's error bound (its `ff_err`).

use std::f64::consts::PI;
use std::ops::{Add, Mul, Sub};

/// Distance below which a point counts as lying on a plane: SPLASH-2's `F_COPLANAR`, in scene
/// units (the rooms are about 1 700 units wide).
pub(crate) const COPLANAR: f64 = 5.0e-2;

/// A point or direction in scene units.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Vec3 {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

impl Vec3 {
    pub const fn new(x: f64, y: f64, z: f64) -> Self {
        Vec3 { x, y, z }
    }

    pub fn dot(self, o: Vec3) -> f64 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    pub fn cross(self, o: Vec3) -> Vec3 {
        Vec3::new(
            self.y * o.z - self.z * o.y,
            self.z * o.x - self.x * o.z,
            self.x * o.y - self.y * o.x,
        )
    }

    pub fn length(self) -> f64 {
        self.dot(self).sqrt()
    }

    /// `a + (b - a)·t`.
    pub fn lerp(a: Vec3, b: Vec3, t: f64) -> Vec3 {
        a + (b - a) * t
    }
}

impl Add for Vec3 {
    type Output = Vec3;
    fn add(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }
}

impl Sub for Vec3 {
    type Output = Vec3;
    fn sub(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }
}

impl Mul<f64> for Vec3 {
    type Output = Vec3;
    fn mul(self, s: f64) -> Vec3 {
        Vec3::new(self.x * s, self.y * s, self.z * s)
    }
}

/// Which side of a plane a point lies on, with [`COPLANAR`] as tolerance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Positive,
    On,
    Negative,
}

/// The plane `n·p + c = 0` with unit normal `n`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plane {
    pub n: Vec3,
    pub c: f64,
}

impl Plane {
    /// The plane through a triangle, its normal `(b - a) × (c - a)` normalised (the side a
    /// surface faces).
    pub fn through(t: &[Vec3; 3]) -> Plane {
        let n = (t[1] - t[0]).cross(t[2] - t[0]);
        let n = n * (1.0 / n.length());
        Plane { n, c: -n.dot(t[0]) }
    }

    /// Signed distance of `p` from the plane.
    pub fn distance(&self, p: Vec3) -> f64 {
        self.n.dot(p) + self.c
    }

    pub fn side(&self, p: Vec3) -> Side {
        let h = self.distance(p);
        if h > COPLANAR {
            Side::Positive
        } else if h < -COPLANAR {
            Side::Negative
        } else {
            Side::On
        }
    }

    /// Whether no vertex of `t` lies on the positive side (all behind or on the plane): such a
    /// triangle cannot be seen from the plane's front (SPLASH-2's `NEGATIVE_SIDE` test).
    pub fn hides(&self, t: &[Vec3; 3]) -> bool {
        t.iter().all(|&p| self.side(p) != Side::Positive)
    }
}

/// Area of a triangle.
pub(crate) fn area(t: &[Vec3; 3]) -> f64 {
    0.5 * (t[1] - t[0]).cross(t[2] - t[0]).length()
}

/// Centroid of a triangle.
pub(crate) fn centroid(t: &[Vec3; 3]) -> Vec3 {
    (t[0] + t[1] + t[2]) * (1.0 / 3.0)
}

/// Centroids of the four children of a triangle's midpoint subdivision: the middle child's
/// (the triangle's own centroid) first, then the corner children's, corner `i` nearest `t[i]`.
pub(crate) fn child_centroids(t: &[Vec3; 3]) -> [Vec3; 4] {
    let corner = |i: usize| (t[i] * 4.0 + t[(i + 1) % 3] + t[(i + 2) % 3]) * (1.0 / 6.0);
    [centroid(t), corner(0), corner(1), corner(2)]
}

/// The midpoint subdivision of a triangle: the middle child, then the children at corners 0, 1
/// and 2. Each child keeps the parent's orientation.
pub(crate) fn subdivide(t: &[Vec3; 3]) -> [[Vec3; 3]; 4] {
    let m01 = Vec3::lerp(t[0], t[1], 0.5);
    let m12 = Vec3::lerp(t[1], t[2], 0.5);
    let m20 = Vec3::lerp(t[2], t[0], 0.5);
    [
        [m12, m20, m01],
        [t[0], m01, m20],
        [m01, t[1], m12],
        [m20, m12, t[2]],
    ]
}

/// One side of an interaction for the form-factor estimate.
#[derive(Clone, Copy)]
pub(crate) struct Surface<'t> {
    pub tri: &'t [Vec3; 3],
    /// The unit normal of the surface's patch.
    pub normal: Vec3,
    pub area: f64,
}

/// The form factor from the point `p` (normal `np`) to a disc of area `a` at `q` (normal `nq`).
fn point_to_disc(p: Vec3, np: Vec3, q: Vec3, a: f64, nq: Vec3) -> f64 {
    let d = q - p;
    let dist2 = d.dot(d);
    let inv = 1.0 / dist2.sqrt();
    let cos_p = d.dot(np) * inv;
    let cos_q = -d.dot(nq) * inv;
    a / (PI * dist2 + a) * cos_p * cos_q
}

/// The form factor from the point `p` of the receiver to the source: the sum over the source's
/// four child discs, each clipped at zero.
fn point_to_source(p: Vec3, np: Vec3, src: &Surface<'_>) -> f64 {
    let quarter = src.area * 0.25;
    child_centroids(src.tri)
        .iter()
        .map(|&q| point_to_disc(p, np, q, quarter, src.normal).max(0.0))
        .sum()
}

/// The form factor of an interaction, receiver `rcv` gathering from source `src`, and its error
/// bound: `(F, F_err)`. `F` is the mean of the point values at the centroids of the receiver's
/// four children; `F_err` the largest distance of `F` from the point values at the receiver's
/// centroid and corners.
pub(crate) fn form_factor(rcv: &Surface<'_>, src: &Surface<'_>) -> (f64, f64) {
    let at = |p: Vec3| point_to_source(p, rcv.normal, src);
    let centres = child_centroids(rcv.tri);
    let at_centre = at(centres[0]);
    let ff = (at_centre + at(centres[1]) + at(centres[2]) + at(centres[3])) * 0.25;
    let (mut lo, mut hi) = (at_centre, at_centre);
    for &v in rcv.tri {
        let f = at(v);
        lo = lo.min(f);
        hi = hi.max(f);
    }
    (ff, (hi - ff).max(ff - lo))
}

/// A triangle prepared for point-in-triangle tests of points on its plane.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Barycentric {
    origin: Vec3,
    e1: Vec3,
    e2: Vec3,
    d11: f64,
    d12: f64,
    d22: f64,
    inv: f64,
}

impl Barycentric {
    pub fn new(t: &[Vec3; 3]) -> Self {
        let e1 = t[1] - t[0];
        let e2 = t[2] - t[0];
        let (d11, d12, d22) = (e1.dot(e1), e1.dot(e2), e2.dot(e2));
        Barycentric {
            origin: t[0],
            e1,
            e2,
            d11,
            d12,
            d22,
            inv: 1.0 / (d11 * d22 - d12 * d12),
        }
    }

    /// Whether `p` (a point on the triangle's plane) lies inside the triangle or on its edges.
    pub fn contains(&self, p: Vec3) -> bool {
        let w = p - self.origin;
        let (a, b) = (w.dot(self.e1), w.dot(self.e2));
        let u = (self.d22 * a - self.d12 * b) * self.inv;
        let v = (self.d11 * b - self.d12 * a) * self.inv;
        u >= 0.0 && v >= 0.0 && u + v <= 1.0
    }
}
