//! `ebb catalog …` and `ebb cost …`: the active price catalog in the data directory, and the
//! words and tables around `ebb_cost`'s figures. The figures themselves come from `ebb_cost`.

use anyhow::Context;
use ebb_cost::{
    DemandSeries, Money, PaidGpuHours, PlanKind, Preview, PriceEntry, Problem, RunRate, Validated,
};
use ebb_wire::ipc::{PlanComparisonView, PlanRow};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The desktop app's data directory (Tauri's `app_data_dir`): `$XDG_DATA_HOME` or
/// `~/.local/share` on Linux, `~/Library/Application Support` on macOS, `%APPDATA%` on
/// Windows, each followed by the app's identifier.
pub fn default_data_dir() -> anyhow::Result<PathBuf> {
    dirs::data_dir()
        .map(|dir| dir.join("dev.ebb.console"))
        .context("cannot find the OS data folder; pass --data-dir DIR or set EBB_DATA_DIR")
}

pub use ebb_core::catalog_store::ActiveCatalog;

/// Validates `file` and, only if it is valid, makes it the active catalog.
pub fn import(data_dir: &Path, file: &Path) -> anyhow::Result<(Validated, PathBuf)> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    Ok(ebb_core::catalog_store::import_text(
        data_dir,
        &text,
        &file.display().to_string(),
    )?)
}

/// The catalog as a table, one row per model and region.
pub fn catalog_table(active: &ActiveCatalog) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", active.source_line());
    if let Some(name) = &active.catalog.name {
        let _ = writeln!(out, "{name}, in {} per GPU", active.catalog.currency);
    }
    let _ = writeln!(
        out,
        "{:<12} {:<9} {:>9} {:>10} {:>11} {:>11} {:>12} {:>9} {:>9}",
        "MODEL", "REGION", "HOUR", "DAY", "WEEK", "MONTH", "YEAR", "SPOT/H", "RESV/H"
    );
    let or_dash =
        |money: Option<Money>| money.map_or_else(|| "—".to_string(), |money| money.to_string());
    for entry in &active.catalog.entries {
        let spot = match (entry.spot_hour, entry.spot_series.len()) {
            (Some(spot), 0) => spot.to_string(),
            (Some(spot), _) => format!("{spot}*"),
            (None, _) => "—".to_string(),
        };
        let _ = writeln!(
            out,
            "{:<12} {:<9} {:>9} {:>10} {:>11} {:>11} {:>12} {:>9} {:>9}",
            entry.model,
            entry.region,
            entry.hour,
            or_dash(entry.day),
            or_dash(entry.week),
            entry.month,
            or_dash(entry.year),
            spot,
            or_dash(entry.reserved_hour),
        );
    }
    if active
        .catalog
        .entries
        .iter()
        .any(|entry| !entry.spot_series.is_empty())
    {
        let _ = writeln!(out, "* spot price changes over time (spot_series)");
    }
    out.push_str(&warnings_text(&active.warnings));
    out
}

