//! A doubly linked list with a lock per node, so that operations at its two ends run at the
//! same time: the queue of Korch & Rauber's `sq3` (a central FIFO: put at the back, get at the
//! front) and `dq6` (a queue per worker: the owner puts and takes at the front, thieves take
//! the oldest task at the back), "A Comparison of Task Pools for Dynamic Load Balancing of
//! Irregular Algorithms" (2002), §6.3 and Table 2 ("locking: tasks").
//!
//! # Layout
//!
//! Two sentinels, `head` and `tail`, each a mutex of its own (cache-padded: the two ends do
//! not share a line), and between them the nodes. A node is an `Arc` holding one mutex over
//! its two links and its task. A link is `Option<Arc<node>>`, `None` standing for the
//! sentinel at that end: `head.next` is the first node, `tail.prev` the last, a first node's
//! `prev` and a last node's `next` are `None`.
//!
//! # Invariants
//!
//! 1. A node is *linked* while it holds its task: it enters the list with it and gives it up
//!    in the critical section that unlinks it, which also clears both its links. A node
//!    never enters the list twice (every push makes a new one).
//! 2. Links change only under the locks of both places they connect: an insertion holds the
//!    two neighbours of the new node, an unlinking holds the node and both its neighbours.
//!    So for linked nodes and sentinels, whenever neither lock is held, `a.next` is `b` if
//!    and only if `b.prev` is `a`, and a linked place never links to an unlinked node.
//! 3. `head.next` is `None` iff `tail.prev` is `None` iff the list is empty: a push into an
//!    empty list and the unlinking of the last node hold both sentinels.
//!
//! # The operations and the lock order
//!
//! * `push_front`: lock `head`, then the place after it (the first node, or `tail`); insert
//!   between them.
//! * `pop_front`: lock `head`, then the first node, then the place after it; unlink the node.
//! * `push_back`: lock `tail`, read its `prev` (the last node `l`, or `head`), unlock; lock
//!   `l`, then `tail`; **re-validate** that `tail.prev` is still `l` (else unlock all and
//!   retry); insert between them.
//! * `pop_back`: lock `tail`, read the last node `l`, unlock; lock `l`, read its `prev` `p`,
//!   unlock; lock `p` (or `head`), `l`, `tail`; **re-validate** that `tail.prev` is still `l`
//!   and `l.prev` still `p` (else unlock all and retry); unlink `l`.
//!
//! Every operation locks from left to right, and the back operations pay for it: they must
//! read a pointer, let go, and lock in order, so what they read may be stale by then — hence
//! the re-validation. The front operations read each link under the lock of the place that
//! holds it and lock its target before letting go (lock coupling), so what they read cannot
//! change: they never retry.
//!
//! *Why this cannot deadlock.* Give every node a key when it is pushed: a front push takes a
//! key below every key given so far, a back push one above; `head` is −∞ and `tail` +∞.
//! Insertions happen only at the ends and unlinking keeps the others' order, so the list is
//! always sorted by key, and a key never changes. Every blocking lock a thread takes has a
//! larger key than every lock it holds: lock coupling follows `next` links, and `pop_back`
//! locks `p` < `l` < `tail`, where `p` was `l.prev` when read, so `p`'s key is below `l`'s
//! forever, even if `p` has been unlinked since. Locks taken in one global order admit no
//! cycle of waiting threads. (A `pop_back` that locked `tail`, then `l`, then `p`, needing
//! no re-validation, deadlocks against a `pop_front` on one or two elements: a loom model
//! finds it.)
//!
//! *Why no task is lost or duplicated.* A task is taken only in the critical section that
//! unlinks its node, while holding the node and both its neighbours; that section first
//! checks that the node is linked where the operation read it (front operations by lock
//! coupling, back operations by re-validation). Under invariant 2, `tail.prev` being `l` says
//! that `l` is linked and last, and `l.prev` being `p` that `p` is its linked (or sentinel)
//! left neighbour. A stale pointer is caught: a node unlinked meanwhile is no sentinel's or
//! linked node's neighbour any more, and a node pushed meanwhile changed `tail.prev` (back)
//! or `l.prev` (front, when `l` was first). So a node is unlinked once, its task taken once,
//! and a push links its new node between two places that are adjacent at that moment,
//! where every later operation can reach it. A `pop_*` returns `None` only when it finds,
//! under that end's sentinel lock, the list empty (invariant 3). `len` is changed inside the
//! critical sections, so it never goes below zero (the pop of a node comes after the push
//! that linked it), and a put's "was empty" agrees with the order of the critical sections.
//!
//! *Where the ends meet.* Empty: `push_front` locks `head`, `tail`; `push_back` locks
//! `head`, `tail`. One node `a`: `pop_front` and `pop_back` both lock `head`, `a`, `tail`, in
//! that order. Two nodes `a b`: `pop_front` locks `head a b`, `pop_back` locks `a b tail`.
//! Operations at the two ends run at the same time from three nodes on (a `push_back` and a
//! `pop_front`) or four (two pops). The loom models race the two ends on 0, 1 and 2 nodes.
//!
//! # Node memory
//!
//! Nodes are `Arc`s from the global allocator, whatever `--mem` says (the pools built on this
//! list accept every [`MemKind`](crate::MemKind) and ignore it). The back operations read a
//! node's address, drop every lock, and lock it later: the node may have been unlinked in
//! between, and its memory must then still be that node, unlinked for good. Korch & Rauber's
//! free lists would hand it to the next push at once, possibly at the other end, which
//! breaks both the re-validation (the same address, linked again) and the lock order (a key
//! that changed). Reference counts keep a node alive, and never reused, while any thread
//! holds its address, with no `unsafe`; the price is a few uncontended reference-count
//! updates per operation (three in a `push_front`, six in a `pop_front`) and one allocation
//! per push, against the memory manager's free-list pop. (A design that locked out of order
//! with `try_lock`, backing off on failure, would read every pointer under a lock it holds
//! and could use the memory managers' raw nodes, at the price of `unsafe` pointer code.)

