//! What a data-flow task may touch: access declarations, made from a scope's regions (the views
//! of the data that a task receives through them are in `tile.rs`).
//!
//! A [`Region`] is data handed to a scope (`&mut [T]`, borrowed for the scope's lifetime).
//! Parts of it — the whole, a range ([`Part`]), a sub-matrix ([`Sub`], PARTEE's *stride*
//! argument) — are declared with a mode: [`read`](Part::read) (PARTEE's `in`),
//! [`out`](Part::out) or [`inout`](Part::inout). A task receives `&[T]` / [`TileRef`] for what it
//! reads and `&mut [T]` / [`TileMut`] for what it writes, and nothing else of the region.
//! Declarations are neither `Send` nor `Sync`, so they cannot be captured by a task's
//! closure: a task reaches data only through the accesses it declared.
//!
//! A [`RegionRef`] is data handed to a scope read-only (`&[T]`): its parts ([`PartRef`],
//! [`SubRef`]) can only be declared `read`. One element ([`Region::at`], [`Elem`], [`ElemRef`])
//! is declared like a part, and the task gets `&T` / `&mut T` instead of a one-element slice.
//!
//! One concept per file: `span` (where a declaration lies, shared by every handle), `region`
//! (regions and their parts), `matrix` (matrices and their sub-matrices), `shared` (the
//! read-only twins of both), `element` (one-element accesses), `declare` (the declared
//! accesses and [`Accesses`]).

#[cfg(doc)]
use crate::dataflow::{TileMut, TileRef};

mod declare;
mod element;
mod kinds;
mod matrix;
mod reduce;
mod region;
mod shared;
pub(super) mod span;
mod weak;

pub(in crate::dataflow) use declare::sealed;
pub use declare::{Accesses, Read, TileRead, TileWrite, Write};
pub use element::{Elem, ElemRead, ElemRef, ElemWrite};
pub use matrix::{Matrix, Sub};
pub use reduce::{Reduce, ReduceOne};
pub use region::{Part, Region};
pub use shared::{MatrixRef, PartRef, RegionRef, SubRef};
pub use weak::{WeakMut, WeakRead, WeakRef, WeakWrite};
