//! Placement, pure: which free GPUs a pool takes, and which of its leases it gives back
//! first. No IO, no clock: time and prices are parameters.
//!
//! Taking: only free, healthy GPUs of the pool's model in its regions; the cheapest region
//! first (a region without a price last); within a region, `pack` fills the hosts the pool
//! already uses, then the fullest, while `spread` evens the pool out over the hosts.
//!
//! Giving back: stale leases first (a host that came back after failover), then idle or
//! least-utilized, then the most expensive region, then the newest. When the pool releases
//! at the end of the paid unit, the leases whose paid time runs out soonest go first, and a
//! lease whose unit has time left is kept until it ends.

use ebb_wire::pools::PlacementPolicy;
use std::cmp::Reverse;

/// A host as a placement candidate for one pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate<'a> {
    pub host: &'a str,
    pub region: &'a str,
    /// Free GPUs of the pool's model there.
    pub free: u32,
    /// GPUs the pool already holds there.
    pub held: u32,
    /// The region's price per GPU-hour for the pool's model, in fen; `None` when unpriced.
    pub price_fen: Option<i64>,
}

/// Where `count` new GPUs go: `(index into candidates, how many)`, and how many no host has.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Placement {
    pub takes: Vec<(usize, u32)>,
    pub short: u32,
}

/// Places `count` GPUs over `candidates` under `policy`. Never takes more than a host has
/// free; hands out as many as there are free, and says how many are short.
pub fn place(count: u32, candidates: &[Candidate<'_>], policy: PlacementPolicy) -> Placement {
    let mut regions: Vec<(Option<i64>, &str)> = candidates
        .iter()
        .map(|candidate| (candidate.price_fen, candidate.region))
        .collect();
    // Cheapest first; unpriced regions last; ties by name so the choice is stable.
    regions.sort_by_key(|(price, region)| (price.is_none(), *price, *region));
    regions.dedup_by_key(|(_, region)| *region);
    let mut taken = vec![0u32; candidates.len()];
    let mut left = count;
    for (_, region) in regions {
        if left == 0 {
            break;
        }
        let hosts: Vec<usize> = (0..candidates.len())
            .filter(|&i| candidates[i].region == region && candidates[i].free > 0)
            .collect();
        match policy {
            PlacementPolicy::Pack => {
                let mut order = hosts;
                order.sort_by_key(|&i| {
                    let c = &candidates[i];
                    (Reverse(c.held), c.free, c.host)
                });
                for i in order {
                    let take = left.min(candidates[i].free);
                    taken[i] += take;
                    left -= take;
                    if left == 0 {
                        break;
                    }
                }
            }
            PlacementPolicy::Spread => {
                // One at a time to the host holding the fewest of the pool's GPUs, then the
                // one with the most free.
                let mut heap: std::collections::BinaryHeap<(
                    Reverse<u32>,
                    u32,
                    Reverse<&str>,
                    usize,
                )> = hosts
                    .iter()
                    .map(|&i| {
                        let c = &candidates[i];
                        (Reverse(c.held), c.free, Reverse(c.host), i)
                    })
                    .collect();
                while left > 0 {
                    let Some((Reverse(held), free, name, i)) = heap.pop() else {
                        break;
                    };
                    taken[i] += 1;
                    left -= 1;
                    if free > 1 {
                        heap.push((Reverse(held + 1), free - 1, name, i));
                    }
                }
            }
        }
    }
    Placement {
        takes: taken
            .into_iter()
            .enumerate()
            .filter(|&(_, n)| n > 0)
            .collect(),
        short: left,
    }
}

/// One lease a pool holds, as a release candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    pub lease_id: String,
    pub host: String,
    pub region: String,
    /// Mean utilization of its GPUs at the last look; `None` when unknown.
    pub util_pct: Option<f32>,
    /// Price per GPU-hour of its region, in fen.
    pub price_fen: Option<i64>,
    pub granted_at_ms: i64,
    /// When its current paid unit ends.
    pub paid_until_ms: i64,
    /// Its workload has saved its state: releasing it loses nothing.
    pub safe: bool,
    /// The operator chose it to go.
    pub chosen: bool,
}

/// Which leases to release now, and how many are kept until their paid unit ends.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Release {
    /// Indexes into the held leases, in release order.
    pub now: Vec<usize>,
    /// Chosen but kept until their unit ends; `next_due_ms` is the first such end.
    pub deferred: u32,
    pub next_due_ms: Option<i64>,
    /// Indexes of the deferred leases, in release order (`deferred` of them).
    pub kept: Vec<usize>,
}

/// How close to the end of its paid unit a lease may be released without paying a new one.
pub const UNIT_END_MARGIN_MS: i64 = 60_000;

