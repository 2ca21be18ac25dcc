//! Reading a tour's folder: `tour.json` and every experiment's records, strictly, into the
//! rows of the results table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::de::DeserializeOwned;
use serde_json::Value;
use taskpools::PoolKind;

use super::{experiments, TourInfo, RADIOSITY_KERNEL, SYNTHETIC_KERNEL, TOUR_FILE};
use crate::experiments::{blocked, dataflow, forkjoin, queens, radiosity, suite, synthetic};

/// What a row's numbers are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// The sequential program's time over the runtime's (higher is better).
    Speedup,
    /// Nanoseconds per task (lower is better).
    NsPerTask,
}

impl Figure {
    /// Whether `a` is better than `b`.
    pub fn better(self, a: f64, b: f64) -> bool {
        match self {
            Figure::Speedup => a > b,
            Figure::NsPerTask => a < b,
        }
    }

    /// The name in the table's `figure` column.
    pub fn name(self) -> &'static str {
        match self {
            Figure::Speedup => "speedup",
            Figure::NsPerTask => "ns/task",
        }
    }
}

/// A runtime's figure: the median (geometric mean for the suite) and the range over the
/// repetitions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Cell {
    /// A speedup from the sequential median `seq` and a runtime's median, fastest and slowest
    /// repetition: the range holds the sequential median fixed.
    fn speedup(seq: f64, median: f64, fastest: f64, slowest: f64) -> Cell {
        Cell {
            median: seq / median,
            min: seq / slowest,
            max: seq / fastest,
        }
    }
}

