//! Data-flow tasks: nested tasks whose order follows the data they declare (Papakonstantinou,
//! PARTEE (2015), chapter 2 and §3.4), on the same runtime as `join`, `scope` and the working
//! phases.
//!
//! A task is spawned with its *footprint*: the parts of the data it reads (`in`, here
//! [`read`](Part::read)), writes ([`out`](Part::out)) or both ([`inout`](Part::inout)), whole
//! slices or strided sub-matrices (PARTEE's *stride* arguments, [`Matrix`]). The runtime
//! runs it once every earlier sibling whose footprint conflicts with its own (same data, one
//! of them writing) has completed — read after write, write after read, write after write —
//! and lets readers of the same data run together. A task receives its data only through its
//! declarations (`&[T]` for a read, `&mut [T]` for a write, [`TileRef`] / [`TileMut`] for a
//! sub-matrix, `&T` / `&mut T` for one element declared with [`at`](Region::at)), so what it
//! touches is what the analysis saw: the compiler rejects a task that reaches for undeclared
//! data. Data nobody writes is handed over read-only ([`Scope::region_ref`], from a `&[T]`):
//! its parts can only be declared `read`, and its readers never wait.
//!
//! ```
//! use taskpools::dataflow;
//!
//! // A blocked prefix sum: each block adds its left neighbour's last element. The tasks are
//! // spawned in any order the program likes; the declared accesses order them.
//! let mut v = vec![1u64; 1000];
//! dataflow::scope(|df| {
//!     let r = df.region(&mut v);
//!     let blocks: Vec<_> = r.chunks(100).collect();
//!     df.spawn(blocks[0].inout(), |_, b| {
//!         for i in 1..b.len() { b[i] += b[i - 1]; }
//!     });
//!     for w in blocks.windows(2) {
//!         df.spawn((w[0].read(), w[1].inout()), |_, (left, b)| {
//!             b[0] += left[left.len() - 1];
//!             for i in 1..b.len() { b[i] += b[i - 1]; }
//!         });
//!     }
//! });
//! assert_eq!(v[999], 1000);
//! ```
//!
//! # Granularity
//!
//! By default ([`scope()`], [`Config::default()`]) dependences are exact: tasks are ordered
//! only if their declarations share an element, however small and close the elements lie (a
//! graph over an array of pointers is not serialised). PARTEE's block mode
//! ([`Config::blocks`]) orders any two accesses to one block, element-disjoint or not;
//! [`Config::thesis()`] is that mode with the thesis' 2 KiB blocks, for reproducing its
//! figures ([`scope_with`] takes a configuration).
//!
//! ```
//! use taskpools::dataflow::{self, Config};
//!
//! let mut ptrs: Vec<Box<u32>> = (0..64).map(Box::new).collect(); // 8-byte elements
//! let shared = [10u32];
//! dataflow::scope(|df| {
//!     let (p, s) = (df.region(&mut ptrs), df.region_ref(&shared));
//!     for i in 0..64 {
//!         // One task per element, none ordered after another (exact dependences).
//!         df.spawn((p.at(i).inout(), s.at(0).read()), |_, (b, k)| **b += k);
//!     }
//! });
//! assert_eq!(*ptrs[63], 73);
//! // The thesis' configuration: a 2 KiB block holds 256 such elements, so these 64 tasks
//! // run one after another.
//! dataflow::scope_with(Config::thesis(), |df| {
//!     let p = df.region(&mut ptrs);
//!     for i in 0..64 {
//!         df.spawn(p.at(i).inout(), |_, b| **b -= 10);
//!     }
//! });
//! assert_eq!(*ptrs[63], 63);
//! ```
//!
//! # Access kinds beyond in, out and inout
//!
//! Two kinds of OmpSs-2 (and OpenMP 5) let tasks on the same data go without an order among
//! themselves, while staying ordered against every other kind (see [`Part::concurrent`],
//! [`Part::commutative`], also on regions, sub-matrices and elements):
//!
//! - `concurrent` (OpenMP 5.1's `inoutset`): the tasks may run at the same time; each gets a
//!   shared view (`&[T]`) and updates through atomics of its own.
//! - `commutative` (OpenMP's `mutexinoutset`): one at a time, in whatever order they become
//!   ready; each gets `&mut [T]`. The runtime takes a lock per group before the task starts;
//!   a task whose lock is held is set aside, never blocking its worker.
//!
//! The declarations are [`Read`] (or [`TileRead`], [`ElemRead`]) for `concurrent` and
//! [`Write`] (or [`TileWrite`], [`ElemWrite`]) for `commutative`, as for `read` and `inout`.
//! Commutative tasks go unordered only on the very same data (the same part, or, with block
//! tables, the same block): two whose parts overlap only in part run in spawn order, as two
//! `inout`s would. A commutative task that panics releases its lock; the other members of
//! its group still run and may see its half-done update (as with a poisoned mutex), while
//! what comes after the group is cancelled.
//!
//! ```
//! use taskpools::dataflow;
//!
//! let words = ["a", "bb", "a", "ccc", "bb", "a"];
//! let mut counts = [0u32; 4]; // by length
//! dataflow::scope(|df| {
//!     let c = df.region(&mut counts);
//!     for w in words {
//!         // Adds commute: any order, one at a time.
//!         df.spawn(c.commutative(), move |_, c| c[w.len()] += 1);
//!     }
//!     // After all of them.
//!     df.spawn(c.read(), |_, c| assert_eq!(c, [0, 3, 2, 1]));
//! });
//! ```
//!
//! # Reductions
//!
//! [`Part::reduce`] (also [`Region::reduce`], [`Elem::reduce`]; OmpSs-2's `reduction`,
//! OpenMP 5's `in_reduction`, StarPU's `STARPU_REDUX`) declares that a task folds values into
//! the data with an associative and commutative operator: the task gets a private copy
//! ([`Partial`], [`PartialOne`]) that starts at the identity. Consecutive reductions into the
//! same part with the same operator run at once, with one copy per worker, and the copies are
//! folded into the data before the next task that touches it otherwise, a
//! [`Scope::wait_for`], a [`Scope::sync`] or the scope's end.
//!
//! ```
//! use taskpools::dataflow;
//!
//! let xs: Vec<u64> = (1..=1000).collect();
//! let mut sum = [0u64];
//! dataflow::scope(|df| {
//!     let s = df.region(&mut sum);
//!     for chunk in xs.chunks(100) {
//!         df.spawn(s.at(0).reduce(0, |a, x| *a += x), move |_, mut p| *p += chunk.iter().sum::<u64>());
//!     }
//!     // After the copies are folded in.
//!     df.spawn(s.read(), |_, s| assert_eq!(s[0], 500500));
//! });
//! ```
//!
//! # Waiting on data, explicit edges
//!
//! [`Scope::wait_for`] (OpenMP's `taskwait depend`) waits for the earlier tasks that touch
//! some data, then hands that data to the spawner; [`Scope::spawn_after`] orders a task after
//! given siblings ([`TaskHandle`]s), beside or instead of data.
//!
//! # Loops
//!
//! [`Scope::taskloop`] (OpenMP's `taskloop grainsize`, with OmpSs-2's dependences) cuts a
//! range into tasks of about a grain of iterations each, every one declaring what its chunk
//! touches.
//!
//! # Priorities
//!
//! [`Scope::spawn_with_priority`] (OpenMP's `priority`): once a scope uses one, its ready
//! tasks run most urgent first, on every worker and for thieves, through a ready heap per
//! worker (worth it for coarse tasks on a critical path, such as a factorization's panels).
//!
//! # Nesting
//!
//! A task may spawn children of its own, over the data it received: its `&mut [T]` (or
//! [`TileMut`]) becomes a region of the task's scope ([`Scope::region`], [`Scope::matrix`]).
//! A task's footprint therefore covers its descendants', dependences are looked for only
//! between siblings, each task's children are analysed in the task's own look-up table, and a
//! task completes (releasing its successors) only after all its children have: the implicit
//! sync at the end of every task. Data a task only reads can be captured by reference in
//! its children's closures — PARTEE's `safe` arguments, which need no analysis because the
//! borrow checker already proves nobody writes them.
//!
//! A task that only hands data to its children declares it *weak* ([`Part::weak_inout`],
//! [`Part::weak_read`]; OmpSs-2's `weakinout` and `weakin`): it gets a token
//! ([`WeakMut`], [`WeakRef`]) that its scope makes a region ([`Scope::weak_region`]). It starts
//! without waiting for the earlier tasks on those parts (its children do), a later sibling on
//! a weak part waits only for the children that touch it, not for the whole task (each part
//! is released as its last child ends), and it never waits for its children itself.
//!
//! # What is rejected
//!
//! - Two declarations in one spawn that overlap where one of them writes: a panic at the
//!   spawn, before anything is queued (declare the data once, as `inout`).
//! - A declaration from another task's scope: a panic at the spawn. Declarations cannot be
//!   captured by a task's closure (they are not `Send`), nor can the data a task receives
//!   escape it:
//!
//! ```compile_fail
//! let mut v = vec![0u32; 4];
//! let (tx, rx) = std::sync::mpsc::channel::<&mut [u32]>();
//! taskpools::dataflow::scope(|df| {
//!     let r = df.region(&mut v);
//!     // The task's `&mut [u32]` lives only as long as the task: it cannot be sent away.
//!     df.spawn(r.inout(), move |_, a| tx.send(a).unwrap());
//! });
//! ```
//!
//! ```compile_fail
//! let mut v = vec![0u32; 4];
//! taskpools::dataflow::scope(|df| {
//!     let r = df.region(&mut v);
//!     let part = r.part(0..2);
//!     // A declaration cannot be smuggled into a task to be used there without a dependence.
//!     df.spawn((), move |df2, ()| { let _ = part.read(); });
//! });
//! ```
//!
//! ```compile_fail
//! let mut v = vec![0u32; 4];
//! taskpools::dataflow::scope(|df| {
//!     let _r = df.region(&mut v);
//!     // `v` belongs to the scope now: a task cannot touch it without declaring it.
//!     df.spawn((), |_, ()| v[0] = 1);
//! });
//! ```
//!
//! A cycle cannot be expressed: a task can only wait for siblings spawned before it.
//!
//! # Panics, errors and cancelling
//!
//! A panicking task's dependents (and theirs) do not run: they are cancelled. Its other
//! siblings finish, and the scope then resumes the first panic in its caller ([`try_scope`]
//! returns it with the number of cancelled tasks instead). The runtime stays usable.
//!
//! A task spawned with [`Scope::try_spawn`] may return an error, and any task (or the scope's
//! closure) may call [`Scope::cancel`]: then no task of the scope that has not started yet
//! runs, whatever it depends on (OpenMP's `cancel taskgroup`). [`try_scope`] returns the error
//! (or that the scope was cancelled) and the number of tasks that never ran
//! ([`ScopeError`]).
//!
//! # Design note
//!
//! - **Descriptors and regions.** Each running task that spawns (and each root scope) has a
//!   *frame* on the stack of the thread that runs it, made at the first use of its
//!   [`Scope`] (a leaf task, which never uses it, makes, waits on and frees nothing),
//!   holding its look-up table and two
//!   [regions](crate::mem::region::Region): one for its children's descriptors, closures and
//!   notify-list nodes, which the threads that run and complete the children touch too, and
//!   one for the table's leaves, entries and reader lists, which only the frame's thread
//!   touches (kept apart so that the spawning thread's table never shares a cache line with
//!   what other threads write or read). Only that thread spawns the task's children, so
//!   neither region needs a lock. The frame lives until every child has completed (each
//!   child's last access to it is the increment of its `completed` counter, which the
//!   frame's thread compares with the spawns it counted itself), and then frees
//!   both regions in one go. [`Scope::sync`] frees them early, once the children so far are
//!   done.
//! - **Dependences.** At a spawn the parent finds, in its look-up table, the earlier
//!   siblings the new task must wait for, pushes a node for the new task onto each one's
//!   notify list (a push that finds the list closed means that sibling is done: no edge),
//!   and arms the new task's counter with the number of edges. In exact mode, while a
//!   region's accesses are whole rectangles (tiles, several rows apart) each equal to an
//!   earlier one or disjoint from all, the table keeps one state per rectangle, found by its
//!   first row, instead of one entry per row; the first partial overlap or one-row access
//!   turns it into per-row entries with the same state. Whoever brings the counter to
//!   zero — the arm itself, or the last predecessor to complete — queues the task on its own
//!   worker. The docs of the source's `notify` module say why no notification is lost or
//!   doubled (also `docs/dataflow.md` in the repository); the loom models there cover a
//!   spawn racing a completion and two predecessors completing at once.
//! - **Safety.** The data handed to a task is exclusive for writes and shared for reads
//!   because (a) regions are made from `&mut` borrows for the scope's lifetime (read-only
//!   regions from `&` borrows, and offer only reads, which need `T: Sync`), (b) every
//!   access the task gets is one it declared, checked for self-overlap at the spawn, (c) the
//!   analysis orders every conflicting pair of siblings (in block mode conservatively), and
//!   (d) a task's lifetime `'t` ends before it completes, so nothing it received outlives the
//!   point where its successors start.
//! - **ND mode** (PARTEE's analysis switched off, with explicit syncs) would hand the same
//!   data to tasks the programmer promises are independent: in Rust that promise is a borrow.
//!   Programs without dependence analysis are written with `join` / `forkjoin::scope` over
//!   disjoint [`TileMut`]s ([`TileMut::into_tiles`], [`TileMut::quadrants`]), which the
//!   compiler checks; [`Scope::sync`] is PARTEE's `sync` inside a data-flow scope.

mod access;
mod analysis;
mod cancel;
mod commute;
mod config;
mod edges;
mod footprint;
mod frame;
mod lut;
pub(crate) mod notify;
mod priority;
mod reduce;
mod scope;
mod spawn;
mod task;
mod taskloop;
mod tile;
mod wait;
mod weak;

pub use crate::cancel::{BoxError, Cause, ScopeError, TaskPanic};
pub use access::{
    Accesses, Elem, ElemRead, ElemRef, ElemWrite, Matrix, MatrixRef, Part, PartRef, Read, Reduce,
    ReduceOne, Region, RegionRef, Sub, SubRef, TileRead, TileWrite, WeakMut, WeakRead, WeakRef,
    WeakWrite, Write,
};
pub use config::Config;
pub use edges::TaskHandle;
pub use footprint::Footprint;
#[doc(hidden)]
pub use reduce::Groups;
pub use reduce::{Partial, PartialOne};
pub use scope::{scope, scope_with, try_scope, Scope};
pub use tile::{TileMut, TileRef};
#[doc(hidden)]
pub use weak::WeakGate;

#[cfg(test)]
mod tests;
