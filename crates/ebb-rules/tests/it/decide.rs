//! Decide: a table test for every rule kind and every clamp, and the properties (10k cases
//! each): min ≤ desired ≤ max, the budget never exceeded, the step cap held, no action
//! inside a cooldown, noise within tolerance does nothing.

#![allow(clippy::inconsistent_digit_grouping)] // fen written yuan_fen: 12_50 is ¥12.50

use ebb_cost::{Catalog, OverlayMode, PoolPlan, Term};
use ebb_rules::decide::{MetricWindows, PoolState, Pricing, Window, decide, release_allowance};
use ebb_rules::model::{RuleSet, parse};
use ebb_rules::policy::{MinuteView, Policy};
use ebb_rules::rules_policy::RulesPolicy;
use ebb_wire::rules::{
    self as spec, Action, Budget, Clamp, Comparison, Decision, DecisionReason, Limits, MetricRef,
    RuleStatus, ScaleIn, StepCap, TargetRule, ThresholdRule,
};
use proptest::prelude::*;

/// 2023-11-14 22:13 UTC, on a minute.
pub const NOW: i64 = 1_699_999_980_000;
pub const MIN: i64 = 60_000;

pub fn rules(text: &str) -> RuleSet {
    parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Samples one a minute ending at `NOW`, oldest first.
pub fn window(values: &[f64]) -> Window {
    let n = values.len() as i64;
    Window::from_samples(
        values
            .iter()
            .enumerate()
            .map(|(i, v)| ebb_rules::decide::Sample {
                at_ms: NOW - (n - 1 - i as i64) * MIN,
                value: *v,
            }),
    )
}

/// Utilization samples on a pool of `ready` GPUs (busy = util · ready / 100).
pub fn util(values: &[f64], ready: u32) -> MetricWindows {
    MetricWindows {
        gpu_util: window(values),
        busy_gpus: window(
            &values
                .iter()
                .map(|u| u * f64::from(ready) / 100.0)
                .collect::<Vec<_>>(),
        ),
        ready_gpus: window(&vec![f64::from(ready); values.len()]),
        ..MetricWindows::default()
    }
}

/// Busy-GPU samples (utilization derived, capped at 100).
pub fn busy(values: &[f64], ready: u32) -> MetricWindows {
    MetricWindows {
        gpu_util: window(
            &values
                .iter()
                .map(|b| (100.0 * b / f64::from(ready.max(1))).min(100.0))
                .collect::<Vec<_>>(),
        ),
        busy_gpus: window(values),
        ready_gpus: window(&vec![f64::from(ready); values.len()]),
        ..MetricWindows::default()
    }
}

/// A pool at `gpus`, all ready, no history, no price.
pub fn pool(gpus: u32) -> PoolState<'static> {
    PoolState {
        desired_gpus: gpus,
        ready_gpus: gpus,
        held_gpus: gpus,
        warming_gpus: 0,
        held_since_ms: &[],
        last_scale_out_ms: None,
        last_scale_in_ms: None,
        pricing: None,
        node_gpus: 1,
    }
}

/// A100 in cn-north by the hour (¥12.50/h), no base.
pub fn hourly() -> Pricing {
    static A100: std::sync::LazyLock<ebb_cost::PriceEntry> =
        std::sync::LazyLock::new(|| Catalog::demo().find("A100", "cn-north").unwrap().clone());
    Pricing::single(
        A100.clone(),
        PoolPlan {
            base_gpus: 0,
            term: Term::Month,
            overlay: OverlayMode::Hour,
        },
    )
}

fn kinds(decision: &Decision) -> Vec<&'static str> {
    decision.clamps.iter().map(Clamp::kind).collect()
}

const LIMITS: &str = "[limits]\nmin_gpus = 1\nmax_gpus = 100\n[scale_in]\nforce = true\n";

fn with_limits(body: &str) -> RuleSet {
    rules(&format!("{LIMITS}{body}"))
}

const HOT: &str = r#"
[[threshold]]
name = "hot"
metric = "gpu_util"
op = ">="
value = 80
for_minutes = 3
action = "+20%"
cooldown_minutes = 5
"#;

const COLD: &str = r#"
[[threshold]]
name = "cold"
metric = "gpu_util"
op = "<="
value = 30
for_minutes = 10
action = "-30%"
cooldown_minutes = 5
"#;

#[test]
fn a_threshold_fires_once_sustained() {
    let set = with_limits(HOT);
    let d = decide(&set, &pool(10), &util(&[85.0, 90.0, 81.0], 10), NOW);
    assert_eq!(d.desired_gpus, 12);
    assert_eq!(d.rules[0].recommended_gpus, Some(12));
    assert!(matches!(d.rules[0].status, RuleStatus::Fired { .. }));
    assert_eq!(
        d.reason,
        DecisionReason::Rule {
            rule: "hot".into(),
            from_gpus: 10,
            to_gpus: 12
        }
    );
    assert!(d.clamps.is_empty());
}

#[test]
fn a_threshold_not_yet_sustained_says_how_far_it_is() {
    let set = with_limits(HOT);
    let d = decide(&set, &pool(10), &util(&[70.0, 85.0, 90.0], 10), NOW);
    assert_eq!(d.desired_gpus, 10);
    let DecisionReason::Waiting { rule, status } = &d.reason else {
        panic!("{:?}", d.reason);
    };
    assert_eq!(rule, "hot");
    assert!(matches!(
        status,
        RuleStatus::Sustaining {
            minutes_met: 2,
            minutes_needed: 3,
            ..
        }
    ));
    assert_eq!(
        d.reason.to_string(),
        "hot: gpu_util >= 80 for 2 of 3 minutes"
    );
    // Too little history counts as not sustained.
    let d = decide(&set, &pool(10), &util(&[90.0, 90.0], 10), NOW);
    assert_eq!(d.desired_gpus, 10);
}

#[test]
fn nothing_near_acting_is_steady() {
    let set = with_limits(&format!("{HOT}{COLD}"));
    let d = decide(&set, &pool(10), &util(&[50.0; 10], 10), NOW);
    assert_eq!(d.desired_gpus, 10);
    assert_eq!(d.reason, DecisionReason::Steady);
}

