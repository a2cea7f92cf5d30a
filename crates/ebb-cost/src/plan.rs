//! Plan comparison and the base optimum for a demand series.
//!
//! The model (documented in `CATALOG.md`): GPU number `k` of the pool is held in every hour
//! whose demand is at least `k` ("level" `k`). Levels `1..=B` are the subscribed base; every
//! level above is paid by the overlay on its own: by the hour, or by day or week units (a
//! unit runs from the hour it is bought, and a GPU is kept until its paid unit ends), or at
//! spot prices. Levels with the same busy hours cost the same, so the work is done once per
//! distinct demand value ("band"), not once per GPU.

use crate::CostError;
use crate::catalog::PriceEntry;
use crate::demand::DemandSeries;
use crate::modes::{OverlayMode, Priced, Term, not_offered, subscription_for};
use crate::money::Money;
pub use ebb_wire::plan::{PaidGpuHours, PlanKind, SkipReason};
use serde::Serialize;

/// What to compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlanOptions {
    /// The subscription term for every base.
    pub term: Term,
    /// Whether the work tolerates interruption: only then is a spot overlay evaluated.
    pub interruptible: bool,
}

/// Which plan wins a tie: the simplest commitment first.
fn preference(kind: PlanKind) -> u8 {
    match kind {
        PlanKind::BaseHourly => 0,
        PlanKind::BaseDaily => 1,
        PlanKind::BaseWeekly => 2,
        PlanKind::AllOnDemandBestUnit => 3,
        PlanKind::BaseReserved => 4,
        PlanKind::BaseSpot => 5,
        PlanKind::AllSubscribed => 6,
        PlanKind::AllHourly => 7,
    }
}

/// When a level is worth subscribing: when the overlay would buy at least `units` units of
/// `unit_hours` hours for it over the series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BreakEven {
    /// Units of overlay that cost more than one subscription over the series.
    pub units: u64,
    /// Hours in one unit.
    pub unit_hours: u32,
}

/// A reservation window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReservedWindow {
    /// GPUs reserved.
    pub gpus: u32,
    /// The window's first hour (demand series clock).
    pub first_hour: i64,
    /// Its length.
    pub hours: u64,
}

/// One plan's cost over the series, and the numbers behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanCost {
    /// Which plan.
    pub kind: PlanKind,
    /// GPUs on subscription.
    pub base_gpus: u32,
    /// The base's term.
    pub term: Term,
    /// The subscriptions.
    #[serde(rename = "base_cost_fen")]
    pub base_cost: Money,
    /// Everything above the base.
    #[serde(rename = "overlay_cost_fen")]
    pub overlay_cost: Money,
    /// `base_cost + overlay_cost`.
    #[serde(rename = "total_cost_fen")]
    pub total_cost: Money,
    /// All-subscribed's cost minus this one's (negative when dearer).
    #[serde(rename = "saving_vs_all_subscribed_fen")]
    pub saving_vs_all_subscribed: Money,
    /// The same as a percentage of all-subscribed's cost, to 0.01 (display only).
    pub saving_pct: f64,
    /// GPU-hours paid, by mode.
    pub paid_gpu_hours: PaidGpuHours,
    /// Paid GPU-hours minus the GPU-hours of work.
    pub idle_paid_gpu_hours: u64,
    /// When a level is worth subscribing under this plan's overlay, where one unit price
    /// decides it.
    pub break_even: Option<BreakEven>,
    /// The reservation, for [`PlanKind::BaseReserved`].
    pub reserved: Option<ReservedWindow>,
}

/// A plan that could not be evaluated, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedPlan {
    /// Which plan.
    pub kind: PlanKind,
    /// Why (`Display` gives the English).
    pub reason: SkipReason,
}

