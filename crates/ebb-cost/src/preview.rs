//! The live preview behind the slider: what a pool costs per hour, day and month at a
//! given GPU count, and what a change from one count to another does to it.
//!
//! Figures are run rates: the pool held at that count without a break. A subscription's
//! hour is `price / term hours`, a day's or week's hour is `price / 24` or `/ 168`; each
//! figure is rounded half away from zero to the fen once, base and overlay separately, and
//! the total is their sum (so the split always adds up).

use crate::catalog::PriceEntry;
use crate::modes::{PoolPlan, Priced};
use crate::money::Money;
use crate::{CostError, HOURS_PER_MONTH};
use serde::Serialize;

/// One cost as a rate over three periods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Rates {
    /// Per hour.
    #[serde(rename = "per_hour_fen")]
    pub per_hour: Money,
    /// Per day (24 hours).
    #[serde(rename = "per_day_fen")]
    pub per_day: Money,
    /// Per month (730 hours).
    #[serde(rename = "per_month_fen")]
    pub per_month: Money,
}

/// A pool's run rate at one count, split by mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct RunRate {
    /// GPUs held.
    pub gpus: u32,
    /// GPUs paid by the overlay: `max(0, gpus - base)`.
    pub overlay_gpus: u32,
    /// The subscribed base (paid even when fewer GPUs are held).
    pub base: Rates,
    /// The overlay.
    pub overlay: Rates,
    /// `base + overlay`.
    pub total: Rates,
}

/// A change from `from_gpus` to `to_gpus` under one plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Preview {
    /// The plan the figures are for.
    pub plan: PoolPlan,
    /// The pool before the change.
    pub before: RunRate,
    /// The pool after the change.
    pub after: RunRate,
    /// `after.total - before.total` (negative when the change saves money).
    pub delta: Rates,
}

/// What the pool costs at `gpus` under `plan`.
pub fn run_rate(entry: &PriceEntry, plan: &PoolPlan, gpus: u32) -> Result<RunRate, CostError> {
    let base_price = plan.term.price(entry)?;
    let overlay_price = plan.overlay.price(entry)?;
    let overlay_gpus = gpus.saturating_sub(plan.base_gpus);
    let base = rates(base_price, plan.base_gpus, plan.term.hours())?;
    let overlay = rates(overlay_price, overlay_gpus, plan.overlay.unit_hours())?;
    Ok(RunRate {
        gpus,
        overlay_gpus,
        base,
        overlay,
        total: Rates {
            per_hour: add(base.per_hour, overlay.per_hour)?,
            per_day: add(base.per_day, overlay.per_day)?,
            per_month: add(base.per_month, overlay.per_month)?,
        },
    })
}

/// The slider's preview: the pool at `from_gpus` and at `to_gpus`, and the difference.
pub fn preview(
    entry: &PriceEntry,
    plan: &PoolPlan,
    from_gpus: u32,
    to_gpus: u32,
) -> Result<Preview, CostError> {
    let before = run_rate(entry, plan, from_gpus)?;
    let after = run_rate(entry, plan, to_gpus)?;
    let sub = |a: Money, b: Money| a.checked_sub(b).ok_or(CostError::Overflow);
    Ok(Preview {
        plan: *plan,
        before,
        after,
        delta: Rates {
            per_hour: sub(after.total.per_hour, before.total.per_hour)?,
            per_day: sub(after.total.per_day, before.total.per_day)?,
            per_month: sub(after.total.per_month, before.total.per_month)?,
        },
    })
}

/// `count` GPUs at `price` per `unit_hours`, over an hour, a day and a month.
fn rates(price: Money, count: u32, unit_hours: u32) -> Result<Rates, CostError> {
    let over = |period_hours: u32| {
        price
            .scaled(
                i128::from(count) * i128::from(period_hours),
                i128::from(unit_hours),
            )
            .ok_or(CostError::Overflow)
    };
    Ok(Rates {
        per_hour: over(1)?,
        per_day: over(24)?,
        per_month: over(HOURS_PER_MONTH)?,
    })
}

fn add(a: Money, b: Money) -> Result<Money, CostError> {
    a.checked_add(b).ok_or(CostError::Overflow)
}