#[test]
fn threshold_actions_scale_in_and_set() {
    let set = with_limits(COLD);
    let d = decide(&set, &pool(10), &util(&[20.0; 10], 10), NOW);
    assert_eq!(d.desired_gpus, 7);
    // −30% of 3 rounds up to one GPU.
    let d = decide(&set, &pool(3), &util(&[20.0; 10], 3), NOW);
    assert_eq!(d.desired_gpus, 2);
    let set = with_limits(
        "[[threshold]]\nname = \"s\"\nmetric = \"busy_gpus\"\nop = \">\"\nvalue = 5\naction = \"set 40\"\n",
    );
    let d = decide(&set, &pool(10), &busy(&[6.0], 10), NOW);
    assert_eq!(d.desired_gpus, 40);
    let set = with_limits(
        "[[threshold]]\nname = \"a\"\nmetric = \"gpu_util\"\nop = \">\"\nvalue = 90\naction = \"+3\"\n",
    );
    let d = decide(&set, &pool(0), &util(&[100.0], 0), NOW);
    assert_eq!(d.desired_gpus, 3);
}

#[test]
fn a_cooldown_holds_the_rule_and_says_until_when() {
    let set = with_limits(HOT);
    let state = PoolState {
        last_scale_out_ms: Some(NOW - 2 * MIN),
        ..pool(10)
    };
    let d = decide(&set, &state, &util(&[90.0; 3], 10), NOW);
    assert_eq!(d.desired_gpus, 10);
    assert_eq!(d.recommended_gpus, 12);
    assert_eq!(kinds(&d), ["cooldown"]);
    assert!(matches!(
        d.rules[0].status,
        RuleStatus::Cooldown { until_ms, would_gpus: 12 } if until_ms == NOW + 3 * MIN
    ));
    let DecisionReason::Held { rule, clamp } = &d.reason else {
        panic!("{:?}", d.reason);
    };
    assert_eq!(rule, "hot");
    assert!(
        clamp.to_string().contains("cooling down until 22:16 UTC"),
        "{clamp}"
    );
    // Over at 5 minutes.
    let state = PoolState {
        last_scale_out_ms: Some(NOW - 5 * MIN),
        ..pool(10)
    };
    assert_eq!(
        decide(&set, &state, &util(&[90.0; 3], 10), NOW).desired_gpus,
        12
    );
    // A scale-in rule also waits after a scale-out.
    let set = with_limits(COLD);
    let state = PoolState {
        last_scale_out_ms: Some(NOW - MIN),
        ..pool(10)
    };
    let d = decide(&set, &state, &util(&[10.0; 10], 10), NOW);
    assert_eq!(d.desired_gpus, 10);
    assert_eq!(kinds(&d), ["cooldown"]);
}

const TRACK_UTIL: &str = r#"
[[target]]
name = "util-60"
metric = "gpu_util"
target = 60
"#;

#[test]
fn target_tracking_sizes_to_the_target() {
    let set = with_limits(TRACK_UTIL);
    // 10 GPUs at 90% → 15 GPUs at 60%.
    let d = decide(&set, &pool(10), &util(&[90.0], 10), NOW);
    assert_eq!(d.desired_gpus, 15);
    assert!(matches!(
        d.rules[0].status,
        RuleStatus::Tracking {
            instant_gpus: 15,
            ..
        }
    ));
}

#[test]
fn within_tolerance_a_target_does_nothing_and_holds_off_scale_in() {
    let set = with_limits(&format!("{TRACK_UTIL}{COLD}"));
    let d = decide(&set, &pool(10), &util(&[65.0], 10), NOW);
    assert_eq!(d.desired_gpus, 10);
    // Thresholds come first in the outcomes, then targets.
    assert!(matches!(
        d.rules[1].status,
        RuleStatus::WithinTolerance { .. }
    ));
    // 66% is exactly the edge (1.1 × 60): still within.
    assert_eq!(
        decide(&set, &pool(10), &util(&[66.0], 10), NOW).desired_gpus,
        10
    );
    assert_eq!(
        decide(&set, &pool(10), &util(&[67.0], 10), NOW).desired_gpus,
        12
    );
}

#[test]
fn busy_gpus_at_100_percent_sizes_to_demand() {
    let set = with_limits(
        "[[target]]\nname = \"demand\"\nmetric = \"busy_gpus\"\ntarget = 100\ntolerance = 0\nscale_in_stabilization_minutes = 0\n",
    );
    // Utilization saturates at 100 and hides the shortfall; busy GPUs do not.
    let d = decide(&set, &pool(10), &busy(&[17.2], 10), NOW);
    assert_eq!(d.desired_gpus, 18);
    let d = decide(&set, &pool(10), &busy(&[4.0], 10), NOW);
    assert_eq!(d.desired_gpus, 4);
    // At 80%: headroom.
    let set = with_limits(
        "[[target]]\nname = \"demand\"\nmetric = \"busy_gpus\"\ntarget = 80\ntolerance = 0\n",
    );
    assert_eq!(
        decide(&set, &pool(10), &busy(&[16.0], 10), NOW).desired_gpus,
        20
    );
}

#[test]
fn scale_in_waits_for_the_stabilization_window() {
    let set = with_limits(
        "[[target]]\nname = \"demand\"\nmetric = \"busy_gpus\"\ntarget = 100\ntolerance = 0\nscale_in_stabilization_minutes = 5\n",
    );
    let d = decide(&set, &pool(10), &busy(&[9.0, 3.0, 3.0, 3.0, 3.0], 10), NOW);
    assert_eq!(d.rules[0].recommended_gpus, Some(3));
    assert_eq!(d.desired_gpus, 9);
    assert_eq!(kinds(&d), ["stabilization"]);
    // Past the window, it goes.
    let d = decide(
        &set,
        &pool(10),
        &busy(&[9.0, 3.0, 3.0, 3.0, 3.0, 3.0], 10),
        NOW,
    );
    assert_eq!(d.desired_gpus, 3);
}

#[test]
fn a_first_reading_under_a_minute_scales_out_at_once_never_in_and_counts_as_no_minute() {
    let partial = |value: f64| {
        let mut window = Window::default();
        window.set_partial(NOW - 5_000, value);
        MetricWindows {
            busy_gpus: window,
            ..MetricWindows::default()
        }
    };
    let set = with_limits(
        "[[target]]\nname = \"demand\"\nmetric = \"busy_gpus\"\ntarget = 100\ntolerance = 0\nscale_in_stabilization_minutes = 0\n",
    );
    // Out on the first seconds of readings.
    let d = decide(&set, &pool(2), &partial(7.5), NOW);
    assert_eq!(d.desired_gpus, 8);
    // Never in on them, even without a stabilization window.
    let d = decide(&set, &pool(10), &partial(3.0), NOW);
    assert_eq!(d.desired_gpus, 10);
    // A threshold needs its minute: part of one is none of it.
    let set = with_limits(
        "[[threshold]]\nname = \"hot\"\nmetric = \"busy_gpus\"\nop = \">\"\nvalue = 5\nfor_minutes = 1\naction = \"+2\"\n",
    );
    let d = decide(&set, &pool(4), &partial(9.0), NOW);
    assert_eq!(d.desired_gpus, 4, "{:?}", d.rules[0].status);
    // A sustain window needs its minutes too.
    let set = with_limits(
        "[[target]]\nname = \"demand\"\nmetric = \"busy_gpus\"\ntarget = 100\ntolerance = 0\nscale_out_sustain_minutes = 1\n",
    );
    assert_eq!(decide(&set, &pool(2), &partial(7.5), NOW).desired_gpus, 2);
}

