//! The billing model applied to a replay's held series.
//!
//! Layers are stacked from the bottom: layer `L` is held in the minutes where at least `L`
//! GPUs are held, in contiguous runs. Releases take the newest GPU first, so layer `L` is
//! one GPU's history and layer billing equals per-GPU billing. On the overlay each run pays
//! per started unit (hour, day or week; spot per started hour at the price in force when
//! the hour starts): a GPU released and rented again within its hour starts a new run and
//! pays again.
//!
//! The base is ebb-cost's optimum rule applied to these run costs: `B` subscribed layers
//! (one subscription over the trace is `sub(H)`, `H` the trace's started hours, whole terms:
//! a month is 730 hours, rounded up) plus the overlay cost of every layer above `B`, with
//! `B` minimizing the total exactly (the smallest on a tie). A plan subscribes the bottom
//! layers, so `B` is chosen over `0..=peak` rather than layer by layer: the two agree
//! whenever a higher layer's overlay costs no more than a lower one's, which holds unless
//! the higher layer is broken into more, shorter runs (a flapping top); then the plan is
//! what a real pool could buy. `ebb_cost::optimal_base` itself takes an hourly demand
//! series, which cannot say that a run shorter than an hour, or a re-rent within the hour,
//! pays a unit of its own, so the per-layer costs are computed here and the prices, the
//! subscription and the money come from `ebb-cost`.

use ebb_cost::{CostError, Money, OverlayMode, PriceEntry, Priced, Term, subscription_for};

/// How the held series is paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BillingPlan {
    /// The base's subscription term.
    pub term: Term,
    /// How GPUs above the base are paid.
    pub overlay: OverlayMode,
    /// The catalog hour of minute 0 (the spot series' clock).
    pub start_hour: i64,
}

/// Minutes in one paid unit of `overlay`.
pub fn unit_minutes(overlay: OverlayMode) -> u32 {
    match overlay {
        OverlayMode::Hour | OverlayMode::Spot => 60,
        OverlayMode::Day => 24 * 60,
        OverlayMode::Week => 7 * 24 * 60,
    }
}

/// What the held series costs under the best base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bill {
    /// Layers on subscription.
    pub base_gpus: u32,
    /// `base_gpus · sub(H)`.
    pub base_cost: Money,
    /// The overlay units of every layer above the base.
    pub overlay_cost: Money,
    /// Their sum.
    pub cost: Money,
    /// `base_gpus` times the trace's started hours.
    pub subscribed_gpu_hours: u64,
    /// Overlay units bought above the base, times their hours.
    pub overlay_gpu_hours: u64,
    /// One GPU subscribed over the trace.
    pub subscription_per_gpu: Money,
    /// Per layer from the bottom (index 0 is layer 1): its overlay units and their cost.
    pub layers: Vec<LayerBill>,
}

/// One layer on the overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LayerBill {
    /// Contiguous runs.
    pub runs: u64,
    /// Units bought.
    pub units: u64,
    /// What they cost, in fen.
    pub cost_fen: i64,
}

/// Bills `held` (GPUs held each minute from minute 0) under the best base.
pub fn bill_held(held: &[u32], entry: &PriceEntry, plan: &BillingPlan) -> Result<Bill, CostError> {
    bill_held_base(held, entry, plan, None)
}

/// Bills `held` with `base` GPUs subscribed, or the best base when `None`.
pub fn bill_held_base(
    held: &[u32],
    entry: &PriceEntry,
    plan: &BillingPlan,
    base: Option<u32>,
) -> Result<Bill, CostError> {
    let unit = unit_minutes(plan.overlay);
    let unit_price = plan.overlay.price(entry)?.fen();
    let hours = held.len().div_ceil(60);
    let sub = subscription_for(plan.term, entry, hours)?;
    let peak = held.iter().copied().max().unwrap_or(0) as usize;

    let spot_at = |minute: u32| -> i64 {
        let hour = plan.start_hour.saturating_add(i64::from(minute / 60));
        entry.spot_price_at(hour).map_or(unit_price, Money::fen)
    };
    let mut layers = vec![LayerBill::default(); peak];
    let mut wide = vec![0i128; peak];
    let mut run_start = vec![0u32; peak];
    let mut close = |layer: usize, start: u32, end: u32, layers: &mut [LayerBill]| {
        let units = (end - start).div_ceil(unit);
        layers[layer].runs += 1;
        layers[layer].units += u64::from(units);
        wide[layer] += if plan.overlay == OverlayMode::Spot {
            (0..units)
                .map(|k| i128::from(spot_at(start + k * unit)))
                .sum::<i128>()
        } else {
            i128::from(units) * i128::from(unit_price)
        };
    };
    let mut before = 0usize;
    for (t, &now) in held.iter().enumerate() {
        let now = now as usize;
        let t = t as u32;
        if now > before {
            run_start[before..now].fill(t);
        } else {
            for (layer, &start) in run_start.iter().enumerate().take(before).skip(now) {
                close(layer, start, t, &mut layers);
            }
        }
        before = now;
    }
    let end = held.len() as u32;
    for (layer, &start) in run_start.iter().enumerate().take(before) {
        close(layer, start, end, &mut layers);
    }
    for (layer, fen) in layers.iter_mut().zip(&wide) {
        layer.cost_fen = i64::try_from(*fen).map_err(|_| CostError::Overflow)?;
    }

    // cost(B) = B · sub + the overlay of layers B+1..=peak, from the top down.
    let sub_fen = i128::from(sub.fen());
    let mut above: i128 = 0;
    let mut best = (i128::from(peak as u32) * sub_fen, peak);
    for base in (0..peak).rev() {
        above += wide[base];
        let cost = i128::from(base as u32) * sub_fen + above;
        if cost <= best.0 {
            best = (cost, base);
        }
    }
    let (base, layers_from) = match base {
        Some(base) => (base as usize, (base as usize).min(peak)),
        None => (best.1, best.1),
    };
    let overlay_fen: i128 = wide[layers_from..].iter().sum();
    let overlay_units: u64 = layers[layers_from..].iter().map(|layer| layer.units).sum();
    let to_money = |fen: i128| {
        i64::try_from(fen)
            .map(Money::from_fen)
            .map_err(|_| CostError::Overflow)
    };
    let base_cost = to_money(i128::from(base as u32) * sub_fen)?;
    let overlay_cost = to_money(overlay_fen)?;
    Ok(Bill {
        base_gpus: base as u32,
        base_cost,
        overlay_cost,
        cost: base_cost
            .checked_add(overlay_cost)
            .ok_or(CostError::Overflow)?,
        subscribed_gpu_hours: base as u64 * hours as u64,
        overlay_gpu_hours: overlay_units * u64::from(unit / 60),
        subscription_per_gpu: sub,
        layers,
    })
}
