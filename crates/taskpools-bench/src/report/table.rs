//! Text tables in the style of Tables 5, 7 and 8 of Korch & Rauber, "A Comparison of Task Pools
//! for Dynamic Load Balancing of Irregular Algorithms" (2002): per thread count, configurations
//! ranked by median time, the best with its time and the others as a percentage above it.

use std::fmt::Write;

use crate::experiments::synthetic::Record;

/// The comparison table of a synthetic run (first record = sequential baseline).
pub fn synthetic_table(records: &[Record]) -> String {
    let mut s = String::new();
    let Some(seq) = records.first() else {
        return s;
    };
    let mut wakes: Vec<&str> = records[1..].iter().map(|r| r.wake.as_str()).collect();
    wakes.dedup();
    let several_wakes = wakes.len() > 1;
    // Width of the pool column (wider when it also names the wake-up policy).
    let w = if several_wakes { 36 } else { 24 };
    let _ = writeln!(
        s,
        "synthetic algorithm A(i): k = {}, f = {}, P(k) = {} tasks, median of {} (wake-up: {})",
        seq.k,
        seq.f,
        seq.tasks,
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

/// The deque comparison in the layout of Table 3.1 of Papakonstantinou, PARTEE (2015), plus
/// latencies.
pub fn deque_table(
    records: &[crate::experiments::deque::Record],
    ops: usize,
    capacity: usize,
) -> String {
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
         and {ops}/P pops, each of P-1 thieves {ops}/P steals;\nthroughput counts all 2x{ops} operations (failed ones too), \
         median of {} runs; in brackets: share of operations that succeeded\n",
        first.reps
    );
    let _ = write!(s, "{:<26}", "Mops/s");
    for (p, over) in &ps {
        let head = format!("P = {p}{}", if *over { " (oversubscribed)" } else { "" });
        let _ = write!(s, " {head:>28}");
    }
    let _ = writeln!(s, " {:>14}", "vs crossbeam");
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
                let cell = format!(
                    "{:.2} [{:.0} %]",
                    r.median_mops.unwrap_or(f64::NAN),
                    100.0 * r.success.unwrap_or(f64::NAN)
                );
                let _ = write!(s, " {cell:>28}");
                ratios.push(format!("{:.2}", r.vs_crossbeam.unwrap_or(f64::NAN)));
            }
        }
        let _ = writeln!(s, " {:>14}", ratios.join(" / "));
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

