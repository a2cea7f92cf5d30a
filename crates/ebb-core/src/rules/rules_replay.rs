//! A rule file tried on a pool before it is enabled, and a rule file suggested for it: the
//! shell of `ebb_rules::replay` and `ebb_rules::suggest` for the Rules view (what `ebb
//! replay` and `ebb rules suggest` do from files, from the console's own data).
//!
//! The demand is a trace the operator gave (CSV `minute,demand[,metric…]`) or, without one,
//! the pool's recorded history ([`history_demand`]: each minute's utilization × ready ÷
//! 100, the busy GPUs). It is priced as the enforcer prices the pool
//! ([`crate::rules_live::pricing`]: the pool's model in its cheapest region in the active
//! catalog) under the pool's term and overlay, with the lint's warmup; the rules run beside
//! the baselines `seed-80-30`, `hpa` and the perfect-foresight `oracle`, and the rules'
//! run is drawn ([`ebb_charts::chart::replay_svg`]).

use crate::console::Console;
use crate::console_rules::LINT_WARMUP_MINUTES;
use crate::pool_history::{KEEP_MS, PoolHistory};
use crate::pools::{Pool, PoolError};
use crate::rules_live::pricing;
use ebb_charts::chart::{
    ChartError, ReplayChartData, ReplayChartLabels, ReplayChartSpec, replay_svg,
};
use ebb_charts::history::PoolSample;
use ebb_cost::{Catalog, CostError, PriceEntry};
use ebb_rules::model::RuleSet;
use ebb_rules::replay::baselines;
use ebb_rules::replay::sim::Series;
use ebb_rules::replay::trace::Trace;
use ebb_rules::replay::{ReplayOptions, replay};
use ebb_rules::rules_policy::RulesPolicy;
use ebb_rules::suggest::{SuggestOptions, suggest_with};
use ebb_wire::ipc::ChartTheme;
use ebb_wire::phrase::Phrase;
use ebb_wire::replay::{ReplayReport, ReplaySource, RulesReplay};
use ebb_wire::suggest::{RulesSuggestion, SuggestNote};

/// The fewest minutes of recorded history a replay or a suggestion uses.
pub const MIN_HISTORY_MINUTES: usize = 30;
/// The baselines a Rules view replay is read against, in the order shown.
pub const REPLAY_BASELINES: [&str; 3] = ["seed-80-30", "hpa", "oracle"];
/// The most shortfall a suggestion allows, % of demand (`ebb rules suggest`'s default).
pub const SUGGEST_MAX_SHORTFALL_PCT: f64 = 1.0;
const MINUTE_MS: i64 = 60_000;

/// Why a replay or a suggestion was not made.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// An input is wrong: the rule file (its first problem's field and line), the trace
    /// (`trace`, with the CSV's line), or no price for the pool (`model`).
    #[error("{field}: {message}")]
    Invalid {
        field: String,
        line: Option<u32>,
        message: String,
        /// The rule file's problem as words, for the UI to say in the operator's language.
        words: Option<Phrase>,
    },
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// The billing could not price the held series.
    #[error("cannot price the replay: {0}")]
    Cost(#[from] CostError),
    #[error("cannot draw the replay chart: {0}")]
    Chart(#[from] ChartError),
    /// The blocking task did not finish (a panic in the engine).
    #[error("the replay did not finish: {0}")]
    Task(String),
}

/// A refusal of `field` (at `line`) in the operator's words; its English is the same phrase
/// in the English catalog, so the sentence is written once.
fn invalid(field: &str, line: Option<u32>, words: Phrase) -> ReplayError {
    ReplayError::Invalid {
        field: field.to_string(),
        line,
        message: ebb_wire::catalog::Words::of(ebb_wire::ipc::UiLanguage::English).render(&words),
        words: Some(words),
    }
}

/// A CSV line's problem in the operator's words: the line and the column, then what is
/// wrong in the CSV reader's words (`costs.refuse.demand.*`, `replay.refuse.trace.*`).
pub(crate) fn csv_problem(error: &ebb_cost::DemandError) -> Phrase {
    match &error.column_name {
        Some(column) => Phrase::new("costs.refuse.demandCell").text("column", column),
        None => Phrase::new("costs.refuse.demandLine"),
    }
    .int("line", i64::try_from(error.line).unwrap_or(i64::MAX))
    .phrase("detail", error.words.clone())
}

/// The pool's busy GPUs each minute from its recorded rows (oldest first), from the first
/// row's minute to the last's (pure). A minute takes the last row written in it or, with
/// none, the one before (rows are written once a minute or when a count moves); its demand
/// is utilization × ready ÷ 100. A row without a utilization reading keeps the demand of
/// the minute before, unless nothing is ready (then 0).
pub fn history_demand(rows: &[PoolSample]) -> Vec<f64> {
    let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
        return Vec::new();
    };
    let (from, to) = (
        first.at_ms.div_euclid(MINUTE_MS),
        last.at_ms.div_euclid(MINUTE_MS),
    );
    let mut out = Vec::with_capacity(usize::try_from(to - from + 1).unwrap_or(0));
    let mut next = 0;
    let mut demand = 0.0;
    for minute in from..=to {
        let end = (minute + 1) * MINUTE_MS;
        while let Some(row) = rows.get(next).filter(|row| row.at_ms < end) {
            demand = match row.util_pct {
                Some(util) => f64::from(util.clamp(0.0, 100.0)) * f64::from(row.ready) / 100.0,
                None if row.ready == 0 => 0.0,
                None => demand,
            };
            next += 1;
        }
        out.push(demand);
    }
    out
}

