//! Running the working phase over MPI ranks: every configuration on every rank, the
//! one-process comparison on rank 0, exact totals checked, failures reported together.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{CommunicatorCollectives, Root};
use serde::{Deserialize, Serialize};
use taskpools::distributed::{run_distributed, sum_across, DistReport, DistributedConfig};
use taskpools::pool::PoolVisitor;
use taskpools::synthetic::{initial_tasks, task_count};
use taskpools::{PoolConfig, Runtime, Search, Task, TaskPool, WakePolicy};

use super::params::{rank_trace_path, Params, RankRow, Record, Start, Workload, TRACE_EVENTS};
use super::tasks::{queens_seq, Counts, Fault, Queen, Synth};

struct Ranked {
    comm: SimpleCommunicator,
    rank: usize,
    size: usize,
}

/// One distributed phase of `T` on a pool of kind `kind`.
struct Phase<'a, T> {
    comm: &'a SimpleCommunicator,
    rt: &'a Runtime,
    cfg: DistributedConfig,
    initial: Vec<T>,
    fault: Option<Fault>,
}

impl<T> PoolVisitor<T> for Phase<'_, T>
where
    T: Task<Counts> + Serialize + for<'de> Deserialize<'de>,
{
    type Output = Result<(DistReport, Vec<Counts>), taskpools::Error>;
    fn visit<P: TaskPool<T>>(self, pool: P) -> Self::Output {
        let fault = self.fault;
        run_distributed(
            self.comm,
            self.rt,
            &pool,
            &self.cfg,
            |_| Counts {
                fault,
                ..Counts::default()
            },
            self.initial,
        )
    }
}

