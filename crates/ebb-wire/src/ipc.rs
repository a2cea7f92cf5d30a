//! Types that cross the Tauri IPC boundary between the desktop shell and the webview.
//!
//! The commands are listed once, in `src-tauri/src/command_names.rs`. Every error crosses
//! as [`IpcError`]: `kind` (a closed set the UI words), `field` (the input it names; for
//! `role_required`, the role it needs), `line` (a demand CSV's, a rule file's or a trace's),
//! `message` (English, for logs) and `problem` (the `HostProblem` behind an agent's
//! failure); the UI never reads a field out of `message`. Host tokens go in (`HostInput`)
//! and never come back (`HostEntry::has_token`).

use crate::plan::{OverlayMode, PlanKind};
use crate::reasons::HostProblem;
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
    /// Where host tokens are kept.
    pub token_store: TokenStoreKind,
    /// The operating system's locale as a BCP 47 tag (e.g. `zh-CN`), when it can be read;
    /// the UI's default language follows it.
    pub os_locale: Option<String>,
}

/// The language the operator reads the app in (the UI's choice, or the OS locale's until
/// the UI says): what the shell words desktop notifications in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Type)]
pub enum UiLanguage {
    #[default]
    #[serde(rename = "en")]
    English,
    #[serde(rename = "zh-CN")]
    SimplifiedChinese,
}

impl UiLanguage {
    /// The language of a BCP 47 tag as the UI picks one (`detectLocale`): any Chinese tag
    /// (`zh`, `zh-CN`, `zh_TW`, `zh-Hans-SG`) is Simplified Chinese, anything else English.
    pub fn from_tag(tag: &str) -> UiLanguage {
        let primary = tag.trim().split(['-', '_']).next().unwrap_or_default();
        if primary.eq_ignore_ascii_case("zh") {
            UiLanguage::SimplifiedChinese
        } else {
            UiLanguage::English
        }
    }
}

/// Whether this console enforces the pools: consoles sharing one database elect one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EnforcerRole {
    /// The only console on its database (its own `console.db`): it enforces.
    Alone,
    /// Elected by the consoles sharing its database, for this term.
    Elected { term: u64 },
    /// Another console sharing the database enforces; this one views and may still change
    /// desired counts, which the elected one carries out.
    Following,
    /// Another process on this data directory collects and enforces (see
    /// [`AppInfo::collecting`]).
    NotCollecting,
}

/// Where host tokens are kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TokenStoreKind {
    /// The OS keychain (macOS Keychain, Windows Credential Manager, Secret Service).
    Keychain,
    /// A file readable only by the operator (`--token-store file`).
    File { path: String },
    /// Memory only: tokens are lost when the app closes (the demo).
    Memory,
    /// The keychain was asked for, but none answers here: no token can be kept until the
    /// app starts with `--token-store file`.
    NoKeychain { reason: String },
}

impl std::fmt::Display for TokenStoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenStoreKind::Keychain => f.write_str("the OS keychain"),
            TokenStoreKind::File { path } => write!(f, "the file {path} (readable only by you)"),
            TokenStoreKind::Memory => f.write_str("memory"),
            TokenStoreKind::NoKeychain { reason } => write!(
                f,
                "nowhere: no OS keychain answers here ({reason}); start with `--token-store file` to keep tokens in a file readable only by you"
            ),
        }
    }
}

/// Colours for a chart drawn on the Rust side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ChartTheme {
    Light,
    Dark,
}

/// What a series measures: the one metric type of the store, the charts and the IPC.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Type,
)]
#[serde(rename_all = "snake_case")]
pub enum ChartMetric {
    /// GPU utilization, %.
    Util,
    /// Memory used, MiB.
    MemoryUsed,
    /// Memory used as a share of the card's memory, %.
    MemoryPct,
    /// Temperature, °C.
    Temperature,
    /// Power draw, W.
    Power,
}

impl ChartMetric {
    pub const ALL: [ChartMetric; 5] = [
        ChartMetric::Util,
        ChartMetric::MemoryUsed,
        ChartMetric::MemoryPct,
        ChartMetric::Temperature,
        ChartMetric::Power,
    ];

    /// Whether the metric is a percentage (0-100).
    pub fn is_percent(self) -> bool {
        matches!(self, ChartMetric::Util | ChartMetric::MemoryPct)
    }
}

