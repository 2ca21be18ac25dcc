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

/// A grouped bar chart: one group per x label, one coloured bar per series, and a horizontal
/// reference line at `reference` (if any).
pub fn bar_chart(
    path: &Path,
    title: &str,
    y_desc: &str,
    labels: &[String],
    series: &[(String, Vec<f64>)],
    reference: Option<f64>,
) -> Result<()> {
    let ymax = series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .chain(reference)
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.35;
    let width = (120 + labels.len() * 80).max(640) as u32;
    let root = SVGBackend::new(path, (width, 420)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..labels.len() as f64, 0f64..ymax)
        .map_err(|e| anyhow!("{e}"))?;
    let axis = labels.to_vec();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(labels.len() * 2 + 1)
        .x_label_formatter(&move |x| {
            let i = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 0.01 && i < axis.len() {
                axis[i].clone()
            } else {
                String::new()
            }
        })
        .y_desc(y_desc)
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    let palette = [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK];
    let w = 0.8 / series.len().max(1) as f64;
    for (si, (name, values)) in series.iter().enumerate() {
        let color = palette[si % palette.len()];
        let bars: Vec<_> = values
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .map(|(i, &v)| {
                let x0 = i as f64 + 0.1 + si as f64 * w;
                Rectangle::new([(x0, 0.0), (x0 + w * 0.9, v)], color.filled())
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(|e| anyhow!("{e}"))?
            .label(name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    if let Some(r) = reference {
        chart
            .draw_series(LineSeries::new(
                [(0.0, r), (labels.len() as f64, r)],
                BLACK.stroke_width(1),
            ))
            .map_err(|e| anyhow!("{e}"))?;
    }
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

/// Speedup against the sequential algorithm per configuration (x) and thread count (colour).
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
    let series: Vec<(String, Vec<f64>)> = threads
        .iter()
        .map(|&t| {
            let mut v = vec![f64::NAN; labels.len()];
            for r in rows.iter().filter(|r| r.threads == t) {
                let i = labels.iter().position(|x| *x == label(r)).expect("label");
                v[i] = r.speedup_vs_seq;
            }
            (format!("{t} thread{}", if t == 1 { "" } else { "s" }), v)
        })
        .collect();
    bar_chart(
        path,
        title,
        "speedup vs sequential",
        &labels,
        &series,
        Some(1.0),
    )
}
