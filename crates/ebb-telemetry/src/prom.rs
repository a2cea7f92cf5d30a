//! Prometheus as the metrics back end: its HTTP API (`/api/v1/query`, `/api/v1/query_range`)
//! with a timeout on every call, and what the console asks of it, answered in the same
//! types the embedded collector and `metrics.db` answer in: the fleet's snapshot (each
//! registered host from `up` and the agents' `ebb_gpu_*` series), a host's per-GPU lines
//! over a range, the fleet heatmap, and one number (a rule's PromQL metric).
//!
//! The agents' series reach Prometheus through Ebb's service discovery, which labels each
//! target with the registry's `host` and `region`; the queries select on that `host`.
//! Turning answers into those types is pure ([`snapshot_of`], [`series_of`],
//! [`heatmap_of`], [`number_of`]) and tested without a server.

use ebb_charts::downsample::Point;
use ebb_charts::history::{GpuSeries, Heatmap, HeatmapRow};
use ebb_wire::agent::Gpu;
use ebb_wire::ipc::{ChartMetric, FleetSnapshot, Health, HostStatus};
use ebb_wire::reasons::HostProblem;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// How a back-end URL is written in `console.toml`'s `metrics` and `--metrics`.
pub const SCHEME_PREFIX: &str = "prometheus+";

/// The timeout of every call to Prometheus, unless a query names its own.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// `prometheus+http://HOST:9090` (or `prometheus+https://…`) → the server's base URL,
/// `http://HOST:9090`; a problem in words otherwise.
pub fn backend_url(text: &str) -> Result<String, String> {
    let Some(url) = text.trim().strip_prefix(SCHEME_PREFIX) else {
        return Err(format!(
            "`{text}` is not a metrics back end: write `prometheus+http://HOST:9090` \
             (or leave it out for the embedded collector)"
        ));
    };
    let parsed = reqwest::Url::parse(url).map_err(|error| format!("`{url}`: {error}"))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(format!("`{url}` is not an http(s) URL with a host"));
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// Why Prometheus gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromError {
    #[error("Prometheus at {url} did not answer: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("Prometheus at {url} did not answer within {timeout_ms} ms")]
    Timeout { url: String, timeout_ms: u64 },
    #[error("Prometheus at {url} refused the query ({kind}): {reason}")]
    Refused {
        url: String,
        kind: String,
        reason: String,
    },
    #[error("Prometheus at {url} answered something else: {reason}")]
    Decode { url: String, reason: String },
}

impl PromError {
    /// What went wrong, without the server's URL (which the caller names once).
    pub fn reason(&self) -> String {
        match self {
            Self::Unreachable { reason, .. } | Self::Decode { reason, .. } => reason.clone(),
            Self::Timeout { timeout_ms, .. } => format!("no answer within {timeout_ms} ms"),
            Self::Refused { kind, reason, .. } => format!("query refused ({kind}): {reason}"),
        }
    }
}

/// One series of an instant answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub labels: BTreeMap<String, String>,
    pub at_ms: i64,
    pub value: f64,
}

/// One series of a range answer, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeSeries {
    pub labels: BTreeMap<String, String>,
    pub points: Vec<(i64, f64)>,
}

#[derive(Deserialize)]
struct Envelope {
    status: String,
    #[serde(default)]
    data: Option<Data>,
    #[serde(default, rename = "errorType")]
    error_type: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
#[serde(tag = "resultType", content = "result", rename_all = "lowercase")]
enum Data {
    Vector(Vec<VectorItem>),
    Matrix(Vec<MatrixItem>),
    Scalar((f64, String)),
    String(serde::de::IgnoredAny),
}

#[derive(Deserialize)]
struct VectorItem {
    metric: BTreeMap<String, String>,
    value: (f64, String),
}

#[derive(Deserialize)]
struct MatrixItem {
    metric: BTreeMap<String, String>,
    values: Vec<(f64, String)>,
}

/// An error and its causes, innermost last (`error sending request: connection refused`).
fn causes(error: &dyn std::error::Error) -> String {
    let mut chain = vec![error.to_string()];
    let mut source = error.source();
    while let Some(inner) = source {
        let text = inner.to_string();
        if !chain.iter().any(|seen| seen.contains(&text)) {
            chain.push(text);
        }
        source = inner.source();
    }
    chain.join(": ")
}

/// A sample's value: Prometheus writes numbers as strings (`"NaN"` and `"+Inf"` too).
fn value(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|value| value.is_finite())
}

