//! Tauri commands and events: a few lines each, over the core.

use crate::state::AppState;
use ebb_core::catalog_store::{ActiveCatalog, CatalogStoreError, import_text};
use ebb_core::chart::{ChartSpec, utilization_svg};
use ebb_core::client::AgentError;
use ebb_core::collect::CollectorConfig;
use ebb_core::console::{Console, ConsoleError};
use ebb_core::cost_view;
use ebb_core::registry::{HostSpec, RegistryError};
use ebb_wire::ipc::{
    AppInfo, CatalogImport, CatalogView, ChartTheme, ConnectionOk, FleetSnapshot, HostEntry,
    HostInput, IpcError, PlanComparisonView,
};
use serde::{Deserialize, Serialize};
use tauri::State;

/// Sent after every collection tick.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct FleetTick(pub FleetSnapshot);

/// How far back the live chart reaches.
const LIVE_WINDOW_S: u32 = 120;

#[tauri::command]
#[specta::specta]
pub fn app_info(state: State<'_, AppState>) -> AppInfo {
    state.info.clone()
}

#[tauri::command]
#[specta::specta]
pub fn fleet_snapshot(state: State<'_, AppState>) -> FleetSnapshot {
    (*state.console.latest()).clone()
}

/// The live per-GPU utilization chart of one host, as an SVG document.
#[tauri::command]
#[specta::specta]
pub fn utilization_chart(
    state: State<'_, AppState>,
    host: String,
    theme: ChartTheme,
    width_px: u32,
    height_px: u32,
) -> Result<String, IpcError> {
    if !state
        .console
        .latest()
        .hosts
        .iter()
        .any(|known| known.name == host)
    {
        return Err(ipc_error(
            "not_found",
            format!("host: no host named `{host}` is registered"),
        ));
    }
    let spec = ChartSpec {
        title: &host,
        theme,
        width_px,
        height_px,
        now_ms: state.console.latest_sample_ms().unwrap_or(0.0),
        window_s: LIVE_WINDOW_S,
    };
    utilization_svg(&spec, &state.console.host_series(&host))
        .map_err(|error| ipc_error("invalid_input", error.to_string()))
}

/// Every registered host, without tokens.
#[tauri::command]
#[specta::specta]
pub async fn list_hosts(state: State<'_, AppState>) -> Result<Vec<HostEntry>, IpcError> {
    let hosts = state
        .console
        .registry()
        .list()
        .await
        .map_err(registry_error)?;
    Ok(hosts.into_iter().map(entry).collect())
}

#[tauri::command]
#[specta::specta]
pub async fn add_host(state: State<'_, AppState>, input: HostInput) -> Result<HostEntry, IpcError> {
    let added = state
        .console
        .add_host(&spec(&input), input.token.as_deref())
        .await
        .map_err(console_error)?;
    Ok(entry(added))
}

#[tauri::command]
#[specta::specta]
pub async fn update_host(
    state: State<'_, AppState>,
    name: String,
    input: HostInput,
) -> Result<HostEntry, IpcError> {
    let updated = state
        .console
        .update_host(&name, &spec(&input), input.token.as_deref())
        .await
        .map_err(console_error)?;
    Ok(entry(updated))
}

#[tauri::command]
#[specta::specta]
pub async fn remove_host(state: State<'_, AppState>, name: String) -> Result<(), IpcError> {
    state
        .console
        .remove_host(&name)
        .await
        .map_err(console_error)
}

/// Tries a host as typed (before or after saving) and says exactly what failed.
#[tauri::command]
#[specta::specta]
pub async fn test_host(
    state: State<'_, AppState>,
    input: HostInput,
) -> Result<ConnectionOk, IpcError> {
    let spec = ebb_core::registry::validate(&spec(&input)).map_err(registry_error)?;
    // An empty token field on a saved host means "use the stored one".
    let stored = match input.token.as_deref() {
        Some(token) if !token.is_empty() => Some(token.to_string()),
        _ => match state.console.registry().get(&spec.name).await {
            Ok(saved) => state
                .console
                .registry()
                .token(&saved)
                .await
                .map_err(registry_error)?,
            Err(_) => None,
        },
    };
    let health = Console::test_host(&spec, stored.as_deref(), CollectorConfig::default())
        .await
        .map_err(agent_error)?;
    Ok(ConnectionOk {
        host: health.host,
        agent_version: health.agent_version,
        backend: health.backend,
    })
}

