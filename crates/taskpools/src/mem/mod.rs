//! Memory managers for the nodes of list-based queues (Korch and Rauber, "A Comparison of Task
//! Pools for Dynamic Load Balancing of Irregular Algorithms" (2002), §4.4 and Table 1), and the
//! [`region`] allocator of the data-flow tasks (Papakonstantinou, PARTEE (2015), §3.4.1).
//!
//! A list-based queue asks a per-worker [`NodeCache`] for the memory of one node and gives it
//! back when the node leaves the queue. Which strategy serves those requests is chosen per run
//! ([`MemKind`]):
//!
//! | name | alias | strategy |
//! |---|---|---|
//! | `system` | `bs` | every node from the global allocator, every free back to it |
//! | `central` | `l` | one free list for all workers behind one lock (Korch and Rauber's negative example) |
//! | `per-worker` | `dl` | a free list per worker; misses go to the global allocator |
//! | `per-worker-blocks` | `dgbko` | a free list per worker, refilled by allocating blocks of nodes at once |
//!
//! Free nodes are linked through their own memory (the first word of a free node holds the next
//! pointer), like Korch and Rauber's "f" variants; nodes migrate between workers with the tasks
//! that stealing moves, so a worker's free list can grow while another's drains. To keep that
//! bounded, `dl` returns nodes beyond [`LOCAL_CAP`] to the global allocator and `dgbko` moves half
//! of an over-full list to a shared spill list, which a worker checks before it allocates a new
//! block. Blocks are returned to the global allocator when the last queue or cache of the pool is
//! gone (every queue and cache holds an `Arc` of its [`NodeAlloc`]).

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::fmt;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use crate::sync::{lock, Arc, Mutex};

pub mod region;

/// The memory manager that serves list-node allocations in a run.
///
/// ```
/// use taskpools::{BoxedTask, Builder, MemKind, PoolKind};
///
/// // The memory managers serve the list-based pools' nodes; the phase's result is the same.
/// for mem in MemKind::ALL {
///     let b = Builder::new().threads(2).pool(PoolKind::CentralList).mem(mem);
///     let root = BoxedTask::new(|ctx| (0..50).for_each(|_| ctx.put(BoxedTask::new(|_| {}))));
///     assert_eq!(b.run([root])?.tasks_run(), 51, "{mem:?}");
/// }
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MemKind {
    /// `bs`: the global allocator for every node.
    System,
    /// `l`: one central free list behind a lock.
    Central,
    /// `dl`: a free list per worker.
    PerWorker,
    /// `dgbko`: per-worker free lists filled by allocating blocks of nodes.
    PerWorkerBlocks,
}

impl MemKind {
    /// Every memory manager, in the order `taskpools list` prints them.
    pub const ALL: [MemKind; 4] = [
        MemKind::System,
        MemKind::Central,
        MemKind::PerWorker,
        MemKind::PerWorkerBlocks,
    ];

