//! The kernels of `taskpools iter`: each written once sequentially and once with rayon's
//! parallel iterators, with its input, its size at a scale, and the check of its result.
//!
//! A run returns a checksum of its result; the checks inside a run (sorted output sorted and a
//! permutation of its input, counts that add up, a sum against its closed form) make a wrong
//! result an error. Across runs and processes, every runtime's checksum must equal the
//! sequential one (`taskpools iter` compares them): the parallel kernels compute exactly what
//! the sequential loops do (floating-point sums in the same order), so the checksums are
//! equal bit for bit.
//!
//! This file is the kernel program's (`iter-kernels/src/main.rs`) and is also compiled into
//! the workbench (`taskpools iter` takes the names and sizes from it, and its unit tests run
//! with the workspace's).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rayon::prelude::*;

/// The kernels, in the order `taskpools iter` runs them.
pub const KERNELS: &[&str] = &[
    "sum-squares",
    "mandelbrot",
    "nbody",
    "wordfreq",
    "sort-u64",
    "sort-strings",
    "filter-collect",
    "flat-map",
];

/// Steps of the n-body kernel.
pub const NBODY_STEPS: usize = 10;
/// Iterations per Mandelbrot pixel at most.
pub const MANDEL_MAX_ITER: u32 = 256;

/// The kernel's size at scale 1 (the sizes): elements, pixels per side, bodies or
/// bytes of text.
pub fn default_size(kernel: &str) -> Option<usize> {
    Some(match kernel {
        "sum-squares" => 100_000_000,
        "mandelbrot" => 2048,
        "nbody" => 4096,
        "wordfreq" => 100_000_000,
        "sort-u64" => 10_000_000,
        "sort-strings" => 1_000_000,
        "filter-collect" => 10_000_000,
        "flat-map" => 10_000_000,
        _ => return None,
    })
}

/// The size at `scale` (0 < scale <= 4): the work scales by `scale`, so the side of the
/// Mandelbrot image and the number of bodies (quadratic work) scale by its square root. At
/// least 1 (2 bodies).
pub fn size_at(kernel: &str, scale: f64) -> Option<usize> {
    let d = default_size(kernel)? as f64;
    let s = match kernel {
        "mandelbrot" | "nbody" => d * scale.sqrt(),
        _ => d * scale,
    };
    let min = if kernel == "nbody" { 2.0 } else { 1.0 };
    Some(s.round().max(min) as usize)
}

/// A kernel's input, made once per process (not timed).
pub enum Input {
    /// sum-squares, sort-u64, filter-collect.
    U64(Vec<u64>),
    /// mandelbrot: pixels per side.
    Side(usize),
    /// nbody: the bodies at the start.
    Bodies(Vec<Body>),
    /// wordfreq: the text and how many words it holds.
    Text(String, usize),
    /// sort-strings.
    Strings(Vec<String>),
    /// flat-map: the ragged vectors and their total length.
    Ragged(Vec<Vec<u32>>, usize),
}

/// An n-body body.
#[derive(Clone, Copy, Debug)]
pub struct Body {
    pub pos: [f64; 3],
    pub vel: [f64; 3],
    pub mass: f64,
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Mixes one value into an order-dependent checksum.
fn mix(h: u64, x: u64) -> u64 {
    (h ^ x).wrapping_mul(0x1000_0000_01B3).rotate_left(29)
}

/// A value's own hash (for order-independent checksums: their wrapping sum).
fn hash64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    x ^= x >> 33;
    x = x.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    x ^ (x >> 33)
}

fn hash_str(s: &str) -> u64 {
    s.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01B3)
    })
}

