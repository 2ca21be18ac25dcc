//! Coarse phases: two blocked kernels written as one `scope` per step, a few hundred coarse
//! spawns each, in one invocation on our runtime (both pools, `scope` and `scope_fifo`), on
//! rayon (`scope`, `scope_fifo`) and sequentially.
//!
//! - `lu`: the sparse blocked LU factorization of the BOTS suite (`sparselu`): an `nb × nb`
//!   matrix of `bs × bs` blocks, some of them empty; step `k` factors the diagonal block, then
//!   one scope updates row `k` and column `k` (`fwd`, `bdiv`), and a second scope updates the
//!   trailing blocks (`bmod`, allocating blocks that fill in).
//! - `jacobi`: Jacobi sweeps of the 5-point stencil over an `n × n` grid in `b × b` blocks,
//!   one scope per sweep and a spawn per block, against the plain row-by-row loop and the
//!   same blocks run in order by one thread (what blocking itself costs).
//!
//! Each result is compared bit for bit with the sequential one (every variant does the same
//! floating-point operations in the same order per element).

mod command;
mod jacobi;
mod lu;
mod scope;
mod table;

use std::time::Instant;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use super::pinning::{pinner, rayon_pools};
use super::summarize;
use crate::report::Progress;
use jacobi::{grid_init, jacobi};
use lu::{lu, lu_matrix};
use scope::Rt;

pub use command::{exec, run_and_emit, BlockedArgs};

/// What to run.
#[derive(Clone, Debug)]
pub struct Params {
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Repetitions (median reported).
    pub reps: usize,
    /// LU: blocks per side.
    pub lu_blocks: usize,
    /// LU: elements per block side.
    pub lu_block: usize,
    /// Jacobi: grid side.
    pub grid: usize,
    /// Jacobi: block side (divides the grid side).
    pub grid_block: usize,
    /// Jacobi: sweeps.
    pub sweeps: usize,
    /// The kernels to run: `lu`, `jacobi` (in this order).
    pub kernels: Vec<String>,
    /// Pin worker `i` of every runtime to core `i mod cores`, the sequential run to core 0.
    pub pin: bool,
    /// Record a schedule trace of the first repetition of each of our configurations: our
    /// runtimes then record during every repetition (the spawns are coarse: a few hundred
    /// per step). Chrome trace-event JSON to this file, Gantt charts into `<file>.gantt/`.
    pub trace: Option<std::path::PathBuf>,
}

/// The kernels, in their default order.
pub const KERNELS: [&str; 2] = ["lu", "jacobi"];

/// The other runtimes `blocked` runs beside ours.
pub const PEERS: [&str; 1] = ["rayon"];

/// One row.
// Deserialize (strict: a field this build does not write is an error) for `taskpools report`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// `blocked`.
    pub experiment: String,
    /// `lu` or `jacobi`.
    pub kernel: String,
    /// `sequential`, or `private-deque`, `chase-lev`, `rayon`.
    pub runtime: String,
    /// `scope` or `scope_fifo` (`loop` for the sequential row).
    pub order: String,
    /// Worker threads.
    pub threads: usize,
    /// Repetitions.
    pub reps: usize,
    /// Spawns one run makes.
    pub spawns: u64,
    /// Median time.
    pub median_s: f64,
    /// Fastest repetition.
    pub min_s: f64,
    /// Slowest repetition.
    pub max_s: f64,
    /// Sequential median / this median.
    pub speedup_vs_seq: f64,
    /// This median / the sequential median (the slowdown at 1 thread the issue bounds).
    pub time_vs_seq: f64,
    /// `chase-lev`'s speed relative to this row's, paired by repetition: the median over
    /// repetitions of `chase-lev`'s time / this row's time in the same repetition (same order
    /// and threads; rows of ours). Pairing cancels the host's slow drifts, which move both.
    pub speed_vs_chase_lev: Option<f64>,
}