    /// The descriptive name.
    ///
    /// ```
    /// use taskpools::MemKind;
    ///
    /// assert_eq!(MemKind::PerWorkerBlocks.name(), "per-worker-blocks");
    /// assert_eq!(MemKind::System.name(), "system");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            MemKind::System => "system",
            MemKind::Central => "central",
            MemKind::PerWorker => "per-worker",
            MemKind::PerWorkerBlocks => "per-worker-blocks",
        }
    }

    /// Korch and Rauber's name (Table 1).
    ///
    /// ```
    /// use taskpools::MemKind;
    ///
    /// assert_eq!(MemKind::PerWorkerBlocks.alias(), "dgbko"); // Korch and Rauber's Table 1
    /// assert_eq!(MemKind::from_name("dl")?, MemKind::PerWorker);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn alias(self) -> &'static str {
        match self {
            MemKind::System => "bs",
            MemKind::Central => "l",
            MemKind::PerWorker => "dl",
            MemKind::PerWorkerBlocks => "dgbko",
        }
    }

    /// One line for `taskpools list`.
    ///
    /// ```
    /// for m in taskpools::MemKind::ALL {
    ///     println!("{:18} {:6} {}", m.name(), m.alias(), m.description());
    /// }
    /// assert!(taskpools::MemKind::Central.description().contains("lock"));
    /// ```
    pub fn description(self) -> &'static str {
        match self {
            MemKind::System => "global allocator (malloc/free) for every queue node",
            MemKind::Central => "one central free list behind a lock, shared by all workers",
            MemKind::PerWorker => "a free list per worker; misses go to the global allocator",
            MemKind::PerWorkerBlocks => {
                "per-worker free lists, refilled by allocating blocks of 64 nodes at once"
            }
        }
    }

    /// Parses a descriptive name or an alias (Korch and Rauber's name).
    ///
    /// ```
    /// use taskpools::{Error, MemKind};
    ///
    /// assert_eq!(MemKind::from_name("central")?, MemKind::Central);
    /// assert_eq!("bs".parse::<MemKind>()?, MemKind::System);
    /// assert!(matches!(MemKind::from_name("arena"), Err(Error::UnknownMem { .. })));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn from_name(s: &str) -> Result<MemKind, crate::Error> {
        MemKind::ALL
            .into_iter()
            .find(|m| m.name() == s || m.alias() == s)
            .ok_or_else(|| crate::Error::UnknownMem {
                name: s.to_string(),
                known: MemKind::ALL
                    .iter()
                    .map(|m| format!("{} ({})", m.name(), m.alias()))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

impl std::str::FromStr for MemKind {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MemKind::from_name(s)
    }
}

impl fmt::Display for MemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Most free nodes a worker keeps in its own list before giving some back.
pub const LOCAL_CAP: usize = 4096;
/// Nodes per block allocation (`dgbko`).
pub const BLOCK_NODES: usize = 64;

/// The layout of `BLOCK_NODES` nodes of `node` layout back to back, if it fits in `isize::MAX`
/// bytes (checked multiplication: a wrapped size would allocate a block too small for its nodes).
fn block_layout(node: Layout) -> Option<Layout> {
    let size = node.size().checked_mul(BLOCK_NODES)?;
    Layout::from_size_align(size, node.align()).ok()
}

/// The link written into the first word of a free node.
struct Link {
    next: *mut Link,
}

/// A chain of free nodes linked through their first word.
struct Chain {
    head: *mut Link,
    len: usize,
}

impl Chain {
    const fn new() -> Self {
        Chain {
            head: ptr::null_mut(),
            len: 0,
        }
    }

    /// # Safety
    /// `p` must be a free node of the owning allocator's layout, not in any chain.
    #[inline]
    unsafe fn push(&mut self, p: *mut u8) {
        let l = p.cast::<Link>();
        // SAFETY: the caller gives a free node, at least as large and aligned as `Link`
        // (checked in `NodeAlloc::new`), which nothing else references.
        unsafe { l.write(Link { next: self.head }) };
        self.head = l;
        self.len += 1;
    }

    #[inline]
    fn pop(&mut self) -> Option<*mut u8> {
        if self.head.is_null() {
            return None;
        }
        let l = self.head;
        // SAFETY: `l` is the head of this chain: a free node whose first word `push` wrote.
        self.head = unsafe { (*l).next };
        self.len -= 1;
        Some(l.cast())
    }

    /// Moves `k <= self.len` nodes from the front of `self` into `into`.
    fn split_into(&mut self, k: usize, into: &mut Chain) {
        for _ in 0..k {
            match self.pop() {
                // SAFETY: `p` was just unlinked from a chain of free nodes.
                Some(p) => unsafe { into.push(p) },
                None => break,
            }
        }
    }
}

/// Shared state of one memory manager instance, for nodes of type `N` (opaque).
pub struct NodeAlloc<N> {
    kind: MemKind,
    layout: Layout,
    /// `l`: the central free list; `dgbko`: the spill list of over-full worker lists.
    central: Mutex<Chain>,
    /// `dgbko`: every block allocated, returned to the global allocator on drop.
    blocks: Mutex<Vec<NonNull<u8>>>,
    _nodes: PhantomData<fn() -> N>,
}

// SAFETY: the raw pointers in `central` and `blocks` point to memory that this allocator owns
// and that is only reached under their mutexes; no `N` value is ever stored in a free node.
unsafe impl<N> Send for NodeAlloc<N> {}
// SAFETY: as above; all shared mutation goes through the mutexes.
unsafe impl<N> Sync for NodeAlloc<N> {}

impl<N> NodeAlloc<N> {
    /// A memory manager of the given kind for nodes of type `N`.
    pub(crate) fn new(kind: MemKind) -> Arc<Self> {
        let layout = Layout::new::<N>();
        assert!(
            layout.size() >= std::mem::size_of::<Link>()
                && layout.align() >= std::mem::align_of::<Link>(),
            "queue nodes must be able to hold a free-list link"
        );
        if kind == MemKind::PerWorkerBlocks {
            assert!(
                block_layout(layout).is_some(),
                "a block of {BLOCK_NODES} queue nodes of {} bytes each exceeds isize::MAX bytes",
                layout.size()
            );
        }
        Arc::new(NodeAlloc {
            kind,
            layout,
            central: Mutex::new(Chain::new()),
            blocks: Mutex::new(Vec::new()),
            _nodes: PhantomData,
        })
    }

    fn system_alloc(&self) -> *mut u8 {
        // SAFETY: `layout` has non-zero size (it holds at least a `Link`).
        let p = unsafe { alloc(self.layout) };
        if p.is_null() {
            handle_alloc_error(self.layout)
        }
        p
    }

    /// # Safety
    /// `p` must come from `system_alloc` of this allocator and be free.
    unsafe fn system_free(&self, p: *mut u8) {
        // SAFETY: per the contract, `p` was allocated with `self.layout`.
        unsafe { dealloc(p, self.layout) }
    }

    /// The layout of a block of `BLOCK_NODES` nodes; `new` checked that it exists.
    fn block_layout(&self) -> Layout {
        block_layout(self.layout).expect("checked in NodeAlloc::new")
    }

    /// Allocates a block of `BLOCK_NODES` nodes and links all of them into `into`.
    fn alloc_block(&self, into: &mut Chain) {
        let block_layout = self.block_layout();
        // SAFETY: non-zero size.
        let base = unsafe { alloc(block_layout) };
        let Some(base) = NonNull::new(base) else {
            handle_alloc_error(block_layout)
        };
        lock(&self.blocks).push(base);
        for i in (0..BLOCK_NODES).rev() {
            // SAFETY: node `i` lies inside the fresh block and is suitably aligned because the
            // layout's size is a multiple of its alignment.
            unsafe { into.push(base.as_ptr().add(i * self.layout.size())) };
        }
    }

    /// Frees a node without a worker cache (used when a queue is dropped).
    ///
    /// # Safety
    /// `p` must be a node obtained from a cache of this allocator whose value has been moved
    /// out or dropped, and it must not be used afterwards.
    pub(crate) unsafe fn free_shared(&self, p: NonNull<N>) {
        let p = p.as_ptr().cast::<u8>();
        match self.kind {
            // SAFETY: `bs` and `dl` nodes come from `system_alloc`.
            MemKind::System | MemKind::PerWorker => unsafe { self.system_free(p) },
            // SAFETY: `p` is a free node of this allocator.
            MemKind::Central | MemKind::PerWorkerBlocks => unsafe { lock(&self.central).push(p) },
        }
    }
}

impl<N> Drop for NodeAlloc<N> {
    fn drop(&mut self) {
        let layout = self.layout;
        let central = self.central.get_mut().unwrap_or_else(|e| e.into_inner());
        match self.kind {
            MemKind::Central => {
                while let Some(p) = central.pop() {
                    // SAFETY: `l` nodes come from `system_alloc`, with `layout`.
                    unsafe { dealloc(p, layout) };
                }
            }
            MemKind::PerWorkerBlocks => {
                // Spilled nodes live inside the blocks freed below.
                *central = Chain::new();
                let block_layout = self.block_layout();
                let blocks = self.blocks.get_mut().unwrap_or_else(|e| e.into_inner());
                for b in blocks.drain(..) {
                    // SAFETY: every block was allocated by `alloc_block` with `block_layout`,
                    // and no cache or queue refers to it any more (they hold this `Arc`).
                    unsafe { dealloc(b.as_ptr(), block_layout) };
                }
            }
            MemKind::System | MemKind::PerWorker => {}
        }
    }
}

/// A worker's private handle on a [`NodeAlloc`]: its free list, if the strategy has one
/// (opaque).
pub struct NodeCache<N> {
    alloc: Arc<NodeAlloc<N>>,
    local: Chain,
}

// SAFETY: the free nodes in `local` belong to this cache alone; moving the cache to another
// thread moves that ownership with it. The shared part is `Sync`.
unsafe impl<N> Send for NodeCache<N> {}

impl<N> NodeCache<N> {
    pub(crate) fn new(alloc: &Arc<NodeAlloc<N>>) -> Self {
        NodeCache {
            alloc: Arc::clone(alloc),
            local: Chain::new(),
        }
    }

    /// Panics unless this cache was made from `alloc`. Every queue checks the cache it is given
    /// before it allocates or frees a node through it, so node memory never moves between
    /// allocator instances (a node of one would be freed into, or outlive, the other).
    #[inline(always)]
    pub(crate) fn check_owner(&self, alloc: &Arc<NodeAlloc<N>>) {
        if !Arc::ptr_eq(&self.alloc, alloc) {
            foreign_cache();
        }
    }

    /// Memory for one node, uninitialized.
    #[inline]
    pub(crate) fn alloc(&mut self) -> NonNull<N> {
        let p = match self.local.pop() {
            Some(p) => p,
            None => self.alloc_slow(),
        };
        // SAFETY: every path returns a non-null pointer (`system_alloc` aborts on failure).
        unsafe { NonNull::new_unchecked(p.cast()) }
    }

    #[cold]
    fn alloc_slow(&mut self) -> *mut u8 {
        let a = &*self.alloc;
        match a.kind {
            MemKind::System | MemKind::PerWorker => a.system_alloc(),
            MemKind::Central => match lock(&a.central).pop() {
                Some(p) => p,
                None => a.system_alloc(),
            },
            MemKind::PerWorkerBlocks => {
                {
                    let mut spill = lock(&a.central);
                    let k = spill.len.min(LOCAL_CAP / 2);
                    spill.split_into(k, &mut self.local);
                }
                if self.local.len == 0 {
                    a.alloc_block(&mut self.local);
                }
                self.local.pop().expect("refilled")
            }
        }
    }

    /// Gives a node back.
    ///
    /// # Safety
    /// `p` must come from a cache of the same allocator, its value must have been moved out or
    /// dropped, and it must not be used afterwards.
    #[inline]
    pub(crate) unsafe fn free(&mut self, p: NonNull<N>) {
        let p = p.as_ptr().cast::<u8>();
        let a = &*self.alloc;
        match a.kind {
            // SAFETY: `bs` nodes come from `system_alloc`.
            MemKind::System => unsafe { a.system_free(p) },
            // SAFETY: a free node of this allocator.
            MemKind::Central => unsafe { lock(&a.central).push(p) },
            MemKind::PerWorker => {
                if self.local.len < LOCAL_CAP {
                    // SAFETY: a free node of this allocator.
                    unsafe { self.local.push(p) }
                } else {
                    // SAFETY: `dl` nodes come from `system_alloc`.
                    unsafe { a.system_free(p) }
                }
            }
            MemKind::PerWorkerBlocks => {
                // SAFETY: a free node of this allocator.
                unsafe { self.local.push(p) };
                if self.local.len > LOCAL_CAP {
                    let mut spill = lock(&a.central);
                    self.local.split_into(LOCAL_CAP / 2, &mut spill);
                }
            }
        }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn foreign_cache() -> ! {
    panic!(
        "a node cache was used with a queue of another allocator: a queue takes only caches \
         made from its own allocator (`SeqQueue::cache` of the same `Alloc`, or the pool's own \
         `local`)"
    )
}

impl<N> Drop for NodeCache<N> {
    fn drop(&mut self) {
        let a = &*self.alloc;
        match a.kind {
            MemKind::PerWorker => {
                while let Some(p) = self.local.pop() {
                    // SAFETY: `dl` nodes come from `system_alloc`.
                    unsafe { a.system_free(p) };
                }
            }
            MemKind::PerWorkerBlocks => {
                // Keep the nodes for the next run on this pool.
                let mut spill = lock(&a.central);
                let k = self.local.len;
                self.local.split_into(k, &mut spill);
            }
            MemKind::System | MemKind::Central => {}
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[repr(C)]
    struct N3 {
        a: usize,
        b: usize,
        c: usize,
    }

    #[test]
    fn every_kind_recycles_and_frees() {
        for kind in MemKind::ALL {
            let a = NodeAlloc::<N3>::new(kind);
            let mut c1 = NodeCache::new(&a);
            let mut c2 = NodeCache::new(&a);
            let mut ps = Vec::new();
            for i in 0..3 * LOCAL_CAP {
                let p = c1.alloc();
                // SAFETY: fresh node memory of the right layout.
                unsafe { p.as_ptr().write(N3 { a: i, b: i, c: i }) };
                ps.push(p);
            }
            for (i, p) in ps.iter().enumerate() {
                // SAFETY: written above.
                assert_eq!(unsafe { p.as_ref().a + p.as_ref().b + p.as_ref().c }, 3 * i);
            }
            // Free everything through the other worker: nodes migrate.
            for p in ps.drain(..) {
                // SAFETY: allocated above, value is plain data, not used afterwards.
                unsafe { c2.free(p) };
            }
            assert!(c2.local.len <= LOCAL_CAP + 1, "{kind}: local list bounded");
            drop(c1);
            drop(c2);
        }
    }

    #[test]
    fn names_and_aliases_parse() {
        for m in MemKind::ALL {
            assert_eq!(MemKind::from_name(m.name()).unwrap(), m);
            assert_eq!(MemKind::from_name(m.alias()).unwrap(), m);
        }
        assert!(MemKind::from_name("nope").is_err());
    }
}