/// The base optimum: `B` subscribed plus the rest by the hour, `B` minimizing
/// `B * sub(H) + sum_t max(0, d_t - B) * hour` (the smallest such `B` on a tie).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BaseOptimum {
    /// The optimal base.
    pub base_gpus: u32,
    /// Its term.
    pub term: Term,
    /// `sub(H)`: one GPU subscribed over the series.
    #[serde(rename = "subscription_per_gpu_fen")]
    pub subscription_per_gpu: Money,
    /// The plan's cost.
    #[serde(rename = "cost_fen")]
    pub cost: Money,
    /// A level is worth subscribing when demand reaches it in at least this many hours:
    /// `floor(sub(H) / hour) + 1`.
    pub break_even_hours: u64,
    /// Hours in which demand reaches the base (at least `break_even_hours` when the base
    /// is above 0).
    pub hours_at_base: u64,
    /// Hours in which demand exceeds the base (fewer than `break_even_hours`).
    pub hours_above_base: u64,
}

/// A day or week overlay that beats the hourly one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CheaperOverlay {
    /// Day or week.
    pub overlay: OverlayMode,
    /// The best base for it.
    pub base_gpus: u32,
    /// The plan's cost.
    #[serde(rename = "cost_fen")]
    pub cost: Money,
    /// How much less than the hourly optimum.
    #[serde(rename = "saving_vs_hourly_fen")]
    pub saving_vs_hourly: Money,
}

/// What to do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recommendation {
    /// The base optimum with an hourly overlay.
    pub base: BaseOptimum,
    /// The cheapest day or week overlay, when it beats the hourly one.
    pub cheaper_overlay: Option<CheaperOverlay>,
    /// The cheapest plan of all those evaluated (on a tie, the simplest).
    pub best: PlanKind,
    /// Its base.
    pub best_base_gpus: u32,
    /// Its cost.
    #[serde(rename = "best_cost_fen")]
    pub best_cost: Money,
    /// All-subscribed's cost minus the best one's.
    #[serde(rename = "saving_vs_all_subscribed_fen")]
    pub saving_vs_all_subscribed: Money,
    /// The same in percent, to 0.01 (display only).
    pub saving_pct: f64,
}

/// Every plan over one demand series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Hours in the series (`H`).
    pub hours: u64,
    /// The series' first hour.
    pub first_hour: i64,
    /// The most GPUs any hour needs.
    pub peak_gpus: u32,
    /// GPU-hours of work.
    pub used_gpu_hours: u64,
    /// The term of every base.
    pub term: Term,
    /// `sub(H)`: one GPU subscribed over the series.
    #[serde(rename = "subscription_per_gpu_fen")]
    pub subscription_per_gpu: Money,
    /// The plans evaluated, in [`PlanKind::ALL`] order.
    pub plans: Vec<PlanCost>,
    /// The plans that were not, and why.
    pub skipped: Vec<SkippedPlan>,
    /// What to do.
    pub recommendation: Recommendation,
}

impl Comparison {
    /// The evaluated plan of this kind.
    pub fn plan(&self, kind: PlanKind) -> Option<&PlanCost> {
        self.plans.iter().find(|plan| plan.kind == kind)
    }
}

/// The exact base optimum for "B subscribed + hourly overlay", in `O(H)`: a level is worth
/// subscribing while the hours that reach it, paid by the hour, cost more than a
/// subscription, so `B` is the `q`-th highest hourly demand with `q = floor(sub / hour) + 1`.
pub fn optimal_base(
    entry: &PriceEntry,
    demand: &DemandSeries,
    term: Term,
) -> Result<BaseOptimum, CostError> {
    let sub = subscription_for(term, entry, demand.hours())?;
    let hour = entry.hour.fen();
    let break_even_hours = u64::try_from(sub.fen() / hour + 1).map_err(|_| CostError::Overflow)?;
    let gpus = demand.gpus();
    let base_gpus = match usize::try_from(break_even_hours) {
        Ok(q) if q <= gpus.len() => {
            let mut sorted = gpus.to_vec();
            let (_, qth_highest, _) = sorted.select_nth_unstable_by(q - 1, |a, b| b.cmp(a));
            *qth_highest
        }
        _ => 0,
    };
    let mut over_base: u64 = 0;
    let (mut hours_at_base, mut hours_above_base) = (0, 0);
    for &needed in gpus {
        over_base += u64::from(needed.saturating_sub(base_gpus));
        hours_at_base += u64::from(needed >= base_gpus);
        hours_above_base += u64::from(needed > base_gpus);
    }
    let cost =
        i128::from(base_gpus) * i128::from(sub.fen()) + i128::from(over_base) * i128::from(hour);
    Ok(BaseOptimum {
        base_gpus,
        term,
        subscription_per_gpu: sub,
        cost: Money::from_wide(cost).ok_or(CostError::Overflow)?,
        break_even_hours,
        hours_at_base,
        hours_above_base,
    })
}

