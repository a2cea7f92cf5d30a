//! Charts of stored series: lines, aggregates, the heatmap, PNG export.

use ebb_charts::chart::{
    ChartError, RangeChartSpec, aggregate_lines_svg, gpu_lines_svg, heatmap_svg,
};
use ebb_charts::downsample::Point;
use ebb_charts::history::{AggregateSeries, GpuSeries, Heatmap, HeatmapRow};
use ebb_charts::raster::{RasterError, Rasterizer};
use ebb_wire::ipc::ChartMetric;
use ebb_wire::ipc::ChartTheme;

const T0: i64 = 1_699_999_200_000;
const DAY: i64 = 86_400_000;

fn spec(theme: ChartTheme, from_ms: i64, to_ms: i64) -> RangeChartSpec<'static> {
    RangeChartSpec {
        title: "gpu-host-1",
        theme,
        width_px: 800,
        height_px: 300,
        from_ms,
        to_ms,
        utc_offset_minutes: 0,
    }
}

/// The points of every `<polyline>` in an SVG.
fn polylines(svg: &str) -> Vec<usize> {
    svg.split("<polyline")
        .skip(1)
        .map(|element| {
            let points = element.split("points=\"").nth(1).unwrap_or("");
            let points = &points[..points.find('"').unwrap_or(0)];
            points.split_whitespace().count()
        })
        .collect()
}

fn gpu(index: u32, points: Vec<Point>) -> GpuSeries {
    GpuSeries {
        host: "gpu-host-1".into(),
        gpu_index: index,
        points,
    }
}

#[test]
fn memory_lines_label_gpus_and_gib() {
    let points = (0..600)
        .map(|second| Point::single(T0 + second * 1000, 40_960.0 + second as f32))
        .collect();
    let svg = gpu_lines_svg(
        &spec(ChartTheme::Light, T0, T0 + 600_000),
        ChartMetric::MemoryUsed,
        &[gpu(0, points), gpu(3, Vec::new())],
    )
    .unwrap();
    assert!(
        svg.contains("GPU 0") && svg.contains("GPU 3"),
        "both in the legend"
    );
    assert!(svg.contains(" GiB"), "memory in GiB");
    assert!(svg.contains("gpu-host-1"));
    assert!(svg.contains("22:02"), "clock labels every two minutes");
}

#[test]
fn a_day_of_seconds_on_eight_gpus_is_cut_to_the_pixel_width() {
    let series: Vec<GpuSeries> = (0..8)
        .map(|index| {
            gpu(
                index,
                (0..86_400)
                    .map(|second| {
                        let util = ((second * (index as i64 + 3)) % 100) as f32;
                        Point::single(T0 + second * 1000, util)
                    })
                    .collect(),
            )
        })
        .collect();
    let svg = gpu_lines_svg(
        &spec(ChartTheme::Dark, T0, T0 + DAY - 1),
        ChartMetric::Util,
        &series,
    )
    .unwrap();
    let lines = polylines(&svg);
    let drawn: usize = lines.iter().sum();
    assert!(drawn > 8 * 100, "{lines:?}");
    assert!(
        drawn <= 8 * 4 * 800 + 64,
        "at most four points a pixel column: {lines:?}"
    );
    assert!(svg.len() < 2_000_000, "{} bytes", svg.len());
}

#[test]
fn gaps_break_the_line_and_spikes_stay_in_the_band() {
    let mut points: Vec<Point> = (0..60)
        .map(|m| Point::single(T0 + m * 60_000, 20.0))
        .collect();
    // Half an hour without readings, then a bucket whose max is a spike.
    points.extend((90..120).map(|m| Point {
        t_ms: T0 + m * 60_000,
        min: 10.0,
        avg: 20.0,
        max: if m == 100 { 100.0 } else { 30.0 },
    }));
    let svg = gpu_lines_svg(
        &spec(ChartTheme::Light, T0, T0 + 2 * 3_600_000),
        ChartMetric::Util,
        &[gpu(0, points)],
    )
    .unwrap();
    let lines: Vec<usize> = polylines(&svg).into_iter().filter(|n| *n > 2).collect();
    assert_eq!(lines.len(), 2, "one line each side of the gap: {lines:?}");
    assert!(svg.contains("<polygon"), "the min-max band");
}

#[test]
fn aggregates_are_labelled_by_name() {
    let line = |name: &str, value: f32| AggregateSeries {
        name: name.into(),
        points: (0..10)
            .map(|m| Point {
                t_ms: T0 + m * 60_000,
                min: value - 5.0,
                avg: value,
                max: value + 5.0,
            })
            .collect(),
    };
    let svg = aggregate_lines_svg(
        &spec(ChartTheme::Light, T0, T0 + 600_000),
        ChartMetric::Temperature,
        &[line("cn-east", 60.0), line("cn-north", 70.0)],
    )
    .unwrap();
    assert!(svg.contains("cn-east") && svg.contains("cn-north"));
    assert!(svg.contains("°C"));
}