/// The history as a trace (`minute,demand`) and the instant of its minute 0; refused,
/// naming `trace`, when fewer than [`MIN_HISTORY_MINUTES`] minutes are recorded (pure).
pub fn history_trace(rows: &[PoolSample]) -> Result<(Trace, i64), ReplayError> {
    let demand = history_demand(rows);
    if demand.len() < MIN_HISTORY_MINUTES {
        let minutes = i64::try_from(demand.len()).unwrap_or(i64::MAX);
        return Err(invalid(
            "trace",
            None,
            Phrase::new("replay.refuse.shortHistory")
                .phrase(
                    "minutes",
                    Phrase::new(if minutes == 1 {
                        "replay.minutes.one"
                    } else {
                        "replay.minutes.other"
                    })
                    .int("n", minutes),
                )
                .int(
                    "least",
                    i64::try_from(MIN_HISTORY_MINUTES).unwrap_or(i64::MAX),
                )
                .text("columns", "minute,demand"),
        ));
    }
    let start_ms = rows[0].at_ms.div_euclid(MINUTE_MS) * MINUTE_MS;
    let trace = Trace::from_demand(demand)
        .ok_or_else(|| invalid("trace", None, Phrase::new("replay.refuse.unusableHistory")))?;
    Ok((trace, start_ms))
}

/// A trace the operator gave, its problems naming `trace` and the CSV's line.
pub fn trace_from_csv(text: &str) -> Result<Trace, ReplayError> {
    Trace::from_csv(text).map_err(|error| ReplayError::Invalid {
        field: "trace".to_string(),
        line: u32::try_from(error.line).ok().filter(|line| *line > 0),
        message: error.to_string(),
        words: Some(csv_problem(&error)),
    })
}

/// A rule file, its first problem (field and line) the refusal.
pub fn parse_source(source: &str) -> Result<RuleSet, ReplayError> {
    ebb_rules::model::parse(source).map_err(|error| {
        let first = error.problems.into_iter().next();
        match first {
            Some(problem) => ReplayError::Invalid {
                field: problem.field,
                line: problem.line,
                message: problem.message,
                words: Some(problem.words),
            },
            None => invalid("rules", None, Phrase::new("rules.refuse.invalid")),
        }
    })
}

/// The price and billing a replay for `pool` runs under: the entry the enforcer prices the
/// pool with, the pool's term and overlay, the lint's warmup; minute 0 at `start_ms`.
pub fn replay_price(
    pool: &Pool,
    catalog: &Catalog,
    start_ms: i64,
) -> Result<(PriceEntry, ReplayOptions), ReplayError> {
    let price = pricing(pool, None, catalog).ok_or_else(|| {
        invalid(
            "model",
            None,
            Phrase::new("replay.refuse.noPrice")
                .text("model", &pool.model)
                .text("regions", pool.regions.join(", ")),
        )
    })?;
    let options = ReplayOptions {
        warmup_minutes: LINT_WARMUP_MINUTES,
        start_ms,
        term: price.plan.term,
        overlay: price.plan.overlay,
    };
    Ok((price.base, options))
}

