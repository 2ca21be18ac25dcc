//! A test-and-test-and-set spin lock (Korch & Rauber (2002), §4.3), used by the "Spin Lock"
//! deque baseline of Papakonstantinou, PARTEE (2015), Table 3.1. Waiters spin on a plain load
//! with exponential backoff and try the atomic swap only when the lock looks free.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};

use crate::sync::{AtomicBool, Backoff, Ordering};

/// A spin lock protecting a `T`.
pub struct SpinLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the lock gives one thread at a time access to the value.
unsafe impl<T: Send> Send for SpinLock<T> {}
// SAFETY: as above; `&SpinLock` only hands out the value under the lock.
unsafe impl<T: Send> Sync for SpinLock<T> {}

/// Access to the value while the lock is held; unlocks on drop.
pub struct SpinGuard<'a, T> {
    lock: &'a SpinLock<T>,
}

impl<T> SpinLock<T> {
    /// An unlocked lock around `value`.
    pub fn new(value: T) -> Self {
        SpinLock {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Spins until the lock is ours.
    #[inline]
    pub fn lock(&self) -> SpinGuard<'_, T> {
        let backoff = Backoff::new();
        loop {
            if !self.locked.load(Ordering::Relaxed) && !self.locked.swap(true, Ordering::Acquire) {
                return SpinGuard { lock: self };
            }
            backoff.snooze();
        }
    }

    /// The value, through exclusive access (no locking needed).
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }
}

impl<T> Deref for SpinGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard exists only while this thread holds the lock.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for SpinGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as above, and the guard is borrowed mutably.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for SpinGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.locked.store(false, Ordering::Release);
    }
}
