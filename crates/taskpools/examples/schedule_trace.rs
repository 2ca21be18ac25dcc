//! Schedule traces: a runtime built with `trace(events)` records, per worker and without
//! shared atomics, every job it runs and where it found it (its own deque, a steal, the
//! injector, …), its failed steal searches and its sleeps. `take_trace` collects the trace,
//! which exports to the Chrome trace-event format (open it in Perfetto or chrome://tracing:
//! one track per worker, arrows from victim to thief). A traced data-flow run also gives its
//! task graph and critical path.
//!
//! ```text
//! cargo run --release -p taskpools --example schedule_trace [-- N]
//! ```
//! N is the number of spawned jobs traced (default 10 000, at most 100 000: each worker's
//! buffer holds 2^19 events).

use std::collections::BTreeMap;
use std::hint::black_box;

use taskpools::dataflow::{self, Config};
use taskpools::runtime::trace::EventKind;
use taskpools::Runtime;

/// Events each worker can record (40 bytes each): up to 20 MiB per worker.
const EVENTS: usize = 1 << 19;
/// The data-flow part: a chain of this many dependent tasks beside as many independent ones.
const CHAIN: usize = 8;

/// About `us` microseconds of arithmetic; returns 1.
fn work(us: u64) -> u64 {
    let t = std::time::Instant::now();
    let mut x = 1u64;
    while t.elapsed().as_micros() < u128::from(us) {
        for _ in 0..100 {
            x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
    black_box(x);
    1
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = size_arg();
    let rt = Runtime::builder().threads(2).trace(EVENTS).build()?;

    // 1. Fork-join: N spawned jobs in a scope, each filling its own slot.
    let mut out = vec![0u64; n];
    rt.scope(|s| {
        for (i, slot) in out.iter_mut().enumerate() {
            s.spawn(move |_| *slot = black_box(i as u64) * 2);
        }
    });
    assert!(out.iter().enumerate().all(|(i, &x)| x == 2 * i as u64));
    let trace = rt
        .take_trace()?
        .expect("the runtime was built with a trace");
    // Well formed: every start ended, no sleep inside a job, steals name real workers.
    trace.check()?;
    assert_eq!(trace.dropped, 0, "the buffers held every event");
    // Every spawned job was taken from a queue and started once (the scope's own body is one
    // more job, and a busy worker may take a job back inline without an event only for `join`).
    assert!(trace.jobs() > n, "{} jobs for {n} spawns", trace.jobs());
    let mut by_source: BTreeMap<(u32, &str), usize> = BTreeMap::new();
    for e in &trace.events {
        if let EventKind::Start(src) = e.kind {
            *by_source.entry((e.worker, src.name())).or_default() += 1;
        }
    }
    println!(
        "{n} spawns in a scope: {} events, {} jobs; per worker and where each job was found:",
        trace.events.len(),
        trace.jobs()
    );
    for ((w, src), count) in &by_source {
        println!("  worker {w}: {count:>6} from {src}");
    }
    let path = std::env::temp_dir().join("taskpools-schedule-trace.json");
    std::fs::write(&path, trace.chrome_json("schedule_trace example"))?;
    println!("Chrome trace written to {}", path.display());

    // 2. Data-flow: a chain of CHAIN tasks that each update cell 0 (each depends on the one
    // before), beside CHAIN independent tasks on cells 1..=CHAIN, each about 2 ms of work.
    // Exact mode: no false dependences between neighbouring cells.
    // `install` runs the scope on the traced runtime (alone, it would use the global one).
    let mut cells = vec![0u64; CHAIN + 1];
    let config = Config::exact();
    rt.install(|| {
        dataflow::scope_with(config, |df| {
            let r = df.region(&mut cells);
            for _ in 0..CHAIN {
                df.spawn(r.part(0..1).inout(), |_, c| c[0] += work(2_000));
            }
            for i in 1..=CHAIN {
                df.spawn(r.part(i..i + 1).inout(), |_, c| c[0] += work(2_000));
            }
        })
    });
    assert_eq!(
        cells,
        [CHAIN as u64]
            .into_iter()
            .chain([1; CHAIN])
            .collect::<Vec<_>>()
    );
    let trace = rt
        .take_trace()?
        .expect("the runtime was built with a trace");
    trace.check()?;
    let graph = trace.task_graph();
    assert_eq!(graph.tasks.len(), 2 * CHAIN, "tasks in the graph");
    assert_eq!(
        graph.deps.len(),
        CHAIN - 1,
        "the chain's dependences, no others"
    );
    let (path, span_ns) = graph.critical_path()?;
    let chain_work: u64 = graph
        .deps
        .iter()
        .flat_map(|&(a, b)| [a, b])
        .collect::<std::collections::BTreeSet<_>>()
        .iter()
        .map(|id| graph.tasks[id].work_ns)
        .sum();
    // The span is the longest chain of work, so at least the chain's; the work is the sum.
    assert!(span_ns >= chain_work && span_ns <= graph.work_ns());
    println!(
        "data-flow: {} tasks, {} dependences; work {:.1} ms, critical path {:.1} ms through {} \
         tasks and scopes, parallelism {:.2} (a chain of {CHAIN} beside {CHAIN} independent \
         tasks: about 2)",
        graph.tasks.len(),
        graph.deps.len(),
        graph.work_ns() as f64 / 1e6,
        span_ns as f64 / 1e6,
        path.len(),
        graph.work_ns() as f64 / span_ns.max(1) as f64
    );
    Ok(())
}

/// The optional size argument, with a clear error for anything else.
fn size_arg() -> usize {
    let usage = "usage: schedule_trace [N]  (N: spawns to trace, 1 to 100000, default 10000)";
    let mut args = std::env::args().skip(1);
    let n = match args.next() {
        None => 10_000,
        Some(a) => match a.parse::<usize>() {
            Ok(n @ 1..=100_000) => n,
            _ => fail(&format!(
                "N must be a whole number from 1 to 100000 (the trace buffers hold 2^19 \
                 events per worker), got {a:?}\n{usage}"
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
