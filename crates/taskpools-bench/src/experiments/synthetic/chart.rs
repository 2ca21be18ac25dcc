//! The chart of `taskpools synthetic`: speedup against the sequential algorithm per pool
//! configuration and thread count.

use std::path::Path;

use anyhow::Result;

use super::Record;
use crate::report::bar_chart;

/// The x-axis label of a record: alias, memory manager if any, wake-up policy if not default.
fn label(r: &Record) -> String {
    let mut l = r.alias.clone();
    if r.mem != "-" {
        l = format!("{l}/{}", r.mem);
    }
    if r.wake != "on-empty" {
        l = format!("{l}/{}", r.wake);
    }
    l
}

/// Speedup against the sequential algorithm per configuration (x) and thread count (colour).
pub fn speedup_chart(path: &Path, title: &str, records: &[Record]) -> Result<()> {
    let rows = &records[1..];
    let mut labels: Vec<String> = Vec::new();
    for r in rows {
        let l = label(r);
        if !labels.contains(&l) {
            labels.push(l);
        }
    }
    let mut threads: Vec<usize> = rows.iter().map(|r| r.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let series: Vec<(String, Vec<f64>)> = threads
        .iter()
        .map(|&t| {
            let mut v = vec![f64::NAN; labels.len()];
            for r in rows.iter().filter(|r| r.threads == t) {
                let i = labels.iter().position(|x| *x == label(r)).expect("label");
                v[i] = r.speedup_vs_seq;
            }
            (format!("{t} thread{}", if t == 1 { "" } else { "s" }), v)
        })
        .collect();
    bar_chart(
        path,
        title,
        "speedup vs sequential",
        &labels,
        &series,
        Some(1.0),
    )
}
