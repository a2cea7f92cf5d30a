//! `ebb pool ...` and `ebb activity`: pools on the command line. `scale` enforces itself
//! when no other process does (the app or `ebb daemon`), so the pool really moves.

use clap::Subcommand;
use ebb_core::console::{Console, ConsoleOptions, ScaleChange, TokenStore};
use ebb_core::enforcer::EnforcerConfig;
use ebb_wire::plan::{OverlayMode, Term};
use ebb_wire::pools::{
    ActivityEntry, Actor, HostMove, Outcome, PlacementPolicy, PoolInput, PoolLeaseState,
    PoolLeaseView, PoolPhase, PoolView, ScalePreview, SpendView,
};
use ebb_wire::reasons::{ChangeReason, notes_in_words};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

#[derive(Debug, Clone, Subcommand)]
pub enum PoolCommand {
    /// Create a pool (it starts at --min).
    Create {
        /// The pool's name, e.g. train.
        name: String,
        /// GPU model as the price catalog names it, e.g. A100.
        #[arg(long)]
        model: String,
        /// A region the pool may rent in; repeat for more. None: every region where a
        /// host has the model.
        #[arg(long = "region", value_name = "REGION")]
        regions: Vec<String>,
        /// The fewest GPUs the pool holds; it starts here.
        #[arg(long, value_name = "GPUS")]
        min: u32,
        /// The most GPUs the pool may hold.
        #[arg(long, value_name = "GPUS")]
        max: u32,
        /// GPUs on subscription (paid whether held or not).
        #[arg(long, value_name = "GPUS", default_value_t = 0)]
        base: u32,
        /// The base's term: month or year.
        #[arg(long, default_value = "month")]
        term: Term,
        /// How GPUs above the base are paid: hour, day, week or spot.
        #[arg(long, default_value = "hour")]
        overlay: OverlayMode,
        /// pack (fill hosts the pool uses) or spread (even over hosts).
        #[arg(long, default_value = "pack", value_parser = parse_placement)]
        placement: PlacementPolicy,
        /// The pool accepts interruptible (spot) GPUs.
        #[arg(long)]
        interruptible: bool,
        /// On scale-in, keep each GPU until its paid unit runs out.
        #[arg(long)]
        release_at_unit_end: bool,
        /// GPUs above the base always on demand, whatever the spot share.
        #[arg(long, value_name = "GPUS", default_value_t = 0)]
        on_demand_floor: u32,
        /// Of the GPUs above the base and the floor, the percentage on spot (0 to 100;
        /// needs --interruptible).
        #[arg(long, value_name = "PCT", default_value_t = 0)]
        spot_pct: u32,
        /// The most a spot GPU-hour may cost, in yuan (e.g. 9.50); any price when left out.
        #[arg(long, value_name = "YUAN", value_parser = parse_yuan)]
        spot_max_price: Option<i64>,
    },
    /// Every pool: desired, actual, phase, spend.
    List,
    /// One pool whole: hosts, spend, and each lease (id, host, region, GPUs, state, granted
    /// at, utilization).
    Show {
        /// The pool's name.
        name: String,
    },
    /// Set the pool's GPU count; prints the cost change and where GPUs go first.
    Scale {
        /// The pool's name.
        name: String,
        /// The GPU count to hold, between the pool's min and max.
        count: u32,
        /// Wait until the pool holds exactly COUNT (always, when this command enforces).
        #[arg(long)]
        wait: bool,
        /// Go ahead even when the change is above the confirmation threshold.
        #[arg(long)]
        yes: bool,
        /// Release at once, even GPUs the pool keeps until their paid unit ends.
        #[arg(long)]
        force: bool,
        /// On a scale-in, give back these leases first (ids as `ebb pool show` lists them,
        /// comma-separated); the placement chooses the rest.
        #[arg(long, value_name = "LEASE_IDS", value_delimiter = ',')]
        release: Vec<String>,
        /// Give up waiting after this many seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 120)]
        timeout: u64,
        /// Go past the budget cap of the pool's rules on purpose (logged as such).
        #[arg(long)]
        over_budget: bool,
    },
    /// Delete a pool; the enforcer releases every GPU it held.
    Delete {
        /// The pool's name.
        name: String,
    },
}

