//! `ebb rules suggest`: a rule file for a trace, chosen by replay (`ebb_rules::suggest`).
//! Prints the file on standard output (so `> rules.toml` keeps it) and what it did on the
//! trace on standard error; `--json` prints both as one [`SuggestReport`].

use anyhow::Context;
use ebb_cost::{Catalog, Money, OverlayMode, Term};
use ebb_rules::replay::ReplayOptions;
use ebb_rules::replay::trace::Trace;
use ebb_rules::suggest::queue::{self, Sizing};
use ebb_rules::suggest::{QueueOptions, SuggestOptions, suggest_with};
use ebb_wire::rules::counted;
use ebb_wire::suggest::SuggestReport;
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
    if json {
        let report = SuggestReport {
            file: suggestion.file.clone(),
            rules: suggestion.rules.spec().clone(),
            model,
            region,
            max_shortfall_pct: args.max_shortfall_pct,
            within_limit: suggestion.within_limit,
            candidates: suggestion.candidates,
            replay: suggestion.replay,
            oracle: suggestion.oracle,
        };
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", suggestion.file);
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
        queue_summary(suggestion.sizing, args.gpus_per_node);
    }
    Ok(())
}

/// What standard error says of the queue: what the rules size on, and what the replay could
/// not know (the file's comments say the same).
fn queue_summary(sizing: Sizing, gpus_per_node: Option<u32>) {
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
