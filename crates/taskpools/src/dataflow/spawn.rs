//! Spawning a data-flow task: its descriptor is written, its footprints checked and looked up
//! in the parent's tables, an edge pushed on each earlier sibling it must wait for, and it is
//! queued (or run at once, past the throttle) when its counter reaches zero. The analysis
//! itself is in `analysis.rs`.

use std::cell::Cell;
use std::ptr;

use super::analysis::{analyse, check, check_weak, link_weak, Analysis, WeakSink};
use super::commute::{CommuteLock, Waiter};
use super::frame::{Frame, FrameLocal};
use super::lut::Sink;
use super::notify::{DepCounter, NotifyList, NotifyNode};
use super::task::{call_body, run_task, schedule, Body, TaskDesc, NO_PLACE};
use super::weak::WeakGate;
use super::{Accesses, Footprint, Scope, TaskHandle};
use crate::runtime::job::{JobHeader, JobRef};
use crate::runtime::trace::{EventKind, Source, TraceBuf};
use crate::runtime::worker::WorkerThread;
use crate::sync::{AtomicBool, Ordering};

/// Outstanding tasks per worker thread past which a spawn first runs a job itself (the
/// figure libgomp uses for its tasks). A frame's outstanding tasks are its outstanding
/// children, or, with weak children, `outstanding_tasks`.
const THROTTLE_PER_THREAD: usize = 64;

/// Outstanding tasks per worker thread at which a throttled spawner goes back to spawning
/// without running jobs. Once at the mark, every spawn runs at least one job (the new task if
/// it is ready) until the count falls to this lower mark; then spawns run nothing until the mark.
/// Without the lower mark, the spawner alternated at the mark between runs and plain spawns
/// (two or three pushed, one run inline), which scattered each stretch of ready tasks between
/// it and the thieves: a worker rarely ran two neighbouring tasks in a row (20–27 % of its
/// tasks followed their left neighbour in a trace of the blocked Jacobi, 92–94 % with it). On
/// that Jacobi (`suite --bench heat`, 4096² in 128² tiles) the scattering broke the hardware
/// prefetchers' streams (docs/suite.md has the figures). A task the spawner runs at once
/// leaves the count where it was, so mostly the other workers' completions bring it down to
/// this mark; on one worker a stream of ready tasks stays throttled until a sync.
const RESUME_PER_THREAD: usize = THROTTLE_PER_THREAD * 3 / 4;

impl<'s, 'e> Scope<'s, 'e> {
    /// Spawns a task that runs `f` with the data of `accesses` once every earlier sibling
    /// task whose declared accesses conflict with these has completed.
    ///
    /// `accesses` is one declaration, a tuple of them, an array or a `Vec` (see
    /// [`Accesses`]); `f` receives this task's own scope (for children) and the data, in the
    /// same shape. Panics, before anything is queued, if two of the declarations overlap and
    /// one of them writes, or if a declaration belongs to another scope.
    ///
    /// A spawn is a scheduling point (as creating an OpenMP task is): with many children
    /// outstanding, the spawning thread runs the new task, or other queued work, before it
    /// returns. Do not hold a lock or a `RefCell` borrow across spawns that the tasks need.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// // A dot product: one task per block writes its partial sum, a last one adds them up.
    /// let (mut x, mut y) = (vec![2u64; 64], vec![3u64; 64]);
    /// let mut parts = vec![0u64; 4];
    /// let mut dot = [0u64];
    /// taskpools::dataflow::scope(|df| {
    ///     let (x, y) = (df.region(&mut x), df.region(&mut y));
    ///     let (p, d) = (df.region(&mut parts), df.region(&mut dot));
    ///     for i in 0..4 {
    ///         let (xs, ys) = (x.part(16 * i..16 * i + 16), y.part(16 * i..16 * i + 16));
    ///         df.spawn((xs.read(), ys.read(), p.part(i..i + 1).out()), |_, (x, y, s)| {
    ///             s[0] = x.iter().zip(y).map(|(a, b)| a * b).sum();
    ///         });
    ///     }
    ///     df.spawn((p.read(), d.out()), |_, (p, d)| d[0] = p.iter().sum());
    /// });
    /// assert_eq!(dot, [64 * 6]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn spawn<A, F>(&self, accesses: A, f: F)
    where
        A: Accesses,
        F: for<'t> FnOnce(&'t Scope<'t, 's>, A::Data<'t>) + Send + 's,
    {
        self.spawn_to(NO_PLACE, 0, &[], accesses, f);
    }

