//! The cores this process may run on: listed once, for the machine's [`Topology`] and for
//! pinning a runtime's workers.
//!
//! [`Topology`]: super::Topology

/// The cores this process may run on, as listed the first time a runtime is built. Listed
/// once: the list comes from the calling thread's affinity mask, and a program that later
/// pins its own thread to one core (to time a sequential run there, say) must not make every
/// runtime it builds afterwards pin all its workers to that core.
pub(crate) fn process_cores() -> Option<&'static [core_affinity::CoreId]> {
    static CORES: std::sync::OnceLock<Option<Vec<core_affinity::CoreId>>> =
        std::sync::OnceLock::new();
    CORES
        .get_or_init(|| core_affinity::get_core_ids().filter(|c| !c.is_empty()))
        .as_deref()
}

/// The ids of the cores this process may run on (listed once, see [`process_cores`]); empty
/// where they cannot be listed.
pub(crate) fn process_core_ids() -> Vec<usize> {
    process_cores().map_or(Vec::new(), |c| c.iter().map(|c| c.id).collect())
}