fn at_ms(seconds: f64) -> i64 {
    (seconds * 1000.0).round() as i64
}

/// The client of one Prometheus server.
#[derive(Debug, Clone)]
pub struct PromClient {
    http: reqwest::Client,
    base: String,
    timeout: Duration,
}

impl PromClient {
    /// A client of the server at `base` (`http://HOST:9090`), each call bounded by `timeout`.
    pub fn new(base: &str, timeout: Duration) -> Result<Self, PromError> {
        let http = reqwest::Client::builder()
            .connect_timeout(timeout.min(Duration::from_secs(2)))
            .timeout(timeout)
            .build()
            .map_err(|error| PromError::Unreachable {
                url: base.to_string(),
                reason: error.to_string(),
            })?;
        Ok(Self {
            http,
            base: base.trim_end_matches('/').to_string(),
            timeout,
        })
    }

    pub fn url(&self) -> &str {
        &self.base
    }

    async fn get(
        &self,
        path: &str,
        params: &[(&str, String)],
        timeout: Duration,
    ) -> Result<Data, PromError> {
        let url = self.base.clone();
        let endpoint =
            reqwest::Url::parse_with_params(&format!("{url}{path}"), params).map_err(|error| {
                PromError::Unreachable {
                    url: url.clone(),
                    reason: error.to_string(),
                }
            })?;
        let response = self
            .http
            .get(endpoint)
            .timeout(timeout)
            .send()
            .await
            .map_err(|error| self.failed(error, timeout))?;
        let body = response
            .bytes()
            .await
            .map_err(|error| self.failed(error, timeout))?;
        let envelope: Envelope =
            serde_json::from_slice(&body).map_err(|error| PromError::Decode {
                url: url.clone(),
                reason: error.to_string(),
            })?;
        match (envelope.status.as_str(), envelope.data) {
            ("success", Some(data)) => Ok(data),
            _ => Err(PromError::Refused {
                url,
                kind: envelope.error_type.unwrap_or_else(|| "error".into()),
                reason: envelope.error.unwrap_or_else(|| "no reason given".into()),
            }),
        }
    }

    fn failed(&self, error: reqwest::Error, timeout: Duration) -> PromError {
        if error.is_timeout() {
            PromError::Timeout {
                url: self.base.clone(),
                timeout_ms: timeout.as_millis() as u64,
            }
        } else {
            PromError::Unreachable {
                url: self.base.clone(),
                reason: causes(&error.without_url()),
            }
        }
    }

    /// An instant query, now.
    pub async fn instant(&self, query: &str) -> Result<Vec<Sample>, PromError> {
        self.instant_within(query, self.timeout).await
    }

    /// An instant query with its own timeout.
    pub async fn instant_within(
        &self,
        query: &str,
        timeout: Duration,
    ) -> Result<Vec<Sample>, PromError> {
        let data = self
            .get("/api/v1/query", &[("query", query.to_string())], timeout)
            .await?;
        Ok(match data {
            Data::Vector(items) => items
                .into_iter()
                .filter_map(|item| {
                    Some(Sample {
                        at_ms: at_ms(item.value.0),
                        value: value(&item.value.1)?,
                        labels: item.metric,
                    })
                })
                .collect(),
            Data::Scalar((at, text)) => value(&text)
                .map(|value| Sample {
                    labels: BTreeMap::new(),
                    at_ms: at_ms(at),
                    value,
                })
                .into_iter()
                .collect(),
            Data::Matrix(_) | Data::String(_) => {
                return Err(PromError::Decode {
                    url: self.base.clone(),
                    reason: "an instant query answered a range or a string".into(),
                });
            }
        })
    }

