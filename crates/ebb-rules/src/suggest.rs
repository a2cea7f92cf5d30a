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
//! - **paid-unit-aware release**, newest first (`force = false`): a surplus GPU goes only in
//!   the last `release_window_minutes` of the unit it has paid for;
//! - a **deadband**: release only when at least `K` GPUs are surplus over the whole
//!   stabilization window (it keeps up to `K − 1` spare: hysteresis on the way down);
//! - **seasonal pre-scaling**, gated ([`seasonal`]): a schedule floor only for a step up
//!   that recurs at the same time of day or on every occurrence of some days of the week
//!   (a cron such as `55 8 * * 1-5`), and kept only if it also pays on a **hold-out**: the
//!   last third of the learning trace's days replayed alone with and without it
//!   ([`HOLD_OUT_SHARE`]; the file's header says what it found).
//!
//! The trace's **noise** is measured ([`noise`]: its spread around the slow level, lag-1
//! autocorrelation, decorrelation time) and said in the file's comments. On **steady** load
//! (noise around a flat level) the windows, deadbands, sustains and overloads it proposes
//! join the grid, the search starts from them, and candidates over
//! [`noise::STEADY_ACTIONS_PER_DAY`] on the trace rank after those within it (fewer actions
//! first among them): every action there is a flap.
//!
//! On a **queue trace** (one with a `slurm_demand_gpus` column, [`queue`]) the target is
//! the Slurm queue instead, one GPU per GPU asked for or held (no headroom lever), with the
//! same windows; with a `slurm_oldest_wait_minutes` column too, a threshold adds a node's
//! GPUs once a job has waited `N` minutes, `N` one more lever.
//!
//! # The search
//!
//! Coordinate descent over a small grid of each lever ([`GRID`]), from HPA-like defaults
//! sized to demand: each pass tries every value of one lever with the others fixed, keeps
//! the best, and moves to the next lever, until a pass changes nothing. "Best" is: within
//! the shortfall limit (less [`SAFETY`], since the rules will run on load they have not
//! seen) before over it; then the lower cost; then fewer actions; then the earlier grid
//! value (simpler, nearer the defaults). Every candidate is a real replay of the rule set
//! through [`crate::decide`]. Deterministic: no randomness, a fixed order.

pub mod noise;
pub mod queue;
pub mod seasonal;
pub mod spot;

use crate::model::{self, RuleSet};
use crate::model_toml::{Notes, to_toml_with_notes};
use crate::replay::baselines::{baseline, pricing};
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
    stabilization_minutes: &[60, 45, 30, 20, 10, 5, 1],
    sustain_minutes: &[0, 1, 2, 3, 5],
    overload_gpus: &[2, 1, 3, 5, 8],
    deadband_gpus: &[0, 2, 3],
    release_window_sixtieths: &[30, 15, 10, 5, 3, 1, 0],
    wait_minutes: &[5, 10, 15, 30, 60],
};

/// Among the rule sets within this share of the cheapest (penalized) cost, the one with
/// the fewest actions is suggested: a pool that moves less is easier to read and trust,
/// and a saving this small is within what the next weeks' load will change anyway.
pub const COST_TOLERANCE: f64 = 0.01;

/// What an action is worth in the search, as a share of an on-demand GPU-hour: a saving
/// smaller than that is not worth another order or release (the churn, and the operator's
/// log). Half an hour's price makes steady load settle at a few actions a day.
pub const ACTION_PENALTY_HOURS: f64 = 0.5;

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
    /// The perfect-foresight oracle on the same trace and billing.
    pub oracle: ReplayResult,
    /// The recurring steps found (a schedule each when `levers.pre_scale`).
    pub recurring: Vec<RecurringStep>,
    /// What the rules size the pool on (the queue when the trace has its columns).
    pub sizing: Sizing,
    /// Rule sets replayed.
    pub candidates: u32,
    /// Whether the chosen rules are within the limit on the trace (when none is, the one
    /// with the least shortfall is suggested).
    pub within_limit: bool,
}

/// What one candidate did.
#[derive(Debug, Clone)]
struct Scored {
    result: ReplayResult,
    /// Within the limit first, then (steady load) within the action budget, then the cost
    /// with each action's penalty (or the shortfall when over the limit, the actions when
    /// over the budget), then the actions: lower is better.
    key: (bool, bool, i64, i64, u32),
}

