//! The one place where concurrent code gets its atomics, locks and condition variables.
//!
//! Normally these are `std`'s; under `RUSTFLAGS="--cfg loom"` they are loom's, so the code that
//! ships is the code that the loom model tests explore (DESIGN.md, "Conventions").

#[cfg(loom)]
pub(crate) use loom::sync::{
    atomic::{
        fence, AtomicBool, AtomicIsize, AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering,
    },
    Arc, Condvar, Mutex, MutexGuard,
};

#[cfg(not(loom))]
pub(crate) use std::sync::{
    atomic::{
        fence, AtomicBool, AtomicIsize, AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering,
    },
    Arc, Condvar, Mutex, MutexGuard,
};

/// A cell for data that moves between threads (task slots, answers, results).
///
/// Under loom it is loom's `UnsafeCell`, so the models check every access to the data itself
/// against the happens-before order that the atomics build: a missing release/acquire pair shows
/// up as a detected data race, not only as a wrong value. Normally it is a zero-cost wrapper of
/// `std::cell::UnsafeCell` with the same closure-based interface.
#[cfg(loom)]
#[allow(unused_imports)]
pub(crate) use loom::cell::UnsafeCell;

/// A cell for data that moves between threads; see the loom variant above.
#[cfg(not(loom))]
#[derive(Debug, Default)]
#[repr(transparent)]
pub(crate) struct UnsafeCell<T: ?Sized>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
#[allow(dead_code)]
impl<T> UnsafeCell<T> {
    /// Wraps `value`.
    #[inline(always)]
    pub(crate) const fn new(value: T) -> Self {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }

    /// Unwraps the value.
    #[inline(always)]
    pub(crate) fn into_inner(self) -> T {
        self.0.into_inner()
    }
}

#[cfg(not(loom))]
#[allow(dead_code)]
impl<T: ?Sized> UnsafeCell<T> {
    /// Gives `f` a shared raw pointer to the value (a read access under loom).
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Gives `f` a raw pointer to the value (a write access under loom).
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// Locks `m`, ignoring poisoning.
///
/// Pool locks are held only around queue operations, never while a user task runs, so a
/// poisoned lock can only come from a bug in this crate's own queue code; the data it guards
/// is still consistent at every point where a panic could unwind (each operation finishes its
/// pointer updates before anything that could panic).
#[inline]
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Spinning with backoff. Under loom every snooze yields to the model's scheduler and the
/// backoff counts as completed at once, so that the models reach the sleeping path.
#[cfg(not(loom))]
pub(crate) use crossbeam_utils::Backoff;

#[cfg(loom)]
pub(crate) struct Backoff;

#[cfg(loom)]
impl Backoff {
    pub(crate) fn new() -> Self {
        Backoff
    }
    pub(crate) fn snooze(&self) {
        loom::thread::yield_now();
    }
    pub(crate) fn is_completed(&self) -> bool {
        true
    }
    pub(crate) fn reset(&self) {}
}

/// Yields the processor (to loom's scheduler under loom).
#[inline]
pub(crate) fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}

/// A hint inside a spin-wait: `std::hint::spin_loop` (a pause instruction), and under loom a
/// yield, without which loom explores a spin's stale reads without end.
#[inline]
pub(crate) fn spin_loop() {
    #[cfg(loom)]
    loom::hint::spin_loop();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}
