//! The billing model on held series: runs, started units, the best base.

#![allow(clippy::inconsistent_digit_grouping)] // fen written yuan_fen: 12_50 is ¥12.50

use ebb_cost::{Catalog, OverlayMode, PriceEntry, Term};
use ebb_rules::replay::billing::{
    BillingPlan, PaidRun, bill_held, bill_held_base, bill_runs_base, unit_minutes,
};
use proptest::prelude::*;

/// A100 in cn-north: hour ¥12.50, day ¥240, week ¥1,400, month ¥5,000.
fn a100() -> PriceEntry {
    Catalog::demo().find("A100", "cn-north").unwrap().clone()
}

fn plan(overlay: OverlayMode) -> BillingPlan {
    BillingPlan {
        term: Term::Month,
        overlay,
        start_hour: 0,
    }
}

/// `minutes` of `gpus`.
fn held(parts: &[(usize, u32)]) -> Vec<u32> {
    parts
        .iter()
        .flat_map(|&(minutes, gpus)| std::iter::repeat_n(gpus, minutes))
        .collect()
}

#[test]
fn a_gpu_held_61_minutes_by_the_hour_pays_two_hours_and_by_the_day_one_day() {
    let series = held(&[(61, 1), (59, 0)]);
    let bill = bill_held(&series, &a100(), &plan(OverlayMode::Hour)).unwrap();
    assert_eq!(bill.cost.fen(), 2 * 12_50);
    assert_eq!(bill.base_gpus, 0);
    assert_eq!(bill.overlay_gpu_hours, 2);
    assert_eq!(bill.subscribed_gpu_hours, 0);
    let bill = bill_held(&series, &a100(), &plan(OverlayMode::Day)).unwrap();
    assert_eq!(bill.cost.fen(), 240_00);
    assert_eq!(bill.overlay_gpu_hours, 24);
}

#[test]
fn a_gpu_released_and_rented_again_within_its_hour_pays_again() {
    // 10 minutes, 5 off, 10 minutes: two runs, two hours; held through, one hour.
    let broken = held(&[(10, 1), (5, 0), (10, 1)]);
    let bill = bill_held(&broken, &a100(), &plan(OverlayMode::Hour)).unwrap();
    assert_eq!(bill.cost.fen(), 2 * 12_50);
    assert_eq!(bill.layers[0].runs, 2);
    let kept = held(&[(25, 1)]);
    assert_eq!(
        bill_held(&kept, &a100(), &plan(OverlayMode::Hour))
            .unwrap()
            .cost
            .fen(),
        12_50
    );
}

#[test]
fn layers_stack_from_the_bottom_and_the_newest_goes_first() {
    // 2 GPUs for 90 minutes, a third for minutes 30..40 and again 50..60, then 1 GPU.
    let series = held(&[(30, 2), (10, 3), (10, 2), (10, 3), (30, 2), (60, 1)]);
    let bill = bill_held(&series, &a100(), &plan(OverlayMode::Hour)).unwrap();
    // Layer 1: 150 min → 3 h. Layer 2: 90 min → 2 h. Layer 3: two runs of 10 → 2 h.
    let units: Vec<u64> = bill.layers.iter().map(|layer| layer.units).collect();
    assert_eq!(units, [3, 2, 2]);
    assert_eq!(bill.cost.fen(), 7 * 12_50);
}

#[test]
fn a_layer_goes_on_subscription_when_that_is_cheaper_over_the_trace() {
    // 30 days = 720 hours: one month's subscription (¥5,000). Layer 1 all month by the hour
    // would be ¥9,000; layers 2-3 for 300 hours would be ¥3,750 each.
    let minutes = 720 * 60;
    let series: Vec<u32> = (0..minutes)
        .map(|t| if t < 300 * 60 { 3 } else { 1 })
        .collect();
    let bill = bill_held(&series, &a100(), &plan(OverlayMode::Hour)).unwrap();
    assert_eq!(bill.base_gpus, 1);
    assert_eq!(bill.base_cost.fen(), 5_000_00);
    assert_eq!(bill.overlay_cost.fen(), 2 * 300 * 12_50);
    assert_eq!(bill.cost.fen(), 5_000_00 + 7_500_00);
    assert_eq!(bill.subscribed_gpu_hours, 720);
    assert_eq!(bill.overlay_gpu_hours, 600);
    // 731 hours is two months: the subscription doubles and no layer is worth it.
    let series = vec![1u32; 731 * 60];
    let bill = bill_held(&series, &a100(), &plan(OverlayMode::Hour)).unwrap();
    assert_eq!(bill.subscription_per_gpu.fen(), 10_000_00);
    assert_eq!((bill.base_gpus, bill.cost.fen()), (0, 731 * 12_50));
}

#[test]
fn spot_pays_the_price_in_force_when_each_hour_starts() {
    let mut entry = a100();
    entry.spot_hour = Some(ebb_cost::Money::from_fen(6_00));
    entry.spot_series = vec![ebb_cost::SpotPoint {
        hour: 101,
        price: ebb_cost::Money::from_fen(7_00),
    }];
    // Two hours from catalog hour 100: ¥6 then ¥7.
    let series = vec![1u32; 120];
    let plan = BillingPlan {
        term: Term::Month,
        overlay: OverlayMode::Spot,
        start_hour: 100,
    };
    assert_eq!(bill_held(&series, &entry, &plan).unwrap().cost.fen(), 13_00);
}

#[test]
fn an_overlay_the_region_does_not_offer_is_an_error_naming_it() {
    let mut entry = a100();
    entry.week = None;
    let error = bill_held(&[1], &entry, &plan(OverlayMode::Week)).unwrap_err();
    assert!(error.to_string().contains("`week`"), "{error}");
}

