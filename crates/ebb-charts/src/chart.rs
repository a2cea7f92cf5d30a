//! Charts drawn with plotters to SVG. Pure: values in, an SVG string out.
//!
//! Line charts draw each series' mean as a line and, where a point summarizes several
//! readings, its min-max range as a faint band, so a spike stays visible at any zoom.
//! Every series is cut to the plot's pixel width with M4 ([`crate::downsample`]) before
//! drawing, so a chart costs the same for a day of seconds as for five minutes. A gap in
//! the data is a gap in the line, never a slope to zero. [`crate::raster`] turns an SVG
//! into a PNG.

use crate::calendar::civil_from_days;
use crate::downsample::{Point, m4};
use crate::history::{AggregateSeries, GpuSeries, Heatmap};
use crate::series;
use ebb_wire::ipc::ChartMetric;
use ebb_wire::ipc::ChartTheme;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::Range;

mod pool;
mod replay;

/// What the chart tests read back out of a drawn SVG.
#[cfg(test)]
pub(crate) mod svg_probe {
    /// The x of the `<text>` whose words are `label`.
    pub(crate) fn text_x(svg: &str, label: &str) -> Option<f64> {
        svg.split("<text").skip(1).find_map(|element| {
            let (attrs, rest) = element.split_once('>')?;
            if rest.split('<').next()?.trim() != label {
                return None;
            }
            let x = attrs.split("x=\"").nth(1)?;
            x[..x.find('"')?].parse().ok()
        })
    }
}
pub use pool::{Decided, PoolChartLabels, decisions_in, pool_chart, pool_svg, steps};
pub use replay::{ReplayChartData, ReplayChartLabels, ReplayChartSpec, decision_marks, replay_svg};

/// The smallest and largest chart the renderer accepts, in pixels.
pub const MIN_SIZE_PX: u32 = 120;
pub const MAX_SIZE_PX: u32 = 4096;

/// The live chart: what to draw and how big.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChartSpec<'a> {
    pub title: &'a str,
    pub theme: ChartTheme,
    pub width_px: u32,
    pub height_px: u32,
    /// The right edge of the time axis, Unix milliseconds.
    pub now_ms: f64,
    /// How far back the time axis reaches.
    pub window_s: u32,
}

/// A chart of a stored time range: what to draw and how big.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RangeChartSpec<'a> {
    pub title: &'a str,
    pub theme: ChartTheme,
    pub width_px: u32,
    pub height_px: u32,
    /// The time axis, Unix milliseconds, inclusive.
    pub from_ms: i64,
    pub to_ms: i64,
    /// Added to UTC for the clock labels (the viewer's time zone; 480 for UTC+8).
    pub utc_offset_minutes: i32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChartError {
    #[error("{field} must be between {MIN_SIZE_PX} and {MAX_SIZE_PX} pixels, got {value}")]
    Size { field: &'static str, value: u32 },
    #[error("window_s must be at least 1 second")]
    Window,
    #[error("to_ms must be after from_ms ({from_ms}), got {to_ms}")]
    Range { from_ms: i64, to_ms: i64 },
    #[error("utc_offset_minutes must be within ±18 hours, got {0}")]
    Offset(i32),
    #[error("drawing failed: {0}")]
    Draw(String),
}

fn draw_error(error: impl std::fmt::Display) -> ChartError {
    ChartError::Draw(error.to_string())
}

struct Palette {
    background: RGBColor,
    text: RGBColor,
    grid: RGBColor,
    lines: [RGBColor; 8],
}

fn palette(theme: ChartTheme) -> Palette {
    match theme {
        ChartTheme::Light => Palette {
            background: RGBColor(255, 255, 255),
            text: RGBColor(40, 48, 60),
            grid: RGBColor(226, 230, 236),
            lines: [
                RGBColor(14, 116, 144),
                RGBColor(217, 119, 6),
                RGBColor(79, 70, 229),
                RGBColor(22, 163, 74),
                RGBColor(219, 39, 119),
                RGBColor(100, 116, 139),
                RGBColor(202, 138, 4),
                RGBColor(147, 51, 234),
            ],
        },
        ChartTheme::Dark => Palette {
            background: RGBColor(22, 27, 34),
            text: RGBColor(214, 221, 230),
            grid: RGBColor(48, 56, 68),
            lines: [
                RGBColor(45, 212, 191),
                RGBColor(251, 191, 36),
                RGBColor(129, 140, 248),
                RGBColor(74, 222, 128),
                RGBColor(244, 114, 182),
                RGBColor(148, 163, 184),
                RGBColor(250, 204, 21),
                RGBColor(192, 132, 252),
            ],
        },
    }
}

fn check_size(width_px: u32, height_px: u32) -> Result<(), ChartError> {
    for (field, value) in [("width_px", width_px), ("height_px", height_px)] {
        if !(MIN_SIZE_PX..=MAX_SIZE_PX).contains(&value) {
            return Err(ChartError::Size { field, value });
        }
    }
    Ok(())
}

impl RangeChartSpec<'_> {
    fn validate(&self) -> Result<(), ChartError> {
        check_size(self.width_px, self.height_px)?;
        if self.to_ms <= self.from_ms {
            return Err(ChartError::Range {
                from_ms: self.from_ms,
                to_ms: self.to_ms,
            });
        }
        if self.utc_offset_minutes.abs() > 18 * 60 {
            return Err(ChartError::Offset(self.utc_offset_minutes));
        }
        Ok(())
    }
}

