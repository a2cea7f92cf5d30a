//! The console's charts, for every front: the live chart from memory, stored history, the
//! fleet heatmap and a pool's chart from the stores, each drawn by `ebb_charts` over a
//! range ending at the console's clock; and a chart exported to the path the caller chose.

use crate::console::Console;
use crate::pools::PoolError;
use ebb_charts::chart::{
    ChartError as DrawError, ChartSpec, RangeChartSpec, gpu_lines_svg, heatmap_svg, utilization_svg,
};
use ebb_telemetry::metrics_store::{HeatmapQuery, MetricsError, SeriesQuery};
use ebb_wire::catalog::Words;
use ebb_wire::ipc::{ChartFrame, ChartMetric, ChartTheme, ExportFormat, UiLanguage};
use ebb_wire::phrase::Phrase;
use ebb_wire::pools::{PoolChart, PoolChartLabels};
use std::path::{Path, PathBuf};

/// How far back the live chart reaches.
const LIVE_WINDOW_S: u32 = 120;

/// Longest range a history chart may cover (the hour rollups keep 400 days).
const MAX_RANGE_S: u32 = 400 * 86_400;

/// Why a chart could not be drawn or saved.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// An input refused: the field, its English (logs, the CLI) and its words (the UI).
    #[error("{field}: {problem}")]
    Invalid {
        field: &'static str,
        problem: String,
        words: Box<Phrase>,
    },
    #[error("host: no host named `{0}` is registered")]
    NoHost(String),
    #[error(transparent)]
    Metrics(#[from] MetricsError),
    /// The metrics back end (Prometheus) did not answer.
    #[error("metrics unavailable: {0}")]
    MetricsUnavailable(#[from] ebb_telemetry::prom::PromError),
    #[error(transparent)]
    Pool(#[from] PoolError),
    #[error("cannot draw the PNG: {0}")]
    Raster(String),
    #[error("cannot write {path}: {problem}")]
    Write { path: PathBuf, problem: String },
}

impl From<crate::metrics_source::ReadError> for ChartError {
    fn from(error: crate::metrics_source::ReadError) -> Self {
        use crate::metrics_source::ReadError;
        match error {
            ReadError::Stored(error) => ChartError::Metrics(error),
            ReadError::Unavailable(error) => ChartError::MetricsUnavailable(error),
            ReadError::Console(error) => {
                // The console's own words for it where it has them; else what failed (a
                // database's or the registry's English) as the detail.
                let words = crate::errors::Reported::report(&*error)
                    .words
                    .unwrap_or_else(|| {
                        Phrase::new("chart.refuse.read").text("detail", error.to_string())
                    });
                ChartError::Invalid {
                    field: "host",
                    problem: error.to_string(),
                    words: Box::new(words),
                }
            }
        }
    }
}

/// A refusal of `field` in the operator's words; its English is the same phrase in the
/// English catalog, so the sentence is written once.
fn invalid(field: &'static str, words: Phrase) -> ChartError {
    ChartError::Invalid {
        field,
        problem: Words::of(UiLanguage::English).render(&words),
        words: Box::new(words),
    }
}

/// A chart `ebb_charts` would not draw: its English as that crate words it (logs, the CLI),
/// and the operator's words by what was wrong.
fn not_drawn(error: &DrawError) -> ChartError {
    ChartError::Invalid {
        field: "chart",
        problem: error.to_string(),
        words: Box::new(draw_words(error)),
    }
}

/// Why `ebb_charts` would not draw a chart, in the operator's words (it words it in English
/// only).
pub fn draw_words(error: &DrawError) -> Phrase {
    use ebb_charts::chart::{MAX_SIZE_PX, MIN_SIZE_PX};
    match error {
        DrawError::Size { field, value } => Phrase::new(if *field == "height_px" {
            "chart.refuse.height"
        } else {
            "chart.refuse.width"
        })
        .int("min", MIN_SIZE_PX)
        .int("max", MAX_SIZE_PX)
        .int("value", *value),
        DrawError::Window => Phrase::new("chart.refuse.window"),
        DrawError::Range { .. } => Phrase::new("chart.refuse.rangeOrder"),
        DrawError::Offset(minutes) => Phrase::new("chart.refuse.offset").int("minutes", *minutes),
        // The drawing library's own words (plotters'): kept as the detail.
        DrawError::Draw(detail) => Phrase::new("chart.refuse.draw").text("detail", detail),
    }
}

/// A chart to save: the SVG a chart call returned, the format, a title for the band above.
#[derive(Debug, Clone)]
pub struct ChartExport {
    pub svg: String,
    pub format: ExportFormat,
    pub title: Option<String>,
}

/// A file name for an export named `name`: letters, digits, `-` and `_` (anything else
/// becomes `-`), at most 80, with the format's extension.
pub fn export_file_name(name: &str, format: ExportFormat) -> Result<String, ChartError> {
    let stem: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(80)
        .collect();
    if stem.trim_matches('-').is_empty() {
        return Err(ChartError::Invalid {
            field: "name",
            problem: "must contain letters or digits".into(),
            words: Box::new(Phrase::new("chart.refuse.fileName")),
        });
    }
    Ok(format!("{stem}.{}", extension(format)))
}

/// The extension of a format's files (also the save dialog's filter).
pub fn extension(format: ExportFormat) -> &'static str {
    match format {
        ExportFormat::Svg => "svg",
        ExportFormat::Png => "png",
    }
}

/// Writes `bytes` to `path`, making its folder; the path written.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<String, ChartError> {
    let failed = |path: &Path, error: std::io::Error| ChartError::Write {
        path: path.to_path_buf(),
        problem: error.to_string(),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|error| failed(dir, error))?;
    }
    std::fs::write(path, bytes).map_err(|error| failed(path, error))?;
    Ok(path.display().to_string())
}

