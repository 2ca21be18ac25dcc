//! The text table of `taskpools places`.

use std::fmt::Write;

/// The places table: the locality variants, the deque-sharing claim and the policies.
pub fn places_table(records: &[super::Record], p: &super::Params) -> anyhow::Result<String> {
    let mut s = String::new();
    let places = taskpools::places::Places::parse(&p.places)?;
    let one_core_each = (0..places.len()).all(|q| {
        let c = places.cores(q);
        c.len() == 1 && c[0].is_some()
    });
    let _ = writeln!(
        s,
        "Places {} ({}, {}){}. Medians of {} interleaved {}.\n\
         local / remote = tasks taken from the worker's own place / from another place; steals = steals between\n\
         places; declined = steal attempts that left another place's hinted tasks alone (guarded policy), not tasks.\n\
         Sums over the workers, per run.{}",
        places,
        crate::report::plural(places.len(), "place", "places"),
        crate::report::plural(places.workers(), "worker", "workers"),
        if one_core_each {
            ": on this machine each place is one core"
        } else {
            ""
        },
        p.reps,
        if p.reps == 1 { "repetition" } else { "repetitions" },
        if p.trace.is_some() {
            "\nWith --trace our runtimes record a schedule trace in every run: these times include its cost."
        } else {
            ""
        }
    );
    let mut section = "";
    let mut bench = String::new();
    for r in records {
        if r.section != section {
            section = match r.section.as_str() {
                "locality" => "locality",
                "claims" => "claims",
                "phase" => "phase",
                _ => "policies",
            };
            let title = match section {
                "locality" => "\n== Locality variants (vs = time / best locality on places)",
                "claims" => "\n== A shared deque per place vs one per worker, locality-ignorant programs (vs = time / no places)",
                "phase" => "\n== Cache Stress as a working phase, leaves put with hints (Ctx::put_at) (vs = time / best locality;\n   local / remote = hinted leaves that ran at / away from their place)",
                _ => "\n== LASSI's future work (Weibel, 2010): steal policies (vs = time / default policy); cpu = the runtime's workers' CPU time / wall time",
            };
            let _ = writeln!(s, "{title}");
            let _ = writeln!(
                s,
                "{:<13} {:<36} {:<9} {:>10} {:>6} {:>8} {:>8} {:>7} {:>8} {:>5}",
                "benchmark",
                "runtime",
                "locality",
                "median",
                "vs",
                "local",
                "remote",
                "steals",
                "declined",
                "cpu"
            );
            bench.clear();
        }
        if r.bench != bench && !bench.is_empty() {
            let _ = writeln!(s);
        }
        bench = r.bench.clone();
        let _ = writeln!(
            s,
            "{:<13} {:<36} {:<9} {:>7.1} ms {:>6.3} {:>8} {:>8} {:>7} {:>8} {:>5}",
            r.bench,
            r.config,
            r.locality,
            r.median_ms,
            r.vs_ref,
            r.local_tasks,
            r.remote_tasks,
            r.place_steals,
            r.declined,
            if r.cpu_per_wall.is_nan() {
                "-".to_string()
            } else {
                format!("{:.2}", r.cpu_per_wall)
            }
        );
    }
    let _ = writeln!(s);
    Ok(s)
}
