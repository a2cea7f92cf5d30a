//! Tauri commands and events: a few lines each, over the core.

use crate::state::Console;
use ebb_core::chart::{ChartSpec, utilization_svg};
use ebb_wire::ipc::{AppInfo, ChartTheme, FleetSnapshot, IpcError};
use serde::{Deserialize, Serialize};
use tauri::State;

/// Sent after every collection round.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct FleetTick(pub FleetSnapshot);

/// How far back the live chart reaches.
const LIVE_WINDOW_S: u32 = 120;

#[tauri::command]
#[specta::specta]
pub fn app_info(console: State<'_, Console>) -> AppInfo {
    console.info.clone()
}

#[tauri::command]
#[specta::specta]
pub fn fleet_snapshot(console: State<'_, Console>) -> FleetSnapshot {
    console.collector.latest().snapshot.clone()
}

/// The live per-GPU utilization chart of one host, as an SVG document.
#[tauri::command]
#[specta::specta]
pub fn utilization_chart(
    console: State<'_, Console>,
    host: String,
    theme: ChartTheme,
    width_px: u32,
    height_px: u32,
) -> Result<String, IpcError> {
    let state = console.collector.latest();
    if !state.snapshot.hosts.iter().any(|known| known.name == host) {
        return Err(IpcError {
            kind: "not_found".into(),
            message: format!("host: no host named `{host}` is registered"),
        });
    }
    let spec = ChartSpec {
        title: &host,
        theme,
        width_px,
        height_px,
        now_ms: state.history.latest_ms().unwrap_or(0.0),
        window_s: LIVE_WINDOW_S,
    };
    utilization_svg(&spec, &state.history.host_series(&host)).map_err(|error| IpcError {
        kind: "invalid_input".into(),
        message: error.to_string(),
    })
}
