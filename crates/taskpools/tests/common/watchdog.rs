//! A bound on tests that would hang if the runtime lost a wake-up or a job: `within` runs the
//! test body on a thread of its own and fails the test if it has not finished in time (the
//! body's own panic is passed on).

use std::time::Duration;

/// Runs `f` and fails with `hung: {what}` if it does not finish within `secs` seconds.
pub fn within<R: Send + 'static>(
    secs: u64,
    what: &str,
    f: impl FnOnce() -> R + Send + 'static,
) -> R {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        let r = f();
        let _ = tx.send(());
        r
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(()) => h.join().expect("finished"),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match h.join() {
            Ok(r) => r,
            Err(p) => std::panic::resume_unwind(p),
        },
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("hung: {what} (not finished after {secs} s)")
        }
    }
}
