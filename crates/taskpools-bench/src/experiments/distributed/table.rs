//! Rank 0's report of a distributed run: a line per configuration, then the counters per
//! rank.

use super::params::Record;

/// Rank 0's report.
pub fn table(records: &[Record]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<10} {:<20} {:>9} {:>10} {:>9} {:>9} {:>9} {:>12}",
        "workload", "config", "ranks×thr", "median ms", "min", "max", "÷1-proc", "tasks"
    );
    for r in records {
        let _ = writeln!(
            s,
            "{:<10} {:<20} {:>9} {:>10.1} {:>9.1} {:>9.1} {:>9} {:>12}",
            r.workload,
            r.config,
            format!("{}×{}", r.ranks, r.threads_per_rank),
            r.median_ms,
            r.min_ms,
            r.max_ms,
            r.vs_one_process.map_or("-".into(), |v| format!("{v:.2}")),
            r.tasks
        );
    }
    let _ = writeln!(s, "\nper rank (first repetition):");
    let _ = writeln!(
        s,
        "{:<10} {:<20} {:>4} {:>10} {:>8} {:>8} {:>7} {:>7} {:>7} {:>9} {:>9} {:>8}",
        "workload",
        "config",
        "rank",
        "tasks run",
        "sent",
        "recvd",
        "req out",
        "req in",
        "granted",
        "bytes out",
        "bytes in",
        "idle ms"
    );
    for r in records {
        for q in &r.per_rank {
            let _ = writeln!(
                s,
                "{:<10} {:<20} {:>4} {:>10} {:>8} {:>8} {:>7} {:>7} {:>7} {:>9} {:>9} {:>8.1}",
                r.workload,
                r.config,
                q.rank,
                q.tasks_run,
                q.tasks_sent,
                q.tasks_received,
                q.requests_sent,
                q.requests_received,
                q.requests_granted,
                q.bytes_sent,
                q.bytes_received,
                q.idle_ms
            );
        }
    }
    s
}