/// The active price catalog (the demo one until one is imported).
#[tauri::command]
#[specta::specta]
pub fn catalog_show(state: State<'_, AppState>) -> Result<CatalogView, IpcError> {
    let active = ActiveCatalog::load(&state.data_dir, None).map_err(catalog_error)?;
    Ok(cost_view::catalog_view(&active))
}

/// Validates a catalog (TOML text) and, only if valid, makes it the active one.
#[tauri::command]
#[specta::specta]
pub fn catalog_import(state: State<'_, AppState>, text: String) -> Result<CatalogImport, IpcError> {
    match import_text(&state.data_dir, &text, "the dropped catalog") {
        Ok(_) => {
            let active = ActiveCatalog::load(&state.data_dir, None).map_err(catalog_error)?;
            let view = cost_view::catalog_view(&active);
            Ok(CatalogImport {
                accepted: true,
                warnings: view.warnings.clone(),
                catalog: view,
                problems: Vec::new(),
            })
        }
        Err(CatalogStoreError::Invalid { invalid, .. }) => {
            let active = ActiveCatalog::load(&state.data_dir, None).map_err(catalog_error)?;
            Ok(CatalogImport {
                accepted: false,
                catalog: cost_view::catalog_view(&active),
                problems: invalid.problems.iter().map(cost_view::problem).collect(),
                warnings: invalid.warnings.iter().map(cost_view::problem).collect(),
            })
        }
        Err(other) => Err(catalog_error(other)),
    }
}

/// Every billing plan priced over a demand CSV (`hour,demand` or `minute,demand`), with
/// the recommendation and a bar chart.
#[tauri::command]
#[specta::specta]
pub fn cost_plan(
    state: State<'_, AppState>,
    demand_csv: String,
    model: String,
    region: String,
    interruptible: bool,
    theme: ChartTheme,
    width_px: u32,
) -> Result<PlanComparisonView, IpcError> {
    let active = ActiveCatalog::load(&state.data_dir, None).map_err(catalog_error)?;
    let entry = active
        .catalog
        .find(&model, &region)
        .map_err(|error| ipc_error("invalid_input", format!("model/region: {error}")))?;
    let demand = ebb_cost::DemandSeries::from_csv(&demand_csv)
        .map_err(|error| ipc_error("invalid_input", format!("demand: {error}")))?;
    let options = ebb_cost::PlanOptions {
        interruptible,
        ..ebb_cost::PlanOptions::default()
    };
    let comparison = ebb_cost::compare_plans(entry, &demand, &options)
        .map_err(|error| ipc_error("invalid_input", error.to_string()))?;
    cost_view::comparison_view(
        &entry.model,
        &entry.region,
        &active.catalog.currency,
        &comparison,
        theme,
        width_px,
    )
    .map_err(|error| ipc_error("invalid_input", error.to_string()))
}

fn catalog_error(error: CatalogStoreError) -> IpcError {
    let kind = match error {
        CatalogStoreError::Invalid { .. } => "invalid_catalog",
        CatalogStoreError::Read { .. } | CatalogStoreError::Write { .. } => "io",
    };
    ipc_error(kind, error.to_string())
}

fn spec(input: &HostInput) -> HostSpec {
    HostSpec {
        name: input.name.clone(),
        url: input.url.clone(),
        region: input.region.clone(),
        labels: input.labels.clone(),
        fingerprint: input.fingerprint.clone(),
        has_token: false,
    }
}

fn entry(spec: HostSpec) -> HostEntry {
    HostEntry {
        name: spec.name,
        url: spec.url,
        region: spec.region,
        labels: spec.labels,
        fingerprint: spec.fingerprint,
        has_token: spec.has_token,
    }
}

fn ipc_error(kind: &str, message: impl Into<String>) -> IpcError {
    IpcError {
        kind: kind.into(),
        message: message.into(),
    }
}

fn registry_error(error: RegistryError) -> IpcError {
    let kind = match &error {
        RegistryError::Invalid { .. } => "invalid_input",
        RegistryError::NotFound(_) => "not_found",
        RegistryError::Vault(_) => "token_store",
        RegistryError::Open { .. } | RegistryError::Sql(_) => {
            tracing::error!(%error, "registry failure");
            "internal"
        }
    };
    ipc_error(kind, error.to_string())
}

fn agent_error(error: AgentError) -> IpcError {
    ipc_error(error.kind(), error.to_string())
}

fn console_error(error: ConsoleError) -> IpcError {
    match error {
        ConsoleError::Registry(error) => registry_error(error),
        ConsoleError::Agent(error) => agent_error(error),
        other => {
            tracing::error!(error = %other, "console failure");
            ipc_error("internal", other.to_string())
        }
    }
}