    /// [`spawn`](Self::spawn) with a locality hint: once ready, the task goes to `place`'s
    /// shared deque (see [`places`](crate::places)). On a runtime without places, or for a
    /// place it does not have, nothing is spawned and the error says why
    /// ([`Error::NoSuchPlace`](crate::Error::NoSuchPlace)).
    ///
    /// ```
    /// use taskpools::places::{PlaceId, Places};
    ///
    /// let rt = taskpools::Runtime::builder().places(Places::parse("2x1")?).build()?;
    /// let mut v = vec![0u8; 4];
    /// rt.install(|| {
    ///     taskpools::dataflow::scope(|df| {
    ///         let r = df.region(&mut v);
    ///         for (i, c) in r.chunks(2).enumerate() {
    ///             df.spawn_at(PlaceId(i), c.out(), |_, c| c.fill(1)).unwrap();
    ///         }
    ///         // A place the runtime does not have: nothing is spawned.
    ///         assert!(df.spawn_at(PlaceId(2), r.out(), |_, v| v.fill(9)).is_err());
    ///     })
    /// });
    /// assert_eq!(v, [1; 4]);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn spawn_at<A, F>(
        &self,
        place: crate::places::PlaceId,
        accesses: A,
        f: F,
    ) -> Result<(), crate::Error>
    where
        A: Accesses,
        F: for<'t> FnOnce(&'t Scope<'t, 's>, A::Data<'t>) + Send + 's,
    {
        let places = self
            .frame()
            .registry()
            .places
            .as_ref()
            .map_or(0, |p| p.len());
        if place.0 >= places {
            return Err(crate::Error::NoSuchPlace {
                place: place.0,
                places,
            });
        }
        // Places are at most MAX_THREADS, far below u32::MAX.
        self.spawn_to(place.0 as u32, 0, &[], accesses, f);
        Ok(())
    }

    /// Spawns `f` with `accesses`, after the tasks of `after` too (explicit edges); returns
    /// its descriptor (alive until the frame's next sync or end).
    pub(super) fn spawn_to<A, F>(
        &self,
        place: u32,
        priority: i16,
        after: &[TaskHandle<'s>],
        accesses: A,
        f: F,
    ) -> *const TaskDesc
    where
        A: Accesses,
        F: for<'t> FnOnce(&'t Scope<'t, 's>, A::Data<'t>) + Send + 's,
    {
        let frame = self.frame();
        let tr = if frame.registry().tracing {
            WorkerThread::current().and_then(|w| w.trace.as_deref())
        } else {
            None
        };
        let trace_id = tr.map_or(0, |t| {
            let id = t.next_id();
            if frame.trace_id != 0 {
                t.note(EventKind::Spawn {
                    parent: frame.trace_id,
                    child: id,
                });
            }
            id
        });
        // SAFETY: the frame's thread (a scope is neither `Send` nor `Sync`); no other
        // reference to the local state is alive during this call.
        let local = unsafe { frame.local() };
        let mut fps = std::mem::take(&mut local.scratch);
        fps.clear();
        accesses.footprints(&mut fps);
        check(&fps, self.frame.cast());
        let weak = A::WEAK && check_weak(&fps);
        for h in after {
            assert!(
                h.frame == self.frame.cast(),
                "taskpools::dataflow: a task handle from another scope was passed to \
                 spawn_after; handles order siblings of one scope"
            );
        }
        let reduces = fps.iter().any(|fp| fp.reduce.is_some());
        if reduces || !local.reductions.is_empty() {
            // Closing a group spawns its combine first: `local` is not used across it.
            self.settle_reductions(&fps);
        }
        // SAFETY: as above (the settling's spawns have returned).
        let local = unsafe { frame.local() };

        let body = local.arena.alloc(Body { f, a: accesses }).as_ptr();
        let desc = local
            .arena
            .alloc(TaskDesc {
                header: JobHeader::new(run_task),
                deps: DepCounter::new(),
                notify: NotifyList::new(),
                cancelled: AtomicBool::new(false),
                weak,
                last_succ: Cell::new(ptr::null()),
                parent: frame,
                place,
                priority,
                trace_id,
                body: body.cast(),
                call: call_body::<F, A>,
                locks: ptr::null(),
                nlocks: 0,
                one: ptr::null(),
                waiter: Waiter::new(),
            })
            .as_ptr()
            .cast_const();

        let config = frame.shared().config;
        let mut found = 0usize;
        local.locks.clear();
        local.links.clear();
        let mut sink = Analysis {
            desc,
            tr,
            trace_id,
            arena: &mut local.arena,
            found: &mut found,
            locks: &mut local.locks,
            links: &mut local.links,
        };
        for h in after {
            // A handle from before the last sync names a task that has completed (and whose
            // descriptor is gone): no edge, as for data declared before a sync.
            if h.epoch == local.epoch {
                sink.edge(h.desc);
            }
        }
        for fp in &fps {
            if (A::WEAK && fp.weak) || fp.reduce.is_some() {
                // A reduction touches only its copy: no edge. Its group's combine, spawned
                // when the group closes, waits for it (see `reduce`). Weak parts below.
                continue;
            }
            let info = &mut local.regions[fp.region as usize];
            analyse(info, fp, desc, &mut local.table_arena, config, &mut sink);
        }
        // Weak parts last, each with its own gates, after the task's strong accesses (in
        // block mode a weak part may share a block with one, see `WeakSink::gate_edge`).
        let gates = if weak {
            analyse_weak(local, frame, desc, &fps, tr)
        } else {
            ptr::null()
        };
        let locks = &mut local.locks;
        if !locks.is_empty() {
            // Taken in address order, each once (see `commute`).
            locks.sort_unstable();
            locks.dedup();
            let d = desc.cast_mut();
            // SAFETY: the descriptor is already on its predecessors' notify lists, but their
            // threads touch only its counter, cancel flag and notify fields; `one`, `locks`
            // and `nlocks` are read only by whoever runs the task, which it reaches through
            // the counter, not armed yet (the arm below publishes these writes). It never
            // moves, so `locks` may point at its own `one`.
            unsafe {
                if let [one] = locks[..] {
                    (*d).one = one;
                    (*d).locks = ptr::addr_of!((*d).one);
                } else {
                    let array = local
                        .arena
                        .alloc_zeroed_array::<*const CommuteLock>(locks.len())
                        .as_ptr();
                    // A fresh array of `locks.len()` pointers.
                    ptr::copy_nonoverlapping(locks.as_ptr(), array, locks.len());
                    (*d).locks = array;
                }
                (*d).nlocks = locks.len();
            }
        }
        if reduces {
            // Bound last, past every check that can panic: a member recorded in its group is
            // always armed (its group's combine waits for it).
            // SAFETY: the body was just written, and no other thread can reach it before
            // the task is armed below.
            let a = unsafe { &mut (*body).a };
            let registry = frame.registry();
            let runtime = (ptr::from_ref(registry) as usize, registry.threads);
            let me = TaskHandle::new(desc, self.frame.cast(), local.epoch);
            a.bind_reductions(&mut local.reductions, runtime, me);
        }
        if !gates.is_null() {
            // SAFETY: as for the reductions; the cursor walks this spawn's gates.
            let a = unsafe { &mut (*body).a };
            let mut cursor = gates;
            // SAFETY: the chain holds one live gate per weak footprint, in their order.
            unsafe { a.bind_weak(&mut cursor) };
            debug_assert!(cursor.is_null(), "a weak gate left unbound");
        }
        local.scratch = fps;
        // Throttle: with many tasks outstanding, the spawner works before it goes on (as
        // libgomp does), so that a long stream of spawns does not queue up all its
        // descriptors before any runs: it runs the new task at once if it is ready, else one
        // queued job (and, after a weak task, more: `catch_up`), on each spawn until the
        // outstanding tasks fall to the lower mark.
        let threads = frame.registry().threads;
        let mut throttled = local.throttling
            || local.spawned.wrapping_sub(local.seen) >= THROTTLE_PER_THREAD * threads
            || local.gates != 0;
        if throttled {
            local.seen = frame.completed.load(Ordering::Relaxed);
            let outstanding = if local.gates == 0 {
                local.spawned.wrapping_sub(local.seen)
            } else {
                // (Through `local`: a read through the frame's cell would end this
                // reference's exclusive claim while it is still used below.)
                weak_outstanding(frame, local)
            };
            throttled = throttles(local.throttling, outstanding, threads);
            local.throttling = throttled;
        }
        // Counted from here on: nothing below can panic before the task is armed, so a
        // counted child always runs (or is cancelled) and completes.
        local.spawned = local.spawned.wrapping_add(1);
        if weak || !local.links.is_empty() {
            // SAFETY: past the last panic point, before the task is armed.
            unsafe { arm_weak(local, desc, gates, &mut found, tr, trace_id) };
        }
        // `local` is not used past this point: what runs below may be a child of this frame
        // (which never touches `local`) or any other work. (`catch_up` reads the counts
        // afresh, between jobs.)
        // SAFETY: the descriptor was just written and is alive.
        if unsafe { &*desc }.deps.arm(found) {
            // A throttled spawner runs it at once; in a scope with priorities, the more urgent
            // of it and this worker's heap's most urgent task, the other staying queued.
            let prio = &frame.shared().prio;
            let (here, worker) = if !throttled || place != NO_PLACE {
                (None, None)
            } else if !prio.in_use() {
                (Some(desc), None)
            } else {
                // The more urgent of it and the heap's most urgent (`take_at_once`).
                match WorkerThread::current().filter(|w| ptr::eq(&*w.registry, frame.registry())) {
                    Some(w) => (Some(prio.take_at_once(desc, w)), Some(w)),
                    None => (None, None),
                }
            };
            if let Some(run) = here {
                if run == desc {
                    // Run here, as a job of its own in the trace.
                    if let Some(t) = tr {
                        t.start(Source::Own);
                    }
                    // SAFETY: ready, and queued nowhere, so this is its one execution; its
                    // parent (this frame) is alive until it completes.
                    unsafe { run_task(run.cast()) };
                    if let Some(t) = tr {
                        t.end();
                    }
                    if weak {
                        catch_up(frame, threads);
                    }
                } else if let Some(w) = worker {
                    // A task of any frame of the scope, taken from this worker's heap: run as
                    // the ticket that `run_one` would have popped for it (one wait deeper).
                    // The new task waits in its place; this frame's count is as before.
                    w.source.set(Source::Own);
                    // SAFETY: taken from the heap, so this is its one execution (its
                    // ticket stays queued for `desc`); alive until it completes.
                    unsafe { w.run_nested(JobRef::from_header(run.cast())) };
                }
                return desc;
            }
            schedule(desc, frame);
        }
        if throttled {
            if let Some(w) = WorkerThread::current() {
                w.run_one();
            }
        }
        desc
    }
}

