//! Spot in replay: the pool's mix of on-demand and spot GPUs, interruptions with their
//! notice and replacements, the circuit breaker, and the spot bill.
//!
//! The minute loop is [`super::sim`]'s (the policy sees the pool, scale-out ready after the
//! warmup, a scale-in gives back what the console's placement would), with each held GPU (a
//! slot) either spot or not:
//!
//! - Of the GPUs ordered, the mix (`ebb_reconcile::spot::split` over the base, spot
//!   allowed while the breaker is closed and the spot price in force is within the max
//!   price) says how many go on spot; the rest, the base and the on-demand floor are on
//!   demand. A scale-in releases spot above the share of the new count first (as the
//!   console does), then on demand, then spot only when too few GPUs are on demand; of the
//!   spot GPUs, the one with the least of its started hour left goes first (as the
//!   console's release order, paid unit's end first). On demand goes as [`super::sim`]
//!   gives back (`release_at_unit_end`, the default): the GPUs whose paid unit ends now,
//!   then within the console's margin, the newest of equals; the others stay held to their
//!   unit's end and are chosen again each minute the pool is above the policy's count. A
//!   pool that releases at once (`release_at_unit_end` false, or rules whose scale-in is
//!   `force`) gives back on demand from the top of the stack at once. The rules see the held GPUs oldest first, as the
//!   console gives them.
//! - Back to spot (as the console, through `ebb_reconcile::spot::swap_due`): a minute the
//!   policy keeps its count, with every GPU ready, spot allowed and fewer spot GPUs than
//!   the split's share, an on-demand GPU goes back to spot only when its paid unit (the
//!   overlay's hour, day or week, counted from its own rental) ends within the lead
//!   (`SWAP_LEAD_MS`, or the warmup when longer) and no sooner than the warmup: the spot
//!   GPU ordered then is ready as the unit runs out, and the on-demand one is released at
//!   the unit's end, its paid time used to the minute (make before break at the unit's
//!   end).
//!   Those that may go are the on-demand GPUs at the top of the pool's stack, as many as
//!   spot is short (never the base's places, below `base`); of them, those due go, the
//!   unit ending first first. A GPU not due waits for its next unit's end. A pool that
//!   releases at once (`release_at_unit_end` false) swaps them at once, each released when
//!   its spot GPU is ready.
//! - An interruption at minute `t` takes back a ready spot GPU (the oldest first): its
//!   replacement is ordered at `t` (spot, or on demand while the breaker is open or the
//!   price is above the max) and is ready at `t + warmup`; the GPU taken back stops being
//!   ready at `t + notice` and is paid until then. So the slot is short
//!   `max(0, warmup − notice)` minutes. The breaker records each interruption and closes
//!   per its policy; a GPU being replaced is not taken back again until settled. In the
//!   gap the rules see the replacement as a leased, idle GPU (utilization over the GPUs
//!   ready and those replacements), as the console's mean over a pool's leased GPUs reads
//!   it: an interruption is not more load, and is no reason to scale out.
//! - Interruptions come from the trace's `interrupted` column (the oldest ready spot GPUs
//!   that minute; those beyond the spot GPUs held are not counted) or else, when given, a
//!   [`SpotModel`] drawn for each ready spot GPU each minute.
//!
//! The bill: GPUs not on spot per started unit of the pool's overlay from each one's own
//! rental ([`super::billing::bill_runs_base`]: a GPU going back to spot at its unit's end
//! is not always the newest, so layers of the held count would bill runs no GPU had), the
//! base given or the best one over their places in the stack; each spot GPU per started
//! hour at the spot price in force when the hour starts (the trace's `spot_price`, else
//! the catalog's `spot_price_at`).

use super::ReplayOptions;
use super::billing::{PaidRun, unit_minutes};
use super::families::SplitMix64;
use super::sim::{MAX_HELD_GPUS, Outcome, Series, due_at_unit_end, flapped_runs, utilization_pct};
use super::trace::{Trace, whole_gpus};
use crate::policy::{MinuteView, Policy};
use ebb_cost::{CostError, Money, PriceEntry};
use ebb_reconcile::placement::paid_until;
use ebb_reconcile::spot::{Breaker, BreakerPolicy, SWAP_LEAD_MS, split, swap_due, within_max};
use ebb_wire::pools::SpotMix;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Minutes from an interruption's notice to the GPU being taken back, when neither the
/// caller nor the catalog says.
pub const DEFAULT_NOTICE_MINUTES: u32 = 2;

