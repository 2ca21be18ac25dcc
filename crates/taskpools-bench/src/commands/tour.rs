//! `taskpools tour`: a short run of every experiment, each writing its table, JSON, CSV and
//! SVG into one folder, with `tour.json` saying on which machine and when.
//!
//! One naming scheme for every output: lowercase words joined by hyphens. A step `NAME`
//! writes `NAME.{txt,json,csv,svg}`, its schedule trace `NAME-trace.json` with
//! `NAME-trace.gantt/` (and `NAME-trace.dot/`) beside it, and figures of its own into the
//! folder `NAME/`.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use taskpools::{MemKind, PoolKind, Search, WakePolicy};

use crate::cli::{check_dir_writable, Outputs};
use crate::experiments::{
    blocked, dataflow, deque, forkjoin, manber, pinning, places, queens, radiosity, report, suite,
    synthetic,
};

/// The arguments of `taskpools tour`.
#[derive(Args)]
pub struct TourArgs {
    /// Output directory.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
}

/// Runs `taskpools tour`.
pub fn exec(a: TourArgs) -> Result<()> {
    tour(&a.out)
}

/// The files one tour step writes: `DIR/NAME.{json,csv,svg,txt}`, its trace and its folder
/// of figures.
struct TourFiles {
    json: PathBuf,
    csv: PathBuf,
    svg: PathBuf,
    txt: PathBuf,
    trace: PathBuf,
    figures: PathBuf,
}

impl TourFiles {
    fn new(dir: &Path, name: &str) -> Self {
        TourFiles {
            json: dir.join(format!("{name}.json")),
            csv: dir.join(format!("{name}.csv")),
            svg: dir.join(format!("{name}.svg")),
            txt: dir.join(format!("{name}.txt")),
            trace: dir.join(format!("{name}-trace.json")),
            figures: dir.join(name),
        }
    }

    fn outputs(&self) -> Outputs<'_> {
        Outputs {
            json: Some(&self.json),
            csv: Some(&self.csv),
            plot: Some(&self.svg),
            table: Some(&self.txt),
        }
    }
}

