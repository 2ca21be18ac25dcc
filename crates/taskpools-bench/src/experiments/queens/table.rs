//! The text table of `taskpools queens`.

use std::fmt::Write;

/// The N-Queens table.
pub fn queens_table(records: &[super::Record]) -> String {
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
         child; join = binary joins over a node's free columns (chili has no scope: join only); scope-cutoff = a\n\
         scope per node in the first {} rows, the sequential recursion below; tbb task_group = oneTBB, a program of its\n\
         own (a process per run); a cost below zero (the run with tasks was the faster: noise) prints as -\n",
        first.n, first.nodes, first.reps, super::CUTOFF_DEPTH
    );
    let _ = writeln!(
        s,
        "{:<12} {:<24} {:>7} {:>11} {:>8} {:>9}",
        "front end", "pool / runtime", "threads", "median", "vs seq", "ns/node"
    );
    for r in records {
        let _ = writeln!(
            s,
            "{:<12} {:<24} {:>7} {:>9.4} s {:>7.2}x {:>9}",
            r.front_end,
            r.runtime,
            r.threads,
            r.median_s,
            r.speedup_vs_seq,
            crate::experiments::forkjoin::cost(r.ns_per_node)
        );
    }
    if !super::tbb_built() {
        let _ = writeln!(
            s,
            "\ntbb: not built here (apt-get install libtbb-dev, then `cargo clean -p taskpools-bench` and rebuild)"
        );
    }
    s
}
