//! Schedule traces: the Gantt chart of a trace (one row per worker, jobs as bars coloured by
//! where they were found, sleeps shaded, steals marked, like Figure 1 of Korch & Rauber, "A
//! Comparison of Task Pools for Dynamic Load Balancing of Irregular Algorithms" (2002)),
//! and the summary that `taskpools trace FILE.json` prints from a Chrome trace-event file.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context, Result};
use taskpools::runtime::trace::{EventKind, Source, Trace};

use super::plural;

/// The colour of a job found at `src`.
fn colour(src: Source) -> &'static str {
    match src {
        Source::Own => "#4c78a8",
        Source::Place => "#54a24b",
        Source::PlaceSteal { .. } => "#f58518",
        Source::Steal { .. } => "#e45756",
        Source::Injected => "#9d9d9d",
        Source::Mail => "#b279a2",
        Source::Pool => "#72b7b2",
        Source::PoolSteal { .. } => "#d62728",
        // `Source` is `#[non_exhaustive]`: a source a later library adds is drawn black.
        _ => "#000000",
    }
}

/// Writes the Gantt chart of `t` as an SVG file: one row per worker, time left to right,
/// each job a bar (nested jobs drawn inside their parent's bar, thinner), sleeps as grey
/// bands, steals as a triangle above the thief's row. Bars narrower than a tenth of a pixel
/// are left out (a trace of a million jobs stays drawable; such a worker can look idle
/// where it ran many tiny jobs: the summary's busy share counts them).
pub fn gantt_svg(path: &Path, title: &str, t: &Trace) -> Result<()> {
    let (w_px, row, top, left) = (1200.0, 36.0, 40.0, 80.0);
    let t0 = t.events.first().map_or(0, |e| e.t_ns);
    let t1 = t.events.last().map_or(1, |e| e.t_ns).max(t0 + 1);
    let span = (t1 - t0) as f64;
    let x = |ns: u64| left + (ns - t0) as f64 / span * (w_px - left - 20.0);
    // Below the rows: the time axis (AXIS_H), then the legend and the note.
    const AXIS_H: f64 = 28.0;
    let h = top + row * t.workers as f64 + AXIS_H + 60.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w_px}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="20" font-size="14">{}</text>"#,
        xml(title)
    );
    for w in 0..t.workers {
        let y = top + row * w as f64;
        let _ = writeln!(
            s,
            r##"<text x="8" y="{}">worker {w}</text><rect x="{left}" y="{y}" width="{}" height="{}" fill="none" stroke="#ddd"/>"##,
            y + row / 2.0 + 4.0,
            w_px - left - 20.0,
            row - 6.0
        );
    }
    // Per worker: a stack of open jobs (start time, source) and the sleep start.
    let mut stack: Vec<Vec<(u64, Source)>> = vec![Vec::new(); t.workers];
    let mut asleep: Vec<Option<u64>> = vec![None; t.workers];
    let mut bars: Vec<(usize, f64, f64, f64, &str)> = Vec::new();
    // The colours drawn (bars and steal marks), for the legend.
    let mut drawn: Vec<&str> = Vec::new();
    // Sleep and idle times, drawn over the bars (a phase's idle time is inside its share).
    let mut lines: Vec<(f64, f64, f64)> = Vec::new();
    for e in &t.events {
        let w = e.worker as usize;
        let y = top + row * w as f64;
        match e.kind {
            EventKind::Start(src) => {
                if matches!(
                    src,
                    Source::Steal { .. } | Source::PlaceSteal { .. } | Source::PoolSteal { .. }
                ) {
                    let xs = x(e.t_ns);
                    drawn.push(colour(src));
                    let _ = writeln!(
                        s,
                        r#"<path d="M{xs:.2},{:.1} l-3,-5 h6 z" fill="{}"/>"#,
                        y - 1.0,
                        colour(src)
                    );
                }
                stack[w].push((e.t_ns, src));
            }
            EventKind::End => {
                let depth = stack[w].len().saturating_sub(1);
                if let Some((st, src)) = stack[w].pop() {
                    let (x0, x1) = (x(st), x(e.t_ns));
                    if x1 - x0 >= 0.1 {
                        bars.push((depth, x0, x1, y, colour(src)));
                        drawn.push(colour(src));
                    }
                }
            }
            EventKind::Misses { .. } => {
                // A tick under the row: a steal search that found nothing.
                let _ = writeln!(
                    s,
                    r##"<path d="M{:.2},{:.1} v4" stroke="#b22222"/>"##,
                    x(e.t_ns),
                    y + row - 6.0
                );
            }
            EventKind::Task { .. }
            | EventKind::Dep { .. }
            | EventKind::Ready { .. }
            | EventKind::Spawn { .. }
            | EventKind::Wait { .. }
            | EventKind::Sync { .. }
            | EventKind::Export { .. }
            | EventKind::Import { .. }
            | EventKind::Moved { .. }
            | EventKind::Put => {}
            EventKind::Sleep | EventKind::Idle => asleep[w] = Some(e.t_ns),
            EventKind::Wake | EventKind::Resume => {
                if let Some(st) = asleep[w].take() {
                    lines.push((x(st), y, (x(e.t_ns) - x(st)).max(0.1)));
                }
            }
            // `EventKind` is `#[non_exhaustive]`: a kind a later library adds is not drawn.
            _ => {}
        }
    }
    // Outer jobs first, so that the jobs nested in them are drawn on top.
    bars.sort_by_key(|b| b.0);
    for (depth, x0, x1, y, fill) in bars {
        let inset = (depth as f64 * 4.0).min(16.0);
        let _ = writeln!(
            s,
            r#"<rect x="{x0:.2}" y="{:.1}" width="{:.2}" height="{:.1}" fill="{fill}"/>"#,
            y + inset / 2.0,
            x1 - x0,
            row - 6.0 - inset,
        );
    }
    for (x0, y, width) in lines {
        let _ = writeln!(
            s,
            r##"<rect x="{x0:.2}" y="{:.1}" width="{width:.2}" height="4.0" fill="#cccccc"/>"##,
            y + (row - 6.0) / 2.0 - 2.0,
        );
    }
    let axis_y = top + row * t.workers as f64;
    time_axis(&mut s, left, w_px - left - 20.0, axis_y, span);
    let ly = axis_y + AXIS_H + 16.0;
    let mut lx = left;
    for (name, src) in [
        ("own deque", Source::Own),
        ("own place", Source::Place),
        ("stolen from a place", Source::PlaceSteal { place: 0 }),
        ("stolen from a worker", Source::Steal { victim: 0 }),
        ("injected", Source::Injected),
        ("share", Source::Mail),
        ("phase task", Source::Pool),
        (
            "phase task after a steal",
            Source::PoolSteal {
                victim: 0,
                tasks: 0,
            },
        ),
    ] {
        // Only the kinds of job this chart shows.
        if !drawn.contains(&colour(src)) {
            continue;
        }
        let _ = writeln!(
            s,
            r#"<rect x="{lx}" y="{}" width="10" height="10" fill="{}"/><text x="{}" y="{ly}">{name}</text>"#,
            ly - 9.0,
            colour(src),
            lx + 14.0
        );
        lx += 14.0 + 7.0 * name.len() as f64 + 16.0;
    }
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="{}">grey line: asleep or idle; triangles: steals; red ticks below a row: steal searches that found nothing; {:.3} ms shown{}</text>"#,
        ly + 18.0,
        span / 1e6,
        if t.dropped > 0 {
            format!(
                "; {} dropped (buffer full)",
                plural(t.dropped, "event", "events")
            )
        } else {
            String::new()
        }
    );
    s.push_str("</svg>\n");
    std::fs::write(path, s).with_context(|| format!("writing {}", path.display()))
}