/// Below this a GPU counts as idle; at or above it, busy.
pub const IDLE_PCT: f32 = 5.0;

/// Chooses `count` of `held` to give back: those the operator chose first, then those whose
/// workload saved its state, then (with `at_unit_end`) the nearest paid unit's end, then idle
/// before busy, dearer before cheaper, newer before older. With `at_unit_end`, a chosen lease
/// whose paid unit has more than [`UNIT_END_MARGIN_MS`] left is deferred, not released.
pub fn choose_release(count: u32, held: &[Held], now_ms: i64, at_unit_end: bool) -> Release {
    let mut order: Vec<usize> = (0..held.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&held[a], &held[b]);
        let unit_end = |h: &Held| if at_unit_end { h.paid_until_ms } else { 0 };
        y.chosen
            .cmp(&x.chosen)
            .then(y.safe.cmp(&x.safe))
            .then(unit_end(x).cmp(&unit_end(y)))
            .then(util_rank(x.util_pct).cmp(&util_rank(y.util_pct)))
            .then(y.price_fen.unwrap_or(0).cmp(&x.price_fen.unwrap_or(0)))
            .then(y.granted_at_ms.cmp(&x.granted_at_ms))
            .then(x.lease_id.cmp(&y.lease_id))
    });
    let mut release = Release::default();
    for i in order.into_iter().take(count as usize) {
        let due = held[i].paid_until_ms - UNIT_END_MARGIN_MS;
        if at_unit_end && now_ms < due {
            release.deferred += 1;
            release.kept.push(i);
            release.next_due_ms = Some(release.next_due_ms.map_or(due, |d: i64| d.min(due)));
        } else {
            release.now.push(i);
        }
    }
    release
}

/// Idle first, then by utilization in steps of ten points; unknown last but one step.
fn util_rank(util: Option<f32>) -> u32 {
    match util {
        Some(pct) if pct < IDLE_PCT => 0,
        Some(pct) => 1 + (pct.clamp(0.0, 100.0) / 10.0) as u32,
        None => 12,
    }
}

/// When the unit a lease is paying for ends: started units are paid in full, counted from
/// its grant.
pub fn paid_until(granted_at_ms: i64, unit_ms: i64, now_ms: i64) -> i64 {
    let unit_ms = unit_ms.max(1);
    let held = (now_ms - granted_at_ms).max(1);
    granted_at_ms + (held + unit_ms - 1) / unit_ms * unit_ms
}

/// Which of the catalog's `models` a GPU named `gpu_model` by its driver is: the most
/// specific one that matches (the most letters and digits, so `A100-80GB` beats `A100`),
/// by index; `None` when none does.
pub fn catalog_match<S: AsRef<str>>(gpu_model: &str, models: &[S]) -> Option<usize> {
    models
        .iter()
        .enumerate()
        .filter(|(_, model)| model_matches(model.as_ref(), gpu_model))
        .max_by_key(|(_, model)| {
            model
                .as_ref()
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .count()
        })
        .map(|(index, _)| index)
}

