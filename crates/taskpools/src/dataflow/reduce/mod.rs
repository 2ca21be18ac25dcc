//! Reductions (OmpSs-2's `reduction`, OpenMP 5's `task_reduction` / `in_reduction`, StarPU's
//! `STARPU_REDUX`): tasks that fold values into the same data run together, each into a
//! private copy, and the copies are combined into the data when something else needs it.
//!
//! **Groups.** Consecutive reduction accesses of a scope to the same part (same elements,
//! same element type and same operator) form a group. A member touches only its private
//! copy, never the data, so it waits for nothing: the analysis does not see it at all, and
//! members run at once, beside each other and beside whatever else runs on the data. The
//! group stays open until a later declaration touches the part in any other way (a read, a
//! write, a reduction of another shape or operator, a `wait_for`), or the scope syncs or
//! ends. Then the spawner closes it: it spawns one more task, the *combine*, with an `inout`
//! access to the part (so the analysis orders it after what came before on the data, and
//! before the access that closed the group) and an explicit edge from every member.
//!
//! **Copies.** A reducer keeps one slot per worker of the scope's runtime, each an optional
//! private copy that only that worker touches while the group runs (no atomics, no lock), and
//! one slot behind a lock for any other thread. A member takes its thread's copy when it
//! starts (a fresh one of identity values if the slot is empty, as it is for a member nested
//! in another member on the same worker) and gives it back when the task's view of it is
//! dropped, on whatever thread that is: into the empty slot, or folded with the copy found
//! there. The combine folds each slot's copy into the data, element by element. Each
//! member's view is dropped before the member completes, and the combine starts only after
//! every member has completed (the completion is a Release, the combine's readiness an
//! Acquire), so it sees every copy and no member touches a slot meanwhile.
//!
//! One concept per file: `copies` (the reducer: slots, take, give back, combine), `partial`
//! (what a member holds), `groups` (a frame's open groups, and closing them). The loom models
//! in `loom_models.rs` (of `copies`) check the slots' protocol with two members and the combine, each with
//! a planted-bug twin that must fail.

mod copies;
mod groups;
mod partial;

pub(super) use copies::{Nowhere, Reducer};
pub use groups::Groups;
pub use partial::{Partial, PartialOne};
