//! Spot, pure: how a pool's count splits between its base, on demand and spot (the mix),
//! and when spot is paused for a model in a region (the circuit breaker). The live
//! enforcer and the replay both decide through these, so what replay prices is what the
//! console does.
//!
//! The mix is EC2's `OnDemandBaseCapacity` + `OnDemandPercentageAboveBaseCapacity` over
//! Ebb's subscribed base: of a desired count `d`, the base takes `min(d, base)`, the
//! on-demand floor the next `min(rest, floor)`, and spot `⌊share · pct / 100⌋` of what is
//! left (rounded down: on demand is never short of its share).
//!
//! The breaker, per model × region: more than `max_interruptions` reclaims within
//! `window_ms` opens it (new GPUs there go on demand); it closes once it has been open
//! `cool_off_ms` and no reclaim came for `quiet_ms`. Reclaims while open keep it open.

use ebb_wire::pools::{GpuSplit, SpotMix};
use std::collections::{BTreeMap, VecDeque};

/// The most a spot share may be.
pub const MAX_SPOT_PCT: u32 = 100;

/// Splits `desired` GPUs by `mix` over `base_gpus` subscribed ones. With `spot_allowed`
/// false (a pool that is not interruptible, or spot paused everywhere it may go) nothing
/// goes on spot. `base + on_demand + spot == desired` always.
pub fn split(desired: u32, base_gpus: u32, mix: &SpotMix, spot_allowed: bool) -> GpuSplit {
    let base = desired.min(base_gpus);
    let rest = desired - base;
    let floor = rest.min(mix.on_demand_floor);
    let share = rest - floor;
    let spot = if spot_allowed {
        let pct = u64::from(mix.spot_pct.min(MAX_SPOT_PCT));
        u32::try_from(u64::from(share) * pct / 100).unwrap_or(share)
    } else {
        0
    };
    GpuSplit {
        base,
        on_demand: floor + share - spot,
        spot,
    }
}

/// How long before an on-demand GPU's paid unit ends its spot replacement is ordered,
/// so the spot GPU has started by the time the unit the on-demand GPU was paid for runs
/// out (make before break at the unit's end).
pub const SWAP_LEAD_MS: i64 = 5 * 60_000;

/// Whether an on-demand GPU granted at `granted_at_ms` may go back to spot at `now_ms`:
/// its paid unit (`unit_ms`) ends within `lead_ms`, so the spot GPU ordered now takes its
/// place as the time already paid for runs out, and no paid minute is thrown away. A pool
/// that releases at once (`at_unit_end` false: the operator said so) goes back at any
/// time. The live planner and replay both decide through this.
pub fn swap_due(
    granted_at_ms: i64,
    unit_ms: i64,
    now_ms: i64,
    lead_ms: i64,
    at_unit_end: bool,
) -> bool {
    !at_unit_end || crate::placement::paid_until(granted_at_ms, unit_ms, now_ms) - now_ms <= lead_ms
}

/// Whether a spot offer at `price_fen` an hour is within the mix's max price.
pub fn within_max(mix: &SpotMix, price_fen: Option<i64>) -> bool {
    match (mix.max_price_fen, price_fen) {
        (None, _) => true,
        (Some(max), Some(price)) => price <= max,
        (Some(_), None) => false,
    }
}

/// When the breaker opens and closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerPolicy {
    /// More reclaims than this within the window open it.
    pub max_interruptions: u32,
    pub window_ms: i64,
    /// It stays open at least this long.
    pub cool_off_ms: i64,
    /// And closes only once no reclaim came for this long.
    pub quiet_ms: i64,
}

impl Default for BreakerPolicy {
    /// Karpenter's and SkyServe's spirit: three reclaims in half an hour is a storm; an
    /// hour on demand, and back once spot has been quiet for half an hour.
    fn default() -> BreakerPolicy {
        BreakerPolicy {
            max_interruptions: 3,
            window_ms: 30 * 60_000,
            cool_off_ms: 60 * 60_000,
            quiet_ms: 30 * 60_000,
        }
    }
}

/// A breaker's switch, for the decision log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    /// Opened at a reclaim: `interruptions` within the window; on demand until `until_ms`
    /// at the earliest.
    Opened { interruptions: u32, until_ms: i64 },
    /// Closed: quiet for the policy's quiet time.
    Closed,
}

/// One model × region's breaker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breaker {
    policy: BreakerPolicy,
    /// Reclaims within the window (and the last one), oldest first.
    recent: VecDeque<i64>,
    last_ms: Option<i64>,
    /// Open since, when open.
    open_since_ms: Option<i64>,
}

impl Breaker {
    pub fn new(policy: BreakerPolicy) -> Breaker {
        Breaker {
            policy,
            recent: VecDeque::new(),
            last_ms: None,
            open_since_ms: None,
        }
    }

    pub fn is_open(&self) -> bool {
        self.open_since_ms.is_some()
    }

