//! Places (LASSI): topology parsing against sysfs trees of several machines, place
//! descriptions good and bad, hints, and that every hinted task runs exactly once while
//! places steal from each other, under every policy.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};

use taskpools::places::{Level, PlaceId, PlacePolicy, Places, Topology, Unhinted};
use taskpools::{Error, Runtime};

fn fixture(name: &str) -> Topology {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sysfs")
        .join(name);
    Topology::from_sysfs(&root).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn groups(t: &Topology, l: Level) -> Vec<String> {
    t.groups(l)
        .iter()
        .map(|g| {
            g.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

/// Two sockets of 8 cores with 2 hardware threads each, Linux numbering (siblings 16 apart),
/// one L3 and one NUMA node per socket.
#[test]
fn two_socket_numa_machine() {
    let t = fixture("xeon-2s-numa");
    assert_eq!(t.cpus().len(), 32);
    let sockets = groups(&t, Level::Packages);
    assert_eq!(
        sockets,
        [
            "0,1,2,3,4,5,6,7,16,17,18,19,20,21,22,23",
            "8,9,10,11,12,13,14,15,24,25,26,27,28,29,30,31"
        ]
    );
    assert_eq!(groups(&t, Level::NumaDomains), sockets);
    assert_eq!(groups(&t, Level::LlCaches), sockets);
    let cores = groups(&t, Level::Cores);
    assert_eq!(cores.len(), 16);
    assert_eq!(cores[0], "0,16");
    assert_eq!(cores[15], "15,31");
    assert_eq!(t.groups(Level::Threads).len(), 32);
    let p = Places::parse_on("numa_domains", &t).unwrap();
    assert_eq!((p.len(), p.workers()), (2, 32));
    assert_eq!(p.cores(1)[0], Some(8));
}

/// A laptop: one package of 4 cores with 2 threads each (siblings 4 apart), one L3, one node.
#[test]
fn single_socket_laptop() {
    let t = fixture("laptop-4c8t");
    assert_eq!(groups(&t, Level::Packages), ["0,1,2,3,4,5,6,7"]);
    assert_eq!(groups(&t, Level::LlCaches), ["0,1,2,3,4,5,6,7"]);
    assert_eq!(groups(&t, Level::Cores), ["0,4", "1,5", "2,6", "3,7"]);
    let p = Places::parse_on("cores", &t).unwrap();
    assert_eq!((p.len(), p.workers()), (4, 8));
    assert_eq!(p.layout(), "{0,4},{1,5},{2,6},{3,7}");
}

/// An SMT desktop whose last-level cache is shared by 4 of its 8 cores (two core complexes
/// in one package): `ll_caches` differs from `sockets` there.
#[test]
fn smt_machine_with_two_last_level_caches_per_package() {
    let t = fixture("ryzen-2ccx-smt");
    assert_eq!(groups(&t, Level::Packages).len(), 1);
    assert_eq!(
        groups(&t, Level::LlCaches),
        ["0,1,2,3,8,9,10,11", "4,5,6,7,12,13,14,15"]
    );
    assert_eq!(groups(&t, Level::Cores)[1], "1,9");
    assert_eq!(Places::parse_on("ll_caches", &t).unwrap().len(), 2);
    assert_eq!(Places::parse_on("sockets", &t).unwrap().len(), 1);
    assert_eq!(Places::parse_on("packages", &t).unwrap().len(), 1);
}

/// The machine these tests were first run on, recorded from its /sys: a 2-core VM.
#[test]
fn recorded_two_core_vm() {
    let t = fixture("this-vm-2c");
    assert_eq!(groups(&t, Level::Cores), ["0", "1"]);
    assert_eq!(groups(&t, Level::LlCaches), ["0,1"]);
    assert_eq!(Places::parse_on("threads", &t).unwrap().layout(), "{0},{1}");
}

#[test]
fn a_missing_topology_file_is_an_error_naming_it() {
    let e = Topology::from_sysfs("/nonexistent/sys").unwrap_err();
    assert!(matches!(e, Error::Topology { .. }));
    assert!(
        e.to_string()
            .contains("/nonexistent/sys/devices/system/cpu/online"),
        "{e}"
    );
}

#[test]
fn explicit_descriptions() {
    let t = fixture("laptop-4c8t");
    let p = Places::parse_on("{0,1},{2-3},{4:2}", &t).unwrap();
    assert_eq!(p.layout(), "{0,1},{2,3},{4,5}");
    assert_eq!(p.place_of_workers(), [0, 0, 1, 1, 2, 2]);
    let p = Places::parse_on(" 3x2 ", &t).unwrap();
    assert_eq!(
        (p.len(), p.workers(), p.layout().as_str()),
        (3, 6, "{*,*},{*,*},{*,*}")
    );
    assert_eq!("2x1".parse::<Places>().unwrap().workers(), 2);
}

#[test]
fn bad_descriptions_say_what_is_wrong() {
    let t = fixture("laptop-4c8t");
    for (spec, says) in [
        ("", "empty"),
        ("{0,1},{}", "place 1 is empty"),
        ("{0,1},{1,2}", "core 1 is in two places (0 and 1)"),
        ("{0,0}", "core 0 is listed twice"),
        ("{0},{9}", "core 9 does not exist"),
        ("0x2", "at least one place"),
        ("2x0", "at least one place"),
        ("axb", "not a number of places"),
        ("numa", "not a shape"),
        ("{0,1", "not closed"),
        ("{0},", "trailing comma"),
        ("{3-1}", "backwards"),
        ("100x100", "more than the limit"),
        ("{0:100000000000}", "more than"),
        ("{18446744073709551615:2}", "more than"),
        ("{0-100000000000}", "more than 65536 CPUs"),
    ] {
        let e = Places::parse_on(spec, &t).unwrap_err();
        assert!(matches!(e, Error::BadPlaces { .. }), "{spec}: {e:?}");
        assert!(
            e.to_string().contains(says),
            "{spec}: `{e}` should say `{says}`"
        );
    }
}

#[test]
fn threads_that_disagree_with_the_places_are_refused() {
    let e = Runtime::builder()
        .threads(3)
        .places(Places::uniform(2, 1).unwrap())
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("2 workers but threads(3)"), "{e}");
    let rt = Runtime::builder()
        .threads(2)
        .places(Places::uniform(2, 1).unwrap())
        .build()
        .unwrap();
    assert_eq!(rt.place_count(), 2);
    assert_eq!(rt.worker_places(), [PlaceId(0), PlaceId(1)]);
}

#[test]
fn a_hint_to_a_place_that_does_not_exist_is_an_error_value() {
    let rt = Runtime::builder()
        .places(Places::uniform(2, 1).unwrap())
        .build()
        .unwrap();
    let ran = AtomicU32::new(0);
    let r = rt.scope(|s| {
        s.spawn_at(PlaceId(2), |_| {
            ran.fetch_add(1, Ordering::Relaxed);
        })
    });
    let e = r.unwrap_err();
    assert!(
        matches!(
            e,
            Error::NoSuchPlace {
                place: 2,
                places: 2
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("this runtime has 2 places"), "{e}");
    assert_eq!(ran.load(Ordering::Relaxed), 0, "nothing was spawned");
    // Without places at all.
    let plain = Runtime::new(2).unwrap();
    let e = plain.scope(|s| s.spawn_at(PlaceId(0), |_| ())).unwrap_err();
    assert!(e.to_string().contains("built without places"), "{e}");
    // And in a data-flow scope.
    let mut x = [0u8; 4];
    let e = rt
        .install(|| {
            taskpools::dataflow::scope(|df| {
                let r = df.region(&mut x[..]);
                df.spawn_at(PlaceId(5), r.inout(), |_, _| ())
            })
        })
        .unwrap_err();
    assert!(matches!(e, Error::NoSuchPlace { place: 5, .. }), "{e:?}");
}

/// The children of node `lo..hi` of the hinted test trees (a node per index): their ranges
/// and hints, `None` for none. A third of the nodes hint everything at place 0 (so the other
/// places must steal); about one child in seven is unhinted; the rest hint pseudo-random places.
fn tree_children(lo: usize, hi: usize, np: usize) -> Vec<(usize, usize, Option<usize>)> {
    let mut out = Vec::new();
    if hi - lo == 1 {
        return out;
    }
    let mid = (lo + hi) / 2;
    let mut seed = (lo as u64 ^ 0x9e37_79b9).wrapping_mul(0x2545_f491_4f6c_dd1d);
    for (a, b) in [(lo + 1, mid.max(lo + 1)), (mid.max(lo + 1), hi)] {
        if a >= b {
            continue;
        }
        seed ^= seed >> 29;
        let p = if lo % 3 == 0 { 0 } else { seed as usize % np };
        out.push((a, b, (seed % 7 != 0).then_some(p)));
    }
    out
}

/// The policies worth running every check under: the talk's design, and each of the future
/// work's changes.
fn policies() -> Vec<(&'static str, PlacePolicy)> {
    let base = PlacePolicy::default();
    vec![
        ("round-robin", base.clone()),
        (
            "local",
            PlacePolicy {
                unhinted: Unhinted::Local,
                ..base.clone()
            },
        ),
        (
            "guarded",
            PlacePolicy {
                remote_delay: std::time::Duration::from_micros(200),
                remote_backlog: 16,
                ..base.clone()
            },
        ),
        (
            "steal-half",
            PlacePolicy {
                steal_half: true,
                ..base.clone()
            },
        ),
        (
            "adaptive",
            PlacePolicy {
                adaptive: true,
                ..base
            },
        ),
    ]
}

/// Every task spawned with a hint (and without) runs exactly once, whatever the places'
/// shape and policy, while places steal from each other: a tree of spawns, each node hinting
/// its children at pseudo-random places (some all at place 0, so the others must steal).
/// The counters add up: each task taken from a place deque counts once, locally or remotely.
#[test]
fn every_hinted_task_runs_exactly_once() {
    // TASKPOOLS_STRESS=small (valgrind) shrinks the tree, not what is checked.
    let n_tasks: usize = if std::env::var("TASKPOOLS_STRESS").as_deref() == Ok("small") {
        1 << 10
    } else {
        1 << 14
    };
    for shape in ["2x1", "1x2", "3x1", "2x2"] {
        for (name, policy) in policies() {
            let places = Places::parse(shape).unwrap();
            let np = places.len();
            let rt = Runtime::builder()
                .places(places)
                .place_policy(policy)
                .build()
                .unwrap();
            let runs: Vec<AtomicU8> = (0..n_tasks).map(|_| AtomicU8::new(0)).collect();
            let unhinted = AtomicU64::new(0);
            fn node<'s>(
                s: &taskpools::forkjoin::Scope<'s>,
                lo: usize,
                hi: usize,
                np: usize,
                runs: &'s [AtomicU8],
                unhinted: &'s AtomicU64,
            ) {
                runs[lo].fetch_add(1, Ordering::Relaxed);
                for (a, b, hint) in tree_children(lo, hi, np) {
                    match hint {
                        None => {
                            unhinted.fetch_add(1, Ordering::Relaxed);
                            s.spawn(move |s| node(s, a, b, np, runs, unhinted));
                        }
                        Some(p) => s
                            .spawn_at(PlaceId(p), move |s| node(s, a, b, np, runs, unhinted))
                            .unwrap(),
                    }
                }
            }
            let before: u64 = rt
                .worker_counters()
                .iter()
                .map(|c| c.place_local + c.place_remote)
                .sum();
            rt.scope(|s| node(s, 0, n_tasks, np, &runs, &unhinted));
            for (i, r) in runs.iter().enumerate() {
                assert_eq!(r.load(Ordering::Relaxed), 1, "{shape} {name}: task {i}");
            }
            let c = rt.worker_counters();
            let from_places: u64 = c
                .iter()
                .map(|c| c.place_local + c.place_remote)
                .sum::<u64>()
                - before;
            let hinted = (n_tasks - 1) as u64 - unhinted.load(Ordering::Relaxed);
            // Hinted tasks always go through a place deque; unhinted ones stay on the
            // spawner's deque under `Local`, and go to the places under round-robin unless
            // spawned from a deep wait (which keeps its own spawns local).
            if name == "local" || name == "guarded" {
                assert_eq!(from_places, hinted, "{shape} {name}: {c:?}");
            } else {
                assert!(
                    (hinted..=(n_tasks - 1) as u64).contains(&from_places),
                    "{shape} {name}: {from_places} not in {hinted}..={}: {c:?}",
                    n_tasks - 1
                );
            }
            if np == 1 {
                assert!(
                    c.iter().all(|c| c.place_remote == 0),
                    "one place: no remote task"
                );
            }
        }
    }
}

/// Tasks hinted at one place of a two-place runtime are all run, and the other place's
/// worker takes some of them once the guarded policy's backlog threshold is passed: the
/// counters show the steals between places and the declined ones.
#[test]
fn guarded_steals_leave_hinted_work_alone_until_the_backlog_grows() {
    let rt = Runtime::builder()
        .places(Places::uniform(2, 1).unwrap())
        .place_policy(PlacePolicy {
            remote_delay: std::time::Duration::from_secs(3600),
            remote_backlog: 64,
            ..PlacePolicy::default()
        })
        .build()
        .unwrap();
    let done = AtomicU64::new(0);
    // Fewer tasks than the backlog threshold: the other place never takes any (its worker's
    // idle time never reaches an hour), yet all of them run, at place 0.
    rt.scope(|s| {
        for _ in 0..32 {
            s.spawn_at(PlaceId(0), |_| {
                std::thread::sleep(std::time::Duration::from_micros(200));
                done.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
        }
    });
    assert_eq!(done.load(Ordering::Relaxed), 32);
    let c = rt.worker_counters();
    assert_eq!(c[1].place_remote, 0, "{c:?}");
}

/// The data-flow front end's hints: a chain of `inout` tasks that alternate between places
/// still runs in order (the dependence holds across places), each task once.
#[test]
fn dataflow_tasks_with_hints_keep_their_dependences() {
    let rt = Runtime::builder()
        .places(Places::uniform(2, 1).unwrap())
        .build()
        .unwrap();
    let mut log = [0u32; 1];
    let mut cells = vec![0u64; 64];
    rt.install(|| {
        taskpools::dataflow::scope(|df| {
            let l = df.region(&mut log[..]);
            let c = df.region(&mut cells[..]);
            for i in 0..200u32 {
                df.spawn_at(PlaceId((i % 2) as usize), l.inout(), move |_, log| {
                    assert_eq!(log[0], i, "task {i} ran out of order");
                    log[0] += 1;
                })
                .unwrap();
                let k = (i as usize) % 64;
                df.spawn_at(
                    PlaceId(((i + 1) % 2) as usize),
                    c.part(k..k + 1).inout(),
                    |_, x| x[0] += 1,
                )
                .unwrap();
            }
        })
    });
    assert_eq!(log[0], 200);
    assert!(cells.iter().all(|&x| x == 3 || x == 4));
    assert_eq!(cells.iter().sum::<u64>(), 200);
}

/// Listed cores pin the place's workers to them.
#[test]
fn places_with_listed_cores_pin_their_workers() {
    let Some(cores) = core_affinity::get_core_ids().filter(|c| c.len() >= 2) else {
        return;
    };
    let spec = format!("{{{}}},{{{}}}", cores[1].id, cores[0].id);
    let rt = Runtime::builder()
        .places(Places::parse(&spec).unwrap())
        .build()
        .unwrap();
    assert!(rt.pinned());
    let seen = rt
        .broadcast(|_| core_affinity::get_core_ids().unwrap_or_default())
        .unwrap();
    assert_eq!(seen[0], [cores[1]]);
    assert_eq!(seen[1], [cores[0]]);
    let places = rt
        .broadcast(|_| taskpools::places::current_place())
        .unwrap();
    assert_eq!(places, [Some(PlaceId(0)), Some(PlaceId(1))]);
}

/// A deep tree of nested scopes whose spawns all go through place deques (round-robin and
/// hints that send each child to the other place): waits take other workers' place tasks
/// only while shallow, so the stack stays bounded. (When any wait took any place task, this
/// shape overflowed a worker's 2 MiB stack.)
#[test]
fn deep_trees_of_place_spawns_do_not_overflow_the_stack() {
    fn tree(depth: u32, here: usize, count: &AtomicU64) {
        count.fetch_add(1, Ordering::Relaxed);
        if depth == 0 {
            return;
        }
        taskpools::forkjoin::scope(|s| {
            s.spawn(|_| tree(depth - 1, here, count));
            s.spawn_at(PlaceId(1 - here), |_| tree(depth - 1, 1 - here, count))
                .unwrap();
        });
    }
    let rt = Runtime::builder()
        .places(Places::uniform(2, 1).unwrap())
        .place_policy(PlacePolicy {
            unhinted: Unhinted::RoundRobin,
            ..PlacePolicy::default()
        })
        .build()
        .unwrap();
    for _ in 0..3 {
        let count = AtomicU64::new(0);
        rt.install(|| tree(15, 0, &count));
        assert_eq!(count.load(Ordering::Relaxed), (1 << 16) - 1);
    }
}

// ------------------------------------------------------------------ working-phase hints

/// A task of a working phase that puts its children with hints: a tree over `lo..hi`, each
/// node hinting its children at pseudo-random places (a third of the nodes hint everything at
/// place 0, some children are plain puts). Each node records its index in the worker's state.
struct HintNode {
    lo: u32,
    hi: u32,
}

impl taskpools::Task<Vec<u32>> for HintNode {
    fn run(self, ctx: &mut taskpools::Ctx<'_, Self, Vec<u32>>) {
        let HintNode { lo, hi } = self;
        ctx.local().push(lo);
        let np = ctx.places();
        assert!(np > 0, "a hinted phase names its places");
        for (a, b, hint) in tree_children(lo as usize, hi as usize, np) {
            let child = HintNode {
                lo: a as u32,
                hi: b as u32,
            };
            match hint {
                None => ctx.put(child),
                Some(p) => ctx.put_at(PlaceId(p), child).unwrap(),
            }
        }
    }
}

/// Every task of a working phase put with a hint (or without) runs exactly once, on every
/// pool, under every wake-up policy, for several place shapes, with the phase on all of the
/// runtime's workers, on all but one, and on one; the report counts every put.
#[test]
fn every_hinted_put_of_a_working_phase_runs_exactly_once() {
    use taskpools::{Builder, PoolKind, WakePolicy};
    let n_tasks: u32 = if std::env::var("TASKPOOLS_STRESS").as_deref() == Ok("small") {
        1 << 8
    } else {
        1 << 12
    };
    for shape in ["2x1", "1x2", "3x1", "2x2"] {
        let rt = Runtime::builder()
            .places(Places::parse(shape).unwrap())
            .build()
            .unwrap();
        let n = rt.threads();
        let mut widths = vec![n, 1];
        if n > 2 {
            widths.push(n - 1);
        }
        for pool in PoolKind::ALL {
            for wake in WakePolicy::ALL {
                for &w in &widths {
                    let b = Builder::new().threads(w).pool(pool).wake(wake).runtime(&rt);
                    let (report, ran) = b
                        .run_hinted_with(|_| Vec::new(), [HintNode { lo: 0, hi: n_tasks }])
                        .unwrap();
                    let what = format!("{shape}, {} of {n} workers, {pool:?}, {wake}", w);
                    let mut all: Vec<u32> = ran.into_iter().flatten().collect();
                    all.sort_unstable();
                    assert_eq!(
                        all.len(),
                        n_tasks as usize,
                        "{what}: tasks lost or doubled: {:?}",
                        report.total()
                    );
                    assert!(
                        all.iter().enumerate().all(|(i, &x)| i as u32 == x),
                        "{what}: a task ran twice"
                    );
                    assert_eq!(report.tasks_run(), n_tasks as u64, "{what}");
                    assert_eq!(report.total().puts, n_tasks as u64 - 1, "{what}");
                }
            }
        }
    }
}

/// The errors of hints in working phases: a hinted phase needs places (refused before any
/// task runs); a plain phase refuses `put_at`; a place past the last is refused; the refused
/// task is handed back (and here put without a hint), and the phase goes on.
#[test]
fn working_phase_hints_refuse_what_cannot_be_placed() {
    use taskpools::{BoxedTask, Builder, Ctx, Task};
    // No places: refused before any task runs.
    static RAN: AtomicU32 = AtomicU32::new(0);
    let plain = Runtime::new(2).unwrap();
    let b = Builder::new().threads(2).runtime(&plain);
    let e = b
        .run_hinted([BoxedTask::new(|_| {
            RAN.fetch_add(1, Ordering::Relaxed);
        })])
        .unwrap_err();
    assert!(matches!(e, Error::PhaseWithoutPlaces), "{e:?}");
    assert!(e.to_string().contains("RuntimeBuilder::places"), "{e}");
    // Neither given a runtime nor on one with places.
    let e = Builder::new()
        .threads(1)
        .run_hinted([BoxedTask::new(|_| {
            RAN.fetch_add(1, Ordering::Relaxed);
        })])
        .unwrap_err();
    assert!(matches!(e, Error::PhaseWithoutPlaces), "{e:?}");
    assert_eq!(RAN.load(Ordering::Relaxed), 0);

    /// Puts its child with a hint to `place` (`usize::MAX`: the place after its worker's own)
    /// and records what `put_at` said; a refused child comes back and is put without a hint.
    struct Try {
        place: usize,
        child: bool,
    }
    impl Task<Vec<Result<(), Error>>> for Try {
        fn run(self, ctx: &mut Ctx<'_, Self, Vec<Result<(), Error>>>) {
            if self.child {
                ctx.local().push(Ok(()));
                return;
            }
            let place = match self.place {
                usize::MAX => (ctx.worker() + 1) % ctx.places().max(1),
                p => p,
            };
            let r = ctx.put_at(
                PlaceId(place),
                Try {
                    place: 0,
                    child: true,
                },
            );
            match r {
                Ok(()) => ctx.local().push(Ok(())),
                Err(e) => {
                    assert!(e.task.child, "the task handed back is the child");
                    let shown = e.to_string();
                    assert_eq!(shown, e.error.to_string());
                    ctx.local().push(Err(e.error));
                    ctx.put(e.task);
                }
            }
        }
    }
    let root = |place| Try {
        place,
        child: false,
    };
    let flat = |v: Vec<Vec<Result<(), Error>>>| v.into_iter().flatten().collect::<Vec<_>>();

    // A plain phase: put_at fails, the child comes back and is put without a hint.
    let places = Runtime::builder()
        .places(Places::parse("2x1").unwrap())
        .build()
        .unwrap();
    let b = Builder::new().threads(2).runtime(&places);
    let (report, out) = b.run_with(|_| Vec::new(), [root(0)]).unwrap();
    let out = flat(out);
    assert_eq!(out.len(), 2, "the root's error and the child: {out:?}");
    let e = out.iter().find_map(|r| r.as_ref().err()).unwrap();
    assert!(matches!(e, Error::PhaseWithoutHints), "{e:?}");
    assert!(e.to_string().contains("run_hinted"), "{e}");
    assert_eq!(report.tasks_run(), 2);

    // A hinted phase: place 2 of 2 is refused (the child comes back), the other place's
    // inbox takes the second root's child.
    let (report, out) = b
        .run_hinted_with(|_| Vec::new(), [root(2), root(usize::MAX)])
        .unwrap();
    let out = flat(out);
    assert_eq!(out.len(), 4, "{out:?}");
    assert_eq!(report.tasks_run(), 4);
    let errs: Vec<_> = out.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(errs.len(), 1, "{out:?}");
    assert!(
        matches!(
            errs[0],
            Error::NoSuchPlace {
                place: 2,
                places: 2
            }
        ),
        "{:?}",
        errs[0]
    );
    // A phase wider than the runtime is refused as for plain phases.
    let e = Builder::new()
        .threads(3)
        .runtime(&places)
        .run_hinted([BoxedTask::new(|_| {})])
        .unwrap_err();
    assert!(matches!(e, Error::PhaseWider { .. }), "{e:?}");
}

/// Hints decide where tasks run: on `distributed-list` (a private list per worker, nobody
/// steals), a task hinted at another place can only run there, and one hinted at its own
/// place only where it was put. The root, at whichever worker it starts, hints leaves at both
/// places and waits (bounded) until the other place has run its leaves: with hints ignored
/// they would sit in the root's own list and the wait would time out.
#[test]
fn hinted_puts_run_at_their_place_when_nobody_steals() {
    use std::time::{Duration, Instant};
    use taskpools::{Builder, Ctx, PoolKind, Task};
    const LEAVES: usize = 64;
    struct Env {
        root_worker: std::sync::atomic::AtomicUsize,
        remote_done: AtomicU32,
    }
    enum Job<'a> {
        Root(&'a Env),
        Leaf { env: &'a Env, place: usize },
    }
    /// Per worker: (leaf place, worker place) of each leaf it ran, and whether the root's
    /// wait timed out.
    type State = (Vec<(usize, usize)>, bool);
    impl<'a> Task<State> for Job<'a> {
        fn run(self, ctx: &mut Ctx<'_, Self, State>) {
            let here = ctx.worker(); // `2x1`: worker i is at place i
            match self {
                Job::Root(env) => {
                    env.root_worker.store(here, Ordering::Release);
                    for i in 0..2 * LEAVES {
                        let place = i % 2;
                        ctx.put_at(PlaceId(place), Job::Leaf { env, place })
                            .map_err(|e| e.error)
                            .unwrap();
                    }
                    // Generous: under valgrind threads take turns with other tests' spinners.
                    let small = std::env::var("TASKPOOLS_STRESS").as_deref() == Ok("small");
                    let deadline =
                        Instant::now() + Duration::from_secs(if small { 120 } else { 20 });
                    while env.remote_done.load(Ordering::Acquire) < LEAVES as u32 {
                        if Instant::now() > deadline {
                            ctx.local().1 = true;
                            return;
                        }
                        std::thread::yield_now();
                    }
                }
                Job::Leaf { env, place } => {
                    ctx.local().0.push((place, here));
                    if here != env.root_worker.load(Ordering::Acquire) {
                        env.remote_done.fetch_add(1, Ordering::Release);
                    }
                }
            }
        }
    }
    let rt = Runtime::builder()
        .places(Places::parse("2x1").unwrap())
        .build()
        .unwrap();
    for wake in taskpools::WakePolicy::ALL {
        for _ in 0..5 {
            let env = Env {
                root_worker: std::sync::atomic::AtomicUsize::new(usize::MAX),
                remote_done: AtomicU32::new(0),
            };
            let b = Builder::new()
                .threads(2)
                .pool(PoolKind::DistributedList)
                .wake(wake)
                .runtime(&rt);
            let (report, states) = b
                .run_hinted_with(|_| (Vec::new(), false), [Job::Root(&env)])
                .unwrap();
            assert_eq!(report.tasks_run(), 1 + 2 * LEAVES as u64);
            assert!(
                states.iter().all(|s| !s.1),
                "{wake}: the other place never ran its leaves"
            );
            let ran: Vec<(usize, usize)> = states.into_iter().flat_map(|s| s.0).collect();
            assert_eq!(ran.len(), 2 * LEAVES);
            assert!(
                ran.iter().all(|&(place, worker)| place == worker),
                "{wake}: a leaf ran away from its place: {ran:?}"
            );
        }
    }
}

/// Without an explicit runtime, a hinted phase called on a worker of a runtime with places
/// runs there, on all its workers; called from a task of a phase that holds that runtime, it
/// is refused with `PhaseBusy` (it never moves to a runtime without places).
#[test]
fn a_hinted_phase_runs_on_the_calling_workers_runtime() {
    use taskpools::{BoxedTask, Builder, Ctx, Task};
    let rt = Runtime::builder()
        .places(Places::parse("2x1").unwrap())
        .build()
        .unwrap();
    let (report, ran) = rt
        .install(|| Builder::new().run_hinted_with(|_| Vec::new(), [HintNode { lo: 0, hi: 512 }]))
        .unwrap();
    assert_eq!(ran.len(), 2, "both workers of the caller's runtime");
    assert_eq!(report.tasks_run(), 512);
    struct Nest;
    impl Task<Vec<Result<(), Error>>> for Nest {
        fn run(self, ctx: &mut Ctx<'_, Self, Vec<Result<(), Error>>>) {
            let r = Builder::new().run_hinted([BoxedTask::new(|_| {})]);
            ctx.local().push(r.map(|_| ()));
        }
    }
    let (_, out) = Builder::new()
        .runtime(&rt)
        .run_hinted_with(|_| Vec::new(), [Nest])
        .unwrap();
    let out: Vec<_> = out.into_iter().flatten().collect();
    assert_eq!(out.len(), 1);
    assert!(matches!(out[0], Err(Error::PhaseBusy)), "{:?}", out[0]);
}

/// A task that panics while hinted tasks wait in another place's inbox: the panic reaches the
/// caller, every task is either run or dropped (none leaks), and the runtime runs the next
/// hinted phase.
#[test]
fn a_panic_in_a_hinted_phase_drops_the_waiting_tasks_and_the_runtime_goes_on() {
    use std::sync::atomic::AtomicI64;
    use taskpools::{Builder, Ctx, Task};
    static LIVE: AtomicI64 = AtomicI64::new(0);
    struct Counted(u32);
    impl Counted {
        fn new(n: u32) -> Self {
            LIVE.fetch_add(1, Ordering::SeqCst);
            Counted(n)
        }
    }
    impl Drop for Counted {
        fn drop(&mut self) {
            LIVE.fetch_sub(1, Ordering::SeqCst);
        }
    }
    impl Task for Counted {
        fn run(self, ctx: &mut Ctx<'_, Self>) {
            if self.0 == 0 {
                // Hint many tasks at the other place, then fail.
                let other = (ctx.worker() + 1) % ctx.places();
                for _ in 0..1000 {
                    ctx.put_at(PlaceId(other), Counted::new(2)).unwrap();
                }
                panic!("planted failure");
            }
            if self.0 == 2 {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
    }
    let rt = Runtime::builder()
        .places(Places::parse("2x1").unwrap())
        .build()
        .unwrap();
    let b = Builder::new().threads(2).runtime(&rt);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        b.run_hinted([Counted::new(0)])
    }));
    let payload = r.expect_err("the panic reaches the caller");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"planted failure"));
    assert_eq!(LIVE.load(Ordering::SeqCst), 0, "a hinted task leaked");
    let report = b.run_hinted((0..10).map(|_| Counted::new(1))).unwrap();
    assert_eq!(report.tasks_run(), 10);
    assert_eq!(LIVE.load(Ordering::SeqCst), 0);
}
