//! Tauri commands and events: a few lines each, over the core.

use crate::state::AppState;
use ebb_core::console::ScaleChange;
use ebb_core::console_charts::{ChartExport, export_file_name, write_export};
use ebb_core::pools::{ConfirmPolicy, PoolError};
use ebb_core::rules_replay::ReplayChart;
use ebb_wire::ipc::{
    AppInfo, CatalogImport, CatalogView, ChartFrame, ChartMetric, ChartTheme, ConnectionOk,
    EnforcerRole, ExportFormat, FleetCapacity, FleetSnapshot, HostCheck, HostEntry, HostForm,
    HostInput, HostRemoval, IpcError, IpcErrorKind, PlanComparisonView, PlanRequest, UiLanguage,
};
use ebb_wire::pools::{
    ActivityEntry, Actor, MixExample, PoolCheck, PoolForm, PoolInput, PoolOptions, PoolView,
    ScalePreview, SpendSummary,
};
use ebb_wire::reasons::ChangeReason;
use ebb_wire::replay::{ReplayChartLabels, RulesReplay};
use ebb_wire::rules::{LintReport, PoolRules, PromqlValue, RuleSet, RulesMode};
use ebb_wire::showback::Showback;
use ebb_wire::suggest::RulesSuggestion;

use tauri::State;

#[tauri::command]
#[specta::specta]
pub fn app_info(state: State<'_, AppState>) -> AppInfo {
    state.info.clone()
}

/// The language the operator reads the app in: the UI says so as it starts and whenever it
/// changes, and desktop notifications are worded in it from then on.
#[tauri::command]
#[specta::specta]
pub fn set_ui_language(state: State<'_, AppState>, language: UiLanguage) {
    state.language.set(language);
}

/// The theme the operator chose for the app, `None` for the desktop's own: the window takes
/// it too, so what the toolkit draws rather than the page (a select's open list, the title
/// bar) is dark with a dark page. Reads no console state: called before the console starts.
#[tauri::command]
#[specta::specta]
pub fn set_ui_theme(
    window: tauri::WebviewWindow,
    theme: Option<ChartTheme>,
) -> Result<(), IpcError> {
    let theme = theme.map(|theme| match theme {
        ChartTheme::Light => tauri::Theme::Light,
        ChartTheme::Dark => tauri::Theme::Dark,
    });
    window.set_theme(theme).map_err(|error| {
        IpcError::new(
            IpcErrorKind::Io,
            format!("cannot set the window's theme: {error}"),
        )
    })
}

/// Whether this window's console enforces the pools now (asked every few seconds: an
/// election among consoles sharing a database can change it).
#[tauri::command]
#[specta::specta]
pub fn enforcer_role(state: State<'_, AppState>) -> EnforcerRole {
    state.console.enforcer_role()
}

#[tauri::command]
#[specta::specta]
pub fn fleet_snapshot(state: State<'_, AppState>) -> FleetSnapshot {
    (*state.console.latest()).clone()
}

/// What the Fleet's capacity summary needs beside the snapshot: catalog models and
/// prices, and which of our pools holds each of our leases.
#[tauri::command]
#[specta::specta]
pub async fn fleet_capacity(state: State<'_, AppState>) -> Result<FleetCapacity, IpcError> {
    state.console.fleet_capacity().await.map_err(IpcError::from)
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
    (state.console)
        .live_chart(&host, theme, width_px, height_px)
        .map_err(IpcError::from)
}

/// One host's per-GPU lines of a metric over the frame's range, from the metrics store
/// (downsampled to the chart's width), as SVG.
#[tauri::command]
#[specta::specta]
pub async fn host_history_chart(
    state: State<'_, AppState>,
    host: String,
    chart_metric: ChartMetric,
    frame: ChartFrame,
) -> Result<String, IpcError> {
    (state.console)
        .host_history_chart(&host, chart_metric, &frame)
        .await
        .map_err(IpcError::from)
}

/// Every GPU of the fleet × time, mean utilization per cell, as SVG.
#[tauri::command]
#[specta::specta]
pub async fn fleet_heatmap_chart(
    state: State<'_, AppState>,
    frame: ChartFrame,
) -> Result<String, IpcError> {
    let title = ebb_notify::heatmap_title(state.language.get());
    let chart = state.console.fleet_heatmap_chart(&frame, &title).await;
    chart.map_err(IpcError::from)
}

