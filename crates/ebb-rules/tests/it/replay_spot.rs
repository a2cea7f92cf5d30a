//! Replay with spot: the trace's spot columns, a hand-computed case with one interruption,
//! the breaker, the seeded market, and properties of the mix.

#![allow(clippy::inconsistent_digit_grouping)] // fen written yuan_fen: 12_50 is ¥12.50

use ebb_cost::{Catalog, PriceEntry};
use ebb_reconcile::spot::{BreakerPolicy, split};
use ebb_rules::policy::{MinuteView, Policy};
use ebb_rules::replay::baselines::{StaticPeak, baseline};
use ebb_rules::replay::families::{Family, generate, with_spot_market};
use ebb_rules::replay::spot::{SpotModel, SpotPrices, SpotReplay, simulate};
use ebb_rules::replay::trace::{Trace, whole_gpus};
use ebb_rules::replay::{ReplayOptions, replay, replay_spot};
use ebb_wire::pools::SpotMix;
use proptest::prelude::*;

/// A100 in cn-north: hour ¥12.50, day ¥240, month ¥5,000.
fn a100() -> PriceEntry {
    Catalog::demo().find("A100", "cn-north").unwrap().clone()
}

fn mix(floor: u32, pct: u32) -> SpotMix {
    SpotMix {
        on_demand_floor: floor,
        spot_pct: pct,
        max_price_fen: None,
    }
}

/// `busy` GPUs of work each of `minutes`, spot at ¥4.00 throughout, one spot GPU taken back
/// at each minute of `taken_at`.
fn steady_spot(busy: f64, minutes: usize, taken_at: &[usize]) -> Trace {
    let mut taken = vec![0u32; minutes];
    for &at in taken_at {
        taken[at] += 1;
    }
    Trace::from_demand(vec![busy; minutes])
        .unwrap()
        .with_spot(Some(vec![4_00; minutes]), Some(taken))
        .unwrap()
}

/// Holds what it is told each minute, whatever it sees.
struct Held(Vec<u32>);

impl Policy for Held {
    fn name(&self) -> &str {
        "held"
    }

    fn desired(&mut self, view: &MinuteView<'_>) -> u32 {
        self.0[view.minute as usize]
    }
}

#[test]
fn trace_reads_the_spot_columns_apart_from_the_metrics() {
    let trace = Trace::from_csv(
        "minute,demand,spot_price,users,interrupted\n0,2,4.5,10,\n1,2,4.375,11,1\n2,2,0,12,0\n",
    )
    .unwrap();
    assert_eq!(trace.spot_price_fen(), Some(&[450, 438, 0][..]));
    assert_eq!(trace.interrupted(), Some(&[0, 1, 0][..]));
    let names: Vec<&str> = trace.columns().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["users"]);
    // Kept by a slice.
    assert_eq!(trace.tail(1).unwrap().spot_price_fen(), Some(&[438, 0][..]));
}

#[test]
fn a_bad_spot_cell_is_named_by_line_and_column() {
    let cases = [
        ("minute,demand,spot_price\n0,1,4\n1,1,\n", 3, 3, "gap"),
        (
            "minute,demand,spot_price\n0,1,4\n1,1,-0.5\n",
            3,
            3,
            "below 0",
        ),
        ("minute,demand,spot_price\n0,1,cheap\n", 2, 3, "not a price"),
        (
            "minute,demand,users,interrupted\n0,1,3,1.5\n",
            2,
            4,
            "whole number",
        ),
        (
            "minute,demand,users,interrupted\n0,1,3,-1\n",
            2,
            4,
            "whole number",
        ),
    ];
    for (csv, line, column, words) in cases {
        let error = Trace::from_csv(csv).unwrap_err();
        assert_eq!(error.line, line, "{csv}");
        assert_eq!(error.column, Some(column), "{csv}");
        assert!(error.message.contains(words), "{}", error.message);
        let name = error.column_name.unwrap();
        assert!(name == "spot_price" || name == "interrupted");
    }
}

