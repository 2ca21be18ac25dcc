//! A LIFO queue as a singly linked list (the `sq1`, `dq1`, `dq2` queues of Korch & Rauber
//! (2002)). `steal` takes from the working end, like their `dq2`.

use std::mem::MaybeUninit;
use std::ptr::{self, NonNull};

use super::SeqQueue;
use crate::mem::{MemKind, NodeAlloc, NodeCache};
use crate::sync::Arc;

/// A list node (opaque).
pub struct Node<T> {
    next: *mut Node<T>,
    value: MaybeUninit<T>,
}

/// A singly linked LIFO list whose nodes come from a memory manager.
pub struct ListStack<T> {
    head: *mut Node<T>,
    len: usize,
    alloc: Arc<NodeAlloc<Node<T>>>,
}

// SAFETY: the list owns its nodes and the `T`s in them; sending the list sends them.
unsafe impl<T: Send> Send for ListStack<T> {}

impl<T> SeqQueue<T> for ListStack<T>
where
    T: Send,
{
    type Alloc = Arc<NodeAlloc<Node<T>>>;
    type Cache = NodeCache<Node<T>>;

    fn new_alloc(mem: MemKind) -> Self::Alloc {
        NodeAlloc::new(mem)
    }

    fn new(alloc: &Self::Alloc) -> Self {
        ListStack {
            head: ptr::null_mut(),
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
        // SAFETY: `p` is fresh, uninitialized memory for one `Node<T>`.
        unsafe {
            p.as_ptr().write(Node {
                next: self.head,
                value: MaybeUninit::new(task),
            })
        };
        self.head = p.as_ptr();
        self.len += 1;
    }

    #[inline]
    fn pop(&mut self, cache: &mut Self::Cache) -> Option<T> {
        cache.check_owner(&self.alloc);
        let p = NonNull::new(self.head)?;
        // SAFETY: `p` is the head node, initialized by `push` and owned by this list.
        let node = unsafe { p.as_ptr().read() };
        self.head = node.next;
        self.len -= 1;
        // SAFETY: the node's value has been moved into `node`; the memory is free.
        unsafe { cache.free(p) };
        // SAFETY: `push` initialized the value.
        Some(unsafe { node.value.assume_init() })
    }

    #[inline]
    fn steal(&mut self, cache: &mut Self::Cache) -> Option<T> {
        self.pop(cache)
    }

    #[inline]
    fn len(&self) -> usize {
        self.len
    }
}

impl<T> Drop for ListStack<T> {
    fn drop(&mut self) {
        while let Some(p) = NonNull::new(self.head) {
            // SAFETY: an initialized node owned by this list.
            let node = unsafe { p.as_ptr().read() };
            self.head = node.next;
            // SAFETY: the value was moved out; the memory is free.
            unsafe { self.alloc.free_shared(p) };
            // SAFETY: initialized by `push`; dropped exactly once here.
            drop(unsafe { node.value.assume_init() });
        }
    }
}
