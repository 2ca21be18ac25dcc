//! Running the radiosity experiment: the sequential program and every pool configuration,
//! repetitions interleaved (rep 1 of every configuration, then rep 2, …) so that drift in the
//! machine's load spreads over all of them, every parallel result checked against the
//! sequential one, and the paper's Table 7 beside ours.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use taskpools::{Builder, MemKind, PoolKind, Runtime, WakePolicy};

use super::{
    check_identical, solve_forkjoin, solve_sequential, solve_tasks, Outcome, Scene, Settings,
};
use crate::experiments::{median_u64, summarize};
use crate::report::Progress;

/// What to run.
#[derive(Clone, Debug)]
pub struct Params {
    /// The scene (one of [`Scene::NAMES`]).
    pub scene: String,
    /// The solver's parameters.
    pub settings: Settings,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Pools.
    pub pools: Vec<PoolKind>,
    /// Memory managers (list-based pools run with each; the others only with the first).
    pub mems: Vec<MemKind>,
    /// Wake-up policy.
    pub wake: WakePolicy,
    /// Repetitions per configuration.
    pub reps: usize,
    /// Pin worker i to CPU i mod cores, and the sequential program to core 0.
    pub pin: bool,
    /// Also run the fork-join driver (`join` on the runtime's own deques) at each thread
    /// count: the row `fork-join`.
    pub fork_join: bool,
    /// Record a schedule trace of one extra, untimed run of every configuration.
    pub trace: Option<std::path::PathBuf>,
}

/// The pool column of the fork-join driver's rows.
pub const FORK_JOIN: &str = "fork-join";

/// The pool column of the machine's ceiling: at `t` threads, `t` sequential programs at once,
/// one per core (pinned as the workers are), their wall time divided by `t` as the row's time.
/// A pool does better than the cores do with no pool at all only within the noise: shared caches, memory
/// bandwidth and the other tenants of a shared machine set this limit.
pub const CEILING: &str = "ceiling";

/// Trace buffer per worker, in events.
const TRACE_EVENTS: usize = 1 << 21;

/// One configuration's result.
// Deserialize (strict) for `taskpools report` and `taskpools scaling`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// `radiosity`.
    pub experiment: String,
    /// The scene.
    pub scene: String,
    /// Pool name (`sequential` for the program without a pool).
    pub pool: String,
    /// Pool alias (`seq` for the sequential program).
    pub alias: String,
    /// Memory manager (`-` where the pool has none).
    pub mem: String,
    /// Wake-up policy (`-` for the sequential program).
    pub wake: String,
    /// Worker threads.
    pub threads: usize,
    /// Repetitions.
    pub reps: usize,
    /// Median wall time of the solve (the BSP build is outside it, as in the paper); for the
    /// [`CEILING`] rows the wall time of `threads` sequential programs at once, over `threads`.
    pub time_s: f64,
    /// Fastest repetition.
    pub min_s: f64,
    /// Slowest repetition.
    pub max_s: f64,
    /// Iterations until the energy converged (of the last repetition; the same in every
    /// repetition unless the counts differ, which the checks bound).
    pub iterations: u32,
    /// Interactions processed.
    pub interactions: u64,
    /// Completely and partially visible interactions.
    pub visible: u64,
    /// Of the visible interactions, the completely visible ones.
    pub fully_visible: u64,
    /// Surface elements.
    pub elements: u64,
    /// Patches after the BSP build (the roots of the element trees).
    pub patches: usize,
    /// Triangles of the scene before the BSP build.
    pub input_triangles: usize,
    /// Visibility tests over the solve (interactions whose visibility was computed).
    pub visibility_tests: u64,
    /// Rays cast through the BSP tree over the solve.
    pub rays: u64,
    /// Interaction rate: visible interactions per second, the median over repetitions of
    /// each repetition's count over its time (Korch & Rauber's measure).
    pub rate: f64,
    /// The sequential program's median time over this median time.
    pub speedup_time: f64,
    /// This rate over the sequential program's rate.
    pub speedup_rate: f64,
    /// Median over repetitions of successful steals.
    pub steals: u64,
    /// Tasks run (median over repetitions).
    pub tasks: u64,
    /// Korch & Rauber's Table 7 speed-up of the pool with this alias on "largeroom" (Linux
    /// PC, C version) at this thread count, where the paper has the pool and 1 or 2 threads.
    pub paper_speedup: Option<f64>,
}

