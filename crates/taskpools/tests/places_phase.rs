//! Places (LASSI) in working phases: tasks put with hints run exactly once and where they
//! were hinted, and what cannot be placed is refused.

mod places_common;

use std::sync::atomic::{AtomicU32, Ordering};

use places_common::tree_children;
use taskpools::places::{PlaceId, Places};
use taskpools::{Error, Runtime};

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