/// Two hours of 2 GPUs of work, one spot GPU taken back at minute 30.
///
/// - Mix: no floor, 50% spot, so of the 2 GPUs 1 is on demand and 1 on spot (split rounds
///   spot down: 50% of 2 is 1). Warmup 5 min, notice 2 min, the breaker's default (more
///   than 3 in 30 min) stays closed.
/// - Spot price (the trace's column): ¥4.00 in the first hour, ¥5.00 in the second.
/// - Minute 30: the spot GPU is taken back. Its replacement (spot) is ordered at 30 and is
///   ready at 35; the GPU taken back is gone at 32. Ready: 2 until 31, 1 in minutes 32, 33
///   and 34, 2 from 35: shortfall 3 GPU-minutes (= warmup − notice) of 240, 1.25%.
/// - The on-demand GPU: minutes 0–119, 2 started hours at ¥12.50 = ¥25.00. A month's
///   subscription (¥5,000) is dearer, so no base.
/// - The spot GPU taken back: minutes 0–31, 1 started hour at ¥4.00 (minute 0's price).
/// - Its replacement: minutes 30–119, 90 minutes, 2 started hours: the one starting at
///   minute 30 at ¥4.00, the one starting at minute 90 at ¥5.00 = ¥9.00.
/// - Spot: 3 GPU-hours, ¥13.00. Total ¥38.00.
#[test]
fn one_interruption_by_hand() {
    let mut csv = String::from("minute,demand,spot_price,interrupted\n");
    for minute in 0..120 {
        let price = if minute < 60 { "4.00" } else { "5.00" };
        let taken = u32::from(minute == 30);
        csv.push_str(&format!("{minute},2,{price},{taken}\n"));
    }
    let trace = Trace::from_csv(&csv).unwrap();
    let entry = a100();
    let spot = SpotReplay {
        mix: mix(0, 50),
        ..SpotReplay::default()
    };
    let options = ReplayOptions::default();
    let run = replay_spot(
        &trace,
        &mut StaticPeak::new(&trace),
        &entry,
        &options,
        &spot,
    )
    .unwrap();
    let result = &run.result;
    assert_eq!(result.interruptions, 1);
    assert_eq!(result.spot_gpu_hours, 3);
    assert_eq!(result.spot_cost_fen, 4_00 + 4_00 + 5_00);
    assert_eq!(result.cost_fen, 2 * 12_50 + 13_00);
    assert_eq!(result.base_gpus, 0);
    assert_eq!(result.gpu_hours.overlay, 2);
    assert_eq!(result.shortfall_gpu_minutes, 3.0);
    assert_eq!(result.shortfall_pct, 1.25);
    assert_eq!(result.actions, 0);
    let ready = &run.series.ready;
    assert_eq!(&ready[29..37], &[2, 2, 2, 1, 1, 1, 2, 2]);
    assert!(run.series.held.iter().all(|&held| held == 2));
}

/// Holds 10 GPUs and keeps the utilization it is shown each minute.
struct Watching(Vec<f64>);

impl Policy for Watching {
    fn name(&self) -> &str {
        "watching"
    }

    fn desired(&mut self, view: &MinuteView<'_>) -> u32 {
        self.0.push(view.util_pct);
        10
    }
}

/// A spot GPU taken back leaves a gap (warmup 5 > notice 2) in which its replacement is
/// leased and warming: the rules see it as an idle GPU of the pool, as the console's mean
/// over leased GPUs reads it, so an interruption alone is no sign of more load (at 8 GPUs
/// of work on 10, 80%, not 8 of 9 ready, 89%, a rule scaling out above 80% would have
/// taken). The shortfall is still counted on the GPUs ready.
#[test]
fn an_interruption_gap_is_not_read_as_more_load() {
    let minutes = 60;
    let trace = steady_spot(8.0, minutes, &[20]);
    let entry = a100();
    let spot = SpotReplay {
        mix: mix(0, 50),
        ..SpotReplay::default()
    };
    let prices = SpotPrices::new(&trace, &entry, 0);
    let mut policy = Watching(Vec::new());
    let run = simulate(
        &trace,
        &mut Held(vec![10; minutes]),
        &ReplayOptions::default(),
        &prices,
        &spot,
    );
    let watched = simulate(
        &trace,
        &mut policy,
        &ReplayOptions::default(),
        &prices,
        &spot,
    );
    assert_eq!(run.interruptions, 1);
    // Gone at 22, its replacement ready at 25: 9 ready in between.
    assert_eq!(&watched.outcome.series.ready[21..26], &[10, 9, 9, 9, 10]);
    assert_eq!(watched.outcome.shortfall_gpu_minutes, 0.0);
    // From minute 10 (the two GPUs beyond the trace's first 8 ready by then).
    assert!(
        policy.0[10..]
            .iter()
            .all(|&util| (util - 80.0).abs() < 1e-9),
        "{:?}",
        policy.0
    );
}

