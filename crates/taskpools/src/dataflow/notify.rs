//! The two places where data-flow tasks meet other threads (seed 002 §2.1): a task's *notify
//! list* and its *dependence counter*.
//!
//! **Notify list** (§3.4.2). A stack of the successors waiting for a task. Only the spawning
//! parent pushes (it is the one thread that runs the dependence analysis of its children),
//! and only the task itself, once, when it completes, takes the whole list by swapping in the
//! closing sentinel (the seed's "lock" node). A push reads the head and compare-and-swaps its
//! node in; if the head is the sentinel the push fails, which tells the parent that the
//! predecessor has already completed, so there is no dependence to wait for. Push and close
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

/// The closing sentinel: a dangling, aligned address that no node can have.
fn closed() -> *mut NotifyNode {
    std::ptr::NonNull::dangling().as_ptr()
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

    /// Pushes `node` unless the list is closed; returns whether it did. A `false` happens
    /// after the close (Acquire on the sentinel), so the caller sees everything the list's task
    /// did before it completed.
    ///
    /// # Safety
    /// `node` is valid, not in any list, and stays valid until the list is closed and walked.
    pub(crate) unsafe fn push(&self, node: *mut NotifyNode) -> bool {
        let mut h = self.head.load(Ordering::Acquire);
        loop {
            if h == closed() {
                return false;
            }
            // SAFETY: the node is not published yet, so this thread is its only user.
            unsafe { (*node).next.with_mut(|n| *n = h) };
            match self
                .head
                .compare_exchange_weak(h, node, Ordering::Release, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(now) => h = now,
            }
        }
    }

    /// Closes the list and calls `f` on every successor pushed before, newest first. Called
    /// once, by the list's task as it completes (Release: what it did happens before any
    /// failed push; Acquire: every pushed node's link is visible).
    ///
    /// # Safety
    /// Called at most once; the nodes pushed are still valid.
    pub(crate) unsafe fn close(&self, mut f: impl FnMut(*const ())) {
        let mut n = self.head.swap(closed(), Ordering::AcqRel);
        debug_assert!(n != closed(), "a notify list closed twice");
        while !n.is_null() {
            // SAFETY: a node published by a push, valid per `push`'s contract; read its link
            // before `f`, which may let the successor run and its parent free the node.
            let (succ, next) = unsafe { ((*n).succ, (*n).next.with(|p| *p)) };
            f(succ);
            n = next;
        }
    }

    /// Whether the list's task has completed (a hint for the analysis: no edge is needed).
    pub(crate) fn is_closed(&self) -> bool {
        self.head.load(Ordering::Acquire) == closed()
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
    use crate::sync::{Arc, AtomicUsize};

    /// A task for the models: its output, its notify list and its counter.
    struct T {
        out: UnsafeCell<u64>,
        list: NotifyList,
        deps: DepCounter,
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
            }
        }
    }

    /// Runs the successor: reads every predecessor's output (loom checks each read is ordered
    /// after the write) and counts the run.
    fn run_succ(preds: &[Arc<T>], runs: &AtomicUsize) {
        for p in preds {
            // SAFETY (test): ordered by the protocol, or loom reports a race.
            let v = p.out.with(|x| unsafe { *x });
            assert_eq!(v, 7, "the successor ran before a predecessor's output");
        }
        runs.fetch_add(1, Ordering::Relaxed);
    }

    /// The predecessor: writes its output, completes (closes its list), fires its successors.
    fn complete(p: &T, preds: &[Arc<T>], succ: &T, runs: &AtomicUsize, fire_relaxed: bool) {
        // SAFETY (test): only this thread writes `out`.
        p.out.with_mut(|x| unsafe { *x = 7 });
        // SAFETY (test): closed once, nodes alive for the whole model.
        unsafe {
            p.list.close(|s| {
                assert_eq!(s, succ as *const T as *const ());
                let ready = if fire_relaxed {
                    succ.deps.0.fetch_sub(1, Ordering::Relaxed) == 1
                } else {
                    succ.deps.fire()
                };
                if ready {
                    run_succ(preds, runs);
                }
            })
        };
    }

    /// A spawn racing the completion of the task it depends on: the successor runs exactly
    /// once, after the predecessor's output.
    fn spawn_racing_completion(broken_push: bool) {
        loom::model(move || {
            let pred = Arc::new(T::new());
            let succ = Arc::new(T::new());
            let runs = Arc::new(AtomicUsize::new(0));
            let node = Box::into_raw(Box::new(NotifyNode::new(&*succ as *const T as *const ())));
            let t = {
                let (pred, succ, runs) = (pred.clone(), succ.clone(), runs.clone());
                loom::thread::spawn(move || {
                    complete(&pred, &[pred.clone()], &succ, &runs, false);
                })
            };
            // The parent spawns the successor: one edge if the predecessor is still running.
            let pushed = if broken_push {
                // Planted bug: a blind push that does not look for the sentinel.
                let h = pred.list.head.load(Ordering::Acquire);
                // SAFETY (test): unpublished node.
                unsafe { (*node).next.with_mut(|n| *n = h) };
                pred.list
                    .head
                    .compare_exchange(h, node, Ordering::Release, Ordering::Acquire)
                    .is_ok()
            } else {
                // SAFETY (test): the node lives until the end of the model.
                unsafe { pred.list.push(node) }
            };
            if succ.deps.arm(usize::from(pushed)) {
                run_succ(&[pred.clone()], &runs);
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
        spawn_racing_completion(false);
    }

    #[test]
    #[should_panic]
    fn loom_notify_list_blind_push_loses_the_successor() {
        spawn_racing_completion(true);
    }

    /// A task whose last two predecessors complete at the same time, while the parent is still
    /// registering the edges: it runs exactly once, after both outputs.
    fn two_predecessors_at_once(fire_relaxed: bool) {
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
                        complete(&preds[i], &preds, &succ, &runs, fire_relaxed);
                    })
                })
                .collect();
            let mut found = 0;
            for (p, &n) in preds.iter().zip(&nodes) {
                // SAFETY (test): nodes live until the end of the model.
                found += usize::from(unsafe { p.list.push(n) });
            }
            if succ.deps.arm(found) {
                run_succ(&preds, &runs);
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