/// A pool's own chart over the frame's range (desired, ready, warming, utilization, as SVG)
/// and the scale-out in progress with its ETA from each host's measured delivery time.
#[tauri::command]
#[specta::specta]
pub async fn pool_chart(
    state: State<'_, AppState>,
    name: String,
    frame: ChartFrame,
    labels: ebb_wire::pools::PoolChartLabels,
) -> Result<ebb_wire::pools::PoolChart, IpcError> {
    let chart = state.console.pool_chart(&name, &frame, &labels).await;
    chart.map_err(IpcError::from)
}

/// Saves a chart the UI shows (an SVG from one of the chart commands) as SVG or PNG, with
/// `title` (host, metric, range) in a band above it, where the operator chooses in the
/// save dialog (opened on Downloads, else `<data dir>/exports`). Returns the file's path,
/// or `None` when the dialog was cancelled.
#[tauri::command]
#[specta::specta]
pub async fn export_chart(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    svg: String,
    format: ExportFormat,
    name: String,
    title: Option<String>,
) -> Result<Option<String>, IpcError> {
    let Some(path) = chart_path(&app, &state, &name, format).await? else {
        return Ok(None);
    };
    let export = ChartExport { svg, format, title };
    let saved = state.console.export_chart(export, path).await;
    saved.map(Some).map_err(IpcError::from)
}

/// Where a chart named `name` is saved (the save dialog's answer).
async fn chart_path(
    app: &tauri::AppHandle,
    state: &AppState,
    name: &str,
    format: ExportFormat,
) -> Result<Option<std::path::PathBuf>, IpcError> {
    let file_name = export_file_name(name, format).map_err(IpcError::from)?;
    save_path(app, state, &file_name).await
}

/// Where an export goes: the operator's choice in the native save dialog, opened on
/// Downloads (else `<data dir>/exports`) with `file_name` filled in; `None` when cancelled.
/// With `EBB_EXPORT_DIR` set (scripted runs, the end-to-end tests, which cannot drive a
/// native dialog), straight into that folder without asking.
async fn save_path(
    app: &tauri::AppHandle,
    state: &AppState,
    file_name: &str,
) -> Result<Option<std::path::PathBuf>, IpcError> {
    // The dialog's one filter: the file name's extension ("CSV", "PNG").
    let extension = file_name
        .rsplit_once('.')
        .map_or("", |(_, extension)| extension);
    let filter = extension.to_uppercase();
    if let Some(dir) = std::env::var_os("EBB_EXPORT_DIR").filter(|dir| !dir.is_empty()) {
        return Ok(Some(std::path::PathBuf::from(dir).join(file_name)));
    }
    use tauri_plugin_dialog::DialogExt;
    let downloads = dirs::download_dir().filter(|dir| dir.is_dir());
    let dir = downloads.unwrap_or_else(|| state.data_dir.join("exports"));
    let _ = std::fs::create_dir_all(&dir);
    let (sender, receiver) = tokio::sync::oneshot::channel();
    app.dialog()
        .file()
        .set_directory(&dir)
        .set_file_name(file_name)
        .add_filter(&filter, &[extension])
        .save_file(move |chosen| {
            let _ = sender.send(chosen);
        });
    let chosen = receiver.await.ok().flatten();
    chosen
        .map(|path| {
            path.into_path().map_err(|error| {
                IpcError::new(IpcErrorKind::Io, format!("cannot save there: {error}"))
            })
        })
        .transpose()
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
        .map_err(IpcError::from)?;
    Ok(hosts.into_iter().collect())
}

#[tauri::command]
#[specta::specta]
pub async fn add_host(state: State<'_, AppState>, input: HostInput) -> Result<HostEntry, IpcError> {
    let added = state
        .console
        .add_host(&spec(&input), input.token.as_deref())
        .await
        .map_err(IpcError::from)?;
    Ok(added)
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
        .map_err(IpcError::from)?;
    Ok(updated)
}

#[tauri::command]
#[specta::specta]
/// Removes a host; with `release`, where pools hold GPUs there, releases them first (each
/// pool takes its GPUs elsewhere) and the host goes once none is left.
pub async fn remove_host(
    state: State<'_, AppState>,
    name: String,
    release: bool,
) -> Result<HostRemoval, IpcError> {
    state
        .console
        .remove_host(&name, release)
        .await
        .map_err(IpcError::from)
}

