//! The working phase spread over MPI ranks (cargo feature `mpi`): the concurrent pool of
//! seed 003 with one segment per *process*, as Manber designed it for machines on a network.
//!
//! Each rank runs an ordinary working phase ([`run_pool_on`](crate::run_pool_on)'s loop) on
//! its own [`Runtime`] with any pool of the family. The ranks together form one pool: when
//! every worker of a rank is idle, the rank asks another rank for work (chosen by the
//! [`Search`] strategies lifted to ranks), and the victim sends **half** of what it can spare
//! (steal-half). Tasks that cross ranks are serialized with `postcard`; a task that never
//! leaves its rank is never serialized. The phase ends on every rank at once, when Safra's
//! token-ring algorithm (the `termination` module) proves that every rank is idle and no task
//! is on the wire.
//!
//! ```no_run
//! # #[cfg(feature = "mpi")] {
//! use mpi::traits::*;
//! use taskpools::distributed::{run_distributed, DistributedConfig};
//! use taskpools::pool::{ChaseLevPool, PoolConfig};
//! use taskpools::{Ctx, Runtime, Task, TaskPool};
//!
//! #[derive(serde::Serialize, serde::Deserialize)]
//! struct Count(u32);
//! impl Task<u64> for Count {
//!     fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
//!         *ctx.local() += 1;
//!         if self.0 > 0 {
//!             ctx.put(Count(self.0 - 1));
//!             ctx.put(Count(self.0 - 1));
//!         }
//!     }
//! }
//!
//! let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled).unwrap();
//! let world = universe.world();
//! let rt = Runtime::new(2)?;
//! let pool: ChaseLevPool<Count> = TaskPool::new(&PoolConfig::new(2));
//! // Rank 0 holds the root; the others start empty and steal.
//! let roots = if world.rank() == 0 { vec![Count(20)] } else { vec![] };
//! let (report, counts) =
//!     run_distributed(&world, &rt, &pool, &DistributedConfig::default(), |_| 0u64, roots)?;
//! let total = taskpools::distributed::sum_across(&world, counts.iter().sum());
//! assert_eq!(total, (1 << 21) - 1);
//! assert_eq!(report.tasks_run(), total);
//! # }
//! # Ok::<(), taskpools::Error>(())
//! ```
//!
//! A task type that cannot cross ranks does not compile: tasks must implement `serde`'s
//! `Serialize` and `Deserialize`.
//!
//! ```compile_fail
//! use taskpools::distributed::{run_distributed, DistributedConfig};
//! use taskpools::pool::{ChaseLevPool, PoolConfig};
//! use taskpools::{Ctx, Runtime, Task, TaskPool};
//!
//! struct Plain(u32); // no Serialize/Deserialize
//! impl Task for Plain {
//!     fn run(self, _: &mut Ctx<'_, Self>) {}
//! }
//! # let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled).unwrap();
//! let rt = Runtime::new(1).unwrap();
//! let pool: ChaseLevPool<Plain> = TaskPool::new(&PoolConfig::new(1));
//! let cfg = DistributedConfig::default();
//! let _ = run_distributed(&universe.world(), &rt, &pool, &cfg, |_| (), vec![Plain(1)]);
//! ```
//!
//! # How a rank works
//!
//! The calling thread is the rank's *agent*: it alone calls MPI (so `Threading::Funneled`
//! suffices), while the runtime's workers run tasks. Workers and agent meet in a small
//! shared `Link`:
//!
//! - a steal request from another rank is a flag; a busy worker looks at it between two tasks
//!   (one relaxed load), takes up to `2 × max_batch` tasks out of the pool with `get`, puts
//!   back the newer half and hands the older half to the agent, which sends it;
//! - tasks from another rank go into an inbox that idle workers check before they sleep,
//!   exactly like a shared queue of the pool (same fence pair, so no wake-up is lost);
//! - the worker whose idleness makes all of them idle wakes the agent, which then asks other
//!   ranks for work — a worker never ends the phase by itself.
//!
//! # Ending
//!
//! Normal end: rank 0 concludes termination and sends `Terminate` to every rank. Panics: a
//! rank whose task panicked sends `Abort` with the message to every rank, and every rank
//! returns [`Error::RankPanicked`] naming the rank and the message. In both cases every rank
//! then waits for the answer to its own outstanding steal request (every request gets exactly
//! one answer) and answers requests it receives until a non-blocking barrier completes, so no
//! task message is left on the wire when the phase returns. Each phase runs on a duplicate of
//! the caller's communicator, so its messages never mix with the caller's or another phase's.