#[test]
fn the_asymmetric_trigger_acts_at_once_on_overload_and_waits_otherwise() {
    let set = with_limits(
        "[[target]]\nname = \"demand\"\nmetric = \"busy_gpus\"\ntarget = 100\ntolerance = 0\nscale_out_sustain_minutes = 3\noverload_gpus = 3\n",
    );
    // One GPU short for one minute: wait.
    let d = decide(&set, &pool(10), &busy(&[9.0, 9.0, 10.5], 10), NOW);
    assert_eq!(d.desired_gpus, 10);
    assert!(matches!(
        d.reason,
        DecisionReason::Waiting {
            status: RuleStatus::TargetSustaining {
                minutes_met: 1,
                minutes_needed: 3,
                ..
            },
            ..
        }
    ));
    // Short for three minutes: the lowest of them.
    let d = decide(&set, &pool(10), &busy(&[11.5, 10.5, 11.2], 10), NOW);
    assert_eq!(d.desired_gpus, 11);
    // Three GPUs short: at once.
    let d = decide(&set, &pool(10), &busy(&[9.0, 9.0, 12.5], 10), NOW);
    assert_eq!(d.desired_gpus, 13);
}

#[test]
fn a_stale_custom_metric_does_nothing_and_says_so() {
    let set = with_limits(
        "[[metric]]\nname = \"users\"\nstale_after_minutes = 5\n[[threshold]]\nname = \"users-100k\"\nmetric = \"users\"\nop = \">\"\nvalue = 100000\naction = \"set 20\"\n",
    );
    let mut windows = util(&[50.0], 10);
    windows.custom_mut("users").push(NOW - 10 * MIN, 150_000.0);
    let d = decide(&set, &pool(10), &windows, NOW);
    assert_eq!(d.desired_gpus, 10);
    assert!(matches!(
        d.reason,
        DecisionReason::Waiting {
            status: RuleStatus::Stale {
                stale_after_minutes: 5,
                ..
            },
            ..
        }
    ));
    assert!(d.reason.to_string().contains("stale"), "{}", d.reason);
    // Fresh, it acts.
    windows.custom_mut("users").push(NOW, 150_000.0);
    assert_eq!(decide(&set, &pool(10), &windows, NOW).desired_gpus, 20);
    // Never seen: no data.
    let d = decide(&set, &pool(10), &util(&[50.0], 10), NOW);
    assert!(matches!(d.rules[0].status, RuleStatus::NoData { .. }));
}

fn schedule(extra: &str) -> RuleSet {
    with_limits(&format!(
        "{HOT}\n[[schedule]]\nname = \"s\"\ntime_zone = \"UTC\"\n{extra}\n"
    ))
}

#[test]
fn schedules_set_floors_ceilings_and_exact_counts() {
    // A window around NOW (22:13 UTC on 2023-11-14).
    let window = "start = 2023-11-14T22:00:00\nend = 2023-11-14T23:00:00";
    let floor = schedule(&format!("{window}\nfloor = 70"));
    let d = decide(&floor, &pool(10), &util(&[50.0], 10), NOW);
    assert_eq!(d.desired_gpus, 70);
    assert_eq!(kinds(&d), ["schedule"]);
    assert!(matches!(d.reason, DecisionReason::Bound { .. }));
    assert!(matches!(
        d.rules[1].status,
        RuleStatus::ScheduleActive { gpus: 70, until_ms, .. } if until_ms == NOW + 47 * MIN
    ));
    let ceiling = schedule(&format!("{window}\nceiling = 11"));
    let d = decide(&ceiling, &pool(10), &util(&[90.0; 3], 10), NOW);
    assert_eq!(d.desired_gpus, 11);
    assert_eq!(kinds(&d), ["schedule"]);
    let exact = schedule(&format!("{window}\nexact = 4"));
    assert_eq!(
        decide(&exact, &pool(10), &util(&[90.0; 3], 10), NOW).desired_gpus,
        4
    );
    // Outside its window a schedule does nothing.
    let later = schedule("start = 2023-11-15T00:00:00\nend = 2023-11-16T00:00:00\nfloor = 70");
    let d = decide(&later, &pool(10), &util(&[50.0], 10), NOW);
    assert_eq!(d.desired_gpus, 10);
    assert_eq!(d.rules[1].status, RuleStatus::ScheduleInactive);
}

#[test]
fn cron_schedules_follow_their_time_zone() {
    // 22:13 UTC is 06:13 in Shanghai: a 06:00 cron for an hour is in force.
    let cron = |tz: &str| {
        with_limits(&format!(
            "[[schedule]]\nname = \"morning\"\ncron = \"0 6 * * *\"\nduration_minutes = 60\ntime_zone = \"{tz}\"\nfloor = 30\n"
        ))
    };
    let d = decide(&cron("Asia/Shanghai"), &pool(10), &util(&[50.0], 10), NOW);
    assert_eq!(d.desired_gpus, 30);
    let d = decide(&cron("UTC"), &pool(10), &util(&[50.0], 10), NOW);
    assert_eq!(d.desired_gpus, 10);
}

#[test]
fn a_cron_schedule_asked_at_any_instant_in_any_order_answers_as_a_fresh_one() {
    // The schedule remembers the occurrence it last found; asked out of order, across
    // occurrences, weekends and the occurrence's edges, it answers as one asked once.
    let text = "[[schedule]]\nname = \"batch\"\ncron = \"55 8 * * 1-5\"\nduration_minutes = 80\ntime_zone = \"Asia/Shanghai\"\nfloor = 30\n";
    let shared = with_limits(text);
    let mut rng = ebb_rules::replay::families::SplitMix64::new(44);
    let mut instants: Vec<i64> = (0..400)
        .map(|_| NOW + i64::from(rng.pick(0, 14 * 1_440)) * MIN)
        .collect();
    // Each occurrence's first and last minutes, and the minute after it, in a row.
    for day in 0..14 {
        let start =
            NOW - NOW.rem_euclid(86_400_000) + day * 86_400_000 + (55 + 60 * 8 - 8 * 60) * MIN;
        instants.extend([start - MIN, start, start + 79 * MIN, start + 80 * MIN]);
    }
    let mut on = 0;
    for at in instants {
        let fresh = with_limits(text);
        let want = decide(&fresh, &pool(10), &util(&[50.0], 10), at).desired_gpus;
        let got = decide(&shared, &pool(10), &util(&[50.0], 10), at).desired_gpus;
        assert_eq!(got, want, "at {at}");
        on += usize::from(want == 30);
    }
    // Both answers occur: the instants were in force and out of it.
    assert!(on > 20, "{on}");
}