/// Forgets a host that went silent and was written off, which a drain can never finish:
/// its leases are recorded as ended. Refused (`invalid_input` on `name`) while it is not
/// written off. Answers how many leases were forgotten.
#[tauri::command]
#[specta::specta]
pub async fn forget_host(state: State<'_, AppState>, name: String) -> Result<u32, IpcError> {
    state
        .console
        .registry()
        .forget(&name)
        .await
        .map_err(IpcError::from)
}

/// The Settings form's host as typed, checked by the registry's own rules: each field's
/// problem in words, or the host to send. Saves nothing.
#[tauri::command]
#[specta::specta]
pub fn check_host(form: HostForm) -> HostCheck {
    ebb_core::registry::check_form(&form)
}

/// Tries a host as typed (before or after saving) and says exactly what failed.
#[tauri::command]
#[specta::specta]
pub async fn test_host(
    state: State<'_, AppState>,
    input: HostInput,
) -> Result<ConnectionOk, IpcError> {
    let typed = spec(&input);
    let tried = state.console.try_host(&typed, input.token.as_deref()).await;
    tried.map_err(IpcError::from)
}

/// The active price catalog (the demo one until one is imported).
#[tauri::command]
#[specta::specta]
pub fn catalog_show(state: State<'_, AppState>) -> Result<CatalogView, IpcError> {
    state.console.catalog_view().map_err(IpcError::from)
}

/// Validates a catalog (TOML text) and, only if valid, makes it the active one.
#[tauri::command]
#[specta::specta]
pub async fn catalog_import(
    state: State<'_, AppState>,
    text: String,
) -> Result<CatalogImport, IpcError> {
    state
        .console
        .import_catalog(&text)
        .await
        .map_err(IpcError::from)
}

/// Every billing plan priced over a demand CSV (`hour,demand` or `minute,demand`), with
/// the recommendation and a bar chart.
#[tauri::command]
#[specta::specta]
pub fn cost_plan(
    state: State<'_, AppState>,
    request: PlanRequest,
    theme: ChartTheme,
    width_px: u32,
) -> Result<PlanComparisonView, IpcError> {
    let language = state.language.get();
    let label = move |kind| ebb_notify::plan_label(language, kind);
    let plans = state.console.cost_plan(&request, theme, width_px, &label);
    plans.map_err(IpcError::from)
}

fn spec(input: &HostInput) -> HostEntry {
    HostEntry {
        name: input.name.clone(),
        url: input.url.clone(),
        region: input.region.clone(),
        labels: input.labels.clone(),
        fingerprint: input.fingerprint.clone(),
        has_token: false,
        draining: false,
    }
}

/// Every pool with its live state and spend.
#[tauri::command]
#[specta::specta]
pub async fn list_pools(state: State<'_, AppState>) -> Result<Vec<PoolView>, IpcError> {
    state.console.list_pools().await.map_err(IpcError::from)
}

/// Regions and models for the pool form, and when a slider move asks first.
#[tauri::command]
#[specta::specta]
pub async fn pool_options(state: State<'_, AppState>) -> Result<PoolOptions, IpcError> {
    state.console.pool_options().await.map_err(IpcError::from)
}

/// The pool form as typed, checked as saving it would be: each field's problem in words,
/// or the pool to send. Saves nothing.
#[tauri::command]
#[specta::specta]
pub async fn check_pool(state: State<'_, AppState>, form: PoolForm) -> Result<PoolCheck, IpcError> {
    state
        .console
        .check_pool(&form)
        .await
        .map_err(IpcError::from)
}

/// How the pool's max would split under the mix being typed (the reconciler's split);
/// `None` until its numbers read.
#[tauri::command]
#[specta::specta]
pub fn preview_mix(form: PoolForm) -> Option<MixExample> {
    ebb_core::pools::form::mix_example(&form)
}

#[tauri::command]
#[specta::specta]
pub async fn create_pool(
    state: State<'_, AppState>,
    input: PoolInput,
) -> Result<PoolView, IpcError> {
    state
        .console
        .create_pool(&input)
        .await
        .map_err(IpcError::from)
}

#[tauri::command]
#[specta::specta]
pub async fn update_pool(
    state: State<'_, AppState>,
    name: String,
    input: PoolInput,
) -> Result<PoolView, IpcError> {
    state
        .console
        .update_pool(&name, &input)
        .await
        .map_err(IpcError::from)
}

#[tauri::command]
#[specta::specta]
pub async fn delete_pool(state: State<'_, AppState>, name: String) -> Result<(), IpcError> {
    state
        .console
        .delete_pool(&name)
        .await
        .map_err(IpcError::from)
}

