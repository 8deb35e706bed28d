//! The plot linked from the report: time to ready (operator and floor) and resident memory
//! against the number of fleets, as SVG.

use crate::error::{Error, Result};
use crate::results::Scale;
use plotters::prelude::*;

/// Size of the picture, in pixels.
const SIZE: (u32, u32) = (960, 420);

/// One line of a chart: its name, colour and points (fleets, value).
struct Line {
    name: &'static str,
    colour: RGBColor,
    points: Vec<(f64, f64)>,
}

fn plot_err(e: impl std::fmt::Display) -> Error {
    Error::Plot(e.to_string())
}

fn chart(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    y_label: &str,
    lines: &[Line],
) -> Result<()> {
    let max_x = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(1.0, f64::max);
    let max_y = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .filter(|y| y.is_finite())
        .fold(1.0, f64::max);
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..max_x * 1.05, 0.0..max_y * 1.15)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc("fleets")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_desc(y_label)
        .draw()
        .map_err(plot_err)?;
    for line in lines {
        let colour = line.colour;
        chart
            .draw_series(LineSeries::new(
                line.points.iter().copied(),
                colour.stroke_width(2),
            ))
            .map_err(plot_err)?
            .label(line.name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], colour.stroke_width(2)));
        chart
            .draw_series(
                line.points
                    .iter()
                    .map(|&p| Circle::new(p, 4, colour.filled())),
            )
            .map_err(plot_err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(plot_err)?;
    Ok(())
}

fn points(scales: &[Scale], value: impl Fn(&Scale) -> f64) -> Vec<(f64, f64)> {
    scales
        .iter()
        .map(|s| (s.fleets() as f64, value(s)))
        .collect()
}

/// The SVG document for `scales` (in increasing fleet order).
pub fn render(scales: &[Scale]) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let (left, right) = root.split_horizontally(SIZE.0 / 2);
        let times = [
            Line {
                name: "operator: all fleets Ready",
                colour: RED,
                points: points(scales, |s| s.operator.fleets_ready.as_secs_f64()),
            },
            Line {
                name: "operator: all StatefulSets ready",
                colour: MAGENTA,
                points: points(scales, |s| s.operator.statefulsets_ready.as_secs_f64()),
            },
            Line {
                name: "floor: all fleets Ready (from first create)",
                colour: BLUE,
                points: points(scales, |s| s.floor.fleets_ready.as_secs_f64()),
            },
        ];
        chart(&left, "Time to ready", "seconds", &times)?;
        let memory = [
            Line {
                name: "operator after settling",
                colour: RED,
                points: points(scales, |s| s.operator.settled_rss_kib as f64 / 1024.0),
            },
            Line {
                name: "empty operator",
                colour: BLUE,
                points: points(scales, |s| s.operator.empty_rss_kib as f64 / 1024.0),
            },
        ];
        chart(&right, "Operator resident memory", "MiB", &memory)?;
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::scale;

    #[test]
    fn the_plot_is_an_svg_with_both_charts_and_every_line_named() {
        let svg = render(&[
            scale(100, 10, 20, 32 * 1024),
            scale(1000, 50, 150, 80 * 1024),
        ])
        .unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
        for text in [
            "Time to ready",
            "Operator resident memory",
            "operator: all fleets Ready",
            "floor: all fleets Ready (from first create)",
            "empty operator",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        // One marker per point: 3 time lines and 2 memory lines of 2 points each.
        assert_eq!(svg.matches("<circle").count(), 10);
    }

    #[test]
    fn no_scale_still_draws_empty_charts() {
        let svg = render(&[]).unwrap();
        assert!(svg.contains("Operator resident memory"));
        assert_eq!(svg.matches("<circle").count(), 0);
    }
}
