//! Data-flow tasks (PARTEE's model): a wavefront over the tiles of a matrix. Each task
//! declares the tiles it reads and writes; the runtime orders the tasks by those
//! declarations, so tiles on one anti-diagonal run in parallel with no explicit
//! synchronization, and the compiler rejects a task that touches undeclared data.
//!
//! ```text
//! cargo run --release -p taskpools --example dataflow_wavefront [-- N]
//! ```
//! N is the side of the N×N matrix, a multiple of the tile size 64 (default 2048, at most
//! 8192).

use std::time::Instant;

use taskpools::dataflow;
use taskpools::forkjoin::Runtime;

/// The side of a tile.
const BS: usize = 64;

/// The best path sum from the top-left corner, moving down and right, ending at each cell:
/// `s[r][c] = g[r][c] + max(s[r-1][c], s[r][c-1])`. Sequentially, row by row.
fn sequential(grid: &[u64], n: usize) -> Vec<u64> {
    let mut s = grid.to_vec();
    for r in 0..n {
        for c in 0..n {
            let up = if r > 0 {
                Some(s[(r - 1) * n + c])
            } else {
                None
            };
            let left = if c > 0 { Some(s[r * n + c - 1]) } else { None };
            s[r * n + c] += up.max(left).unwrap_or(0);
        }
    }
    s
}

/// The same recurrence, tile by tile: tile (i, j) reads the last row of the tile above and
/// the last column of the tile to its left, and writes itself.
fn wavefront(grid: &[u64], n: usize) -> Vec<u64> {
    let mut g = grid.to_vec();
    dataflow::scope(|df| {
        // The matrix becomes the scope's region: from here on tasks reach it only through
        // what they declare.
        let m = df.region(&mut g).matrix(n, n);
        for i in 0..n / BS {
            for j in 0..n / BS {
                let up = (i > 0).then(|| m.tile(i - 1, j, BS).read());
                let left = (j > 0).then(|| m.tile(i, j - 1, BS).read());
                // Declared: this tile read-write, its neighbours read. The task runs once
                // the tasks that write those neighbours have completed.
                df.spawn(
                    (m.tile(i, j, BS).inout(), [up, left]),
                    move |_, (mut t, [up, left])| {
                        for r in 0..BS {
                            for c in 0..BS {
                                let a = if r > 0 {
                                    Some(t[(r - 1, c)])
                                } else {
                                    up.map(|u| u[(BS - 1, c)])
                                };
                                let b = if c > 0 {
                                    Some(t[(r, c - 1)])
                                } else {
                                    left.map(|l| l[(r, BS - 1)])
                                };
                                t[(r, c)] += a.max(b).unwrap_or(0);
                            }
                        }
                    },
                );
            }
        }
    });
    g
}

fn main() -> Result<(), taskpools::Error> {
    let n = size_arg();
    let grid: Vec<u64> = (0..n * n).map(|k| (k * 7919 % 13) as u64).collect();

    let t = Instant::now();
    let expected = sequential(&grid, n);
    let t_seq = t.elapsed();

    // The scope runs on the runtime that `install` enters: 2 workers here.
    let rt = Runtime::builder().threads(2).build()?;
    let t = Instant::now();
    let got = rt.install(|| wavefront(&grid, n));
    let t_df = t.elapsed();

    assert_eq!(got, expected, "the data-flow wavefront");
    let tiles = (n / BS) * (n / BS);
    println!(
        "{n}x{n} wavefront, {tiles} tasks of {BS}x{BS} tiles: best path sum {} (checked \
         against the sequential recurrence); sequential {t_seq:.2?}, data-flow on 2 workers \
         {t_df:.2?}",
        got[n * n - 1]
    );
    Ok(())
}

/// The optional size argument, with a clear error for anything else.
fn size_arg() -> usize {
    let usage = "usage: dataflow_wavefront [N]  (N: a multiple of 64 from 64 to 8192, \
                 default 2048)";
    let mut args = std::env::args().skip(1);
    let n = match args.next() {
        None => 2048,
        Some(a) => match a.parse::<usize>() {
            Ok(n @ BS..=8192) if n % BS == 0 => n,
            _ => fail(&format!(
                "N must be a multiple of {BS} from {BS} to 8192 (it needs 24 bytes per \
                 cell), got {a:?}\n{usage}"
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
