//! Places (LASSI) at run time: hints of fork-join and data-flow spawns, and that every hinted
//! task runs exactly once while places steal from each other, under every policy.

mod places_common;

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};

use places_common::tree_children;
use taskpools::places::{PlaceId, PlacePolicy, Places, Unhinted};
use taskpools::{Error, Runtime};

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

/// The policies worth running every check under: Weibel's design, and each of the future
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

/// Listed cores pin the place's workers to them. Linux and Android only: elsewhere
/// `core_affinity::get_core_ids` does not read the calling thread's mask.
#[cfg(any(target_os = "linux", target_os = "android"))]
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
    let seen = rt.broadcast(|_| core_affinity::get_core_ids().unwrap_or_default());
    assert_eq!(seen[0], [cores[1]]);
    assert_eq!(seen[1], [cores[0]]);
    let places = rt.broadcast(|_| taskpools::places::current_place());
    assert_eq!(places, [Some(PlaceId(0)), Some(PlaceId(1))]);
}

/// `current_place` is the place of the worker running the code: `None` on a thread that is not
/// a worker and on a runtime without places, also inside an `install` on such a runtime from a
/// worker of one with places, and the worker's own place again once that returns. (Runs on any
/// machine: virtual places need no cores of their own.)
#[test]
fn current_place_is_the_running_workers_place_or_none() {
    use taskpools::places::current_place;
    assert_eq!(current_place(), None, "not a worker");
    let plain = Runtime::new(2).unwrap();
    assert_eq!(plain.broadcast(|_| current_place()), [None, None]);
    let placed = Runtime::builder()
        .places(Places::uniform(2, 1).unwrap())
        .build()
        .unwrap();
    let seen = placed.broadcast(|_| {
        let before = current_place();
        let inside = plain.install(current_place);
        (before, inside, current_place())
    });
    for (i, (before, inside, after)) in seen.into_iter().enumerate() {
        assert_eq!(before, Some(PlaceId(i)), "worker {i}");
        assert_eq!(
            inside, None,
            "worker {i}: inside an install on a runtime without places"
        );
        assert_eq!(after, Some(PlaceId(i)), "worker {i}: after the install");
    }
    drop(placed);
    assert_eq!(current_place(), None, "still not a worker");
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
