//! What a pool has cost so far this month, from its lease history, and where the month is
//! heading at the pool's current count.
//!
//! - The subscribed base is paid whether held or not: month to date is its term price
//!   spread over the term's hours, for the hours of the month gone by since the base began
//!   (`base_from_ms`: the pool's creation, when that falls inside the month). So a pool made
//!   mid-month pays its base pro rata from then, and one made a minute ago has paid a minute.
//! - Held GPUs fill the base first: leases are laid on `base` slots in grant order (the
//!   earliest holder of a free slot keeps it); a lease that finds every base slot taken is
//!   an overlay lease and pays its mode's started units in full (an hour-mode GPU held 61
//!   minutes pays 2 hours; by the day, 1 day), counted from its grant, for the units that
//!   started this month.
//! - The projection adds the current run rate ([`run_rate`]) for the rest of the month.
//! - Showback splits month to date three ways ([`SpendSplit`]): the overlay, the base's
//!   cost in proportion to the GPU-hours held on its slots (`base_used`), and the rest of
//!   the base, paid and not held (`idle_base`, which takes the rounding).
//! - A past month is billed whole: [`SpendWindow::billed_month`] ends it at its end; a
//!   lease granted at or after a month's end is not that month's.

use crate::CostError;
use crate::catalog::PriceEntry;
use crate::modes::{PoolPlan, Priced};
use crate::money::Money;
use crate::preview::{PricedPool, overlay_units, placed_run_rate};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const HOUR_MS: i64 = 3_600_000;

/// One lease's life: from its grant to its end (`None`: still held).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseSpan {
    pub start_ms: i64,
    pub end_ms: Option<i64>,
    /// GPUs in the lease.
    pub gpus: u32,
}

/// Spend for one month.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spend {
    pub month_to_date: Money,
    pub projected_month: Money,
    pub run_rate_per_hour: Money,
    /// GPU-hours held this month.
    pub gpu_hours: f64,
    /// Month to date split into overlay, base used and idle base.
    pub split: SpendSplit,
}

/// Month to date split for showback: `overlay + base_used + idle_base == month_to_date`,
/// to the fen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpendSplit {
    /// Leases beyond the subscribed base, at their price.
    pub overlay: Money,
    /// The base's cost in proportion to the GPU-hours held on its slots out of the base's
    /// GPU-hours, rounded down to the fen.
    pub base_used: Money,
    /// The rest of the base's cost: paid for and not held (with the rounding's remainder).
    pub idle_base: Money,
    /// GPU-hours held on base slots.
    pub base_gpu_hours: f64,
    /// The base's GPU-hours not held.
    pub idle_base_gpu_hours: f64,
}

/// The month a spend covers, and now within it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpendWindow {
    pub month_start_ms: i64,
    pub month_end_ms: i64,
    pub now_ms: i64,
    /// When the subscribed base began (the pool's creation); before the month, the month's
    /// start counts.
    pub base_from_ms: i64,
}

impl SpendWindow {
    /// When this month's base is counted from: the later of the month's start and the
    /// base's own, never past now.
    pub fn base_start_ms(&self) -> i64 {
        let now_ms = self.now_ms.clamp(self.month_start_ms, self.month_end_ms);
        self.base_from_ms.clamp(self.month_start_ms, now_ms)
    }

    /// The month `[month_start_ms, month_end_ms)` billed as of `now_ms`: through its end
    /// once it is over, through now while it runs; `None` for a month that has not begun.
    pub fn billed_month(
        month_start_ms: i64,
        month_end_ms: i64,
        now_ms: i64,
        base_from_ms: i64,
    ) -> Option<SpendWindow> {
        (month_start_ms <= now_ms).then_some(SpendWindow {
            month_start_ms,
            month_end_ms,
            now_ms: now_ms.min(month_end_ms),
            base_from_ms,
        })
    }
}

/// Spend over `[month_start_ms, now_ms]` and projected to `month_end_ms`, with
/// `current_gpus` held from now on, every GPU in `entry`'s region.
pub fn month_spend(
    entry: &PriceEntry,
    plan: &PoolPlan,
    spans: &[LeaseSpan],
    window: SpendWindow,
    current_gpus: u32,
) -> Result<Spend, CostError> {
    let pool = PricedPool::single(entry.clone(), *plan);
    let spans: Vec<(LeaseSpan, &PriceEntry)> = spans.iter().map(|span| (*span, entry)).collect();
    placed_month_spend(&pool, &spans, window, current_gpus)
}