/// The cost over the series of one pool plan (its base as given, not optimized).
pub fn plan_cost(
    entry: &PriceEntry,
    demand: &DemandSeries,
    plan: &crate::modes::PoolPlan,
) -> Result<PlanCost, CostError> {
    let overlay = match plan.overlay {
        OverlayMode::Hour => Overlay::Hour,
        OverlayMode::Day => Overlay::Day,
        OverlayMode::Week => Overlay::Week,
        OverlayMode::Spot => Overlay::Spot,
    };
    plan.overlay.price(entry)?;
    let profile = Profile::build(entry, demand, plan.term, true)?;
    let kind = match plan.overlay {
        OverlayMode::Hour => PlanKind::BaseHourly,
        OverlayMode::Day => PlanKind::BaseDaily,
        OverlayMode::Week => PlanKind::BaseWeekly,
        OverlayMode::Spot => PlanKind::BaseSpot,
    };
    let all_subscribed = profile.all_subscribed_cost()?;
    profile.cost(kind, plan.base_gpus, overlay, all_subscribed)
}

/// Every plan over `demand`, and the recommendation.
pub fn compare_plans(
    entry: &PriceEntry,
    demand: &DemandSeries,
    options: &PlanOptions,
) -> Result<Comparison, CostError> {
    let profile = Profile::build(entry, demand, options.term, options.interruptible)?;
    let base = optimal_base(entry, demand, options.term)?;
    let all_subscribed = profile.all_subscribed_cost()?;

    let mut plans = Vec::new();
    let mut skipped = Vec::new();
    let mut skip = |kind, reason: SkipReason| skipped.push(SkippedPlan { kind, reason });
    let not_offered_reason = |field: &str| SkipReason::NotOffered {
        model: entry.model.clone(),
        region: entry.region.clone(),
        field: field.to_string(),
    };

    plans.push(profile.cost(
        PlanKind::AllSubscribed,
        profile.peak,
        Overlay::Hour,
        all_subscribed,
    )?);
    plans.push(profile.cost(PlanKind::AllHourly, 0, Overlay::Hour, all_subscribed)?);
    plans.push(profile.cost(
        PlanKind::AllOnDemandBestUnit,
        0,
        Overlay::BestUnit,
        all_subscribed,
    )?);
    plans.push(profile.cost(
        PlanKind::BaseHourly,
        base.base_gpus,
        Overlay::Hour,
        all_subscribed,
    )?);
    for (kind, overlay, field) in [
        (PlanKind::BaseDaily, Overlay::Day, "day"),
        (PlanKind::BaseWeekly, Overlay::Week, "week"),
    ] {
        if profile.offers(overlay) {
            let best_base = profile.best_base(overlay)?;
            plans.push(profile.cost(kind, best_base, overlay, all_subscribed)?);
        } else {
            skip(kind, not_offered_reason(field));
        }
    }
    match entry.reserved_hour {
        Some(_) => plans.push(profile.cost(
            PlanKind::BaseReserved,
            base.base_gpus,
            Overlay::Reserved,
            all_subscribed,
        )?),
        None => skip(PlanKind::BaseReserved, not_offered_reason("reserved_hour")),
    }
    if !options.interruptible {
        skip(PlanKind::BaseSpot, SkipReason::NotInterruptible);
    } else if profile.offers(Overlay::Spot) {
        let best_base = profile.best_base(Overlay::Spot)?;
        plans.push(profile.cost(PlanKind::BaseSpot, best_base, Overlay::Spot, all_subscribed)?);
    } else {
        skip(PlanKind::BaseSpot, not_offered_reason("spot_hour"));
    }

    let hourly_cost = base.cost;
    let cheaper_overlay = plans
        .iter()
        .filter(|plan| matches!(plan.kind, PlanKind::BaseDaily | PlanKind::BaseWeekly))
        .filter(|plan| plan.total_cost < hourly_cost)
        .min_by_key(|plan| (plan.total_cost, preference(plan.kind)))
        .map(|plan| CheaperOverlay {
            overlay: if plan.kind == PlanKind::BaseDaily {
                OverlayMode::Day
            } else {
                OverlayMode::Week
            },
            base_gpus: plan.base_gpus,
            cost: plan.total_cost,
            saving_vs_hourly: hourly_cost.saturating_sub(plan.total_cost),
        });
    let best = plans
        .iter()
        .min_by_key(|plan| (plan.total_cost, preference(plan.kind)))
        .expect("the hourly plans are always evaluated");
    let recommendation = Recommendation {
        base,
        cheaper_overlay,
        best: best.kind,
        best_base_gpus: best.base_gpus,
        best_cost: best.total_cost,
        saving_vs_all_subscribed: best.saving_vs_all_subscribed,
        saving_pct: best.saving_pct,
    };
    Ok(Comparison {
        hours: demand.hours() as u64,
        first_hour: demand.first_hour(),
        peak_gpus: profile.peak,
        used_gpu_hours: demand.used_gpu_hours(),
        term: options.term,
        subscription_per_gpu: profile.sub,
        plans,
        skipped,
        recommendation,
    })
}