/// A time axis under the rows: a line `width` px long from `x0` at `y`, ticks at a round step
/// (1, 2 or 5 times a power of ten) giving at most ten intervals over `span_ns`, each labelled
/// with its time from the start in the unit that suits the span.
fn time_axis(s: &mut String, x0: f64, width: f64, y: f64, span_ns: f64) {
    let _ = writeln!(
        s,
        r##"<path d="M{x0:.1},{y:.1} h{width:.1}" stroke="#666"/>"##
    );
    let (unit, scale) = if span_ns >= 2e9 {
        ("s", 1e9)
    } else if span_ns >= 1e6 {
        ("ms", 1e6)
    } else {
        ("µs", 1e3)
    };
    let step = tick_step(span_ns / scale) * scale;
    let mut k = 0u32;
    loop {
        let t = f64::from(k) * step;
        if t > span_ns * (1.0 + 1e-9) {
            break;
        }
        let xt = x0 + t / span_ns * width;
        let value = t / scale;
        // As many decimals as the step needs (a step of 0.2 ms prints 0.4, not 0.40000001).
        let decimals = (-(step / scale).log10().floor()).max(0.0) as usize;
        let _ = writeln!(
            s,
            r##"<path d="M{xt:.2},{y:.1} v5" stroke="#666"/><text x="{xt:.2}" y="{:.1}" font-size="11" text-anchor="middle" fill="#444">{value:.decimals$}{}</text>"##,
            y + 17.0,
            if k == 0 {
                format!(" {unit}")
            } else {
                String::new()
            }
        );
        k += 1;
    }
}