fn tour(out: &Path) -> Result<()> {
    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let t0 = Instant::now();
    // The machine and date first, so that a tour cut short still says where it ran; the
    // duration is added at the end.
    let mut info = report::TourInfo::now();
    let info_path = out.join(report::TOUR_FILE);
    info.write(&info_path)?;
    let on_empty = vec![WakePolicy::OnEmpty];
    let default_mem = vec![MemKind::PerWorkerBlocks];
    let runs = [
        (
            "synthetic-k22-f40",
            "all pools, work-dominated (f = 40)",
            22,
            40,
            PoolKind::ALL.to_vec(),
            default_mem.clone(),
            on_empty.clone(),
        ),
        (
            "synthetic-k22-f1",
            "all pools, pool-overhead-dominated (f = 1)",
            22,
            1,
            PoolKind::ALL.to_vec(),
            default_mem.clone(),
            on_empty.clone(),
        ),
        (
            "mem-k22-f1",
            "memory managers on the list-based pools dq2 and sq1 (f = 1)",
            22,
            1,
            vec![PoolKind::StealWorkingEnd, PoolKind::CentralList],
            MemKind::ALL.to_vec(),
            on_empty.clone(),
        ),
        (
            "wake-k22-f1",
            "wake-up policies on dq2 and dq8 (f = 1)",
            22,
            1,
            vec![PoolKind::StealWorkingEnd, PoolKind::PrivatePublic],
            default_mem.clone(),
            WakePolicy::ALL.to_vec(),
        ),
    ];
    for (name, what, k, f, pools, mems, wakes) in runs {
        println!("== {name}: {what}\n");
        let p = synthetic::Params {
            k,
            f,
            threads: vec![1, 2],
            pools,
            mems,
            wakes,
            reps: 3,
            pin: false,
            search: Search::Tree,
            trace: None,
        };
        synthetic::run_and_emit(&p, &TourFiles::new(out, name).outputs(), false)?;
    }
    let files = TourFiles::new(out, "synthetic-k15-f40");
    println!(
        "== synthetic-k15-f40: schedules of A(15), f = 40, on 2 workers (Figure 1 of the \
         task-pool paper): synthetic-k15-f40-trace.json, Gantt charts in \
         synthetic-k15-f40-trace.gantt/\n"
    );
    let p = synthetic::Params {
        k: 15,
        f: 40,
        threads: vec![2],
        pools: vec![
            PoolKind::CentralList,
            PoolKind::PrivatePublic,
            PoolKind::StealHalf,
        ],
        mems: default_mem.clone(),
        wakes: on_empty.clone(),
        reps: 1,
        pin: false,
        search: Search::Tree,
        trace: Some(files.trace.clone()),
    };
    synthetic::run_and_emit(&p, &files.outputs(), false)?;
    println!(
        "== radiosity: hierarchical radiosity (SPLASH-2, scene largeroom), the task-pool \
         paper's application, on five pools and fork-join (Table 7)\n"
    );
    let p = radiosity::Params {
        scene: "largeroom".into(),
        settings: radiosity::Settings::default(),
        threads: vec![1, 2],
        pools: vec![
            PoolKind::CentralArray,
            PoolKind::StealWorkingEnd,
            PoolKind::StealOppositeEndNodeLocks,
            PoolKind::PrivatePublic,
            PoolKind::PrivateDeque,
        ],
        mems: default_mem.clone(),
        wake: WakePolicy::OnEmpty,
        reps: 2,
        pin: false,
        fork_join: true,
        trace: None,
    };
    radiosity::run_and_emit(&p, &TourFiles::new(out, "radiosity").outputs(), false)?;
    println!("== deque: the deque micro-benchmark of PARTEE (Table 3.1)\n");
    let p = deque::Params {
        threads: vec![2, 4],
        ops: 128_000,
        capacity: 16,
        reps: 25,
    };
    deque::run_and_emit(&p, &TourFiles::new(out, "deque").outputs(), false)?;
    println!("== forkjoin: fork-join kernels on each pool against rayon\n");
    let p = forkjoin::Params {
        threads: vec![1, 2],
        reps: 3,
        fib_n: 30,
        tree_depth: 20,
        sort_len: 1 << 20,
        matrix: 256,
        pools: taskpools::forkjoin::Pool::ALL.to_vec(),
        pin: true,
        peers: forkjoin::PEERS.to_vec(),
        kernels: forkjoin::KERNELS.iter().map(|k| k.to_string()).collect(),
        trace: None,
    };
    forkjoin::run_and_emit(&p, &TourFiles::new(out, "forkjoin").outputs(), false)?;
    pinning::unpin_current();
    println!("== queens: N-Queens on the task pools, fork-join, rayon, chili and forte\n");
    let p = queens::Params {
        n: 11,
        threads: vec![1, 2],
        reps: 3,
        pools: vec![
            PoolKind::PrivateDeque,
            PoolKind::PrivatePublic,
            PoolKind::ChaseLev,
        ],
        pin: true,
        trace: None,
        cutoff: Some(queens::CUTOFF_QUEUED),
        peers: queens::PEERS.to_vec(),
        front_ends: queens::FRONT_ENDS.to_vec(),
    };
    queens::run_and_emit(&p, &TourFiles::new(out, "queens").outputs(), false)?;
    pinning::unpin_current();
    println!("== blocked: a scope per step (sparse LU, Jacobi), scope and scope_fifo\n");
    let p = blocked::Params {
        threads: vec![1, 2],
        reps: 3,
        lu_blocks: 24,
        lu_block: 64,
        grid: 1024,
        grid_block: 128,
        sweeps: 4,
        kernels: blocked::KERNELS.iter().map(|k| k.to_string()).collect(),
        pin: true,
        trace: None,
    };
    blocked::run_and_emit(&p, &TourFiles::new(out, "blocked").outputs(), false)?;
    pinning::unpin_current();
    println!("== dataflow: per-task cost of data-flow tasks, against OpenMP depend\n");
    let p = dataflow::Params {
        threads: vec![1, 2],
        reps: 3,
        tasks: 10_000,
        width: 64,
        graphs: dataflow::Graph::ALL.to_vec(),
        pin: true,
        trace: None,
        peers: dataflow::PEERS.to_vec(),
    };
    dataflow::run_and_emit(&p, &TourFiles::new(out, "dataflow").outputs(), false)?;
    pinning::unpin_current();
    println!("== suite: PARTEE's six applications, small sizes\n");
    let files = TourFiles::new(out, "suite");
    let p = suite::Params {
        threads: vec![1, 2],
        reps: 2,
        benches: suite::Bench::ALL.to_vec(),
        sizes: suite::Sizes::TOUR,
        dataflow: taskpools::dataflow::Config::exact(),
        pin: true,
        trace: Some(files.trace.clone()),
        peers: suite::PEERS.to_vec(),
    };
    // The suite's figures (one per benchmark) go into suite/, not into suite.svg.
    let outputs = Outputs {
        plot: None,
        ..files.outputs()
    };
    check_dir_writable("tour --out", &files.figures)?;
    suite::run_and_emit(&p, &outputs, Some(&files.figures), false)?;
    pinning::unpin_current();
    println!("== places: locality-aware places (LASSI), short run\n");
    let files = TourFiles::new(out, "places");
    let p = places::Params {
        places: "cores".into(),
        benches: places::Bench::ALL.to_vec(),
        reps: 3,
        cache_bytes: 8 << 20,
        passes: 2,
        tasks_per_worker: 8,
        sort_n: 1 << 21,
        sorters_per_worker: 1024,
        mat_n: 256,
        mat_leaf: 64,
        policies: true,
        trace: Some(files.trace.clone()),
    };
    match p.check() {
        Ok(_) => places::run_and_emit(&p, &files.outputs(), false)?,
        // One core: one place, nothing to compare.
        Err(e) => println!("(skipped: {e})\n"),
    }
    pinning::unpin_current();
    println!("== manber: Manber's concurrent pool (Kotz & Ellis), short run\n");
    let files = TourFiles::new(out, "manber");
    let p = manber::Params {
        participants: vec![16, 2],
        ops: 5000,
        fill_per_participant: 20,
        searches: Search::ALL.to_vec(),
        mixes: vec![0, 20, 40, 50, 60, 80, 100],
        producer_step: 2,
        waiting: false,
        delays_ns: vec![0],
        trials: 3,
        trace: Some(files.trace.clone()),
    };
    // The manber figures go into manber/, not into manber.svg.
    let outputs = Outputs {
        plot: None,
        ..files.outputs()
    };
    manber::run_and_emit(&p, &outputs, Some(&files.figures), false)?;
    info.finish(t0.elapsed().as_secs_f64());
    info.write(&info_path)?;
    println!(
        "tour finished in {:.1} s; tables, JSON, CSV and SVG are in {}/ (`taskpools report {}` \
         makes the results table)",
        t0.elapsed().as_secs_f64(),
        out.display(),
        out.display()
    );
    Ok(())
}
