//! Property tests: the optimizer against brute force, and the invariants every figure keeps.

use ebb_cost::{
    DemandSeries, Money, OverlayMode, PlanKind, PlanOptions, PoolPlan, PriceEntry, SpotPoint, Term,
    compare_plans, optimal_base, plan_cost, run_rate,
};
use proptest::prelude::*;

/// A price entry with every mode, in plausible proportions.
fn entry() -> impl Strategy<Value = PriceEntry> {
    (
        1i64..5_000,
        (10i64..30, 3i64..8, 50i64..800, 8i64..13),
        (20i64..120, 40i64..110),
        proptest::collection::vec((0i64..2_000, 1i64..10_000), 0..4),
    )
        .prop_map(
            |(
                hour,
                (day_hours, week_days, month_hours, year_months),
                (spot_pct, reserved_pct),
                series,
            )| {
                let day = hour * day_hours;
                let week = day * week_days;
                let month = hour * month_hours;
                let mut series: Vec<SpotPoint> = series
                    .into_iter()
                    .map(|(at, price)| SpotPoint {
                        hour: at,
                        price: Money::from_fen(price),
                    })
                    .collect();
                series.sort_by_key(|point| point.hour);
                series.dedup_by_key(|point| point.hour);
                PriceEntry {
                    model: "X".into(),
                    region: "r".into(),
                    hour: Money::from_fen(hour),
                    day: Some(Money::from_fen(day)),
                    week: Some(Money::from_fen(week)),
                    month: Money::from_fen(month),
                    year: Some(Money::from_fen(month * year_months)),
                    spot_hour: Some(Money::from_fen((hour * spot_pct / 100).max(1))),
                    spot_series: series,
                    spot_notice_minutes: None,
                    reserved_hour: Some(Money::from_fen((hour * reserved_pct / 100).max(1))),
                }
            },
        )
}

/// Tidal demand: runs of a level, so that every mode has something to win.
fn demand() -> impl Strategy<Value = Vec<u32>> {
    proptest::collection::vec((0u32..25, 1usize..60), 1..40).prop_map(|runs| {
        runs.into_iter()
            .flat_map(|(gpus, hours)| std::iter::repeat_n(gpus, hours))
            .take(2_500)
            .collect()
    })
}

fn series(gpus: Vec<u32>) -> DemandSeries {
    DemandSeries::from_hourly(0, gpus).unwrap()
}

fn term() -> impl Strategy<Value = Term> {
    prop_oneof![Just(Term::Month), Just(Term::Year)]
}

fn overlay() -> impl Strategy<Value = OverlayMode> {
    prop::sample::select(OverlayMode::ALL.to_vec())
}

