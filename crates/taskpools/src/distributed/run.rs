//! The entry of a distributed phase: [`run_distributed`], its refusals before any work (MPI's
//! state and threading, the calling thread, what every rank must agree on), the phase's
//! workers and agent side by side, and the report at the end.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crossbeam_utils::CachePadded;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::CommunicatorCollectives;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::agent::{Agent, End};
use super::link::Link;
use super::report::{gather_stats, DistReport};
use super::{mpi_error, DistributedConfig};
use crate::panics::{drop_payload, panic_text};
use crate::phase::inbox::Inbox;
use crate::phase::{run_shares, Coordinator};
use crate::pool::TaskPool;
use crate::runtime::broadcast::claim;
use crate::runtime::worker::WorkerThread;
use crate::{Error, Runtime, Task};

/// Runs a working phase over all ranks of `comm`: every rank must call this collectively,
/// with the same pool type, task type, worker count and configuration (checked at the start,
/// together with the binary itself: a mismatch is [`Error::RankMismatch`] on every rank).
///
/// `initial` are this rank's initial tasks (any rank may start with none). Worker `i` of
/// the phase is worker `i` of `rt`; the states `init(i)` of this rank's workers are returned
/// in worker order, and [`sum_across`](super::sum_across)/[`fold_across`](super::fold_across)
/// reduce them over ranks. Returns when every task on every rank has run.
///
/// Call it from the thread that initialized MPI (with at least `Threading::Funneled`), not
/// from a runtime worker. A task that panics on any rank ends the phase on every rank with
/// [`Error::RankPanicked`].
pub fn run_distributed<C, L, T, P>(
    comm: &C,
    rt: &Runtime,
    pool: &P,
    cfg: &DistributedConfig,
    init: impl Fn(usize) -> L + Sync,
    initial: Vec<T>,
) -> Result<(DistReport, Vec<L>), Error>
where
    C: Communicator,
    L: Send,
    T: Task<L> + Serialize + DeserializeOwned,
    P: TaskPool<T>,
{
    let n = pool.workers();
    // The calling thread: the same on every rank of a program, so refused before any MPI call.
    if !mpi::environment::is_initialized() || mpi::environment::is_finalized() {
        return Err(mpi_error(
            "MPI is not initialized (or already finalized)".into(),
        ));
    }
    if WorkerThread::current().is_some() {
        return Err(mpi_error(
            "a distributed phase runs from the thread that initialized MPI, not from a runtime worker"
                .into(),
        ));
    }
    match mpi::environment::threading_support() {
        mpi::Threading::Single => {
            return Err(mpi_error(
                "MPI was initialized with Threading::Single; initialize it with at least \
                 Threading::Funneled (the runtime's workers are threads)"
                    .into(),
            ))
        }
        mpi::Threading::Funneled if !is_thread_main() => {
            return Err(mpi_error(
                "MPI was initialized with Threading::Funneled, so only the thread that \
                 initialized it may call MPI: run the phase from that thread, or initialize \
                 MPI with Threading::Serialized"
                    .into(),
            ))
        }
        _ => {}
    }
    let comm = comm.duplicate();
    // What can fail on one rank alone is decided before any rank returns: the outcome goes
    // into the start check's all-gather, so no rank waits in a collective call for a rank
    // that has left.
    let local = if cfg.max_batch == 0 {
        Err(mpi_error("max_batch must be at least 1".into()))
    } else if n > rt.threads() {
        Err(Error::PhaseWider {
            workers: n,
            threads: rt.threads(),
        })
    } else {
        claim(&rt.registry)
    };
    let verdict = check_same_everywhere::<T, P>(&comm, n, cfg, local.is_err());
    let c = local?;
    verdict?;
    let coord = Coordinator::new(n, cfg.wake);
    let link = Link::<T> {
        inbox: Inbox::new(),
        outbox: Mutex::new(Vec::new()),
        outbox_len: AtomicUsize::new(0),
        request: CachePadded::new(AtomicUsize::new(0)),
        agent: std::thread::current(),
        max_batch: cfg.max_batch,
        workers_left: AtomicBool::new(false),
        failure: Mutex::new(None),
    };
    comm.barrier();
    let start = Instant::now();
    let init = &init;
    let (phase, agent) = std::thread::scope(|s| {
        let phase = s.spawn(|| {
            let r = run_shares(&rt.registry, c, pool, &coord, &link, init, initial);
            let why = match &r {
                Ok(Ok(_)) => None,
                Ok(Err(payload)) => Some(panic_text(&**payload)),
                Err(e) => Some(format!("the local working phase could not start: {e}")),
            };
            *link.failure.lock().unwrap_or_else(|e| e.into_inner()) = why;
            link.workers_left.store(true, Ordering::SeqCst);
            link.agent.unpark();
            r
        });
        let mut agent = Agent::new(&comm, cfg, &coord, &link, n);
        if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| agent.run())) {
            // The agent itself failed (a broken protocol invariant, or a task's serde code
            // panicked): its messages are in an unknown state, so no orderly end is possible.
            // Stop this rank's workers and end the job on every rank.
            coord.end();
            eprintln!(
                "taskpools: the distributed phase's agent on rank {} failed: {}; aborting the MPI job",
                agent.rank,
                panic_text(&*p)
            );
            comm.abort(70);
        }
        (phase.join(), agent)
    });
    let elapsed = start.elapsed();
    let phase = match phase {
        Ok(r) => r,
        Err(p) => std::panic::resume_unwind(p),
    };
    let end = agent
        .end
        .expect("the agent returns only once the phase ended");
    let mut mine = agent.stats;
    mine.elapsed = elapsed;
    if let Ok(Ok((local, _))) = &phase {
        mine.tasks_run = local.tasks_run();
    }
    // Collective: every rank gets here, whatever the outcome.
    let ranks = gather_stats(&comm, &mine);
    match (phase?, end) {
        (Ok((local, states)), End::Terminated) => Ok((DistReport { local, ranks }, states)),
        (local, End::Aborted { rank, message }) => {
            // This rank's own panic, if it had one, is reported as text: its payload is
            // dropped here, where a drop that panics must not replace the error.
            if let Err(p) = local {
                drop_payload(p);
            }
            Err(Error::RankPanicked { rank, message })
        }
        (Err(_), End::Terminated) => unreachable!("a local panic aborts the phase"),
    }
}