/// Four GPUs taken back within half an hour open the default breaker (more than 3): the
/// fourth's replacement goes on demand, and spot returns an hour later once quiet.
#[test]
fn the_breaker_puts_replacements_on_demand() {
    let minutes = 240;
    let trace = steady_spot(8.0, minutes, &[10, 15, 20, 25]);
    let entry = a100();
    let spot = SpotReplay {
        mix: mix(0, 50),
        ..SpotReplay::default()
    };
    let prices = SpotPrices::new(&trace, &entry, 0);
    let run = simulate(
        &trace,
        &mut StaticPeak::new(&trace),
        &ReplayOptions::default(),
        &prices,
        &spot,
    );
    assert_eq!(run.interruptions, 4);
    assert_eq!(run.spot_held[9], 4);
    assert_eq!(run.spot_held[20], 4);
    // The fourth (minute 25) opened it: its replacement is on demand.
    assert_eq!(run.spot_held[25], 3);
    assert!(run.breaker_open_minutes >= 60);
    // Open from 25 for at least an hour: no new spot before then.
    assert_eq!(run.on_demand_held[25], 5);
}

/// After the breaker closes, the pool goes back to its spot share at the end of the paid
/// hour of the on-demand replacement (the top of the stack): the missing spot GPU is
/// ordered 5 minutes before it (the lead, the warmup) and the replacement is released as
/// its hour ends.
///
/// Before the paid-unit rule the swap came at 85, the minute the breaker closed, and
/// released the replacement rented at 25 at 90, 5 minutes into its second paid hour.
#[test]
fn the_spot_share_returns_after_the_breaker_closes() {
    let minutes = 240;
    let trace = steady_spot(8.0, minutes, &[10, 15, 20, 25]);
    let entry = a100();
    let spot = SpotReplay {
        mix: mix(0, 50),
        ..SpotReplay::default()
    };
    let prices = SpotPrices::new(&trace, &entry, 0);
    let run = simulate(
        &trace,
        &mut StaticPeak::new(&trace),
        &ReplayOptions::default(),
        &prices,
        &spot,
    );
    // Opened at 25 (the fourth): quiet from 55, closed at 85 (an hour open).
    assert_eq!(run.breaker_open_minutes, 60);
    assert_eq!(run.spot_held[84], 3);
    assert_eq!(run.on_demand_held[84], 5);
    // The replacement rented at 25 (place 4, above the four rented at 0) is paid to 85:
    // its second hour starts the minute the breaker closes, too late for a spot GPU to be
    // ready by its end, so it waits for that hour's end, 145.
    assert!(run.spot_held[85..140].iter().all(|&spot| spot == 3));
    // At 140 (145 − 5) the missing spot GPU is ordered; the replacement goes at 145.
    assert_eq!(run.spot_held[140], 4);
    assert_eq!(&run.on_demand_held[139..146], &[5, 5, 5, 5, 5, 5, 4]);
    assert_eq!(&run.swapping[139..146], &[0, 1, 1, 1, 1, 1, 0]);
    let released: Vec<_> = run
        .on_demand_runs
        .iter()
        .filter(|paid| paid.end_minute < minutes as u32)
        .map(|paid| (paid.start_minute, paid.end_minute, paid.position))
        .collect();
    assert_eq!(released, vec![(25, 145, 4)]);
    assert_eq!(run.spot_held[minutes - 1], 4);
    assert_eq!(run.on_demand_held[minutes - 1], 4);
    // Make before break: never short of the count.
    assert!(
        run.outcome.series.ready[30..]
            .iter()
            .all(|&ready| ready == 8)
    );
}