/// The rules over `trace` beside [`REPLAY_BASELINES`], as `ebb replay --baseline …` runs
/// them, and the rules' minute series (pure).
pub fn replay_report(
    trace: &Trace,
    rules: RuleSet,
    entry: &PriceEntry,
    options: &ReplayOptions,
) -> Result<(ReplayReport, Series), CostError> {
    // The rule baselines held within the rules' own limits: compared on the same pool.
    let limits = Some((rules.spec().limits.min_gpus, rules.spec().limits.max_gpus));
    let mut policy = RulesPolicy::new("rules", rules, Some(baselines::pricing(entry, options)));
    let run = replay(trace, &mut policy, entry, options)?;
    let mut results = Vec::with_capacity(REPLAY_BASELINES.len());
    for name in REPLAY_BASELINES {
        let mut policy = baselines::baseline_within(name, trace, options, entry, limits)
            .expect("every replay baseline is one ebb-rules knows");
        results.push(replay(trace, policy.as_mut(), entry, options)?.result);
    }
    Ok((
        ReplayReport {
            rules: run.result,
            baselines: results,
            spot: None,
        },
        run.series,
    ))
}

/// Suggested rules with their limits fitted to the pool's range (pure): `min_gpus` at
/// least the pool's min, `max_gpus` at most its max, so the file can be saved as it is
/// (the suggestion's own max, ten times the peak, is for a pool without one).
pub fn fit_to_pool(rules: &mut ebb_wire::rules::RuleSet, pool: &Pool) {
    let limits = &mut rules.limits;
    limits.min_gpus = limits.min_gpus.max(pool.min).min(pool.max);
    limits.max_gpus = limits.max_gpus.min(pool.max).max(pool.min);
}

/// Rules as data (the Rules view's form) as a rule file, valid or not, without comments:
/// the linter then says what is wrong, by line and field (pure).
pub fn rules_file(rules: &ebb_wire::rules::RuleSet) -> String {
    ebb_rules::model_toml::to_toml_with_notes(rules, &ebb_rules::model_toml::Notes::new())
}

/// How the replay chart is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayChart<'a> {
    pub theme: ChartTheme,
    pub width_px: u32,
    pub height_px: u32,
    pub labels: ReplayChartLabels<'a>,
}

/// The replay chart's height in the Rules view.
pub const REPLAY_CHART_HEIGHT_PX: u32 = 280;

impl<'a> ReplayChart<'a> {
    /// The chart as the Rules view shows it: `width_px` wide, its legend in `labels`.
    pub fn shown(
        theme: ChartTheme,
        width_px: u32,
        labels: &'a ebb_wire::replay::ReplayChartLabels,
    ) -> Self {
        ReplayChart {
            theme,
            width_px,
            height_px: REPLAY_CHART_HEIGHT_PX,
            labels: ReplayChartLabels {
                demand: &labels.demand,
                ready: &labels.ready,
                held: &labels.held,
                scale_out: &labels.scale_out,
                scale_in: &labels.scale_in,
                day: &labels.day,
            },
        }
    }
}

impl Console {
    /// The demand to replay for `pool`: `trace` (CSV) when given, else the pool's recorded
    /// history; with where it came from and the instant of minute 0.
    async fn demand_for(
        &self,
        pool: &Pool,
        trace: Option<&str>,
    ) -> Result<(Trace, ReplaySource, i64), ReplayError> {
        match trace {
            Some(text) => Ok((trace_from_csv(text)?, ReplaySource::Trace, 0)),
            None => {
                let history = PoolHistory::new(self.pools.db().clone());
                let since = self.pools.now_ms() - KEEP_MS;
                let rows = history
                    .series(&pool.id, since)
                    .await
                    .map_err(PoolError::Db)?;
                let (trace, from_ms) = history_trace(&rows)?;
                Ok((trace, ReplaySource::History { from_ms }, from_ms))
            }
        }
    }

