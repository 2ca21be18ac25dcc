//! Helpers that the deque scenario tests share (`deque_scenarios.rs`,
//! `private_deque_scenarios.rs`): a watchdog, exactly-once accounting and values whose
//! drops are counted.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

pub const THIEVES: usize = 2;

/// Runs `f` on its own thread; fails if it does not finish within `secs` seconds (instead of
/// hanging the test run), and re-raises its panic if it panicked.
pub fn with_timeout(secs: u64, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let h = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(()) => h.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(p) = h.join() {
                std::panic::resume_unwind(p);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("timed out after {secs} s (a hang)"),
    }
}

/// Marks `v` taken in `seen`; fails on a second take.
pub fn mark(seen: &[AtomicU8], v: usize) {
    assert_eq!(
        seen[v].fetch_add(1, Ordering::Relaxed),
        0,
        "{v} taken twice"
    );
}

pub fn assert_all_once(seen: &[AtomicU8]) {
    let bad: Vec<(usize, u8)> = seen
        .iter()
        .enumerate()
        .map(|(i, c)| (i, c.load(Ordering::Relaxed)))
        .filter(|&(_, c)| c != 1)
        .take(5)
        .collect();
    assert!(bad.is_empty(), "(value, times taken), should be 1: {bad:?}");
}

pub fn bitmap(n: usize) -> Arc<Vec<AtomicU8>> {
    Arc::new((0..n).map(|_| AtomicU8::new(0)).collect())
}

/// A value whose drop is counted per id.
pub struct Tracked {
    pub id: usize,
    pub drops: Arc<Vec<AtomicU8>>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops[self.id].fetch_add(1, Ordering::Relaxed);
    }
}
