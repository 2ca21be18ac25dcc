//! Task priorities (OpenMP's `priority` clause, StarPU's `STARPU_PRIORITY`):
//! [`Scope::spawn_with_priority`].
//!
//! Design note. Once a data-flow scope has spawned a task with a priority, every task of it
//! that becomes ready goes into a ready heap of the scope, the one of the worker that readied
//! it, ordered by priority (the newest first among equals, as a worker's deque would run
//! them), and a *ticket* of that heap goes where the task would have gone (the worker's
//! deque, or the runtime's injector, whose tasks go to the first heap). Whoever runs a
//! ticket takes the most urgent task of the ticket's heap and runs it. (A task with a place
//! hint goes to its place as before. A spawner that throttles runs its new ready task at
//! once if no task of its heap is more urgent; otherwise it runs the heap's most urgent one
//! and puts the new task in that entry's place, where the ticket queued for that entry takes
//! it.)
//!
//! A thief that runs a ticket of another worker's heap also moves up to half of what is left
//! there (Manber's steal-half), the most urgent first, into its own heap and queues a ticket
//! of its own for each, so that it runs them without touching the victim's lock. The tickets
//! left behind for the moved entries become *spare*: each heap counts its spare units, and
//! for every heap, at all times, its tickets not yet counted off (queued or running) number
//! its entries plus its spare units. Tickets are interchangeable: a thief counts itself off
//! as spare if a unit is counted (one compare-and-swap, no lock), and a ticket that finds
//! its heap empty counts itself off, or, if another ticket took the last unit meanwhile
//! (then an entry came: the count says one is there for it), looks again. A count-off never
//! takes the count below zero, so no entry is left without a ticket. A ticket's last access
//! to the heaps is its task's completion or its count-off (Release, made through raw
//! pointers: no reference argument, which would be protected past it, covers the slots), so the root scope's end, which waits
//! for every task and then for every spare count to reach 0 (Acquire), frees the heaps after
//! every ticket has used them. A ticket is one job header per heap, queued as many times as
//! needed; it is queued only on the public deques, the place deques and the injector, which
//! store the pointer and never link or mark the header (nor compare it with another), and
//! its function may run on several threads at once: the one exception to
//! `JobRef::execute`'s "at most once". The loom models (`loom_models.rs`) check the counts,
//! the end's wait and a ticket that finds its heap empty while another takes its unit, with
//! three planted bugs.
//!
//! Priorities order tasks within a worker's heap, and across workers only as far as a thief
//! takes the most urgent tasks of its victim. Scopes that never use a priority make no heaps
//! and pay one load (of a line the workers only read) per ready task.

use std::collections::BinaryHeap;

use super::task::{run_task, TaskDesc, NO_PLACE};
use super::{Accesses, Scope};
use crate::runtime::job::{JobHeader, JobRef};
use crate::runtime::worker::WorkerThread;
use crate::runtime::Registry;
use crate::sync::{lock, AtomicUsize, Mutex, Ordering};
use std::sync::OnceLock;

#[cfg(all(test, loom))]
mod loom_models;

/// The most entries a thief moves from its victim's heap to its own, besides the one it
/// runs (half of what is left, up to this).
const MAX_MOVED: usize = 32;

/// Moves so far, in this process (the tests check that thieves move entries).
#[cfg(test)]
pub(super) static MOVES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

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

/// A heap of ready tasks and the sequence number its next entry gets.
struct Heap {
    entries: BinaryHeap<Entry>,
    seq: u64,
}

impl Heap {
    fn push(&mut self, priority: i16, desc: *const TaskDesc) {
        let seq = self.seq;
        self.seq += 1;
        self.entries.push(Entry {
            priority,
            seq,
            desc,
        });
    }
}

/// A slot's count of spare tickets, on lines of its own (the heap's worker writes it only
/// when it finds its own heap empty).
#[repr(align(128))]
struct Spare(AtomicUsize);

/// A slot's heap, on lines of its own: the ticket's header, which every thief reads, is not
/// on a line that the heap's pushes and pops write.
#[repr(align(128))]
struct HeapLine(Mutex<Heap>);

impl std::ops::Deref for HeapLine {
    type Target = Mutex<Heap>;
    fn deref(&self) -> &Mutex<Heap> {
        &self.0
    }
}

/// One worker's ready heap and its ticket (see the design note), on lines of its own.
#[repr(align(128))]
struct Slot {
    ticket: JobHeader,
    /// This slot's place in its slice, and the slice's length (for `run_ticket`).
    index: usize,
    count: usize,
    heap: HeapLine,
    /// The tickets of this heap queued beyond its entries (a thief moved their entries to
    /// its own heap, with tickets of its own): each counts itself off once, and the scope's
    /// end waits for this count to reach 0.
    spare: Spare,
    #[cfg(loom)]
    mutation: Mutation,
    /// The slot's memory as the loom model sees it: every access of `take` to the slot reads
    /// it first, and the model's scope end writes it when it frees the slots.
    #[cfg(loom)]
    memory: crate::sync::UnsafeCell<u64>,
}

