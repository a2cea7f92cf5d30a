//! The app's state: options, the console service, and (in demo mode) the embedded fleet.

use ebb_agent::{Fleet, FleetConfig, LoadProfile};
use ebb_core::console::{Console, ConsoleOptions, Role, TokenStore};
use ebb_core::registry::HostEntry;
use ebb_wire::ipc::AppInfo;
use std::path::PathBuf;
use std::sync::Mutex;
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
}

impl AppState {
    pub async fn start(options: &Options, data_dir: PathBuf) -> anyhow::Result<Self> {
        // The demo keeps its own registry so its hosts never mix with the operator's.
        let (data_dir, token_store) = if options.demo {
            (data_dir.join("demo"), TokenStore::Memory)
        } else {
            (data_dir, options.token_store)
        };
        let console = Console::open(ConsoleOptions {
            token_store,
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
            Some(fleet)
        } else {
            None
        };
        Ok(Self {
            info: AppInfo {
                version: env!("CARGO_PKG_VERSION").into(),
                data_dir: data_dir.display().to_string(),
                demo: options.demo,
                collecting: console.role() == Role::Collector,
                // Asked of the keychain itself, so a machine without one hears so (and how
                // to keep tokens) before a host is added, not after.
                token_store: console.token_store().await,
                os_locale: sys_locale::get_locale(),
            },
            console,
            data_dir,
            fleet: tokio::sync::Mutex::new(fleet),
            forwarder: Mutex::new(None),
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