impl Scored {
    fn new(
        result: ReplayResult,
        limit_pct: f64,
        action_fen: i64,
        stress_fen: i64,
        actions_per_day_budget: Option<f64>,
    ) -> Scored {
        let over = result.shortfall_pct > limit_pct;
        let shortfall = (result.shortfall_pct * 1_000.0).round() as i64;
        let penalized = result
            .cost_fen
            .saturating_add(action_fen.saturating_mul(i64::from(result.actions)))
            .saturating_add(stress_fen);
        let flapping = actions_per_day_budget.is_some_and(|budget| result.actions_per_day > budget);
        let key = if over {
            (true, false, shortfall, penalized, result.actions)
        } else if flapping {
            (
                false,
                true,
                i64::from(result.actions),
                penalized,
                result.actions,
            )
        } else {
            (false, false, penalized, 0, result.actions)
        };
        Scored { result, key }
    }

    /// Within the shortfall limit and the action budget.
    fn acceptable(&self) -> bool {
        !self.key.0 && !self.key.1
    }
}

/// What every candidate of one search shares.
struct Plan<'a> {
    peak: u32,
    noise: Noise,
    recurring: &'a [RecurringStep],
    options: &'a SuggestOptions,
    sizing: Sizing,
    gpus_per_node: u32,
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