/// How the levels above the base are paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Overlay {
    Hour,
    Day,
    Week,
    Spot,
    BestUnit,
    Reserved,
}

/// A greedy or optimal cover of one level's busy hours by paid units.
#[derive(Debug, Clone, Copy, Default)]
struct Cover {
    hour_units: u64,
    day_units: u64,
    week_units: u64,
}

/// Levels `(low, high]`: they share their busy hours, so they cost the same.
#[derive(Debug, Clone)]
struct Band {
    low: u32,
    high: u32,
    busy_hours: u64,
    /// Day units one level of the band buys under a day overlay.
    day_units: u64,
    /// Week units under a week overlay.
    week_units: u64,
    /// The cheapest mix of hour, day and week units.
    best: Cover,
    best_fen: i64,
    /// Spot: the sum of the price in force over the busy hours.
    spot_fen: i64,
}

/// A demand series reduced to bands, with the prices that apply.
#[derive(Debug)]
struct Profile<'a> {
    entry: &'a PriceEntry,
    demand: &'a DemandSeries,
    term: Term,
    sub: Money,
    peak: u32,
    bands: Vec<Band>,
}

impl<'a> Profile<'a> {
    fn build(
        entry: &'a PriceEntry,
        demand: &'a DemandSeries,
        term: Term,
        with_spot: bool,
    ) -> Result<Profile<'a>, CostError> {
        let sub = subscription_for(term, entry, demand.hours())?;
        let gpus = demand.gpus();
        let mut levels: Vec<u32> = gpus.iter().copied().filter(|&needed| needed > 0).collect();
        levels.sort_unstable();
        levels.dedup();

        let spot_prices: Vec<i64> = match entry.spot_hour {
            Some(_) if with_spot => (0..gpus.len())
                .map(|i| {
                    let hour = demand.first_hour() + i as i64;
                    entry.spot_price_at(hour).map_or(0, Money::fen)
                })
                .collect(),
            _ => Vec::new(),
        };