/// [`month_spend`] with each lease priced in its own region (`(span, its region's entry)`)
/// and the projection at `current_gpus` of `pool` (its held GPUs by region, then `next`).
/// The base is priced at `pool.base`.
pub fn placed_month_spend(
    pool: &PricedPool,
    spans: &[(LeaseSpan, &PriceEntry)],
    window: SpendWindow,
    current_gpus: u32,
) -> Result<Spend, CostError> {
    let plan = &pool.plan;
    let SpendWindow {
        month_start_ms,
        month_end_ms,
        ..
    } = window;
    let now_ms = window.now_ms.clamp(month_start_ms, month_end_ms);
    let term_price = plan.term.price(&pool.base)?;
    let base_start_ms = window.base_start_ms();
    let base = term_price
        .scaled(
            i128::from(plan.base_gpus) * i128::from(now_ms - base_start_ms),
            i128::from(plan.term.hours()) * i128::from(HOUR_MS),
        )
        .ok_or(CostError::Overflow)?;
    let unit_ms = i64::from(plan.overlay.unit_hours()) * HOUR_MS;

    // One GPU per slot: split leases into GPUs, in grant order.
    let mut gpus: Vec<(i64, i64, usize)> = spans
        .iter()
        .enumerate()
        // Granted at or after the month's end: next month's.
        .filter(|(_, (span, _))| span.start_ms < month_end_ms)
        .flat_map(|(i, (span, _))| {
            let end = span.end_ms.unwrap_or(now_ms).max(span.start_ms);
            std::iter::repeat_n((span.start_ms, end, i), span.gpus as usize)
        })
        .collect();
    gpus.sort_unstable();
    // Base slots free again at these times (min-heap of ends).
    let mut base_slots: BinaryHeap<Reverse<i64>> =
        std::iter::repeat_n(Reverse(i64::MIN), plan.base_gpus as usize).collect();
    let mut overlay = Money::ZERO;
    let mut held_ms: i128 = 0;
    // Held on base slots while the base was paid; a slot holds one GPU at a time, so this
    // never passes the base's own GPU-milliseconds.
    let mut base_held_ms: i128 = 0;
    for (start, end, span) in gpus {
        let (from, to) = (start.max(month_start_ms), end.min(now_ms));
        if to > from {
            held_ms += i128::from(to - from);
        }
        if let Some(Reverse(free_at)) = base_slots.peek().copied()
            && free_at <= start
        {
            base_slots.pop();
            base_slots.push(Reverse(end));
            let (from, to) = (start.max(base_start_ms), end.min(now_ms));
            if to > from {
                base_held_ms += i128::from(to - from);
            }
            continue;
        }
        // Units started inside this month (counted from the grant) and by now (a past
        // month's now is its end), at the lease's region.
        let billed_end = end.min(now_ms).max(start);
        let units_total = (billed_end - start).max(1).div_euclid(unit_ms)
            + i64::from((billed_end - start).max(1).rem_euclid(unit_ms) != 0);
        let before_month = if start < month_start_ms {
            (month_start_ms - start).div_euclid(unit_ms)
                + i64::from((month_start_ms - start).rem_euclid(unit_ms) != 0)
        } else {
            0
        };
        let units = (units_total - before_month).max(0);
        if units == 0 {
            continue;
        }
        let unit_price = plan.overlay.price(spans[span].1)?;
        overlay = overlay
            .checked_add(unit_price.checked_mul(units).ok_or(CostError::Overflow)?)
            .ok_or(CostError::Overflow)?;
    }
    let month_to_date = base.checked_add(overlay).ok_or(CostError::Overflow)?;
    let split = split_base(
        base,
        overlay,
        base_held_ms,
        i128::from(plan.base_gpus) * i128::from(now_ms - base_start_ms),
    )?;
    let now_held = pool.at(current_gpus);
    let rate = placed_run_rate(&pool.base, plan, &now_held)?.total.per_hour;
    // The rest of the month exactly (not the hourly rate rounded to the fen, times hours).
    let remaining = i128::from(month_end_ms - now_ms);
    let rest_base = term_price
        .scaled(
            i128::from(plan.base_gpus) * remaining,
            i128::from(plan.term.hours()) * i128::from(HOUR_MS),
        )
        .ok_or(CostError::Overflow)?;
    let rest_overlay = overlay_units(&pool.base, plan, &now_held)?
        .per_unit
        .scaled(remaining, i128::from(unit_ms))
        .ok_or(CostError::Overflow)?;
    let rest = rest_base
        .checked_add(rest_overlay)
        .ok_or(CostError::Overflow)?;
    Ok(Spend {
        month_to_date,
        projected_month: month_to_date.checked_add(rest).ok_or(CostError::Overflow)?,
        run_rate_per_hour: rate,
        gpu_hours: held_ms as f64 / HOUR_MS as f64,
        split,
    })
}

