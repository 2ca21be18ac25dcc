//! The state that a deque's owner and thieves share (`top`, `bottom`, the buffer pointer,
//! the fallback readers count), the retired buffers that growth leaves behind and their
//! freeing (module docs of `chase_lev`, "Growth and reclamation"), and the loom planted bugs.

use crossbeam_utils::CachePadded;

use super::buffer::Buffer;
#[cfg(loom)]
use crate::sync::lock;
use crate::sync::{AtomicIsize, AtomicPtr, AtomicUsize, Mutex, Ordering};

/// Planted bugs for the loom tests of the tests: each must make some model fail.
#[cfg(loom)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mutation {
    None,
    /// The owner's SeqCst fence in `pop` weakened to AcqRel.
    WeakOwnerFence,
    /// The release fence before the bottom store in `push` removed.
    NoReleaseFence,
    /// The thief's load of `bottom` made Relaxed.
    RelaxedBottomLoad,
    /// The thief's load of the buffer pointer made Relaxed.
    RelaxedBufferLoad,
    /// The owner frees a retired buffer at once, without checking for readers.
    EagerFree,
    /// The thief does not announce the deque in its hazard record before reading a buffer.
    NoAnnounce,
    /// The owner's SeqCst fence before it reads the hazard records weakened to AcqRel.
    WeakReclaimFence,
    /// The thief withdraws its announcement with a Relaxed store.
    RelaxedClear,
    /// Not a bug: every thief takes the `readers` count instead of its hazard record (the
    /// path of a thread whose thread-locals are being destroyed).
    CounterPath,
    /// The counter path, and the owner frees without reading `readers`.
    CounterPathNoReaderCheck,
    /// `push_quiet`'s reading of `top` made Relaxed.
    RelaxedTopSeen,
}

pub(super) struct Inner<T> {
    pub(super) top: CachePadded<AtomicIsize>,
    pub(super) bottom: CachePadded<AtomicIsize>,
    pub(super) buffer: CachePadded<AtomicPtr<Buffer<T>>>,
    /// Thieves without a hazard record (their thread-locals are being destroyed) between
    /// their load of `buffer` and their last read through it.
    pub(super) readers: CachePadded<AtomicUsize>,
    /// Buffers replaced by growth, not yet freed (only the owner and the drop touch it).
    pub(super) retired: Mutex<Vec<*mut Buffer<T>>>,
    /// Under loom, "freed" buffers are poisoned (every slot written, so that a late read is a
    /// detected race) and kept here, so that the model never touches freed memory itself.
    #[cfg(loom)]
    pub(super) graveyard: Mutex<Vec<*mut Buffer<T>>>,
    #[cfg(loom)]
    pub(super) mutation: Mutation,
}

impl<T> Inner<T> {
    #[cfg(loom)]
    #[inline(always)]
    pub(super) fn mutated(&self, m: Mutation) -> bool {
        self.mutation == m
    }

    /// The deque's name in the hazard records: the address of this shared state (unique
    /// while a handle on it lives, and never 0).
    #[inline(always)]
    pub(super) fn id(&self) -> usize {
        self as *const Self as usize
    }

    /// Frees a retired buffer (under loom: poisons it and keeps it until the drop).
    ///
    /// # Safety
    /// `b` is a retired buffer that no thief can still read.
    pub(super) unsafe fn free_retired(&self, b: *mut Buffer<T>) {
        #[cfg(loom)]
        {
            // SAFETY: per the contract `b` is live (the graveyard keeps it allocated).
            for s in unsafe { (*b).slots.iter() } {
                s.with_mut(|_| ());
            }
            lock(&self.graveyard).push(b);
        }
        #[cfg(not(loom))]
        // SAFETY: per the contract.
        unsafe {
            Buffer::free(b)
        };
    }
}

impl<T> Drop for Inner<T> {
    fn drop(&mut self) {
        // We are the last handle: no concurrent access.
        let t = self.top.load(Ordering::Relaxed);
        let b = self.bottom.load(Ordering::Relaxed);
        let buf = self.buffer.load(Ordering::Relaxed);
        // SAFETY: `buf` is the live buffer; slots in [t, b) hold owned elements.
        unsafe {
            for i in t..b {
                (*buf).read(i).assume_init_drop();
            }
            Buffer::free(buf);
        }
        let retired = self.retired.get_mut().unwrap_or_else(|e| e.into_inner());
        for old in retired.drain(..) {
            // SAFETY: retired buffers hold only bit copies of elements owned elsewhere, and
            // no thief is left.
            unsafe { Buffer::free(old) };
        }
        #[cfg(loom)]
        for old in self
            .graveyard
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            // SAFETY: as above.
            unsafe { Buffer::free(old) };
        }
    }
}