/// How a replay puts GPUs on spot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpotReplay {
    /// The pool's mix above its base.
    pub mix: SpotMix,
    /// GPUs subscribed (the bottom of the split, billed by subscription); 0: none in the
    /// split, and the bill chooses the best base for the GPUs not on spot, as a plain
    /// replay does.
    pub base: u32,
    /// Minutes from an interruption's notice to the GPU being gone.
    pub notice_minutes: u32,
    /// When spot is paused after interruptions, and resumed.
    pub breaker: BreakerPolicy,
    /// Interruptions drawn by this model when the trace has no `interrupted` column.
    pub model: Option<SpotModel>,
    /// The pool's `release_at_unit_end`: an on-demand GPU goes back to spot only at the end
    /// of its paid unit (true, the default), or at once (false: the operator said so).
    pub release_at_unit_end: bool,
}

impl Default for SpotReplay {
    fn default() -> SpotReplay {
        SpotReplay {
            mix: SpotMix::default(),
            base: 0,
            notice_minutes: DEFAULT_NOTICE_MINUTES,
            breaker: BreakerPolicy::default(),
            model: None,
            release_at_unit_end: true,
        }
    }
}

/// A seeded spot market: hours are calm or stormy (a two-state chain: a calm hour turns
/// stormy with chance 5%, a stormy one calms with chance 40%, so about one hour in nine is
/// stormy); in a stormy hour a spot GPU is taken back five times as often as in a calm one,
/// the two averaging `rate_per_gpu_hour`; the price is 30% of the hour price plus half the
/// rate (a market that interrupts more asks more), five points more in a stormy hour: 30.5%
/// to 35.5% at a rate of 1%, 35% to 40% at 10%. The same rate and seed give the same market
/// on every machine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpotModel {
    /// Interruptions per spot GPU-hour on average (0.01 to 0.10 is a usual market).
    pub rate_per_gpu_hour: f64,
    pub seed: u64,
}

const STORM_STARTS: f64 = 0.05;
const STORM_ENDS: f64 = 0.4;
const STORM_HAZARD: f64 = 5.0;

impl SpotModel {
    /// Whether each hour from minute 0 is stormy.
    pub fn stormy_hours(&self, hours: usize) -> Vec<bool> {
        let mut rng = SplitMix64::new(self.seed ^ 0x5EED_5707_0000_0001);
        let mut stormy = false;
        (0..hours)
            .map(|_| {
                let draw = rng.unit();
                stormy = if stormy {
                    draw >= STORM_ENDS
                } else {
                    draw < STORM_STARTS
                };
                stormy
            })
            .collect()
    }

    /// The chance that one spot GPU is taken back in one minute of a calm or stormy hour.
    pub fn hazard_per_minute(&self, stormy: bool) -> f64 {
        let rate = if self.rate_per_gpu_hour.is_finite() {
            self.rate_per_gpu_hour.max(0.0)
        } else {
            0.0
        };
        let stormy_share = STORM_STARTS / (STORM_STARTS + STORM_ENDS);
        let calm = rate / (1.0 + (STORM_HAZARD - 1.0) * stormy_share);
        let hourly = if stormy { calm * STORM_HAZARD } else { calm };
        (hourly / 60.0).min(1.0)
    }

    /// The spot price in a calm or stormy hour, in thousandths of the hour price.
    pub fn price_permille(&self, stormy: bool) -> i64 {
        let rate = self.rate_per_gpu_hour.clamp(0.0, 1.0);
        300 + (500.0 * rate).round() as i64 + if stormy { 50 } else { 0 }
    }

    /// The spot price in force each of `minutes`, in fen per GPU-hour, from the hour price.
    pub fn spot_prices_fen(&self, minutes: usize, hour: Money) -> Vec<i64> {
        let stormy = self.stormy_hours(minutes.div_ceil(60));
        let price = |stormy: bool| {
            let wide = i128::from(hour.fen()) * i128::from(self.price_permille(stormy));
            i64::try_from((wide + 500) / 1000).unwrap_or(i64::MAX)
        };
        let (calm, storm) = (price(false), price(true));
        (0..minutes)
            .map(|t| if stormy[t / 60] { storm } else { calm })
            .collect()
    }

