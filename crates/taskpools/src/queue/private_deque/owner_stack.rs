//! [`OwnerStack`]: a private deque's elements lent to its owner as a plain stack
//! ([`PrivateDeque::lend`], [`PrivateDeque::give_back`]), so that the working phase's loop
//! pushes and pops without going through the deque.

use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;

use super::PrivateDeque;

/// A deque's elements lent to its owner by [`PrivateDeque::lend`]: a plain stack in the
/// owner's own variable, which pushes and pops without going through the deque. While lent,
/// the deque itself is empty: the owner gives the stack back ([`PrivateDeque::give_back`])
/// before it answers a request or asks the deque anything. Dropping a lent stack drops its
/// elements.
///
/// The stack is the vector's parts (buffer, length, capacity) and the dead prefix's length,
/// not a `Vec`: its own calls that are not inlined (growing, dropping) take them by value, so
/// where its user's calls do not see its address either (the working phase's loop, when the
/// task's `run` is inlined), the compiler can keep its length and buffer in registers across
/// the writes of pushed elements (which, through a `Vec` whose address a call has seen, it
/// must assume could overwrite the length).
pub struct OwnerStack<T> {
    /// The vector's buffer: `ptr[..len]` initialized, of which `ptr[head..len]` are live
    /// (`ptr[..head]` were read out by the deque before it lent them); `cap` elements.
    ptr: NonNull<T>,
    pub(super) len: usize,
    pub(super) cap: usize,
    head: usize,
    /// Owns `T`s (for the drop check).
    _own: PhantomData<T>,
}

// SAFETY: the stack owns its buffer and its elements as a `Vec<T>` does (the raw pointer is
// only how it holds the buffer), so it may move to another thread when `T` may, and be shared
// when `T` may: `&OwnerStack` gives no access to the elements at all.
unsafe impl<T: Send> Send for OwnerStack<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for OwnerStack<T> {}

impl<T> Default for OwnerStack<T> {
    /// An empty stack.
    fn default() -> Self {
        OwnerStack::from_vec(Vec::new(), 0)
    }
}

impl<T> OwnerStack<T> {
    /// Takes `v` apart; `v[..head]` are dead (read out).
    #[inline]
    fn from_vec(v: Vec<T>, head: usize) -> Self {
        debug_assert!(head <= v.len());
        let mut v = ManuallyDrop::new(v);
        OwnerStack {
            // A vector's pointer is never null (dangling when it owns no memory).
            ptr: NonNull::new(v.as_mut_ptr()).expect("a vector's pointer is not null"),
            len: v.len(),
            cap: v.capacity(),
            head,
            _own: PhantomData,
        }
    }

    /// Puts the vector back together: `(vector, dead prefix)`. Whoever takes the vector
    /// takes the duty to not drop its dead prefix.
    #[inline]
    fn into_vec(self) -> (Vec<T>, usize) {
        let s = ManuallyDrop::new(self);
        // SAFETY: the parts came from a vector (`from_vec`, `grown`) and were changed only as
        // a vector's `push`/`pop` would change them; `s` is not dropped, so the buffer has
        // one owner again.
        (
            unsafe { Vec::from_raw_parts(s.ptr.as_ptr(), s.len, s.cap) },
            s.head,
        )
    }

