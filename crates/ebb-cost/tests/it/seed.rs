//! The seed article's numbers (../shared/seed/BRIEF.md), as the engine computes them.

use crate::{demo_entry, hourly};
use ebb_cost::{
    Money, OverlayMode, PlanKind, PlanOptions, PoolPlan, Term, compare_plans, optimal_base, preview,
};

fn yuan(yuan: i64) -> Money {
    Money::from_yuan(yuan).unwrap()
}

/// FAQ 4: "base 10 GPUs, peak 50. Renting 50 monthly: about 250,000 a month. 10 monthly +
/// 40 elastic at the peak: about 120,000 a month, 52% less."
///
/// Assumptions:
/// - prices: the demo catalog's A100 in cn-north, ¥5,000 per GPU-month, ¥12.50 per hour;
/// - one billing month of 730 hours; 10 GPUs busy all the time, 50 in the evening peak,
///   19:00-24:00 on 28 of the month's days: 140 peak hours.
#[test]
fn faq_4_base_10_peak_50() {
    let entry = demo_entry("A100", "cn-north");
    assert_eq!(entry.month, yuan(5_000));
    assert_eq!(entry.hour, Money::from_fen(12_50));
    let demand: Vec<u32> = (0..730)
        .map(|hour| {
            if hour / 24 < 28 && hour % 24 >= 19 {
                50
            } else {
                10
            }
        })
        .collect();
    assert_eq!(demand.iter().filter(|&&gpus| gpus == 50).count(), 140);
    let demand = hourly(demand);

    let comparison = compare_plans(&entry, &demand, &PlanOptions::default()).unwrap();
    let all_subscribed = comparison.plan(PlanKind::AllSubscribed).unwrap();
    assert_eq!(all_subscribed.base_gpus, 50);
    assert_eq!(all_subscribed.total_cost, yuan(250_000));

    let base_hourly = comparison.plan(PlanKind::BaseHourly).unwrap();
    assert_eq!(base_hourly.base_gpus, 10);
    assert_eq!(base_hourly.base_cost, yuan(50_000));
    assert_eq!(base_hourly.overlay_cost, yuan(70_000)); // 40 x 140 h x ¥12.50
    assert_eq!(base_hourly.total_cost, yuan(120_000));
    assert_eq!(base_hourly.saving_vs_all_subscribed, yuan(130_000));
    assert_eq!(base_hourly.saving_pct, 52.0);
    assert_eq!(base_hourly.paid_gpu_hours.hour, 40 * 140);

    // The recommendation is exactly that plan: hourly beats day and week units for
    // 5-hour peaks, and the pool is not interruptible, so spot is not considered.
    let recommendation = &comparison.recommendation;
    assert_eq!(recommendation.base.base_gpus, 10);
    assert_eq!(recommendation.base.break_even_hours, 401); // ¥5,000 / ¥12.50 + 1
    assert_eq!(recommendation.base.hours_at_base, 730);
    assert_eq!(recommendation.base.hours_above_base, 140);
    assert_eq!(recommendation.cheaper_overlay, None);
    assert_eq!(recommendation.best, PlanKind::BaseHourly);
    assert_eq!(recommendation.best_cost, yuan(120_000));
    assert_eq!(
        optimal_base(&entry, &demand, Term::Month).unwrap().cost,
        yuan(120_000)
    );

    // The slider at the peak: 40 GPUs above the base of 10 cost ¥500 an hour.
    let plan = PoolPlan {
        base_gpus: 10,
        term: Term::Month,
        overlay: OverlayMode::Hour,
    };
    let at_peak = preview(&entry, &plan, 10, 50).unwrap();
    assert_eq!(at_peak.delta.per_hour, yuan(500));
    assert_eq!(at_peak.after.base.per_month, yuan(50_000));
}

/// The festival example: "8 GPUs monthly + 42 hourly during Double 11, scaled in after:
/// 60% cheaper than a monthly plan for all of them."
///
/// Assumptions:
/// - prices: the demo catalog's A100 in cn-north (¥5,000 a month, ¥12.50 an hour,
///   ¥240 a day, ¥8.50 an hour reserved);
/// - one billing month of 730 hours; 8 GPUs all month; 50 round the clock for the
///   festival's 5 days (120 hours, from day 10), then back to 8.
#[test]
fn double_11_festival_8_monthly_plus_42_hourly() {
    let entry = demo_entry("A100", "cn-north");
    let festival = 10 * 24..15 * 24;
    let demand = hourly(
        (0..730)
            .map(|hour| if festival.contains(&hour) { 50 } else { 8 })
            .collect(),
    );

    let comparison = compare_plans(&entry, &demand, &PlanOptions::default()).unwrap();
    let monthly_for_all = comparison.plan(PlanKind::AllSubscribed).unwrap();
    assert_eq!(monthly_for_all.total_cost, yuan(250_000));

    let base_hourly = comparison.plan(PlanKind::BaseHourly).unwrap();
    assert_eq!(base_hourly.base_gpus, 8);
    // 8 x ¥5,000 + 42 x 120 h x ¥12.50 = ¥40,000 + ¥63,000.
    assert_eq!(base_hourly.total_cost, yuan(103_000));
    assert_eq!(base_hourly.saving_pct, 58.8); // "about 60%"
    assert!((55.0..65.0).contains(&base_hourly.saving_pct));

    // Round-the-clock festival days make the day unit cheaper than the hour
    // (¥240 < 24 x ¥12.50), and the engine says so.
    let day = comparison.recommendation.cheaper_overlay.unwrap();
    assert_eq!((day.overlay, day.base_gpus), (OverlayMode::Day, 8));
    assert_eq!(day.cost, yuan(40_000 + 42 * 5 * 240)); // ¥90,400, 63.84% less
    assert_eq!(day.saving_vs_hourly, yuan(12_600));

    // Reserving the known peak ahead (the seed's "elastic reservation") is cheaper still:
    // 42 GPUs x 120 h x ¥8.50 = ¥42,840.
    let reserved = comparison.plan(PlanKind::BaseReserved).unwrap();
    let window = reserved.reserved.unwrap();
    assert_eq!(
        (window.gpus, window.first_hour, window.hours),
        (42, 240, 120)
    );
    assert_eq!(reserved.total_cost, yuan(82_840));
    assert_eq!(comparison.recommendation.best, PlanKind::BaseReserved);
    assert_eq!(comparison.recommendation.saving_pct, 66.86);
}