        let mut busy: Vec<u32> = (0..gpus.len() as u32)
            .filter(|&t| gpus[t as usize] > 0)
            .collect();
        let mut scratch = CoverScratch::default();
        let mut bands = Vec::with_capacity(levels.len());
        let mut low = 0;
        for &high in &levels {
            // One pass: keep the hours that reach this band, count the day and week units
            // bought at the first uncovered busy hour (optimal for one unit length), and
            // add up the spot prices.
            let mut kept = 0;
            let (mut day_units, mut day_until) = (0u64, 0u32);
            let (mut week_units, mut week_until) = (0u64, 0u32);
            let mut spot_fen: i64 = 0;
            for i in 0..busy.len() {
                let t = busy[i];
                if gpus[t as usize] < high {
                    continue;
                }
                busy[kept] = t;
                kept += 1;
                if day_units == 0 || t >= day_until {
                    day_units += 1;
                    day_until = t.saturating_add(24);
                }
                if week_units == 0 || t >= week_until {
                    week_units += 1;
                    week_until = t.saturating_add(168);
                }
                if let Some(price) = spot_prices.get(t as usize) {
                    spot_fen += price;
                }
            }
            busy.truncate(kept);
            let (best, best_fen) = scratch.best_cover(&busy, entry);
            bands.push(Band {
                low,
                high,
                busy_hours: busy.len() as u64,
                day_units,
                week_units,
                best,
                best_fen,
                spot_fen,
            });
            low = high;
        }
        Ok(Profile {
            entry,
            demand,
            term,
            sub,
            peak: levels.last().copied().unwrap_or(0),
            bands,
        })
    }

    fn offers(&self, overlay: Overlay) -> bool {
        match overlay {
            Overlay::Hour | Overlay::BestUnit => true,
            Overlay::Day => self.entry.day.is_some(),
            Overlay::Week => self.entry.week.is_some(),
            Overlay::Spot => self.entry.spot_hour.is_some(),
            Overlay::Reserved => self.entry.reserved_hour.is_some(),
        }
    }

    /// What one level of `band` costs under `overlay` (not for reservations).
    fn level_fen(&self, band: &Band, overlay: Overlay) -> i128 {
        let price = |money: Option<Money>| i128::from(money.map_or(0, Money::fen));
        match overlay {
            Overlay::Hour => i128::from(band.busy_hours) * i128::from(self.entry.hour.fen()),
            Overlay::Day => i128::from(band.day_units) * price(self.entry.day),
            Overlay::Week => i128::from(band.week_units) * price(self.entry.week),
            Overlay::Spot => i128::from(band.spot_fen),
            Overlay::BestUnit => i128::from(band.best_fen),
            Overlay::Reserved => 0,
        }
    }

    /// The cheapest base for `overlay` (the smallest on a tie). The cost is linear in `B`
    /// inside a band, so only band edges need checking.
    fn best_base(&self, overlay: Overlay) -> Result<u32, CostError> {
        let sub = i128::from(self.sub.fen());
        // Overlay cost of everything above band i's top, for i from the top down.
        let mut above: i128 = 0;
        let mut best = (i128::from(self.peak) * sub, self.peak);
        for band in self.bands.iter().rev() {
            above += i128::from(band.high - band.low) * self.level_fen(band, overlay);
            let cost = i128::from(band.low) * sub + above;
            if cost <= best.0 {
                best = (cost, band.low);
            }
        }
        Ok(best.1)
    }

    fn all_subscribed_cost(&self) -> Result<Money, CostError> {
        self.sub
            .checked_mul(i64::from(self.peak))
            .ok_or(CostError::Overflow)
    }

    fn cost(
        &self,
        kind: PlanKind,
        base_gpus: u32,
        overlay: Overlay,
        all_subscribed: Money,
    ) -> Result<PlanCost, CostError> {
        let hours = self.demand.hours() as u64;
        let mut paid = PaidGpuHours {
            subscribed: u64::from(base_gpus) * hours,
            ..PaidGpuHours::default()
        };
        let mut overlay_fen: i128 = 0;
        let mut reserved = None;
        if overlay == Overlay::Reserved {
            let price = self
                .entry
                .reserved_hour
                .ok_or_else(|| not_offered(self.entry, "reserved_hour"))?;
            let gpus = self.demand.gpus();
            let first = gpus.iter().position(|&needed| needed > base_gpus);
            let last = gpus.iter().rposition(|&needed| needed > base_gpus);
            if let (Some(first), Some(last)) = (first, last) {
                let window = ReservedWindow {
                    gpus: self.peak - base_gpus,
                    first_hour: self.demand.first_hour() + first as i64,
                    hours: (last - first + 1) as u64,
                };
                paid.reserved = u64::from(window.gpus) * window.hours;
                overlay_fen = i128::from(paid.reserved) * i128::from(price.fen());
                reserved = Some(window);
            }
        } else {
            for band in &self.bands {
                let levels = u64::from(band.high.saturating_sub(band.low.max(base_gpus)));
                if levels == 0 {
                    continue;
                }
                overlay_fen += i128::from(levels) * self.level_fen(band, overlay);
                match overlay {
                    Overlay::Hour => paid.hour += levels * band.busy_hours,
                    Overlay::Spot => paid.spot += levels * band.busy_hours,
                    Overlay::Day => paid.day += levels * band.day_units * 24,
                    Overlay::Week => paid.week += levels * band.week_units * 168,
                    Overlay::BestUnit => {
                        paid.hour += levels * band.best.hour_units;
                        paid.day += levels * band.best.day_units * 24;
                        paid.week += levels * band.best.week_units * 168;
                    }
                    Overlay::Reserved => {}
                }
            }
        }
        let base_cost = self
            .sub
            .checked_mul(i64::from(base_gpus))
            .ok_or(CostError::Overflow)?;
        let overlay_cost = Money::from_wide(overlay_fen).ok_or(CostError::Overflow)?;
        let total_cost = base_cost
            .checked_add(overlay_cost)
            .ok_or(CostError::Overflow)?;
        let saving = all_subscribed
            .checked_sub(total_cost)
            .ok_or(CostError::Overflow)?;
        let break_even = self.break_even(overlay);
        Ok(PlanCost {
            kind,
            base_gpus,
            term: self.term,
            base_cost,
            overlay_cost,
            total_cost,
            saving_vs_all_subscribed: saving,
            saving_pct: percent(saving, all_subscribed),
            paid_gpu_hours: paid,
            idle_paid_gpu_hours: paid.total().saturating_sub(self.demand.used_gpu_hours()),
            break_even,
            reserved,
        })
    }

    fn break_even(&self, overlay: Overlay) -> Option<BreakEven> {
        let (price, unit_hours) = match overlay {
            Overlay::Hour => (Some(self.entry.hour), 1),
            Overlay::Day => (self.entry.day, 24),
            Overlay::Week => (self.entry.week, 168),
            // One price decides it only when spot has no series.
            Overlay::Spot if self.entry.spot_series.is_empty() => (self.entry.spot_hour, 1),
            Overlay::Spot | Overlay::BestUnit | Overlay::Reserved => (None, 1),
        };
        let price = price?.fen();
        Some(BreakEven {
            units: u64::try_from(self.sub.fen() / price + 1).ok()?,
            unit_hours,
        })
    }
}