/// Yuan with up to two decimals into fen, e.g. `9.5` → 950.
pub(crate) fn parse_yuan(text: &str) -> Result<i64, String> {
    let text = text.trim().trim_start_matches('¥');
    let (whole, cents) = text.split_once('.').unwrap_or((text, ""));
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !(cents.is_empty() || (digits(cents) && cents.len() <= 2)) {
        return Err(format!(
            "`{text}` is not an amount in yuan with at most two decimals, e.g. 9.50"
        ));
    }
    let whole: i64 = whole
        .parse()
        .map_err(|_| format!("`{text}` is too large"))?;
    let cents: i64 = format!("{cents:0<2}").parse().unwrap_or(0);
    whole
        .checked_mul(100)
        .and_then(|fen| fen.checked_add(cents))
        .ok_or_else(|| format!("`{text}` is too large"))
}

fn parse_placement(text: &str) -> Result<PlacementPolicy, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "pack" => Ok(PlacementPolicy::Pack),
        "spread" => Ok(PlacementPolicy::Spread),
        other => Err(format!(
            "unknown placement `{other}`: expected pack or spread"
        )),
    }
}

/// How the enforcer runs in this process, from the environment (tests and operators).
pub fn enforcer_config() -> anyhow::Result<EnforcerConfig> {
    let mut config = EnforcerConfig::default();
    if let Ok(text) = std::env::var("EBB_FAILOVER_GRACE_S") {
        let seconds: f64 = text.trim().parse().map_err(|_| {
            anyhow::anyhow!("EBB_FAILOVER_GRACE_S: `{text}` is not a number of seconds")
        })?;
        if !(0.0..=86_400.0).contains(&seconds) {
            anyhow::bail!("EBB_FAILOVER_GRACE_S: {seconds} is not between 0 and 86400");
        }
        config.grace = Duration::from_secs_f64(seconds);
    }
    if let Ok(text) = std::env::var("EBB_RECONCILE_INTERVAL_MS") {
        let ms: u64 = text.trim().parse().map_err(|_| {
            anyhow::anyhow!("EBB_RECONCILE_INTERVAL_MS: `{text}` is not a number of milliseconds")
        })?;
        config.interval = Duration::from_millis(ms.clamp(10, 60_000));
    }
    Ok(config)
}

pub(crate) async fn open(
    data_dir: &Path,
    store: TokenStore,
    enforce: bool,
) -> anyhow::Result<Console> {
    Ok(Console::open(ConsoleOptions {
        token_store: store,
        history_points: 1,
        viewer_only: !enforce,
        enforcer: enforcer_config()?,
        ..ConsoleOptions::new(data_dir)
    })
    .await?)
}

pub async fn run(
    command: PoolCommand,
    data_dir: &Path,
    store: TokenStore,
    json: bool,
) -> anyhow::Result<()> {
    let enforce = matches!(command, PoolCommand::Scale { .. });
    let console = open(data_dir, store, enforce).await?;
    let result = run_with(&console, command, json).await;
    console.shutdown().await;
    result
}