#[test]
fn min_and_max_clamp_and_beat_schedules() {
    let set = rules(&format!(
        "[limits]\nmin_gpus = 5\nmax_gpus = 20\n[scale_in]\nforce = true\n{HOT}{COLD}\n[[schedule]]\nname = \"big\"\nstart = 2023-11-14T22:00:00\nend = 2023-11-14T23:00:00\ntime_zone = \"UTC\"\nfloor = 50\n"
    ));
    let d = decide(&set, &pool(18), &util(&[50.0], 18), NOW);
    assert_eq!(d.desired_gpus, 20);
    assert_eq!(kinds(&d), ["schedule", "max"]);
    let set = rules(&format!(
        "[limits]\nmin_gpus = 5\nmax_gpus = 20\n[scale_in]\nforce = true\n{COLD}"
    ));
    let d = decide(&set, &pool(6), &util(&[10.0; 10], 6), NOW);
    assert_eq!(d.desired_gpus, 5);
    assert_eq!(kinds(&d), ["min"]);
}

#[test]
fn the_step_cap_is_the_larger_of_its_count_and_share() {
    let set = rules(&format!(
        "[limits]\nmax_gpus = 1000\nstep = {{ out_gpus = 4, out_pct = 100, in_gpus = 2 }}\n[scale_in]\nforce = true\n{TRACK_UTIL}"
    ));
    // 10 at 100% wants 17: capped at max(×2, +4) = 20, so not capped.
    assert_eq!(
        decide(&set, &pool(10), &util(&[100.0], 10), NOW).desired_gpus,
        17
    );
    // 2 at 100% of a heavier load: busy 20 → wants 34; cap max(2, 4) = +4.
    let mut windows = busy(&[20.0], 2);
    windows.gpu_util = window(&[1000.0]);
    let d = decide(&set, &pool(2), &windows, NOW);
    assert_eq!(d.desired_gpus, 6);
    assert_eq!(kinds(&d), ["step_cap"]);
    // In: at most 2.
    let d = decide(&set, &pool(10), &util(&[6.0], 10), NOW);
    assert_eq!(d.desired_gpus, 8);
}

#[test]
fn the_budget_beats_everything() {
    // ¥12.50/h per GPU: ¥100/h pays for 8.
    let set = rules(&format!(
        "[limits]\nmin_gpus = 10\nmax_gpus = 100\nbudget_per_hour = 100\n[scale_in]\nforce = true\n{HOT}"
    ));
    let pricing = hourly();
    let state = PoolState {
        pricing: Some(&pricing),
        node_gpus: 1,
        ..pool(6)
    };
    let d = decide(&set, &state, &util(&[90.0; 3], 6), NOW);
    assert_eq!(d.desired_gpus, 8);
    assert_eq!(kinds(&d), ["min", "budget"]);
    assert!(
        d.clamps[1].to_string().contains("¥100.00/hour"),
        "{}",
        d.clamps[1]
    );
    // Without a price, a budget allows no growth.
    let d = decide(&set, &pool(6), &util(&[90.0; 3], 6), NOW);
    assert_eq!(d.desired_gpus, 6);
    // Per month: ¥50,000 a month is 5,480 GPU-hours… at 730 h, 5 GPUs.
    let set = rules(&format!(
        "[limits]\nmax_gpus = 100\nbudget_per_month = 50000\n[scale_in]\nforce = true\n{TRACK_UTIL}"
    ));
    let state = PoolState {
        pricing: Some(&pricing),
        node_gpus: 1,
        ..pool(4)
    };
    let d = decide(&set, &state, &util(&[100.0], 4), NOW);
    assert_eq!(d.desired_gpus, 5);
}

#[test]
fn the_cost_delta_is_the_run_rate_change() {
    let set = with_limits(HOT);
    let pricing = hourly();
    let state = PoolState {
        pricing: Some(&pricing),
        node_gpus: 1,
        ..pool(10)
    };
    let d = decide(&set, &state, &util(&[90.0; 3], 10), NOW);
    assert_eq!(d.desired_gpus, 12);
    assert_eq!(d.cost_delta_per_hour_fen, Some(2 * 12_50));
    let d = decide(&set, &state, &util(&[50.0; 3], 10), NOW);
    assert_eq!(d.cost_delta_per_hour_fen, Some(0));
    assert_eq!(
        decide(&set, &pool(10), &util(&[90.0; 3], 10), NOW).cost_delta_per_hour_fen,
        None
    );
}

#[test]
fn a_paid_hour_is_held_until_near_its_end() {
    let set = rules(&format!(
        "[limits]\nmax_gpus = 100\n[scale_in]\nrelease_window_minutes = 5\n{COLD}"
    ));
    let cold = util(&[10.0; 10], 10);
    // Ten GPUs, all rented 30 min ago: 30 min paid is left on each, so none goes yet.
    let since = vec![NOW - 30 * MIN; 10];
    let state = PoolState {
        held_since_ms: &since,
        ..pool(10)
    };
    let d = decide(&set, &state, &cold, NOW);
    assert_eq!(d.recommended_gpus, 7);
    assert_eq!(d.desired_gpus, 10, "30 min paid is left");
    assert_eq!(kinds(&d), ["paid_unit_hold"]);
    assert!(matches!(
        d.clamps[0],
        Clamp::PaidUnitHold { next_release_ms, .. } if next_release_ms == NOW + 25 * MIN
    ));
    // 8 rented 2 h 57 min ago (3 min left), the 2 newest 30 min ago: 8 hours are ending,
    // so 3 of those GPUs go (the console gives back those whose unit ends first); the 2
    // newest stay, 30 minutes paid.
    let mut since = vec![NOW - 177 * MIN; 8];
    since.extend([NOW - 30 * MIN; 2]);
    let state = PoolState {
        held_since_ms: &since,
        ..pool(10)
    };
    let d = decide(&set, &state, &cold, NOW);
    assert_eq!(d.desired_gpus, 7, "{d:?}");
    assert!(kinds(&d).is_empty(), "{d:?}");
    // All near the end of their hour: released.
    let since = vec![NOW - 57 * MIN; 10];
    let state = PoolState {
        held_since_ms: &since,
        ..pool(10)
    };
    assert_eq!(decide(&set, &state, &cold, NOW).desired_gpus, 7);
    // Issue 44: the oldest at the end of its (first) hour, the 9 newer 20 minutes in: the
    // oldest goes, not the newest (which have 40 minutes paid left), and the hold says
    // when the next may (in 35 minutes, the window before their hour ends).
    let mut since = vec![NOW - 57 * MIN];
    since.extend([NOW - 20 * MIN; 9]);
    let state = PoolState {
        held_since_ms: &since,
        ..pool(10)
    };
    let d = decide(&set, &state, &cold, NOW);
    assert_eq!(d.desired_gpus, 9, "{d:?}");
    assert!(matches!(
        d.clamps[..],
        [Clamp::PaidUnitHold { from_gpus: 7, to_gpus: 9, next_release_ms }]
            if next_release_ms == NOW + 35 * MIN
    ));
    // The newest one at its end, the next not: one goes.
    let mut since = vec![NOW - 20 * MIN; 9];
    since.push(NOW - 60 * MIN);
    let state = PoolState {
        held_since_ms: &since,
        ..pool(10)
    };
    assert_eq!(decide(&set, &state, &cold, NOW).desired_gpus, 9);
    // By the day, 57 minutes in is far from the end.
    let mut pricing = hourly();
    pricing.plan.overlay = OverlayMode::Day;
    let since = vec![NOW - 57 * MIN; 10];
    let state = PoolState {
        held_since_ms: &since,
        pricing: Some(&pricing),
        node_gpus: 1,
        ..pool(10)
    };
    assert_eq!(decide(&set, &state, &cold, NOW).desired_gpus, 10);
}

