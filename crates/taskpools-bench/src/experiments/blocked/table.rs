//! The text table of `taskpools blocked`.

use std::fmt::Write;

/// The blocked-kernels table.
pub fn blocked_table(records: &[super::Record]) -> String {
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