#[allow(
    clippy::too_many_lines,
    reason = "one match arm per `ebb pool` subcommand"
)]
async fn run_with(console: &Console, command: PoolCommand, json: bool) -> anyhow::Result<()> {
    match command {
        PoolCommand::Create {
            name,
            model,
            regions,
            min,
            max,
            base,
            term,
            overlay,
            placement,
            interruptible,
            release_at_unit_end,
            on_demand_floor,
            spot_pct,
            spot_max_price,
        } => {
            let input = PoolInput {
                name,
                model,
                regions,
                min,
                max,
                base_gpus: base,
                term,
                overlay,
                placement,
                interruptible,
                release_at_unit_end,
                spot: ebb_wire::pools::SpotMix {
                    on_demand_floor,
                    spot_pct,
                    max_price_fen: spot_max_price,
                },
            };
            let view = console.create_pool(&input).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&view)?);
            } else {
                println!(
                    "created pool {} ({} in {}, {} to {} GPUs, at {})",
                    view.name,
                    view.model,
                    view.regions.join(", "),
                    view.min,
                    view.max,
                    view.desired
                );
            }
        }
        PoolCommand::List => {
            let views = console.list_pools().await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&views)?);
            } else {
                print!("{}", pool_table(&views));
            }
        }
        PoolCommand::Show { name } => {
            let view = console.show_pool(&name).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&view)?);
            } else {
                print!("{}", pool_detail(&view));
            }
        }
        PoolCommand::Scale {
            name,
            count,
            wait,
            yes,
            force,
            release,
            timeout,
            over_budget,
        } => {
            let release: Vec<String> = release
                .iter()
                .map(|id| id.trim().to_string())
                .filter(|id| !id.is_empty())
                .collect();
            let preview = console
                .preview_scale_choosing(&name, count, &release)
                .await?;
            if preview.needs_confirmation && !yes {
                anyhow::bail!(
                    "{}: this change {}; pass --yes to go ahead",
                    preview_words(&preview),
                    preview
                        .confirmation_reason
                        .as_ref()
                        .map_or_else(|| "is large".to_string(), ToString::to_string)
                );
            }
            let since = ebb_core::clock::now_ms();
            // From the count the preview was made on: a change that came in since is
            // refused rather than overwritten.
            let change = ScaleChange {
                from: Some(preview.from),
                release,
                over_budget,
                ..ScaleChange::new(count, Actor::Operator, ChangeReason::Cli)
            };
            let entry = console.scale(&name, change).await?;
            // A team's quota may have clamped it: what was set, and why.
            if entry.to != count && !json {
                println!("{}", entry.reason);
            }
            let count = entry.to;
            if force {
                console.force_release(&name).await?;
            }
            if !json {
                println!("{}", preview_words(&preview));
            }
            let enforcing = console.enforcing();
            if !(wait || enforcing) {
                if json {
                    println!("{}", serde_json::to_string_pretty(&entry)?);
                } else {
                    println!(
                        "desired set to {count}; the Ebb process enforcing this data directory carries it out"
                    );
                }
                return Ok(());
            }
            if enforcing && !json {
                println!(
                    "no other Ebb process enforces this data directory: enforcing here until done"
                );
            }
            let view = console
                .wait_converged(&name, since, Duration::from_secs(timeout))
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&view)?);
            } else {
                print!("{}", pool_detail(&view));
            }
            if view.phase != PoolPhase::Converged {
                anyhow::bail!(
                    "pool {name} holds {} of {count} after {timeout} s: {}",
                    view.actual,
                    notes_in_words(&view.notes).unwrap_or_else(|| "still converging".into())
                );
            }
        }
        PoolCommand::Delete { name } => {
            console.delete_pool(&name).await?;
            if json {
                println!("{}", serde_json::json!({ "deleted": name }));
            } else {
                println!("deleted pool {name}; its GPUs are released by the enforcer");
            }
        }
    }
    Ok(())
}

/// `ebb activity [--pool NAME]`.
pub async fn activity(
    data_dir: &Path,
    store: TokenStore,
    pool: Option<&str>,
    limit: u32,
    rules: bool,
    json: bool,
) -> anyhow::Result<()> {
    let console = open(data_dir, store, false).await?;
    let result = console.activity(pool, limit).await;
    console.shutdown().await;
    let mut entries = result?;
    if rules {
        entries.retain(|entry| {
            entry.actor == Actor::Rule
                || matches!(
                    entry.reason,
                    ChangeReason::RulesSaved { .. } | ChangeReason::RulesMode { .. }
                )
        });
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&entries)?);
    } else {
        print!("{}", activity_table(&entries));
    }
    Ok(())
}

