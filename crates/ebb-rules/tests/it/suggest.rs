//! `suggest`: a rule file that parses, replays within the limit on the trace it was chosen
//! on, says why each lever is there, and is the same for the same input; the gated
//! seasonal steps; `to_toml` round trips.

use ebb_cost::Catalog;
use ebb_rules::model::{self, RuleSet};
use ebb_rules::model_toml::to_toml;
use ebb_rules::replay::baselines::pricing;
use ebb_rules::replay::families::{Family, FamilyParams, generate};
use ebb_rules::replay::trace::Trace;
use ebb_rules::replay::{ReplayOptions, replay};
use ebb_rules::rules_policy::{HPA, RulesPolicy, SEED_80_30};
use ebb_rules::suggest::seasonal::recurring_steps;
use ebb_rules::suggest::{SuggestOptions, suggest};

fn small(family: Family, days: u32, seed: u64) -> Trace {
    let params = FamilyParams {
        days,
        ..family.default_params()
    };
    Trace::from_demand(generate(family, &params, seed)).unwrap()
}

fn options(family: Family) -> SuggestOptions {
    SuggestOptions {
        replay: ReplayOptions {
            overlay: family.overlay(),
            ..ReplayOptions::default()
        },
        ..SuggestOptions::default()
    }
}

/// Two days of `family` (seed 6), in debug: a file that parses, is what was replayed, and is
/// within the limit on its trace. Flash crowds get four: a family has its 3-6 crowds
/// whatever the length, and on two days the GPUs short while a crowd rises 30 GPUs within
/// the 5-minute warmup are over 1% of all demand: no reactive rule is within the limit.
fn parses_and_replays_within_the_limit(family: Family) {
    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    {
        let days = if family == Family::FlashCrowd { 4 } else { 2 };
        let trace = small(family, days, 6);
        let options = options(family);
        let suggestion = suggest(&trace, entry, &options).unwrap();
        let name = family.name();
        assert!(suggestion.within_limit, "{name}: {:?}", suggestion.replay);
        assert!(
            suggestion.replay.shortfall_pct <= options.max_shortfall_pct,
            "{name}"
        );
        // The file is what was replayed: parsed again and replayed, the same figures.
        let parsed = model::parse(&suggestion.file)
            .unwrap_or_else(|e| panic!("{name}: {e}\n{}", suggestion.file));
        assert_eq!(parsed.spec(), suggestion.rules.spec(), "{name}");
        let mut policy = RulesPolicy::new("rules", parsed, Some(pricing(entry, &options.replay)));
        let again = replay(&trace, &mut policy, entry, &options.replay)
            .unwrap()
            .result;
        assert_eq!(again, suggestion.replay, "{name}");
        // Paid-unit-aware release, sized to busy GPUs, and each lever explained.
        let spec = suggestion.rules.spec();
        assert!(!spec.scale_in.force, "{name}");
        assert_eq!(spec.targets.len(), 1, "{name}");
        assert_eq!(spec.targets[0].metric.name(), "busy_gpus", "{name}");
        assert!(spec.limits.max_gpus >= 10 * trace.peak_gpus(), "{name}");
        for words in [
            "# Suggested by `ebb rules suggest`",
            "the perfect-foresight oracle",
            "force = false: a surplus GPU goes only ",
            "Size the pool to its busy GPUs",
            "Scale-in stabilization",
        ] {
            assert!(
                suggestion.file.contains(words),
                "{name}: {words}\n{}",
                suggestion.file
            );
        }
        // The release window as the file says it: the last N minutes, or the unit's end.
        let window = spec.scale_in.release_window_minutes;
        let said = if window == 0 {
            "it has paid for ends,".to_string()
        } else {
            format!("goes only in the last {window} minute")
        };
        assert!(
            suggestion.file.contains(&said),
            "{name}: {said}\n{}",
            suggestion.file
        );
        assert!(
            suggestion.candidates > 10,
            "{name}: a search, not one point"
        );
    }
}

macro_rules! family_tests {
    ($($name:ident: $family:expr,)*) => {$(
        #[test]
        fn $name() {
            parses_and_replays_within_the_limit($family);
        }
    )*};
}

family_tests! {
    suggests_for_daily_festival: Family::DailyFestival,
    suggests_for_two_week_burst: Family::TwoWeekBurst,
    suggests_for_flash_crowd: Family::FlashCrowd,
    suggests_for_oscillation: Family::Oscillation,
    suggests_for_render_batch: Family::RenderBatch,
    suggests_for_steady: Family::Steady,
    suggests_for_growing_streaming: Family::GrowingStreaming,
    suggests_for_weekly: Family::Weekly,
}

