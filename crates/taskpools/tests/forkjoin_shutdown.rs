//! Shutting a runtime down ends its threads: `shutdown_and_wait` before it returns, a drop
//! (which only signals) soon after. In its own test binary, so that no other test creates or
//! ends threads while it counts them.
//! Linux only: the threads are counted in `/proc/self/status`.
#![cfg(all(not(loom), target_os = "linux"))]

use taskpools::forkjoin::{Pool, Runtime};

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

fn idle_runtimes(n: usize) -> Vec<Runtime> {
    let rts: Vec<Runtime> = (0..n)
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
    rts
}

#[test]
fn shutting_down_a_runtime_with_idle_workers_ends_its_threads() {
    let before = threads_now();
    let rts = idle_runtimes(8);
    let during = threads_now();
    assert_eq!(during, before + 24, "8 runtimes (4 per pool) x 3 workers");
    for rt in rts {
        rt.shutdown_and_wait().unwrap();
    }
    let after = threads_now();
    assert_eq!(after, before, "threads left running: {during} -> {after}");

    // A drop only signals: the threads end soon after, on their own.
    let rts = idle_runtimes(8);
    let during = threads_now();
    drop(rts);
    let t0 = std::time::Instant::now();
    while threads_now() > before && t0.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let after = threads_now();
    assert_eq!(
        after, before,
        "threads left running after a drop: {during} -> {after}"
    );
}