/// What moving the slider to `to` would do: cost, free GPUs, where, whether to ask first.
/// `release` names leases the operator chose to give back first (none: the placement's
/// choice).
#[tauri::command]
#[specta::specta]
pub async fn preview_scale(
    state: State<'_, AppState>,
    name: String,
    to: u32,
    release: Option<Vec<String>>,
) -> Result<ScalePreview, IpcError> {
    state
        .console
        .preview_scale_choosing(&name, to, release.as_deref().unwrap_or_default())
        .await
        .map_err(IpcError::from)
}

/// Lets the slider go: the pool's desired count becomes `to` (from `from`, the count the
/// operator moved it from: a change that came first is a `conflict`), giving back the leases
/// in `release` first.
#[tauri::command]
#[specta::specta]
pub async fn scale_pool(
    state: State<'_, AppState>,
    name: String,
    to: u32,
    from: Option<u32>,
    release: Option<Vec<String>>,
    over_budget: Option<bool>,
) -> Result<ActivityEntry, IpcError> {
    let change = ScaleChange::new(to, Actor::Operator, ChangeReason::Slider)
        .moving_from(from)
        .releasing(release.unwrap_or_default())
        .over_budget(over_budget == Some(true));
    state
        .console
        .scale(&name, change)
        .await
        .map_err(IpcError::from)
}

/// Releases at once what the pool keeps until its paid units end.
#[tauri::command]
#[specta::specta]
pub async fn release_now(state: State<'_, AppState>, name: String) -> Result<(), IpcError> {
    state
        .console
        .force_release(&name)
        .await
        .map_err(IpcError::from)
}

/// The activity log, newest first; `pool` filters to one pool.
#[tauri::command]
#[specta::specta]
pub async fn list_activity(
    state: State<'_, AppState>,
    pool: Option<String>,
    limit: u32,
) -> Result<Vec<ActivityEntry>, IpcError> {
    state
        .console
        .activity(
            pool.as_deref().filter(|p| !p.is_empty()),
            limit.clamp(1, 1000),
        )
        .await
        .map_err(IpcError::from)
}

/// Sets when a slider move asks for confirmation first.
#[tauri::command]
#[specta::specta]
pub async fn set_confirm_policy(
    state: State<'_, AppState>,
    above_gpus: u32,
    above_per_hour_fen: i64,
) -> Result<(), IpcError> {
    state
        .console
        .set_confirm_policy(ConfirmPolicy {
            above_gpus,
            above_per_hour_fen,
        })
        .await
        .map_err(IpcError::from)
}

/// Spend across every pool this month, against the monthly budget.
#[tauri::command]
#[specta::specta]
pub async fn spend_summary(state: State<'_, AppState>) -> Result<SpendSummary, IpcError> {
    state.console.spend_summary().await.map_err(IpcError::from)
}

/// A month's spend per team and per pool (`month` as `YYYY-MM`; `None`: this month), each
/// split into overlay, base used and idle base. A month not begun is `invalid_input` naming
/// `month`.
#[tauri::command]
#[specta::specta]
pub async fn spend_showback(
    state: State<'_, AppState>,
    month: Option<String>,
) -> Result<Showback, IpcError> {
    state
        .console
        .showback(month.as_deref())
        .await
        .map_err(IpcError::from)
}

/// Sets (`Some`, in fen) or clears the monthly budget; answers the summary against it.
#[tauri::command]
#[specta::specta]
pub async fn set_budget(
    state: State<'_, AppState>,
    budget_fen: Option<i64>,
) -> Result<SpendSummary, IpcError> {
    state
        .console
        .set_budget(budget_fen)
        .await
        .map_err(IpcError::from)?;
    state.console.spend_summary().await.map_err(IpcError::from)
}

/// Saves this month's spend summary as CSV where the operator chooses; returns the path,
/// or `None` when the dialog was cancelled.
#[tauri::command]
#[specta::specta]
pub async fn export_spend_csv(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
) -> Result<Option<String>, IpcError> {
    let (name, csv) = state.console.spend_csv().await.map_err(IpcError::from)?;
    let Some(path) = save_path(&app, &state, &name).await? else {
        return Ok(None);
    };
    let written = write_export(path, csv.into_bytes()).await;
    written.map(Some).map_err(IpcError::from)
}