/// Korch & Rauber (2002), Table 7, radiosity "largeroom", C versions on the Linux PC: speed-up
/// at 1 and 2 threads. Our `rq` is their `rq1`–`rq3` (which differ only in the random number
/// generator): their `rq2`/`rq3` figures, 0.99 and 1.93, stand for it.
pub const PAPER_TABLE7: [(&str, f64, f64); 14] = [
    ("sq1", 1.00, 1.92),
    ("sq2", 1.00, 1.91),
    ("sq3", 0.99, 1.90),
    ("sq4", 0.99, 1.84),
    ("dq1", 1.00, 1.78),
    ("dq2", 1.00, 1.95),
    ("dq3", 1.00, 1.76),
    ("dq4", 1.00, 1.95),
    ("dq5", 1.00, 1.95),
    ("dq6", 0.99, 1.95),
    ("dq7", 1.00, 1.94),
    ("dq8", 1.00, 1.78),
    ("sdq1", 1.00, 1.95),
    ("rq", 0.99, 1.93),
];

/// The paper's speed-up for a pool alias at 1 or 2 threads.
pub fn paper_speedup(alias: &str, threads: usize) -> Option<f64> {
    let &(_, one, two) = PAPER_TABLE7.iter().find(|(a, _, _)| *a == alias)?;
    match threads {
        1 => Some(one),
        2 => Some(two),
        _ => None,
    }
}

/// One configuration: pool, memory manager, threads.
type Config = (PoolKind, MemKind, usize);

fn configs(p: &Params) -> Vec<Config> {
    let mut v = Vec::new();
    for &pool in &p.pools {
        let mems: &[MemKind] = if pool.uses_mem() {
            &p.mems
        } else {
            &p.mems[..1]
        };
        for &mem in mems {
            for &t in &p.threads {
                v.push((pool, mem, t));
            }
        }
    }
    v
}

/// The builder of one configuration on `rt`.
fn builder<'r>(rt: &'r Runtime, (pool, mem, t): Config, p: &Params) -> Builder<'r> {
    Builder::new()
        .runtime(rt)
        .threads(t)
        .pool(pool)
        .mem(mem)
        .wake(p.wake)
        .pin(p.pin)
}

/// `t` sequential programs started at once on `t` threads (thread `i` pinned as worker `i`
/// is): the wall time from their start to the last one's end, and their outcomes.
fn concurrent_sequential(scene: &Scene, s: &Settings, t: usize, pin: bool) -> (f64, Vec<Outcome>) {
    let start = std::sync::Barrier::new(t + 1);
    let pin_to = crate::experiments::pinning::pinner(pin);
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..t)
            .map(|i| {
                let (start, pin_to) = (&start, pin_to.clone());
                sc.spawn(move || {
                    pin_to(i);
                    start.wait();
                    solve_sequential(scene, s)
                })
            })
            .collect();
        start.wait();
        let t0 = Instant::now();
        let outs: Vec<Outcome> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect();
        let secs = t0.elapsed().as_secs_f64();
        (secs, outs)
    })
}

/// The samples of one configuration.
#[derive(Default)]
struct Samples {
    times: Vec<f64>,
    rates: Vec<f64>,
    steals: Vec<u64>,
    tasks: Vec<u64>,
    last: Option<Outcome>,
}

impl Samples {
    fn add(&mut self, secs: f64, o: Outcome) {
        self.times.push(secs);
        self.rates.push(o.visible as f64 / secs);
        self.steals.push(o.steals);
        self.tasks.push(o.tasks);
        self.last = Some(o);
    }
}

