//! The SVG plot of `mcheck scaling`, drawn with plotters: the median
//! schedules to the bug against the mean execution length, both on log
//! scales, one line per technique, and a cross at the top of the plot
//! (at the schedule budget) for every size where the median seed of a
//! technique did not find the bug.

use crate::scaling::Record;
use plotters::prelude::*;

/// The plot's size in pixels.
const SIZE: (u32, u32) = (900, 600);

/// Line colours, one per technique in order (cycled): ten that stay apart
/// on white.
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Draw `records` (of the `techniques`, in that order) to the SVG file
/// `path`; `cap` is the count a run stops at (the schedule budget), where
/// the crosses go.
pub fn svg(path: &str, title: &str, techniques: &[&str], records: &[Record], cap: u64) -> Result<(), String> {
    draw(path, title, techniques, records, cap).map_err(|e| format!("cannot draw the plot to {path:?}: {e}"))
}

fn draw(
    path: &str,
    title: &str,
    techniques: &[&str],
    records: &[Record],
    cap: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let means = records.iter().map(|r| r.mean_steps.max(1.0));
    let x_lo = means.clone().fold(f64::INFINITY, f64::min).min(1e9);
    let x_hi = means.fold(1.0, f64::max);
    let top = records
        .iter()
        .filter_map(|r| r.cell.count.median)
        .fold(cap.max(1) as f64, f64::max);
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((x_lo / 1.25..x_hi * 1.25).log_scale(), (0.8..top * 2.0).log_scale())?;
    chart
        .configure_mesh()
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .x_desc("mean execution length (steps)")
        .y_desc("median schedules to the bug (SES: states)")
        .draw()?;
    for (i, name) in techniques.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mine = || records.iter().filter(move |r| r.technique == *name);
        let found: Vec<(f64, f64)> = mine()
            .filter_map(|r| Some((r.mean_steps.max(1.0), r.cell.count.median?)))
            .collect();
        chart
            .draw_series(LineSeries::new(found.clone(), color.stroke_width(2)))?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 4), (x + 14, y + 4)], color.filled()));
        chart.draw_series(found.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        chart.draw_series(
            mine()
                .filter(|r| r.cell.count.median.is_none())
                .map(|r| Cross::new((r.mean_steps.max(1.0), cap.max(1) as f64), 7, color.stroke_width(2))),
        )?;
    }
    // The legend's entry for the crosses (drawn outside the plot area).
    chart
        .draw_series(std::iter::empty::<Cross<(f64, f64), i32>>())?
        .label(format!("median not reached within {cap}"))
        .legend(|(x, y)| Cross::new((x + 7, y), 5, BLACK.stroke_width(2)));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
