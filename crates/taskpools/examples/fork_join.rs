//! Fork-join (the Cilk model, rayon-core's API): a merge sort that forks with `join`, and a
//! histogram whose tasks are spawned in a `scope` and borrow the caller's data, on a runtime
//! of 2 workers.
//!
//! ```text
//! cargo run --release -p taskpools --example fork_join [-- N]
//! ```
//! N is the number of values to sort (default 2 000 000, at most 50 000 000).

use std::time::Instant;

use taskpools::forkjoin::{join, scope, Runtime};

/// Below this many values a sort runs sequentially: a fork costs nanoseconds, but a million
/// of them still add up.
const CUTOFF: usize = 4096;

/// Sorts `v`, with `buf` (as long as `v`) as scratch space: the two halves in parallel, then
/// a merge. `join` runs both closures and returns when both are done; the halves borrow
/// disjoint parts of `v` and `buf`, which the borrow checker proves.
fn merge_sort(v: &mut [u64], buf: &mut [u64]) {
    if v.len() <= CUTOFF {
        v.sort_unstable();
        return;
    }
    let mid = v.len() / 2;
    let (left, right) = v.split_at_mut(mid);
    let (buf_left, buf_right) = buf.split_at_mut(mid);
    join(
        || merge_sort(left, buf_left),
        || merge_sort(right, buf_right),
    );
    merge(left, right, buf);
    v.copy_from_slice(buf);
}

/// The same sort without forking: the baseline.
fn merge_sort_sequential(v: &mut [u64], buf: &mut [u64]) {
    if v.len() <= CUTOFF {
        v.sort_unstable();
        return;
    }
    let mid = v.len() / 2;
    let (left, right) = v.split_at_mut(mid);
    let (buf_left, buf_right) = buf.split_at_mut(mid);
    merge_sort_sequential(left, buf_left);
    merge_sort_sequential(right, buf_right);
    merge(left, right, buf);
    v.copy_from_slice(buf);
}

/// Merges the sorted `a` and `b` into `out`.
fn merge(a: &[u64], b: &[u64], out: &mut [u64]) {
    let (mut i, mut j) = (0, 0);
    for o in out.iter_mut() {
        if j == b.len() || (i < a.len() && a[i] <= b[j]) {
            *o = a[i];
            i += 1;
        } else {
            *o = b[j];
            j += 1;
        }
    }
}

/// `n` pseudo-random values (a fixed-seed xorshift: every run sorts the same input).
fn values(n: usize) -> Vec<u64> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect()
}

fn main() -> Result<(), taskpools::Error> {
    let n = size_arg();
    let input = values(n);
    let rt = Runtime::builder().threads(2).build()?;

    // Sequential baseline, then the same sort forking on the runtime's 2 workers: `install`
    // runs the closure on a worker, so each `join` inside forks there.
    let (mut seq, mut buf) = (input.clone(), vec![0; n]);
    let t = Instant::now();
    merge_sort_sequential(&mut seq, &mut buf);
    let t_seq = t.elapsed();
    let mut par = input.clone();
    let t = Instant::now();
    rt.install(|| merge_sort(&mut par, &mut buf));
    let t_par = t.elapsed();
    let mut expected = input;
    expected.sort_unstable();
    assert_eq!(par, expected, "the join sort");
    assert_eq!(seq, expected, "the sequential sort");
    println!(
        "sorted {n} values: {t_seq:.2?} sequentially, {t_par:.2?} with join on 2 workers \
         ({:.2}x)",
        t_seq.as_secs_f64() / t_par.as_secs_f64()
    );

    // A scope: one task per chunk counts the values in each of 16 ranges into its own row of
    // `counts`. The tasks borrow `par` and their rows from this stack frame; `scope` returns
    // when every task spawned in it has finished.
    let chunk = n.div_ceil(64).max(1);
    let mut counts = vec![[0u64; 16]; n.div_ceil(chunk)];
    rt.scope(|s| {
        for (row, part) in counts.iter_mut().zip(par.chunks(chunk)) {
            s.spawn(move |_| {
                for x in part {
                    row[(x >> 60) as usize] += 1;
                }
            });
        }
    });
    let mut histogram = [0u64; 16];
    for row in &counts {
        for (h, c) in histogram.iter_mut().zip(row) {
            *h += c;
        }
    }
    let mut check = [0u64; 16];
    for x in &par {
        check[(x >> 60) as usize] += 1;
    }
    assert_eq!(histogram, check, "the scope's histogram");
    assert_eq!(histogram.iter().sum::<u64>(), n as u64);
    println!(
        "histogram of the top 4 bits by {} scope tasks: {histogram:?}",
        counts.len()
    );

    // `scope` and `join` also work off any runtime: then they use the global one (one worker
    // per CPU, or TASKPOOLS_NUM_THREADS).
    let (evens, odds) = join(
        || par.iter().filter(|x| *x % 2 == 0).count(),
        || par.iter().filter(|x| *x % 2 == 1).count(),
    );
    let mut total = 0;
    scope(|s| s.spawn(|_| total = evens + odds));
    assert_eq!(total, n);
    println!("{evens} even and {odds} odd values, counted on the global runtime");
    Ok(())
}

/// The optional size argument, with a clear error for anything else.
fn size_arg() -> usize {
    let usage = "usage: fork_join [N]  (N: values to sort, 1 to 50000000, default 2000000)";
    let mut args = std::env::args().skip(1);
    let n = match args.next() {
        None => 2_000_000,
        Some(a) => match a.parse::<usize>() {
            Ok(n @ 1..=50_000_000) => n,
            _ => fail(&format!(
                "N must be a whole number from 1 to 50000000 (it needs about 32 bytes per value), \
                 got {a:?}\n{usage}"
            )),
        },
    };
    if args.next().is_some() {
        fail(&format!("too many arguments\n{usage}"));
    }
    n
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(2)
}
