//! The app's state: options, the console service, and (in demo mode) the embedded fleet.

use ebb_agent::{Fleet, FleetConfig, LoadProfile};
use ebb_core::console::{Console, ConsoleOptions, Role, TokenStore};
use ebb_core::registry::HostEntry;
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
    /// In the demo, the pool's rules and the users they follow (a festival peak on a fast
    /// clock): `on`, or `off` for a demo that moves only when told.
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
    forwarder: Mutex<Option<JoinHandle<()>>>,
    /// The demo's users, pushed as a custom metric.
    users: Mutex<Option<JoinHandle<()>>>,
    /// What desktop notifications are worded in.
    pub language: Language,
}

/// The operator's language as the UI last said (`set_ui_language`), the OS locale's until
/// then; shared with the notifier.
#[derive(Debug, Clone, Default)]
pub struct Language(Arc<Mutex<UiLanguage>>);

impl Language {
    pub fn new(language: UiLanguage) -> Self {
        Self(Arc::new(Mutex::new(language)))
    }

    pub fn get(&self) -> UiLanguage {
        self.0.lock().map(|language| *language).unwrap_or_default()
    }

    pub fn set(&self, language: UiLanguage) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = language;
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
        let console = Console::open(ConsoleOptions {
            token_store,
            metrics_listen,
            enforcer: ebb_core::enforcer::EnforcerConfig {
                grace: options.failover_grace,
                rules_speed: if demo_rules { DEMO_RULES_SPEED } else { 1 },
                ..ebb_core::enforcer::EnforcerConfig::default()
            },
            ..ConsoleOptions::new(&data_dir)
        })
        .await?;
        let fleet = if options.demo && console.role() == Role::Collector {
            let fleet = Fleet::start(&demo_fleet()).await?;
            // The demo fleet goes through the same registry as real hosts.
            for host in fleet.hosts() {
                let spec = HostEntry {
                    name: host.name.clone(),
                    url: host.url.clone(),
                    region: host.region.clone(),
                    labels: [("demo".to_string(), "true".to_string())].into(),
                    fingerprint: None,
                    has_token: false,
                    draining: false,
                };
                console.upsert_host(&spec, None).await?;
            }
            seed_demo_pool(&console).await;
            if demo_rules {
                seed_demo_rules(&console).await;
            }
            Some(fleet)
        } else {
            None
        };
        let users = (fleet.is_some() && demo_rules)
            .then(|| tauri::async_runtime::spawn(push_demo_users(console.pool_store().clone())));
        let os_locale = sys_locale::get_locale();
        let language = Language::new(
            os_locale
                .as_deref()
                .map_or_else(UiLanguage::default, UiLanguage::from_tag),
        );
        Ok(Self {
            language,
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
            forwarder: Mutex::new(None),
            users: Mutex::new(users),
        })
    }

    /// Emits a `fleet-tick` event to the webview after every collection tick.
    pub fn forward_ticks(&self, app: tauri::AppHandle) {
        let mut snapshots = self.console.subscribe();
        let task = tauri::async_runtime::spawn(async move {
            while snapshots.changed().await.is_ok() {
                let snapshot = (**snapshots.borrow_and_update()).clone();
                if let Err(error) = crate::commands::FleetTick(snapshot).emit(&app) {
                    tracing::warn!(%error, "cannot emit fleet-tick");
                }
            }
        });
        if let Ok(mut slot) = self.forwarder.lock() {
            *slot = Some(task);
        }
    }

    /// Stops forwarding, the console and the demo fleet.
    pub async fn shutdown(&self) {
        let forwarder = self.forwarder.lock().ok().and_then(|mut slot| slot.take());
        if let Some(task) = forwarder {
            task.abort();
        }
        let users = self.users.lock().ok().and_then(|mut slot| slot.take());
        if let Some(task) = users {
            task.abort();
        }
        self.console.shutdown().await;
        if let Some(fleet) = self.fleet.lock().await.take() {
            fleet.stop().await;
        }
    }
}

/// The demo's pool, made on the first start: A100s over the two regions that have them.
async fn seed_demo_pool(console: &Console) {
    if console
        .list_pools()
        .await
        .is_ok_and(|pools| !pools.is_empty())
    {
        return;
    }
    let input = ebb_wire::pools::PoolInput {
        name: "inference".into(),
        model: "A100".into(),
        regions: vec!["cn-east".into(), "cn-south".into()],
        min: 0,
        max: 8,
        base_gpus: 2,
        term: ebb_wire::plan::Term::Month,
        overlay: ebb_wire::plan::OverlayMode::Hour,
        placement: ebb_wire::pools::PlacementPolicy::Pack,
        interruptible: false,
        release_at_unit_end: false,
    };
    if let Err(error) = console.create_pool(&input).await {
        tracing::warn!(%error, "cannot create the demo pool");
    }
}

/// In the demo a rule minute lasts 6 s, so a new user sees the rules act within a minute.
const DEMO_RULES_SPEED: u32 = 10;

/// The demo pool's rules: the seed's e-commerce case ("users > 100k → 20 GPUs, < 50k →
/// 5"), sized to the demo pool; written on the first start only.
const DEMO_RULES: &str = r#"# The demo pool follows its users, as the seed's e-commerce case does: a festival peak
# sets it to 6 GPUs, back to normal sets it to 2. In the demo a rule minute is 6 seconds.
pool = "inference"

[limits]
min_gpus = 1
max_gpus = 8

[scale_in]
force = true

[[metric]]
name = "users"
stale_after_minutes = 3

[[threshold]]
name = "festival-peak"
metric = "users"
op = ">"
value = 100000
for_minutes = 1
action = "set 6"
cooldown_minutes = 5

[[threshold]]
name = "back-to-normal"
metric = "users"
op = "<"
value = 50000
for_minutes = 2
action = "set 2"
"#;

/// The demo pool's rules, saved when it has none (the demo's own data directory).
async fn seed_demo_rules(console: &Console) {
    if console
        .pool_rules("inference")
        .await
        .ok()
        .flatten()
        .is_some()
    {
        return;
    }
    if let Err(error) = console
        .save_rules("inference", DEMO_RULES, None, true)
        .await
    {
        tracing::warn!(%error, "cannot save the demo pool's rules");
    }
}

/// The demo's users, each second: 30k, then a festival peak of 150k from 20 s to 75 s of
/// every 150 s (a day on the rules' fast clock), with a little noise.
pub fn demo_users(elapsed_s: u64) -> f64 {
    let t = elapsed_s % 150;
    let base = if (20..75).contains(&t) {
        150_000.0
    } else {
        30_000.0
    };
    base + ((elapsed_s * 7_919) % 2_000) as f64
}

async fn push_demo_users(store: ebb_core::pools::PoolStore) {
    let started = std::time::Instant::now();
    let mut ticks = tokio::time::interval(std::time::Duration::from_secs(1));
    loop {
        ticks.tick().await;
        let push = ebb_wire::rules::MetricPush {
            name: "users".into(),
            value: demo_users(started.elapsed().as_secs()),
            pool: Some("inference".into()),
            at: None,
        };
        if let Err(error) = store.push_metric(&push).await {
            tracing::warn!(%error, "cannot push the demo's users");
        }
    }
}

/// Hosts over three regions and four models (A100s in cn-east and cn-south), tides fast
/// enough to watch.
fn demo_fleet() -> FleetConfig {
    FleetConfig {
        hosts: 8,
        gpus_per_host: 4,
        profile: LoadProfile::Tidal { period_s: 45.0 },
        ..FleetConfig::default()
    }
}