mod termination;
mod victims;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread::Thread;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::request::{Request, StaticScope};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::CommunicatorCollectives;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::panics::panic_text;
use crate::phase::inbox::Inbox;
use crate::phase::{run_shares, Coordinator, Remote};
use crate::pool::{PutOutcome, Search, TaskPool};
use crate::runtime::broadcast::claim;
use crate::runtime::trace::EventKind;
use crate::runtime::worker::WorkerThread;
use crate::{Error, RunReport, Runtime, Task, WakePolicy, WorkerStats};
use termination::{Safra, Token, TokenAction};
use victims::Victims;

/// How the ranks share work.
#[derive(Clone, Copy, Debug)]
pub struct DistributedConfig {
    /// How a rank without work chooses the rank it asks (`None`: ranks never ask, each runs
    /// only its own initial tasks — a static split, the distributed analogue of the seed's
    /// pool without load balancing).
    pub search: Option<Search>,
    /// The most tasks one steal reply carries (at least 1). A victim takes up to twice this
    /// out of its pool and sends half.
    pub max_batch: usize,
    /// Which puts wake sleeping workers inside a rank.
    pub wake: WakePolicy,
    /// Emulated cost of crossing ranks: the agent waits this long before sending each task
    /// message and each steal request (seed 003's remote operations being dearer than local
    /// ones). Zero by default.
    pub remote_delay: Duration,
    /// Adversarial timing for tests: before handling each incoming message the agent waits a
    /// random time up to this. Zero by default.
    pub jitter: Duration,
    /// Seed of the random choices (victims, jitter); each rank mixes in its rank.
    pub seed: u64,
}

impl Default for DistributedConfig {
    fn default() -> Self {
        DistributedConfig {
            search: Some(Search::Random),
            max_batch: 256,
            wake: WakePolicy::OnEmpty,
            remote_delay: Duration::ZERO,
            jitter: Duration::ZERO,
            seed: 0x5eed,
        }
    }
}

/// One rank's counters for one distributed phase.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankStats {
    /// The rank.
    pub rank: usize,
    /// Workers of this rank in the phase.
    pub workers: usize,
    /// Tasks this rank's workers ran.
    pub tasks_run: u64,
    /// Tasks sent to other ranks (in steal replies).
    pub tasks_sent: u64,
    /// Tasks received from other ranks.
    pub tasks_received: u64,
    /// Steal requests this rank sent.
    pub requests_sent: u64,
    /// Steal requests this rank received.
    pub requests_received: u64,
    /// Of those, the ones answered with tasks.
    pub requests_granted: u64,
    /// Messages of every kind this rank sent.
    pub messages_sent: u64,
    /// Bytes of every message this rank sent (payloads, as serialized).
    pub bytes_sent: u64,
    /// Bytes this rank received.
    pub bytes_received: u64,
    /// Termination rounds (the token's trips; rank 0 only).
    pub token_rounds: u64,
    /// Time the whole rank was idle (every worker without a task).
    pub idle: Duration,
    /// Wall-clock time of the phase on this rank.
    pub elapsed: Duration,
}

const STAT_FIELDS: usize = 14;

impl RankStats {
    fn to_words(&self) -> [u64; STAT_FIELDS] {
        [
            self.rank as u64,
            self.workers as u64,
            self.tasks_run,
            self.tasks_sent,
            self.tasks_received,
            self.requests_sent,
            self.requests_received,
            self.requests_granted,
            self.messages_sent,
            self.bytes_sent,
            self.bytes_received,
            self.token_rounds,
            nanos(self.idle),
            nanos(self.elapsed),
        ]
    }

