//! `ebb rules suggest`: a rule file for a trace, chosen by replay (`ebb_rules::suggest`).
//! Prints the file on standard output (so `> rules.toml` keeps it) and what it did on the
//! trace on standard error; `--json` prints both as one [`SuggestReport`]. On a trace with
//! a spot market (its `spot_price` and `interrupted` columns, or
//! `--interruptions-per-gpu-hour`), the pool's spot mix too (`ebb_rules::suggest::spot`),
//! as comments at the end of the file and `spot_mix` in the JSON.

use anyhow::Context;
use ebb_cost::{Catalog, Money, OverlayMode, Term};
use ebb_reconcile::spot::BreakerPolicy;
use ebb_rules::replay::ReplayOptions;
use ebb_rules::replay::spot::{DEFAULT_NOTICE_MINUTES, SpotModel, SpotReplay};
use ebb_rules::replay::trace::Trace;
use ebb_rules::suggest::queue::{self, Sizing};
use ebb_rules::suggest::spot::{MixChoice, choose_mix, comment};
use ebb_rules::suggest::{LimitPrice, QueueOptions, SuggestOptions, suggest_with};
use ebb_wire::pools::SpotMix;
use ebb_wire::rules::counted;
use ebb_wire::suggest::{SpotMixSuggestion, SuggestReport};
use std::path::{Path, PathBuf};

use crate::costs;

/// The model and region a suggestion is priced with when none is named.
const DEFAULT_PRICE: (&str, &str) = ("A100", "cn-north");

