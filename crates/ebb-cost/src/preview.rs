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

/// What the pool costs at `gpus` under `plan`, every GPU in `entry`'s region.
pub fn run_rate(entry: &PriceEntry, plan: &PoolPlan, gpus: u32) -> Result<RunRate, CostError> {
    placed_run_rate(entry, plan, &[(entry, gpus)])
}

/// What the pool costs with `held` GPUs, each priced in its own region: `held` is
/// `(the region's entry, GPUs)` oldest first. The subscribed base is priced at `base`'s
/// entry and covers the oldest GPUs (as [`crate::month_spend`] lays leases on base slots in
/// grant order); every GPU above it pays its own region's overlay price. The overlay's
/// figures are summed exactly and rounded once.
pub fn placed_run_rate(
    base: &PriceEntry,
    plan: &PoolPlan,
    held: &[(&PriceEntry, u32)],
) -> Result<RunRate, CostError> {
    let base_price = plan.term.price(base)?;
    let base_rates = rates(base_price, plan.base_gpus, plan.term.hours())?;
    let overlay = overlay_units(base, plan, held)?;
    let overlay_rates = rates(overlay.per_unit, 1, plan.overlay.unit_hours())?;
    Ok(RunRate {
        gpus: overlay.gpus,
        overlay_gpus: overlay.overlay_gpus,
        base: base_rates,
        overlay: overlay_rates,
        total: Rates {
            per_hour: add(base_rates.per_hour, overlay_rates.per_hour)?,
            per_day: add(base_rates.per_day, overlay_rates.per_day)?,
            per_month: add(base_rates.per_month, overlay_rates.per_month)?,
        },
    })
}

/// The GPUs above the base and what they pay per paid unit, together.
pub(crate) struct OverlayUnits {
    /// Every GPU held.
    pub gpus: u32,
    /// Those above the base.
    pub overlay_gpus: u32,
    /// Σ the overlay's unit price × GPUs, over the GPUs above the base.
    pub per_unit: Money,
}

/// The base covers the oldest GPUs of `held`; every GPU above it pays its region's overlay
/// price. An overlay a region does not offer fails only when a GPU there pays it; with no
/// GPU above the base, `base`'s region must still offer it (the pool would pay it next).
pub(crate) fn overlay_units(
    base: &PriceEntry,
    plan: &PoolPlan,
    held: &[(&PriceEntry, u32)],
) -> Result<OverlayUnits, CostError> {
    let mut units = OverlayUnits {
        gpus: 0,
        overlay_gpus: 0,
        per_unit: Money::ZERO,
    };
    for &(entry, count) in held {
        let covered = plan.base_gpus.saturating_sub(units.gpus).min(count);
        units.gpus = units.gpus.checked_add(count).ok_or(CostError::Overflow)?;
        let above = count - covered;
        if above == 0 {
            continue;
        }
        units.overlay_gpus += above;
        units.per_unit = plan
            .overlay
            .price(entry)?
            .checked_mul(i64::from(above))
            .and_then(|p| units.per_unit.checked_add(p))
            .ok_or(CostError::Overflow)?;
    }
    if units.overlay_gpus == 0 {
        plan.overlay.price(base)?;
    }
    Ok(units)
}

/// The slider's preview: the pool at `from_gpus` and at `to_gpus`, and the difference.
pub fn preview(
    entry: &PriceEntry,
    plan: &PoolPlan,
    from_gpus: u32,
    to_gpus: u32,
) -> Result<Preview, CostError> {
    placed_preview(entry, plan, &[(entry, from_gpus)], &[(entry, to_gpus)])
}

/// A change from the GPUs `before` to the GPUs `after`, each priced in its region (see
/// [`placed_run_rate`]).
pub fn placed_preview(
    base: &PriceEntry,
    plan: &PoolPlan,
    before: &[(&PriceEntry, u32)],
    after: &[(&PriceEntry, u32)],
) -> Result<Preview, CostError> {
    let before = placed_run_rate(base, plan, before)?;
    let after = placed_run_rate(base, plan, after)?;
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

/// A pool as it is priced: where its base is priced, the GPUs it holds by region (oldest
/// first) and where the next GPUs would be placed. What a count costs then keeps the oldest
/// GPUs held (a release goes newest first) and prices the GPUs beyond them where placement
/// would put them (`more`, in order), any beyond those at `next`.
#[derive(Debug, Clone, PartialEq)]
pub struct PricedPool {
    /// Base, term and overlay.
    pub plan: PoolPlan,
    /// The entry the subscribed base is priced at.
    pub base: PriceEntry,
    /// The GPUs held now, oldest first: the entry of their region, and how many.
    pub held: Vec<(PriceEntry, u32)>,
    /// Where placement would put the next GPUs, in order: the entry of each region and how
    /// many (what the hosts have free now).
    pub more: Vec<(PriceEntry, u32)>,
    /// Where any GPU beyond `more` is priced.
    pub next: PriceEntry,
}

impl PricedPool {
    /// Every GPU, held or to come, in `entry`'s region.
    pub fn single(entry: PriceEntry, plan: PoolPlan) -> PricedPool {
        PricedPool {
            plan,
            base: entry.clone(),
            held: Vec::new(),
            more: Vec::new(),
            next: entry,
        }
    }

    /// The GPUs at a count: the oldest held first, then `more`, then `next`.
    pub fn at(&self, gpus: u32) -> Vec<(&PriceEntry, u32)> {
        let mut left = gpus;
        let mut out = Vec::new();
        for (entry, count) in self.held.iter().chain(&self.more) {
            let take = (*count).min(left);
            if take > 0 {
                out.push((entry, take));
            }
            left -= take;
        }
        if left > 0 {
            out.push((&self.next, left));
        }
        out
    }

    /// What the pool costs at `gpus`.
    pub fn run_rate(&self, gpus: u32) -> Result<RunRate, CostError> {
        placed_run_rate(&self.base, &self.plan, &self.at(gpus))
    }

    /// A change from `from_gpus` to `to_gpus`.
    pub fn preview(&self, from_gpus: u32, to_gpus: u32) -> Result<Preview, CostError> {
        placed_preview(
            &self.base,
            &self.plan,
            &self.at(from_gpus),
            &self.at(to_gpus),
        )
    }
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
