//! The billing model applied to a replay's held series.
//!
//! A replay bills each GPU's own run ([`bill_runs_base`]): the replay gives back the GPUs
//! whose paid unit ends, whichever their place, so the held count's layers are not one
//! GPU's history. [`bill_held`] bills a held count series by its layers (layer `L` held in
//! the minutes where at least `L` GPUs are held, in contiguous runs), which is per-GPU
//! billing for a pool released newest first. On the overlay each run pays
//! per started unit (hour, day or week; spot per started hour at the price in force when
//! the hour starts): a GPU released and rented again within its hour starts a new run and
//! pays again.
//!
//! Layers would bill runs no GPU had (the top layer's closed mid-unit, the lower one's
//! carried on past its unit), so each GPU is billed from its own run, at its place in the
//! pool's stack (a GPU rented takes the lowest place free), which the base covers from the
//! bottom as it covers layers.
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

/// One GPU's paid run on the overlay: held in `[start_minute, end_minute)`, at `position`
/// (0 the bottom) of the pool's stack, the place the base covers when it is below the
/// base. Runs at one position do not overlap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaidRun {
    pub start_minute: u32,
    pub end_minute: u32,
    pub position: u32,
}

/// Bills `held` with `base` GPUs subscribed, or the best base when `None`.
pub fn bill_held_base(
    held: &[u32],
    entry: &PriceEntry,
    plan: &BillingPlan,
    base: Option<u32>,
) -> Result<Bill, CostError> {
    let pricer = Pricer::new(held.len(), entry, plan)?;
    let peak = held.iter().copied().max().unwrap_or(0) as usize;
    let mut layers = Layers::new(peak);
    let mut run_start = vec![0u32; peak];
    let mut before = 0usize;
    for (t, &now) in held.iter().enumerate() {
        let now = now as usize;
        let t = t as u32;
        if now > before {
            run_start[before..now].fill(t);
        } else {
            for (layer, &start) in run_start.iter().enumerate().take(before).skip(now) {
                layers.add(layer, start, t, &pricer);
            }
        }
        before = now;
    }
    let end = held.len() as u32;
    for (layer, &start) in run_start.iter().enumerate().take(before) {
        layers.add(layer, start, end, &pricer);
    }
    layers.settle(&pricer, base)
}

/// Bills GPUs held as `runs` over a trace of `minutes`, each run paid per started unit from
/// its own start, with `base` GPUs subscribed, or the best base when `None`. A subscription
/// covers a count, not a GPU: each minute the `base` oldest GPUs held (by rental, the
/// earlier run first of equals) are covered, and the others are on the overlay. A GPU's
/// place among those held by age only ever falls (a GPU rented later is younger; an older
/// one released moves it down), so each run is on the overlay for a prefix, until its place
/// falls below the base, and pays the started units of that prefix; from then the
/// subscription covers it. A pool released newest first never moves a GPU down (its runs
/// are its layers), so this bills it as [`bill_held_base`] does. `position` is not read.
pub fn bill_runs_base(
    runs: &[PaidRun],
    minutes: usize,
    entry: &PriceEntry,
    plan: &BillingPlan,
    base: Option<u32>,
) -> Result<Bill, CostError> {
    let pricer = Pricer::new(minutes, entry, plan)?;
    let mut order: Vec<u32> = (0..runs.len() as u32)
        .filter(|&k| runs[k as usize].end_minute > runs[k as usize].start_minute)
        .collect();
    order.sort_unstable_by_key(|&k| (runs[k as usize].start_minute, k));
    let mut ends: Vec<u32> = order.clone();
    ends.sort_unstable_by_key(|&k| (runs[k as usize].end_minute, k));
    // Per base B: the overlay's units and fen. A run never covered below its last place
    // pays whole for every base up to that place (a difference array over B); where its
    // place fell from B to B − 1 it pays, for base B, its units until then.
    let mut diff_units: Vec<i128> = vec![0];
    let mut diff_fen: Vec<i128> = vec![0];
    let mut at_units: Vec<i128> = vec![0];
    let mut at_fen: Vec<i128> = vec![0];
    let mut first_place: Vec<usize> = Vec::with_capacity(order.len());
    let mut held: Vec<u32> = Vec::new();
    // Each held run's start, beside `held`: by the hour, day or week a unit's price is one
    // price, so a release's many places fallen are counted in units alone (a tight loop:
    // a large pool releasing its oldest GPUs moves hundreds down each time).
    let mut held_start: Vec<u32> = Vec::new();
    let flat = plan.overlay != OverlayMode::Spot;
    let key = |k: u32| (runs[k as usize].start_minute, k);
    let whole =
        |place: usize, run: PaidRun, diff_units: &mut Vec<i128>, diff_fen: &mut Vec<i128>| {
            let (units, fen) = pricer.run(run.start_minute, run.end_minute);
            diff_units[0] += i128::from(units);
            diff_units[place + 1] -= i128::from(units);
            diff_fen[0] += fen;
            diff_fen[place + 1] -= fen;
        };
    let (mut next_start, mut next_end) = (0usize, 0usize);
    while next_start < order.len() || next_end < ends.len() {
        let end_at = ends
            .get(next_end)
            .map_or(u32::MAX, |&k| runs[k as usize].end_minute);
        let start_at = order
            .get(next_start)
            .map_or(u32::MAX, |&k| runs[k as usize].start_minute);
        if end_at <= start_at {
            let k = ends[next_end];
            next_end += 1;
            let run = runs[k as usize];
            let Ok(at) = held.binary_search_by_key(&key(k), |&h| key(h)) else {
                continue;
            };
            let (end, unit) = (run.end_minute, pricer.unit);
            if flat {
                for (count, &start) in at_units[at + 1..].iter_mut().zip(&held_start[at + 1..]) {
                    *count += i128::from((end - start).div_ceil(unit));
                }
            } else {
                for (place, &start) in held_start.iter().enumerate().skip(at + 1) {
                    let (units, fen) = pricer.run(start, end);
                    at_units[place] += i128::from(units);
                    at_fen[place] += fen;
                }
            }
            held.remove(at);
            held_start.remove(at);
            whole(at, run, &mut diff_units, &mut diff_fen);
        } else {
            let k = order[next_start];
            next_start += 1;
            first_place.push(held.len());
            held.push(k);
            held_start.push(runs[k as usize].start_minute);
            if held.len() + 1 > diff_units.len() {
                diff_units.resize(held.len() + 1, 0);
                diff_fen.resize(held.len() + 1, 0);
                at_units.resize(held.len() + 1, 0);
                at_fen.resize(held.len() + 1, 0);
            }
        }
    }
    // Still held at the end.
    for (place, &k) in held.iter().enumerate() {
        whole(place, runs[k as usize], &mut diff_units, &mut diff_fen);
    }
    if flat {
        let price = i128::from(pricer.unit_price);
        for (fen, &units) in at_fen.iter_mut().zip(&at_units) {
            *fen = units * price;
        }
    }
    let peak = diff_units.len().saturating_sub(1);
    let (mut units_by_base, mut fen_by_base) = (vec![0i128; peak + 1], vec![0i128; peak + 1]);
    let (mut units, mut fen) = (0i128, 0i128);
    for b in 0..=peak {
        units += diff_units[b];
        fen += diff_fen[b];
        units_by_base[b] = units + at_units[b];
        fen_by_base[b] = fen + at_fen[b];
    }
    // Layer `b` (index b) is what subscribing it saves: overlay(b) − overlay(b + 1).
    let mut layers = Layers::new(peak);
    for b in 0..peak {
        let units = units_by_base[b] - units_by_base[b + 1];
        layers.layers[b].units = u64::try_from(units).unwrap_or(0);
        layers.wide[b] = fen_by_base[b] - fen_by_base[b + 1];
    }
    for place in first_place {
        if let Some(layer) = layers.layers.get_mut(place) {
            layer.runs += 1;
        }
    }
    layers.settle(&pricer, base)
}