/// The showback as a table: each team's line, its pools beneath, then its idle base on
/// its own line; the total last.
pub fn showback_text(showback: &ebb_wire::showback::Showback) -> String {
    use ebb_wire::showback::ShowbackLine;
    let money = |fen: i64| Money::from_fen(fen).to_string();
    let mut out = format!(
        "Showback {}, {} to {}\n",
        showback.month,
        crate::when::time(showback.month_start_ms),
        crate::when::time(showback.through_ms),
    );
    if !showback.complete {
        out.push_str("The month is not over: its figures still move.\n");
    }
    let _ = writeln!(
        out,
        "{:<24} {:>10} {:>13} {:>13} {:>13} {:>13}",
        "TEAM / POOL", "GPU-HOURS", "OVERLAY", "BASE USED", "IDLE BASE", "TOTAL"
    );
    let mut row = |name: &str, line: &ShowbackLine| {
        let _ = writeln!(
            out,
            "{name:<24} {:>10.1} {:>13} {:>13} {:>13} {:>13}",
            line.gpu_hours,
            money(line.overlay_fen),
            money(line.base_used_fen),
            money(line.idle_base_fen),
            money(line.total_fen),
        );
    };
    let mut problems = Vec::new();
    for team in &showback.teams {
        let name = if team.team.is_empty() {
            "(no team)"
        } else {
            &team.team
        };
        row(name, &team.spend);
        for pool in showback.pools.iter().filter(|p| p.team == team.team) {
            match (&pool.spend, &pool.spend_problem) {
                (Some(line), _) => row(&format!("  {}", pool.pool), line),
                (None, problem) => {
                    row(
                        &format!("  {} (unpriced)", pool.pool),
                        &ShowbackLine::default(),
                    );
                    if let Some(problem) = problem {
                        problems.push(format!("{}: {problem}", pool.pool));
                    }
                }
            }
        }
        if team.spend.idle_base_fen != 0 {
            let idle = ShowbackLine {
                idle_base_fen: team.spend.idle_base_fen,
                total_fen: team.spend.idle_base_fen,
                gpu_hours: team.spend.idle_base_gpu_hours,
                ..ShowbackLine::default()
            };
            row("  idle base", &idle);
        }
    }
    row("TOTAL", &showback.total);
    if showback.total.idle_base_fen != 0 {
        let _ = writeln!(
            out,
            "idle base: {:.1} GPU-hours of subscribed base paid for and not held",
            showback.total.idle_base_gpu_hours
        );
    }
    for problem in problems {
        let _ = writeln!(out, "not priced, {problem}");
    }
    out
}

/// Warnings, one per line, or nothing.
pub fn warnings_text(warnings: &[Problem]) -> String {
    warnings
        .iter()
        .map(|warning| format!("warning: {warning}\n"))
        .collect()
}

/// The catalog for `--json`.
pub fn catalog_json(active: &ActiveCatalog) -> serde_json::Value {
    serde_json::json!({
        "catalog": &active.source,
        "currency": &active.catalog.currency,
        "name": &active.catalog.name,
        "entries": &active.catalog.entries,
        "warnings": &active.warnings,
    })
}

/// Reads and parses a demand CSV, naming the file in the error.
pub fn read_demand(file: &Path) -> anyhow::Result<DemandSeries> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    DemandSeries::from_csv(&text)
        .with_context(|| format!("cannot use {} as a demand series", file.display()))
}

/// What a plan is, in words.
fn plan_words(plan: &PlanRow) -> String {
    match plan.kind {
        PlanKind::AllSubscribed => format!("all subscribed ({}ly)", plan.term),
        PlanKind::AllHourly => "all on demand, by the hour".to_string(),
        PlanKind::AllOnDemandBestUnit => "all on demand, cheapest units".to_string(),
        PlanKind::BaseHourly => "base + hourly overlay".to_string(),
        PlanKind::BaseDaily => "base + daily overlay".to_string(),
        PlanKind::BaseWeekly => "base + weekly overlay".to_string(),
        PlanKind::BaseReserved => "base + reserved peak window".to_string(),
        PlanKind::BaseSpot => "base + spot overlay".to_string(),
    }
}

fn kind_words(kind: PlanKind) -> &'static str {
    match kind {
        PlanKind::AllSubscribed => "all subscribed",
        PlanKind::AllHourly => "all on demand by the hour",
        PlanKind::AllOnDemandBestUnit => "all on demand in the cheapest units",
        PlanKind::BaseHourly => "base + hourly overlay",
        PlanKind::BaseDaily => "base + daily overlay",
        PlanKind::BaseWeekly => "base + weekly overlay",
        PlanKind::BaseReserved => "base + reserved peak window",
        PlanKind::BaseSpot => "base + spot overlay",
    }
}