/// `ebb rules suggest …`.
#[derive(Debug, Clone, clap::Args)]
pub struct SuggestArgs {
    /// CSV `minute,demand[,metric…]`: the pool's busy GPUs each minute (a recorded history);
    /// with a `slurm_demand_gpus` column (and `slurm_oldest_wait_minutes`), a Slurm queue
    /// trace, whose rules size the pool to the queue.
    #[arg(long, value_name = "FILE")]
    trace: PathBuf,
    /// A Slurm node's GPUs, 1 to 64, default 1 (a queue trace only): what the `queue-waited`
    /// rule adds once a job has waited, and the unit of the pool's max.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    gpus_per_node: Option<u32>,
    /// A catalog file to use instead of the active one.
    #[arg(long, value_name = "FILE")]
    catalog: Option<PathBuf>,
    /// GPU model, as the catalog names it, e.g. A100 (with --region; without both, the demo
    /// catalog's A100 in cn-north prices the replays).
    #[arg(long, requires = "region")]
    model: Option<String>,
    /// Region, e.g. cn-north.
    #[arg(long, requires = "model")]
    region: Option<String>,
    /// The most shortfall allowed, % of demand.
    #[arg(long, value_name = "PCT", default_value_t = 1.0)]
    max_shortfall_pct: f64,
    /// Minutes from ordering a GPU to its being ready.
    #[arg(long, value_name = "MIN", default_value_t = 5)]
    warmup: u32,
    /// How GPUs above the subscribed base are paid: hour, day, week or spot.
    #[arg(long, default_value = "hour")]
    overlay: OverlayMode,
    /// The base's subscription term: month or year.
    #[arg(long, default_value = "month")]
    term: Term,
    /// The pool the file is for (its `pool = …`).
    #[arg(long)]
    pool: Option<String>,
    /// When the trace has no `interrupted` column: spot GPUs taken back at this rate per
    /// spot GPU-hour (0.01 to 0.10 is a usual market), drawn from --seed. With a spot
    /// market (this or the trace's `interrupted` column, and its `spot_price` column or the
    /// catalog's spot price) the pool's spot share and on-demand floor are suggested too.
    #[arg(long, value_name = "RATE", value_parser = crate::replay::parse_rate)]
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

/// The spot market a mix is searched on, when the trace and flags give one: the replay's
/// spot settings (the grid sets the floor and share), and where interruptions come from.
fn spot_market(
    args: &SuggestArgs,
    trace: &Trace,
    entry: &ebb_cost::PriceEntry,
) -> anyhow::Result<Option<(SpotReplay, &'static str)>> {
    let rate = args.interruptions_per_gpu_hour;
    if trace.spot_price_fen().is_none() && trace.interrupted().is_none() && rate.is_none() {
        return Ok(None);
    }
    let priced = trace.spot_price_fen().is_some() || entry.spot_hour.is_some();
    anyhow::ensure!(
        priced || rate.is_none(),
        "--interruptions-per-gpu-hour: {} in {} has no spot price in the catalog and the trace no `spot_price` column, so no spot mix can be priced",
        entry.model,
        entry.region
    );
    if args.overlay == OverlayMode::Spot {
        eprintln!(
            "--overlay spot: the GPUs above the base are all on spot already, so no spot mix is suggested"
        );
        return Ok(None);
    }
    let from = match (trace.interrupted(), rate) {
        (Some(_), _) => "trace",
        (None, Some(_)) => "model",
        (None, None) => {
            eprintln!(
                "the trace has a spot price but no `interrupted` column: give --interruptions-per-gpu-hour to have a spot mix suggested"
            );
            return Ok(None);
        }
    };
    if !priced {
        eprintln!(
            "{} in {} has no spot price in the catalog and the trace no `spot_price` column: no spot mix is suggested",
            entry.model, entry.region
        );
        return Ok(None);
    }
    Ok(Some((
        SpotReplay {
            mix: SpotMix::default(),
            base: 0,
            notice_minutes: entry.spot_notice_minutes.unwrap_or(DEFAULT_NOTICE_MINUTES),
            breaker: BreakerPolicy::default(),
            model: rate.map(|rate| SpotModel {
                rate_per_gpu_hour: rate,
                seed: args.seed,
            }),
            ..SpotReplay::default()
        },
        from,
    )))
}

/// Suggests and prints.
pub fn run(args: &SuggestArgs, data_dir: &Path, json: bool) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.max_shortfall_pct.is_finite() && args.max_shortfall_pct >= 0.0,
        "--max-shortfall-pct must be a share of demand of 0% or more, got {}",
        args.max_shortfall_pct
    );
    let text = std::fs::read_to_string(&args.trace)
        .with_context(|| format!("cannot read {}", args.trace.display()))?;
    let trace = Trace::from_csv(&text)
        .with_context(|| format!("cannot use {} as a trace", args.trace.display()))?;
    let (catalog, source, model, region) = match (&args.model, &args.region) {
        (Some(model), Some(region)) => {
            let active = costs::ActiveCatalog::load(data_dir, args.catalog.as_deref())?;
            let source = active.source_line();
            (active.catalog, source, model.clone(), region.clone())
        }
        _ => (
            Catalog::demo(),
            format!(
                "priced as the demo catalog's {} in {} (name --model and --region for your prices)",
                DEFAULT_PRICE.0, DEFAULT_PRICE.1
            ),
            DEFAULT_PRICE.0.to_string(),
            DEFAULT_PRICE.1.to_string(),
        ),
    };
    let entry = catalog.find(&model, &region)?;
    let market = spot_market(args, &trace, entry)?;
    let options = SuggestOptions {
        max_shortfall_pct: args.max_shortfall_pct,
        replay: ReplayOptions {
            warmup_minutes: args.warmup,
            overlay: args.overlay,
            term: args.term,
            ..ReplayOptions::default()
        },
        pool: args.pool.clone(),
        metrics: Vec::new(),
    };
    let queue_options = QueueOptions {
        gpus_per_node: args.gpus_per_node.unwrap_or(1),
    };
    let suggestion = suggest_with(&trace, entry, &options, &queue_options)?;
    let mix = match &market {
        Some((spot, _)) => Some(choose_mix(
            &trace,
            entry,
            &options,
            &suggestion.rules,
            spot,
        )?),
        None => None,
    };
    let mut file = suggestion.file.clone();
    if let Some(choice) = &mix {
        file.push_str(&comment(choice));
    }
    if json {
        let spot_mix = match (&mix, &market) {
            (Some(choice), Some((_, from))) => Some(SpotMixSuggestion {
                on_demand_floor: choice.mix.on_demand_floor,
                spot_pct: choice.mix.spot_pct,
                interruptions_from: from.to_string(),
                interruptions_per_gpu_hour: args
                    .interruptions_per_gpu_hour
                    .filter(|_| *from == "model"),
                candidates: choice.candidates,
                within_limit: choice.within_limit,
                replay: choice.replay.clone(),
                on_demand: choice.on_demand.clone(),
            }),
            _ => None,
        };
        let report = SuggestReport {
            file,
            rules: suggestion.rules.spec().clone(),
            model,
            region,
            max_shortfall_pct: args.max_shortfall_pct,
            within_limit: suggestion.within_limit,
            candidates: suggestion.candidates,
            replay: suggestion.replay,
            oracle: suggestion.oracle,
            notes: suggestion.notes,
            spot_mix,
        };
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{file}");
        let result = &suggestion.replay;
        eprintln!("{source}");
        eprintln!(
            "replayed on {}: {} ({:.3}x the oracle's {}), shortfall {:.2}% (limit {}%), {:.1} actions a day; {} rule sets tried",
            args.trace.display(),
            Money::from_fen(result.cost_fen),
            result.cost_fen as f64 / suggestion.oracle.cost_fen.max(1) as f64,
            Money::from_fen(suggestion.oracle.cost_fen),
            result.shortfall_pct,
            args.max_shortfall_pct,
            result.actions_per_day,
            suggestion.candidates,
        );
        if !suggestion.within_limit {
            eprintln!(
                "no rule set tried stayed within {}% shortfall: this one has the least",
                args.max_shortfall_pct
            );
        }
        if let Some(price) = &suggestion.limit_price {
            eprintln!(
                "what the {}% limit costs: the cheapest rule set tried cost {} ({:.3}x the oracle) with shortfall {:.2}% ({}); --max-shortfall-pct {} allows rules like it",
                args.max_shortfall_pct,
                Money::from_fen(price.result.cost_fen),
                price.result.cost_fen as f64 / suggestion.oracle.cost_fen.max(1) as f64,
                price.result.shortfall_pct,
                LimitPrice::shortfall_is(suggestion.sizing),
                price.allow_pct
            );
        }
        queue_summary(&trace, suggestion.sizing, args.gpus_per_node);
        if let Some(choice) = &mix {
            mix_summary(choice);
        }
    }
    Ok(())
}

