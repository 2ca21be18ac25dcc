//! A frame's open reduction groups: joining one, the declarations that close one, and the
//! combine task that closing spawns (see the module docs).

use std::any::TypeId;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use super::copies::{Combine, Reducer};
use crate::dataflow::edges::TaskHandle;
use crate::dataflow::footprint::{Footprint, Mode};
use crate::dataflow::frame::Frame;
use crate::dataflow::task::{TaskDesc, NO_PLACE};
use crate::dataflow::wait::Declared;
use crate::dataflow::Scope;

/// An open reduction group of a frame (see the module docs).
struct Group {
    /// The part, as the members declared it (a `Concurrent` footprint with its key).
    fp: Footprint,
    key: TypeId,
    /// The function that gave `key` (the first member's): a member with the same function
    /// has the same key, found without calling it.
    key_fn: fn() -> TypeId,
    reducer: Arc<dyn Combine>,
    /// The part's first element.
    data: *mut u8,
    /// The members spawned so far (their descriptors; one pointer each, pushed with one
    /// store): the combine runs after each.
    members: Vec<*const TaskDesc>,
    /// The epoch of the members' handles: every member was spawned in the same one, as a
    /// group closes before its frame's next sync (`Scope::sync` closes every group first),
    /// and a scope's groups are its own frame's.
    epoch: usize,
}

/// A frame's open reduction groups: none overlaps another, and each is one run of elements
/// (parts and elements only).
#[doc(hidden)]
pub struct Groups {
    /// The open groups, in slots that stay put while a group is open (freed slots are
    /// reused).
    slots: Vec<Option<Group>>,
    /// The free slots.
    free: Vec<u32>,
    /// Each open group's slot, by region and first element.
    by_part: HashMap<(u32, usize), u32, BuildHasherDefault<PartHasher>>,
    /// The same keys in order, each with its group's end and slot: what a declaration
    /// overlaps.
    order: BTreeMap<(u32, usize), (usize, u32)>,
    /// The slot of the group that a member last joined or opened (or `NO_SLOT`): where
    /// [`Groups::joins`] and [`Groups::bind`] look first, so that a member costs at most
    /// one look-up, and none while members keep joining one group. (The slot may hold
    /// another group since, or none: its key is checked.)
    last: u32,
    /// Open groups per region id (a declaration on a region without any looks no further).
    per_region: Vec<u32>,
    /// The reducer of a group being closed, while its combine is spawned (and, while
    /// `close_reductions` closes every group, the reducers of the groups not closed yet): the
    /// members' views point at them, and should a spawn unwind (dropping the combine's
    /// closure, or the groups left), they live here until the frame's next sync or end. Once
    /// a spawn returns, the combine's closure keeps its reducer: the combine runs, or is
    /// dropped unrun, only after every member completed.
    retired: Vec<Arc<dyn Combine>>,
}

impl Groups {
    pub(crate) fn new() -> Self {
        Groups {
            slots: Vec::new(),
            free: Vec::new(),
            by_part: HashMap::default(),
            last: NO_SLOT,
            order: BTreeMap::new(),
            per_region: Vec::new(),
            retired: Vec::new(),
        }
    }

    /// Drops the reducers of closings that unwound: after a sync, every member has completed.
    pub(crate) fn forget_retired(&mut self) {
        self.retired.clear();
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_part.is_empty()
    }

    /// Binds a reduction access of footprint `fp` to its group, opening one with `make` if
    /// none is open on that part, and records `task` as a member: returns the group's
    /// reducer. Every group the access overlaps was closed before (see
    /// [`Scope::settle_reductions`]).
    pub(crate) fn bind<T, F>(
        &mut self,
        fp: &Footprint,
        data: *mut T,
        task: TaskHandle<'static>,
        make: impl FnOnce() -> Reducer<T, F>,
    ) -> *const Reducer<T, F>
    where
        T: Clone + Send + Sync + 'static,
        F: Fn(&mut T, T) + Send + Sync + 'static,
    {
        let key = TypeId::of::<Reducer<T, F>>();
        let k = (fp.region, fp.start);
        let i = if self.slot_keyed(self.last, k) {
            self.last
        } else if let Some(&i) = self.by_part.get(&k) {
            i
        } else {
            self.open(fp, key, data.cast(), task, Arc::new(make()))
        };
        self.last = i;
        let g = self.slots[i as usize]
            .as_mut()
            .expect("an open group's slot holds it");
        // Groups are disjoint and non-empty, and every group a reduction overlaps without
        // joining it was closed: the group at its first element is its own.
        assert!(
            g.key == key && same_part(&g.fp, fp),
            "taskpools::dataflow: a reduction met a group it does not belong to (a bug)"
        );
        debug_assert_eq!(g.epoch, task.epoch, "a group spans a sync");
        g.members.push(task.desc);
        // The key is the reducer's type: the pointer is to a `Reducer<T, F>`.
        Arc::as_ptr(&g.reducer).cast::<Reducer<T, F>>()
    }

