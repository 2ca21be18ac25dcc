//! Region-based allocation (Papakonstantinou, PARTEE (2015), §3.4.1, after Gay and Aiken): a region
//! is a bump allocator over fixed-size chunks; everything allocated in it is freed at once when the
//! region is dropped. The data-flow front end gives every running task that spawns two regions: one
//! for its children's descriptors, closures and notify-list nodes, one for its look-up table (which
//! only the task's own thread touches, kept apart from what other threads write); both are dropped
//! when the task completes.
//!
//! Chunks come from, and go back to, a global pool split into [`FREE_LISTS`] lists, each behind
//! its own lock: a thread picks a list at random and *tries* to lock it, moving on to another
//! random list when it is busy (PARTEE's "n lists, random try-lock", which keeps allocating
//! threads from queueing on one lock). Each list keeps at most [`LIST_CAP`] chunks, so a burst
//! of allocation does not pin memory forever. Allocations larger than a quarter chunk get a
//! dedicated allocation that is freed with the region (PARTEE's variable-size pages).
//!
//! A region is owned by one thread at a time (it is `Send`, not `Sync`) and never runs
//! destructors: callers store only plain data in it, or drop what they stored themselves
//! before the region goes.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;
use std::sync::Mutex;

/// Bytes per chunk.
pub const CHUNK_BYTES: usize = 16 * 1024;
/// Alignment of a chunk (and so the largest alignment served from one).
const CHUNK_ALIGN: usize = 64;
/// Free lists of the global chunk pool.
pub const FREE_LISTS: usize = 16;
/// Chunks each free list keeps at most.
pub const LIST_CAP: usize = 64;

fn chunk_layout() -> Layout {
    // SAFETY-free: both are valid (non-zero power-of-two alignment, size a multiple of it).
    Layout::from_size_align(CHUNK_BYTES, CHUNK_ALIGN).expect("chunk layout")
}

struct Chunk(NonNull<u8>);
// SAFETY: a free chunk is plain memory owned by whoever holds the `Chunk`.
unsafe impl Send for Chunk {}

static POOL: [Mutex<Vec<Chunk>>; FREE_LISTS] = [const { Mutex::new(Vec::new()) }; FREE_LISTS];

fn with_some_list<R>(f: impl FnOnce(&mut Vec<Chunk>) -> R) -> R {
    let mut i = fastrand::usize(..FREE_LISTS);
    for _ in 0..4 * FREE_LISTS {
        if let Ok(mut l) = POOL[i].try_lock() {
            return f(&mut l);
        }
        i = fastrand::usize(..FREE_LISTS);
    }
    // Every try found a busy list: wait for one (a panic while a list was held cannot leave
    // it inconsistent, pushes and pops are single steps, so a poisoned lock is usable).
    f(&mut POOL[i].lock().unwrap_or_else(|e| e.into_inner()))
}

fn take_chunk() -> Chunk {
    if let Some(c) = with_some_list(Vec::pop) {
        return c;
    }
    let layout = chunk_layout();
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { alloc(layout) };
    Chunk(NonNull::new(p).unwrap_or_else(|| handle_alloc_error(layout)))
}

fn give_chunks(chunks: &mut Vec<Chunk>) {
    while !chunks.is_empty() {
        with_some_list(|l| {
            while l.len() < LIST_CAP {
                match chunks.pop() {
                    Some(c) => l.push(c),
                    None => return,
                }
            }
        });
        // This list was full: free one chunk and try another list for the rest.
        if let Some(c) = chunks.pop() {
            // SAFETY: the chunk was allocated with `chunk_layout` and is no longer used.
            unsafe { dealloc(c.0.as_ptr(), chunk_layout()) };
        }
    }
}

/// Chunks held by the global pool's free lists now (for tests and reports).
pub fn pooled_chunks() -> usize {
    POOL.iter()
        .map(|l| l.lock().unwrap_or_else(|e| e.into_inner()).len())
        .sum()
}

/// A bump allocator whose allocations are all freed when it is dropped.
pub struct Region {
    /// Next free byte in the current chunk, and its end (addresses).
    cur: usize,
    end: usize,
    /// The current chunk (null before the first): allocations are made from it with
    /// `with_addr`, so they keep its provenance (no integer-to-pointer cast).
    chunk: *mut u8,
    chunks: Vec<Chunk>,
    /// Allocations too large for a chunk, with their layouts.
    large: Vec<(NonNull<u8>, Layout)>,
}

// SAFETY: the region owns its chunks and large allocations; what lives in them is the
// caller's business (see the module docs), and a region is used by one thread at a time.
unsafe impl Send for Region {}

impl Default for Region {
    fn default() -> Self {
        Self::new()
    }
}

impl Region {
    /// An empty region (it takes its first chunk at its first allocation).
    pub const fn new() -> Region {
        Region {
            cur: 0,
            end: 0,
            chunk: std::ptr::null_mut(),
            chunks: Vec::new(),
            large: Vec::new(),
        }
    }