/// Runs every configuration: this process's rank and, on rank 0, the records (the others get
/// an empty list). MPI is finalized when this returns.
pub fn run(p: &Params) -> (usize, Result<Vec<Record>>) {
    let Some((universe, threading)) = mpi::initialize_with_threading(mpi::Threading::Funneled)
    else {
        return (0, Err(anyhow::anyhow!("MPI was already initialized")));
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    if threading < mpi::Threading::Funneled {
        return (
            rank,
            Err(anyhow::anyhow!(
                "this MPI gives only Threading::Single; the runtime's workers need at least Funneled"
            )),
        );
    }
    let me = Ranked {
        rank,
        size: world.size() as usize,
        comm: world.duplicate(),
    };
    let r = run_all(p, &me);
    if let Err(e) = &r {
        // Failures are collective (every rank returns the phase's error), and rank 0 reports:
        // it prints before the others may exit, which makes mpirun end the job.
        if rank == 0 {
            eprintln!("error: {e:#}");
        }
        sleeping_barrier_within(&me.comm, Duration::from_secs(5));
    }
    (rank, r)
}

fn run_all(p: &Params, me: &Ranked) -> Result<Vec<Record>> {
    for (opt, r) in [
        ("--panic-on-rank", p.panic_on_rank),
        ("--die-on-rank", p.die_on_rank),
    ] {
        if let Some(r) = r.filter(|&r| r >= me.size) {
            bail!(
                "{opt} {r}: there {} (0 to {})",
                if me.size == 1 {
                    "is only 1 rank".to_string()
                } else {
                    format!("are only {} ranks", me.size)
                },
                me.size - 1
            );
        }
    }
    // mpirun binds each rank to one core by default when there are at most 2 ranks: then a
    // rank's threads (and the one-process run's) share that core.
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let wanted = if p.single {
        p.threads * me.size
    } else {
        p.threads
    };
    if me.rank == 0 && cores < wanted {
        eprintln!(
            "warning: rank 0 may run on only {cores} core(s) but uses {wanted} threads \
             (mpirun binds ranks to cores by default): run mpirun with --bind-to none"
        );
    }
    let rt = Runtime::new(p.threads)?;
    let traced = match &p.trace {
        Some(_) => Some(
            Runtime::builder()
                .threads(p.threads)
                .trace(TRACE_EVENTS)
                .build()?,
        ),
        None => None,
    };
    let mut traces = Vec::new();
    let mut records = Vec::new();
    for &w in &p.workloads {
        let expected = match w {
            Workload::Synthetic => task_count(p.k),
            Workload::Queens => queens_seq(Queen::root(p.queens)).1,
        };
        let mut configs: Vec<(String, Option<Search>)> = p
            .searches
            .iter()
            .map(|&s| (format!("steal-half/{}", s.name()), Some(s)))
            .collect();
        configs.push(("static".into(), None));
        let one = if p.single {
            Some(one_process(p, w, me)?)
        } else {
            None
        };
        if let (Some((med, min, max)), 0) = (one, me.rank) {
            records.push(Record {
                workload: w.name().into(),
                config: "one-process".into(),
                ranks: 1,
                threads_per_rank: p.threads * me.size,
                pool: p.pool.name().into(),
                start: "-".into(),
                median_ms: med,
                min_ms: min,
                max_ms: max,
                vs_one_process: Some(1.0),
                tasks: expected,
                expected_tasks: expected,
                per_rank: Vec::new(),
            });
        }
        for (name, search) in configs {
            let cfg = DistributedConfig {
                search,
                max_batch: p.max_batch,
                wake: WakePolicy::OnEmpty,
                remote_delay: p.remote_delay,
                jitter: p.jitter,
                ..DistributedConfig::default()
            };
            let mut times = Vec::new();
            let mut first: Option<DistReport> = None;
            let mut tasks = 0;
            for _ in 0..p.reps {
                me.comm.barrier();
                let fault = if p.panic_on_rank == Some(me.rank) {
                    Some(Fault::Panic)
                } else if p.die_on_rank == Some(me.rank) {
                    Some(Fault::Die)
                } else {
                    None
                };
                let (report, counts) = run_once(p, w, me, &rt, cfg, fault)?;
                let nodes = sum_across(&me.comm, counts.iter().map(|c| c.nodes).sum());
                // N-Queens' root is expanded outside the phase (its children are the initial
                // tasks) and counted on rank 0.
                let root = u64::from(w == Workload::Queens);
                if nodes != expected || report.tasks_run() + root != expected {
                    bail!(
                        "{} {name}: {nodes} tasks counted, {} reported, {expected} expected",
                        w.name(),
                        report.tasks_run()
                    );
                }
                if w == Workload::Queens {
                    let sols = sum_across(&me.comm, counts.iter().map(|c| c.solutions).sum());
                    let want = queens_seq(Queen::root(p.queens)).0;
                    if sols != want {
                        bail!("queens {name}: {sols} solutions, {want} expected");
                    }
                }
                tasks = nodes;
                times.push(report.elapsed().as_secs_f64() * 1e3);
                first.get_or_insert(report);
            }
            if let Some(trt) = &traced {
                me.comm.barrier();
                let _ = trt.take_trace()?;
                run_once(p, w, me, trt, cfg, None)?;
                if let Some(t) = trt.take_trace()? {
                    traces.push((
                        format!("{} {name} rank {} of {}", w.name(), me.rank, me.size),
                        t,
                    ));
                }
            }
            if me.rank == 0 {
                let (med, min, max) = crate::experiments::summarize(&times);
                let report = first.expect("at least one repetition");
                records.push(Record {
                    workload: w.name().into(),
                    config: name,
                    ranks: me.size,
                    threads_per_rank: p.threads,
                    pool: p.pool.name().into(),
                    start: p.start.name().into(),
                    median_ms: med,
                    min_ms: min,
                    max_ms: max,
                    vs_one_process: one.map(|o| med / o.0),
                    tasks,
                    expected_tasks: expected,
                    per_rank: report.ranks.iter().map(RankRow::from).collect(),
                });
            }
        }
    }
    if let Some(path) = &p.trace {
        crate::report::trace::write_files(&rank_trace_path(path, me.rank), &traces)?;
    }
    me.comm.barrier();
    Ok(records)
}

fn run_once(
    p: &Params,
    w: Workload,
    me: &Ranked,
    rt: &Runtime,
    cfg: DistributedConfig,
    fault: Option<Fault>,
) -> Result<(DistReport, Vec<Counts>)> {
    let pc = PoolConfig::new(p.threads);
    let mine = |i: usize| match p.start {
        Start::Rank0 => me.rank == 0,
        Start::Spread => i % me.size == me.rank,
    };
    let r = match w {
        Workload::Synthetic => {
            let initial: Vec<Synth> = initial_tasks(p.k, p.f)
                .into_iter()
                .enumerate()
                .filter(|(i, _)| mine(*i))
                .map(|(_, a)| Synth(a))
                .collect();
            p.pool.with_pool(
                &pc,
                Phase {
                    comm: &me.comm,
                    rt,
                    cfg,
                    initial,
                    fault,
                },
            )
        }
        Workload::Queens => {
            // The first row's placements are the initial tasks.
            let initial: Vec<Queen> = Queen::root(p.queens)
                .children()
                .enumerate()
                .filter(|(i, _)| mine(*i))
                .map(|(_, q)| q)
                .collect();
            let (report, mut counts) = p.pool.with_pool(
                &pc,
                Phase {
                    comm: &me.comm,
                    rt,
                    cfg,
                    initial,
                    fault,
                },
            )?;
            // The root node itself is counted by the sequential count: add it on rank 0.
            if me.rank == 0 {
                counts[0].nodes += 1;
            }
            return Ok((report, counts));
        }
    };
    Ok(r?)
}

/// The same total thread count in one process: rank 0 runs the workload with
/// `ranks × threads` workers while the other ranks wait (asleep, not in a spinning barrier).
fn one_process(p: &Params, w: Workload, me: &Ranked) -> Result<(f64, f64, f64)> {
    let mut out = None;
    if me.rank == 0 {
        let n = p.threads * me.size;
        let rt = Runtime::new(n)?;
        let mut times = Vec::new();
        for _ in 0..p.reps {
            let t0 = Instant::now();
            let nodes = match w {
                Workload::Synthetic => {
                    let tasks: Vec<Synth> =
                        initial_tasks(p.k, p.f).into_iter().map(Synth).collect();
                    p.pool.with_pool(
                        &PoolConfig::new(n),
                        Local {
                            rt: &rt,
                            initial: tasks,
                        },
                    )?
                }
                Workload::Queens => {
                    let tasks: Vec<Queen> = Queen::root(p.queens).children().collect();
                    1 + p.pool.with_pool(
                        &PoolConfig::new(n),
                        Local {
                            rt: &rt,
                            initial: tasks,
                        },
                    )?
                }
            };
            times.push(t0.elapsed().as_secs_f64() * 1e3);
            let expected = match w {
                Workload::Synthetic => task_count(p.k),
                Workload::Queens => queens_seq(Queen::root(p.queens)).1,
            };
            if nodes != expected {
                bail!("one process: {nodes} tasks, {expected} expected");
            }
        }
        out = Some(crate::experiments::summarize(&times));
    }
    sleeping_barrier(&me.comm);
    let mut med = out.map_or(0.0, |o| o.0);
    me.comm.process_at_rank(0).broadcast_into(&mut med);
    Ok(out.unwrap_or((med, med, med)))
}

struct Local<'a, T> {
    rt: &'a Runtime,
    initial: Vec<T>,
}

