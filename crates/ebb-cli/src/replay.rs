//! `ebb replay`: a rule file against a trace, beside the baselines asked for, priced by the
//! catalog; with a spot mix (`--spot-pct`), the rules with it beside the same rules on
//! demand and the oracle. The figures come from `ebb_rules::replay`; this is reading files
//! and wording.

use anyhow::Context;
use ebb_cost::{Money, OverlayMode, Term};
use ebb_reconcile::spot::BreakerPolicy;
use ebb_rules::replay::baselines::{BASELINES, baseline, node_oracle, pricing};
use ebb_rules::replay::spot::{DEFAULT_NOTICE_MINUTES, SpotModel, SpotReplay};
use ebb_rules::replay::trace::Trace;
use ebb_rules::replay::{ReplayOptions, replay, replay_spot, series_csv};
use ebb_rules::rules_policy::RulesPolicy;
use ebb_wire::pools::SpotMix;
use ebb_wire::replay::{ReplayReport, ReplayResult, SpotComparison, SpotSettings};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::costs;

/// `ebb replay …`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplayArgs {
    /// CSV `minute,demand[,metric…]`: the busy work in GPUs each minute from 0, and any
    /// metrics the rules name (`mem_pct`, `users`, `latency_ms`…).
    #[arg(long, value_name = "FILE")]
    trace: PathBuf,
    /// The pool's rule file (TOML).
    #[arg(long, value_name = "FILE")]
    rules: PathBuf,
    /// A catalog file to use instead of the active one.
    #[arg(long, value_name = "FILE")]
    catalog: Option<PathBuf>,
    /// GPU model, as the catalog names it, e.g. A100.
    #[arg(long)]
    model: String,
    /// Region, e.g. cn-north.
    #[arg(long)]
    region: String,
    /// Minutes from ordering a GPU to its being ready.
    #[arg(long, value_name = "MIN", default_value_t = 5)]
    warmup: u32,
    /// A Slurm node's GPUs, for a pool bound to a partition: the rules decide in whole
    /// nodes and the oracle rents whole nodes, as `ebb rules suggest --gpus-per-node`
    /// replays them.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    gpus_per_node: u32,
    /// Also replay a baseline: static-peak, seed-80-30, hpa or oracle (repeatable).
    #[arg(long = "baseline", value_name = "NAME")]
    baselines: Vec<String>,
    /// Write the rules' replay minute by minute: minute, demand, ready, held, utilization,
    /// decision (the change of the held count).
    #[arg(long, value_name = "OUT.csv")]
    series: Option<PathBuf>,
    /// How GPUs above the subscribed base are paid: hour, day, week or spot.
    #[arg(long, default_value = "hour")]
    overlay: OverlayMode,
    /// The base's subscription term: month or year.
    #[arg(long, default_value = "month")]
    term: Term,
    /// Put this percentage of the GPUs above the on-demand floor on spot (0 to 100), and
    /// compare the rules with it to the same rules on demand and to the oracle. Spot is
    /// priced by the trace's `spot_price` column, else the catalog's spot price;
    /// interruptions come from its `interrupted` column, else
    /// --interruptions-per-gpu-hour.
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u32).range(0..=100))]
    spot_pct: Option<u32>,
    /// GPUs always on demand, whatever the spot share.
    #[arg(long, value_name = "N", default_value_t = 0, requires = "spot_pct")]
    on_demand_floor: u32,
    /// The most a spot GPU-hour may cost, in yuan (e.g. 4.50): above it, new GPUs go on
    /// demand.
    #[arg(long, value_name = "YUAN", value_parser = crate::pools::parse_yuan, requires = "spot_pct")]
    spot_max_price: Option<i64>,
    /// Minutes from an interruption's notice to the GPU being gone [default: the
    /// catalog's spot notice, else 2].
    #[arg(long, value_name = "N", requires = "spot_pct")]
    notice_minutes: Option<u32>,
    /// When the trace has no `interrupted` column: spot GPUs taken back at this rate per
    /// spot GPU-hour (0.01 to 0.10 is a usual market), drawn from --seed.
    #[arg(long, value_name = "RATE", value_parser = parse_rate, requires = "spot_pct")]
    interruptions_per_gpu_hour: Option<f64>,
    /// The seed of the interruptions drawn at --interruptions-per-gpu-hour.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        requires = "interruptions_per_gpu_hour"
    )]
    seed: u64,
}

/// A rate of interruptions per spot GPU-hour: a number from 0 to 1.
pub(crate) fn parse_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(rate) if rate.is_finite() && (0.0..=1.0).contains(&rate) => Ok(rate),
        _ => Err(format!(
            "`{text}` is not a rate from 0 to 1 interruptions per spot GPU-hour, e.g. 0.05"
        )),
    }
}