fn moves(moves: &[HostMove]) -> String {
    moves
        .iter()
        .map(|m| format!("{} on {}", m.count, m.host))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn money(fen: i64) -> String {
    ebb_cost::Money::from_fen(fen).to_string()
}

/// "rent 12: 8 on host-a, 4 on host-c; +¥150.00/h (¥1,200.00/h after)".
pub fn preview_words(preview: &ScalePreview) -> String {
    let mut out = format!("{}: {} → {} GPUs", preview.pool, preview.from, preview.to);
    let rent: u32 = preview.rent.iter().map(|m| m.count).sum();
    let release: u32 = preview.release.iter().map(|m| m.count).sum();
    if rent > 0 {
        let _ = write!(out, "; rent {rent}: {}", moves(&preview.rent));
    }
    if release > 0 {
        let _ = write!(out, "; release {release} from {}", moves(&preview.release));
    }
    if preview.held_to_unit_end > 0 {
        let _ = write!(
            out,
            "; {} kept until their paid unit ends",
            preview.held_to_unit_end
        );
    }
    if preview.short > 0 {
        let _ = write!(out, "; {} more than are free now", preview.short);
    }
    match &preview.cost_problem {
        Some(problem) => {
            let _ = write!(out, "; cost unknown: {problem}");
        }
        None => {
            let sign = if preview.delta_per_hour_fen >= 0 {
                "+"
            } else {
                "−"
            };
            let _ = write!(
                out,
                "; {sign}{}/h ({}/h, {}/month after)",
                money(preview.delta_per_hour_fen.abs()),
                money(preview.per_hour_after_fen),
                money(preview.per_month_after_fen)
            );
        }
    }
    out
}

fn phase_word(phase: PoolPhase) -> &'static str {
    match phase {
        PoolPhase::Converged => "converged",
        PoolPhase::ScalingOut => "scaling out",
        PoolPhase::ScalingIn => "scaling in",
        PoolPhase::Blocked => "blocked",
        PoolPhase::NotEnforced => "not enforced",
    }
}

fn pool_table(views: &[PoolView]) -> String {
    if views.is_empty() {
        return "no pools yet: ebb pool create NAME --model M --region R --min A --max B\n".into();
    }
    let mut out = format!(
        "{:<16} {:<10} {:<22} {:>9} {:>7} {:>6}  {:<12} {:>14}\n",
        "POOL", "MODEL", "REGIONS", "MIN-MAX", "DESIRED", "ACTUAL", "PHASE", "MONTH-TO-DATE"
    );
    for view in views {
        let _ = writeln!(
            out,
            "{:<16} {:<10} {:<22} {:>9} {:>7} {:>6}  {:<12} {:>14}",
            view.name,
            view.model,
            view.regions.join(","),
            format!("{}-{}", view.min, view.max),
            view.desired,
            view.actual,
            phase_word(view.phase),
            view.spend
                .as_ref()
                .map_or_else(|| "—".into(), |s| money(s.month_to_date_fen))
        );
    }
    out
}

/// Spot's part of a month's spend: "of which spot ¥120.00 (saved ¥80.00 against on
/// demand)", or, when spot cost more than on demand would have (the saving is net), "(¥15.00
/// more than on demand)"; `None` when the pool had no spot.
fn spot_spend_words(spend: &SpendView) -> Option<String> {
    if spend.spot_fen == 0 && spend.spot_saved_fen == 0 {
        return None;
    }
    let against = if spend.spot_saved_fen < 0 {
        format!(
            "{} more than on demand",
            money(spend.spot_saved_fen.saturating_neg())
        )
    } else {
        format!("saved {} against on demand", money(spend.spot_saved_fen))
    };
    Some(format!(
        "of which spot {} ({against})",
        money(spend.spot_fen)
    ))
}