    /// An `interrupted` column for `demand`, as if `spot_pct` percent of the GPUs it needs
    /// were on spot: each of them drawn each minute.
    pub fn interrupted_for(&self, demand: &[f64], spot_pct: u32) -> Vec<u32> {
        let stormy = self.stormy_hours(demand.len().div_ceil(60));
        let mut rng = self.draws();
        demand
            .iter()
            .enumerate()
            .map(|(t, &busy)| {
                let spot = u64::from(whole_gpus(busy)) * u64::from(spot_pct.min(100)) / 100;
                let hazard = self.hazard_per_minute(stormy[t / 60]);
                (0..spot).filter(|_| rng.unit() < hazard).count() as u32
            })
            .collect()
    }

    fn draws(&self) -> SplitMix64 {
        SplitMix64::new(self.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x1A7E_0000_D4A5)
    }
}

/// The spot price in force at a minute: the trace's column, else the catalog's.
#[derive(Debug, Clone, Copy)]
pub struct SpotPrices<'a> {
    column: Option<&'a [i64]>,
    entry: &'a PriceEntry,
    start_hour: i64,
}

impl<'a> SpotPrices<'a> {
    /// For `trace`, priced by `entry`, minute 0 in catalog hour `start_hour`.
    pub fn new(trace: &'a Trace, entry: &'a PriceEntry, start_hour: i64) -> SpotPrices<'a> {
        SpotPrices {
            column: trace.spot_price_fen(),
            entry,
            start_hour,
        }
    }

    /// In fen per GPU-hour; `None` when spot is not offered.
    pub fn at(&self, minute: u32) -> Option<i64> {
        match self.column {
            Some(column) => column.get(minute as usize).copied(),
            None => self
                .entry
                .spot_price_at(self.start_hour.saturating_add(i64::from(minute / 60)))
                .map(Money::fen),
        }
    }
}

/// What a spot replay's minute loop measured.
#[derive(Debug, Clone, PartialEq)]
pub struct SpotOutcome {
    /// The pool minute by minute, its shortfall and actions, as a plain replay's.
    pub outcome: Outcome,
    /// GPUs not on spot held each minute (base and on demand), as `on_demand_runs` cover
    /// them.
    pub on_demand_held: Vec<u32>,
    /// Spot GPUs held each minute (not counting those in their notice).
    pub spot_held: Vec<u32>,
    /// Of `on_demand_held`, those going back to spot: held until the spot GPUs replacing
    /// them (in `spot_held`) are ready. `on_demand_held + spot_held − swapping` is the
    /// policy's count.
    pub swapping: Vec<u32>,
    /// Each spot GPU's run, `[start, end)` in minutes.
    pub spot_runs: Vec<(u32, u32)>,
    /// Each GPU not on spot's run (base and on demand, each from its own rental), with its
    /// place in the stack (the lowest free when rented): what the bill charges.
    pub on_demand_runs: Vec<PaidRun>,
    /// Spot GPUs taken back.
    pub interruptions: u32,
    /// Minutes the breaker was open.
    pub breaker_open_minutes: u32,
}

/// One held GPU's place in the pool.
#[derive(Debug, Clone, Copy)]
struct Slot {
    since: u32,
    ready_at: u32,
    /// Not ready in `[gap_from, gap_until)`: the GPU taken back is gone, its replacement
    /// still warming.
    gap_from: u32,
    gap_until: u32,
    /// May be taken back from this minute.
    settled_at: u32,
    /// The spot run of its GPU, when on spot.
    spot: Option<usize>,
    /// The spot run of the GPU taken back, in its notice.
    notice: Option<usize>,
    /// Back to spot: the on-demand GPU this spot GPU replaces is held, and ready, until
    /// this minute (0: none).
    swap_until: u32,
    /// The paid run (in `Pool::paid`) of its GPU not on spot: set while it is not on spot,
    /// and while it goes back to spot, until released. Its start is the GPU's rental, the
    /// clock of its paid unit (`since` is not: it is also the spot GPU's).
    paid: Option<usize>,
}

impl Slot {
    fn is_ready(&self, t: u32) -> bool {
        t >= self.ready_at && !(self.gap_from <= t && t < self.gap_until)
    }
}

/// The pool's slots and the ready count, kept with a per-minute change list so that each
/// minute costs only what changed.
struct Pool {
    slots: Vec<Slot>,
    runs: Vec<(u32, u32)>,
    delta: Vec<i64>,
    ready: i64,
    /// Replacements warming in their slot's gap (the GPU taken back gone): held, and read
    /// as idle, as the console's mean over the pool's leased GPUs reads them. Kept with
    /// its own change list.
    gap_delta: Vec<i64>,
    gapped: i64,
    /// Each slot's `since`, oldest first, as the console gives its rules the held GPUs
    /// (kept as slots come, go and restart, not sorted each minute).
    since: Vec<u32>,
    spot: u32,
    /// On-demand GPUs held while the spot GPUs replacing them warm, and how many of them
    /// go each minute.
    swapping: u32,
    swap_ends: Vec<u32>,
    minutes: u32,
    /// The runs of GPUs not on spot, and the places in the stack free for the next one.
    paid: Vec<PaidRun>,
    free_places: BinaryHeap<Reverse<u32>>,
    next_place: u32,
    /// Runs ended (or ending) before the trace's end whose place is not free yet.
    ending: Vec<usize>,
}

