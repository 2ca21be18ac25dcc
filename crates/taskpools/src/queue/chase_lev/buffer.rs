//! The growable circular array of Chase & Lev (SPAA 2005): a power-of-two buffer of slots
//! indexed modulo its capacity, and the capacity limits a deque of `T` can have.

use std::mem::{size_of, MaybeUninit};
use std::ptr;

use crate::sync::UnsafeCell;

/// Smallest capacity (a power of two).
pub const MIN_CAPACITY: usize = 16;

type Slot<T> = UnsafeCell<MaybeUninit<T>>;

/// The largest capacity a deque of `T` can have: the largest power of two whose slots fit in
/// `isize::MAX` bytes (and whose length fits in an `isize` index).
pub fn max_capacity<T>() -> usize {
    let max = isize::MAX as usize / size_of::<Slot<T>>().max(1);
    if max == 0 {
        0
    } else {
        1 << (usize::BITS - 1 - max.leading_zeros())
    }
}

/// `requested` rounded up to a power of two (at least 2), or a panic that names the limit.
pub(super) fn initial_capacity<T>(requested: usize) -> usize {
    let max = max_capacity::<T>();
    match requested.max(2).checked_next_power_of_two() {
        Some(cap) if cap <= max => cap,
        _ => panic!(
            "chase_lev::deque: capacity {requested} exceeds the limit of {max} elements \
             (isize::MAX bytes / {} bytes per slot, rounded down to a power of two)",
            size_of::<Slot<T>>()
        ),
    }
}

/// The capacity after growing from `cap`, or a panic that names the limit.
pub(super) fn grown_capacity<T>(cap: usize) -> usize {
    let max = max_capacity::<T>();
    match cap.checked_mul(2) {
        Some(c) if c <= max => c,
        _ => panic!(
            "chase_lev: cannot grow beyond {cap} elements: the limit is {max} elements \
             (isize::MAX bytes / {} bytes per slot)",
            size_of::<Slot<T>>()
        ),
    }
}

pub(super) struct Buffer<T> {
    pub(super) slots: Box<[Slot<T>]>,
    mask: usize,
}

impl<T> Buffer<T> {
    /// A buffer of `cap` slots; `cap` is a power of two within [`max_capacity`].
    pub(super) fn alloc(cap: usize) -> *mut Buffer<T> {
        debug_assert!(cap.is_power_of_two() && cap <= max_capacity::<T>());
        let mut slots: Vec<Slot<T>> = Vec::new();
        if slots.try_reserve_exact(cap).is_err() {
            panic!(
                "chase_lev: cannot allocate a buffer of {cap} slots ({} bytes)",
                cap * size_of::<Slot<T>>()
            );
        }
        slots.extend((0..cap).map(|_| UnsafeCell::new(MaybeUninit::uninit())));
        Box::into_raw(Box::new(Buffer {
            slots: slots.into_boxed_slice(),
            mask: cap - 1,
        }))
    }

    /// # Safety
    /// `b` must come from `alloc` and not be used afterwards.
    pub(super) unsafe fn free(b: *mut Buffer<T>) {
        // SAFETY: per the contract; the slots hold no owned element (`MaybeUninit`).
        drop(unsafe { Box::from_raw(b) });
    }

    #[inline]
    pub(super) fn cap(&self) -> usize {
        self.mask + 1
    }

    #[inline]
    fn at(&self, i: isize) -> &Slot<T> {
        // SAFETY: the index is reduced modulo the (power-of-two) length.
        unsafe { self.slots.get_unchecked(i as usize & self.mask) }
    }

    /// # Safety
    /// Only the owner writes, and only slots outside `[top, bottom)` as seen by thieves.
    #[inline]
    pub(super) unsafe fn write(&self, i: isize, v: MaybeUninit<T>) {
        // SAFETY: per the contract the slot is not being read as a live element.
        self.at(i).with_mut(|p| unsafe { p.write(v) })
    }

    /// A bitwise copy of slot `i`, not yet owned.
    #[inline]
    pub(super) fn read(&self, i: isize) -> MaybeUninit<T> {
        // SAFETY: the slot lies inside the allocation; reading possibly-uninitialized or
        // concurrently written bytes into a `MaybeUninit` creates no `T` (the `chase_lev` module docs).
        self.at(i).with(|p| unsafe { ptr::read_volatile(p) })
    }
}