/// Three hours of 2 GPUs, half on spot at ¥4.00 an hour; a breaker that opens at one
/// interruption (an hour open, closed after 30 quiet minutes); the spot GPU taken back at
/// minute 10.
///
/// - Minute 10: the spot GPU is taken back (gone at 12, paid 0–11: 1 hour, ¥4.00); the
///   breaker opens, so its replacement is on demand, ordered at 10 and ready at 15: 3
///   GPU-minutes short (12, 13, 14) of 360, 0.833%.
/// - Minute 70: the breaker closes (open since 10, an hour). The pool holds its 2, both
///   ready, none on spot of a share of 1. The one that may go is the replacement (the top
///   of the stack, above the GPU rented at 0), paid to 70: its second hour starts now,
///   too late for a spot GPU ordered now to be ready by its end.
/// - Minute 125: the replacement's second hour ends at 130, within the lead (5 minutes): a
///   spot GPU is ordered (ready at 130) and the replacement released at 130.
/// - On demand, each GPU from its own rental: 0–179, 3 hours; 10–129, 2 hours: ¥62.50. No
///   base (a month is ¥5,000).
/// - Spot: 0–11 (1 hour) and 125–179 (55 minutes, 1 hour): 2 GPU-hours, ¥8.00.
/// - Total ¥70.50 (without going back to spot, the replacement held to the end: 3 hours and
///   ¥79.00 in all). Before the paid-unit rule the swap came at 70 and the replacement was
///   released at 75, 5 minutes into its second paid hour, with 70–179 bought on spot (2
///   hours): ¥74.50, ¥4.00 more.
#[test]
fn back_to_spot_by_hand() {
    let minutes = 180;
    let trace = steady_spot(2.0, minutes, &[10]);
    let entry = a100();
    let spot = SpotReplay {
        mix: mix(0, 50),
        breaker: BreakerPolicy {
            max_interruptions: 0,
            window_ms: 30 * 60_000,
            cool_off_ms: 60 * 60_000,
            quiet_ms: 30 * 60_000,
        },
        ..SpotReplay::default()
    };
    let options = ReplayOptions::default();
    let run = replay_spot(
        &trace,
        &mut StaticPeak::new(&trace),
        &entry,
        &options,
        &spot,
    )
    .unwrap();
    let result = &run.result;
    assert_eq!(result.interruptions, 1);
    assert_eq!(result.spot_gpu_hours, 2);
    assert_eq!(result.spot_cost_fen, 2 * 4_00);
    assert_eq!(result.base_gpus, 0);
    assert_eq!(result.gpu_hours.overlay, 5);
    assert_eq!(result.cost_fen, 5 * 12_50 + 8_00);
    assert_eq!(result.shortfall_gpu_minutes, 3.0);
    assert_eq!(result.actions, 0);
    assert!(run.series.held.iter().all(|&held| held == 2));
    let prices = SpotPrices::new(&trace, &entry, 0);
    let sim = simulate(
        &trace,
        &mut StaticPeak::new(&trace),
        &ReplayOptions::default(),
        &prices,
        &spot,
    );
    assert_eq!(sim.spot_runs, vec![(0, 12), (125, 180)]);
    assert!(sim.on_demand_held[10..130].iter().all(|&held| held == 2));
    assert_eq!(&sim.on_demand_held[128..132], &[2, 2, 1, 1]);
    let paid: Vec<_> = sim
        .on_demand_runs
        .iter()
        .map(|paid| (paid.start_minute, paid.end_minute, paid.position))
        .collect();
    assert_eq!(paid, vec![(0, 180, 0), (10, 130, 1)]);
}

