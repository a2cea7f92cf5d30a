//! Suggest: a rule file for a pool, chosen by replay on the pool's own trace to be the
//! cheapest found within a shortfall limit, written as TOML an operator can read and edit
//! (every lever with a comment saying why it is there).
//!
//! # The levers
//!
//! One target rule and the scale-in settings, the levers that matter on a GPU cloud billed
//! per started unit:
//!
//! - **size to busy GPUs** (target tracking on `busy_gpus`, tolerance 0) at a target of
//!   100% (no headroom) or below (headroom as a share of demand; the model has no additive
//!   margin, see the deadband);
//! - **scale-in stabilization**: a release goes only to the highest count of the last `W`
//!   minutes, so a load that comes back within `W` keeps its GPUs;
//! - an **asymmetric out-trigger**: a rise waits `S` minutes (a one-minute blip is not
//!   worth a paid hour) unless the pool is short by at least `overload_gpus`: then at once;
//! - **paid-unit-aware release** (`force = false`): a surplus GPU goes only in the last
//!   `release_window_minutes` of the unit it has paid for (the replay gives back those
//!   whose unit ends first, as the console does, and keeps the others to their unit's end);
//! - a **deadband**: release only when at least `K` GPUs are surplus over the whole
//!   stabilization window (it keeps up to `K − 1` spare: hysteresis on the way down);
//! - **seasonal pre-scaling**, gated ([`seasonal`]): a schedule floor only for a step up
//!   that recurs at the same time of day or on every occurrence of some days of the week
//!   (a cron such as `55 8 * * 1-5`), and kept only if it pays out of sample,
//!   checked by **rolling origin** ([`folds::seasonal_gate`]): at the start of each fold of
//!   the learning days, the steps found in the days before it alone, their schedules
//!   replayed on the fold against the best rules without any; kept only if they pay over
//!   the folds and on at least half of them (the file's header says what it found). A step
//!   whose start drifts by up to half an hour is one step ([`seasonal`]).
//!
//! The trace's **noise** is measured ([`noise`]: its spread around the slow level, lag-1
//! autocorrelation, decorrelation time) and said in the file's comments; the windows,
//! deadbands, sustains and overloads it proposes join the grid on every trace, with
//! deadbands and overloads in proportion to the pool (a pool of hundreds of GPUs gets
//! deadbands of tens) and finer headroom on large pools ([`Extra`]). No classification of
//! the load ("steady", "seasonal") changes what the search minimises.
//!
//! On a **queue trace** (one with a `slurm_demand_gpus` column, [`queue`]) the target is
//! the Slurm queue instead, one GPU per GPU asked for or held (no headroom lever), with the
//! same windows, replayed in whole nodes (`--gpus-per-node`: every count decided is whole
//! nodes, so the node is the paid unit's size, and the oracle it is read against holds
//! whole nodes too); with a `slurm_oldest_wait_minutes` column too, a threshold adds a
//! node's GPUs once a job has waited `N` minutes, `N` one more lever.
//!
//! # The search
//!
//! **Cost first, flaps in money.** Every candidate is a real replay of the rule set
//! through [`crate::decide`], billed by the replay (each GPU per started paid unit). Its
//! cost in the search is that bill plus each action ([`ACTION_PENALTY_HOURS`]) and each
//! flap ([`flaps`]: an action undone inside the paid unit it bought, priced per flap,
//! [`FLAP_PENALTY_HOURS`], and per GPU in it, [`FLAP_GPU_PENALTY_HOURS`]) priced in, plus
//! what it pays on two stress loads ([`stress_traces`]). No cap on actions a day.
//!
//! Coordinate descent over a small grid of each lever ([`GRID`], and [`Extra`]), from
//! HPA-like defaults sized to demand: each pass tries every value of one lever with the
//! others fixed, keeps the best, and moves to the next lever, until a pass changes nothing.
//! "Best" is: within the shortfall limit (less [`SAFETY`], since the rules will run on load
//! they have not seen) on the trace and within the limit on each of its folds before not;
//! then the lower priced cost; then fewer actions.
//!
//! **Robust out of sample** ([`folds`]): the levers suggested are not the cheapest on the
//! whole learning trace but, among every candidate replayed, those with the least mean
//! regret over its folds (in each, the candidate's priced cost over the cheapest's there);
//! among those within [`CHOICE_TOLERANCE`] of it, the fewest flaps, then actions.
//! Deterministic: no randomness, a fixed order.
//!
//! **What the limit costs** ([`LimitPrice`]): when the rules chosen cost well over the
//! oracle and over the cheapest rule set replayed, that one being over the limit, the file
//! (and a note, and `ebb rules suggest`'s summary) says so, with the limit that allows it.
//! On demand no rule sees coming (a queue idle for hours between jobs) a small shortfall is
//! met only by GPUs held ready ahead of it, which the oracle never pays for; whether a job's
//! wait for its node is worth that is the operator's choice, not the search's.

pub mod flaps;
pub mod folds;
pub mod limit_price;
pub mod noise;
pub mod queue;
pub mod seasonal;
pub mod spot;

use crate::model::{self, RuleSet};
use crate::model_toml::{Notes, to_toml_with_notes};
use crate::replay::baselines::pricing;
use crate::replay::billing::unit_minutes;
use crate::replay::trace::Trace;
use crate::replay::{ReplayOptions, replay};
use crate::rules_policy::RulesPolicy;
use ebb_cost::{CostError, Money, OverlayMode, PriceEntry};
use ebb_wire::replay::ReplayResult;
use ebb_wire::rules::{
    self as spec, BoundKind, Limits, MetricRef, ScaleIn, Schedule, ScheduleWhen, TargetRule,
};
use ebb_wire::suggest::{PaidUnit, SuggestNote};
use folds::FoldCost;
pub use limit_price::{LIMIT_PRICE_SHARE, LimitPrice};
use noise::Noise;
use queue::Sizing;
use seasonal::{RecurringStep, recurring_steps};
use std::collections::BTreeMap;

/// Share of the shortfall limit a suggestion may use on its own trace: the rest is margin
/// for the load it will meet next.
pub const SAFETY: f64 = 0.5;

/// How a suggestion is made.
#[derive(Debug, Clone, PartialEq)]
pub struct SuggestOptions {
    /// The most shortfall allowed, % of demand (`--max-shortfall-pct`, default 1).
    pub max_shortfall_pct: f64,
    /// How the trace is replayed and paid (warmup, minute 0's instant, term, overlay).
    pub replay: ReplayOptions,
    /// The `pool` the file names, if any.
    pub pool: Option<String>,
    /// The operator's custom metrics, kept in the suggested file as they were (a suggestion
    /// replaces the rules, never the metrics the operator's systems push).
    pub metrics: Vec<spec::CustomMetric>,
}