/// How a chart of a time range is to be drawn: back `range_s` seconds from now, in the
/// theme and size it is shown at, its clock labels in the viewer's time zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ChartFrame {
    pub range_s: u32,
    pub theme: ChartTheme,
    pub width_px: u32,
    pub height_px: u32,
    /// Added to UTC for the clock labels (480 for UTC+8).
    pub utc_offset_minutes: i32,
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
    /// Why the last poll failed or the host is degraded; `None` when it answered well.
    pub last_error: Option<HostProblem>,
    /// Every GPU with its latest readings, as the agent reported them. While the host
    /// does not answer, its last known GPUs with every reading `None`; empty before the
    /// first answer, and in a viewing process (which sees only what the collector records).
    pub gpus: Vec<crate::agent::Gpu>,
}

/// The whole fleet as the console sees it; `tick` grows by one with every collection round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct FleetSnapshot {
    pub tick: u32,
    pub hosts: Vec<HostStatus>,
    /// Set while the metrics back end (Prometheus) does not answer: the hosts are then as
    /// it last answered. Always `None` with the embedded collector.
    #[serde(default)]
    pub metrics_unavailable: Option<MetricsUnavailable>,
}

/// Why the metrics back end gave no readings: its URL and its failure, in its words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct MetricsUnavailable {
    pub url: String,
    pub reason: String,
}

/// The console's facts the Fleet's capacity summary needs beside the snapshot: which
/// catalog model each reported GPU model is, the catalog's hourly prices, and which of
/// our pools holds each of our leases (a lease on a GPU that is not here is someone
/// else's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct FleetCapacity {
    /// The catalog's currency, e.g. `CNY`.
    pub currency: String,
    /// Each GPU model name the hosts report, mapped to the catalog's model.
    pub models: Vec<ModelMapping>,
    /// On-demand price per GPU-hour, by catalog model and region.
    pub prices: Vec<CapacityPrice>,
    /// Our pools' leases now held.
    pub leases: Vec<PoolLeaseRef>,
}

/// A GPU model as a host reports it (`NVIDIA A100-SXM4-80GB`) and the catalog's name for
/// it (`A100`); `None` when the catalog prices no such model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ModelMapping {
    pub gpu_model: String,
    pub catalog_model: Option<String>,
}

/// The catalog's on-demand price of one model in one region.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct CapacityPrice {
    /// The catalog's model name, e.g. `A100`.
    pub model: String,
    pub region: String,
    pub hour_fen: i64,
}

/// One of our leases and the pool holding it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct PoolLeaseRef {
    pub lease_id: String,
    pub host: String,
    pub pool: String,
}

/// A registered host as the Settings view shows it. The token is never sent back: only
/// whether one is stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct HostEntry {
    pub name: String,
    pub url: String,
    pub region: String,
    pub labels: std::collections::BTreeMap<String, String>,
    /// SHA-256 of the agent's TLS certificate, `AB:CD:...`, to pin.
    pub fingerprint: Option<String>,
    /// Whether a token is stored for the host (the token itself never is here).
    pub has_token: bool,
    /// Being removed: the pools' GPUs there are released (and taken elsewhere), then the
    /// registry drops it. Set by the registry; ignored on input.
    #[serde(default)]
    pub draining: bool,
}

/// What removing a host did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HostRemoval {
    /// Gone from the registry.
    Removed,
    /// Pools held GPUs there: they are being released (each pool takes its GPUs
    /// elsewhere), and the host goes once none is left.
    Draining { pools: Vec<PoolGpus> },
}

/// A pool and a number of its GPUs (held on one host).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct PoolGpus {
    pub pool: String,
    pub gpus: u32,
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

/// A host as the Settings form holds it, every field as typed (labels as
/// `key=value, key=value`): what `check_host` checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct HostForm {
    pub name: String,
    pub url: String,
    pub region: String,
    pub labels: String,
    pub fingerprint: String,
}

/// The registry's answer on a host as typed: each field's problem in words (at most one a
/// field), or the host to send (normalized, without its token) when there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct HostCheck {
    pub problems: Vec<crate::phrase::FieldProblem>,
    pub input: Option<HostInput>,
}

