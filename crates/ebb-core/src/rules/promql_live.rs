//! Custom metrics read from Prometheus: every few seconds the collecting process runs each
//! enabled (or shadow) rule set's `prometheus` queries against the server `console.toml`
//! names, and stores each answer as the pool's metric, as a push would (so staleness, the
//! rules, the Rules view and the chart read it the same way). A query that fails or
//! answers nothing stores nothing (the metric goes stale, the rules on it stand still),
//! until `fallback_after` such answers in a row, from when its `fallback` is stored
//! instead (KEDA's fallback). Every request has its timeout.

use crate::pools::PoolStore;
use ebb_telemetry::prom::PromClient;
use ebb_wire::rules::{MetricPush, RulesMode};
use std::collections::HashMap;
use std::time::Duration;

/// How often the queries run.
pub const POLL: Duration = Duration::from_secs(5);

/// Runs the queries every [`POLL`] until the task is dropped.
pub async fn run(store: PoolStore, url: String) {
    let prometheus = match PromClient::new(&url, ebb_telemetry::prom::TIMEOUT) {
        Ok(prometheus) => prometheus,
        Err(error) => {
            tracing::warn!(%error, "cannot make the Prometheus client");
            return;
        }
    };
    let mut failures: HashMap<(String, String), u32> = HashMap::new();
    loop {
        if let Err(error) = tick(&store, &prometheus, &mut failures).await {
            tracing::warn!(%error, "cannot read the rules for their Prometheus metrics");
        }
        tokio::time::sleep(POLL).await;
    }
}

async fn tick(
    store: &PoolStore,
    prometheus: &PromClient,
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
            let value = match prometheus.number(&query, timeout).await {
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
