//! Data-flow scopes against their oracle, the sequential elision: random programs (random
//! footprints over a small array, contiguous and strided, all access modes, overlapping and
//! unaligned, nested up to four levels) must leave exactly the data that running every task
//! in spawn order, depth first, leaves — on every pool, at 1, 2 and 4 threads, in block mode
//! at several block sizes and in exact mode.

use taskpools::dataflow::{self, Config, Scope, TileMut};
use taskpools::forkjoin::{Pool, Runtime};

const ROWS: usize = 6;
const COLS: usize = 8;
const N: usize = ROWS * COLS;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Read,
    Out,
    InOut,
}

/// Where an access lies, relative to the region it is declared on.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// Elements `[lo, hi)` of a contiguous region.
    Range(usize, usize),
    /// A sub-matrix at (r, c) of h × w of a matrix region.
    Tile(usize, usize, usize, usize),
}

#[derive(Clone, Debug)]
struct Acc {
    shape: Shape,
    mode: Mode,
    /// The array elements it covers, in the order the task sees them (row-major).
    elems: Vec<usize>,
}

/// What a task's children declare on: its first write access (a slice or a tile).
#[derive(Clone, Copy, Debug)]
enum Space {
    /// Contiguous, starting at array element `off`, `len` long.
    Slice { off: usize, len: usize },
    /// A matrix at array row `r`, column `c`, of h × w (rows `COLS` apart in the array).
    Matrix {
        r: usize,
        c: usize,
        h: usize,
        w: usize,
    },
}

#[derive(Debug)]
struct TaskSpec {
    id: u64,
    accs: Vec<Acc>,
    children: Vec<TaskSpec>,
}

fn mix(a: u64, b: u64) -> u64 {
    let mut x = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^ (x >> 32)
}

fn conflicts(a: &Acc, b: &Acc) -> bool {
    (a.mode != Mode::Read || b.mode != Mode::Read) && a.elems.iter().any(|e| b.elems.contains(e))
}

fn gen_access(rng: &mut fastrand::Rng, space: Space) -> Option<Acc> {
    let mode = [Mode::Read, Mode::Out, Mode::InOut][rng.usize(..3)];
    match space {
        Space::Slice { off, len } => {
            if len == 0 {
                return None;
            }
            let lo = rng.usize(..len);
            let hi = rng.usize(lo + 1..=len.min(lo + 12));
            Some(Acc {
                shape: Shape::Range(lo, hi),
                mode,
                elems: (off + lo..off + hi).collect(),
            })
        }
        Space::Matrix { r, c, h, w } => {
            if h == 0 || w == 0 {
                return None;
            }
            let (tr, tc) = (rng.usize(..h), rng.usize(..w));
            let (th, tw) = (rng.usize(1..=h - tr), rng.usize(1..=w - tc));
            let elems = (0..th)
                .flat_map(|i| (0..tw).map(move |j| (r + tr + i) * COLS + c + tc + j))
                .collect();
            Some(Acc {
                shape: Shape::Tile(tr, tc, th, tw),
                mode,
                elems,
            })
        }
    }
}

/// The space an access opens to the task's children.
fn child_space(parent: Space, a: &Acc) -> Space {
    match (parent, a.shape) {
        (Space::Slice { off, .. }, Shape::Range(lo, hi)) => Space::Slice {
            off: off + lo,
            len: hi - lo,
        },
        (Space::Matrix { r, c, .. }, Shape::Tile(tr, tc, h, w)) => Space::Matrix {
            r: r + tr,
            c: c + tc,
            h,
            w,
        },
        _ => unreachable!("shapes follow their space"),
    }
}

fn gen_task(rng: &mut fastrand::Rng, space: Space, depth: u32, next_id: &mut u64) -> TaskSpec {
    let id = *next_id;
    *next_id += 1;
    let mut accs: Vec<Acc> = Vec::new();
    for _ in 0..rng.usize(1..=3) {
        if let Some(a) = gen_access(rng, space) {
            if !accs.iter().any(|b| conflicts(&a, b)) {
                accs.push(a);
            }
        }
    }
    let mut children = Vec::new();
    if depth < 4 && rng.usize(..10) < 6 - depth as usize {
        if let Some(w) = accs.iter().find(|a| a.mode != Mode::Read) {
            let cs = child_space(space, w);
            for _ in 0..rng.usize(1..=3) {
                children.push(gen_task(rng, cs, depth + 1, next_id));
            }
        }
    }
    TaskSpec { id, accs, children }
}