    /// A range query from `from_ms` to `to_ms` every `step_ms` (at least a second).
    pub async fn range(
        &self,
        query: &str,
        from_ms: i64,
        to_ms: i64,
        step_ms: i64,
    ) -> Result<Vec<RangeSeries>, PromError> {
        let seconds = |ms: i64| format!("{:.3}", ms as f64 / 1000.0);
        let params = [
            ("query", query.to_string()),
            ("start", seconds(from_ms)),
            ("end", seconds(to_ms)),
            ("step", seconds(step_ms.max(1000))),
        ];
        let data = self
            .get("/api/v1/query_range", &params, self.timeout)
            .await?;
        match data {
            Data::Matrix(items) => Ok(items
                .into_iter()
                .map(|item| RangeSeries {
                    labels: item.metric,
                    points: item
                        .values
                        .iter()
                        .filter_map(|(at, text)| Some((at_ms(*at), value(text)?)))
                        .collect(),
                })
                .collect()),
            _ => Err(PromError::Decode {
                url: self.base.clone(),
                reason: "a range query answered something else than a matrix".into(),
            }),
        }
    }

    /// One number: a scalar, or a vector of exactly one series (a rule's PromQL metric).
    pub async fn number(&self, query: &str, timeout: Duration) -> Result<f64, String> {
        let samples = self
            .instant_within(query, timeout)
            .await
            .map_err(|error| error.to_string())?;
        number_of(&samples)
    }

    /// Checks a query's syntax with the server (`/api/v1/parse_query`, Prometheus 2.51 and
    /// later); `Ok(None)` when the server cannot tell (an older one), `Ok(Some(problem))`
    /// when it refuses the query.
    pub async fn parse(&self, query: &str) -> Result<Option<String>, PromError> {
        match self
            .get(
                "/api/v1/parse_query",
                &[("query", query.to_string())],
                self.timeout,
            )
            .await
        {
            Ok(_) => Ok(None),
            Err(PromError::Refused { kind, reason, .. }) if kind == "bad_data" => Ok(Some(reason)),
            // No such endpoint: an older server answers 404 with no JSON.
            Err(PromError::Decode { .. }) => self.parse_by_running(query).await,
            Err(error) => Err(error),
        }
    }

