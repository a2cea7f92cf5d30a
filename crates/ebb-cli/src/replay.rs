//! `ebb replay`: a rule file against a trace, beside the baselines asked for, priced by the
//! catalog. The figures come from `ebb_rules::replay`; this is reading files and wording.

use anyhow::Context;
use ebb_cost::{Money, OverlayMode, Term};
use ebb_rules::replay::baselines::{BASELINES, baseline, pricing};
use ebb_rules::replay::trace::Trace;
use ebb_rules::replay::{ReplayOptions, replay, series_csv};
use ebb_rules::rules_policy::RulesPolicy;
use ebb_wire::replay::{ReplayReport, ReplayResult};
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
    let options = ReplayOptions {
        warmup_minutes: args.warmup,
        overlay: args.overlay,
        term: args.term,
        ..ReplayOptions::default()
    };

    let mut policy = RulesPolicy::new("rules", rules, Some(pricing(entry, &options)));
    let rules_replay = replay(&trace, &mut policy, entry, &options)?;
    if let Some(out) = &args.series {
        std::fs::write(out, series_csv(&trace, &rules_replay.series))
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    let mut baselines = Vec::new();
    for name in &args.baselines {
        let mut policy = baseline(name, &trace, &options, entry)?;
        baselines.push(replay(&trace, policy.as_mut(), entry, &options)?.result);
    }
    let report = ReplayReport {
        rules: rules_replay.result,
        baselines,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{}", active.source_line());
        print!("{}", table(args, &trace, &options, &report));
        print!("{}", costs::warnings_text(&active.warnings));
    }
    Ok(())
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
