//! Plan comparison over demand series.

use crate::{demo_entry, hourly};
use ebb_cost::{
    DemandSeries, Money, OverlayMode, PlanKind, PlanOptions, PoolPlan, SkipReason, Term,
    compare_plans, plan_cost,
};

fn yuan(yuan: i64) -> Money {
    Money::from_yuan(yuan).unwrap()
}

#[test]
fn every_plan_is_evaluated_or_skipped_with_a_reason() {
    let entry = demo_entry("A100", "cn-north");
    let demand = hourly(vec![1, 3, 0, 2]);
    let comparison = compare_plans(&entry, &demand, &PlanOptions::default()).unwrap();
    let kinds: Vec<PlanKind> = comparison.plans.iter().map(|plan| plan.kind).collect();
    assert_eq!(kinds, &PlanKind::ALL[..7]);
    assert_eq!(comparison.skipped.len(), 1);
    assert_eq!(comparison.skipped[0].kind, PlanKind::BaseSpot);
    assert_eq!(comparison.skipped[0].reason, SkipReason::NotInterruptible);
    assert!(
        comparison.skipped[0]
            .reason
            .to_string()
            .contains("not marked interruptible")
    );

    let mut entry = entry;
    entry.day = None;
    entry.reserved_hour = None;
    let options = PlanOptions {
        interruptible: true,
        ..PlanOptions::default()
    };
    let comparison = compare_plans(&entry, &demand, &options).unwrap();
    let skipped: Vec<(PlanKind, String)> = comparison
        .skipped
        .iter()
        .map(|skipped| (skipped.kind, skipped.reason.to_string()))
        .collect();
    assert_eq!(
        skipped,
        [
            (
                PlanKind::BaseDaily,
                "A100 in cn-north has no `day` price".to_string()
            ),
            (
                PlanKind::BaseReserved,
                "A100 in cn-north has no `reserved_hour` price".to_string()
            ),
        ]
    );
    assert!(comparison.plan(PlanKind::BaseSpot).is_some());
}

#[test]
fn a_series_longer_than_a_month_pays_whole_months() {
    // 731 hours at 1 GPU: sub(H) = 2 months. Hourly (731 x ¥12.50 = ¥9,137.50) beats
    // two months (¥10,000), so the base is 0.
    let entry = demo_entry("A100", "cn-north");
    let demand = hourly(vec![1; 731]);
    let comparison = compare_plans(&entry, &demand, &PlanOptions::default()).unwrap();
    assert_eq!(comparison.subscription_per_gpu, yuan(10_000));
    assert_eq!(comparison.recommendation.base.base_gpus, 0);
    assert_eq!(comparison.recommendation.base.break_even_hours, 801);
    assert_eq!(
        comparison.plan(PlanKind::BaseHourly).unwrap().total_cost,
        Money::from_fen(9_137_50)
    );
    // A full month at 1 GPU: the subscription wins (¥5,000 < ¥9,125).
    let comparison = compare_plans(&entry, &hourly(vec![1; 730]), &PlanOptions::default()).unwrap();
    assert_eq!(comparison.recommendation.base.base_gpus, 1);
}

#[test]
fn a_yearly_base_over_a_year_of_demand() {
    // A100 in cn-north: a year is ¥54,000, twelve months ¥60,000.
    let entry = demo_entry("A100", "cn-north");
    let demand = hourly(vec![4; 8_760]);
    let options = PlanOptions {
        term: Term::Year,
        interruptible: false,
    };
    let comparison = compare_plans(&entry, &demand, &options).unwrap();
    assert_eq!(comparison.subscription_per_gpu, yuan(54_000));
    assert_eq!(comparison.recommendation.best, PlanKind::BaseHourly);
    assert_eq!(comparison.recommendation.best_cost, yuan(4 * 54_000));
    let monthly = compare_plans(&entry, &demand, &PlanOptions::default()).unwrap();
    assert_eq!(monthly.subscription_per_gpu, yuan(60_000)); // ceil(8760 / 730) = 12 months
}

