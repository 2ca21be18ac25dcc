//! The data-flow scope: [`scope`], [`scope_with`] and [`try_scope`], the [`Scope`] handle
//! with its regions and its `sync`, and the panic a scope reports ([`TaskPanic`]).

use std::any::Any;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use super::frame::{Frame, LazyFrame, RegionInfo, Shared};
use super::lut::{RectMode, Trie};
use super::{Config, Matrix, Region, TileMut};
use crate::panics::first_of;
use crate::runtime::global;
use crate::runtime::trace::EventKind;
use crate::runtime::worker::WorkerThread;
use crate::sync::{AtomicUsize, Ordering};

/// A panic from a data-flow scope's tasks (or its own closure), with how many tasks were
/// cancelled because they depended on the panicking one.
pub struct TaskPanic {
    /// The first panic's payload.
    pub payload: Box<dyn Any + Send>,
    /// Tasks that did not run because a task they (transitively) depended on panicked.
    pub cancelled: usize,
}

impl std::fmt::Debug for TaskPanic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let msg = self
            .payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| self.payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(non-string payload)");
        f.debug_struct("TaskPanic")
            .field("message", &msg)
            .field("cancelled", &self.cancelled)
            .finish()
    }
}

/// A data-flow scope: hand it data with [`region`](Scope::region), spawn tasks on parts of
/// it with [`spawn`](Scope::spawn). `'s` is how long the scope's data is borrowed; `'e` is
/// the environment the scope lives in.
pub struct Scope<'s, 'e: 's> {
    pub(super) frame: *const LazyFrame,
    /// Invariant in both lifetimes; not `Send` or `Sync` (raw pointer): a scope is used by the
    /// thread that runs its task.
    marker: PhantomData<(&'s mut &'s (), &'e mut &'e ())>,
}

impl<'s, 'e> Scope<'s, 'e> {
    pub(super) fn new(frame: &LazyFrame) -> Scope<'s, 'e> {
        Scope {
            frame,
            marker: PhantomData,
        }
    }

    pub(super) fn frame(&self) -> &Frame {
        // SAFETY: a scope is handed out only by reference while its frame is alive.
        unsafe { &*self.frame }.get()
    }

    fn register(&self, bytes: usize, elem: usize) -> u32 {
        let f = self.frame();
        let config = f.shared().config;
        // SAFETY: the frame's thread (a scope is neither `Send` nor `Sync`).
        let l = unsafe { f.local() };
        let id = u32::try_from(l.regions.len()).expect("fewer than 2^32 regions per task");
        l.regions.push(RegionInfo {
            elem,
            bytes,
            trie: Trie::new(bytes, config.block),
            rects: config.exact.then(|| RectMode::new(bytes)),
        });
        id
    }

    /// Registers a region of `elems` elements of `T`. Zero-sized elements are still places a
    /// `&mut` may claim, but however many there are, they take no memory: the whole region
    /// is then one slot (element size 0 below), so every two accesses to it are ordered.
    fn register_elems<T>(&self, elems: usize) -> u32 {
        match std::mem::size_of::<T>() {
            0 => self.register(usize::from(elems > 0), 0),
            elem => self.register(elems * elem, elem),
        }
    }

