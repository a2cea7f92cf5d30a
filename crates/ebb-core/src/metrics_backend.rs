//! Where the console's readings come from: the embedded collector (the default: every
//! agent polled into `metrics.db`), or Prometheus, named by `metrics =
//! "prometheus+http://HOST:9090"` in the data directory's `console.toml` or `--metrics`.
//! On Prometheus the console polls no agent for telemetry (the enforcer still calls them
//! for leases): the fleet's snapshot is read from it every round while something draws
//! it (only hosts' `up` otherwise), and the charts ask it range queries. While it does not
//! answer, the snapshot keeps the hosts as last read with `metrics_unavailable` set, and
//! each chart is refused with the reason.

use crate::registry::Registry;
use ebb_charts::series::UtilHistory;
use ebb_telemetry::prom::{PromClient, PromHost};
use ebb_wire::agent::GpuList;
use ebb_wire::ipc::{FleetSnapshot, MetricsUnavailable};
use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::watch;

/// Which back end the console reads its readings from.
#[derive(Debug, Clone)]
pub enum MetricsBackend {
    /// The embedded collector and `metrics.db`.
    Embedded,
    /// A Prometheus server scraping the agents through Ebb's service discovery.
    Prometheus(PromClient),
}

impl MetricsBackend {
    /// The back end `given` names (`--metrics`), else the data directory's `console.toml`,
    /// else the embedded collector. A bad value is an error naming `metrics`.
    pub fn of(data_dir: &Path, given: Option<&str>) -> Result<Self, crate::db::OpenError> {
        let url = match given {
            Some(text) => Some(ebb_telemetry::prom::backend_url(text).map_err(|reason| {
                crate::db::OpenError {
                    path: "--metrics".into(),
                    reason: format!("metrics: {reason}"),
                }
            })?),
            None => crate::db::Location::metrics_of_data_dir(data_dir)?,
        };
        match url {
            None => Ok(Self::Embedded),
            Some(url) => PromClient::new(&url, ebb_telemetry::prom::TIMEOUT)
                .map(Self::Prometheus)
                .map_err(|error| crate::db::OpenError {
                    path: url.clone(),
                    reason: format!("metrics: {error}"),
                }),
        }
    }

    pub fn prometheus(&self) -> Option<&PromClient> {
        match self {
            Self::Embedded => None,
            Self::Prometheus(client) => Some(client),
        }
    }
}

/// How often a process that draws nothing reads the hosts' `up` (a scrape's usual interval).
pub const HEALTH_EVERY: Duration = Duration::from_secs(15);

/// Publishes the fleet as Prometheus has it, every `every` (with each GPU's readings when
/// `detail`, else the hosts' `up` only), and records utilization for the live charts.
pub(crate) async fn follow(
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
pub async fn readings_for_rules(
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