impl Pool {
    /// `change` ready GPUs at minute `at`, seen from minute `now`.
    fn shift(&mut self, now: u32, at: u32, change: i64) {
        if at <= now {
            self.ready += change;
        } else if let Some(slot) = self.delta.get_mut(at as usize) {
            *slot += change;
        }
    }

    /// `change` GPUs in a gap at minute `at`, seen from minute `now`.
    fn shift_gap(&mut self, now: u32, at: u32, change: i64) {
        if at <= now {
            self.gapped += change;
        } else if let Some(slot) = self.gap_delta.get_mut(at as usize) {
            *slot += change;
        }
    }

    /// A GPU not on spot rented at `t`: its run, in the lowest place free.
    fn rent(&mut self, t: u32) -> usize {
        let position = match self.free_places.pop() {
            Some(Reverse(place)) => place,
            None => {
                self.next_place += 1;
                self.next_place - 1
            }
        };
        self.paid.push(PaidRun {
            start_minute: t,
            end_minute: self.minutes,
            position,
        });
        self.paid.len() - 1
    }

    /// Run `run` ends at `at` (if it has not ended sooner); its place is free from then.
    fn end_paid(&mut self, run: usize, at: u32) {
        let paid = &mut self.paid[run];
        if paid.end_minute <= at {
            return;
        }
        // Open until now (its end the trace's): not yet waiting for its place to be freed.
        let open = paid.end_minute >= self.minutes;
        paid.end_minute = at;
        if open && at < self.minutes {
            self.ending.push(run);
        }
    }

    /// The places of runs ended by minute `t` are free.
    fn free_ended(&mut self, t: u32) {
        let (paid, free) = (&self.paid, &mut self.free_places);
        self.ending.retain(|&run| {
            let ended = paid[run].end_minute <= t;
            if ended {
                free.push(Reverse(paid[run].position));
            }
            !ended
        });
    }

    /// Slot `index` holds a GPU from `t` on (a replacement, or back to spot): its `since`.
    fn restart(&mut self, index: usize, t: u32) {
        self.forget_since(self.slots[index].since);
        self.since.push(t);
        self.slots[index].since = t;
    }

    fn forget_since(&mut self, since: u32) {
        if let Ok(at) = self.since.binary_search(&since) {
            self.since.remove(at);
        }
    }

    fn push(&mut self, t: u32, warmup: u32, spot: bool) {
        // `t` is the loop's minute, never before a `since` already held: still sorted.
        self.since.push(t);
        let ready_at = t.saturating_add(warmup);
        self.shift(t, ready_at, 1);
        let paid = (!spot).then(|| self.rent(t));
        let spot = spot.then(|| {
            self.runs.push((t, self.minutes));
            self.spot += 1;
            self.runs.len() - 1
        });
        self.slots.push(Slot {
            since: t,
            ready_at,
            gap_from: 0,
            gap_until: 0,
            settled_at: ready_at,
            spot,
            notice: None,
            swap_until: 0,
            paid,
        });
    }

    /// Back to spot: slot `index`'s on-demand GPU is replaced by a spot GPU ordered at `t`
    /// (ready by `until`), and released at `until`.
    fn swap(&mut self, t: u32, index: usize, until: u32) {
        if let Some(run) = self.slots[index].paid {
            self.end_paid(run, until.min(self.minutes));
        }
        self.runs.push((t, self.minutes));
        self.spot += 1;
        let run = self.runs.len() - 1;
        if until > t {
            self.swapping += 1;
            if let Some(ends) = self.swap_ends.get_mut(until as usize) {
                *ends += 1;
            }
        }
        self.restart(index, t);
        let slot = &mut self.slots[index];
        slot.spot = Some(run);
        slot.settled_at = slot.settled_at.max(until);
        slot.swap_until = until;
    }