use crossbeam_utils::CachePadded;

use crate::sync::{lock, Arc, AtomicUsize, Mutex, Ordering};

#[cfg(all(test, loom))]
mod loom_models;
#[cfg(all(test, not(loom)))]
mod tests;

/// A neighbour: a node, or `None` for the sentinel at that end.
type Link<T> = Option<Arc<Node<T>>>;

/// One task with its links, under the node's own lock.
struct Node<T> {
    links: Mutex<Links<T>>,
}

/// What a node's (or a sentinel's) lock guards. A node is linked while `value` is `Some`.
struct Links<T> {
    prev: Link<T>,
    next: Link<T>,
    value: Option<T>,
}

impl<T> Links<T> {
    const fn empty() -> Self {
        Links {
            prev: None,
            next: None,
            value: None,
        }
    }
}

/// Whether `link` points to `node`.
#[inline]
fn points_to<T>(link: &Link<T>, node: &Arc<Node<T>>) -> bool {
    link.as_ref().is_some_and(|n| Arc::ptr_eq(n, node))
}

/// Whether two links point to the same place.
#[inline]
fn same<T>(a: &Link<T>, b: &Link<T>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        _ => false,
    }
}

/// Planted bugs for the loom models: each must make some model fail.
#[cfg(loom)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mutation {
    None,
    /// `push_back` and `pop_back` act on what they read without re-validating it.
    SkipRevalidation,
    /// `pop_back` locks `tail`, the last node and the one before it, right to left.
    RightToLeft,
    /// `drop` unhooks the two ends but leaves the links between nodes: each pair of
    /// neighbours keeps the other alive (`next` one way, `prev` the other).
    KeepLinksOnDrop,
}

/// A doubly linked list with a lock per node: the two ends work at the same time, and any
/// thread may use either end. The front is LIFO (`push_front`/`pop_front`); `push_back` with
/// `pop_front` is a FIFO queue (`sq3`), `pop_back` takes the oldest task of a LIFO front
/// (`dq6`'s thieves). The module docs give the protocol and why it neither deadlocks nor
/// loses a task.
///
/// ```
/// use taskpools::queue::NodeLockedDList;
///
/// let q = NodeLockedDList::new();
/// assert!(q.push_front(1)); // was empty
/// assert!(!q.push_front(2));
/// q.push_back(0);
/// assert_eq!(q.len_hint(), 3);
/// assert_eq!(q.pop_front(), Some(2)); // the newest at the front
/// assert_eq!(q.pop_back(), Some(0)); // the oldest at the back
/// assert_eq!(q.pop_back(), Some(1));
/// assert_eq!((q.pop_front(), q.pop_back()), (None, None));
/// ```
pub struct NodeLockedDList<T> {
    head: CachePadded<Mutex<Links<T>>>,
    tail: CachePadded<Mutex<Links<T>>>,
    len: CachePadded<AtomicUsize>,
    #[cfg(loom)]
    mutation: Mutation,
}