/// The plan comparison (the Costs view's, as data) as a table, then the recommendation in
/// words.
pub fn plan_text(active: &ActiveCatalog, view: &PlanComparisonView) -> String {
    let money = Money::from_fen;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} in {}: {} hours from hour {}, peak {} GPUs, {} GPU-hours of work",
        view.model, view.region, view.hours, view.first_hour, view.peak_gpus, view.used_gpu_hours
    );
    let _ = writeln!(out, "{}", active.source_line());
    let terms = view.hours.div_ceil(u64::from(view.term.hours()));
    let _ = writeln!(
        out,
        "One GPU subscribed over the series ({} {}{}): {}",
        terms,
        view.term,
        if terms == 1 { "" } else { "s" },
        money(view.subscription_per_gpu_fen)
    );
    out.push('\n');
    let _ = writeln!(
        out,
        "{:<32} {:>5} {:>16} {:>8}  PAID GPU-HOURS (IDLE)",
        "PLAN", "BASE", "COST", "SAVING"
    );
    for plan in &view.plans {
        let saving = if plan.kind == PlanKind::AllSubscribed {
            "—".to_string()
        } else {
            format!("{:.1}%", plan.saving_pct)
        };
        let _ = writeln!(
            out,
            "{:<32} {:>5} {:>16} {:>8}  {} ({})",
            plan_words(plan),
            plan.base_gpus,
            money(plan.total_fen).to_string(),
            saving,
            paid_words(&plan.paid_by_unit),
            plan.idle_paid_gpu_hours
        );
    }
    for skipped in &view.skipped {
        let _ = writeln!(
            out,
            "{:<32} not evaluated: {}",
            kind_words(skipped.kind),
            skipped.reason
        );
    }
    recommendation_text(&mut out, view);
    out.push_str(&warnings_text(&active.warnings));
    out
}

fn recommendation_text(out: &mut String, view: &PlanComparisonView) {
    let money = Money::from_fen;
    let recommendation = &view.recommendation;
    let plan = |kind| view.plans.iter().find(|plan| plan.kind == kind);
    let all = plan(PlanKind::AllSubscribed).map_or(0, |plan| plan.total_fen);
    let hourly = plan(PlanKind::BaseHourly);
    let base = recommendation.hourly_base_gpus;
    out.push('\n');
    let _ = writeln!(
        out,
        "Base optimum: subscribe {} GPU{} ({}ly) and rent the rest by the hour: {}, {:.1}% less than subscribing all {}.",
        base,
        if base == 1 { "" } else { "s" },
        view.term,
        money(recommendation.hourly_cost_fen),
        hourly.map_or(0.0, |plan| plan.saving_pct),
        view.peak_gpus
    );
    let _ = writeln!(
        out,
        "  A level of demand is worth subscribing when it is reached in at least {} of the {} hours (a subscription {}, {} an hour); demand reaches {} GPUs in {} hours and exceeds it in {}.",
        recommendation.break_even_hours,
        view.hours,
        money(view.subscription_per_gpu_fen),
        money(view.hour_fen),
        base,
        recommendation.hours_at_base,
        recommendation.hours_above_base
    );
    if let Some(cheaper) = &recommendation.cheaper_overlay {
        let _ = writeln!(
            out,
            "  A {} overlay is cheaper than the hourly one: {} subscribed + the rest by the {}: {} ({} less).",
            match cheaper.overlay {
                ebb_cost::OverlayMode::Day => "daily",
                _ => "weekly",
            },
            cheaper.base_gpus,
            cheaper.overlay,
            money(cheaper.cost_fen),
            money(cheaper.saving_vs_hourly_fen)
        );
    }
    let _ = writeln!(
        out,
        "Cheapest plan evaluated: {} (base {}): {}, {} ({:.1}%) less than all subscribed ({}).",
        kind_words(recommendation.kind),
        recommendation.base_gpus,
        money(recommendation.cost_fen),
        money(recommendation.saving_fen),
        recommendation.saving_pct,
        money(all)
    );
}

fn paid_words(paid: &PaidGpuHours) -> String {
    let parts: Vec<String> = [
        ("sub", paid.subscribed),
        ("hour", paid.hour),
        ("day", paid.day),
        ("week", paid.week),
        ("spot", paid.spot),
        ("reserved", paid.reserved),
    ]
    .into_iter()
    .filter(|(_, hours)| *hours > 0)
    .map(|(mode, hours)| format!("{mode} {hours}"))
    .collect();
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(", ")
    }
}