    fn remove(&mut self, t: u32, index: usize) {
        let slot = self.slots.remove(index);
        self.forget_since(slot.since);
        if slot.is_ready(t) {
            self.ready -= 1;
        }
        // Undo what was still to come.
        if slot.ready_at > t {
            self.shift(t, slot.ready_at, -1);
        }
        if slot.gap_from > t {
            self.shift(t, slot.gap_from, 1);
        }
        if slot.gap_until > t && slot.gap_from < slot.gap_until {
            self.shift(t, slot.gap_until, -1);
        }
        if slot.gap_from <= t && t < slot.gap_until {
            self.gapped -= 1;
        }
        if slot.gap_from > t {
            self.shift_gap(t, slot.gap_from, -1);
        }
        if slot.gap_until > t && slot.gap_from < slot.gap_until {
            self.shift_gap(t, slot.gap_until, 1);
        }
        if let Some(run) = slot.spot {
            self.runs[run].1 = t;
            self.spot -= 1;
        }
        if let Some(run) = slot.notice {
            self.runs[run].1 = self.runs[run].1.min(t);
        }
        if let Some(run) = slot.paid {
            self.end_paid(run, t);
        }
        if slot.swap_until > t {
            self.swapping -= 1;
            if let Some(ends) = self.swap_ends.get_mut(slot.swap_until as usize) {
                *ends -= 1;
            }
        }
    }

    /// Takes back slot `index`'s spot GPU at `t`; its replacement on spot or not.
    fn interrupt(&mut self, t: u32, index: usize, warmup: u32, notice: u32, spot: bool) {
        let gone = t.saturating_add(notice);
        let ready = t.saturating_add(warmup);
        let old = self.slots[index].spot.take();
        if let Some(run) = old {
            self.runs[run].1 = self.runs[run].1.min(gone);
            self.spot -= 1;
        }
        let replacement = spot.then(|| {
            self.runs.push((t, self.minutes));
            self.spot += 1;
            self.runs.len() - 1
        });
        // On demand, a fresh rental: its paid unit starts now.
        let paid = (!spot).then(|| self.rent(t));
        if warmup > notice {
            self.shift(t, gone, -1);
            self.shift(t, ready, 1);
            self.shift_gap(t, gone, 1);
            self.shift_gap(t, ready, -1);
        }
        self.restart(index, t);
        let slot = &mut self.slots[index];
        slot.notice = old;
        slot.spot = replacement;
        slot.paid = paid;
        (slot.gap_from, slot.gap_until) = if warmup > notice {
            (gone, ready)
        } else {
            (0, 0)
        };
        slot.settled_at = gone.max(ready);
    }
}

/// The `count` spot GPUs a scale-in gives back (fewer when fewer are on spot), by index,
/// the highest first so each can be removed in turn: those with the least of their started
/// hour left (the hour is paid whichever goes, so the one nearest its end throws away the
/// least), the newest of equals.
fn spot_paid_up_first(slots: &[Slot], minute: u32, count: usize) -> Vec<usize> {
    if count == 0 {
        return Vec::new();
    }
    let mut spot: Vec<(u32, Reverse<usize>)> = slots
        .iter()
        .enumerate()
        .filter(|(_, slot)| slot.spot.is_some())
        .map(|(index, slot)| {
            let held = minute.saturating_sub(slot.since);
            (60 - held % 60, Reverse(index))
        })
        .collect();
    if count < spot.len() {
        spot.select_nth_unstable(count);
        spot.truncate(count);
    }
    let mut going: Vec<usize> = spot.into_iter().map(|(_, Reverse(index))| index).collect();
    going.sort_unstable_by(|a, b| b.cmp(a));
    going
}

/// Gives back on-demand GPUs at `minute` as the console does at the end of the paid unit,
/// as many as the pool is above `desired` (no more than are on demand): those whose paid
/// unit (from each one's rental) ends now, then within the margin, the newest of equals.
/// The others stay held.
fn release_on_demand_due(pool: &mut Pool, minute: u32, desired: u32, unit: u32) {
    let on_demand = pool.slots.iter().filter(|slot| slot.spot.is_none()).count();
    let count = pool
        .slots
        .len()
        .saturating_sub(desired as usize)
        .min(on_demand);
    if count == 0 {
        return;
    }
    let mut due: Vec<(u8, Reverse<u32>, Reverse<usize>, usize)> = pool
        .slots
        .iter()
        .enumerate()
        .filter(|(_, slot)| slot.spot.is_none())
        .filter_map(|(index, slot)| {
            let run = slot.paid?;
            let start = pool.paid[run].start_minute;
            due_at_unit_end(start, minute, unit)
                .map(|rank| (rank, Reverse(start), Reverse(run), index))
        })
        .collect();
    due.sort_unstable();
    let mut going: Vec<usize> = due.iter().take(count).map(|entry| entry.3).collect();
    going.sort_unstable_by(|a, b| b.cmp(a));
    for index in going {
        pool.remove(minute, index);
    }
}