/// `part / whole` in percent, rounded to 0.01; 0 when `whole` is 0.
fn percent(part: Money, whole: Money) -> f64 {
    if whole.fen() == 0 {
        return 0.0;
    }
    let basis_points =
        crate::money::div_round(i128::from(part.fen()) * 10_000, i128::from(whole.fen()));
    basis_points as f64 / 100.0
}

/// Buffers for [`CoverScratch::best_cover`], reused across bands.
#[derive(Debug, Default)]
struct CoverScratch {
    /// `cost[i]`: the cheapest cover of the first `i` busy hours.
    cost: Vec<i64>,
    /// For busy hour `i`, the unit that covers it last: `UNIT_* | first busy hour it covers`.
    step: Vec<u32>,
}

const UNIT_HOUR: u32 = 0;
const UNIT_DAY: u32 = 1 << 30;
const UNIT_WEEK: u32 = 2 << 30;
const UNIT_MASK: u32 = 3 << 30;

impl CoverScratch {
    /// The cheapest cover of `busy` (sorted hours) by hour, day and week units, by dynamic
    /// programming over the busy hours: the unit covering the last busy hour ends there.
    /// One level's cost fits `i64`: at most `MAX_HOURS` units at the largest price.
    fn best_cover(&mut self, busy: &[u32], entry: &PriceEntry) -> (Cover, i64) {
        // A unit not offered never wins, and adding it to any level's cost cannot overflow.
        const NEVER: i64 = i64::MAX / 4;
        let hour = entry.hour.fen();
        let day = entry.day.map_or(NEVER, Money::fen);
        let week = entry.week.map_or(NEVER, Money::fen);
        let n = busy.len();
        self.cost.clear();
        self.cost.resize(n + 1, 0);
        self.step.clear();
        self.step.resize(n, 0);
        let (cost, step) = (&mut self.cost[..], &mut self.step[..]);
        let (mut day_from, mut week_from) = (0usize, 0usize);
        for (i, &t) in busy.iter().enumerate() {
            while busy[day_from] + 24 <= t {
                day_from += 1;
            }
            while busy[week_from] + 168 <= t {
                week_from += 1;
            }
            let by_hour = cost[i] + hour;
            let by_day = cost[day_from] + day;
            let by_week = cost[week_from] + week;
            // On a tie the shorter unit wins: no longer commitment without a saving.
            (cost[i + 1], step[i]) = if by_hour <= by_day && by_hour <= by_week {
                (by_hour, UNIT_HOUR | i as u32)
            } else if by_day <= by_week {
                (by_day, UNIT_DAY | day_from as u32)
            } else {
                (by_week, UNIT_WEEK | week_from as u32)
            };
        }
        let mut cover = Cover::default();
        let mut i = n;
        while i > 0 {
            let taken = step[i - 1];
            match taken & UNIT_MASK {
                UNIT_HOUR => cover.hour_units += 1,
                UNIT_DAY => cover.day_units += 1,
                _ => cover.week_units += 1,
            }
            i = (taken & !UNIT_MASK) as usize;
        }
        (cover, cost[n])
    }
}