/// What the rules of a queue trace need that the trace does not say (apart from
/// [`SuggestOptions`], which the console builds whole; only read on a queue trace).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueOptions {
    /// A Slurm node's GPUs (`--gpus-per-node`, 1 to 64): the `queue-waited` threshold adds
    /// this many, and the pool's max is whole nodes.
    pub gpus_per_node: u32,
}

impl Default for QueueOptions {
    fn default() -> QueueOptions {
        QueueOptions { gpus_per_node: 1 }
    }
}

impl Default for SuggestOptions {
    fn default() -> SuggestOptions {
        SuggestOptions {
            max_shortfall_pct: 1.0,
            replay: ReplayOptions::default(),
            pool: None,
            metrics: Vec::new(),
        }
    }
}

/// One point of the search: the value of every lever.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Levers {
    /// The busy-GPU target, % of each GPU (100: size to demand).
    pub target_pct: u32,
    /// Scale-in stabilization (and deadband) window, minutes.
    pub stabilization_minutes: u32,
    /// A rise waits this long (0: at once).
    pub sustain_minutes: u32,
    /// … unless short by at least this many GPUs (used when `sustain_minutes > 0`).
    pub overload_gpus: u32,
    /// Release only when at least this many are surplus (0: no deadband).
    pub deadband_gpus: u32,
    /// A GPU may go in the last this many minutes of its paid unit.
    pub release_window_minutes: u32,
    /// The recurring steps' schedule floors are on.
    pub pre_scale: bool,
    /// The `queue-waited` threshold's N (a queue trace with a wait column): a job that has
    /// waited this many minutes adds a node's GPUs.
    pub wait_minutes: u32,
}

impl Default for Levers {
    /// The search's start: sized to demand, an hour's memory, at once, no deadband.
    fn default() -> Levers {
        Levers {
            target_pct: 100,
            stabilization_minutes: 60,
            sustain_minutes: 0,
            overload_gpus: 2,
            deadband_gpus: 0,
            release_window_minutes: 1,
            pre_scale: false,
            wait_minutes: 5,
        }
    }
}

/// The values each lever may take, in the order tried (the earlier wins a tie).
#[derive(Debug)]
pub struct Grid {
    /// `Levers::target_pct`.
    pub target_pct: &'static [u32],
    /// `Levers::stabilization_minutes`.
    pub stabilization_minutes: &'static [u32],
    /// `Levers::sustain_minutes`.
    pub sustain_minutes: &'static [u32],
    /// `Levers::overload_gpus`.
    pub overload_gpus: &'static [u32],
    /// `Levers::deadband_gpus`.
    pub deadband_gpus: &'static [u32],
    /// `Levers::release_window_minutes`, in 1/60 of the paid unit (a minute of an hour,
    /// 24 minutes of a day).
    pub release_window_sixtieths: &'static [u32],
    /// `Levers::wait_minutes` (the template's default first; its range is 1 to 120).
    pub wait_minutes: &'static [u32],
}

/// The grid searched.
pub const GRID: Grid = Grid {
    target_pct: &[100, 97, 94, 90, 85, 80],
    stabilization_minutes: &[60, 50, 45, 40, 30, 20, 10, 5, 1],
    sustain_minutes: &[0, 1, 2, 3, 5],
    overload_gpus: &[2, 1, 3, 5, 8],
    deadband_gpus: &[0, 2, 3],
    release_window_sixtieths: &[30, 15, 10, 5, 3, 1, 0],
    wait_minutes: &[5, 10, 15, 30, 60],
};

/// Among the rule sets within this share of the cheapest (penalized) cost, the one with
/// the fewest actions is suggested (the spot mix's choice, [`spot`]).
pub const COST_TOLERANCE: f64 = 0.01;

/// Among the rule sets within this share of the least mean regret over the folds
/// ([`folds::mean_ratios`]), the one with the fewest flaps, then the fewest actions, is
/// suggested: a difference this small is within what the next weeks' load will change.
pub const CHOICE_TOLERANCE: f64 = 0.002;

/// What an action is worth in the search, as a share of an on-demand GPU-hour: a saving
/// smaller than that is not worth another order or release (the operator's log). Priced
/// per action, not capped per day: on a pool of hundreds of GPUs it is small beside what a
/// step saves; on a pool of a few it keeps the pool from moving for nothing.
pub const ACTION_PENALTY_HOURS: f64 = 0.5;

/// What a flap (an action undone inside the paid unit it bought, [`flaps`]) is worth on
/// top of what the replay bills for it, as a share of an on-demand GPU-hour …
pub const FLAP_PENALTY_HOURS: f64 = 8.0;

/// … and each GPU in it (a flap of 64 GPUs is 64 orders or releases undone).
pub const FLAP_GPU_PENALTY_HOURS: f64 = 4.0;

/// The most passes of the descent.
const MAX_PASSES: usize = 4;

/// A suggested rule file and what it did on the trace it was chosen on.
#[derive(Debug, Clone)]
pub struct Suggestion {
    /// The rules.
    pub rules: RuleSet,
    /// The rule file (TOML with comments); `model::parse` reads it back as `rules`.
    pub file: String,
    /// Why it is as it is, as data with its numbers (the UI words these; the file's
    /// comments say the same in English).
    pub notes: Vec<SuggestNote>,
    /// The levers chosen.
    pub levers: Levers,
    /// The rules replayed on the trace.
    pub replay: ReplayResult,
    /// Their flaps on it (actions undone inside the paid unit they bought), a day.
    pub flaps_per_day: f64,
    /// The perfect-foresight oracle on the same trace and billing.
    pub oracle: ReplayResult,
    /// The recurring steps found (a schedule each when `levers.pre_scale`).
    pub recurring: Vec<RecurringStep>,
    /// What the rules size the pool on (the queue when the trace has its columns).
    pub sizing: Sizing,
    /// The folds of the learning trace the levers were validated on ([`folds`]).
    pub folds: usize,
    /// Rule sets replayed.
    pub candidates: u32,
    /// Whether the chosen rules are within the limit on the trace (when none is, the one
    /// with the least shortfall is suggested).
    pub within_limit: bool,
    /// What the limit cost, when it cost much ([`LimitPrice`]).
    pub limit_price: Option<LimitPrice>,
}

