//! A fixed-size array of tasks that is moved between queues as a whole: the unit of transfer of
//! the private/public pool (`dq8`) and the combined pool (`sdq1`); Korch & Rauber (2002) use
//! blocks of four.

use std::mem::MaybeUninit;

/// Tasks per block.
pub const BLOCK_LEN: usize = 4;

/// Up to [`BLOCK_LEN`] tasks, used as a stack.
pub struct Block<T> {
    len: usize,
    items: [MaybeUninit<T>; BLOCK_LEN],
}

impl<T> Block<T> {
    /// An empty block.
    pub fn new() -> Self {
        Block {
            len: 0,
            items: [const { MaybeUninit::uninit() }; BLOCK_LEN],
        }
    }

    /// Number of tasks.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the block holds no task.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the block is full.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == BLOCK_LEN
    }

    /// Adds a task; the block must not be full.
    #[inline]
    pub fn push(&mut self, task: T) {
        assert!(self.len < BLOCK_LEN, "push on a full block");
        self.items[self.len].write(task);
        self.len += 1;
    }

    /// Removes the most recently added task.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: slots below the old `len` are initialized; this one is now outside `len`,
        // so it is read exactly once.
        Some(unsafe { self.items[self.len].assume_init_read() })
    }
}

impl<T> Default for Block<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Drop for Block<T> {
    fn drop(&mut self) {
        while self.pop().is_some() {}
    }
}

use std::collections::VecDeque;

use crate::sync::{lock, AtomicUsize, Mutex, Ordering};

/// A locked queue of blocks (the public queues of `dq8`, the central queue of `sdq1`).
///
/// The owner adds and takes back blocks at the back (most recent first); thieves take from
/// the front (the oldest blocks, whose tasks tend to root the largest subtrees). Korch &
/// Rauber link the blocks into a list; a ring of block pointers gives the same O(1) moves at
/// both ends with one allocation per growth instead of a link per block.
pub struct BlockQueue<T> {
    blocks: Mutex<VecDeque<Box<Block<T>>>>,
    len: AtomicUsize,
}

impl<T> BlockQueue<T> {
    /// An empty queue.
    pub fn new() -> Self {
        BlockQueue {
            blocks: Mutex::new(VecDeque::with_capacity(16)),
            len: AtomicUsize::new(0),
        }
    }

    /// Blocks in the queue as of the last operation (no lock taken).
    #[inline]
    pub fn len_hint(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Adds a block at the back; returns whether the queue was empty.
    pub fn push_back(&self, b: Box<Block<T>>) -> bool {
        let mut q = lock(&self.blocks);
        let was_empty = q.is_empty();
        q.push_back(b);
        self.len.store(q.len(), Ordering::Relaxed);
        was_empty
    }

    /// Takes the most recent block (the owner's end).
    pub fn pop_back(&self) -> Option<Box<Block<T>>> {
        let mut q = lock(&self.blocks);
        let b = q.pop_back();
        self.len.store(q.len(), Ordering::Relaxed);
        b
    }

    /// Takes the oldest block (the thief's end).
    pub fn pop_front(&self) -> Option<Box<Block<T>>> {
        let mut q = lock(&self.blocks);
        let b = q.pop_front();
        self.len.store(q.len(), Ordering::Relaxed);
        b
    }
}

impl<T> Default for BlockQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Spare empty blocks a worker keeps for reuse.
const SPARE_BLOCKS: usize = 16;

/// A worker's private blocks: the one being filled/emptied and, optionally, full ones.
pub struct PrivateBlocks<T> {
    /// The block that `push`/`pop` work on.
    pub(crate) cur: Box<Block<T>>,
    /// Full private blocks, oldest at the front.
    pub(crate) full: VecDeque<Box<Block<T>>>,
    spare: Vec<Box<Block<T>>>,
}

impl<T> PrivateBlocks<T> {
    pub(crate) fn new() -> Self {
        PrivateBlocks {
            cur: Box::new(Block::new()),
            full: VecDeque::new(),
            spare: Vec::new(),
        }
    }

    /// Replaces `cur` with an empty block and returns the old one.
    #[inline]
    pub(crate) fn take_cur(&mut self) -> Box<Block<T>> {
        let fresh = self.spare.pop().unwrap_or_default();
        std::mem::replace(&mut self.cur, fresh)
    }

    /// Makes `b` the current block; the old (empty) current block is kept for reuse.
    #[inline]
    pub(crate) fn set_cur(&mut self, b: Box<Block<T>>) {
        let old = std::mem::replace(&mut self.cur, b);
        debug_assert!(old.is_empty());
        if self.spare.len() < SPARE_BLOCKS {
            self.spare.push(old);
        }
    }
}