/// When on-demand GPUs go back to spot: `swap_due` with the overlay's unit, and the minute
/// the one going is released.
struct BackToSpot {
    start_ms: i64,
    unit_ms: i64,
    lead_ms: i64,
    warmup: u32,
    at_unit_end: bool,
}

impl BackToSpot {
    fn ms(&self, minute: u32) -> i64 {
        self.start_ms
            .saturating_add(i64::from(minute).saturating_mul(60_000))
    }

    /// An on-demand GPU rented at minute `rented` may go back to spot at `minute`: the
    /// minute it is then released, or `None` when it is not due (its unit ends later than
    /// the lead, or sooner than a spot GPU ordered now would be ready).
    fn release(&self, rented: u32, minute: u32) -> Option<u32> {
        let (granted_ms, now_ms) = (self.ms(rented), self.ms(minute));
        if !swap_due(
            granted_ms,
            self.unit_ms,
            now_ms,
            self.lead_ms,
            self.at_unit_end,
        ) {
            return None;
        }
        let ready = minute.saturating_add(self.warmup);
        if !self.at_unit_end {
            return Some(ready);
        }
        let paid_minutes = (paid_until(granted_ms, self.unit_ms, now_ms) - granted_ms) / 60_000;
        let unit_end = rented.saturating_add(u32::try_from(paid_minutes).unwrap_or(u32::MAX));
        (ready <= unit_end).then_some(unit_end)
    }
}

