//! The data-flow scope: [`scope`], [`scope_with`] and [`try_scope`], the [`Scope`] handle
//! with its regions and its `sync`.

use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use super::access::span::{Grid, Span};
use super::frame::{Frame, LazyFrame, RegionInfo, Shared};
use super::lut::{RectMode, Trie};
use super::priority::Priorities;
use super::{Config, Matrix, MatrixRef, Region, RegionRef, TileMut, TileRef};
use crate::cancel::{Ended, ScopeError, Stop};
use crate::runtime::global;
use crate::runtime::trace::EventKind;
use crate::runtime::worker::WorkerThread;

/// A data-flow scope: hand it data with [`region`](Scope::region), spawn tasks on parts of
/// it with [`spawn`](Scope::spawn). `'s` is how long the scope's data is borrowed; `'e` is
/// the environment the scope lives in.
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// // A blocked sum tree over 16 numbers: leaves sum a block each, the root adds the leaves.
/// let mut data: Vec<u64> = (1..=16).collect();
/// let mut partial = [0u64; 4];
/// let mut total = [0u64];
/// taskpools::dataflow::scope(|df| {
///     let (d, p, t) = (df.region(&mut data), df.region(&mut partial), df.region(&mut total));
///     for (i, block) in d.chunks(4).enumerate() {
///         df.spawn((block.read(), p.part(i..i + 1).out()), |_, (b, s)| s[0] = b.iter().sum());
///     }
///     df.spawn((p.read(), t.out()), |_, (p, t)| t[0] = p.iter().sum());
/// });
/// assert_eq!(total, [136]);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
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

    #[inline]
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
            gates: std::ptr::null(),
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

    /// Registers a region of the `len` elements at `ptr`, all of it.
    pub(super) fn span<T>(&self, ptr: *mut T, len: usize) -> Span<T> {
        Span {
            frame: self.frame.cast(),
            id: self.register_elems::<T>(len),
            ptr,
            start: 0,
            len,
        }
    }

    /// Hands `data` to the scope for the scope's lifetime: the tasks spawned here reach it
    /// through accesses declared on the returned region.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut xs = vec![1.0f64; 4];
    /// let mut ys = vec![2.0f64; 4];
    /// taskpools::dataflow::scope(|df| {
    ///     let (x, y) = (df.region(&mut xs), df.region(&mut ys));
    ///     // y += 3 x, then x = 0 (which waits for the read of x).
    ///     df.spawn((x.read(), y.inout()), |_, (x, y)| {
    ///         y.iter_mut().zip(x).for_each(|(y, x)| *y += 3.0 * x);
    ///     });
    ///     df.spawn(x.out(), |_, x| x.fill(0.0));
    /// });
    /// assert_eq!((xs, ys), (vec![0.0; 4], vec![5.0; 4]));
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn region<T>(&self, data: &'s mut [T]) -> Region<'s, T> {
        Region::new(self.span(data.as_mut_ptr(), data.len()))
    }

    /// Hands `data` to the scope read-only, for the scope's lifetime: tasks declare reads of
    /// its parts (OpenMP's `depend(in: …)` on data nobody writes) and get `&[T]`. Readers
    /// never wait for each other; the region is registered and analysed like a writable one,
    /// and its handles ([`RegionRef`]) offer no write. `data` stays readable outside the
    /// scope meanwhile.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let weights = vec![0.5f64; 4]; // shared by every task, written by none
    /// let mut xs = vec![2.0f64; 8];
    /// taskpools::dataflow::scope(|df| {
    ///     let (w, x) = (df.region_ref(&weights), df.region(&mut xs));
    ///     for c in x.chunks(4) {
    ///         df.spawn((w.read(), c.inout()), |_, (w, c)| {
    ///             c.iter_mut().zip(w).for_each(|(c, w)| *c *= w);
    ///         });
    ///     }
    ///     assert_eq!(weights.len(), 4); // still readable here
    /// });
    /// assert_eq!(xs, [1.0; 8]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn region_ref<T>(&self, data: &'s [T]) -> RegionRef<'s, T> {
        // The span's pointer is mutable by type only: a `RegionRef` never writes through it.
        RegionRef::new(self.span(data.as_ptr().cast_mut(), data.len()))
    }

    /// Hands a tile (a task's [`TileMut`], say) to the scope as a matrix of its rows and
    /// columns, for the task's children to split further.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut m = vec![0u32; 16];
    /// taskpools::dataflow::scope(|df| {
    ///     let a = df.region(&mut m).matrix(4, 4);
    ///     df.spawn(a.sub(0, 0, 4, 4).out(), |df, t| {
    ///         // The task's tile becomes a matrix of its own scope, cut for its children.
    ///         let t = df.matrix(t);
    ///         for (i, j) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
    ///             let n = (1 + 2 * i + j) as u32;
    ///             df.spawn(t.tile(i, j, 2).out(), move |_, mut q| q[(0, 0)] = n);
    ///         }
    ///     });
    /// });
    /// assert_eq!([m[0], m[2], m[8], m[10]], [1, 2, 3, 4]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn matrix<T>(&self, mut tile: TileMut<'s, T>) -> Matrix<'s, T> {
        let (rows, cols, ld) = (tile.rows(), tile.cols(), tile.ld());
        // The tile lies in memory, so its span fits in `usize` (checked by its constructors).
        let elems = if rows == 0 { 0 } else { (rows - 1) * ld + cols };
        let span = self.span(tile.as_mut_ptr(), elems);
        Matrix::new(Grid::of_tile(span, rows, cols, ld))
    }

    /// Hands a read-only tile (a task's [`TileRef`], say) to the scope as a matrix of its rows
    /// and columns, for the task's children to read in parts.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut m: Vec<u32> = (0..16).collect();
    /// let mut sums = [0u32; 4];
    /// taskpools::dataflow::scope(|df| {
    ///     let (a, s) = (df.region(&mut m).matrix(4, 4), df.region(&mut sums));
    ///     df.spawn((a.sub(0, 0, 4, 4).read(), s.out()), |df, (t, s)| {
    ///         // The task's tile becomes a read-only matrix of its own scope.
    ///         let (t, s) = (df.matrix_ref(t), df.region(s));
    ///         for q in 0..4 {
    ///             df.spawn((t.tile(q / 2, q % 2, 2).read(), s.part(q..q + 1).out()), |_, (t, s)| {
    ///                 s[0] = (0..2).map(|r| t.row(r).iter().sum::<u32>()).sum();
    ///             });
    ///         }
    ///     });
    /// });
    /// assert_eq!(sums, [0 + 1 + 4 + 5, 2 + 3 + 6 + 7, 8 + 9 + 12 + 13, 10 + 11 + 14 + 15]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn matrix_ref<T>(&self, tile: TileRef<'s, T>) -> MatrixRef<'s, T> {
        let (rows, cols, ld) = (tile.rows(), tile.cols(), tile.ld());
        // The tile lies in memory, so its span fits in `usize` (checked by its constructors).
        let elems = if rows == 0 { 0 } else { (rows - 1) * ld + cols };
        // Mutable by type only, as in `region_ref`.
        let span = self.span(tile.as_ptr().cast_mut(), elems);
        MatrixRef::new(Grid::of_tile(span, rows, cols, ld))
    }

    /// Waits until every task spawned in this scope so far has completed (running other
    /// work meanwhile), then frees their descriptors: PARTEE's `sync`. If one of them
    /// panicked, the panic is resumed here. Needed only where a
    /// task must see its children's results itself (Papakonstantinou, PARTEE (2015), §2.2), or
    /// to bound the memory of a long-running scope; dependences between siblings need no sync.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// use std::sync::atomic::{AtomicU64, Ordering};
    ///
    /// let mut v: Vec<u64> = (1..=100).collect();
    /// let total = AtomicU64::new(0);
    /// taskpools::dataflow::scope(|df| {
    ///     for c in df.region(&mut v).chunks(25) {
    ///         let total = &total;
    ///         df.spawn(c.read(), move |_, c| {
    ///             total.fetch_add(c.iter().sum(), Ordering::Relaxed);
    ///         });
    ///     }
    ///     df.sync(); // every task spawned so far has completed
    ///     assert_eq!(total.load(Ordering::Relaxed), 5050);
    /// });
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn sync(&self) {
        let f = self.frame();
        // SAFETY: the frame's thread; the reference ends here.
        assert!(
            !unsafe { f.local() }.in_wait,
            "taskpools::dataflow: sync inside the closure of wait_for would wait for that wait \
             itself, which ends only when the closure returns"
        );
        assert!(
            !f.weak,
            "taskpools::dataflow: sync in a task with weak accesses, which may start before \
             its weak parts' predecessors end and so never waits for its children; spawn a \
             child that reads what it needs instead"
        );
        self.close_reductions();
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
        l.epoch += 1;
        l.reductions.forget_retired();
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
/// (see [`try_scope`]). Dependences are exact ([`Config::default()`]): tasks on distinct
/// elements never wait for each other, however close the elements lie; [`scope_with`] takes
/// another configuration ([`Config::thesis()`] for PARTEE's 2 KiB blocks).
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// // Returns the closure's value once every task has completed.
/// let mut v = vec![1u32; 8];
/// let spawned = taskpools::dataflow::scope(|df| {
///     let r = df.region(&mut v);
///     for c in r.chunks(2) {
///         df.spawn(c.inout(), |_, c| c[1] += c[0]);
///     }
///     r.len() / 2
/// });
/// assert_eq!((spawned, v), (4, vec![1, 2, 1, 2, 1, 2, 1, 2]));
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn scope<'e, F, R>(f: F) -> R
where
    F: for<'s> FnOnce(&'s Scope<'s, 'e>) -> R + Send,
    R: Send,
{
    scope_with(Config::default(), f)
}

