//! Charts drawn with plotters to SVG. Pure: values in, an SVG string out.

use crate::series::GpuSeries;
use ebb_wire::ipc::ChartTheme;
use plotters::prelude::*;

/// The smallest and largest chart the renderer accepts, in pixels.
pub const MIN_SIZE_PX: u32 = 120;
pub const MAX_SIZE_PX: u32 = 4096;

/// What to draw and how big.
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

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChartError {
    #[error("{field} must be between {MIN_SIZE_PX} and {MAX_SIZE_PX} pixels, got {value}")]
    Size { field: &'static str, value: u32 },
    #[error("window_s must be at least 1 second")]
    Window,
    #[error("drawing failed: {0}")]
    Draw(String),
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

/// Per-GPU utilization lines over the last `window_s` seconds, 0-100 %.
pub fn utilization_svg(spec: &ChartSpec<'_>, series: &[GpuSeries]) -> Result<String, ChartError> {
    for (field, value) in [("width_px", spec.width_px), ("height_px", spec.height_px)] {
        if !(MIN_SIZE_PX..=MAX_SIZE_PX).contains(&value) {
            return Err(ChartError::Size { field, value });
        }
    }
    if spec.window_s == 0 {
        return Err(ChartError::Window);
    }
    let colors = palette(spec.theme);
    let window = f64::from(spec.window_s);
    let mut svg = String::new();
    {
        let draw = |error: &dyn std::fmt::Display| ChartError::Draw(error.to_string());
        let root =
            SVGBackend::with_string(&mut svg, (spec.width_px, spec.height_px)).into_drawing_area();
        root.fill(&colors.background).map_err(|e| draw(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                spec.title,
                ("sans-serif", 15).into_font().color(&colors.text),
            )
            .margin(8)
            .x_label_area_size(26)
            .y_label_area_size(40)
            .build_cartesian_2d(-window..0.0, 0.0..100.0)
            .map_err(|e| draw(&e))?;
        chart
            .configure_mesh()
            .light_line_style(colors.grid.mix(0.35))
            .bold_line_style(colors.grid)
            .axis_style(colors.text.mix(0.6))
            .label_style(("sans-serif", 11).into_font().color(&colors.text))
            .x_labels(6)
            .y_labels(5)
            .x_label_formatter(&|seconds| format!("{:.0}s", seconds))
            .y_label_formatter(&|pct| format!("{pct:.0}%"))
            .draw()
            .map_err(|e| draw(&e))?;
        for (n, gpu) in series.iter().enumerate() {
            let color = colors.lines[n % colors.lines.len()];
            let points = gpu
                .points
                .iter()
                .map(|point| {
                    (
                        (point.t_ms - spec.now_ms) / 1000.0,
                        f64::from(point.util_pct),
                    )
                })
                .filter(|(seconds, _)| *seconds >= -window && *seconds <= 0.0);
            chart
                .draw_series(LineSeries::new(points, color.stroke_width(2)))
                .map_err(|e| draw(&e))?
                .label(format!("GPU {}", gpu.index))
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 14, y)], color.stroke_width(2))
                });
        }
        if !series.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(colors.background.mix(0.85))
                .border_style(colors.grid)
                .label_font(("sans-serif", 11).into_font().color(&colors.text))
                .draw()
                .map_err(|e| draw(&e))?;
        }
        root.present().map_err(|e| draw(&e))?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::Point;

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

    fn series(utils: &[f32]) -> Vec<GpuSeries> {
        vec![GpuSeries {
            index: 0,
            model: "A100".into(),
            points: utils
                .iter()
                .enumerate()
                .map(|(second, util)| Point {
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
}
