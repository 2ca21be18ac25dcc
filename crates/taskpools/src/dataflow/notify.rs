//! The two places where data-flow tasks meet other threads (seed 002 §2.1): a task's *notify
//! list* and its *dependence counter*.
//!
//! **Notify list** (§3.4.2). A stack of the successors waiting for a task. Only the spawning
//! parent pushes (it is the one thread that runs the dependence analysis of its children),
//! and only the task itself, once, when it completes, takes the whole list by swapping in the
//! closing sentinel (the seed's "lock" node; two of them here, one for a task that completed
//! and one for a task that failed, so that a later dependent is cancelled either way). A push
//! reads the head and compare-and-swaps its node in; if the head is a sentinel the push fails,
//! which tells the parent that the predecessor has already completed (or failed), so there is
//! no dependence to wait for. Push and close
//! are both read-modify-writes of the head, so one of them comes first in its modification
//! order: either the push is in the list the completing task takes (and it will fire it), or
//! the push saw the sentinel (and the parent counts no edge). Nothing in between, so no
//! notification is lost and none is delivered twice.
//!
//! **Dependence counter**. The seed keeps two counters, the dependences found at spawn and
//! the ones fired so far, and runs the task when they are equal; read naively that check
//! races (the parent may still be counting while predecessors fire, and two threads can both
//! see equality). Here one signed counter holds `found - fired`: it starts at zero, every
//! fire subtracts one, and the parent adds the number of edges it registered once, after the
//! last one. Before that add, the counter is at most zero, so no fire can see it fall to
//! zero; the add itself, or after it exactly the fire that takes it from one to zero, is the
//! one operation that makes the task ready. Both are read-modify-writes with AcqRel, so the
//! thread that readies the task has seen everything every predecessor did.
//!
//! Loom models (below) check both, each with a planted bug that the model must catch.

use crate::sync::{AtomicIsize, AtomicPtr, Ordering, UnsafeCell};

/// A node of a notify list: one successor of the list's task.
pub(crate) struct NotifyNode {
    /// The successor (a task descriptor, type-erased here).
    pub(crate) succ: *const (),
    /// The node below in the list, set by the push before it publishes the node.
    next: UnsafeCell<*mut NotifyNode>,
}

impl NotifyNode {
    pub(crate) fn new(succ: *const ()) -> NotifyNode {
        NotifyNode {
            succ,
            next: UnsafeCell::new(std::ptr::null_mut()),
        }
    }
}

/// The closing sentinels: distinct aligned addresses that no node can have (nodes are real
/// allocations; these point into a static that holds no node). One says the task completed,
/// the other that it failed (panicked or was cancelled), so a spawn that finds the list
/// closed still learns whether its predecessor's data can be trusted.
static SENTINELS: [u64; 2] = [0, 0];

fn closed(failed: bool) -> *mut NotifyNode {
    std::ptr::addr_of!(SENTINELS[usize::from(failed)])
        .cast_mut()
        .cast()
}

/// What a push found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Push {
    /// The node is in the list: the list's task will fire it.
    Pushed,
    /// The task has completed: no dependence.
    Done,
    /// The task failed: the pusher's task must be cancelled.
    Failed,
}

/// A multi-producer single-consumer stack closed once by its consumer.
pub(crate) struct NotifyList {
    head: AtomicPtr<NotifyNode>,
}

