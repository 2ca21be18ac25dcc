//! SVG charts (plotters).

use std::path::Path;

use anyhow::{anyhow, Result};
use plotters::prelude::*;

use crate::experiments::synthetic::Record;

/// The x-axis label of a record: alias, memory manager if any, wake-up policy if not default.
fn label(r: &Record) -> String {
    let mut l = r.alias.clone();
    if r.mem != "-" {
        l = format!("{l}/{}", r.mem);
    }
    if r.wake != "on-empty" {
        l = format!("{l}/{}", r.wake);
    }
    l
}

/// A grouped bar chart: speedup against the sequential algorithm per configuration (x) and
/// thread count (bar colour), like the seed's speed-up tables drawn as bars.
pub fn speedup_chart(path: &Path, title: &str, records: &[Record]) -> Result<()> {
    let rows = &records[1..];
    let mut labels: Vec<String> = Vec::new();
    for r in rows {
        let l = label(r);
        if !labels.contains(&l) {
            labels.push(l);
        }
    }
    let mut threads: Vec<usize> = rows.iter().map(|r| r.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let ymax = rows.iter().map(|r| r.speedup_vs_seq).fold(1.0f64, f64::max) * 1.35;
    let width = (120 + labels.len() * 70).max(640) as u32;
    let root = SVGBackend::new(path, (width, 420)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(0f64..labels.len() as f64, 0f64..ymax)
        .map_err(|e| anyhow!("{e}"))?;
    let labels_for_axis = labels.clone();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(labels.len() * 2 + 1)
        .x_label_formatter(&move |x| {
            let i = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 0.01 && i < labels_for_axis.len() {
                labels_for_axis[i].clone()
            } else {
                String::new()
            }
        })
        .y_desc("speedup vs sequential")
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    let palette = [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK];
    let w = 0.8 / threads.len() as f64;
    for (ti, &t) in threads.iter().enumerate() {
        let color = palette[ti % palette.len()];
        let bars: Vec<_> = rows
            .iter()
            .filter(|r| r.threads == t)
            .map(|r| {
                let l = label(r);
                let i = labels.iter().position(|x| *x == l).expect("label") as f64;
                let x0 = i + 0.1 + ti as f64 * w;
                Rectangle::new(
                    [(x0, 0.0), (x0 + w * 0.9, r.speedup_vs_seq)],
                    color.filled(),
                )
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(|e| anyhow!("{e}"))?
            .label(format!("{t} thread{}", if t == 1 { "" } else { "s" }))
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    chart
        .draw_series(LineSeries::new(
            [(0.0, 1.0), (labels.len() as f64, 1.0)],
            BLACK.stroke_width(1),
        ))
        .map_err(|e| anyhow!("{e}"))?;
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.9))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    root.present().map_err(|e| anyhow!("{e}"))?;
    Ok(())
}