#[test]
fn the_paid_unit_hold_never_keeps_the_pool_above_a_bound() {
    let set = rules(
        "[limits]\nmax_gpus = 100\n[[schedule]]\nname = \"night\"\nstart = 2023-11-14T22:00:00\nend = 2023-11-14T23:00:00\ntime_zone = \"UTC\"\nceiling = 4\n",
    );
    let since = vec![NOW - 30 * MIN; 10];
    let state = PoolState {
        held_since_ms: &since,
        ..pool(10)
    };
    assert_eq!(
        decide(&set, &state, &util(&[10.0], 10), NOW).desired_gpus,
        4
    );
}

#[test]
fn the_deadband_releases_only_a_lasting_surplus() {
    let set = rules(
        "[limits]\nmax_gpus = 100\n[scale_in]\nforce = true\ndeadband_gpus = 2\ndeadband_minutes = 10\n[[target]]\nname = \"demand\"\nmetric = \"busy_gpus\"\ntarget = 100\ntolerance = 0\nscale_in_stabilization_minutes = 0\n",
    );
    // Demand 9 four minutes ago: 1 surplus over the window, fewer than 2: hold.
    let mut values = vec![5.0; 10];
    values[6] = 9.0;
    let d = decide(&set, &pool(10), &busy(&values, 10), NOW);
    assert_eq!(d.desired_gpus, 10);
    assert_eq!(kinds(&d), ["deadband"]);
    // Demand 7 at most: 3 surplus, all released (not the 5 the last minute alone says).
    values[6] = 7.0;
    let d = decide(&set, &pool(10), &busy(&values, 10), NOW);
    assert_eq!(d.desired_gpus, 7);
    assert_eq!(kinds(&d), ["deadband"]);
    // A steady 5: 5 go.
    let d = decide(&set, &pool(10), &busy(&[5.0; 10], 10), NOW);
    assert_eq!(d.desired_gpus, 5);
    assert!(d.clamps.is_empty());
}

#[test]
fn scale_out_beats_scale_in_and_the_largest_scale_out_wins() {
    let set = with_limits(&format!(
        "{HOT}{COLD}\n[[threshold]]\nname = \"mem\"\nmetric = \"mem_util\"\nop = \">\"\nvalue = 50\naction = \"+5\"\n[[threshold]]\nname = \"shrink\"\nmetric = \"busy_gpus\"\nop = \"<\"\nvalue = 100\naction = \"-1\"\n"
    ));
    let mut windows = util(&[90.0; 10], 10);
    windows.mem_util = window(&[60.0]);
    let d = decide(&set, &pool(10), &windows, NOW);
    assert_eq!(d.recommended_gpus, 15);
    assert_eq!(d.desired_gpus, 15);
    assert_eq!(
        d.reason,
        DecisionReason::Rule {
            rule: "mem".into(),
            from_gpus: 10,
            to_gpus: 15
        }
    );
}

#[test]
fn the_decision_crosses_as_json() {
    let set = with_limits(HOT);
    let d = decide(&set, &pool(10), &util(&[90.0; 3], 10), NOW);
    let json = serde_json::to_value(&d).unwrap();
    assert_eq!(json["desired_gpus"], 12);
    assert_eq!(json["reason"]["kind"], "rule");
    assert_eq!(json["rules"][0]["status"]["kind"], "fired");
    let back: Decision = serde_json::from_value(json).unwrap();
    assert_eq!(back, d);
}

// ---------------------------------------------------------------------------------------
// Properties

#[derive(Debug, Clone)]
struct Case {
    min: u32,
    max: u32,
    current: u32,
    out_step: Option<u32>,
    in_step: Option<u32>,
    hot: f64,
    cold: f64,
    out_pct: u32,
    in_pct: u32,
    target: Option<f64>,
    samples: Vec<f64>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        0u32..20,
        1u32..60,
        any::<u32>(),
        prop::option::of(1u32..10),
        prop::option::of(1u32..10),
        50.0f64..100.0,
        0.0f64..50.0,
        1u32..200,
        1u32..100,
        prop::option::of(10.0f64..100.0),
        prop::collection::vec(0.0f64..100.0, 1..15),
    )
        .prop_map(
            |(min, span, pick, out_step, in_step, hot, cold, out_pct, in_pct, target, samples)| {
                let max = min + span;
                Case {
                    min,
                    max,
                    current: min + pick % (span + 1),
                    out_step,
                    in_step,
                    hot,
                    cold,
                    out_pct,
                    in_pct,
                    target,
                    samples,
                }
            },
        )
}