/// `ebb cost plan --json`: the Costs view's comparison (the IPC DTO, flattened: its
/// fields are the document's), and where its prices and demand came from.
#[derive(serde::Serialize)]
pub struct PlanJson<'a> {
    catalog: &'a ebb_core::catalog_store::CatalogSource,
    prices: &'a PriceEntry,
    demand: DemandJson<'a>,
    warnings: &'a [Problem],
    #[serde(flatten)]
    view: &'a PlanComparisonView,
}

#[derive(serde::Serialize)]
struct DemandJson<'a> {
    file: &'a Path,
    resolution: ebb_cost::Resolution,
}

pub fn plan_json<'a>(
    entry: &'a PriceEntry,
    active: &'a ActiveCatalog,
    demand_file: &'a Path,
    demand: &DemandSeries,
    view: &'a PlanComparisonView,
) -> PlanJson<'a> {
    PlanJson {
        catalog: &active.source,
        prices: entry,
        demand: DemandJson {
            file: demand_file,
            resolution: demand.resolution(),
        },
        warnings: &active.warnings,
        view,
    }
}

/// The slider preview as a small table.
pub fn preview_text(entry: &PriceEntry, active: &ActiveCatalog, preview: &Preview) -> String {
    let plan = &preview.plan;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} in {}: {} subscribed ({}ly), the rest by the {}",
        entry.model, entry.region, plan.base_gpus, plan.term, plan.overlay
    );
    let _ = writeln!(out, "{}", active.source_line());
    let _ = writeln!(
        out,
        "{:<8} {:>6} {:>14} {:>16} {:>18}",
        "", "GPUS", "PER HOUR", "PER DAY", "PER MONTH"
    );
    let row = |out: &mut String, name: &str, rate: &RunRate| {
        let _ = writeln!(
            out,
            "{:<8} {:>6} {:>14} {:>16} {:>18}",
            name,
            rate.gpus,
            rate.total.per_hour.to_string(),
            rate.total.per_day.to_string(),
            rate.total.per_month.to_string()
        );
    };
    row(&mut out, "before", &preview.before);
    row(&mut out, "after", &preview.after);
    let signed = |money: Money| {
        if money.fen() > 0 {
            format!("+{money}")
        } else {
            money.to_string()
        }
    };
    let gpu_change = i64::from(preview.after.gpus) - i64::from(preview.before.gpus);
    let _ = writeln!(
        out,
        "{:<8} {:>6} {:>14} {:>16} {:>18}",
        "change",
        if gpu_change > 0 {
            format!("+{gpu_change}")
        } else {
            gpu_change.to_string()
        },
        signed(preview.delta.per_hour),
        signed(preview.delta.per_day),
        signed(preview.delta.per_month)
    );
    let after = &preview.after;
    let _ = writeln!(
        out,
        "after:   base {} GPU{} {} a month; overlay {} GPU{} {} a month",
        plan.base_gpus,
        if plan.base_gpus == 1 { "" } else { "s" },
        after.base.per_month,
        after.overlay_gpus,
        if after.overlay_gpus == 1 { "" } else { "s" },
        after.overlay.per_month
    );
    if after.gpus < plan.base_gpus {
        let _ = writeln!(
            out,
            "note: {} GPUs is below the base of {}; the base is paid in full",
            after.gpus, plan.base_gpus
        );
    }
    out.push_str(&warnings_text(&active.warnings));
    out
}

/// The preview for `--json`.
pub fn preview_json(
    entry: &PriceEntry,
    active: &ActiveCatalog,
    preview: &Preview,
) -> serde_json::Value {
    serde_json::json!({
        "currency": &active.catalog.currency,
        "catalog": &active.source,
        "model": &entry.model,
        "region": &entry.region,
        "plan": &preview.plan,
        "before": &preview.before,
        "after": &preview.after,
        "delta": &preview.delta,
        "hours_per_day": 24,
        "hours_per_month": ebb_cost::HOURS_PER_MONTH,
    })
}