/// What one candidate did.
#[derive(Debug, Clone)]
struct Scored {
    result: ReplayResult,
    flaps: u32,
    folds: Vec<FoldCost>,
    /// Its cost with each action, flap and stress load priced (as `key`'s second when within
    /// the limit).
    priced: i64,
    /// 0: within the limit on the trace and on every fold; 1: on the trace but over it on
    /// a fold; 2: over it. Then the cost with each action, flap and stress load priced (the
    /// shortfall when over the limit), then the actions: lower is better.
    key: (u8, i64, u32),
}

impl Scored {
    fn new(
        result: ReplayResult,
        flapped: (usize, usize),
        folds: Vec<FoldCost>,
        limits: (f64, f64),
        prices: &folds::Prices<'_>,
        stress_fen: i64,
    ) -> Scored {
        let (limit_pct, fold_limit_pct) = limits;
        let priced = result
            .cost_fen
            .saturating_add(prices.churn(i64::from(result.actions), flapped))
            .saturating_add(stress_fen);
        let key = if result.shortfall_pct > limit_pct {
            (
                2,
                (result.shortfall_pct * 1_000.0).round() as i64,
                result.actions,
            )
        } else if folds.iter().any(|f| f.shortfall_pct > fold_limit_pct) {
            (1, priced, result.actions)
        } else {
            (0, priced, result.actions)
        };
        Scored {
            result,
            flaps: flapped.0 as u32,
            folds,
            priced,
            key,
        }
    }
}

/// What every candidate of one search shares.
#[derive(Clone, Copy)]
struct Plan<'a> {
    peak: u32,
    noise: Noise,
    recurring: &'a [RecurringStep],
    options: &'a SuggestOptions,
    sizing: Sizing,
    gpus_per_node: u32,
}

impl Plan<'_> {
    /// GPUs that come and go together in the replay: a queue trace's nodes, else one.
    fn node_gpus(&self) -> u32 {
        if self.sizing.is_queue() {
            self.gpus_per_node
        } else {
            1
        }
    }
}

/// The levers the search moves, in the order of a pass (see [`neighbours`]).
const LEVERS: usize = 7;

/// Suggests rules for `trace`, priced by `entry` under `options.replay`'s plan (a queue
/// trace's rules for nodes of one GPU; [`suggest_with`] names the node).
pub fn suggest(
    trace: &Trace,
    entry: &PriceEntry,
    options: &SuggestOptions,
) -> Result<Suggestion, CostError> {
    suggest_with(trace, entry, options, &QueueOptions::default())
}

/// Every candidate replayed so far, by its levers.
type Tried = BTreeMap<Levers, Scored>;

/// Replays candidates on the trace and its stress loads, and scores them.
struct Evaluator<'a> {
    trace: &'a Trace,
    plan: &'a Plan<'a>,
    prices: folds::Prices<'a>,
    price: crate::decide::Pricing,
    stresses: Vec<Trace>,
    folds: Vec<(usize, usize)>,
    limits: (f64, f64),
    unit: u32,
    tried: Tried,
}