/// Built as data (parsing TOML 10,000 times would be most of the test's time).
fn case_rules(case: &Case, budget_per_hour_fen: Option<i64>, force: bool) -> RuleSet {
    let threshold = |name: &str, comparison, value, for_minutes, action| ThresholdRule {
        name: name.into(),
        metric: MetricRef::GpuUtil,
        comparison,
        threshold: value,
        for_minutes,
        action,
        cooldown_minutes: 5,
    };
    let spec = spec::RuleSet {
        pool: None,
        limits: Limits {
            min_gpus: case.min,
            max_gpus: case.max,
            step: StepCap {
                out_gpus: case.out_step,
                in_gpus: case.in_step,
                ..StepCap::default()
            },
            budget: Budget {
                per_hour_fen: budget_per_hour_fen,
                per_month_fen: None,
            },
        },
        scale_in: ScaleIn {
            force,
            ..ScaleIn::default()
        },
        metrics: Vec::new(),
        thresholds: vec![
            threshold(
                "hot",
                Comparison::AtLeast,
                case.hot,
                2,
                Action::AddPct {
                    pct: f64::from(case.out_pct),
                },
            ),
            threshold(
                "cold",
                Comparison::AtMost,
                case.cold,
                3,
                Action::RemovePct {
                    pct: f64::from(case.in_pct),
                },
            ),
        ],
        targets: case
            .target
            .map(|target| track(MetricRef::BusyGpus, target, 0.1))
            .into_iter()
            .collect(),
        schedules: Vec::new(),
    };
    RuleSet::from_spec(spec).unwrap()
}

fn track(metric: MetricRef, target: f64, tolerance: f64) -> TargetRule {
    TargetRule {
        name: "track".into(),
        metric,
        target,
        tolerance,
        scale_in_stabilization_minutes: 5,
        scale_out_sustain_minutes: 0,
        overload_gpus: None,
    }
}

fn config() -> ProptestConfig {
    ProptestConfig::with_cases(10_000)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn desired_stays_within_min_and_max(case in case()) {
        let set = case_rules(&case, None, true);
        let d = decide(&set, &pool(case.current), &util(&case.samples, case.current), NOW);
        prop_assert!(case.min <= d.desired_gpus && d.desired_gpus <= case.max, "{d:?}");
    }

    #[test]
    fn the_budget_is_never_exceeded(case in case(), budget_yuan in 1u32..800, over in 0u32..40) {
        // The pool may even start above what the budget pays for.
        let set = case_rules(&case, Some(i64::from(budget_yuan) * 100), false);
        let pricing = hourly();
        let current = case.current + over;
        let since = vec![NOW - 10 * MIN; current as usize];
        let state = PoolState {
            held_since_ms: &since,
            pricing: Some(&pricing),
            node_gpus: 1,
            ..pool(current)
        };
        let d = decide(&set, &state, &util(&case.samples, current), NOW);
        let rate = pricing.run_rate(d.desired_gpus).unwrap();
        prop_assert!(rate.total.per_hour.fen() <= i64::from(budget_yuan) * 100, "{d:?}");
    }

    #[test]
    fn the_step_cap_is_held(case in case()) {
        let set = case_rules(&case, None, true);
        let d = decide(&set, &pool(case.current), &util(&case.samples, case.current), NOW);
        if d.desired_gpus > case.current && let Some(step) = case.out_step {
            prop_assert!(d.desired_gpus - case.current <= step, "{d:?}");
        }
        if d.desired_gpus < case.current && let Some(step) = case.in_step {
            prop_assert!(case.current - d.desired_gpus <= step, "{d:?}");
        }
    }

    #[test]
    fn no_action_inside_a_cooldown(case in case(), ago in 0i64..5) {
        let case = Case { target: None, ..case };
        let set = case_rules(&case, None, true);
        let state = PoolState {
            last_scale_out_ms: Some(NOW - ago * MIN),
            last_scale_in_ms: Some(NOW - ago * MIN),
            ..pool(case.current)
        };
        let d = decide(&set, &state, &util(&case.samples, case.current), NOW);
        prop_assert_eq!(d.desired_gpus, case.current, "{:?}", d);
    }

    #[test]
    fn noise_within_tolerance_does_nothing(
        target in 10.0f64..95.0,
        tolerance in 0.01f64..0.5,
        current in 1u32..200,
        noise in prop::collection::vec(-0.99f64..0.99, 1..15),
    ) {
        let set = RuleSet::from_spec(spec::RuleSet {
            limits: Limits { max_gpus: 1000, ..Limits::default() },
            targets: vec![track(MetricRef::GpuUtil, target, tolerance)],
            ..spec::RuleSet::default()
        })
        .unwrap();
        let samples: Vec<f64> = noise.iter().map(|n| target * (1.0 + n * tolerance)).collect();
        let d = decide(&set, &pool(current), &util(&samples, current), NOW);
        prop_assert_eq!(d.desired_gpus, current, "{:?}", d);
    }
}

// ---------------------------------------------------------------------------------------
// The disruption budget and quiet windows

/// Sizes the pool to demand at once (no stabilization, no tolerance, releases at once),
/// with `scale_in` keys added.
fn to_demand(scale_in: &str) -> RuleSet {
    rules(&format!(
        "[limits]\nmax_gpus = 100\n[scale_in]\nforce = true\n{scale_in}\n[[target]]\nname = \"demand\"\nmetric = \"busy_gpus\"\ntarget = 100\ntolerance = 0\nscale_in_stabilization_minutes = 0\n"
    ))
}

/// Demand of `busy` GPUs on the latest count, and the count held at each of the minutes
/// ending at `NOW`.
fn held(counts: &[f64], busy_gpus: f64) -> MetricWindows {
    let ready = counts.last().map_or(10, |count| *count as u32);
    MetricWindows {
        desired_gpus: window(counts),
        ..busy(&vec![busy_gpus; counts.len().max(1)], ready)
    }
}

#[test]
fn the_disruption_budget_caps_releases_by_count() {
    let set = to_demand("budget_gpus = 2\nbudget_window_minutes = 10");
    let d = decide(&set, &pool(10), &held(&[10.0; 10], 3.0), NOW);
    assert_eq!(d.desired_gpus, 8);
    assert_eq!(
        d.clamps,
        [Clamp::DisruptionBudget {
            from_gpus: 3,
            to_gpus: 8,
            allowance_gpus: 2,
            highest_gpus: 10,
            window_minutes: 10
        }]
    );
    // One released already in the window: one more may go.
    let mut counts = vec![10.0; 4];
    counts.extend([9.0; 6]);
    let d = decide(&set, &pool(9), &held(&counts, 3.0), NOW);
    assert_eq!(d.desired_gpus, 8);
    // The 10 held 10 minutes ago is out of the window: 9 − 2.
    let mut counts = vec![10.0];
    counts.extend([9.0; 10]);
    let d = decide(&set, &pool(9), &held(&counts, 3.0), NOW);
    assert_eq!(d.desired_gpus, 7);
    // Released by someone else in the window (the slider, 10 → 7): nothing more goes.
    let mut counts = vec![10.0; 5];
    counts.extend([7.0; 5]);
    let d = decide(&set, &pool(7), &held(&counts, 3.0), NOW);
    assert_eq!(d.desired_gpus, 7);
    assert_eq!(kinds(&d), ["disruption_budget"]);
    assert!(
        matches!(d.reason, DecisionReason::Held { .. }),
        "{:?}",
        d.reason
    );
    // With no history, the current count is the highest.
    let d = decide(&set, &pool(10), &busy(&[3.0], 10), NOW);
    assert_eq!(d.desired_gpus, 8);
    // A scale-out is not held.
    let d = decide(&set, &pool(10), &held(&[10.0; 10], 14.0), NOW);
    assert_eq!(d.desired_gpus, 14);
    assert!(d.clamps.is_empty());
}