impl<T: Task<Counts>> PoolVisitor<T> for Local<'_, T> {
    type Output = Result<u64, taskpools::Error>;
    fn visit<P: TaskPool<T>>(self, pool: P) -> Self::Output {
        let (_, counts) = taskpools::run_pool_on(
            self.rt,
            &pool,
            WakePolicy::OnEmpty,
            |_| Counts::default(),
            self.initial,
        )?;
        Ok(counts.iter().map(|c| c.nodes).sum())
    }
}

/// A barrier that sleeps between polls, so waiting ranks leave the cores to the one working.
fn sleeping_barrier(comm: &SimpleCommunicator) {
    let mut req = comm.immediate_barrier();
    loop {
        match req.test() {
            Ok(_) => return,
            Err(r) => req = r,
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// [`sleeping_barrier`] that gives up after `limit` (a rank that failed alone never arrives).
fn sleeping_barrier_within(comm: &SimpleCommunicator, limit: Duration) {
    let t0 = Instant::now();
    let mut req = comm.immediate_barrier();
    loop {
        match req.test() {
            Ok(_) => return,
            Err(r) => req = r,
        }
        if t0.elapsed() > limit {
            // The process is about to exit with an error; the barrier's request is left to
            // MPI (dropping it unfinished would abort the process).
            std::mem::forget(req);
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}