impl Evaluator<'_> {
    fn policy(&self, rules: RuleSet) -> RulesPolicy {
        RulesPolicy::new("rules", rules, Some(self.price.clone()))
            .with_node_gpus(self.plan.node_gpus())
    }

    fn evaluate(&mut self, levers: Levers) -> Result<Scored, CostError> {
        self.evaluate_all(&[levers])?;
        Ok(self.tried[&levers].clone())
    }

    /// Scores every one of `candidates` not tried yet, on as many threads as the machine
    /// has (each a replay of its own; the results are the same in any order).
    fn evaluate_all(&mut self, candidates: &[Levers]) -> Result<(), CostError> {
        let mut new: Vec<Levers> = candidates
            .iter()
            .copied()
            .filter(|levers| !self.tried.contains_key(levers))
            .collect();
        new.dedup();
        let threads = std::thread::available_parallelism()
            .map_or(1, std::num::NonZeroUsize::get)
            .min(new.len());
        let scored: Vec<Result<Scored, CostError>> = if threads <= 1 {
            new.iter().map(|levers| self.score(levers)).collect()
        } else {
            let this = &*self;
            std::thread::scope(|scope| {
                let chunk = new.len().div_ceil(threads);
                let handles: Vec<_> = new
                    .chunks(chunk)
                    .map(|part| {
                        scope.spawn(move || {
                            part.iter()
                                .map(|levers| this.score(levers))
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .flat_map(|handle| handle.join().expect("a candidate's replay panicked"))
                    .collect()
            })
        };
        for (levers, scored) in new.into_iter().zip(scored) {
            self.tried.insert(levers, scored?);
        }
        Ok(())
    }

    fn score(&self, levers: &Levers) -> Result<Scored, CostError> {
        let (entry, options) = (self.prices.entry, self.prices.options);
        let rules = build(levers, self.plan);
        let mut policy = self.policy(rules.clone());
        let replayed = replay(self.trace, &mut policy, entry, options)?;
        let flap_count = flaps::count_in(&replayed.flapped, 0, u32::MAX);
        let mut stress_fen = 0i64;
        for stress in &self.stresses {
            let mut policy = self.policy(rules.clone());
            let stressed = replay(stress, &mut policy, entry, options)?.result;
            stress_fen = stress_fen.saturating_add(stressed.cost_fen);
        }
        let fold_costs =
            folds::fold_costs(self.trace, &replayed, &self.folds, &self.prices, stress_fen)?;
        Ok(Scored::new(
            replayed.result,
            flap_count,
            fold_costs,
            self.limits,
            &self.prices,
            stress_fen,
        ))
    }

    /// Coordinate descent from `start`: each pass tries every value of one lever with the
    /// others fixed, keeps the best, and moves to the next lever, until a pass changes
    /// nothing.
    fn descend(&mut self, start: Levers, extra: &Extra) -> Result<Levers, CostError> {
        let sizing = self.plan.sizing;
        let mut best = start;
        let mut best_score = self.evaluate(best)?;
        for _ in 0..MAX_PASSES {
            let before = best;
            for lever in 0..LEVERS {
                let candidates = neighbours(&best, lever, self.unit, sizing, extra);
                self.evaluate_all(&candidates)?;
                for candidate in candidates {
                    let score = self.evaluate(candidate)?;
                    if score.key < best_score.key {
                        best = candidate;
                        best_score = score;
                    }
                }
            }
            if best == before {
                break;
            }
        }
        Ok(best)
    }
}

/// The levers suggested among those tried (with schedules only if `pre_scale_allowed`):
/// of the best tier ([`Scored::key`]'s first), the least mean regret over the folds; among
/// those within [`CHOICE_TOLERANCE`] of it, the fewest flaps, then actions. When none is
/// within the limit, the least shortfall.
fn choose(tried: &Tried, pre_scale_allowed: bool) -> (Levers, Scored) {
    let allowed: Vec<(&Levers, &Scored)> = tried
        .iter()
        .filter(|(levers, _)| pre_scale_allowed || !levers.pre_scale)
        .collect();
    let tier = allowed
        .iter()
        .map(|(_, score)| score.key.0)
        .min()
        .expect("at least one candidate without pre-scaling");
    if tier == 2 {
        let (levers, score) = allowed
            .iter()
            .min_by_key(|(levers, score)| (score.key, **levers))
            .expect("one of the tier");
        return (**levers, (*score).clone());
    }
    let pool: Vec<(&Levers, &Scored)> = allowed
        .into_iter()
        .filter(|(_, score)| score.key.0 == tier)
        .collect();
    let costs: Vec<Vec<i64>> = pool
        .iter()
        .map(|(_, score)| score.folds.iter().map(|f| f.fen).collect())
        .collect();
    let ratios = folds::mean_ratios(&costs);
    let least = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let (levers, score, _) = pool
        .iter()
        .zip(&ratios)
        .filter(|(_, ratio)| **ratio <= least * (1.0 + CHOICE_TOLERANCE))
        .map(|((levers, score), ratio)| (**levers, *score, *ratio))
        .min_by(|a, b| {
            (a.1.flaps, a.1.result.actions, a.0)
                .cmp(&(b.1.flaps, b.1.result.actions, b.0))
                .then(a.2.total_cmp(&b.2))
        })
        .expect("the least is within its own tolerance");
    (levers, score.clone())
}

/// [`suggest`], with what a queue trace's rules need beyond `options`.
pub fn suggest_with(
    trace: &Trace,
    entry: &PriceEntry,
    options: &SuggestOptions,
    queue_options: &QueueOptions,
) -> Result<Suggestion, CostError> {
    let replay_options = &options.replay;
    let recurring = recurring_steps(
        trace.demand(),
        replay_options.start_ms,
        replay_options.warmup_minutes,
    );
    let sizing = Sizing::of(trace);
    let plan = Plan {
        peak: trace.peak_gpus(),
        noise: noise::measure(trace.demand()),
        recurring: &recurring,
        options,
        sizing,
        gpus_per_node: queue_options
            .gpus_per_node
            .clamp(*queue::GPUS_PER_NODE.start(), *queue::GPUS_PER_NODE.end()),
    };
    let limit_pct = options.max_shortfall_pct.max(0.0) * SAFETY;
    let unit = unit_minutes(replay_options.overlay);
    let hour_fen = entry.hour.fen() as f64;
    let mut evaluator = Evaluator {
        trace,
        plan: &plan,
        prices: folds::Prices {
            entry,
            options: replay_options,
            action_fen: (hour_fen * ACTION_PENALTY_HOURS).round() as i64,
            flap_fen: (hour_fen * FLAP_PENALTY_HOURS).round() as i64,
            flap_gpu_fen: (hour_fen * FLAP_GPU_PENALTY_HOURS).round() as i64,
        },
        price: pricing(entry, replay_options),
        stresses: stresses_for(trace, unit, sizing),
        folds: folds::bounds(trace.minutes()),
        limits: (limit_pct, options.max_shortfall_pct.max(0.0)),
        unit,
        tried: Tried::new(),
    };

    // Coordinate descent from the defaults; then, when the trace has recurring steps, again
    // with pre-scaling on from where the first ended (it changes what the others cover).
    let mut start = canonical(
        Levers {
            release_window_minutes: unit / 2,
            ..Levers::default()
        },
        sizing,
    );
    let extra = Extra::of(&plan);
    let pre_scale_choices: &[bool] = if recurring.is_empty() {
        &[false]
    } else {
        &[false, true]
    };
    for &pre_scale in pre_scale_choices {
        start = evaluator.descend(Levers { pre_scale, ..start }, &extra)?;
    }
    let (mut best, mut best_score) = choose(&evaluator.tried, true);
    let mut gate = None;
    if best.pre_scale {
        // The schedules stay only if they pay by rolling origin over the learning days.
        let (alternative, alternative_score) = choose(&evaluator.tried, false);
        let found = folds::seasonal_gate(
            trace,
            &plan,
            (&best, &alternative),
            limit_pct,
            &evaluator.prices,
        )?;
        if !found.paid {
            (best, best_score) = (alternative, alternative_score);
        }
        gate = Some(found);
    }
    let oracle = oracle_for(trace, &plan, entry)?;
    let limit_price = limit_price::find(&evaluator.tried, &best_score, best.pre_scale, &oracle);
    let candidates = evaluator.tried.len() as u32;
    let fold_count = evaluator.folds.len();
    let levers = canonical(best, sizing);
    let spec = build_spec(&levers, &plan);
    let days = (trace.minutes() as f64 / 1_440.0).max(1.0 / 1_440.0);
    let found = Found {
        levers: &levers,
        rules: &spec,
        result: &best_score.result,
        oracle: &oracle,
        candidates,
        flaps_per_day: f64::from(best_score.flaps) / days,
        folds: fold_count,
        tier: best_score.key.0,
        folds_over: best_score
            .folds
            .iter()
            .filter(|fold| fold.shortfall_pct > evaluator.limits.1)
            .count(),
        action_fen: evaluator.prices.action_fen,
        flap_fen: evaluator.prices.flap_fen,
        flap_gpu_fen: evaluator.prices.flap_gpu_fen,
        limit_price: limit_price.as_ref(),
    };
    let mut notes = notes(trace, &plan, &found);
    if let Some(gate) = &gate {
        notes
            .entry(String::new())
            .or_default()
            .push(gate.describe(levers.pre_scale));
    }
    let file = to_toml_with_notes(&spec, &notes);
    let rules = model::parse(&file).expect("a suggested file is valid (a test checks)");
    let notes = structured_notes(trace, &plan, &found);
    let within_limit = best_score.result.shortfall_pct <= options.max_shortfall_pct;
    Ok(Suggestion {
        within_limit,
        limit_price: limit_price.clone(),
        rules,
        file,
        notes,
        levers,
        flaps_per_day: found.flaps_per_day,
        replay: best_score.result,
        oracle,
        recurring,
        sizing,
        folds: fold_count,
        candidates,
    })
}

/// The perfect-foresight oracle on `trace`; on a queue trace of nodes, in whole nodes.
fn oracle_for(
    trace: &Trace,
    plan: &Plan<'_>,
    entry: &PriceEntry,
) -> Result<ReplayResult, CostError> {
    let options = &plan.options.replay;
    let mut policy = crate::replay::baselines::node_oracle(trace, options, plan.node_gpus());
    Ok(replay(trace, policy.as_mut(), entry, options)?.result)
}

/// What the search found, for the notes.
#[derive(Clone, Copy)]
struct Found<'a> {
    levers: &'a Levers,
    rules: &'a spec::RuleSet,
    result: &'a ReplayResult,
    oracle: &'a ReplayResult,
    candidates: u32,
    flaps_per_day: f64,
    folds: usize,
    /// [`Scored::key`]'s tier of the rules chosen.
    tier: u8,
    /// Folds on which they were over the limit.
    folds_over: usize,
    action_fen: i64,
    flap_fen: i64,
    flap_gpu_fen: i64,
    /// What the limit cost, when it cost much.
    limit_price: Option<&'a LimitPrice>,
}

/// The stress loads ([`stress_traces`]); on a queue trace, jobs too: the queue asks for
/// what they need.
fn stresses_for(trace: &Trace, unit: u32, sizing: Sizing) -> Vec<Trace> {
    let stresses = stress_traces(trace, unit);
    if !sizing.is_queue() {
        return stresses;
    }
    stresses
        .into_iter()
        .filter_map(|stress| {
            let asked = stress.demand().iter().map(|&gpus| Some(gpus)).collect();
            stress.with_column(queue::DEMAND_METRIC, asked)
        })
        .collect()
}

/// Load the trace has not shown, built from its last day (its own noise): a peak at four
/// times the level, ramped up over an hour, held 12 hours and dropped at once (a festival's
/// end); and a job at four times the level that runs exactly two paid units and stops (a
/// batch rented by the unit). What each candidate pays on them is added to its cost, so the
/// search does not pick, between rules that cost the same on the trace, the one that holds
/// a peak's GPUs for paid units after it has gone (each GPU goes only at the end of its
/// unit, so a large drop can be given back over hours).
pub fn stress_traces(trace: &Trace, unit_minutes: u32) -> Vec<Trace> {
    let demand = trace.demand();
    let day = &demand[demand.len().saturating_sub(1_440)..];
    let level = |m: usize| day[m % day.len()];
    let mut out = Vec::new();
    let festival: Vec<f64> = (0..1_440)
        .map(|m| {
            let ramp = ((m as f64 - 120.0) / 60.0).clamp(0.0, 1.0);
            let factor = if m < 900 { 1.0 + 3.0 * ramp } else { 1.0 };
            level(m) * factor
        })
        .collect();
    out.extend(Trace::from_demand(festival));
    let unit = unit_minutes as usize;
    if unit <= 1_440 {
        let start = unit / 2;
        let batch: Vec<f64> = (0..4 * unit)
            .map(|m| {
                let running = m >= start && m < start + 2 * unit;
                level(m) * if running { 4.0 } else { 1.0 }
            })
            .collect();
        out.extend(Trace::from_demand(batch));
    }
    out
}

/// The candidates that change lever `lever` of `at` (in grid order), for a paid unit of
/// `unit` minutes. A lever the sizing has not (a queue's headroom, a wait without its
/// column) has none.
fn neighbours(at: &Levers, lever: usize, unit: u32, sizing: Sizing, extra: &Extra) -> Vec<Levers> {
    let with = |values: &mut dyn Iterator<Item = u32>, set: &dyn Fn(&mut Levers, u32)| {
        let mut seen = Vec::new();
        values
            .filter(|value| {
                let new = !seen.contains(value);
                seen.push(*value);
                new
            })
            .map(|value| {
                let mut next = *at;
                set(&mut next, value);
                canonical(next, sizing)
            })
            .filter(|next| next != &canonical(*at, sizing))
            .collect::<Vec<Levers>>()
    };
    let values = |grid: &'static [u32], more: &[u32]| {
        grid.iter()
            .copied()
            .chain(more.to_vec())
            .collect::<Vec<u32>>()
            .into_iter()
    };
    match lever {
        0 if !sizing.is_queue() => {
            with(&mut values(GRID.target_pct, &extra.target_pct), &|l, v| {
                l.target_pct = v
            })
        }
        1 => with(
            &mut values(GRID.stabilization_minutes, &extra.stabilization_minutes),
            &|l, v| l.stabilization_minutes = v,
        ),
        2 => with(
            &mut values(GRID.sustain_minutes, &extra.sustain_minutes),
            &|l, v| l.sustain_minutes = v,
        ),
        3 if at.sustain_minutes > 0 => with(
            &mut values(GRID.overload_gpus, &extra.overload_gpus),
            &|l, v| l.overload_gpus = v,
        ),
        4 => with(
            &mut values(GRID.deadband_gpus, &extra.deadband_gpus),
            &|l, v| l.deadband_gpus = v,
        ),
        5 => with(
            &mut values(GRID.release_window_sixtieths, &[]).map(|sixtieths| unit / 60 * sixtieths),
            &|l, v| l.release_window_minutes = v,
        ),
        6 if sizing.has_wait() => with(&mut values(GRID.wait_minutes, &[]), &|l, v| {
            l.wait_minutes = v
        }),
        _ => Vec::new(),
    }
}

/// The lever values proposed beyond the grid, on every trace (each still chosen by replay):
/// the noise's windows, sustains, overloads and deadbands ([`noise`]); deadbands and
/// overloads in proportion to the pool (1, 2 and 4% of its median demand, 2 and 5%: on a
/// pool of hundreds of GPUs the grid's few GPUs are nothing); a headroom of 1 and 2% on a
/// pool of 100 GPUs or more; on a queue trace of nodes, a node's and two nodes' GPUs.
#[derive(Debug, Clone, Default)]
struct Extra {
    target_pct: Vec<u32>,
    stabilization_minutes: Vec<u32>,
    sustain_minutes: Vec<u32>,
    overload_gpus: Vec<u32>,
    deadband_gpus: Vec<u32>,
}

/// The pool sizes from which levers in proportion are proposed (GPUs of median demand).
const PROPORTIONATE_FROM_GPUS: f64 = 100.0;

impl Extra {
    fn of(plan: &Plan<'_>) -> Extra {
        let noise = &plan.noise;
        let median = noise.median_gpus;
        let share = |pcts: &[f64]| -> Vec<u32> {
            pcts.iter()
                .map(|pct| (median * pct / 100.0).round() as u32)
                .filter(|&gpus| gpus > 3)
                .collect()
        };
        let mut deadband_gpus = noise.deadbands();
        deadband_gpus.extend(share(&[1.0, 2.0, 4.0]));
        let mut overload_gpus = noise.overloads();
        overload_gpus.extend(share(&[2.0, 5.0]));
        let node = plan.node_gpus();
        if node > 1 {
            deadband_gpus.extend([node, 2 * node]);
            overload_gpus.push(node);
        }
        Extra {
            target_pct: if median >= PROPORTIONATE_FROM_GPUS && !plan.sizing.is_queue() {
                vec![99, 98]
            } else {
                Vec::new()
            },
            stabilization_minutes: noise.windows(),
            sustain_minutes: noise.sustains(),
            overload_gpus,
            deadband_gpus,
        }
    }
}

/// Levers that mean the same rules are the same point (the overload without a sustain
/// window does nothing, nor a queue's headroom or a wait the rules do not watch).
fn canonical(mut levers: Levers, sizing: Sizing) -> Levers {
    let defaults = Levers::default();
    if levers.sustain_minutes == 0 {
        levers.overload_gpus = defaults.overload_gpus;
    }
    if sizing.is_queue() {
        levers.target_pct = defaults.target_pct;
    }
    if !sizing.has_wait() {
        levers.wait_minutes = defaults.wait_minutes;
    }
    levers
}

fn build(levers: &Levers, plan: &Plan<'_>) -> RuleSet {
    RuleSet::from_spec(build_spec(levers, plan))
        .expect("the grid only makes valid rule sets (a test checks)")
}

/// How the file words [`suggested_max_gpus`] for a pool whose max is `max_gpus`.
fn max_reason(max_gpus: u32) -> String {
    let reason = "the larger of ten times the trace's peak and 100 GPUs above it".to_string();
    if max_gpus >= model::MAX_GPUS {
        format!(
            "{reason}, capped at {}, the most a pool may hold",
            model::MAX_GPUS
        )
    } else {
        reason
    }
}

/// The pool's max: ten times the trace's peak, at least 100 more, so a peak the trace did
/// not show is not clipped (the operator's cap to set).
pub fn suggested_max_gpus(peak: u32) -> u32 {
    peak.saturating_mul(10)
        .max(peak.saturating_add(100))
        .min(model::MAX_GPUS)
}

fn build_spec(levers: &Levers, plan: &Plan<'_>) -> spec::RuleSet {
    let options = plan.options;
    let mut max_gpus = suggested_max_gpus(plan.peak);
    if plan.sizing.is_queue() {
        max_gpus = queue::whole_nodes(max_gpus, plan.gpus_per_node, model::MAX_GPUS);
    }
    let schedules = if levers.pre_scale {
        plan.recurring
            .iter()
            .map(|step| Schedule {
                name: format!("pre-scale-{}", step.onset_hh_mm().replace(':', "")),
                when: ScheduleWhen::Cron {
                    cron: step.cron(),
                    duration_minutes: step.duration_minutes,
                },
                time_zone: "UTC".to_string(),
                bound: BoundKind::Floor,
                gpus: step.floor_gpus.min(max_gpus),
            })
            .collect()
    } else {
        Vec::new()
    };
    let overload_gpus = (levers.sustain_minutes > 0).then_some(levers.overload_gpus);
    let (min_gpus, metrics, thresholds, target) = match plan.sizing {
        Sizing::BusyGpus => (
            1,
            options.metrics.clone(),
            Vec::new(),
            TargetRule {
                name: "size-to-busy-gpus".to_string(),
                metric: MetricRef::BusyGpus,
                target: f64::from(levers.target_pct),
                tolerance: 0.0,
                scale_in_stabilization_minutes: levers.stabilization_minutes,
                scale_out_sustain_minutes: levers.sustain_minutes,
                overload_gpus,
            },
        ),
        Sizing::Queue { wait } => (
            0,
            queue::metrics(&options.metrics, wait),
            if wait {
                vec![queue::threshold(
                    levers.wait_minutes,
                    plan.gpus_per_node,
                    options.replay.warmup_minutes,
                )]
            } else {
                Vec::new()
            },
            queue::target(
                levers.stabilization_minutes,
                levers.sustain_minutes,
                overload_gpus,
            ),
        ),
    };
    spec::RuleSet {
        pool: options.pool.clone(),
        limits: Limits {
            min_gpus,
            max_gpus,
            ..Limits::default()
        },
        scale_in: ScaleIn {
            force: false,
            release_window_minutes: levers.release_window_minutes,
            deadband_gpus: levers.deadband_gpus,
            deadband_minutes: if levers.deadband_gpus > 0 {
                levers.stabilization_minutes
            } else {
                0
            },
            ..ScaleIn::default()
        },
        metrics,
        thresholds,
        targets: vec![target],
        schedules,
    }
}

fn paid_unit(overlay: OverlayMode) -> PaidUnit {
    match overlay {
        OverlayMode::Hour | OverlayMode::Spot => PaidUnit::Hour,
        OverlayMode::Day => PaidUnit::Day,
        OverlayMode::Week => PaidUnit::Week,
    }
}

/// The same reasons as [`notes`], as data with their numbers, in the order a reader meets
/// them: the demand, what the rules did on it, then each lever. A queue trace's rules have
/// no headroom note, and their queue metrics and threshold no note of their own (the wire's
/// notes do not word them yet; the file's comments do).
fn structured_notes(trace: &Trace, plan: &Plan<'_>, found: &Found<'_>) -> Vec<SuggestNote> {
    let Found {
        levers,
        rules,
        result,
        oracle,
        candidates,
        ..
    } = *found;
    let (options, recurring) = (plan.options, plan.recurring);
    let unit = paid_unit(options.replay.overlay);
    let mut out = vec![
        SuggestNote::Trace {
            minutes: u32::try_from(trace.minutes()).unwrap_or(u32::MAX),
            peak_gpus: trace.peak_gpus(),
        },
        SuggestNote::Replayed {
            cost_fen: result.cost_fen,
            oracle_cost_fen: oracle.cost_fen,
            shortfall_pct: result.shortfall_pct,
            max_shortfall_pct: options.max_shortfall_pct,
            actions_per_day: result.actions_per_day,
            candidates,
            within_margin: found.tier < 2,
        },
    ];
    if result.shortfall_pct > options.max_shortfall_pct {
        out.push(SuggestNote::OverLimit {
            shortfall_pct: result.shortfall_pct,
            max_shortfall_pct: options.max_shortfall_pct,
        });
    }
    if let Some((gpu_minutes, share_pct)) = crate::replay::stuck::taken(trace) {
        out.push(SuggestNote::StuckJobs {
            gpu_minutes,
            share_pct,
        });
    }
    if let Some(price) = found.limit_price {
        out.push(SuggestNote::LimitPrice {
            cost_fen: price.result.cost_fen,
            oracle_cost_fen: oracle.cost_fen,
            shortfall_pct: price.result.shortfall_pct,
            max_shortfall_pct: options.max_shortfall_pct,
            allow_pct: price.allow_pct,
            queue: plan.sizing.is_queue(),
        });
    }
    if !plan.sizing.is_queue() {
        out.push(SuggestNote::Target {
            target_pct: levers.target_pct,
        });
    }
    out.push(SuggestNote::Stabilization {
        minutes: levers.stabilization_minutes,
    });
    out.push(if levers.sustain_minutes > 0 {
        SuggestNote::ScaleOutSustain {
            sustain_minutes: levers.sustain_minutes,
            overload_gpus: levers.overload_gpus,
            unit,
        }
    } else {
        SuggestNote::ScaleOutAtOnce {
            warmup_minutes: options.replay.warmup_minutes,
        }
    });
    out.push(SuggestNote::ReleaseWindow {
        minutes: levers.release_window_minutes,
        unit,
    });
    if levers.deadband_gpus > 0 {
        out.push(SuggestNote::Deadband {
            gpus: levers.deadband_gpus,
            minutes: levers.stabilization_minutes,
        });
    }
    out.push(SuggestNote::Limits {
        min_gpus: rules.limits.min_gpus,
        max_gpus: rules.limits.max_gpus,
    });
    for step in recurring {
        out.push(if levers.pre_scale {
            SuggestNote::PreScale {
                onset: step.onset_hh_mm(),
                rise_gpus: step.rise_gpus,
                floor_gpus: step.floor_gpus.min(rules.limits.max_gpus),
                days_seen: step.days_seen,
                weekdays: step
                    .weekdays
                    .as_ref()
                    .map(|days| days.iter().map(|&d| (d % 7) as u8).collect()),
            }
        } else {
            SuggestNote::PreScaleLeftOut {
                onset: step.onset_hh_mm(),
                rise_gpus: step.rise_gpus,
                days_seen: step.days_seen,
            }
        });
    }
    if !options.metrics.is_empty() {
        out.push(SuggestNote::KeptMetrics {
            names: options.metrics.iter().map(|m| m.name.clone()).collect(),
        });
    }
    out
}

/// How the rules were chosen, as the file's header says it: by cost when some rule set kept
/// within the search's share of the limit ([`Scored::key`]'s tier 0, or 1 when each was over
/// the limit on some stretch of days), else by the least shortfall.
fn choice_lines(found: &Found<'_>, max_shortfall_pct: f64) -> Vec<String> {
    let Found {
        result,
        candidates,
        folds,
        tier,
        folds_over,
        ..
    } = *found;
    let safety_pct = 100.0 * SAFETY;
    if tier >= 2 {
        let missed = if result.shortfall_pct > max_shortfall_pct {
            "stayed within the limit".to_string()
        } else {
            format!(
                "kept within {safety_pct}% of the limit on this trace (the margin for load it has not seen)"
            )
        };
        return vec![
            format!("of {candidates} rule sets replayed, none {missed}:"),
            format!(
                "this is the one with the least shortfall ({:.2}%), whatever it cost (between rule sets as short",
                result.shortfall_pct
            ),
            "as each other, the fewest actions).".to_string(),
        ];
    }
    let over = if folds <= 1 {
        String::new()
    } else if tier == 1 {
        format!(
            " (none was within the limit on each of the {folds} stretches: this one is over it on {folds_over})"
        )
    } else {
        " (and within it on each stretch)".to_string()
    };
    let mut out = Vec::new();
    if folds > 1 {
        out.push(format!(
            "of {candidates} rule sets replayed, the one with the least cost over {folds} stretches of these days"
        ));
        out.push(format!(
            "(its cost on each over the cheapest's there, averaged; within {}% of that, the fewest flaps), each action",
            100.0 * CHOICE_TOLERANCE
        ));
    } else {
        out.push(format!(
            "of {candidates} rule sets replayed, the one with the least cost over the trace, each action"
        ));
    }
    out.push(format!(
        "priced at {} and each flap at {} more and {} a GPU in it, kept within {safety_pct}% of the limit on this trace{over}",
        Money::from_fen(found.action_fen),
        Money::from_fen(found.flap_fen),
        Money::from_fen(found.flap_gpu_fen),
    ));
    out.push("to leave room for load it has not seen.".to_string());
    out
}

fn unit_word(overlay: OverlayMode) -> &'static str {
    match paid_unit(overlay) {
        PaidUnit::Hour => "hour",
        PaidUnit::Day => "day",
        PaidUnit::Week => "week",
    }
}