/// Builds the input of `kernel` at `size`.
pub fn input(kernel: &str, size: usize) -> Result<Input, String> {
    let mut rng = Rng::new(size as u64 ^ 0x5EED);
    Ok(match kernel {
        // Small values, so that the sum of squares fits a u64 at any size we accept.
        "sum-squares" => Input::U64((0..size as u64).map(|i| i % 1024).collect()),
        "sort-u64" | "filter-collect" => Input::U64((0..size).map(|_| rng.next()).collect()),
        "mandelbrot" => Input::Side(size),
        "nbody" => Input::Bodies(
            (0..size)
                .map(|_| Body {
                    pos: [rng.unit(), rng.unit(), rng.unit()],
                    vel: [0.0; 3],
                    mass: 0.5 + rng.unit(),
                })
                .collect(),
        ),
        "wordfreq" => {
            // Words from a vocabulary of 20 000 made-up words, drawn with a skew (the square
            // of a uniform pick favours the first words), separated by spaces and newlines.
            let vocab: Vec<String> = (0..20_000)
                .map(|_| {
                    let len = 2 + rng.below(9) as usize;
                    (0..len)
                        .map(|_| (b'a' + rng.below(26) as u8) as char)
                        .collect()
                })
                .collect();
            let mut text = String::with_capacity(size + 16);
            let mut words = 0;
            while text.len() < size {
                let u = rng.unit();
                let w = &vocab[((u * u) * vocab.len() as f64) as usize];
                if text.len() + w.len() + 1 > size && !text.is_empty() {
                    break;
                }
                text.push_str(w);
                text.push(if rng.below(12) == 0 { '\n' } else { ' ' });
                words += 1;
            }
            Input::Text(text, words)
        }
        "sort-strings" => Input::Strings(
            (0..size)
                .map(|_| {
                    let len = 4 + rng.below(17) as usize;
                    (0..len)
                        .map(|_| (b'a' + rng.below(26) as u8) as char)
                        .collect()
                })
                .collect(),
        ),
        "flat-map" => {
            // Ragged: about ten elements per inner vector on average, 0 to 30, a few long ones.
            let mut v = Vec::new();
            let mut total = 0;
            while total < size {
                let len = if rng.below(100) == 0 {
                    200
                } else {
                    rng.below(19) as usize
                }
                .min(size - total);
                v.push((0..len).map(|_| rng.next() as u32).collect::<Vec<u32>>());
                total += len;
            }
            Input::Ragged(v, total)
        }
        _ => return Err(format!("unknown kernel {kernel}")),
    })
}

