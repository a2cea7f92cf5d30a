//! Types that cross the Tauri IPC boundary between the desktop shell and the webview.

use serde::{Deserialize, Serialize};
use specta::Type;

/// Facts about the running app, for the Settings view. Never carries a secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct AppInfo {
    pub version: String,
    pub data_dir: String,
    /// Started with `--demo`: collecting from the embedded virtual fleet.
    pub demo: bool,
    /// `false` when another Ebb process already collects from this data directory and
    /// this window only shows what it records.
    pub collecting: bool,
    /// Where host tokens are kept, in words (e.g. "the OS keychain").
    pub token_store: String,
    /// The operating system's locale as a BCP 47 tag (e.g. `zh-CN`), when it can be read;
    /// the UI's default language follows it.
    pub os_locale: Option<String>,
}

/// Colours for a chart drawn on the Rust side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ChartTheme {
    Light,
    Dark,
}

/// What a stored-history chart shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ChartMetric {
    Util,
    MemoryUsed,
    MemoryPct,
    Temperature,
    Power,
}

/// The file format a chart is exported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    Svg,
    Png,
}

/// How the console sees a host right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Health {
    /// The last poll answered, promptly and with every GPU.
    Online,
    /// Answering slowly, some GPUs lost, or a failure or two in a row; `last_error` says why.
    Degraded,
    /// Several polls in a row failed; `last_error` says why.
    Offline,
    /// Not polled yet.
    Unknown,
}

/// One registered host as the console sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct HostStatus {
    pub name: String,
    pub url: String,
    pub region: String,
    pub health: Health,
    pub gpu_count: u32,
    /// The distinct GPU models on the host, sorted.
    pub models: Vec<String>,
    /// Mean GPU utilization over the host's GPUs in the latest sample.
    pub mean_util_pct: Option<f32>,
    /// Why the last poll failed, in words; `None` when it answered.
    pub last_error: Option<String>,
}

/// The whole fleet as the console sees it; `tick` grows by one with every collection round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct FleetSnapshot {
    pub tick: u32,
    pub hosts: Vec<HostStatus>,
}

/// A registered host as the Settings view shows it. The token is never sent back: only
/// whether one is stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct HostEntry {
    pub name: String,
    pub url: String,
    pub region: String,
    pub labels: std::collections::BTreeMap<String, String>,
    pub fingerprint: Option<String>,
    pub has_token: bool,
}

/// A host as the operator typed it in Settings, token included (it goes to the keychain).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct HostInput {
    pub name: String,
    pub url: String,
    pub region: String,
    pub labels: std::collections::BTreeMap<String, String>,
    pub fingerprint: Option<String>,
    /// `None` keeps the stored token (on edit); `Some("")` removes it.
    pub token: Option<String>,
}

/// What "Test connection" found when it worked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ConnectionOk {
    pub host: String,
    pub agent_version: String,
    pub backend: String,
}

/// One problem (or warning) in a price catalog, naming the entry and field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct CatalogProblem {
    /// e.g. `[[price]] #2 (A100 in cn-north)`; `None` for the file as a whole.
    pub entry: Option<String>,
    pub field: Option<String>,
    pub message: String,
}

/// One model in one region, prices in fen (1/100 yuan); `None` where not offered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct CatalogRow {
    pub model: String,
    pub region: String,
    pub hour_fen: i64,
    pub day_fen: Option<i64>,
    pub week_fen: Option<i64>,
    pub month_fen: i64,
    pub year_fen: Option<i64>,
    pub spot_hour_fen: Option<i64>,
    pub reserved_hour_fen: Option<i64>,
}

/// The price catalog in use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct CatalogView {
    /// `demo` or `imported`.
    pub source: String,
    pub name: Option<String>,
    pub currency: String,
    pub rows: Vec<CatalogRow>,
    pub warnings: Vec<CatalogProblem>,
}

/// The outcome of importing a catalog: accepted (and now active), or every problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct CatalogImport {
    pub accepted: bool,
    /// The active catalog after the import (unchanged when refused).
    pub catalog: CatalogView,
    pub problems: Vec<CatalogProblem>,
    pub warnings: Vec<CatalogProblem>,
}

/// One billing plan priced over a demand series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct PlanRow {
    /// e.g. `all_subscribed`, `base_hourly`, `base_daily`, `base_spot`.
    pub kind: String,
    pub base_gpus: u32,
    pub base_fen: i64,
    pub overlay_fen: i64,
    pub total_fen: i64,
    /// Against all subscribed at the peak; negative when dearer.
    pub saving_fen: i64,
    pub saving_pct: f64,
    pub paid_gpu_hours: u64,
    pub idle_paid_gpu_hours: u64,
    pub recommended: bool,
}

/// A plan the comparison could not price, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct SkippedPlanRow {
    pub kind: String,
    pub reason: String,
}

/// The cheapest plan found, and the exact base for "base + hourly".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct RecommendationView {
    pub kind: String,
    pub base_gpus: u32,
    pub cost_fen: i64,
    pub saving_fen: i64,
    pub saving_pct: f64,
    /// The optimal base for "base subscribed + hourly overlay".
    pub hourly_base_gpus: u32,
    /// A level is worth subscribing when demand reaches it at least this many hours.
    pub break_even_hours: u64,
    /// `day` or `week` when that overlay beats the hourly one.
    pub cheaper_overlay: Option<String>,
}

/// The Costs view's comparison of plans for one demand series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct PlanComparisonView {
    pub model: String,
    pub region: String,
    pub currency: String,
    pub hours: u64,
    pub peak_gpus: u32,
    pub used_gpu_hours: u64,
    pub plans: Vec<PlanRow>,
    pub skipped: Vec<SkippedPlanRow>,
    pub recommendation: RecommendationView,
    /// The comparison as a bar chart (SVG, drawn with plotters).
    pub chart_svg: String,
}

/// An error crossing the IPC boundary: a stable kind and words for the operator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct IpcError {
    /// e.g. `"not_found"`, `"invalid_input"`, `"refused"`, `"unauthorized"`, `"internal"`.
    pub kind: String,
    /// Names the field and the problem.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_are_snake_case_on_the_wire() {
        assert_eq!(
            serde_json::to_string(&Health::Online).unwrap(),
            "\"online\""
        );
        assert_eq!(
            serde_json::to_string(&ChartTheme::Dark).unwrap(),
            "\"dark\""
        );
        let theme: ChartTheme = serde_json::from_str("\"light\"").unwrap();
        assert_eq!(theme, ChartTheme::Light);
        assert!(serde_json::from_str::<ChartTheme>("\"Light\"").is_err());
    }
}
