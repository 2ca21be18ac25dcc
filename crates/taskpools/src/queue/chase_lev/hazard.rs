//! The announcements that let an owner free a retired buffer without thieves paying a
//! read-modify-write (the `chase_lev` module docs, "Growth and reclamation"): one
//! [`Record`] per thread, in a process-wide list that only grows; a thief stores into its own
//! record the deque whose buffer it is about to read and clears it after its last read; an
//! owner reads the records only when it wants to free retired buffers.
//!
//! A record belongs to one thread at a time (`in_use`); a thread takes one at its first steal
//! (reusing a record a finished thread gave back, else appending a new one) and gives it back
//! in its thread-local destructor. Records are never freed (under loom: at the end of each
//! execution), so their number is the largest number of threads that were alive and had
//! stolen at once, and an owner may walk the list without any lock.

use std::cell::Cell;
use std::ptr;

use crate::sync::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

/// One thread's announcement, alone on its cache line(s): thieves on other threads never
/// write it, and owners read it only when they free buffers (128 bytes: two lines, as
/// `CachePadded` aligns, against the adjacent-line prefetcher).
#[repr(align(128))]
pub(super) struct Record {
    /// The deque (the address of its shared state) whose buffer this thread may be reading
    /// now; 0 when none.
    deque: AtomicUsize,
    /// Whether a live thread owns this record.
    in_use: AtomicBool,
    /// The next record; written before the record is published, never changed after.
    next: *const Record,
}

impl Record {
    /// Announces that this thread is about to read a buffer of `deque`. Release, like every
    /// store to `deque`: an owner whose acquire scan reads a later value of this record
    /// (another announcement, a clear) then also sees everything this thread did before.
    /// The announcement must be followed by a `SeqCst` fence before the buffer pointer is
    /// loaded (the thief's fence in `steal`).
    #[inline(always)]
    pub(super) fn announce(&self, deque: usize) {
        self.deque.store(deque, Ordering::Release);
    }

    /// Withdraws the announcement after the thread's last read through the buffer pointer.
    /// Release: those reads happen before an owner's free that read this store (or a later one).
    #[inline(always)]
    pub(super) fn clear(&self, order: Ordering) {
        self.deque.store(0, order);
    }
}

/// The list of records (its head; records are only ever prepended).
pub(super) struct Registry {
    head: AtomicPtr<Record>,
    /// Under loom, every record made in this execution, freed with the registry (outside
    /// the model, where loom's atomics cannot be read: hence a `std` lock).
    #[cfg(loom)]
    made: std::sync::Mutex<Vec<usize>>,
}

// SAFETY: the records the head points to are shared through atomics only (`next` is
// written before the record is published with a release CAS and never changed after).
unsafe impl Sync for Registry {}
// SAFETY: as above.
unsafe impl Send for Registry {}

impl Registry {
    #[cfg(not(loom))]
    const fn new() -> Self {
        Registry {
            head: AtomicPtr::new(ptr::null_mut()),
        }
    }

    #[cfg(loom)]
    fn new() -> Self {
        Registry {
            head: AtomicPtr::new(ptr::null_mut()),
            made: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// A record for the calling thread: one given back by a finished thread, else a new one.
    #[cold]
    fn acquire(&self) -> *const Record {
        let mut p = self.head.load(Ordering::Acquire);
        while !p.is_null() {
            // SAFETY: published records are never freed while the registry lives.
            let r: &Record = unsafe { &*p };
            // Acquire: pairs with the release store of the thread that gave it back, so that
            // its last clear happens before our announcements.
            if !r.in_use.load(Ordering::Relaxed)
                && r.in_use
                    .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return r;
            }
            p = r.next as *mut Record;
        }
        let new = Box::into_raw(Box::new(Record {
            deque: AtomicUsize::new(0),
            in_use: AtomicBool::new(true),
            next: ptr::null(),
        }));
        #[cfg(loom)]
        self.made
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(new as usize);
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            // SAFETY: `new` is ours until the CAS below publishes it.
            unsafe { (*new).next = head };
            // Release: an owner that reads this head (or a later one: every write of the head
            // is a CAS, so later ones continue the release sequence) sees `next` and the record.
            match self
                .head
                .compare_exchange_weak(head, new, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return new,
                Err(h) => head = h,
            }
        }
    }

    /// Whether some thread announces `deque`. The caller (an owner) has stored the current
    /// buffer pointer and then run a `SeqCst` fence.
    fn announced(&self, deque: usize) -> bool {
        // Acquire: pairs with the release CAS that published the newest record.
        let mut p = self.head.load(Ordering::Acquire);
        while !p.is_null() {
            // SAFETY: published records are never freed while the registry lives.
            let r: &Record = unsafe { &*p };
            // Acquire: pairs with the thief's release stores (`announce`, `clear`).
            if r.deque.load(Ordering::Acquire) == deque {
                return true;
            }
            p = r.next as *mut Record;
        }
        false
    }
}

#[cfg(loom)]
impl Drop for Registry {
    /// Under loom the registry lives for one execution: free its records with it.
    fn drop(&mut self) {
        let made = self.made.get_mut().unwrap_or_else(|e| e.into_inner());
        for p in made.drain(..) {
            // SAFETY: no thread of the finished execution is left; each record was made by
            // `Box::into_raw` and is freed once.
            drop(unsafe { Box::from_raw(p as *mut Record) });
        }
    }
}

#[cfg(not(loom))]
static REGISTRY: Registry = Registry::new();

#[cfg(not(loom))]
#[inline(always)]
fn registry() -> &'static Registry {
    &REGISTRY
}

#[cfg(loom)]
loom::lazy_static! {
    static ref REGISTRY: Registry = Registry::new();
}

#[cfg(loom)]
fn registry() -> &'static Registry {
    &REGISTRY
}

/// The calling thread's hold on its record; gives it back when the thread ends.
struct Local {
    record: Cell<*const Record>,
}

impl Drop for Local {
    fn drop(&mut self) {
        // Under loom a record lives for one execution (the registry frees it), and a model
        // that failed may drop its threads' locals after the registry, outside the model:
        // the record is not given back (each execution starts with a new registry).
        #[cfg(loom)]
        if !self.record.get().is_null() {
            return;
        }
        let r = self.record.get();
        if !r.is_null() {
            // SAFETY: records outlive every thread that holds one.
            let r = unsafe { &*r };
            r.clear(Ordering::Release);
            // Release: pairs with the acquire CAS of the next thread to take it.
            r.in_use.store(false, Ordering::Release);
        }
    }
}

#[cfg(not(loom))]
std::thread_local! {
    static LOCAL: Local = const { Local { record: Cell::new(ptr::null()) } };
}

#[cfg(loom)]
loom::thread_local! {
    static LOCAL: Local = Local { record: Cell::new(ptr::null()) };
}

/// The calling thread's record, or `None` while its thread-locals are being destroyed (the
/// caller then registers in the deque's `readers` count instead).
#[inline(always)]
pub(super) fn record() -> Option<*const Record> {
    LOCAL
        .try_with(|l| {
            let r = l.record.get();
            if r.is_null() {
                let r = registry().acquire();
                l.record.set(r);
                r
            } else {
                r
            }
        })
        .ok()
}

/// Whether some thread announces `deque` (see [`Registry::announced`]).
#[inline]
pub(super) fn announced(deque: usize) -> bool {
    registry().announced(deque)
}
