//! The markdown of a tour: the machine and date, the results table, what it leaves out.

use std::fmt::Write as _;

use super::rows::{Cell, Figure, Row, Tour};
use super::{BEGIN, END};

/// The results section of `tour` (no markers), as the README shows it.
pub fn markdown(tour: &Tour) -> String {
    let info = &tour.info;
    let mut s = String::new();
    let _ = write!(s, "`taskpools tour` (taskpools {}", info.version);
    if let Some(secs) = info.seconds {
        let _ = write!(s, ", {secs:.0} s");
    }
    let _ = writeln!(s, ") on {}.\n", info.describe());
    let _ = writeln!(
        s,
        "Per kernel, at the largest thread count of the run: our best pool or variant and the \
         best of the other runtimes that ran it (rayon, chili, forte, oneTBB, libgomp, libomp, \
         StarPU, where installed), as the speedup over the sequential program (its median time \
         / the runtime's), median (min–max) over the repetitions with the sequential median \
         held fixed; the suite's times are geometric means; data-flow graphs in nanoseconds \
         per task (lower is better). *ours vs peer*: the best peer's time over ours (above 1: \
         ours is faster). **Bold**: the row's best. `-`: not run.\n"
    );
    s.push_str(
        "| experiment | kernel | threads | figure | our best | taskpools | best peer | peer | \
         ours vs peer |\n",
    );
    s.push_str("|---|---|---:|---|---|---:|---|---:|---:|\n");
    for r in &tour.rows {
        row(&mut s, r);
    }
    if !tour.left_out.is_empty() {
        s.push_str("\nNot in the table (see their `.txt` tables):");
        for (i, (file, why)) in tour.left_out.iter().enumerate() {
            let _ = write!(s, "{} `{file}` ({why})", if i == 0 { "" } else { ";" });
        }
        s.push_str(".\n");
    }
    s
}

fn row(s: &mut String, r: &Row) {
    // The best peer: the best median among the others (ties: the first in name order).
    let peer = r.peers.iter().map(|(p, c)| (*p, *c)).reduce(|a, b| {
        if r.figure.better(b.1.median, a.1.median) {
            b
        } else {
            a
        }
    });
    let ours = r.ours.as_ref().map(|o| o.2);
    let best = ours
        .iter()
        .chain(peer.iter().map(|p| &p.1))
        .map(|c| c.median)
        .reduce(|a, b| if r.figure.better(b, a) { b } else { a });
    let kernel = if r.detail.is_empty() {
        format!("`{}`", r.kernel)
    } else {
        format!("`{}` {}", r.kernel, r.detail)
    };
    let pool = match &r.ours {
        Some((pool, detail, _)) if detail.is_empty() => format!("`{pool}`"),
        Some((pool, detail, _)) => format!("`{pool}` {detail}"),
        None => "-".into(),
    };
    let _ = write!(
        s,
        "| {} | {kernel} | {} | {} | {pool} |",
        r.experiment,
        r.threads,
        r.figure.name()
    );
    let cell = |s: &mut String, c: Option<Cell>| match c {
        Some(c) => {
            let m = number(r.figure, c.median);
            let shown = if best.map(|b| number(r.figure, b)) == Some(m.clone()) {
                format!("**{m}**")
            } else {
                m
            };
            let _ = write!(
                s,
                " {shown} ({}–{}) |",
                number(r.figure, c.min),
                number(r.figure, c.max)
            );
        }
        None => s.push_str(" - |"),
    };
    cell(s, ours);
    let _ = write!(s, " {} |", peer.map_or("-", |p| p.0));
    cell(s, peer.map(|p| p.1));
    // The peer's time over ours: speedups divide the other way round.
    match (ours, peer) {
        (Some(o), Some((_, p))) => {
            let x = match r.figure {
                Figure::Speedup => o.median / p.median,
                Figure::NsPerTask => p.median / o.median,
            };
            let _ = write!(s, " {x:.2} |");
        }
        _ => s.push_str(" - |"),
    }
    s.push('\n');
}

/// A figure as the table prints it: speedups with two decimals, nanoseconds with three
/// significant digits from 10 up (whole numbers from 100), two decimals below 10.
fn number(figure: Figure, x: f64) -> String {
    match figure {
        Figure::Speedup => format!("{x:.2}"),
        Figure::NsPerTask if x >= 100.0 => format!("{x:.0}"),
        Figure::NsPerTask if x >= 10.0 => format!("{x:.1}"),
        Figure::NsPerTask => format!("{x:.2}"),
    }
}

/// `text` with the block between [`BEGIN`] and [`END`] replaced by `section`; `None` if
/// `text` has no such block.
pub fn replace_block(text: &str, section: &str) -> Option<String> {
    let b = text.find(BEGIN)?;
    let e = b + text[b..].find(END)?;
    Some(format!(
        "{}{BEGIN}\n{}{}",
        &text[..b],
        section.trim_end().to_string() + "\n",
        &text[e..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_is_replaced_and_the_rest_kept() {
        let text = format!("a\n{BEGIN}\nold\n{END}\nb\n");
        assert_eq!(
            replace_block(&text, "new\n").unwrap(),
            format!("a\n{BEGIN}\nnew\n{END}\nb\n")
        );
        assert_eq!(replace_block("a\nb\n", "new"), None);
        assert_eq!(replace_block(&format!("{END}\n{BEGIN}\n"), "new"), None);
    }

    #[test]
    fn numbers() {
        assert_eq!(number(Figure::Speedup, 1.234), "1.23");
        assert_eq!(number(Figure::NsPerTask, 1234.4), "1234");
        assert_eq!(number(Figure::NsPerTask, 57.94), "57.9");
        assert_eq!(number(Figure::NsPerTask, 1.234), "1.23");
    }
}
