//! A replay's chart (the Rules view's "replay before enabling"): demand, the GPUs ready and
//! the GPUs held (paid: ready and warming) each minute of the trace, and every decision
//! marked where the held count changed (▲ ordered, ▼ released). The time axis counts from
//! minute 0 (`H:MM`, then days). The legend has its column right of the plot, as the other
//! charts', so it never covers a line. Pure: numbers in, an SVG string out.

use super::*;
use crate::downsample::Point;

/// What to draw and how big.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayChartSpec<'a> {
    pub title: &'a str,
    pub theme: ChartTheme,
    pub width_px: u32,
    pub height_px: u32,
}

/// The legend's words (the viewer's language); `day` holds `{n}` for the day's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayChartLabels<'a> {
    pub demand: &'a str,
    pub ready: &'a str,
    pub held: &'a str,
    pub scale_out: &'a str,
    pub scale_in: &'a str,
    pub day: &'a str,
}

/// The replay minute by minute: `demand` (GPUs busy), then after each minute's decision
/// the GPUs `ready` and `held`; `initial_gpus` were held before minute 0. The three have
/// the same length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplayChartData<'a> {
    pub demand: &'a [f64],
    pub ready: &'a [u32],
    pub held: &'a [u32],
    pub initial_gpus: u32,
}

/// Minute steps the time axis chooses from.
const MINUTE_STEPS: [u32; 14] = [
    1,
    2,
    5,
    10,
    15,
    30,
    60,
    2 * 60,
    3 * 60,
    6 * 60,
    12 * 60,
    1_440,
    2 * 1_440,
    7 * 1_440,
];

/// Tick minutes over `0..=minutes`, at most `max_ticks`, and the step between them.
fn minute_ticks(minutes: u32, max_ticks: u32) -> (Vec<f64>, u32) {
    let max_ticks = max_ticks.max(2);
    let step = MINUTE_STEPS
        .iter()
        .copied()
        .find(|step| minutes / step < max_ticks)
        .unwrap_or_else(|| 7 * 1_440 * (minutes / (7 * 1_440) / max_ticks + 1));
    let ticks = (0..=minutes / step).map(|n| f64::from(n * step)).collect();
    (ticks, step)
}

/// A tick's words: `H:MM` from minute 0 while the step is under a day, else the day.
fn minute_label(minute: f64, step: u32, day: &str) -> String {
    let minute = minute.round().max(0.0) as u64;
    if step >= 1_440 {
        day.replace("{n}", &(minute / 1_440).to_string())
    } else {
        format!("{}:{:02}", minute / 60, minute % 60)
    }
}

/// The points of one series for a plot `columns` pixels wide: as steps (each minute's
/// value held to the next) while the minutes fit the pixels, else M4 per pixel column.
fn line_points(values: &[f64], columns: u32, step: bool) -> Vec<(f64, f64)> {
    let n = values.len();
    if n <= columns as usize {
        let mut out = Vec::with_capacity(n * 2);
        for (t, &v) in values.iter().enumerate() {
            if step && t > 0 {
                out.push((t as f64, values[t - 1]));
            }
            out.push((t as f64, v));
        }
        return out;
    }
    let points: Vec<Point> = values
        .iter()
        .enumerate()
        .map(|(t, &v)| Point::single(t as i64, v as f32))
        .collect();
    m4(&points, 0, n as i64 - 1, columns)
        .into_iter()
        .map(|point| (point.t_ms as f64, f64::from(point.avg)))
        .collect()
}

/// Where the held count changed: (minute, held after, +1 ordered / −1 released), at most
/// one mark per direction per `bucket` minutes (the first in it), so a month stays legible.
pub fn decision_marks(held: &[u32], initial_gpus: u32, bucket: usize) -> Vec<(usize, u32, i8)> {
    let bucket = bucket.max(1);
    let mut marks = Vec::new();
    let mut last_bucket: [Option<usize>; 2] = [None, None];
    let mut before = initial_gpus;
    for (t, &now) in held.iter().enumerate() {
        if now != before {
            let direction: i8 = if now > before { 1 } else { -1 };
            let slot = usize::from(direction < 0);
            if last_bucket[slot] != Some(t / bucket) {
                last_bucket[slot] = Some(t / bucket);
                marks.push((t, now, direction));
            }
        }
        before = now;
    }
    marks
}

