//! No thread is started per working phase: after a runtime is built, the process's thread
//! count stays the same through many phases on every pool (Linux: `/proc/self/status`).
//! Alone in its file, so that no other test starts threads meanwhile.
#![cfg(not(loom))]

use taskpools::{Builder, Ctx, PoolKind, Runtime, Task};

struct Node(u32);

/// Per worker: tasks run, and the largest thread count seen from inside a task.
type Seen = (u64, usize);

impl Task<Seen> for Node {
    fn run(self, ctx: &mut Ctx<'_, Self, Seen>) {
        let seen = ctx.local();
        seen.0 += 1;
        if self.0 % 4 == 0 {
            // Counted while the phase runs: a thread started for the phase would show here.
            seen.1 = seen.1.max(os_threads().unwrap_or(0));
        }
        if self.0 > 0 {
            ctx.put(Node(self.0 - 1));
            ctx.put(Node(self.0 - 1));
        }
    }
}

/// The `Threads:` line of `/proc/self/status`, where there is one.
fn os_threads() -> Option<usize> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
}

#[test]
fn phases_on_a_runtime_start_no_threads() {
    let rt = Runtime::new(2).unwrap();
    // Warm: the runtime's workers are running (a broadcast reaches both).
    assert_eq!(rt.broadcast(|c| c.index()), [0, 1]);
    let before = os_threads();
    let mut phases = 0;
    for pool in PoolKind::ALL {
        for _ in 0..10 {
            let (report, counts) = Builder::new()
                .threads(2)
                .pool(pool)
                .runtime(&rt)
                .run_with(|_| (0u64, 0usize), [Node(10)])
                .unwrap();
            assert_eq!(counts.iter().map(|c| c.0).sum::<u64>(), report.tasks_run());
            phases += 1;
            if let Some(b) = before {
                let during = counts.iter().map(|c| c.1).max().unwrap();
                assert_eq!(
                    during, b,
                    "{pool}: the process had {during} threads during phase {phases}, {b} before"
                );
                assert_eq!(os_threads(), Some(b), "{pool}: after phase {phases}");
            }
        }
    }
    if before.is_none() {
        eprintln!("no /proc/self/status here: only the phases themselves were checked");
    }
}
