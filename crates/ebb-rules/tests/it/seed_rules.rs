//! The seed article's rules (BRIEF.md, issue 16 Deliver 6) as decisions: the 80/30 rule,
//! FAQ 3's "≥ 85% → +20%, ≤ 25% → −30%", the streaming app's "users > 100k → 20 GPUs,
//! < 50k → 5" and the festival's "latency > 50 ms → +10".

use super::decide::{MIN, NOW, busy, pool, rules, util};
use ebb_rules::decide::{MetricWindows, PoolState, decide};
use ebb_rules::policy::{MinuteView, Policy};
use ebb_rules::rules_policy::{BASELINES, RulesPolicy, baseline};
use ebb_wire::rules::{DecisionReason, RuleStatus};

#[test]
fn the_80_30_rule() {
    let set = baseline("seed-80-30").unwrap();
    // ≥ 80% for 3 minutes: +20%.
    let d = decide(&set, &pool(10), &util(&[80.0, 85.0, 95.0], 10), NOW);
    assert_eq!(d.desired_gpus, 12);
    // 2 of 3 minutes: not yet, and it says so.
    let d = decide(&set, &pool(10), &util(&[79.9, 85.0, 95.0], 10), NOW);
    assert_eq!(d.desired_gpus, 10);
    assert!(
        d.reason.to_string().contains("for 2 of 3 minutes"),
        "{}",
        d.reason
    );
    // ≤ 30% for 10 minutes: −30%.
    let d = decide(&set, &pool(10), &util(&[30.0; 10], 10), NOW);
    assert_eq!(d.desired_gpus, 7);
    let d = decide(&set, &pool(10), &util(&[30.0; 9], 10), NOW);
    assert_eq!(d.desired_gpus, 10);
    // 5 minutes of cooldown after a scale-out, for both rules.
    let cooling = PoolState {
        last_scale_out_ms: Some(NOW - 4 * MIN),
        ..pool(10)
    };
    assert_eq!(
        decide(&set, &cooling, &util(&[90.0; 3], 10), NOW).desired_gpus,
        10
    );
    assert_eq!(
        decide(&set, &cooling, &util(&[10.0; 10], 10), NOW).desired_gpus,
        10
    );
    let cooled = PoolState {
        last_scale_out_ms: Some(NOW - 5 * MIN),
        ..pool(10)
    };
    assert_eq!(
        decide(&set, &cooled, &util(&[90.0; 3], 10), NOW).desired_gpus,
        12
    );
}

#[test]
fn faq_3_at_85_and_25() {
    let set = rules(
        r#"
[limits]
min_gpus = 1
max_gpus = 100
[scale_in]
force = true
[[threshold]]
name = "out-85"
metric = "gpu_util"
op = ">="
value = 85
action = "+20%"
[[threshold]]
name = "in-25"
metric = "gpu_util"
op = "<="
value = 25
action = "-30%"
"#,
    );
    assert_eq!(
        decide(&set, &pool(20), &util(&[85.0], 20), NOW).desired_gpus,
        24
    );
    assert_eq!(
        decide(&set, &pool(20), &util(&[84.9], 20), NOW).desired_gpus,
        20
    );
    assert_eq!(
        decide(&set, &pool(20), &util(&[25.0], 20), NOW).desired_gpus,
        14
    );
    assert_eq!(
        decide(&set, &pool(20), &util(&[50.0], 20), NOW).reason,
        DecisionReason::Steady
    );
}

const STREAMING: &str = r#"
[limits]
min_gpus = 2
max_gpus = 40
[scale_in]
force = true
[[metric]]
name = "users"
stale_after_minutes = 5
[[threshold]]
name = "users-over-100k"
metric = "users"
op = ">"
value = 100000
action = "set 20"
[[threshold]]
name = "users-under-50k"
metric = "users"
op = "<"
value = 50000
action = "set 5"
"#;

fn users(count: f64) -> MetricWindows {
    let mut windows = util(&[50.0], 10);
    windows.custom_mut("users").push(NOW, count);
    windows
}

