//! The seeded trace families: deterministic, the right length and shape.

use ebb_rules::replay::families::{Family, SplitMix64, generate};

#[test]
fn the_same_seed_gives_the_same_trace_and_another_seed_another() {
    for family in Family::ALL {
        let params = family.default_params();
        let first = generate(family, &params, 7);
        assert_eq!(first, generate(family, &params, 7), "{}", family.name());
        assert_eq!(first.len(), 30 * 1440, "{}", family.name());
        assert!(first.iter().all(|gpus| gpus.is_finite() && *gpus >= 0.0));
        if family != Family::Steady && family != Family::Weekly {
            assert_ne!(first, generate(family, &params, 8), "{}", family.name());
        }
        assert_eq!(Family::parse(family.name()), Some(family));
    }
}

#[test]
fn splitmix64_matches_the_reference_sequence() {
    // The reference implementation's first outputs for seed 0.
    let mut rng = SplitMix64::new(0);
    assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
    assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
}

fn max(values: &[f64]) -> f64 {
    values.iter().copied().fold(0.0, f64::max)
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

#[test]
fn each_family_has_its_shape() {
    let trace = |family: Family| generate(family, &family.default_params(), 42);

    let festival = trace(Family::DailyFestival);
    let day_peaks: Vec<f64> = festival.chunks(1440).map(max).collect();
    let festival_days = day_peaks.iter().filter(|&&peak| peak > 60.0).count();
    assert_eq!(festival_days, 1, "{day_peaks:?}");
    assert!(mean(&festival) < 15.0);

    let burst = trace(Family::TwoWeekBurst);
    let busy_days = burst.chunks(1440).filter(|day| mean(day) > 15.0).count();
    assert!((13..=15).contains(&busy_days), "{busy_days}");

    let steady = trace(Family::Steady);
    assert!(steady.iter().all(|&gpus| (17.0..23.0).contains(&gpus)));

    let oscillation = trace(Family::Oscillation);
    // Up and down within every 20 minutes.
    for window in oscillation.chunks(20).take(100) {
        assert!(max(window) - window.iter().copied().fold(f64::MAX, f64::min) > 4.0);
    }

    let render = trace(Family::RenderBatch);
    let render_days = render.chunks(1440).filter(|day| mean(day) > 50.0).count();
    assert!((14..=16).contains(&render_days), "{render_days}");
    assert_eq!(Family::RenderBatch.overlay(), ebb_cost::OverlayMode::Day);

    let growing = trace(Family::GrowingStreaming);
    assert!(max(&growing[..1440]) * 5.0 < max(&growing[29 * 1440..]));

    let weekly = trace(Family::Weekly);
    let weekday = mean(&weekly[12 * 60..13 * 60]);
    let weekend = mean(&weekly[5 * 1440 + 12 * 60..5 * 1440 + 13 * 60]);
    assert!(weekday > 3.0 * weekend, "{weekday} vs {weekend}");

    let flash = trace(Family::FlashCrowd);
    assert!(max(&flash) > 25.0 && mean(&flash) < 12.0);
}

#[test]
fn the_issue_30_families_have_their_shape() {
    let trace = |family: Family| generate(family, &family.default_params(), 42);

    // Minute 0 is a Thursday: day 4 is Monday, day 2 Saturday.
    let batch = trace(Family::WeekdayBatch);
    let monday_noon = mean(&batch[4 * 1440 + 12 * 60..4 * 1440 + 13 * 60]);
    let monday_night = mean(&batch[4 * 1440 + 20 * 60..4 * 1440 + 21 * 60]);
    let saturday_noon = mean(&batch[2 * 1440 + 12 * 60..2 * 1440 + 13 * 60]);
    assert!((45.0..55.0).contains(&monday_noon), "{monday_noon}");
    assert!(
        monday_night < 5.0 && saturday_noon < 5.0,
        "{monday_night} {saturday_noon}"
    );

    for (family, phi) in [
        (Family::Ar1Steady50, 0.5),
        (Family::Ar1Steady90, 0.9),
        (Family::Ar1Steady98, 0.98),
    ] {
        let demand = trace(family);
        let m = mean(&demand);
        let sd = (demand.iter().map(|v| (v - m).powi(2)).sum::<f64>() / demand.len() as f64).sqrt();
        let lag1 = demand
            .windows(2)
            .map(|w| (w[0] - m) * (w[1] - m))
            .sum::<f64>()
            / (demand.len() - 1) as f64
            / (sd * sd);
        assert!((38.0..42.0).contains(&m), "{} {m}", family.name());
        assert!((2.5..4.0).contains(&sd), "{} {sd}", family.name());
        assert!((lag1 - phi).abs() < 0.05, "{} {lag1}", family.name());
        assert!(family.is_steady());
    }

    // Steps: flat for 10 minutes, then a new level within ±30% (and a 2% jitter).
    let steps = trace(Family::Steps10m);
    for block in steps.chunks(10).take(200) {
        let (low, high) = (min(block), max(block));
        assert!(high - low < 0.1 * high, "{block:?}");
        assert!((30.0 * 0.66..30.0 * 1.34).contains(&mean(block)));
    }

    let large = trace(Family::LargePool);
    assert!(large.iter().all(|gpus| (200.0..1_100.0).contains(gpus)));
    assert!(max(&large) > 650.0 && min(&large) < 550.0);
}

fn min(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::MAX, f64::min)
}

/// The large stand-ins the suggest bench measures: each shape drawn at 800 GPUs is the same
/// trace scaled (the same draws, the noise a share of the level), not another shape.
#[test]
fn a_family_at_a_larger_peak_is_the_same_shape_scaled() {
    for family in [
        Family::DailyFestival,
        Family::FlashCrowd,
        Family::WeekdayBatch,
        Family::GrowingStreaming,
        Family::Steps10m,
        Family::Ar1Steady90,
    ] {
        let params = family.default_params();
        let large = params.at_peak(800.0);
        let factor = 800.0 / params.peak_gpus;
        assert_eq!(large.peak_gpus, 800.0);
        assert!((large.base_gpus - params.base_gpus * factor).abs() < 1e-9);
        assert_eq!((large.days, large.noise), (params.days, params.noise));
        let small = generate(family, &params, 5);
        let scaled = generate(family, &large, 5);
        for (a, b) in small.iter().zip(&scaled) {
            assert!(
                (a * factor - b).abs() <= 1e-6 * b.max(1.0),
                "{}",
                family.name()
            );
        }
        assert!(
            max(&scaled) > 400.0,
            "{}: a pool of hundreds",
            family.name()
        );
    }
    let unpeaked = Family::QueueBursts.default_params();
    assert_eq!(unpeaked.at_peak(0.0), unpeaked);
}