/// The base's cost `base` for `base_ms` GPU-milliseconds, of which `held_ms` were held:
/// the used part rounded down to the fen, the rest idle, so the parts sum exactly.
fn split_base(
    base: Money,
    overlay: Money,
    held_ms: i128,
    base_ms: i128,
) -> Result<SpendSplit, CostError> {
    let held_ms = held_ms.clamp(0, base_ms.max(0));
    let base_used = if base_ms > 0 {
        // Floor, never past `base`: `held_ms <= base_ms`.
        let used = i128::from(base.fen()) * held_ms / base_ms;
        Money::from_fen(i64::try_from(used).map_err(|_| CostError::Overflow)?)
    } else {
        Money::ZERO
    };
    let idle_base = Money::from_fen(base.fen() - base_used.fen());
    Ok(SpendSplit {
        overlay,
        base_used,
        idle_base,
        base_gpu_hours: held_ms as f64 / HOUR_MS as f64,
        idle_base_gpu_hours: (base_ms - held_ms) as f64 / HOUR_MS as f64,
    })
}

/// What a pool's spot GPUs cost this month.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpotSpend {
    pub month_to_date: Money,
    /// The same started hours at the on-demand hour's price: the spot leases' own price
    /// gap, gross. What spot saved the pool net (its replacements and churn counted) is
    /// [`PricedPool::spot_net_saving`].
    pub on_demand_equivalent: Money,
    /// The spot GPUs held now, an hour.
    pub run_rate_per_hour: Money,
    /// Month to date plus the run rate for the rest of the month.
    pub projected_month: Money,
    pub gpu_hours: f64,
}

/// The spot GPUs' spend: each spot lease `(span, its region's entry)` pays its started
/// hours from its grant (those that started this month) at its region's current spot
/// price (`spot_hour`; the series is the demand clock's, not the wall's), never on the
/// base; `held_now` prices the run rate. A region that offers no spot is priced at its
/// hour (and saves nothing).
pub fn spot_month_spend(
    spans: &[(LeaseSpan, &PriceEntry)],
    window: SpendWindow,
    held_now: &[&PriceEntry],
) -> Result<SpotSpend, CostError> {
    let SpendWindow {
        month_start_ms,
        month_end_ms,
        ..
    } = window;
    let now_ms = window.now_ms.clamp(month_start_ms, month_end_ms);
    let spot_of = |entry: &PriceEntry| entry.spot_hour.unwrap_or(entry.hour);
    let started = |from: i64, to: i64| -> i64 {
        let length = (to - from).max(1);
        length.div_euclid(HOUR_MS) + i64::from(length.rem_euclid(HOUR_MS) != 0)
    };
    let (mut spent, mut equivalent) = (Money::ZERO, Money::ZERO);
    let mut held_ms: i128 = 0;
    // Granted at or after the month's end: next month's.
    for (span, entry) in spans.iter().filter(|(s, _)| s.start_ms < month_end_ms) {
        let end = span.end_ms.unwrap_or(now_ms).max(span.start_ms);
        let (from, to) = (span.start_ms.max(month_start_ms), end.min(now_ms));
        if to > from {
            held_ms += i128::from(to - from) * i128::from(span.gpus);
        }
        let before_month = if span.start_ms < month_start_ms {
            started(span.start_ms, month_start_ms)
        } else {
            0
        };
        // Hours started by now (a past month's now is its end).
        let billed_end = end.min(now_ms).max(span.start_ms);
        let units =
            (started(span.start_ms, billed_end) - before_month).max(0) * i64::from(span.gpus);
        if units == 0 {
            continue;
        }
        let cost = |price: Money| price.checked_mul(units).ok_or(CostError::Overflow);
        spent = spent
            .checked_add(cost(spot_of(entry))?)
            .ok_or(CostError::Overflow)?;
        equivalent = equivalent
            .checked_add(cost(entry.hour)?)
            .ok_or(CostError::Overflow)?;
    }
    let mut rate = Money::ZERO;
    for entry in held_now {
        rate = rate
            .checked_add(spot_of(entry))
            .ok_or(CostError::Overflow)?;
    }
    let rest = rate
        .scaled(i128::from(month_end_ms - now_ms), i128::from(HOUR_MS))
        .ok_or(CostError::Overflow)?;
    Ok(SpotSpend {
        month_to_date: spent,
        on_demand_equivalent: equivalent,
        run_rate_per_hour: rate,
        projected_month: spent.checked_add(rest).ok_or(CostError::Overflow)?,
        gpu_hours: held_ms as f64 / HOUR_MS as f64,
    })
}

/// The longest two leases overlap when one GPU is handed over to another: a reclaim's
/// notice is at most an hour (`ReclaimRequest`), and an on-demand GPU going back to spot is
/// released at its paid unit's end, its spot GPU ordered minutes before.
const HANDOVER_MS: i64 = HOUR_MS;

/// GPUs granted this close together were asked for together (one pass, one scale-out):
/// neither replaces the other, whichever ends first. A replacement is asked for once its
/// GPU's reclaim notice (or unit's end) is seen, a pass after the grant at the soonest.
const SAME_ASK_MS: i64 = 15_000;