/// Who ran a configuration: one of our pools (with the variant, if any), or a peer.
#[derive(Clone, Debug, PartialEq)]
enum Who {
    Ours { pool: String, detail: String },
    Peer(&'static str),
}

/// One measured configuration of a row.
#[derive(Clone, Debug)]
struct Entry {
    threads: usize,
    who: Who,
    cell: Cell,
}

/// One row of the table: a kernel of an experiment at one thread count.
#[derive(Clone, Debug)]
pub struct Row {
    /// The experiment (subcommand) name.
    pub experiment: &'static str,
    /// The kernel, front end, graph or benchmark: a name of [`super::experiments`].
    pub kernel: String,
    /// Its size or other parameters, where the records carry them.
    pub detail: String,
    pub threads: usize,
    pub figure: Figure,
    /// Our best pool, its variant and figure.
    pub ours: Option<(String, String, Cell)>,
    /// Each peer's best figure, by peer name.
    pub peers: BTreeMap<&'static str, Cell>,
}

/// A tour's folder, read.
pub struct Tour {
    pub info: TourInfo,
    pub rows: Vec<Row>,
    /// Files of records the table leaves out, with the reason.
    pub left_out: Vec<(String, String)>,
}

/// A row's group while reading: the experiment's position, the kernel's position in its
/// list, a numeric order within the kernel, then the names.
type Key = (usize, usize, (i64, i64), String, String);

/// Reads the tour in `dir`.
pub fn read_dir(dir: &Path) -> Result<Tour> {
    let hint = "give the folder that `taskpools tour --out DIR` wrote";
    if !dir.exists() {
        bail!("{}: no such folder ({hint})", dir.display());
    }
    if !dir.is_dir() {
        bail!("{}: not a folder ({hint})", dir.display());
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("{}: no JSON files ({hint})", dir.display());
    }
    let tour_path = dir.join(TOUR_FILE);
    if !tour_path.is_file() {
        bail!(
            "{}: missing, so the machine and date of these results are unknown (run `taskpools \
             tour --out {}` again)",
            tour_path.display(),
            dir.display()
        );
    }
    let info: TourInfo = parse(&tour_path, &read(&tour_path)?)?;
    // The tour writes `tour.json` last: a file written before the tour started (the tour's
    // seconds before that, with a margin for the clock's granularity) is from an earlier run
    // into the same folder, and is left out rather than mixed into this tour's table.
    let started = info.seconds.and_then(|secs| {
        let written = std::fs::metadata(&tour_path)
            .and_then(|m| m.modified())
            .ok()?;
        written.checked_sub(std::time::Duration::from_secs_f64(secs.max(0.0) + 5.0))
    });
    let mut groups: BTreeMap<Key, (Figure, Vec<Entry>)> = BTreeMap::new();
    let mut left_out = Vec::new();
    for path in files.iter().filter(|p| **p != tour_path) {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Schedule traces are JSON too (Chrome trace events), and large: not records.
        if name.ends_with("-trace.json") {
            continue;
        }
        let written = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        if let (Some(started), Some(written)) = (started, written) {
            if written < started {
                left_out.push((name, "written before this tour started".into()));
                continue;
            }
        }
        let v: Value = parse(path, &read(path)?)?;
        let rows = match v {
            Value::Array(rows) => rows,
            Value::Object(o) if o.contains_key("traceEvents") => continue,
            _ => bail!("{}: not a JSON array of records", path.display()),
        };
        let Some(first) = rows.first() else {
            left_out.push((name, "no records".into()));
            continue;
        };
        let exp = first.get("experiment").and_then(Value::as_str);
        let why = match exp {
            Some(e) if experiments().iter().any(|x| x.name == e) => {
                if let Some((i, r)) = rows
                    .iter()
                    .enumerate()
                    .find(|(_, r)| r.get("experiment").and_then(Value::as_str) != Some(e))
                {
                    bail!(
                        "{}: record {}: not a `{e}` record like the first: {r}",
                        path.display(),
                        i + 1
                    );
                }
                let add = |g: &mut BTreeMap<Key, (Figure, Vec<Entry>)>| -> Result<()> {
                    match e {
                        "synthetic" => add_synthetic(g, &records(path, &rows)?),
                        "radiosity" => add_radiosity(g, &records(path, &rows)?),
                        "queens" => add_queens(g, &records(path, &rows)?),
                        "forkjoin" => add_forkjoin(g, &records(path, &rows)?),
                        "blocked" => add_blocked(g, &records(path, &rows)?),
                        "dataflow" => add_dataflow(g, &records(path, &rows)?),
                        "suite" => add_suite(g, &records(path, &rows)?),
                        _ => unreachable!("every experiment of `experiments()` is read"),
                    }
                };
                add(&mut groups).with_context(|| path.display().to_string())?;
                continue;
            }
            Some("deque-throughput" | "deque-latency") => {
                "Mops/s against crossbeam-deque, no sequential program"
            }
            Some("manber") => "operation times of one pool, no peers",
            None if first.get("section").is_some() => {
                "places: times relative to the best locality, no sequential program"
            }
            _ => "not an experiment this report reads",
        };
        left_out.push((name, why.into()));
    }
    if groups.is_empty() {
        bail!(
            "{}: no records of the experiments this report reads ({})",
            dir.display(),
            experiments()
                .iter()
                .map(|e| e.name)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let rows = groups
        .into_iter()
        .filter_map(|(key, (figure, entries))| row(key, figure, &entries))
        .collect();
    Ok(Tour {
        info,
        rows,
        left_out,
    })
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

fn parse<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| {
        let what = if e.is_syntax() || e.is_eof() {
            "malformed JSON"
        } else {
            "unexpected content"
        };
        anyhow::anyhow!("{}: {what}: {e}", path.display())
    })
}

/// Every record of a file as the experiment's own record type (unknown fields refused).
fn records<R: DeserializeOwned>(path: &Path, rows: &[Value]) -> Result<Vec<R>> {
    rows.iter()
        .enumerate()
        .map(|(i, r)| {
            serde_json::from_value(r.clone())
                .with_context(|| format!("{}: record {}", path.display(), i + 1))
        })
        .collect()
}

/// The row of a group: at its largest thread count, our best entry and each peer's best.
fn row(key: Key, figure: Figure, entries: &[Entry]) -> Option<Row> {
    let (exp, _, _, kernel, detail) = key;
    let threads = entries.iter().map(|e| e.threads).max()?;
    let better = |a: &Entry, b: &Entry| figure.better(a.cell.median, b.cell.median);
    let mut ours: Option<&Entry> = None;
    let mut peers: BTreeMap<&'static str, &Entry> = BTreeMap::new();
    for e in entries.iter().filter(|e| e.threads == threads) {
        match &e.who {
            Who::Ours { .. } => {
                if ours.is_none_or(|o| better(e, o)) {
                    ours = Some(e);
                }
            }
            Who::Peer(p) => {
                if peers.get(p).is_none_or(|o| better(e, o)) {
                    peers.insert(p, e);
                }
            }
        }
    }
    Some(Row {
        experiment: experiments()[exp].name,
        kernel,
        detail,
        threads,
        figure,
        ours: ours.map(|e| match &e.who {
            Who::Ours { pool, detail } => (pool.clone(), detail.clone(), e.cell),
            Who::Peer(_) => unreachable!("only ours"),
        }),
        peers: peers.into_iter().map(|(p, e)| (p, e.cell)).collect(),
    })
}

/// The position of experiment `exp` and of its kernel `kernel`; an unknown kernel is an error.
fn position(exp: &str, kernel: &str) -> Result<(usize, usize)> {
    let all = experiments();
    let e = all
        .iter()
        .position(|x| x.name == exp)
        .expect("a known experiment");
    match all[e].kernels.iter().position(|k| *k == kernel) {
        Some(k) => Ok((e, k)),
        None => bail!(
            "unknown {exp} kernel `{kernel}` (known: {})",
            all[e].kernels.join(", ")
        ),
    }
}

/// The peer that `runtime` names (its first word: `libomp depend` is `libomp`), if any. Tours
/// written before 2026-11-28 name their libgomp rows `openmp …`: those are libgomp's.
fn peer(exp: &str, runtime: &str) -> Option<&'static str> {
    let first = match runtime.split_whitespace().next()? {
        "openmp" if matches!(exp, "dataflow" | "suite") => "libgomp",
        w => w,
    };
    experiments()
        .into_iter()
        .find(|x| x.name == exp)?
        .peers
        .into_iter()
        .find(|p| *p == first)
}

/// A pool of the task-pool family by name, or an error.
fn pool_kind(name: &str) -> Result<&'static str> {
    PoolKind::ALL
        .iter()
        .map(|p| p.name())
        .find(|n| *n == name)
        .with_context(|| format!("`{name}` is not a pool (`taskpools list` names them)"))
}

