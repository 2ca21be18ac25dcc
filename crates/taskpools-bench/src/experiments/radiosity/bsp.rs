//! The BSP tree of patches: built sequentially by inserting the scene's triangles one after
//! the other, each node splitting the triangles that straddle its plane (SPLASH-2's
//! `define_patch`/`split_patch`, which is how largeroom's 506 input triangles become more
//! patches), and queried for visibility: does any patch other than the two ends block the
//! segment between two points? The query walks the tree front to back along the segment,
//! pruning subtrees the segment cannot reach, and stops at the first blocker (Hanrahan,
//! Salzman and Aupperle (1991) §4 use ray casting for visibility; SPLASH-2 uses this tree).

use super::geometry::{Barycentric, Plane, Side, Vec3, COPLANAR};

/// No node.
const NONE: u32 = u32::MAX;

/// The part of a segment near its ends that is not tested for blockers, as a fraction of its
/// length: the ends lie on the two surfaces, and their coplanar neighbours must not count.
const END_MARGIN: f64 = 1.0e-3;

/// A triangle of the scene after the BSP build, with its material.
#[derive(Clone, Debug)]
pub(crate) struct Patch {
    pub tri: [Vec3; 3],
    /// The plane of the input triangle it was cut from (pieces keep their parent's normal).
    pub plane: Plane,
    pub area: f64,
    /// Diffuse reflectance, RGB.
    pub color: [f64; 3],
    /// Radiant emittance, RGB.
    pub emit: [f64; 3],
    pub bary: Barycentric,
}

/// An input triangle: its corners, the plane of the input polygon and the material.
#[derive(Clone, Debug)]
pub(crate) struct Piece {
    pub tri: [Vec3; 3],
    pub plane: Plane,
    pub color: [f64; 3],
    pub emit: [f64; 3],
}

/// The tree: node `i` is patch `i`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Bsp {
    pub patches: Vec<Patch>,
    positive: Vec<u32>,
    negative: Vec<u32>,
    root: u32,
}

/// Two patches most recently found blocking, tried before the tree (SPLASH-2's patch cache:
/// neighbouring rays tend to be blocked by the same patch). One per worker; it changes how
/// fast a query answers, never what it answers.
#[derive(Clone, Debug)]
pub(crate) struct BlockerCache([u32; 2]);

impl Default for BlockerCache {
    fn default() -> Self {
        BlockerCache([NONE; 2])
    }
}

impl Bsp {
    /// Builds the tree by inserting `pieces` in order.
    pub fn build(pieces: impl IntoIterator<Item = Piece>) -> Bsp {
        let mut bsp = Bsp {
            root: NONE,
            ..Bsp::default()
        };
        for p in pieces {
            bsp.insert(p, bsp.root);
        }
        bsp
    }

    /// Number of patches (nodes).
    pub fn len(&self) -> usize {
        self.patches.len()
    }

    fn attach(&mut self, p: Piece) -> u32 {
        let id = self.patches.len() as u32;
        self.patches.push(Patch {
            area: super::geometry::area(&p.tri),
            bary: Barycentric::new(&p.tri),
            tri: p.tri,
            plane: p.plane,
            color: p.color,
            emit: p.emit,
        });
        self.positive.push(NONE);
        self.negative.push(NONE);
        id
    }

    /// Inserts `p` below `node` (the root when the tree is empty).
    fn insert(&mut self, p: Piece, mut node: u32) {
        if node == NONE {
            self.root = self.attach(p);
            return;
        }
        loop {
            let plane = self.patches[node as usize].plane;
            let sides = p.tri.map(|v| plane.side(v));
            let positive = if !sides.contains(&Side::Negative) {
                true // in front of the plane or in it
            } else if !sides.contains(&Side::Positive) {
                false
            } else {
                for piece in split(&p, &plane, sides) {
                    self.insert(piece, node);
                }
                return;
            };
            let child = if positive {
                self.positive[node as usize]
            } else {
                self.negative[node as usize]
            };
            if child != NONE {
                node = child;
                continue;
            }
            let id = self.attach(p);
            if positive {
                self.positive[node as usize] = id;
            } else {
                self.negative[node as usize] = id;
            }
            return;
        }
    }

