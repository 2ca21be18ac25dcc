//! Data-flow scopes against their oracle, the sequential elision: random programs (random
//! footprints over a small array, contiguous and strided, all access modes, overlapping and
//! unaligned, nested up to four levels) must leave exactly the data that running every task
//! in spawn order, depth first, leaves — on every pool, at 1, 2 and 4 threads, in block mode
//! at several block sizes and in exact mode.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

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
        Config::default(),
        Config::exact(16).unwrap(),
        Config::exact(2048).unwrap(),
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

#[test]
fn overlapping_declarations_with_a_write_in_one_spawn_are_refused_before_anything_runs() {
    let ran = AtomicUsize::new(0);
    let mut v = vec![0u32; 16];
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        dataflow::scope(|df| {
            let r = df.region(&mut v);
            df.spawn((r.part(0..8).read(), r.part(4..12).inout()), |_, _| {
                ran.fetch_add(1, Ordering::Relaxed);
            });
        })
    }));
    let msg = r.unwrap_err();
    let msg = msg.downcast_ref::<String>().unwrap();
    assert!(msg.contains("overlap"), "{msg}");
    assert_eq!(ran.load(Ordering::Relaxed), 0);
    // Reads may overlap; disjoint tiles of one matrix may be written together.
    dataflow::scope(|df| {
        let r = df.region(&mut v);
        let m = r.matrix(4, 4);
        df.spawn((r.part(0..8).read(), r.part(4..12).read()), |_, _| {
            ran.fetch_add(1, Ordering::Relaxed);
        });
        df.spawn(
            (m.tile(0, 0, 2).inout(), m.tile(0, 1, 2).out()),
            |_, (mut a, mut b)| {
                a[(1, 1)] = 1;
                b[(1, 1)] = 2;
            },
        );
    });
    assert_eq!(ran.load(Ordering::Relaxed), 1);
    assert_eq!(v[5], 1);
    assert_eq!(v[7], 2);
}

#[test]
fn a_panicking_task_cancels_its_dependents_and_its_siblings_finish() {
    for pool in Pool::ALL {
        let rt = Runtime::builder().threads(2).pool(pool).build().unwrap();
        let mut v = vec![0u64; 64];
        let r = rt.install(|| {
            dataflow::try_scope(Config::exact(64).unwrap(), |df| {
                let r = df.region(&mut v);
                let (a, b) = (r.part(0..32), r.part(32..64));
                df.spawn(a.out(), |_, a| {
                    a[0] = 1;
                    panic!("expected test panic in a data-flow task");
                });
                // Two dependents of the panicking task, one through another.
                df.spawn(a.inout(), |_, a| a[1] = 1);
                df.spawn((a.read(), b.part(1..32).inout()), |_, (_, b)| b[0] = 1);
                // An independent sibling.
                df.spawn(b.part(0..1).out(), |_, b| b[0] = 7);
            })
        });
        let p = r.unwrap_err();
        assert_eq!(p.cancelled, 2, "{pool}");
        assert!(format!("{p:?}").contains("expected test panic"));
        assert_eq!((v[0], v[1], v[32], v[33]), (1, 0, 7, 0), "{pool}");
        // The runtime is still usable.
        assert_eq!(rt.join(|| 1, || 2), (1, 2));
    }
}

#[test]
fn nested_children_finish_before_their_parent_releases_its_successors() {
    // Each parent hands its half to 8 children that each wait a little; the successor reads
    // the whole array and must see every child's write.
    let mut v = vec![0u64; 1024];
    let seen = Arc::new(AtomicUsize::new(0));
    let seen2 = seen.clone();
    dataflow::scope(|df| {
        let r = df.region(&mut v);
        for half in r.chunks(512) {
            df.spawn(half.out(), |df, h| {
                let r = df.region(h);
                for part in r.chunks(64) {
                    df.spawn(part.out(), |_, p| {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                        p.iter_mut().for_each(|x| *x = 1);
                    });
                }
            });
        }
        df.spawn(r.read(), move |_, all| {
            seen2.store(all.iter().filter(|&&x| x == 1).count(), Ordering::Relaxed);
        });
    });
    assert_eq!(seen.load(Ordering::Relaxed), 1024);
}

#[test]
fn sync_waits_for_the_children_so_far_and_frees_their_memory() {
    let mut v = vec![0u64; 256];
    dataflow::scope(|df| {
        let r = df.region(&mut v);
        for round in 0..100u64 {
            for c in r.chunks(16) {
                df.spawn(c.inout(), move |_, c| {
                    c.iter_mut().for_each(|x| *x += round)
                });
            }
            df.sync();
        }
    });
    assert!(v.iter().all(|&x| x == (0..100).sum::<u64>()));
}