/// A fork-join pool by name, or an error.
fn forkjoin_pool(name: &str) -> Result<&'static str> {
    taskpools::forkjoin::Pool::ALL
        .iter()
        .map(|p| p.name())
        .find(|n| *n == name)
        .with_context(|| format!("`{name}` is not a fork-join pool (`taskpools list`)"))
}

/// The pool that runtimes built without choosing one use (`forkjoin::Pool::ALL` lists the
/// default first).
fn default_pool() -> &'static str {
    taskpools::forkjoin::Pool::ALL[0].name()
}

fn push(
    g: &mut BTreeMap<Key, (Figure, Vec<Entry>)>,
    key: Key,
    figure: Figure,
    threads: usize,
    who: Who,
    cell: Cell,
) {
    if cell.median.is_finite() && cell.median > 0.0 {
        g.entry(key)
            .or_insert_with(|| (figure, Vec::new()))
            .1
            .push(Entry { threads, who, cell });
    }
}

/// Radiosity rows: our best pool's speed-up by interaction rate (Korch & Rauber's measure),
/// its range from the fastest and slowest repetitions' times.
fn add_radiosity(
    g: &mut BTreeMap<Key, (Figure, Vec<Entry>)>,
    recs: &[radiosity::Record],
) -> Result<()> {
    let (e, k) = position("radiosity", RADIOSITY_KERNEL)?;
    // The ceiling is the machine's limit, not a runtime.
    for r in recs
        .iter()
        .filter(|r| r.pool != "sequential" && r.pool != radiosity::CEILING)
    {
        // The fork-join driver runs `join` on the runtime's default fork-join pool.
        let (pool, detail) = if r.pool == radiosity::FORK_JOIN {
            (default_pool().to_string(), "join".to_string())
        } else if r.mem == "-" {
            (pool_kind(&r.pool)?.to_string(), String::new())
        } else {
            (pool_kind(&r.pool)?.to_string(), format!("mem {}", r.mem))
        };
        let key = (
            e,
            k,
            (0, 0),
            RADIOSITY_KERNEL.to_string(),
            format!("scene \"{}\", by interaction rate", r.scene),
        );
        // The sequential figure that gives this rate's speed-up at this median time.
        let seq = r.time_s * r.speedup_rate;
        let who = Who::Ours { pool, detail };
        let cell = Cell::speedup(seq, r.time_s, r.min_s, r.max_s);
        push(g, key, Figure::Speedup, r.threads, who, cell);
    }
    Ok(())
}

