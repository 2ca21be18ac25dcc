//! A rendezvous of two tasks with a deadline: a `Barrier` of two that reports a miss instead of
//! hanging the test, for checking that two tasks run at the same time.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a task waits for the other one before giving up.
const PATIENCE: Duration = Duration::from_secs(10);

/// Two tasks call [`Meeting::arrive`]; each returns whether the other one arrived too while
/// it waited (so both return `true` only if they ran at the same time).
#[derive(Default)]
pub struct Meeting {
    arrived: AtomicUsize,
    met: AtomicUsize,
}

impl Meeting {
    /// Arrives and waits (up to [`PATIENCE`]) for the other task.
    pub fn arrive(&self) -> bool {
        self.arrived.fetch_add(1, Ordering::SeqCst);
        let t0 = Instant::now();
        while self.arrived.load(Ordering::SeqCst) < 2 {
            if t0.elapsed() > PATIENCE {
                return false;
            }
            std::thread::yield_now();
        }
        self.met.fetch_add(1, Ordering::SeqCst);
        true
    }

    /// How many tasks saw the other one while they waited (2: they ran at the same time).
    pub fn met(&self) -> usize {
        self.met.load(Ordering::SeqCst)
    }
}
