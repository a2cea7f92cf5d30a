//! The embedded collector as the metrics source (the default): the collecting process
//! polls every agent, writes `metrics.db` as its one writer (a batch each round; rollups
//! and retention once a wall-clock minute, 5 s into it, when the minute before is whole),
//! keeps the live charts' history and records host health for viewers; a viewing process
//! reads those records.

use super::{Feed, FeedContext, Keep, MetricsSource, ReadError, ReadFuture};
use crate::console::{ConsoleError, Role, collector_running};
use crate::db::ConsoleDb;
use crate::registry::{HostEntry, Registry, RegistryError};
use ebb_charts::history::{GpuSeries, Heatmap};
use ebb_charts::series::UtilHistory;
use ebb_reconcile::reconcile::{HostObs, PoolStatus};
use ebb_telemetry::client::AgentAccess;
use ebb_telemetry::collect::{Collector, CollectorConfig, Target, Tick, unknown_status};
use ebb_telemetry::metrics_store::{
    HeatmapQuery, MetricsStore, RetentionConfig, SampleRow, SeriesQuery,
};
use ebb_wire::ipc::{FleetSnapshot, Health, HostStatus};
use sqlx::Row;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// The collector's `metrics.db`.
#[derive(Debug)]
pub struct Embedded {
    store: MetricsStore,
    data_dir: PathBuf,
}

impl Embedded {
    /// `data_dir`'s `metrics.db`: made when `keep` is [`Keep::Store`]; with
    /// [`Keep::ReadOnly`], an error saying none was collected yet when it is missing.
    pub async fn open(data_dir: &Path, keep: Keep) -> Result<Self, ConsoleError> {
        let path = data_dir.join("metrics.db");
        if keep == Keep::ReadOnly && !path.exists() {
            return Err(ConsoleError::DataDir {
                path: data_dir.display().to_string(),
                reason: "no metrics here yet: run `ebb daemon` (or the app) to collect".into(),
            });
        }
        Ok(Self {
            store: MetricsStore::open(&path, RetentionConfig::default()).await?,
            data_dir: data_dir.to_path_buf(),
        })
    }
}

impl MetricsSource for Embedded {
    fn describe(&self) -> String {
        format!("metrics.db in {}", self.data_dir.display())
    }

    fn promql_server(&self) -> Option<String> {
        None
    }

    /// The collecting process polls the agents (and follows the registry other processes
    /// change); a viewer reads what it records, once per interval.
    fn feed(&self, context: FeedContext<'_>) -> Result<Feed, ConsoleError> {
        if context.role == Role::Viewer {
            let (publish, snapshot) = watch::channel(Arc::new(empty_snapshot()));
            let task = tokio::spawn(view(
                context.db.clone(),
                context.options.collector.interval,
                publish,
            ));
            return Ok(Feed {
                snapshot,
                collector: None,
                tasks: vec![task],
            });
        }
        let (sink, ticks) = mpsc::channel(8);
        let collector = Collector::start(Vec::new(), context.options.collector, Some(sink))?;
        let snapshot = collector.subscribe();
        let tasks = vec![
            tokio::spawn(write_ticks(
                ticks,
                context.db.clone(),
                context.history.clone(),
                self.store.clone(),
            )),
            // Hosts added by another process (`ebb hosts add`, a viewing window) arrive here.
            tokio::spawn(follow_registry(
                context.registry.clone(),
                collector.targets_handle(),
                REGISTRY_POLL,
            )),
        ];
        Ok(Feed {
            snapshot,
            collector: Some(collector),
            tasks,
        })
    }

    fn host_series<'a>(&'a self, query: &'a SeriesQuery) -> ReadFuture<'a, Vec<GpuSeries>> {
        Box::pin(async move { Ok(self.store.query(query).await?) })
    }

    fn heatmap<'a>(&'a self, query: &'a HeatmapQuery) -> ReadFuture<'a, Heatmap> {
        Box::pin(async move { Ok(self.store.heatmap(query).await?) })
    }

    /// The pass's own observations, from the agents, are the readings.
    fn readings_for_rules<'a>(
        &'a self,
        _hosts: &'a [HostObs],
        _statuses: &'a [PoolStatus],
    ) -> Pin<Box<dyn Future<Output = Option<Vec<HostObs>>> + Send + 'a>> {
        Box::pin(async { None })
    }

    /// From the running collector's records, or, when none runs, from one poll of every
    /// host now.
    fn health_now<'a>(
        &'a self,
        registry: &'a Registry,
        db: &'a ConsoleDb,
        data_dir: &'a Path,
    ) -> ReadFuture<'a, Vec<HostStatus>> {
        Box::pin(async move {
            let console = |error: ConsoleError| ReadError::Console(Box::new(error));
            let running = collector_running(data_dir).map_err(|error| {
                console(ConsoleError::DataDir {
                    path: data_dir.display().to_string(),
                    reason: error.to_string(),
                })
            })?;
            if running {
                return read_snapshot(db)
                    .await
                    .map_err(|error| console(RegistryError::from(error).into()));
            }
            poll_now(registry).await.map_err(console)
        })
    }

    fn close(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(self.store.close())
    }
}

