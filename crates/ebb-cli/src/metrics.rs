//! `ebb metrics NAME`: a host's readings over a past window, from `metrics.db` or from
//! Prometheus when it is the metrics back end.

use ebb_telemetry::metrics_store::SeriesQuery;
use ebb_wire::ipc::ChartMetric;
use std::path::Path;
use std::time::Duration;

/// Parses `90s`, `5m`, `1h`, `24h`, `7d`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration like 90s, 5m, 1h or 7d"))?;
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("`{text}`: the unit must be s, m, h or d")),
    };
    if number == 0 {
        return Err(format!("`{text}` must be longer than zero"));
    }
    Ok(Duration::from_secs(number * seconds))
}

pub fn parse_metric(text: &str) -> Result<ChartMetric, String> {
    match text {
        "util" => Ok(ChartMetric::Util),
        "memory" => Ok(ChartMetric::MemoryUsed),
        "memory_pct" => Ok(ChartMetric::MemoryPct),
        "temperature" => Ok(ChartMetric::Temperature),
        "power" => Ok(ChartMetric::Power),
        other => Err(format!(
            "unknown metric `{other}`: expected util, memory, memory_pct, temperature or power"
        )),
    }
}

pub async fn run(
    data_dir: &Path,
    host: &str,
    gpu: Option<u32>,
    since: Duration,
    metric: ChartMetric,
    points: u32,
    json: bool,
) -> anyhow::Result<()> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis() as i64;
    let query = SeriesQuery {
        host: Some(host.to_string()),
        gpu_index: gpu,
        metric,
        from_ms: now - since.as_millis() as i64,
        to_ms: now,
        max_points: points,
    };
    // From the metrics back end the app's charts read: `metrics.db` or Prometheus.
    let config = ebb_core::config::ConsoleConfig::read(data_dir)?;
    let source = ebb_core::metrics_source::open(
        data_dir,
        config.metrics_url(None)?.as_deref(),
        ebb_core::metrics_source::Keep::ReadOnly,
    )
    .await?;
    let series = source.host_series(&query).await;
    source.close().await;
    let series = series?;
    if series.is_empty() {
        anyhow::bail!("no readings of `{host}` in the last {}s", since.as_secs());
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&series)?);
        return Ok(());
    }
    println!(
        "{:<4} {:<24} {:>9} {:>9} {:>9}",
        "GPU", "TIME (UTC ms)", "MIN", "AVG", "MAX"
    );
    for gpu in &series {
        for point in &gpu.points {
            println!(
                "{:<4} {:<24} {:>9.1} {:>9.1} {:>9.1}",
                gpu.gpu_index, point.t_ms, point.min, point.avg, point.max
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_metrics_parse_with_clear_errors() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("24h").unwrap(), Duration::from_secs(86_400));
        assert_eq!(parse_duration("7d").unwrap(), Duration::from_secs(604_800));
        assert!(parse_duration("5").unwrap_err().contains("unit must be"));
        assert!(parse_duration("h").unwrap_err().contains("not a duration"));
        assert!(
            parse_duration("0m")
                .unwrap_err()
                .contains("longer than zero")
        );
        assert_eq!(parse_metric("power").unwrap(), ChartMetric::Power);
        assert!(
            parse_metric("fan")
                .unwrap_err()
                .contains("unknown metric `fan`")
        );
    }
}