/// [`scope`] with a look-up-table configuration ([`Config`]).
///
/// ```
/// use taskpools::dataflow::{self, Config};
///
/// // PARTEE's block mode with 8-byte blocks: each part below is one block, and tasks on
/// // different blocks run side by side.
/// let config = Config::blocks(8)?;
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// let mut v = vec![0u8; 64];
/// dataflow::scope_with(config, |df| {
///     let r = df.region(&mut v);
///     for i in 0..8 {
///         df.spawn(r.part(8 * i..8 * i + 8).out(), move |_, p| p.fill(i as u8));
///     }
/// });
/// assert_eq!((v[0], v[63]), (0, 7));
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn scope_with<'e, F, R>(config: Config, f: F) -> R
where
    F: for<'s> FnOnce(&'s Scope<'s, 'e>) -> R + Send,
    R: Send,
{
    run(config, f).0.into_value("dataflow")
}

/// [`scope_with`] that returns how it stopped instead of panicking: `Ok` with the closure's
/// value when every task ran, or a [`ScopeError`] saying what stopped it (a panic, a task's
/// error from [`try_spawn`](Scope::try_spawn), a [`cancel`](Scope::cancel)) and how many
/// tasks never ran. It waits for every running task either way, and never unwinds.
///
/// ```
/// # let rt = taskpools::Runtime::new(2)?;
/// # rt.install(|| {
/// use taskpools::dataflow::{self, Config};
///
/// let mut v = vec![0u32; 4];
/// let ok = dataflow::try_scope(Config::default(), |df| {
///     df.spawn(df.region(&mut v).out(), |_, v| v.fill(3));
///     "done"
/// });
/// assert_eq!(ok.ok(), Some("done"));
/// assert_eq!(v, [3; 4]);
/// // A panicking task: the task that depends on it is cancelled.
/// let e = dataflow::try_scope(Config::default(), |df| {
///     let r = df.region(&mut v);
///     df.spawn(r.inout(), |_, _| panic!("bad block"));
///     df.spawn(r.read(), |_, _| unreachable!("depends on the panicking task"));
/// })
/// .unwrap_err();
/// assert_eq!(e.to_string(), "a task panicked: bad block (1 task did not run)");
/// let failed = dataflow::try_scope(Config::default(), |_| -> () { panic!("in the scope") });
/// assert_eq!(failed.unwrap_err().skipped, 0);
/// # });
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn try_scope<'e, F, R>(config: Config, f: F) -> Result<R, ScopeError>
where
    F: for<'s> FnOnce(&'s Scope<'s, 'e>) -> R + Send,
    R: Send,
{
    let (ended, cancelled) = run(config, f);
    ended.into_result(cancelled)
}

/// A root scope on the current runtime (the global one outside any): how it ended, and how
/// many tasks did not run.
fn run<'e, F, R>(config: Config, f: F) -> (Ended<R>, usize)
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

fn root<'e, F, R>(w: &WorkerThread, config: Config, f: F) -> (Ended<R>, usize)
where
    F: for<'s> FnOnce(&'s Scope<'s, 'e>) -> R,
{
    let shared = Shared {
        config,
        stop: Stop::new(),
        prio: Priorities::new(),
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
    let frame = LazyFrame::new(&*w.registry, &shared, trace_id, false);
    let r = {
        let s = Scope::new(&frame);
        catch_unwind(AssertUnwindSafe(|| {
            let r = f(&s);
            s.close_reductions();
            r
        }))
    };
    let child_panic = frame.finish(w, tr);
    // Every task has completed; tickets whose tasks a thief moved may still be queued.
    shared.prio.wait_spare(w);
    drop(frame);
    // The closure's panic first; a child's, then, is dropped (its drop may panic in turn).
    (shared.stop.end(r, child_panic), shared.stop.skipped())
}