/// Billing plans to compare over a demand: the Costs view's form, `ebb cost plan`'s flags.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct PlanRequest {
    /// `hour,demand` or `minute,demand` CSV.
    pub demand_csv: String,
    pub model: String,
    pub region: String,
    /// The work may be interrupted (spot plans are compared too).
    pub interruptible: bool,
    /// The subscribed base's term; `None`: monthly.
    pub term: Option<crate::plan::Term>,
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

/// Where the prices in use came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum CatalogOrigin {
    /// The embedded demo catalog (none imported).
    Demo,
    /// A catalog the operator imported.
    Imported,
}

/// The price catalog in use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct CatalogView {
    pub source: CatalogOrigin,
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
    pub kind: PlanKind,
    pub base_gpus: u32,
    pub base_fen: i64,
    pub overlay_fen: i64,
    pub total_fen: i64,
    /// Against all subscribed at the peak; negative when dearer.
    pub saving_fen: i64,
    pub saving_pct: f64,
    /// The base's term.
    pub term: crate::plan::Term,
    /// Every paid GPU-hour.
    pub paid_gpu_hours: u64,
    /// The same by how it was paid.
    pub paid_by_unit: crate::plan::PaidGpuHours,
    pub idle_paid_gpu_hours: u64,
    pub recommended: bool,
}

/// A plan the comparison could not price, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct SkippedPlanRow {
    pub kind: PlanKind,
    /// Why, with the catalog entry and the price it lacks.
    pub reason: crate::plan::SkipReason,
}

/// The cheapest plan found, and the exact base for "base + hourly".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct RecommendationView {
    pub kind: PlanKind,
    pub base_gpus: u32,
    pub cost_fen: i64,
    pub saving_fen: i64,
    pub saving_pct: f64,
    /// The optimal base for "base subscribed + hourly overlay".
    pub hourly_base_gpus: u32,
    /// That plan's cost.
    pub hourly_cost_fen: i64,
    /// A level is worth subscribing when demand reaches it at least this many hours.
    pub break_even_hours: u64,
    /// Hours in which demand reaches the hourly plan's base.
    pub hours_at_base: u64,
    /// Hours in which demand exceeds it.
    pub hours_above_base: u64,
    /// A day or week overlay that beats the hourly one.
    pub cheaper_overlay: Option<CheaperOverlayView>,
}

/// A day or week overlay cheaper than the hourly one: its best base and cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct CheaperOverlayView {
    pub overlay: OverlayMode,
    pub base_gpus: u32,
    pub cost_fen: i64,
    /// How much less than the hourly plan.
    pub saving_vs_hourly_fen: i64,
}

/// The Costs view's comparison of plans for one demand series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct PlanComparisonView {
    pub model: String,
    pub region: String,
    pub currency: String,
    pub hours: u64,
    /// The demand's first hour (its own clock: hours since the epoch for dated demand).
    pub first_hour: i64,
    pub peak_gpus: u32,
    pub used_gpu_hours: u64,
    /// The term of every base.
    pub term: crate::plan::Term,
    /// One GPU subscribed over the series.
    pub subscription_per_gpu_fen: i64,
    /// The catalog's price of a GPU-hour on demand.
    pub hour_fen: i64,
    pub plans: Vec<PlanRow>,
    pub skipped: Vec<SkippedPlanRow>,
    pub recommendation: RecommendationView,
    /// The comparison as a bar chart (SVG, drawn with plotters); none where no chart was
    /// asked for (`ebb cost plan --json`).
    pub chart_svg: Option<String>,
}

/// What kind of failure an IPC command met: the UI words each one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum IpcErrorKind {
    /// A field of the input is wrong; `field` names it.
    InvalidInput,
    /// The price catalog is not valid.
    InvalidCatalog,
    /// No such host or pool.
    NotFound,
    /// A file could not be read or written.
    Io,
    /// The token store (keychain) failed.
    TokenStore,
    /// The agent URL is not valid.
    BadUrl,
    /// The host name does not resolve.
    Dns,
    /// Nothing listens at the agent's address.
    Refused,
    /// The agent did not answer in time.
    Timeout,
    /// TLS or the pinned certificate failed.
    Tls,
    /// Any other connection failure.
    Connect,
    /// The agent refused the token.
    Unauthorized,
    /// The token lacks the scope.
    Forbidden,
    /// The agent answered an unexpected HTTP status.
    Status,
    /// The agent refused the request.
    RefusedRequest,
    /// The answer was not an agent's JSON.
    Decode,
    /// The agent speaks another API version.
    Incompatible,
    /// Pools still hold GPUs on the host to be removed: release them first.
    HostHoldsGpus,
    /// A rule file has lint warnings the operator has not acknowledged: save again with
    /// them acknowledged.
    UnacknowledgedWarnings,
    /// Another change came first: the pool is no longer at the count this one was made
    /// from (`field` is `from`); look again and decide on what is there now.
    Conflict,
    /// The metrics back end (Prometheus) did not answer: no readings or charts until it does.
    MetricsUnavailable,
    /// The operator's role does not allow it (`field` names the role it needs): on a
    /// shared database an admin grants roles.
    RoleRequired,
    /// A bug or a broken database: the message says what failed.
    Internal,
}