#[test]
fn the_same_trace_gives_the_same_file() {
    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    let trace = small(Family::FlashCrowd, 2, 11);
    let first = suggest(&trace, entry, &options(Family::FlashCrowd)).unwrap();
    let second = suggest(&trace, entry, &options(Family::FlashCrowd)).unwrap();
    assert_eq!(first.file, second.file);
    assert_eq!(first.levers, second.levers);
    assert_eq!(first.replay, second.replay);
}

#[test]
fn a_step_that_recurs_on_weekdays_is_found_and_one_offs_are_not() {
    // Weekly: 09:00-18:00 on the family's weekdays (days 0-4 of each 7; day 0 of the trace
    // is 1970-01-01, a Thursday), so Thu, Fri, Sat, Sun, Mon.
    let weekly = small(Family::Weekly, 15, 3);
    let steps = recurring_steps(weekly.demand(), 0, 5);
    assert_eq!(steps.len(), 1, "{steps:?}");
    let step = &steps[0];
    assert_eq!(step.onset_minute_of_day, 9 * 60, "{step:?}");
    assert_eq!(step.weekdays, Some(vec![0, 1, 4, 5, 6]), "{step:?}");
    assert_eq!(step.cron(), "55 8 * * 0,1,4-6");
    assert_eq!(step.days_seen, 11);
    assert!((20..=24).contains(&step.floor_gpus), "{step:?}");

    // A festival day, flash crowds, an oscillation, a two-week burst: no recurring step.
    for family in [
        Family::DailyFestival,
        Family::FlashCrowd,
        Family::Oscillation,
        Family::TwoWeekBurst,
        Family::GrowingStreaming,
        Family::Steady,
    ] {
        let trace = Trace::from_demand(generate(family, &family.default_params(), 3)).unwrap();
        let steps = recurring_steps(trace.demand(), 0, 5);
        assert!(steps.is_empty(), "{}: {steps:?}", family.name());
    }
}

#[test]
fn a_daily_step_is_a_daily_cron() {
    // Every day at 07:30 the load goes from 4 to 20 GPUs, back at 12:00.
    let demand: Vec<f64> = (0..4 * 1_440)
        .map(|m| {
            let minute = m % 1_440;
            if (450..720).contains(&minute) {
                20.0
            } else {
                4.0
            }
        })
        .collect();
    let steps = recurring_steps(&demand, 0, 5);
    assert_eq!(steps.len(), 1, "{steps:?}");
    assert_eq!(steps[0].weekdays, None);
    assert_eq!(steps[0].cron(), "25 7 * * *");
    assert_eq!(steps[0].floor_gpus, 20);
    assert_eq!(steps[0].duration_minutes, 5 + 15);
}

fn round_trip(rules: &RuleSet) {
    let text = to_toml(rules);
    let back = model::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back.spec(), rules.spec(), "{text}");
}

#[test]
fn to_toml_round_trips_every_kind_of_rule() {
    for text in [
        SEED_80_30,
        HPA,
        include_str!("../../examples/festival.toml"),
    ] {
        round_trip(&model::parse(text).unwrap());
    }
    let every_field = r#"
pool = "a \"quoted\" pool"

[limits]
min_gpus = 2
max_gpus = 80
step = { out_gpus = 4, out_pct = 12.5, in_gpus = 3, in_pct = 50 }
budget_per_hour = 499.5
budget_per_month = 250000.25

[scale_in]
force = true
release_window_minutes = 7
deadband_gpus = 2
deadband_minutes = 10
budget_gpus = 3
budget_pct = 25
budget_window_minutes = 15

[[scale_in.quiet]]
cron = "0 9 * * 1-5"
duration_minutes = 480
time_zone = "Asia/Shanghai"

[[scale_in.quiet]]
cron = "30 22 * * *"
duration_minutes = 60
time_zone = "UTC"

[[metric]]
name = "queue_len"
stale_after_minutes = 4

[[threshold]]
name = "queue"
metric = "queue_len"
op = "<"
value = -0.25
for_minutes = 2
action = "-33.3%"
cooldown_minutes = 6

[[threshold]]
name = "set"
metric = "mem_util"
op = "<="
value = 10
action = "set 3"

[[target]]
name = "per-gpu"
metric = "queue_len"
target = 1234567.875
tolerance = 0.05
scale_in_stabilization_minutes = 0
scale_out_sustain_minutes = 3
overload_gpus = 2

[[schedule]]
name = "window"
start = 2025-11-08T06:30:00
end = 2025-11-12T00:00:00
time_zone = "Asia/Shanghai"
exact = 40

[[schedule]]
name = "night"
cron = "0 1 * * 1-5"
duration_minutes = 90
time_zone = "UTC"
ceiling = 5
"#;
    round_trip(&model::parse(every_field).unwrap());
}