/// How the time axis is labelled.
#[derive(Debug, Clone, Copy)]
enum TimeLabels {
    /// Seconds (minutes, hours, days) before `to_ms`: "-30s", "-2h".
    Relative,
    /// Wall-clock time at this offset from UTC: "14:30", "03-18".
    Clock { offset_ms: i64 },
}

/// Tick steps the time axis chooses from.
const TICK_STEPS_MS: [i64; 22] = [
    1_000,
    2_000,
    5_000,
    10_000,
    15_000,
    30_000,
    60_000,
    2 * 60_000,
    5 * 60_000,
    10 * 60_000,
    15 * 60_000,
    30 * 60_000,
    3_600_000,
    2 * 3_600_000,
    3 * 3_600_000,
    6 * 3_600_000,
    12 * 3_600_000,
    86_400_000,
    2 * 86_400_000,
    7 * 86_400_000,
    14 * 86_400_000,
    28 * 86_400_000,
];

/// Round tick times over `from..=to`: at most `max_ticks`, aligned to the step (for clock
/// labels in local time; for relative labels counted back from `to`).
fn time_ticks(from_ms: i64, to_ms: i64, labels: TimeLabels, max_ticks: i64) -> (Vec<f64>, i64) {
    let span = to_ms.saturating_sub(from_ms).max(1);
    let step = TICK_STEPS_MS
        .iter()
        .copied()
        .find(|step| span / step < max_ticks.max(1))
        .unwrap_or_else(|| {
            let last = TICK_STEPS_MS[TICK_STEPS_MS.len() - 1];
            last * (span / last / max_ticks.max(1) + 1)
        });
    let mut ticks = Vec::new();
    match labels {
        TimeLabels::Relative => {
            let mut t = to_ms;
            while t >= from_ms {
                ticks.push(t as f64);
                t -= step;
            }
            ticks.reverse();
        }
        TimeLabels::Clock { offset_ms } => {
            let local = from_ms + offset_ms;
            let mut t = local.div_euclid(step) * step - offset_ms;
            if t < from_ms {
                t += step;
            }
            while t <= to_ms {
                ticks.push(t as f64);
                t += step;
            }
        }
    }
    (ticks, step)
}

fn time_label(t_ms: f64, to_ms: i64, step_ms: i64, labels: TimeLabels) -> String {
    let t_ms = t_ms.round() as i64;
    match labels {
        TimeLabels::Relative => {
            let back_s = (to_ms - t_ms) / 1000;
            if back_s == 0 {
                "0s".into()
            } else if step_ms >= 86_400_000 {
                format!("-{}d", back_s / 86_400)
            } else if step_ms >= 3_600_000 {
                format!("-{}h", back_s / 3_600)
            } else if step_ms >= 60_000 {
                format!("-{}m", back_s / 60)
            } else {
                format!("-{back_s}s")
            }
        }
        TimeLabels::Clock { offset_ms } => {
            let local = t_ms + offset_ms;
            let day_ms = local.rem_euclid(86_400_000);
            let (hours, minutes, seconds) = (
                day_ms / 3_600_000,
                day_ms / 60_000 % 60,
                day_ms / 1_000 % 60,
            );
            if step_ms >= 86_400_000 {
                let (_, month, day) = civil_from_days(local.div_euclid(86_400_000));
                format!("{month:02}-{day:02}")
            } else if step_ms >= 60_000 {
                format!("{hours:02}:{minutes:02}")
            } else {
                format!("{hours:02}:{minutes:02}:{seconds:02}")
            }
        }
    }
}

