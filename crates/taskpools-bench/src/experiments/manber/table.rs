//! The text table of `taskpools manber`.

use std::fmt::Write;

/// The width of one column of a search's group.
const COL: usize = 9;
/// The width of a search's group: four columns and the spaces between them.
const GROUP: usize = 4 * COL + 3;

/// The Manber measurements: per participant count, the random model over job mixes and the
/// producer/consumer model, each strategy side by side; then Kotz & Ellis's questions answered
/// from these numbers.
pub fn manber_table(records: &[super::Record]) -> String {
    let mut s = String::new();
    let mut keys: Vec<(usize, u64, bool)> = records
        .iter()
        .map(|r| (r.participants, r.delay_ns, r.oversubscribed))
        .collect();
    keys.dedup();
    let mut searches: Vec<&str> = Vec::new();
    for r in records {
        if !searches.contains(&r.search.as_str()) {
            searches.push(&r.search);
        }
    }
    for (n, delay, over) in keys {
        let rows: Vec<_> = records
            .iter()
            .filter(|r| r.participants == n && r.delay_ns == delay)
            .collect();
        let Some(first) = rows.first() else { continue };
        let _ = writeln!(
            s,
            "Manber's concurrent pool: {}{}, remote delay {delay} ns, waiting mode {}, mean of {}\n\
             per search: op ns = mean operation time (ns), stole % = removes that stole, \
             seg/steal = segments examined per steal, el/steal = elements per steal",
            crate::report::plural(n, "participant", "participants"),
            if over { " (oversubscribed: times include waiting for a CPU)" } else { "" },
            if first.waiting { "on" } else { "off" },
            crate::report::plural(first.trials, "trial", "trials")
        );
        for workload in ["random", "producers-contiguous", "producers-balanced"] {
            let w: Vec<_> = rows.iter().filter(|r| r.workload == workload).collect();
            if w.is_empty() {
                continue;
            }
            let xname = if workload == "random" {
                "adds %"
            } else {
                "producers"
            };
            // A group of four right-aligned columns per search, so that the columns stay
            // aligned whatever the widths of the numbers.
            let _ = write!(s, "\n{workload}\n{:>9}", "");
            for sname in &searches {
                let _ = write!(s, " | {sname:<W$}", W = GROUP);
            }
            let _ = write!(s, "\n{xname:>9}");
            for _ in &searches {
                let _ = write!(
                    s,
                    " | {:>C$} {:>C$} {:>C$} {:>C$}",
                    "op ns",
                    "stole %",
                    "seg/steal",
                    "el/steal",
                    C = COL
                );
            }
            let _ = writeln!(s);
            let mut xs: Vec<u32> = w.iter().map(|r| r.x).collect();
            xs.sort_unstable();
            xs.dedup();
            for x in xs {
                let _ = write!(s, "{x:>9}");
                for sname in &searches {
                    match w.iter().find(|r| r.x == x && r.search == *sname) {
                        Some(r) => {
                            let f = |v: f64, d: usize| {
                                if v.is_finite() {
                                    format!("{v:.d$}")
                                } else {
                                    "-".to_string()
                                }
                            };
                            let _ = write!(
                                s,
                                " | {:>C$} {:>C$} {:>C$} {:>C$}",
                                f(r.op_ns, 0),
                                f(100.0 * r.steal_fraction, 0),
                                f(r.segments_per_steal, 1),
                                f(r.elements_per_steal, 1),
                                C = COL
                            );
                        }
                        None => {
                            let _ = write!(s, " | {:>W$}", "-", W = GROUP);
                        }
                    }
                }
                let _ = writeln!(s);
            }
        }
        // Kotz & Ellis's questions, over the steal-heavy points (sparse random mixes below 50 %
        // adds, and every producer/consumer point with at least one producer and one consumer).
        let heavy = |r: &&&super::Record| {
            let random = r.workload == "random";
            r.x > 0 && if random { r.x < 50 } else { (r.x as usize) < n }
        };
        let _ = writeln!(s, "\nsummary over the steal-heavy points (random < 50 % adds; producer/consumer with 0 < producers < {n}):");
        for sname in &searches {
            let v: Vec<_> = rows
                .iter()
                .filter(|r| r.search == *sname)
                .filter(heavy)
                .collect();
            // The mean over the points that have the figure, with `d` decimals; `-` where
            // none has (one participant: no point is steal-heavy).
            let mean = |f: &dyn Fn(&super::Record) -> f64, d: usize| {
                let xs: Vec<f64> = v.iter().map(|r| f(r)).filter(|x| x.is_finite()).collect();
                if xs.is_empty() {
                    "-".to_string()
                } else {
                    format!("{:.d$}", xs.iter().sum::<f64>() / xs.len() as f64)
                }
            };
            let _ = writeln!(
                s,
                "  {sname:<7} segments per steal {:>6}   op time {:>8} ns   remove time {:>8} ns",
                mean(&|r| r.segments_per_steal, 2),
                mean(&|r| r.op_ns, 0),
                mean(&|r| r.remove_ns, 0)
            );
        }
        for sname in &searches {
            let pc = |w: &str| {
                let mixed: Vec<f64> = rows
                    .iter()
                    .filter(|r| {
                        r.search == *sname && r.workload == w && r.x > 0 && (r.x as usize) < n
                    })
                    .map(|r| r.elements_per_steal)
                    .collect();
                let xs: Vec<f64> = mixed.iter().copied().filter(|x| x.is_finite()).collect();
                if mixed.is_empty() {
                    None
                } else if xs.is_empty() {
                    Some("- (no steals)".to_string())
                } else {
                    Some(format!("{:6.2}", xs.iter().sum::<f64>() / xs.len() as f64))
                }
            };
            match (pc("producers-contiguous"), pc("producers-balanced")) {
                // E.g. 2 participants with a producer step of 2: 0 or 2 producers, so
                // everyone adds or everyone removes, and nobody steals.
                (None, None) => {
                    let _ = writeln!(
                        s,
                        "  {sname:<7} elements per steal: no point has both producers and \
                         consumers (a finer --producer-step gives some)"
                    );
                }
                (c, b) => {
                    let none = || "-".to_string();
                    let _ = writeln!(
                        s,
                        "  {sname:<7} elements per steal: contiguous producers {}, balanced producers {}",
                        c.unwrap_or_else(none),
                        b.unwrap_or_else(none)
                    );
                }
            }
        }
        let _ = writeln!(s);
    }
    s
}