/// A snapshot before the first round.
pub(crate) fn empty_snapshot() -> FleetSnapshot {
    FleetSnapshot {
        tick: 0,
        hosts: Vec::new(),
        metrics_unavailable: None,
    }
}

/// How often the collector looks for registry changes made by other processes.
const REGISTRY_POLL: Duration = Duration::from_secs(3);

/// The collector's targets for these hosts, tokens read from the vault.
pub(crate) async fn targets_for(registry: &Registry, specs: &[HostEntry]) -> Vec<Target> {
    let mut targets = Vec::with_capacity(specs.len());
    for spec in specs {
        let token = match registry.token(spec).await {
            Ok(token) => token,
            Err(error) => {
                tracing::warn!(host = %spec.name, %error, "cannot read the host's token");
                None
            }
        };
        targets.push(target(spec, token));
    }
    targets
}

/// Re-reads the registry every `every`; when its rows changed, re-targets the collector.
/// The vault is only read on a change.
async fn follow_registry(
    registry: Registry,
    handle: ebb_telemetry::collect::TargetsHandle,
    every: Duration,
) {
    let mut last: Option<Vec<HostEntry>> = None;
    let mut ticks = tokio::time::interval(every);
    loop {
        ticks.tick().await;
        let Ok(specs) = registry.list().await else {
            continue;
        };
        if last.as_ref() != Some(&specs) {
            handle.set(targets_for(&registry, &specs).await);
            last = Some(specs);
        }
    }
}

fn target(spec: &HostEntry, token: Option<String>) -> Target {
    Target {
        name: spec.name.clone(),
        region: spec.region.clone(),
        access: AgentAccess {
            url: spec.url.clone(),
            token,
            fingerprint: spec.fingerprint.clone(),
        },
    }
}

/// The writer rolls up and trims the metrics store once a minute of the wall clock, ...
const COMPACT_EVERY_MS: i64 = 60_000;
/// ... this far into it, when the minute before has all its samples.
const COMPACT_AFTER_MS: i64 = 5_000;

/// The collector's writer: every sample into the metrics store (one transaction a tick),
/// live history for the charts, host health for viewers, rollups and retention each minute.
async fn write_ticks(
    mut ticks: mpsc::Receiver<Tick>,
    db: ConsoleDb,
    history: Arc<RwLock<UtilHistory>>,
    metrics: MetricsStore,
) {
    let mut last_written: Vec<HostStatus> = Vec::new();
    let mut compacted: Option<i64> = None;
    while let Some(tick) = ticks.recv().await {
        if let Ok(mut history) = history.write() {
            for list in &tick.samples {
                history.record(&list.host, list);
            }
        }
        let rows = sample_rows(&tick.samples);
        if !rows.is_empty()
            && let Err(error) = metrics.insert_batch(&rows).await
        {
            tracing::warn!(%error, rows = rows.len(), "cannot store samples");
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.as_millis() as i64)
            .unwrap_or(0);
        // Once a minute, a few seconds into it: the minute before is whole by then, so the
        // rollup reads about a minute of samples (at an arbitrary phase it re-read up to two,
        // 1.1 s a minute at 10,000 GPUs, with the writer waiting).
        if now % COMPACT_EVERY_MS >= COMPACT_AFTER_MS
            && compacted.replace(now / COMPACT_EVERY_MS) != Some(now / COMPACT_EVERY_MS)
            && let Err(error) = metrics.compact(now).await
        {
            tracing::warn!(%error, "cannot roll up or trim the metrics store");
        }
        if tick.snapshot.hosts != last_written {
            if let Err(error) = write_health(&db, &tick.snapshot.hosts).await {
                tracing::warn!(%error, "cannot record host health");
            }
            last_written.clone_from(&tick.snapshot.hosts);
        }
    }
}

/// One row per GPU reading. Pure.
pub fn sample_rows(samples: &[Arc<ebb_wire::agent::GpuList>]) -> Vec<SampleRow> {
    samples
        .iter()
        .flat_map(|list| {
            list.gpus.iter().map(move |gpu| SampleRow {
                host: list.host.clone(),
                gpu_index: gpu.index,
                t_ms: list.sampled_at_ms as i64,
                util_pct: gpu.gpu_util_pct,
                memory_used_mib: gpu.memory_used_mib,
                memory_total_mib: gpu.memory_total_mib,
                temperature_c: gpu.temperature_c,
                power_w: gpu.power_draw_w,
            })
        })
        .collect()
}