    /// The earliest it may close, when open.
    pub fn open_until_ms(&self) -> Option<i64> {
        let since = self.open_since_ms?;
        let quiet = self
            .last_ms
            .map_or(i64::MIN, |last| last + self.policy.quiet_ms);
        Some((since + self.policy.cool_off_ms).max(quiet))
    }

    /// Reclaims within the window ending at `now_ms`.
    pub fn recent(&self, now_ms: i64) -> u32 {
        let from = now_ms - self.policy.window_ms;
        u32::try_from(self.recent.iter().filter(|&&at| at > from).count()).unwrap_or(u32::MAX)
    }

    /// A reclaim at `at_ms` (in time order; an earlier one than the last counts at the
    /// last's time, so the window never runs backwards).
    pub fn record(&mut self, at_ms: i64) -> Option<Switch> {
        let at = self.last_ms.map_or(at_ms, |last| at_ms.max(last));
        self.last_ms = Some(at);
        self.recent.push_back(at);
        let from = at - self.policy.window_ms;
        while self.recent.front().is_some_and(|&first| first <= from) {
            self.recent.pop_front();
        }
        let count = u32::try_from(self.recent.len()).unwrap_or(u32::MAX);
        if self.open_since_ms.is_none() && count > self.policy.max_interruptions {
            self.open_since_ms = Some(at);
            return Some(Switch::Opened {
                interruptions: count,
                until_ms: self.open_until_ms().unwrap_or(at),
            });
        }
        None
    }

    /// The time is `now_ms`: closes when cooled off and quiet.
    pub fn tick(&mut self, now_ms: i64) -> Option<Switch> {
        let until = self.open_until_ms()?;
        if now_ms >= until {
            self.open_since_ms = None;
            self.recent.clear();
            return Some(Switch::Closed);
        }
        None
    }
}

/// Every model × region's breaker (keys as the caller names them: the pool's model and
/// the host's region).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Breakers {
    policy: BreakerPolicy,
    each: BTreeMap<(String, String), Breaker>,
}

impl Breakers {
    pub fn new(policy: BreakerPolicy) -> Breakers {
        Breakers {
            policy,
            each: BTreeMap::new(),
        }
    }

    pub fn policy(&self) -> BreakerPolicy {
        self.policy
    }

    /// A reclaim of `model` in `region` at `at_ms`.
    pub fn record(&mut self, model: &str, region: &str, at_ms: i64) -> Option<Switch> {
        let policy = self.policy();
        self.each
            .entry((model.to_string(), region.to_string()))
            .or_insert_with(|| Breaker::new(policy))
            .record(at_ms)
    }

    /// Closes those cooled off and quiet at `now_ms`: `(model, region)` of each.
    pub fn tick(&mut self, now_ms: i64) -> Vec<(String, String)> {
        let mut closed = Vec::new();
        for (key, breaker) in &mut self.each {
            if breaker.tick(now_ms) == Some(Switch::Closed) {
                closed.push(key.clone());
            }
        }
        closed
    }

    /// Reclaims of `model` in `region` within the window ending at `now_ms`.
    pub fn recent(&self, model: &str, region: &str, now_ms: i64) -> u32 {
        self.each
            .get(&(model.to_string(), region.to_string()))
            .map_or(0, |breaker| breaker.recent(now_ms))
    }

    /// Whether spot is paused for `model` in `region`, and until when at the earliest.
    pub fn open_until(&self, model: &str, region: &str) -> Option<i64> {
        self.each
            .get(&(model.to_string(), region.to_string()))
            .and_then(Breaker::open_until_ms)
    }

