//! A worker's frame stack: the private deque of the `private-deque` pool, kept as an
//! intrusive doubly linked list through the jobs themselves (their [`JobHeader`]s), so that a
//! fork costs a few stores into memory that is already in cache and a join's check afterwards
//! is one load.
//!
//! Only the owner thread touches it. Thieves reach it through steal requests
//! ([`crate::queue::private_deque::StealRequests`]): the owner answers with
//! [`take_oldest`](FrameStack::take_oldest). Invariants:
//! - The list holds exactly the queued jobs, oldest next to the root sentinel, newest at
//!   `head`. A job leaves it when the owner pops it ([`pop`](FrameStack::pop) or
//!   [`take_back`](FrameStack::take_back)) or hands it to a thief (`take_oldest`); its
//!   `state` then says which (`POPPED`, `TAKEN`).
//! - Jobs are pushed and popped in LIFO order by the owner. Only joins queue jobs here (scope
//!   spawns go to the worker's public spawn deque), and a join pops or takes back its own job
//!   before it returns, so a join whose job is still `QUEUED` after its first half finds it at
//!   `head`; the join's slow path still runs any job above it first, should one be there.
//! - `next` is valid for every job below `head` (the push of the job above set it); it is not
//!   read for `head` itself.
//! - `len` is the number of queued jobs: every write of `head` that links or unlinks one job
//!   adjusts it (push, pop, take_back, take_oldest), so it is zero exactly when `head` is the
//!   root. `join` reads it to decide whether to queue at all.

use std::cell::Cell;
use std::mem::MaybeUninit;
use std::ptr::NonNull;

use crossbeam_utils::CachePadded;

use super::job::{JobHeader, JobRef, POPPED, QUEUED, TAKEN};

pub(crate) struct FrameStack {
    /// The sentinel below the oldest job (on the heap: it must not move with the stack;
    /// padded: the workers' roots are allocated together, and each owner writes its own).
    /// Owned (from `Box::leak`, freed by `drop`): a raw pointer, not a `Box`, because the
    /// list points into it, and moving a `Box` (as moving the stack does) asserts that nothing
    /// else does (Miri's Stacked Borrows rejects the `Box`).
    root: NonNull<CachePadded<JobHeader>>,
    head: Cell<*const JobHeader>,
    /// Jobs queued.
    len: Cell<u32>,
    /// Loom-only switch for a test of the tests: `take_oldest` hands the oldest job out but
    /// leaves it linked, so the owner can pop it too.
    #[cfg(loom)]
    pub(crate) broken_keep_oldest_linked: Cell<bool>,
}

// SAFETY: a frame stack is created empty and moved to its owner thread before any job is
// pushed; from then on only that thread uses it (it is not `Sync`). The raw pointers it holds
// are to jobs that live on that thread's stack or are owned by the stack until popped.
unsafe impl Send for FrameStack {}

impl FrameStack {
    pub(crate) fn new() -> Self {
        let root = NonNull::from(Box::leak(Box::new(CachePadded::new(JobHeader::root()))));
        // SAFETY: `root` was just allocated and is freed only by `drop`.
        let head = Cell::new(unsafe { &**root.as_ptr() } as *const JobHeader);
        FrameStack {
            root,
            head,
            len: Cell::new(0),
            #[cfg(loom)]
            broken_keep_oldest_linked: Cell::new(false),
        }
    }

    #[inline(always)]
    fn root(&self) -> *const JobHeader {
        // SAFETY: the root lives until `drop`; only shared references to it are made, and its
        // fields are cells.
        unsafe { &**self.root.as_ptr() }
    }

    /// Jobs queued.
    #[inline(always)]
    pub(crate) fn len(&self) -> u32 {
        self.len.get()
    }

