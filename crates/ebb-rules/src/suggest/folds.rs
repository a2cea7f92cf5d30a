//! Rolling-origin validation over the learning trace: what a lever must hold across the
//! days it learns from before it is suggested.
//!
//! - The trace is cut into **folds** of whole days ([`bounds`]: up to [`MAX_FOLDS`] of at
//!   least [`FOLD_DAYS`] days; a trace too short for two is one fold). Every candidate is
//!   replayed once over the whole trace, and its cost (the overlay its held GPUs paid in the
//!   fold, the base's share of the fold's minutes, each action and flap priced), shortfall
//!   and flaps are read fold by fold ([`fold_costs`]).
//! - A candidate is **within the limit** only if the whole trace is within the search's
//!   share of it and every fold within the limit itself (a rule set that is short on one
//!   stretch of days and makes it up on the others is not).
//! - The levers chosen are those with the least **mean regret over the folds**
//!   ([`mean_ratios`]: in each fold a candidate's cost over the cheapest candidate's there,
//!   averaged), not the least total: a lever that wins big on one fold and loses on the
//!   others is not chosen over one that is near the best on every fold.
//! - **Seasonal schedules** ([`seasonal_gate`]) are checked by rolling origin: at the start
//!   of each fold after the first, the recurring steps are found from the days before it
//!   only, and the rules with their schedules and the best rules without any are each
//!   replayed on the fold alone. The schedules stay only if they cost less over those folds
//!   together and on at least half of them.

use super::{Levers, Plan, build, seasonal::recurring_steps};
use crate::replay::baselines::pricing;
use crate::replay::billing::{BillingPlan, PaidRun, bill_runs_base};
use crate::replay::trace::Trace;
use crate::replay::{Replay, ReplayOptions, replay};
use crate::rules_policy::RulesPolicy;
use ebb_cost::{CostError, Money, PriceEntry};

/// The shortest fold, in days.
pub const FOLD_DAYS: usize = 3;
/// The most folds.
pub const MAX_FOLDS: usize = 5;

const DAY: usize = 1_440;

/// The folds of a trace of `minutes`: `(from, to)` minute ranges, whole days, in order,
/// covering it (the last takes the part day left over). One fold (the whole trace) when it
/// is shorter than two folds.
pub fn bounds(minutes: usize) -> Vec<(usize, usize)> {
    let days = minutes / DAY;
    if days < 2 * FOLD_DAYS {
        return vec![(0, minutes)];
    }
    let folds = (days / FOLD_DAYS).min(MAX_FOLDS);
    let each = days / folds;
    (0..folds)
        .map(|k| {
            let to = if k + 1 == folds {
                minutes
            } else {
                (k + 1) * each * DAY
            };
            (k * each * DAY, to)
        })
        .collect()
}

/// One fold of one candidate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FoldCost {
    /// What it cost there, actions and flaps priced in (fen).
    pub fen: i64,
    /// Its shortfall there, % of the fold's demand.
    pub shortfall_pct: f64,
}

/// What the folds' costs are priced with.
pub(super) struct Prices<'a> {
    pub entry: &'a PriceEntry,
    pub options: &'a ReplayOptions,
    pub action_fen: i64,
    pub flap_fen: i64,
    pub flap_gpu_fen: i64,
}

impl Prices<'_> {
    /// `actions`, flaps of `flapped` and GPUs in them, priced.
    pub fn churn(&self, actions: i64, (flaps, gpus): (usize, usize)) -> i64 {
        self.action_fen
            .saturating_mul(actions)
            .saturating_add(self.flap_fen.saturating_mul(flaps as i64))
            .saturating_add(self.flap_gpu_fen.saturating_mul(gpus as i64))
    }
}

/// A replay (its series, its GPUs' runs, its whole-trace bill and its flaps) read fold by
/// fold; `extra_fen` (the stress loads' cost) is shared out evenly. With one fold, the
/// whole trace's figures.
pub(super) fn fold_costs(
    trace: &Trace,
    replayed: &Replay,
    folds: &[(usize, usize)],
    prices: &Prices<'_>,
    extra_fen: i64,
) -> Result<Vec<FoldCost>, CostError> {
    let (series, runs, bill) = (&replayed.series, &replayed.runs, &replayed.bill);
    let flapped = &replayed.flapped;
    let demand = trace.demand();
    let total = demand.len().max(1) as f64;
    let share = extra_fen / folds.len().max(1) as i64;
    let mut out = Vec::with_capacity(folds.len());
    for &(from, to) in folds {
        let money = if folds.len() == 1 {
            bill.cost.fen()
        } else {
            let plan = BillingPlan {
                term: prices.options.term,
                overlay: prices.options.overlay,
                start_hour: (prices.options.start_ms + from as i64 * 60_000).div_euclid(3_600_000),
            };
            // Each GPU's run within the fold, from the fold's start (a GPU held across it
            // pays from there, as its own run would).
            let (first, last) = (from as u32, to as u32);
            let part_runs: Vec<PaidRun> = runs
                .iter()
                .filter(|run| run.start_minute < last && run.end_minute > first)
                .map(|run| PaidRun {
                    start_minute: run.start_minute.max(first) - first,
                    end_minute: run.end_minute.min(last) - first,
                    position: run.position,
                })
                .collect();
            let part = bill_runs_base(
                &part_runs,
                to - from,
                prices.entry,
                &plan,
                Some(bill.base_gpus),
            )?;
            let base_share = bill.base_cost.fen() as f64 * (to - from) as f64 / total;
            part.overlay_cost.fen() + base_share.round() as i64
        };
        let actions = (from..to).filter(|&t| series.decision(t) != 0).count() as i64;
        let churn = prices.churn(
            actions,
            super::flaps::count_in(flapped, from as u32, to as u32),
        );
        let (mut short, mut asked) = (0.0, 0.0);
        for (busy, &ready) in demand[from..to].iter().zip(&series.ready[from..to]) {
            short += (busy - f64::from(ready)).max(0.0);
            asked += busy;
        }
        out.push(FoldCost {
            fen: money.saturating_add(churn).saturating_add(share),
            shortfall_pct: if asked > 0.0 {
                100.0 * short / asked
            } else {
                0.0
            },
        });
    }
    Ok(out)
}