/// Runs `policy` over `trace` with `spot`'s mix; `prices` is the spot price in force. The
/// options give the warmup, minute 0's instant and the overlay (whose paid unit an
/// on-demand GPU is kept to before it goes back to spot); their term is the bill's.
#[allow(
    clippy::too_many_lines,
    reason = "the spot replay's minute loop; to be split into per-minute steps"
)]
pub fn simulate(
    trace: &Trace,
    policy: &mut dyn Policy,
    options: &ReplayOptions,
    prices: &SpotPrices<'_>,
    spot: &SpotReplay,
) -> SpotOutcome {
    let demand = trace.demand();
    let minutes = demand.len();
    let warmup = options.warmup_minutes;
    let start_ms = options.start_ms;
    let back_to_spot = BackToSpot {
        start_ms,
        unit_ms: i64::from(unit_minutes(options.overlay)) * 60_000,
        lead_ms: SWAP_LEAD_MS.max(i64::from(warmup) * 60_000),
        warmup,
        at_unit_end: spot.release_at_unit_end,
    };
    let unit = unit_minutes(options.overlay);
    // Kept to the unit's end unless the pool or the rules' scale-in say at once.
    let at_unit_end = spot.release_at_unit_end && policy.releases_at_unit_end();
    let notice = spot.notice_minutes;
    let mix = &spot.mix;
    let column = trace.interrupted();
    let model = if column.is_none() { spot.model } else { None };
    let stormy = model.map(|model| model.stormy_hours(minutes.div_ceil(60)));
    let mut draws = model.map(|model| model.draws());
    let mut breaker = Breaker::new(spot.breaker);
    let now_ms = |minute: u32| start_ms.saturating_add(i64::from(minute).saturating_mul(60_000));
    let allowed =
        |breaker: &Breaker, minute: u32| !breaker.is_open() && within_max(mix, prices.at(minute));

    let mut pool = Pool {
        slots: Vec::new(),
        runs: Vec::new(),
        delta: vec![0; minutes + 1],
        ready: 0,
        gap_delta: vec![0; minutes + 1],
        gapped: 0,
        since: Vec::new(),
        spot: 0,
        swapping: 0,
        swap_ends: vec![0; minutes + 1],
        minutes: minutes as u32,
        paid: Vec::new(),
        free_places: BinaryHeap::new(),
        next_place: 0,
        ending: Vec::new(),
    };
    let initial = whole_gpus(demand[0]).min(MAX_HELD_GPUS);
    let first = split(initial, spot.base, mix, allowed(&breaker, 0));
    for i in 0..initial {
        pool.push(0, 0, i >= initial - first.spot);
    }
    let mut custom: Vec<(&str, f64)> = Vec::with_capacity(trace.columns().len());
    let mut series = Series {
        initial_gpus: initial,
        ready: Vec::with_capacity(minutes),
        held: Vec::with_capacity(minutes),
        utilization_pct: Vec::with_capacity(minutes),
    };
    let mut on_demand_held = Vec::with_capacity(minutes);
    let mut spot_held = Vec::with_capacity(minutes);
    let mut swapping = Vec::with_capacity(minutes);
    let (mut shortfall, mut total) = (0.0, 0.0);
    let (mut actions, mut interruptions, mut open_minutes) = (0, 0u32, 0u32);
    let mut peak = initial;
    let mut taken: Vec<usize> = Vec::new();
    let mut due: Vec<(u32, Reverse<u32>, usize)> = Vec::new();
    let mut places: Vec<u32> = Vec::new();
    for (t, &busy) in demand.iter().enumerate() {
        let minute = t as u32;
        pool.ready += pool.delta[t];
        pool.gapped += pool.gap_delta[t];
        pool.swapping -= pool.swap_ends[t];
        pool.free_ended(minute);
        breaker.tick(now_ms(minute));

        // Interruptions: which ready, settled spot GPUs are taken back.
        taken.clear();
        let eligible =
            |slot: &Slot| slot.spot.is_some() && slot.is_ready(minute) && minute >= slot.settled_at;
        if let Some(column) = column {
            let mut want = column[t];
            for (index, slot) in pool.slots.iter().enumerate() {
                if want == 0 {
                    break;
                }
                if eligible(slot) {
                    taken.push(index);
                    want -= 1;
                }
            }
        } else if let (Some(model), Some(stormy), Some(rng)) = (model, &stormy, draws.as_mut()) {
            let hazard = model.hazard_per_minute(stormy[t / 60]);
            if pool.spot > 0 && hazard > 0.0 {
                for (index, slot) in pool.slots.iter().enumerate() {
                    if eligible(slot) && rng.unit() < hazard {
                        taken.push(index);
                    }
                }
            }
        }
        for _ in &taken {
            breaker.record(now_ms(minute));
        }
        interruptions += taken.len() as u32;
        let spot_now = allowed(&breaker, minute);
        for &index in &taken {
            pool.interrupt(minute, index, warmup, notice, spot_now);
        }

        custom.clear();
        for column in trace.columns() {
            if let Some(value) = column.values[t] {
                custom.push((column.name.as_str(), value));
            }
        }
        let held = pool.slots.len() as u32;
        let ready = pool.ready as u32;
        let view = MinuteView {
            minute,
            now_ms: now_ms(minute),
            ready,
            held,
            warming: held - ready,
            busy_gpus: busy,
            // Over the GPUs ready and the replacements warming in a gap: the console's
            // mean reads a leased replacement as idle, so an interruption alone does not
            // look like more load.
            util_pct: utilization_pct(busy, ready + pool.gapped as u32),
            mem_pct: trace.mem_pct().and_then(|values| values[t]),
            custom: &custom,
            held_since: &pool.since,
        };
        let desired = policy.desired(&view).min(MAX_HELD_GPUS);
        if desired != held {
            if desired > held {
                let target = split(desired, spot.base, mix, spot_now).spot;
                let extra = desired - held;
                let on_spot = extra.min(target.saturating_sub(pool.spot));
                for i in 0..extra {
                    pool.push(minute, warmup, i >= extra - on_spot);
                }
            } else {
                // Spot above the new count's share goes first, newest first; then on
                // demand, then spot, newest first.
                let share = split(desired, spot.base, mix, true).spot;
                let excess = pool.spot.saturating_sub(share);
                for index in spot_paid_up_first(&pool.slots, minute, excess as usize) {
                    pool.remove(minute, index);
                }
                if at_unit_end {
                    release_on_demand_due(&mut pool, minute, desired, unit);
                }
                // On demand from the top of the stack (the newest rental there), so the
                // places the base covers stay held.
                while !at_unit_end && pool.slots.len() > desired as usize {
                    let top = pool
                        .slots
                        .iter()
                        .enumerate()
                        .filter(|(_, slot)| slot.spot.is_none())
                        .filter_map(|(index, slot)| {
                            slot.paid.map(|run| (pool.paid[run].position, index))
                        })
                        .max();
                    match top {
                        Some((_, index)) => pool.remove(minute, index),
                        None => break,
                    }
                }
                // Spot only where on demand cannot make up the count (what is kept to its
                // unit's end is not made up by spot).
                let on_demand = pool.slots.iter().filter(|slot| slot.spot.is_none()).count();
                let over = pool
                    .slots
                    .len()
                    .saturating_sub(desired as usize)
                    .saturating_sub(if at_unit_end { on_demand } else { 0 });
                for index in spot_paid_up_first(&pool.slots, minute, over) {
                    pool.remove(minute, index);
                }
            }
        } else if spot_now && i64::from(held) == pool.ready {
            // Back to spot: the count kept and every GPU ready, the missing spot GPUs are
            // ordered in place of on-demand ones whose paid unit is about to end, each
            // released at its unit's end. Those that may go are the top `missing` of the
            // stack (the on-demand GPUs above the mix's share; never the base's places):
            // one lower down going would leave a hole where the base is paid for nothing
            // while a GPU above it stays on demand.
            let target = split(desired, spot.base, mix, true).spot;
            let missing = target.saturating_sub(pool.spot) as usize;
            if missing > 0 {
                places.clear();
                places.extend(
                    pool.slots
                        .iter()
                        .filter(|slot| slot.spot.is_none())
                        .filter_map(|slot| slot.paid.map(|run| pool.paid[run].position)),
                );
                places.sort_unstable_by(|a, b| b.cmp(a));
                let lowest = places.get(missing - 1).copied().unwrap_or(0).max(spot.base);
                due.clear();
                for (index, slot) in pool.slots.iter().enumerate() {
                    if slot.spot.is_some() {
                        continue;
                    }
                    let Some(run) = slot.paid.map(|run| pool.paid[run]) else {
                        continue;
                    };
                    if run.position < lowest {
                        continue;
                    }
                    if let Some(until) = back_to_spot.release(run.start_minute, minute) {
                        due.push((until, Reverse(run.position), index));
                    }
                }
                due.sort_unstable();
                for &(until, _, index) in due.iter().take(missing) {
                    pool.swap(minute, index, until);
                }
            }
        }
        if breaker.is_open() {
            open_minutes += 1;
        }
        let now_held = pool.slots.len() as u32;
        if now_held != held {
            actions += 1;
        }
        peak = peak.max(now_held);
        let ready = pool.ready as u32;
        series.ready.push(ready);
        series.held.push(now_held);
        series
            .utilization_pct
            .push(utilization_pct(busy, ready + pool.gapped as u32));
        on_demand_held.push(now_held - pool.spot + pool.swapping);
        spot_held.push(pool.spot);
        swapping.push(pool.swapping);
        shortfall += (busy - f64::from(ready)).max(0.0);
        total += busy;
    }
    // Flaps over every GPU's run, on demand and spot (the GPUs held before minute 0 were
    // not rented by the replay).
    let initial_on_demand = (initial - first.spot) as usize;
    let mut runs = pool.paid.clone();
    let mut rented: Vec<bool> = (0..runs.len()).map(|k| k >= initial_on_demand).collect();
    for (k, &(start, end)) in pool.runs.iter().enumerate() {
        runs.push(PaidRun {
            start_minute: start,
            end_minute: end,
            position: 0,
        });
        rented.push(k >= first.spot as usize);
    }
    let flapped = flapped_runs(&runs, &rented, minutes as u32, unit);
    SpotOutcome {
        outcome: Outcome {
            series,
            shortfall_gpu_minutes: shortfall,
            demand_gpu_minutes: total,
            actions,
            peak_held_gpus: peak,
            runs,
            rented,
            flapped,
        },
        on_demand_held,
        spot_held,
        swapping,
        spot_runs: pool.runs,
        on_demand_runs: pool.paid,
        interruptions,
        breaker_open_minutes: open_minutes,
    }
}

/// What the spot GPUs cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpotBill {
    /// Started hours bought on spot.
    pub gpu_hours: u64,
    pub cost: Money,
}

/// Bills each spot run per started hour at the price in force when the hour starts
/// (`fallback` where no spot price is known).
pub fn bill_spot(
    runs: &[(u32, u32)],
    prices: &SpotPrices<'_>,
    fallback: Money,
) -> Result<SpotBill, CostError> {
    let mut units = 0u64;
    let mut fen: i128 = 0;
    for &(start, end) in runs {
        let hours = end.saturating_sub(start).div_ceil(60);
        units += u64::from(hours);
        for k in 0..hours {
            let at = start + k * 60;
            fen += i128::from(prices.at(at).unwrap_or(fallback.fen()));
        }
    }
    Ok(SpotBill {
        gpu_hours: units,
        cost: i64::try_from(fen)
            .map(Money::from_fen)
            .map_err(|_| CostError::Overflow)?,
    })
}