    /// Every open one: `((model, region), until_ms)`.
    pub fn open(&self) -> impl Iterator<Item = (&(String, String), i64)> {
        self.each
            .iter()
            .filter_map(|(key, breaker)| breaker.open_until_ms().map(|until| (key, until)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(floor: u32, pct: u32) -> SpotMix {
        SpotMix {
            on_demand_floor: floor,
            spot_pct: pct,
            max_price_fen: None,
        }
    }

    #[test]
    fn split_is_base_then_floor_then_share() {
        // 10 wanted, 2 base, floor 2, 50% of the other 6 on spot.
        assert_eq!(
            split(10, 2, &mix(2, 50), true),
            GpuSplit {
                base: 2,
                on_demand: 5,
                spot: 3
            }
        );
        // Rounded down on spot: 50% of 7 is 3.
        assert_eq!(split(7, 0, &mix(0, 50), true).spot, 3);
        assert_eq!(split(7, 0, &mix(0, 50), false).spot, 0);
        assert_eq!(split(1, 4, &mix(2, 100), true).base, 1);
    }

    #[test]
    fn back_to_spot_waits_for_the_paid_units_end() {
        const HOUR: i64 = 3_600_000;
        let lead = SWAP_LEAD_MS;
        // Granted at 0, hourly: not at 20 min (40 paid minutes left), yes from 55 min.
        for (now, due) in [
            (20 * 60_000, false),
            (HOUR - lead - 1, false),
            (HOUR - lead, true),
            (HOUR - 1, true),
            // Into its second hour (paid at once): 5 minutes in, not due again.
            (HOUR + 5 * 60_000, false),
            (2 * HOUR - lead, true),
        ] {
            assert_eq!(swap_due(0, HOUR, now, lead, true), due, "at {now} ms");
        }
        // A day-paid GPU: not for 23 h 55 min.
        assert!(!swap_due(0, 24 * HOUR, 12 * HOUR, lead, true));
        assert!(swap_due(0, 24 * HOUR, 24 * HOUR - lead, lead, true));
        // A pool that releases at once goes back at once.
        assert!(swap_due(0, HOUR, 60_000, lead, false));
    }

    #[test]
    fn max_price() {
        let mut capped = mix(0, 100);
        capped.max_price_fen = Some(1_000);
        assert!(within_max(&capped, Some(1_000)));
        assert!(!within_max(&capped, Some(1_001)));
        assert!(!within_max(&capped, None));
        assert!(within_max(&mix(0, 100), None));
    }

    #[test]
    fn breaker_opens_past_k_and_closes_when_quiet() {
        let minute = 60_000;
        let mut breaker = Breaker::new(BreakerPolicy::default());
        for at in [0, 5, 10] {
            assert_eq!(breaker.record(at * minute), None);
        }
        assert_eq!(
            breaker.record(20 * minute),
            Some(Switch::Opened {
                interruptions: 4,
                until_ms: 80 * minute
            })
        );
        assert_eq!(breaker.tick(79 * minute), None);
        // Another reclaim at 70 keeps it open to 100.
        assert_eq!(breaker.record(70 * minute), None);
        assert_eq!(breaker.tick(99 * minute), None);
        assert_eq!(breaker.tick(100 * minute), Some(Switch::Closed));
        assert!(!breaker.is_open());
        // Old reclaims are forgotten: one more does not open it again.
        assert_eq!(breaker.record(101 * minute), None);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn split_adds_up_and_keeps_its_order(
                desired in 0u32..10_000,
                base in 0u32..200,
                floor in 0u32..200,
                pct in 0u32..=100,
                allowed: bool,
            ) {
                let mix = mix(floor, pct);
                let s = split(desired, base, &mix, allowed);
                prop_assert_eq!(s.base + s.on_demand + s.spot, desired);
                prop_assert!(s.base <= base);
                // The floor is filled before any spot.
                prop_assert!(s.spot == 0 || s.on_demand >= floor);
                // Spot never above its share; with 100% every GPU past base and floor.
                let share = desired - s.base - floor.min(desired - s.base);
                prop_assert!(u64::from(s.spot) * 100 <= u64::from(share) * u64::from(pct));
                if allowed && pct == 100 {
                    prop_assert_eq!(s.spot, share);
                }
                if !allowed {
                    prop_assert_eq!(s.spot, 0);
                }
                // One more GPU wanted never means fewer on spot or on demand.
                let next = split(desired + 1, base, &mix, allowed);
                prop_assert!(next.spot >= s.spot && next.on_demand >= s.on_demand);
            }

            #[test]
            fn breaker_opens_only_past_k_in_window_and_closes_only_when_quiet(
                gaps in proptest::collection::vec(0i64..40, 1..60),
                k in 0u32..5,
            ) {
                let minute = 60_000;
                let policy = BreakerPolicy {
                    max_interruptions: k,
                    window_ms: 30 * minute,
                    cool_off_ms: 60 * minute,
                    quiet_ms: 20 * minute,
                };
                let mut breaker = Breaker::new(policy);
                let mut times: Vec<i64> = Vec::new();
                let mut now = 0;
                for gap in gaps {
                    // Minutes pass, the breaker is ticked each minute, then a reclaim.
                    for _ in 0..gap {
                        now += minute;
                        let was_open = breaker.is_open();
                        if breaker.tick(now) == Some(Switch::Closed) {
                            prop_assert!(was_open);
                            let last = *times.last().unwrap();
                            prop_assert!(now - last >= policy.quiet_ms);
                        }
                    }
                    let was_open = breaker.is_open();
                    times.push(now);
                    let in_window = times.iter().filter(|&&at| at > now - policy.window_ms).count() as u32;
                    match breaker.record(now) {
                        Some(Switch::Opened { interruptions, until_ms }) => {
                            prop_assert!(!was_open);
                            prop_assert!(interruptions > k);
                            prop_assert!(interruptions <= in_window);
                            prop_assert_eq!(until_ms, now + policy.cool_off_ms.max(policy.quiet_ms));
                        }
                        Some(Switch::Closed) => prop_assert!(false, "a reclaim never closes it"),
                        None => {
                            // Closed and still closed: no more than K in the window since
                            // it last closed.
                            prop_assert!(was_open || !breaker.is_open());
                        }
                    }
                    if breaker.is_open() {
                        prop_assert!(breaker.open_until_ms().unwrap() >= now + policy.quiet_ms);
                    }
                }
            }
        }
    }
}