/// A program: root tasks over the whole array, seen as a slice or as a matrix.
fn gen_program(seed: u64) -> Vec<(bool, TaskSpec)> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut next_id = 1;
    (0..rng.usize(1..=8))
        .map(|_| {
            let matrix = rng.bool();
            let space = if matrix {
                Space::Matrix {
                    r: 0,
                    c: 0,
                    h: ROWS,
                    w: COLS,
                }
            } else {
                Space::Slice { off: 0, len: N }
            };
            (matrix, gen_task(&mut rng, space, 0, &mut next_id))
        })
        .collect()
}

/// The effect of one task on its data: hash what it reads, then write every element it
/// writes (`inout` from its old value, `out` without reading it).
fn effect(id: u64, reads: &[u64]) -> u64 {
    reads.iter().fold(id, |h, &v| mix(h, v))
}

fn new_value(mode: Mode, old: u64, h: u64, k: usize, j: usize) -> u64 {
    let base = mix(h, (k * 1000 + j) as u64);
    match mode {
        Mode::InOut => mix(base, old),
        Mode::Out => base,
        Mode::Read => unreachable!(),
    }
}

fn run_sequential(t: &TaskSpec, data: &mut [u64]) {
    let reads: Vec<u64> = t
        .accs
        .iter()
        .filter(|a| a.mode != Mode::Out)
        .flat_map(|a| a.elems.iter().map(|&e| data[e]))
        .collect();
    let h = effect(t.id, &reads);
    for (k, a) in t.accs.iter().enumerate() {
        if a.mode != Mode::Read {
            for (j, &e) in a.elems.iter().enumerate() {
                data[e] = new_value(a.mode, data[e], h, k, j);
            }
        }
    }
    for c in &t.children {
        run_sequential(c, data);
    }
}

