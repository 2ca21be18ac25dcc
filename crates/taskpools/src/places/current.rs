//! The place of the runtime worker running this code. A worker of a runtime with places notes
//! its place here when it starts and clears it when it stops, so that [`current_place`]
//! answers without this layer knowing the runtime (and with one thread-local read).

use std::cell::Cell;

use super::PlaceId;

thread_local! {
    /// The place of the worker on this thread, while it runs on a runtime with places.
    static CURRENT_PLACE: Cell<Option<PlaceId>> = const { Cell::new(None) };
}

/// The place of the worker running this code, or `None` on a thread that is not a worker or
/// on a runtime without places.
///
/// ```
/// use taskpools::places::{current_place, PlaceId, Places};
///
/// assert_eq!(current_place(), None); // not a worker
/// let rt = taskpools::Runtime::builder().places(Places::parse("2x1")?).build()?;
/// assert_eq!(rt.broadcast(|_| current_place()), [Some(PlaceId(0)), Some(PlaceId(1))]);
/// let plain = taskpools::Runtime::new(1)?;
/// assert_eq!(plain.install(current_place), None); // a runtime without places
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn current_place() -> Option<crate::places::PlaceId> {
    CURRENT_PLACE.with(Cell::get)
}

/// Called by a runtime's worker on its own thread: its place as it starts (`None` on a
/// runtime without places), `None` as it stops.
pub(crate) fn set_current_place(place: Option<PlaceId>) {
    CURRENT_PLACE.with(|c| c.set(place));
}