impl IpcErrorKind {
    /// Whether the operator's input was refused (a field, a file, a value, a name not
    /// there, the operator's role), rather than something failing: the CLI exits 2 for
    /// these, 1 for the rest.
    pub fn refuses_input(self) -> bool {
        matches!(
            self,
            IpcErrorKind::InvalidInput
                | IpcErrorKind::InvalidCatalog
                | IpcErrorKind::NotFound
                | IpcErrorKind::HostHoldsGpus
                | IpcErrorKind::UnacknowledgedWarnings
                | IpcErrorKind::RoleRequired
        )
    }

    /// The kind of an agent failure.
    pub fn of_host_problem(problem: &HostProblem) -> IpcErrorKind {
        match problem {
            HostProblem::BadUrl { .. } => IpcErrorKind::BadUrl,
            HostProblem::Dns { .. } => IpcErrorKind::Dns,
            HostProblem::Refused { .. } => IpcErrorKind::Refused,
            HostProblem::Timeout { .. } | HostProblem::Slow { .. } => IpcErrorKind::Timeout,
            HostProblem::Tls { .. } => IpcErrorKind::Tls,
            HostProblem::Connect { .. } => IpcErrorKind::Connect,
            HostProblem::Unauthorized { .. } => IpcErrorKind::Unauthorized,
            HostProblem::Forbidden { .. } => IpcErrorKind::Forbidden,
            HostProblem::Status { .. } => IpcErrorKind::Status,
            HostProblem::RefusedRequest { .. } | HostProblem::GpusNotAnswering { .. } => {
                IpcErrorKind::RefusedRequest
            }
            HostProblem::Decode { .. } => IpcErrorKind::Decode,
            HostProblem::Incompatible { .. } => IpcErrorKind::Incompatible,
        }
    }
}

/// An error crossing the IPC boundary: a stable kind, the field it is about, and words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct IpcError {
    pub kind: IpcErrorKind,
    /// The input field the error is about (`name`, `url`, `demand`, `model`...), when one is.
    pub field: Option<String>,
    /// The 1-based line of the input the error is about (a demand CSV's), when one is.
    pub line: Option<u32>,
    /// The problem in English, for logs and the CLI; the UI words `kind`, `field` and
    /// `problem` instead.
    pub message: String,
    /// What a host said or did, when the error is an agent's failure: the UI words it.
    /// Boxed: it is large, and every command's `Result` carries this error.
    pub problem: Option<Box<HostProblem>>,
    /// The refusal in the operator's words, where Rust words it (a form field's problem,
    /// a name already taken): the UI shows these instead of `message`.
    #[serde(default)]
    pub words: Option<crate::phrase::Phrase>,
}

impl IpcError {
    pub fn new(kind: IpcErrorKind, message: impl Into<String>) -> IpcError {
        IpcError {
            kind,
            field: None,
            line: None,
            message: message.into(),
            problem: None,
            words: None,
        }
    }

    /// An invalid input naming its field.
    pub fn invalid(field: &str, message: impl Into<String>) -> IpcError {
        IpcError {
            kind: IpcErrorKind::InvalidInput,
            field: Some(field.to_string()),
            line: None,
            message: message.into(),
            problem: None,
            words: None,
        }
    }

    /// An agent's failure: its kind, the English and the problem itself.
    pub fn of_host(problem: HostProblem) -> IpcError {
        IpcError {
            problem: Some(Box::new(problem.clone())),
            ..IpcError::new(IpcErrorKind::of_host_problem(&problem), problem.to_string())
        }
    }

