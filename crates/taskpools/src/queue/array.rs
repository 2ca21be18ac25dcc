//! A LIFO queue as an array (the `sq2`, `dq3`, `dq7` queues of Korch & Rauber (2002)). Their
//! arrays have a fixed size; this one doubles when full (Korch & Rauber §4.2: a pool must not
//! limit the algorithm). `steal` takes from the working end, like their `dq7`.

use super::SeqQueue;
use crate::mem::MemKind;

/// A growable array used as a stack.
pub struct ArrayStack<T> {
    items: Vec<T>,
}

/// Initial capacity, allocated when the queue is created (Korch & Rauber: "during initialization").
const INITIAL: usize = 256;

impl<T: Send> SeqQueue<T> for ArrayStack<T> {
    type Alloc = ();
    type Cache = ();

    fn new_alloc(_mem: MemKind) -> Self::Alloc {}

    fn new(_alloc: &()) -> Self {
        ArrayStack {
            items: Vec::with_capacity(INITIAL),
        }
    }

    fn cache(_alloc: &()) {}

    #[inline]
    fn push(&mut self, task: T, _cache: &mut ()) {
        self.items.push(task);
    }

    #[inline]
    fn pop(&mut self, _cache: &mut ()) -> Option<T> {
        self.items.pop()
    }

    #[inline]
    fn steal(&mut self, _cache: &mut ()) -> Option<T> {
        self.items.pop()
    }

    #[inline]
    fn len(&self) -> usize {
        self.items.len()
    }
}