/// Two GPUs by the hour, released out of stack order (as the replay gives back the one
/// whose hour ends first): A held 0–64, B 55–119. Each pays its own started hours, 2 + 2;
/// the layers of the held count would bill 0–119 (2 hours) and 55–64 (1 hour), a run B
/// never had. A base of one covers the oldest GPU held: A, then B once A is gone (B pays
/// only its hour 55–64 on the overlay), so subscribing the first layer saves 3 hours and
/// the second 1.
#[test]
fn gpus_released_out_of_stack_order_pay_their_own_runs() {
    let runs = [
        PaidRun {
            start_minute: 0,
            end_minute: 65,
            position: 0,
        },
        PaidRun {
            start_minute: 55,
            end_minute: 120,
            position: 1,
        },
    ];
    let hour = plan(OverlayMode::Hour);
    let bill = bill_runs_base(&runs, 120, &a100(), &hour, None).unwrap();
    assert_eq!(bill.cost.fen(), 4 * 12_50);
    assert_eq!(bill.overlay_gpu_hours, 4);
    let units: Vec<u64> = bill.layers.iter().map(|layer| layer.units).collect();
    assert_eq!(units, [3, 1]);
    let count = held(&[(55, 1), (10, 2), (55, 1)]);
    assert_eq!(
        bill_held(&count, &a100(), &hour).unwrap().cost.fen(),
        3 * 12_50
    );
    // The base given covers the oldest held, whichever GPU that is.
    let based = bill_runs_base(&runs, 120, &a100(), &hour, Some(1)).unwrap();
    assert_eq!(based.base_gpus, 1);
    assert_eq!(based.overlay_cost.fen(), 12_50);
}

/// The runs of a held series released newest first, each GPU at its layer.
fn stack_runs(series: &[u32]) -> Vec<PaidRun> {
    let mut open: Vec<u32> = Vec::new();
    let mut runs = Vec::new();
    for (t, &gpus) in series.iter().enumerate() {
        while open.len() < gpus as usize {
            open.push(t as u32);
        }
        while open.len() > gpus as usize {
            let start = open.pop().unwrap();
            runs.push(PaidRun {
                start_minute: start,
                end_minute: t as u32,
                position: open.len() as u32,
            });
        }
    }
    while let Some(start) = open.pop() {
        runs.push(PaidRun {
            start_minute: start,
            end_minute: series.len() as u32,
            position: open.len() as u32,
        });
    }
    runs
}

/// Per GPU, the way an operator's invoice would list it: GPU ids pushed and popped newest
/// first, each id's runs paid per started unit.
fn per_gpu_cost(series: &[u32], unit: u32, unit_fen: i64) -> Vec<i64> {
    let mut stack: Vec<(usize, u32)> = Vec::new(); // (gpu id, run start)
    let mut cost: Vec<i64> = Vec::new();
    let mut next_id = 0;
    let pay = |id: usize, start: u32, end: u32, cost: &mut Vec<i64>| {
        if cost.len() <= id {
            cost.resize(id + 1, 0);
        }
        cost[id] += i64::from((end - start).div_ceil(unit)) * unit_fen;
    };
    for (t, &gpus) in series.iter().enumerate() {
        while stack.len() < gpus as usize {
            // A fresh GPU takes the lowest free id, so id = layer.
            let id = stack.len();
            next_id = next_id.max(id + 1);
            stack.push((id, t as u32));
        }
        while stack.len() > gpus as usize {
            let (id, start) = stack.pop().unwrap();
            pay(id, start, t as u32, &mut cost);
        }
    }
    while let Some((id, start)) = stack.pop() {
        pay(id, start, series.len() as u32, &mut cost);
    }
    cost.resize(next_id, 0);
    cost
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Layer billing equals per-GPU billing, and the base is the exact optimum over every
    /// possible base.
    #[test]
    fn layers_equal_gpus_and_the_base_is_optimal(
        steps in prop::collection::vec((1usize..400, 0u32..8), 1..40),
        overlay in prop::sample::select(vec![OverlayMode::Hour, OverlayMode::Day]),
    ) {
        let series = held(&steps);
        let entry = a100();
        let bill = bill_held(&series, &entry, &plan(overlay)).unwrap();
        let unit_fen = match overlay { OverlayMode::Day => 240_00, _ => 12_50 };
        let per_gpu = per_gpu_cost(&series, unit_minutes(overlay), unit_fen);
        let layers: Vec<i64> = bill.layers.iter().map(|layer| layer.cost_fen).collect();
        prop_assert_eq!(&layers, &per_gpu);
        let sub = bill.subscription_per_gpu.fen();
        let best = (0..=per_gpu.len())
            .map(|base| base as i64 * sub + per_gpu[base..].iter().sum::<i64>())
            .min()
            .unwrap();
        prop_assert_eq!(bill.cost.fen(), best);
    }

    /// GPUs released newest first: billed from their runs, they cost what their layers do,
    /// with the best base or a given one.
    #[test]
    fn runs_released_newest_first_bill_as_layers(
        steps in prop::collection::vec((1usize..400, 0u32..8), 1..40),
        overlay in prop::sample::select(vec![OverlayMode::Hour, OverlayMode::Day, OverlayMode::Spot]),
        base in prop::option::of(0u32..10),
    ) {
        let series = held(&steps);
        let entry = a100();
        let layers = bill_held_base(&series, &entry, &plan(overlay), base).unwrap();
        let runs = bill_runs_base(&stack_runs(&series), series.len(), &entry, &plan(overlay), base).unwrap();
        prop_assert_eq!(runs, layers);
    }
}