    /// Replays a rule file (as typed, not saved) for `pool` over `trace` or the pool's
    /// history, beside the baselines, and draws the rules' run.
    pub async fn replay_rules(
        &self,
        pool: &str,
        source: &str,
        trace: Option<&str>,
        chart: ReplayChart<'_>,
    ) -> Result<RulesReplay, ReplayError> {
        let rules = parse_source(source)?;
        let pool = self.pools.get(pool).await?;
        let (trace, source, start_ms) = self.demand_for(&pool, trace).await?;
        let (entry, options) = replay_price(&pool, &self.catalog(), start_ms)?;
        let unread_metrics = trace.unread_metrics(rules.spec());
        let model = entry.model.clone();
        let region = entry.region.clone();
        let (trace, report, series) = tokio::task::spawn_blocking(move || {
            replay_report(&trace, rules, &entry, &options)
                .map(|(report, series)| (trace, report, series))
        })
        .await
        .map_err(|error| ReplayError::Task(error.to_string()))??;
        let chart_svg = replay_svg(
            &ReplayChartSpec {
                title: &pool.name,
                theme: chart.theme,
                width_px: chart.width_px,
                height_px: chart.height_px,
            },
            &chart.labels,
            &ReplayChartData {
                demand: trace.demand(),
                ready: &series.ready,
                held: &series.held,
                initial_gpus: series.initial_gpus,
            },
        )?;
        Ok(RulesReplay {
            report,
            chart_svg,
            minutes: u32::try_from(trace.minutes()).unwrap_or(u32::MAX),
            peak_demand_gpus: trace.peak_gpus(),
            source,
            model,
            region,
            warmup_minutes: LINT_WARMUP_MINUTES,
            unread_metrics,
        })
    }

    /// A rule file for `pool` chosen by replay on `trace` or the pool's history
    /// (`ebb_rules::suggest`), its limits fitted to the pool's range, as a proposal with its
    /// reasons as data. The custom metrics of `current` (the file being edited, when it
    /// parses) are kept in it. `max_shortfall_pct`: the limit, % of demand (default
    /// [`SUGGEST_MAX_SHORTFALL_PCT`]; a suggestion's note on what the limit costs names
    /// another).
    pub async fn suggest_rules(
        &self,
        pool: &str,
        trace: Option<&str>,
        current: Option<&str>,
        max_shortfall_pct: Option<f64>,
    ) -> Result<RulesSuggestion, ReplayError> {
        let max_shortfall_pct = max_shortfall_pct.unwrap_or(SUGGEST_MAX_SHORTFALL_PCT);
        if !(max_shortfall_pct > 0.0 && max_shortfall_pct <= 100.0) {
            return Err(invalid(
                "max_shortfall_pct",
                None,
                Phrase::new("replay.refuse.maxShortfall")
                    .text("value", max_shortfall_pct.to_string()),
            ));
        }
        let pool = self.pools.get(pool).await?;
        let (trace, _, start_ms) = self.demand_for(&pool, trace).await?;
        let (entry, replay) = replay_price(&pool, &self.catalog(), start_ms)?;
        let options = SuggestOptions {
            max_shortfall_pct,
            replay,
            pool: Some(pool.name.clone()),
            metrics: current.map(kept_metrics).unwrap_or_default(),
        };
        // A pool bound to a Slurm partition grows by nodes: the queue rules add a node's GPUs.
        let queue = ebb_rules::suggest::QueueOptions {
            gpus_per_node: self
                .slurm_binding_if_any()
                .ok()
                .flatten()
                .and_then(|binding| binding.of_pool(&pool.name).map(|part| part.gpus_per_node))
                .unwrap_or(1),
        };
        let suggestion =
            tokio::task::spawn_blocking(move || suggest_with(&trace, &entry, &options, &queue))
                .await
                .map_err(|error| ReplayError::Task(error.to_string()))??;
        Ok(proposal(
            suggestion.rules.spec(),
            suggestion.notes,
            suggestion.within_limit,
            &pool,
        ))
    }
}