#[test]
fn bad_ranges_are_refused_naming_the_problem() {
    let error =
        gpu_lines_svg(&spec(ChartTheme::Light, T0, T0), ChartMetric::Util, &[]).unwrap_err();
    assert!(matches!(error, ChartError::Range { .. }));
    assert!(error.to_string().contains("to_ms"));
    let mut bad = spec(ChartTheme::Light, T0, T0 + 1);
    bad.utc_offset_minutes = 24 * 60;
    assert!(matches!(
        heatmap_svg(&bad, &heatmap(1, 4)).unwrap_err(),
        ChartError::Offset(1440)
    ));
}

/// `rows` GPUs × `columns` one-minute cells: row r, column c is (r * 10 + c) % 101,
/// with the last cell of row 0 missing.
fn heatmap(rows: u32, columns: u32) -> Heatmap {
    Heatmap {
        metric: ChartMetric::Util,
        from_ms: T0,
        to_ms: T0 + i64::from(columns) * 60_000 - 1,
        bucket_ms: 60_000,
        columns,
        rows: (0..rows)
            .map(|row| HeatmapRow {
                host: format!("host-{}", row / 8),
                gpu_index: row % 8,
                cells: (0..columns)
                    .map(|column| {
                        (row != 0 || column + 1 != columns)
                            .then_some(((row * 10 + column) % 101) as f32)
                    })
                    .collect(),
            })
            .collect(),
    }
}

#[test]
fn heatmap_colours_cells_in_both_themes() {
    let map = heatmap(16, 60);
    let range = (T0, T0 + 60 * 60_000 - 1);
    let light = heatmap_svg(&spec(ChartTheme::Light, range.0, range.1), &map).unwrap();
    let dark = heatmap_svg(&spec(ChartTheme::Dark, range.0, range.1), &map).unwrap();
    assert!(light.contains("#FFFFFF") && dark.contains("#161B22"));
    // 100 % is the top of the scale; the missing cell is the theme's grid colour.
    assert!(light.contains("#FDE725"));
    assert!(light.contains("#E2E6EC"), "missing cell, light");
    assert!(dark.contains("#303844"), "missing cell, dark");
    assert!(light.contains("host-1 GPU 7"), "row labels");
    assert!(
        light.contains("100%") && light.contains("0%"),
        "the scale's ends"
    );
}

#[test]
fn heatmap_merges_rows_beyond_its_pixels() {
    // 10,000 GPUs into about 230 pixel rows.
    let map = heatmap(10_000, 30);
    let svg = heatmap_svg(&spec(ChartTheme::Light, T0, T0 + 30 * 60_000 - 1), &map).unwrap();
    let cells = svg.matches("<rect").count();
    assert!(cells < 30 * 300, "{cells} rectangles");
    assert!(svg.len() < 1_500_000, "{} bytes", svg.len());
}

fn png_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let be = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn charts_export_as_png() {
    let rasterizer = Rasterizer::with_installed_fonts(crate::system_fonts());
    let map = heatmap(16, 60);
    let svg = heatmap_svg(&spec(ChartTheme::Dark, T0, T0 + 3_600_000 - 1), &map).unwrap();
    let png = rasterizer.png(&svg, 1.0).unwrap();
    assert_eq!(png_size(&png), (800, 300));
    let retina = rasterizer.png(&svg, 2.0).unwrap();
    assert_eq!(png_size(&retina), (1_600, 600));
    assert!(matches!(
        rasterizer.png(&svg, 9.0).unwrap_err(),
        RasterError::Scale(_)
    ));
    assert!(matches!(
        rasterizer.png("not svg", 1.0).unwrap_err(),
        RasterError::Svg(_)
    ));
    if rasterizer.font_faces() > 0 {
        // With fonts, the title's text reaches the pixels: two titles of one length (so
        // one layout) give different images.
        let titled = |title: &'static str| {
            let svg = gpu_lines_svg(
                &RangeChartSpec {
                    title,
                    ..spec(ChartTheme::Light, T0, T0 + 60_000)
                },
                ChartMetric::Util,
                &[],
            )
            .unwrap();
            rasterizer.png(&svg, 1.0).unwrap()
        };
        assert_ne!(titled("gpu-host-1"), titled("GPU-HOST-2"));
    }
}

/// The x of every point of the data lines (a `<polyline>` of more than two points: a
/// legend's swatch has two).
fn line_xs(svg: &str) -> Vec<f64> {
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
        .flatten()
        .collect()
}

/// The x of the `<text>` whose words are `label`.
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
    // Lines across the whole range at the top, where a legend inside the plot would sit.
    let points = |level: f32| -> Vec<Point> {
        (0..600)
            .map(|second| Point::single(T0 + second * 1000, level))
            .collect()
    };
    let svg = gpu_lines_svg(
        &spec(ChartTheme::Dark, T0, T0 + 600_000),
        ChartMetric::Util,
        &[gpu(0, points(99.0)), gpu(1, points(97.0))],
    )
    .unwrap();
    let rightmost = line_xs(&svg).into_iter().fold(f64::MIN, f64::max);
    assert!(rightmost > 600.0, "the lines reach the right: {rightmost}");
    for label in ["GPU 0", "GPU 1"] {
        let x = text_x(&svg, label).unwrap_or_else(|| panic!("{label} in the legend"));
        assert!(
            x > rightmost,
            "{label} at x={x}, the lines end at {rightmost}"
        );
    }
}
