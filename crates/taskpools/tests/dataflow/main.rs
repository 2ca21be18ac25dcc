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
mod taskloop;
mod wait;

/// Runs `f` on a thread of its own and fails the test if it takes more than a minute (a
/// hang, which is what these tests guard against).
pub(crate) fn within<R: Send + 'static>(what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(Ok(r)) => r,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!("hung: {what}"),
    }
}

pub(crate) fn message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}
