//! Prometheus as the metrics source: the console polls no agent for telemetry (the
//! enforcer still calls them for leases). The fleet's snapshot is read from it every round
//! while something draws it (only hosts' `up` otherwise), and the charts ask it range
//! queries. While it does not answer, the snapshot keeps the hosts as last read with
//! `metrics_unavailable` set, and each chart is refused with the reason.

use super::{Feed, FeedContext, MetricsSource, ReadError, ReadFuture};
use crate::console::ConsoleError;
use crate::db::ConsoleDb;
use crate::registry::Registry;
use ebb_charts::history::{GpuSeries, Heatmap};
use ebb_charts::series::UtilHistory;
use ebb_reconcile::reconcile::{HostObs, PoolStatus};
use ebb_telemetry::metrics_store::{HeatmapQuery, SeriesQuery};
use ebb_telemetry::prom::{PromClient, PromHost};
use ebb_wire::agent::GpuList;
use ebb_wire::ipc::{FleetSnapshot, HostStatus, MetricsUnavailable};
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::watch;

/// A Prometheus server scraping the agents through Ebb's service discovery.
#[derive(Debug, Clone)]
pub struct Prometheus {
    client: PromClient,
}

impl Prometheus {
    /// The server at `url` (its base URL), each query with Prometheus's timeout.
    pub fn new(url: &str) -> Result<Self, ConsoleError> {
        PromClient::new(url, ebb_telemetry::prom::TIMEOUT)
            .map(|client| Self { client })
            .map_err(|error| {
                crate::db::OpenError {
                    path: url.to_string(),
                    reason: format!("metrics: {error}"),
                }
                .into()
            })
    }
}

impl MetricsSource for Prometheus {
    fn describe(&self) -> String {
        format!("Prometheus at {}", self.client.url())
    }

    fn promql_server(&self) -> Option<String> {
        Some(self.client.url().to_string())
    }

    /// A collector and a viewer read it alike: a task of its own, each collection round
    /// when something draws the fleet, at a scrape's usual interval when only whether
    /// hosts are up is read.
    fn feed(&self, context: FeedContext<'_>) -> Result<Feed, ConsoleError> {
        let options = context.options;
        let every = if options.fleet_detail {
            options.collector.interval
        } else {
            HEALTH_EVERY
        };
        let (publish, snapshot) = watch::channel(Arc::new(super::embedded::empty_snapshot()));
        let task = tokio::spawn(follow(
            self.client.clone(),
            context.registry.clone(),
            publish,
            context.history.clone(),
            options.fleet_detail,
            every,
        ));
        Ok(Feed {
            snapshot,
            collector: None,
            tasks: vec![task],
        })
    }

    fn host_series<'a>(&'a self, query: &'a SeriesQuery) -> ReadFuture<'a, Vec<GpuSeries>> {
        Box::pin(async move {
            query.validate()?;
            let host = query.host.as_deref().unwrap_or_default();
            let mut series = self
                .client
                .host_series(
                    host,
                    query.metric,
                    query.from_ms,
                    query.to_ms,
                    query.max_points,
                )
                .await?;
            series.retain(|line| query.gpu_index.is_none_or(|index| line.gpu_index == index));
            Ok(series)
        })
    }

    fn heatmap<'a>(&'a self, query: &'a HeatmapQuery) -> ReadFuture<'a, Heatmap> {
        Box::pin(async move {
            Ok(self
                .client
                .heatmap(query.metric, query.from_ms, query.to_ms, query.columns)
                .await?)
        })
    }

    fn readings_for_rules<'a>(
        &'a self,
        hosts: &'a [HostObs],
        statuses: &'a [PoolStatus],
    ) -> Pin<Box<dyn Future<Output = Option<Vec<HostObs>>> + Send + 'a>> {
        Box::pin(async move { Some(readings_for_rules(&self.client, hosts, statuses).await) })
    }

    fn health_now<'a>(
        &'a self,
        registry: &'a Registry,
        _db: &'a ConsoleDb,
        _data_dir: &'a Path,
    ) -> ReadFuture<'a, Vec<HostStatus>> {
        Box::pin(async move {
            let hosts: Vec<PromHost> = registry
                .list()
                .await
                .map_err(|error| ReadError::Console(Box::new(error.into())))?
                .into_iter()
                .map(Into::into)
                .collect();
            Ok(self.client.health(&hosts, 0).await?.hosts)
        })
    }

    fn close(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(async {})
    }
}

/// How often a process that draws nothing reads the hosts' `up` (a scrape's usual interval).
pub const HEALTH_EVERY: Duration = Duration::from_secs(15);

