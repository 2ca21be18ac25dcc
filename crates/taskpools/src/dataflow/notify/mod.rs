//! The two places where data-flow tasks meet other threads (Papakonstantinou, PARTEE (2015),
//! §2.1): a task's *notify list* and its *dependence counter*.
//!
//! **Notify list** (§3.4.2). A stack of the successors waiting for a task. Only the spawning
//! parent pushes (it is the one thread that runs the dependence analysis of its children),
//! and only the task itself, once, when it completes, takes the whole list by swapping in the
//! closing sentinel (PARTEE's "lock" node; two of them here, one for a task that completed
//! and one for a task that failed, so that a later dependent is cancelled either way). A push
//! reads the head and compare-and-swaps its node in; if the head is a sentinel the push fails,
//! which tells the parent that the predecessor has already completed (or failed), so there is
//! no dependence to wait for. Push and close
//! are both read-modify-writes of the head, so one of them comes first in its modification
//! order: either the push is in the list the completing task takes (and it will fire it), or
//! the push saw the sentinel (and the parent counts no edge). Nothing in between, so no
//! notification is lost and none is delivered twice.
//!
//! **Dependence counter**. PARTEE keeps two counters, the dependences found at spawn and
//! the ones fired so far, and runs the task when they are equal; read naively that check
//! races (the parent may still be counting while predecessors fire, and two threads can both
//! see equality). Here one signed counter holds `found - fired`: it starts at zero, every
//! fire subtracts one, and the parent adds the number of edges it registered once, after the
//! last one. Before that add, the counter is at most zero, so no fire can see it fall to
//! zero; the add itself, or after it exactly the fire that takes it from one to zero, is the
//! one operation that makes the task ready. Both are read-modify-writes with AcqRel, so the
//! thread that readies the task has seen everything every predecessor did.
//!
//! Loom models (`loom_models.rs`) check both, each with a planted bug that the model must catch.

#[cfg(all(test, loom))]
mod loom_models;

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

    #[inline]
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
    #[inline(always)]
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
    #[inline]
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

    /// Whether the task is ready, once armed (Acquire: what its predecessors did is visible).
    pub(crate) fn is_ready(&self) -> bool {
        self.0.load(Ordering::Acquire) == 0
    }

    /// One more edge into a counter already armed and not yet ready (a weak access's release
    /// gate, `weak`: its parent's body holds one edge until it ends, so the counter cannot
    /// reach zero meanwhile). Called before the edge's node is pushed, so the fire it
    /// balances comes after it.
    pub(crate) fn retain(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// One predecessor completed. Returns whether that made the task ready (it is then the
    /// caller's to schedule).
    pub(crate) fn fire(&self) -> bool {
        self.0.fetch_sub(1, Ordering::AcqRel) == 1
    }
}