impl PricedPool {
    /// What spot saved this pool over the month to date, net: what the pool would have paid
    /// had it held the same GPUs all on demand ([`placed_month_spend`] over every lease,
    /// spot ones included, at its region's on-demand price by the overlay), less what it
    /// paid (`on_demand` through [`placed_month_spend`], `spot` through
    /// [`spot_month_spend`]). Negative when spot cost more: each reclaim's replacement
    /// starts a unit of its own, and each return to spot a spot hour.
    ///
    /// The base is the same both ways and cancels. A pool that held no spot this month
    /// saved nothing. In the all-on-demand pool a GPU handed over through spot (a spot GPU
    /// taken back and its replacement, an on-demand GPU and the spot GPU that took its
    /// place) is one GPU held throughout: the two leases' overlap, made before the break,
    /// would not exist, nor would the second lease's fresh unit. A span does not say when
    /// a reclaim came, so a handover is read from the spans (`all_on_demand`).
    pub fn spot_net_saving(
        &self,
        on_demand: &[(LeaseSpan, &PriceEntry)],
        spot: &[(LeaseSpan, &PriceEntry)],
        window: SpendWindow,
    ) -> Result<Money, CostError> {
        let SpendWindow {
            month_start_ms,
            month_end_ms,
            ..
        } = window;
        let now_ms = window.now_ms.clamp(month_start_ms, month_end_ms);
        // Held at some time this month (one granted at now pays its first hour).
        let this_month = |span: &LeaseSpan| {
            span.gpus > 0
                && span.start_ms < month_end_ms
                && span.start_ms <= now_ms
                && span.end_ms.is_none_or(|end| end > month_start_ms)
        };
        if !spot.iter().any(|(span, _)| this_month(span)) {
            return Ok(Money::ZERO);
        }
        let paid = placed_month_spend(self, on_demand, window, 0)?
            .month_to_date
            .checked_add(spot_month_spend(spot, window, &[])?.month_to_date)
            .ok_or(CostError::Overflow)?;
        let all_on_demand =
            placed_month_spend(self, &all_on_demand(on_demand, spot), window, 0)?.month_to_date;
        all_on_demand.checked_sub(paid).ok_or(CostError::Overflow)
    }
}