#[cfg(test)]
#[allow(clippy::inconsistent_digit_grouping)] // fen written yuan_fen: 12_50 is ¥12.50
mod tests {
    use super::*;

    #[test]
    fn best_cover_mixes_units() {
        let entry = crate::Catalog::demo()
            .find("A100", "cn-north")
            .unwrap()
            .clone();
        let mut scratch = CoverScratch::default();
        // 30 hours in a row: a day (¥240) + 6 hours (¥75) beats 30 hours (¥375) and 2 days.
        let busy: Vec<u32> = (0..30).collect();
        let (cover, fen) = scratch.best_cover(&busy, &entry);
        assert_eq!(fen, 240_00 + 6 * 12_50);
        assert_eq!(
            (cover.hour_units, cover.day_units, cover.week_units),
            (6, 1, 0)
        );
        // 7 full days: a week (¥1,400) beats 7 days (¥1,680).
        let busy: Vec<u32> = (0..168).collect();
        let (cover, fen) = scratch.best_cover(&busy, &entry);
        assert_eq!(fen, 1_400_00);
        assert_eq!(
            (cover.hour_units, cover.day_units, cover.week_units),
            (0, 0, 1)
        );
        // Two 10-hour stretches within one day: a day unit kept through the gap (¥240)
        // beats 20 hours (¥250).
        let busy: Vec<u32> = (0..10).chain(13..23).collect();
        assert_eq!(scratch.best_cover(&busy, &entry).1, 240_00);
    }
}