fn pool_detail(view: &PoolView) -> String {
    let mut out = format!(
        "pool {} — {} in {}, {} to {} GPUs ({} base on {}, {} overlay, {:?} placement)\n",
        view.name,
        view.model,
        view.regions.join(", "),
        view.min,
        view.max,
        view.base_gpus,
        view.term,
        view.overlay,
        view.placement
    );
    let _ = writeln!(
        out,
        "desired {}, actual {}, pending {}, releasing {}, lost {} — {}",
        view.desired,
        view.actual,
        view.pending,
        view.releasing,
        view.lost,
        phase_word(view.phase)
    );
    if view.interruptible || view.spot_held > 0 {
        let _ = writeln!(
            out,
            "mix: on-demand floor {}, spot {}% of the rest{}; desired {} = {} base + {} on demand + {} spot; {} held on spot",
            view.spot.on_demand_floor,
            view.spot.spot_pct,
            view.spot
                .max_price_fen
                .map_or_else(String::new, |max| format!(" at most {}/h", money(max))),
            view.desired,
            view.split.base,
            view.split.on_demand,
            view.split.spot,
            view.spot_held
        );
    }
    if let Some(notes) = notes_in_words(&view.notes) {
        let _ = writeln!(out, "  {notes}");
    }
    if let Some(spend) = &view.spend {
        let _ = writeln!(
            out,
            "spend {}: {} to date, {} projected, {}/h now, {:.1} GPU-hours",
            spend.month,
            money(spend.month_to_date_fen),
            money(spend.projected_month_fen),
            money(spend.run_rate_per_hour_fen),
            spend.gpu_hours
        );
        if let Some(spot) = spot_spend_words(spend) {
            let _ = writeln!(out, "  {spot}");
        }
    } else if let Some(problem) = &view.spend_problem {
        let _ = writeln!(out, "spend unknown: {problem}");
    }
    for host in &view.hosts {
        let _ = writeln!(
            out,
            "  {:<16} {:<10} leased {:>3}  pending {:>3}  releasing {:>3}  failed {:>3}{}",
            host.host,
            host.region,
            host.leased,
            host.pending,
            host.releasing,
            host.failed,
            host.last_error
                .as_ref()
                .map_or(String::new(), |e| format!("  ({e})"))
        );
    }
    out.push_str(&lease_table(&view.leases));
    out
}

fn lease_state_word(state: PoolLeaseState) -> &'static str {
    match state {
        PoolLeaseState::Active => "active",
        PoolLeaseState::Releasing => "releasing",
        PoolLeaseState::Unreachable => "unreachable",
        PoolLeaseState::Lost => "lost",
        PoolLeaseState::Reclaimed => "reclaimed",
    }
}

/// Each lease the pool holds, one a line, columns as wide as their widest cell:
/// lease id, host, region, GPU indexes, state, granted at (local time, or UTC with `--utc`),
/// utilization (`—` unknown).
fn lease_table(leases: &[PoolLeaseView]) -> String {
    if leases.is_empty() {
        return "no leases\n".into();
    }
    let header = [
        "LEASE",
        "HOST",
        "REGION",
        "GPUS",
        "STATE",
        "GRANTED AT",
        "SAVED AT",
        "UTIL",
    ];
    let rows: Vec<[String; 8]> = leases
        .iter()
        .map(|lease| {
            let gpus = if lease.gpu_indexes.is_empty() {
                "—".to_string()
            } else {
                lease
                    .gpu_indexes
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            };
            [
                lease.lease_id.clone(),
                lease.host.clone(),
                lease.region.clone(),
                gpus,
                if lease.spot {
                    format!("{} (spot)", lease_state_word(lease.state))
                } else {
                    lease_state_word(lease.state).to_string()
                },
                crate::when::time(lease.granted_at_ms),
                // When its workload last saved its state: safe to release.
                lease
                    .checkpoint_at_ms
                    .map_or_else(|| "—".to_string(), crate::when::time),
                lease
                    .util_pct
                    .map_or_else(|| "—".to_string(), |pct| format!("{pct:.0}%")),
            ]
        })
        .collect();
    let mut widths = header.map(|cell| cell.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[String; 8]| {
        let mut text = String::from("  ");
        for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
            let pad = " ".repeat(width - cell.chars().count());
            if i == cells.len() - 1 {
                // Utilization is a number: right-aligned, nothing trailing.
                text.push_str(&pad);
                text.push_str(cell);
            } else {
                text.push_str(cell);
                text.push_str(&pad);
                text.push_str("  ");
            }
        }
        text.push('\n');
        text
    };
    let mut out = format!("leases ({}):\n", leases.len());
    out.push_str(&line(&header.map(String::from)));
    for row in &rows {
        out.push_str(&line(row));
    }
    out
}

