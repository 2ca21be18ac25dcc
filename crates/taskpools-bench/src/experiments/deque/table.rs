//! The text table of `taskpools deque`.

use std::fmt::Write;

/// The deque comparison in the layout of Table 3.1 of Papakonstantinou, PARTEE (2015), plus
/// latencies.
pub fn deque_table(records: &[super::Record], ops: usize, capacity: usize) -> String {
    let mut s = String::new();
    let tp: Vec<_> = records
        .iter()
        .filter(|r| r.experiment == "deque-throughput")
        .collect();
    let lat: Vec<_> = records
        .iter()
        .filter(|r| r.experiment == "deque-latency")
        .collect();
    let Some(first) = tp.first() else {
        return s;
    };
    let mut ps: Vec<(usize, bool)> = tp.iter().map(|r| (r.threads, r.oversubscribed)).collect();
    ps.sort_unstable();
    ps.dedup();
    let _ = writeln!(
        s,
        "deque micro-benchmark (Papakonstantinou, PARTEE (2015), Table 3.1): one deque of capacity {capacity}; the owner does {ops} pushes \
         and {ops}/P pops, each of P-1 thieves {ops}/P steals;\n\"all\" counts all 2x{ops} operations (failed ones too) per second, \
         \"successful\" only those that succeeded (a failed steal is no progress), with the range over the runs; median of {}; \
         in brackets: share of operations that succeeded\n",
        crate::report::plural(first.reps, "run", "runs")
    );
    let _ = write!(s, "{:<26}", "Mops/s");
    for (p, over) in &ps {
        let head = format!(
            "P = {p}{}: all",
            if *over { " (oversubscribed)" } else { "" }
        );
        let _ = write!(s, " {head:>32} {:>26}", "successful");
    }
    let _ = writeln!(s, "   vs crossbeam: all / successful");
    let mut names: Vec<&str> = Vec::new();
    for r in &tp {
        if !names.contains(&r.deque.as_str()) {
            names.push(&r.deque);
        }
    }
    for name in &names {
        let _ = write!(s, "{name:<26}");
        let mut ratios = Vec::new();
        for (p, _) in &ps {
            if let Some(r) = tp.iter().find(|r| r.deque == *name && r.threads == *p) {
                let all = format!(
                    "{:.2} [{:.0} %]",
                    r.median_mops.unwrap_or(f64::NAN),
                    100.0 * r.success.unwrap_or(f64::NAN)
                );
                let ok = format!(
                    "{:.2} ({:.0}-{:.0})",
                    r.median_success_mops.unwrap_or(f64::NAN),
                    r.min_success_mops.unwrap_or(f64::NAN),
                    r.max_success_mops.unwrap_or(f64::NAN)
                );
                let _ = write!(s, " {all:>32} {ok:>26}");
                ratios.push(format!(
                    "{:.2} / {:.2}",
                    r.vs_crossbeam.unwrap_or(f64::NAN),
                    r.vs_crossbeam_success.unwrap_or(f64::NAN)
                ));
            }
        }
        let _ = writeln!(s, "   {}", ratios.join(", "));
    }
    let _ = writeln!(
        s,
        "\nsingle thread, no contention (median of {}):\n{:<26} {:>14} {:>10}",
        first.reps, "", "push+pop ns", "steal ns"
    );
    for r in &lat {
        let _ = writeln!(
            s,
            "{:<26} {:>14.2} {:>10.2}",
            r.deque,
            r.push_pop_ns.unwrap_or(f64::NAN),
            r.steal_ns.unwrap_or(f64::NAN)
        );
    }
    s
}