#[test]
fn tiles_split_for_fork_join_are_disjoint_views() {
    let mut v: Vec<u32> = (0..64).collect();
    let tiles = TileMut::from_slice(&mut v, 8, 8).into_tiles(3);
    assert_eq!(tiles.len(), 3);
    assert_eq!(tiles[0].len(), 3);
    assert_eq!((tiles[2][2].rows(), tiles[2][2].cols()), (2, 2));
    taskpools::forkjoin::scope(|s| {
        for row in tiles {
            for mut t in row {
                s.spawn(move |_| {
                    for i in 0..t.rows() {
                        t.row_mut(i).iter_mut().for_each(|x| *x *= 2);
                    }
                });
            }
        }
    });
    assert!(v.iter().enumerate().all(|(i, &x)| x == 2 * i as u32));
}

#[test]
fn bad_block_sizes_are_refused() {
    assert!(Config::blocks(0).is_err());
    assert!(Config::exact(Config::MAX_BLOCK + 1).is_err());
    let e = Config::blocks(0).unwrap_err().to_string();
    assert!(e.contains("block size"), "{e}");
}

#[test]
fn sizes_that_overflow_are_refused_not_wrapped() {
    let mut v = [0u8; 16];
    let (_a, b) = v.split_at_mut(8);
    let caught = |f: &dyn Fn()| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err();
    dataflow::scope(|df| {
        let r = df.region(&mut *b);
        let m = r.matrix(2, 4);
        assert!(caught(&|| {
            m.sub(usize::MAX, 0, 1, 1);
        }));
        assert!(caught(&|| {
            m.sub(0, 1, 1, usize::MAX);
        }));
        assert!(caught(&|| {
            r.matrix_ld(3, 1, usize::MAX / 2 + 1);
        }));
        assert!(caught(&|| {
            m.tile(usize::MAX, 0, 2);
        }));
    });
    let w = [0u8; 4];
    assert!(caught(&|| {
        TileMut::from_slice(&mut [0u8; 4], 1 << 33, 1 << 31);
    }));
    assert!(caught(&|| {
        dataflow::TileRef::from_slice(&w, usize::MAX, 2);
    }));
}

/// A zero-sized type whose `&mut`s must not be live on two threads at once.
struct Token;

#[test]
fn tasks_over_zero_sized_elements_are_still_ordered() {
    static INSIDE: AtomicUsize = AtomicUsize::new(0);
    static CLASHES: AtomicUsize = AtomicUsize::new(0);
    let rt = Runtime::builder().threads(2).build().unwrap();
    let mut tokens = vec![Token, Token];
    rt.install(|| {
        dataflow::scope(|df| {
            let r = df.region(&mut tokens);
            for _ in 0..20 {
                df.spawn(r.part(0..1).inout(), |_, _t: &mut [Token]| {
                    if INSIDE.fetch_add(1, Ordering::SeqCst) != 0 {
                        CLASHES.fetch_add(1, Ordering::SeqCst);
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    INSIDE.fetch_sub(1, Ordering::SeqCst);
                });
            }
        })
    });
    assert_eq!(CLASHES.load(Ordering::SeqCst), 0);
}

#[test]
fn a_late_dependent_of_a_failed_task_is_cancelled_too() {
    let rt = Runtime::builder().threads(2).build().unwrap();
    let mut v = vec![0u64; 8];
    let ran = AtomicUsize::new(0);
    let r = rt.install(|| {
        dataflow::try_scope(Config::default(), |df| {
            let r = df.region(&mut v);
            df.spawn(r.inout(), |_, x| {
                x[0] = 1;
                panic!("expected test panic in a data-flow task");
            });
            // Let the other worker run (and fail) it before the dependent is spawned.
            std::thread::sleep(std::time::Duration::from_millis(200));
            df.spawn(r.read(), |_, _| {
                ran.fetch_add(1, Ordering::Relaxed);
            });
        })
    });
    let p = r.unwrap_err();
    assert_eq!(p.cancelled, 1);
    assert_eq!(ran.load(Ordering::Relaxed), 0);
}

#[test]
fn a_panicking_destructor_of_a_cancelled_task_is_reported_not_an_abort() {
    struct Bomb;
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("expected test panic in a destructor");
        }
    }
    let rt = Runtime::builder().threads(2).build().unwrap();
    let mut v = vec![0u64; 8];
    let r = rt.install(|| {
        dataflow::try_scope(Config::default(), |df| {
            let r = df.region(&mut v);
            df.spawn(r.inout(), |_, _| {
                panic!("expected test panic in a data-flow task")
            });
            let bomb = Bomb;
            df.spawn(r.inout(), move |_, _| {
                let _keep = &bomb;
            });
        })
    });
    let p = r.unwrap_err();
    assert_eq!(p.cancelled, 1);
    assert_eq!(rt.join(|| 1, || 2), (1, 2));
}

#[test]
fn sync_resumes_a_child_s_panic() {
    let mut v = vec![0u64; 8];
    let after = AtomicUsize::new(0);
    let r = dataflow::try_scope(Config::default(), |df| {
        let r = df.region(&mut v);
        df.spawn(r.inout(), |_, _| {
            panic!("expected test panic in a data-flow task")
        });
        df.sync();
        after.fetch_add(1, Ordering::Relaxed);
    });
    assert!(r.is_err());
    assert_eq!(after.load(Ordering::Relaxed), 0);
}