/// The sequential loop (`par == false`) or rayon's iterators (`par == true`, inside the pool
/// the caller installed) on `input`: the seconds the kernel took and its checksum, or what
/// was wrong with its result. Copies that a kernel consumes (the sorts' input) are made
/// before the clock starts, and the checks run after it stops.
pub fn run(kernel: &str, input: &Input, par: bool) -> Result<(f64, u64), String> {
    match (kernel, input) {
        ("sum-squares", Input::U64(v)) => {
            let t = Instant::now();
            let s: u64 = if par {
                v.par_iter().map(|&x| x * x).sum()
            } else {
                v.iter().map(|&x| x * x).sum()
            };
            let secs = t.elapsed().as_secs_f64();
            check_sum_squares(v.len(), s)?;
            Ok((secs, s))
        }
        ("mandelbrot", &Input::Side(side)) => {
            let t = Instant::now();
            let img = mandelbrot(side, par);
            let secs = t.elapsed().as_secs_f64();
            Ok((secs, checksum_ordered(img.iter().map(|&c| c as u64))))
        }
        ("nbody", Input::Bodies(b)) => {
            let mut bodies = b.clone();
            let t = Instant::now();
            nbody(&mut bodies, NBODY_STEPS, par);
            let secs = t.elapsed().as_secs_f64();
            let sum = checksum_ordered(
                bodies
                    .iter()
                    .flat_map(|b| b.pos.iter().chain(&b.vel).map(|x| x.to_bits())),
            );
            if bodies.iter().any(|b| b.pos.iter().any(|x| !x.is_finite())) {
                return Err("nbody: a position is not finite".into());
            }
            Ok((secs, sum))
        }
        ("wordfreq", Input::Text(text, words)) => {
            let t = Instant::now();
            let counts = wordfreq(text, par);
            let secs = t.elapsed().as_secs_f64();
            Ok((secs, check_wordfreq(&counts, *words)?))
        }
        ("sort-u64", Input::U64(v)) => {
            let mut s = v.clone();
            let t = Instant::now();
            if par {
                s.par_sort();
            } else {
                s.sort();
            }
            let secs = t.elapsed().as_secs_f64();
            Ok((secs, check_sorted(v, &s, |&x| x)?))
        }
        ("sort-strings", Input::Strings(v)) => {
            let mut s = v.clone();
            let t = Instant::now();
            if par {
                s.par_sort();
            } else {
                s.sort();
            }
            let secs = t.elapsed().as_secs_f64();
            Ok((secs, check_sorted(v, &s, |x| hash_str(x))?))
        }
        ("filter-collect", Input::U64(v)) => {
            let t = Instant::now();
            let kept: Vec<u64> = if par {
                v.par_iter().copied().filter(|&x| keep(x)).collect()
            } else {
                v.iter().copied().filter(|&x| keep(x)).collect()
            };
            let secs = t.elapsed().as_secs_f64();
            Ok((secs, check_filtered(v, &kept)?))
        }
        ("flat-map", Input::Ragged(v, total)) => {
            let t = Instant::now();
            let flat: Vec<u32> = if par {
                v.par_iter()
                    .flat_map(|inner| inner.par_iter().map(|&x| x ^ 0x5555))
                    .collect()
            } else {
                v.iter()
                    .flat_map(|inner| inner.iter().map(|&x| x ^ 0x5555))
                    .collect()
            };
            let secs = t.elapsed().as_secs_f64();
            if flat.len() != *total {
                return Err(format!(
                    "flat-map: {} elements collected, {total} expected",
                    flat.len()
                ));
            }
            Ok((secs, checksum_ordered(flat.iter().map(|&x| x as u64))))
        }
        _ => Err(format!(
            "{kernel}: no such kernel, or an input of another kernel"
        )),
    }
}

/// The order-dependent checksum of a sequence.
pub fn checksum_ordered(xs: impl Iterator<Item = u64>) -> u64 {
    xs.fold(0x84222325, mix)
}

/// The sum of `(i % 1024)^2` for `i < n`, from its closed form.
pub fn check_sum_squares(n: usize, got: u64) -> Result<(), String> {
    let sq = |k: u64| k * (k.wrapping_sub(1)) * (2 * k).wrapping_sub(1) / 6; // sum of j^2, j < k
    let n = n as u64;
    let want = (n / 1024) * sq(1024) + sq(n % 1024);
    if got != want {
        return Err(format!("sum-squares: sum {got}, expected {want}"));
    }
    Ok(())
}

/// Counts add up to the words of the text; the checksum is order-independent (a map's order
/// is its own).
pub fn check_wordfreq(counts: &HashMap<&str, usize>, words: usize) -> Result<u64, String> {
    let total: usize = counts.values().sum();
    if total != words {
        return Err(format!(
            "wordfreq: the counts add up to {total}, the text has {words} words"
        ));
    }
    Ok(counts.iter().fold(0u64, |h, (w, &c)| {
        h.wrapping_add(hash64(hash_str(w) ^ (c as u64).rotate_left(32)))
    }))
}

/// `sorted` is in order and holds what `input` held (an order-independent sum of hashes, and
/// the length); returns the ordered checksum of `sorted`.
pub fn check_sorted<T: Ord>(
    input: &[T],
    sorted: &[T],
    key: impl Fn(&T) -> u64,
) -> Result<u64, String> {
    if let Some(i) = sorted.windows(2).position(|w| w[0] > w[1]) {
        return Err(format!("sort: elements {i} and {} out of order", i + 1));
    }
    let bag = |s: &[T]| s.iter().fold(0u64, |h, x| h.wrapping_add(hash64(key(x))));
    if sorted.len() != input.len() || bag(sorted) != bag(input) {
        return Err("sort: the output is not a permutation of the input".into());
    }
    Ok(checksum_ordered(sorted.iter().map(key)))
}