#[test]
fn the_streaming_app_at_100k_and_50k_users() {
    let set = rules(STREAMING);
    assert_eq!(
        decide(&set, &pool(5), &users(120_000.0), NOW).desired_gpus,
        20
    );
    assert_eq!(
        decide(&set, &pool(20), &users(40_000.0), NOW).desired_gpus,
        5
    );
    // Between: both quiet, the pool stays where it is.
    assert_eq!(
        decide(&set, &pool(20), &users(80_000.0), NOW).desired_gpus,
        20
    );
    assert_eq!(
        decide(&set, &pool(5), &users(80_000.0), NOW).desired_gpus,
        5
    );
    // Exactly at a threshold: neither `>` nor `<`.
    assert_eq!(
        decide(&set, &pool(9), &users(100_000.0), NOW).desired_gpus,
        9
    );
}

#[test]
fn the_festival_latency_rule() {
    let set = rules(
        r#"
[limits]
min_gpus = 10
max_gpus = 80
[[metric]]
name = "latency_ms"
stale_after_minutes = 2
[[threshold]]
name = "latency-50ms"
metric = "latency_ms"
op = ">"
value = 50
action = "+10"
cooldown_minutes = 10
"#,
    );
    let latency = |ms: f64| {
        let mut windows = busy(&[10.0], 10);
        windows.custom_mut("latency_ms").push(NOW, ms);
        windows
    };
    assert_eq!(
        decide(&set, &pool(10), &latency(62.0), NOW).desired_gpus,
        20
    );
    assert_eq!(
        decide(&set, &pool(75), &latency(62.0), NOW).desired_gpus,
        80
    );
    assert_eq!(
        decide(&set, &pool(10), &latency(50.0), NOW).desired_gpus,
        10
    );
    // Measured 3 minutes ago: stale, so it does nothing.
    let mut old = busy(&[10.0], 10);
    old.custom_mut("latency_ms").push(NOW - 3 * MIN, 90.0);
    let d = decide(&set, &pool(10), &old, NOW);
    assert_eq!(d.desired_gpus, 10);
    assert!(matches!(d.rules[0].status, RuleStatus::Stale { .. }));
}

/// The adapter: the windows and cooldowns kept across minutes, as a replay drives it.
#[test]
fn the_seed_rule_as_a_policy_scales_out_waits_its_cooldown_and_scales_in() {
    let mut policy = RulesPolicy::baseline("seed-80-30", None).unwrap();
    assert_eq!(policy.name(), "seed-80-30");
    let mut held = 10u32;
    let mut history = Vec::new();
    for minute in 0..60u32 {
        // Demand of 9.5 GPUs for 30 minutes, then 2.
        let demand = if minute < 30 { 9.5 } else { 2.0 };
        let util = (100.0 * demand / f64::from(held)).min(100.0);
        let since = vec![0u32; held as usize];
        let view = MinuteView {
            minute,
            now_ms: NOW + i64::from(minute) * MIN,
            ready: held,
            held,
            warming: 0,
            busy_gpus: demand,
            util_pct: util,
            mem_pct: None,
            custom: &[],
            held_since: &since,
        };
        held = policy.desired(&view);
        history.push(held);
    }
    // 95% for 3 minutes → 12 at minute 2; 79% after: no more.
    assert_eq!(history[1], 10);
    assert_eq!(history[2], 12);
    assert_eq!(history[29], 12);
    // 2 GPUs of demand on 12 is 17%: −30% (−3.6, so −4) after 10 minutes (minute 39); the
    // condition still holds, so again when the 5-minute cooldown ends (as an AWS alarm
    // that stays in alarm); at 5 GPUs it is 40%: done.
    assert_eq!(history[38], 12);
    assert_eq!(history[39], 8);
    assert_eq!(history[43], 8);
    assert_eq!(history[44], 5);
    assert_eq!(history[59], 5);
    assert!(policy.last_decision().is_some());
}

#[test]
fn every_baseline_parses_and_is_named() {
    for name in BASELINES {
        assert!(baseline(name).is_some(), "{name}");
        assert_eq!(RulesPolicy::baseline(name, None).unwrap().name(), name);
    }
    assert!(baseline("nope").is_none());
    let hpa = baseline("hpa").unwrap();
    let step = hpa.spec().limits.step;
    assert_eq!((step.out_gpus, step.out_pct), (Some(4), Some(100.0)));
    assert_eq!(hpa.spec().targets[0].target, 60.0);
    assert_eq!(hpa.spec().targets[0].tolerance, 0.1);
    assert_eq!(hpa.spec().targets[0].scale_in_stabilization_minutes, 5);
}