#[allow(clippy::too_many_lines, reason = "one note per finding")]
fn notes(trace: &Trace, plan: &Plan<'_>, found: &Found<'_>) -> Notes {
    let Found {
        levers,
        rules,
        result,
        oracle,
        flaps_per_day,
        ..
    } = *found;
    let (options, recurring) = (plan.options, plan.recurring);
    let mut notes = Notes::new();
    let days = trace.minutes() as f64 / 1_440.0;
    let ratio = if oracle.cost_fen > 0 {
        result.cost_fen as f64 / oracle.cost_fen as f64
    } else {
        1.0
    };
    let unit = unit_word(options.replay.overlay);
    let mut header = vec![
        format!(
            "Suggested by `ebb rules suggest` from a trace of {} minutes ({days:.1} days, peak {} GPUs).",
            trace.minutes(),
            trace.peak_gpus()
        ),
        format!(
            "Replayed on it: {} ({ratio:.3}x the perfect-foresight oracle's {}), shortfall {:.2}% (limit {}%),",
            Money::from_fen(result.cost_fen),
            Money::from_fen(oracle.cost_fen),
            result.shortfall_pct,
            options.max_shortfall_pct
        ),
        format!(
            "{:.1} actions a day, {flaps_per_day:.1} flaps a day (an action undone inside the {unit} it paid for):",
            result.actions_per_day,
        ),
    ];
    header.extend(choice_lines(found, options.max_shortfall_pct));
    if let Some(price) = found.limit_price {
        header.extend(limit_price::lines(
            price,
            oracle,
            options.max_shortfall_pct,
            plan.sizing,
        ));
    }
    header.extend([
        "Edit freely, then check a change with `ebb replay --trace … --rules this-file`."
            .to_string(),
    ]);
    if plan.sizing.is_queue() {
        header.extend(queue::header(trace, plan.sizing, plan.gpus_per_node));
    }
    let noise = &plan.noise;
    header.push(format!("Measured on this trace: {}.", noise.describe()));
    if !recurring.is_empty() && !levers.pre_scale {
        for step in recurring {
            header.push(format!(
                "A step of about {} GPUs recurs at {} UTC ({} days): a pre-scaling floor for it cost more than",
                step.rise_gpus,
                step.onset_hh_mm(),
                step.days_seen
            ));
            header.push(format!(
                "the shortfall it saves is worth within the limit, so it is left out (add [[schedule]] cron = \"{}\",",
                step.cron()
            ));
            header.push(format!(
                "duration_minutes = {}, floor = {}, time_zone = \"UTC\" to pre-scale anyway).",
                step.duration_minutes, step.floor_gpus
            ));
        }
    }
    notes.insert(String::new(), header);
    let limits = if plan.sizing.is_queue() {
        queue::limits(rules.limits.max_gpus, plan.gpus_per_node)
    } else {
        vec![
            "min 1: a pool with no GPU has no busy GPUs to size from.".to_string(),
            format!(
                "max {}: {}, so a peak it did not show",
                rules.limits.max_gpus,
                max_reason(rules.limits.max_gpus)
            ),
            "is not clipped; lower it to the most you would pay for, or add budget_per_hour (yuan),"
                .to_string(),
            "which no rule can break.".to_string(),
        ]
    };
    notes.insert("limits".to_string(), limits);
    let mut scale_in = vec![
        if levers.release_window_minutes == 0 {
            format!("force = false: a surplus GPU goes only as the {unit} it has paid for ends,")
        } else {
            format!(
                "force = false: a surplus GPU goes only in the last {} of the {unit} it has paid for,",
                spec::counted(levers.release_window_minutes, "minute", "minutes")
            )
        },
        "whichever GPUs' units end first: releasing one earlier saves nothing, and a GPU kept to the end of its paid"
            .to_string(),
        format!("{unit} is there for free if the load comes back."),
    ];
    if levers.deadband_gpus > 0 {
        scale_in.push(format!(
            "Deadband: release only when at least {} GPUs were surplus over the whole last {} minutes, so",
            levers.deadband_gpus, levers.stabilization_minutes
        ));
        scale_in.push(format!(
            "up to {} stay (hysteresis: the pool does not give back a GPU it will want again).",
            spec::counted(levers.deadband_gpus - 1, "spare GPU", "spare GPUs")
        ));
        if noise.sd_gpus > 0.0 {
            scale_in.push(format!(
                "{} GPUs is {:.1} times the noise's spread (sd {:.1} GPUs): a surplus the noise does not explain.",
                levers.deadband_gpus,
                f64::from(levers.deadband_gpus) / noise.sd_gpus,
                noise.sd_gpus
            ));
        }
        if plan.sizing.is_queue() {
            scale_in.push(
                "Live, surplus is counted against busy GPUs (their utilization); the replay took the jobs' GPUs for them."
                    .to_string(),
            );
        }
    } else {
        scale_in.push(
            "No deadband: the stabilization window below already keeps what the last hour needed."
                .to_string(),
        );
    }
    notes.insert("scale_in".to_string(), scale_in);
    for (i, metric) in rules.metrics.iter().enumerate() {
        let ours = [queue::DEMAND_METRIC, queue::WAIT_METRIC].contains(&metric.name.as_str())
            && !options.metrics.iter().any(|kept| kept.name == metric.name);
        if plan.sizing.is_queue() && ours {
            notes.insert(format!("metric[{i}]"), queue::metric(&metric.name));
        }
    }
    if let Some(rule) = rules.thresholds.first()
        && plan.sizing.has_wait()
    {
        notes.insert(
            "threshold[0]".to_string(),
            queue::threshold_notes(rule, plan.gpus_per_node),
        );
    }
    let mut target = if plan.sizing.is_queue() {
        queue::target_notes()
    } else if levers.target_pct >= 100 {
        vec![
            "Size the pool to its busy GPUs (the demand, which goes above 100% utilization when short):".to_string(),
            "target 100% of each GPU, no headroom: paid units and the window below keep it from flapping,".to_string(),
            "not a band (tolerance 0).".to_string(),
        ]
    } else {
        vec![
            format!(
                "Size the pool to its busy GPUs at {}% of each GPU: {}% headroom over demand, because on this",
                levers.target_pct,
                100 - levers.target_pct
            ),
            "trace a pool sized to demand alone fell short while new GPUs warmed up (tolerance 0: paid".to_string(),
            "units and the window below keep it from flapping, not a band).".to_string(),
        ]
    };
    target.push(format!(
        "Scale-in stabilization {} min: a release goes only to the highest count of the last {} minutes,",
        levers.stabilization_minutes, levers.stabilization_minutes
    ));
    target.push("so load that comes back within them keeps its GPUs.".to_string());
    target.push(format!(
        "That is {:.1} times the time the noise takes to decorrelate (about {} min, lag-1 autocorrelation {:.2}).",
        f64::from(levers.stabilization_minutes) / f64::from(noise.decorrelation_minutes.max(1)),
        noise.decorrelation_minutes,
        noise.lag1
    ));
    if levers.sustain_minutes > 0 {
        target.push(format!(
            "Asymmetric out-trigger: a small rise waits {} min (a blip is not worth a paid {unit}), a shortage",
            levers.sustain_minutes
        ));
        target.push(format!(
            "of {} or more orders at once.",
            spec::counted(levers.overload_gpus, "GPU", "GPUs")
        ));
    } else {
        target.push(format!(
            "Scale-out at once: a GPU ordered now is ready in {} minutes, and waiting cost more shortfall",
            options.replay.warmup_minutes
        ));
        target.push("than it saved on this trace.".to_string());
    }
    notes.insert("target[0]".to_string(), target);
    if levers.pre_scale {
        for (i, step) in recurring.iter().enumerate() {
            let days = match &step.weekdays {
                None => "every day".to_string(),
                Some(days) => {
                    let names = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
                    days.iter()
                        .map(|&d| names[d as usize % 7])
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            };
            notes.insert(
                format!("schedule[{i}]"),
                vec![
                    format!(
                        "Pre-scaling: demand stepped up by about {} GPUs at {} UTC ({days}; seen on {} days),",
                        step.rise_gpus,
                        step.onset_hh_mm(),
                        step.days_seen
                    ),
                    format!(
                        "faster than a GPU warms up: at least {} GPUs from {} minutes before, until the target has caught up.",
                        step.floor_gpus, options.replay.warmup_minutes
                    ),
                ],
            );
        }
    }
    notes
}
