//! The chart of `taskpools radiosity`: speed-up by interaction rate per pool and thread
//! count, with Korch & Rauber's Table 7 figures as their own series.

use std::path::Path;

use anyhow::Result;

use super::run::Record;
use crate::report::{bar_chart, grouped_series};

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
    let plural = |t: usize| if t == 1 { "" } else { "s" };
    // (label, series, value): ours for every row, the paper's where it has one.
    let mut points: Vec<(String, String, f64)> = Vec::new();
    for r in &records[1..] {
        let t = r.threads;
        points.push((label(r), format!("{t} thread{}", plural(t)), r.speedup_rate));
        if let Some(p) = r.paper_speedup {
            let name = format!("Korch & Rauber Table 7, {t} thread{}", plural(t));
            points.push((label(r), name, p));
        }
    }
    let (labels, series) = grouped_series(&points, |p| Some(p.0.clone()), |p| p.1.clone(), |p| p.2);
    bar_chart(
        path,
        title,
        "speed-up by interaction rate",
        &labels,
        &series,
        Some(1.0),
    )
}