/// Two GPUs, both on spot, one taken back at minute 10 while a breaker opens (at the first
/// interruption, for `open` minutes): its replacement is on demand, rented at 10. Once the
/// breaker has closed, the replacement goes back to spot only in the last lead minutes of
/// its paid unit (5: the lead and the warmup), at the first such minute that comes, and is
/// released at the unit's end; a day-paid one keeps its whole day. With
/// `release_at_unit_end` false it goes back the minute the breaker closes.
#[test]
fn an_on_demand_gpu_goes_back_to_spot_only_at_its_paid_units_end() {
    use ebb_cost::OverlayMode::{Day, Hour};
    // (overlay, minutes the breaker is open, at unit end, swap minute, release minute)
    let cases = [
        // Closed at 30: the hour rented at 10 ends at 70, the spot GPU ordered at 65.
        (Hour, 20, true, 65, 70),
        // Closed at 65: that very minute.
        (Hour, 55, true, 65, 70),
        // Closed at 66: 4 minutes left, less than the warmup: the next hour's end, 130.
        (Hour, 56, true, 125, 130),
        // Closed at 70: the second hour has just started (paid): to its end.
        (Hour, 60, true, 125, 130),
        // Day-paid: not within its day, at 1,445 for the day's end at 1,450.
        (Day, 60, true, 1_445, 1_450),
        (Day, 1_000, true, 1_445, 1_450),
        // Released at once: the minute the breaker closes, released once the spot is ready.
        (Hour, 60, false, 70, 75),
        (Day, 60, false, 70, 75),
    ];
    let minutes = 1_500;
    let trace = steady_spot(2.0, minutes, &[10]);
    let entry = a100();
    let prices = SpotPrices::new(&trace, &entry, 0);
    for (overlay, open, at_unit_end, swap, release) in cases {
        let case = format!("{overlay:?} open {open} at unit end {at_unit_end}");
        let spot = SpotReplay {
            mix: mix(0, 100),
            breaker: BreakerPolicy {
                max_interruptions: 0,
                window_ms: 30 * 60_000,
                cool_off_ms: open * 60_000,
                quiet_ms: open * 60_000,
            },
            release_at_unit_end: at_unit_end,
            ..SpotReplay::default()
        };
        let options = ReplayOptions {
            overlay,
            ..ReplayOptions::default()
        };
        let run = simulate(
            &trace,
            &mut StaticPeak::new(&trace),
            &options,
            &prices,
            &spot,
        );
        assert_eq!(run.breaker_open_minutes, open as u32, "{case}");
        // One spot GPU from 10 (the other taken back) until the swap.
        assert!(
            run.spot_held[10..swap].iter().all(|&spot| spot == 1),
            "{case}: {:?}",
            run.spot_runs
        );
        assert_eq!(run.spot_held[swap], 2, "{case}");
        // The GPU taken back (0–11), the other, and the one in the replacement's place.
        assert_eq!(
            run.spot_runs,
            vec![(0, 12), (0, minutes as u32), (swap as u32, minutes as u32)],
            "{case}"
        );
        // The replacement: rented at 10, released at `release`, held while its spot warms.
        let paid: Vec<_> = run
            .on_demand_runs
            .iter()
            .map(|paid| (paid.start_minute, paid.end_minute))
            .collect();
        assert_eq!(paid, vec![(10, release as u32)], "{case}");
        assert_eq!(run.on_demand_held[release - 1], 1, "{case}");
        assert_eq!(run.on_demand_held[release], 0, "{case}");
        // Make before break: never short but for the interruption's 3 minutes.
        assert_eq!(run.outcome.shortfall_gpu_minutes, 3.0, "{case}");
    }
}

