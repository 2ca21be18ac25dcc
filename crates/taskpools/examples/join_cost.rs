//! Cost of one `join` at 1 thread on each pool: fib(n) with a join per call against the same
//! recursion without joins, interleaved, median of 41. `cargo run --release --example
//! join_cost [n]`.
use std::time::Instant;

use taskpools::forkjoin::{join, Pool, Runtime};

fn fib_seq(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = join(|| fib(n - 1), || fib(n - 2));
    a + b
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map_or(30, |a| a.parse().expect("n"));
    let joins = {
        let (mut a, mut b) = (0u64, 0u64);
        for _ in 2..=n {
            (a, b) = (b, a + b + 1);
        }
        b as f64
    };
    let rts: Vec<Runtime> = Pool::ALL
        .iter()
        .map(|&p| Runtime::builder().threads(1).pool(p).build().unwrap())
        .collect();
    let expected = fib_seq(n);
    let mut seq = Vec::new();
    let mut par = vec![Vec::new(); rts.len()];
    for _ in 0..41 {
        let t = Instant::now();
        assert!(std::hint::black_box(fib_seq(std::hint::black_box(n))) > 0);
        seq.push(t.elapsed().as_secs_f64());
        for (rt, v) in rts.iter().zip(par.iter_mut()) {
            let t = Instant::now();
            assert_eq!(rt.install(|| fib(std::hint::black_box(n))), expected);
            v.push(t.elapsed().as_secs_f64());
        }
    }
    let smin = seq.iter().copied().fold(f64::INFINITY, f64::min);
    let s = median(seq);
    println!(
        "fib({n}): sequential {:.2} ns per join-equivalent",
        s * 1e9 / joins
    );
    for (rt, v) in rts.iter().zip(par) {
        let min = v.iter().copied().fold(f64::INFINITY, f64::min);
        let m = median(v);
        println!(
            "{:>15}: {:.2} ns/join over sequential (median; from the fastest runs: {:.2})",
            rt.pool().name(),
            (m - s) * 1e9 / joins,
            (min - smin) * 1e9 / joins
        );
    }
}
