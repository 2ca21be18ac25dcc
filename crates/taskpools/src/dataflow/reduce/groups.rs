//! A frame's open reduction groups: joining one, the declarations that close one, and the
//! combine task that closing spawns (see the module docs).

use std::any::TypeId;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use super::copies::{Combine, Reducer};
use crate::dataflow::edges::TaskHandle;
use crate::dataflow::footprint::{Footprint, Mode};
use crate::dataflow::task::NO_PLACE;
use crate::dataflow::wait::Declared;
use crate::dataflow::Scope;

/// An open reduction group of a frame (see the module docs).
struct Group {
    /// The part, as the members declared it (a `Concurrent` footprint with its key).
    fp: Footprint,
    key: TypeId,
    reducer: Arc<dyn Combine>,
    /// The part's first element.
    data: *mut u8,
    /// The members spawned so far: the combine runs after each.
    members: Vec<TaskHandle<'static>>,
}

/// A frame's open reduction groups: none overlaps another, and each is one run of elements
/// (parts and elements only).
#[doc(hidden)]
pub struct Groups {
    /// By region and first element: a member finds its group with one look-up.
    by_part: HashMap<(u32, usize), Group, BuildHasherDefault<PartHasher>>,
    /// The same keys in order, each with its group's end: what a declaration overlaps.
    order: BTreeMap<(u32, usize), usize>,
    /// Open groups per region id (a declaration on a region without any looks no further).
    per_region: Vec<u32>,
    /// The reducer of a group being closed, while its combine is spawned: the members' views
    /// point at it, and should that spawn unwind (dropping the combine's closure), it lives
    /// here until the frame's next sync or end. Once the spawn returns, the combine's closure
    /// keeps it: the combine runs, or is dropped unrun, only after every member completed.
    retired: Vec<Arc<dyn Combine>>,
}

impl Groups {
    pub(crate) fn new() -> Self {
        Groups {
            by_part: HashMap::default(),
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
        let g = match self.by_part.entry(k) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                self.order.insert(k, fp.start + fp.len);
                let r = fp.region as usize;
                if self.per_region.len() <= r {
                    self.per_region.resize(r + 1, 0);
                }
                self.per_region[r] += 1;
                e.insert(Group {
                    fp: *fp,
                    key,
                    reducer: Arc::new(make()),
                    data: data.cast(),
                    members: Vec::new(),
                })
            }
        };
        // Groups are disjoint and non-empty, and every group a reduction overlaps without
        // joining it was closed: the group at its first element is its own.
        assert!(
            g.key == key && same_part(&g.fp, fp),
            "taskpools::dataflow: a reduction met a group it does not belong to (a bug)"
        );
        g.members.push(task);
        // The key is the reducer's type: the pointer is to a `Reducer<T, F>`.
        Arc::as_ptr(&g.reducer).cast::<Reducer<T, F>>()
    }

    /// Whether reduction `fp` joins the group open on its part (and so closes none: groups
    /// are disjoint).
    fn joins(&self, fp: &Footprint) -> bool {
        let Some(key) = fp.reduce else { return false };
        self.by_part
            .get(&(fp.region, fp.start))
            .is_some_and(|g| same_part(fp, &g.fp) && key() == g.key)
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
        for (&k, &end) in self.order.range((fp.region, 0)..(fp.region, hi)).rev() {
            if end <= lo {
                break;
            }
            let g = &self.by_part[&k];
            let member = fp.reduce.is_some_and(|key| key() == g.key) && same_part(fp, &g.fp);
            if !member && fp.overlaps(&g.fp) {
                out.push(k);
            }
        }
    }

    /// Removes the group at `k`.
    fn remove(&mut self, k: (u32, usize)) -> Option<Group> {
        let g = self.by_part.remove(&k)?;
        self.order.remove(&k);
        self.per_region[k.0 as usize] -= 1;
        Some(g)
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
            let groups = &unsafe { self.frame().local() }.reductions;
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

    /// Closes every open group (before a sync or the scope's end).
    pub(crate) fn close_reductions(&self) {
        // SAFETY: a scope is handed out only by reference while its frame is alive. (Without
        // a frame, nothing was spawned, so nothing is open.)
        let Some(frame) = (unsafe { &*self.frame }).frame.get() else {
            return;
        };
        // SAFETY: the frame's thread; the reference ends before the spawns below.
        let groups = unsafe { frame.local() }.reductions.take_all();
        for g in groups {
            self.close(g);
        }
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
        self.spawn_to(NO_PLACE, 0, &g.members, Declared(vec![fp]), move |_, ()| {
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