/// The outstanding tasks of a frame with weak children, for the throttle
/// (`Frame::outstanding_tasks`): its outstanding children less its outstanding weak gates
/// (two per weak part: bookkeeping, not tasks), plus the tasks its weak children had
/// outstanding when their bodies ended, until each of them completes.
///
/// Counted as tasks, the gates of the heat sweep's outer tasks (eight weak parts each) made
/// 17 children of each outer task, so the spawner was throttled at about 4 outer tasks, a
/// third of a step, ahead and ran the sweep one step after the other, against 1.3 steps for
/// the flat sweep, whose workers thus ran wavefronts through several steps while the rows
/// were in cache. Counting the outer tasks alone let it run 64 of them (5 steps) ahead, and
/// the workers ran steep diagonals through 15 steps, fetching most rows again at 2 threads.
/// Counting the outer task with the four children it hands its parts to matches the flat
/// sweep's lookahead (docs/dataflow.md, "The order of a weak sweep"). The weak parts
/// themselves are not counted: a stream of weak tasks with many parts per child holds up to
/// the mark's worth of tasks, each with all its parts' regions and tables.
#[cold]
#[inline(never)]
fn weak_outstanding(frame: &Frame, local: &FrameLocal) -> usize {
    frame.outstanding_tasks_of(local)
}

