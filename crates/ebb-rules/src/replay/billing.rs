//! The billing model applied to a replay's held series.
//!
//! Layers are stacked from the bottom: layer `L` is held in the minutes where at least `L`
//! GPUs are held, in contiguous runs. Releases take the newest GPU first, so layer `L` is
//! one GPU's history and layer billing equals per-GPU billing. On the overlay each run pays
//! per started unit (hour, day or week; spot per started hour at the price in force when
//! the hour starts): a GPU released and rented again within its hour starts a new run and
//! pays again.
//!
//! A spot replay's GPUs not on spot are not always released newest first: one goes back to
//! spot at the end of its own paid unit, whichever its place. Layers would then bill runs
//! no GPU had (the top layer's closed mid-unit, the lower one's carried on past its unit),
//! so those GPUs are billed from their own runs ([`bill_runs_base`]), each at its place in
//! the pool's stack (a GPU rented takes the lowest place free), which the base covers from
//! the bottom as it covers layers.
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
/// its own start, with `base` positions subscribed (the bottom ones), or the best base when
/// `None`. A held series whose releases are newest first gives the same runs as its layers,
/// so this bills it as [`bill_held_base`] does; where GPUs are released out of that order
/// (one going back to spot at its own unit's end) it bills what each GPU was paid.
pub fn bill_runs_base(
    runs: &[PaidRun],
    minutes: usize,
    entry: &PriceEntry,
    plan: &BillingPlan,
    base: Option<u32>,
) -> Result<Bill, CostError> {
    let pricer = Pricer::new(minutes, entry, plan)?;
    let peak = runs
        .iter()
        .filter(|run| run.end_minute > run.start_minute)
        .map(|run| run.position as usize + 1)
        .max()
        .unwrap_or(0);
    let mut layers = Layers::new(peak);
    for run in runs.iter().filter(|run| run.end_minute > run.start_minute) {
        layers.add(
            run.position as usize,
            run.start_minute,
            run.end_minute,
            &pricer,
        );
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