/// What filter-collect keeps: about a third.
fn keep(x: u64) -> bool {
    x % 3 == 0
}

/// `kept` is the input's kept elements in their order (checked by a merge walk); returns its
/// ordered checksum.
pub fn check_filtered(input: &[u64], kept: &[u64]) -> Result<u64, String> {
    let mut it = kept.iter();
    let mut next = it.next();
    for &x in input.iter().filter(|&&x| keep(x)) {
        match next {
            Some(&y) if y == x => next = it.next(),
            _ => return Err("filter-collect: an element is missing or out of order".into()),
        }
    }
    if next.is_some() {
        return Err("filter-collect: elements that the filter drops were collected".into());
    }
    Ok(checksum_ordered(kept.iter().copied()))
}

fn mandel_row(y: usize, side: usize, row: &mut [u32]) {
    let (x0, y0, span) = (-2.0, -1.25, 2.5);
    let step = span / side as f64;
    let ci = y0 + y as f64 * step;
    for (x, out) in row.iter_mut().enumerate() {
        let cr = x0 + x as f64 * step;
        let (mut zr, mut zi, mut n) = (0.0f64, 0.0f64, 0);
        while n < MANDEL_MAX_ITER && zr * zr + zi * zi <= 4.0 {
            let t = zr * zr - zi * zi + cr;
            zi = 2.0 * zr * zi + ci;
            zr = t;
            n += 1;
        }
        *out = n;
    }
}

/// Iterations per pixel, row by row: rows through the set cost up to 256 times the others.
pub fn mandelbrot(side: usize, par: bool) -> Vec<u32> {
    let mut img = vec![0u32; side * side];
    if par {
        img.par_chunks_mut(side)
            .enumerate()
            .for_each(|(y, row)| mandel_row(y, side, row));
    } else {
        img.chunks_mut(side)
            .enumerate()
            .for_each(|(y, row)| mandel_row(y, side, row));
    }
    img
}

fn accel(i: usize, bodies: &[Body]) -> [f64; 3] {
    let p = bodies[i].pos;
    let mut a = [0.0; 3];
    for (j, b) in bodies.iter().enumerate() {
        if j == i {
            continue;
        }
        let d = [b.pos[0] - p[0], b.pos[1] - p[1], b.pos[2] - p[2]];
        let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 1e-3;
        let f = b.mass / (r2 * r2.sqrt());
        a[0] += f * d[0];
        a[1] += f * d[1];
        a[2] += f * d[2];
    }
    a
}

/// All-pairs n-body: each step the accelerations (in parallel, one body each), then the
/// velocities and positions.
pub fn nbody(bodies: &mut [Body], steps: usize, par: bool) {
    let dt = 1e-4;
    let mut acc = vec![[0.0; 3]; bodies.len()];
    for _ in 0..steps {
        let snapshot: &[Body] = bodies;
        if par {
            acc.par_iter_mut()
                .enumerate()
                .for_each(|(i, a)| *a = accel(i, snapshot));
        } else {
            acc.iter_mut()
                .enumerate()
                .for_each(|(i, a)| *a = accel(i, snapshot));
        }
        let update = |(b, a): (&mut Body, &[f64; 3])| {
            for ((v, x), a) in b.vel.iter_mut().zip(&mut b.pos).zip(a) {
                *v += a * dt;
                *x += *v * dt;
            }
        };
        if par {
            bodies.par_iter_mut().zip(&acc).for_each(update);
        } else {
            bodies.iter_mut().zip(&acc).for_each(update);
        }
    }
}

/// Maps the parallel word count has folded (one per piece rayon split the text into), since
/// the process started: how finely rayon's splitter cut the work on this rayon-core.
pub static WORDFREQ_PIECES: AtomicUsize = AtomicUsize::new(0);