/// A linear axis with ticks we choose (plotters' own picks decimal round numbers, and its
/// `with_key_points` cannot take a label formatter for `f64`).
struct TickedAxis {
    linear: RangedCoordf64,
    ticks: Vec<f64>,
}

impl TickedAxis {
    fn new(range: Range<f64>, ticks: Vec<f64>) -> Self {
        Self {
            linear: range.into(),
            ticks,
        }
    }
}

impl Ranged for TickedAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.linear.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.linear.range()
    }
}

/// The value axis of a line chart: data × `scale` is drawn on `0..=upper`.
#[derive(Debug, Clone, Copy)]
struct ValueAxis {
    scale: f64,
    upper: f64,
    unit: &'static str,
    decimals: usize,
}

/// The smallest of 1, 2, 2.5, 5 × 10^k at or above `value`.
fn nice_ceil(value: f64) -> f64 {
    if !value.is_finite() || value <= 0.0 {
        return 1.0;
    }
    let magnitude = 10f64.powf(value.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|factor| factor * magnitude)
        .find(|nice| *nice >= value * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
}

fn value_axis(metric: ChartMetric, largest: Option<f32>) -> ValueAxis {
    let largest = largest.map(f64::from);
    match metric {
        ChartMetric::Util | ChartMetric::MemoryPct => ValueAxis {
            scale: 1.0,
            upper: 100.0,
            unit: "%",
            decimals: 0,
        },
        ChartMetric::MemoryUsed => {
            let gib = largest.unwrap_or(1024.0) / 1024.0;
            let upper = nice_ceil(gib.max(1.0));
            ValueAxis {
                scale: 1.0 / 1024.0,
                upper,
                unit: " GiB",
                decimals: usize::from(upper < 5.0),
            }
        }
        ChartMetric::Temperature => ValueAxis {
            scale: 1.0,
            upper: nice_ceil(largest.unwrap_or(100.0).max(50.0)),
            unit: "°C",
            decimals: 0,
        },
        ChartMetric::Power => ValueAxis {
            scale: 1.0,
            upper: nice_ceil(largest.unwrap_or(100.0).max(10.0)),
            unit: " W",
            decimals: 0,
        },
    }
}

/// One line to draw: a legend label and its points in time order.
struct Line<'a> {
    label: String,
    points: &'a [Point],
}

/// Everything a line chart needs besides its lines.
struct Frame<'a> {
    title: &'a str,
    theme: ChartTheme,
    width_px: u32,
    height_px: u32,
    from_ms: i64,
    to_ms: i64,
    labels: TimeLabels,
    axis: ValueAxis,
}

/// Splits time-ordered points where two neighbours are further apart than `gap_ms`.
fn segments(points: &[Point], gap_ms: i64) -> impl Iterator<Item = &[Point]> {
    points.chunk_by(move |a, b| b.t_ms - a.t_ms <= gap_ms)
}

/// The widest step that is still "no gap": three typical steps, or two pixel columns.
fn gap_threshold_ms(points: &[Point], column_ms: f64) -> i64 {
    let mut steps: Vec<i64> = points
        .windows(2)
        .map(|pair| pair[1].t_ms - pair[0].t_ms)
        .filter(|step| *step > 0)
        .collect();
    let typical = if steps.is_empty() {
        0
    } else {
        let middle = steps.len() / 2;
        *steps.select_nth_unstable(middle).1
    };
    (3 * typical).max((2.0 * column_ms).ceil() as i64)
}