/// Planted bugs for the loom models: each must make a model fail.
#[cfg(loom)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mutation {
    None,
    /// A thief moves entries without counting their tickets spare.
    UncountedMove,
    /// A spare ticket counts itself off Relaxed (no order with the scope's end).
    RelaxedSpare,
    /// A ticket that finds its heap empty counts itself off even when no spare unit is
    /// counted (then another ticket took it, and an entry came meanwhile).
    EmptyCountsOff,
}

impl Slot {
    fn new(index: usize, count: usize) -> Slot {
        Slot {
            #[cfg(loom)]
            mutation: Mutation::None,
            #[cfg(loom)]
            memory: crate::sync::UnsafeCell::new(0),
            ticket: JobHeader::new(run_ticket),
            index,
            count,
            heap: HeapLine(Mutex::new(Heap {
                entries: BinaryHeap::new(),
                seq: 0,
            })),
            spare: Spare(AtomicUsize::new(0)),
        }
    }

    /// Under loom, a read of the slot's memory (see `memory`); nothing otherwise.
    #[inline(always)]
    fn touch(&self) {
        #[cfg(loom)]
        // SAFETY (test): a read; loom reports one that the model's free does not follow.
        self.memory
            .with(|m| assert_eq!(unsafe { *m }, 0, "a ticket used the heaps after the end"));
    }

    /// The order of a spare ticket's last access (Release: the scope's end waits for it).
    #[inline(always)]
    fn spare_release(&self) -> Ordering {
        #[cfg(loom)]
        if self.mutation == Mutation::RelaxedSpare {
            return Ordering::Relaxed;
        }
        Ordering::Release
    }
}

/// What a ticket of heap `s` does for the runner whose own heap is `me` (see the design
/// note): takes the heap's most urgent task, or, if a thief moved it away, counts itself off
/// `spare` and returns `None`. A runner of another heap (a thief) first counts itself off as
/// spare if it can; if not, it also moves up to half of the rest, the most urgent first (the
/// victim keeps the least urgent), into its own heap, keeping their order, and returns how
/// many: the caller queues that many tickets of `me`.
///
/// # Safety
/// `slots` points to `count` live slots, which stay alive until this call's last access to
/// them: its count-off when it returns `None`, after which the scope's end may free them (so
/// no reference argument may cover them); else the taken task's completion.
unsafe fn take(
    slots: *const Slot,
    count: usize,
    s: usize,
    me: usize,
) -> (Option<*const TaskDesc>, usize) {
    assert!(s < count && me < count, "a heap outside the scope's");
    // SAFETY: per the contract. A local reference (not a protected argument), last used at
    // the count-off.
    let slot = unsafe { &*slots.add(s) };
    slot.touch();
    // SAFETY (both count-offs): the slot is live until this ticket's count-off.
    if me != s && unsafe { count_off(slot) } {
        return (None, 0);
    }
    loop {
        let mut h = lock(&slot.heap);
        let Some(top) = h.entries.pop() else {
            drop(h);
            #[cfg(loom)]
            if slot.mutation == Mutation::EmptyCountsOff {
                slot.spare.0.fetch_sub(1, Ordering::Release);
                return (None, 0);
            }
            // Nothing left: this ticket is spare. While it is not counted off, the heap has
            // an entry or a spare unit for it (design note), so if another ticket counted
            // the last unit off meanwhile, an entry came: look again.
            // SAFETY: as above.
            if unsafe { count_off(slot) } {
                return (None, 0);
            }
            crate::sync::spin_loop();
            continue;
        };
        let k = if me == s {
            0
        } else {
            (h.entries.len() / 2).min(MAX_MOVED)
        };
        if k == 0 {
            return (Some(top.desc), 0);
        }
        // Counted before the entries leave, under the lock: the tickets left behind for them
        // are spare from now on.
        #[cfg(loom)]
        let counted = slot.mutation != Mutation::UncountedMove;
        #[cfg(not(loom))]
        let counted = true;
        if counted {
            slot.spare.0.fetch_add(k, Ordering::Relaxed);
        }
        #[cfg(test)]
        MOVES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut moved = [const { (0i16, std::ptr::null::<TaskDesc>()) }; MAX_MOVED];
        for m in moved.iter_mut().take(k) {
            let e = h.entries.pop().expect("k entries left");
            *m = (e.priority, e.desc);
        }
        drop(h);
        // SAFETY: per the contract (alive: this ticket took a task).
        let mine = unsafe { &*slots.add(me) };
        mine.touch();
        let mut mine = lock(&mine.heap);
        // The least urgent first, so that among equal priorities the order stays newest
        // first.
        for &(priority, desc) in moved[..k].iter().rev() {
            mine.push(priority, desc);
        }
        return (Some(top.desc), k);
    }
}

