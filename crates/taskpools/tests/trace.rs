//! Schedule traces: well formed under stealing on every pool and with places, one start per
//! job run from a queue, bounded buffers, and off by default.

use std::sync::atomic::{AtomicU64, Ordering};

use taskpools::forkjoin::Pool;
use taskpools::places::{PlaceId, PlacePolicy, Places, Unhinted};
use taskpools::runtime::trace::{EventKind, Source};
use taskpools::Runtime;

fn spin(n: u64) -> u64 {
    (0..n).fold(0u64, |a, x| std::hint::black_box(a.wrapping_add(x)))
}

/// Spawns `n` jobs of uneven size in one scope; returns how many ran.
fn spawn_many(rt: &Runtime, n: usize) -> u64 {
    let ran = AtomicU64::new(0);
    rt.scope(|s| {
        for i in 0..n {
            let ran = &ran;
            s.spawn(move |_| {
                spin(200 + (i as u64 % 7) * 300);
                ran.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    ran.into_inner()
}

#[test]
fn traces_are_well_formed_and_count_every_queued_job() {
    let mut any_misses = 0;
    for pool in Pool::ALL {
        let rt = Runtime::builder()
            .threads(2)
            .pool(pool)
            .trace(1 << 20)
            .build()
            .unwrap();
        for round in 0..3 {
            assert_eq!(spawn_many(&rt, 2000), 2000);
            let t = rt.take_trace().unwrap().expect("tracing");
            t.check()
                .unwrap_or_else(|e| panic!("{pool} round {round}: {e}"));
            assert_eq!(t.dropped, 0);
            // The scope's body (installed from outside) and its 2000 spawns.
            assert_eq!(t.jobs(), 2001, "{pool} round {round}");
            let injected = t
                .events
                .iter()
                .filter(|e| e.kind == EventKind::Start(Source::Injected))
                .count();
            assert_eq!(injected, 1, "{pool}: the install");
            any_misses += misses(&t);
        }
    }
    // Every worker that went to sleep searched the other's deque in vain first.
    assert!(any_misses > 0);
}

/// Failed steal attempts recorded in `t`.
/// The starts of working-phase tasks (from the pool or stolen from it).
fn task_starts(t: &taskpools::runtime::trace::Trace) -> u64 {
    t.events
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::Start(Source::Pool | Source::PoolSteal { .. })
            )
        })
        .count() as u64
}

fn misses(t: &taskpools::runtime::trace::Trace) -> u64 {
    t.events
        .iter()
        .map(|e| match e.kind {
            EventKind::Misses { attempts } => u64::from(attempts),
            _ => 0,
        })
        .sum()
}

#[test]
fn place_traces_show_where_hinted_tasks_ran() {
    let rt = Runtime::builder()
        .places(Places::uniform(2, 1).unwrap())
        .place_policy(PlacePolicy {
            unhinted: Unhinted::RoundRobin,
            ..PlacePolicy::default()
        })
        .trace(1 << 20)
        .build()
        .unwrap();
    let _ = rt.take_trace();
    rt.scope(|s| {
        for i in 0..1000 {
            s.spawn_at(PlaceId(i % 2), |_| {
                spin(500);
            })
            .unwrap();
        }
    });
    let t = rt.take_trace().unwrap().unwrap();
    t.check().unwrap();
    assert_eq!(t.jobs(), 1001);
    let from_places = t
        .events
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::Start(Source::Place | Source::PlaceSteal { .. } | Source::Own)
            )
        })
        .count();
    assert_eq!(
        from_places, 1000,
        "every hinted task came from a place deque"
    );
    // The counters agree with the trace.
    let c = rt.worker_counters();
    let remote: u64 = c.iter().map(|c| c.place_remote).sum();
    let remote_in_trace = t
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Start(Source::PlaceSteal { .. })))
        .count() as u64;
    assert_eq!(remote, remote_in_trace);
}