#[test]
fn a_window_time_that_is_not_a_date_time_is_written_as_text_the_parser_refuses() {
    let mut rules = model::parse(include_str!("../../examples/festival.toml"))
        .unwrap()
        .spec()
        .clone();
    let window = rules
        .schedules
        .iter_mut()
        .find(|schedule| matches!(schedule.when, ebb_wire::rules::ScheduleWhen::Window { .. }))
        .expect("the festival example has a window");
    // What the form sends over IPC is any text: half typed, or crafted to add a key.
    window.when = ebb_wire::rules::ScheduleWhen::Window {
        start: "2025-11-08T00:00:00\nmax_gpus = 999".into(),
        end: "2025-11-12".into(),
    };
    let text = ebb_rules::model_toml::to_toml_with_notes(&rules, &Default::default());
    // Written as a string, the text adds no key: the file is refused at the window's start.
    let refused = model::parse(&text).expect_err("a start that is not a date-time");
    let shown = refused.to_string();
    assert!(shown.contains("schedule[0].start:"), "{shown}\n{text}");
}

/// The notes the UI words are the levers chosen, with their numbers, in reading order; the
/// operator's custom metrics come through into the file as they were.
#[test]
fn a_suggestion_says_why_as_data_and_keeps_the_operators_metrics() {
    use ebb_wire::rules::CustomMetric;
    use ebb_wire::suggest::{PaidUnit, SuggestNote};
    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    let demand: Vec<f64> = (0..600)
        .map(|t| if (200..400).contains(&t) { 5.0 } else { 1.0 })
        .collect();
    let trace = Trace::from_demand(demand).unwrap();
    let queue = CustomMetric {
        name: "queue_depth".to_string(),
        stale_after_minutes: 7,
        prometheus: None,
    };
    let options = SuggestOptions {
        metrics: vec![queue.clone()],
        ..SuggestOptions::default()
    };
    let suggestion = suggest(&trace, entry, &options).unwrap();
    let spec = suggestion.rules.spec();
    assert_eq!(spec.metrics, vec![queue]);
    assert!(
        suggestion.file.contains("queue_depth"),
        "{}",
        suggestion.file
    );

    let notes = &suggestion.notes;
    assert_eq!(
        notes[0],
        SuggestNote::Trace {
            minutes: 600,
            peak_gpus: 5
        }
    );
    match &notes[1] {
        SuggestNote::Replayed {
            cost_fen,
            shortfall_pct,
            candidates,
            within_margin,
            ..
        } => {
            assert_eq!(*cost_fen, suggestion.replay.cost_fen);
            assert_eq!(*shortfall_pct, suggestion.replay.shortfall_pct);
            assert!(*candidates > 1);
            // Whether they kept within the search's half of the limit, as the file says.
            assert_eq!(*within_margin, suggestion.replay.shortfall_pct <= 0.5);
        }
        other => panic!("{other:?}"),
    }
    let target = &spec.targets[0];
    assert!(notes.contains(&SuggestNote::Target {
        target_pct: target.target as u32
    }));
    assert!(notes.contains(&SuggestNote::Stabilization {
        minutes: target.scale_in_stabilization_minutes
    }));
    assert!(notes.contains(&SuggestNote::ReleaseWindow {
        minutes: spec.scale_in.release_window_minutes,
        unit: PaidUnit::Hour
    }));
    assert!(notes.contains(&SuggestNote::Limits {
        min_gpus: spec.limits.min_gpus,
        max_gpus: spec.limits.max_gpus
    }));
    assert_eq!(
        notes.last(),
        Some(&SuggestNote::KeptMetrics {
            names: vec!["queue_depth".to_string()]
        })
    );
    // Without custom metrics, no note claims any were kept.
    let plain = suggest(&trace, entry, &SuggestOptions::default()).unwrap();
    assert!(
        !plain
            .notes
            .iter()
            .any(|n| matches!(n, SuggestNote::KeptMetrics { .. }))
    );
    assert!(plain.rules.spec().metrics.is_empty());
}

#[test]
fn a_weekday_batch_is_a_day_of_week_schedule() {
    // ~50 GPUs 09:00-17:00 Monday to Friday (UTC; minute 0 is a Thursday), 3 otherwise.
    let batch = small(Family::WeekdayBatch, 15, 5);
    let steps = recurring_steps(batch.demand(), 0, 5);
    assert_eq!(steps.len(), 1, "{steps:?}");
    let step = &steps[0];
    assert_eq!(step.onset_minute_of_day, 9 * 60, "{step:?}");
    assert_eq!(step.weekdays, Some(vec![1, 2, 3, 4, 5]), "{step:?}");
    assert_eq!(step.cron(), "55 8 * * 1-5");
    // Thu, Fri, Mon-Fri, Mon-Thu.
    assert_eq!(step.days_seen, 11);
    assert!((42..=52).contains(&step.floor_gpus), "{step:?}");
}