/// The day-paid render-batch case by hand: two GPUs all on spot at ¥4.00 an hour, by the
/// day (¥240) on demand, for two days; the spot GPU taken back at minute 10 while a
/// breaker opens for an hour, so its replacement is rented on demand at 10 (a whole day
/// paid).
///
/// - The replacement goes back to spot at 1,445 and is released at 1,450: its day used.
///   On demand: 1 day, ¥240.
/// - Spot: the GPU never taken back 0–2,879 (48 hours, ¥192), the one taken back 0–11 (1
///   hour, ¥4), the one in the replacement's place 1,445–2,879 (1,435 minutes, 24 started
///   hours, ¥96): 73 hours, ¥292. Total ¥532.
/// - Before the paid-unit rule it went back at 70, released at 75 (65 minutes of a paid day
///   used), and 70–2,879 bought on spot (47 hours, ¥188): ¥624, ¥92 more. All on demand: 2
///   GPUs × 2 days × ¥240 = ¥960.
#[test]
fn a_day_paid_replacement_keeps_its_day() {
    let minutes = 2 * 1_440;
    let trace = steady_spot(2.0, minutes, &[10]);
    let entry = a100();
    let spot = SpotReplay {
        mix: mix(0, 100),
        breaker: BreakerPolicy {
            max_interruptions: 0,
            window_ms: 30 * 60_000,
            cool_off_ms: 60 * 60_000,
            quiet_ms: 30 * 60_000,
        },
        ..SpotReplay::default()
    };
    let options = ReplayOptions {
        overlay: ebb_cost::OverlayMode::Day,
        ..ReplayOptions::default()
    };
    let run = replay_spot(
        &trace,
        &mut StaticPeak::new(&trace),
        &entry,
        &options,
        &spot,
    )
    .unwrap();
    let result = &run.result;
    assert_eq!(result.interruptions, 1);
    assert_eq!(result.base_gpus, 0);
    assert_eq!(result.gpu_hours.overlay, 24);
    assert_eq!(result.spot_gpu_hours, 73);
    assert_eq!(result.spot_cost_fen, 292_00);
    assert_eq!(result.cost_fen, 240_00 + 292_00);
    assert_eq!(result.shortfall_gpu_minutes, 3.0);
}

#[test]
fn the_seeded_market_is_deterministic_and_near_its_rate() {
    let model = SpotModel {
        rate_per_gpu_hour: 0.05,
        seed: 7,
    };
    assert_eq!(model.stormy_hours(500), model.stormy_hours(500));
    // Stormy hours are rarer than calm ones and dearer.
    let stormy = model.stormy_hours(10_000);
    let share = stormy.iter().filter(|&&s| s).count() as f64 / 10_000.0;
    assert!((0.05..0.2).contains(&share), "{share}");
    assert!(model.price_permille(true) > model.price_permille(false));
    let prices = model.spot_prices_fen(120, a100().hour);
    assert!(
        prices
            .iter()
            .all(|&fen| (12_50 * 30 / 100..=12_50 * 40 / 100).contains(&fen))
    );
    // 30 days of 10 spot GPUs: about 0.05 · 7,200 = 360 interruptions.
    let demand = vec![10.0; 30 * 1440];
    let taken: u32 = model.interrupted_for(&demand, 100).iter().sum();
    assert!((250..480).contains(&taken), "{taken}");
    assert_eq!(
        model.interrupted_for(&demand, 100),
        model.interrupted_for(&demand, 100)
    );
}

#[test]
fn a_family_carries_a_spot_market() {
    let model = SpotModel {
        rate_per_gpu_hour: 0.1,
        seed: 1,
    };
    let family = Family::DailyFestival;
    let demand = generate(family, &family.default_params(), 1);
    let trace = with_spot_market(demand, &model, 50, a100().hour).unwrap();
    let taken: u32 = trace.interrupted().unwrap().iter().sum();
    assert!(taken > 0);
    assert_eq!(trace.spot_price_fen().unwrap().len(), trace.minutes());
    assert!(trace.columns().is_empty());
}

