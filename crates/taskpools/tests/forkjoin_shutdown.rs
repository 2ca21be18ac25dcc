//! Dropping a runtime with idle workers ends its threads. In its own test binary, so that no
//! other test creates or ends threads while it counts them.
#![cfg(not(loom))]

use taskpools::forkjoin::{Pool, Runtime};

#[cfg(target_os = "linux")]
fn threads_now() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("Threads:")
                .map(|v| v.trim().parse().unwrap())
        })
        .unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn dropping_a_runtime_with_idle_workers_ends_its_threads() {
    let before = threads_now();
    let rts: Vec<Runtime> = (0..8)
        .map(|i| {
            Runtime::builder()
                .threads(3)
                .pool(Pool::ALL[i % 2])
                .build()
                .unwrap()
        })
        .collect();
    // Both kinds have done some work and gone idle.
    for rt in &rts {
        assert_eq!(rt.join(|| 1, || 2), (1, 2));
    }
    std::thread::sleep(std::time::Duration::from_millis(50)); // workers go idle / to sleep
    let during = threads_now();
    assert_eq!(during, before + 24, "8 runtimes (4 per pool) x 3 workers");
    drop(rts);
    let after = threads_now();
    assert!(
        after + 20 <= during,
        "threads left running: {during} -> {after}"
    );
}
