//! The console as one service, shared by the desktop shell and `ebb daemon`: the registry,
//! and either the collector (the first process on a data directory) or a viewer (any
//! later one), so a data directory is never collected twice.
//!
//! The first process on a data directory takes `collector.lock` (an OS file lock, freed if
//! it dies) and collects: it polls the hosts, writes `metrics.db` as its one writer (a batch
//! each round; rollups and retention once a wall-clock minute, 5 s into it, when the minute
//! before is whole), keeps the live charts' history, records host health for viewers, and
//! runs the enforcer. Any later process (the app or `ebb daemon`) views what it records.
//! Where the readings come from is the console's [`crate::metrics_source`]: the embedded
//! collector, or Prometheus (no agent polled for readings). Consoles sharing a PostgreSQL database each collect for themselves and
//! elect one enforcer ([`crate::election`]); only a console whose role is admin or enforcer
//! stands for it.

use crate::changes::Changes;
use crate::clock::{SharedClock, SystemClock};
use crate::config::ConsoleConfig;
pub use crate::console_pools::ScaleChange;
use crate::db::ConsoleDb;
use crate::election::{Election, ElectionConfig, LeaderHandle, Leadership};
use crate::enforcer::{Enforcer, EnforcerConfig};
use crate::metrics_source::{Feed, FeedContext, MetricsSource};
use crate::pools::PoolStore;
use crate::registry::{HostEntry, Registry, RegistryError};
use crate::vault::{FileVault, KeychainVault, TokenVault, VaultError};
use ebb_charts::series::{GpuSeries, UtilHistory};
use ebb_telemetry::client::{AgentAccess, AgentClient, AgentError};
use ebb_telemetry::collect::{Collector, CollectorConfig};
use ebb_telemetry::metrics_store::MetricsError;
use ebb_wire::agent::Health as AgentHealth;
use ebb_wire::ipc::{ConnectionOk, EnforcerRole, FleetSnapshot, HostStatus, TokenStoreKind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::watch;
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
    source: Arc<dyn MetricsSource>,
    /// `console.toml`, the Slurm binding and the prices.
    pub(crate) config: Arc<ConsoleConfig>,
    /// What changed, for the fronts: the enforcer's passes and this console's writes.
    changes: Changes,
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
        let config = Arc::new(ConsoleConfig::read(data_dir)?);
        let db = ConsoleDb::open(data_dir)
            .await?
            .with_clock(options.clock.clone());
        let vault = options.token_store.vault(data_dir);
        let registry = Registry::new(db.clone(), vault);
        let lock = if options.viewer_only {
            None
        } else {
            try_lock(&data_dir.join("collector.lock"))
                .map_err(|error| dir_error(error.to_string()))?
        };
        let role = if lock.is_some() {
            Role::Collector
        } else {
            Role::Viewer
        };
        let history = Arc::new(RwLock::new(UtilHistory::new(options.history_points)));
        let source = crate::metrics_source::open(
            data_dir,
            config.metrics_url(options.metrics.as_deref())?.as_deref(),
            crate::metrics_source::Keep::Store,
        )
        .await?;
        let pools = PoolStore::new(db.clone());
        let mut enforcer = None;
        let mut election = None;
        if role == Role::Collector {
            // Only an admin's or the enforcer service role's console stands for enforcer: a
            // viewer's or an operator's may not write what enforcing writes.
            let may_enforce = matches!(
                db.identity().role,
                ebb_wire::access::AccessRole::Admin | ebb_wire::access::AccessRole::Enforcer
            );
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
            if let Some(policy) = config.spot_breaker() {
                enforcer_config.spot_breaker = policy;
            }
            enforcer = Some(Enforcer::start_bound(
                pools.clone(),
                registry.clone(),
                config.clone(),
                enforcer_config,
                leader,
                options.slurm.clone(),
                source.clone(),
            ));
        }
        let Feed {
            snapshot,
            collector,
            mut tasks,
        } = source.feed(FeedContext {
            role,
            registry: &registry,
            db: &db,
            history: &history,
            options: &options,
        })?;
        // Custom metrics read from Prometheus, where console.toml or the metrics back end
        // names a server.
        if role == Role::Collector
            && let Some(url) = promql_server(&config, source.as_ref())
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
        let changes = enforcer
            .as_ref()
            .map_or_else(Changes::default, Enforcer::changes);
        let console = Self {
            changes,
            registry,
            role,
            collector: std::sync::Mutex::new(collector),
            snapshot,
            history,
            pools,
            enforcer: std::sync::Mutex::new(enforcer),
            election: std::sync::Mutex::new(election),
            data_dir: data_dir.clone(),
            slurm: options.slurm.clone(),
            tasks: std::sync::Mutex::new(tasks),
            metrics_api: std::sync::Mutex::new(metrics_api),
            source,
            config,
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

    /// Which pools changed and how far the activity log goes, as they change (see
    /// [`crate::changes`]).
    pub fn changes(&self) -> &Changes {
        &self.changes
    }

    /// After a write of this console's: `pools` changed (`None`: any may have; empty: none,
    /// only the log grew), said at once with the activity log's newest id, and the enforcer
    /// is woken to carry it out.
    pub(crate) async fn wrote(&self, pools: Option<&[&str]>) {
        self.wake_enforcer();
        match pools {
            Some(names) => self.changes.pools(names),
            None => self.changes.all_pools(),
        }
        match self.pools.last_activity_id().await {
            Ok(newest) => self.changes.activity(newest),
            Err(error) => tracing::debug!(%error, "cannot read the activity log's newest id"),
        }
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

    /// Where readings come from: the embedded collector's store or Prometheus.
    pub fn metrics_source(&self) -> &Arc<dyn MetricsSource> {
        &self.source
    }

    /// The server the rules' PromQL metrics ask: `console.toml`'s `prometheus`, else the
    /// metrics back end's Prometheus; `None` without one.
    pub fn promql_server(&self) -> Option<String> {
        promql_server(&self.config, self.source.as_ref())
    }

    /// Each registered host's health now (see [`MetricsSource::health_now`]).
    pub async fn health_now(&self) -> Result<Vec<HostStatus>, ConsoleError> {
        Ok(self
            .source
            .health_now(&self.registry, self.registry.db(), &self.data_dir)
            .await?)
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
        let targets = crate::metrics_source::embedded::targets_for(&self.registry, &specs).await;
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

    /// Forgets a written-off host and records its leases as ended (see
    /// [`Registry::forget`]); answers how many leases were forgotten.
    pub async fn forget_host(&self, name: &str) -> Result<u32, ConsoleError> {
        self.require(ebb_wire::access::AccessAction::Hosts)
            .await
            .map_err(RegistryError::from)?;
        let leases = self.registry.forget(name).await?;
        self.reload().await?;
        Ok(leases)
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
        self.source.close().await;
    }
}

/// `console.toml`'s `prometheus`, else the metrics source's Prometheus.
fn promql_server(config: &ConsoleConfig, source: &dyn MetricsSource) -> Option<String> {
    config
        .toml()
        .prometheus
        .clone()
        .or_else(|| source.promql_server())
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
