//! Loom models of fork-join's protocol pieces, run with the shipped code (`PrivateFrames`,
//! `FrameStack`, `StackJob`, `Scope`) on loom's atomics and cells. The runtime's threads do not
//! run under loom, so each model plays the worker by hand with the calls the runtime makes.
//! Every model has a planted-bug twin that must fail.

use super::*;
use crate::queue::chase_lev::Steal;
use crate::queue::private_deque::StealRequests;
use crate::runtime::job::{JobRef, Outcome, StackJob};
use crate::runtime::{Registry, Stealers};
use crate::sync::{Arc, AtomicBool, Ordering};
use loom::thread;

/// A bounded exploration: three preemptions are enough for these two-thread races (each
/// planted bug is found within them) and keep every model well under a second (a few hundred
/// executions each).
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.max_branches = 20_000;
    b.check(f);
}

fn job(i: usize) -> StackJob<impl FnOnce() -> usize + Send, usize> {
    StackJob::new(move || i)
}

fn value(o: Outcome<usize>) -> usize {
    o.unwrap_or_else(|_| panic!("the job does not panic"))
}

/// Two nested joins on a private frame stack while a thief asks for work. The owner forks
/// `outer` then `inner` (answering a request at each fork, as `join_private` does), then joins
/// them in LIFO order: each half is taken back and run inline, or was handed to the thief and
/// is waited for through `DONE`, whose result the owner then reads (a loom cell: a missing
/// release/acquire pair is a detected race). Every half runs exactly once, with its value.
fn join_with_a_thief(relaxed_done: bool, keep_oldest_linked: bool) {
    model(move || {
        let mut reqs = StealRequests::<JobRef>::set(2);
        let thief_req = reqs.pop().unwrap();
        let p = PrivateFrames::new(
            crate::queue::chase_lev::deque(4).0,
            reqs.pop().unwrap(),
            u32::MAX,
        );
        p.frames.broken_keep_oldest_linked.set(keep_oldest_linked);
        let outer = if relaxed_done {
            job(1).with_relaxed_done()
        } else {
            job(1)
        };
        let inner = job(2);

        let thief = thread::spawn(move || loop {
            match thief_req.steal_from(0, || thief_req.poll(|| None)) {
                // SAFETY: a job handed over by the owner is executed once, here; the owner
                // keeps it alive until it sees `DONE`.
                Steal::Success(j) => break unsafe { j.execute() },
                Steal::Empty => break,
                Steal::Retry => thread::yield_now(),
            }
        });

        let wait = |done: &dyn Fn() -> bool| {
            while !done() {
                p.poll();
                thread::yield_now();
            }
        };
        p.push(outer.as_job_ref());
        p.poll();
        p.push(inner.as_job_ref());
        p.poll();
        let ri = if p.take_back(inner.header()) {
            // SAFETY: taken back from the frame stack: ours alone, run once, here.
            unsafe { inner.run_inline() }
        } else {
            finish_private_join(&p, &inner, wait)
        };
        let ro = if p.take_back(outer.header()) {
            // SAFETY: taken back from the frame stack: ours alone, run once, here.
            unsafe { outer.run_inline() }
        } else {
            finish_private_join(&p, &outer, wait)
        };
        assert_eq!((value(ro), value(ri)), (1, 2));
        assert!(p.frames.is_empty());
        // The worker stops polling: a request still pending is declined.
        p.req.block(|| p.give_oldest());
        thief.join().unwrap();
    });
}

#[test]
fn loom_join_halves_run_once_and_stolen_results_are_visible() {
    join_with_a_thief(false, false);
}

/// Planted bug: `DONE` stored `Relaxed`; the owner's read of the stolen half's result races
/// with the thief's write.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_join_finds_a_relaxed_done() {
    join_with_a_thief(true, false);
}

/// Planted bug: the frame stack hands its oldest job to a thief but keeps it linked; the
/// owner takes it back and runs it too (both take the closure: a detected race).
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_frames_find_a_job_handed_out_twice() {
    join_with_a_thief(false, true);
}