    fn from_words(w: &[u64]) -> RankStats {
        RankStats {
            rank: w[0] as usize,
            workers: w[1] as usize,
            tasks_run: w[2],
            tasks_sent: w[3],
            tasks_received: w[4],
            requests_sent: w[5],
            requests_received: w[6],
            requests_granted: w[7],
            messages_sent: w[8],
            bytes_sent: w[9],
            bytes_received: w[10],
            token_rounds: w[11],
            idle: Duration::from_nanos(w[12]),
            elapsed: Duration::from_nanos(w[13]),
        }
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// What a distributed phase reports on every rank.
#[derive(Clone, Debug)]
pub struct DistReport {
    /// This rank's working phase (its workers' counters).
    pub local: RunReport,
    /// Every rank's counters, in rank order (the same on every rank).
    pub ranks: Vec<RankStats>,
}

impl DistReport {
    /// Tasks run on all ranks together.
    pub fn tasks_run(&self) -> u64 {
        self.ranks.iter().map(|r| r.tasks_run).sum()
    }

    /// The phase's wall-clock time: the slowest rank's.
    pub fn elapsed(&self) -> Duration {
        self.ranks
            .iter()
            .map(|r| r.elapsed)
            .max()
            .unwrap_or_default()
    }

    /// Counters of all ranks summed (`rank` and `elapsed` are meaningless there).
    pub fn total(&self) -> RankStats {
        let mut t = RankStats::default();
        for r in &self.ranks {
            t.workers += r.workers;
            t.tasks_run += r.tasks_run;
            t.tasks_sent += r.tasks_sent;
            t.tasks_received += r.tasks_received;
            t.requests_sent += r.requests_sent;
            t.requests_received += r.requests_received;
            t.requests_granted += r.requests_granted;
            t.messages_sent += r.messages_sent;
            t.bytes_sent += r.bytes_sent;
            t.bytes_received += r.bytes_received;
            t.token_rounds += r.token_rounds;
            t.idle += r.idle;
            t.elapsed = t.elapsed.max(r.elapsed);
        }
        t
    }
}

/// Sums a `u64` over all ranks (an MPI all-reduce); every rank gets the sum.
pub fn sum_across<C: Communicator>(comm: &C, value: u64) -> u64 {
    let mut out = 0u64;
    comm.all_reduce_into(&value, &mut out, mpi::collective::SystemOperation::sum());
    out
}

/// Folds a value over all ranks: each rank's value is serialized, gathered on every rank
/// (an MPI all-gather) and folded in rank order, so every rank gets the same result.
pub fn fold_across<C, V, F>(comm: &C, value: V, fold: F) -> Result<V, Error>
where
    C: Communicator,
    V: Serialize + DeserializeOwned,
    F: Fn(V, V) -> V,
{
    let bytes =
        postcard::to_allocvec(&value).map_err(|e| mpi_error(format!("serializing: {e}")))?;
    let all = all_gather_bytes(comm, &bytes);
    let mut acc: Option<V> = None;
    for b in all {
        let v: V =
            postcard::from_bytes(&b).map_err(|e| mpi_error(format!("deserializing: {e}")))?;
        acc = Some(match acc {
            None => v,
            Some(a) => fold(a, v),
        });
    }
    Ok(acc.expect("a communicator has at least one rank"))
}

fn all_gather_bytes<C: Communicator>(comm: &C, bytes: &[u8]) -> Vec<Vec<u8>> {
    let n = comm.size() as usize;
    let mut lens = vec![0i32; n];
    let len = i32::try_from(bytes.len()).expect("a value of less than 2 GiB");
    comm.all_gather_into(&len, &mut lens[..]);
    let displs: Vec<i32> = lens
        .iter()
        .scan(0i32, |acc, &l| {
            let d = *acc;
            *acc += l;
            Some(d)
        })
        .collect();
    let total: i32 = lens.iter().sum();
    let mut buf = vec![0u8; total as usize];
    {
        let mut part = mpi::datatype::PartitionMut::new(&mut buf[..], &lens[..], &displs[..]);
        comm.all_gather_varcount_into(bytes, &mut part);
    }
    (0..n)
        .map(|i| buf[displs[i] as usize..(displs[i] + lens[i]) as usize].to_vec())
        .collect()
}

fn mpi_error(message: String) -> Error {
    Error::Distributed { message }
}

/// Runs a working phase over all ranks of `comm`: every rank must call this collectively,
/// with the same pool type, task type, worker count and configuration (checked at the start,
/// together with the binary itself: a mismatch is [`Error::RankMismatch`] on every rank).
///
/// `initial` are this rank's initial tasks (any rank may start with none). Worker `i` of
/// the phase is worker `i` of `rt`; the states `init(i)` of this rank's workers are returned
/// in worker order, and [`sum_across`]/[`fold_across`] reduce them over ranks. Returns when
/// every task on every rank has run.
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
        (_, End::Aborted { rank, message }) => Err(Error::RankPanicked { rank, message }),
        (Err(_), End::Terminated) => unreachable!("a local panic aborts the phase"),
    }
}