impl<T> Default for NodeLockedDList<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> NodeLockedDList<T> {
    /// An empty list.
    ///
    /// ```
    /// let q = taskpools::queue::NodeLockedDList::<u32>::new();
    /// assert!(q.is_empty());
    /// ```
    pub fn new() -> Self {
        NodeLockedDList {
            head: CachePadded::new(Mutex::new(Links::empty())),
            tail: CachePadded::new(Mutex::new(Links::empty())),
            len: CachePadded::new(AtomicUsize::new(0)),
            #[cfg(loom)]
            mutation: Mutation::None,
        }
    }

    /// A list with a planted bug, for the loom models that must find it.
    #[cfg(all(loom, test))]
    pub(crate) fn with_mutation(mutation: Mutation) -> Self {
        let mut q = Self::new();
        q.mutation = mutation;
        q
    }

    /// Whether the back operations skip their re-validation (a planted bug under loom).
    #[inline(always)]
    fn skips_revalidation(&self) -> bool {
        #[cfg(loom)]
        return self.mutation == Mutation::SkipRevalidation;
        #[cfg(not(loom))]
        false
    }

    /// The lock of `link`'s place when it is a left neighbour (`None`: the head).
    #[inline]
    fn left<'a>(&'a self, link: &'a Link<T>) -> &'a Mutex<Links<T>> {
        match link {
            None => &self.head,
            Some(n) => &n.links,
        }
    }

    /// The lock of `link`'s place when it is a right neighbour (`None`: the tail).
    #[inline]
    fn right<'a>(&'a self, link: &'a Link<T>) -> &'a Mutex<Links<T>> {
        match link {
            None => &self.tail,
            Some(n) => &n.links,
        }
    }

    /// Number of tasks (exact when no operation is in flight; read without a lock).
    ///
    /// ```
    /// let q = taskpools::queue::NodeLockedDList::new();
    /// q.push_back('a');
    /// assert_eq!(q.len_hint(), 1);
    /// ```
    #[inline]
    pub fn len_hint(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Whether the list looks empty ([`len_hint`](Self::len_hint) is 0).
    ///
    /// ```
    /// let q = taskpools::queue::NodeLockedDList::new();
    /// q.push_front(1u8);
    /// q.pop_back();
    /// assert!(q.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len_hint() == 0
    }

    /// Inserts at the front; returns whether the list was empty before. Locks `head` and the
    /// first node (or `tail`).
    ///
    /// ```
    /// let q = taskpools::queue::NodeLockedDList::new();
    /// assert!(q.push_front(1));
    /// assert!(!q.push_front(2));
    /// assert_eq!(q.pop_front(), Some(2));
    /// ```
    pub fn push_front(&self, value: T) -> bool {
        let mut head = lock(&self.head);
        // Lock coupling: the first place cannot change while `head` is held.
        let first = head.next.take();
        let first_ref = first.clone();
        let mut right = lock(self.right(&first_ref));
        let node = Arc::new(Node {
            links: Mutex::new(Links {
                prev: None,
                next: first,
                value: Some(value),
            }),
        });
        head.next = Some(Arc::clone(&node));
        right.prev = Some(node);
        // Inside the critical section: the pop that unlinks this node comes after it.
        self.len.fetch_add(1, Ordering::SeqCst) == 0
    }

    /// Removes from the front (the newest of the front pushes, the oldest of the back
    /// pushes). Locks `head`, the first node and the place after it; `None` only if `head`
    /// has no next node at that moment.
    ///
    /// ```
    /// let q = taskpools::queue::NodeLockedDList::new();
    /// q.push_back(1);
    /// q.push_back(2);
    /// assert_eq!(q.pop_front(), Some(1)); // FIFO with push_back
    /// ```
    pub fn pop_front(&self) -> Option<T> {
        let mut head = lock(&self.head);
        let node = head.next.clone()?;
        let mut links = lock(&node.links);
        let after = links.next.clone();
        let mut right = lock(self.right(&after));
        let value = Self::unlink(&mut head, &mut links, &mut right);
        self.len.fetch_sub(1, Ordering::SeqCst);
        Some(value)
    }

    /// Inserts at the back; returns whether the list was empty before. Locks the last node
    /// (or `head`) and `tail`, re-validating after locking that the node is still last.
    ///
    /// ```
    /// let q = taskpools::queue::NodeLockedDList::new();
    /// assert!(q.push_back(1));
    /// q.push_back(2);
    /// assert_eq!(q.pop_back(), Some(2));
    /// ```
    pub fn push_back(&self, value: T) -> bool {
        loop {
            let last = lock(&self.tail).prev.clone();
            let mut left = lock(self.left(&last));
            let mut tail = lock(&self.tail);
            if !same(&tail.prev, &last) && !self.skips_revalidation() {
                // Something was pushed or popped at the back meanwhile.
                drop((tail, left));
                crate::sync::spin_loop();
                continue;
            }
            let node = Arc::new(Node {
                links: Mutex::new(Links {
                    prev: tail.prev.take(),
                    next: None,
                    value: Some(value),
                }),
            });
            left.next = Some(Arc::clone(&node));
            tail.prev = Some(node);
            return self.len.fetch_add(1, Ordering::SeqCst) == 0;
        }
    }

