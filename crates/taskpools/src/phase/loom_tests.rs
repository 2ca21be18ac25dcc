//! loom models of the working phase's idle protocol, run through the real worker loop and real
//! pools: no lost wake-up, no early termination. The termination models run on every pool
//! family with its own synchronization: locked arrays (`dq7`), Chase–Lev (`dcwq`), FCDQ,
//! private/public blocks (`dq8`) and Manber's steal-half pool.
//!
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p taskpools --lib loom`

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;

use super::hints::PlaceHints;
use super::idle::Coordinator;
use super::inbox::{Inbox, InboxOnly};
use super::remote::NoRemote;
use super::worker_loop::worker;
use super::WakePolicy;
use crate::mem::MemKind;
use crate::pool::{
    ChaseLevPool, FcdqPool, PoolConfig, PrivateDequePool, PrivatePublicPool, StealHalfPool,
    StealingPool, TaskPool,
};
use crate::queue::ArrayStack;
use crate::task::{Ctx, Task};

/// Worker 1 starts with `Producer` in its queue (worker 0 may steal it). The producer puts a
/// `Child` and then waits until the *other* worker has run it; that worker may already be
/// asleep when the child appears. If the put's wake-up were lost, it would sleep forever while
/// the producer waits: the model would never finish.
enum T {
    Producer(Arc<AtomicBool>),
    Child(Arc<AtomicBool>, usize),
}

impl Task for T {
    fn run(self, ctx: &mut Ctx<'_, Self>) {
        match self {
            T::Producer(flag) => {
                ctx.put(T::Child(Arc::clone(&flag), ctx.worker()));
                while !flag.load(Ordering::Acquire) {
                    thread::yield_now();
                }
            }
            T::Child(flag, producer) => {
                assert_ne!(
                    ctx.worker(),
                    producer,
                    "the producer cannot run it while it waits"
                );
                flag.store(true, Ordering::Release);
            }
        }
    }
}

type Pool = StealingPool<T, ArrayStack<T>>;

fn model(policy: WakePolicy) {
    model_with::<Pool>(policy, false)
}

fn model_with<P: TaskPool<T> + Send + 'static>(policy: WakePolicy, broken_recheck: bool)
where
    P::Local: 'static,
{
    loom::model(move || {
        let pool = Arc::new(P::new(&PoolConfig {
            mem: MemKind::System,
            ..PoolConfig::new(2)
        }));
        let mut coord = Coordinator::new(2, policy);
        coord.broken_recheck = broken_recheck;
        let coord = Arc::new(coord);
        let flag = Arc::new(AtomicBool::new(false));
        let mut l1 = pool.local(1);
        pool.init(&mut l1, T::Producer(Arc::clone(&flag)));
        let l0 = pool.local(0);
        let (p0, c0) = (Arc::clone(&pool), Arc::clone(&coord));
        let h = thread::spawn(move || worker(0, &*p0, l0, &c0, &NoRemote, &mut ()));
        let s1 = worker(1, &*pool, l1, &coord, &NoRemote, &mut ());
        let s0 = h.join().unwrap();
        assert!(flag.load(Ordering::Acquire));
        assert_eq!(s0.tasks_run + s1.tasks_run, 2);
        assert!(coord.is_done());
    });
}

#[test]
fn loom_no_lost_wakeup_on_empty() {
    model(WakePolicy::OnEmpty);
}

#[test]
fn loom_no_lost_wakeup_every_put() {
    model(WakePolicy::EveryPut);
}

#[test]
fn loom_spinning_workers_terminate() {
    model(WakePolicy::Spin);
}

/// Test of the test: without the sleeper's recheck after `sleepers += 1`, a put can read
/// `sleepers == 0` just before the worker goes to sleep, and its wake-up is lost. The model
/// must find that interleaving (the producer then waits forever).
#[test]
#[should_panic]
fn loom_finds_the_lost_wakeup_without_recheck() {
    model_with::<Pool>(WakePolicy::OnEmpty, true);
}

// The lost-wake-up model on the pools whose puts are visible to thieves at once (a put into a
// private block, as in `dq8`, is never visible to the producer's peer, so that model does not
// apply there; the termination models below cover `dq8`).

#[test]
fn loom_no_lost_wakeup_on_empty_chase_lev() {
    model_with::<ChaseLevPool<T>>(WakePolicy::OnEmpty, false);
}

#[test]
fn loom_no_lost_wakeup_on_empty_fcdq() {
    model_with::<FcdqPool<T>>(WakePolicy::OnEmpty, false);
}

#[test]
fn loom_no_lost_wakeup_on_empty_steal_half() {
    model_with::<StealHalfPool<T>>(WakePolicy::OnEmpty, false);
}

#[test]
#[should_panic]
fn loom_finds_the_lost_wakeup_without_recheck_chase_lev() {
    model_with::<ChaseLevPool<T>>(WakePolicy::OnEmpty, true);
}

// `private-deque`, whose puts wait for their owner (`TaskPool::PUTS_WAIT_FOR_OWNER`): the
// wake-up a put owes is made when the putting task calls `Ctx::queued` (where the owner also
// answers thieves) or when it ends. A thief can get the child only through the owner, so the
// task that waits for the other worker polls with `queued` while it waits.

/// Worker 1 starts with the producer. With `wait`, the producer puts a child and waits, calling
/// `queued`, until the other worker has run it: the wake-up owed to the put is made in
/// `queued`. Without, the producer puts the child and then a waiter, and ends; the waiter (run
/// next by the same worker, newest first) waits, calling `queued`, for the other worker to run
/// the child: the wake-up is made at the end of the producer.
enum D {
    Producer { flag: Arc<AtomicBool>, wait: bool },
    Waiter(Arc<AtomicBool>),
    Child(Arc<AtomicBool>),
}

impl Task for D {
    fn run(self, ctx: &mut Ctx<'_, Self>) {
        let spin = |ctx: &mut Ctx<'_, Self>, flag: &AtomicBool| {
            while !flag.load(Ordering::Acquire) {
                ctx.queued();
                thread::yield_now();
            }
        };
        match self {
            D::Producer { flag, wait } => {
                ctx.put(D::Child(Arc::clone(&flag)));
                if wait {
                    spin(ctx, &flag);
                } else {
                    ctx.put(D::Waiter(flag));
                }
            }
            D::Waiter(flag) => spin(ctx, &flag),
            D::Child(flag) => flag.store(true, Ordering::Release),
        }
    }
}

fn deferred_model(policy: WakePolicy, wait: bool, bug: DeferredBug) {
    // Both workers wait by spinning (the waiting task, a thief for its answer), and loom counts
    // every turn as a branch: the limit is raised, and a planted bug's endless wait is
    // reported as "maximum number of branches".
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 10_000;
    builder.check(move || {
        let pool = Arc::new(<PrivateDequePool<D>>::new(&PoolConfig::new(2)));
        let mut coord = Coordinator::new(2, policy);
        coord.broken_deferred_wake = bug == DeferredBug::NoWake;
        coord.broken_flush_hint = bug == DeferredBug::NoFlushHint;
        coord.broken_recheck = bug == DeferredBug::NoRecheck;
        let coord = Arc::new(coord);
        let flag = Arc::new(AtomicBool::new(false));
        let mut l1 = pool.local(1);
        pool.init(
            &mut l1,
            D::Producer {
                flag: Arc::clone(&flag),
                wait,
            },
        );
        // Open worker 1's deque to requests (on its own thread, this one) before worker 0
        // starts: until then a thief retries without yielding, which loom would explore
        // without end.
        pool.resume(&mut l1);
        let l0 = pool.local(0);
        let (p0, c0) = (Arc::clone(&pool), Arc::clone(&coord));
        let h = thread::spawn(move || worker(0, &*p0, l0, &c0, &NoRemote, &mut ()));
        let s1 = worker(1, &*pool, l1, &coord, &NoRemote, &mut ());
        let s0 = h.join().unwrap();
        assert!(flag.load(Ordering::Acquire));
        assert_eq!(s0.tasks_run + s1.tasks_run, if wait { 2 } else { 3 });
        assert!(coord.is_done());
    });
}

/// The planted bugs of the deferred models.
#[derive(Clone, Copy, PartialEq, Eq)]
enum DeferredBug {
    None,
    /// The owed wake-up is never made.
    NoWake,
    /// The sleeper skips its recheck after `sleepers += 1` (the wake-up's fence now comes
    /// after the task, not after the put: the model must still see the race).
    NoRecheck,
    /// The flush in `queued` leaves the work hint off.
    NoFlushHint,
}

#[test]
fn loom_private_deque_wakes_for_its_puts_in_queued() {
    deferred_model(WakePolicy::OnEmpty, true, DeferredBug::None);
}

#[test]
fn loom_private_deque_wakes_for_its_puts_in_queued_every_put() {
    deferred_model(WakePolicy::EveryPut, true, DeferredBug::None);
}

#[test]
fn loom_private_deque_wakes_for_its_puts_at_the_end_of_the_task() {
    deferred_model(WakePolicy::OnEmpty, false, DeferredBug::None);
}

#[test]
fn loom_private_deque_wakes_for_its_puts_at_the_end_of_the_task_every_put() {
    deferred_model(WakePolicy::EveryPut, false, DeferredBug::None);
}

/// Test of the test: if the owed wake-up is never made, the other worker may be asleep when
/// the child appears and stays asleep while the producer waits.
#[test]
#[should_panic(expected = "maximum number of branches")]
fn loom_finds_the_lost_wakeup_of_a_deferred_put_in_queued() {
    deferred_model(WakePolicy::OnEmpty, true, DeferredBug::NoWake);
}

/// Test of the test: the worker's stack loop must turn the work hint on when `queued` flushes
/// the puts, or the thief never asks for the child the producer waits for.
#[test]
#[should_panic(expected = "maximum number of branches")]
fn loom_finds_the_hint_left_off_by_a_flush_in_queued() {
    deferred_model(WakePolicy::OnEmpty, true, DeferredBug::NoFlushHint);
}

/// Test of the test, as above, for the wake-up owed at the end of the task.
#[test]
#[should_panic(expected = "maximum number of branches")]
fn loom_finds_the_lost_wakeup_of_a_deferred_put_at_the_end_of_the_task() {
    deferred_model(WakePolicy::OnEmpty, false, DeferredBug::NoWake);
}

/// Test of the test: the sleeper's recheck is what makes a deferred wake-up safe too.
#[test]
#[should_panic(expected = "maximum number of branches")]
fn loom_finds_a_deferred_wakeup_lost_without_the_recheck() {
    deferred_model(WakePolicy::OnEmpty, false, DeferredBug::NoRecheck);
}

/// A task that creates its children only at its very end, while the other worker is already
/// idle (or asleep): nobody may leave the working phase before both children have run.
struct Late(u8, Arc<loom::sync::atomic::AtomicUsize>);

impl Task for Late {
    fn run(self, ctx: &mut Ctx<'_, Self>) {
        self.1.fetch_add(1, Ordering::Relaxed);
        if self.0 > 0 {
            ctx.put(Late(self.0 - 1, Arc::clone(&self.1)));
            ctx.put(Late(self.0 - 1, Arc::clone(&self.1)));
        }
    }
}

fn termination_model(policy: WakePolicy) {
    termination_model_on::<StealingPool<Late, ArrayStack<Late>>>(policy)
}

fn termination_model_on<P: TaskPool<Late> + Send + 'static>(policy: WakePolicy)
where
    P::Local: 'static,
{
    // A `private-deque` thief waits for its answer by spinning: the limit is raised.
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 10_000;
    builder.check(move || {
        let pool = Arc::new(P::new(&PoolConfig {
            mem: MemKind::System,
            ..PoolConfig::new(2)
        }));
        let coord = Arc::new(Coordinator::new(2, policy));
        let ran = Arc::new(loom::sync::atomic::AtomicUsize::new(0));
        let mut l1 = pool.local(1);
        pool.init(&mut l1, Late(1, Arc::clone(&ran)));
        // Open worker 1's queue to requests before worker 0 starts (as `deferred_model`);
        // a no-op for the other pools.
        pool.resume(&mut l1);
        let l0 = pool.local(0);
        let (p0, c0) = (Arc::clone(&pool), Arc::clone(&coord));
        let h = thread::spawn(move || worker(0, &*p0, l0, &c0, &NoRemote, &mut ()));
        let s1 = worker(1, &*pool, l1, &coord, &NoRemote, &mut ());
        let s0 = h.join().unwrap();
        assert_eq!(ran.load(Ordering::Relaxed), 3, "a task was lost");
        assert_eq!(s0.tasks_run + s1.tasks_run, 3);
    });
}

#[test]
fn loom_no_early_termination_on_empty() {
    termination_model(WakePolicy::OnEmpty);
}

#[test]
fn loom_no_early_termination_spin() {
    termination_model(WakePolicy::Spin);
}

#[test]
fn loom_no_early_termination_chase_lev() {
    termination_model_on::<ChaseLevPool<Late>>(WakePolicy::OnEmpty);
}

#[test]
fn loom_no_early_termination_fcdq() {
    termination_model_on::<FcdqPool<Late>>(WakePolicy::OnEmpty);
}

#[test]
fn loom_no_early_termination_private_public() {
    termination_model_on::<PrivatePublicPool<Late, false>>(WakePolicy::OnEmpty);
}

/// The worker's deque lent to its loop (`Busy::run_stack`) is empty to everyone else: the
/// work hint must keep the idle worker from ending the phase.
#[test]
fn loom_no_early_termination_private_deque() {
    termination_model_on::<PrivateDequePool<Late>>(WakePolicy::OnEmpty);
}

#[test]
fn loom_no_early_termination_steal_half() {
    termination_model_on::<StealHalfPool<Late>>(WakePolicy::OnEmpty);
}

// The inbox of a phase fed from outside (the distributed phase's agent): a delivery to a
// worker that is going to sleep is not lost, and the deliverer sees the phase quiescent only
// when every task, including the children of delivered ones, has run.

/// A delivered task that puts one child.
struct Fed(bool, Arc<loom::sync::atomic::AtomicUsize>);

impl Task for Fed {
    fn run(self, ctx: &mut Ctx<'_, Self>) {
        self.1.fetch_add(1, Ordering::Relaxed);
        if self.0 {
            ctx.put(Fed(false, Arc::clone(&self.1)));
        }
    }
}

fn inbox_model(broken_wake: bool) {
    loom::model(move || {
        let pool = Arc::new(<StealingPool<Fed, ArrayStack<Fed>>>::new(&PoolConfig {
            mem: MemKind::System,
            ..PoolConfig::new(1)
        }));
        let coord = Arc::new(Coordinator::new(1, WakePolicy::OnEmpty));
        let mut inbox = Inbox::new();
        inbox.broken_wake = broken_wake;
        let remote = Arc::new(InboxOnly(inbox));
        let ran = Arc::new(loom::sync::atomic::AtomicUsize::new(0));
        let l0 = pool.local(0);
        let (p0, c0, r0) = (Arc::clone(&pool), Arc::clone(&coord), Arc::clone(&remote));
        let h = thread::spawn(move || worker(0, &*p0, l0, &c0, &*r0, &mut ()));
        // The agent: deliver, wait until the phase is quiescent, end it.
        remote.0.deliver([Fed(true, Arc::clone(&ran))], &coord);
        while !remote.0.quiescent(&coord, 1) {
            thread::yield_now();
        }
        assert_eq!(
            ran.load(Ordering::Relaxed),
            2,
            "quiescent before every task ran"
        );
        coord.end();
        let s0 = h.join().unwrap();
        assert_eq!(s0.tasks_run, 2);
    });
}

#[test]
fn loom_inbox_delivery_wakes_and_quiescence_is_exact() {
    inbox_model(false);
}

/// Test of the test: a delivery that does not wake sleepers leaves the worker asleep while
/// the agent waits for quiescence; the model must find it.
#[test]
#[should_panic]
fn loom_finds_the_lost_wakeup_of_a_delivery_without_wake() {
    inbox_model(true);
}

// Place hints in a working phase (the `hints` module): a task hinted at the other worker's
// place is not lost when that worker spins, sleeps or is already counted idle, and the phase
// does not end while a hinted task waits in an inbox.

/// Worker 1 starts with the producer (worker 0 may steal it); it hints a child at the place of
/// the worker that is *not* running it. With `wait`, the producer then waits until the other
/// worker has run the child, so that worker must be woken (or see the inbox while spinning).
enum Hinted {
    Producer(Arc<AtomicBool>, bool),
    Child(Arc<AtomicBool>),
}

impl Task for Hinted {
    fn run(self, ctx: &mut Ctx<'_, Self>) {
        match self {
            Hinted::Producer(flag, wait) => {
                let me = ctx.worker();
                let other = crate::places::PlaceId(1 - me);
                ctx.put_at(other, Hinted::Child(Arc::clone(&flag)))
                    .expect("two places");
                while wait && !flag.load(Ordering::Acquire) {
                    thread::yield_now();
                }
            }
            Hinted::Child(flag) => {
                if flag.load(Ordering::Relaxed) {
                    panic!("the child ran twice");
                }
                flag.store(true, Ordering::Release);
            }
        }
    }
}

/// How a hint model's phase is broken (test of the test).
#[derive(Clone, Copy, PartialEq)]
enum HintBug {
    None,
    /// Idle workers ignore the inboxes everywhere.
    IgnoreInboxes,
    /// Only the look at the inboxes before a worker counts itself idle is skipped.
    SkipEarlyCheck,
}

fn hint_model(policy: WakePolicy, wait: bool, bug: HintBug) {
    loom::model(move || {
        type P = StealingPool<Hinted, ArrayStack<Hinted>>;
        let pool = Arc::new(P::new(&PoolConfig {
            mem: MemKind::System,
            ..PoolConfig::new(2)
        }));
        let mut coord = Coordinator::new(2, policy);
        coord.broken_early_check = bug == HintBug::SkipEarlyCheck;
        let coord = Arc::new(coord);
        let mut hints = PlaceHints::new(2, &[0, 1]);
        hints.broken_idle = bug == HintBug::IgnoreInboxes;
        let hints = Arc::new(hints);
        let flag = Arc::new(AtomicBool::new(false));
        let mut l1 = pool.local(1);
        pool.init(&mut l1, Hinted::Producer(Arc::clone(&flag), wait));
        let l0 = pool.local(0);
        let (p0, c0, h0) = (Arc::clone(&pool), Arc::clone(&coord), Arc::clone(&hints));
        let h = thread::spawn(move || worker(0, &*p0, l0, &c0, &*h0, &mut ()));
        let s1 = worker(1, &*pool, l1, &coord, &*hints, &mut ());
        let s0 = h.join().unwrap();
        assert!(
            flag.load(Ordering::Acquire),
            "the phase ended with a hinted task waiting"
        );
        assert_eq!(s0.tasks_run + s1.tasks_run, 2);
        assert_eq!(s0.puts + s1.puts, 1);
        assert!(!hints.has_incoming_for_test(), "an inbox is not empty");
    });
}

#[test]
fn loom_a_hinted_put_wakes_the_other_place_on_empty() {
    hint_model(WakePolicy::OnEmpty, true, HintBug::None);
}

#[test]
fn loom_a_hinted_put_wakes_the_other_place_every_put() {
    hint_model(WakePolicy::EveryPut, true, HintBug::None);
}

#[test]
fn loom_a_hinted_put_reaches_a_spinning_worker() {
    hint_model(WakePolicy::Spin, true, HintBug::None);
}

#[test]
fn loom_no_early_termination_with_a_hinted_put() {
    hint_model(WakePolicy::OnEmpty, false, HintBug::None);
}

/// Test of the test: idle workers that ignore the inboxes end the phase with the hinted child
/// still waiting; the model must find it.
#[test]
#[should_panic(expected = "the phase ended with a hinted task waiting")]
fn loom_finds_the_hinted_task_left_when_idle_workers_ignore_inboxes() {
    hint_model(WakePolicy::OnEmpty, false, HintBug::IgnoreInboxes);
}

/// Test of the test: the same with only the look before counting oneself idle skipped (the
/// producer's worker counts itself the last idle one while its hint waits for the other).
#[test]
#[should_panic(expected = "the phase ended with a hinted task waiting")]
fn loom_finds_the_hinted_task_left_without_the_look_before_counting_idle() {
    hint_model(WakePolicy::OnEmpty, false, HintBug::SkipEarlyCheck);
}

/// Test of the test: a sleeper that ignores the inboxes never runs the child its producer
/// waits for: the producer spins until loom gives up.
#[test]
#[should_panic(expected = "maximum number of branches")]
fn loom_finds_the_sleeper_that_ignores_inboxes() {
    hint_model(WakePolicy::OnEmpty, true, HintBug::IgnoreInboxes);
}