/// The replay chart as SVG.
pub fn replay_svg(
    spec: &ReplayChartSpec<'_>,
    labels: &ReplayChartLabels<'_>,
    data: &ReplayChartData<'_>,
) -> Result<String, ChartError> {
    check_size(spec.width_px, spec.height_px)?;
    let colors = palette(spec.theme);
    let (ready_color, held_color, demand_color) =
        (colors.lines[0], colors.lines[1], colors.lines[2]);
    let (out_color, in_color) = (colors.lines[3], colors.lines[4]);
    let n = data.demand.len().min(data.ready.len()).min(data.held.len());
    let minutes = u32::try_from(n.saturating_sub(1))
        .unwrap_or(u32::MAX)
        .max(1);
    let top = data.demand[..n]
        .iter()
        .copied()
        .fold(0.0_f64, f64::max)
        .max(f64::from(data.held[..n].iter().copied().max().unwrap_or(0)))
        .max(f64::from(data.initial_gpus));
    let upper = (top * 1.1).ceil().max(2.0);

    let entries = [
        labels.demand,
        labels.ready,
        labels.held,
        labels.scale_out,
        labels.scale_in,
    ];
    let chars = entries
        .iter()
        .map(|label| label.chars().count())
        .max()
        .unwrap_or(0);
    // CJK glyphs are about twice as wide as Latin ones.
    let wide = entries
        .iter()
        .any(|label| label.chars().any(|c| c as u32 > 0x2E80));
    let per_char = if wide { 12 } else { 7 };
    let legend_px = (30 + chars as u32 * per_char)
        .clamp(56, 200)
        .min(spec.width_px / 3);
    let columns = spec.width_px.saturating_sub(legend_px + 80).max(10);
    let (ticks, step) = minute_ticks(minutes, (columns / 80).max(2));
    let x_format = |t: &f64| minute_label(*t, step, labels.day);

    let as_f64 = |values: &[u32]| {
        values[..n]
            .iter()
            .map(|&v| f64::from(v))
            .collect::<Vec<_>>()
    };
    let demand = line_points(&data.demand[..n], columns, false);
    let ready = line_points(&as_f64(data.ready), columns, true);
    let held = line_points(&as_f64(data.held), columns, true);
    let bucket = n.div_ceil(columns as usize / 4).max(1);
    let marks = decision_marks(&data.held[..n], data.initial_gpus, bucket);

    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (spec.width_px, spec.height_px)).into_drawing_area();
        root.fill(&colors.background).map_err(draw_error)?;
        let (plot, legend) = root.split_horizontally(spec.width_px - legend_px);
        let font = ("sans-serif", 11).into_font().color(&colors.text);
        let mut chart = ChartBuilder::on(&plot)
            .caption(
                spec.title,
                ("sans-serif", 15).into_font().color(&colors.text),
            )
            .margin(8)
            .margin_right(20)
            .x_label_area_size(26)
            .y_label_area_size(40)
            .build_cartesian_2d(TickedAxis::new(0.0..f64::from(minutes), ticks), 0.0..upper)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .light_line_style(colors.grid.mix(0.35))
            .bold_line_style(colors.grid)
            .axis_style(colors.text.mix(0.6))
            .label_style(font.clone())
            .y_labels(6)
            .x_label_formatter(&x_format)
            .y_label_formatter(&|v: &f64| format!("{v:.0}"))
            .draw()
            .map_err(draw_error)?;
        // Held wide beneath, ready narrow on top (both show where they are equal), demand
        // thin over both.
        for (points, color, width) in [
            (&held, held_color, 5),
            (&ready, ready_color, 2),
            (&demand, demand_color, 1),
        ] {
            if points.len() > 1 {
                chart
                    .draw_series(LineSeries::new(
                        points.iter().copied(),
                        color.stroke_width(width),
                    ))
                    .map_err(draw_error)?;
            }
        }
        let up = |color: RGBColor| Polygon::new(vec![(0, -6), (5, 2), (-5, 2)], color.filled());
        let down = |color: RGBColor| Polygon::new(vec![(0, 6), (5, -2), (-5, -2)], color.filled());
        chart
            .draw_series(marks.iter().map(|&(t, gpus, direction)| {
                let at = (t as f64, f64::from(gpus));
                if direction > 0 {
                    EmptyElement::at(at) + up(out_color)
                } else {
                    EmptyElement::at(at) + down(in_color)
                }
            }))
            .map_err(draw_error)?;

        // The legend, level with the plot's top, one entry a row.
        for (row, label) in entries.into_iter().enumerate() {
            let y = LEGEND_TOP_PX + LEGEND_ROW_PX * row as i32;
            match row {
                0..=2 => {
                    let (color, width) =
                        [(demand_color, 1), (ready_color, 2), (held_color, 4)][row];
                    legend
                        .draw(&PathElement::new(
                            [(6, y), (20, y)],
                            color.stroke_width(width),
                        ))
                        .map_err(draw_error)?;
                }
                3 => legend
                    .draw(&(EmptyElement::at((13, y + 2)) + up(out_color)))
                    .map_err(draw_error)?,
                _ => legend
                    .draw(&(EmptyElement::at((13, y - 2)) + down(in_color)))
                    .map_err(draw_error)?,
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
    use crate::chart::svg_probe::text_x;

    const LABELS: ReplayChartLabels<'static> = ReplayChartLabels {
        demand: "demand",
        ready: "ready",
        held: "held",
        scale_out: "scale-out",
        scale_in: "scale-in",
        day: "day {n}",
    };

    fn spec(theme: ChartTheme) -> ReplayChartSpec<'static> {
        ReplayChartSpec {
            title: "inference",
            theme,
            width_px: 800,
            height_px: 300,
        }
    }

    /// Two hours: 2 GPUs, a rise to 6 at minute 30 (ready 5 minutes later), back at 90.
    fn two_hours() -> (Vec<f64>, Vec<u32>, Vec<u32>) {
        let demand: Vec<f64> = (0..120)
            .map(|t| if (30..90).contains(&t) { 5.5 } else { 1.5 })
            .collect();
        let held: Vec<u32> = (0..120)
            .map(|t| if (30..90).contains(&t) { 6 } else { 2 })
            .collect();
        let ready: Vec<u32> = (0..120)
            .map(|t| if (35..90).contains(&t) { 6 } else { 2 })
            .collect();
        (demand, ready, held)
    }

    /// The `points` of every `<polyline>` of more than two points, one list a line.
    fn lines(svg: &str) -> Vec<Vec<(f64, f64)>> {
        svg.split("<polyline")
            .skip(1)
            .map(|element| {
                let points = element.split("points=\"").nth(1).unwrap_or("");
                let points = &points[..points.find('"').unwrap_or(0)];
                points
                    .split_whitespace()
                    .filter_map(|pair| {
                        let (x, y) = pair.split_once(',')?;
                        Some((x.parse().ok()?, y.parse().ok()?))
                    })
                    .collect::<Vec<_>>()
            })
            .filter(|points| points.len() > 2)
            .collect()
    }

    #[test]
    fn it_draws_demand_ready_held_and_marks_each_decision_in_both_themes() {
        let (demand, ready, held) = two_hours();
        let data = ReplayChartData {
            demand: &demand,
            ready: &ready,
            held: &held,
            initial_gpus: 2,
        };
        for theme in [ChartTheme::Light, ChartTheme::Dark] {
            let svg = replay_svg(&spec(theme), &LABELS, &data).unwrap();
            for label in [
                "inference",
                "demand",
                "ready",
                "held",
                "scale-out",
                "scale-in",
                "0:00",
                "1:00",
            ] {
                assert!(svg.contains(label), "{label} in the chart");
            }
            assert_eq!(lines(&svg).len(), 3, "held, ready and demand");
            // Two decisions (+4 at 30, −4 at 90) and the legend's two swatches.
            assert_eq!(svg.matches("<polygon").count(), 4, "{svg}");
            let background = match theme {
                ChartTheme::Light => "#FFFFFF",
                ChartTheme::Dark => "#161B22",
            };
            assert!(svg.contains(background), "{theme:?} background");
        }
        assert_eq!(
            decision_marks(&held, 2, 1),
            [(30, 6, 1), (90, 2, -1)],
            "where the held count moved"
        );
        assert!(
            replay_svg(
                &ReplayChartSpec {
                    width_px: 10,
                    ..spec(ChartTheme::Light)
                },
                &LABELS,
                &data
            )
            .is_err()
        );
    }

    #[test]
    fn the_legend_stands_beside_the_lines_never_on_them() {
        let (demand, ready, held) = two_hours();
        let data = ReplayChartData {
            demand: &demand,
            ready: &ready,
            held: &held,
            initial_gpus: 2,
        };
        let zh = ReplayChartLabels {
            demand: "需求",
            ready: "就绪",
            held: "持有",
            scale_out: "扩容",
            scale_in: "缩容",
            day: "第 {n} 天",
        };
        for labels in [LABELS, zh] {
            let svg = replay_svg(&spec(ChartTheme::Dark), &labels, &data).unwrap();
            let right = lines(&svg)
                .into_iter()
                .flatten()
                .map(|(x, _)| x)
                .fold(f64::MIN, f64::max);
            assert!(right > 550.0, "the lines reach the right edge: {right}");
            for label in [
                labels.demand,
                labels.ready,
                labels.held,
                labels.scale_out,
                labels.scale_in,
            ] {
                let x = text_x(&svg, label).unwrap_or_else(|| panic!("{label} in the legend"));
                assert!(x > right, "{label} at {x} right of the lines (to {right})");
            }
        }
    }

    #[test]
    fn a_month_of_minutes_stays_small_and_is_labelled_in_days() {
        let minutes = 30 * 1_440;
        let demand: Vec<f64> = (0..minutes)
            .map(|t| 4.0 + 3.0 * ((t as f64) / 240.0).sin())
            .collect();
        let held: Vec<u32> = demand.iter().map(|d| d.ceil() as u32 + 1).collect();
        let data = ReplayChartData {
            demand: &demand,
            ready: &held,
            held: &held,
            initial_gpus: 5,
        };
        let svg = replay_svg(&spec(ChartTheme::Light), &LABELS, &data).unwrap();
        assert!(svg.len() < 400_000, "{} bytes", svg.len());
        assert!(svg.contains("day 7"), "days on the axis");
        // Marks thinned to a few per pixel column at most.
        assert!(svg.matches("<polygon").count() < 800);
    }

    #[test]
    fn ticks_are_round_minutes() {
        assert_eq!(
            minute_ticks(120, 8),
            (vec![0.0, 30.0, 60.0, 90.0, 120.0], 30)
        );
        assert_eq!(minute_label(90.0, 30, "day {n}"), "1:30");
        assert_eq!(minute_label(2_880.0, 1_440, "第 {n} 天"), "第 2 天");
    }
}