/// The leases as the same pool all on demand would have held them: one span a GPU, each
/// at its lease's region, except that a GPU handed over through spot is one span from the
/// first lease's grant to the last one's end, at the first one's region.
///
/// A GPU `b` takes over from an ended one `a` when either is spot, `b` was granted after
/// `a` (more than [`SAME_ASK_MS`] after: not in the same ask) and at most [`HANDOVER_MS`]
/// before `a` ended (make before break; a replacement
/// granted after the GPU it replaces was gone is not seen as one), and `b` outlasts `a`.
/// Of several `a`, the one that ended first. A span carries no reclaim moment, so a GPU
/// rented for a scale-out in the last hour of a spot GPU let go on scale-in reads as its
/// replacement: the all-on-demand pool then misses at most that hour's overlap.
fn all_on_demand<'e>(
    on_demand: &[(LeaseSpan, &'e PriceEntry)],
    spot: &[(LeaseSpan, &'e PriceEntry)],
) -> Vec<(LeaseSpan, &'e PriceEntry)> {
    // One GPU each, in grant order: (start, end or `i64::MAX` while held, spot, entry).
    let mut gpus: Vec<(i64, i64, bool, &PriceEntry)> = on_demand
        .iter()
        .map(|pair| (pair, false))
        .chain(spot.iter().map(|pair| (pair, true)))
        .flat_map(|((span, entry), is_spot)| {
            let end = span.end_ms.map_or(i64::MAX, |end| end.max(span.start_ms));
            std::iter::repeat_n((span.start_ms, end, is_spot, *entry), span.gpus as usize)
        })
        .collect();
    gpus.sort_by_key(|&(start, end, is_spot, _)| (start, end, is_spot));
    /// One GPU of the all-on-demand pool: its first grant and entry, and its last lease.
    struct Held<'e> {
        start_ms: i64,
        entry: &'e PriceEntry,
        last_start_ms: i64,
        end_ms: i64,
        spot: bool,
    }
    let mut held: Vec<Held> = Vec::new();
    // Those whose last lease ended no sooner than the grant being read: it may take over.
    let mut ended: Vec<usize> = Vec::new();
    for (start, end, is_spot, entry) in gpus {
        ended.retain(|&i| held[i].end_ms >= start);
        let from = ended
            .iter()
            .enumerate()
            .filter(|&(_, &i)| {
                let last = &held[i];
                (last.spot || is_spot)
                    && last.last_start_ms + SAME_ASK_MS < start
                    && last.end_ms - HANDOVER_MS <= start
                    && last.end_ms <= end
            })
            .min_by_key(|&(_, &i)| held[i].end_ms)
            .map(|(at, _)| at);
        let i = if let Some(at) = from {
            let i = ended.swap_remove(at);
            let gpu = &mut held[i];
            (gpu.last_start_ms, gpu.end_ms, gpu.spot) = (start, end, is_spot);
            i
        } else {
            held.push(Held {
                start_ms: start,
                entry,
                last_start_ms: start,
                end_ms: end,
                spot: is_spot,
            });
            held.len() - 1
        };
        if end != i64::MAX {
            ended.push(i);
        }
    }
    held.into_iter()
        .map(|gpu| {
            let span = LeaseSpan {
                start_ms: gpu.start_ms,
                end_ms: (gpu.end_ms != i64::MAX).then_some(gpu.end_ms),
                gpus: 1,
            };
            (span, gpu.entry)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Catalog, OverlayMode, Term};

    #[test]
    fn spot_pays_started_hours_at_the_spot_price_and_says_what_it_saved() {
        let mut entry = a100();
        entry.spot_hour = Some(Money::from_fen(400));
        entry.hour = Money::from_fen(1_000);
        let month = window(0, MONTH, 3 * HOUR_MS);
        // 90 minutes: 2 started hours; and one still held from hour 2 (1 started hour).
        let spans = [
            (
                LeaseSpan {
                    start_ms: 0,
                    end_ms: Some(90 * 60_000),
                    gpus: 1,
                },
                &entry,
            ),
            (
                LeaseSpan {
                    start_ms: 2 * HOUR_MS,
                    end_ms: None,
                    gpus: 1,
                },
                &entry,
            ),
        ];
        let spend = spot_month_spend(&spans, month, &[&entry]).unwrap();
        assert_eq!(spend.month_to_date, Money::from_fen(1_200));
        assert_eq!(spend.on_demand_equivalent, Money::from_fen(3_000));
        assert_eq!(spend.run_rate_per_hour, Money::from_fen(400));
        assert_eq!(
            spend.projected_month,
            Money::from_fen(1_200 + 400 * (730 - 3))
        );
        assert!((spend.gpu_hours - 2.5).abs() < 1e-9);
    }

    /// A GPU `[start_min, end_min)` in minutes (`None`: still held).
    fn minutes(start_min: i64, end_min: Option<i64>, gpus: u32) -> LeaseSpan {
        LeaseSpan {
            start_ms: start_min * 60_000,
            end_ms: end_min.map(|end| end * 60_000),
            gpus,
        }
    }

    #[test]
    fn spot_saves_what_all_on_demand_would_have_cost_less_what_was_paid() {
        // ¥32 an hour on demand, ¥16 on spot.
        let mut entry = a100();
        entry.hour = Money::from_fen(3_200);
        entry.spot_hour = Some(Money::from_fen(1_600));
        // Spot taken back 20 minutes in (2 minutes' notice) and replaced on demand for a
        // fresh hour; `every` minutes spot comes back and the replacement goes.
        let churn = |every: i64, replaced_for: i64, times: i64| {
            let spot = (0..times)
                .map(|k| minutes(every * k, Some(every * k + 22), 1))
                .collect::<Vec<_>>();
            let on_demand = (0..times)
                .map(|k| minutes(every * k + 20, Some(every * k + 20 + replaced_for), 1))
                .collect::<Vec<_>>();
            (on_demand, spot)
        };
        struct Case {
            name: &'static str,
            base_gpus: u32,
            on_demand: Vec<LeaseSpan>,
            spot: Vec<LeaseSpan>,
            now_min: i64,
            saved_fen: i64,
        }
        let (held_to_unit_end, back_to_spot) = churn(75, 60, 8);
        let (released_at_once, spot_at_once) = churn(40, 20, 6);
        let cases = [
            Case {
                name: "no spot: nothing saved",
                base_gpus: 1,
                on_demand: vec![minutes(0, None, 3)],
                spot: vec![],
                now_min: 600,
                saved_fen: 0,
            },
            Case {
                name: "spot only last month: nothing saved this month",
                base_gpus: 0,
                on_demand: vec![minutes(-70, None, 1)],
                spot: vec![minutes(-130, Some(-60), 1)],
                now_min: 600,
                saved_fen: 0,
            },
            Case {
                // The base (one of the on-demand GPUs) is paid both ways and cancels.
                name: "spot held through pays off: 2 GPUs x 10 h x (32 - 16)",
                base_gpus: 1,
                on_demand: vec![minutes(0, None, 2)],
                spot: vec![minutes(0, None, 2)],
                now_min: 600,
                saved_fen: 2 * 10 * 1_600,
            },
            Case {
                // The replacement was held from the reclaim at 3 h; on demand the GPU
                // would have been held 6 h, not 3 h 2 min then 3 h.
                name: "a reclaim's notice starts no hour on demand",
                base_gpus: 0,
                on_demand: vec![minutes(180, None, 1)],
                spot: vec![minutes(0, Some(182), 1)],
                now_min: 360,
                saved_fen: 6 * 3_200 - (4 * 1_600 + 3 * 3_200),
            },
            Case {
                // Granted 4 h before the spot GPU went: another GPU, not its replacement.
                name: "a GPU rented beside spot is no handover",
                base_gpus: 0,
                on_demand: vec![minutes(60, None, 1)],
                spot: vec![minutes(0, Some(300), 1)],
                now_min: 360,
                saved_fen: 5 * (3_200 - 1_600),
            },
            Case {
                // The demo's: two spot GPUs and one on demand asked in one pass (granted
                // 2 s apart); the first spot GPU taken back at 2 min, its replacement
                // granted at 80 s; the second taken back at 6 min, none free to replace
                // it. All on demand: three GPUs, three hours, as paid: nothing saved, no
                // loss (the GPU asked beside the spot ones replaced neither).
                name: "GPUs asked together are no handover",
                base_gpus: 0,
                on_demand: vec![
                    LeaseSpan {
                        start_ms: 2_000,
                        end_ms: None,
                        gpus: 1,
                    },
                    LeaseSpan {
                        start_ms: 80_000,
                        end_ms: None,
                        gpus: 1,
                    },
                ],
                spot: vec![minutes(0, Some(2), 1), minutes(0, Some(6), 1)],
                now_min: 10,
                saved_fen: 0,
            },
            Case {
                // One GPU held 0 to 10 h 5 min on demand: 11 hours. Paid: 8 spot hours and
                // 8 fresh on-demand hours.
                name: "reclaimed every 20 minutes, each replaced for a fresh hour: a loss",
                base_gpus: 0,
                on_demand: held_to_unit_end,
                spot: back_to_spot,
                now_min: 660,
                saved_fen: 11 * 3_200 - (8 * 1_600 + 8 * 3_200),
            },
            Case {
                // One GPU held 4 h; paid 6 spot hours and 6 on-demand hours.
                name: "reclaimed every 20 minutes, the replacement released at once: a loss",
                base_gpus: 0,
                on_demand: released_at_once,
                spot: spot_at_once,
                now_min: 300,
                saved_fen: 4 * 3_200 - (6 * 1_600 + 6 * 3_200),
            },
        ];
        for case in cases {
            let pool = PricedPool::single(entry.clone(), plan(case.base_gpus, OverlayMode::Hour));
            let priced = |spans: &[LeaseSpan]| -> Vec<(LeaseSpan, &PriceEntry)> {
                spans.iter().map(|span| (*span, &entry)).collect()
            };
            let saved = pool
                .spot_net_saving(
                    &priced(&case.on_demand),
                    &priced(&case.spot),
                    window(0, MONTH, case.now_min * 60_000),
                )
                .unwrap();
            assert_eq!(saved.fen(), case.saved_fen, "{}", case.name);
        }
    }

    fn a100() -> PriceEntry {
        Catalog::demo().find("A100", "cn-north").unwrap().clone()
    }

    fn plan(base: u32, overlay: OverlayMode) -> PoolPlan {
        PoolPlan {
            base_gpus: base,
            term: Term::Month,
            overlay,
        }
    }

    const MONTH: i64 = 730 * HOUR_MS;

    /// The month `[start, end]` at `now`, with a base older than the month.
    fn window(month_start_ms: i64, month_end_ms: i64, now_ms: i64) -> SpendWindow {
        SpendWindow {
            month_start_ms,
            month_end_ms,
            now_ms,
            base_from_ms: i64::MIN,
        }
    }

    #[test]
    fn started_hours_are_paid_in_full() {
        let entry = a100();
        let hour = entry.hour;
        // One GPU held 61 minutes by the hour pays 2 hours.
        let spans = [LeaseSpan {
            start_ms: 0,
            end_ms: Some(61 * 60_000),
            gpus: 1,
        }];
        let spend = month_spend(
            &entry,
            &plan(0, OverlayMode::Hour),
            &spans,
            window(0, MONTH, 2 * HOUR_MS),
            0,
        )
        .unwrap();
        assert_eq!(spend.month_to_date, hour.checked_mul(2).unwrap());
        assert_eq!(spend.projected_month, spend.month_to_date);
        assert!((spend.gpu_hours - 61.0 / 60.0).abs() < 1e-9);
        // By the day: one day.
        let by_day = month_spend(
            &entry,
            &plan(0, OverlayMode::Day),
            &spans,
            window(0, MONTH, 2 * HOUR_MS),
            0,
        )
        .unwrap();
        assert_eq!(by_day.month_to_date, entry.day.unwrap());
    }

    #[test]
    fn the_base_is_paid_whether_held_or_not_and_fills_first() {
        let entry = a100();
        // FAQ 4: base 10 subscribed; 12 GPUs held for 10 hours: 2 pay by the hour.
        let spans = [LeaseSpan {
            start_ms: 0,
            end_ms: Some(10 * HOUR_MS),
            gpus: 12,
        }];
        let spend = month_spend(
            &entry,
            &plan(10, OverlayMode::Hour),
            &spans,
            window(0, MONTH, MONTH),
            0,
        )
        .unwrap();
        let base = entry.month.checked_mul(10).unwrap();
        let overlay = entry.hour.checked_mul(2 * 10).unwrap();
        assert_eq!(spend.month_to_date, base.checked_add(overlay).unwrap());
        // Halfway through the month with nothing held: half the base.
        let half = month_spend(
            &entry,
            &plan(10, OverlayMode::Hour),
            &[],
            window(0, MONTH, MONTH / 2),
            0,
        )
        .unwrap();
        assert_eq!(half.month_to_date, entry.month.checked_mul(5).unwrap());
        assert_eq!(half.projected_month, base);
    }

    #[test]
    fn a_freed_base_slot_is_taken_by_the_next_lease() {
        let entry = a100();
        let spans = [
            LeaseSpan {
                start_ms: 0,
                end_ms: Some(HOUR_MS),
                gpus: 1,
            },
            LeaseSpan {
                start_ms: 2 * HOUR_MS,
                end_ms: Some(3 * HOUR_MS),
                gpus: 1,
            },
        ];
        let spend = month_spend(
            &entry,
            &plan(1, OverlayMode::Hour),
            &spans,
            window(0, MONTH, 4 * HOUR_MS),
            0,
        )
        .unwrap();
        let base_4h = entry.month.scaled(4, 730).unwrap();
        assert_eq!(spend.month_to_date, base_4h, "both on the one base slot");
    }

    #[test]
    fn units_started_last_month_are_not_billed_again() {
        let entry = a100();
        // Held by the day from 12 h before the month to 1 h into it: that day began last
        // month, so this month pays nothing for it.
        let start = 10 * 24 * HOUR_MS;
        let spans = [LeaseSpan {
            start_ms: start - 12 * HOUR_MS,
            end_ms: Some(start + HOUR_MS),
            gpus: 1,
        }];
        let spend = month_spend(
            &entry,
            &plan(0, OverlayMode::Day),
            &spans,
            window(start, start + MONTH, start + 2 * HOUR_MS),
            0,
        )
        .unwrap();
        assert_eq!(spend.month_to_date, Money::ZERO);
    }

    #[test]
    fn the_projection_runs_the_current_rate_to_month_end() {
        let entry = a100();
        let spend = month_spend(
            &entry,
            &plan(0, OverlayMode::Hour),
            &[],
            window(0, MONTH, MONTH - 10 * HOUR_MS),
            4,
        )
        .unwrap();
        assert_eq!(spend.run_rate_per_hour, entry.hour.checked_mul(4).unwrap());
        assert_eq!(spend.projected_month, entry.hour.checked_mul(40).unwrap());
    }

    #[test]
    fn a_base_begun_mid_month_is_paid_from_its_start() {
        let entry = a100();
        let created = MONTH / 2;
        let spend_at = |now_ms: i64| {
            month_spend(
                &entry,
                &plan(10, OverlayMode::Hour),
                &[],
                SpendWindow {
                    base_from_ms: created,
                    ..window(0, MONTH, now_ms)
                },
                0,
            )
            .unwrap()
        };
        // Made a second ago: a second of the base, not half a month's.
        let just_made = spend_at(created + 1_000);
        assert_eq!(
            just_made.month_to_date,
            entry
                .month
                .scaled(10 * 1_000, 730 * HOUR_MS as i128)
                .unwrap()
        );
        assert!(just_made.month_to_date < entry.month);
        // The projection runs the base from its start to the month's end: half the month.
        assert_eq!(
            just_made.projected_month,
            entry.month.checked_mul(5).unwrap()
        );
        // An hour in: an hour of ten GPUs' base.
        assert_eq!(
            spend_at(created + HOUR_MS).month_to_date,
            entry.month.scaled(10, 730).unwrap()
        );
        // A base from before the month counts from the month's start.
        let old = month_spend(
            &entry,
            &plan(10, OverlayMode::Hour),
            &[],
            SpendWindow {
                base_from_ms: -MONTH,
                ..window(0, MONTH, MONTH / 2)
            },
            0,
        )
        .unwrap();
        assert_eq!(old.month_to_date, entry.month.checked_mul(5).unwrap());
    }

    /// The split's parts, and that they sum to month to date exactly.
    fn parts(spend: &Spend) -> (i64, i64, i64) {
        let split = spend.split;
        assert_eq!(
            split.overlay.fen() + split.base_used.fen() + split.idle_base.fen(),
            spend.month_to_date.fen(),
            "{spend:?}"
        );
        (
            split.overlay.fen(),
            split.base_used.fen(),
            split.idle_base.fen(),
        )
    }

    #[test]
    fn a_base_of_four_held_half_the_month_by_two_is_a_quarter_used() {
        let entry = a100();
        let spans = [LeaseSpan {
            start_ms: 0,
            end_ms: Some(MONTH / 2),
            gpus: 2,
        }];
        let spend = month_spend(
            &entry,
            &plan(4, OverlayMode::Hour),
            &spans,
            window(0, MONTH, MONTH),
            0,
        )
        .unwrap();
        let month = entry.month.fen();
        assert_eq!(spend.month_to_date.fen(), 4 * month);
        assert_eq!(parts(&spend), (0, month, 3 * month));
        assert!((spend.split.base_gpu_hours - 730.0).abs() < 1e-9);
        assert!((spend.split.idle_base_gpu_hours - 3.0 * 730.0).abs() < 1e-9);
    }

    #[test]
    fn leases_past_the_base_are_overlay_and_the_rounding_goes_to_idle() {
        let entry = a100();
        // Base 1; 3 GPUs for 10 hours: one on the base, two by the hour.
        let spans = [LeaseSpan {
            start_ms: 0,
            end_ms: Some(10 * HOUR_MS),
            gpus: 3,
        }];
        let spend = month_spend(
            &entry,
            &plan(1, OverlayMode::Hour),
            &spans,
            window(0, MONTH, MONTH),
            0,
        )
        .unwrap();
        let (overlay, used, idle) = parts(&spend);
        assert_eq!(overlay, entry.hour.fen() * 2 * 10);
        // 10 of the base's 730 hours, rounded down.
        assert_eq!(used, entry.month.fen() * 10 / 730);
        assert_eq!(idle, entry.month.fen() - used);
        // Every window of a base of 3 with one GPU on and off: the parts always sum.
        for now in [1, 7 * 60_000 + 13, HOUR_MS, MONTH / 3 + 17, MONTH] {
            let spans = [
                LeaseSpan {
                    start_ms: 11,
                    end_ms: Some(MONTH / 5),
                    gpus: 1,
                },
                LeaseSpan {
                    start_ms: MONTH / 4,
                    end_ms: None,
                    gpus: 4,
                },
            ];
            let spend = month_spend(
                &entry,
                &plan(3, OverlayMode::Day),
                &spans,
                window(0, MONTH, now),
                0,
            )
            .unwrap();
            let (_, used, idle) = parts(&spend);
            assert!(used >= 0 && idle >= 0, "{now}: {spend:?}");
        }
        // No base: nothing used, nothing idle.
        let no_base = month_spend(
            &entry,
            &plan(0, OverlayMode::Hour),
            &spans,
            window(0, MONTH, MONTH),
            0,
        )
        .unwrap();
        assert_eq!(parts(&no_base), (entry.hour.fen() * 3 * 10, 0, 0));
    }

    #[test]
    fn a_past_month_is_billed_to_its_end_and_a_future_one_not_at_all() {
        let billed = |now_ms| SpendWindow::billed_month(MONTH, 2 * MONTH, now_ms, i64::MIN);
        assert_eq!(
            billed(5 * MONTH).unwrap().now_ms,
            2 * MONTH,
            "over: to its end"
        );
        assert_eq!(
            billed(MONTH + 7).unwrap().now_ms,
            MONTH + 7,
            "running: to now"
        );
        assert_eq!(billed(MONTH - 1), None, "not begun");
        // A lease granted at the month's end is the next month's.
        let entry = a100();
        let spans = [LeaseSpan {
            start_ms: 2 * MONTH,
            end_ms: Some(2 * MONTH + HOUR_MS),
            gpus: 1,
        }];
        let spend = month_spend(
            &entry,
            &plan(0, OverlayMode::Hour),
            &spans,
            billed(5 * MONTH).unwrap(),
            0,
        )
        .unwrap();
        assert_eq!(spend.month_to_date, Money::ZERO);
        let spot =
            spot_month_spend(&[(spans[0], &entry)], billed(5 * MONTH).unwrap(), &[]).unwrap();
        assert_eq!(spot.month_to_date, Money::ZERO);
        // A lease across the month's end: the month pays the units started in it.
        let across = [LeaseSpan {
            start_ms: 2 * MONTH - 90 * 60_000,
            end_ms: Some(2 * MONTH + 10 * HOUR_MS),
            gpus: 1,
        }];
        let spend = month_spend(
            &entry,
            &plan(0, OverlayMode::Hour),
            &across,
            billed(5 * MONTH).unwrap(),
            0,
        )
        .unwrap();
        assert_eq!(spend.month_to_date, entry.hour.checked_mul(2).unwrap());
        let spot =
            spot_month_spend(&[(across[0], &entry)], billed(5 * MONTH).unwrap(), &[]).unwrap();
        assert_eq!(
            spot.month_to_date,
            entry.spot_hour.unwrap().checked_mul(2).unwrap()
        );
    }
}