/// A run with far more events than the buffers hold stops recording and says so, and the
/// trace stays well formed (every recorded start is closed).
#[test]
fn full_buffers_stop_recording_with_a_note() {
    let rt = Runtime::builder().threads(2).trace(1000).build().unwrap();
    assert_eq!(spawn_many(&rt, 50_000), 50_000);
    let t = rt.take_trace().unwrap().unwrap();
    t.check().unwrap();
    for w in 0..2u32 {
        let n = t.events.iter().filter(|e| e.worker == w).count();
        assert!(n <= 1000, "worker {w} kept {n} events");
    }
    assert!(t.dropped > 0);
    assert!(t.chrome_json("full").contains("trace incomplete"));
    // The next trace starts afresh.
    assert_eq!(spawn_many(&rt, 100), 100);
    let t = rt.take_trace().unwrap().unwrap();
    t.check().unwrap();
    assert_eq!((t.jobs(), t.dropped), (101, 0));
}

#[test]
fn tracing_is_off_by_default_and_bad_sizes_are_refused() {
    let rt = Runtime::new(2).unwrap();
    assert!(rt.take_trace().unwrap().is_none());
    let e = Runtime::builder().threads(2).trace(0).build().unwrap_err();
    assert!(e.to_string().contains("trace buffer of 0 events"), "{e}");
}

/// Data-flow tasks and a working phase's shares show up as jobs; sleeps are bracketed.
#[test]
fn dataflow_tasks_and_sleeps_are_traced() {
    let rt = Runtime::builder()
        .threads(2)
        .trace(1 << 16)
        .build()
        .unwrap();
    let mut v = vec![0u64; 64];
    rt.install(|| {
        taskpools::dataflow::scope(|df| {
            let r = df.region(&mut v[..]);
            for k in 0..64 {
                df.spawn(r.part(k..k + 1).inout(), move |_, x| x[0] = k as u64);
            }
        })
    });
    let t = rt.take_trace().unwrap().unwrap();
    t.check().unwrap();
    assert!(t.jobs() >= 64, "{}", t.jobs());
    assert_eq!(v.iter().sum::<u64>(), 63 * 64 / 2);
    // Idle workers go to sleep after a while (how long depends on the machine's load):
    // look until a trace holds a sleep, with a bound.
    let mut slept = false;
    for _ in 0..50 {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let t = rt.take_trace().unwrap().unwrap();
        t.check().unwrap();
        if t.events.iter().any(|e| e.kind == EventKind::Sleep) {
            slept = true;
            break;
        }
    }
    assert!(slept, "no worker slept within 10 s of idling");
}

/// A trace taken while a worker is inside a job (waiting in a scope, so it takes the
/// collecting share there) hands over that job as closed at the take, and the next trace
/// brackets that worker's later jobs correctly: none of them lasts until the outer job ends.
///
/// The first scope has one spawn, so that one worker is free while it sleeps: a take from a
/// thread outside the runtime is an injected job, which a worker takes only when it has
/// nothing of its own or to steal. (With both workers asleep in spawns, the take could wait
/// until the second scope's spawns had all run, and they would land in the first trace.)
#[test]
fn a_take_inside_a_running_job_keeps_the_next_trace_exact() {
    let rt = Runtime::builder()
        .threads(2)
        .trace(1 << 16)
        .build()
        .unwrap();
    let _ = rt.take_trace().unwrap();
    let started = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|ts| {
        ts.spawn(|| {
            rt.install(|| {
                taskpools::forkjoin::scope(|s| {
                    s.spawn(|_| {
                        started.store(true, Ordering::Release);
                        std::thread::sleep(std::time::Duration::from_millis(300));
                    });
                });
                // Later jobs of the same outer job, then a long tail.
                taskpools::forkjoin::scope(|s| {
                    for _ in 0..100 {
                        s.spawn(|_| {
                            spin(100);
                        });
                    }
                });
                std::thread::sleep(std::time::Duration::from_millis(300));
            });
        });
        while !started.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
        let first = rt.take_trace().unwrap().unwrap();
        first.check().unwrap();
    });
    let t = rt.take_trace().unwrap().unwrap();
    t.check().unwrap();
    assert!(t.jobs() >= 100, "{}", t.jobs());
    // Pair starts and ends per worker; every job of the second scope is short.
    for w in 0..2u32 {
        let mut stack = Vec::new();
        for e in t.events.iter().filter(|e| e.worker == w) {
            match e.kind {
                EventKind::Start(_) => stack.push(e.t_ns),
                EventKind::End => {
                    let st = stack.pop().expect("balanced");
                    let ms = (e.t_ns - st) as f64 / 1e6;
                    assert!(ms < 250.0, "worker {w}: a job lasted {ms} ms");
                }
                _ => {}
            }
        }
    }
}