/// Runs the selected kernels (`Params::kernels`).
pub fn run(p: &Params, progress: &Progress) -> Result<Vec<Record>> {
    if p.reps == 0 || p.threads.is_empty() || p.threads.contains(&0) {
        bail!("--reps and every thread count must be at least 1");
    }
    if p.lu_blocks < 2 || p.lu_block == 0 {
        bail!("--lu-blocks must be at least 2 and --lu-block at least 1");
    }
    if p.grid_block == 0 || p.grid < 3 || p.grid % p.grid_block != 0 {
        bail!("--grid must be at least 3 and a multiple of --grid-block");
    }
    let pin_to = pinner(p.pin);
    let pools = [
        taskpools::forkjoin::Pool::PrivateDeque,
        taskpools::forkjoin::Pool::ChaseLev,
    ];
    let ours: Vec<Vec<taskpools::Runtime>> = pools
        .iter()
        .map(|&pool| {
            let trace = p.trace.as_ref().map(|_| 1 << 20);
            super::pinning::runtimes_with(&p.threads, p.pin, Some(pool), trace)
        })
        .collect::<Result<_>>()?;
    let rayons = rayon_pools(&p.threads, p.pin)?;
    let variants: Vec<Rt> = vec![
        Rt::Ours {
            pool: 0,
            fifo: false,
        },
        Rt::Ours {
            pool: 0,
            fifo: true,
        },
        Rt::Ours {
            pool: 1,
            fifo: false,
        },
        Rt::Ours {
            pool: 1,
            fifo: true,
        },
        Rt::Rayon { fifo: false },
        Rt::Rayon { fifo: true },
    ];
    let label = |rt: Rt| -> (String, &'static str) {
        match rt {
            Rt::Sequential => ("sequential".into(), "loop"),
            Rt::SequentialBlocked => ("sequential".into(), "blocks"),
            Rt::Ours { pool, fifo } => (
                pools[pool].name().into(),
                if fifo { "scope_fifo" } else { "scope" },
            ),
            Rt::Rayon { fifo } => ("rayon".into(), if fifo { "scope_fifo" } else { "scope" }),
        }
    };
    // Runs `f` inside runtime `rt` at thread-count index `ti`, timed there.
    let inside = |rt: Rt, ti: usize, f: &(dyn Fn() -> u64 + Sync)| -> (u64, f64) {
        let timed = || {
            let t0 = Instant::now();
            let r = f();
            (r, t0.elapsed().as_secs_f64())
        };
        match rt {
            Rt::Sequential | Rt::SequentialBlocked => std::thread::scope(|sc| {
                sc.spawn(|| {
                    pin_to(0);
                    timed()
                })
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e))
            }),
            Rt::Ours { pool, .. } => ours[pool][ti].install(timed),
            Rt::Rayon { .. } => rayons[ti].install(timed),
        }
    };
    if let Some(k) = p
        .kernels
        .iter()
        .find(|k| !["lu", "jacobi"].contains(&k.as_str()))
    {
        bail!("--kernels: unknown kernel `{k}`; known: lu, jacobi");
    }
    let kernels: Vec<&str> = ["lu", "jacobi"]
        .into_iter()
        .filter(|k| p.kernels.iter().any(|x| x == k))
        .collect();
    if kernels.is_empty() {
        bail!("--kernels: name lu, jacobi or both");
    }
    // Inputs and sequential results of the selected kernels only.
    let (nb, bs) = (p.lu_blocks, p.lu_block);
    let (lu_input, lu_expected) = if kernels.contains(&"lu") {
        let input = lu_matrix(nb, bs);
        let mut expected = input.clone();
        lu(&mut expected, nb, bs, Rt::Sequential);
        (input, expected)
    } else {
        (Vec::new(), Vec::new())
    };
    let n = p.grid;
    let (grid, jacobi_expected) = if kernels.contains(&"jacobi") {
        let grid = grid_init(n);
        let mut ja = grid.clone();
        let mut jb = grid.clone();
        jacobi(&mut ja, &mut jb, n, p.grid_block, p.sweeps, Rt::Sequential);
        (grid, if p.sweeps % 2 == 1 { jb } else { ja })
    } else {
        (Vec::new(), Vec::new())
    };
    let same = |x: &[f64], y: &[f64]| x.iter().zip(y).all(|(a, b)| a.to_bits() == b.to_bits());
    // One run of `kernel` on `rt`: (spawns, seconds), checked.
    let run_one = |kernel: &str, rt: Rt, ti: usize| -> Result<(u64, f64)> {
        let (name, order) = label(rt);
        match kernel {
            "lu" => {
                let m = std::sync::Mutex::new(lu_input.clone());
                let r = inside(rt, ti, &|| lu(&mut m.lock().unwrap(), nb, bs, rt));
                let m = m.into_inner().unwrap();
                let ok = m.iter().zip(&lu_expected).all(|(a, b)| match (a, b) {
                    (Some(a), Some(b)) => same(a, b),
                    (None, None) => true,
                    _ => false,
                });
                if !ok {
                    bail!("lu on {name} {order}: the result differs from the sequential one");
                }
                Ok(r)
            }
            _ => {
                let g = std::sync::Mutex::new((grid.clone(), grid.clone()));
                let r = inside(rt, ti, &|| {
                    let mut g = g.lock().unwrap();
                    let (a, b) = &mut *g;
                    jacobi(a, b, n, p.grid_block, p.sweeps, rt)
                });
                let (a, b) = g.into_inner().unwrap();
                let out = if p.sweeps % 2 == 1 { b } else { a };
                if !same(&out, &jacobi_expected) {
                    bail!("jacobi on {name} {order}: the result differs from the sequential one");
                }
                Ok(r)
            }
        }
    };
    progress.set_length((p.reps * kernels.len() * (1 + variants.len() * p.threads.len())) as u64);
    let settle = || std::thread::sleep(std::time::Duration::from_millis(2));
    let mut out = Vec::new();
    let mut traces = Vec::new();
    for &kernel in &kernels {
        let mut seq = Vec::new();
        let mut seq_blocked = Vec::new();
        let mut times = vec![vec![Vec::new(); p.threads.len()]; variants.len()];
        let mut spawns = 0;
        for rep in 0..p.reps {
            progress.set_message(format!("{kernel} sequential"));
            settle();
            seq.push(run_one(kernel, Rt::Sequential, 0)?.1);
            if kernel == "jacobi" {
                settle();
                seq_blocked.push(run_one(kernel, Rt::SequentialBlocked, 0)?.1);
            }
            progress.inc();
            // Each repetition starts at another variant, so that no variant always runs
            // right after the same other one (the paired ratios compare within a repetition).
            for k in 0..variants.len() {
                let vi = (k + rep) % variants.len();
                let rt = variants[vi];
                for (ti, samples) in times[vi].iter_mut().enumerate() {
                    let (name, order) = label(rt);
                    progress.set_message(format!("{kernel} {name} {order} x{}", p.threads[ti]));
                    settle();
                    let traced = match rt {
                        Rt::Ours { pool, .. } if p.trace.is_some() && rep == 0 => {
                            let _ = ours[pool][ti].take_trace()?;
                            Some(&ours[pool][ti])
                        }
                        _ => None,
                    };
                    let (s, secs) = run_one(kernel, rt, ti)?;
                    if let Some(t) = traced.map(|r| r.take_trace()).transpose()?.flatten() {
                        traces.push((format!("{kernel} {name} {order} x{}", p.threads[ti]), t));
                    }
                    spawns = s;
                    samples.push(secs);
                    progress.inc();
                }
            }
        }
        let (sm, smin, smax) = summarize(&seq);
        out.push(Record {
            experiment: "blocked".into(),
            kernel: kernel.into(),
            runtime: "sequential".into(),
            order: "loop".into(),
            threads: 1,
            reps: p.reps,
            spawns: 0,
            median_s: sm,
            min_s: smin,
            max_s: smax,
            speedup_vs_seq: 1.0,
            time_vs_seq: 1.0,
            speed_vs_chase_lev: None,
        });
        if !seq_blocked.is_empty() {
            let (m, mn, mx) = summarize(&seq_blocked);
            out.push(Record {
                experiment: "blocked".into(),
                kernel: kernel.into(),
                runtime: "sequential".into(),
                order: "blocks".into(),
                threads: 1,
                reps: p.reps,
                spawns: 0,
                median_s: m,
                min_s: mn,
                max_s: mx,
                speedup_vs_seq: sm / m,
                time_vs_seq: m / sm,
                speed_vs_chase_lev: None,
            });
        }
        for (vi, &rt) in variants.iter().enumerate() {
            let (name, order) = label(rt);
            for (ti, &t) in p.threads.iter().enumerate() {
                let (m, mn, mx) = summarize(&times[vi][ti]);
                let chase = match rt {
                    Rt::Ours { fifo, .. } => {
                        let ci = variants
                            .iter()
                            .position(|&v| v == Rt::Ours { pool: 1, fifo })
                            .expect("chase-lev rows");
                        let ratios: Vec<f64> = times[ci][ti]
                            .iter()
                            .zip(&times[vi][ti])
                            .map(|(c, o)| c / o)
                            .collect();
                        Some(summarize(&ratios).0)
                    }
                    _ => None,
                };
                out.push(Record {
                    experiment: "blocked".into(),
                    kernel: kernel.into(),
                    runtime: name.clone(),
                    order: order.into(),
                    threads: t,
                    reps: p.reps,
                    spawns,
                    median_s: m,
                    min_s: mn,
                    max_s: mx,
                    speedup_vs_seq: sm / m,
                    time_vs_seq: m / sm,
                    speed_vs_chase_lev: chase,
                });
            }
        }
    }
    if let Some(path) = &p.trace {
        crate::report::trace::write_files(path, &traces)?;
    }
    Ok(out)
}