    /// The same error, about 1-based `line` of the input (0 means the input as a whole).
    pub fn at_line(mut self, line: usize) -> IpcError {
        self.line = u32::try_from(line).ok().filter(|&line| line > 0);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ui_language_of_a_locale_tag_is_picked_as_the_ui_picks_it() {
        for tag in ["zh", "zh-CN", "zh_CN.UTF-8", "zh-TW", "zh-Hans-SG", "ZH-cn"] {
            assert_eq!(
                UiLanguage::from_tag(tag),
                UiLanguage::SimplifiedChinese,
                "{tag}"
            );
        }
        for tag in ["en-US", "C", "", "de-DE", "zhuang"] {
            assert_eq!(UiLanguage::from_tag(tag), UiLanguage::English, "{tag}");
        }
        assert_eq!(
            serde_json::to_string(&UiLanguage::SimplifiedChinese).unwrap(),
            "\"zh-CN\""
        );
        assert_eq!(
            serde_json::from_str::<UiLanguage>("\"en\"").unwrap(),
            UiLanguage::English
        );
    }

    /// One of each kind. The match has no wildcard and numbers the arms, so a kind added
    /// to the enum fails to compile here until it is listed, and the count below checks
    /// the list has every arm.
    fn every_error_kind() -> Vec<IpcErrorKind> {
        use IpcErrorKind::*;
        let all = vec![
            InvalidInput,
            InvalidCatalog,
            NotFound,
            Io,
            TokenStore,
            BadUrl,
            Dns,
            Refused,
            Timeout,
            Tls,
            Connect,
            Unauthorized,
            Forbidden,
            Status,
            RefusedRequest,
            Decode,
            Incompatible,
            HostHoldsGpus,
            UnacknowledgedWarnings,
            Conflict,
            MetricsUnavailable,
            RoleRequired,
            Internal,
        ];
        let arm = |kind: IpcErrorKind| match kind {
            InvalidInput => 0,
            InvalidCatalog => 1,
            NotFound => 2,
            Io => 3,
            TokenStore => 4,
            BadUrl => 5,
            Dns => 6,
            Refused => 7,
            Timeout => 8,
            Tls => 9,
            Connect => 10,
            Unauthorized => 11,
            Forbidden => 12,
            Status => 13,
            RefusedRequest => 14,
            Decode => 15,
            Incompatible => 16,
            HostHoldsGpus => 17,
            UnacknowledgedWarnings => 18,
            Conflict => 19,
            MetricsUnavailable => 20,
            RoleRequired => 21,
            Internal => 22,
        };
        let arms: Vec<usize> = all.iter().map(|&kind| arm(kind)).collect();
        assert_eq!(arms, (0..all.len()).collect::<Vec<_>>());
        all
    }

    /// The message catalog of a locale (`ui/src/locales/LOCALE.json`), key → words.
    fn ui_catalog(locale: &str) -> std::collections::BTreeMap<String, String> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../ui/src/locales/{locale}.json"));
        let text = std::fs::read_to_string(&path).expect("the locale's catalog");
        serde_json::from_str(&text).expect("a catalog is a JSON object of strings")
    }

    #[test]
    fn every_error_kind_has_a_sentence_in_both_languages() {
        let (en, zh) = (ui_catalog("en"), ui_catalog("zh-CN"));
        for kind in every_error_kind() {
            let tag = serde_json::to_value(kind).unwrap();
            let key = format!("error.kind.{}", tag.as_str().unwrap());
            assert!(en.contains_key(&key), "no English sentence for {key}");
            let words = zh
                .get(&key)
                .unwrap_or_else(|| panic!("no zh-CN sentence for {key}"));
            assert!(
                words
                    .chars()
                    .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
                "{words} is not Chinese"
            );
        }
    }

    #[test]
    fn an_agent_failure_carries_its_problem() {
        let problem = HostProblem::Refused {
            url: "http://gpu-a:7070".into(),
        };
        let error = IpcError::of_host(problem.clone());
        assert_eq!(error.kind, IpcErrorKind::Refused);
        assert_eq!(error.problem.as_deref(), Some(&problem));
        assert_eq!(error.message, problem.to_string());
        let json = serde_json::to_value(&error).unwrap();
        assert_eq!(json["problem"]["kind"], "refused");
        assert_eq!(
            serde_json::to_value(IpcError::invalid("name", "too long")).unwrap()["problem"],
            serde_json::Value::Null
        );
    }

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