    /// Uninitialized memory for `layout`, valid until the region is dropped or reset.
    #[inline]
    pub fn alloc_layout(&mut self, layout: Layout) -> NonNull<u8> {
        let start = (self.cur + layout.align() - 1) & !(layout.align() - 1);
        if self.cur != 0
            && layout.size() != 0
            && layout.size() <= CHUNK_BYTES / 4
            && layout.align() <= CHUNK_ALIGN
            && start + layout.size() <= self.end
        {
            self.cur = start + layout.size();
            // SAFETY: `start` lies inside the current chunk, which is non-null.
            return unsafe { NonNull::new_unchecked(self.chunk.with_addr(start)) };
        }
        self.alloc_slow(layout)
    }

    #[cold]
    #[inline(never)]
    fn alloc_slow(&mut self, layout: Layout) -> NonNull<u8> {
        if layout.size() == 0 {
            // Nothing to store: any non-null, aligned address will do (the global allocator
            // must not be asked for zero bytes).
            // SAFETY: an alignment is never zero.
            return unsafe {
                NonNull::new_unchecked(std::ptr::without_provenance_mut(layout.align()))
            };
        }
        if layout.size() > CHUNK_BYTES / 4 || layout.align() > CHUNK_ALIGN {
            let l = layout
                .align_to(CHUNK_ALIGN)
                .expect("a valid layout")
                .pad_to_align();
            // SAFETY: `l` has a non-zero size (it is at least one alignment unit).
            let p = unsafe { alloc(l) };
            let p = NonNull::new(p).unwrap_or_else(|| handle_alloc_error(l));
            self.large.push((p, l));
            return p;
        }
        let start = (self.cur + layout.align() - 1) & !(layout.align() - 1);
        if self.cur == 0 || start + layout.size() > self.end {
            let c = take_chunk();
            let base = c.0.as_ptr();
            self.chunks.push(c);
            self.chunk = base;
            self.cur = base.addr();
            self.end = base.addr() + CHUNK_BYTES;
            return self.alloc_slow(layout);
        }
        self.cur = start + layout.size();
        // SAFETY: `start` lies inside the current chunk, which is non-null.
        unsafe { NonNull::new_unchecked(self.chunk.with_addr(start)) }
    }

    /// Moves `value` into the region. Its destructor will not run (see the module docs).
    #[inline]
    pub fn alloc<T>(&mut self, value: T) -> NonNull<T> {
        let p = self.alloc_layout(Layout::new::<T>()).cast::<T>();
        // SAFETY: fresh memory of `T`'s size and alignment.
        unsafe { p.as_ptr().write(value) };
        p
    }

    /// `n` zeroed values of `T` (for types whose all-zero bit pattern is valid: the caller
    /// promises that by using the memory only as such).
    pub fn alloc_zeroed_array<T>(&mut self, n: usize) -> NonNull<T> {
        let layout = Layout::array::<T>(n).expect("array layout");
        let p = self.alloc_layout(layout);
        // SAFETY: fresh memory of `layout.size()` bytes.
        unsafe { p.as_ptr().write_bytes(0, layout.size()) };
        p.cast()
    }

    /// Bytes of chunk memory this region holds (large allocations included).
    pub fn footprint(&self) -> usize {
        self.chunks.len() * CHUNK_BYTES + self.large.iter().map(|(_, l)| l.size()).sum::<usize>()
    }

    /// Frees everything allocated so far (chunks go back to the pool); the region can be
    /// used again.
    #[inline]
    pub fn reset(&mut self) {
        if self.chunks.is_empty() && self.large.is_empty() {
            return;
        }
        self.reset_slow();
    }

    #[inline(never)]
    fn reset_slow(&mut self) {
        for (p, l) in self.large.drain(..) {
            // SAFETY: allocated in `alloc_layout` with exactly this layout.
            unsafe { dealloc(p.as_ptr(), l) };
        }
        give_chunks(&mut self.chunks);
        self.cur = 0;
        self.end = 0;
        self.chunk = std::ptr::null_mut();
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        self.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_disjoint_and_survive_chunk_changes() {
        let mut r = Region::new();
        let mut ptrs = Vec::new();
        for i in 0..10_000u64 {
            let p = r.alloc(i);
            assert_eq!(p.as_ptr() as usize % 8, 0);
            ptrs.push(p);
            let b = r.alloc(i as u8);
            // SAFETY (test): freshly written.
            assert_eq!(unsafe { *b.as_ptr() }, i as u8);
        }
        for (i, p) in ptrs.iter().enumerate() {
            // SAFETY (test): the region is alive.
            assert_eq!(unsafe { *p.as_ptr() }, i as u64);
        }
        let big = r.alloc_zeroed_array::<u64>(CHUNK_BYTES);
        // SAFETY (test): zeroed array of that many u64.
        assert!(
            unsafe { std::slice::from_raw_parts(big.as_ptr(), CHUNK_BYTES) }
                .iter()
                .all(|&x| x == 0)
        );
        assert!(r.footprint() > 10_000 * 9);
        r.reset();
        assert_eq!(r.footprint(), 0);
    }

    #[test]
    fn chunks_are_recycled_and_the_pool_is_bounded() {
        for _ in 0..50 {
            let mut r = Region::new();
            for i in 0..100_000u64 {
                r.alloc(i);
            }
        }
        assert!(pooled_chunks() <= FREE_LISTS * LIST_CAP);
    }
}