/// The custom metrics of a rule file being edited (none when it does not parse): a
/// suggestion keeps them (pure).
pub fn kept_metrics(source: &str) -> Vec<ebb_wire::rules::CustomMetric> {
    ebb_rules::model::parse(source)
        .map(|rules| rules.spec().metrics.clone())
        .unwrap_or_default()
}

/// A suggestion fitted to `pool` as the Rules view's proposal (pure): its limits in the
/// pool's range, written without the CLI's English comments (the UI words the notes in the
/// operator's language), and its limits note saying the fitted numbers.
pub fn proposal(
    rules: &ebb_wire::rules::RuleSet,
    mut notes: Vec<SuggestNote>,
    within_limit: bool,
    pool: &Pool,
) -> RulesSuggestion {
    let mut rules = rules.clone();
    fit_to_pool(&mut rules, pool);
    for note in &mut notes {
        if let SuggestNote::Limits { min_gpus, max_gpus } = note {
            (*min_gpus, *max_gpus) = (rules.limits.min_gpus, rules.limits.max_gpus);
        }
        if let SuggestNote::PreScale { floor_gpus, .. } = note {
            *floor_gpus = (*floor_gpus).min(rules.limits.max_gpus);
        }
    }
    for schedule in &mut rules.schedules {
        schedule.gpus = schedule.gpus.min(rules.limits.max_gpus);
    }
    RulesSuggestion {
        file: rules_file(&rules),
        notes,
        within_limit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ebb_cost::{OverlayMode, Term};
    use ebb_rules::suggest::suggest;
    use ebb_wire::pools::PlacementPolicy;

    const RULES: &str = r#"
[limits]
min_gpus = 1
max_gpus = 8

[scale_in]
force = true

[[threshold]]
name = "out"
metric = "gpu_util"
op = ">="
value = 80
for_minutes = 2
action = "+2"
cooldown_minutes = 5

[[threshold]]
name = "in"
metric = "gpu_util"
op = "<="
value = 30
for_minutes = 5
action = "-1"
"#;

    fn pool(min: u32, max: u32) -> Pool {
        Pool {
            id: "p1".into(),
            name: "inference".into(),
            model: "A100".into(),
            regions: vec!["cn-north".into(), "cn-east".into()],
            min,
            max,
            desired: 0,
            base_gpus: 2,
            term: Term::Month,
            overlay: OverlayMode::Hour,
            placement: PlacementPolicy::Pack,
            interruptible: false,
            release_at_unit_end: false,
            force_release: false,
            release_first: Vec::new(),
            created_at_ms: 0,
            spot: Default::default(),
        }
    }

    fn row(minute: i64, second: i64, ready: u32, util: Option<f32>) -> PoolSample {
        PoolSample {
            at_ms: 1_800_000_000_000 + minute * MINUTE_MS + second * 1_000,
            desired: ready,
            ready,
            warming: 0,
            util_pct: util,
        }
    }

    #[test]
    fn history_rows_become_busy_gpus_each_minute() {
        let rows = [
            row(0, 10, 2, Some(50.0)),
            // Two rows in minute 1: the later one counts.
            row(1, 5, 2, Some(90.0)),
            row(1, 40, 4, Some(75.0)),
            // Nothing written in minutes 2 and 3: minute 1's demand holds.
            row(4, 0, 4, None),
            row(5, 0, 0, None),
            row(6, 59, 3, Some(100.0)),
        ];
        assert_eq!(
            history_demand(&rows),
            [1.0, 3.0, 3.0, 3.0, 3.0, 0.0, 3.0],
            "utilization × ready ÷ 100, carried over unwritten minutes"
        );
        assert!(history_demand(&[]).is_empty());
    }

    #[test]
    fn a_short_history_is_refused_naming_the_trace() {
        let rows: Vec<PoolSample> = (0..12).map(|m| row(m, 0, 2, Some(50.0))).collect();
        let error = history_trace(&rows).unwrap_err();
        match &error {
            ReplayError::Invalid { field, message, .. } => {
                assert_eq!(field, "trace");
                assert!(
                    message.contains("12 minutes") && message.contains("30"),
                    "{message}"
                );
            }
            other => panic!("{other:?}"),
        }
        let rows: Vec<PoolSample> = (0..40).map(|m| row(m, 30, 2, Some(50.0))).collect();
        let (trace, start_ms) = history_trace(&rows).unwrap();
        assert_eq!(trace.minutes(), 40);
        assert_eq!(start_ms, 1_800_000_000_000 - 1_800_000_000_000 % MINUTE_MS);
    }

    #[test]
    fn a_bad_trace_or_rule_file_names_its_field_and_line() {
        match trace_from_csv("minute,demand\n0,1\n1,x\n").unwrap_err() {
            ReplayError::Invalid { field, line, .. } => {
                assert_eq!((field.as_str(), line), ("trace", Some(3)));
            }
            other => panic!("{other:?}"),
        }
        let broken = RULES.replace("action = \"+2\"", "action = \"twice\"");
        match parse_source(&broken).unwrap_err() {
            ReplayError::Invalid { field, line, .. } => {
                assert_eq!(field, "threshold[0].action");
                let want = broken.lines().position(|l| l.contains("twice")).unwrap() + 1;
                assert_eq!(line, Some(want as u32));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_replay_gives_the_engines_own_numbers() {
        let catalog = Catalog::demo();
        let (entry, options) = replay_price(&pool(0, 8), &catalog, 0).unwrap();
        // The cheapest of the pool's regions, under its plan.
        let cheapest = ["cn-north", "cn-east"]
            .iter()
            .filter_map(|region| catalog.find("A100", region).ok())
            .min_by_key(|entry| entry.hour.fen())
            .unwrap();
        assert_eq!(entry.region, cheapest.region);
        assert_eq!(
            (options.term, options.overlay),
            (Term::Month, OverlayMode::Hour)
        );

        let csv: String = std::iter::once("minute,demand".to_string())
            .chain((0..240).map(|t| {
                let demand = if (60..150).contains(&t) { 5.5 } else { 1.2 };
                format!("{t},{demand}")
            }))
            .collect::<Vec<_>>()
            .join("\n");
        let trace = trace_from_csv(&csv).unwrap();
        let (report, series) =
            replay_report(&trace, parse_source(RULES).unwrap(), &entry, &options).unwrap();

        // The same, straight through ebb_rules as `ebb replay` runs it.
        let rules = ebb_rules::model::parse(RULES).unwrap();
        let mut policy =
            RulesPolicy::new("rules", rules, Some(baselines::pricing(&entry, &options)));
        let direct = replay(&trace, &mut policy, &entry, &options).unwrap();
        assert_eq!(report.rules, direct.result);
        assert_eq!(series, direct.series);
        let names: Vec<&str> = report.baselines.iter().map(|r| r.policy.as_str()).collect();
        assert_eq!(names, REPLAY_BASELINES);
        // The baselines held within the rules' limits: never above the pool's max.
        let limits = parse_source(RULES).unwrap().spec().limits.clone();
        for (name, result) in REPLAY_BASELINES.iter().zip(&report.baselines) {
            let mut policy = baselines::baseline_within(
                name,
                &trace,
                &options,
                &entry,
                Some((limits.min_gpus, limits.max_gpus)),
            )
            .unwrap();
            let direct = replay(&trace, policy.as_mut(), &entry, &options).unwrap();
            assert_eq!(result, &direct.result, "{name}");
            if *name != "oracle" {
                assert!(
                    result.peak_held_gpus <= limits.max_gpus,
                    "{name}: {result:?}"
                );
            }
        }
        assert!(report.rules.actions > 0, "the rules moved the pool");
        assert!(report.rules.cost_fen > 0);
    }

    #[test]
    fn the_forms_rules_become_a_file_that_reads_back_the_same_valid_or_not() {
        let spec = parse_source(RULES).unwrap().spec().clone();
        let file = rules_file(&spec);
        assert_eq!(parse_source(&file).unwrap().spec(), &spec);
        // Max below min: still a file, and the problem is named by field and line.
        let mut wrong = spec.clone();
        wrong.limits.max_gpus = 0;
        let file = rules_file(&wrong);
        match parse_source(&file).unwrap_err() {
            ReplayError::Invalid { field, line, .. } => {
                assert!(field.starts_with("limits."), "{field}");
                assert!(line.is_some());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_suggestion_fits_the_pools_range_and_stays_a_valid_file() {
        let demand: Vec<f64> = (0..600)
            .map(|t| if (200..400).contains(&t) { 5.0 } else { 1.0 })
            .collect();
        let trace = Trace::from_demand(demand).unwrap();
        let catalog = Catalog::demo();
        let pool = pool(2, 8);
        let (entry, replay) = replay_price(&pool, &catalog, 0).unwrap();
        let options = SuggestOptions {
            max_shortfall_pct: SUGGEST_MAX_SHORTFALL_PCT,
            replay,
            pool: Some(pool.name.clone()),
            metrics: Vec::new(),
        };
        let suggestion = suggest(&trace, &entry, &options).unwrap();
        let made = proposal(suggestion.rules.spec(), suggestion.notes, true, &pool);
        let rules = ebb_rules::model::parse(&made.file).unwrap();
        assert_eq!(
            (rules.spec().limits.min_gpus, rules.spec().limits.max_gpus),
            (2, 8)
        );
        // The same rules otherwise, and no English comment for the UI's editor.
        assert_eq!(rules.spec().targets, suggestion.rules.spec().targets);
        assert!(!made.file.contains('#'), "{}", made.file);
    }

    #[test]
    fn a_proposal_keeps_the_edited_files_metrics_and_says_the_fitted_limits() {
        let demand: Vec<f64> = (0..600)
            .map(|t| if (200..400).contains(&t) { 5.0 } else { 1.0 })
            .collect();
        let trace = Trace::from_demand(demand).unwrap();
        let catalog = Catalog::demo();
        let pool = pool(2, 8);
        let (entry, replay) = replay_price(&pool, &catalog, 0).unwrap();
        let editing = format!("{RULES}\n[[metric]]\nname = \"queue\"\nstale_after_minutes = 3\n");
        let options = SuggestOptions {
            max_shortfall_pct: SUGGEST_MAX_SHORTFALL_PCT,
            replay,
            pool: Some(pool.name.clone()),
            metrics: kept_metrics(&editing),
        };
        assert_eq!(options.metrics.len(), 1);
        assert!(kept_metrics("not toml [").is_empty());
        let suggestion = suggest(&trace, &entry, &options).unwrap();
        let made = proposal(suggestion.rules.spec(), suggestion.notes, true, &pool);
        let rules = ebb_rules::model::parse(&made.file).unwrap();
        assert_eq!(rules.spec().metrics[0].name, "queue");
        assert!(made.notes.contains(&SuggestNote::Limits {
            min_gpus: 2,
            max_gpus: 8
        }));
        assert!(made.notes.contains(&SuggestNote::KeptMetrics {
            names: vec!["queue".to_string()]
        }));
    }

    /// Each phrase and the phrases inside its arguments.
    fn with_inner(phrase: &Phrase, out: &mut Vec<Phrase>) {
        out.push(phrase.clone());
        for arg in &phrase.args {
            if let ebb_wire::phrase::Arg::Phrase(inner) = &arg.value {
                with_inner(inner, out);
            }
        }
    }

    #[test]
    fn every_problem_of_a_demand_csv_or_a_trace_reads_in_chinese() {
        use ebb_cost::DemandSeries;
        use ebb_rules::replay::trace::MAX_MINUTES;
        use ebb_wire::catalog::Words;
        use ebb_wire::ipc::UiLanguage;
        // One file per problem each reader names, and the key of its words.
        let demand = [
            ("", "costs.refuse.demand.empty"),
            ("time,demand\n", "costs.refuse.demand.firstColumn"),
            ("hour,gpus\n0,1\n", "costs.refuse.demand.noDemand"),
            ("hour,demand,users\n0,1\n", "costs.refuse.demand.cells"),
            ("hour,demand\nx,1\n", "costs.refuse.demand.notIndex"),
            ("minute,demand\n-1,1\n", "costs.refuse.demand.notIndex"),
            ("hour,demand\n5,1\n5,2\n", "costs.refuse.demand.order"),
            ("minute,demand\n9,1\n3,2\n", "costs.refuse.demand.order"),
            ("hour,demand\n0,lots\n", "costs.refuse.demand.notGpus"),
            ("hour,demand\n0,-2\n", "costs.refuse.demand.negative"),
            ("hour,demand\n0,2000000\n", "costs.refuse.demand.tooMany"),
            ("hour,demand\n0,1\n87600,1\n", "costs.refuse.demand.tooLong"),
            ("hour,demand\n", "costs.refuse.demand.noRows"),
        ];
        let long_trace: String = std::iter::once("minute,demand\n".to_string())
            .chain((0..=MAX_MINUTES).map(|minute| format!("{minute},1\n")))
            .collect();
        let trace = [
            ("", "replay.refuse.trace.empty"),
            ("hour,demand\n", "replay.refuse.trace.header"),
            ("minute,demand,\n", "replay.refuse.trace.unnamed"),
            ("minute,demand,users,Users\n", "replay.refuse.trace.twice"),
            ("minute,demand\n0,1,2\n", "replay.refuse.trace.cells"),
            ("minute,demand\n1,1\n", "replay.refuse.trace.order"),
            ("minute,demand\nx,1\n", "replay.refuse.trace.notMinute"),
            (long_trace.as_str(), "replay.refuse.trace.tooLong"),
            ("minute,demand\n0,-1\n", "replay.refuse.trace.demandRange"),
            ("minute,demand\n0,lots\n", "costs.refuse.demand.notGpus"),
            (
                "minute,demand,spot_price\n0,1,\n",
                "replay.refuse.trace.spotGap",
            ),
            (
                "minute,demand,spot_price\n0,1,4.5x\n",
                "replay.refuse.trace.spotPrice",
            ),
            (
                "minute,demand,spot_price\n0,1,-1\n",
                "replay.refuse.trace.spotNegative",
            ),
            (
                "minute,demand,interrupted\n0,1,x\n",
                "replay.refuse.trace.interrupted",
            ),
            (
                "minute,demand,slurm_pending_gpus\n0,1,-4\n",
                "replay.refuse.trace.queueNegative",
            ),
            (
                "minute,demand,users\n0,1,x\n",
                "replay.refuse.trace.notNumber",
            ),
            ("minute,demand\n", "costs.refuse.demand.noRows"),
        ];
        let errors = demand
            .iter()
            .map(|(csv, key)| (DemandSeries::from_csv(csv).unwrap_err(), *key))
            .chain(
                trace
                    .iter()
                    .map(|(csv, key)| (Trace::from_csv(csv).unwrap_err(), *key)),
            );
        let english = Words::of(UiLanguage::English);
        let mut refusals = Vec::new();
        for (error, key) in errors {
            assert_eq!(error.words.key, key, "{error}");
            // The English for logs and the CLI is the same phrase in the English catalog.
            assert_eq!(error.message, english.render(&error.words), "{key}");
            with_inner(&csv_problem(&error), &mut refusals);
        }
        let wrong = ebb_state::errors::not_in_chinese(&refusals);
        assert!(wrong.is_empty(), "{wrong:#?}");
        // Each of the readers' keys in the catalog is one these files met.
        let read: Vec<&str> = refusals.iter().map(|phrase| phrase.key.as_str()).collect();
        let catalog: std::collections::BTreeMap<String, String> =
            serde_json::from_str(include_str!("../../../../ui/src/locales/en.json")).unwrap();
        let unread: Vec<&String> = catalog
            .keys()
            .filter(|key| {
                key.starts_with("costs.refuse.demand.") || key.starts_with("replay.refuse.trace.")
            })
            .filter(|key| !read.contains(&key.as_str()))
            .collect();
        assert!(unread.is_empty(), "keys no file here meets: {unread:?}");
        // As the Costs view says a cell's problem.
        let error = DemandSeries::from_csv("hour,demand\n0,1\n7,x\n").unwrap_err();
        assert_eq!(
            Words::of(UiLanguage::SimplifiedChinese).render(&csv_problem(&error)),
            "第 3 行“demand”列：`x` 不是 GPU 数量"
        );
        let error = DemandSeries::from_csv("minute,demand\n9,1\n3,2\n").unwrap_err();
        assert_eq!(
            Words::of(UiLanguage::SimplifiedChinese).render(&error.words),
            "分钟 3 排在 9 之后：各行须按时间先后排列，同一分钟只能出现一次"
        );
    }
}