/// Runs the replay and prints it.
pub fn run(args: &ReplayArgs, data_dir: &Path, json: bool) -> anyhow::Result<()> {
    for name in &args.baselines {
        anyhow::ensure!(
            BASELINES.contains(&name.as_str()),
            "no baseline `{name}`; the baselines are {}",
            BASELINES.join(", ")
        );
    }
    let active = costs::ActiveCatalog::load(data_dir, args.catalog.as_deref())?;
    let entry = active.catalog.find(&args.model, &args.region)?;
    let text = std::fs::read_to_string(&args.trace)
        .with_context(|| format!("cannot read {}", args.trace.display()))?;
    let trace = Trace::from_csv(&text)
        .with_context(|| format!("cannot use {} as a replay trace", args.trace.display()))?;
    let text = std::fs::read_to_string(&args.rules)
        .with_context(|| format!("cannot read {}", args.rules.display()))?;
    let rules = ebb_rules::model::parse(&text)
        .with_context(|| format!("cannot use {} as a rule file", args.rules.display()))?;
    // Said before the figures: a rule whose metric the trace lacks never acts in it.
    for unread in trace.unread_metrics(rules.spec()) {
        eprintln!(
            "warning: {unread} (add the column to {})",
            args.trace.display()
        );
    }
    // A queue recorded elsewhere, with the partition's idle GPUs: its stuck jobs are not
    // demand, and the figures below are without them.
    if trace.stuck_gpus().is_some() {
        eprintln!("{}", ebb_rules::replay::stuck::sentence(&trace));
    }
    let options = ReplayOptions {
        warmup_minutes: args.warmup,
        overlay: args.overlay,
        term: args.term,
        ..ReplayOptions::default()
    };

    let mut policy = RulesPolicy::new("rules", rules.clone(), Some(pricing(entry, &options)))
        .with_node_gpus(args.gpus_per_node);
    let rules_replay = replay(&trace, &mut policy, entry, &options)?;
    if let Some(out) = &args.series {
        std::fs::write(out, series_csv(&trace, &rules_replay.series))
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    let mut baselines = Vec::new();
    for name in &args.baselines {
        let mut policy = if name == "oracle" {
            node_oracle(&trace, &options, args.gpus_per_node)
        } else {
            baseline(name, &trace, &options, entry)?
        };
        baselines.push(replay(&trace, policy.as_mut(), entry, &options)?.result);
    }
    let spot = match args.spot_pct {
        Some(spot_pct) => Some(spot_comparison(
            args,
            spot_pct,
            &trace,
            &rules,
            entry,
            &options,
            &rules_replay.result,
        )?),
        None => None,
    };
    let report = ReplayReport {
        rules: rules_replay.result,
        baselines,
        spot,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{}", active.source_line());
        print!("{}", table(args, &trace, &options, &report));
        if let Some(spot) = &report.spot {
            print!("{}", spot_table(spot));
        }
        print!("{}", costs::warnings_text(&active.warnings));
    }
    Ok(())
}

/// The rules with the spot mix beside `on_demand` (the same rules, every GPU on demand) and
/// the oracle.
fn spot_comparison(
    args: &ReplayArgs,
    spot_pct: u32,
    trace: &Trace,
    rules: &ebb_rules::model::RuleSet,
    entry: &ebb_cost::PriceEntry,
    options: &ReplayOptions,
    on_demand: &ReplayResult,
) -> anyhow::Result<SpotComparison> {
    anyhow::ensure!(
        options.overlay != OverlayMode::Spot,
        "--spot-pct with --overlay spot: the mix puts its share on spot; --overlay says how the on-demand rest is paid (hour, day or week)"
    );
    anyhow::ensure!(
        trace.spot_price_fen().is_some() || entry.spot_hour.is_some(),
        "--spot-pct: {} in {} has no spot price in the catalog and the trace no `spot_price` column, so nothing could go on spot",
        args.model,
        args.region
    );
    let notice_minutes = args
        .notice_minutes
        .or(entry.spot_notice_minutes)
        .unwrap_or(DEFAULT_NOTICE_MINUTES);
    let model = args.interruptions_per_gpu_hour.map(|rate| SpotModel {
        rate_per_gpu_hour: rate,
        seed: args.seed,
    });
    let spot = SpotReplay {
        mix: SpotMix {
            on_demand_floor: args.on_demand_floor,
            spot_pct,
            max_price_fen: args.spot_max_price,
        },
        base: 0,
        notice_minutes,
        breaker: BreakerPolicy::default(),
        model,
        ..SpotReplay::default()
    };
    let mut policy = RulesPolicy::new("rules", rules.clone(), Some(pricing(entry, options)));
    let mut mix = replay_spot(trace, &mut policy, entry, options, &spot)?.result;
    mix.policy = "rules+spot".to_string();
    let mut oracle = baseline("oracle", trace, options, entry)?;
    let oracle = replay(trace, oracle.as_mut(), entry, options)?.result;
    let (interruptions_from, rate) = match (trace.interrupted(), model) {
        (Some(_), _) => ("trace", None),
        (None, Some(model)) => ("model", Some(model.rate_per_gpu_hour)),
        (None, None) => ("none", None),
    };
    Ok(SpotComparison {
        settings: SpotSettings {
            on_demand_floor: args.on_demand_floor,
            spot_pct,
            max_price_fen: args.spot_max_price,
            notice_minutes,
            interruptions_from: interruptions_from.to_string(),
            interruptions_per_gpu_hour: rate,
        },
        mix,
        on_demand: on_demand.clone(),
        oracle,
    })
}

/// The spot comparison as a table: the mix, on demand, the oracle.
fn spot_table(comparison: &SpotComparison) -> String {
    let settings = &comparison.settings;
    let mut out = String::new();
    let interruptions = match settings.interruptions_from.as_str() {
        "trace" => "taken back as the trace's `interrupted` column says".to_string(),
        "model" => format!(
            "taken back at {} per spot GPU-hour (seeded)",
            settings.interruptions_per_gpu_hour.unwrap_or(0.0)
        ),
        _ => "none taken back".to_string(),
    };
    let max_price = settings.max_price_fen.map_or(String::new(), |fen| {
        format!(", at most {} an hour", Money::from_fen(fen))
    });
    let breaker = BreakerPolicy::default();
    let _ = writeln!(
        out,
        "\nSpot: {}% of the GPUs above a floor of {} on spot{max_price}, {interruptions}, notice {} min; more than {} taken back in {} min puts new GPUs on demand for at least {} min",
        settings.spot_pct,
        settings.on_demand_floor,
        settings.notice_minutes,
        breaker.max_interruptions,
        breaker.window_ms / 60_000,
        breaker.cool_off_ms / 60_000,
    );
    let _ = writeln!(
        out,
        "{:<12} {:>16} {:>16} {:>10} {:>8} {:>13} {:>10}",
        "POLICY", "COST", "SPOT COST", "SPOT GPU-H", "SHORT", "INTERRUPTIONS", "VS ON DEM."
    );
    let on_demand = comparison.on_demand.cost_fen;
    for result in [&comparison.mix, &comparison.on_demand, &comparison.oracle] {
        let versus = if on_demand > 0 {
            format!(
                "{:+.1}%",
                100.0 * (result.cost_fen - on_demand) as f64 / on_demand as f64
            )
        } else {
            "-".to_string()
        };
        let _ = writeln!(
            out,
            "{:<12} {:>16} {:>16} {:>10} {:>7.2}% {:>13} {:>10}",
            result.policy,
            Money::from_fen(result.cost_fen).to_string(),
            Money::from_fen(result.spot_cost_fen).to_string(),
            result.spot_gpu_hours,
            result.shortfall_pct,
            result.interruptions,
            versus,
        );
    }
    out
}

/// The results as a table, one row per policy.
fn table(
    args: &ReplayArgs,
    trace: &Trace,
    options: &ReplayOptions,
    report: &ReplayReport,
) -> String {
    let mut out = String::new();
    let days = trace.minutes() as f64 / 1440.0;
    let _ = writeln!(
        out,
        "{} in {}: {} minutes ({days:.1} days), peak demand {} GPUs, warmup {} min, base {}ly + the rest by the {}",
        args.model,
        args.region,
        trace.minutes(),
        trace.peak_gpus(),
        options.warmup_minutes,
        options.term,
        options.overlay,
    );
    let _ = writeln!(
        out,
        "{:<12} {:>16} {:>5} {:>10} {:>10} {:>10} {:>8} {:>8} {:>6}",
        "POLICY",
        "COST",
        "BASE",
        "SUB GPU-H",
        "OVL GPU-H",
        "SHORT GPU-MIN",
        "SHORT",
        "ACT/DAY",
        "PEAK"
    );
    let row = |out: &mut String, result: &ReplayResult| {
        let _ = writeln!(
            out,
            "{:<12} {:>16} {:>5} {:>10} {:>10} {:>13.1} {:>7.2}% {:>8.2} {:>6}",
            result.policy,
            Money::from_fen(result.cost_fen).to_string(),
            result.base_gpus,
            result.gpu_hours.subscribed,
            result.gpu_hours.overlay,
            result.shortfall_gpu_minutes,
            result.shortfall_pct,
            result.actions_per_day,
            result.peak_held_gpus,
        );
    };
    row(&mut out, &report.rules);
    for result in &report.baselines {
        row(&mut out, result);
    }
    out
}
