//! Loom models of the fire-and-forget jobs' shutdown (see the module notes): a worker that
//! sleeps after the shutdown is woken by the last job's end and leaves; a worker does not leave
//! while a counted job waits on another worker's deque. Each with a planted-bug twin that must
//! fail. They drive the shipped `Registry::sleep_until_work`, `Registry::may_exit`,
//! `Registry::signal_shutdown` and `spawn::done` on the shipped registry.

use super::done;
use crate::queue::chase_lev::{self, Steal};
use crate::queue::private_deque::StealRequests;
use crate::runtime::job::{JobHeader, JobRef};
use crate::runtime::{Registry, Stealers};
use crate::sync::{Arc, AtomicBool, Ordering};
use loom::thread;

fn registry(threads: usize) -> Registry {
    let table = Arc::clone(StealRequests::<JobRef>::set(threads)[0].table());
    Registry::new(threads, Stealers::Private(table))
}

/// A worker that found nothing: it leaves if it may, else sleeps and looks again.
fn idle_until_it_may_leave(reg: &Registry) {
    loop {
        if reg.may_exit() {
            return;
        }
        reg.sleep_until_work(0, || {});
    }
}

/// One fire-and-forget job is still running (on another worker) when the runtime is dropped;
/// an idle worker goes to sleep. The job's end, the drop and the worker's sleep each on a
/// thread of its own: whatever the interleaving, the worker wakes and leaves. Twin: the last
/// job does not wake the sleepers, and the worker may sleep forever.
fn last_job_wakes_a_worker_to_leave(broken: bool) {
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 10_000;
    builder.check(move || {
        let mut reg = registry(1);
        reg.broken_done_no_notify = broken;
        reg.live_spawns.store(1, Ordering::Relaxed);
        let reg = Arc::new(reg);
        let left = Arc::new(AtomicBool::new(false));
        let (r2, l2) = (Arc::clone(&reg), Arc::clone(&left));
        let worker = thread::spawn(move || {
            idle_until_it_may_leave(&r2);
            l2.store(true, Ordering::Release);
        });
        // The running job ends on a worker of its own while this thread drops the runtime.
        let r3 = Arc::clone(&reg);
        let job = thread::spawn(move || done(&r3));
        reg.signal_shutdown(); // the drop
                               // Wait by spinning, not by joining: with a lost wake-up the model then reports an
                               // endless spin (which loom can report) instead of two blocked threads (whose deadlock
                               // report aborts the test process).
        while !left.load(Ordering::Acquire) {
            thread::yield_now();
        }
        worker.join().unwrap();
        job.join().unwrap();
    });
}

#[test]
fn loom_the_last_job_wakes_a_worker_to_leave() {
    last_job_wakes_a_worker_to_leave(false);
}

/// Test of the test above: without the wake-up, loom finds the worker asleep for good.
#[test]
#[should_panic(expected = "maximum number of branches")]
fn loom_finds_the_worker_asleep_for_good_without_the_wakeup() {
    last_job_wakes_a_worker_to_leave(true);
}

/// Worker 0 spawns a counted job onto its public spawn deque and then blocks (it waits for
/// something outside the runtime) while the runtime is dropped. Worker 1 must take and run the
/// job before it leaves. Twin: a worker that leaves at the shutdown whatever is still counted,
/// so the job may never run.
fn a_queued_job_keeps_a_worker(broken: bool) {
    loom::model(move || {
        let mut reg = registry(2);
        let (spawner, thief) = chase_lev::deque::<JobRef>(2);
        reg.spawn_stealers = vec![thief.clone(), thief].into();
        let reg = Arc::new(reg);
        let ran = Arc::new(AtomicBool::new(false));
        let header = Box::leak(Box::new(JobHeader::root()));
        // SAFETY: the header is leaked, so it lives for the whole model; it is only taken
        // from the deque ("run" here means counted done), never executed.
        let job = unsafe { JobRef::from_header(header) };
        let (r1, ran1) = (Arc::clone(&reg), Arc::clone(&ran));
        let worker1 = thread::spawn(move || loop {
            match r1.spawn_stealers[0].steal() {
                Steal::Success(j) => {
                    assert_eq!(j, job);
                    ran1.store(true, Ordering::Relaxed);
                    done(&r1);
                    continue;
                }
                Steal::Retry => continue,
                Steal::Empty => {}
            }
            let leave = if broken {
                r1.shutdown.load(Ordering::Acquire)
            } else {
                r1.may_exit()
            };
            if leave {
                return;
            }
            r1.sleep_until_work(1, || {});
        });
        // Worker 0: the spawn (`counted`, then `push_spawn` on the private pool)...
        reg.live_spawns.fetch_add(1, Ordering::Relaxed);
        spawner.push_quiet(job);
        reg.notify_one();
        // ...then it blocks, and the runtime is dropped.
        reg.signal_shutdown();
        worker1.join().unwrap();
        assert!(
            ran.load(Ordering::Relaxed),
            "a worker left before the job ran"
        );
    });
}

#[test]
fn loom_a_queued_job_keeps_a_worker_until_it_ran() {
    a_queued_job_keeps_a_worker(false);
}

/// Test of the test above: a worker that leaves at the shutdown loses the job.
#[test]
#[should_panic(expected = "a worker left before the job ran")]
fn loom_finds_the_lost_job_when_workers_leave_at_the_shutdown() {
    a_queued_job_keeps_a_worker(true);
}
