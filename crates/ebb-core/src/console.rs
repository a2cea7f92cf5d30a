//! The console as one service, shared by the desktop shell and `ebb daemon`: the registry,
//! and either the collector (the first process on a data directory) or a viewer (any
//! later one), so a data directory is never collected twice.
//!
//! The first process on a data directory takes `collector.lock` (an OS file lock, freed if
//! it dies) and collects: it polls the hosts, writes `metrics.db` as its one writer (a batch
//! each round; rollups and retention once a wall-clock minute, 5 s into it, when the minute
//! before is whole), keeps the live charts' history, records host health for viewers, and
//! runs the enforcer. Any later process (the app or `ebb daemon`) views what it records.
//! With Prometheus as the metrics back end ([`crate::metrics_backend`]) no agent is polled
//! for readings. Consoles sharing a PostgreSQL database each collect for themselves and
//! elect one enforcer ([`crate::election`]); only a console whose role is admin or enforcer
//! stands for it.

use crate::clock::{SharedClock, SystemClock};
pub use crate::console_pools::ScaleChange;
use crate::db::ConsoleDb;
use crate::election::{Election, ElectionConfig, LeaderHandle, Leadership};
use crate::enforcer::{Enforcer, EnforcerConfig};
use crate::pools::PoolStore;
use crate::registry::{HostEntry, Registry, RegistryError};
use crate::vault::{FileVault, KeychainVault, TokenVault, VaultError};
use ebb_charts::series::{GpuSeries, UtilHistory};
use ebb_telemetry::client::{AgentAccess, AgentClient, AgentError};
use ebb_telemetry::collect::{Collector, CollectorConfig, Target, Tick, unknown_status};
use ebb_telemetry::metrics_store::{MetricsError, MetricsStore, RetentionConfig, SampleRow};
use ebb_wire::agent::Health as AgentHealth;
use ebb_wire::ipc::{
    ConnectionOk, EnforcerRole, FleetSnapshot, Health, HostStatus, TokenStoreKind,
};
use sqlx::Row;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

/// Where tokens are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TokenStore {
    /// The OS keychain.
    #[default]
    Keychain,
    /// `tokens.json` (mode 0600) in the data directory: only when the operator opts in.
    File,
    /// In memory, for the demo fleet and tests.
    Memory,
}

impl std::str::FromStr for TokenStore {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "keychain" => Ok(Self::Keychain),
            "file" => Ok(Self::File),
            other => Err(format!(
                "unknown token store `{other}`: expected keychain or file"
            )),
        }
    }
}

#[derive(Debug, Clone)]
pub struct ConsoleOptions {
    pub data_dir: PathBuf,
    pub token_store: TokenStore,
    pub collector: CollectorConfig,
    /// Readings kept per GPU for the live charts.
    pub history_points: usize,
    /// The reconcile loop, run by the collecting process.
    pub enforcer: EnforcerConfig,
    /// Never collect or enforce, even when no other process does (read-only commands).
    pub viewer_only: bool,
    /// What the stores and the enforcer read as now (the wall clock but in tests).
    pub clock: SharedClock,
    /// Where the collecting process serves `POST /v1/metrics` (custom metrics for the
    /// rules); `None`: not served. A port in use is said in the log, not fatal.
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// How consoles sharing a database elect their enforcer.
    pub election: ElectionConfig,
    /// The Slurm that pools bound to a partition work with: the real controller, bound by
    /// `slurm.toml`, but in the demo.
    pub slurm: crate::slurm::api::SlurmSetup,
    /// The metrics back end, `prometheus+http://HOST:9090` (`--metrics`); `None`: the one
    /// `console.toml` names, else the embedded collector.
    pub metrics: Option<String>,
    /// On Prometheus, read every GPU's readings each round (a window draws them); `false`
    /// reads only whether each host is up (`ebb daemon`).
    pub fleet_detail: bool,
}

/// The metrics endpoint's default address: loopback only.
pub const DEFAULT_METRICS_LISTEN: &str = "127.0.0.1:7171";

