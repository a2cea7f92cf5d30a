//! A pool's own chart: desired as a step line, ready as a step line, the GPUs warming
//! (asked for, not granted yet) as a band above ready, and the held GPUs' mean
//! utilization in a panel of its own below. The legend has its column right of both
//! panels, as the host charts', so it never covers a line.

use super::*;
use crate::pool_history::PoolSample;

/// The legend's words (the viewer's language).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolChartLabels<'a> {
    pub desired: &'a str,
    pub ready: &'a str,
    pub warming: &'a str,
    pub util: &'a str,
}

/// A count as a step line over `from_ms..=to_ms`: each value holds until the next look,
/// the last until `to_ms` (pure).
pub fn steps(
    samples: &[PoolSample],
    to_ms: i64,
    value: impl Fn(&PoolSample) -> f64,
) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(samples.len() * 2 + 1);
    for (n, sample) in samples.iter().enumerate() {
        let v = value(sample);
        let t = sample.at_ms as f64;
        if n > 0 {
            out.push((t, out.last().map_or(v, |&(_, before)| before)));
        }
        out.push((t, v));
    }
    if let Some(&(t, v)) = out.last()
        && (t as i64) < to_ms
    {
        out.push((to_ms as f64, v));
    }
    out
}

pub fn pool_svg(
    spec: &RangeChartSpec<'_>,
    labels: &PoolChartLabels<'_>,
    samples: &[PoolSample],
) -> Result<String, ChartError> {
    spec.validate()?;
    let colors = palette(spec.theme);
    let (desired_color, ready_color, util_color) =
        (colors.lines[1], colors.lines[0], colors.lines[2]);
    let warming_color = colors.lines[6];
    let (from, to) = (spec.from_ms as f64, spec.to_ms as f64);
    let samples: Vec<PoolSample> = samples
        .iter()
        .copied()
        .filter(|s| s.at_ms >= spec.from_ms && s.at_ms <= spec.to_ms)
        .collect();
    let top = samples
        .iter()
        .map(|s| s.desired.max(s.ready + s.warming))
        .max()
        .unwrap_or(0);
    let upper = (f64::from(top) + 1.0).max(2.0).ceil();
    let time = TimeLabels::Clock {
        offset_ms: i64::from(spec.utc_offset_minutes) * 60_000,
    };
    let plot_width_guess = i64::from(spec.width_px.saturating_sub(64)).max(1);
    let (ticks, step_ms) = time_ticks(
        spec.from_ms,
        spec.to_ms,
        time,
        (plot_width_guess / 90).max(2),
    );
    let x_format = |t: &f64| time_label(*t, spec.to_ms, step_ms, time);
    let chars = [labels.desired, labels.ready, labels.warming, labels.util]
        .iter()
        .map(|label| label.chars().count())
        .max()
        .unwrap_or(0);
    // CJK glyphs are about twice as wide as Latin ones.
    let wide = [labels.desired, labels.ready, labels.warming, labels.util]
        .iter()
        .any(|label| label.chars().any(|c| c as u32 > 0x2E80));
    let per_char = if wide { 12 } else { 7 };
    let legend_px = (30 + chars as u32 * per_char)
        .clamp(56, 200)
        .min(spec.width_px / 3);

    let ready = steps(&samples, spec.to_ms, |s| f64::from(s.ready));
    let warm_top = steps(&samples, spec.to_ms, |s| f64::from(s.ready + s.warming));
    let desired = steps(&samples, spec.to_ms, |s| f64::from(s.desired));
    let mut utils: Vec<Vec<(f64, f64)>> = samples
        .chunk_by(|a, b| a.util_pct.is_some() == b.util_pct.is_some())
        .filter(|run| run[0].util_pct.is_some())
        .map(|run| {
            run.iter()
                .map(|s| {
                    (
                        s.at_ms as f64,
                        f64::from(s.util_pct.unwrap_or(0.0)).clamp(0.0, 100.0),
                    )
                })
                .collect()
        })
        .collect();
    // The last reading holds until now, as the counts do.
    if let (Some(last), Some(run)) = (samples.last(), utils.last_mut())
        && last.util_pct.is_some()
        && last.at_ms < spec.to_ms
        && let Some(&(_, value)) = run.last()
    {
        run.push((to, value));
    }

    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (spec.width_px, spec.height_px)).into_drawing_area();
        root.fill(&colors.background).map_err(draw_error)?;
        let (plots, legend) = root.split_horizontally(spec.width_px - legend_px);
        let (counts_area, util_area) = plots.split_vertically((spec.height_px * 62 / 100).max(60));
        let font = ("sans-serif", 11).into_font().color(&colors.text);

        let mut counts = ChartBuilder::on(&counts_area)
            .caption(
                spec.title,
                ("sans-serif", 15).into_font().color(&colors.text),
            )
            .margin(8)
            .margin_right(20)
            .x_label_area_size(0)
            .y_label_area_size(40)
            .build_cartesian_2d(TickedAxis::new(from..to, ticks.clone()), 0.0..upper)
            .map_err(draw_error)?;
        counts
            .configure_mesh()
            .light_line_style(colors.grid.mix(0.35))
            .bold_line_style(colors.grid)
            .axis_style(colors.text.mix(0.6))
            .label_style(font.clone())
            .y_labels((upper as usize + 1).min(6))
            .y_label_formatter(&|v: &f64| format!("{v:.0}"))
            .draw()
            .map_err(draw_error)?;
        if warm_top.iter().zip(&ready).any(|(w, r)| w.1 > r.1) {
            let band: Vec<(f64, f64)> = warm_top
                .iter()
                .copied()
                .chain(ready.iter().rev().copied())
                .collect();
            counts
                .draw_series(std::iter::once(Polygon::new(band, warming_color.mix(0.35))))
                .map_err(draw_error)?;
        }
        // Desired wide beneath, ready narrow on top: both show where they are equal.
        for (points, color, width) in [(&desired, desired_color, 5), (&ready, ready_color, 2)] {
            if points.len() > 1 {
                counts
                    .draw_series(LineSeries::new(
                        points.iter().copied(),
                        color.stroke_width(width),
                    ))
                    .map_err(draw_error)?;
            }
        }

        let mut util = ChartBuilder::on(&util_area)
            .margin(8)
            .margin_right(20)
            .margin_top(4)
            .x_label_area_size(26)
            .y_label_area_size(40)
            .build_cartesian_2d(TickedAxis::new(from..to, ticks), 0.0..100.0)
            .map_err(draw_error)?;
        util.configure_mesh()
            .light_line_style(colors.grid.mix(0.35))
            .bold_line_style(colors.grid)
            .axis_style(colors.text.mix(0.6))
            .label_style(font.clone())
            .y_labels(3)
            .x_label_formatter(&x_format)
            .y_label_formatter(&|v: &f64| format!("{v:.0}%"))
            .draw()
            .map_err(draw_error)?;
        for run in &utils {
            if let [single] = run.as_slice() {
                util.draw_series(std::iter::once(Circle::new(
                    *single,
                    2,
                    util_color.filled(),
                )))
                .map_err(draw_error)?;
            } else {
                util.draw_series(LineSeries::new(
                    run.iter().copied(),
                    util_color.stroke_width(2),
                ))
                .map_err(draw_error)?;
            }
        }

        // The legend, level with the counts' plot top, one entry a row.
        let entries = [
            (labels.desired, desired_color, false),
            (labels.ready, ready_color, false),
            (labels.warming, warming_color, true),
            (labels.util, util_color, false),
        ];
        for (n, (label, color, band)) in entries.into_iter().enumerate() {
            let y = LEGEND_TOP_PX + LEGEND_ROW_PX * n as i32;
            if band {
                legend
                    .draw(&Rectangle::new(
                        [(6, y - 5), (20, y + 5)],
                        color.mix(0.35).filled(),
                    ))
                    .map_err(draw_error)?;
            } else {
                legend
                    .draw(&PathElement::new([(6, y), (20, y)], color.stroke_width(2)))
                    .map_err(draw_error)?;
            }
            legend
                .draw(&Text::new(
                    label.to_string(),
                    (24, y),
                    font.clone().pos(Pos::new(HPos::Left, VPos::Center)),
                ))
                .map_err(draw_error)?;
        }
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_699_999_200_000;
    const LABELS: PoolChartLabels<'static> = PoolChartLabels {
        desired: "desired",
        ready: "ready",
        warming: "warming",
        util: "utilization",
    };

    fn spec(theme: ChartTheme) -> RangeChartSpec<'static> {
        RangeChartSpec {
            title: "render-farm",
            theme,
            width_px: 800,
            height_px: 300,
            from_ms: T0,
            to_ms: T0 + 600_000,
            utc_offset_minutes: 0,
        }
    }

    fn look(minute: i64, desired: u32, ready: u32, warming: u32, util: Option<f32>) -> PoolSample {
        PoolSample {
            at_ms: T0 + minute * 60_000,
            desired,
            ready,
            warming,
            util_pct: util,
        }
    }

    /// A scale-out from 2 to 6: four warming, then ready.
    fn scale_out() -> Vec<PoolSample> {
        vec![
            look(0, 2, 2, 0, Some(97.0)),
            look(1, 6, 2, 4, Some(98.0)),
            look(3, 6, 6, 0, Some(70.0)),
            look(5, 6, 6, 0, Some(99.0)),
        ]
    }

    #[test]
    fn a_count_holds_until_the_next_look() {
        let points = steps(&scale_out()[..3], T0 + 600_000, |s| f64::from(s.desired));
        let at = |minute: i64| (T0 + minute * 60_000) as f64;
        assert_eq!(
            points,
            [
                (at(0), 2.0),
                (at(1), 2.0),
                (at(1), 6.0),
                (at(3), 6.0),
                (at(3), 6.0),
                (at(10), 6.0)
            ]
        );
        assert!(steps(&[], T0, |s| f64::from(s.ready)).is_empty());
    }

    #[test]
    fn it_draws_desired_ready_the_warming_band_and_utilization() {
        for theme in [ChartTheme::Light, ChartTheme::Dark] {
            let svg = pool_svg(&spec(theme), &LABELS, &scale_out()).unwrap();
            for label in [
                "render-farm",
                "desired",
                "ready",
                "warming",
                "utilization",
                "100%",
            ] {
                assert!(svg.contains(label), "{label} in the chart");
            }
            // Ready, desired and utilization lines; the warming band is a polygon.
            assert_eq!(line_xs(&svg).len(), 3, "three lines");
            assert!(svg.contains("<polygon"), "the warming band");
        }
        // Nothing warming: no band.
        let settled = [look(0, 2, 2, 0, Some(50.0)), look(2, 2, 2, 0, None)];
        let svg = pool_svg(&spec(ChartTheme::Light), &LABELS, &settled).unwrap();
        assert!(!svg.contains("<polygon"));
        // No history yet: the axes and the legend, no line.
        let svg = pool_svg(&spec(ChartTheme::Light), &LABELS, &[]).unwrap();
        assert!(line_xs(&svg).is_empty() && svg.contains("desired"));
        assert!(
            pool_svg(
                &RangeChartSpec {
                    to_ms: T0,
                    ..spec(ChartTheme::Light)
                },
                &LABELS,
                &[]
            )
            .is_err()
        );
    }

    /// The x of every point of every `<polyline>` of more than two points (a legend
    /// swatch has two), one list a line.
    fn line_xs(svg: &str) -> Vec<Vec<f64>> {
        svg.split("<polyline")
            .skip(1)
            .map(|element| {
                let points = element.split("points=\"").nth(1).unwrap_or("");
                let points = &points[..points.find('"').unwrap_or(0)];
                points
                    .split_whitespace()
                    .filter_map(|pair| pair.split(',').next()?.parse::<f64>().ok())
                    .collect::<Vec<_>>()
            })
            .filter(|xs| xs.len() > 2)
            .collect()
    }

    fn text_x(svg: &str, label: &str) -> Option<f64> {
        svg.split("<text").skip(1).find_map(|element| {
            let (attrs, rest) = element.split_once('>')?;
            if rest.split('<').next()?.trim() != label {
                return None;
            }
            let x = attrs.split("x=\"").nth(1)?;
            x[..x.find('"')?].parse().ok()
        })
    }

    #[test]
    fn the_legend_stands_beside_the_lines_never_on_them() {
        let zh = PoolChartLabels {
            desired: "期望",
            ready: "就绪",
            warming: "预热中",
            util: "利用率",
        };
        for labels in [LABELS, zh] {
            let svg = pool_svg(&spec(ChartTheme::Dark), &labels, &scale_out()).unwrap();
            let right = line_xs(&svg).into_iter().flatten().fold(f64::MIN, f64::max);
            assert!(right > 600.0, "the lines reach the right edge: {right}");
            for label in [labels.desired, labels.ready, labels.warming, labels.util] {
                let x = text_x(&svg, label).unwrap_or_else(|| panic!("{label} in the legend"));
                assert!(
                    x > right,
                    "{label} at {x} stands right of the lines (to {right})"
                );
            }
        }
    }
}
