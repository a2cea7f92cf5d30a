//! Spot GPUs, pure: which of a host's GPUs it offers as spot ([`SpotOffer`]), and the
//! simulator's seeded interruption process ([`Interruptions`]): when the host's owner takes
//! a spot lease back, and the spot price that rises with how often it does.

use ebb_wire::agent::Gpu;
use std::collections::BTreeSet;
use std::time::Duration;

/// The highest interruption rate the simulator takes: a reclaim per spot lease-minute.
pub const MAX_INTERRUPTIONS_PER_HOUR: f64 = 60.0;

/// The notice a simulated interruption gives when the config names none: two minutes.
pub const DEFAULT_SPOT_NOTICE: Duration = Duration::from_secs(120);

/// Which of a host's GPUs it offers as spot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SpotOffer {
    /// None: every GPU on demand.
    #[default]
    None,
    /// Every GPU (`spot = true`).
    All,
    /// These GPUs, by index (`spot_gpus = [0, 1]`).
    Gpus(BTreeSet<u32>),
}

impl SpotOffer {
    /// Whether the GPU at `index` is offered as spot.
    pub fn is_spot(&self, index: u32) -> bool {
        match self {
            SpotOffer::None => false,
            SpotOffer::All => true,
            SpotOffer::Gpus(indexes) => indexes.contains(&index),
        }
    }

    /// Whether any GPU is offered as spot.
    pub fn any(&self) -> bool {
        match self {
            SpotOffer::None => false,
            SpotOffer::All => true,
            SpotOffer::Gpus(indexes) => !indexes.is_empty(),
        }
    }

    /// Marks the GPUs offered as spot in a reading, whatever the probe said: where the
    /// list is published, so the simulator and NVML alike carry it.
    pub fn mark(&self, gpus: &mut [Gpu]) {
        for gpu in gpus {
            gpu.spot = self.is_spot(gpu.index);
        }
    }

    /// The first index offered that a host of `gpu_count` GPUs does not have.
    pub fn missing_index(&self, gpu_count: usize) -> Option<u32> {
        match self {
            SpotOffer::Gpus(indexes) => indexes
                .iter()
                .copied()
                .find(|index| usize::try_from(*index).unwrap_or(usize::MAX) >= gpu_count),
            _ => None,
        }
    }
}

/// The simulator's interruption process: each spot lease is reclaimed by the host's owner
/// at the first event of its own Poisson process of `per_hour` events an hour, counted
/// from its grant and fixed by the seed and the lease's id, with `notice`.
#[derive(Debug, Clone, PartialEq)]
pub struct Interruptions {
    /// Expected reclaims per spot lease-hour: more than 0, at most
    /// [`MAX_INTERRUPTIONS_PER_HOUR`].
    pub per_hour: f64,
    /// The notice each reclaim gives (1 s to an hour).
    pub notice: Duration,
    pub seed: u64,
}

impl Interruptions {
    /// When lease `lease_id`, granted at `granted_at_ms` (Unix ms), is reclaimed.
    pub fn reclaim_at_ms(&self, lease_id: &str, granted_at_ms: u64) -> u64 {
        granted_at_ms.saturating_add(wait_ms(self.seed, lease_id, self.per_hour))
    }
}

/// The wait from a lease's grant to its reclaim, in ms: exponential with mean
/// `1 / per_hour` hours (the first event of a Poisson process), drawn from the seed and the
/// lease's id, so the same lease on the same seed always waits the same.
pub fn wait_ms(seed: u64, lease_id: &str, per_hour: f64) -> u64 {
    let unit = ((mix(seed ^ mix(fnv(lease_id))) >> 11) as f64) / (1u64 << 53) as f64;
    // 1 - unit is in (0, 1]: the logarithm is finite.
    let hours = -(1.0 - unit).ln() / per_hour;
    (hours * 3_600_000.0).round() as u64
}

/// The spot price as a share of the on-demand price at an interruption rate: the more often
/// owners take GPUs back (the tighter the market), the dearer spot gets. 0.3 with no
/// interruptions, rising with the rate toward 1 (about 0.45 at 1 an hour, as the demo
/// catalog's spot prices are, and above 0.9 at 10); never above on demand. Not served: the
/// console prices spot from its catalog.
pub fn spot_price_factor(per_hour: f64) -> f64 {
    let rate = if per_hour.is_finite() {
        per_hour.max(0.0)
    } else {
        0.0
    };
    0.3 + 0.7 * (1.0 - (-rate / 4.0).exp())
}

