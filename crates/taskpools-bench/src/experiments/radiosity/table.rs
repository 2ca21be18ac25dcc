//! The text table of `taskpools radiosity`: per thread count, the configurations ranked by
//! interaction rate, with both speed-ups over the sequential program and Korch & Rauber's
//! Table 7 figure and rank beside ours.

use std::fmt::Write;

use super::run::{Record, CEILING};

/// Standard competition ranks of `values`, highest first (ties share the better rank).
fn ranks_desc(values: &[f64]) -> Vec<usize> {
    values
        .iter()
        .map(|v| 1 + values.iter().filter(|w| *w > v).count())
        .collect()
}

/// Spearman's rank correlation of two equally long samples (average ranks for ties); `None`
/// for fewer than three pairs or a constant sample.
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    fn avg_ranks(v: &[f64]) -> Vec<f64> {
        v.iter()
            .map(|x| {
                let below = v.iter().filter(|y| *y < x).count() as f64;
                let equal = v.iter().filter(|y| *y == x).count() as f64;
                below + (equal + 1.0) / 2.0
            })
            .collect()
    }
    if a.len() != b.len() || a.len() < 3 {
        return None;
    }
    let (ra, rb) = (avg_ranks(a), avg_ranks(b));
    let n = ra.len() as f64;
    let (ma, mb) = (ra.iter().sum::<f64>() / n, rb.iter().sum::<f64>() / n);
    let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = ra.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = rb.iter().map(|y| (y - mb).powi(2)).sum();
    (va > 0.0 && vb > 0.0).then(|| cov / (va * vb).sqrt())
}

/// The table of a radiosity run (first record = the sequential program).
pub fn radiosity_table(records: &[Record]) -> String {
    let mut s = String::new();
    let Some(seq) = records.first() else {
        return s;
    };
    let _ = writeln!(
        s,
        "hierarchical radiosity, scene \"{}\" ({} triangles, {} patches after the BSP \
         build): median of {} (wake-up: {})",
        seq.scene,
        seq.input_triangles,
        seq.patches,
        seq.reps,
        records.get(1).map_or("-", |r| r.wake.as_str())
    );
    let pct = |n: u64| 100.0 * n as f64 / seq.interactions.max(1) as f64;
    let _ = writeln!(
        s,
        "sequential program (no pool): {:.3} s, {} iterations, {} interactions, {} visible \
         ({:.1} %: {:.1} % completely, {:.1} % partly), {} elements, {} visibility tests, {} \
         rays; {:.1} k visible interactions/s\n",
        seq.time_s,
        seq.iterations,
        seq.interactions,
        seq.visible,
        pct(seq.visible),
        pct(seq.fully_visible),
        pct(seq.visible - seq.fully_visible),
        seq.elements,
        seq.visibility_tests,
        seq.rays,
        seq.rate / 1e3
    );
    let rows_all = &records[1..];
    let mut threads: Vec<usize> = rows_all.iter().map(|r| r.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    for t in threads {
        let mut rows: Vec<&Record> = rows_all
            .iter()
            .filter(|r| r.threads == t && r.pool != CEILING)
            .collect();
        let ceiling = rows_all
            .iter()
            .find(|r| r.threads == t && r.pool == CEILING);
        rows.sort_by(|a, b| b.rate.total_cmp(&a.rate));
        // The paper's rank among the pools of this table that it measured.
        let paper: Vec<f64> = rows.iter().filter_map(|r| r.paper_speedup).collect();
        let paper_ranks = ranks_desc(&paper);
        let mut next_paper = paper_ranks.iter();
        let _ = writeln!(s, "{t} thread{}:", if t == 1 { "" } else { "s" });
        let _ = writeln!(
            s,
            "{:>4}  {:<30} {:<6} {:<6} {:>9} {:>10} {:>8} {:>8} {:>6} {:>6} {:>5} {:>8} {:>8} {:>7} {:>8}",
            "rank",
            "pool",
            "alias",
            "mem",
            "time",
            "k vis/s",
            "by time",
            "by rate",
            "paper",
            "p.rank",
            "iter",
            "inter",
            "visible",
            "elems",
            "steals"
        );
        for (i, r) in rows.iter().enumerate() {
            let (paper_s, paper_rank) = match r.paper_speedup {
                Some(x) => (
                    format!("{x:.2}"),
                    next_paper.next().map_or("-".into(), |k| k.to_string()),
                ),
                None => ("-".into(), "-".into()),
            };
            let _ = writeln!(
                s,
                "{:>4}  {:<30} {:<6} {:<6} {:>7.3} s {:>10.1} {:>7.2}x {:>7.2}x {:>6} {:>6} {:>5} {:>8} {:>8} {:>7} {:>8}",
                i + 1,
                r.pool,
                r.alias,
                r.mem,
                r.time_s,
                r.rate / 1e3,
                r.speedup_time,
                r.speedup_rate,
                paper_s,
                paper_rank,
                r.iterations,
                r.interactions,
                r.visible,
                r.elements,
                r.steals
            );
        }
        if let Some(c) = ceiling {
            let _ = writeln!(
                s,
                "      ceiling: {t} sequential programs at once in {:.3} s: {:.2}x by rate (what \
                 the cores give with no pool at all)",
                c.time_s * t as f64,
                c.speedup_rate
            );
        }
        let pairs: Vec<(f64, f64)> = rows
            .iter()
            .filter_map(|r| r.paper_speedup.map(|p| (r.speedup_rate, p)))
            .collect();
        if let Some(rho) = spearman(
            &pairs.iter().map(|p| p.0).collect::<Vec<_>>(),
            &pairs.iter().map(|p| p.1).collect::<Vec<_>>(),
        ) {
            let _ = writeln!(
                s,
                "ranking against Korch & Rauber's Table 7 (largeroom, Linux PC) over the {} \
                 rows of pools it measured: Spearman's rho = {rho:.2}",
                pairs.len()
            );
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(
        s,
        "by time / by rate: the sequential program's time over this time / this rate over the \
         sequential rate; paper, p.rank: Table 7's speed-up and its rank among these pools"
    );
    s
}

#[cfg(test)]
mod tests {
    use super::{ranks_desc, spearman};

    #[test]
    fn ranks_share_ties() {
        assert_eq!(ranks_desc(&[1.95, 1.78, 1.95, 1.90]), vec![1, 4, 1, 3]);
    }

    #[test]
    fn spearman_extremes() {
        let a = [1.0, 2.0, 3.0, 4.0];
        assert!((spearman(&a, &[10.0, 20.0, 30.0, 40.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((spearman(&a, &[4.0, 3.0, 2.0, 1.0]).unwrap() + 1.0).abs() < 1e-12);
        assert_eq!(spearman(&a, &[1.0; 4]), None);
        assert_eq!(spearman(&a[..2], &a[..2]), None);
    }
}