/// The seeded model drawn in the replay (no `interrupted` column) takes back about its rate
/// of the spot GPU-hours held.
#[test]
fn the_model_in_replay_takes_back_about_its_rate() {
    let minutes = 30 * 1440;
    let trace = Trace::from_demand(vec![20.0; minutes]).unwrap();
    let entry = a100();
    let spot = SpotReplay {
        mix: mix(0, 50),
        notice_minutes: 2,
        breaker: BreakerPolicy {
            max_interruptions: 1_000,
            ..BreakerPolicy::default()
        },
        model: Some(SpotModel {
            rate_per_gpu_hour: 0.05,
            seed: 3,
        }),
        ..SpotReplay::default()
    };
    let run = replay_spot(
        &trace,
        &mut StaticPeak::new(&trace),
        &entry,
        &ReplayOptions::default(),
        &spot,
    )
    .unwrap();
    // 10 spot GPUs for 720 hours: about 360.
    let taken = run.result.interruptions;
    assert!((250..480).contains(&taken), "{taken}");
    assert!(run.result.spot_gpu_hours >= 7_200);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// With nothing on spot and nothing taken back, the spot replay is the plain one.
    #[test]
    fn no_spot_is_the_plain_replay(
        levels in proptest::collection::vec(0.0f64..12.0, 2..40),
        warmup in 0u32..8,
        name in prop::sample::select(vec!["oracle", "seed-80-30", "hpa", "static-peak"]),
        floor in 0u32..3,
    ) {
        let demand: Vec<f64> = levels.iter().flat_map(|&l| std::iter::repeat_n(l, 17)).collect();
        let trace = Trace::from_demand(demand).unwrap();
        let entry = a100();
        let options = ReplayOptions { warmup_minutes: warmup, ..ReplayOptions::default() };
        let mut plain_policy = baseline(name, &trace, &options, &entry).unwrap();
        let plain = replay(&trace, plain_policy.as_mut(), &entry, &options).unwrap();
        let mut spot_policy = baseline(name, &trace, &options, &entry).unwrap();
        let spot = SpotReplay { mix: mix(floor, 0), ..SpotReplay::default() };
        let spotted = replay_spot(&trace, spot_policy.as_mut(), &entry, &options, &spot).unwrap();
        prop_assert_eq!(&plain.result, &spotted.result);
        prop_assert_eq!(&plain.series, &spotted.series);
    }

    /// Spot never above the split's share of the held count; the held count is the
    /// policy's, or above it while GPUs given back are kept to their unit's end (never
    /// rented above it); interruptions add at most `max(0, warmup − notice)` GPU-minutes of
    /// shortfall each (the policy here does not look at the pool).
    #[test]
    fn spot_stays_within_its_share_and_interruptions_cost_at_most_their_gap(
        held in proptest::collection::vec(0u32..12, 2..30),
        pct in 0u32..=100,
        floor in 0u32..4,
        base in 0u32..4,
        warmup in 0u32..8,
        notice in 0u32..4,
        taken in proptest::collection::vec(0u32..3, 1..30),
        max_interruptions in 0u32..5,
        at_unit_end in any::<bool>(),
    ) {
        let minutes = held.len() * 11;
        let held: Vec<u32> = held.iter().flat_map(|&h| std::iter::repeat_n(h, 11)).collect();
        let demand: Vec<f64> = held.iter().map(|&h| f64::from(h) * 0.9).collect();
        let interrupted: Vec<u32> = (0..minutes).map(|t| taken[t % taken.len()]).collect();
        let plain_trace = Trace::from_demand(demand).unwrap();
        let trace = plain_trace.clone().with_spot(Some(vec![3_75; minutes]), Some(interrupted)).unwrap();
        let entry = a100();
        let spot = SpotReplay {
            mix: mix(floor, pct),
            base,
            notice_minutes: notice,
            breaker: BreakerPolicy { max_interruptions, ..BreakerPolicy::default() },
            model: None,
            release_at_unit_end: at_unit_end,
        };
        let prices = SpotPrices::new(&trace, &entry, 0);
        let options = ReplayOptions { warmup_minutes: warmup, ..ReplayOptions::default() };
        let run = simulate(&trace, &mut Held(held.clone()), &options, &prices, &spot);
        let mut before = whole_gpus(f64::from(held[0]) * 0.9);
        for (t, &wanted) in held.iter().enumerate() {
            let count = run.outcome.series.held[t];
            prop_assert!(count >= wanted, "{} < {} at {}", count, wanted, t);
            prop_assert!(count <= wanted.max(before), "{} above {} at {}", count, wanted, t);
            if !at_unit_end {
                prop_assert_eq!(count, wanted);
            }
            before = count;
            prop_assert_eq!(run.spot_held[t] + run.on_demand_held[t] - run.swapping[t], count);
            prop_assert!(run.swapping[t] <= run.spot_held[t]);
            prop_assert!(run.spot_held[t] <= split(count, base, &spot.mix, true).spot);
        }
        // The paid runs of GPUs not on spot (what the bill charges) cover the minutes as
        // `on_demand_held` counts them, one GPU at a time in each place of the stack.
        let mut covered = vec![0u32; minutes];
        let mut places: Vec<Vec<(u32, u32)>> = Vec::new();
        for paid in &run.on_demand_runs {
            prop_assert!(paid.start_minute <= paid.end_minute);
            for minute in paid.start_minute..paid.end_minute {
                covered[minute as usize] += 1;
            }
            let place = paid.position as usize;
            if places.len() <= place {
                places.resize(place + 1, Vec::new());
            }
            places[place].push((paid.start_minute, paid.end_minute));
        }
        prop_assert_eq!(&covered, &run.on_demand_held);
        for runs in &mut places {
            runs.sort_unstable();
            prop_assert!(runs.windows(2).all(|pair| pair[0].1 <= pair[1].0), "{:?}", runs);
        }
        // The same held series with nothing taken back.
        let calm = plain_trace.with_spot(Some(vec![3_75; minutes]), None).unwrap();
        let calm_prices = SpotPrices::new(&calm, &entry, 0);
        let quiet = simulate(&calm, &mut Held(held.clone()), &options, &calm_prices, &spot);
        prop_assert_eq!(quiet.interruptions, 0);
        // (Released at once, the held count is the policy's in both; kept to the unit's end,
        // a replacement rented on demand keeps its own unit, so the two hold different GPUs
        // as they go and only the at-once pool compares minute for minute.)
        let extra = run.outcome.shortfall_gpu_minutes - quiet.outcome.shortfall_gpu_minutes;
        let bound = f64::from(run.interruptions) * f64::from(warmup.saturating_sub(notice));
        if !at_unit_end {
            prop_assert!(extra <= bound + 1e-6, "{} > {}", extra, bound);
            prop_assert!(extra >= -1e-6);
        }
        if pct == 0 {
            prop_assert_eq!(run.interruptions, 0);
        }
    }
}