#[test]
fn the_disruption_budget_caps_releases_by_percent_rounded_down_but_at_least_one() {
    let set = to_demand("budget_pct = 25\nbudget_window_minutes = 10");
    // 25% of 10 is 2.5: 2.
    let d = decide(&set, &pool(10), &held(&[10.0; 10], 0.0), NOW);
    assert_eq!(d.desired_gpus, 8);
    // 25% of 3 is 0.75: still 1.
    let d = decide(&set, &pool(3), &held(&[3.0; 10], 0.0), NOW);
    assert_eq!(d.desired_gpus, 2);
    // Of the highest in the window, not of the current count: 25% of 20 is 5.
    let mut counts = vec![20.0; 3];
    counts.extend([16.0; 7]);
    let d = decide(&set, &pool(16), &held(&counts, 0.0), NOW);
    assert_eq!(d.desired_gpus, 15);
    assert_eq!(
        d.clamps,
        [Clamp::DisruptionBudget {
            from_gpus: 0,
            to_gpus: 15,
            allowance_gpus: 5,
            highest_gpus: 20,
            window_minutes: 10
        }]
    );
}

#[test]
fn with_a_count_and_a_percent_the_smaller_allowance_holds() {
    let set = to_demand("budget_gpus = 3\nbudget_pct = 50\nbudget_window_minutes = 5");
    let d = decide(&set, &pool(10), &held(&[10.0; 5], 0.0), NOW);
    assert_eq!(d.desired_gpus, 7, "3 GPUs, not 50%");
    let set = to_demand("budget_gpus = 3\nbudget_pct = 10\nbudget_window_minutes = 5");
    let d = decide(&set, &pool(10), &held(&[10.0; 5], 0.0), NOW);
    assert_eq!(d.desired_gpus, 9, "10%, not 3 GPUs");
}

#[test]
fn the_disruption_budget_never_keeps_the_pool_above_a_bound() {
    let set = rules(
        "[limits]\nmax_gpus = 4\n[scale_in]\nforce = true\nbudget_gpus = 1\nbudget_window_minutes = 10\n",
    );
    let d = decide(&set, &pool(10), &held(&[10.0; 10], 9.0), NOW);
    assert_eq!(d.desired_gpus, 4);
    assert_eq!(kinds(&d), ["max"]);
}

const ALWAYS_QUIET: &str =
    "[[scale_in.quiet]]\ncron = \"0 0 * * *\"\nduration_minutes = 1440\ntime_zone = \"UTC\"\n";

/// Set to 1 when utilization is at most 50%, with `scale_in` keys added.
fn to_one(scale_in: &str) -> RuleSet {
    rules(&format!(
        "[limits]\nmax_gpus = 100\n[scale_in]\nforce = true\n{scale_in}\n[[threshold]]\nname = \"shrink\"\nmetric = \"gpu_util\"\nop = \"<=\"\nvalue = 50\naction = \"set 1\"\n"
    ))
}

#[test]
fn a_quiet_window_keeps_the_busy_gpus_and_lets_the_idle_go() {
    let set = to_one(ALWAYS_QUIET);
    // 10 held, 3.2 busy: 4 stay, 6 go (not 9).
    let d = decide(&set, &pool(10), &busy(&[3.2], 10), NOW);
    assert_eq!(d.desired_gpus, 4);
    let midnight = NOW - NOW.rem_euclid(1_440 * MIN);
    assert_eq!(
        d.clamps,
        [Clamp::QuietWindow {
            from_gpus: 1,
            to_gpus: 4,
            busy_gpus: 4,
            until_ms: midnight + 1_440 * MIN
        }]
    );
    // Only the latest minute's busy GPUs count.
    let d = decide(&set, &pool(10), &busy(&[9.0, 2.0], 10), NOW);
    assert_eq!(d.desired_gpus, 2);
    // No reading of busy GPUs: none is known idle, none goes.
    let windows = MetricWindows {
        gpu_util: window(&[10.0]),
        ..MetricWindows::default()
    };
    let d = decide(&set, &pool(10), &windows, NOW);
    assert_eq!(d.desired_gpus, 10);
    assert_eq!(kinds(&d), ["quiet_window"]);
}

#[test]
fn a_quiet_window_holds_only_while_it_is_on() {
    // NOW is 22:13 UTC: on from 22:00 for an hour, until 23:00.
    let on = to_one(
        "[[scale_in.quiet]]\ncron = \"0 22 * * *\"\nduration_minutes = 60\ntime_zone = \"UTC\"\n",
    );
    let d = decide(&on, &pool(10), &busy(&[3.0], 10), NOW);
    assert_eq!(d.desired_gpus, 3);
    assert!(
        matches!(d.clamps[..], [Clamp::QuietWindow { until_ms, .. }] if until_ms == NOW + 47 * MIN),
        "{:?}",
        d.clamps
    );
    // From 22:00 for 13 minutes: over at 22:13.
    let over = to_one(
        "[[scale_in.quiet]]\ncron = \"0 22 * * *\"\nduration_minutes = 13\ntime_zone = \"UTC\"\n",
    );
    let d = decide(&over, &pool(10), &busy(&[3.0], 10), NOW);
    assert_eq!(d.desired_gpus, 1);
    assert!(d.clamps.is_empty());
    // 22:13 UTC is 06:13 in Shanghai: a window from 06:00 there is on.
    let shanghai = to_one(
        "[[scale_in.quiet]]\ncron = \"0 6 * * *\"\nduration_minutes = 30\ntime_zone = \"Asia/Shanghai\"\n",
    );
    assert_eq!(
        decide(&shanghai, &pool(10), &busy(&[3.0], 10), NOW).desired_gpus,
        3
    );
    assert_eq!(shanghai.quiet_windows().on_until(NOW), Some(NOW + 17 * MIN));
    assert_eq!(shanghai.quiet_windows().on_until(NOW + 17 * MIN), None);
    assert!(!to_one("").quiet_windows().is_on(NOW));
}