#[test]
fn gpu_hours_per_mode_and_idle_hours_are_reported() {
    // One GPU busy 30 hours in a row, then idle 10: the cheapest units are a day and
    // 6 hours (¥315); a day overlay buys 2 days (¥480), 18 hours of them idle.
    let entry = demo_entry("A100", "cn-north");
    let mut gpus = vec![1; 30];
    gpus.extend([0; 10]);
    let demand = hourly(gpus);
    let comparison = compare_plans(&entry, &demand, &PlanOptions::default()).unwrap();
    let best_unit = comparison.plan(PlanKind::AllOnDemandBestUnit).unwrap();
    assert_eq!(best_unit.total_cost, yuan(315));
    assert_eq!(
        (best_unit.paid_gpu_hours.day, best_unit.paid_gpu_hours.hour),
        (24, 6)
    );
    assert_eq!(best_unit.idle_paid_gpu_hours, 0);
    let daily = comparison.plan(PlanKind::BaseDaily).unwrap();
    assert_eq!((daily.base_gpus, daily.total_cost), (0, yuan(480)));
    assert_eq!(daily.paid_gpu_hours.day, 48);
    assert_eq!(daily.idle_paid_gpu_hours, 18);
    assert_eq!(daily.break_even.unwrap().units, 21); // ¥5,000 / ¥240 + 1 days
    let hourly_plan = comparison.plan(PlanKind::AllHourly).unwrap();
    assert_eq!(hourly_plan.paid_gpu_hours.hour, 30);
    assert_eq!(hourly_plan.total_cost, yuan(375));
    // Reserving the one known 30-hour run (30 x ¥8.50) beats every on-demand mix.
    let reserved = comparison.plan(PlanKind::BaseReserved).unwrap();
    assert_eq!(reserved.total_cost, Money::from_fen(255_00));
    assert_eq!(comparison.recommendation.best, PlanKind::BaseReserved);
}

#[test]
fn a_day_unit_is_kept_through_a_short_gap_and_shared_by_later_work() {
    // 2 GPUs 0-4h, 1 GPU 5-9h, 2 GPUs 20-23h, then nothing until hour 30 (1 GPU).
    // Day overlay, no base: level 1 needs days from 0 and from 30 (2), level 2 from 0 (1).
    let entry = demo_entry("A100", "cn-north");
    let mut gpus = vec![0; 31];
    gpus[0..5].fill(2);
    gpus[5..10].fill(1);
    gpus[20..24].fill(2);
    gpus[30] = 1;
    let demand = hourly(gpus);
    let plan = PoolPlan {
        base_gpus: 0,
        term: Term::Month,
        overlay: OverlayMode::Day,
    };
    let cost = plan_cost(&entry, &demand, &plan).unwrap();
    assert_eq!(cost.total_cost, yuan(3 * 240));
    assert_eq!(cost.paid_gpu_hours.day, 72);
}

#[test]
fn spot_follows_the_price_series_in_the_demand_clock() {
    // H800 in cn-east: ¥14.50 spot until hour 7,440 of the year, ¥15.20 until 7,632.
    let entry = demo_entry("H800", "cn-east");
    let demand = DemandSeries::from_csv("hour,demand\n7438,1\n7439,1\n7440,1\n7441,1\n").unwrap();
    let plan = PoolPlan {
        base_gpus: 0,
        term: Term::Month,
        overlay: OverlayMode::Spot,
    };
    let cost = plan_cost(&entry, &demand, &plan).unwrap();
    assert_eq!(cost.total_cost, Money::from_fen(2 * 14_50 + 2 * 15_20));
    assert_eq!(cost.paid_gpu_hours.spot, 4);
    assert_eq!(
        cost.break_even, None,
        "a price series has no single break-even"
    );
}

#[test]
fn a_minute_trace_plans_like_its_hourly_peaks() {
    let entry = demo_entry("V100", "cn-south");
    let minutes: String = (0..180)
        .map(|minute| format!("{minute},{}\n", if minute == 75 { 3.5 } else { 1.0 }))
        .collect();
    let by_minute = DemandSeries::from_csv(&format!("minute,demand\n{minutes}")).unwrap();
    let by_hour = DemandSeries::from_csv("hour,demand\n0,1\n1,4\n2,1\n").unwrap();
    let options = PlanOptions::default();
    let a = compare_plans(&entry, &by_minute, &options).unwrap();
    let b = compare_plans(&entry, &by_hour, &options).unwrap();
    assert_eq!(a.plans, b.plans);
}