/// Runs the experiment; the first record is the sequential program.
pub fn run(p: &Params, progress: &Progress) -> Result<Vec<Record>> {
    if p.reps == 0 {
        bail!("--reps must be at least 1");
    }
    if p.threads.is_empty() || p.threads.contains(&0) {
        bail!(taskpools::Error::ZeroThreads);
    }
    if p.mems.is_empty() || p.pools.is_empty() {
        bail!("no pool or memory manager selected");
    }
    p.settings.validate()?;
    let scene = Scene::by_name(&p.scene)?;
    let settings = &p.settings;
    let cfgs = configs(p);
    let fj_threads: Vec<usize> = if p.fork_join {
        p.threads.clone()
    } else {
        Vec::new()
    };
    let ceilings = p
        .threads
        .iter()
        .filter(|&&t| t > 1)
        .collect::<std::collections::BTreeSet<_>>();
    progress.set_length((p.reps * (cfgs.len() + fj_threads.len() + ceilings.len() + 1)) as u64);
    let per_count = |trace: Option<usize>| -> Result<BTreeMap<usize, Runtime>> {
        let mut counts: Vec<usize> = cfgs.iter().map(|c| c.2).chain(fj_threads.clone()).collect();
        counts.sort_unstable();
        counts.dedup();
        let rts = crate::experiments::pinning::runtimes_with(&counts, p.pin, None, trace)?;
        Ok(counts.into_iter().zip(rts).collect())
    };
    let runtimes = per_count(None)?;
    let builder = |rt, cfg| builder(rt, cfg, p);
    // The reference every parallel result is checked against, also an unmeasured warm-up.
    progress.set_message(format!("{} sequential (reference)", p.scene));
    // The sequential program on core 0, as in the other experiments (`--pin`); this thread
    // is unpinned again however the run ends.
    struct Unpin;
    impl Drop for Unpin {
        fn drop(&mut self) {
            crate::experiments::pinning::unpin_current();
        }
    }
    let _unpin = Unpin;
    crate::experiments::pinning::pinner(p.pin)(0);
    let reference = solve_sequential(&scene, settings);
    if reference.truncated {
        bail!(
            "scene \"{}\" with BF epsilon {:e} and area epsilon {:e}: refinement would make more \
             than {:e} interactions (--max-interactions); give a larger --bf-epsilon or \
             --area-epsilon, or a larger bound if the memory allows",
            p.scene,
            settings.bf_epsilon,
            settings.area_epsilon,
            settings.max_interactions as f64
        );
    }
    let mut seq = Samples::default();
    let mut samples: Vec<Samples> = cfgs.iter().map(|_| Samples::default()).collect();
    let mut fj_samples: Vec<Samples> = fj_threads.iter().map(|_| Samples::default()).collect();
    let mut ceil_threads: Vec<usize> = p.threads.iter().copied().filter(|&t| t > 1).collect();
    ceil_threads.sort_unstable();
    ceil_threads.dedup();
    let mut ceil_samples: Vec<Samples> = ceil_threads.iter().map(|_| Samples::default()).collect();
    let differs = |what: String| {
        move |e: String| {
            anyhow::Error::msg(e).context(format!(
                "radiosity {what} differs from the sequential program"
            ))
        }
    };
    for _ in 0..p.reps {
        progress.set_message(format!("{} sequential", p.scene));
        let t0 = Instant::now();
        let o = solve_sequential(&scene, settings);
        seq.add(t0.elapsed().as_secs_f64(), o);
        progress.inc();
        for (i, &cfg) in cfgs.iter().enumerate() {
            let (pool, mem, t) = cfg;
            progress.set_message(format!("{} {} {} x{t}", p.scene, pool.alias(), mem.alias()));
            let b = builder(&runtimes[&t], cfg);
            let t0 = Instant::now();
            let o = solve_tasks(&scene, settings, &b)?;
            let secs = t0.elapsed().as_secs_f64();
            check_identical(&reference, &o).map_err(differs(format!(
                "on {} ({}) with {t} threads",
                pool.name(),
                pool.alias()
            )))?;
            samples[i].add(secs, o);
            progress.inc();
        }
        for (i, &t) in fj_threads.iter().enumerate() {
            progress.set_message(format!("{} {FORK_JOIN} x{t}", p.scene));
            let t0 = Instant::now();
            let o = solve_forkjoin(&scene, settings, &runtimes[&t]);
            let secs = t0.elapsed().as_secs_f64();
            check_identical(&reference, &o)
                .map_err(differs(format!("with {FORK_JOIN} on {t} threads")))?;
            fj_samples[i].add(secs, o);
            progress.inc();
        }
        for (i, &t) in ceil_threads.iter().enumerate() {
            progress.set_message(format!("{} {CEILING} x{t}", p.scene));
            let (secs, outs) = concurrent_sequential(&scene, settings, t, p.pin);
            for o in &outs {
                check_identical(&reference, o)
                    .map_err(differs(format!("run {t} at once (the ceiling)")))?;
            }
            let o = outs.into_iter().next().expect("t >= 2");
            ceil_samples[i].add(secs / t as f64, o);
            progress.inc();
        }
    }
    if let Some(path) = &p.trace {
        let mut traces = Vec::new();
        let traced = per_count(Some(TRACE_EVENTS))?;
        for &cfg in &cfgs {
            let (pool, mem, t) = cfg;
            let rt = &traced[&t];
            progress.set_message(format!("tracing {} x{t}", pool.alias()));
            let _ = rt.take_trace()?; // start empty
            solve_tasks(&scene, settings, &builder(rt, cfg))?;
            if let Some(tr) = rt.take_trace()? {
                let name = format!(
                    "radiosity {} {} ({}) {} x{t}",
                    p.scene,
                    pool.name(),
                    pool.alias(),
                    mem.alias()
                );
                traces.push((name, tr));
            }
        }
        for &t in &fj_threads {
            let rt = &traced[&t];
            progress.set_message(format!("tracing {FORK_JOIN} x{t}"));
            let _ = rt.take_trace()?;
            solve_forkjoin(&scene, settings, rt);
            if let Some(tr) = rt.take_trace()? {
                traces.push((format!("radiosity {} {FORK_JOIN} x{t}", p.scene), tr));
            }
        }
        crate::report::trace::write_files(path, &traces)?;
    }
    let (seq_time, seq_min, seq_max) = summarize(&seq.times);
    let (seq_rate, _, _) = summarize(&seq.rates);
    let record = |pool: &str, alias: &str, mem: &str, wake: &str, t: usize, s: &Samples| {
        let (time, min, max) = summarize(&s.times);
        let (rate, _, _) = summarize(&s.rates);
        let o = s.last.as_ref().expect("at least one repetition");
        Record {
            experiment: "radiosity".into(),
            scene: scene.name().to_string(),
            pool: pool.into(),
            alias: alias.into(),
            mem: mem.into(),
            wake: wake.into(),
            threads: t,
            reps: p.reps,
            time_s: time,
            min_s: min,
            max_s: max,
            iterations: o.iterations,
            interactions: o.interactions,
            visible: o.visible,
            fully_visible: o.fully_visible,
            elements: o.elements,
            patches: scene.patches(),
            input_triangles: scene.input_triangles(),
            visibility_tests: o.visibility_tests,
            rays: o.rays,
            rate,
            speedup_time: seq_time / time,
            speedup_rate: rate / seq_rate,
            steals: median_u64(&s.steals),
            tasks: median_u64(&s.tasks),
            // Table 7 measured largeroom only.
            paper_speedup: if alias == "seq" || p.scene != "largeroom" {
                None
            } else {
                paper_speedup(alias, t)
            },
        }
    };
    let mut out = vec![record("sequential", "seq", "-", "-", 1, &seq)];
    out[0].min_s = seq_min;
    out[0].max_s = seq_max;
    for (i, &(pool, mem, t)) in cfgs.iter().enumerate() {
        let mem = if pool.uses_mem() { mem.alias() } else { "-" };
        out.push(record(
            pool.name(),
            pool.alias(),
            mem,
            p.wake.name(),
            t,
            &samples[i],
        ));
    }
    for (i, &t) in fj_threads.iter().enumerate() {
        out.push(record(FORK_JOIN, "join", "-", "-", t, &fj_samples[i]));
    }
    for (i, &t) in ceil_threads.iter().enumerate() {
        out.push(record(CEILING, "ceil", "-", "-", t, &ceil_samples[i]));
    }
    Ok(out)
}