/// A join puts its second half in the public spawn deque (`join_public`), here above an older
/// spawn of an enclosing scope (the runtime does that only when the deque is empty; the model
/// also covers the general case); a nested join then decides as `join_queued` does: public if
/// the thief has taken both already (`nothing_queued`), else private. A thief takes from the
/// spawn deque without the owner's help (up to three jobs), else asks. The owner finishes
/// each join as `join_private` or `join_public` does, and its waits run its own spawns, as a
/// worker's waits do (so a wait inside the outer join's first half may run the outer half).
/// Then the scope's wait for its spawn: every job runs exactly once, with its value, a job
/// the thief ran is read only after its `DONE`, and the elision threshold is restored.
fn public_join_with_a_thief(relaxed_done: bool, mutation: crate::queue::chase_lev::Mutation) {
    model(move || {
        let mut reqs = StealRequests::<JobRef>::set(2);
        let thief_req = reqs.pop().unwrap();
        let (spawns, stealer) = crate::queue::chase_lev::deque_with_mutation(4, mutation);
        let p = PrivateFrames::new(spawns, reqs.pop().unwrap(), 3);
        let spawn = job(3);
        let outer = if relaxed_done {
            job(1).with_relaxed_done()
        } else {
            job(1)
        };
        let inner = job(2);

        let thief = thread::spawn(move || {
            let mut ran = 0;
            while ran < 3 {
                // As `WorkerThread::steal`: the victim's spawns first, then a request.
                let got = match stealer.steal() {
                    Steal::Empty => thief_req.steal_from(0, || thief_req.poll(|| None)),
                    other => other,
                };
                match got {
                    // SAFETY: a job taken from the owner is executed once, here; the owner
                    // keeps it alive until it sees `DONE`.
                    Steal::Success(j) => unsafe { j.execute() },
                    Steal::Empty => break,
                    Steal::Retry => thread::yield_now(),
                }
                ran += 1;
            }
        });

        // As `WorkerThread::wait_until` with `run_one`: answer requests, run own spawns.
        let wait = |done: &dyn Fn() -> bool| {
            while !done() {
                p.poll();
                match p.spawns.pop() {
                    // SAFETY: popped from our deque, so executed once, here.
                    Some(j) => unsafe { j.execute() },
                    None => thread::yield_now(),
                }
            }
        };
        // A scope's spawn, then `join_public`'s fork, then the nested join's.
        p.spawns.push(spawn.as_job_ref());
        p.push_public_join(outer.as_job_ref());
        p.poll();
        let inner_public = p.nothing_queued();
        if inner_public {
            p.push_public_join(inner.as_job_ref());
        } else {
            p.push(inner.as_job_ref());
        }
        p.poll();
        let ri = if inner_public {
            p.end_public_join();
            finish_public_join(&p.spawns, &inner, wait)
        } else if p.take_back(inner.header()) {
            // SAFETY: taken back from the frame stack: ours alone, run once, here.
            unsafe { inner.run_inline() }
        } else {
            finish_private_join(&p, &inner, wait)
        };
        p.end_public_join();
        let ro = finish_public_join(&p.spawns, &outer, wait);
        // The scope's wait for its spawn.
        if !spawn.is_done() {
            match p.spawns.pop() {
                Some(j) => {
                    assert!(j == spawn.as_job_ref(), "only the spawn is left");
                    // SAFETY: popped from our deque, so executed once, here.
                    unsafe { j.execute() };
                }
                None => wait(&|| spawn.is_done()),
            }
        }
        let rs = spawn.take_outcome();
        assert_eq!((value(ro), value(ri), value(rs)), (1, 2, 3));
        assert!(p.frames.is_empty() && p.spawns.is_empty());
        assert_eq!((p.public_joins.get(), p.exposed.get()), (0, 3));
        p.req.block(|| p.give_oldest());
        thief.join().unwrap();
    });
}