    /// Hands `data` to the scope for the scope's lifetime: the tasks spawned here reach it
    /// through accesses declared on the returned region.
    pub fn region<T>(&self, data: &'s mut [T]) -> Region<'s, T> {
        let id = self.register_elems::<T>(data.len());
        Region {
            frame: self.frame.cast(),
            id,
            ptr: data.as_mut_ptr(),
            len: data.len(),
            marker: PhantomData,
        }
    }

    /// Hands a tile (a task's [`TileMut`], say) to the scope as a matrix of its rows and
    /// columns, for the task's children to split further.
    pub fn matrix<T>(&self, mut tile: TileMut<'s, T>) -> Matrix<'s, T> {
        let (rows, cols, ld) = (tile.rows(), tile.cols(), tile.ld());
        // The tile lies in memory, so its span fits in `usize` (checked by its constructors).
        let elems = if rows == 0 { 0 } else { (rows - 1) * ld + cols };
        let id = self.register_elems::<T>(elems);
        Matrix {
            frame: self.frame.cast(),
            id,
            ptr: tile.as_mut_ptr(),
            offset: 0,
            rows,
            cols,
            ld,
            marker: PhantomData,
        }
    }

    /// Waits until every task spawned in this scope so far has completed (running other
    /// work meanwhile), then frees their descriptors: PARTEE's `sync`. If one of them
    /// panicked, the panic is resumed here. Needed only where a
    /// task must see its children's results itself (Papakonstantinou, PARTEE (2015), §2.2), or
    /// to bound the memory of a long-running scope; dependences between siblings need no sync.
    pub fn sync(&self) {
        let f = self.frame();
        let w = WorkerThread::current().expect("a data-flow scope runs on a worker");
        let tr = if f.trace_id != 0 {
            w.trace.as_deref()
        } else {
            None
        };
        if let Some(t) = tr {
            f.note_wait(t);
        }
        f.wait_children(w);
        if let Some(t) = tr {
            t.note(EventKind::Sync { task: f.trace_id });
        }
        // SAFETY: the frame's thread; every child has completed, so nothing refers to the
        // region's descriptors, nodes or table leaves any more.
        let l = unsafe { f.local() };
        let config = f.shared().config;
        for r in &mut l.regions {
            r.trie = Trie::new(r.bytes, config.block);
            r.rects = config.exact.then(|| RectMode::new(r.bytes));
        }
        l.arena.reset();
        l.table_arena.reset();
        if let Some(p) = f.take_panic() {
            // A child failed (its dependents were cancelled): the panic goes on now, to the
            // task or scope that called `sync`. If that code catches it, the scope goes on
            // afresh: later spawns are not ordered after the children before the sync.
            resume_unwind(p);
        }
    }
}

/// Runs `f` with a data-flow scope on the current runtime (the global one outside any), waits
/// for every task spawned in it, and returns `f`'s result; resumes the first panic of a task
/// (see [`try_scope`]). Blocks of [`Config::DEFAULT_BLOCK`] bytes.
pub fn scope<'e, F, R>(f: F) -> R
where
    F: for<'s> FnOnce(&'s Scope<'s, 'e>) -> R + Send,
    R: Send,
{
    scope_with(Config::default(), f)
}

/// [`scope`] with a look-up-table configuration.
pub fn scope_with<'e, F, R>(config: Config, f: F) -> R
where
    F: for<'s> FnOnce(&'s Scope<'s, 'e>) -> R + Send,
    R: Send,
{
    match try_scope(config, f) {
        Ok(r) => r,
        Err(p) => resume_unwind(p.payload),
    }
}

/// [`scope_with`], returning a panic (with the number of tasks it cancelled) instead of
/// resuming it.
pub fn try_scope<'e, F, R>(config: Config, f: F) -> Result<R, TaskPanic>
where
    F: for<'s> FnOnce(&'s Scope<'s, 'e>) -> R + Send,
    R: Send,
{
    match WorkerThread::current() {
        Some(w) => root(w, config, f),
        None => global().install(|| {
            let w = WorkerThread::current().expect("install runs on a worker");
            root(w, config, f)
        }),
    }
}

fn root<'e, F, R>(w: &WorkerThread, config: Config, f: F) -> Result<R, TaskPanic>
where
    F: for<'s> FnOnce(&'s Scope<'s, 'e>) -> R,
{
    let shared = Shared {
        config,
        cancelled: AtomicUsize::new(0),
    };
    // A traced root scope has an id of its own: its tasks' parent.
    let tr = if w.registry.tracing {
        w.trace.as_deref()
    } else {
        None
    };
    let trace_id = tr.map_or(0, |t| {
        let id = t.next_id();
        t.note(EventKind::Spawn {
            parent: 0,
            child: id,
        });
        id
    });
    let frame = LazyFrame::new(&*w.registry, &shared, trace_id);
    let r = {
        let s = Scope::new(&frame);
        catch_unwind(AssertUnwindSafe(|| f(&s)))
    };
    let child_panic = frame.finish(w, tr);
    drop(frame);
    let cancelled = shared.cancelled.load(Ordering::Relaxed);
    match (r, child_panic) {
        (Ok(r), None) => Ok(r),
        (Ok(_), Some(payload)) => Err(TaskPanic { payload, cancelled }),
        // The closure's panic; a child's is dropped here (its drop may panic in turn).
        (Err(payload), child) => Err(TaskPanic {
            payload: first_of(Some(payload), child).expect("the closure's panic"),
            cancelled,
        }),
    }
}