/// Publishes the fleet as Prometheus has it, every `every` (with each GPU's readings when
/// `detail`, else the hosts' `up` only), and records utilization for the live charts.
async fn follow(
    client: PromClient,
    registry: Registry,
    publish: watch::Sender<Arc<FleetSnapshot>>,
    history: Arc<RwLock<UtilHistory>>,
    detail: bool,
    every: Duration,
) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut tick: u32 = 0;
    loop {
        ticks.tick().await;
        let hosts: Vec<PromHost> = match registry.list().await {
            Ok(entries) => entries.into_iter().map(Into::into).collect(),
            Err(error) => {
                tracing::warn!(%error, "cannot read the registry");
                continue;
            }
        };
        tick = tick.wrapping_add(1);
        let read = if detail {
            client.snapshot(&hosts, tick).await
        } else {
            client.health(&hosts, tick).await
        };
        match read {
            Ok(snapshot) => {
                record(&history, &snapshot);
                publish.send_if_modified(|last| {
                    let changed = detail
                        || last.hosts != snapshot.hosts
                        || last.metrics_unavailable.is_some();
                    if changed {
                        *last = Arc::new(snapshot);
                    }
                    changed
                });
            }
            Err(error) => {
                tracing::warn!(%error, "cannot read the fleet from Prometheus");
                let unavailable = MetricsUnavailable {
                    url: client.url().to_string(),
                    reason: error.reason(),
                };
                publish.send_if_modified(|last| {
                    if last.metrics_unavailable.as_ref() == Some(&unavailable) {
                        return false;
                    }
                    let mut kept = (**last).clone();
                    if kept.hosts.is_empty() {
                        // Never read yet: the registry's hosts, their health unknown.
                        kept.hosts = ebb_telemetry::prom::snapshot_of(&hosts, tick, &[], &[]).hosts;
                    }
                    kept.tick = tick;
                    kept.metrics_unavailable = Some(unavailable);
                    *last = Arc::new(kept);
                    true
                });
            }
        }
    }
}

/// The pass's observations of the hosts where pools hold leases (the only ones the rules
/// look at), with each GPU's readings as Prometheus has them, in one query. A GPU
/// Prometheus has no reading of, or every GPU when it does not answer, reads as unknown,
/// so the rules on utilization and busy GPUs stand still rather than see idle GPUs.
async fn readings_for_rules(
    prometheus: &PromClient,
    hosts: &[ebb_reconcile::reconcile::HostObs],
    statuses: &[ebb_reconcile::reconcile::PoolStatus],
) -> Vec<ebb_reconcile::reconcile::HostObs> {
    let held: std::collections::BTreeSet<&str> = statuses
        .iter()
        .flat_map(|status| status.leases.iter().map(|lease| lease.host.as_str()))
        .collect();
    let mut read: Vec<_> = hosts
        .iter()
        .filter(|host| held.contains(host.name.as_str()))
        .cloned()
        .collect();
    let answer = if held.is_empty() {
        Ok(Vec::new())
    } else {
        let names: Vec<String> = held.iter().map(|host| regex_quote(host)).collect();
        let query = format!(
            "{{__name__=~\"ebb_gpu_(utilization_percent|memory_utilization_percent|memory_used_bytes|memory_total_bytes)\",host=~\"{}\"}}",
            names.join("|")
        );
        prometheus.instant(&query).await
    };
    let samples = answer.unwrap_or_else(|error| {
        tracing::warn!(%error, "the rules have no GPU readings from Prometheus this pass");
        Vec::new()
    });
    let mut by_gpu: std::collections::HashMap<(&str, u32), Vec<&ebb_telemetry::prom::Sample>> =
        std::collections::HashMap::new();
    for sample in &samples {
        if let (Some(host), Some(index)) = (
            sample.labels.get("host"),
            sample
                .labels
                .get("index")
                .and_then(|index| index.parse().ok()),
        ) {
            by_gpu
                .entry((host.as_str(), index))
                .or_default()
                .push(sample);
        }
    }
    for host in &mut read {
        let Some(seen) = &mut host.seen else {
            continue;
        };
        for gpu in &mut seen.gpus {
            gpu.gpu_util_pct = None;
            gpu.memory_util_pct = None;
            gpu.memory_used_mib = None;
            for sample in by_gpu
                .get(&(host.name.as_str(), gpu.index))
                .into_iter()
                .flatten()
            {
                if let Some(name) = sample.labels.get("__name__") {
                    ebb_telemetry::prom::read_into(gpu, name, sample);
                }
            }
        }
    }
    read
}

/// A host name as a literal inside a PromQL regular expression.
fn regex_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if ".+*?()|[]{}^$".contains(c) {
            out.push_str("\\\\");
        } else if c == '"' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Each host's utilization into the live charts' history, at the time it was read.
fn record(history: &RwLock<UtilHistory>, snapshot: &FleetSnapshot) {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as u64)
        .unwrap_or(0);
    if let Ok(mut history) = history.write() {
        for host in &snapshot.hosts {
            if host.gpus.is_empty() {
                continue;
            }
            history.record(
                &host.name,
                &GpuList {
                    host: host.name.clone(),
                    sampled_at_ms: now_ms,
                    gpus: host.gpus.clone(),
                },
            );
        }
    }
}