/// Suggest's spot mix: the floors tried sit at the trace's low demand; spot dearer than on
/// demand is never chosen; spot at a third of the price with no interruption is chosen
/// whole, and what it reports is what a replay with that mix gives.
#[test]
fn suggest_chooses_the_cheapest_mix_within_the_limit() {
    use ebb_rules::replay::baselines::pricing;
    use ebb_rules::rules_policy::RulesPolicy;
    use ebb_rules::suggest::SuggestOptions;
    use ebb_rules::suggest::spot::{SPOT_PCTS, choose_mix, floors};

    // 3 GPUs for 3 hours, then 10 for 21: the low demand (10th percentile) is 3.
    let demand: Vec<f64> = (0..1_440)
        .map(|m| if m < 180 { 3.0 } else { 10.0 })
        .collect();
    let plain = Trace::from_demand(demand).unwrap();
    assert_eq!(floors(&plain), vec![0, 1, 3]);
    let rules = ebb_rules::model::parse(
        "[limits]\nmin_gpus = 1\nmax_gpus = 100\n[[target]]\nname = \"size\"\nmetric = \"busy_gpus\"\ntarget = 100\n",
    )
    .unwrap();
    let entry = a100();
    let options = SuggestOptions::default();
    let market = |fen: i64| {
        plain
            .clone()
            .with_spot(Some(vec![fen; 1_440]), Some(vec![0; 1_440]))
            .unwrap()
    };
    let spot = SpotReplay::default();

    let dear = choose_mix(&market(20_00), &entry, &options, &rules, &spot).unwrap();
    assert_eq!(dear.mix.spot_pct, 0);
    assert_eq!(dear.replay, dear.on_demand);
    // 0% once, then every floor for each other share.
    assert_eq!(dear.candidates as usize, 1 + (SPOT_PCTS.len() - 1) * 3);

    let cheap_trace = market(4_00);
    let cheap = choose_mix(&cheap_trace, &entry, &options, &rules, &spot).unwrap();
    assert_eq!((cheap.mix.spot_pct, cheap.mix.on_demand_floor), (100, 0));
    assert!(cheap.within_limit);
    assert!(cheap.replay.cost_fen < cheap.on_demand.cost_fen);
    let price = pricing(&entry, &options.replay);
    let mut policy = RulesPolicy::new("rules", rules.clone(), Some(price));
    let again = replay_spot(
        &cheap_trace,
        &mut policy,
        &entry,
        &options.replay,
        &SpotReplay {
            mix: cheap.mix,
            ..spot
        },
    )
    .unwrap();
    assert_eq!(again.result.cost_fen, cheap.replay.cost_fen);
}
