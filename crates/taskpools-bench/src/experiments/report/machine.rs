//! Where and when a tour ran: `taskpools tour` writes it as `tour.json` beside the
//! experiments' files, and `taskpools report` prints it above the table, so that a figure
//! never travels without its machine and date.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::report::plural;

/// The name of the file in a tour's folder.
pub const TOUR_FILE: &str = "tour.json";

/// The machine and date of one tour.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TourInfo {
    /// When the tour started, UTC, `YYYY-MM-DD HH:MM UTC`.
    pub date: String,
    /// `model name` of `/proc/cpuinfo` (`None` where there is none).
    pub cpu_model: Option<String>,
    /// Physical cores: distinct (`physical id`, `core id`) pairs of `/proc/cpuinfo`
    /// (`None` where it does not say).
    pub cores: Option<usize>,
    /// Logical CPUs of the machine (`processor` entries of `/proc/cpuinfo`, else what the
    /// standard library reports).
    pub cpus: usize,
    /// The CPUs this process was allowed to run on (its affinity mask): what the experiments
    /// pin their workers to.
    pub usable_cpus: usize,
    /// Operating system and architecture.
    pub os: String,
    /// The `taskpools` workbench's version.
    pub version: String,
    /// How long the tour ran, seconds (`None` until it finished).
    pub seconds: Option<f64>,
    /// The machine's load (the 1-minute average of `/proc/loadavg`) when the tour started
    /// and when it ended: on a shared machine, how much else ran beside it.
    pub load: (Option<f64>, Option<f64>),
}

impl TourInfo {
    /// This machine, now.
    pub fn now() -> TourInfo {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let (cpu_model, cores, processors) = parse_cpuinfo(&cpuinfo);
        let std_cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        TourInfo {
            date: utc_date(secs),
            cpu_model,
            cores,
            cpus: processors.unwrap_or(std_cpus),
            usable_cpus: crate::experiments::pinning::cores().map_or(std_cpus, <[_]>::len),
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
            version: env!("CARGO_PKG_VERSION").to_string(),
            seconds: None,
            load: (load_now(), None),
        }
    }

    /// The tour has finished after `seconds`: its duration and the load at the end.
    pub fn finish(&mut self, seconds: f64) {
        self.seconds = Some((seconds * 10.0).round() / 10.0);
        self.load.1 = load_now();
    }

    /// Writes it as pretty JSON.
    pub fn write(&self, path: &Path) -> Result<()> {
        let s = serde_json::to_string_pretty(self)? + "\n";
        std::fs::write(path, s).with_context(|| format!("writing {}", path.display()))
    }

    /// One line for a report: `Intel(R) Xeon(R) … (2 cores, 2 logical CPUs, 2 usable), linux
    /// x86_64, 2026-11-28 00:10 UTC`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = self.cores {
            parts.push(plural(c, "core", "cores"));
        }
        parts.push(plural(self.cpus, "logical CPU", "logical CPUs"));
        if self.usable_cpus != self.cpus {
            parts.push(format!("{} usable", self.usable_cpus));
        }
        let load = match self.load {
            (Some(a), Some(b)) => format!(", load average {a:.1} at the start, {b:.1} at the end"),
            (Some(a), None) => format!(", load average {a:.1} at the start"),
            _ => String::new(),
        };
        format!(
            "{} ({}), {}, {}{load}",
            self.cpu_model.as_deref().unwrap_or("unknown CPU"),
            parts.join(", "),
            self.os,
            self.date
        )
    }
}

/// The 1-minute load average of `/proc/loadavg` (`None` where there is none).
fn load_now() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The CPU model, the physical cores and the logical CPUs that `/proc/cpuinfo` lists.
fn parse_cpuinfo(text: &str) -> (Option<String>, Option<usize>, Option<usize>) {
    let mut model = None;
    let mut processors = 0;
    let mut pairs = std::collections::BTreeSet::new();
    let mut physical: Option<String> = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "processor" => processors += 1,
            "model name" if model.is_none() => model = Some(value.to_string()),
            "physical id" => physical = Some(value.to_string()),
            "core id" => {
                pairs.insert((physical.clone().unwrap_or_default(), value.to_string()));
            }
            _ => {}
        }
    }
    (
        model,
        (!pairs.is_empty()).then_some(pairs.len()),
        (processors > 0).then_some(processors),
    )
}

/// `secs` after the Unix epoch as `YYYY-MM-DD HH:MM UTC` (the proleptic Gregorian calendar,
/// after Howard Hinnant's `civil_from_days`).
fn utc_date(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let (h, m) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{d:02} {h:02}:{m:02} UTC")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(utc_date(0), "1970-01-01 00:00 UTC");
        // 2000-02-29 12:34 UTC (a leap day in a year divisible by 400).
        assert_eq!(utc_date(951_827_640), "2000-02-29 12:34 UTC");
        // 2026-11-28 00:00 UTC.
        assert_eq!(utc_date(1_795_824_000), "2026-11-28 00:00 UTC");
    }

    #[test]
    fn cpuinfo() {
        let text = "processor\t: 0\nmodel name\t: Example CPU\nphysical id\t: 0\ncore id\t: 0\n\n\
                    processor\t: 1\nmodel name\t: Example CPU\nphysical id\t: 0\ncore id\t: 0\n\n\
                    processor\t: 2\nmodel name\t: Example CPU\nphysical id\t: 0\ncore id\t: 1\n";
        assert_eq!(
            parse_cpuinfo(text),
            (Some("Example CPU".into()), Some(2), Some(3))
        );
        assert_eq!(parse_cpuinfo(""), (None, None, None));
    }
}