#[test]
fn long_streams_past_the_throttle_match_the_sequential_run() {
    // Far more children than the spawner lets queue up, so spawns run tasks themselves
    // (ready ones at once, else a queued job): the result must not change.
    const BLOCKS: usize = 32;
    let mut rng = fastrand::Rng::with_seed(11);
    let tasks: Vec<(usize, usize, usize)> = (0..20_000)
        .map(|_| {
            (
                rng.usize(..BLOCKS),
                rng.usize(..BLOCKS),
                rng.usize(..BLOCKS),
            )
        })
        .collect();
    let mut expected = vec![1u64; BLOCKS * 4];
    for &(w, a, b) in &tasks {
        if w != a && w != b {
            let s = expected[a * 4].wrapping_mul(3) ^ expected[b * 4];
            expected[w * 4] = expected[w * 4].wrapping_add(s);
        }
    }
    for pool in Pool::ALL {
        for threads in [1, 2] {
            let rt = Runtime::builder()
                .threads(threads)
                .pool(pool)
                .build()
                .unwrap();
            let mut d = vec![1u64; BLOCKS * 4];
            rt.install(|| {
                dataflow::scope_with(Config::blocks(32).unwrap(), |df| {
                    let r = df.region(&mut d);
                    let p: Vec<_> = r.chunks(4).collect();
                    for &(w, a, b) in &tasks {
                        if w != a && w != b {
                            df.spawn((p[w].inout(), p[a].read(), p[b].read()), |_, (w, a, b)| {
                                w[0] = w[0].wrapping_add(a[0].wrapping_mul(3) ^ b[0]);
                            });
                        }
                    }
                })
            });
            assert_eq!(d, expected, "{pool}, {threads} threads");
        }
    }
}

#[test]
fn a_huge_slice_of_zero_sized_elements_is_one_slot() {
    let mut v = vec![(); usize::MAX];
    let n = AtomicUsize::new(0);
    dataflow::scope(|df| {
        let r = df.region(&mut v);
        df.spawn(r.part(0..10).inout(), |_, _| {
            n.fetch_add(1, Ordering::Relaxed);
        });
        df.spawn(r.part(usize::MAX - 10..usize::MAX).read(), |_, _| {
            n.fetch_add(1, Ordering::Relaxed);
        });
    });
    assert_eq!(n.load(Ordering::Relaxed), 2);
}

#[test]
fn after_a_caught_sync_panic_the_scope_goes_on_afresh() {
    let mut v = vec![0u64; 2];
    let r = dataflow::try_scope(Config::default(), |df| {
        let r = df.region(&mut v);
        df.spawn(r.part(0..1).inout(), |_, _| {
            panic!("expected test panic in a data-flow task")
        });
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| df.sync())).is_err();
        df.spawn(r.part(0..1).inout(), |_, x| x[0] = 42);
        caught
    });
    assert!(r.unwrap());
    assert_eq!(v[0], 42);
}

/// Read-only tiles split like mutable ones, and views built from raw parts see the same
/// elements as views built from slices.
#[test]
fn read_only_tiles_split_and_raw_views_agree_with_slice_views() {
    use taskpools::dataflow::TileRef;
    let (rows, cols) = (6, 7);
    let data: Vec<u32> = (0..rows * cols).map(|x| x as u32).collect();
    let t = TileRef::from_slice(&data, rows, cols);
    let [a, b, c, d] = t.quadrants(2, 3);
    assert_eq!((a.rows(), a.cols(), d.rows(), d.cols()), (2, 3, 4, 4));
    assert_eq!(b[(0, 0)], 3);
    assert_eq!(c[(0, 0)], (2 * cols) as u32);
    assert_eq!(d[(3, 3)], (5 * cols + 6) as u32);
    assert_eq!(d.row(1), &data[3 * cols + 3..4 * cols]);
    let (top, bottom) = t.split_at_row(rows);
    assert_eq!((top.rows(), bottom.rows()), (rows, 0));
    // SAFETY: a 3×2 view inside `data` (rows 7 apart), only read here.
    let raw = unsafe { TileRef::from_raw_parts(data.as_ptr().add(8), 3, 2, cols) };
    assert_eq!(raw.row(2), &data[22..24]);
    let mut m = data.clone();
    // SAFETY: a 2×2 view inside `m`, used only through `v` meanwhile.
    let mut v = unsafe { TileMut::from_raw_parts(m.as_mut_ptr().add(cols), 2, 2, cols) };
    v[(1, 1)] = 99;
    let r = v.into_ref();
    assert_eq!(r[(1, 1)], 99);
    assert_eq!(m[2 * cols + 1], 99);
}

#[test]
#[should_panic(expected = "split at column 8 of a tile of 7 columns")]
fn read_only_tiles_refuse_a_split_outside() {
    let data = vec![0u8; 42];
    let _ = taskpools::dataflow::TileRef::from_slice(&data, 6, 7).split_at_col(8);
}