/// The overlay's unit and prices, and the subscription, for one trace.
struct Pricer<'a> {
    entry: &'a PriceEntry,
    plan: &'a BillingPlan,
    unit: u32,
    unit_price: i64,
    hours: usize,
    sub: Money,
}

impl<'a> Pricer<'a> {
    fn new(
        minutes: usize,
        entry: &'a PriceEntry,
        plan: &'a BillingPlan,
    ) -> Result<Pricer<'a>, CostError> {
        let hours = minutes.div_ceil(60);
        Ok(Pricer {
            entry,
            plan,
            unit: unit_minutes(plan.overlay),
            unit_price: plan.overlay.price(entry)?.fen(),
            hours,
            sub: subscription_for(plan.term, entry, hours)?,
        })
    }

    /// A run `[start, end)`: its units and what they cost (spot per started hour at the
    /// price in force when the hour starts).
    fn run(&self, start: u32, end: u32) -> (u32, i128) {
        let units = (end - start).div_ceil(self.unit);
        let fen = if self.plan.overlay == OverlayMode::Spot {
            (0..units)
                .map(|k| {
                    let minute = start + k * self.unit;
                    let hour = self.plan.start_hour.saturating_add(i64::from(minute / 60));
                    i128::from(
                        self.entry
                            .spot_price_at(hour)
                            .map_or(self.unit_price, Money::fen),
                    )
                })
                .sum::<i128>()
        } else {
            i128::from(units) * i128::from(self.unit_price)
        };
        (units, fen)
    }
}

/// Each layer's (or position's) runs, units and cost.
struct Layers {
    layers: Vec<LayerBill>,
    wide: Vec<i128>,
}

impl Layers {
    fn new(peak: usize) -> Layers {
        Layers {
            layers: vec![LayerBill::default(); peak],
            wide: vec![0; peak],
        }
    }

    fn add(&mut self, layer: usize, start: u32, end: u32, pricer: &Pricer<'_>) {
        let (units, fen) = pricer.run(start, end);
        self.layers[layer].runs += 1;
        self.layers[layer].units += u64::from(units);
        self.wide[layer] += fen;
    }

    /// The base (given, or the best) and the bill.
    fn settle(mut self, pricer: &Pricer<'_>, base: Option<u32>) -> Result<Bill, CostError> {
        let (wide, peak) = (&self.wide, self.wide.len());
        for (layer, fen) in self.layers.iter_mut().zip(wide) {
            layer.cost_fen = i64::try_from(*fen).map_err(|_| CostError::Overflow)?;
        }

        // cost(B) = B · sub + the overlay of layers B+1..=peak, from the top down.
        let sub_fen = i128::from(pricer.sub.fen());
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
        let overlay_units: u64 = self.layers[layers_from..]
            .iter()
            .map(|layer| layer.units)
            .sum();
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
            subscribed_gpu_hours: base as u64 * pricer.hours as u64,
            overlay_gpu_hours: overlay_units * u64::from(pricer.unit / 60),
            subscription_per_gpu: pricer.sub,
            layers: self.layers,
        })
    }
}
