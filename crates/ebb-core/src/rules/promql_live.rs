//! Custom metrics read from Prometheus: every few seconds the collecting process runs each
//! enabled (or shadow) rule set's `prometheus` queries against the server `console.toml`
//! names, and stores each answer as the pool's metric, as a push would (so staleness, the
//! rules, the Rules view and the chart read it the same way). A query that fails or
//! answers nothing stores nothing (the metric goes stale, the rules on it stand still),
//! until `fallback_after` such answers in a row, from when its `fallback` is stored
//! instead (KEDA's fallback). Every request has its timeout.

use crate::pools::PoolStore;
use ebb_wire::rules::{MetricPush, RulesMode};
use std::collections::HashMap;
use std::time::Duration;

/// How often the queries run.
pub const POLL: Duration = Duration::from_secs(5);

/// Runs the queries every [`POLL`] until the task is dropped.
pub async fn run(store: PoolStore, url: String) {
    let http = match reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(2))
        .build()
    {
        Ok(http) => http,
        Err(error) => {
            tracing::warn!(%error, "cannot make the Prometheus client");
            return;
        }
    };
    let mut failures: HashMap<(String, String), u32> = HashMap::new();
    loop {
        if let Err(error) = tick(&store, &http, &url, &mut failures).await {
            tracing::warn!(%error, "cannot read the rules for their Prometheus metrics");
        }
        tokio::time::sleep(POLL).await;
    }
}

async fn tick(
    store: &PoolStore,
    http: &reqwest::Client,
    url: &str,
    failures: &mut HashMap<(String, String), u32>,
) -> Result<(), crate::pools::PoolError> {
    for stored in store.all_rules().await? {
        if stored.mode == RulesMode::Disabled {
            continue;
        }
        let Ok(rules) = ebb_rules::model::parse(&stored.source) else {
            continue;
        };
        for metric in &rules.spec().metrics {
            let Some(source) = &metric.prometheus else {
                continue;
            };
            let query = ebb_rules::promql::render(&source.query, &stored.pool_name);
            let timeout = Duration::from_secs(u64::from(source.timeout_s));
            let key = (stored.pool_name.clone(), metric.name.clone());
            let value = match instant(http, url, &query, timeout).await {
                Ok(value) => {
                    failures.remove(&key);
                    Some(value)
                }
                Err(problem) => {
                    let failed = failures.entry(key).or_default();
                    *failed = failed.saturating_add(1);
                    tracing::warn!(pool = %stored.pool_name, metric = %metric.name, %problem, failed = *failed, "a Prometheus metric could not be read");
                    source.fallback.filter(|_| *failed >= source.fallback_after)
                }
            };
            if let Some(value) = value {
                let push = MetricPush {
                    name: metric.name.clone(),
                    value,
                    pool: Some(stored.pool_name.clone()),
                    at: None,
                };
                if let Err(error) = store.push_metric(&push).await {
                    tracing::warn!(pool = %stored.pool_name, metric = %metric.name, %error, "cannot store a Prometheus metric");
                }
            }
        }
    }
    Ok(())
}

/// One instant query's number: `Err` says why there is none (the server down, slow or
/// refusing the query, or an answer that is not one number).
pub async fn instant(
    http: &reqwest::Client,
    url: &str,
    query: &str,
    timeout: Duration,
) -> Result<f64, String> {
    let endpoint =
        reqwest::Url::parse_with_params(&format!("{url}/api/v1/query"), [("query", query)])
            .map_err(|error| format!("prometheus: `{url}` is not a URL: {error}"))?;
    let response = http
        .get(endpoint)
        .timeout(timeout)
        .send()
        .await
        .map_err(|error| format!("Prometheus at {url} did not answer: {error}"))?;
    let body: serde_json::Value = response.json().await.map_err(|error| {
        format!("Prometheus at {url} answered something else than JSON: {error}")
    })?;
    answer(&body)
}

/// The number in a `/api/v1/query` answer: a scalar, or a vector of exactly one series.
pub fn answer(body: &serde_json::Value) -> Result<f64, String> {
    if body["status"] != "success" {
        let error = body["error"].as_str().unwrap_or("no reason given");
        return Err(format!("the query was refused: {error}"));
    }
    let data = &body["data"];
    let value = match data["resultType"].as_str() {
        Some("scalar") => &data["result"][1],
        Some("vector") => {
            let result = data["result"].as_array().map_or(&[][..], Vec::as_slice);
            match result {
                [] => return Err("the query answered no series".into()),
                [one] => &one["value"][1],
                many => {
                    return Err(format!(
                        "the query answered {} series: aggregate them into one (sum, max, …)",
                        many.len()
                    ));
                }
            }
        }
        other => {
            return Err(format!(
                "the query answered a {}, not a number",
                other.unwrap_or("nothing")
            ));
        }
    };
    value
        .as_str()
        .and_then(|text| text.parse::<f64>().ok())
        .filter(|value| value.is_finite())
        .ok_or_else(|| format!("the answer {value} is not a finite number"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_answer_is_one_number() {
        let vector = |result: serde_json::Value| json!({"status": "success", "data": {"resultType": "vector", "result": result}});
        let one = vector(json!([{"metric": {}, "value": [1.5, "7.25"]}]));
        assert_eq!(answer(&one), Ok(7.25));
        let scalar =
            json!({"status": "success", "data": {"resultType": "scalar", "result": [1.5, "3"]}});
        assert_eq!(answer(&scalar), Ok(3.0));
        assert!(
            answer(&vector(json!([])))
                .unwrap_err()
                .contains("no series")
        );
        let two = vector(json!([
            {"metric": {"a": "1"}, "value": [1, "1"]},
            {"metric": {"a": "2"}, "value": [1, "2"]}
        ]));
        assert!(answer(&two).unwrap_err().contains("2 series"));
        let nan = vector(json!([{"metric": {}, "value": [1, "NaN"]}]));
        assert!(answer(&nan).is_err());
        let refused = json!({"status": "error", "error": "parse error at char 4"});
        assert!(answer(&refused).unwrap_err().contains("parse error"));
    }
}