/// What standard error says of the spot mix chosen.
fn mix_summary(choice: &MixChoice) {
    let (mix, result, on_demand) = (&choice.mix, &choice.replay, &choice.on_demand);
    if mix.spot_pct == 0 {
        eprintln!(
            "spot: keep the pool on demand (--spot-pct 0): no mix of {} tried was cheaper within the shortfall limit",
            choice.candidates
        );
        return;
    }
    eprintln!(
        "spot: --on-demand-floor {} --spot-pct {} for the pool: {} ({:.3}x the same rules on demand, {}), shortfall {:.2}%, {} interruptions; the cheapest of {} mixes",
        mix.on_demand_floor,
        mix.spot_pct,
        Money::from_fen(result.cost_fen),
        result.cost_fen as f64 / on_demand.cost_fen.max(1) as f64,
        Money::from_fen(on_demand.cost_fen),
        result.shortfall_pct,
        result.interruptions,
        choice.candidates,
    );
}

/// What standard error says of the queue: what the rules size on, and what the replay could
/// not know (the file's comments say the same).
fn queue_summary(trace: &Trace, sizing: Sizing, gpus_per_node: Option<u32>) {
    match sizing {
        Sizing::BusyGpus => {
            if gpus_per_node.is_some() {
                eprintln!(
                    "--gpus-per-node is for a queue trace (a `{}` column); this trace has none, so the rules size on busy_gpus",
                    queue::DEMAND_METRIC
                );
            }
        }
        Sizing::Queue { wait } => {
            eprintln!(
                "a Slurm queue trace: `{}` sizes the pool to `{}` (one GPU per GPU the jobs ask for or hold), fed to the rules as recorded",
                queue::TARGET_RULE,
                queue::DEMAND_METRIC
            );
            eprintln!("{}", ebb_rules::replay::stuck::sentence(trace));
            if wait {
                eprintln!(
                    "`{}` adds {} (a node) once a job has waited; the recorded `{}` is the wait on the pool that ran then, not on the replayed one, so how often it fires is a guess",
                    queue::THRESHOLD_RULE,
                    counted(gpus_per_node.unwrap_or(1), "GPU", "GPUs"),
                    queue::WAIT_METRIC
                );
            } else {
                eprintln!(
                    "no `{}` column: no `{}` rule",
                    queue::WAIT_METRIC,
                    queue::THRESHOLD_RULE
                );
            }
        }
    }
}