/// The data a task receives for one access.
enum Got<'t> {
    R(&'t [u64]),
    W(&'t mut [u64]),
    TR(dataflow::TileRef<'t, u64>),
    TW(TileMut<'t, u64>),
}

fn run_task<'t>(t: &'t TaskSpec, df: &'t Scope<'t, '_>, got: Vec<Got<'t>>) {
    let mut reads = Vec::new();
    for (a, g) in t.accs.iter().zip(&got) {
        if a.mode == Mode::Out {
            continue;
        }
        match g {
            Got::R(s) => reads.extend_from_slice(s),
            Got::W(s) => reads.extend_from_slice(s),
            Got::TR(m) => (0..m.rows()).for_each(|i| reads.extend_from_slice(m.row(i))),
            Got::TW(m) => (0..m.rows()).for_each(|i| reads.extend_from_slice(m.row(i))),
        }
    }
    let h = effect(t.id, &reads);
    let mut first_write = None;
    for (k, (a, g)) in t.accs.iter().zip(got).enumerate() {
        match g {
            Got::W(s) => {
                for (j, x) in s.iter_mut().enumerate() {
                    *x = new_value(a.mode, *x, h, k, j);
                }
                first_write.get_or_insert(Got::W(s));
            }
            Got::TW(mut m) => {
                for i in 0..m.rows() {
                    let w = m.cols();
                    for (jj, x) in m.row_mut(i).iter_mut().enumerate() {
                        *x = new_value(a.mode, *x, h, k, i * w + jj);
                    }
                }
                first_write.get_or_insert(Got::TW(m));
            }
            _ => {}
        }
    }
    if t.children.is_empty() {
        return;
    }
    match first_write.expect("children only under a write access") {
        Got::W(s) => {
            let r = df.region(s);
            for c in &t.children {
                spawn_task(df, c, |shape, mode| match shape {
                    Shape::Range(lo, hi) => declare_part(r.part(lo..hi), mode),
                    Shape::Tile(..) => unreachable!(),
                });
            }
        }
        Got::TW(m) => {
            let m = df.matrix(m);
            for c in &t.children {
                spawn_task(df, c, |shape, mode| match shape {
                    Shape::Tile(r, c, h, w) => declare_sub(m.sub(r, c, h, w), mode),
                    Shape::Range(..) => unreachable!(),
                });
            }
        }
        _ => unreachable!(),
    }
}

/// A declared access of one of four kinds, so that a task's accesses can be a `Vec`.
enum Decl<'s> {
    R(dataflow::Read<'s, u64>),
    W(dataflow::Write<'s, u64>),
    TR(dataflow::TileRead<'s, u64>),
    TW(dataflow::TileWrite<'s, u64>),
}

fn declare_part(p: dataflow::Part<'_, u64>, mode: Mode) -> Decl<'_> {
    match mode {
        Mode::Read => Decl::R(p.read()),
        Mode::Out => Decl::W(p.out()),
        Mode::InOut => Decl::W(p.inout()),
    }
}

fn declare_sub(p: dataflow::Sub<'_, u64>, mode: Mode) -> Decl<'_> {
    match mode {
        Mode::Read => Decl::TR(p.read()),
        Mode::Out => Decl::TW(p.out()),
        Mode::InOut => Decl::TW(p.inout()),
    }
}

/// Spawns `t` with its accesses declared by `declare`. The four kinds go through four
/// vectors (the API's `Vec<A>` accepts one kind), re-interleaved in the task.
fn spawn_task<'s>(df: &Scope<'s, '_>, t: &'s TaskSpec, declare: impl Fn(Shape, Mode) -> Decl<'s>) {
    let (mut r, mut w, mut tr, mut tw) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut order = Vec::new();
    for a in &t.accs {
        match declare(a.shape, a.mode) {
            Decl::R(x) => {
                order.push(0u8);
                r.push(x)
            }
            Decl::W(x) => {
                order.push(1);
                w.push(x)
            }
            Decl::TR(x) => {
                order.push(2);
                tr.push(x)
            }
            Decl::TW(x) => {
                order.push(3);
                tw.push(x)
            }
        }
    }
    let spec = t;
    df.spawn((r, w, tr, tw), move |df, (r, w, tr, tw)| {
        let (mut r, mut w, mut tr, mut tw) =
            (r.into_iter(), w.into_iter(), tr.into_iter(), tw.into_iter());
        let got = order
            .iter()
            .map(|k| match k {
                0 => Got::R(r.next().unwrap()),
                1 => Got::W(w.next().unwrap()),
                2 => Got::TR(tr.next().unwrap()),
                _ => Got::TW(tw.next().unwrap()),
            })
            .collect();
        run_task(spec, df, got);
    });
}

fn run_parallel(prog: &[(bool, TaskSpec)], data: &mut [u64], config: Config) {
    dataflow::scope_with(config, |df| {
        let r = df.region(data);
        let m = r.matrix(ROWS, COLS);
        for (matrix, t) in prog {
            if *matrix {
                spawn_task(df, t, |shape, mode| match shape {
                    Shape::Tile(rr, c, h, w) => declare_sub(m.sub(rr, c, h, w), mode),
                    Shape::Range(..) => unreachable!(),
                });
            } else {
                spawn_task(df, t, |shape, mode| match shape {
                    Shape::Range(lo, hi) => declare_part(r.part(lo..hi), mode),
                    Shape::Tile(..) => unreachable!(),
                });
            }
        }
    });
}

fn initial() -> Vec<u64> {
    (0..N as u64).map(|i| mix(i, 77)).collect()
}

fn configs() -> Vec<Config> {
    vec![
        Config::blocks(8).unwrap(),
        Config::blocks(24).unwrap(),
        Config::thesis(),
        Config::exact().with_index_block(16).unwrap(),
        Config::exact(),
    ]
}

#[test]
fn random_programs_match_the_sequential_elision() {
    let programs: u64 = if std::env::var_os("TASKPOOLS_STRESS").is_some_and(|v| v == "small") {
        8
    } else if cfg!(debug_assertions) {
        40
    } else {
        150
    };
    for pool in Pool::ALL {
        for threads in [1, 2, 4] {
            let rt = Runtime::builder()
                .threads(threads)
                .pool(pool)
                .build()
                .unwrap();
            for seed in 0..programs {
                let prog = gen_program(seed);
                let mut expected = initial();
                for (_, t) in &prog {
                    run_sequential(t, &mut expected);
                }
                for config in configs() {
                    let mut data = initial();
                    rt.install(|| run_parallel(&prog, &mut data, config));
                    assert_eq!(
                        data, expected,
                        "seed {seed}, {pool}, {threads} threads, {config:?}: {prog:#?}"
                    );
                }
            }
        }
    }
}
