//! The app's state: options, the console service, and (in demo mode) the embedded fleet.

use ebb_agent::{Fleet, FleetConfig, LoadProfile};
use ebb_core::console::{Console, ConsoleOptions, Role, TokenStore};
use ebb_core::demo;
use ebb_wire::ipc::{AppInfo, UiLanguage};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tauri::async_runtime::JoinHandle;
use tauri_specta::Event;

/// Command-line options of `ebb-desktop`.
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "ebb-desktop", version, about = "Ebb, the elastic GPU console")]
pub struct Options {
    /// Start an embedded virtual fleet of simulated hosts and watch it.
    #[arg(long)]
    pub demo: bool,
    /// Where Ebb keeps its data; defaults to the OS app-data folder.
    #[arg(long, env = "EBB_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Where host tokens go: `keychain` (the OS keychain) or `file` (a 0600 file in the
    /// data directory, for machines without a keychain).
    #[arg(long, env = "EBB_TOKEN_STORE", default_value = "keychain")]
    pub token_store: TokenStore,
    /// In the demo, the pool's rules and the users they follow (a festival peak every ten
    /// minutes), the training pool on a simulated Slurm job queue, and the spot pool whose
    /// GPUs are reclaimed now and then: `on`, or `off` for a demo that moves only when told.
    #[arg(
        long,
        env = "EBB_DEMO_RULES",
        default_value = "on",
        value_name = "on|off"
    )]
    pub demo_rules: OnOff,
    /// Where to serve POST /v1/metrics (custom metrics for the rules); `off` to not serve
    /// it. Not served in the demo (its users are pushed from inside).
    #[arg(long, env = "EBB_METRICS_LISTEN", default_value = ebb_core::console::DEFAULT_METRICS_LISTEN, value_name = "ADDR")]
    pub metrics_listen: String,
    /// Read readings from Prometheus instead of polling the agents:
    /// `prometheus+http://HOST:9090` (as `metrics` in the data directory's console.toml).
    /// The demo always collects its own fleet.
    #[arg(long, env = "EBB_METRICS", value_name = "URL")]
    pub metrics: Option<String>,
    /// How long a host may not answer, in seconds, before its pools' leases there are
    /// written off and replaced elsewhere (the enforcer's grace period), as `ebb daemon`
    /// reads it. The end-to-end tests shorten it rather than wait 30 real seconds.
    #[arg(
        long = "failover-grace-s",
        env = "EBB_FAILOVER_GRACE_S",
        default_value = "30",
        value_name = "SECONDS",
        value_parser = grace_seconds
    )]
    pub failover_grace: std::time::Duration,
}

/// A grace period in seconds, 0 to a day.
fn grace_seconds(text: &str) -> Result<std::time::Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if !(0.0..=86_400.0).contains(&seconds) {
        return Err(format!("{seconds} is not between 0 and 86400"));
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

/// A switch on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

/// Everything the commands read. Holds no secret that reaches the webview: IPC answers
/// are the DTOs of `ebb_wire::ipc`.
#[derive(Debug)]
pub struct AppState {
    pub info: AppInfo,
    /// The data directory in use (the demo's own one in demo mode).
    pub data_dir: PathBuf,
    pub console: Console,
    fleet: tokio::sync::Mutex<Option<Fleet>>,
    /// The tasks forwarding the console's ticks and changes to the webview.
    forwarder: Mutex<Vec<JoinHandle<()>>>,
    /// The demo's users, pushed as a custom metric.
    users: Mutex<Option<JoinHandle<()>>>,
    /// The demo's spot market, taking a spot GPU back now and then.
    spot: Mutex<Option<JoinHandle<()>>>,
    /// What desktop notifications are worded in.
    pub language: Language,
    /// Whether they reach the desktop (the notifier says).
    pub delivery: Delivery,
}

/// Why desktop notifications do not show, as the notifier last found (`None`: nothing
/// failed); read by Settings.
pub type Delivery = Shared<Option<String>>;

/// The operator's language as the UI last said (`set_ui_language`), the OS locale's until
/// then; shared with the notifier.
pub type Language = Shared<UiLanguage>;

/// A value the shell's tasks share: the last one set, read by copy.
#[derive(Debug, Clone, Default)]
pub struct Shared<T>(Arc<Mutex<T>>);

impl<T: Clone + Default> Shared<T> {
    pub fn new(value: T) -> Self {
        Self(Arc::new(Mutex::new(value)))
    }

    pub fn get(&self) -> T {
        self.0.lock().map(|value| value.clone()).unwrap_or_default()
    }

    pub fn set(&self, value: T) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = value;
        }
    }
}

