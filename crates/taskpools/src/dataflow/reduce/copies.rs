//! A reduction's copies: a slot per worker and one shared, taken and given back by members,
//! folded into the data by the combine (see the module docs).

#[cfg(all(test, loom))]
#[path = "loom_models.rs"]
mod loom_models;

use crossbeam_utils::CachePadded;

use crate::runtime::worker::WorkerThread;
use crate::sync::{lock, Mutex, UnsafeCell};

/// A slot: its copy, if any, and how many copies were taken from it less how many were given
/// back to it. Summed over the slots, the second is the copies still out: a copy never given
/// back (a `Partial` forgotten) shows there, and the combine refuses to fold without it.
struct Held<T> {
    copy: Option<Box<[T]>>,
    out: isize,
}

/// The shared slot, and the copies of members whose view was dropped while unwinding (kept
/// unfolded: folding runs the operator, which must not panic during an unwind).
struct Shared<T> {
    held: Held<T>,
    spilled: Vec<Box<[T]>>,
}

/// Puts `copy` into the empty slot `h`, or takes the copy found there (to fold with).
fn put<T>(h: &mut Held<T>, copy: &mut Option<Box<[T]>>) -> Option<Box<[T]>> {
    match h.copy {
        None => {
            h.copy = copy.take();
            None
        }
        Some(_) => h.copy.take(),
    }
}

/// A reduction's private copies and how to fold them: `identity` starts a copy, `op(acc, x)`
/// folds `x` into `acc`.
pub(crate) struct Reducer<T, F> {
    identity: T,
    len: usize,
    op: F,
    /// The address of the scope's runtime: its workers use their own slots.
    registry: usize,
    /// One per worker of the scope's runtime. While the group runs, slot `i` is touched only
    /// by worker `i` (the one thread that is it); the combine touches every slot after every
    /// member has completed.
    own: Box<[CachePadded<UnsafeCell<Held<T>>>]>,
    /// The slot of every other thread (a member's copy dropped on a thread of its own), the
    /// copies dropped while unwinding, and under loom the models' shared slot.
    other: CachePadded<Mutex<Shared<T>>>,
}

// SAFETY: the copies move between threads (`T: Send`) and `identity` is cloned from several
// (`T: Sync`), the operator is called from several (`F: Sync`); the slots' cells are touched
// as the field's comment says, which orders every two touches of one cell: by one thread, or
// by a member's thread before its completion and the combine after (the completion is a
// Release, the combine's readiness an Acquire).
unsafe impl<T: Send + Sync, F: Send + Sync> Sync for Reducer<T, F> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync, F: Send + Sync> Send for Reducer<T, F> {}

/// Which slot a thread uses: its own, as worker `i` of the scope's runtime, or the shared one.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Slot {
    Own(usize),
    Other,
}