#[test]
fn budget_and_quiet_window_together_hold_the_higher_floor() {
    let set = to_one(&format!(
        "budget_gpus = 2\nbudget_window_minutes = 10\n{ALWAYS_QUIET}"
    ));
    // Budget: 8; quiet: 3. The budget binds.
    let d = decide(&set, &pool(10), &held(&[10.0; 10], 3.0), NOW);
    assert_eq!(d.desired_gpus, 8);
    assert_eq!(kinds(&d), ["disruption_budget"]);
    // Budget: 20 − 15 = 5; quiet: 10 busy. Both recorded, the quiet window last.
    let set = to_one(&format!(
        "budget_gpus = 15\nbudget_window_minutes = 10\n{ALWAYS_QUIET}"
    ));
    let d = decide(&set, &pool(20), &held(&[20.0; 10], 9.5), NOW);
    assert_eq!(d.desired_gpus, 10);
    assert_eq!(kinds(&d), ["disruption_budget", "quiet_window"]);
}

proptest! {
    // Each case is a whole run of up to 90 minutes.
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    /// Minute by minute through the rules' own adapter (what a replay and the console
    /// feed): for every minute `t` and every `s` in the window before it, the count at `s`
    /// less the count at `t` is within the allowance of the window's highest count.
    #[test]
    fn the_count_never_drops_more_than_the_budget_within_a_window(
        budget_gpus in prop::option::of(1u32..6),
        budget_pct in prop::option::of(1u32..=100),
        window_minutes in 1u32..30,
        start in 0u32..60,
        drop_at in 0.0f64..60.0,
        demand in prop::collection::vec(0.0f64..60.0, 20..90),
    ) {
        let budget_gpus = budget_gpus.or(budget_pct.is_none().then_some(2));
        let scale_in = ScaleIn {
            force: true,
            budget_gpus,
            budget_pct,
            budget_window_minutes: Some(window_minutes),
            ..ScaleIn::default()
        };
        let set = RuleSet::from_spec(spec::RuleSet {
            limits: Limits { max_gpus: 100, ..Limits::default() },
            scale_in: scale_in.clone(),
            thresholds: vec![ThresholdRule {
                name: "drop".into(),
                metric: MetricRef::GpuUtil,
                comparison: Comparison::AtMost,
                threshold: drop_at,
                for_minutes: 1,
                action: Action::Set { gpus: 0 },
                cooldown_minutes: 0,
            }],
            targets: vec![TargetRule {
                scale_in_stabilization_minutes: 0,
                ..track(MetricRef::BusyGpus, 100.0, 0.0)
            }],
            ..spec::RuleSet::default()
        })
        .unwrap();
        let mut policy = RulesPolicy::new("rules", set, None);
        let mut counts = vec![start];
        for (minute, busy_gpus) in demand.iter().enumerate() {
            let held = *counts.last().unwrap();
            let since = vec![0; held as usize];
            let view = MinuteView {
                minute: minute as u32,
                now_ms: NOW + minute as i64 * MIN,
                ready: held,
                held,
                warming: 0,
                busy_gpus: *busy_gpus,
                util_pct: ebb_rules::replay::sim::utilization_pct(*busy_gpus, held),
                mem_pct: None,
                custom: &[],
                held_since: &since,
            };
            counts.push(policy.desired(&view));
        }
        let w = window_minutes as usize;
        for t in 1..counts.len() {
            let from = t.saturating_sub(w);
            let highest = *counts[from..t].iter().max().unwrap();
            let allowance = release_allowance(&scale_in, highest).unwrap();
            for s in from..t {
                prop_assert!(
                    counts[s].saturating_sub(counts[t]) <= allowance,
                    "minute {s} held {}, minute {t} {} (allowance {allowance}): {counts:?}",
                    counts[s],
                    counts[t]
                );
            }
        }
    }
}

#[test]
fn a_pool_of_two_gpu_nodes_moves_in_whole_nodes_and_prices_each_step_per_node() {
    let set = with_limits(
        "[[metric]]\nname = \"slurm_demand_gpus\"\nstale_after_minutes = 2\n[[target]]\nname = \"size-to-queue\"\nmetric = \"slurm_demand_gpus\"\ntarget = 1\ntolerance = 0\nscale_in_stabilization_minutes = 0\n",
    );
    let pricing = hourly();
    let on_nodes = |gpus: u32| PoolState {
        pricing: Some(&pricing),
        node_gpus: 2,
        ..pool(gpus)
    };
    // (held, demand) → desired: a part of a node asks for all of it, up and down.
    for (held, demand, want) in [
        (2, 3.0, 4),
        (2, 1.0, 2),
        (4, 1.0, 2),
        (4, 3.0, 4),
        (2, 5.0, 6),
    ] {
        let mut windows = util(&[50.0], held);
        windows.custom_mut("slurm_demand_gpus").push(NOW, demand);
        let d = decide(&set, &on_nodes(held), &windows, NOW);
        assert_eq!(d.desired_gpus, want, "held {held}, demand {demand}");
        // Each step's cost is the nodes' it moves: ¥12.50/h a GPU, two a node.
        let nodes = (i64::from(want) - i64::from(held)) / 2;
        assert_eq!(
            d.cost_delta_per_hour_fen,
            Some(nodes * 2 * 12_50),
            "held {held}"
        );
    }
}

#[test]
fn giving_up_gpus_never_held_is_not_priced_as_a_saving() {
    let set = with_limits(
        "[[metric]]\nname = \"users\"\nstale_after_minutes = 2\n[[threshold]]\nname = \"calm\"\nmetric = \"users\"\nop = \"<\"\nvalue = 10\naction = \"set 3\"\n",
    );
    let pricing = hourly();
    let mut windows = util(&[50.0], 3);
    windows.custom_mut("users").push(NOW, 1.0);
    // Asked for 4, 3 held (no fourth GPU free): 4 → 3 releases nothing and saves nothing.
    let short = PoolState {
        held_gpus: 3,
        ready_gpus: 3,
        pricing: Some(&pricing),
        ..pool(4)
    };
    let d = decide(&set, &short, &windows, NOW);
    assert_eq!(d.desired_gpus, 3);
    assert_eq!(d.cost_delta_per_hour_fen, Some(0));
    // All 4 held: the one released saves its hour's price.
    let full = PoolState {
        pricing: Some(&pricing),
        ..pool(4)
    };
    let d = decide(&set, &full, &windows, NOW);
    assert_eq!(d.cost_delta_per_hour_fen, Some(-12_50));
}
