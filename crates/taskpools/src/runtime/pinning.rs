//! Which core each worker is pinned to, over the cores this process may run on.

use crate::places::cores::process_cores;

/// Whether this target can pin a thread to one core (through `core_affinity`): Linux and
/// Android (`sched_setaffinity`), Windows (`SetThreadAffinityMask`, the process's processor
/// group), FreeBSD and NetBSD. macOS takes only affinity tags, hints that Apple silicon
/// refuses, and other systems have no such call: there a runtime built with `pin` or with
/// places of listed cores runs its workers unpinned, and `Runtime::pinned` says `false`.
pub(crate) const CAN_PIN: bool = cfg!(any(
    target_os = "linux",
    target_os = "android",
    target_os = "windows",
    target_os = "freebsd",
    target_os = "netbsd"
));

/// The core each of `n` workers is pinned to: worker `i` to core `i mod cores` when `pin` is
/// set and the cores can be listed, else none.
pub(crate) fn worker_cores(pin: bool, n: usize) -> Vec<Option<core_affinity::CoreId>> {
    // Listed at every build, pinned or not, so that the first build fixes the list.
    let cores = process_cores().filter(|_| pin && CAN_PIN);
    (0..n).map(|i| cores.map(|c| c[i % c.len()])).collect()
}

// Linux and Android only: elsewhere `core_affinity::get_core_ids` lists the process's cores
// (or all of them), not the calling thread's mask, so the test could not see the pinning.
#[cfg(all(test, not(loom), any(target_os = "linux", target_os = "android")))]
mod pin_tests {
    use crate::runtime::Runtime;

    /// A thread that pinned itself to one core and then builds a pinned runtime still gets
    /// its workers spread over all the process's cores (the list is taken once, not from the
    /// caller's mask at each build).
    #[test]
    fn workers_spread_over_the_cores_after_the_caller_pinned_itself() {
        let Some(cores) = core_affinity::get_core_ids().filter(|c| c.len() >= 2) else {
            return; // one core: nothing to spread
        };
        std::thread::spawn(move || {
            drop(Runtime::builder().threads(1).build().unwrap());
            core_affinity::set_for_current(cores[0]);
            let rt = Runtime::builder().threads(2).pin(true).build().unwrap();
            let seen = rt.broadcast(|_| core_affinity::get_core_ids().unwrap_or_default());
            assert_eq!(seen[0], [cores[0]]);
            assert_eq!(seen[1], [cores[1]], "worker 1 pinned to {:?}", seen[1]);
        })
        .join()
        .unwrap();
    }
}