/// `days` of 10 GPUs (a little noise), with 40 more from 10:00 to 12:00 on `spike_days`.
fn with_spikes(days: usize, spike_days: &[usize]) -> Trace {
    let demand = (0..days * 1_440)
        .map(|m| {
            let (day, minute) = (m / 1_440, m % 1_440);
            let noise = 0.3 * ((m as f64) * 0.7).sin();
            let spike = spike_days.contains(&day) && (600..720).contains(&minute);
            10.0 + noise + if spike { 40.0 } else { 0.0 }
        })
        .collect();
    Trace::from_demand(demand).unwrap()
}

#[test]
fn a_one_off_spike_is_not_a_schedule() {
    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    // Once in four days: no recurring step, no schedule.
    let once = with_spikes(4, &[1]);
    assert!(recurring_steps(once.demand(), 0, 5).is_empty());
    let suggestion = suggest(&once, entry, &SuggestOptions::default()).unwrap();
    assert!(
        suggestion.rules.spec().schedules.is_empty(),
        "{}",
        suggestion.file
    );
    assert!(
        !suggestion.file.contains("[[schedule]]"),
        "{}",
        suggestion.file
    );
    // On one Monday of two (days 4 and 11; day 0 a Thursday): not every occurrence of its
    // weekday, so not a weekly step either.
    let one_monday = with_spikes(15, &[4]);
    assert!(recurring_steps(one_monday.demand(), 0, 5).is_empty());
    // Every day: a daily step, kept only after the rolling-origin check (on a trace this
    // short, its last stretch), which the file reports either way.
    let daily = with_spikes(4, &[0, 1, 2, 3]);
    let steps = recurring_steps(daily.demand(), 0, 5);
    assert_eq!(steps.len(), 1, "{steps:?}");
    let suggestion = suggest(&daily, entry, &SuggestOptions::default()).unwrap();
    assert_eq!(
        suggestion.rules.spec().schedules.len(),
        usize::from(suggestion.levers.pre_scale)
    );
    if suggestion.levers.pre_scale {
        assert!(
            suggestion
                .file
                .contains("Rolling-origin check: on the last stretch of the trace's days"),
            "{}",
            suggestion.file
        );
    }
}

#[test]
fn ar1_noise_is_measured_and_flat_load_does_not_flap_on_it() {
    use ebb_rules::suggest::noise::measure;
    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    let family = Family::Ar1Steady90;
    let full = small(family, 14, 3);
    let noise = measure(full.demand());
    assert!(noise.steady, "{noise:?}");
    assert!((0.8..0.97).contains(&noise.lag1), "{noise:?}");
    assert!((2.0..4.0).contains(&noise.sd_gpus), "{noise:?}");
    assert!((3..=20).contains(&noise.decorrelation_minutes), "{noise:?}");
    for shaped in [
        Family::Weekly,
        Family::FlashCrowd,
        Family::Steps10m,
        Family::LargePool,
    ] {
        let noise = measure(small(shaped, 6, 3).demand());
        assert!(!noise.steady, "{}: {noise:?}", shaped.name());
    }

    // Learn on a week, replay on the next (the wall clock going on).
    let half = 7 * 1_440;
    let train = full.head(half).unwrap();
    let test = full.tail(half).unwrap();
    let suggestion = suggest(&train, entry, &options(family)).unwrap();
    assert!(suggestion.flaps_per_day <= 1.0, "{:?}", suggestion.replay);
    let test_options = ReplayOptions {
        start_ms: half as i64 * 60_000,
        ..ReplayOptions::default()
    };
    let mut policy = RulesPolicy::new(
        "rules",
        suggestion.rules.clone(),
        Some(pricing(entry, &test_options)),
    );
    let replayed = replay(&test, &mut policy, entry, &test_options).unwrap();
    let mut flaps: Vec<u32> = replayed.flapped.iter().map(|&(minute, _)| minute).collect();
    flaps.dedup();
    let flaps = flaps.len();
    let out = replayed.result;
    assert!(
        flaps <= 7,
        "{flaps} flaps in 7 days: {out:?}\n{}",
        suggestion.file
    );
    assert!(out.shortfall_pct <= 1.0, "{out:?}");
    // The noise's figures are in the file's comments.
    let measured = measure(train.demand());
    for text in [
        format!("sd {:.1} GPUs", measured.sd_gpus),
        format!("lag-1 autocorrelation {:.2}", measured.lag1),
        format!(
            "decorrelates in about {} min",
            measured.decorrelation_minutes
        ),
        "flaps a day (an action undone inside the hour it paid for)".to_string(),
    ] {
        assert!(
            suggestion.file.contains(&text),
            "{text}\n{}",
            suggestion.file
        );
    }
}
