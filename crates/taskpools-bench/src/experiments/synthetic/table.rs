//! The text table of `taskpools synthetic`, in the style of Tables 5, 7 and 8 of Korch & Rauber,
//! "A Comparison of Task Pools for Dynamic Load Balancing of Irregular Algorithms" (2002): per
//! thread count, configurations ranked by median time, the best with its time and the others as a
//! percentage above it.

use super::Record;
use std::fmt::Write;

/// The comparison table of a synthetic run (first record = sequential baseline).
pub fn synthetic_table(records: &[Record]) -> String {
    let mut s = String::new();
    let Some(seq) = records.first() else {
        return s;
    };
    let mut wakes: Vec<&str> = records[1..].iter().map(|r| r.wake.as_str()).collect();
    wakes.dedup();
    let several_wakes = wakes.len() > 1;
    // Width of the pool column (wider when it also names the wake-up policy), and never
    // narrower than the longest pool name (`steal-opposite-end-node-locks`: 29).
    let longest = records[1..].iter().map(|r| r.pool.len()).max().unwrap_or(0);
    let w = (if several_wakes { 36 } else { 24 }).max(longest + if several_wakes { 13 } else { 1 });
    let _ = writeln!(
        s,
        "synthetic algorithm A(i): k = {}, f = {}, P(k) = {}, median of {} (wake-up: {})",
        seq.k,
        seq.f,
        crate::report::plural(seq.tasks, "task", "tasks"),
        seq.reps,
        if several_wakes {
            "see column".to_string()
        } else {
            wakes.first().unwrap_or(&"-").to_string()
        }
    );
    let _ = writeln!(
        s,
        "sequential algorithm (no pool): {:.4} s  ({:.1} ns/task)\n",
        seq.median_s, seq.ns_per_task
    );
    let mut threads: Vec<usize> = records[1..].iter().map(|r| r.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    for t in threads {
        let mut rows: Vec<&Record> = records[1..].iter().filter(|r| r.threads == t).collect();
        rows.sort_by(|a, b| a.median_s.total_cmp(&b.median_s));
        let best = rows[0].median_s;
        let _ = writeln!(s, "{t} thread{}:", if t == 1 { "" } else { "s" });
        let _ = writeln!(
            s,
            "{:>4}  {:<w$} {:<6} {:<6} {:>10} {:>9} {:>9} {:>10} {:>12} {:>10}",
            "rank",
            "pool",
            "alias",
            "mem",
            "median",
            "vs best",
            "speedup",
            "Mtasks/s",
            "CPU-ns/task",
            "steals"
        );
        for (i, r) in rows.iter().enumerate() {
            let vs = if i == 0 {
                "best".to_string()
            } else {
                format!("+{:.1} %", (r.median_s / best - 1.0) * 100.0)
            };
            let mut pool = if several_wakes {
                format!("{} [{}]", r.pool, r.wake)
            } else {
                r.pool.clone()
            };
            if r.search != "-" {
                pool = format!("{pool} ({})", r.search);
            }
            let _ = writeln!(
                s,
                "{:>4}  {:<w$} {:<6} {:<6} {:>8.4} s {:>9} {:>8.2}x {:>10.2} {:>12.1} {:>10}",
                i + 1,
                pool,
                r.alias,
                r.mem,
                r.median_s,
                vs,
                r.speedup_vs_seq,
                r.tasks_per_s / 1e6,
                r.ns_per_task,
                r.steals
            );
        }
        let _ = writeln!(s);
    }
    s
}