/// [`suggest`], with what a queue trace's rules need beyond `options`.
#[allow(
    clippy::too_many_lines,
    reason = "suggest's search over candidate rule sets; to be split"
)]
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
    let noise = noise::measure(trace.demand());
    // Steady load (noise around a flat level) is kept within an action budget: there every
    // action is a flap.
    let actions_budget =
        (noise.steady && !sizing.is_queue()).then_some(noise::STEADY_ACTIONS_PER_DAY);
    let plan = Plan {
        peak: trace.peak_gpus(),
        noise,
        recurring: &recurring,
        options,
        sizing,
        gpus_per_node: queue_options
            .gpus_per_node
            .clamp(*queue::GPUS_PER_NODE.start(), *queue::GPUS_PER_NODE.end()),
    };
    let limit_pct = options.max_shortfall_pct.max(0.0) * SAFETY;
    let price = pricing(entry, replay_options);

    let action_fen = (entry.hour.fen() as f64 * ACTION_PENALTY_HOURS).round() as i64;
    let unit = unit_minutes(replay_options.overlay);

    let mut stresses = stress_traces(trace, unit);
    if sizing.is_queue() {
        // The stress load is jobs too: the queue asks for what they need.
        stresses = stresses
            .into_iter()
            .filter_map(|stress| {
                let asked = stress.demand().iter().map(|&gpus| Some(gpus)).collect();
                stress.with_column(queue::DEMAND_METRIC, asked)
            })
            .collect();
    }

    let mut tried: BTreeMap<Levers, Scored> = BTreeMap::new();
    let mut evaluate = |levers: Levers| -> Result<Scored, CostError> {
        if let Some(scored) = tried.get(&levers) {
            return Ok(scored.clone());
        }
        let rules = build(&levers, &plan);
        let mut policy = RulesPolicy::new("rules", rules.clone(), Some(price.clone()));
        let result = replay(trace, &mut policy, entry, replay_options)?.result;
        let mut stress_fen = 0i64;
        for stress in &stresses {
            let mut policy = RulesPolicy::new("rules", rules.clone(), Some(price.clone()));
            let stressed = replay(stress, &mut policy, entry, replay_options)?.result;
            stress_fen = stress_fen.saturating_add(stressed.cost_fen);
        }
        let scored = Scored::new(result, limit_pct, action_fen, stress_fen, actions_budget);
        tried.insert(levers, scored.clone());
        Ok(scored)
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
    if actions_budget.is_some() {
        // Steady load: start from the levers the noise proposes (the middle window and
        // deadband, its sustain and overload), within the budget more often than not.
        let windows = noise.windows();
        let deadbands = noise.deadbands();
        start = canonical(
            Levers {
                stabilization_minutes: windows[windows.len() / 2],
                deadband_gpus: deadbands[deadbands.len() / 2],
                sustain_minutes: noise.sustains()[0],
                overload_gpus: noise.overloads()[0],
                ..start
            },
            sizing,
        );
    }
    let extra = Extra::of(&noise, actions_budget.is_some());
    let pre_scale_choices: &[bool] = if recurring.is_empty() {
        &[false]
    } else {
        &[false, true]
    };
    for &pre_scale in pre_scale_choices {
        let mut best = Levers { pre_scale, ..start };
        let mut best_score = evaluate(best)?;
        for _ in 0..MAX_PASSES {
            let before = best;
            for lever in 0..LEVERS {
                for candidate in neighbours(&best, lever, unit, sizing, &extra) {
                    let score = evaluate(candidate)?;
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
        start = best;
    }
    // The cheapest, then the fewest actions among those within the tolerance of it.
    let choose = |pre_scale_allowed: bool| {
        let allowed = tried
            .iter()
            .filter(|(levers, _)| pre_scale_allowed || !levers.pre_scale);
        let (cheapest_levers, cheapest) = allowed
            .clone()
            .min_by_key(|(levers, score)| (score.key, **levers))
            .map(|(levers, score)| (*levers, score.clone()))
            .expect("at least one candidate without pre-scaling");
        if !cheapest.acceptable() {
            (cheapest_levers, cheapest)
        } else {
            let bound = (cheapest.key.2 as f64 * (1.0 + COST_TOLERANCE)).floor() as i64;
            allowed
                .filter(|(_, score)| score.acceptable() && score.key.2 <= bound)
                .min_by_key(|(levers, score)| (score.result.actions, score.key, **levers))
                .map(|(levers, score)| (*levers, score.clone()))
                .expect("the cheapest is within its own tolerance")
        }
    };
    let (mut best, mut best_score) = choose(true);
    let mut held_out = None;
    if best.pre_scale {
        // The hold-out gate: the schedules stay only if the rules with them also beat the
        // best rules without any on the learning trace's last days, replayed alone (so a
        // step the search fitted to the whole trace must still earn its floor there).
        let (alternative, alternative_score) = choose(false);
        let gate = hold_out_gate(
            trace,
            entry,
            &plan,
            (&best, &alternative),
            limit_pct,
            action_fen,
        )?;
        if !gate.paid {
            (best, best_score) = (alternative, alternative_score);
        }
        held_out = Some(gate);
    }
    let candidates = tried.len() as u32;

    let mut oracle_policy =
        baseline("oracle", trace, replay_options, entry).expect("the oracle is a baseline");
    let oracle = replay(trace, oracle_policy.as_mut(), entry, replay_options)?.result;
    let levers = canonical(best, sizing);
    let spec = build_spec(&levers, &plan);
    let within_limit = best_score.result.shortfall_pct <= options.max_shortfall_pct;
    let mut notes = notes(
        &levers,
        &spec,
        trace,
        &plan,
        &best_score.result,
        &oracle,
        candidates,
    );
    if let Some(gate) = &held_out {
        notes
            .entry(String::new())
            .or_default()
            .push(gate.describe(levers.pre_scale));
    }
    let file = to_toml_with_notes(&spec, &notes);
    let rules = model::parse(&file).expect("a suggested file is valid (a test checks)");
    let notes = structured_notes(
        &levers,
        &spec,
        trace,
        &plan,
        &best_score.result,
        &oracle,
        candidates,
    );
    Ok(Suggestion {
        rules,
        file,
        notes,
        levers,
        replay: best_score.result,
        oracle,
        recurring,
        sizing,
        candidates,
        within_limit,
    })
}

/// The last [`HOLD_OUT_SHARE`] of the learning trace's whole days (at least one): what the
/// seasonal schedules are checked on before they are kept.
pub const HOLD_OUT_SHARE: f64 = 1.0 / 3.0;

/// What the hold-out gate found.
#[derive(Debug, Clone, Copy)]
struct HoldOut {
    days: usize,
    /// The penalized cost with the schedules and without, on the held-out days (fen).
    with_fen: i64,
    without_fen: i64,
    paid: bool,
}

impl HoldOut {
    fn describe(&self, kept: bool) -> String {
        format!(
            "Hold-out check: on the trace's last {} days replayed alone, the schedules {} ({} with them, {} for the best rules without, actions priced in){}.",
            self.days,
            if self.paid { "paid" } else { "did not pay" },
            Money::from_fen(self.with_fen),
            Money::from_fen(self.without_fen),
            if kept { "" } else { ": left out" }
        )
    }
}

/// Replays `with` (levers with schedules) and `without` (the best without) on the last days
/// of `trace` (see [`HOLD_OUT_SHARE`]); the schedules pay when, within the shortfall limit,
/// they cost less (each action priced as in the search). A trace of under 3 days has no
/// hold-out: the schedules are kept as the search chose.
fn hold_out_gate(
    trace: &Trace,
    entry: &PriceEntry,
    plan: &Plan<'_>,
    (with, without): (&Levers, &Levers),
    limit_pct: f64,
    action_fen: i64,
) -> Result<HoldOut, CostError> {
    let days = trace.minutes() / 1_440;
    let held = ((days as f64 * HOLD_OUT_SHARE).floor() as usize).max(1);
    if days < 3 {
        return Ok(HoldOut {
            days: 0,
            with_fen: 0,
            without_fen: 0,
            paid: true,
        });
    }
    let from = trace.minutes() - held * 1_440;
    let part = trace.tail(from).expect("the hold-out is within the trace");
    let options = ReplayOptions {
        start_ms: plan.options.replay.start_ms + from as i64 * 60_000,
        ..plan.options.replay
    };
    let price = pricing(entry, &options);
    let key = |levers: &Levers| -> Result<(bool, i64), CostError> {
        let mut policy = RulesPolicy::new("rules", build(levers, plan), Some(price.clone()));
        let result = replay(&part, &mut policy, entry, &options)?.result;
        let scored = Scored::new(result, limit_pct, action_fen, 0, None);
        Ok((scored.key.0, scored.key.2))
    };
    let with = key(with)?;
    let without = key(without)?;
    Ok(HoldOut {
        days: held,
        with_fen: with.1,
        without_fen: without.1,
        paid: with < without,
    })
}

/// Load the trace has not shown, built from its last day (its own noise): a peak at four
/// times the level, ramped up over an hour, held 12 hours and dropped at once (a festival's
/// end); and a job at four times the level that runs exactly two paid units and stops (a
/// batch rented by the unit). What each candidate pays on them is added to its cost, so the
/// search does not pick, between rules that cost the same on the trace, the one that holds
/// a peak's GPUs for paid units after it has gone (releases newest first, each only at the
/// end of its unit, can cascade over hours after a large drop).
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
            with(&mut values(GRID.target_pct, &[]), &|l, v| l.target_pct = v)
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

/// The lever values the trace's noise proposes beyond the grid (see [`noise`]), on steady
/// load: its windows, deadbands, sustains and overloads. (On load with a shape, the noise
/// measured is mostly the shape: its deadbands fitted the learning half and lost on the
/// next, so the grid alone is searched there.)
#[derive(Debug, Clone, Default)]
struct Extra {
    stabilization_minutes: Vec<u32>,
    sustain_minutes: Vec<u32>,
    overload_gpus: Vec<u32>,
    deadband_gpus: Vec<u32>,
}

impl Extra {
    fn of(noise: &Noise, steady: bool) -> Extra {
        if !steady {
            return Extra::default();
        }
        Extra {
            stabilization_minutes: noise.windows(),
            sustain_minutes: noise.sustains(),
            overload_gpus: noise.overloads(),
            deadband_gpus: noise.deadbands(),
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
fn structured_notes(
    levers: &Levers,
    rules: &spec::RuleSet,
    trace: &Trace,
    plan: &Plan<'_>,
    result: &ReplayResult,
    oracle: &ReplayResult,
    candidates: u32,
) -> Vec<SuggestNote> {
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
        },
    ];
    if result.shortfall_pct > options.max_shortfall_pct {
        out.push(SuggestNote::OverLimit {
            shortfall_pct: result.shortfall_pct,
            max_shortfall_pct: options.max_shortfall_pct,
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

fn unit_word(overlay: OverlayMode) -> &'static str {
    match paid_unit(overlay) {
        PaidUnit::Hour => "hour",
        PaidUnit::Day => "day",
        PaidUnit::Week => "week",
    }
}

#[allow(clippy::too_many_lines, reason = "one note per finding")]
fn notes(
    levers: &Levers,
    rules: &spec::RuleSet,
    trace: &Trace,
    plan: &Plan<'_>,
    result: &ReplayResult,
    oracle: &ReplayResult,
    candidates: u32,
) -> Notes {
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
            "{:.1} actions a day: the cheapest of {candidates} rule sets replayed, kept within {}% of",
            result.actions_per_day,
            100.0 * SAFETY
        ),
        "the limit on this trace to leave room for load it has not seen.".to_string(),
        "Edit freely, then check a change with `ebb replay --trace … --rules this-file`."
            .to_string(),
    ];
    if result.shortfall_pct > options.max_shortfall_pct {
        header.push(format!(
            "No rule set tried stayed within the limit: this is the one with the least shortfall ({:.2}%).",
            result.shortfall_pct
        ));
    }
    if plan.sizing.is_queue() {
        header.extend(queue::header(plan.sizing, plan.gpus_per_node));
    }
    let noise = &plan.noise;
    header.push(format!("Measured on this trace: {}.", noise.describe()));
    if noise.steady && !plan.sizing.is_queue() {
        header.push(format!(
            "Steady load (median {:.1} GPUs, spread within {}% of the mean, no outliers): every action is a flap,",
            noise.median_gpus,
            100.0 * noise::STEADY_CV
        ));
        header.push(format!(
            "so the rules were kept to {} actions a day or fewer on it (the window and deadband below come from the noise).",
            noise::STEADY_ACTIONS_PER_DAY
        ));
    }
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
                "max {}: ten times the trace's peak, so a peak it did not show is not clipped; lower it to",
                rules.limits.max_gpus
            ),
            "the most you would pay for, or add budget_per_hour (yuan), which no rule can break."
                .to_string(),
        ]
    };
    notes.insert("limits".to_string(), limits);
    let mut scale_in = vec![
        format!(
            "force = false: a surplus GPU goes only in the last {} of the {unit} it has paid for,",
            spec::counted(levers.release_window_minutes, "minute", "minutes")
        ),
        "newest first: releasing it earlier saves nothing, and a GPU kept to the end of its paid"
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