impl AppState {
    pub async fn start(options: &Options, data_dir: PathBuf) -> anyhow::Result<Self> {
        // The demo keeps its own registry so its hosts never mix with the operator's.
        let (data_dir, token_store) = if options.demo {
            (data_dir.join("demo"), TokenStore::Memory)
        } else {
            (data_dir, options.token_store)
        };
        let demo_rules = options.demo && options.demo_rules == OnOff::On;
        let metrics_listen = match options.metrics_listen.trim() {
            _ if options.demo => None,
            "off" => None,
            text => Some(text.parse().map_err(|_| {
                anyhow::anyhow!(
                    "--metrics-listen: `{text}` is not an address like 127.0.0.1:7171 (or `off`)"
                )
            })?),
        };
        // With its rules, the demo has a queue-driven pool on a simulated Slurm partition.
        let slurm = if demo_rules {
            demo::simulated_slurm().map_err(anyhow::Error::msg)?
        } else {
            ebb_core::slurm::api::SlurmSetup::default()
        };
        let console = Console::open(ConsoleOptions {
            token_store,
            metrics_listen,
            metrics: options.metrics.clone().filter(|_| !options.demo),
            slurm,
            enforcer: ebb_core::enforcer::EnforcerConfig {
                grace: options.failover_grace,
                spot_breaker: if demo_rules {
                    demo::SPOT_BREAKER
                } else {
                    ebb_core::enforcer::EnforcerConfig::default().spot_breaker
                },
                ..ebb_core::enforcer::EnforcerConfig::default()
            },
            ..ConsoleOptions::new(&data_dir)
        })
        .await?;
        let fleet = if options.demo && console.role() == Role::Collector {
            let fleet = Fleet::start(&demo_fleet()).await?;
            let hosts = fleet.hosts().iter();
            let hosts =
                hosts.map(|host| (host.name.clone(), host.url.clone(), host.region.clone()));
            if !fleet.hosts().iter().any(|host| {
                host.name == demo::QUEUE_HOST && host.model == ebb_agent::sim::GpuModel::V100
            }) {
                tracing::warn!(
                    host = demo::QUEUE_HOST,
                    "the demo's training pool has no V100 host"
                );
            }
            console.seed_demo(hosts.collect(), demo_rules).await?;
            other_tenants(&fleet).await;
            Some(fleet)
        } else {
            None
        };
        let users = (fleet.is_some() && demo_rules)
            .then(|| tauri::async_runtime::spawn(demo::push_users(console.pool_store().clone())));
        let spot = (fleet.is_some() && demo_rules).then(|| {
            tauri::async_runtime::spawn(demo::reclaim_spot(
                console.pool_store().clone(),
                console.registry().clone(),
            ))
        });
        let os_locale = sys_locale::get_locale();
        let language = Language::new(
            os_locale
                .as_deref()
                .map_or_else(UiLanguage::default, UiLanguage::from_tag),
        );
        Ok(Self {
            language,
            delivery: Delivery::default(),
            info: AppInfo {
                version: env!("CARGO_PKG_VERSION").into(),
                data_dir: data_dir.display().to_string(),
                demo: options.demo,
                collecting: console.role() == Role::Collector,
                // Asked of the keychain itself, so a machine without one hears so (and how
                // to keep tokens) before a host is added, not after.
                token_store: console.token_store().await,
                os_locale,
            },
            console,
            data_dir,
            fleet: tokio::sync::Mutex::new(fleet),
            forwarder: Mutex::new(Vec::new()),
            users: Mutex::new(users),
            spot: Mutex::new(spot),
        })
    }