/// Whether a spawn with `outstanding` tasks before it is throttled, on a runtime of
/// `threads` workers, given whether the frame's last spawn was (`throttling`): from the mark
/// on, and then until the count falls to the lower mark.
fn throttles(throttling: bool, outstanding: usize, threads: usize) -> bool {
    if throttling {
        outstanding > RESUME_PER_THREAD * threads
    } else {
        outstanding >= THROTTLE_PER_THREAD * threads
    }
}

/// The end of a throttled spawn that ran a weak task at once: while the frame has more
/// outstanding tasks (`Frame::outstanding_tasks`) than the throttle's mark, runs this
/// worker's own jobs (the newest first: the weak task's children). A task run at once
/// usually completes, which leaves the count where it was before the spawn; a weak task does
/// not (it returns once its children are spawned and completes with the last of them, and
/// its children count too), and without this a stream of weak tasks past the mark would
/// start them all, each holding its frame and tables, before any completed (the heat
/// sweep's weak variant started all its 720; with this, the peak memory of `suite --bench
/// heat` fell from 135 to 102 MB). Only the own deque: stealing here could drain other
/// workers' work into this stack while the children wait for something only later spawns
/// provide.
fn catch_up(frame: &Frame, threads: usize) {
    let Some(w) = WorkerThread::current() else {
        return;
    };
    // SAFETY: `frame` is the spawner's, this thread's, and the spawn no longer uses its
    // reference to the local state (jobs run here cannot spawn into this frame: its scope
    // is not `Send`, and its body is below on this stack).
    while unsafe { frame.outstanding_tasks() } > THROTTLE_PER_THREAD * threads {
        if !w.run_own() {
            return;
        }
    }
}