#[test]
fn loom_public_join_half_runs_once_and_a_stolen_result_is_visible() {
    public_join_with_a_thief(false, crate::queue::chase_lev::Mutation::None);
}

/// Planted bug: the stolen public half's `DONE` stored `Relaxed`; the owner's read of its
/// result races with the thief's write.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_public_join_finds_a_relaxed_done() {
    public_join_with_a_thief(true, crate::queue::chase_lev::Mutation::None);
}

/// Planted bug: the spawn deque's owner fence in `pop` weakened, so the owner's pop and the
/// thief's steal can both take the public half, which then runs twice (both take its closure:
/// a detected race).
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_public_join_finds_a_weak_pop_fence() {
    public_join_with_a_thief(false, crate::queue::chase_lev::Mutation::WeakOwnerFence);
}

/// Data written by spawned jobs, read by the scope's owner after it has seen every job done.
struct Effects([crate::sync::UnsafeCell<usize>; 2]);
// SAFETY: each cell is written by one job and read by the owner only after `all_done`, which
// the model checks: loom reports any access that the counter does not order.
unsafe impl Sync for Effects {}

/// A model thread that plays a worker of `reg`: runs what is injected until `stop`.
fn injector_worker(reg: &Arc<Registry>, stop: &Arc<AtomicBool>) -> thread::JoinHandle<()> {
    let (reg, stop) = (Arc::clone(reg), Arc::clone(stop));
    thread::spawn(move || {
        while !stop.load(Ordering::Acquire) {
            match reg.take_injected() {
                // SAFETY: taken from the injector, so executed once; the scope outlives it.
                Some(j) => unsafe { j.execute() },
                None => thread::yield_now(),
            }
        }
    })
}

/// Which of a scope's counting paths a model takes.
#[derive(Clone, Copy)]
enum ScopeModel {
    /// The owner is not a worker: every count goes to `remote`.
    RemoteOnly,
    /// The owner is a worker that counts its own spawns and runs jobs itself: the split counts.
    OwnerRuns,
}

/// A scope spawns one job (injected into the scope's runtime), which spawns another; a worker
/// thread runs what is injected, and with `OwnerRuns` so does the owner while it waits, so each
/// job may finish on either thread and each count land in `local` or `remote`. The owner waits
/// as `scope_on` does (`all_done`) and then reads both jobs' effects: the counts must not sum
/// to zero before a job's effects, including those of a job spawned by another job.
fn scope_waits_for_every_spawn(how: ScopeModel, early_decrement: bool, relaxed_wait: bool) {
    model(move || {
        let table = Arc::clone(StealRequests::<JobRef>::set(1)[0].table());
        let reg = Arc::new(Registry::new(1, Stealers::Private(table)));
        let owner = match how {
            ScopeModel::RemoteOnly => scope::Owner::none(),
            ScopeModel::OwnerRuns => scope::Owner::current(),
        };
        // SAFETY: `reg` lives for the whole model, past the scope's last use (`s` is declared
        // after it, so dropped first).
        let mut s = unsafe { Scope::with(&reg, owner) };
        s.broken_early_decrement = early_decrement;
        s.broken_relaxed_wait = relaxed_wait;
        let s: Arc<Scope<'static>> = Arc::new(s);
        let fx = Arc::new(Effects([
            crate::sync::UnsafeCell::new(0),
            crate::sync::UnsafeCell::new(0),
        ]));
        let stop = Arc::new(AtomicBool::new(false));

        let worker = injector_worker(&reg, &stop);

        let fx2 = Arc::clone(&fx);
        s.spawn(move |s| {
            // SAFETY: only this job writes cell 0.
            fx2.0[0].with_mut(|p| unsafe { *p = 1 });
            s.spawn(move |_| {
                // SAFETY: only this job writes cell 1.
                fx2.0[1].with_mut(|p| unsafe { *p = 2 });
            });
        });
        while !s.all_done() {
            let job = match how {
                ScopeModel::OwnerRuns => reg.take_injected(),
                ScopeModel::RemoteOnly => None,
            };
            match job {
                // SAFETY: taken from the injector, so executed once; the scope outlives it.
                Some(j) => unsafe { j.execute() },
                None => thread::yield_now(),
            }
        }
        // SAFETY: every job has counted itself done (Acquire), after its write.
        let seen = [0, 1].map(|i| fx.0[i].with(|p| unsafe { *p }));
        assert_eq!(seen, [1, 2], "the scope ended before its spawns' effects");
        stop.store(true, Ordering::Release);
        worker.join().unwrap();
    });
}