/// `B * sub(H) + sum_t max(0, d_t - B) * hour`, straight from PRODUCT.md.
fn brute_force_hourly(entry: &PriceEntry, gpus: &[u32], term: Term, base: u32) -> i128 {
    let (price, term_hours) = match term {
        Term::Month => (entry.month, 730),
        Term::Year => (entry.year.unwrap(), 8_760),
    };
    let sub = i128::from(price.fen()) * gpus.len().div_ceil(term_hours) as i128;
    let overlay: i128 = gpus
        .iter()
        .map(|&d| i128::from(d.saturating_sub(base)) * i128::from(entry.hour.fen()))
        .sum();
    i128::from(base) * sub + overlay
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn the_base_optimum_matches_brute_force_over_every_base(
        entry in entry(),
        gpus in prop_oneof![demand(), proptest::collection::vec(0u32..40, 1..1_600)],
        term in term(),
    ) {
        let peak = gpus.iter().copied().max().unwrap();
        let (best_cost, best_base) = (0..=peak + 1)
            .map(|base| (brute_force_hourly(&entry, &gpus, term, base), base))
            .min()
            .unwrap();
        let demand = series(gpus);
        let optimum = optimal_base(&entry, &demand, term).unwrap();
        prop_assert_eq!(i128::from(optimum.cost.fen()), best_cost);
        prop_assert_eq!(optimum.base_gpus, best_base, "the smallest of the cheapest bases");
        // The plan comparison's hourly plan is the same plan, computed the other way.
        let options = PlanOptions { term, interruptible: false };
        let comparison = compare_plans(&entry, &demand, &options).unwrap();
        let base_hourly = comparison.plan(PlanKind::BaseHourly).unwrap();
        prop_assert_eq!(i128::from(base_hourly.total_cost.fen()), best_cost);
    }

    #[test]
    fn cost_never_falls_when_the_count_rises(
        entry in entry(),
        base_gpus in 0u32..50,
        term in term(),
        overlay in overlay(),
        count in 0u32..200,
    ) {
        let plan = PoolPlan { base_gpus, term, overlay };
        let now = run_rate(&entry, &plan, count).unwrap();
        let more = run_rate(&entry, &plan, count + 1).unwrap();
        prop_assert!(more.total.per_hour >= now.total.per_hour);
        prop_assert!(more.total.per_day >= now.total.per_day);
        prop_assert!(more.total.per_month >= now.total.per_month);
        prop_assert!(more.overlay.per_month >= now.overlay.per_month);
        prop_assert_eq!(more.base, now.base);
    }

    #[test]
    fn cost_never_falls_when_demand_rises(
        entry in entry(),
        gpus in demand(),
        at in any::<prop::sample::Index>(),
        base_gpus in 0u32..30,
        overlay in overlay(),
    ) {
        let plan = PoolPlan { base_gpus, term: Term::Month, overlay };
        let options = PlanOptions { term: Term::Month, interruptible: true };
        let mut higher = gpus.clone();
        higher[at.index(gpus.len())] += 1;
        let (gpus, higher) = (series(gpus), series(higher));
        let before = plan_cost(&entry, &gpus, &plan).unwrap();
        let after = plan_cost(&entry, &higher, &plan).unwrap();
        prop_assert!(after.total_cost >= before.total_cost);
        let before = compare_plans(&entry, &gpus, &options).unwrap();
        let after = compare_plans(&entry, &higher, &options).unwrap();
        prop_assert!(after.recommendation.best_cost >= before.recommendation.best_cost);
        prop_assert!(after.recommendation.base.cost >= before.recommendation.base.cost);
    }

    #[test]
    fn the_recommendation_is_never_dearer_than_any_plan(
        entry in entry(),
        gpus in demand(),
        term in term(),
        interruptible in any::<bool>(),
    ) {
        let demand = series(gpus);
        let options = PlanOptions { term, interruptible };
        let comparison = compare_plans(&entry, &demand, &options).unwrap();
        let best = comparison.recommendation.best_cost;
        for plan in &comparison.plans {
            prop_assert!(best <= plan.total_cost, "{:?} costs {} < {}", plan.kind, plan.total_cost, best);
            prop_assert_eq!(plan.total_cost, plan.base_cost.checked_add(plan.overlay_cost).unwrap());
        }
        prop_assert!(best <= comparison.recommendation.base.cost);
        // ... nor than any single-overlay pool plan at any base.
        let overlays: &[OverlayMode] = if interruptible { &OverlayMode::ALL } else { &OverlayMode::ALL[..3] };
        for &overlay in overlays {
            for base_gpus in 0..=comparison.peak_gpus + 1 {
                let plan = PoolPlan { base_gpus, term, overlay };
                let cost = plan_cost(&entry, &demand, &plan).unwrap().total_cost;
                prop_assert!(best <= cost, "{overlay} at base {base_gpus}: {cost} < {best}");
            }
        }
        if let Some(cheaper) = comparison.recommendation.cheaper_overlay {
            prop_assert!(cheaper.cost < comparison.recommendation.base.cost);
        }
        // The cheapest unit mix is never dearer than one unit alone.
        let mix = comparison.plan(PlanKind::AllOnDemandBestUnit).unwrap().total_cost;
        prop_assert!(mix <= comparison.plan(PlanKind::AllHourly).unwrap().total_cost);
        for overlay in [OverlayMode::Day, OverlayMode::Week] {
            let plan = PoolPlan { base_gpus: 0, term, overlay };
            prop_assert!(mix <= plan_cost(&entry, &demand, &plan).unwrap().total_cost);
        }
    }

    #[test]
    fn the_cheapest_unit_mix_matches_a_plain_dynamic_program(
        entry in entry(),
        busy in proptest::collection::vec(any::<bool>(), 1..600),
    ) {
        // One GPU: the cheapest hour/day/week tickets covering its busy hours, by the
        // textbook recurrence over every hour (not just the busy ones).
        let (hour, day, week) = (entry.hour.fen(), entry.day.unwrap().fen(), entry.week.unwrap().fen());
        let mut cheapest = vec![0i64; busy.len() + 1];
        for t in 0..busy.len() {
            cheapest[t + 1] = if busy[t] {
                (cheapest[t] + hour)
                    .min(cheapest[(t + 1).saturating_sub(24)] + day)
                    .min(cheapest[(t + 1).saturating_sub(168)] + week)
            } else {
                cheapest[t]
            };
        }
        let demand = series(busy.iter().map(|&b| u32::from(b)).collect());
        let comparison = compare_plans(&entry, &demand, &PlanOptions::default()).unwrap();
        let mix = comparison.plan(PlanKind::AllOnDemandBestUnit).unwrap();
        prop_assert_eq!(mix.total_cost.fen(), cheapest[busy.len()]);
        let paid = mix.paid_gpu_hours;
        let units_cost = paid.hour as i64 * hour + (paid.day / 24) as i64 * day + (paid.week / 168) as i64 * week;
        prop_assert_eq!(units_cost, mix.total_cost.fen(), "the units reported are the units paid");
    }

    #[test]
    fn zero_demand_costs_only_the_base(
        entry in entry(),
        hours in 1usize..3_000,
        base_gpus in 0u32..100,
        term in term(),
        overlay in overlay(),
    ) {
        let demand = series(vec![0; hours]);
        let plan = PoolPlan { base_gpus, term, overlay };
        let cost = plan_cost(&entry, &demand, &plan).unwrap();
        let sub = ebb_cost::subscription_for(term, &entry, hours).unwrap();
        prop_assert_eq!(cost.overlay_cost, Money::ZERO);
        prop_assert_eq!(cost.total_cost, sub.checked_mul(i64::from(base_gpus)).unwrap());
        let comparison = compare_plans(&entry, &demand, &PlanOptions { term, interruptible: true }).unwrap();
        prop_assert_eq!(comparison.recommendation.base.base_gpus, 0);
        prop_assert_eq!(comparison.recommendation.best_cost, Money::ZERO);
    }
}