/// Whether the calling thread is the one that initialized MPI.
fn is_thread_main() -> bool {
    let mut flag: std::os::raw::c_int = 0;
    // SAFETY: MPI is initialized and not finalized (checked by the caller); the call only
    // writes the flag, which lives for the duration of the call.
    unsafe { mpi::ffi::MPI_Is_thread_main(&mut flag) };
    flag != 0
}

/// What every rank must agree on, hashed: the binary, the task type, the pool and its width,
/// the configuration.
fn check_same_everywhere<T, P>(
    comm: &SimpleCommunicator,
    workers: usize,
    cfg: &DistributedConfig,
    failed_here: bool,
) -> Result<(), Error> {
    const WHAT: [&str; 4] = [
        "the binary (a different executable)",
        "the task type",
        "the pool or its number of workers",
        "the distributed configuration",
    ];
    let mine: [u64; 5] = [
        binary_hash(),
        hash_of(std::any::type_name::<T>()),
        hash_of((std::any::type_name::<P>(), workers)),
        hash_of((
            cfg.search.map(|s| s.name()),
            cfg.max_batch,
            cfg.wake.name(),
            cfg.remote_delay,
            cfg.jitter,
            cfg.seed,
        )),
        u64::from(failed_here),
    ];
    let size = comm.size() as usize;
    let mut all = vec![0u64; 5 * size];
    comm.all_gather_into(&mine[..], &mut all[..]);
    if let Some(rank) = all.chunks(5).position(|f| f[4] != 0) {
        // That rank returns its own error; the others say which rank refused.
        return Err(mpi_error(format!(
            "rank {rank} could not start its part of the phase (it returns why)"
        )));
    }
    for (rank, f) in all.chunks(5).enumerate().skip(1) {
        if let Some(i) = (0..4).find(|&i| f[i] != all[i]) {
            return Err(Error::RankMismatch {
                rank,
                what: WHAT[i].to_string(),
            });
        }
    }
    Ok(())
}

fn hash_of<H: std::hash::Hash>(h: H) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(h)
}

/// A hash of this process's executable, computed once (a few milliseconds for a typical
/// binary). Zero where the executable cannot be read, so such ranks agree with each other.
fn binary_hash() -> u64 {
    static HASH: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *HASH.get_or_init(|| {
        std::env::current_exe()
            .and_then(std::fs::read)
            .map(|b| hash_of(&b[..]))
            .unwrap_or(0)
    })
}
