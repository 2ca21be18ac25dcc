//! What a schedule trace costs: the same fine-grained programs on two runtimes built alike
//! but one recording a trace, in one process, interleaved repetitions, medians. Reported per
//! job run from a queue and per recorded event.

use std::time::Instant;

use anyhow::Result;
use taskpools::Runtime;

/// One line of the report.
pub struct Row {
    pub program: &'static str,
    pub off_ms: f64,
    pub on_ms: f64,
    pub jobs: usize,
    pub events: usize,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn fib(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let (a, b) = taskpools::forkjoin::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

fn spawns(n: usize) -> u64 {
    let sum = std::sync::atomic::AtomicU64::new(0);
    taskpools::forkjoin::scope(|s| {
        for i in 0..n {
            let sum = &sum;
            s.spawn(move |_| {
                sum.fetch_add(i as u64, std::sync::atomic::Ordering::Relaxed);
            });
        }
    });
    sum.into_inner()
}

/// Synthetic A(20), f = 1, in a working phase of `private-public` on the calling worker's
/// runtime (2 workers): P(20) = 57 290 tiny tasks, each a span and its puts when traced.
fn phase() -> u64 {
    let b = taskpools::Builder::new()
        .threads(2)
        .pool(taskpools::PoolKind::PrivatePublic);
    taskpools::synthetic::run(&b, 20, 1)
        .expect("a working phase on the calling worker's runtime")
        .tasks_run()
}

/// Runs each program `reps` times on both runtimes (2 workers, pinned).
pub fn run(reps: usize, threads: usize) -> Result<Vec<Row>> {
    let off = Runtime::builder().threads(threads).pin(true).build()?;
    let on = Runtime::builder()
        .threads(threads)
        .pin(true)
        .trace(1 << 22)
        .build()?;
    type Program = (&'static str, fn() -> u64);
    let programs: [Program; 3] = [
        ("fib(27), join", || fib(27)),
        ("200,000 scope spawns", || spawns(200_000)),
        ("A(20) f=1, working phase", phase),
    ];
    let mut rows = Vec::new();
    for (name, f) in programs {
        let (mut t_off, mut t_on) = (Vec::new(), Vec::new());
        let (mut jobs, mut events) = (0, 0);
        for rep in 0..reps {
            for k in 0..2 {
                let rt = if (rep + k) % 2 == 0 { &off } else { &on };
                let _ = rt.take_trace()?;
                let t = Instant::now();
                std::hint::black_box(rt.install(f));
                let ms = t.elapsed().as_secs_f64() * 1e3;
                if std::ptr::eq(rt, &off) {
                    t_off.push(ms);
                } else {
                    t_on.push(ms);
                    let tr = rt.take_trace()?.expect("tracing");
                    jobs = tr.jobs();
                    events = tr.events.len();
                }
            }
        }
        rows.push(Row {
            program: name,
            off_ms: median(&mut t_off),
            on_ms: median(&mut t_on),
            jobs,
            events,
        });
    }
    Ok(rows)
}