    /// Whether no job is queued.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        let empty = self.head.get() == self.root();
        debug_assert_eq!(empty, self.len.get() == 0, "len counts the queued jobs");
        empty
    }

    /// Queues `h` as the newest job; returns whether the stack was empty before.
    ///
    /// # Safety
    /// `h` is the header of a live job that stays in place until it leaves the stack, and is
    /// not queued anywhere else.
    #[inline(always)]
    pub(crate) unsafe fn push(&self, h: *const JobHeader) -> bool {
        let top = self.head.get();
        // SAFETY: `h` is live (contract); `top` is the root or a queued job, live until it
        // leaves the stack.
        unsafe {
            (*h).prev.set(top);
            (*h).set_state(QUEUED);
            (*top).next.set(MaybeUninit::new(h));
        }
        self.head.set(h);
        self.len.set(self.len.get() + 1);
        top == self.root()
    }

    /// After the first half of a join: if the join's own job `h` is queued and the newest,
    /// unlink it and return `true` (the caller runs it). Otherwise (a thief took it, the owner
    /// already popped it, or jobs sit above it) `false`.
    ///
    /// `head == h` alone decides: a job that left the stack is never `head` again while it is
    /// alive (a live job's address is not reused), and the caller's job is alive.
    #[inline(always)]
    pub(crate) fn take_back(&self, h: &JobHeader) -> bool {
        if std::ptr::eq(self.head.get(), h) {
            self.head.set(h.prev.get());
            self.len.set(self.len.get() - 1);
            true
        } else {
            false
        }
    }

    /// Pops the newest job, if any.
    #[inline]
    pub(crate) fn pop(&self) -> Option<JobRef> {
        let h = self.head.get();
        if h == self.root() {
            return None;
        }
        // SAFETY: `h` is a queued job, live until it leaves the stack (now).
        unsafe {
            self.head.set((*h).prev.get());
            self.len.set(self.len.get() - 1);
            (*h).set_state(POPPED);
            Some(JobRef::from_header(h))
        }
    }

    /// Removes the oldest job, for a thief, and marks it `TAKEN`.
    pub(crate) fn take_oldest(&self) -> Option<JobRef> {
        let top = self.head.get();
        let root = self.root();
        if top == root {
            return None;
        }
        // SAFETY: the root and every queued job are live; `o.next` is valid because `o` is
        // below `head` whenever it is read.
        unsafe {
            // The root's `next` was set by the push of the oldest job (the stack is not empty).
            let o = (*root).next.get().assume_init();
            #[cfg(loom)]
            if self.broken_keep_oldest_linked.get() {
                (*o).set_state(TAKEN);
                return Some(JobRef::from_header(o));
            }
            if o == top {
                self.head.set(root);
            } else {
                // `o` is below `head`, so the push of the job above it set `o.next`.
                let n = (*o).next.get().assume_init();
                (*root).next.set(MaybeUninit::new(n));
                (*n).prev.set(root);
            }
            self.len.set(self.len.get() - 1);
            (*o).set_state(TAKEN);
            Some(JobRef::from_header(o))
        }
    }
}

impl Drop for FrameStack {
    fn drop(&mut self) {
        // SAFETY: `root` came from `Box::leak` in `new` and is freed only here; the jobs that
        // pointed at it have left the stack or die with it.
        drop(unsafe { Box::from_raw(self.root.as_ptr()) });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::runtime::job::StackJob;

    #[test]
    fn lifo_for_the_owner_oldest_for_thieves() {
        let jobs: Vec<_> = (0..5).map(|i| StackJob::new(move || i)).collect();
        let s = FrameStack::new();
        assert!(s.is_empty());
        for (i, j) in jobs.iter().enumerate() {
            // SAFETY: the jobs outlive the stack's use of them.
            assert_eq!(unsafe { s.push(j.header()) }, i == 0);
        }
        assert_eq!(s.len(), 5);
        assert_eq!(s.take_oldest(), Some(jobs[0].as_job_ref()));
        assert_eq!(jobs[0].header().state(), TAKEN);
        assert_eq!(s.len(), 4);
        assert!(s.take_back(jobs[4].header()));
        assert_eq!(s.len(), 3);
        assert_eq!(s.pop(), Some(jobs[3].as_job_ref()));
        assert_eq!(jobs[3].header().state(), POPPED);
        assert_eq!(s.take_oldest(), Some(jobs[1].as_job_ref()));
        assert!(
            !s.take_back(jobs[1].header()),
            "a taken job is not taken back"
        );
        assert_eq!(s.take_oldest(), Some(jobs[2].as_job_ref()));
        assert!(s.is_empty());
        assert_eq!(s.len(), 0);
        assert_eq!(s.take_oldest(), None);
        assert_eq!(s.pop(), None);
        // SAFETY: as above.
        unsafe { s.push(jobs[3].header()) };
        assert_eq!(s.pop(), Some(jobs[3].as_job_ref()));
        assert!(s.is_empty());
        // A job with another above it is not taken back until that one is gone.
        // SAFETY: as above.
        unsafe {
            s.push(jobs[3].header());
            s.push(jobs[4].header());
        }
        assert!(!s.take_back(jobs[3].header()));
        assert_eq!(s.len(), 2, "a failed take_back changes nothing");
        assert_eq!(s.pop(), Some(jobs[4].as_job_ref()));
        assert!(s.take_back(jobs[3].header()));
        assert!(s.is_empty());
        assert_eq!(s.len(), 0);
    }
}