    /// Emits a `fleet-tick` event to the webview after every collection tick, and
    /// `pools-changed` and `activity-appended` as the console says them.
    pub fn forward_ticks(&self, app: tauri::AppHandle) {
        let mut snapshots = self.console.subscribe();
        let ticks = app.clone();
        let ticks = tauri::async_runtime::spawn(async move {
            while snapshots.changed().await.is_ok() {
                let snapshot = (**snapshots.borrow_and_update()).clone();
                if let Err(error) = FleetTick(snapshot).emit(&ticks) {
                    tracing::warn!(%error, "cannot emit fleet-tick");
                }
            }
        });
        let changes =
            tauri::async_runtime::spawn(forward_changes(self.console.changes().clone(), app));
        if let Ok(mut slot) = self.forwarder.lock() {
            *slot = vec![ticks, changes];
        }
    }

    /// Stops forwarding, the console and the demo fleet.
    pub async fn shutdown(&self) {
        let forwarders = self
            .forwarder
            .lock()
            .map(|mut slot| std::mem::take(&mut *slot));
        for task in forwarders.unwrap_or_default() {
            task.abort();
        }
        for slot in [&self.users, &self.spot] {
            if let Some(task) = slot.lock().ok().and_then(|mut slot| slot.take()) {
                task.abort();
            }
        }
        self.console.shutdown().await;
        if let Some(fleet) = self.fleet.lock().await.take() {
            fleet.stop().await;
        }
    }
}

/// Hosts over three regions and four models (A100s in cn-east and cn-south), tides fast
/// enough to watch, each lease's workload up 5 s after its grant. One of the two H800 hosts (cn-east-002, the fifth) offers its GPUs as
/// spot, so the spot pool `render` holds spot there and on demand on the other, and the
/// demo's spot market (`demo::reclaim_spot`) may take its spot GPUs back.
fn demo_fleet() -> FleetConfig {
    FleetConfig {
        hosts: 8,
        gpus_per_host: 4,
        profile: LoadProfile::Tidal { period_s: 45.0 },
        spot: vec![ebb_agent::fleet::SpotHost::Index(4)],
        // A lease's workload takes a few seconds to come up, as a model's load does: the
        // Pool view, its chart and the lease table show those GPUs warming until then.
        startup: std::time::Duration::from_secs(5),
        ..FleetConfig::default()
    }
}

/// The demo fleet's other tenants: another team holds GPUs on some hosts (not the A100s
/// the demo pool uses), so "leased by others" is seen and only leased GPUs are busy.
async fn other_tenants(fleet: &Fleet) {
    for (index, host) in fleet.hosts().iter().enumerate() {
        if host.model == ebb_agent::sim::GpuModel::A100 || index % 3 == 2 {
            continue;
        }
        let request = ebb_wire::agent::LeaseRequest::count("render-farm", "another-team", 2);
        if let Err(error) = fleet
            .lease(index, &format!("demo-other-{index}"), &request)
            .await
        {
            tracing::warn!(host = %host.name, %error, "cannot lease the demo's other tenant");
        }
    }
}

/// Sent after every collection tick.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, specta::Type, tauri_specta::Event)]
pub struct FleetTick(pub ebb_wire::ipc::FleetSnapshot);

/// Sent when pools changed: after this console's write, after an enforcer pass that
/// changed them, or when the activity log names them (another console's write).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, specta::Type, tauri_specta::Event)]
pub struct PoolsChanged {
    /// Their names; `null`: any may have (one was created or deleted, the prices changed).
    pub pools: Option<Vec<String>>,
}

/// Sent when the activity log grew.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, specta::Type, tauri_specta::Event)]
pub struct ActivityAppended {
    /// The newest entry's id.
    pub newest: i64,
}

/// The console's changes as events, one for one; a forwarder that fell behind says all
/// pools changed.
async fn forward_changes(changes: ebb_core::changes::Changes, app: tauri::AppHandle) {
    use ebb_core::changes::Change;
    use tokio::sync::broadcast::error::RecvError;
    let mut heard = changes.subscribe();
    loop {
        let emitted = match heard.recv().await {
            Ok(Change::Pools(pools)) => PoolsChanged { pools }.emit(&app),
            Ok(Change::Activity(newest)) => ActivityAppended { newest }.emit(&app),
            Err(RecvError::Lagged(_)) => PoolsChanged { pools: None }.emit(&app).and_then(|()| {
                ActivityAppended {
                    newest: changes.newest_activity(),
                }
                .emit(&app)
            }),
            Err(RecvError::Closed) => return,
        };
        if let Err(error) = emitted {
            tracing::warn!(%error, "cannot emit a change");
        }
    }
}
