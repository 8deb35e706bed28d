//! The rollout's plot, linked from its section: its waves on a timeline from the apply, the
//! operator's (each wave from `Publishing` to `Baking`, then to `Passed`) above the floor's
//! (each wave's publish round trip, then its bake, one after the other), as SVG.

use crate::error::{Error, Result};
use crate::results::rollout::RolloutRun;
use plotters::prelude::*;
use std::time::Duration;

/// Size of the picture, in pixels.
const SIZE: (u32, u32) = (960, 300);

/// The colour of a wave's publishes.
const PUBLISHING: RGBColor = RGBColor(214, 96, 77);

/// The colour of a wave's bake.
const BAKING: RGBColor = RGBColor(67, 147, 195);

/// The plot's file name: `rollout.svg`, or `rollout-<fleets>.svg` beside the report of the
/// rollout alone.
pub fn file_name(rollout_alone: Option<usize>) -> String {
    rollout_alone.map_or_else(|| "rollout.svg".into(), |n| format!("rollout-{n}.svg"))
}

fn plot_err(e: impl std::fmt::Display) -> Error {
    Error::Plot(e.to_string())
}

/// One bar: from, to (seconds), its row's bottom, and its colour.
type Bar = (f64, f64, f64, RGBColor);

/// The operator's bars (row 1) and the floor's (row 0).
fn bars(r: &RolloutRun) -> Vec<Bar> {
    let s = |d: Duration| d.as_secs_f64();
    let mut out = Vec::new();
    for w in &r.waves {
        let (Some(start), Some(passed)) = (w.started, w.passed) else {
            continue;
        };
        let baking = w.baking.unwrap_or(passed);
        out.push((s(start), s(start + baking), 1.0, PUBLISHING));
        out.push((s(start + baking), s(start + passed), 1.0, BAKING));
    }
    let mut at = 0.0;
    for w in &r.waves {
        let publish = s(w.round_trip());
        out.push((at, at + publish, 0.0, PUBLISHING));
        out.push((at + publish, at + publish + s(w.floor_bake()), 0.0, BAKING));
        at += publish + s(w.floor_bake());
    }
    out.retain(|(from, to, _, _)| to > from);
    out
}

/// The row a y label names.
fn row_label(y: &f64) -> String {
    if (y - 0.5).abs() < 0.01 {
        "floor".into()
    } else if (y - 1.5).abs() < 0.01 {
        "operator".into()
    } else {
        String::new()
    }
}

/// The SVG document for `r`.
pub fn render(r: &RolloutRun) -> Result<String> {
    let bars = bars(r);
    let end = bars
        .iter()
        .map(|b| b.1)
        .fold(r.succeeded.as_secs_f64(), f64::max)
        .max(1.0);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "A rollout over {} fleets: each wave's publishes, then its bake",
                    r.fleets
                ),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(72)
            .build_cartesian_2d(0.0..end * 1.05, 0.0..2.0)
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc("seconds from the apply")
            .y_labels(5)
            .y_label_formatter(&row_label)
            .draw()
            .map_err(plot_err)?;
        for (colour, name) in [
            (PUBLISHING, "publishing (until every fleet serves it)"),
            (BAKING, "baking (until the wave passed)"),
        ] {
            let rectangles = bars
                .iter()
                .filter(|b| b.3 == colour)
                .map(|&(from, to, row, c)| {
                    Rectangle::new([(from, row + 0.2), (to, row + 0.8)], c.filled())
                });
            chart
                .draw_series(rectangles)
                .map_err(plot_err)?
                .label(name)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 14, y + 5)], colour.filled())
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(plot_err)?;
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::rollout::tests::run;

    #[test]
    fn each_wave_is_a_publish_and_a_bake_for_the_operator_and_the_floor() {
        let r = run();
        let bars = bars(&r);
        assert_eq!(bars.len(), 16, "4 waves × 2 bars × 2 rows");
        let floor_end = bars
            .iter()
            .filter(|b| b.2 == 0.0)
            .map(|b| b.1)
            .fold(0.0, f64::max);
        assert!((floor_end - r.floor().as_secs_f64()).abs() < 1e-9);
        let svg = render(&r).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
        for text in [
            "operator",
            "floor",
            "baking (until the wave passed)",
            "seconds from the apply",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        assert_eq!(file_name(None), "rollout.svg");
        assert_eq!(file_name(Some(300)), "rollout-300.svg");
    }
}