/// A trace collected from inside a job on a worker (a broadcast from within `install`).
#[test]
fn a_take_from_inside_install_is_well_formed() {
    let rt = Runtime::builder()
        .threads(2)
        .trace(1 << 16)
        .build()
        .unwrap();
    let inner = rt.install(|| {
        assert_eq!(spawn_many_here(50), 50);
        let inner = rt.take_trace().unwrap().unwrap();
        assert_eq!(spawn_many_here(50), 50);
        inner
    });
    inner.check().unwrap();
    let t = rt.take_trace().unwrap().unwrap();
    t.check().unwrap();
    assert_eq!(t.jobs(), 50, "the second scope's spawns, nothing else");
}

fn spawn_many_here(n: usize) -> u64 {
    let ran = AtomicU64::new(0);
    taskpools::forkjoin::scope(|s| {
        for _ in 0..n {
            let ran = &ran;
            s.spawn(move |_| {
                ran.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    ran.into_inner()
}

/// Nested data-flow tasks: a parent works 2 ms, spawns four children of 20 ms, `sync`s and
/// works 3 ms more. The critical path goes from the parent's first part into a child and
/// back into the parent after the sync; the parent's own work leaves its wait out. With two
/// workers the run itself takes at least 2 + 40 + 3 ms, the ideal schedule 2 + 20 + 3.
#[test]
fn nested_dataflow_critical_path_follows_spawns_and_syncs() {
    use std::time::Duration;
    let ms = |n: u64| std::thread::sleep(Duration::from_millis(n));
    let rt = Runtime::builder()
        .threads(2)
        .trace(1 << 16)
        .build()
        .unwrap();
    let mut v = [0u8; 4];
    // Exact look-up tables: with 2 KiB blocks the four one-byte parts would be chained.
    let exact = taskpools::dataflow::Config::exact();
    rt.install(|| {
        taskpools::dataflow::scope_with(exact, |df| {
            let r = df.region(&mut v[..]);
            df.spawn(r.out(), move |df, h| {
                ms(2);
                let r = df.region(h);
                for part in r.chunks(1) {
                    df.spawn(part.out(), move |_, p| {
                        ms(20);
                        p[0] = 1;
                    });
                }
                df.sync();
                ms(3);
            });
        })
    });
    assert_eq!(v, [1; 4]);
    let t = rt.take_trace().unwrap().unwrap();
    t.check().unwrap();
    let g = t.task_graph();
    assert_eq!(g.tasks.len(), 5, "{:?}", g.tasks);
    assert_eq!(g.roots.len(), 1);
    let (&parent, pn) = g
        .tasks
        .iter()
        .find(|(_, n)| n.parent == g.roots[0])
        .expect("the parent hangs off the root scope");
    let kids: Vec<u64> = g
        .tasks
        .iter()
        .filter(|(_, n)| n.parent == parent)
        .map(|(&id, _)| id)
        .collect();
    assert_eq!(kids.len(), 4);
    assert_eq!(g.syncs[&parent].len(), 1, "{:?}", g.syncs);
    assert_eq!(g.syncs[&parent][0].1, 4, "the sync came after 4 spawns");
    for k in &kids {
        assert!(g.tasks[k].spawned_after_ns >= 2_000_000, "{:?}", g.tasks[k]);
    }
    // Own work: 5 ms of sleeping, not the ≥ 40 ms the parent spent waiting.
    let wall = pn.end_ns - pn.start_ns;
    assert!(wall >= 45_000_000, "{pn:?}");
    assert!(
        pn.work_ns >= 5_000_000 && pn.work_ns < wall - 20_000_000,
        "{pn:?}"
    );
    let (path, len) = g.critical_path().unwrap();
    // The root scope's spawning of the parent comes first when it took measurable time.
    let path: Vec<u64> = path.into_iter().filter(|&id| id != g.roots[0]).collect();
    assert_eq!(path.len(), 3, "{path:?}");
    assert_eq!((path[0], path[2]), (parent, parent));
    assert!(kids.contains(&path[1]));
    assert!(
        len >= 25_000_000 && len < wall,
        "{len} against the run's {wall}"
    );
    assert!(g.work_ns() >= 85_000_000);
    let dot = g.dot("nested").unwrap();
    assert_eq!(
        dot.matches("style=dashed").count(),
        5,
        "root to parent, parent to 4 children"
    );
    assert!(dot.contains("label=\"waited\""), "{dot}");
}

/// The data-flow task graph of a trace: a chain of `inout` tasks on one cell beside
/// independent tasks. Every task is a node, the chain's dependences are its edges, and the
/// critical path is the chain, in order; the DOT export marks it.
#[test]
fn dataflow_task_graph_and_critical_path() {
    let rt = Runtime::builder()
        .threads(2)
        .trace(1 << 16)
        .build()
        .unwrap();
    let mut chain = [0u64; 1];
    let mut free = [0u64; 10];
    // Exact look-up tables: with 2 KiB blocks the ten small writes would be chained too.
    let exact = taskpools::dataflow::Config::exact();
    rt.install(|| {
        taskpools::dataflow::scope_with(exact, |df| {
            let c = df.region(&mut chain[..]);
            let f = df.region(&mut free[..]);
            for i in 0..10 {
                df.spawn(c.inout(), |_, x| {
                    x[0] += spin(200_000) & 1;
                });
                df.spawn(f.part(i..i + 1).out(), |_, x| x[0] = spin(1000));
            }
        })
    });
    let t = rt.take_trace().unwrap().unwrap();
    t.check().unwrap();
    let g = t.task_graph();
    assert_eq!(g.tasks.len(), 20, "{:?}", g.tasks.keys());
    let chain_edges: Vec<_> = g.deps.clone();
    assert_eq!(chain_edges.len(), 9, "{chain_edges:?}");
    let (path, len) = g.critical_path().unwrap();
    // The root scope's spawning up to a chain task, then the rest of the chain. (The chain
    // tasks take far longer than a spawn, so the path enters the chain at its first task;
    // where the root's thread loses its CPU between two spawns, as under valgrind, which
    // runs one thread at a time, that time counts as the root's own work and the path may
    // enter later.)
    assert!(
        !g.tasks.contains_key(&path[0]),
        "{path:?} starts in the root"
    );
    let tasks: Vec<u64> = path[1..].to_vec();
    assert!(tasks.iter().all(|id| g.tasks.contains_key(id)), "{path:?}");
    let last_chain_task = g.deps.iter().map(|d| d.1).max().unwrap();
    assert_eq!(tasks.last(), Some(&last_chain_task), "{path:?}");
    for w in tasks.windows(2) {
        assert!(g.deps.contains(&(w[0], w[1])), "{w:?} is not an edge");
    }
    let chain_work: u64 = tasks.iter().map(|id| g.tasks[id].work_ns).sum();
    assert!(len > chain_work && len <= g.work_ns(), "{len} {chain_work}");
    // Entering at chain task k means the root spawned it no earlier than the k - 1 before
    // it could have finished.
    let chain: Vec<u64> = {
        let mut c: Vec<u64> = g.deps.iter().flat_map(|d| [d.0, d.1]).collect();
        c.sort_unstable();
        c.dedup();
        c
    };
    assert_eq!(chain.len(), 10);
    let k = chain.iter().position(|&id| id == tasks[0]).unwrap();
    assert_eq!(&chain[k..], &tasks[..], "{path:?}");
    let before: u64 = chain[..k].iter().map(|id| g.tasks[id].work_ns).sum();
    assert!(
        g.tasks[&tasks[0]].spawned_after_ns >= before,
        "the path skips {k} chain tasks that the root's spawning outlasted"
    );
    let dot = g.dot("chain").unwrap();
    let arrows =
        |f: &dyn Fn(&str) -> bool| dot.lines().filter(|l| l.contains("->") && f(l)).count();
    assert!(dot.starts_with("digraph"));
    assert_eq!(arrows(&|l| !l.contains("dashed")), 9, "{dot}");
    assert_eq!(
        arrows(&|l| l.contains("dashed")),
        20,
        "a spawn edge from the root to each task"
    );
    // The path's chain tasks and the dependences between them in red, and the root and its
    // spawn of the first of them (the path enters the chain later where the root's spawning
    // outlasted its first tasks, as under valgrind).
    let red = dot.matches("color=red, penwidth=2").count();
    let on_path = tasks.len();
    assert!(
        (2 * on_path - 1..=2 * on_path + 1).contains(&red),
        "{red} red marks for {on_path} chain tasks on the path: {dot}"
    );
    // Releases: each chain task but the first was made ready by its predecessor's
    // completion (or found it complete at its spawn).
    let ready = t
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Ready { .. }))
        .count();
    assert!(ready <= 9);
    // The Chrome export draws each release as an arrow to the released task's start: every
    // arrow that starts also ends, after it starts, on the task's own track.
    let json = t.chrome_json("chain");
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let mut starts = std::collections::HashMap::new();
    let mut ends = 0;
    for e in doc["traceEvents"].as_array().unwrap() {
        if e["cat"] != "dependence" {
            continue;
        }
        let id = e["id"].as_str().unwrap().to_string();
        match e["ph"].as_str().unwrap() {
            "s" => {
                starts.insert(id, e["ts"].as_f64().unwrap());
            }
            "f" => {
                let s = starts.get(&id).expect("an arrow ends after it starts");
                assert!(e["ts"].as_f64().unwrap() >= *s);
                ends += 1;
            }
            other => panic!("phase {other}"),
        }
    }
    assert_eq!(starts.len(), ends, "every release arrow ends");
    assert_eq!(ends, ready, "one arrow per release of a task that ran");
}

/// A working phase's tasks, puts, steals and idle time, on every pool of the family.
#[test]
fn working_phase_tasks_puts_and_steals_are_traced_on_every_pool() {
    use taskpools::{Builder, PoolKind};
    let rt = Runtime::builder()
        .threads(2)
        .trace(1 << 20)
        .build()
        .unwrap();
    let mut any_steal = 0;
    for pool in PoolKind::ALL {
        let _ = rt.take_trace().unwrap();
        let b = Builder::new().runtime(&rt).threads(2).pool(pool);
        let report = taskpools::synthetic::run(&b, 14, 20).unwrap();
        let t = rt.take_trace().unwrap().expect("traced");
        t.check().unwrap_or_else(|e| panic!("{pool:?}: {e}"));
        assert_eq!(t.dropped, 0);
        let starts = |f: fn(&Source) -> bool| {
            t.events
                .iter()
                .filter(|e| matches!(&e.kind, EventKind::Start(s) if f(s)))
                .count() as u64
        };
        let tasks = starts(|s| matches!(s, Source::Pool | Source::PoolSteal { .. }));
        assert_eq!(tasks, report.tasks_run(), "{pool:?}: one start per task");
        let puts = t.events.iter().filter(|e| e.kind == EventKind::Put).count() as u64;
        assert_eq!(puts, report.total().puts, "{pool:?}: one event per put");
        let stolen = starts(|s| matches!(s, Source::PoolSteal { .. }));
        any_steal += stolen;
        assert!(
            stolen <= report.total().steals,
            "{pool:?}: {stolen} tasks after steals, {} steals counted",
            report.total().steals
        );
        for e in &t.events {
            if let EventKind::Start(Source::PoolSteal { victim, tasks }) = e.kind {
                assert!(
                    victim < 2 && victim != e.worker && tasks >= 1,
                    "{pool:?}: {e:?}"
                );
            }
        }
        // Every worker's idle time is bracketed inside its share.
        let idles = t
            .events
            .iter()
            .filter(|e| e.kind == EventKind::Idle)
            .count();
        let resumes = t
            .events
            .iter()
            .filter(|e| e.kind == EventKind::Resume)
            .count();
        assert_eq!(idles, resumes, "{pool:?}");
        assert!(idles >= 2, "{pool:?}: each worker ends the phase idle");
        // Failed steal attempts: the phase's all recorded (as coalesced events), plus the
        // runtime's own searches around the phase.
        let misses = misses(&t);
        let phase_misses = report.total().steal_attempts - report.total().steals;
        assert!(
            misses >= phase_misses,
            "{pool:?}: {misses} misses recorded, {phase_misses} counted in the phase"
        );
    }
    assert!(any_steal > 0, "some pool's steals appear in its trace");
}

/// A task that reads `queued()` between its puts (answering thieves there, on
/// `private-deque`, whose puts are recorded at the task's end or at `queued`): still one `Put`
/// event per put and one start per task, on every pool with a queue per worker.
#[test]
fn puts_between_queued_calls_are_each_traced_once() {
    use taskpools::{Builder, Ctx, PoolKind, Task};
    struct Tree(u32);
    impl Task<u64> for Tree {
        fn run(self, ctx: &mut Ctx<'_, Self, u64>) {
            *ctx.local() += 1;
            if self.0 == 0 {
                return;
            }
            for _ in 0..3 {
                // Read between the puts (on `private-deque`: a flush of the puts so far, and
                // a thief answered from the worker's stack).
                let _ = ctx.queued();
                ctx.put(Tree(self.0 - 1));
                std::hint::black_box(spin(200));
            }
        }
    }
    let rt = Runtime::builder()
        .threads(2)
        .trace(1 << 21)
        .build()
        .unwrap();
    for pool in [
        PoolKind::PrivateDeque,
        PoolKind::ChaseLev,
        PoolKind::PrivatePublic,
    ] {
        for _ in 0..3 {
            let _ = rt.take_trace().unwrap();
            let b = Builder::new().runtime(&rt).threads(2).pool(pool);
            let (report, nodes) = b.run_reduce(|_| 0u64, [Tree(8)], |a, b| a + b).unwrap();
            assert_eq!(nodes, (3u64.pow(9) - 1) / 2, "{pool:?}");
            let t = rt.take_trace().unwrap().expect("traced");
            t.check().unwrap_or_else(|e| panic!("{pool:?}: {e}"));
            assert_eq!(t.dropped, 0);
            let puts = t.events.iter().filter(|e| e.kind == EventKind::Put).count() as u64;
            assert_eq!(report.total().puts, nodes - 1, "{pool:?}: puts counted");
            assert_eq!(puts, nodes - 1, "{pool:?}: one event per put");
            assert_eq!(task_starts(&t), nodes, "{pool:?}: one start per task");
        }
    }
}

/// A panicking task still closes its span: the trace stays well formed.
#[test]
fn a_panicking_phase_task_leaves_a_well_formed_trace() {
    use taskpools::{BoxedTask, Builder};
    let rt = Runtime::builder()
        .threads(2)
        .trace(1 << 16)
        .build()
        .unwrap();
    let root = BoxedTask::new(|ctx| {
        for i in 0..100 {
            ctx.put(BoxedTask::new(move |_| {
                if i == 57 {
                    panic!("task 57");
                }
                spin(1000);
            }));
        }
    });
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Builder::new().runtime(&rt).threads(2).run(vec![root])
    }));
    assert!(r.is_err(), "the panic reaches the caller");
    let t = rt.take_trace().unwrap().expect("traced");
    t.check().unwrap();
}

/// A working phase that runs inside a job whose start went to an earlier take (the calling
/// worker's own share runs inline, without a start of its own): the trace is still well
/// formed, and the phase's tasks are all there.
#[test]
fn a_phase_after_a_take_inside_the_same_job_is_well_formed() {
    use taskpools::Builder;
    let rt = Runtime::builder()
        .threads(2)
        .trace(1 << 18)
        .build()
        .unwrap();
    let (t, tasks) = rt.install(|| {
        let _ = rt.take_trace().unwrap();
        let b = Builder::new().runtime(&rt).threads(2);
        let r1 = taskpools::synthetic::run(&b, 12, 5).unwrap();
        let r2 = taskpools::synthetic::run(&b, 12, 5).unwrap();
        (
            rt.take_trace().unwrap().expect("traced"),
            r1.tasks_run() + r2.tasks_run(),
        )
    });
    t.check().unwrap();
    assert_eq!(task_starts(&t), tasks);
}