    /// Removes from the back (the oldest of the front pushes). Locks the node before the
    /// last (or `head`), the last node and `tail`, re-validating after locking that they are
    /// still adjacent and last; `None` only if `tail` has no previous node at that moment.
    ///
    /// ```
    /// let q = taskpools::queue::NodeLockedDList::new();
    /// (1..=3).for_each(|t| { q.push_front(t); });
    /// assert_eq!(q.pop_back(), Some(1)); // a thief takes the oldest
    /// assert_eq!(q.pop_front(), Some(3)); // the owner the newest
    /// ```
    pub fn pop_back(&self) -> Option<T> {
        #[cfg(loom)]
        if self.mutation == Mutation::RightToLeft {
            return self.pop_back_right_to_left();
        }
        loop {
            let node = lock(&self.tail).prev.clone()?;
            let before = {
                let links = lock(&node.links);
                if links.value.is_none() {
                    // Unlinked meanwhile: read the new last node.
                    drop(links);
                    crate::sync::spin_loop();
                    continue;
                }
                links.prev.clone()
            };
            let mut left = lock(self.left(&before));
            let mut links = lock(&node.links);
            let mut tail = lock(&self.tail);
            let adjacent = points_to(&tail.prev, &node) && same(&links.prev, &before);
            if !adjacent && !self.skips_revalidation() {
                drop((tail, links, left));
                crate::sync::spin_loop();
                continue;
            }
            let value = Self::unlink(&mut left, &mut links, &mut tail);
            self.len.fetch_sub(1, Ordering::SeqCst);
            return Some(value);
        }
    }

    /// The planted lock-order bug: `tail`, then the last node, then the one before it, each
    /// read under the lock held (so no re-validation is needed) but locked right to left.
    /// The nodes it holds are forgotten, not dropped, when loom unwinds from the deadlock it
    /// finds: a loom `Arc` cannot be dropped once the execution is over.
    #[cfg(loom)]
    fn pop_back_right_to_left(&self) -> Option<T> {
        struct ForgetOnUnwind<T>(Link<T>);
        impl<T> Drop for ForgetOnUnwind<T> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    std::mem::forget(self.0.take());
                }
            }
        }
        let mut tail = lock(&self.tail);
        let node = ForgetOnUnwind(Some(tail.prev.clone()?));
        let node_ref = node.0.as_ref().expect("just set");
        let mut links = lock(&node_ref.links);
        let before = ForgetOnUnwind(links.prev.clone());
        let mut left = lock(self.left(&before.0));
        let value = Self::unlink(&mut left, &mut links, &mut tail);
        self.len.fetch_sub(1, Ordering::SeqCst);
        Some(value)
    }

    /// Unlinks the node whose links are `links` from between `left` and `right` (all three
    /// locked) and returns its task; the node keeps no links.
    #[inline]
    fn unlink(left: &mut Links<T>, links: &mut Links<T>, right: &mut Links<T>) -> T {
        left.next = links.next.take();
        right.prev = links.prev.take();
        links
            .value
            .take()
            .expect("a linked node holds its task (node-locked list)")
    }
}

impl<T> Drop for NodeLockedDList<T> {
    fn drop(&mut self) {
        // A loom model that failed (a planted deadlock found) unwinds through here with its
        // execution over, where taking a lock panics again and aborts the test run.
        #[cfg(loom)]
        if std::thread::panicking() {
            return;
        }
        // Node by node from the front, clearing both links of each: no recursion through a
        // long chain of `next` links, no cycle of `prev`/`next` references left behind.
        let head = self.head.get_mut().unwrap_or_else(|e| e.into_inner());
        let mut next = head.next.take();
        let tail = self.tail.get_mut().unwrap_or_else(|e| e.into_inner());
        tail.prev = None;
        #[cfg(loom)]
        if self.mutation == Mutation::KeepLinksOnDrop {
            return;
        }
        while let Some(node) = next {
            let mut links = lock(&node.links);
            links.prev = None;
            next = links.next.take();
        }
    }
}