impl NotifyList {
    pub(crate) fn new() -> NotifyList {
        NotifyList {
            head: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    fn state(h: *mut NotifyNode) -> Option<Push> {
        if h == closed(false) {
            Some(Push::Done)
        } else if h == closed(true) {
            Some(Push::Failed)
        } else {
            None
        }
    }

    /// Pushes `node` unless the list is closed. A `Done` or `Failed` answer happens after the
    /// close (Acquire on the sentinel), so the caller sees everything the list's task did.
    ///
    /// # Safety
    /// `node` is valid, not in any list, and stays valid until the list is closed and walked.
    pub(crate) unsafe fn push(&self, node: *mut NotifyNode) -> Push {
        let mut h = self.head.load(Ordering::Acquire);
        loop {
            if let Some(closed) = Self::state(h) {
                return closed;
            }
            // SAFETY: the node is not published yet, so this thread is its only user.
            unsafe { (*node).next.with_mut(|n| *n = h) };
            match self
                .head
                .compare_exchange_weak(h, node, Ordering::Release, Ordering::Acquire)
            {
                Ok(_) => return Push::Pushed,
                Err(now) => h = now,
            }
        }
    }

    /// Closes the list (saying whether its task failed) and calls `f` on every successor
    /// pushed before, newest first. Called once, by the list's task as it completes (Release:
    /// what it did happens before any failed push; Acquire: every pushed node's link is
    /// visible).
    ///
    /// # Safety
    /// Called at most once; the nodes pushed are still valid.
    pub(crate) unsafe fn close(&self, failed: bool, mut f: impl FnMut(*const ())) {
        let mut n = self.head.swap(closed(failed), Ordering::AcqRel);
        debug_assert!(Self::state(n).is_none(), "a notify list closed twice");
        while !n.is_null() {
            // SAFETY: a node published by a push, valid per `push`'s contract; read its link
            // before `f`, which may let the successor run and its parent free the node.
            let (succ, next) = unsafe { ((*n).succ, (*n).next.with(|p| *p)) };
            f(succ);
            n = next;
        }
    }

    /// `Some` once the list's task has completed (a hint for the analysis: no node needed).
    pub(crate) fn closed_state(&self) -> Option<Push> {
        Self::state(self.head.load(Ordering::Acquire))
    }
}

/// Dependences registered minus dependences fired (see the module docs).
pub(crate) struct DepCounter(AtomicIsize);

impl DepCounter {
    pub(crate) fn new() -> DepCounter {
        DepCounter(AtomicIsize::new(0))
    }

    /// The parent has registered `found` edges and will register no more. Returns whether the
    /// task is ready now (it is then the parent's to schedule).
    pub(crate) fn arm(&self, found: usize) -> bool {
        let found = found as isize;
        self.0.fetch_add(found, Ordering::AcqRel) + found == 0
    }

    /// One predecessor completed. Returns whether that made the task ready (it is then the
    /// caller's to schedule).
    pub(crate) fn fire(&self) -> bool {
        self.0.fetch_sub(1, Ordering::AcqRel) == 1
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use crate::sync::{Arc, AtomicBool, AtomicUsize};

    /// A task for the models: its output, its notify list, its counter and its cancel flag.
    struct T {
        out: UnsafeCell<u64>,
        list: NotifyList,
        deps: DepCounter,
        cancelled: AtomicBool,
    }

    // SAFETY (test): the models access `out` under the protocol being checked; loom reports
    // any access that the protocol does not order.
    unsafe impl Send for T {}
    unsafe impl Sync for T {}

    impl T {
        fn new() -> T {
            T {
                out: UnsafeCell::new(0),
                list: NotifyList::new(),
                deps: DepCounter::new(),
                cancelled: AtomicBool::new(false),
            }
        }
    }

    /// Runs the successor: reads every predecessor's output (loom checks each read is ordered
    /// after the write), checks it learned of a failed predecessor, and counts the run.
    fn run_succ(preds: &[Arc<T>], succ: &T, failed: bool, runs: &AtomicUsize) {
        for p in preds {
            // SAFETY (test): ordered by the protocol, or loom reports a race.
            let v = p.out.with(|x| unsafe { *x });
            assert_eq!(v, 7, "the successor ran before a predecessor's output");
        }
        assert_eq!(
            succ.cancelled.load(Ordering::Relaxed),
            failed,
            "the successor must know whether a predecessor failed"
        );
        runs.fetch_add(1, Ordering::Relaxed);
    }

    /// The predecessor: writes its output, completes (closes its list, failed or not), fires
    /// its successors.
    /// `one_sentinel` is a planted bug: the list is closed as completed even when it failed.
    fn complete(
        p: &T,
        preds: &[Arc<T>],
        succ: &T,
        runs: &AtomicUsize,
        (failed, relaxed, one_sentinel): (bool, bool, bool),
    ) {
        // SAFETY (test): only this thread writes `out`.
        p.out.with_mut(|x| unsafe { *x = 7 });
        // SAFETY (test): closed once, nodes alive for the whole model.
        unsafe {
            p.list.close(failed && !one_sentinel, |s| {
                assert_eq!(s, succ as *const T as *const ());
                if failed {
                    succ.cancelled.store(true, Ordering::Relaxed);
                }
                let ready = if relaxed {
                    succ.deps.0.fetch_sub(1, Ordering::Relaxed) == 1
                } else {
                    succ.deps.fire()
                };
                if ready {
                    run_succ(preds, succ, failed, runs);
                }
            })
        };
    }

    /// The parent's side of an edge: push, and on a closed list note a failure.
    fn register(pred: &T, succ: &T, node: *mut NotifyNode) -> usize {
        // SAFETY (test): the node lives until the end of the model.
        match unsafe { pred.list.push(node) } {
            Push::Pushed => 1,
            Push::Done => 0,
            Push::Failed => {
                succ.cancelled.store(true, Ordering::Relaxed);
                0
            }
        }
    }

    /// A spawn racing the completion (or failure) of the task it depends on: the successor
    /// runs exactly once, after the predecessor's output, knowing whether it failed.
    fn spawn_racing_completion(broken_push: bool, failed: bool, one_sentinel: bool) {
        loom::model(move || {
            let pred = Arc::new(T::new());
            let succ = Arc::new(T::new());
            let runs = Arc::new(AtomicUsize::new(0));
            let node = Box::into_raw(Box::new(NotifyNode::new(&*succ as *const T as *const ())));
            let t = {
                let (pred, succ, runs) = (pred.clone(), succ.clone(), runs.clone());
                loom::thread::spawn(move || {
                    complete(
                        &pred,
                        std::slice::from_ref(&pred),
                        &succ,
                        &runs,
                        (failed, false, one_sentinel),
                    );
                })
            };
            let found = if broken_push {
                // Planted bug: a blind push that does not look for the sentinel.
                let h = pred.list.head.load(Ordering::Acquire);
                // SAFETY (test): unpublished node.
                unsafe { (*node).next.with_mut(|n| *n = h) };
                usize::from(
                    pred.list
                        .head
                        .compare_exchange(h, node, Ordering::Release, Ordering::Acquire)
                        .is_ok(),
                )
            } else {
                register(&pred, &succ, node)
            };
            if succ.deps.arm(found) {
                run_succ(std::slice::from_ref(&pred), &succ, failed, &runs);
            }
            t.join().unwrap();
            assert_eq!(
                runs.load(Ordering::Relaxed),
                1,
                "the successor must run once"
            );
            // SAFETY (test): every thread is done with the node.
            drop(unsafe { Box::from_raw(node) });
        });
    }

    #[test]
    fn loom_notify_list_spawn_racing_completion() {
        spawn_racing_completion(false, false, false);
    }

    #[test]
    fn loom_notify_list_spawn_racing_a_failure_is_cancelled() {
        spawn_racing_completion(false, true, false);
    }

    #[test]
    #[should_panic]
    fn loom_notify_list_one_sentinel_lets_a_late_dependent_of_a_failure_run() {
        spawn_racing_completion(false, true, true);
    }

    #[test]
    #[should_panic]
    fn loom_notify_list_blind_push_loses_the_successor() {
        spawn_racing_completion(true, false, false);
    }

    /// A task whose last two predecessors complete at the same time, while the parent is still
    /// registering the edges: it runs exactly once, after both outputs.
    fn two_predecessors_at_once(relaxed: bool) {
        loom::model(move || {
            let preds = [Arc::new(T::new()), Arc::new(T::new())];
            let succ = Arc::new(T::new());
            let runs = Arc::new(AtomicUsize::new(0));
            let nodes: Vec<*mut NotifyNode> = (0..2)
                .map(|_| Box::into_raw(Box::new(NotifyNode::new(&*succ as *const T as *const ()))))
                .collect();
            let ts: Vec<_> = (0..2)
                .map(|i| {
                    let (preds, succ, runs) = (preds.clone(), succ.clone(), runs.clone());
                    loom::thread::spawn(move || {
                        complete(&preds[i], &preds, &succ, &runs, (false, relaxed, false));
                    })
                })
                .collect();
            let found: usize = preds
                .iter()
                .zip(&nodes)
                .map(|(p, &n)| register(p, &succ, n))
                .sum();
            if succ.deps.arm(found) {
                run_succ(&preds, &succ, false, &runs);
            }
            for t in ts {
                t.join().unwrap();
            }
            assert_eq!(
                runs.load(Ordering::Relaxed),
                1,
                "the successor must run once"
            );
            for n in nodes {
                // SAFETY (test): every thread is done with the nodes.
                drop(unsafe { Box::from_raw(n) });
            }
        });
    }

    #[test]
    fn loom_dep_counter_two_predecessors_at_once() {
        two_predecessors_at_once(false);
    }

    #[test]
    #[should_panic]
    fn loom_dep_counter_relaxed_fire_races_on_the_output() {
        two_predecessors_at_once(true);
    }

    /// The seed's two counters read naively: the parent stores how many edges it found, a
    /// completing predecessor adds one to `fired` and runs the task if the two are equal, and
    /// the parent does the same check after its store. Both may see equality.
    #[test]
    #[should_panic]
    fn loom_two_counters_checked_naively_run_the_task_twice() {
        loom::model(|| {
            let waitfor = Arc::new(AtomicUsize::new(usize::MAX));
            let fired = Arc::new(AtomicUsize::new(0));
            let runs = Arc::new(AtomicUsize::new(0));
            let t = {
                let (waitfor, fired, runs) = (waitfor.clone(), fired.clone(), runs.clone());
                loom::thread::spawn(move || {
                    let f = fired.fetch_add(1, Ordering::AcqRel) + 1;
                    if f == waitfor.load(Ordering::Acquire) {
                        runs.fetch_add(1, Ordering::Relaxed);
                    }
                })
            };
            waitfor.store(1, Ordering::Release);
            if fired.load(Ordering::Acquire) == waitfor.load(Ordering::Acquire) {
                runs.fetch_add(1, Ordering::Relaxed);
            }
            t.join().unwrap();
            assert_eq!(runs.load(Ordering::Relaxed), 1, "the task must run once");
        });
    }
}