fn draw_lines(frame: &Frame<'_>, lines: &[Line<'_>]) -> Result<String, ChartError> {
    let colors = palette(frame.theme);
    let axis = frame.axis;
    let (from, to) = (frame.from_ms as f64, frame.to_ms as f64);
    let plot_width_guess = i64::from(frame.width_px.saturating_sub(64)).max(1);
    let (ticks, step_ms) = time_ticks(
        frame.from_ms,
        frame.to_ms,
        frame.labels,
        (plot_width_guess / 90).max(2),
    );
    let x_format = |t: &f64| time_label(*t, frame.to_ms, step_ms, frame.labels);
    let y_format = |v: &f64| format!("{v:.prec$}{}", axis.unit, prec = axis.decimals);
    // The legend has a column of its own right of the plot, so it never covers a line.
    let show_legend = !lines.is_empty() && lines.len() <= colors.lines.len();
    let legend_px = if show_legend {
        legend_width_px(lines).min(frame.width_px / 3)
    } else {
        0
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (frame.width_px, frame.height_px))
            .into_drawing_area();
        root.fill(&colors.background).map_err(draw_error)?;
        let (plot_area, legend_area) = root.split_horizontally(frame.width_px - legend_px);
        let mut chart = ChartBuilder::on(&plot_area)
            .caption(
                frame.title,
                ("sans-serif", 15).into_font().color(&colors.text),
            )
            .margin(8)
            // Room for the time label centred on the right edge.
            .margin_right(20)
            .x_label_area_size(26)
            .y_label_area_size(if axis.unit.len() > 2 { 52 } else { 40 })
            .build_cartesian_2d(TickedAxis::new(from..to, ticks), 0.0..axis.upper)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .light_line_style(colors.grid.mix(0.35))
            .bold_line_style(colors.grid)
            .axis_style(colors.text.mix(0.6))
            .label_style(("sans-serif", 11).into_font().color(&colors.text))
            .y_labels(5)
            .x_label_formatter(&x_format)
            .y_label_formatter(&y_format)
            .draw()
            .map_err(draw_error)?;
        let columns = chart.plotting_area().dim_in_pixel().0.max(1);
        let column_ms = (to - from) / f64::from(columns);
        let scaled = |value: f32| (f64::from(value) * axis.scale).clamp(0.0, axis.upper);
        for (n, line) in lines.iter().enumerate() {
            let color = colors.lines[n % colors.lines.len()];
            let points = m4(line.points, frame.from_ms, frame.to_ms, columns);
            let gap_ms = gap_threshold_ms(&points, column_ms);
            for segment in segments(&points, gap_ms) {
                if segment.iter().any(|point| point.max > point.min) {
                    let band: Vec<(f64, f64)> = segment
                        .iter()
                        .map(|point| (point.t_ms as f64, scaled(point.max)))
                        .chain(
                            segment
                                .iter()
                                .rev()
                                .map(|point| (point.t_ms as f64, scaled(point.min))),
                        )
                        .collect();
                    chart
                        .draw_series(std::iter::once(Polygon::new(band, color.mix(0.18))))
                        .map_err(draw_error)?;
                }
                if let [single] = segment {
                    chart
                        .draw_series(std::iter::once(Circle::new(
                            (single.t_ms as f64, scaled(single.avg)),
                            2,
                            color.filled(),
                        )))
                        .map_err(draw_error)?;
                }
            }
            for segment in segments(&points, gap_ms).filter(|segment| segment.len() > 1) {
                chart
                    .draw_series(LineSeries::new(
                        segment
                            .iter()
                            .map(|point| (point.t_ms as f64, scaled(point.avg))),
                        color.stroke_width(2),
                    ))
                    .map_err(draw_error)?;
            }
        }
        if show_legend {
            // Level with the plot's top (below the caption), one entry a row.
            let font = ("sans-serif", 11).into_font().color(&colors.text);
            for (n, line) in lines.iter().enumerate() {
                let color = colors.lines[n % colors.lines.len()];
                let y = LEGEND_TOP_PX + LEGEND_ROW_PX * n as i32;
                legend_area
                    .draw(&PathElement::new([(6, y), (20, y)], color.stroke_width(2)))
                    .map_err(draw_error)?;
                legend_area
                    .draw(&Text::new(
                        line.label.clone(),
                        (24, y),
                        font.clone().pos(Pos::new(HPos::Left, VPos::Center)),
                    ))
                    .map_err(draw_error)?;
            }
        }
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

/// Where the legend's first entry sits (below the caption) and how far apart they are.
const LEGEND_TOP_PX: i32 = 44;
const LEGEND_ROW_PX: i32 = 16;

/// The legend column's width: the swatch, the gap and the longest label (about 6.5 px a
/// character at 11 px), within 56 to 200 px.
fn legend_width_px(lines: &[Line<'_>]) -> u32 {
    let chars = lines
        .iter()
        .map(|line| line.label.chars().count())
        .max()
        .unwrap_or(0);
    (30 + (chars as u32 * 13).div_ceil(2)).clamp(56, 200)
}

/// Per-GPU utilization lines over the last `window_s` seconds, 0-100 %: the live chart.
pub fn utilization_svg(
    spec: &ChartSpec<'_>,
    series: &[series::GpuSeries],
) -> Result<String, ChartError> {
    check_size(spec.width_px, spec.height_px)?;
    if spec.window_s == 0 {
        return Err(ChartError::Window);
    }
    let to_ms = spec.now_ms.round() as i64;
    let points: Vec<Vec<Point>> = series
        .iter()
        .map(|gpu| {
            gpu.points
                .iter()
                .map(|point| Point::single(point.t_ms.round() as i64, point.util_pct))
                .collect()
        })
        .collect();
    let lines: Vec<Line<'_>> = series
        .iter()
        .zip(&points)
        .map(|(gpu, points)| Line {
            label: format!("GPU {}", gpu.index),
            points,
        })
        .collect();
    let frame = Frame {
        title: spec.title,
        theme: spec.theme,
        width_px: spec.width_px,
        height_px: spec.height_px,
        from_ms: to_ms - i64::from(spec.window_s) * 1000,
        to_ms,
        labels: TimeLabels::Relative,
        axis: value_axis(ChartMetric::Util, None),
    };
    draw_lines(&frame, &lines)
}

fn range_frame<'a>(
    spec: &RangeChartSpec<'a>,
    metric: ChartMetric,
    largest: Option<f32>,
) -> Frame<'a> {
    Frame {
        title: spec.title,
        theme: spec.theme,
        width_px: spec.width_px,
        height_px: spec.height_px,
        from_ms: spec.from_ms,
        to_ms: spec.to_ms,
        labels: TimeLabels::Clock {
            offset_ms: i64::from(spec.utc_offset_minutes) * 60_000,
        },
        axis: value_axis(metric, largest),
    }
}