    /// An older server's way of checking: run the query; a parse error is refused at once.
    async fn parse_by_running(&self, query: &str) -> Result<Option<String>, PromError> {
        match self.instant(query).await {
            Ok(_) => Ok(None),
            Err(PromError::Refused { kind, reason, .. }) if kind == "bad_data" => Ok(Some(reason)),
            Err(PromError::Refused { .. }) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// The fleet as Prometheus last scraped it: each of `hosts` with its GPUs.
    pub async fn snapshot(
        &self,
        hosts: &[PromHost],
        tick: u32,
    ) -> Result<FleetSnapshot, PromError> {
        let (up, gpus) = tokio::try_join!(self.instant(UP_QUERY), self.instant(GPU_QUERY))?;
        Ok(snapshot_of(hosts, tick, &up, &gpus))
    }

    /// Each of `hosts` as up or not, without its GPUs (one small query: what a process that
    /// draws nothing needs).
    pub async fn health(&self, hosts: &[PromHost], tick: u32) -> Result<FleetSnapshot, PromError> {
        let up = self.instant(UP_QUERY).await?;
        Ok(snapshot_of(hosts, tick, &up, &[]))
    }

    /// One host's per-GPU lines of `metric` over `from_ms..=to_ms`, at most `max_points`
    /// each: Prometheus's samples themselves when the step is short, else each step's
    /// min, mean and max.
    pub async fn host_series(
        &self,
        host: &str,
        metric: ChartMetric,
        from_ms: i64,
        to_ms: i64,
        max_points: u32,
    ) -> Result<Vec<GpuSeries>, PromError> {
        let step_ms = step_for(from_ms, to_ms, max_points);
        let selector = format!("{{host=\"{}\"}}", escape(host));
        if step_ms <= SAMPLES_UP_TO_MS {
            let query = expression(metric, &selector, None);
            let answer = self.range(&query, from_ms, to_ms, step_ms).await?;
            return Ok(series_of(&answer, &answer, &answer));
        }
        let window = format!("{}s", step_ms / 1000);
        let over = |function: &str| expression(metric, &selector, Some((function, &window)));
        let (min, avg, max) = (
            over("min_over_time"),
            over("avg_over_time"),
            over("max_over_time"),
        );
        let (min, avg, max) = tokio::try_join!(
            self.range(&min, from_ms, to_ms, step_ms),
            self.range(&avg, from_ms, to_ms, step_ms),
            self.range(&max, from_ms, to_ms, step_ms),
        )?;
        Ok(series_of(&min, &avg, &max))
    }

    /// Every GPU × `columns` buckets of at least a minute, each bucket's mean.
    pub async fn heatmap(
        &self,
        metric: ChartMetric,
        from_ms: i64,
        to_ms: i64,
        columns: u32,
    ) -> Result<Heatmap, PromError> {
        let (from_ms, bucket_ms, columns) = heat_buckets(from_ms, to_ms, columns);
        let window = format!("{}s", bucket_ms / 1000);
        let query = expression(metric, "{host!=\"\"}", Some(("avg_over_time", &window)));
        // Each bucket's mean is read at its end.
        let end = from_ms + i64::from(columns) * bucket_ms;
        let answer = self
            .range(&query, from_ms + bucket_ms, end, bucket_ms)
            .await?;
        Ok(heatmap_of(metric, &answer, from_ms, bucket_ms, columns))
    }
}

/// A host as the registry has it, for the snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromHost {
    pub name: String,
    pub url: String,
    pub region: String,
}

impl From<ebb_wire::ipc::HostEntry> for PromHost {
    fn from(entry: ebb_wire::ipc::HostEntry) -> Self {
        Self {
            name: entry.name,
            url: entry.url,
            region: entry.region,
        }
    }
}

/// Whether Prometheus reached each agent it was told of.
const UP_QUERY: &str = "up{host!=\"\"}";

/// Every reading of every GPU, and the lease on it, in one query.
const GPU_QUERY: &str = "{__name__=~\"ebb_gpu_(healthy|utilization_percent|memory_utilization_percent|memory_used_bytes|memory_total_bytes|temperature_celsius|power_draw_watts|power_limit_watts|sm_clock_hertz|ecc_corrected_errors|ecc_uncorrected_errors|retired_pages|spot|lease_info)\",host!=\"\"}";

/// Up to this step a chart shows Prometheus's samples as they are (no min/max band).
const SAMPLES_UP_TO_MS: i64 = 60_000;

const MIB: f64 = 1_048_576.0;

/// A label value inside a PromQL string.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// `a / b` rounded up, for `a >= 0` and `b > 0`.
fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// The step that gives at most `max_points` points, whole seconds, at least one.
pub fn step_for(from_ms: i64, to_ms: i64, max_points: u32) -> i64 {
    let span = (to_ms - from_ms).max(1);
    let step = ceil_div(span, i64::from(max_points.max(1)));
    ceil_div(step, 1000).max(1) * 1000
}

/// The heatmap's columns: buckets of whole minutes at least, the first starting at
/// `from_ms` rounded down to the bucket, and as many as cover the range (at most `columns`).
pub fn heat_buckets(from_ms: i64, to_ms: i64, columns: u32) -> (i64, i64, u32) {
    let span = (to_ms - from_ms).max(1);
    let bucket = ceil_div(ceil_div(span, i64::from(columns.max(1))), 60_000).max(1) * 60_000;
    let first = from_ms - from_ms.rem_euclid(bucket);
    let count = ceil_div(to_ms - first, bucket).clamp(1, i64::from(columns.max(1)));
    (first, bucket, count as u32)
}

/// The PromQL of a chart metric over `selector`, optionally through `function` over a
/// window (`avg_over_time(…[60s])`), in the unit the charts draw.
pub fn expression(metric: ChartMetric, selector: &str, over: Option<(&str, &str)>) -> String {
    let series = |name: &str| match over {
        Some((function, window)) => format!("{function}({name}{selector}[{window}])"),
        None => format!("{name}{selector}"),
    };
    match metric {
        ChartMetric::Util => series("ebb_gpu_utilization_percent"),
        ChartMetric::MemoryUsed => format!("{} / {MIB}", series("ebb_gpu_memory_used_bytes")),
        ChartMetric::MemoryPct => format!(
            "100 * {} / {}",
            series("ebb_gpu_memory_used_bytes"),
            series("ebb_gpu_memory_total_bytes")
        ),
        ChartMetric::Temperature => series("ebb_gpu_temperature_celsius"),
        ChartMetric::Power => series("ebb_gpu_power_draw_watts"),
    }
}

/// A series' host and GPU index.
fn gpu_of(labels: &BTreeMap<String, String>) -> Option<(String, u32)> {
    Some((
        labels.get("host")?.clone(),
        labels.get("index")?.parse().ok()?,
    ))
}

/// Range answers (the steps' min, mean and max; the same answer thrice for raw samples)
/// → per-GPU lines, by host then index.
pub fn series_of(min: &[RangeSeries], avg: &[RangeSeries], max: &[RangeSeries]) -> Vec<GpuSeries> {
    let by_gpu = |answer: &[RangeSeries]| -> HashMap<(String, u32), HashMap<i64, f64>> {
        answer
            .iter()
            .filter_map(|series| {
                Some((
                    gpu_of(&series.labels)?,
                    series.points.iter().copied().collect(),
                ))
            })
            .collect()
    };
    let (mins, maxes) = (by_gpu(min), by_gpu(max));
    let mut out: Vec<GpuSeries> = avg
        .iter()
        .filter_map(|series| {
            let key = gpu_of(&series.labels)?;
            let points = series
                .points
                .iter()
                .map(|&(t_ms, mean)| {
                    let at = |side: &HashMap<(String, u32), HashMap<i64, f64>>| {
                        side.get(&key).and_then(|points| points.get(&t_ms)).copied()
                    };
                    Point {
                        t_ms,
                        min: at(&mins).unwrap_or(mean).min(mean) as f32,
                        avg: mean as f32,
                        max: at(&maxes).unwrap_or(mean).max(mean) as f32,
                    }
                })
                .collect();
            Some(GpuSeries {
                host: key.0,
                gpu_index: key.1,
                points,
            })
        })
        .collect();
    out.sort_by(|a, b| (&a.host, a.gpu_index).cmp(&(&b.host, b.gpu_index)));
    out
}

/// A range answer read at each bucket's end → the heatmap's rows, by host then index.
pub fn heatmap_of(
    metric: ChartMetric,
    answer: &[RangeSeries],
    from_ms: i64,
    bucket_ms: i64,
    columns: u32,
) -> Heatmap {
    let mut rows: Vec<HeatmapRow> = answer
        .iter()
        .filter_map(|series| {
            let (host, gpu_index) = gpu_of(&series.labels)?;
            let mut cells = vec![None; columns as usize];
            for &(at, mean) in &series.points {
                // The value read at a bucket's end is that bucket's.
                let column = (at - from_ms) / bucket_ms - 1;
                if let Some(cell) = usize::try_from(column).ok().and_then(|c| cells.get_mut(c)) {
                    *cell = Some(mean as f32);
                }
            }
            Some(HeatmapRow {
                host,
                gpu_index,
                cells,
            })
        })
        .collect();
    rows.sort_by(|a, b| (&a.host, a.gpu_index).cmp(&(&b.host, b.gpu_index)));
    Heatmap {
        metric,
        from_ms,
        to_ms: from_ms + i64::from(columns) * bucket_ms,
        bucket_ms,
        columns,
        rows,
    }
}

/// One number out of an instant answer: exactly one series.
pub fn number_of(samples: &[Sample]) -> Result<f64, String> {
    match samples {
        [] => Err("the query answered no series".into()),
        [one] => Ok(one.value),
        many => Err(format!(
            "the query answered {} series: aggregate them into one (sum, max, …)",
            many.len()
        )),
    }
}

/// The snapshot from `up` and the GPU series: a host Prometheus scrapes is online (degraded
/// when a GPU says it is unhealthy), one it cannot scrape offline, one it has no `up` for
/// unknown (not scraped yet, or not in its service discovery).
pub fn snapshot_of(hosts: &[PromHost], tick: u32, up: &[Sample], gpus: &[Sample]) -> FleetSnapshot {
    let mut reached: HashMap<&str, bool> = HashMap::new();
    for sample in up {
        if let Some(host) = sample.labels.get("host") {
            let answered = reached.entry(host.as_str()).or_default();
            *answered = *answered || sample.value >= 1.0;
        }
    }
    let mut by_host: HashMap<&str, BTreeMap<u32, Gpu>> = HashMap::new();
    for sample in gpus {
        let (Some(host), Some(index), Some(name)) = (
            sample.labels.get("host"),
            sample
                .labels
                .get("index")
                .and_then(|index| index.parse::<u32>().ok()),
            sample.labels.get("__name__"),
        ) else {
            continue;
        };
        let label = |key: &str| sample.labels.get(key).cloned().unwrap_or_default();
        let gpu = by_host
            .entry(host.as_str())
            .or_default()
            .entry(index)
            .or_insert_with(|| blank_gpu(index, label("uuid"), label("model")));
        read_into(gpu, name, sample);
    }
    let hosts = hosts
        .iter()
        .map(|host| {
            let gpus: Vec<Gpu> = by_host
                .remove(host.name.as_str())
                .map(|gpus| gpus.into_values().collect())
                .unwrap_or_default();
            let (health, last_error) = match reached.get(host.name.as_str()) {
                None => (Health::Unknown, None),
                Some(false) => (
                    Health::Offline,
                    Some(HostProblem::Connect {
                        url: host.url.clone(),
                        reason: "Prometheus cannot scrape it (up is 0)".into(),
                    }),
                ),
                Some(true) => match gpus.iter().filter(|gpu| !gpu.healthy).count() {
                    0 => (Health::Online, None),
                    lost => (
                        Health::Degraded,
                        Some(HostProblem::GpusNotAnswering { gpus: lost as u32 }),
                    ),
                },
            };
            let utils: Vec<f32> = gpus.iter().filter_map(|gpu| gpu.gpu_util_pct).collect();
            let mut models: Vec<String> = gpus.iter().map(|gpu| gpu.model.clone()).collect();
            models.sort();
            models.dedup();
            HostStatus {
                name: host.name.clone(),
                url: host.url.clone(),
                region: host.region.clone(),
                health,
                gpu_count: gpus.len() as u32,
                models,
                mean_util_pct: (!utils.is_empty())
                    .then(|| utils.iter().sum::<f32>() / utils.len() as f32),
                last_error,
                gpus,
            }
        })
        .collect();
    FleetSnapshot {
        tick,
        hosts,
        metrics_unavailable: None,
    }
}

fn blank_gpu(index: u32, uuid: String, model: String) -> Gpu {
    Gpu {
        index,
        uuid,
        model,
        memory_total_mib: None,
        healthy: true,
        health_reason: None,
        lease_id: None,
        memory_used_mib: None,
        gpu_util_pct: None,
        memory_util_pct: None,
        temperature_c: None,
        power_draw_w: None,
        power_limit_w: None,
        sm_clock_mhz: None,
        memory_clock_mhz: None,
        processes: None,
        ecc_corrected: None,
        ecc_uncorrected: None,
        retired_pages: None,
        xid_errors: None,
        spot: false,
    }
}

/// One `ebb_gpu_*` series' reading (`name`, its metric name) into its GPU.
pub fn read_into(gpu: &mut Gpu, name: &str, sample: &Sample) {
    let value = sample.value;
    let mib = || Some((value / MIB).round() as u32);
    match name.trim_start_matches("ebb_gpu_") {
        "healthy" => {
            gpu.healthy = value >= 1.0;
            if !gpu.healthy {
                gpu.health_reason = Some("the agent reports it unhealthy".into());
            }
        }
        "utilization_percent" => gpu.gpu_util_pct = Some(value as f32),
        "memory_utilization_percent" => gpu.memory_util_pct = Some(value as f32),
        "memory_used_bytes" => gpu.memory_used_mib = mib(),
        "memory_total_bytes" => gpu.memory_total_mib = mib().filter(|mib| *mib > 0),
        "temperature_celsius" => gpu.temperature_c = Some(value as f32),
        "power_draw_watts" => gpu.power_draw_w = Some(value as f32),
        "power_limit_watts" => gpu.power_limit_w = Some(value as f32),
        "sm_clock_hertz" => gpu.sm_clock_mhz = Some((value / 1e6).round() as u32),
        "ecc_corrected_errors" => gpu.ecc_corrected = Some(value as u64),
        "ecc_uncorrected_errors" => gpu.ecc_uncorrected = Some(value as u64),
        "retired_pages" => gpu.retired_pages = Some(value as u32),
        "spot" => gpu.spot = value >= 1.0,
        "lease_info" => gpu.lease_id = sample.labels.get("lease_id").cloned(),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(labels: &[(&str, &str)], value: f64) -> Sample {
        Sample {
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            at_ms: 0,
            value,
        }
    }

    #[test]
    fn a_backend_url_is_prometheus_over_http() {
        assert_eq!(
            backend_url("prometheus+http://127.0.0.1:9090/").unwrap(),
            "http://127.0.0.1:9090"
        );
        assert!(
            backend_url("http://127.0.0.1:9090")
                .unwrap_err()
                .contains("prometheus+http")
        );
        assert!(backend_url("prometheus+ftp://x").is_err());
    }

    #[test]
    fn the_snapshot_reads_up_and_every_gpu_series() {
        let hosts = [
            PromHost {
                name: "a".into(),
                url: "http://a".into(),
                region: "cn-north".into(),
            },
            PromHost {
                name: "b".into(),
                url: "http://b".into(),
                region: "cn-east".into(),
            },
            PromHost {
                name: "c".into(),
                url: "http://c".into(),
                region: "cn-east".into(),
            },
        ];
        let up = [sample(&[("host", "a")], 1.0), sample(&[("host", "b")], 0.0)];
        let gpu = |name: &str, index: &str, value: f64| {
            sample(
                &[
                    ("__name__", name),
                    ("host", "a"),
                    ("index", index),
                    ("uuid", &format!("GPU-{index}")),
                    ("model", "A100"),
                ],
                value,
            )
        };
        let mut lease = gpu("ebb_gpu_lease_info", "1", 1.0);
        lease.labels.insert("lease_id".into(), "L1".into());
        let gpus = [
            gpu("ebb_gpu_utilization_percent", "0", 40.0),
            gpu("ebb_gpu_utilization_percent", "1", 80.0),
            gpu("ebb_gpu_memory_total_bytes", "0", 80.0 * 1024.0 * MIB),
            gpu("ebb_gpu_healthy", "0", 1.0),
            gpu("ebb_gpu_healthy", "1", 1.0),
            lease,
        ];
        let snapshot = snapshot_of(&hosts, 7, &up, &gpus);
        assert_eq!(snapshot.tick, 7);
        let a = &snapshot.hosts[0];
        assert_eq!(
            (a.health, a.gpu_count, a.mean_util_pct),
            (Health::Online, 2, Some(60.0))
        );
        assert_eq!(a.models, ["A100"]);
        assert_eq!(a.gpus[0].memory_total_mib, Some(81_920));
        assert_eq!(a.gpus[1].lease_id.as_deref(), Some("L1"));
        assert_eq!(snapshot.hosts[1].health, Health::Offline);
        assert!(snapshot.hosts[1].last_error.is_some());
        assert_eq!(snapshot.hosts[2].health, Health::Unknown);
    }

    #[test]
    fn series_carry_each_steps_min_mean_and_max() {
        let one = |points: &[(i64, f64)]| {
            vec![RangeSeries {
                labels: [("host", "a"), ("index", "3")]
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                points: points.to_vec(),
            }]
        };
        let series = series_of(
            &one(&[(1000, 10.0)]),
            &one(&[(1000, 20.0), (2000, 30.0)]),
            &one(&[(1000, 40.0)]),
        );
        assert_eq!(series.len(), 1);
        assert_eq!((series[0].host.as_str(), series[0].gpu_index), ("a", 3));
        let p = &series[0].points;
        assert_eq!((p[0].min, p[0].avg, p[0].max), (10.0, 20.0, 40.0));
        assert_eq!((p[1].min, p[1].avg, p[1].max), (30.0, 30.0, 30.0));
    }

    #[test]
    fn heatmap_cells_are_read_at_each_buckets_end() {
        let (from, bucket, columns) = heat_buckets(90_000, 390_000, 5);
        assert_eq!((from, bucket, columns), (60_000, 60_000, 5));
        let answer = vec![RangeSeries {
            labels: [("host", "a"), ("index", "0")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            points: vec![(120_000, 5.0), (360_000, 9.0)],
        }];
        let heat = heatmap_of(ChartMetric::Util, &answer, from, bucket, columns);
        assert_eq!(heat.rows[0].cells, [Some(5.0), None, None, None, Some(9.0)]);
        assert_eq!(heat.to_ms, 360_000);
    }

    #[test]
    fn steps_are_whole_seconds_within_the_points_asked() {
        assert_eq!(step_for(0, 86_400_000, 800), 108_000);
        assert_eq!(step_for(0, 10_000, 800), 1000);
        assert_eq!(step_for(0, 120_500, 120), 2000);
    }

    #[test]
    fn memory_share_divides_used_by_total() {
        let query = expression(ChartMetric::MemoryPct, "{host=\"a\"}", None);
        assert_eq!(
            query,
            "100 * ebb_gpu_memory_used_bytes{host=\"a\"} / ebb_gpu_memory_total_bytes{host=\"a\"}"
        );
        let over = expression(
            ChartMetric::Util,
            "{host=\"a\"}",
            Some(("max_over_time", "60s")),
        );
        assert_eq!(
            over,
            "max_over_time(ebb_gpu_utilization_percent{host=\"a\"}[60s])"
        );
    }

    #[test]
    fn one_number_is_one_series() {
        assert_eq!(number_of(&[sample(&[], 7.25)]), Ok(7.25));
        assert!(number_of(&[]).unwrap_err().contains("no series"));
        let two = [sample(&[("a", "1")], 1.0), sample(&[("a", "2")], 2.0)];
        assert!(number_of(&two).unwrap_err().contains("2 series"));
    }
}