    /// Opens a group on `fp`'s part, with its first member `task`: returns its slot.
    #[cold]
    #[inline(never)]
    fn open(
        &mut self,
        fp: &Footprint,
        key: TypeId,
        data: *mut u8,
        task: TaskHandle<'static>,
        reducer: Arc<dyn Combine>,
    ) -> u32 {
        let key_fn = fp.reduce.expect("a reduction's footprint has a key");
        debug_assert!(
            key_fn() == key,
            "a member's key function gives its group's key"
        );
        let g = Group {
            fp: *fp,
            key,
            key_fn,
            reducer,
            data,
            members: Vec::new(),
            epoch: task.epoch,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(g);
                i
            }
            None => {
                let i = u32::try_from(self.slots.len())
                    .ok()
                    .filter(|&i| i != NO_SLOT)
                    .expect("taskpools::dataflow: too many open reduction groups");
                self.slots.push(Some(g));
                i
            }
        };
        let k = (fp.region, fp.start);
        self.by_part.insert(k, i);
        self.order.insert(k, (fp.start + fp.len, i));
        let r = fp.region as usize;
        if self.per_region.len() <= r {
            self.per_region.resize(r + 1, 0);
        }
        self.per_region[r] += 1;
        i
    }

    /// Whether reduction `fp` joins the group open on its part (and so closes none: groups
    /// are disjoint). Remembers the group's slot for [`Groups::bind`].
    fn joins(&mut self, fp: &Footprint) -> bool {
        let Some(key) = fp.reduce else { return false };
        let k = (fp.region, fp.start);
        let i = if self.slot_keyed(self.last, k) {
            self.last
        } else if let Some(&i) = self.by_part.get(&k) {
            i
        } else {
            return false;
        };
        let g = self.group(i);
        let joins = same_part(fp, &g.fp) && same_key(key, g);
        if joins {
            self.last = i;
        }
        joins
    }

    /// The open group in slot `i`.
    fn group(&self, i: u32) -> &Group {
        self.slots[i as usize]
            .as_ref()
            .expect("an open group's slot holds it")
    }

    /// Whether slot `i` holds the open group at `k` (region, first element).
    fn slot_keyed(&self, i: u32, k: (u32, usize)) -> bool {
        self.slots
            .get(i as usize)
            .and_then(Option::as_ref)
            .is_some_and(|g| (g.fp.region, g.fp.start) == k)
    }

    /// The groups that declaration `fp` closes: it touches their elements and is not a
    /// member. (Groups are disjoint runs, so those that start before `fp` ends, taken from
    /// the last, reach into it until the first that ends before it starts.)
    fn closed_by(&self, fp: &Footprint, out: &mut Vec<(u32, usize)>) {
        let open = self
            .per_region
            .get(fp.region as usize)
            .copied()
            .unwrap_or(0);
        if open == 0 || fp.len == 0 || fp.rows == 0 {
            return;
        }
        let (lo, hi) = (fp.start, fp.start + (fp.rows - 1) * fp.ld + fp.len);
        for (&k, &(end, i)) in self.order.range((fp.region, 0)..(fp.region, hi)).rev() {
            if end <= lo {
                break;
            }
            let g = self.group(i);
            let member = fp.reduce.is_some_and(|key| same_key(key, g)) && same_part(fp, &g.fp);
            if !member && fp.overlaps(&g.fp) {
                out.push(k);
            }
        }
    }

    /// Removes the group at `k`.
    fn remove(&mut self, k: (u32, usize)) -> Option<Group> {
        let i = self.by_part.remove(&k)?;
        self.order.remove(&k);
        self.per_region[k.0 as usize] -= 1;
        self.free.push(i);
        self.slots[i as usize].take()
    }

    /// Removes every group, in order.
    fn take_all(&mut self) -> Vec<Group> {
        let keys: Vec<_> = self.order.keys().copied().collect();
        keys.into_iter().filter_map(|k| self.remove(k)).collect()
    }
}

/// The hash of a group's key (region, first element): a multiply and a rotate per word
/// (the keys are the runtime's own, so no adversary picks them), the high bits brought down
/// for the table's low ones.
#[derive(Default)]
struct PartHasher(u64);

impl PartHasher {
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0xf135_7aea_2e62_a9c5);
    }
}

impl Hasher for PartHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.add(u64::from(b));
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.add(u64::from(x));
    }
    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