async fn write_health(db: &ConsoleDb, hosts: &[HostStatus]) -> Result<(), sqlx::Error> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as i64)
        .unwrap_or(0);
    let mut tx = db.begin_write().await?;
    for host in hosts {
        sqlx::query(
            "INSERT INTO host_health (name, health, reason, gpu_count, models, mean_util_pct, checked_at_ms)
             VALUES ($1, $2, $3, $4, $5, CASE WHEN $8 = 1 THEN $6 END, $7)
             ON CONFLICT (name) DO UPDATE SET health = excluded.health, reason = excluded.reason,
               gpu_count = excluded.gpu_count, models = excluded.models,
               mean_util_pct = excluded.mean_util_pct, checked_at_ms = excluded.checked_at_ms",
        )
        .bind(&host.name)
        .bind(health_word(host.health))
        .bind(host.last_error.as_ref().map(|problem| {
            serde_json::to_string(problem).expect("a host problem always serializes")
        }))
        .bind(i64::from(host.gpu_count))
        .bind(serde_json::to_string(&host.models).unwrap_or_default())
        .bind(host.mean_util_pct.map_or(0.0, f64::from))
        .bind(now)
        .bind(i64::from(host.mean_util_pct.is_some()))
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await
}

fn health_word(health: Health) -> &'static str {
    match health {
        Health::Online => "online",
        Health::Degraded => "degraded",
        Health::Offline => "offline",
        Health::Unknown => "unknown",
    }
}

/// A viewer: reads what the collecting process records, once per interval.
async fn view(db: ConsoleDb, interval: Duration, publish: watch::Sender<Arc<FleetSnapshot>>) {
    let mut ticks = tokio::time::interval(interval);
    let mut tick = 0u32;
    loop {
        ticks.tick().await;
        match read_snapshot(&db).await {
            Ok(hosts) => {
                tick = tick.wrapping_add(1);
                publish.send_replace(Arc::new(FleetSnapshot {
                    tick,
                    hosts,
                    metrics_unavailable: None,
                }));
            }
            Err(error) => tracing::warn!(%error, "cannot read the collector's records"),
        }
    }
}

/// Every registered host with the health the collector last recorded.
pub async fn read_snapshot(db: &ConsoleDb) -> Result<Vec<HostStatus>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT h.name, h.url, h.region, s.health, s.reason, s.gpu_count, s.models, s.mean_util_pct
         FROM hosts h LEFT JOIN host_health s ON s.name = h.name ORDER BY h.region, h.name",
    )
    .fetch_all(db.pool())
    .await?;
    Ok(rows
        .iter()
        .map(|row| {
            let mut status = unknown_status(&Target {
                name: row.get("name"),
                region: row.get("region"),
                access: AgentAccess::open(row.get::<&str, _>("url")),
            });
            status.health = match row.get::<Option<&str>, _>("health") {
                Some("online") => Health::Online,
                Some("degraded") => Health::Degraded,
                Some("offline") => Health::Offline,
                _ => Health::Unknown,
            };
            // JSON; a record from before problems had a kind reads as none until the next poll.
            status.last_error = row
                .get::<Option<&str>, _>("reason")
                .and_then(|text| serde_json::from_str(text).ok());
            status.gpu_count = row.get::<Option<i64>, _>("gpu_count").unwrap_or(0) as u32;
            status.models = row
                .get::<Option<&str>, _>("models")
                .and_then(|text| serde_json::from_str(text).ok())
                .unwrap_or_default();
            status.mean_util_pct = row
                .get::<Option<f64>, _>("mean_util_pct")
                .map(|pct| pct as f32);
            status
        })
        .collect())
}

/// Each registered host's health from one poll of every host now (at once, each with its
/// timeouts).
async fn poll_now(registry: &Registry) -> Result<Vec<HostStatus>, ConsoleError> {
    let specs = registry.list().await?;
    let mut calls = Vec::with_capacity(specs.len());
    for (position, spec) in specs.iter().enumerate() {
        let token = registry.token(spec).await.unwrap_or(None);
        calls.push((position, spec.clone(), token));
    }
    let answers = ebb_telemetry::fanout::fan_out(
        calls,
        CollectorConfig::default().max_concurrent_polls,
        |(position, spec, token)| async move {
            let result = ebb_telemetry::client::AgentClient::with_access(
                &ebb_telemetry::client::AgentAccess {
                    url: spec.url.clone(),
                    token,
                    fingerprint: spec.fingerprint.clone(),
                },
                ebb_telemetry::client::ClientConfig::default(),
            );
            let polled = match result {
                Ok(client) => client.gpus().await,
                Err(error) => Err(error),
            };
            (position, polled)
        },
    )
    .await;
    let mut statuses: Vec<HostStatus> = specs
        .iter()
        .map(|spec| {
            ebb_telemetry::collect::unknown_status(&ebb_telemetry::collect::Target {
                name: spec.name.clone(),
                region: spec.region.clone(),
                access: ebb_telemetry::client::AgentAccess::open(&spec.url),
            })
        })
        .collect();
    let config = CollectorConfig {
        offline_after_failures: 1,
        ..CollectorConfig::default()
    };
    for (position, polled) in answers {
        let mut failures = 0;
        ebb_telemetry::collect::apply_poll(
            &mut statuses[position],
            &mut failures,
            &polled,
            Duration::ZERO,
            &config,
        );
    }
    Ok(statuses)
}
