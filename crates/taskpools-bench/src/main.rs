//! `taskpools`: the workbench. Runs the experiments of the task-pool papers (Korch & Rauber;
//! Kotz & Ellis on Manber's pool; Papakonstantinou's PARTEE; Weibel's LASSI) on the pool family
//! and reports tables, JSON/CSV and SVG plots.

mod cli;
mod commands;
mod experiments;
mod report;

use anyhow::Result;
use clap::{Parser, Subcommand};

use commands::{list, peer_run, scaling, tour, trace};
use experiments::{
    blocked, dataflow, deque, distributed, forkjoin, idle, iter, manber, places, queens, radiosity,
    suite, synthetic,
};

#[derive(Parser)]
#[command(
    name = "taskpools",
    version,
    about = "Task pools for irregular parallel programs: experiments and comparisons"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Print every pool, memory manager and wake-up policy with its alias.
    List,
    /// The synthetic algorithm A(i) of Korch & Rauber on the pool family.
    Synthetic(synthetic::SyntheticArgs),
    /// Hierarchical radiosity (SPLASH-2's "largeroom"), Korch & Rauber's application, on the
    /// pool family against the sequential program, by interaction rate, beside the paper's
    /// Table 7.
    Radiosity(radiosity::RadiosityArgs),
    /// The deque micro-benchmark of Papakonstantinou, PARTEE (2015) (Table 3.1) against
    /// crossbeam-deque.
    Deque(deque::DequeArgs),
    /// Fork-join kernels on taskpools::forkjoin, rayon, chili, forte and sequentially.
    Forkjoin(forkjoin::ForkjoinArgs),
    /// What a runtime costs between bursts of work: the workers' CPU time per small fork-join
    /// burst submitted every few milliseconds, and the burst's wall time, against rayon.
    Idle(idle::IdleArgs),
    /// rayon's parallel iterators (sum of squares, Mandelbrot, n-body, word frequency, sorts,
    /// filter + collect, flat_map) on stock rayon and on rayon patched onto taskpools (two
    /// builds of a kernel program, run in alternated processes), against the sequential
    /// loops.
    Iter(iter::IterArgs),
    /// Manber's concurrent pool (Kotz & Ellis, "Evaluation of Concurrent Pools", 1989): job
    /// mixes, producers/consumers, search strategies.
    Manber(manber::ManberArgs),
    /// N-Queens on the task pools, on fork-join (scope per node, binary joins), rayon, chili
    /// and forte.
    Queens(queens::QueensArgs),
    /// Coarse phases: a sparse blocked LU and Jacobi sweeps, a scope per step, on both
    /// fork-join pools (scope and scope_fifo), rayon and sequentially.
    Blocked(blocked::BlockedArgs),
    /// Data-flow tasks (in/out/inout and commutative footprints): per-task cost with 0 to 4
    /// declared accesses on task graphs, against OpenMP tasks with `depend` (libgomp, libomp),
    /// StarPU, and row-synchronized fork-join, rayon and OpenMP.
    Dataflow(dataflow::DataflowArgs),
    /// The application suite of Papakonstantinou, PARTEE (2015) (Table 4.1, Figure 4.1):
    /// Black-Scholes, Cholesky, heat diffusion, LU, matrix multiply and mergesort as data-flow
    /// tasks, with syncs instead of dependences (ND), fork-join, rayon and OpenMP (libgomp),
    /// against the sequential programs.
    Suite(suite::SuiteArgs),
    /// Locality-aware places (LASSI): the Cache Stress Test, merge sort and block matrix
    /// multiply with best, worst, ignorant and random locality hints, against the runtime
    /// without places and rayon; then the shared deque per place against one per worker, and
    /// the steal policies of Weibel's future work.
    Places(places::PlacesArgs),
    /// The working phase spread over MPI ranks (run it under mpirun; needs the `mpi` cargo
    /// feature): synthetic A(k) and N-Queens with steal-half between ranks (random, linear
    /// and tree search), against a static split of the initial tasks and against the same
    /// number of threads in one process.
    Distributed(distributed::DistributedArgs),
    /// Summarize a schedule trace (Chrome trace-event JSON, as `--trace` writes it):
    /// utilisation per worker, steals between workers, the longest idle gaps.
    Trace(trace::SummaryArgs),
    /// A short run of every experiment; tables, JSON, CSV and SVG go to --out.
    Tour(tour::TourArgs),
    /// The markdown results table of a tour (our best pool against the other runtimes, per
    /// kernel, with the machine and date) from the folder `tour --out` wrote; `--readme`
    /// puts it into the README's results section.
    Report(experiments::report::ReportArgs),
    /// Speedup-vs-threads charts and tables (`scaling.md`) from a folder of experiment JSON
    /// files, as `scripts/scale.sh` writes them.
    Scaling(scaling::ScalingArgs),
    /// Internal: runs one job of a peer runtime's driver in this process and prints its
    /// time (the workbench starts it; see `experiments::drivers`).
    #[command(hide = true)]
    PeerRun {
        /// The job, as JSON.
        job: String,
    },
}

fn main() -> std::process::ExitCode {
    // Output piped into a program that stops reading (`taskpools list | head`) ends the
    // process quietly, as other command-line tools do, instead of a panic on the write.
    #[cfg(unix)]
    // SAFETY: restoring a signal's default disposition before any other thread exists; no
    // handler runs Rust code.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // The cores, listed before anything pins this thread (see `pinning::cores`); building a
    // runtime fixes the library's list the same way.
    let _ = experiments::pinning::cores();
    drop(taskpools::Runtime::builder().threads(1).build());
    // Peer runtimes' drivers run in child processes of this executable.
    experiments::drivers::process::set_host();
    // Errors are the user's input or the environment: one line each (with its causes), no
    // backtrace even where RUST_BACKTRACE is set.
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::List => list::exec(),
        Cmd::Synthetic(a) => synthetic::exec(a)?,
        Cmd::Radiosity(a) => radiosity::exec(a)?,
        Cmd::Deque(a) => deque::exec(a)?,
        Cmd::Forkjoin(a) => forkjoin::exec(a)?,
        Cmd::Idle(a) => idle::exec(a)?,
        Cmd::Iter(a) => iter::exec(a)?,
        Cmd::Manber(a) => manber::exec(a)?,
        Cmd::Queens(a) => queens::exec(a)?,
        Cmd::Blocked(a) => blocked::exec(a)?,
        Cmd::Dataflow(a) => dataflow::exec(a)?,
        Cmd::Suite(a) => suite::exec(a)?,
        Cmd::Places(a) => places::exec(a)?,
        Cmd::Distributed(a) => distributed::exec(a)?,
        Cmd::Trace(a) => trace::exec(a)?,
        Cmd::Tour(a) => tour::exec(a)?,
        Cmd::Report(a) => experiments::report::exec(a)?,
        Cmd::Scaling(a) => scaling::exec(a)?,
        Cmd::PeerRun { job } => peer_run::exec(&job)?,
    }
    Ok(())
}
