//! Task priorities (OpenMP's `priority` clause, StarPU's `STARPU_PRIORITY`):
//! [`Scope::spawn_with_priority`].
//!
//! Design note. Once a data-flow scope has spawned a task with a priority, every task of it
//! that becomes ready goes into a ready heap of the scope, the one of the worker that readied
//! it, ordered by priority (the newest first among equals, as a worker's deque would run
//! them), and a *ticket* of that heap goes where the task would have gone (the worker's
//! deque, or the runtime's injector, whose tasks go to the first heap). Whoever runs a
//! ticket, the worker itself or a thief, takes the most urgent task of the ticket's heap and
//! runs it. (A task with a place hint goes to its place as before. A spawner that throttles
//! runs its new ready task at once if no task of its heap is more urgent; otherwise it runs
//! the heap's most urgent one and puts the new task in that entry's place, where the ticket
//! queued for the entry takes it, so the counts still match.) One ticket is queued per heap
//! entry, after the entry, and each ticket takes exactly one entry of its heap, so a ticket
//! never finds its heap empty and no task is left in one. A worker therefore runs its most
//! urgent ready task first, and a thief that takes a ticket takes the victim's most urgent
//! one. A ticket is one job header per heap, queued as many times as its heap has entries;
//! it is queued only on the public deques, the place deques and the injector, which store
//! the pointer and never link or mark the header (nor compare it with another), and its
//! function may run on several threads at once: the one exception to `JobRef::execute`'s
//! "at most once". The last ticket to run takes the last task, whose completion is its last
//! access to the scope, so the heaps outlive every ticket.
//!
//! A heap is locked by its worker and by the thieves that took its tickets, so the locks are
//! mostly uncontended; priorities order tasks within a worker's heap, and across workers
//! only as far as thieves take the most urgent task of their victim. Scopes that never use a
//! priority make no heaps and pay one load (of a line the workers only read) per ready task.

use std::collections::BinaryHeap;

use super::task::{run_task, TaskDesc, NO_PLACE};
use super::{Accesses, Scope};
use crate::runtime::job::{JobHeader, JobRef};
use crate::runtime::worker::WorkerThread;
use crate::runtime::Registry;
use crate::sync::{lock, Mutex};
use std::sync::OnceLock;

/// A ready task in the heap: the highest priority first, then the newest.
struct Entry {
    priority: i16,
    seq: u64,
    desc: *const TaskDesc,
}

// SAFETY: the descriptor is handed from the thread that readied it to the one that runs it
// through the heap's lock, as through a deque.
unsafe impl Send for Entry {}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.priority, self.seq) == (other.priority, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.priority, self.seq).cmp(&(other.priority, other.seq))
    }
}

/// One worker's ready heap and its ticket (see the design note), on lines of its own.
#[repr(align(128))]
struct Slot {
    ticket: JobHeader,
    heap: Mutex<(BinaryHeap<Entry>, u64)>,
}

/// A root scope's ready heaps, one per worker, made at its first prioritized spawn.
pub(super) struct Priorities {
    slots: OnceLock<Box<[Slot]>>,
}

impl Priorities {
    pub(super) fn new() -> Priorities {
        Priorities {
            slots: OnceLock::new(),
        }
    }

    /// Makes the heaps, one per worker of `registry` (the spawner's thread, before the first
    /// prioritized task can be ready).
    pub(super) fn enable(&self, registry: &Registry) {
        self.slots.get_or_init(|| {
            (0..registry.threads.max(1))
                .map(|_| Slot {
                    ticket: JobHeader::new(run_ticket),
                    heap: Mutex::new((BinaryHeap::new(), 0)),
                })
                .collect()
        });
    }

    /// The heaps, once the scope uses priorities: ready tasks then go through them.
    #[inline]
    pub(super) fn in_use(&self) -> bool {
        self.slots.get().is_some()
    }

    /// For a throttled spawner on worker `w`, which runs a ready task at once instead of
    /// queueing its new ready task `d`: the task to run, the more urgent of `d` and the most
    /// urgent of `w`'s heap (`d` on a tie: it is the newest). If that is the heap's, `d`
    /// takes its entry's place, and the ticket queued for that entry stays queued for `d`.
    #[cold]
    pub(super) fn take_at_once(&self, d: *const TaskDesc, w: &WorkerThread) -> *const TaskDesc {
        let slots = self.slots.get().expect("priorities in use");
        let slot = &slots[w.index % slots.len()];
        let mut h = lock(&slot.heap);
        // SAFETY: a live descriptor (its parent waits for it).
        let priority = unsafe { &*d }.priority;
        if h.0.peek().is_none_or(|top| top.priority <= priority) {
            return d;
        }
        let seq = h.1;
        h.1 += 1;
        let mut top = h.0.peek_mut().expect("not empty");
        // (Re-sifted as `top` drops.)
        std::mem::replace(
            &mut *top,
            Entry {
                priority,
                seq,
                desc: d,
            },
        )
        .desc
    }