/// A round step (1, 2 or 5 times a power of ten) that splits `span` into at most ten parts.
fn tick_step(span: f64) -> f64 {
    if span.is_nan() || span <= 0.0 {
        return 1.0;
    }
    let raw = span / 10.0;
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p)
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// What `taskpools trace` prints about one process (one traced configuration) of a Chrome
/// trace-event file: utilisation per worker, the steal matrix, the longest idle gaps.
///
/// The file is input: a worker id (`tid`) or a victim at or past
/// [`MAX_THREADS`](taskpools::MAX_THREADS), whose per-worker tables would not fit, and a task
/// graph whose ids contradict each other (a task its own ancestor) are refused, naming them.
pub fn summary(path: &Path) -> Result<String> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let Some(events) = doc.get("traceEvents").and_then(|v| v.as_array()) else {
        bail!(
            "{}: no `traceEvents` array (not a Chrome trace-event file)",
            path.display()
        );
    };
    #[derive(Default)]
    struct Track {
        depth: usize,
        busy_since: Option<f64>,
        busy: f64,
        sleep: f64,
        sleeping_since: Option<f64>,
        idle: f64,
        idle_since: Option<f64>,
        last_end: Option<f64>,
        gaps: Vec<(f64, f64)>,
        jobs: u64,
        misses: u64,
    }
    #[derive(Clone, Copy, PartialEq)]
    enum Slice {
        Job,
        Sleep,
        Idle,
    }
    #[derive(Default)]
    struct Proc {
        /// The events again as a trace, for the data-flow task graph.
        rebuilt: Trace,
        /// Per track: what each open slice is (a job, a sleep, a phase's idle time).
        open_sleep: BTreeMap<u64, Vec<Slice>>,
        name: String,
        tracks: BTreeMap<u64, Track>,
        first: f64,
        last: f64,
        steals: BTreeMap<(u64, u64), u64>,
        flows: BTreeMap<u64, u64>,
        notes: Vec<String>,
        seen: bool,
    }
    let mut procs: BTreeMap<u64, Proc> = BTreeMap::new();
    // A worker id read from the file: each sizes per-worker tables, so it stays below the
    // runtime's limit.
    let worker = |i: usize, what: &str, id: u64| -> Result<u64> {
        if id >= taskpools::MAX_THREADS as u64 {
            bail!(
                "{}: event {i}: {what} {id}: beyond the limit of {} workers",
                path.display(),
                taskpools::MAX_THREADS
            );
        }
        Ok(id)
    };
    for (i, e) in events.iter().enumerate() {
        let ph = e["ph"].as_str().unwrap_or("");
        let pid = e["pid"].as_u64().unwrap_or(0);
        let tid = worker(i, "worker", e["tid"].as_u64().unwrap_or(0))?;
        let p = procs.entry(pid).or_default();
        if ph == "M" {
            if e["name"] == "process_name" {
                p.name = e["args"]["name"].as_str().unwrap_or("").to_string();
            } else if e["tid"].is_u64() {
                // A worker that ran nothing still gets its row.
                p.tracks.entry(tid).or_default();
            }
            continue;
        }
        let Some(ts) = e["ts"].as_f64() else {
            bail!("event {i}: no `ts`");
        };
        if !p.seen {
            p.first = ts;
            p.seen = true;
        }
        p.first = p.first.min(ts);
        p.last = p.last.max(ts);
        // The same event for the rebuilt trace.
        let kind = match ph {
            "B" if e["name"] == "sleep" => {
                p.open_sleep.entry(tid).or_default().push(Slice::Sleep);
                Some(EventKind::Sleep)
            }
            "B" if e["name"] == "idle" => {
                p.open_sleep.entry(tid).or_default().push(Slice::Idle);
                Some(EventKind::Idle)
            }
            "B" => {
                p.open_sleep.entry(tid).or_default().push(Slice::Job);
                let a = &e["args"];
                let n = |k: &str| a[k].as_u64().unwrap_or(0).min(u64::from(u32::MAX)) as u32;
                // Victims (workers, places) are bounded as workers are.
                let v = |k: &str| -> Result<u32> {
                    Ok(worker(i, "victim", a[k].as_u64().unwrap_or(0))? as u32)
                };
                Some(EventKind::Start(match a["from"].as_str().unwrap_or("") {
                    "place" => Source::Place,
                    "place-steal" => Source::PlaceSteal {
                        place: v("victim_place")?,
                    },
                    "steal" => Source::Steal {
                        victim: v("victim")?,
                    },
                    "injected" => Source::Injected,
                    "mail" => Source::Mail,
                    "pool" => Source::Pool,
                    "pool-steal" => Source::PoolSteal {
                        victim: v("victim")?,
                        tasks: n("tasks"),
                    },
                    _ => Source::Own,
                }))
            }
            "E" => match p.open_sleep.entry(tid).or_default().pop() {
                Some(Slice::Sleep) => Some(EventKind::Wake),
                Some(Slice::Idle) => Some(EventKind::Resume),
                _ => Some(EventKind::End),
            },
            "i" => {
                let a = &e["args"];
                let n = |k: &str| a[k].as_u64().unwrap_or(0);
                match e["name"].as_str().unwrap_or("") {
                    "task" => Some(EventKind::Task { id: n("id") }),
                    "dep" => Some(EventKind::Dep {
                        from: n("from"),
                        to: n("to"),
                    }),
                    "ready" => Some(EventKind::Ready {
                        task: n("task"),
                        by: n("by"),
                    }),
                    "put" => Some(EventKind::Put),
                    "spawn" => Some(EventKind::Spawn {
                        parent: n("parent"),
                        child: n("child"),
                    }),
                    "wait for children" => Some(EventKind::Wait { task: n("task") }),
                    "sync" => Some(EventKind::Sync { task: n("task") }),
                    "sent to another process" => Some(EventKind::Export {
                        tasks: n("tasks").min(u64::from(u32::MAX)) as u32,
                    }),
                    "moved from another worker" => Some(EventKind::Moved {
                        victim: n("victim").min(u64::from(u32::MAX)) as u32,
                        tasks: n("tasks").min(u64::from(u32::MAX)) as u32,
                    }),
                    "received from another process" => Some(EventKind::Import {
                        tasks: n("tasks").min(u64::from(u32::MAX)) as u32,
                    }),
                    "steal misses" => Some(EventKind::Misses {
                        attempts: n("attempts").clamp(1, u64::from(u32::MAX)) as u32,
                    }),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(kind) = kind {
            p.rebuilt.workers = p.rebuilt.workers.max(tid.saturating_add(1) as usize);
            p.rebuilt.events.push(taskpools::runtime::trace::Event {
                t_ns: (ts * 1000.0).round() as u64,
                worker: tid as u32,
                kind,
            });
        }
        match ph {
            "B" if e["name"] == "sleep" => {
                p.tracks.entry(tid).or_default().sleeping_since = Some(ts);
            }
            "B" if e["name"] == "idle" => {
                // A working phase's worker without a task, inside its share: not busy.
                let t = p.tracks.entry(tid).or_default();
                if let Some(st) = t.busy_since.take() {
                    t.busy += ts - st;
                }
                t.idle_since = Some(ts);
            }
            "B" => {
                let t = p.tracks.entry(tid).or_default();
                if t.depth == 0 {
                    if let Some(end) = t.last_end {
                        t.gaps.push((ts - end, end));
                    }
                    t.busy_since = Some(ts);
                }
                t.depth += 1;
                t.jobs += 1;
            }
            "E" => {
                let t = p.tracks.entry(tid).or_default();
                if let Some(st) = t.sleeping_since.take() {
                    t.sleep += ts - st;
                } else if let Some(st) = t.idle_since.take() {
                    t.idle += ts - st;
                    t.gaps.push((ts - st, st));
                    if t.depth > 0 {
                        t.busy_since = Some(ts);
                    }
                } else if t.depth > 0 {
                    t.depth -= 1;
                    if t.depth == 0 {
                        if let Some(st) = t.busy_since.take() {
                            t.busy += ts - st;
                        }
                        t.last_end = Some(ts);
                    }
                } else {
                    bail!("event {i}: an end without a start on track {tid}");
                }
            }
            "s" if e["cat"] == "steal" => {
                p.flows.insert(e["id"].as_u64().unwrap_or(0), tid);
            }
            "f" if e["cat"] == "steal" => {
                if let Some(victim) = p.flows.remove(&e["id"].as_u64().unwrap_or(0)) {
                    *p.steals.entry((tid, victim)).or_default() += 1;
                }
            }
            "i" if e["name"] == "steal misses" => {
                let t = p.tracks.entry(tid).or_default();
                t.misses = t
                    .misses
                    .saturating_add(e["args"]["attempts"].as_u64().unwrap_or(0));
            }
            "i" if e["cat"] != "dataflow" && e["cat"] != "phase" => {
                p.notes.push(e["name"].as_str().unwrap_or("").to_string())
            }
            _ => {}
        }
    }
    let mut s = String::new();
    for (pid, p) in &procs {
        if !p.seen {
            continue;
        }
        let span = (p.last - p.first).max(1e-9);
        let _ = writeln!(
            s,
            "== {} (pid {pid}): {:.3} ms traced",
            if p.name.is_empty() { "trace" } else { &p.name },
            span / 1e3
        );
        for n in &p.notes {
            let _ = writeln!(s, "   note: {n}");
        }
        let _ = writeln!(
            s,
            "   worker   jobs   busy %   asleep %   phase idle %   steal misses   longest idle gaps, between jobs or in a phase (µs, at µs)"
        );
        for (tid, t) in &p.tracks {
            let mut gaps = t.gaps.clone();
            gaps.sort_by(|a, b| b.0.total_cmp(&a.0));
            let g: Vec<String> = gaps
                .iter()
                .take(3)
                .map(|(d, at)| format!("{d:.1} @{:.1}", at - p.first))
                .collect();
            let _ = writeln!(
                s,
                "   {tid:>6} {:>6} {:>8.1} {:>10.1} {:>14.1} {:>14}   {}",
                t.jobs,
                100.0 * t.busy / span,
                100.0 * t.sleep / span,
                100.0 * t.idle / span,
                t.misses,
                g.join(", ")
            );
        }
        // The task graph, from files with data-flow events (ours: a worker per tid).
        let has_tasks = p
            .rebuilt
            .events
            .iter()
            .any(|e| matches!(e.kind, EventKind::Task { .. }));
        let g = if has_tasks {
            p.rebuilt.task_graph()
        } else {
            Default::default()
        };
        if !g.tasks.is_empty() {
            let (crit, len) = g
                .critical_path()
                .with_context(|| format!("{} (pid {pid})", path.display()))?;
            let work = g.work_ns();
            let _ = writeln!(
                s,
                "   data-flow: {}, {}, work {:.3} ms, critical path {:.3} ms ({}): available parallelism {:.2}",
                plural(g.tasks.len(), "task", "tasks"),
                plural(g.deps.len(), "dependence", "dependences"),
                work as f64 / 1e6,
                len as f64 / 1e6,
                plural(
                    crit.iter().filter(|id| g.tasks.contains_key(id)).count(),
                    "task",
                    "tasks"
                ),
                work as f64 / len.max(1) as f64
            );
        }
        if let Some(table) = over_time(&p.rebuilt, 10) {
            s.push_str(&table);
            if p.notes.iter().any(|n| n.starts_with("trace incomplete")) {
                let _ = writeln!(
                    s,
                    "   (events were dropped: the segment and waiting columns are not reliable)"
                );
            }
        }
        if p.steals.is_empty() {
            let _ = writeln!(s, "   steals between workers: none");
        } else {
            let _ = writeln!(s, "   steals between workers (thief <- victim: count):");
            for ((thief, victim), n) in &p.steals {
                let _ = writeln!(s, "     {thief} <- {victim}: {n}");
            }
        }
        let _ = writeln!(s);
    }
    if s.is_empty() {
        bail!("{}: the file holds no events", path.display());
    }
    Ok(s)
}

/// Manber's measurements over time, from a working phase's events (none without them): in
/// `slices` equal slices of the traced time, the tasks run, the steals and the tasks they
/// moved, the tasks waiting in the pool, and each worker's segment at the end of the slice.
///
/// A worker's segment is computed as its puts, less the tasks it ran from the pool, plus
/// what its steals moved to it (less the one it ran at once), less what was stolen from it;
/// its initial share is what makes it end at zero, or zero if that would be negative. For a
/// working phase (which ends with an empty pool) on a pool with a queue per worker that is
/// the queue's length, and so it is for Manber's pool, whose initial elements are puts and
/// which may end with elements left. A steal is stamped when the thief starts the task it
/// took, so a segment can read briefly below zero. For shared queues (`central-*`, the
/// central blocks of `combined`) the column is only a balance of puts and runs; the pool
/// total is exact for every pool. A trace with dropped events gives wrong figures (the
/// summary says so).
pub fn over_time(t: &Trace, slices: usize) -> Option<String> {
    if slices == 0 {
        return None;
    }
    let phase = |e: &&taskpools::runtime::trace::Event| {
        matches!(
            e.kind,
            EventKind::Start(Source::Pool | Source::PoolSteal { .. })
                | EventKind::Put
                | EventKind::Export { .. }
                | EventKind::Import { .. }
                | EventKind::Moved { .. }
        )
    };
    let first = t.events.iter().find(phase)?.t_ns;
    let last = t
        .events
        .iter()
        .rev()
        .find(phase)?
        .t_ns
        .max(first.saturating_add(1));
    let n = t.workers;
    // In u128: the times may span all of u64 (a file's).
    let slot =
        |ns: u64| (((ns - first) as u128 * slices as u128) / ((last - first) as u128 + 1)) as usize;
    let mut ran = vec![0u64; slices];
    let mut steals = vec![0u64; slices];
    let mut moved = vec![0u64; slices];
    // Per slice and worker: the change of the segment within the slice.
    let mut delta = vec![vec![0i64; n]; slices];
    let step = |w: usize, d: i64, k: usize, delta: &mut Vec<Vec<i64>>| delta[k][w] += d;
    for e in t
        .events
        .iter()
        .filter(|e| e.t_ns >= first && e.t_ns <= last)
    {
        let (k, w) = (slot(e.t_ns), e.worker as usize);
        if w >= n {
            continue;
        }
        match e.kind {
            EventKind::Put => step(w, 1, k, &mut delta),
            // Tasks that cross processes (a distributed phase).
            EventKind::Export { tasks } => step(w, -i64::from(tasks), k, &mut delta),
            EventKind::Import { tasks } => step(w, i64::from(tasks), k, &mut delta),
            EventKind::Moved { victim, tasks } => {
                if (victim as usize) < n {
                    step(victim as usize, -i64::from(tasks), k, &mut delta);
                }
                step(w, i64::from(tasks), k, &mut delta);
            }
            EventKind::Start(Source::Pool) => {
                ran[k] += 1;
                step(w, -1, k, &mut delta);
            }
            EventKind::Start(Source::PoolSteal { victim, tasks }) => {
                ran[k] += 1;
                steals[k] += 1;
                moved[k] += u64::from(tasks);
                if (victim as usize) < n {
                    step(victim as usize, -i64::from(tasks), k, &mut delta);
                }
                step(w, i64::from(tasks) - 1, k, &mut delta);
            }
            _ => {}
        }
    }
    let total: Vec<i64> = (0..n).map(|w| delta.iter().map(|d| d[w]).sum()).collect();
    let mut size: Vec<i64> = total.iter().map(|t| (-t).max(0)).collect();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "   the working phase over time ({slices} slices of {:.3} ms): tasks run, steals (tasks moved),\n   \
         tasks waiting in the pool, and each worker's segment at the slice's end (puts - runs +/- steals:\n   \
         a queue's length for pools with a queue per worker, a balance for shared queues)",
        (last - first) as f64 / slices as f64 / 1e6
    );
    let _ = writeln!(
        s,
        "     {:>5} {:>10} {:>14} {:>8}   {}",
        "slice",
        "tasks run",
        "steals (moved)",
        "waiting",
        (0..n)
            .map(|w| format!("{:>8}", format!("w{w}")))
            .collect::<String>()
    );
    for k in 0..slices {
        for (w, d) in delta[k].iter().enumerate() {
            size[w] += d;
        }
        let _ = writeln!(
            s,
            "     {:>5} {:>10} {:>14} {:>8}   {}",
            k,
            ran[k],
            format!("{} ({})", steals[k], moved[k]),
            size.iter().sum::<i64>(),
            size.iter().map(|v| format!("{v:>8}")).collect::<String>()
        );
    }
    Some(s)
}

/// Writes traces (one per configuration): Chrome trace-event JSON to `path` (a process per
/// configuration), a Gantt chart per configuration in the folder `path` with the extension
/// `.gantt`, and, for traces with data-flow tasks, the task graph with its critical path as
/// DOT in the folder with the extension `.dot`. A malformed trace is written with a warning.
pub fn write_files(path: &Path, traces: &[(String, Trace)]) -> Result<()> {
    let mut body = String::new();
    for (k, (name, t)) in traces.iter().enumerate() {
        if let Err(e) = t.check() {
            eprintln!("taskpools: the trace of {name} is malformed ({e}); written anyway");
        }
        t.chrome_events(k as u32 + 1, name, &mut body);
    }
    std::fs::write(path, taskpools::runtime::trace::wrap_chrome_events(&body))
        .with_context(|| format!("writing --trace {}", path.display()))?;
    let slug = |name: &str| -> String {
        name.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect::<String>()
            .split('-')
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("-")
    };
    let gantt = path.with_extension("gantt");
    std::fs::create_dir_all(&gantt).with_context(|| format!("creating {}", gantt.display()))?;
    let dots = path.with_extension("dot");
    for (k, (name, t)) in traces.iter().enumerate() {
        let file = format!("{:02}-{}", k + 1, slug(name));
        gantt_svg(&gantt.join(format!("{file}.svg")), name, t)?;
        let g = t.task_graph();
        if !g.tasks.is_empty() {
            std::fs::create_dir_all(&dots)
                .with_context(|| format!("creating {}", dots.display()))?;
            let f = dots.join(format!("{file}.dot"));
            let dot = g
                .dot(name)
                .with_context(|| format!("the task graph of {name}"))?;
            std::fs::write(&f, dot).with_context(|| format!("writing {}", f.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn tick_steps_are_round_and_at_most_ten_per_span() {
        for (span, step) in [
            (43.127, 5.0),
            (1.2, 0.2),
            (2.172, 0.5),
            (143.966, 20.0),
            (9.0, 1.0),
        ] {
            assert!((super::tick_step(span) - step).abs() < 1e-9, "{span}");
            assert!(span / super::tick_step(span) <= 10.0 + 1e-9);
        }
    }
}
