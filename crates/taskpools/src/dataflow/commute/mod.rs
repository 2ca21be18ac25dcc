//! The lock of a commutative group: OmpSs-2's `commutative` and OpenMP's `mutexinoutset`
//! accesses run one at a time, in any order (Perez, Beltran, Labarta & Ayguadé, *Improving
//! the integration of task nesting and dependencies in OpenMP*, IPDPS 2017, and the OmpSs-2
//! specification's "commutative" dependence type).
//!
//! The analysis does not order the members of a commutative group against each other (see the
//! look-up table's module docs); it gives the group a lock, and a member that its
//! dependences have released takes the locks of all its commutative groups before it runs.
//! Nobody blocks: a task that finds a lock held is queued on that lock and its worker goes on
//! with other work; the holder, as it unlocks, hands every task queued since back to the
//! scheduler, and each tries again. So a commutative task that cannot run yet holds back no
//! other task, and a ready one runs as soon as the lock is free.
//!
//! **Protocol.** One word per lock: null (free), `HELD` (held, nobody queued) or the head of
//! a stack of queued tasks (held). Locking is a compare-and-swap from null. Queuing reads
//! the word and, if it is not null, links the task above the current head and
//! compare-and-swaps it in; a word that changed in between (the holder unlocked, or another
//! task queued) is read again, and if it is now null the task takes the lock instead.
//! Unlocking swaps null in and walks what it took out. Queue and unlock are both
//! read-modify-writes of the word, so one comes first: either the task is in the stack the
//! unlock takes (and is handed back), or its compare-and-swap fails and it sees the lock
//! free. No task is left queued on a free lock, and none is handed back twice.
//!
//! **Several locks.** A task with several commutative groups takes their locks in address
//! order with `try_lock`, and at the first that is held it gives back those it has (handing
//! back their queued tasks) and queues on that one: it holds no lock while it waits, so
//! tasks never wait on each other in a circle.
//!
//! The loom models in `loom_models.rs` check both, each with a planted bug that must fail.

#[cfg(all(test, loom))]
mod loom_models;

use crate::sync::{AtomicPtr, Ordering, UnsafeCell};

/// The link of a task queued on a lock: a task waits on at most one lock at a time.
pub(crate) struct Waiter {
    next: UnsafeCell<*mut Waiter>,
}

impl Waiter {
    pub(crate) fn new() -> Waiter {
        Waiter {
            next: UnsafeCell::new(std::ptr::null_mut()),
        }
    }
}

/// "Held, nobody queued": an aligned address no waiter can have (a static that holds none).
static HELD: u64 = 0;

fn held() -> *mut Waiter {
    std::ptr::addr_of!(HELD).cast_mut().cast()
}

/// The lock of one commutative group (see the module docs).
pub(crate) struct CommuteLock {
    word: AtomicPtr<Waiter>,
}

impl CommuteLock {
    pub(crate) fn new() -> CommuteLock {
        CommuteLock {
            word: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Takes the lock if it is free (Acquire: the last holder's writes are visible).
    pub(crate) fn try_lock(&self) -> bool {
        self.word
            .compare_exchange(
                std::ptr::null_mut(),
                held(),
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    /// Takes the lock if it is free (returns true); else queues `w`, to be handed back by
    /// the holder's [`unlock`](Self::unlock) (returns false).
    ///
    /// # Safety
    /// `w` is valid, queued on no lock, and stays valid until it is handed back.
    pub(crate) unsafe fn lock_or_queue(&self, w: *mut Waiter) -> bool {
        let mut h = self.word.load(Ordering::Relaxed);
        loop {
            if h.is_null() {
                match self.word.compare_exchange_weak(
                    h,
                    held(),
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return true,
                    Err(now) => h = now,
                }
                continue;
            }
            let below = if h == held() { std::ptr::null_mut() } else { h };
            // SAFETY: `w` is not published yet (queued nowhere), so this thread is its only
            // user.
            unsafe { (*w).next.with_mut(|n| *n = below) };
            match self
                .word
                .compare_exchange_weak(h, w, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return false,
                Err(now) => h = now,
            }
        }
    }

    /// Releases the lock (Release: the holder's writes happen before the next holder's
    /// `try_lock`), and calls `wake` on every task queued since, newest first: each must try
    /// again (Acquire: every queued link is visible).
    ///
    /// # Safety
    /// The caller holds the lock.
    pub(crate) unsafe fn unlock(&self, wake: &mut dyn FnMut(*mut Waiter)) {
        let mut n = self.word.swap(std::ptr::null_mut(), Ordering::AcqRel);
        debug_assert!(!n.is_null(), "a commutative lock released twice");
        if n == held() {
            return;
        }
        while !n.is_null() {
            // SAFETY: a waiter queued by `lock_or_queue`, valid until handed back; its link
            // is read before `wake`, which may let it run (and queue itself again).
            let next = unsafe { (*n).next.with(|p| *p) };
            wake(n);
            n = next;
        }
    }
}

/// Takes every lock of `locks` (distinct, in address order), or none: returns true with all
/// of them held, or false with none held and `w` queued on one of them (see the module
/// docs). `wake` takes the tasks handed back by the locks given back on the way.
///
/// # Safety
/// Every lock is alive; `w` as for [`CommuteLock::lock_or_queue`].
pub(crate) unsafe fn lock_all(
    locks: &[*const CommuteLock],
    w: *mut Waiter,
    wake: &mut dyn FnMut(*mut Waiter),
) -> bool {
    'again: loop {
        for (i, &l) in locks.iter().enumerate() {
            // SAFETY: alive, per the contract.
            let l = unsafe { &*l };
            if l.try_lock() {
                continue;
            }
            // SAFETY: locks `..i` were taken just above; `w` per the contract.
            unsafe {
                unlock_all(&locks[..i], wake);
                if !l.lock_or_queue(w) {
                    return false;
                }
                // Freed in between: taken, but out of order; give it back and start again.
                l.unlock(wake);
            }
            continue 'again;
        }
        return true;
    }
}

/// Releases every lock of `locks`, handing their queued tasks to `wake`.
///
/// # Safety
/// The caller holds them all.
pub(crate) unsafe fn unlock_all(locks: &[*const CommuteLock], wake: &mut dyn FnMut(*mut Waiter)) {
    for &l in locks {
        // SAFETY: held by the caller, alive.
        unsafe { (*l).unlock(wake) };
    }
}