    /// Queues the ready task `d` in the current worker's heap (the first one's, off the
    /// runtime's workers) and a ticket for it where the task would have gone.
    #[cold]
    pub(super) fn push(&self, d: *const TaskDesc, registry: &Registry) {
        let slots = self.slots.get().expect("priorities in use");
        let me = WorkerThread::current().filter(|w| std::ptr::eq(&*w.registry, registry));
        // A raw pointer to the whole slot: the ticket's function steps back from the header
        // to the slot's heap, so the header's pointer must come from this one.
        let slot: *const Slot = &slots[me.map_or(0, |w| w.index) % slots.len()];
        // SAFETY: an element of the live slice.
        let slot_ref = unsafe { &*slot };
        {
            let mut h = lock(&slot_ref.heap);
            let seq = h.1;
            h.1 += 1;
            // SAFETY: a live descriptor (its parent waits for it).
            let priority = unsafe { &*d }.priority;
            h.0.push(Entry {
                priority,
                seq,
                desc: d,
            });
        }
        // SAFETY: the ticket header lives as long as the root scope, which outlives every
        // ticket (design note); its function tolerates any number of executions. Derived
        // from the slot's raw pointer, so `run_ticket` may reach the rest of the slot.
        let job = unsafe { JobRef::from_header(std::ptr::addr_of!((*slot).ticket)) };
        match me {
            Some(w) => w.push_spawn(job),
            None => registry.inject(job),
        }
    }
}

/// A ticket's job: runs the most urgent ready task of its worker's heap.
unsafe fn run_ticket(h: *const JobHeader) {
    let off = std::mem::offset_of!(Slot, ticket);
    // SAFETY: the header is the `ticket` field of a live `Slot` (design note).
    let slot = unsafe { &*h.cast::<u8>().sub(off).cast::<Slot>() };
    let d = lock(&slot.heap)
        .0
        .pop()
        .expect("one heap entry per ticket")
        .desc;
    // SAFETY: taken from the heap once, so run once; ready, and alive until it completes.
    // The scope's state is not touched after this.
    unsafe { run_task(d.cast()) };
}

impl<'s, 'e> Scope<'s, 'e> {
    /// [`spawn`](Self::spawn) with a priority (OpenMP's `priority`, StarPU's): from the first
    /// such spawn on, each worker runs the ready tasks it readied most urgent first (the
    /// others have priority 0; among equals, the newest first), and a thief takes its
    /// victim's most urgent one; there is no order across workers beyond that. Dependences
    /// come first: a priority orders only tasks that are ready; tasks with a place hint
    /// ([`spawn_at`](Self::spawn_at)) go to their place instead. For the critical path of a
    /// factorization (its panel tasks): the ready tasks of a scope that uses priorities pass
    /// through a locked heap per worker, which costs more per task than a deque.
    ///
    /// ```
    /// use std::sync::Mutex;
    ///
    /// let rt = taskpools::Runtime::new(1)?;
    /// let order = Mutex::new(Vec::new());
    /// rt.install(|| {
    ///     taskpools::dataflow::scope(|df| {
    ///         for p in [2, 0, 5, 1] {
    ///             let order = &order;
    ///             df.spawn_with_priority(p, (), move |_, ()| order.lock().unwrap().push(p));
    ///         }
    ///     })
    /// });
    /// // One worker, all four ready: the most urgent first.
    /// assert_eq!(order.into_inner().unwrap(), [5, 2, 1, 0]);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn spawn_with_priority<A, F>(&self, priority: i16, accesses: A, f: F)
    where
        A: Accesses,
        F: for<'t> FnOnce(&'t Scope<'t, 's>, A::Data<'t>) + Send + 's,
    {
        // Before the task can become ready: it goes through the heaps too.
        let frame = self.frame();
        frame.shared().prio.enable(frame.registry());
        self.spawn_to(NO_PLACE, priority, &[], accesses, f);
    }
}
