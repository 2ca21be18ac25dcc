//! Data-flow scopes from the outside: random programs against their oracle, the sequential
//! elision (`oracle`), targeted tests of the rest of the contract (`behaviour`), read-only
//! regions and one-element accesses (`accesses`), and the dependence unit under the default
//! and the thesis' configuration (`granularity`), the shared access kinds (`kinds`), explicit
//! edges (`edges`) and waiting on data (`wait`).

mod accesses;
mod behaviour;
mod edges;
mod granularity;
mod kinds;
mod meet;
mod oracle;
mod priority;
mod reduce;
mod taskloop;
mod wait;
mod weak;
mod weak_matrix;

#[path = "../common/watchdog.rs"]
mod watchdog;

/// Fails the test if `f` hangs for a minute (a hang is what these tests guard against).
pub(crate) fn within<R: Send + 'static>(what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    watchdog::within(60, what, f)
}

pub(crate) fn message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// Waits up to 5 s for `cond` (yielding meanwhile); whether it came. For liveness tests whose
/// tasks must meet: a stricter implementation would make them wait out the 5 s and fail.
pub(crate) fn wait_until(cond: impl Fn() -> bool) -> bool {
    let t = std::time::Instant::now();
    while !cond() {
        if t.elapsed() > std::time::Duration::from_secs(5) {
            return false;
        }
        std::thread::yield_now();
    }
    true
}