/// Whether a GPU named `gpu_model` by its driver (e.g. `NVIDIA A100-SXM4-80GB`) is of the
/// catalog's `model` (e.g. `A100`): some run of the name's words, joined, spells the model,
/// ignoring case, spaces, `-` and `_`. So `A100` matches `NVIDIA A100-SXM4-80GB` and
/// `Ascend910B` matches `Ascend 910B`, but `A10` matches neither.
pub fn model_matches(model: &str, gpu_model: &str) -> bool {
    let want: String = model
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if want.is_empty() {
        return false;
    }
    let words: Vec<String> = gpu_model
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    (0..words.len()).any(|start| {
        let mut joined = String::new();
        for word in &words[start..] {
            joined.push_str(word);
            if joined == want {
                return true;
            }
            if joined.len() >= want.len() || !want.starts_with(&joined) {
                return false;
            }
        }
        false
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn host<'a>(
        host: &'a str,
        region: &'a str,
        free: u32,
        held: u32,
        price: Option<i64>,
    ) -> Candidate<'a> {
        Candidate {
            host,
            region,
            free,
            held,
            price_fen: price,
        }
    }

    fn named(placement: &Placement, candidates: &[Candidate<'_>]) -> Vec<(String, u32)> {
        placement
            .takes
            .iter()
            .map(|&(i, n)| (candidates[i].host.to_string(), n))
            .collect()
    }

    #[test]
    fn placement_table() {
        let fleet = vec![
            host("a", "cn-north", 8, 0, Some(1250)),
            host("b", "cn-east", 4, 0, Some(1100)),
            host("c", "cn-east", 6, 2, Some(1100)),
            host("d", "cn-south", 8, 0, None),
        ];
        // (count, policy, GPUs taken per host, short)
        type Case = (u32, PlacementPolicy, Vec<(&'static str, u32)>, u32);
        let cases: Vec<Case> = vec![
            // Cheapest region (cn-east) first; pack fills the host the pool uses.
            (5, PlacementPolicy::Pack, vec![("b", 0), ("c", 5)], 0),
            (10, PlacementPolicy::Pack, vec![("b", 4), ("c", 6)], 0),
            // Then the next cheapest; the unpriced region last.
            (
                12,
                PlacementPolicy::Pack,
                vec![("a", 2), ("b", 4), ("c", 6)],
                0,
            ),
            (
                24,
                PlacementPolicy::Pack,
                vec![("a", 8), ("b", 4), ("c", 6), ("d", 6)],
                0,
            ),
            (
                30,
                PlacementPolicy::Pack,
                vec![("a", 8), ("b", 4), ("c", 6), ("d", 8)],
                4,
            ),
            // Spread evens out: c already holds 2, so b gets the first two.
            (4, PlacementPolicy::Spread, vec![("b", 3), ("c", 1)], 0),
            (6, PlacementPolicy::Spread, vec![("b", 4), ("c", 2)], 0),
            (0, PlacementPolicy::Spread, vec![], 0),
        ];
        for (count, policy, want, short) in cases {
            let placement = place(count, &fleet, policy);
            let want: Vec<(String, u32)> = want
                .into_iter()
                .filter(|&(_, n)| n > 0)
                .map(|(h, n)| (h.to_string(), n))
                .collect();
            assert_eq!(named(&placement, &fleet), want, "{count} {policy:?}");
            assert_eq!(placement.short, short, "{count} {policy:?}");
        }
    }

    fn held(id: &str, util: Option<f32>, price: i64, granted: i64, paid_until: i64) -> Held {
        Held {
            lease_id: id.into(),
            host: "h".into(),
            region: "r".into(),
            util_pct: util,
            price_fen: Some(price),
            granted_at_ms: granted,
            paid_until_ms: paid_until,
            safe: false,
            chosen: false,
        }
    }

    #[test]
    fn release_order_idle_then_least_used_then_dearest() {
        let leases = vec![
            held("busy", Some(90.0), 1000, 0, 0),
            held("idle-cheap", Some(1.0), 1000, 0, 0),
            held("idle-dear", Some(2.0), 2000, 0, 0),
            held("half", Some(50.0), 3000, 0, 0),
            held("unknown", None, 5000, 0, 0),
        ];
        let release = choose_release(4, &leases, 10, false);
        let ids: Vec<&str> = release
            .now
            .iter()
            .map(|&i| leases[i].lease_id.as_str())
            .collect();
        assert_eq!(ids, ["idle-dear", "idle-cheap", "half", "busy"]);
        assert_eq!(release.deferred, 0);
    }

    #[test]
    fn the_operators_choice_goes_first_then_what_saved_its_state() {
        let mut leases = vec![
            held("idle", Some(0.0), 1000, 0, 0),
            held("busy-saved", Some(90.0), 1000, 0, 0),
            held("busy-picked", Some(95.0), 1000, 0, 0),
            held("half", Some(50.0), 1000, 0, 0),
        ];
        leases[1].safe = true;
        leases[2].chosen = true;
        let ids = |count| -> Vec<String> {
            choose_release(count, &leases, 10, false)
                .now
                .iter()
                .map(|&i| leases[i].lease_id.clone())
                .collect()
        };
        assert_eq!(ids(1), ["busy-picked"]);
        assert_eq!(ids(2), ["busy-picked", "busy-saved"]);
        assert_eq!(ids(4), ["busy-picked", "busy-saved", "idle", "half"]);
    }

    #[test]
    fn at_unit_end_keeps_a_paid_day_until_it_runs_out() {
        let day = 86_400_000;
        let now = 10 * 3_600_000;
        let leases = vec![
            // Granted at 0 by the day: paid until 24 h.
            held("day-old", Some(0.0), 1000, 0, paid_until(0, day, now)),
            // Granted 23 h 59.5 min before its day ends: almost due.
            held(
                "due",
                Some(80.0),
                1000,
                now + 30_000 - day,
                paid_until(now + 30_000 - day, day, now),
            ),
        ];
        let release = choose_release(2, &leases, now, true);
        assert_eq!(release.now, vec![1]);
        assert_eq!(release.deferred, 1);
        assert_eq!(release.kept, vec![0]);
        assert_eq!(release.next_due_ms, Some(day - UNIT_END_MARGIN_MS));
        // Forced (or not at unit end): both at once, idle first.
        assert_eq!(choose_release(2, &leases, now, false).now, vec![0, 1]);
    }

    #[test]
    fn paid_units_are_started_units() {
        let hour = 3_600_000;
        assert_eq!(paid_until(0, hour, 1), hour);
        assert_eq!(paid_until(0, hour, hour), hour);
        assert_eq!(paid_until(0, hour, hour + 1), 2 * hour);
        assert_eq!(paid_until(100, hour, 100), 100 + hour);
    }

    #[test]
    fn models_match_by_whole_words() {
        assert!(model_matches("A100", "NVIDIA A100-SXM4-80GB"));
        assert!(model_matches("a100", "NVIDIA A100-SXM4-80GB"));
        assert!(model_matches("H800", "NVIDIA H800"));
        assert!(model_matches("V100", "Tesla V100-SXM2-32GB"));
        assert!(model_matches("Ascend910B", "Ascend 910B"));
        assert!(model_matches("Ascend 910B", "Ascend 910B"));
        assert!(!model_matches("A10", "NVIDIA A100-SXM4-80GB"));
        assert!(!model_matches("A1000", "NVIDIA A100-SXM4-80GB"));
        assert!(!model_matches("H800", "NVIDIA A100-SXM4-80GB"));
        assert!(!model_matches("", "NVIDIA H800"));
    }

    /// (host, region, free, held, price) rows; borrowed as candidates in the test.
    type Row = (String, String, u32, u32, Option<i64>);

    fn as_candidates(rows: &[Row]) -> Vec<Candidate<'_>> {
        rows.iter()
            .map(|(host, region, free, held, price)| Candidate {
                host,
                region,
                free: *free,
                held: *held,
                price_fen: *price,
            })
            .collect()
    }

    fn candidates() -> impl Strategy<Value = Vec<Row>> {
        prop::collection::vec((0u32..4, 0u32..12, 0u32..6), 0..12).prop_map(|rows| {
            rows.into_iter()
                .enumerate()
                .map(|(i, (region, free, held))| {
                    (
                        format!("h{i}"),
                        format!("r{region}"),
                        free,
                        held,
                        // One price per region; region 3 is unpriced.
                        (region < 3).then(|| 1000 + i64::from(region) * 100),
                    )
                })
                .collect()
        })
    }

    proptest! {
        #[test]
        fn never_more_than_free_and_all_that_is_asked_when_it_fits(
            rows in candidates(),
            count in 0u32..80,
            spread in any::<bool>(),
        ) {
            let fleet = as_candidates(&rows);
            let policy = if spread { PlacementPolicy::Spread } else { PlacementPolicy::Pack };
            let placement = place(count, &fleet, policy);
            let total_free: u32 = fleet.iter().map(|c| c.free).sum();
            let placed: u32 = placement.takes.iter().map(|&(_, n)| n).sum();
            prop_assert_eq!(placed + placement.short, count);
            prop_assert_eq!(placed, count.min(total_free));
            for &(i, n) in &placement.takes {
                prop_assert!(n <= fleet[i].free, "{} > {} free", n, fleet[i].free);
                prop_assert!(n > 0);
            }
            // A dearer region is only used once every cheaper one is full.
            for &(i, _) in &placement.takes {
                for (j, other) in fleet.iter().enumerate() {
                    let cheaper = match (other.price_fen, fleet[i].price_fen) {
                        (Some(a), Some(b)) => a < b,
                        (Some(_), None) => true,
                        _ => false,
                    };
                    if cheaper {
                        let used = placement.takes.iter().find(|t| t.0 == j).map_or(0, |t| t.1);
                        prop_assert_eq!(used, other.free, "cheaper host {} left free", j);
                    }
                }
            }
        }

        #[test]
        fn releases_never_more_than_held_or_asked(
            utils in prop::collection::vec(prop::option::of(0f32..100.0), 0..20),
            count in 0u32..30,
            at_unit_end in any::<bool>(),
        ) {
            let leases: Vec<Held> = utils
                .iter()
                .enumerate()
                .map(|(i, &util)| held(&format!("l{i}"), util, 1000, i as i64 * 1000, 3_600_000 + i as i64 * 1000))
                .collect();
            let release = choose_release(count, &leases, 1_800_000, at_unit_end);
            let chosen = release.now.len() as u32 + release.deferred;
            prop_assert_eq!(chosen, count.min(leases.len() as u32));
            let mut seen = std::collections::HashSet::new();
            for &i in &release.now {
                prop_assert!(seen.insert(i));
            }
            if !at_unit_end {
                prop_assert_eq!(release.deferred, 0);
            }
        }
    }
}