impl<T, F> Reducer<T, F>
where
    T: Clone + Send + Sync,
    F: Fn(&mut T, T) + Send + Sync,
{
    /// A reducer of `len` elements for the `workers` workers of runtime `registry` (its
    /// address).
    pub(crate) fn new(identity: T, op: F, len: usize, registry: usize, workers: usize) -> Self {
        Reducer {
            identity,
            len,
            op,
            registry,
            own: (0..workers)
                .map(|_| CachePadded::new(UnsafeCell::new(Held { copy: None, out: 0 })))
                .collect(),
            other: CachePadded::new(Mutex::new(Shared {
                held: Held { copy: None, out: 0 },
                spilled: Vec::new(),
            })),
        }
    }

    /// The slot of the current thread.
    pub(crate) fn here(&self) -> Slot {
        match WorkerThread::current() {
            Some(w)
                if std::ptr::from_ref::<crate::runtime::Registry>(&w.registry) as usize
                    == self.registry
                    && w.index < self.own.len() =>
            {
                Slot::Own(w.index)
            }
            _ => Slot::Other,
        }
    }

    /// Takes the copy in `slot`, or makes a fresh one of identity values.
    ///
    /// # Safety
    /// `Slot::Own(i)`: the caller is worker `i` of the reducer's runtime, or (the models) the
    /// one thread that uses slot `i`.
    pub(crate) unsafe fn take(&self, slot: Slot) -> Box<[T]> {
        let take = |h: &mut Held<T>| {
            h.out += 1;
            h.copy.take()
        };
        let found = match slot {
            // SAFETY: per the contract, only this thread touches the cell now.
            Slot::Own(i) => self.own[i].with_mut(|c| take(unsafe { &mut *c })),
            Slot::Other => take(&mut lock(&self.other).held),
        };
        found.unwrap_or_else(|| vec![self.identity.clone(); self.len].into_boxed_slice())
    }

    /// Gives `copy` back to `slot`: into it if it is empty, else folded with the copy found
    /// there (outside the cell and the lock: the operator is the user's code).
    ///
    /// # Safety
    /// As for [`take`](Self::take).
    pub(crate) unsafe fn give_back(&self, slot: Slot, copy: Box<[T]>) {
        let mut copy = Some(copy);
        loop {
            // Counted back when it is stored: a fold below that panics leaves it counted out,
            // and the combine refuses to fold without it.
            let mut put_counted = |h: &mut Held<T>| {
                let found = put(h, &mut copy);
                if found.is_none() {
                    h.out -= 1;
                }
                found
            };
            let found = match slot {
                // SAFETY: per the contract, only this thread touches the cell now.
                Slot::Own(i) => self.own[i].with_mut(|c| put_counted(unsafe { &mut *c })),
                Slot::Other => put_counted(&mut lock(&self.other).held),
            };
            let (Some(found), Some(c)) = (found, copy.as_mut()) else {
                return;
            };
            // Another member's copy: fold it into ours and try again (the slot may have
            // been refilled meanwhile, by a member nested in the operator's code).
            fold(&self.op, c, found);
        }
    }

    /// Keeps `copy`, dropped while unwinding, for the combine, without folding it (no user
    /// code runs).
    pub(crate) fn spill(&self, copy: Box<[T]>) {
        let mut o = lock(&self.other);
        o.held.out -= 1;
        o.spilled.push(copy);
    }

    /// Folds every slot's copy into `data` (the part's elements) and empties the slots.
    /// Panics, leaving `data` as it was, if a copy taken was never given back.
    ///
    /// # Safety
    /// Every member of the group has completed, and this happens after (a Release and an
    /// Acquire between each completion and this call).
    pub(crate) unsafe fn combine_into(&self, data: &mut [T]) {
        let mut copies = Vec::new();
        let mut out = 0isize;
        for s in self.own.iter() {
            // SAFETY: per the contract, no member touches the cells any more.
            s.with_mut(|c| {
                let h = unsafe { &mut *c };
                out += h.out;
                copies.extend(h.copy.take());
            });
        }
        {
            let mut o = lock(&self.other);
            out += o.held.out;
            copies.extend(o.held.copy.take());
            copies.append(&mut o.spilled);
        }
        assert!(
            out == 0,
            "taskpools::dataflow: {out} private copies of a reduction were never given back \
             (a Partial forgotten or leaked, or an operator that panicked while folding two \
             copies): their contributions are lost, so the data is left as it was"
        );
        for c in copies {
            fold(&self.op, data, c);
        }
    }
}

/// `acc[i] = op(acc[i], x[i])` for every element.
fn fold<T, F: Fn(&mut T, T)>(op: &F, acc: &mut [T], x: Box<[T]>) {
    for (a, x) in acc.iter_mut().zip(x.into_vec()) {
        op(a, x);
    }
}

/// What a member's view needs of its reducer, without the operator's type.
pub(crate) trait Home<T>: Sync {
    /// Gives `copy` back to the current thread's slot.
    fn give_back_here(&self, copy: Box<[T]>);
    /// Keeps `copy`, dropped while unwinding, unfolded.
    fn spill(&self, copy: Box<[T]>);
}

/// The home of an empty reduction's copies: none is kept (there is nothing to fold).
pub(crate) struct Nowhere;

impl<T> Home<T> for Nowhere {
    fn give_back_here(&self, _: Box<[T]>) {}
    fn spill(&self, _: Box<[T]>) {}
}

impl<T, F> Home<T> for Reducer<T, F>
where
    T: Clone + Send + Sync,
    F: Fn(&mut T, T) + Send + Sync,
{
    fn give_back_here(&self, copy: Box<[T]>) {
        // SAFETY: the current thread's own slot, if any.
        unsafe { self.give_back(self.here(), copy) }
    }
    fn spill(&self, copy: Box<[T]>) {
        Reducer::spill(self, copy);
    }
}

/// What the combine task needs of its reducer, without its types.
pub(crate) trait Combine: Send + Sync {
    /// # Safety
    /// `data` points at the reducer's `len` elements, which nothing else touches meanwhile;
    /// as for [`Reducer::combine_into`].
    unsafe fn combine(&self, data: *mut u8);
}

impl<T, F> Combine for Reducer<T, F>
where
    T: Clone + Send + Sync,
    F: Fn(&mut T, T) + Send + Sync,
{
    unsafe fn combine(&self, data: *mut u8) {
        // SAFETY: per the contract, `len` elements of `T`, exclusively ours.
        let data = unsafe { std::slice::from_raw_parts_mut(data.cast::<T>(), self.len) };
        // SAFETY: called by the combine task, which runs after every member completed.
        unsafe { self.combine_into(data) };
    }
}