fn add_synthetic(
    g: &mut BTreeMap<Key, (Figure, Vec<Entry>)>,
    recs: &[synthetic::Record],
) -> Result<()> {
    let (e, k) = position("synthetic", SYNTHETIC_KERNEL)?;
    // The memory manager and wake-up policy are named where this file runs a pool with
    // several of them.
    let varied = |f: &dyn Fn(&synthetic::Record) -> &str| {
        let mut v: Vec<(&str, &str)> = recs.iter().map(|r| (r.pool.as_str(), f(r))).collect();
        v.sort_unstable();
        v.dedup();
        v.windows(2).any(|w| w[0].0 == w[1].0)
    };
    let (mems, wakes) = (varied(&|r| &r.mem), varied(&|r| &r.wake));
    for r in recs.iter().filter(|r| r.pool != "sequential") {
        let pool = pool_kind(&r.pool)?.to_string();
        let mut detail = Vec::new();
        if mems {
            detail.push(format!("mem {}", r.mem));
        }
        if wakes {
            detail.push(format!("wake {}", r.wake));
        }
        let key = (
            e,
            k,
            (i64::from(r.k), -i64::from(r.f)),
            SYNTHETIC_KERNEL.to_string(),
            format!("k = {}, f = {}", r.k, r.f),
        );
        let seq = r.median_s * r.speedup_vs_seq;
        let who = Who::Ours {
            pool,
            detail: detail.join(", "),
        };
        let cell = Cell::speedup(seq, r.median_s, r.min_s, r.max_s);
        push(g, key, Figure::Speedup, r.threads, who, cell);
    }
    Ok(())
}

fn add_queens(g: &mut BTreeMap<Key, (Figure, Vec<Entry>)>, recs: &[queens::Record]) -> Result<()> {
    for r in recs.iter().filter(|r| r.front_end != "sequential") {
        let (e, k) = position("queens", &r.front_end)?;
        let who = match peer("queens", &r.runtime) {
            Some(p) => Who::Peer(p),
            // Task-pool rows name the pool (`chase-lev cutoff 8`); the fork-join front ends
            // run on our runtime with its default pool.
            None if r.front_end == "task-pool" => {
                let (pool, detail) = r.runtime.split_once(' ').unwrap_or((&r.runtime, ""));
                Who::Ours {
                    pool: pool_kind(pool)?.to_string(),
                    detail: detail.to_string(),
                }
            }
            None if r.runtime == "taskpools" => Who::Ours {
                pool: default_pool().to_string(),
                detail: String::new(),
            },
            None => bail!("queens: unknown runtime `{}`", r.runtime),
        };
        let key = (
            e,
            k,
            (i64::from(r.n), 0),
            r.front_end.clone(),
            format!("n = {}", r.n),
        );
        let seq = r.median_s * r.speedup_vs_seq;
        let cell = Cell::speedup(seq, r.median_s, r.min_s, r.max_s);
        push(g, key, Figure::Speedup, r.threads, who, cell);
    }
    Ok(())
}