/// No slot (see [`Groups::last`]).
const NO_SLOT: u32 = u32::MAX;

/// Whether reduction key `key` is group `g`'s: the function that gave the group's key, or
/// one that gives the same. (The same function gives the same key; distinct functions that
/// give the same key, as copies of one generic instance in two codegen units may be, are
/// found by calling it.)
fn same_key(key: fn() -> TypeId, g: &Group) -> bool {
    std::ptr::fn_addr_eq(key, g.key_fn) || key() == g.key
}

/// Whether two footprints name the same elements of one region the same way.
fn same_part(a: &Footprint, b: &Footprint) -> bool {
    (a.region, a.start, a.len, a.ld, a.rows) == (b.region, b.start, b.len, b.ld, b.rows)
}

/// The part's first element, where a combine task writes.
struct DataPtr(*mut u8);
// SAFETY: the pointer is used only by the combine task, which the analysis gives exclusive
// access to the part (an `inout`), within the scope that borrows the data.
unsafe impl Send for DataPtr {}

impl<'s> Scope<'s, '_> {
    /// Before a spawn with declarations `fps`: closes every open group that one of them
    /// touches without joining it. The combines are spawned first, so the new task comes
    /// after them.
    pub(crate) fn settle_reductions(&self, fps: &[Footprint]) {
        let mut closed = Vec::new();
        {
            // SAFETY: the frame's thread; the reference ends before the spawns below.
            let groups = &mut unsafe { self.frame().local() }.reductions;
            for fp in fps {
                if !groups.joins(fp) {
                    groups.closed_by(fp, &mut closed);
                }
            }
        }
        closed.sort_unstable();
        closed.dedup();
        for k in closed {
            // SAFETY: as above.
            let g = unsafe { self.frame().local() }.reductions.remove(k);
            if let Some(g) = g {
                self.close(g);
            }
        }
    }

    /// Closes every open group (before a sync or the scope's end). Inlined: every task's end
    /// calls it, and most have no group open.
    #[inline]
    pub(crate) fn close_reductions(&self) {
        // SAFETY: a scope is handed out only by reference while its frame is alive. (Without
        // a frame, nothing was spawned, so nothing is open.)
        let Some(frame) = (unsafe { &*self.frame }).frame.get() else {
            return;
        };
        // SAFETY: the frame's thread; the reference ends here.
        if !unsafe { frame.local() }.reductions.is_empty() {
            self.close_open_reductions(frame);
        }
    }

    /// [`Scope::close_reductions`], with groups open in `frame`, this scope's.
    #[cold]
    #[inline(never)]
    fn close_open_reductions(&self, frame: &Frame) {
        // SAFETY: the frame's thread; the reference ends before the spawns below.
        let reductions = &mut unsafe { frame.local() }.reductions;
        let groups = reductions.take_all();
        // Should a close unwind, the groups after it are dropped with `groups`, while their
        // members may still run: their reducers stay in `retired` until the frame's next sync
        // or end, when every member has completed.
        let mark = reductions.retired.len();
        (reductions.retired).extend(groups.iter().map(|g| Arc::clone(&g.reducer)));
        for g in groups {
            self.close(g);
        }
        // Every combine holds its reducer now.
        // SAFETY: as above (the spawns have returned); the reference ends with the statement.
        let kept = unsafe { frame.local() }.reductions.retired.split_off(mark);
        drop(kept);
    }

    /// Spawns group `g`'s combine: an `inout` of the part, after every member too, that
    /// folds the copies into it.
    fn close(&self, g: Group) {
        let fp = Footprint {
            mode: Mode::Write,
            reduce: None,
            weak: false,
            ..g.fp
        };
        // SAFETY: the frame's thread; the reference ends here.
        let retired = &mut unsafe { self.frame().local() }.reductions.retired;
        retired.push(Arc::clone(&g.reducer));
        let (reducer, data) = (g.reducer, DataPtr(g.data));
        let members: Vec<TaskHandle<'_>> = (g.members.iter())
            .map(|&d| TaskHandle::new(d, self.frame.cast(), g.epoch))
            .collect();
        self.spawn_to(NO_PLACE, 0, &members, Declared(vec![fp]), move |_, ()| {
            let data = data;
            // SAFETY: the combine's `inout` of the part: every member has completed, and no
            // other task touches the part until this one completes.
            unsafe { reducer.combine(data.0) }
        });
        // SAFETY: as above. (The combine's closure holds the reducer now; dropping this
        // clone cannot drop it unless the combine already ran, inline, past the throttle.)
        let kept = unsafe { self.frame().local() }.reductions.retired.pop();
        drop(kept);
    }
}