fn activity_table(entries: &[ActivityEntry]) -> String {
    if entries.is_empty() {
        return "no activity yet\n".into();
    }
    let mut out = String::new();
    for entry in entries {
        let actor = match entry.actor {
            Actor::Operator => "operator",
            Actor::Failover => "failover",
            Actor::Rule => "rule",
            Actor::Enforcer => "enforcer",
            Actor::Demo => "demo",
            Actor::Slurm => "slurm",
        };
        let outcome = match entry.outcome {
            Outcome::InProgress => "in progress",
            Outcome::Done => "done",
            Outcome::Partial => "partial",
            Outcome::Superseded => "superseded",
        };
        let delta = entry.delta_per_hour_fen.map_or(String::new(), |d| {
            format!(" ({}{}/h)", if d >= 0 { "+" } else { "−" }, money(d.abs()))
        });
        let _ = writeln!(
            out,
            "{} {:<14} {:<9} {:>3} → {:<3} {:<11} {}{delta}",
            crate::when::time(entry.at_ms),
            entry.pool,
            actor,
            entry.from,
            entry.to,
            outcome,
            entry.reason
        );
        if !entry.who.is_empty() {
            let _ = writeln!(out, "    by {} ({})", entry.who, entry.role);
        }
        for result in &entry.results {
            let _ = writeln!(
                out,
                "    {:<16} granted {} released {} failed {}{}",
                result.host,
                result.granted,
                result.released,
                result.failed,
                result
                    .error
                    .as_ref()
                    .map_or(String::new(), |e| format!(" ({e})"))
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(id: &str, host: &str, gpus: &[u32], util: Option<f32>) -> PoolLeaseView {
        PoolLeaseView {
            lease_id: id.into(),
            host: host.into(),
            region: "cn-north".into(),
            gpu_uuids: gpus.iter().map(|i| format!("GPU-{i}")).collect(),
            gpu_indexes: gpus.to_vec(),
            fencing_token: 1,
            granted_at_ms: 1_796_280_012_000,
            state: PoolLeaseState::Active,
            util_pct: util,
            checkpoint_at_ms: None,
            release_grace_s: None,
            reclaim_deadline_ms: None,
            spot: false,
            starting: false,
        }
    }

    #[test]
    fn each_lease_is_a_line_with_its_gpus_state_grant_and_utilization() {
        let mut releasing = lease("l-2", "gpu-host-long", &[2, 3], None);
        releasing.state = PoolLeaseState::Releasing;
        let table = lease_table(&[lease("l-1", "gpu-0", &[0], Some(57.4)), releasing]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], "leases (2):");
        assert!(lines[1].trim_start().starts_with("LEASE"), "{table}");
        assert!(
            lines[2].contains("l-1") && lines[2].contains("gpu-0"),
            "{table}"
        );
        assert!(
            lines[2].contains("active") && lines[2].ends_with("57%"),
            "{table}"
        );
        assert!(lines[2].contains(&crate::when::time(1_796_280_012_000)));
        assert!(
            lines[3].contains(" 2,3 ") && lines[3].contains("releasing"),
            "{table}"
        );
        assert!(
            lines[3].ends_with('—'),
            "unknown utilization is a dash: {table}"
        );
        // Columns line up: every row's state starts where the header's does.
        let at = lines[1].find("STATE").unwrap();
        assert_eq!(lines[2].find("active"), Some(at), "{table}");
        assert_eq!(lines[3].find("releasing"), Some(at), "{table}");
        assert_eq!(lease_table(&[]), "no leases\n");
    }

    #[test]
    fn spot_that_cost_more_than_on_demand_reads_as_a_loss() {
        let spend = |spot_fen, spot_saved_fen| SpendView {
            month: "2026-12".into(),
            month_to_date_fen: 50_000,
            projected_month_fen: 90_000,
            run_rate_per_hour_fen: 3_200,
            gpu_hours: 12.0,
            base_from_ms: 0,
            spot_fen,
            spot_saved_fen,
        };
        assert_eq!(
            spot_spend_words(&spend(12_000, 8_000)).as_deref(),
            Some("of which spot ¥120.00 (saved ¥80.00 against on demand)")
        );
        assert_eq!(
            spot_spend_words(&spend(12_000, -1_500)).as_deref(),
            Some("of which spot ¥120.00 (¥15.00 more than on demand)")
        );
        assert_eq!(spot_spend_words(&spend(0, 0)), None);
    }
}
