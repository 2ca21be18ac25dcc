//! A LIFO queue as a doubly linked list, so that a thief can take from the end opposite to
//! the owner's (Korch & Rauber's `dq5`: the oldest task, likely the root of a large subtree).

use std::mem::MaybeUninit;
use std::ptr::{self, NonNull};

use super::SeqQueue;
use crate::mem::{MemKind, NodeAlloc, NodeCache};
use crate::sync::Arc;

/// A doubly linked list node (opaque).
pub struct Node2<T> {
    next: *mut Node2<T>,
    prev: *mut Node2<T>,
    value: MaybeUninit<T>,
}

/// A doubly linked list: push/pop at the front (working end), `steal` at the back.
pub struct DList<T> {
    front: *mut Node2<T>,
    back: *mut Node2<T>,
    len: usize,
    alloc: Arc<NodeAlloc<Node2<T>>>,
}

// SAFETY: the list owns its nodes and the `T`s in them.
unsafe impl<T: Send> Send for DList<T> {}

impl<T> DList<T> {
    /// Unlinks `p`, frees its node through `free` and returns its value.
    ///
    /// # Safety
    /// `p` must be a node of this list.
    unsafe fn unlink(&mut self, p: NonNull<Node2<T>>, free: impl FnOnce(NonNull<Node2<T>>)) -> T {
        // SAFETY: `p` is an initialized node of this list (caller).
        let node = unsafe { p.as_ptr().read() };
        match NonNull::new(node.prev) {
            // SAFETY: neighbours are live nodes of this list.
            Some(prev) => unsafe { (*prev.as_ptr()).next = node.next },
            None => self.front = node.next,
        }
        match NonNull::new(node.next) {
            // SAFETY: as above.
            Some(next) => unsafe { (*next.as_ptr()).prev = node.prev },
            None => self.back = node.prev,
        }
        self.len -= 1;
        free(p);
        // SAFETY: initialized by `push`.
        unsafe { node.value.assume_init() }
    }
}

impl<T: Send> SeqQueue<T> for DList<T> {
    type Alloc = Arc<NodeAlloc<Node2<T>>>;
    type Cache = NodeCache<Node2<T>>;

    fn new_alloc(mem: MemKind) -> Self::Alloc {
        NodeAlloc::new(mem)
    }

    fn new(alloc: &Self::Alloc) -> Self {
        DList {
            front: ptr::null_mut(),
            back: ptr::null_mut(),
            len: 0,
            alloc: Arc::clone(alloc),
        }
    }

    fn cache(alloc: &Self::Alloc) -> Self::Cache {
        NodeCache::new(alloc)
    }

    #[inline]
    fn push(&mut self, task: T, cache: &mut Self::Cache) {
        cache.check_owner(&self.alloc);
        let p = cache.alloc();
        // SAFETY: fresh memory for one node.
        unsafe {
            p.as_ptr().write(Node2 {
                next: self.front,
                prev: ptr::null_mut(),
                value: MaybeUninit::new(task),
            })
        };
        match NonNull::new(self.front) {
            // SAFETY: the old front is a live node of this list.
            Some(f) => unsafe { (*f.as_ptr()).prev = p.as_ptr() },
            None => self.back = p.as_ptr(),
        }
        self.front = p.as_ptr();
        self.len += 1;
    }

    #[inline]
    fn pop(&mut self, cache: &mut Self::Cache) -> Option<T> {
        cache.check_owner(&self.alloc);
        let p = NonNull::new(self.front)?;
        // SAFETY: `p` is the front node of this list; freed memory goes to the cache.
        Some(unsafe { self.unlink(p, |n| cache.free(n)) })
    }

    #[inline]
    fn steal(&mut self, cache: &mut Self::Cache) -> Option<T> {
        cache.check_owner(&self.alloc);
        let p = NonNull::new(self.back)?;
        // SAFETY: `p` is the back node of this list.
        Some(unsafe { self.unlink(p, |n| cache.free(n)) })
    }

    #[inline]
    fn len(&self) -> usize {
        self.len
    }
}

impl<T> Drop for DList<T> {
    fn drop(&mut self) {
        while let Some(p) = NonNull::new(self.front) {
            let alloc = Arc::clone(&self.alloc);
            // SAFETY: `p` is the front node; its memory goes back to the shared allocator.
            drop(unsafe { self.unlink(p, |n| alloc.free_shared(n)) });
        }
    }
}