/// The spot price series of an interruption process: hour `h`'s price as a share of on
/// demand, [`spot_price_factor`] of the rate with a seeded wobble of up to 5% either way,
/// so a series drawn at a higher rate lies above one drawn at a lower rate.
pub fn spot_price_series(seed: u64, per_hour: f64, hours: u32) -> Vec<f64> {
    let factor = spot_price_factor(per_hour);
    (0..hours)
        .map(|hour| {
            let unit = ((mix(seed ^ mix(u64::from(hour))) >> 11) as f64) / (1u64 << 53) as f64;
            (factor * (0.95 + 0.1 * unit)).min(1.0)
        })
        .collect()
}

/// SplitMix64.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// FNV-1a.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn gpu(index: u32) -> Gpu {
        Gpu {
            index,
            ..Gpu::default()
        }
    }

    #[test]
    fn an_offer_marks_its_gpus_and_names_an_index_the_host_lacks() {
        let mut gpus: Vec<Gpu> = (0..3).map(gpu).collect();
        let some = SpotOffer::Gpus([0, 2].into());
        some.mark(&mut gpus);
        assert_eq!(
            gpus.iter().map(|gpu| gpu.spot).collect::<Vec<_>>(),
            [true, false, true]
        );
        SpotOffer::None.mark(&mut gpus);
        assert!(gpus.iter().all(|gpu| !gpu.spot));
        SpotOffer::All.mark(&mut gpus);
        assert!(gpus.iter().all(|gpu| gpu.spot));
        assert_eq!(some.missing_index(3), None);
        assert_eq!(some.missing_index(2), Some(2));
        assert_eq!(SpotOffer::All.missing_index(0), None);
        assert!(!SpotOffer::Gpus(BTreeSet::new()).any());
    }

    proptest! {
        #[test]
        fn the_same_seed_and_lease_give_the_same_reclaim(
            seed in any::<u64>(),
            id in "lease-[0-9]{1,4}-[0-9a-f]{8}",
            granted in 0u64..4_000_000_000_000,
            per_hour in 0.01f64..=MAX_INTERRUPTIONS_PER_HOUR,
        ) {
            let process = Interruptions { per_hour, notice: DEFAULT_SPOT_NOTICE, seed };
            let at = process.reclaim_at_ms(&id, granted);
            prop_assert_eq!(at, process.clone().reclaim_at_ms(&id, granted));
            prop_assert!(at >= granted);
            // A higher rate never reclaims later: the same draw, scaled.
            let faster = Interruptions { per_hour: per_hour * 2.0, ..process };
            prop_assert!(faster.reclaim_at_ms(&id, granted) <= at);
        }

        #[test]
        fn the_spot_price_rises_with_the_rate_and_stays_below_on_demand(
            low in 0.0f64..=60.0,
            more in 0.0f64..=60.0,
            seed in any::<u64>(),
        ) {
            let high = low + more;
            prop_assert!(spot_price_factor(high) >= spot_price_factor(low));
            prop_assert!((0.3..1.0).contains(&spot_price_factor(low)));
            let series = spot_price_series(seed, high, 24);
            prop_assert_eq!(series.len(), 24);
            prop_assert!(series.iter().all(|price| (0.0..=1.0).contains(price)));
        }
    }

    #[test]
    fn reclaims_come_at_about_the_rate_over_many_leases() {
        // The mean wait of 10,000 leases is 1/R hours within 10 standard errors (10%: the
        // exponential's deviation equals its mean, so one error is 1%).
        for (seed, per_hour) in [(1, 0.5), (7, 6.0), (42, 60.0)] {
            let n = 10_000;
            let total: u64 = (0..n)
                .map(|i| wait_ms(seed, &format!("lease-{i}-00c0ffee"), per_hour))
                .sum();
            let mean_h = total as f64 / f64::from(n) / 3_600_000.0;
            let rate = 1.0 / mean_h;
            assert!(
                (rate / per_hour - 1.0).abs() < 0.1,
                "seed {seed}: {rate:.3} an hour for {per_hour}"
            );
        }
        // Another seed, other times.
        assert_ne!(wait_ms(1, "lease-1-a", 1.0), wait_ms(2, "lease-1-a", 1.0));
    }

    #[test]
    fn a_dearer_market_prices_spot_higher() {
        assert!((spot_price_factor(0.0) - 0.3).abs() < 1e-9);
        assert!(
            (0.44..0.46).contains(&spot_price_factor(1.0)),
            "{}",
            spot_price_factor(1.0)
        );
        assert!(spot_price_factor(10.0) > 0.85);
        assert_eq!(spot_price_factor(f64::NAN), spot_price_factor(0.0));
        let calm = spot_price_series(3, 0.5, 48);
        let tight = spot_price_series(3, 30.0, 48);
        assert!(calm.iter().zip(&tight).all(|(calm, tight)| tight > calm));
    }
}
