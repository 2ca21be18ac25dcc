//! The text table of `taskpools forkjoin`.

use std::fmt::Write;

/// The fork-join comparison: per kernel, sequential, ours and rayon per thread count.
pub fn forkjoin_table(records: &[super::Record]) -> String {
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
         join/chili and time/chili as join/rayon and time/rayon, where chili's joins cost >= Tseq / 50;\n\
         a join cost below zero (the run with joins was the faster: noise, on coarse kernels) prints as -\n",
        first.reps
    );
    let _ = writeln!(
        s,
        "{:<10} {:<19} {:>7} {:>11} {:>8} {:>7} {:>11} {:>9} {:>11} {:>11} {:>11} {:>11}",
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
            "{:<10} {:<19} {:>7} {:>9.4} s {:>7.2}x {:>7} {:>11} {:>9} {:>11} {:>11} {:>11} {:>11}",
            r.kernel,
            r.runtime,
            r.threads,
            r.median_s,
            r.speedup_vs_seq,
            r.speedup_vs_1
                .map_or("-".to_string(), |v| format!("{v:.2}x")),
            r.joins,
            cost(r.ns_per_join),
            cost(r.join_vs_rayon),
            r.vs_rayon.map_or("-".to_string(), |v| format!("{v:.2}")),
            cost(r.join_vs_chili),
            r.vs_chili.map_or("-".to_string(), |v| format!("{v:.2}"))
        );
    }
    s
}

/// A cost (or a ratio of costs) with two decimals; `-` where there is none or it came out
/// below zero, which a cost cannot be: the difference of two noisy times was.
pub fn cost(v: Option<f64>) -> String {
    match v {
        Some(v) if v >= 0.0 => format!("{v:.2}"),
        _ => "-".to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn negative_costs_print_as_a_dash() {
        assert_eq!(super::cost(Some(-17995.17)), "-");
        assert_eq!(super::cost(None), "-");
        assert_eq!(super::cost(Some(0.81)), "0.81");
    }
}