fn largest<'a>(points: impl Iterator<Item = &'a Point>) -> Option<f32> {
    points
        .map(|point| point.max)
        .filter(|max| max.is_finite())
        .reduce(f32::max)
}

/// Per-GPU lines of any metric over a stored range (utilization, memory, temperature,
/// power): the store's [`GpuSeries`] as they come. Labelled "GPU n", or "host GPU n" when
/// the series span several hosts.
pub fn gpu_lines_svg(
    spec: &RangeChartSpec<'_>,
    metric: ChartMetric,
    series: &[GpuSeries],
) -> Result<String, ChartError> {
    spec.validate()?;
    let one_host = series.windows(2).all(|pair| pair[0].host == pair[1].host);
    let lines: Vec<Line<'_>> = series
        .iter()
        .map(|gpu| Line {
            label: if one_host {
                format!("GPU {}", gpu.gpu_index)
            } else {
                format!("{} GPU {}", gpu.host, gpu.gpu_index)
            },
            points: &gpu.points,
        })
        .collect();
    let top = largest(series.iter().flat_map(|gpu| &gpu.points));
    draw_lines(&range_frame(spec, metric, top), &lines)
}

/// Host or region aggregate lines (the mean of their GPUs, with the min-max band).
pub fn aggregate_lines_svg(
    spec: &RangeChartSpec<'_>,
    metric: ChartMetric,
    series: &[AggregateSeries],
) -> Result<String, ChartError> {
    spec.validate()?;
    let lines: Vec<Line<'_>> = series
        .iter()
        .map(|aggregate| Line {
            label: aggregate.name.clone(),
            points: &aggregate.points,
        })
        .collect();
    let top = largest(series.iter().flat_map(|aggregate| &aggregate.points));
    draw_lines(&range_frame(spec, metric, top), &lines)
}

/// Viridis, sampled: dark blue (low) to yellow (high), readable on both themes and by
/// colour-blind eyes.
const HEAT_STOPS: [(f64, [u8; 3]); 5] = [
    (0.0, [68, 1, 84]),
    (0.25, [59, 82, 139]),
    (0.5, [33, 145, 140]),
    (0.75, [94, 201, 98]),
    (1.0, [253, 231, 37]),
];
/// Colour levels a heatmap uses; neighbouring cells of one level are drawn as one shape.
const HEAT_LEVELS: u32 = 64;

