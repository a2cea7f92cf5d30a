//! The slider's preview.

use crate::demo_entry;
use ebb_cost::{CostError, Money, OverlayMode, PoolPlan, Term, preview, run_rate};

fn fen(fen: i64) -> Money {
    Money::from_fen(fen)
}

#[test]
fn a_change_shows_before_after_delta_and_the_split() {
    // A100 in cn-north: ¥5,000 a month, ¥12.50 an hour.
    let entry = demo_entry("A100", "cn-north");
    let plan = PoolPlan {
        base_gpus: 10,
        term: Term::Month,
        overlay: OverlayMode::Hour,
    };
    let change = preview(&entry, &plan, 12, 20).unwrap();
    // Base: 10 x ¥5,000 = ¥50,000 a month = ¥68.49 an hour (6,849.3 fen) = ¥1,643.84 a day.
    assert_eq!(change.after.base.per_hour, fen(68_49));
    assert_eq!(change.after.base.per_day, fen(1_643_84));
    assert_eq!(change.after.base.per_month, fen(50_000_00));
    // Overlay: 10 GPUs x ¥12.50.
    assert_eq!(change.after.overlay_gpus, 10);
    assert_eq!(change.after.overlay.per_hour, fen(125_00));
    assert_eq!(change.after.overlay.per_day, fen(3_000_00));
    assert_eq!(change.after.overlay.per_month, fen(91_250_00));
    assert_eq!(change.after.total.per_hour, fen(193_49));
    // Before: 2 overlay GPUs.
    assert_eq!(change.before.overlay_gpus, 2);
    assert_eq!(change.before.total.per_hour, fen(68_49 + 25_00));
    // The delta is 8 GPUs by the hour.
    assert_eq!(change.delta.per_hour, fen(100_00));
    assert_eq!(change.delta.per_day, fen(2_400_00));
    assert_eq!(change.delta.per_month, fen(73_000_00));
    // Scaling in gives the same delta, negative.
    let back = preview(&entry, &plan, 20, 12).unwrap();
    assert_eq!(back.delta.per_month, fen(-73_000_00));
}

#[test]
fn below_the_base_the_base_is_still_paid() {
    let entry = demo_entry("A100", "cn-north");
    let plan = PoolPlan {
        base_gpus: 10,
        term: Term::Month,
        overlay: OverlayMode::Hour,
    };
    let change = preview(&entry, &plan, 10, 3).unwrap();
    assert_eq!(change.after.overlay_gpus, 0);
    assert_eq!(change.after.total.per_month, fen(50_000_00));
    assert_eq!(change.delta, Default::default());
}

#[test]
fn every_mode_has_its_run_rate() {
    // A100 in cn-north: day ¥240, week ¥1,400, spot ¥6.00, year ¥54,000.
    let entry = demo_entry("A100", "cn-north");
    let rate = |term, overlay| {
        run_rate(
            &entry,
            &PoolPlan {
                base_gpus: 1,
                term,
                overlay,
            },
            2,
        )
        .unwrap()
    };
    let day = rate(Term::Month, OverlayMode::Day);
    assert_eq!(day.overlay.per_hour, fen(10_00));
    assert_eq!(day.overlay.per_day, fen(240_00));
    assert_eq!(day.overlay.per_month, fen(7_300_00));
    let week = rate(Term::Month, OverlayMode::Week);
    assert_eq!(week.overlay.per_hour, fen(8_33)); // 833.33
    assert_eq!(week.overlay.per_day, fen(200_00));
    assert_eq!(week.overlay.per_month, fen(6_083_33)); // 608,333.3
    let spot = rate(Term::Month, OverlayMode::Spot);
    assert_eq!(spot.overlay.per_hour, fen(6_00));
    let year = rate(Term::Year, OverlayMode::Hour);
    assert_eq!(year.base.per_month, fen(4_500_00)); // a twelfth of the year
    assert_eq!(year.base.per_hour, fen(616)); // 616.4
    // The split always adds up, whatever the rounding.
    for run in [day, week, spot, year] {
        assert_eq!(
            run.total.per_hour,
            run.base.per_hour.checked_add(run.overlay.per_hour).unwrap()
        );
        assert_eq!(
            run.total.per_month,
            run.base
                .per_month
                .checked_add(run.overlay.per_month)
                .unwrap()
        );
    }
}

#[test]
fn a_mode_not_offered_is_an_error_naming_it() {
    let mut entry = demo_entry("V100", "cn-east");
    entry.spot_hour = None;
    let plan = PoolPlan {
        base_gpus: 0,
        term: Term::Month,
        overlay: OverlayMode::Spot,
    };
    let error = preview(&entry, &plan, 0, 1).unwrap_err();
    assert_eq!(
        error,
        CostError::NotOffered {
            model: "V100".into(),
            region: "cn-east".into(),
            field: "spot_hour"
        }
    );
    assert!(
        error.to_string().contains("has no `spot_hour` price"),
        "{error}"
    );
}

#[test]
fn huge_counts_do_not_overflow_silently() {
    let entry = demo_entry("H800", "cn-south");
    let plan = PoolPlan::default();
    let rate = run_rate(&entry, &plan, u32::MAX).unwrap();
    // 4,294,967,295 x ¥33.50 x 730 fits in i64 fen.
    assert_eq!(rate.total.per_month.fen(), 4_294_967_295i64 * 33_50 * 730);
}

#[test]
fn a_placement_across_regions_is_priced_per_region() {
    use ebb_cost::{PricedPool, placed_preview, placed_run_rate};
    // A100: ¥12/h in cn-east, ¥13/h in cn-south. Rent 6: 2 on east, 4 on south = ¥76/h.
    let east = demo_entry("A100", "cn-east");
    let south = demo_entry("A100", "cn-south");
    let plan = PoolPlan {
        base_gpus: 0,
        term: Term::Month,
        overlay: OverlayMode::Hour,
    };
    let change = placed_preview(&east, &plan, &[], &[(&east, 2), (&south, 4)]).unwrap();
    assert_eq!(change.after.total.per_hour, fen(76_00));
    assert_eq!(change.delta.per_hour, fen(76_00));
    assert_eq!(change.after.gpus, 6);
    // One pricing at the cheapest region would have said ¥72.
    assert_eq!(
        preview(&east, &plan, 0, 6).unwrap().delta.per_hour,
        fen(72_00)
    );

    // The base covers the oldest GPUs: with 2 subscribed, the 2 on east are base and the 4
    // on south pay ¥13 each.
    let based = PoolPlan {
        base_gpus: 2,
        ..plan
    };
    let rate = placed_run_rate(&east, &based, &[(&east, 2), (&south, 4)]).unwrap();
    assert_eq!(rate.overlay_gpus, 4);
    assert_eq!(rate.overlay.per_hour, fen(52_00));

    // A priced pool keeps its oldest GPUs and prices the next where they would go.
    let pool = PricedPool {
        plan,
        base: east.clone(),
        held: vec![(east.clone(), 2), (south.clone(), 2)],
        more: Vec::new(),
        next: south.clone(),
    };
    assert_eq!(pool.run_rate(3).unwrap().total.per_hour, fen(37_00));
    assert_eq!(pool.preview(4, 6).unwrap().delta.per_hour, fen(26_00));
    assert_eq!(pool.preview(4, 1).unwrap().delta.per_hour, fen(-38_00));
    // Where placement would put the next GPUs: 1 more on east, then south.
    let placed = PricedPool {
        more: vec![(east.clone(), 1)],
        ..pool
    };
    assert_eq!(placed.preview(4, 6).unwrap().delta.per_hour, fen(25_00));
}
