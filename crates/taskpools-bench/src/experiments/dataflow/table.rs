//! The text table of `taskpools dataflow`.

use std::fmt::Write;

/// The `dataflow` experiment's table.
pub fn dataflow_table(records: &[super::Record]) -> String {
    let mut s = String::new();
    let Some(first) = records.first() else {
        return s;
    };
    let _ = writeln!(
        s,
        "data-flow task graphs, {}, median of {} (ns per task = time / tasks, spawning included)\n\
         acc = declared accesses per task; preds = direct predecessors per task; vs dep = ns / ns of\n\
         the fastest peer's depend row (libgomp, libomp, StarPU; same graph, threads); b64 / b2048 = block mode\n\
         with 64 / 2048-byte blocks, exact = exact mode; rows = a sync (taskwait) after each row of\n\
         independent tasks instead of dependences; commutative / mutexinoutset / commute = the\n\
         accumulate graph's bins declared commutative (in exact mode, ours); reduction / in_reduction /\n\
         redux = its additions as a reduction (ours: a group per bin, or one over all the bins, as the\n\
         peers' is); atomics = atomic adds, nothing declared; per-task copies = each task writes its\n\
         own element, one last task adds them in\n",
        crate::report::plural(first.tasks, "task", "tasks"),
        first.reps,
    );
    let vw = records
        .iter()
        .map(|r| r.variant.len())
        .max()
        .unwrap_or(0)
        .max(15);
    let _ = writeln!(
        s,
        "{:<12} {:>3} {:>6} {:<vw$} {:>7} {:>11} {:>8}",
        "graph", "acc", "preds", "variant", "threads", "ns/task", "vs dep"
    );
    for r in records {
        let _ = writeln!(
            s,
            "{:<12} {:>3} {:>6.2} {:<vw$} {:>7} {:>11} {:>8}",
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
    s.push_str(&crate::experiments::drivers::not_built_notes());
    s
}