/// Word counts: rayon folds a map per split and merges them pairwise.
pub fn wordfreq(text: &str, par: bool) -> HashMap<&str, usize> {
    if par {
        text.par_split_whitespace()
            .fold(
                || {
                    WORDFREQ_PIECES.fetch_add(1, Ordering::Relaxed);
                    HashMap::new()
                },
                |mut m, w| {
                    *m.entry(w).or_insert(0) += 1;
                    m
                },
            )
            .reduce(HashMap::new, |a, b| {
                let (mut a, b) = if a.len() < b.len() { (b, a) } else { (a, b) };
                for (w, c) in b {
                    *a.entry(w).or_insert(0) += c;
                }
                a
            })
    } else {
        let mut m = HashMap::new();
        for w in text.split_whitespace() {
            *m.entry(w).or_insert(0) += 1;
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    #[test]
    fn every_kernel_gives_the_sequential_checksum_on_one_and_two_threads() {
        for &k in KERNELS {
            let size = size_at(k, 2e-4).unwrap();
            let input = input(k, size).unwrap();
            let (_, seq) = run(k, &input, false).unwrap();
            for t in [1, 2] {
                let (_, par) = pool(t).install(|| run(k, &input, true)).unwrap();
                assert_eq!(par, seq, "{k} on {t} threads, size {size}");
            }
        }
    }

    #[test]
    fn sizes_scale_the_work_and_stay_positive() {
        assert_eq!(size_at("sum-squares", 1.0), Some(100_000_000));
        assert_eq!(size_at("mandelbrot", 0.25), Some(1024));
        assert_eq!(size_at("nbody", 1e-12), Some(2));
        assert_eq!(size_at("sort-strings", 1e-12), Some(1));
        assert_eq!(size_at("no-such", 1.0), None);
        assert!(input("no-such", 1).is_err());
        for &k in KERNELS {
            assert!(default_size(k).is_some(), "{k}");
            assert!(input(k, size_at(k, 1e-9).unwrap()).is_ok(), "{k}");
        }
    }

    #[test]
    fn the_checks_refuse_wrong_results() {
        check_sum_squares(3000, (0..3000u64).map(|i| (i % 1024) * (i % 1024)).sum()).unwrap();
        assert!(check_sum_squares(3000, 1).is_err());

        let input = vec![5u64, 3, 9, 1];
        assert!(check_sorted(&input, &[1, 3, 5, 9], |&x| x).is_ok());
        assert!(
            check_sorted(&input, &[1, 5, 3, 9], |&x| x).is_err(),
            "unsorted"
        );
        assert!(
            check_sorted(&input, &[1, 3, 5, 8], |&x| x).is_err(),
            "changed"
        );
        assert!(check_sorted(&input, &[1, 3, 5], |&x| x).is_err(), "lost");

        let input = vec![3u64, 4, 6, 7, 9];
        assert!(check_filtered(&input, &[3, 6, 9]).is_ok());
        assert!(check_filtered(&input, &[3, 9]).is_err(), "missing");
        assert!(check_filtered(&input, &[6, 3, 9]).is_err(), "reordered");
        assert!(check_filtered(&input, &[3, 6, 9, 4]).is_err(), "extra");

        let mut counts = HashMap::new();
        counts.insert("a", 2);
        counts.insert("b", 1);
        assert!(check_wordfreq(&counts, 3).is_ok());
        assert!(check_wordfreq(&counts, 4).is_err());
    }

    #[test]
    fn wordfreq_counts_every_word() {
        let m = wordfreq("a b  a\nc a b", true);
        assert_eq!((m["a"], m["b"], m["c"]), (3, 2, 1));
        let Input::Text(text, words) = input("wordfreq", 10_000).unwrap() else {
            unreachable!()
        };
        assert!(text.len() <= 10_000 && text.len() > 9_900, "{}", text.len());
        assert_eq!(wordfreq(&text, false).values().sum::<usize>(), words);
    }
}