/// A pool's rules with their warnings, the latest decision and the custom metrics they
/// name; `None` when the pool has none yet.
#[tauri::command]
#[specta::specta]
pub async fn pool_rules(
    state: State<'_, AppState>,
    pool: String,
) -> Result<Option<PoolRules>, IpcError> {
    state
        .console
        .pool_rules(&pool)
        .await
        .map_err(IpcError::from)
}

/// Lints a rule file as it would be saved for `pool`: its problems (each with its line and
/// field) or its warnings.
#[tauri::command]
#[specta::specta]
pub async fn lint_rules(
    state: State<'_, AppState>,
    pool: String,
    source: String,
) -> Result<LintReport, IpcError> {
    state
        .console
        .lint_rules(&pool, &source)
        .await
        .map_err(IpcError::from)
}

/// A PromQL metric's query run now against the rules' Prometheus server (the Rules form's
/// Test): its value, or why none.
#[tauri::command]
#[specta::specta]
pub async fn test_promql(
    state: State<'_, AppState>,
    pool: String,
    query: String,
) -> Result<PromqlValue, IpcError> {
    state
        .console
        .test_promql(&pool, &query)
        .await
        .map_err(IpcError::from)
}

/// Saves a new version of a pool's rules (`mode`: as it is, or the first save's disabled,
/// when `None`): refused when invalid (the first problem's field and line), and when it has
/// warnings not `acknowledged` (`unacknowledged_warnings`).
#[tauri::command]
#[specta::specta]
pub async fn save_rules(
    state: State<'_, AppState>,
    pool: String,
    source: String,
    mode: Option<RulesMode>,
    acknowledged: bool,
) -> Result<PoolRules, IpcError> {
    state
        .console
        .save_rules(&pool, &source, mode, acknowledged)
        .await
        .map_err(IpcError::from)
}

/// Enables, disables or shadows a pool's rules.
#[tauri::command]
#[specta::specta]
pub async fn set_rules_mode(
    state: State<'_, AppState>,
    pool: String,
    mode: RulesMode,
) -> Result<PoolRules, IpcError> {
    state
        .console
        .set_rules_mode(&pool, mode)
        .await
        .map_err(IpcError::from)
}

/// Replays a rule file (as typed) for `pool` over `trace` (CSV `minute,demand[,metric…]`)
/// or, without one, the pool's recorded history, beside seed-80-30, HPA and the oracle;
/// with the chart of the rules' run.
#[tauri::command]
#[specta::specta]
pub async fn replay_rules(
    state: State<'_, AppState>,
    pool: String,
    source: String,
    trace: Option<String>,
    theme: ChartTheme,
    width_px: u32,
    labels: ReplayChartLabels,
) -> Result<RulesReplay, IpcError> {
    let chart = ReplayChart::shown(theme, width_px, &labels);
    let replay = state
        .console
        .replay_rules(&pool, &source, trace.as_deref(), chart);
    replay.await.map_err(IpcError::from)
}

/// A rule file for `pool` chosen by replay over `trace` or the pool's history, as a
/// proposal with its reasons; `current` (the file being edited) lends it its custom metrics;
/// `max_shortfall_pct` the limit (null: 1%).
#[tauri::command]
#[specta::specta]
pub async fn suggest_rules(
    state: State<'_, AppState>,
    pool: String,
    trace: Option<String>,
    current: Option<String>,
    max_shortfall_pct: Option<f64>,
) -> Result<RulesSuggestion, IpcError> {
    state
        .console
        .suggest_rules(
            &pool,
            trace.as_deref(),
            current.as_deref(),
            max_shortfall_pct,
        )
        .await
        .map_err(IpcError::from)
}

/// Rules as data (the Rules form) written as a rule file, checked or not: the linter says
/// what is wrong with it, by line and field.
#[tauri::command]
#[specta::specta]
pub fn rules_to_toml(rules: RuleSet) -> Result<String, IpcError> {
    Ok(ebb_core::rules_replay::rules_file(&rules))
}

/// A rule file read as data for the Rules form; refused with its first problem's field and
/// line.
#[tauri::command]
#[specta::specta]
pub fn parse_rules(source: String) -> Result<RuleSet, IpcError> {
    ebb_core::rules_replay::parse_source(&source)
        .map(|rules| rules.spec().clone())
        .map_err(IpcError::from)
}

/// Which desktop notifications the app shows (a rule scaled a pool, the budget held one, a
/// metric went stale); all of them until the operator says.
#[tauri::command]
#[specta::specta]
pub async fn notification_prefs(
    state: State<'_, AppState>,
) -> Result<ebb_wire::pools::NotificationPrefs, IpcError> {
    state
        .console
        .pool_store()
        .notification_prefs()
        .await
        .map_err(IpcError::from)
}

