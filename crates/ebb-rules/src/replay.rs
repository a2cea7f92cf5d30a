//! Replay: a policy (the rules, a baseline, the oracle) against a trace, minute by minute,
//! with PRODUCT.md's replay model, and the held series priced by its billing model.
//!
//! - [`trace`]: the CSV `minute,demand[,metric…]`, errors naming the line and column;
//!   [`stuck`]: a queue trace's stuck jobs, which are not demand;
//! - [`sim`]: the minute loop (warmup; a scale-in gives back the GPUs whose paid unit ends,
//!   as the console's placement does, and keeps the others to their unit's end);
//! - [`billing`]: each GPU's paid run, paid units, the best base;
//! - [`oracle`] and [`baselines`]: the policies a result is read against;
//! - [`families`]: seeded traces of the seed's demand shapes;
//! - [`spot`]: a spot mix with interruptions, replacements and the breaker, and the
//!   seeded spot market.
//!
//! [`replay`] runs one policy and returns the `--json` figures
//! ([`ebb_wire::replay::ReplayResult`]) and the series; [`replay_spot`] the same with some
//! GPUs on spot; [`series_csv`] writes the series.

pub mod baselines;
pub mod billing;
pub mod families;
pub mod oracle;
pub mod sim;
pub mod spot;
pub mod stuck;
pub mod trace;

use crate::policy::Policy;
use billing::{Bill, BillingPlan, PaidRun, bill_runs_base, unit_minutes};
use ebb_cost::{CostError, OverlayMode, PriceEntry, Term};
use ebb_wire::replay::{ReplayGpuHours, ReplayResult};
use sim::{Outcome, Series, SimOptions, simulate};
use spot::{SpotPrices, SpotReplay, bill_spot};
use std::fmt::Write as _;
use trace::Trace;

/// How a replay runs and is paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayOptions {
    /// Minutes from a scale-out's order to its GPUs being ready (default 5).
    pub warmup_minutes: u32,
    /// The wall-clock instant of minute 0 (schedules; the spot series' hour).
    pub start_ms: i64,
    /// The base's subscription term.
    pub term: Term,
    /// How GPUs above the base are paid.
    pub overlay: OverlayMode,
}

impl Default for ReplayOptions {
    fn default() -> ReplayOptions {
        ReplayOptions {
            warmup_minutes: 5,
            start_ms: 0,
            term: Term::Month,
            overlay: OverlayMode::Hour,
        }
    }
}

/// One replay: the figures, the bill behind them, and the minute series.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// What `--json` prints.
    pub result: ReplayResult,
    /// The bill, layer by layer.
    pub bill: Bill,
    /// The pool each minute.
    pub series: Series,
    /// Each GPU not on spot's paid run, as the bill charges it.
    pub runs: Vec<PaidRun>,
    /// The GPUs undone inside their paid unit: `(the minute of the action undone, the
    /// GPU)`, sorted ([`sim::flapped_runs`]).
    pub flapped: Vec<(u32, u32)>,
}

/// Runs `policy` over `trace` and prices what it held under `entry`'s prices.
pub fn replay(
    trace: &Trace,
    policy: &mut dyn Policy,
    entry: &PriceEntry,
    options: &ReplayOptions,
) -> Result<Replay, CostError> {
    let outcome = simulate(
        trace,
        policy,
        &SimOptions {
            warmup_minutes: options.warmup_minutes,
            start_ms: options.start_ms,
            unit_minutes: unit_minutes(options.overlay),
        },
    );
    let plan = BillingPlan {
        term: options.term,
        overlay: options.overlay,
        start_hour: options.start_ms.div_euclid(3_600_000),
    };
    let bill = bill_runs_base(&outcome.runs, trace.minutes(), entry, &plan, None)?;
    let result = figures(policy.name(), trace, &outcome, &bill);
    Ok(Replay {
        result,
        bill,
        series: outcome.series,
        runs: outcome.runs,
        flapped: outcome.flapped,
    })
}

/// Runs `policy` over `trace` with some GPUs on spot per `spot`: the GPUs not on spot are
/// billed per started unit of the overlay from each one's own rental (`spot.base`
/// subscribed, or the best base when 0, as [`replay`] bills them), the spot ones per started hour at the spot price in force; the figures
/// add the interruptions, the spot hours and their cost (part of `cost_fen`). With no GPU
/// on spot and none taken back it gives what [`replay`] gives.
pub fn replay_spot(
    trace: &Trace,
    policy: &mut dyn Policy,
    entry: &PriceEntry,
    options: &ReplayOptions,
    spot: &SpotReplay,
) -> Result<Replay, CostError> {
    let plan = BillingPlan {
        term: options.term,
        overlay: options.overlay,
        start_hour: options.start_ms.div_euclid(3_600_000),
    };
    let prices = SpotPrices::new(trace, entry, plan.start_hour);
    let run = spot::simulate(trace, policy, options, &prices, spot);
    let base = (spot.base > 0).then_some(spot.base);
    let bill = bill_runs_base(&run.on_demand_runs, trace.minutes(), entry, &plan, base)?;
    let spot_bill = bill_spot(&run.spot_runs, &prices, entry.hour)?;
    let mut result = figures(policy.name(), trace, &run.outcome, &bill);
    result.cost_fen = bill
        .cost
        .checked_add(spot_bill.cost)
        .ok_or(CostError::Overflow)?
        .fen();
    result.interruptions = run.interruptions;
    result.spot_gpu_hours = spot_bill.gpu_hours;
    result.spot_cost_fen = spot_bill.cost.fen();
    Ok(Replay {
        result,
        bill,
        series: run.outcome.series,
        runs: run.on_demand_runs,
        flapped: run.outcome.flapped,
    })
}

/// Rounded for people and JSON: the float noise of a month of sums goes.
fn round_to(value: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (value * scale).round() / scale
}

fn figures(policy: &str, trace: &Trace, outcome: &Outcome, bill: &Bill) -> ReplayResult {
    let days = trace.minutes() as f64 / 1440.0;
    let shortfall_pct = if outcome.demand_gpu_minutes > 0.0 {
        100.0 * outcome.shortfall_gpu_minutes / outcome.demand_gpu_minutes
    } else {
        0.0
    };
    ReplayResult {
        policy: policy.to_string(),
        cost_fen: bill.cost.fen(),
        base_gpus: bill.base_gpus,
        gpu_hours: ReplayGpuHours {
            subscribed: bill.subscribed_gpu_hours,
            overlay: bill.overlay_gpu_hours,
        },
        shortfall_gpu_minutes: round_to(outcome.shortfall_gpu_minutes, 3),
        shortfall_pct: round_to(shortfall_pct, 3),
        actions: outcome.actions,
        actions_per_day: round_to(f64::from(outcome.actions) / days, 2),
        peak_held_gpus: outcome.peak_held_gpus,
        interruptions: 0,
        spot_gpu_hours: 0,
        spot_cost_fen: 0,
    }
}

/// The series as CSV: `minute,demand,ready,held,utilization,decision`, the decision being
/// the change of the held count that minute (`+3` ordered, `-2` released, `0` none).
pub fn series_csv(trace: &Trace, series: &Series) -> String {
    let mut out = String::with_capacity(trace.minutes() * 32);
    out.push_str("minute,demand,ready,held,utilization,decision\n");
    for (t, demand) in trace.demand().iter().enumerate() {
        let decision = series.decision(t);
        let _ = writeln!(
            out,
            "{t},{demand},{},{},{:.1},{}{decision}",
            series.ready[t],
            series.held[t],
            series.utilization_pct[t],
            if decision > 0 { "+" } else { "" },
        );
    }
    out
}