/// The colour of `share` (0 to 1) on the heat scale.
fn heat_color(share: f64) -> RGBColor {
    let share = share.clamp(0.0, 1.0);
    let upper = HEAT_STOPS
        .iter()
        .position(|(at, _)| *at >= share)
        .unwrap_or(HEAT_STOPS.len() - 1)
        .max(1);
    let (a_at, a) = HEAT_STOPS[upper - 1];
    let (b_at, b) = HEAT_STOPS[upper];
    let f = (share - a_at) / (b_at - a_at);
    let mix = |i: usize| (f64::from(a[i]) + f * (f64::from(b[i]) - f64::from(a[i]))).round() as u8;
    RGBColor(mix(0), mix(1), mix(2))
}

/// Means of the `Some` values in each group of `group` neighbours.
fn merge_cells(cells: &[Option<f32>], group: usize) -> Vec<Option<f32>> {
    cells
        .chunks(group.max(1))
        .map(|chunk| {
            let (sum, count) = chunk
                .iter()
                .flatten()
                .fold((0.0f64, 0u32), |(sum, count), value| {
                    (sum + f64::from(*value), count + 1)
                });
            (count > 0).then(|| (sum / f64::from(count)) as f32)
        })
        .collect()
}

fn short(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        text.to_string()
    } else {
        let mut cut: String = text.chars().take(max_chars.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// The fleet heatmap: one row per GPU (by host, then index), one column per time bucket,
/// coloured by the mean value (viridis; percentages on 0-100 %, other metrics on 0 to
/// the largest value). Rows or columns beyond the plot's pixels are merged by mean.
pub fn heatmap_svg(spec: &RangeChartSpec<'_>, heatmap: &Heatmap) -> Result<String, ChartError> {
    spec.validate()?;
    let colors = palette(spec.theme);
    let offset_ms = i64::from(spec.utc_offset_minutes) * 60_000;
    let labels = TimeLabels::Clock { offset_ms };
    let legend_width = 64;
    let label_area = 104;
    let plot_width = spec
        .width_px
        .saturating_sub(label_area + legend_width + 16)
        .max(1);
    let plot_height = spec.height_px.saturating_sub(26 + 30 + 16).max(1);
    let (ticks, step_ms) = time_ticks(
        spec.from_ms,
        spec.to_ms,
        labels,
        (i64::from(plot_width) / 90).max(2),
    );
    let upper = if heatmap.metric.is_percent() {
        100.0
    } else {
        let top = heatmap
            .rows
            .iter()
            .flat_map(|row| row.cells.iter().flatten())
            .copied()
            .filter(|value| value.is_finite())
            .reduce(f32::max);
        nice_ceil(f64::from(top.unwrap_or(1.0)))
    };
    let axis = value_axis(heatmap.metric, Some(upper as f32));
    let row_group = heatmap.rows.len().div_ceil(plot_height as usize).max(1);
    let column_group = (heatmap.columns as usize)
        .div_ceil(plot_width as usize)
        .max(1);
    // Drawn rows: each the mean of `row_group` GPUs' merged cells, with its label.
    let drawn: Vec<(String, Vec<Option<f32>>)> = heatmap
        .rows
        .chunks(row_group)
        .map(|group| {
            let first = &group[0];
            let label = if group.len() == 1 {
                format!("{} GPU {}", short(&first.host, 12), first.gpu_index)
            } else {
                format!("{} GPU {}+", short(&first.host, 12), first.gpu_index)
            };
            let columns = group.iter().map(|row| row.cells.len()).max().unwrap_or(0);
            let means: Vec<Option<f32>> = (0..columns)
                .map(|column| {
                    let values: Vec<f32> = group
                        .iter()
                        .filter_map(|row| row.cells.get(column).copied().flatten())
                        .collect();
                    (!values.is_empty()).then(|| values.iter().sum::<f32>() / values.len() as f32)
                })
                .collect();
            (label, merge_cells(&means, column_group))
        })
        .collect();
    let rows = drawn.len().max(1) as f64;
    let row_px = f64::from(plot_height) / rows;
    let label_every = (14.0 / row_px).ceil().max(1.0) as usize;
    let row_ticks: Vec<f64> = (0..drawn.len())
        .step_by(label_every)
        .map(|row| rows - row as f64 - 0.5)
        .collect();
    let x_format = |t: &f64| time_label(*t, spec.to_ms, step_ms, labels);
    let y_format = |y: &f64| {
        let row = (rows - y).floor() as usize;
        drawn
            .get(row)
            .map(|(label, _)| label.clone())
            .unwrap_or_default()
    };
    let bucket_ms = heatmap.bucket_ms.max(1) * column_group as i64;
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (spec.width_px, spec.height_px)).into_drawing_area();
        root.fill(&colors.background).map_err(draw_error)?;
        let (main, side) = root.split_horizontally(spec.width_px - legend_width);
        let mut chart = ChartBuilder::on(&main)
            .caption(
                spec.title,
                ("sans-serif", 15).into_font().color(&colors.text),
            )
            .margin(8)
            .x_label_area_size(26)
            .y_label_area_size(label_area)
            .build_cartesian_2d(
                TickedAxis::new(spec.from_ms as f64..spec.to_ms as f64, ticks),
                TickedAxis::new(0.0..rows, row_ticks),
            )
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .axis_style(colors.text.mix(0.6))
            .label_style(("sans-serif", 11).into_font().color(&colors.text))
            .x_label_formatter(&x_format)
            .y_label_formatter(&y_format)
            .draw()
            .map_err(draw_error)?;
        let level_of = |value: Option<f32>| {
            value.map(|value| {
                let share = f64::from(value) / upper;
                (share.clamp(0.0, 1.0) * f64::from(HEAT_LEVELS - 1)).round() as u32
            })
        };
        let mut cells = Vec::new();
        for (row, (_, values)) in drawn.iter().enumerate() {
            let (y_top, y_bottom) = (rows - row as f64, rows - row as f64 - 1.0);
            // Runs of one level become one rectangle.
            let mut first = 0usize;
            for run in values.chunk_by(|a, b| level_of(*a) == level_of(*b)) {
                let run_first = first;
                first += run.len();
                let first = run_first;
                let x0 = (heatmap.from_ms + first as i64 * bucket_ms).max(spec.from_ms);
                let x1 = (heatmap.from_ms + (first + run.len()) as i64 * bucket_ms).min(spec.to_ms);
                if x1 <= x0 {
                    continue;
                }
                let fill = match level_of(run[0]) {
                    Some(level) => heat_color(f64::from(level) / f64::from(HEAT_LEVELS - 1)),
                    None => colors.grid,
                };
                cells.push(Rectangle::new(
                    [(x0 as f64, y_top), (x1 as f64, y_bottom)],
                    fill.filled(),
                ));
            }
        }
        chart.draw_series(cells).map_err(draw_error)?;
        draw_heat_legend(&side, &colors, &axis, upper, spec.height_px)?;
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

/// The colour scale beside the heatmap: a bar from 0 (bottom) to `upper` (top).
fn draw_heat_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    colors: &Palette,
    axis: &ValueAxis,
    upper: f64,
    height_px: u32,
) -> Result<(), ChartError> {
    let steps = 32i32;
    let (top, bottom) = (34i32, height_px as i32 - 34);
    let slice = ((bottom - top) / steps).max(1);
    for step in 0..steps {
        let y0 = bottom - (step + 1) * slice;
        let color = heat_color(f64::from(step) / f64::from(steps - 1));
        area.draw(&Rectangle::new([(8, y0), (22, y0 + slice)], color.filled()))
            .map_err(draw_error)?;
    }
    let font = ("sans-serif", 11).into_font().color(&colors.text);
    let label = |value: f64| {
        format!(
            "{:.prec$}{}",
            value * axis.scale,
            axis.unit,
            prec = axis.decimals
        )
    };
    area.draw(&Text::new(
        label(upper),
        (26, bottom - steps * slice - 4),
        font.clone(),
    ))
    .map_err(draw_error)?;
    area.draw(&Text::new(label(0.0), (26, bottom - 10), font))
        .map_err(draw_error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::Point as LivePoint;

    fn spec(theme: ChartTheme) -> ChartSpec<'static> {
        ChartSpec {
            title: "host-a",
            theme,
            width_px: 640,
            height_px: 240,
            now_ms: 60_000.0,
            window_s: 60,
        }
    }

    fn series(utils: &[f32]) -> Vec<series::GpuSeries> {
        vec![series::GpuSeries {
            index: 0,
            model: "A100".into(),
            points: utils
                .iter()
                .enumerate()
                .map(|(second, util)| LivePoint {
                    t_ms: 1000.0 * second as f64,
                    util_pct: *util,
                })
                .collect(),
        }]
    }

    #[test]
    fn draws_an_svg_that_changes_with_the_data() {
        let a = utilization_svg(&spec(ChartTheme::Light), &series(&[10.0, 20.0, 30.0])).unwrap();
        let b = utilization_svg(&spec(ChartTheme::Light), &series(&[10.0, 20.0, 90.0])).unwrap();
        assert!(a.starts_with("<svg"), "{}", &a[..40.min(a.len())]);
        assert!(a.contains("GPU 0"));
        assert!(a.contains("host-a"));
        assert!(a.contains("-30s"), "relative time labels");
        assert_ne!(a, b);
    }

    #[test]
    fn themes_use_their_own_background() {
        let light = utilization_svg(&spec(ChartTheme::Light), &[]).unwrap();
        let dark = utilization_svg(&spec(ChartTheme::Dark), &[]).unwrap();
        assert!(light.contains("#FFFFFF"), "light background");
        assert!(dark.contains("#161B22"), "dark background");
    }

    #[test]
    fn rejects_sizes_naming_the_field() {
        let mut bad = spec(ChartTheme::Light);
        bad.width_px = 5;
        let error = utilization_svg(&bad, &[]).unwrap_err();
        assert_eq!(
            error,
            ChartError::Size {
                field: "width_px",
                value: 5
            }
        );
        assert!(error.to_string().contains("width_px"));
        bad.width_px = 640;
        bad.height_px = 100_000;
        assert!(
            utilization_svg(&bad, &[])
                .unwrap_err()
                .to_string()
                .contains("height_px")
        );
    }

    #[test]
    fn clock_ticks_are_round_local_times() {
        // 2023-11-14 22:13:20 UTC to 24 h later, labelled at UTC+8.
        let from = 1_700_000_000_000;
        let labels = TimeLabels::Clock {
            offset_ms: 8 * 3_600_000,
        };
        let (ticks, step) = time_ticks(from, from + 86_400_000, labels, 8);
        assert_eq!(step, 6 * 3_600_000);
        let shown: Vec<String> = ticks
            .iter()
            .map(|t| time_label(*t, from + 86_400_000, step, labels))
            .collect();
        assert_eq!(shown, vec!["12:00", "18:00", "00:00", "06:00"]);
        let (ticks, step) = time_ticks(from, from + 7 * 86_400_000, labels, 8);
        assert_eq!(step, 86_400_000);
        assert_eq!(time_label(ticks[0], 0, step, labels), "11-16");
    }

    #[test]
    fn nice_ceilings() {
        assert_eq!(nice_ceil(0.0), 1.0);
        assert_eq!(nice_ceil(73.0), 100.0);
        assert_eq!(nice_ceil(80.0), 100.0);
        assert_eq!(nice_ceil(21.0), 25.0);
        assert_eq!(nice_ceil(400.0), 500.0);
        assert_eq!(nice_ceil(2.0), 2.0);
    }

    #[test]
    fn heat_scale_runs_from_dark_to_bright() {
        assert_eq!(heat_color(0.0), RGBColor(68, 1, 84));
        assert_eq!(heat_color(1.0), RGBColor(253, 231, 37));
        assert_eq!(heat_color(0.5), RGBColor(33, 145, 140));
        assert_eq!(heat_color(7.0), RGBColor(253, 231, 37));
    }

    #[test]
    fn gaps_split_lines() {
        let points: Vec<Point> = [0, 1_000, 2_000, 60_000, 61_000]
            .into_iter()
            .map(|t| Point::single(t, 1.0))
            .collect();
        let threshold = gap_threshold_ms(&points, 100.0);
        assert_eq!(threshold, 3_000);
        let lengths: Vec<usize> = segments(&points, threshold).map(<[Point]>::len).collect();
        assert_eq!(lengths, vec![3, 2]);
    }
}