impl ConsoleOptions {
    pub fn new(data_dir: &Path) -> Self {
        Self {
            data_dir: data_dir.to_path_buf(),
            token_store: TokenStore::Keychain,
            collector: CollectorConfig::default(),
            history_points: 120,
            enforcer: EnforcerConfig::default(),
            viewer_only: false,
            clock: Arc::new(SystemClock),
            metrics_listen: None,
            election: ElectionConfig::default(),
            slurm: crate::slurm::api::SlurmSetup::default(),
            metrics: None,
            fleet_detail: true,
        }
    }
}

/// Whether this process collects, or shows what another one collects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Collector,
    Viewer,
}

#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Agent(#[from] AgentError),
    #[error("cannot use the data directory {path}: {reason}")]
    DataDir { path: String, reason: String },
    #[error(transparent)]
    Metrics(#[from] MetricsError),
    /// The metrics back end (Prometheus) did not answer.
    #[error("metrics unavailable: {0}")]
    MetricsUnavailable(#[from] ebb_telemetry::prom::PromError),
}

impl TokenStore {
    /// The vault this choice names, for the data directory `data_dir`.
    pub fn vault(self, data_dir: &Path) -> Arc<dyn TokenVault> {
        match self {
            TokenStore::Keychain => Arc::new(KeychainVault),
            TokenStore::File => Arc::new(FileVault::new(data_dir)),
            TokenStore::Memory => Arc::new(crate::vault::MemoryVault::default()),
        }
    }
}

impl From<crate::db::OpenError> for ConsoleError {
    fn from(error: crate::db::OpenError) -> Self {
        ConsoleError::Registry(error.into())
    }
}

/// The console service.
#[derive(Debug)]
pub struct Console {
    registry: Registry,
    role: Role,
    collector: std::sync::Mutex<Option<Collector>>,
    snapshot: watch::Receiver<Arc<FleetSnapshot>>,
    history: Arc<RwLock<UtilHistory>>,
    metrics: MetricsStore,
    pub(crate) pools: PoolStore,
    pub(crate) enforcer: std::sync::Mutex<Option<Enforcer>>,
    /// This console's part in electing the enforcer, when it shares its database.
    election: std::sync::Mutex<Option<Election>>,
    pub(crate) data_dir: PathBuf,
    /// The Slurm bound pools work with (`ConsoleOptions::slurm`).
    pub(crate) slurm: crate::slurm::api::SlurmSetup,
    tasks: std::sync::Mutex<Vec<JoinHandle<()>>>,
    /// `POST /v1/metrics`, when this process collects and was asked to serve it.
    metrics_api: std::sync::Mutex<Option<crate::metrics_api::MetricsApi>>,
    /// Where readings come from: the embedded collector or Prometheus.
    backend: crate::metrics_backend::MetricsBackend,
    /// Held while this process is the collector; the OS frees it if the process dies.
    _lock: Option<std::fs::File>,
}

impl Console {
    pub async fn open(options: ConsoleOptions) -> Result<Self, ConsoleError> {
        let data_dir = &options.data_dir;
        let dir_error = |reason: String| ConsoleError::DataDir {
            path: data_dir.display().to_string(),
            reason,
        };
        std::fs::create_dir_all(data_dir).map_err(|error| dir_error(error.to_string()))?;
        let db = ConsoleDb::open(data_dir)
            .await?
            .with_clock(options.clock.clone());
        let backend =
            crate::metrics_backend::MetricsBackend::of(data_dir, options.metrics.as_deref())?;
        let vault = options.token_store.vault(data_dir);
        let registry = Registry::new(db.clone(), vault);
        let lock = if options.viewer_only {
            None
        } else {
            try_lock(&data_dir.join("collector.lock"))
                .map_err(|error| dir_error(error.to_string()))?
        };
        let history = Arc::new(RwLock::new(UtilHistory::new(options.history_points)));
        // On Prometheus nothing is stored here: no metrics.db.
        let metrics = if backend.prometheus().is_some() {
            MetricsStore::in_memory().await?
        } else {
            MetricsStore::open(&data_dir.join("metrics.db"), RetentionConfig::default()).await?
        };
        let mut tasks = Vec::new();
        let pools = PoolStore::new(db.clone());
        let mut enforcer = None;
        let mut election = None;
        // Only an admin's or the enforcer service role's console stands for enforcer: a
        // viewer's or an operator's may not write what enforcing writes.
        let may_enforce = matches!(
            db.identity().role,
            ebb_wire::access::AccessRole::Admin | ebb_wire::access::AccessRole::Enforcer
        );
        let (role, collector, snapshot) = if lock.is_some() {
            // Consoles sharing a database elect the one that enforces; one alone enforces.
            let leader = if !may_enforce {
                LeaderHandle::never()
            } else if db.is_shared() {
                let elected = Election::start(&pools, options.election)
                    .await
                    .map_err(|error| ConsoleError::Registry(error.into()))?;
                let leader = elected.handle();
                election = Some(elected);
                leader
            } else {
                LeaderHandle::sole()
            };
            // The spot breaker's policy: the data directory's console.toml, where it sets one.
            let mut enforcer_config = options.enforcer;
            if let Some(policy) = crate::db::Location::spot_breaker_of_data_dir(data_dir)
                .map_err(|error| ConsoleError::Registry(error.into()))?
            {
                enforcer_config.spot_breaker = policy;
            }
            enforcer = Some(Enforcer::start_bound(
                pools.clone(),
                registry.clone(),
                data_dir.clone(),
                enforcer_config,
                leader,
                options.slurm.clone(),
                backend.prometheus().cloned(),
            ));
            if let Some(client) = backend.prometheus() {
                // On Prometheus: no agent is polled for telemetry.
                let snapshot = follow_prometheus(client, &registry, &history, &options, &mut tasks);
                (Role::Collector, None, snapshot)
            } else {
                let (sink, ticks) = mpsc::channel(8);
                let collector = Collector::start(Vec::new(), options.collector, Some(sink))?;
                let snapshot = collector.subscribe();
                tasks.push(tokio::spawn(write_ticks(
                    ticks,
                    db.clone(),
                    history.clone(),
                    metrics.clone(),
                )));
                // Hosts added by another process (`ebb hosts add`, a viewing window) arrive here.
                tasks.push(tokio::spawn(follow_registry(
                    registry.clone(),
                    collector.targets_handle(),
                    REGISTRY_POLL,
                )));
                (Role::Collector, Some(collector), snapshot)
            }
        } else if let Some(client) = backend.prometheus() {
            // A viewer on Prometheus reads it as the collecting process would.
            let snapshot = follow_prometheus(client, &registry, &history, &options, &mut tasks);
            (Role::Viewer, None, snapshot)
        } else {
            let (publish, snapshot) = watch::channel(Arc::new(empty_snapshot()));
            tasks.push(tokio::spawn(view(
                db.clone(),
                options.collector.interval,
                publish,
            )));
            (Role::Viewer, None, snapshot)
        };
        // Custom metrics read from Prometheus, where console.toml names a server.
        if role == Role::Collector
            && let Some(url) = promql_server(data_dir, &backend)?
        {
            tasks.push(tokio::spawn(crate::rules::promql_live::run(
                pools.clone(),
                url,
            )));
        }
        let metrics_api = match options.metrics_listen {
            Some(listen) if role == Role::Collector => {
                match crate::metrics_api::MetricsApi::start(pools.clone(), registry.clone(), listen)
                    .await
                {
                    Ok(api) => Some(api),
                    Err(error) => {
                        tracing::warn!(%listen, %error, "cannot serve the metrics endpoint; custom metrics can still be pushed with `ebb metric push`");
                        None
                    }
                }
            }
            _ => None,
        };
        let console = Self {
            registry,
            role,
            collector: std::sync::Mutex::new(collector),
            snapshot,
            history,
            metrics,
            pools,
            enforcer: std::sync::Mutex::new(enforcer),
            election: std::sync::Mutex::new(election),
            data_dir: data_dir.clone(),
            slurm: options.slurm.clone(),
            tasks: std::sync::Mutex::new(tasks),
            metrics_api: std::sync::Mutex::new(metrics_api),
            backend,
            _lock: lock,
        };
        console.reload().await?;
        Ok(console)
    }

    pub fn role(&self) -> Role {
        self.role
    }

    /// Whether this console enforces now, for the operator.
    pub fn enforcer_role(&self) -> EnforcerRole {
        match self.leadership() {
            Some(leadership) => leadership.borrow().role(tokio::time::Instant::now()),
            None => EnforcerRole::NotCollecting,
        }
    }

    /// Whether this console enforces, as it changes: `Sole` alone on its database; leader or
    /// follower when it shares one. `None` for a viewer, which never enforces.
    pub fn leadership(&self) -> Option<watch::Receiver<Leadership>> {
        if self.role == Role::Viewer {
            return None;
        }
        let election = self.election.lock().ok()?;
        Some(match election.as_ref() {
            Some(election) => election.handle().watch(),
            None => LeaderHandle::sole().watch(),
        })
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    pub fn subscribe(&self) -> watch::Receiver<Arc<FleetSnapshot>> {
        self.snapshot.clone()
    }

    pub fn latest(&self) -> Arc<FleetSnapshot> {
        self.snapshot.borrow().clone()
    }

    /// Recent utilization of every GPU of `host`, for the live chart.
    pub fn host_series(&self, host: &str) -> Vec<GpuSeries> {
        self.history
            .read()
            .map(|history| history.host_series(host))
            .unwrap_or_default()
    }

    /// Stored samples and rollups, for range charts (written by the collecting process).
    pub fn metrics(&self) -> &MetricsStore {
        &self.metrics
    }

    /// Where readings come from.
    pub fn metrics_backend(&self) -> &crate::metrics_backend::MetricsBackend {
        &self.backend
    }

    /// The newest reading time over all hosts.
    pub fn latest_sample_ms(&self) -> Option<f64> {
        self.history
            .read()
            .ok()
            .and_then(|history| history.latest_ms())
    }

    /// Points the collector at the registry's hosts as they are now.
    pub async fn reload(&self) -> Result<(), ConsoleError> {
        if self.role != Role::Collector {
            return Ok(());
        }
        let specs = self.registry.list().await?;
        let targets = targets_for(&self.registry, &specs).await;
        if let Ok(collector) = self.collector.lock()
            && let Some(collector) = collector.as_ref()
        {
            collector.set_targets(targets);
        }
        Ok(())
    }

    pub async fn add_host(
        &self,
        spec: &HostEntry,
        token: Option<&str>,
    ) -> Result<HostEntry, ConsoleError> {
        self.require(ebb_wire::access::AccessAction::Hosts)
            .await
            .map_err(RegistryError::from)?;
        let added = self.registry.add(spec, token).await?;
        self.reload().await?;
        Ok(added)
    }

    pub async fn update_host(
        &self,
        name: &str,
        spec: &HostEntry,
        token: Option<&str>,
    ) -> Result<HostEntry, ConsoleError> {
        self.require(ebb_wire::access::AccessAction::Hosts)
            .await
            .map_err(RegistryError::from)?;
        let updated = self.registry.update(name, spec, token).await?;
        self.reload().await?;
        Ok(updated)
    }

    /// Removes a host. Where pools hold GPUs there: refused (`release` false), or
    /// `release` drains it: the enforcer releases those GPUs, each pool takes its GPUs
    /// elsewhere, and the host goes once none is left.
    pub async fn remove_host(
        &self,
        name: &str,
        release: bool,
    ) -> Result<ebb_wire::ipc::HostRemoval, ConsoleError> {
        self.require(ebb_wire::access::AccessAction::Hosts)
            .await
            .map_err(RegistryError::from)?;
        let removal = if release {
            self.registry.remove_releasing(name).await?
        } else {
            self.registry.remove(name).await?;
            ebb_wire::ipc::HostRemoval::Removed
        };
        if removal == ebb_wire::ipc::HostRemoval::Removed {
            self.reload().await?;
        } else {
            self.wake_enforcer();
        }
        Ok(removal)
    }

    /// Adds the host, or updates it when one of that name exists (the demo fleet's ports
    /// change on every start).
    pub async fn upsert_host(
        &self,
        spec: &HostEntry,
        token: Option<&str>,
    ) -> Result<HostEntry, ConsoleError> {
        match self.registry.get(&spec.name).await {
            Ok(_) => self.update_host(&spec.name, spec, token).await,
            Err(RegistryError::NotFound(_)) => self.add_host(spec, token).await,
            Err(error) => Err(error.into()),
        }
    }

    /// Where host tokens go, as the operator should hear it: the keychain only when one
    /// answers here (asked off the async workers, for at most 3 s), else why not and how to
    /// keep them (`--token-store file`), never a silent fallback.
    pub async fn token_store(&self) -> TokenStoreKind {
        let kind = self.registry.vault().describe();
        if kind != TokenStoreKind::Keychain {
            return kind;
        }
        let probe = tokio::task::spawn_blocking(KeychainVault::probe);
        match tokio::time::timeout(Duration::from_secs(3), probe).await {
            Ok(Ok(Ok(()))) => kind,
            Ok(Ok(Err(error))) => TokenStoreKind::NoKeychain {
                reason: match error {
                    VaultError::NoKeychain(reason) | VaultError::Failed(reason) => reason,
                },
            },
            Ok(Err(error)) => TokenStoreKind::NoKeychain {
                reason: error.to_string(),
            },
            Err(_) => TokenStoreKind::NoKeychain {
                reason: "the keychain did not answer within 3 s".into(),
            },
        }
    }

    /// "Test connection": the agent's health and GPUs, or exactly what failed.
    pub async fn test_host(
        spec: &HostEntry,
        token: Option<&str>,
        config: CollectorConfig,
    ) -> Result<AgentHealth, AgentError> {
        let access = AgentAccess {
            url: spec.url.clone(),
            token: token.map(str::to_string),
            fingerprint: spec.fingerprint.clone(),
        };
        let client = AgentClient::with_access(&access, config.client)?;
        Ok(client.test().await?.0)
    }

    /// "Test connection" on a host as typed (before or after saving): with the token typed,
    /// else the one stored for a saved host of that name.
    pub async fn try_host(
        &self,
        typed: &HostEntry,
        token: Option<&str>,
    ) -> Result<ConnectionOk, ConsoleError> {
        let spec = crate::registry::validate(typed)?;
        let stored = match token.filter(|token| !token.is_empty()) {
            Some(token) => Some(token.to_string()),
            // An empty token field on a saved host means "use the stored one".
            None => match self.registry.get(&spec.name).await {
                Ok(saved) => self.registry.token(&saved).await?,
                Err(_) => None,
            },
        };
        let health = Self::test_host(&spec, stored.as_deref(), CollectorConfig::default()).await?;
        Ok(ConnectionOk {
            host: health.host,
            agent_version: health.agent_version,
            backend: health.backend,
        })
    }

    /// Stops collecting and viewing.
    /// Where `POST /v1/metrics` is served, when it is.
    pub fn metrics_api_addr(&self) -> Option<std::net::SocketAddr> {
        self.metrics_api
            .lock()
            .ok()
            .and_then(|api| api.as_ref().map(crate::metrics_api::MetricsApi::addr))
    }

    pub async fn shutdown(&self) {
        let api = self
            .metrics_api
            .lock()
            .ok()
            .and_then(|mut slot| slot.take());
        if let Some(api) = api {
            api.stop().await;
        }
        let enforcer = self.enforcer.lock().ok().and_then(|mut slot| slot.take());
        if let Some(enforcer) = enforcer {
            enforcer.stop().await;
        }
        // The lease goes back once nothing acts on it, so another console takes over now.
        let election = self.election.lock().ok().and_then(|mut slot| slot.take());
        if let Some(election) = election {
            election.stop().await;
        }
        let collector = self.collector.lock().ok().and_then(|mut slot| slot.take());
        if let Some(collector) = collector {
            collector.stop().await;
        }
        let tasks: Vec<JoinHandle<()>> = self
            .tasks
            .lock()
            .map(|mut tasks| tasks.drain(..).collect())
            .unwrap_or_default();
        for task in tasks {
            task.abort();
            let _ = task.await;
        }
        self.metrics.close().await;
    }
}

/// The server the rules' PromQL metrics ask: `console.toml`'s `prometheus`, else the
/// metrics back end's Prometheus (from `console.toml` or `--metrics`); `None` without one.
pub(crate) fn promql_server(
    data_dir: &Path,
    backend: &crate::metrics_backend::MetricsBackend,
) -> Result<Option<String>, crate::db::OpenError> {
    Ok(crate::db::Location::prometheus_of_data_dir(data_dir)?
        .or_else(|| backend.prometheus().map(|client| client.url().to_string())))
}

/// A snapshot before the first round.
fn empty_snapshot() -> FleetSnapshot {
    FleetSnapshot {
        tick: 0,
        hosts: Vec::new(),
        metrics_unavailable: None,
    }
}

/// The fleet read from Prometheus by a task of its own (in `tasks`): each collection round
/// when something draws it, at a scrape's usual interval when only whether hosts are up is
/// read.
fn follow_prometheus(
    client: &ebb_telemetry::prom::PromClient,
    registry: &Registry,
    history: &Arc<RwLock<UtilHistory>>,
    options: &ConsoleOptions,
    tasks: &mut Vec<JoinHandle<()>>,
) -> watch::Receiver<Arc<FleetSnapshot>> {
    let every = if options.fleet_detail {
        options.collector.interval
    } else {
        crate::metrics_backend::HEALTH_EVERY
    };
    let (publish, snapshot) = watch::channel(Arc::new(empty_snapshot()));
    tasks.push(tokio::spawn(crate::metrics_backend::follow(
        client.clone(),
        registry.clone(),
        publish,
        history.clone(),
        options.fleet_detail,
        every,
    )));
    snapshot
}

/// How often the collector looks for registry changes made by other processes.
const REGISTRY_POLL: Duration = Duration::from_secs(3);

/// The collector's targets for these hosts, tokens read from the vault.
async fn targets_for(registry: &Registry, specs: &[HostEntry]) -> Vec<Target> {
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

/// Whether some process collects from `data_dir` right now.
pub fn collector_running(data_dir: &Path) -> std::io::Result<bool> {
    std::fs::create_dir_all(data_dir)?;
    Ok(try_lock(&data_dir.join("collector.lock"))?.is_none())
}

/// Takes `path`'s exclusive lock if free; `None` when another process holds it.
fn try_lock(path: &Path) -> std::io::Result<Option<std::fs::File>> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(error)) => Err(error),
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

/// Each host's health for `ebb hosts list`: from the running collector's records, or, when
/// none runs, from one poll of every host now (at once, each with its timeouts).
pub async fn health_now(
    registry: &Registry,
    db: &ConsoleDb,
    data_dir: &Path,
) -> Result<Vec<HostStatus>, ConsoleError> {
    let running = collector_running(data_dir).map_err(|error| ConsoleError::DataDir {
        path: data_dir.display().to_string(),
        reason: error.to_string(),
    })?;
    if let crate::metrics_backend::MetricsBackend::Prometheus(client) =
        crate::metrics_backend::MetricsBackend::of(data_dir, None)?
    {
        let hosts: Vec<ebb_telemetry::prom::PromHost> =
            registry.list().await?.into_iter().map(Into::into).collect();
        return Ok(client.health(&hosts, 0).await?.hosts);
    }
    if running {
        return read_snapshot(db)
            .await
            .map_err(|error| RegistryError::from(error).into());
    }
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