/// Counts a ticket of `slot` off as spare if a spare unit is counted (Release: its last
/// access to the slots, which the scope's end waits for); returns whether it did.
///
/// # Safety
/// `slot` is live until this call's count-off. (A raw pointer: a reference argument would
/// be protected for the whole call, past the count-off after which the slots may be
/// freed; the atomic's own `&self` covers interior-mutable bytes only, as in `Arc`'s drop.)
unsafe fn count_off(slot: *const Slot) -> bool {
    // SAFETY: per the contract; local references, not used past the count-off.
    let (spare, release) = unsafe {
        (*slot).touch();
        (&(*slot).spare.0, (*slot).spare_release())
    };
    let mut n = spare.load(Ordering::Relaxed);
    while n > 0 {
        match spare.compare_exchange_weak(n, n - 1, release, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(m) => n = m,
        }
    }
    false
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
        let n = registry.threads.max(1);
        self.slots
            .get_or_init(|| (0..n).map(|i| Slot::new(i, n)).collect());
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
        // SAFETY: a live descriptor (its parent waits for it).
        let priority = unsafe { &*d }.priority;
        let mut h = lock(&slot.heap);
        if h.entries.peek().is_none_or(|top| top.priority <= priority) {
            return d;
        }
        let seq = h.seq;
        h.seq += 1;
        let mut top = h.entries.peek_mut().expect("not empty");
        // (Re-sifted as `top` drops.)
        let taken = std::mem::replace(
            &mut *top,
            Entry {
                priority,
                seq,
                desc: d,
            },
        )
        .desc;
        drop(top);
        taken
    }

    /// Queues the ready task `d` in the current worker's heap (the first one's, off the
    /// runtime's workers) and a ticket for it where the task would have gone.
    #[cold]
    pub(super) fn push(&self, d: *const TaskDesc, registry: &Registry) {
        let slots = self.slots.get().expect("priorities in use");
        let me = WorkerThread::current().filter(|w| std::ptr::eq(&*w.registry, registry));
        let i = me.map_or(0, |w| w.index) % slots.len();
        // SAFETY: a live descriptor (its parent waits for it).
        let priority = unsafe { &*d }.priority;
        lock(&slots[i].heap).push(priority, d);
        let job = ticket_of(slots, i);
        match me {
            Some(w) => w.push_spawn(job),
            None => registry.inject(job),
        }
    }

    /// At the root scope's end, once every task has completed: waits (running other jobs)
    /// until every spare ticket has run, the last users of the heaps.
    pub(super) fn wait_spare(&self, w: &WorkerThread) {
        if let Some(slots) = self.slots.get() {
            w.wait_until(|| slots.iter().all(|s| s.spare.0.load(Ordering::Acquire) == 0));
        }
    }
}

/// A ticket of heap `i`.
fn ticket_of(slots: &[Slot], i: usize) -> JobRef {
    assert!(i < slots.len());
    // A pointer into the whole slice: the ticket's function steps back from the header to
    // the slice of slots, so the header's pointer must come from one that covers it.
    // SAFETY: in bounds (asserted).
    let slot = unsafe { slots.as_ptr().add(i) };
    // SAFETY: the ticket header lives as long as the root scope, which outlives every
    // ticket (design note); its function tolerates any number of executions.
    unsafe { JobRef::from_header(std::ptr::addr_of!((*slot).ticket)) }
}

/// A ticket's job: runs the most urgent ready task of its heap, and queues tickets for what
/// it moved into its runner's heap.
unsafe fn run_ticket(h: *const JobHeader) {
    let off = std::mem::offset_of!(Slot, ticket);
    // SAFETY: the header is the `ticket` field of a live `Slot`, element `index` of a slice
    // of `count` (`Slot::new`), and the pointer covers the slice (`ticket_of`); the slots
    // live until this ticket's last access to them, which `take` makes.
    let (slots, index, count) = unsafe {
        let slot = h.cast::<u8>().sub(off).cast::<Slot>();
        let (index, count) = ((*slot).index, (*slot).count);
        (slot.sub(index), index, count)
    };
    let w = WorkerThread::current().expect("tickets run on a worker");
    let me = w.index % count;
    // SAFETY: as above; raw pointers, so that no reference covers the slots when a
    // count-off lets the scope's end free them.
    let (task, moved) = unsafe { take(slots, count, index, me) };
    if let Some(d) = task {
        // SAFETY: this ticket took a task, whose completion is after this: the slots live.
        let all = unsafe { std::slice::from_raw_parts(slots, count) };
        for _ in 0..moved {
            w.push_spawn(ticket_of(all, me));
        }
        // SAFETY: taken from a heap once, so run once; ready, and alive until it completes.
        // The slots are not touched after this.
        unsafe { run_task(d.cast()) };
    }
}

impl<'s, 'e> Scope<'s, 'e> {
    /// [`spawn`](Self::spawn) with a priority (OpenMP's `priority`, StarPU's): from the first
    /// such spawn on, each worker runs the ready tasks it readied most urgent first (the
    /// others have priority 0; among equals, the newest first), and a thief takes its
    /// victim's most urgent ones (the most urgent to run, up to half of the rest into its
    /// own heap); there is no order across workers beyond that. Dependences
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