    /// Whether some patch other than `ends` crosses the segment from `from` to `to` (its
    /// `END_MARGIN` ends excepted). Counts the nodes visited into `visits`.
    pub fn blocked(
        &self,
        from: Vec3,
        to: Vec3,
        ends: [u32; 2],
        cache: &mut BlockerCache,
        visits: &mut u64,
    ) -> bool {
        let dir = to - from;
        let (lo, hi) = (END_MARGIN, 1.0 - END_MARGIN);
        for k in 0..cache.0.len() {
            let id = cache.0[k];
            if id != NONE && !ends.contains(&id) && self.hits(id, from, dir, lo, hi) {
                cache.0.swap(0, k);
                return true;
            }
        }
        let mut walk = Walk {
            bsp: self,
            from,
            dir,
            ends,
            visits: 0,
        };
        let blocker = walk.first(self.root, lo, hi);
        *visits += walk.visits;
        match blocker {
            Some(id) => {
                cache.0 = [id, cache.0[0]];
                true
            }
            None => false,
        }
    }

    /// Whether the segment `from + t·dir`, `t` in `[lo, hi]`, crosses patch `id`.
    fn hits(&self, id: u32, from: Vec3, dir: Vec3, lo: f64, hi: f64) -> bool {
        let p = &self.patches[id as usize];
        let dn = p.plane.n.dot(dir);
        if dn == 0.0 {
            return false;
        }
        let t = -p.plane.distance(from) / dn;
        t >= lo && t <= hi && p.bary.contains(from + dir * t)
    }
}

/// One visibility query's walk through the tree.
struct Walk<'b> {
    bsp: &'b Bsp,
    from: Vec3,
    dir: Vec3,
    ends: [u32; 2],
    visits: u64,
}

impl Walk<'_> {
    /// The first blocker of the segment's part `[lo, hi]` among `node` and its subtrees.
    fn first(&mut self, node: u32, lo: f64, hi: f64) -> Option<u32> {
        if node == NONE || lo > hi {
            return None;
        }
        self.visits += 1;
        let i = node as usize;
        let p = &self.bsp.patches[i];
        let (pos, neg) = (self.bsp.positive[i], self.bsp.negative[i]);
        let dn = p.plane.n.dot(self.dir);
        let dist = p.plane.distance(self.from);
        if dn.abs() < 1e-12 {
            // Parallel to the plane: the segment stays on one side (or in the plane).
            return match p.plane.side(self.from) {
                Side::Positive => self.first(pos, lo, hi),
                Side::Negative => self.first(neg, lo, hi),
                Side::On => self.first(pos, lo, hi).or_else(|| self.first(neg, lo, hi)),
            };
        }
        let t = -dist / dn;
        // Patches in a subtree may reach COPLANAR beyond the plane: widen by that much.
        let margin = COPLANAR / dn.abs();
        let (near, far) = if dn > 0.0 { (neg, pos) } else { (pos, neg) };
        if t + margin < lo {
            return self.first(far, lo, hi);
        }
        if t - margin > hi {
            return self.first(near, lo, hi);
        }
        if let Some(b) = self.first(near, lo, hi.min(t + margin)) {
            return Some(b);
        }
        if t >= lo
            && t <= hi
            && !self.ends.contains(&node)
            && p.bary.contains(self.from + self.dir * t)
        {
            return Some(node);
        }
        self.first(far, lo.max(t - margin), hi)
    }
}

/// Splits `p`, which straddles `plane`, into two or three pieces on either side (SPLASH-2's
/// cases: one corner alone on its side, or one corner on the plane and the other two on
/// opposite sides). The pieces keep `p`'s orientation, plane and material.
fn split(p: &Piece, plane: &Plane, sides: [Side; 3]) -> Vec<Piece> {
    let v = p.tri;
    let h = v.map(|x| plane.distance(x));
    // Rotate so that corner 0 is the lone one (or the one on the plane).
    let lone = if sides[0] == sides[1] {
        2
    } else if sides[0] == sides[2] {
        1
    } else if sides[1] == sides[2] {
        0
    } else {
        sides.iter().position(|&s| s == Side::On).unwrap_or(0)
    };
    let (a, b, c) = (lone, (lone + 1) % 3, (lone + 2) % 3);
    let piece = |tri: [Vec3; 3]| Piece {
        tri,
        plane: p.plane,
        color: p.color,
        emit: p.emit,
    };
    if sides[a] == Side::On {
        // Corner a on the plane, b and c on opposite sides: cut the edge b-c.
        let m = Vec3::lerp(v[b], v[c], h[b] / (h[b] - h[c]));
        vec![piece([v[a], v[b], m]), piece([v[a], m, v[c]])]
    } else {
        let ab = Vec3::lerp(v[a], v[b], h[a] / (h[a] - h[b]));
        let ac = Vec3::lerp(v[a], v[c], h[a] / (h[a] - h[c]));
        vec![
            piece([v[a], ab, ac]),
            piece([ab, v[b], v[c]]),
            piece([ab, v[c], ac]),
        ]
    }
}