/// Each candidate's mean over the folds of its cost there over the least any candidate
/// paid there (1.0: the cheapest on every fold). `costs[c][f]`: candidate `c`, fold `f`.
pub fn mean_ratios(costs: &[Vec<i64>]) -> Vec<f64> {
    let folds = costs.iter().map(Vec::len).min().unwrap_or(0);
    let least: Vec<i64> = (0..folds)
        .map(|f| costs.iter().map(|c| c[f]).min().unwrap_or(0).max(1))
        .collect();
    costs
        .iter()
        .map(|c| {
            if folds == 0 {
                return 1.0;
            }
            (0..folds)
                .map(|f| c[f] as f64 / least[f] as f64)
                .sum::<f64>()
                / folds as f64
        })
        .collect()
}

/// What the seasonal gate found.
#[derive(Debug, Clone, Copy)]
pub(super) struct Gate {
    /// Folds checked (0: the trace is too short for any; the schedules are kept as found).
    pub folds: usize,
    /// Of them, those where the schedules cost less.
    pub won: usize,
    /// The priced cost over the folds checked, with the schedules and without (fen).
    pub with_fen: i64,
    pub without_fen: i64,
    pub paid: bool,
}

impl Gate {
    pub fn describe(&self, kept: bool) -> String {
        format!(
            "Rolling-origin check: on {} of the trace's days replayed alone (each with the steps found in the days before it), the schedules {} on {} ({} with them, {} for the best rules without, actions and flaps priced in){}.",
            if self.folds == 1 {
                "the last stretch".to_string()
            } else {
                format!("{} stretches", self.folds)
            },
            if self.paid { "paid" } else { "did not pay" },
            if self.folds == 1 {
                "it".to_string()
            } else {
                format!("{} of them", self.won)
            },
            Money::from_fen(self.with_fen),
            Money::from_fen(self.without_fen),
            if kept { "" } else { ": left out" }
        )
    }
}

/// Where the gate's test stretches start and end: each fold after the first, or, on a
/// trace of one fold of at least 3 days, its last third of days.
fn origins(minutes: usize) -> Vec<(usize, usize)> {
    let folds = bounds(minutes);
    if folds.len() > 1 {
        return folds[1..].to_vec();
    }
    let days = minutes / DAY;
    if days < 3 {
        return Vec::new();
    }
    let held = (days / 3).max(1);
    vec![(minutes - held * DAY, minutes)]
}

/// The rolling-origin gate for `with` (levers with schedules) against `without`.
pub(super) fn seasonal_gate(
    trace: &Trace,
    plan: &Plan<'_>,
    (with, without): (&Levers, &Levers),
    limit_pct: f64,
    prices: &Prices<'_>,
) -> Result<Gate, CostError> {
    let stretches = origins(trace.minutes());
    let mut gate = Gate {
        folds: stretches.len(),
        won: 0,
        with_fen: 0,
        without_fen: 0,
        paid: true,
    };
    if stretches.is_empty() {
        return Ok(gate);
    }
    let (mut with_over, mut without_over) = (false, false);
    for (from, to) in stretches {
        let part = trace
            .tail(from)
            .and_then(|rest| rest.head(to - from))
            .expect("a stretch is within the trace");
        let options = ReplayOptions {
            start_ms: prices.options.start_ms + from as i64 * 60_000,
            ..*prices.options
        };
        let steps = recurring_steps(
            &trace.demand()[..from],
            prices.options.start_ms,
            prices.options.warmup_minutes,
        );
        let seen = Plan {
            recurring: &steps,
            ..*plan
        };
        let price = pricing(prices.entry, &options);
        let run = |levers: &Levers| -> Result<(bool, i64), CostError> {
            let mut policy = RulesPolicy::new("rules", build(levers, &seen), Some(price.clone()))
                .with_node_gpus(plan.node_gpus());
            let replayed = replay(&part, &mut policy, prices.entry, &options)?;
            let result = replayed.result;
            let churn = prices.churn(
                i64::from(result.actions),
                super::flaps::count_in(&replayed.flapped, 0, u32::MAX),
            );
            let fen = result.cost_fen.saturating_add(churn);
            Ok((result.shortfall_pct > limit_pct, fen))
        };
        let (a, b) = (run(with)?, run(without)?);
        with_over |= a.0;
        without_over |= b.0;
        gate.with_fen += a.1;
        gate.without_fen += b.1;
        if a < b {
            gate.won += 1;
        }
    }
    gate.paid =
        (with_over, gate.with_fen) < (without_over, gate.without_fen) && 2 * gate.won >= gate.folds;
    Ok(gate)
}