#[test]
fn loom_scope_waits_for_every_spawn_and_sees_its_effects() {
    scope_waits_for_every_spawn(ScopeModel::RemoteOnly, false, false);
}

/// Planted bug: a job counts itself done before it runs.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_scope_finds_an_early_decrement() {
    scope_waits_for_every_spawn(ScopeModel::RemoteOnly, true, false);
}

/// The split counts: the owner counts its own spawns and the jobs it runs in `local`, the
/// worker counts in `remote`; whichever thread runs each job, the owner waits for both.
#[test]
fn loom_scope_split_counts_wait_for_every_spawn() {
    scope_waits_for_every_spawn(ScopeModel::OwnerRuns, false, false);
}

/// Planted bug: the owner reads `remote` without Acquire, so a job the worker finished may
/// be seen done before its effects.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_scope_split_counts_find_a_relaxed_wait() {
    scope_waits_for_every_spawn(ScopeModel::OwnerRuns, false, true);
}

/// Planted bug with the split counts: a job counts itself done before it runs.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_scope_split_counts_find_an_early_decrement() {
    scope_waits_for_every_spawn(ScopeModel::OwnerRuns, true, false);
}

/// Stopping a scope (`crate::cancel`): a job cancels, spawns another job, and fails. The
/// second job is spawned after the cancel, so it must be skipped wherever it runs; and the
/// scope's end, after the owner's wait, must see the error and the skip (both recorded before
/// the jobs count themselves done).
fn a_failed_job_stops_the_scope(early_decrement: bool) {
    model(move || {
        let table = Arc::clone(StealRequests::<JobRef>::set(1)[0].table());
        let reg = Arc::new(Registry::new(1, Stealers::Private(table)));
        // SAFETY: `reg` lives for the whole model, past the scope's last use.
        let mut s = unsafe { Scope::with(&reg, scope::Owner::current()) };
        s.broken_early_decrement = early_decrement;
        let s: Arc<Scope<'static>> = Arc::new(s);
        let ran = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));

        let worker = injector_worker(&reg, &stop);

        let ran2 = Arc::clone(&ran);
        s.try_spawn(move |s| {
            s.cancel();
            s.spawn(move |_| ran2.store(true, Ordering::Relaxed));
            Err("stop")
        });
        while !s.all_done() {
            match reg.take_injected() {
                // SAFETY: taken from the injector, so executed once; the scope outlives it.
                Some(j) => unsafe { j.execute() },
                None => thread::yield_now(),
            }
        }
        let ran = ran.load(Ordering::Relaxed);
        let seen = s.stop.has_error() && s.stop.skipped() == 1;
        // The worker goes first: a model may not panic while another of its threads runs.
        stop.store(true, Ordering::Release);
        worker.join().unwrap();
        assert!(!ran, "a job spawned after the cancel ran");
        assert!(seen, "the scope's end missed the error or the skip");
    });
}

#[test]
fn loom_a_failed_job_stops_the_scope_and_its_end_sees_why() {
    a_failed_job_stops_the_scope(false);
}

/// Planted bug: a job counts itself done before it runs, so the end may come before the
/// error and the skip are recorded.
#[test]
#[should_panic(expected = "the scope's end missed the error or the skip")]
fn loom_a_stop_recorded_after_the_count_is_missed() {
    a_failed_job_stops_the_scope(true);
}