    /// Elements in the stack.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len - self.head
    }

    /// Whether the stack is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Pushes `v` as the newest element.
    ///
    /// If growing panics (a capacity overflow), the stack's elements are dropped and it is
    /// left empty (where a `Vec` would keep them): a panic ends a working phase anyway.
    #[inline(always)]
    pub fn push(&mut self, v: T) {
        if self.len == self.cap {
            let grown = std::mem::take(self).grown(1);
            // (The empty stack that `take` left needs no drop.)
            std::mem::forget(std::mem::replace(self, grown));
        }
        // SAFETY: `len < cap` (just checked or made so): the slot is in the buffer and not
        // initialized; it becomes the newest live element.
        unsafe { self.ptr.as_ptr().add(self.len).write(v) };
        self.len += 1;
    }

    /// Pops the newest element.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<T> {
        if self.len > self.head {
            self.len -= 1;
            // SAFETY: `ptr[len]` was the newest live element (`head <= len`); the length
            // now excludes it, so it is read out once.
            Some(unsafe { self.ptr.as_ptr().add(self.len).read() })
        } else {
            None
        }
    }

    /// The stack with room for `extra` more elements, taken and returned by value (see
    /// the type's documentation): its live elements move to a new vector (the dead prefix
    /// is left behind), at least twice as large.
    #[cold]
    #[inline(never)]
    fn grown(self, extra: usize) -> Self {
        let live = self.len();
        let need = live.checked_add(extra).expect("capacity overflow");
        // If this panics (capacity overflow, or allocation failure), `self` still owns
        // everything and drops as usual.
        let mut v = Vec::with_capacity(need.max(self.cap.saturating_mul(2)));
        let (mut old, head) = self.into_vec();
        // SAFETY: `old[head..]` are the live elements; they move (a bitwise copy, the source
        // then forgotten below) into `v`, which has room for `need >= live` and does not
        // overlap `old`. `old`'s length goes to 0, so dropping it frees its buffer and no
        // element (the dead prefix was read out; the live ones now belong to `v`).
        unsafe {
            std::ptr::copy_nonoverlapping(old.as_ptr().add(head), v.as_mut_ptr(), live);
            v.set_len(live);
            old.set_len(0);
        }
        drop(old);
        OwnerStack::from_vec(v, 0)
    }
}

impl<T> Drop for OwnerStack<T> {
    #[inline(always)]
    fn drop(&mut self) {
        /// Out of line, with the parts by value (see the type's documentation).
        #[inline(never)]
        fn drop_parts<T>(s: OwnerStack<T>) {
            let (mut v, h) = s.into_vec();
            // SAFETY: `v[..h]` were read out by the deque before it lent them (dead); drop
            // only the live elements, and leave the vector empty for its own drop.
            unsafe {
                let live = v.len() - h;
                let p = v.as_mut_ptr().add(h);
                v.set_len(0);
                std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(p, live));
            }
        }
        drop_parts(std::mem::take(self));
    }
}

impl<T> PrivateDeque<T> {
    /// Lends the deque's elements to its owner as a plain stack; the deque is empty until
    /// [`give_back`](Self::give_back). The work hint stays as it was: the owner keeps it
    /// meaning "the stack is not empty" ([`advertised`](Self::advertised),
    /// [`set_hint`](Self::set_hint)).
    #[inline]
    pub fn lend(&self) -> OwnerStack<T> {
        OwnerStack::from_vec(std::mem::take(self.items()), self.head.replace(0))
    }

    /// Takes a lent stack back. Elements pushed into the deque meanwhile stay the newest.
    #[inline]
    pub fn give_back(&self, mut s: OwnerStack<T>) {
        let pushed = self.len();
        if s.cap - s.len < pushed {
            // Still inside `s`, whose drop knows its dead prefix (this may panic).
            s = s.grown(pushed);
        }
        let (mut items, head) = s.into_vec();
        let mine = self.items();
        if pushed > 0 {
            // Pushed while lent (not by the working phase): after the lent ones.
            let h = self.head.get();
            // SAFETY: `mine[h..]` are live (`pushed` of them); they move to the end of
            // `items`, which has room for them (grown above), and `mine`'s length then
            // excludes them (its dead prefix was read out already).
            unsafe {
                let live = pushed;
                std::ptr::copy_nonoverlapping(
                    mine.as_ptr().add(h),
                    items.as_mut_ptr().add(items.len()),
                    live,
                );
                items.set_len(items.len() + live);
                mine.set_len(0);
            }
        } else {
            // SAFETY: no live elements; the dead prefix was read out already.
            unsafe { mine.set_len(0) };
        }
        *mine = items;
        self.head.set(head);
    }

    /// Whether a thief waits for an answer: one plain load.
    #[inline(always)]
    pub fn pending(&self) -> bool {
        self.req.pending()
    }

    /// Whether the deque advertises work.
    #[inline(always)]
    pub fn advertised(&self) -> bool {
        self.req.advertised()
    }

    /// Sets the work hint (for an owner whose stack is lent: on when it pushed onto an empty
    /// stack, off when it popped the last element).
    #[inline]
    pub fn set_hint(&self, work: bool) {
        self.req.advertise(work);
    }
}
