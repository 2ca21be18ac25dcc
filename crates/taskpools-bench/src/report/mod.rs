//! Output that every experiment shares: JSON/CSV files, SVG charts, schedule traces and the
//! progress bar. Each experiment's own table (and chart, where it has its own) lives with the
//! experiment, so this module knows no experiment.

mod plot;
pub mod trace;

pub use plot::{bar_chart, bar_chart_log, line_chart, loglog_speedup};

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

/// A progress bar on stderr that appears only once the work has run for a second, and never
/// when disabled (e.g. `--json -`, where stdout carries the data).
pub struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
    shown: std::cell::Cell<bool>,
}

impl Progress {
    /// A bar; `enabled = false` gives one that draws nothing.
    pub fn new(enabled: bool) -> Self {
        let bar = enabled.then(|| {
            let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
            b.set_style(
                ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
                    .expect("template")
                    .progress_chars("=> "),
            );
            b
        });
        Progress {
            bar,
            start: Instant::now(),
            shown: std::cell::Cell::new(false),
        }
    }

    fn maybe_show(&self) {
        if let Some(b) = &self.bar {
            if !self.shown.get() && self.start.elapsed() > Duration::from_secs(1) {
                b.set_draw_target(ProgressDrawTarget::stderr());
                self.shown.set(true);
            }
        }
    }

    /// Sets the number of steps.
    pub fn set_length(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.set_length(n);
            b.set_position(0);
        }
    }

    /// Describes the current step.
    pub fn set_message(&self, m: String) {
        self.maybe_show();
        if let Some(b) = &self.bar {
            b.set_message(m);
        }
    }

    /// One step done.
    pub fn inc(&self) {
        self.maybe_show();
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// A count with its noun in agreement: `plural(1, "thread", "threads")` is `1 thread`,
/// `plural(2, …)` is `2 threads`.
pub fn plural<N: std::fmt::Display + PartialEq + From<u8>>(n: N, one: &str, many: &str) -> String {
    let word = if n == N::from(1) { one } else { many };
    format!("{n} {word}")
}

/// Writes `records` as pretty JSON to `path` (`-` = stdout).
pub fn write_json<T: Serialize>(path: &Path, records: &[T]) -> Result<()> {
    let s = serde_json::to_string_pretty(records)?;
    if path == Path::new("-") {
        println!("{s}");
    } else {
        fs::write(path, s + "\n").with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Writes `records` as CSV to `path`.
pub fn write_csv<T: Serialize>(path: &Path, records: &[T]) -> Result<()> {
    let mut w =
        csv::Writer::from_path(path).with_context(|| format!("writing {}", path.display()))?;
    for r in records {
        w.serialize(r)?;
    }
    w.flush()?;
    Ok(())
}

/// Bar-chart data from records: the labels (x groups) and series names in the order they
/// first appear, and per series one value per label (`NaN` where no record has both).
/// Records whose `label` is `None` (a sequential baseline, say) are left out.
pub fn grouped_series<R>(
    records: &[R],
    label: impl Fn(&R) -> Option<String>,
    name: impl Fn(&R) -> String,
    value: impl Fn(&R) -> f64,
) -> (Vec<String>, Vec<(String, Vec<f64>)>) {
    let mut labels: Vec<String> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for r in records {
        if let Some(l) = label(r) {
            if !labels.contains(&l) {
                labels.push(l);
            }
            let n = name(r);
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    let series = names
        .iter()
        .map(|n| {
            let v = labels
                .iter()
                .map(|l| {
                    records
                        .iter()
                        .find(|r| label(r).as_ref() == Some(l) && name(r) == *n)
                        .map_or(f64::NAN, &value)
                })
                .collect();
            (n.clone(), v)
        })
        .collect();
    (labels, series)
}

#[cfg(test)]
mod tests {
    #[test]
    fn plural_agrees_with_its_count() {
        assert_eq!(super::plural(1usize, "thread", "threads"), "1 thread");
        assert_eq!(super::plural(2usize, "thread", "threads"), "2 threads");
        assert_eq!(super::plural(0u64, "event", "events"), "0 events");
    }
}