fn gather_stats<C: Communicator>(comm: &C, mine: &RankStats) -> Vec<RankStats> {
    let words = mine.to_words();
    let mut all = vec![0u64; STAT_FIELDS * comm.size() as usize];
    comm.all_gather_into(&words[..], &mut all[..]);
    all.chunks(STAT_FIELDS).map(RankStats::from_words).collect()
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

// ---------------------------------------------------------------------------------------------
// Workers' side

/// Where a rank's workers and its agent meet.
struct Link<T> {
    /// Tasks received from other ranks, waiting for an idle worker to put them in the pool.
    inbox: Inbox<T>,
    /// Steal replies prepared by workers: (requesting rank, tasks), for the agent to send.
    outbox: Mutex<Vec<(usize, Vec<T>)>>,
    outbox_len: AtomicUsize,
    /// A steal request waiting for a busy worker: requesting rank + 1, or 0.
    request: CachePadded<AtomicUsize>,
    agent: Thread,
    max_batch: usize,
    /// The local phase has returned on every worker.
    workers_left: AtomicBool,
    /// Why the local phase returned without being ended (a panic's message), set before
    /// `workers_left`.
    failure: Mutex<Option<String>>,
}

impl<T: Send> Link<T> {
    #[cold]
    #[inline(never)]
    fn answer<P: TaskPool<T>>(
        &self,
        pool: &P,
        local: &mut P::Local,
        stats: &mut WorkerStats,
        coord: &Coordinator,
    ) {
        let r = self.request.swap(0, Ordering::AcqRel);
        if r == 0 {
            return; // another worker or the agent took it
        }
        let tr = WorkerThread::current().and_then(|w| w.trace.as_deref());
        let mut got = Vec::new();
        while got.len() < 2 * self.max_batch {
            match pool.get(local, stats) {
                Some(t) => got.push(t),
                None => break,
            }
            if let Some(tr) = tr {
                // A `get` that stole moved tasks from another worker of this rank into this
                // worker's queue, without running one.
                if let Some((victim, tasks)) = crate::stats::take_steal() {
                    tr.note(EventKind::Moved { victim, tasks });
                }
            }
        }
        // `get` hands out the task it would run next first; the older half (the end of
        // `got`, for the LIFO pools the larger subproblems) goes away, the newer half goes
        // back in reverse so the next `get` sees the same order as before.
        let give = got.len() / 2;
        let sent = got.split_off(got.len() - give);
        for t in got.into_iter().rev() {
            if let PutOutcome::Shared { was_empty } = pool.put(local, t) {
                coord.on_shared_put(was_empty);
            }
        }
        if let (Some(t), false) = (tr, sent.is_empty()) {
            t.note(EventKind::Export {
                tasks: u32::try_from(sent.len()).unwrap_or(u32::MAX),
            });
        }
        let mut out = self.outbox.lock().unwrap_or_else(|e| e.into_inner());
        out.push((r - 1, sent));
        self.outbox_len.store(out.len(), Ordering::SeqCst);
        drop(out);
        self.agent.unpark();
    }
}

impl<T: Send> Remote<T> for Link<T> {
    const EXTERNAL_END: bool = true;

    #[inline]
    fn between_tasks<P: TaskPool<T>>(
        &self,
        _: usize,
        pool: &P,
        local: &mut P::Local,
        stats: &mut WorkerStats,
        coord: &Coordinator,
    ) {
        if self.request.load(Ordering::Relaxed) != 0 {
            self.answer(pool, local, stats, coord);
        }
    }

    #[inline]
    fn has_incoming(&self) -> bool {
        self.inbox.has_tasks()
    }

    fn take_incoming<P: TaskPool<T>>(
        &self,
        _: usize,
        pool: &P,
        local: &mut P::Local,
        coord: &Coordinator,
    ) {
        let n = self.inbox.take_into(pool, local, coord);
        if n > 0 {
            if let Some(t) = WorkerThread::current().and_then(|w| w.trace.as_deref()) {
                t.note(EventKind::Import {
                    tasks: u32::try_from(n).unwrap_or(u32::MAX),
                });
            }
        }
    }

    fn all_idle(&self) {
        self.agent.unpark();
    }
    type Hints<'a>
        = crate::phase::NoHints
    where
        Self: 'a;
    fn hints(&self) -> crate::phase::NoHints {
        crate::phase::NoHints
    }
}

// ---------------------------------------------------------------------------------------------
// The agent

const TAG_CTRL: i32 = 1;
/// Longest panic message carried to the other ranks, in bytes.
const MAX_ABORT_TEXT: usize = 512;
const TAG_TASKS: i32 = 2;

/// Control messages (everything but tasks).
#[derive(Serialize, Deserialize, Debug)]
enum Ctrl {
    /// "Send me work." `round`: the requester's search round.
    Request {
        round: u64,
    },
    /// "I have none to spare." `round`: the victim's round if it is searching too.
    NoWork {
        round: Option<u64>,
    },
    Token(Token),
    Terminate,
    Abort {
        rank: u32,
        message: String,
    },
}

#[derive(Debug)]
enum End {
    Terminated,
    Aborted { rank: usize, message: String },
}

/// A send in flight and the leaked buffer it reads (reclaimed once the send completed).
type PendingSend = (Request<'static, [u8], StaticScope>, *mut [u8]);

struct Agent<'a, T> {
    comm: &'a SimpleCommunicator,
    cfg: &'a DistributedConfig,
    coord: &'a Coordinator,
    link: &'a Link<T>,
    workers: usize,
    rank: usize,
    size: usize,
    safra: Safra,
    victims: Option<Victims>,
    /// The rank asked for work whose answer has not come.
    outstanding: Option<usize>,
    /// Steal requests received while another one waits for a worker (in arrival order).
    waiting: std::collections::VecDeque<usize>,
    /// No request before this instant (backing off after a round found no work).
    quiet_until: Instant,
    backoff: Duration,
    /// Sends in flight, with the buffers they read (freed when they complete).
    sends: Vec<PendingSend>,
    end: Option<End>,
    rng: fastrand::Rng,
    idle_since: Option<Instant>,
    stats: RankStats,
}

impl<'a, T: Serialize + DeserializeOwned + Send> Agent<'a, T> {
    fn new(
        comm: &'a SimpleCommunicator,
        cfg: &'a DistributedConfig,
        coord: &'a Coordinator,
        link: &'a Link<T>,
        workers: usize,
    ) -> Self {
        let rank = comm.rank() as usize;
        let size = comm.size() as usize;
        Agent {
            comm,
            cfg,
            coord,
            link,
            workers,
            rank,
            size,
            safra: Safra::new(rank, size),
            victims: cfg
                .search
                .filter(|_| size > 1)
                .map(|s| Victims::new(s, rank, size, cfg.seed)),
            outstanding: None,
            waiting: std::collections::VecDeque::new(),
            quiet_until: Instant::now(),
            backoff: Duration::ZERO,
            sends: Vec::new(),
            end: None,
            rng: fastrand::Rng::with_seed(cfg.seed ^ (rank as u64 + 1).wrapping_mul(0x2545_f491)),
            idle_since: None,
            stats: RankStats {
                rank,
                workers,
                ..RankStats::default()
            },
        }
    }

    /// The rank has no task anywhere: nothing in the inbox, every worker idle, nothing in
    /// the outbox. (Order matters: a worker empties the inbox only after leaving the idle
    /// count — `Inbox::quiescent` — and fills the outbox before joining it again.)
    fn passive(&self) -> bool {
        self.link.inbox.quiescent(self.coord, self.workers)
            && self.link.outbox_len.load(Ordering::SeqCst) == 0
    }

    fn run(&mut self) {
        let mut barrier: Option<Request<'static, ()>> = None;
        loop {
            self.receive_all();
            self.flush_outbox();
            self.reap_sends();
            if self.end.is_none() {
                if let Some(message) = self.coord.panic_message().filter(|_| self.coord.is_done()) {
                    // A task of this rank panicked: tell everyone.
                    self.abort_all(message);
                }
            }
            if self.end.is_none() && self.link.workers_left.load(Ordering::SeqCst) {
                // The local phase returned although nobody ended it: a panic, or it could not
                // start.
                let why = self
                    .link
                    .failure
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take();
                self.abort_all(why.unwrap_or_else(|| "the local working phase ended early".into()));
            }
            if self.end.is_none() {
                self.step_running();
            } else {
                // Ending: answer whatever asks, wait for our own answer, then the barrier.
                self.refuse_waiting_requests();
                if barrier.is_none()
                    && self.outstanding.is_none()
                    && self.link.workers_left.load(Ordering::SeqCst)
                    && self.link.outbox_len.load(Ordering::SeqCst) == 0
                {
                    barrier = Some(self.comm.immediate_barrier());
                }
                if let Some(b) = barrier.take() {
                    match b.test() {
                        Ok(_) => {
                            self.wait_sends();
                            return;
                        }
                        Err(b) => barrier = Some(b),
                    }
                }
            }
            std::thread::park_timeout(self.nap());
        }
    }

    /// How long the agent sleeps when nothing wakes it: short while it waits for an answer
    /// or the phase ends, longer while the rank's workers are busy.
    fn nap(&self) -> Duration {
        if self.end.is_some() || self.outstanding.is_some() {
            Duration::from_micros(20)
        } else if self.passive() {
            Duration::from_micros(50)
                .max(self.quiet_until.saturating_duration_since(Instant::now()))
        } else {
            Duration::from_micros(200)
        }
    }

    fn step_running(&mut self) {
        let passive = self.passive();
        match (passive, self.idle_since) {
            (true, None) => self.idle_since = Some(Instant::now()),
            (false, Some(t)) => {
                self.stats.idle += t.elapsed();
                self.idle_since = None;
            }
            _ => {}
        }
        if !passive {
            // Hand the next waiting request to the workers once the last one was taken.
            if let Some(&r) = self.waiting.front() {
                if self
                    .link
                    .request
                    .compare_exchange(0, r + 1, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    self.waiting.pop_front();
                }
            }
            return;
        }
        // Requests the workers did not take before they all went idle: none to spare.
        self.refuse_waiting_requests();
        if self.outstanding.is_none() && Instant::now() >= self.quiet_until {
            if let Some(v) = self.victims.as_mut() {
                let victim = v.next();
                let round = v.round();
                self.delay(self.cfg.remote_delay);
                self.send_ctrl(victim, &Ctrl::Request { round });
                self.stats.requests_sent += 1;
                self.outstanding = Some(victim);
            }
        }
        // The passive state is re-checked here: a reply with tasks (received above) would
        // have made the rank active.
        if !self.passive() {
            return;
        }
        match self.safra.when_passive() {
            TokenAction::Keep => {}
            TokenAction::Forward(to, t) => self.send_ctrl(to, &Ctrl::Token(t)),
            TokenAction::Terminate => {
                self.send_to_all(&Ctrl::Terminate);
                self.finish(End::Terminated);
            }
        }
    }

    fn send_to_all(&mut self, c: &Ctrl) {
        let (me, size) = (self.rank, self.size);
        for r in (0..size).filter(|&r| r != me) {
            self.send_ctrl(r, c);
        }
    }

    /// Ends the phase because of a failure on this rank, telling every rank.
    fn abort_all(&mut self, message: String) {
        // Kept short, so the message stays under MPI's eager limit: its send completes
        // without the receiver, which may have left the phase already.
        let mut short = message.clone();
        if short.len() > MAX_ABORT_TEXT {
            let mut cut = MAX_ABORT_TEXT;
            while !short.is_char_boundary(cut) {
                cut -= 1;
            }
            short.truncate(cut);
            short.push('…');
        }
        self.send_to_all(&Ctrl::Abort {
            rank: self.rank as u32,
            message: short,
        });
        self.finish(End::Aborted {
            rank: self.rank,
            message,
        });
    }

    /// Answers "no work" to every request not taken by a worker.
    fn refuse_waiting_requests(&mut self) {
        let r = self.link.request.swap(0, Ordering::AcqRel);
        if r != 0 {
            self.waiting.push_front(r - 1);
        }
        while let Some(r) = self.waiting.pop_front() {
            let round = self.searching_round();
            self.send_ctrl(r, &Ctrl::NoWork { round });
        }
    }

    fn searching_round(&self) -> Option<u64> {
        self.victims.as_ref().map(|v| v.round())
    }

    fn finish(&mut self, end: End) {
        if let Some(t) = self.idle_since.take() {
            self.stats.idle += t.elapsed();
        }
        self.stats.token_rounds = self.safra.rounds();
        self.end = Some(end);
        self.coord.end();
    }

    fn delay(&mut self, d: Duration) {
        if d.is_zero() {
            return;
        }
        let until = Instant::now() + d;
        while Instant::now() < until {
            std::hint::spin_loop();
        }
    }

    fn receive_all(&mut self) {
        while let Some(probed) = self.comm.any_process().immediate_matched_probe() {
            let (bytes, status) = probed.matched_receive_vec::<u8>();
            self.stats.bytes_received += bytes.len() as u64;
            if !self.cfg.jitter.is_zero() {
                let j = self.rng.u64(0..=nanos(self.cfg.jitter));
                std::thread::sleep(Duration::from_nanos(j));
            }
            let from = status.source_rank() as usize;
            match status.tag() {
                TAG_TASKS => self.on_tasks(from, &bytes),
                TAG_CTRL => match postcard::from_bytes::<Ctrl>(&bytes) {
                    Ok(c) => self.on_ctrl(from, c),
                    Err(e) => panic!(
                        "rank {}: a garbled control message from rank {from}: {e}",
                        self.rank
                    ),
                },
                t => panic!(
                    "rank {}: a message with unknown tag {t} from rank {from}",
                    self.rank
                ),
            }
        }
    }

    fn on_tasks(&mut self, from: usize, bytes: &[u8]) {
        self.safra.received_basic();
        assert_eq!(self.outstanding, Some(from), "tasks come only as an answer");
        self.outstanding = None;
        let tasks: Vec<T> = match postcard::from_bytes(bytes) {
            Ok(t) => t,
            Err(e) => {
                // The tasks are lost: end the phase everywhere, naming the failure.
                if self.end.is_none() {
                    self.abort_all(format!(
                        "rank {}: tasks from rank {from} do not deserialize: {e}",
                        self.rank
                    ));
                }
                return;
            }
        };
        self.stats.tasks_received += tasks.len() as u64;
        if let Some(v) = self.victims.as_mut() {
            v.found(from);
        }
        self.backoff = Duration::ZERO;
        if self.end.is_some() {
            return; // the phase was aborted: these tasks will not run
        }
        self.link.inbox.deliver(tasks, self.coord);
    }

    fn on_ctrl(&mut self, from: usize, c: Ctrl) {
        match c {
            Ctrl::Request { .. } => {
                self.stats.requests_received += 1;
                if self.end.is_some() || self.passive() {
                    let round = self.searching_round();
                    self.send_ctrl(from, &Ctrl::NoWork { round });
                } else if self
                    .link
                    .request
                    .compare_exchange(0, from + 1, Ordering::AcqRel, Ordering::Relaxed)
                    .is_err()
                {
                    self.waiting.push_back(from);
                }
            }
            Ctrl::NoWork { round } => {
                assert_eq!(self.outstanding, Some(from), "an answer to our request");
                self.outstanding = None;
                if let Some(v) = self.victims.as_mut() {
                    if v.failed(round) {
                        self.backoff = (self.backoff * 2)
                            .clamp(Duration::from_micros(20), Duration::from_millis(2));
                        self.quiet_until = Instant::now() + self.backoff;
                    }
                }
            }
            Ctrl::Token(t) => self.safra.receive_token(t),
            Ctrl::Terminate => {
                assert!(self.passive(), "termination while this rank has work");
                self.finish(End::Terminated);
            }
            Ctrl::Abort { rank, message } => {
                if self.end.is_none() {
                    self.finish(End::Aborted {
                        rank: rank as usize,
                        message,
                    });
                }
            }
        }
    }

    /// Sends the steal replies the workers prepared.
    fn flush_outbox(&mut self) {
        if self.link.outbox_len.load(Ordering::SeqCst) == 0 {
            return;
        }
        let replies = {
            let mut out = self.link.outbox.lock().unwrap_or_else(|e| e.into_inner());
            let v = std::mem::take(&mut *out);
            self.link.outbox_len.store(0, Ordering::SeqCst);
            v
        };
        for (to, tasks) in replies {
            if tasks.is_empty() {
                let round = self.searching_round();
                self.send_ctrl(to, &Ctrl::NoWork { round });
            } else {
                self.delay(self.cfg.remote_delay);
                let bytes = match postcard::to_allocvec(&tasks) {
                    Ok(b) => b,
                    Err(e) => {
                        // The requester still gets its one answer; the phase ends everywhere.
                        let round = self.searching_round();
                        self.send_ctrl(to, &Ctrl::NoWork { round });
                        if self.end.is_none() {
                            self.abort_all(format!(
                                "rank {}: tasks do not serialize: {e}",
                                self.rank
                            ));
                        }
                        continue;
                    }
                };
                self.stats.tasks_sent += tasks.len() as u64;
                self.stats.requests_granted += 1;
                self.safra.sent_basic();
                self.send(to, TAG_TASKS, bytes);
            }
        }
    }

    fn send_ctrl(&mut self, to: usize, c: &Ctrl) {
        let bytes = postcard::to_allocvec(c).expect("control messages serialize");
        self.send(to, TAG_CTRL, bytes);
    }

    fn send(&mut self, to: usize, tag: i32, bytes: Vec<u8>) {
        self.stats.messages_sent += 1;
        self.stats.bytes_sent += bytes.len() as u64;
        let buf: &'static mut [u8] = Box::leak(bytes.into_boxed_slice());
        let raw: *mut [u8] = buf;
        // SAFETY: `raw` points to the leaked allocation, which nothing frees before the send
        // completes (`reap_sends`/`wait_sends` free it only after the request finished), so
        // the shared reference handed to MPI stays valid for as long as MPI reads it.
        let shared: &'static [u8] = unsafe { &*raw };
        let req = self
            .comm
            .process_at_rank(to as i32)
            .immediate_send_with_tag(StaticScope, shared, tag);
        self.sends.push((req, raw));
    }

    fn reap_sends(&mut self) {
        let mut i = 0;
        while i < self.sends.len() {
            let (req, raw) = self.sends.swap_remove(i);
            match req.test() {
                Ok(_) => {
                    // SAFETY: `raw` came from `Box::leak` in `send`; the request that read
                    // it has completed and was consumed, so no reference to it remains.
                    drop(unsafe { Box::from_raw(raw) });
                }
                Err(req) => {
                    let last = self.sends.len();
                    self.sends.push((req, raw));
                    self.sends.swap(i, last);
                    i += 1;
                }
            }
        }
    }

    /// Waits for the last sends after the closing barrier. They all complete: a task
    /// message answers a request whose sender waited for it before entering the barrier, and
    /// every control message (tokens, answers, `Terminate`, `Abort` with its text cut to
    /// `MAX_ABORT_TEXT`) is far below MPI's eager limit, so it completes without a receiver.
    fn wait_sends(&mut self) {
        for (req, raw) in self.sends.drain(..) {
            req.wait();
            // SAFETY: as in `reap_sends`: the send completed, the request is consumed.
            drop(unsafe { Box::from_raw(raw) });
        }
    }
}
