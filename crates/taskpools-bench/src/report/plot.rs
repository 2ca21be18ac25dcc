//! SVG charts (plotters).

use std::path::Path;

use anyhow::{anyhow, Result};
use plotters::prelude::*;

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
    bar_chart_scaled(path, title, y_desc, labels, series, reference, false)
}

/// [`bar_chart`] with a logarithmic y axis (for values that span decades; values ≤ 0 are
/// left out).
pub fn bar_chart_log(
    path: &Path,
    title: &str,
    y_desc: &str,
    labels: &[String],
    series: &[(String, Vec<f64>)],
) -> Result<()> {
    bar_chart_scaled(path, title, y_desc, labels, series, None, true)
}

fn bar_chart_scaled(
    path: &Path,
    title: &str,
    y_desc: &str,
    labels: &[String],
    series: &[(String, Vec<f64>)],
    reference: Option<f64>,
    log: bool,
) -> Result<()> {
    // On a log axis the bars are drawn at log10 of their values, from the floor below the
    // smallest, and the axis labels say the values themselves.
    let tf = move |v: f64| if log { v.log10() } else { v };
    let shown = |v: &f64| v.is_finite() && (!log || *v > 0.0);
    let values = series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .chain(reference)
        .filter(shown)
        .map(tf);
    // The legend (upper left, a line per series) takes the top of the plot: the chart grows
    // with the series, and the y range leaves the legend's height free above the bars.
    let legend_px = 16.0 * series.len() as f64 + 16.0;
    let plot_px = 270.0 + legend_px;
    let bars_share = (plot_px - legend_px - 10.0) / plot_px;
    let (ymin, ymax) = if log {
        let (lo, hi) = values.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        let (lo, hi) = if lo > hi { (0.0, 1.0) } else { (lo, hi) };
        let lo = lo.floor();
        (lo, lo + (hi - lo).max(0.5) / bars_share)
    } else {
        (0.0, values.fold(0.0f64, f64::max).max(1e-9) / bars_share)
    };
    // Each group as wide as its longest label (about 7 px a character), so that labels never
    // run into each other.
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let group_px = (7 * longest + 16).max(80);
    let width = (120 + labels.len() * group_px).max(640) as u32;
    // Caption, x labels and margins take about 100 px besides the plot.
    let height = (plot_px + 100.0) as u32;
    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..labels.len() as f64, ymin..ymax)
        .map_err(|e| anyhow!("{e}"))?;
    let axis = labels.to_vec();
    let pow10 = |y: &f64| {
        let v = 10f64.powf(*y);
        if v >= 10.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.2}")
        }
    };
    let mut mesh = chart.configure_mesh();
    if log {
        mesh.y_label_formatter(&pow10);
    }
    mesh.disable_x_mesh()
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
    let palette = [
        BLUE,
        RED,
        GREEN,
        MAGENTA,
        CYAN,
        BLACK,
        RGBColor(230, 140, 0),
        RGBColor(140, 90, 40),
        RGBColor(128, 128, 128),
        RGBColor(120, 120, 0),
    ];
    let w = 0.8 / series.len().max(1) as f64;
    for (si, (name, values)) in series.iter().enumerate() {
        // Past the palette, evenly spaced hues, so that no two series share a colour.
        let color = if series.len() <= palette.len() {
            palette[si].to_rgba()
        } else {
            hue(si, series.len(), 0.75, 0.45)
        };
        let bars: Vec<_> = values
            .iter()
            .enumerate()
            .filter(|(_, v)| shown(v))
            .map(|(i, &v)| {
                let x0 = i as f64 + 0.1 + si as f64 * w;
                Rectangle::new([(x0, ymin), (x0 + w * 0.9, tf(v))], color.filled())
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
                [(0.0, tf(r)), (labels.len() as f64, tf(r))],
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

/// A line chart: one line (with point marks) per series of (x, y) points.
pub fn line_chart(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<()> {
    let pts = series
        .iter()
        .flat_map(|(_, v)| v.iter())
        .filter(|(x, y)| x.is_finite() && y.is_finite());
    let (mut xmax, mut ymax) = (0.0f64, 0.0f64);
    let mut xmin = f64::INFINITY;
    for &(x, y) in pts {
        xmax = xmax.max(x);
        xmin = xmin.min(x);
        ymax = ymax.max(y);
    }
    if !xmin.is_finite() {
        xmin = 0.0;
    }
    let xmin = xmin.min(0.0);
    let xmax = if xmax > xmin { xmax } else { xmin + 1.0 };
    let ymax = if ymax > 0.0 { ymax * 1.15 } else { 1.0 };
    // Many series (a line per segment of Manber's pool, say): their legend goes into a column
    // right of the plot instead of over the lines.
    let many = series.len() > 6;
    let legend_w = if many { 110 } else { 0 };
    let root = SVGBackend::new(path, (900 + legend_w, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let (plot_area, legend_area) = root.split_horizontally(900);
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(title, ("sans-serif", 17))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(xmin..xmax, 0f64..ymax)
        .map_err(|e| anyhow!("{e}"))?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    for (i, (name, v)) in series.iter().enumerate() {
        let color = if many {
            hue(i, series.len(), 0.7, 0.45)
        } else {
            [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK][i % 6].to_rgba()
        };
        let data: Vec<(f64, f64)> = v
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        let s = chart
            .draw_series(LineSeries::new(
                data.clone(),
                color.stroke_width(if many { 1 } else { 2 }),
            ))
            .map_err(|e| anyhow!("{e}"))?;
        s.label(name.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 14, y)], color.stroke_width(2)));
        if many {
            let y = 50 + 16 * i as i32;
            legend_area
                .draw(&PathElement::new([(6, y), (22, y)], color.stroke_width(2)))
                .map_err(|e| anyhow!("{e}"))?;
            legend_area
                .draw(&Text::new(
                    name.clone(),
                    (28, y - 6),
                    ("sans-serif", 12).into_font(),
                ))
                .map_err(|e| anyhow!("{e}"))?;
        } else {
            chart
                .draw_series(
                    data.iter()
                        .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
                )
                .map_err(|e| anyhow!("{e}"))?;
        }
    }
    if !many {
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE.mix(0.9))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| anyhow!("{e}"))?;
    }
    root.present().map_err(|e| anyhow!("{e}"))?;
    Ok(())
}

/// Speedup over threads on log-log axes (PARTEE's Figure 4.1): one line per series of
/// (threads, speedup) points, and the linear speedup in grey.
pub fn loglog_speedup(
    path: &Path,
    title: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<()> {
    // Drawn in log2 coordinates on linear axes, so that the thread counts 1, 2, 4, 8, 16 are
    // evenly spaced and each gets its label (plotters' own log axes label only decades, and
    // shade the space between their many minor lines).
    let lg = |v: f64| v.log2();
    let pts: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .filter(|(x, y)| x.is_finite() && y.is_finite() && *x > 0.0 && *y > 0.0)
        .collect();
    let xmax = pts.iter().map(|p| p.0).fold(2.0f64, f64::max);
    let ymax = pts.iter().map(|p| p.1).fold(xmax, f64::max);
    let ymin = pts.iter().map(|p| p.1).fold(0.5f64, f64::min);
    let (x1, y0, y1) = (lg(xmax) + 0.15, (lg(ymin) - 0.3).floor(), lg(ymax) + 0.4);
    // Many series: their legend goes into a column right of the axes, where it covers no
    // point (inside, at the lower right, it hid the low speedups of the last thread count).
    let many = series.len() > 5;
    let legend_w = if many { 190 } else { 0 };
    let root = SVGBackend::new(path, (720 + legend_w, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let (plot_area, legend_area) = root.split_horizontally(720);
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(title, ("sans-serif", 17))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.15f64..x1, y0..y1)
        .map_err(|e| anyhow!("{e}"))?;
    // Ticks at whole powers of two, labelled with the power's value.
    let pow2 = |v: &f64| short_number(2f64.powf(*v));
    chart
        .configure_mesh()
        .x_desc("threads (log scale)")
        .y_desc("speedup over sequential (log scale)")
        .x_labels((x1.ceil() + 1.0) as usize)
        .y_labels((y1 - y0).ceil() as usize + 1)
        .x_label_formatter(&pow2)
        .y_label_formatter(&pow2)
        .light_line_style(WHITE)
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    let grey = RGBColor(170, 170, 170);
    chart
        .draw_series(LineSeries::new(
            [(0.0, 0.0), (lg(xmax), lg(xmax))],
            grey.stroke_width(1),
        ))
        .map_err(|e| anyhow!("{e}"))?
        .label("linear")
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 14, y)], grey.stroke_width(1)));
    // An entry of the legend column: a line in the series' colour and its name.
    let entry = |k: usize, name: &str, color: RGBAColor, width: u32| -> Result<()> {
        let y = 60 + 18 * k as i32;
        legend_area
            .draw(&PathElement::new(
                [(6, y), (24, y)],
                color.stroke_width(width),
            ))
            .map_err(|e| anyhow!("{e}"))?;
        legend_area
            .draw(&Text::new(
                name.to_string(),
                (30, y - 7),
                ("sans-serif", 13).into_font(),
            ))
            .map_err(|e| anyhow!("{e}"))?;
        Ok(())
    };
    if many {
        entry(0, "linear", grey.to_rgba(), 1)?;
    }
    let palette = [
        RGBColor(0, 150, 60),
        RGBColor(200, 30, 30),
        RGBColor(30, 90, 200),
        RGBColor(230, 140, 0),
        RGBColor(140, 60, 170),
        RGBColor(0, 160, 170),
        RGBColor(90, 90, 90),
    ];
    for (i, (name, v)) in series.iter().enumerate() {
        // Past the palette, evenly spaced hues, so that no two series share a colour.
        let color = if series.len() <= palette.len() {
            palette[i].to_rgba()
        } else {
            hue(i, series.len(), 0.75, 0.42)
        };
        let data: Vec<(f64, f64)> = v
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite() && *x > 0.0 && *y > 0.0)
            .map(|(x, y)| (lg(x), lg(y)))
            .collect();
        chart
            .draw_series(LineSeries::new(data.clone(), color.stroke_width(2)))
            .map_err(|e| anyhow!("{e}"))?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 14, y)], color.stroke_width(2)));
        chart
            .draw_series(
                data.iter()
                    .map(|&(x, y)| Circle::new((x, y), 4, color.filled())),
            )
            .map_err(|e| anyhow!("{e}"))?;
        if many {
            entry(i + 1, name, color, 2)?;
        }
    }
    if !many {
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE.mix(0.9))
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(|e| anyhow!("{e}"))?;
    }
    root.present().map_err(|e| anyhow!("{e}"))?;
    Ok(())
}

/// Colour `i` of `n` on the colour wheel, from red to violet: five sixths of the wheel, so
/// that the last colour does not come back round to the first's red.
fn hue(i: usize, n: usize, saturation: f64, lightness: f64) -> RGBAColor {
    HSLColor(
        i as f64 / n.max(1) as f64 * 5.0 / 6.0,
        saturation,
        lightness,
    )
    .to_rgba()
}

/// A tick label on a log axis: two significant digits at most, no trailing zeros (`0.45`, `2`,
/// `16`), where the default printed the float's representation error (`0.6000000001`).
fn short_number(y: f64) -> String {
    let s = if y >= 10.0 {
        format!("{y:.0}")
    } else if y >= 1.0 {
        format!("{y:.1}")
    } else {
        format!("{y:.2}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}