/// [`write_file`] off the async runtime's threads.
pub async fn write_export(path: PathBuf, bytes: Vec<u8>) -> Result<String, ChartError> {
    let at = path.clone();
    tokio::task::spawn_blocking(move || write_file(&path, &bytes))
        .await
        .map_err(|error| ChartError::Write {
            path: at,
            problem: error.to_string(),
        })?
}

impl Console {
    /// This month's spend summary as CSV, with the file name it is offered under.
    pub async fn spend_csv(&self) -> Result<(String, String), PoolError> {
        let summary = self.spend_summary().await?;
        let name = format!("ebb-spend-{}.csv", summary.month);
        Ok((name, crate::pools::spend_csv(&summary)))
    }

    /// The range a frame asks for, ending now on the console's clock.
    fn range_ms(&self, frame: &ChartFrame) -> Result<(i64, i64), ChartError> {
        if frame.range_s == 0 || frame.range_s > MAX_RANGE_S {
            return Err(invalid(
                "range_s",
                Phrase::new("chart.refuse.range")
                    .int("days", MAX_RANGE_S / 86_400)
                    .int("seconds", frame.range_s),
            ));
        }
        let now = self.pool_store().now_ms();
        Ok((now - i64::from(frame.range_s) * 1000, now))
    }

    fn range_spec<'a>(
        &self,
        title: &'a str,
        frame: &ChartFrame,
    ) -> Result<RangeChartSpec<'a>, ChartError> {
        let (from_ms, to_ms) = self.range_ms(frame)?;
        Ok(RangeChartSpec {
            title,
            theme: frame.theme,
            width_px: frame.width_px,
            height_px: frame.height_px,
            from_ms,
            to_ms,
            utc_offset_minutes: frame.utc_offset_minutes,
        })
    }

    /// The live per-GPU utilization chart of one host (the last two minutes, from memory).
    pub fn live_chart(
        &self,
        host: &str,
        theme: ChartTheme,
        width_px: u32,
        height_px: u32,
    ) -> Result<String, ChartError> {
        if !self.latest().hosts.iter().any(|known| known.name == host) {
            return Err(ChartError::NoHost(host.to_string()));
        }
        let spec = ChartSpec {
            title: host,
            theme,
            width_px,
            height_px,
            now_ms: self.latest_sample_ms().unwrap_or(0.0),
            window_s: LIVE_WINDOW_S,
        };
        utilization_svg(&spec, &self.host_series(host)).map_err(|error| not_drawn(&error))
    }

    /// One host's per-GPU lines of a metric over the frame's range, from the metrics store
    /// (downsampled to the chart's width).
    pub async fn host_history_chart(
        &self,
        host: &str,
        metric: ChartMetric,
        frame: &ChartFrame,
    ) -> Result<String, ChartError> {
        let spec = self.range_spec(host, frame)?;
        let query = SeriesQuery {
            host: Some(host.to_string()),
            gpu_index: None,
            metric,
            from_ms: spec.from_ms,
            to_ms: spec.to_ms,
            max_points: frame.width_px,
        };
        let series = self.metrics_source().host_series(&query).await?;
        gpu_lines_svg(&spec, metric, &series).map_err(|error| not_drawn(&error))
    }

    /// Every GPU of the fleet × time, mean utilization per cell, under `title` (the
    /// operator's language).
    pub async fn fleet_heatmap_chart(
        &self,
        frame: &ChartFrame,
        title: &str,
    ) -> Result<String, ChartError> {
        let spec = self.range_spec(title, frame)?;
        let query = HeatmapQuery {
            metric: ChartMetric::Util,
            from_ms: spec.from_ms,
            to_ms: spec.to_ms,
            columns: (frame.width_px / 8).clamp(10, 240),
        };
        let heatmap = self.metrics_source().heatmap(&query).await?;
        heatmap_svg(&spec, &heatmap).map_err(|error| not_drawn(&error))
    }

    /// A pool's own chart over the frame's range (desired, ready, warming, utilization,
    /// each rule decision marked, its spot reclaims and breaker switches) and the
    /// scale-out in progress with its ETA.
    pub async fn pool_chart(
        &self,
        name: &str,
        frame: &ChartFrame,
        labels: &PoolChartLabels,
    ) -> Result<PoolChart, ChartError> {
        let mut spec = self.range_spec(name, frame)?;
        let (samples, desired, ready, scale_out) =
            crate::pool_history::chart_data(self.pool_store(), name, spec.from_ms).await?;
        // A young pool: the axis starts a little before its first record (at least 5
        // minutes shown), so its first minutes are not a sliver at the right edge.
        if let Some(first) = samples.first() {
            spec.from_ms = spec
                .from_ms
                .max((first.at_ms - 60_000).min(spec.to_ms - 300_000));
        }
        let legend = ebb_charts::chart::PoolChartLabels {
            desired: &labels.desired,
            ready: &labels.ready,
            warming: &labels.warming,
            util: &labels.utilization,
            queue: &labels.queue,
            reclaimed: if labels.reclaimed.is_empty() {
                "spot reclaimed"
            } else {
                &labels.reclaimed
            },
            spot_paused: if labels.spot_paused.is_empty() {
                "spot paused / resumed"
            } else {
                &labels.spot_paused
            },
        };
        // A pool bound to a Slurm partition: its queue beside the counts, a point a change.
        let bound = self
            .slurm_binding_if_any()
            .ok()
            .flatten()
            .is_some_and(|binding| binding.of_pool(name).is_some());
        let queue = if bound {
            let mut points = self
                .pool_store()
                .metric_samples(crate::slurm::binder::DEMAND_METRIC, name, spec.from_ms)
                .await?;
            points.dedup_by(|later, earlier| later.1 == earlier.1);
            points
        } else {
            Vec::new()
        };
        // The rule decisions of the range, marked on the utilization panel (the newest 500).
        let mut decisions = self
            .pool_store()
            .rule_activity(name, spec.from_ms, spec.to_ms, 500)
            .await?;
        // And its spot events: its reclaims, its model's spot paused or resumed in its
        // regions.
        if let Ok(pool) = self.pool_store().get(name).await {
            let spot = self
                .pool_store()
                .spot_activity(&pool, spec.from_ms, spec.to_ms, 500)
                .await?;
            decisions.extend(spot);
        }
        let (svg, marks) =
            ebb_charts::chart::pool_chart(&spec, &legend, &samples, &decisions, &queue)
                .map_err(|error| not_drawn(&error))?;
        Ok(PoolChart {
            svg,
            scale_out,
            desired,
            ready,
            marks,
        })
    }

    /// Saves a chart as SVG or PNG at `path` (the caller chose it), with its title in a band
    /// above it; the path written.
    pub async fn export_chart(
        &self,
        export: ChartExport,
        path: PathBuf,
    ) -> Result<String, ChartError> {
        if !export.svg.trim_start().starts_with("<svg") {
            return Err(invalid("svg", Phrase::new("chart.refuse.notSvg")));
        }
        let svg = match export
            .title
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            Some(title) => ebb_charts::raster::titled(&export.svg, title)
                .ok_or_else(|| invalid("svg", Phrase::new("chart.refuse.noSize")))?,
            None => export.svg,
        };
        let format = export.format;
        tokio::task::spawn_blocking(move || {
            let bytes = match format {
                ExportFormat::Svg => svg.into_bytes(),
                ExportFormat::Png => crate::system_fonts::rasterizer()
                    .png(&svg, 2.0)
                    .map_err(|error| ChartError::Raster(error.to_string()))?,
            };
            write_file(&path, &bytes)
        })
        .await
        .map_err(|error| ChartError::Raster(error.to_string()))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_export_is_named_by_its_letters_and_digits() {
        assert_eq!(
            export_file_name("gpu-01 util (1h)", ExportFormat::Png).unwrap(),
            "gpu-01-util--1h-.png"
        );
        assert_eq!(
            export_file_name("fleet", ExportFormat::Svg).unwrap(),
            "fleet.svg"
        );
        let refused = export_file_name("../ ..", ExportFormat::Svg).unwrap_err();
        assert_eq!(refused.to_string(), "name: must contain letters or digits");
        assert_eq!(
            export_file_name(&"a".repeat(200), ExportFormat::Svg)
                .unwrap()
                .len(),
            84
        );
    }

    #[test]
    fn an_export_makes_its_folder_and_says_where_it_went() {
        let dir = ebb_testkit::TempDir::new("chart-export");
        let path = dir.path().join("new/folder/chart.svg");
        assert_eq!(
            write_file(&path, b"<svg/>").unwrap(),
            path.display().to_string()
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"<svg/>");
        let blocked = dir.path().join("new/folder/chart.svg/inside.svg");
        assert!(matches!(
            write_file(&blocked, b"x"),
            Err(ChartError::Write { .. })
        ));
    }
}