/// The analysis of a spawn's weak parts: gates for each (in the frame's region, chained in
/// footprint order, returned), looked up as the part's place in the tables.
#[cold]
#[inline(never)]
fn analyse_weak(
    local: &mut FrameLocal,
    frame: &Frame,
    desc: *const TaskDesc,
    fps: &[Footprint],
    tr: Option<&TraceBuf>,
) -> *const WeakGate {
    let config = frame.shared().config;
    let (mut gates, mut tail) = (ptr::null::<WeakGate>(), ptr::null::<WeakGate>());
    for fp in fps.iter().filter(|fp| fp.weak) {
        let g = WeakGate::alloc(&mut local.arena, frame, desc);
        // SAFETY: just allocated in this frame's region.
        let gate = unsafe { &*g };
        let mut n = 0;
        let mut inner = Analysis {
            desc: &gate.enter,
            tr,
            trace_id: 0,
            arena: &mut local.arena,
            found: &mut n,
            locks: &mut local.locks,
            links: &mut local.links,
        };
        let mut wsink = WeakSink {
            inner: &mut inner,
            owner: desc,
            leave: &gate.leave,
            leave_found: 0,
        };
        let info = &mut local.regions[fp.region as usize];
        analyse(
            info,
            fp,
            &gate.leave,
            &mut local.table_arena,
            config,
            &mut wsink,
        );
        gate.found_leave.set(wsink.leave_found);
        gate.found.set(n);
        if tail.is_null() {
            gates = g;
        } else {
            // SAFETY: the previous gate of this spawn.
            unsafe { &*tail }.next.set(g);
        }
        tail = g;
    }
    gates
}

/// Makes the spawn's links to outer gates and arms its own gates (counting them as the
/// frame's children), once the spawn can no longer fail.
///
/// # Safety
/// Past the spawn's last panic point, before the task `desc` (whose edges `found` counts)
/// is armed; `gates` is the chain `analyse_weak` returned.
#[cold]
#[inline(never)]
unsafe fn arm_weak(
    local: &mut FrameLocal,
    desc: *const TaskDesc,
    gates: *const WeakGate,
    found: &mut usize,
    tr: Option<&TraceBuf>,
    trace_id: u64,
) {
    for &link in &local.links {
        // SAFETY: per the contract; the outer gates of a region of this frame, whose owner's
        // body runs on this thread; this task and its gates not armed yet.
        unsafe { link_weak(link, (desc, &mut *found), tr, trace_id, &mut local.arena) };
    }
    let mut g = gates;
    while !g.is_null() {
        // SAFETY: this spawn's gates, every edge into them registered; armed before the
        // task, whose body's end fires their leave gates.
        let gate = unsafe { &*g };
        g = gate.next.get();
        let node = local
            .arena
            .alloc(NotifyNode::new(ptr::addr_of!(gate.leave).cast()))
            .as_ptr();
        // SAFETY: once per gate, past every edge into it; the node is fresh.
        let counted = unsafe { gate.arm(node) };
        local.spawned = local.spawned.wrapping_add(counted);
        local.gates = local.gates.wrapping_add(counted);
    }
}

#[cfg(test)]
mod tests {
    use super::{throttles, RESUME_PER_THREAD, THROTTLE_PER_THREAD};

    #[test]
    fn the_throttle_enters_at_its_mark_and_leaves_at_the_lower_one() {
        const { assert!(RESUME_PER_THREAD < THROTTLE_PER_THREAD) };
        for t in [1, 2, 16] {
            let (mark, resume) = (THROTTLE_PER_THREAD * t, RESUME_PER_THREAD * t);
            assert!(!throttles(false, mark - 1, t));
            assert!(throttles(false, mark, t));
            // Between the marks: as the last spawn was.
            assert!(throttles(true, resume + 1, t));
            assert!(!throttles(false, resume + 1, t));
            assert!(!throttles(true, resume, t));
            assert!(throttles(true, mark + 5, t));
        }
    }
}
