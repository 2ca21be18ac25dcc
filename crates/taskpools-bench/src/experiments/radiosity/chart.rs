//! The chart of `taskpools radiosity`: speed-up by interaction rate per pool and thread
//! count, with Korch & Rauber's Table 7 figures as their own series.

use std::path::Path;

use anyhow::Result;

use super::run::Record;
use crate::report::bar_chart;

fn label(r: &Record) -> String {
    if r.mem == "-" {
        r.alias.clone()
    } else {
        format!("{}/{}", r.alias, r.mem)
    }
}

/// Speed-up by interaction rate (y) per configuration (x), one series per thread count, and
/// the paper's figure per thread count where it has the pool.
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
    let plural = |t: usize| if t == 1 { "" } else { "s" };
    let mut series: Vec<(String, Vec<f64>)> = Vec::new();
    for &t in &threads {
        let mut ours = vec![f64::NAN; labels.len()];
        let mut paper = vec![f64::NAN; labels.len()];
        for r in rows.iter().filter(|r| r.threads == t) {
            let i = labels.iter().position(|x| *x == label(r)).expect("label");
            ours[i] = r.speedup_rate;
            paper[i] = r.paper_speedup.unwrap_or(f64::NAN);
        }
        series.push((format!("{t} thread{}", plural(t)), ours));
        if paper.iter().any(|v| v.is_finite()) {
            series.push((
                format!("Korch & Rauber Table 7, {t} thread{}", plural(t)),
                paper,
            ));
        }
    }
    bar_chart(
        path,
        title,
        "speed-up by interaction rate",
        &labels,
        &series,
        Some(1.0),
    )
}