fn add_forkjoin(
    g: &mut BTreeMap<Key, (Figure, Vec<Entry>)>,
    recs: &[forkjoin::Record],
) -> Result<()> {
    // `ceiling` and `calls` are references, not runtimes.
    for r in recs
        .iter()
        .filter(|r| !["sequential", "ceiling", "calls"].contains(&r.runtime.as_str()))
    {
        let (e, k) = position("forkjoin", &r.kernel)?;
        let who = match peer("forkjoin", &r.runtime) {
            Some(p) => Who::Peer(p),
            None => Who::Ours {
                pool: forkjoin_pool(&r.runtime)?.to_string(),
                detail: String::new(),
            },
        };
        let key = (e, k, (0, 0), r.kernel.clone(), String::new());
        let seq = r.median_s * r.speedup_vs_seq;
        let cell = Cell::speedup(seq, r.median_s, r.min_s, r.max_s);
        push(g, key, Figure::Speedup, r.threads, who, cell);
    }
    Ok(())
}

fn add_blocked(
    g: &mut BTreeMap<Key, (Figure, Vec<Entry>)>,
    recs: &[blocked::Record],
) -> Result<()> {
    for r in recs.iter().filter(|r| r.runtime != "sequential") {
        let (e, k) = position("blocked", &r.kernel)?;
        let who = match peer("blocked", &r.runtime) {
            Some(p) => Who::Peer(p),
            None => Who::Ours {
                pool: forkjoin_pool(&r.runtime)?.to_string(),
                detail: r.order.clone(),
            },
        };
        let key = (e, k, (0, 0), r.kernel.clone(), String::new());
        let seq = r.median_s * r.speedup_vs_seq;
        let cell = Cell::speedup(seq, r.median_s, r.min_s, r.max_s);
        push(g, key, Figure::Speedup, r.threads, who, cell);
    }
    Ok(())
}

/// Our data-flow and suite variants (`dataflow b64`, `nd`, `forkjoin rows`) run on a runtime
/// with the default pool; anything else that is no peer is an error.
fn our_variant(variant: &str) -> Result<Who> {
    match variant.split_whitespace().next() {
        Some("dataflow" | "nd" | "forkjoin") => Ok(Who::Ours {
            pool: default_pool().to_string(),
            detail: variant.to_string(),
        }),
        _ => bail!("unknown variant `{variant}`"),
    }
}

fn add_dataflow(
    g: &mut BTreeMap<Key, (Figure, Vec<Entry>)>,
    recs: &[dataflow::Record],
) -> Result<()> {
    for r in recs.iter().filter(|r| r.variant != "sequential") {
        let (e, k) = position("dataflow", &r.graph)?;
        let who = match peer("dataflow", &r.variant) {
            Some(p) => Who::Peer(p),
            None => our_variant(&r.variant)?,
        };
        // `None`: not in this build (OpenMP without libgomp).
        let (Some(median), Some(min), Some(max)) = (r.ns_per_task, r.min_ns, r.max_ns) else {
            continue;
        };
        let key = (
            e,
            k,
            (r.accesses as i64, 0),
            r.graph.clone(),
            plural_accesses(r.accesses),
        );
        let cell = Cell { median, min, max };
        push(g, key, Figure::NsPerTask, r.threads, who, cell);
    }
    Ok(())
}

fn plural_accesses(n: usize) -> String {
    crate::report::plural(n, "access", "accesses")
}

fn add_suite(g: &mut BTreeMap<Key, (Figure, Vec<Entry>)>, recs: &[suite::Record]) -> Result<()> {
    for r in recs.iter().filter(|r| r.variant != "sequential") {
        let (e, k) = position("suite", &r.bench)?;
        let who = match peer("suite", &r.variant) {
            Some(p) => Who::Peer(p),
            None => our_variant(&r.variant)?,
        };
        let (Some(ms), Some(fastest), Some(slowest), Some(speedup)) =
            (r.ms, r.min_ms, r.max_ms, r.speedup)
        else {
            continue;
        };
        let key = (e, k, (0, 0), r.bench.clone(), r.setup.clone());
        let cell = Cell::speedup(ms * speedup, ms, fastest, slowest);
        push(g, key, Figure::Speedup, r.threads, who, cell);
    }
    Ok(())
}
