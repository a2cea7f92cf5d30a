//! The app's state: options, the collector, and (in demo mode) the embedded fleet.

use ebb_agent::{Fleet, FleetConfig, LoadProfile};
use ebb_core::collect::{Collector, CollectorConfig, Target};
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
}

/// Everything the commands read. Holds no secret: nothing here reaches the webview but
/// through the DTOs in `ebb_wire::ipc`.
#[derive(Debug)]
pub struct Console {
    pub info: AppInfo,
    pub collector: Collector,
    fleet: Mutex<Option<Fleet>>,
    forwarder: Mutex<Option<JoinHandle<()>>>,
}

impl Console {
    pub async fn start(options: &Options, data_dir: PathBuf) -> anyhow::Result<Self> {
        std::fs::create_dir_all(&data_dir).map_err(|error| {
            anyhow::anyhow!(
                "cannot create the data directory {}: {error}",
                data_dir.display()
            )
        })?;
        let fleet = if options.demo {
            Some(Fleet::start(&demo_fleet()).await?)
        } else {
            None
        };
        // The host registry comes later; until then the demo fleet is the only source.
        let targets = fleet
            .iter()
            .flat_map(|fleet| fleet.hosts())
            .map(|host| Target {
                name: host.name.clone(),
                url: host.url.clone(),
                region: host.region.clone(),
            })
            .collect();
        let collector = Collector::start(targets, CollectorConfig::default())?;
        Ok(Self {
            info: AppInfo {
                version: env!("CARGO_PKG_VERSION").into(),
                data_dir: data_dir.display().to_string(),
                demo: options.demo,
                os_locale: sys_locale::get_locale(),
            },
            collector,
            fleet: Mutex::new(fleet),
            forwarder: Mutex::new(None),
        })
    }

    /// Emits a `fleet-tick` event to the webview after every collection round.
    pub fn forward_ticks(&self, app: tauri::AppHandle) {
        let mut states = self.collector.subscribe();
        let task = tauri::async_runtime::spawn(async move {
            while states.changed().await.is_ok() {
                let snapshot = states.borrow_and_update().snapshot.clone();
                if let Err(error) = crate::commands::FleetTick(snapshot).emit(&app) {
                    tracing::warn!(%error, "cannot emit fleet-tick");
                }
            }
        });
        if let Ok(mut slot) = self.forwarder.lock() {
            *slot = Some(task);
        }
    }

    /// Stops forwarding and the demo fleet.
    pub async fn shutdown(&self) {
        let forwarder = self.forwarder.lock().ok().and_then(|mut slot| slot.take());
        if let Some(task) = forwarder {
            task.abort();
        }
        let fleet = self.fleet.lock().ok().and_then(|mut slot| slot.take());
        if let Some(fleet) = fleet {
            fleet.stop().await;
        }
    }
}

/// A few hosts over three regions and four models, tides fast enough to watch.
fn demo_fleet() -> FleetConfig {
    FleetConfig {
        hosts: 4,
        gpus_per_host: 4,
        profile: LoadProfile::Tidal { period_s: 45.0 },
        ..FleetConfig::default()
    }
}