/// The Slurm partition a pool is bound to (slurm.toml), with its queue, nodes and jobs;
/// `None` for a pool bound to none.
#[tauri::command]
#[specta::specta]
pub async fn pool_slurm(
    state: State<'_, AppState>,
    name: String,
) -> Result<Option<ebb_wire::slurm::SlurmPoolView>, IpcError> {
    state
        .console
        .pool_slurm(&name)
        .await
        .map_err(IpcError::from)
}

/// Whether desktop notifications reach the desktop (no notification server, the last one
/// failed), for Settings to say beside the switches.
#[tauri::command]
#[specta::specta]
pub fn notification_delivery(state: State<'_, AppState>) -> ebb_wire::pools::NotificationDelivery {
    match state.delivery.get() {
        None => ebb_wire::pools::NotificationDelivery::Working,
        Some(detail) => ebb_wire::pools::NotificationDelivery::Unavailable { detail },
    }
}

/// Turns each kind of desktop notification on or off (kept in `console.db`); returns them
/// as stored.
#[tauri::command]
#[specta::specta]
pub async fn set_notification_prefs(
    state: State<'_, AppState>,
    prefs: ebb_wire::pools::NotificationPrefs,
) -> Result<ebb_wire::pools::NotificationPrefs, IpcError> {
    let store = state.console.pool_store();
    store
        .set_notification_prefs(prefs)
        .await
        .map_err(IpcError::from)?;
    store.notification_prefs().await.map_err(IpcError::from)
}

/// Who this console acts as, and what its role lets it do (the app hides or disables the
/// rest, saying why).
#[tauri::command]
#[specta::specta]
pub async fn whoami(state: State<'_, AppState>) -> Result<ebb_wire::access::Identity, IpcError> {
    Ok(state.console.identity().clone())
}

/// The audit log's hash chain checked: how many entries, and where it first breaks.
#[tauri::command]
#[specta::specta]
pub async fn verify_audit(
    state: State<'_, AppState>,
) -> Result<ebb_wire::access::AuditVerdict, IpcError> {
    state
        .console
        .verify_audit()
        .await
        .map_err(|error| IpcError::from(PoolError::Db(error)))
}

/// Every team with its quotas, pools and what they ask for.
#[tauri::command]
#[specta::specta]
pub async fn list_teams(
    state: State<'_, AppState>,
) -> Result<Vec<ebb_wire::access::TeamView>, IpcError> {
    state.console.teams().await.map_err(IpcError::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_host_answers_each_field_s_problem_in_catalog_words_or_the_host() {
        let typed = |url: &str| HostForm {
            name: "gpu-01".into(),
            url: url.into(),
            region: "cn-east".into(),
            labels: "team=ml".into(),
            fingerprint: String::new(),
        };
        let bad = check_host(typed("http://10.0.0.5:7070/v1/health"));
        assert_eq!(bad.input, None);
        assert_eq!(bad.problems.len(), 1);
        assert_eq!(bad.problems[0].field, "url");
        assert_eq!(bad.problems[0].words.key, "hosts.check.urlPath");
        let good = check_host(typed("http://10.0.0.5:7070/"));
        assert!(good.problems.is_empty());
        assert_eq!(good.input.unwrap().url, "http://10.0.0.5:7070");
    }

    #[test]
    fn preview_mix_answers_the_reconciler_s_split_at_max() {
        let form = PoolForm {
            name: "p".into(),
            model: "A100".into(),
            regions: vec![],
            min: "0".into(),
            max: "10".into(),
            base_gpus: "2".into(),
            term: "month".into(),
            overlay: "hour".into(),
            placement: "pack".into(),
            interruptible: true,
            release_at_unit_end: false,
            on_demand_floor: "2".into(),
            spot_pct: "50".into(),
            max_price: String::new(),
            stored_spot: None,
        };
        let example = preview_mix(form.clone()).unwrap();
        assert_eq!(example.max, 10);
        // Base 2, then the floor's 2 on demand, then half the other 6 on spot.
        assert_eq!(
            example.split,
            ebb_wire::pools::GpuSplit {
                base: 2,
                on_demand: 5,
                spot: 3
            }
        );
        assert_eq!(
            preview_mix(PoolForm {
                spot_pct: "x".into(),
                ..form
            }),
            None
        );
    }
}