/// The Manber measurements: per participant count, the random model over job mixes and the
/// producer/consumer model, each strategy side by side; then Kotz & Ellis's questions answered
/// from these numbers.
pub fn manber_table(records: &[crate::experiments::manber::Record]) -> String {
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
            "Manber's concurrent pool: {n} participants{}, remote delay {delay} ns, waiting mode {}, mean of {} trials\n\
             cells: mean op time ns | removes that stole % | segments examined per steal | elements per steal",
            if over { " (oversubscribed: times include waiting for a CPU)" } else { "" },
            if first.waiting { "on" } else { "off" },
            first.trials
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
            let _ = write!(s, "\n{workload}\n{xname:>9}");
            for sname in &searches {
                let _ = write!(s, " {:>30}", sname);
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
                            let cell = format!(
                                "{} | {} | {} | {}",
                                f(r.op_ns, 0),
                                f(100.0 * r.steal_fraction, 0),
                                f(r.segments_per_steal, 1),
                                f(r.elements_per_steal, 1)
                            );
                            let _ = write!(s, " {cell:>30}");
                        }
                        None => {
                            let _ = write!(s, " {:>30}", "-");
                        }
                    }
                }
                let _ = writeln!(s);
            }
        }
        // Kotz & Ellis's questions, over the steal-heavy points (sparse random mixes below 50 %
        // adds, and every producer/consumer point with at least one producer and one consumer).
        let heavy = |r: &&&crate::experiments::manber::Record| {
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
            let mean = |f: &dyn Fn(&crate::experiments::manber::Record) -> f64| {
                let xs: Vec<f64> = v.iter().map(|r| f(r)).filter(|x| x.is_finite()).collect();
                xs.iter().sum::<f64>() / xs.len().max(1) as f64
            };
            let _ = writeln!(
                s,
                "  {sname:<7} segments per steal {:6.2}   op time {:8.0} ns   remove time {:8.0} ns",
                mean(&|r| r.segments_per_steal),
                mean(&|r| r.op_ns),
                mean(&|r| r.remove_ns)
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

/// The fork-join comparison: per kernel, sequential, ours and rayon per thread count.
pub fn forkjoin_table(records: &[crate::experiments::forkjoin::Record]) -> String {
    let mut s = String::new();
    let Some(first) = records.first() else {
        return s;
    };
    let _ = writeln!(
        s,
        "fork-join kernels: taskpools::forkjoin on each pool vs rayon vs sequential, median of {}\n\
         vs seq = Tseq / T; vs 1 = T(1 thread) / T, same runtime; ns/join at 1 thread = (T1 - Tseq) / joins, with T1 - Tseq\n\
         the median of the differences of back-to-back runs (meaningful for the fine-grained kernels fib and tree-sum, noise\n\
         elsewhere); join/rayon = ns/join / rayon's ns/join, where rayon's joins cost >= Tseq / 10; time/rayon = T / T(rayon), same threads;\n\
         ceiling = that many copies of the sequential kernel at once on plain threads: its vs seq is the speedup the machine allowed;\n\
         calls = joins that only call each half as a function that is not inlined: a reference for a join's cost;\n\
         chili and forte (heartbeat scheduling) run the same kernels with their join's context passed down, as their docs show;\n\
         join/chili and time/chili as join/rayon and time/rayon, where chili's joins cost >= Tseq / 50\n",
        first.reps
    );
    let _ = writeln!(
        s,
        "{:<10} {:<15} {:>7} {:>11} {:>8} {:>7} {:>11} {:>9} {:>11} {:>11} {:>11} {:>11}",
        "kernel",
        "runtime",
        "threads",
        "median",
        "vs seq",
        "vs 1",
        "joins",
        "ns/join",
        "join/rayon",
        "time/rayon",
        "join/chili",
        "time/chili"
    );
    for r in records {
        let _ = writeln!(
            s,
            "{:<10} {:<15} {:>7} {:>9.4} s {:>7.2}x {:>7} {:>11} {:>9} {:>11} {:>11} {:>11} {:>11}",
            r.kernel,
            r.runtime,
            r.threads,
            r.median_s,
            r.speedup_vs_seq,
            r.speedup_vs_1
                .map_or("-".to_string(), |v| format!("{v:.2}x")),
            r.joins,
            r.ns_per_join.map_or("-".to_string(), |v| format!("{v:.2}")),
            r.join_vs_rayon
                .map_or("-".to_string(), |v| format!("{v:.2}")),
            r.vs_rayon.map_or("-".to_string(), |v| format!("{v:.2}")),
            r.join_vs_chili
                .map_or("-".to_string(), |v| format!("{v:.2}")),
            r.vs_chili.map_or("-".to_string(), |v| format!("{v:.2}"))
        );
    }
    s
}

/// The N-Queens table.
pub fn queens_table(records: &[crate::experiments::queens::Record]) -> String {
    let mut s = String::new();
    let Some(first) = records.first() else {
        return s;
    };
    let _ = writeln!(
        s,
        "N-Queens n = {}: {} nodes, median of {}; vs seq = Tseq / T; ns/node at 1 thread = (T1 - Tseq) / nodes,\n\
         the median of the differences of back-to-back runs. task-pool = one task per node (taskpools::Builder, counting\n\
         in per-worker state); `cutoff N` = a task puts a child only while fewer than N tasks are queued on its worker\n\
         (Ctx::queued), else counts the child's subtree with plain calls; scope = a scope per node with a spawn per\n\
         child; join = binary joins over a node's free columns (chili has no scope: join only)\n",
        first.n, first.nodes, first.reps
    );
    let _ = writeln!(
        s,
        "{:<11} {:<24} {:>7} {:>11} {:>8} {:>9}",
        "front end", "pool / runtime", "threads", "median", "vs seq", "ns/node"
    );
    for r in records {
        let _ = writeln!(
            s,
            "{:<11} {:<24} {:>7} {:>9.4} s {:>7.2}x {:>9}",
            r.front_end,
            r.runtime,
            r.threads,
            r.median_s,
            r.speedup_vs_seq,
            r.ns_per_node.map_or("-".to_string(), |v| format!("{v:.2}"))
        );
    }
    s
}

/// The blocked-kernels table.
pub fn blocked_table(records: &[crate::experiments::blocked::Record]) -> String {
    let mut s = String::new();
    let Some(first) = records.first() else {
        return s;
    };
    let _ = writeln!(
        s,
        "blocked kernels, a scope per step (lu: BOTS sparselu; jacobi: 5-point sweeps in blocks), median of {}\n\
         vs seq = Tseq / T (the sequential jacobi is the plain row-by-row loop); T/seq = T / Tseq;\n\
         vs chase-lev = T(chase-lev, same order and threads) / T in the same repetition, median over repetitions,\n\
         rows of our pools; scope_fifo: a worker runs its own\n\
         spawns oldest first\n",
        first.reps
    );
    let _ = writeln!(
        s,
        "{:<7} {:<14} {:<10} {:>7} {:>8} {:>11} {:>8} {:>7} {:>10}",
        "kernel",
        "runtime",
        "order",
        "threads",
        "spawns",
        "median",
        "vs seq",
        "T/seq",
        "vs chase-lev"
    );
    for r in records {
        let _ = writeln!(
            s,
            "{:<7} {:<14} {:<10} {:>7} {:>8} {:>9.4} s {:>7.2}x {:>7.2} {:>10}",
            r.kernel,
            r.runtime,
            r.order,
            r.threads,
            r.spawns,
            r.median_s,
            r.speedup_vs_seq,
            r.time_vs_seq,
            r.speed_vs_chase_lev
                .map_or("-".to_string(), |v| format!("{v:.3}"))
        );
    }
    s
}

/// The `dataflow` experiment's table.
pub fn dataflow_table(records: &[crate::experiments::dataflow::Record], openmp: bool) -> String {
    let mut s = String::new();
    let Some(first) = records.first() else {
        return s;
    };
    let _ = writeln!(
        s,
        "data-flow task graphs, {} tasks, median of {} (ns per task = time / tasks, spawning included)\n\
         acc = declared accesses per task; preds = direct predecessors per task; vs omp = ns / ns of\n\
         openmp depend (same graph, threads); b64 / b2048 = block mode with 64 / 2048-byte blocks, exact = exact\n\
         mode; rows = a sync (taskwait) after each row of independent tasks instead of dependences{}\n",
        first.tasks,
        first.reps,
        if openmp {
            ""
        } else {
            "\nOpenMP: not available in this build (no C compiler with -fopenmp)"
        }
    );
    let _ = writeln!(
        s,
        "{:<12} {:>3} {:>6} {:<15} {:>7} {:>11} {:>8}",
        "graph", "acc", "preds", "variant", "threads", "ns/task", "vs omp"
    );
    for r in records {
        let _ = writeln!(
            s,
            "{:<12} {:>3} {:>6.2} {:<15} {:>7} {:>11} {:>8}",
            r.graph,
            r.accesses,
            r.preds_per_task,
            r.variant,
            r.threads,
            r.ns_per_task
                .map_or("n/a".to_string(), |v| format!("{v:.1}")),
            r.vs_openmp_depend
                .map_or("-".to_string(), |v| format!("{v:.3}"))
        );
    }
    s
}

/// The `suite` experiment's table (PARTEE's Table 4.1, with speedups): per benchmark, one
/// row per variant, per thread count the time, the speedup over sequential and the time
/// relative to the OpenMP variant.
pub fn suite_table(records: &[crate::experiments::suite::Record], openmp: bool) -> String {
    let mut s = String::new();
    let Some(first) = records.first() else {
        return s;
    };
    let _ = writeln!(
        s,
        "application suite: milliseconds (geometric mean of {}), speedup = sequential / time,\n\
         vs omp = time / time of the OpenMP variant at the same threads (below 1: faster);\n\
         nd = the same tasks with a sync after each phase or level instead of dependences;\n\
         every result equals the sequential one bit for bit{}",
        first.reps,
        if openmp {
            ""
        } else {
            "\nOpenMP: not available in this build (no C compiler with -fopenmp)"
        }
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
        let _ = write!(s, "{:<15}", "variant");
        for t in &threads {
            let _ = write!(
                s,
                " {:>10} {:>7} {:>6}",
                format!("ms x{t}"),
                "speedup",
                "vs omp"
            );
        }
        let _ = writeln!(s);
        let mut variants: Vec<&str> = Vec::new();
        for r in &rows {
            if !variants.contains(&r.variant.as_str()) {
                variants.push(&r.variant);
            }
        }
        for v in variants {
            let _ = write!(s, "{v:<15}");
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
                    r.and_then(|r| r.vs_openmp)
                        .map_or("-".into(), |x| format!("{x:.2}")),
                );
                if v == "sequential" {
                    break;
                }
            }
            let _ = writeln!(s);
        }
    }
    s
}

/// The places table: the locality variants, the deque-sharing claim and the policies.
pub fn places_table(
    records: &[crate::experiments::places::Record],
    p: &crate::experiments::places::Params,
) -> anyhow::Result<String> {
    let mut s = String::new();
    let places = taskpools::places::Places::parse(&p.places)?;
    let one_core_each = (0..places.len()).all(|q| {
        let c = places.cores(q);
        c.len() == 1 && c[0].is_some()
    });
    let _ = writeln!(
        s,
        "Places {} ({} places, {} workers){}. Medians of {} interleaved repetitions.\n\
         local / remote = tasks taken from the worker's own place / from another place; steals = steals between\n\
         places; declined = steal attempts that left another place's hinted tasks alone (guarded policy), not tasks.\n\
         Sums over the workers, per run.{}",
        places,
        places.len(),
        places.workers(),
        if one_core_each {
            ": on this machine each place is one core"
        } else {
            ""
        },
        p.reps,
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
