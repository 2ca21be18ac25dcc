//! The text table of `taskpools suite`.

use std::fmt::Write;

/// The `suite` experiment's table (PARTEE's Table 4.1, with speedups): per benchmark, one
/// row per variant, per thread count the time, the speedup over sequential and the time
/// relative to the fastest other runtime; then a line per peer runtime that this build lacks.
pub fn suite_table(records: &[super::Record]) -> String {
    let mut s = String::new();
    let Some(first) = records.first() else {
        return s;
    };
    let _ = writeln!(
        s,
        "application suite: milliseconds (geometric mean of {}), speedup = sequential / time,\n\
         vs best = time / time of the fastest other runtime (rayon, libgomp, libomp, StarPU)\n\
         at the same threads (below 1: faster); nd = the same tasks with a sync after each phase or\n\
         level instead of dependences; every result equals the sequential one bit for bit",
        first.reps,
    );
    let mut threads: Vec<usize> = records
        .iter()
        .filter(|r| r.variant != "sequential")
        .map(|r| r.threads)
        .collect();
    threads.sort_unstable();
    threads.dedup();
    let mut benches: Vec<&str> = Vec::new();
    for r in records {
        if !benches.contains(&r.bench.as_str()) {
            benches.push(&r.bench);
        }
    }
    for b in benches {
        let rows: Vec<_> = records.iter().filter(|r| r.bench == b).collect();
        let _ = writeln!(s, "\n{b} ({})", rows[0].setup);
        let mut variants: Vec<&str> = Vec::new();
        for r in &rows {
            if !variants.contains(&r.variant.as_str()) {
                variants.push(&r.variant);
            }
        }
        let w = variants.iter().map(|v| v.len()).max().unwrap_or(0).max(15);
        let _ = write!(s, "{:<w$}", "variant");
        for t in &threads {
            let _ = write!(
                s,
                " {:>10} {:>7} {:>6}",
                format!("ms x{t}"),
                "speedup",
                "vs best"
            );
        }
        let _ = writeln!(s);
        for v in variants {
            let _ = write!(s, "{v:<w$}");
            for &t in &threads {
                let r = rows
                    .iter()
                    .find(|r| r.variant == v && (r.threads == t || v == "sequential"));
                let ms = r.and_then(|r| r.ms);
                let _ = write!(
                    s,
                    " {:>10} {:>7} {:>6}",
                    match (r, ms) {
                        (Some(_), Some(m)) => format!("{m:.1}"),
                        (Some(_), None) => "n/a".into(),
                        _ => "-".into(),
                    },
                    r.and_then(|r| r.speedup)
                        .map_or("-".into(), |x| format!("{x:.2}")),
                    r.and_then(|r| r.vs_best_peer)
                        .map_or("-".into(), |x| format!("{x:.2}")),
                );
                if v == "sequential" {
                    break;
                }
            }
            let _ = writeln!(s);
        }
    }
    s.push_str(&crate::experiments::drivers::not_built_notes());
    s
}
