//! Rules enforced live, on the console's own clock: a custom metric pushed each 10 s of
//! that clock drives a threshold rule out and back; the window, the shadow mode, a stale
//! metric, the linter's refusal and the decision log, each with the real enforcer on a
//! simulated fleet.

use ebb_agent::GpuModel;
use ebb_core::clock::ManualClock;
use ebb_core::console_rules::RulesError;
use ebb_core::enforcer::PassReport;
use ebb_testkit::{TestConsole, TestFleet};
use ebb_wire::pools::Actor;
use ebb_wire::reasons::ChangeReason;
use ebb_wire::rules::{Clamp, DecisionReason, MetricPush, RuleStatus, RulesMode};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// Releases at once (`force`), to see them on virtual time: lint warns that each release
/// and re-rent within the hour pays again, so these tests save with it acknowledged.
const RULES: &str = r#"
pool = "burst"

[limits]
min_gpus = 1
max_gpus = 4

[scale_in]
force = true

[[metric]]
name = "queue_len"
stale_after_minutes = 2

[[threshold]]
name = "queue-high"
metric = "queue_len"
op = ">"
value = 10
for_minutes = 2
action = "+2"
cooldown_minutes = 5

[[threshold]]
name = "queue-low"
metric = "queue_len"
op = "<"
value = 2
for_minutes = 2
action = "-2"
"#;

struct Rig {
    console: TestConsole,
    fleet: TestFleet,
    clock: Arc<ManualClock>,
    reports: watch::Receiver<PassReport>,
}

impl Rig {
    async fn new(tag: &str) -> Rig {
        Rig::new_at(tag, 1_800_000_000_000).await
    }

    /// With the console's clock starting at `start_ms`.
    async fn new_at(tag: &str, start_ms: i64) -> Rig {
        let fleet = TestFleet::builder()
            .hosts(1)
            .gpus_per_host(4)
            .model(GpuModel::A100)
            .start()
            .await;
        let clock = Arc::new(ManualClock::new(start_ms));
        let console = TestConsole::builder(tag)
            .fleet(&fleet)
            .clock(clock.clone())
            .enforcer(Duration::from_millis(30), Duration::from_secs(30))
            .open()
            .await;
        console
            .create_pool(&crate::pool_input(
                "burst",
                "A100",
                vec![fleet.hosts()[0].region.clone()],
                4,
            ))
            .await
            .unwrap();
        console
            .scale_pool("burst", 1, Actor::Operator, ChangeReason::Cli)
            .await
            .unwrap();
        let reports = console.enforcer_reports().expect("this console enforces");
        Rig {
            console,
            fleet,
            clock,
            reports,
        }
    }

    /// Moves the console's clock by `seconds`, pushes `queue_len` (when given) at the new
    /// now, and waits for a whole enforcer pass to have seen it.
    async fn step(&mut self, seconds: u64, queue: Option<f64>) -> PassReport {
        self.clock.advance(Duration::from_secs(seconds));
        if let Some(value) = queue {
            self.console
                .push_metric(&MetricPush {
                    name: "queue_len".into(),
                    value,
                    pool: Some("burst".into()),
                    at: None,
                })
                .await
                .unwrap();
        }
        // The pass in progress may have read the clock before the step: wait for the next.
        let until = self.reports.borrow_and_update().number + 2;
        tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                self.reports.changed().await.unwrap();
                if self.reports.borrow_and_update().number >= until {
                    return;
                }
            }
        })
        .await
        .expect("enforcer passes");
        self.reports.borrow().clone()
    }

    async fn desired(&self) -> u32 {
        self.console.show_pool("burst").await.unwrap().desired
    }

    async fn stop(self) {
        self.console.shutdown().await;
        self.fleet.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pushed_metric_drives_a_threshold_rule_out_after_its_window_and_back() {
    let mut rig = Rig::new("rules-out-and-back").await;
    let saved = rig
        .console
        .save_rules("burst", RULES, None, true)
        .await
        .unwrap();
    assert_eq!((saved.version, saved.mode), (1, RulesMode::Enabled));
    // Past the 5-minute cooldown of the operator's own scale-out to 1.
    rig.step(300, None).await;

    // A queue of 50, pushed every 10 s: nothing before two whole minutes.
    rig.step(10, Some(50.0)).await;
    let mut seconds = 0;
    while seconds < 110 {
        rig.step(10, Some(50.0)).await;
        seconds += 10;
        assert_eq!(rig.desired().await, 1, "{seconds} s after the first push");
    }
    let rules = rig.console.pool_rules("burst").await.unwrap().unwrap();
    let decision = rules.last_decision.expect("a decision is kept");
    assert!(
        matches!(
            &decision.reason,
            DecisionReason::Waiting { rule, status: RuleStatus::Sustaining { minutes_met: 1, minutes_needed: 2, .. } }
                if rule == "queue-high"
        ),
        "{decision:?}"
    );
    // The second minute closes 120 s after the first push: the order goes in that tick.
    rig.step(10, Some(50.0)).await;
    assert_eq!(rig.desired().await, 3, "+2 when the 2-minute window closes");
    let view = rig
        .console
        .wait_converged("burst", 0, Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!(view.actual, 3);

    // The queue drains: back down after two more minutes below 2.
    for _ in 0..11 {
        rig.step(10, Some(0.0)).await;
    }
    assert_eq!(rig.desired().await, 3);
    rig.step(10, Some(0.0)).await;
    assert_eq!(rig.desired().await, 1, "-2 after two minutes below 2");

    // Both decisions are in the log with their reasons, made by the rule; and, once each,
    // what a clamp held (queue-high cooling down, queue-low at the pool's min).
    let log = rig.console.activity(Some("burst"), 50).await.unwrap();
    let held: Vec<String> = log
        .iter()
        .filter(|entry| entry.actor == Actor::Rule && entry.from == entry.to)
        .map(|entry| entry.reason.to_string())
        .collect();
    assert_eq!(held.len(), 2, "{held:#?}");
    assert!(
        held[1].starts_with("queue-high held by queue-high cooling down"),
        "{held:#?}"
    );
    assert!(
        held[0].starts_with("queue-low held by the pool's min"),
        "{held:#?}"
    );
    let decisions: Vec<(u32, u32, String)> = log
        .iter()
        .filter(|entry| entry.actor == Actor::Rule && entry.from != entry.to)
        .map(|entry| (entry.from, entry.to, entry.reason.to_string()))
        .collect();
    assert_eq!(decisions.len(), 2, "{decisions:#?}");
    assert_eq!((decisions[1].0, decisions[1].1), (1, 3));
    assert!(decisions[1].2.contains("queue-high"), "{decisions:#?}");
    assert_eq!((decisions[0].0, decisions[0].1), (3, 1));
    assert!(decisions[0].2.contains("queue-low"), "{decisions:#?}");
    // And the rules' save, with who and what.
    assert!(log.iter().any(|entry| matches!(
        &entry.reason,
        ChangeReason::RulesSaved {
            version: 1,
            mode: RulesMode::Enabled,
            ..
        }
    )));
    // No GPU twice, none above desired.
    let held = rig.fleet.held(&view.id).await;
    let mut uuids: Vec<&String> = held.iter().map(|(_, uuid)| uuid).collect();
    uuids.sort();
    uuids.dedup();
    assert_eq!(uuids.len(), held.len());
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shadow_mode_logs_what_it_would_do_and_changes_nothing() {
    let mut rig = Rig::new("rules-shadow").await;
    rig.console
        .save_rules("burst", RULES, Some(RulesMode::Shadow), true)
        .await
        .unwrap();
    rig.step(300, None).await;
    for _ in 0..14 {
        rig.step(10, Some(50.0)).await;
    }
    assert_eq!(rig.desired().await, 1, "shadow changes nothing");
    let log = rig.console.activity(Some("burst"), 50).await.unwrap();
    let shadow: Vec<_> = log
        .iter()
        .filter(|entry| {
            matches!(
                entry.reason,
                ChangeReason::RuleDecision { shadow: true, .. }
            ) && entry.from != entry.to
        })
        .collect();
    assert_eq!(shadow.len(), 1, "logged once: {shadow:#?}");
    assert_eq!((shadow[0].from, shadow[0].to), (1, 3));
    // Enabled, it acts on what it has seen.
    rig.console
        .set_rules_mode("burst", RulesMode::Enabled)
        .await
        .unwrap();
    rig.step(1, Some(50.0)).await;
    assert_eq!(rig.desired().await, 3);
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_metric_puts_its_rules_idle_and_says_so() {
    let mut rig = Rig::new("rules-stale").await;
    rig.console
        .save_rules("burst", RULES, None, true)
        .await
        .unwrap();
    rig.step(10, Some(50.0)).await;
    // Then nothing for three minutes: past its 2-minute limit.
    for _ in 0..18 {
        rig.step(10, None).await;
    }
    assert_eq!(rig.desired().await, 1);
    let rules = rig.console.pool_rules("burst").await.unwrap().unwrap();
    assert!(rules.metrics[0].stale, "{:?}", rules.metrics);
    let decision = rules.last_decision.unwrap();
    let stale = decision
        .rules
        .iter()
        .all(|outcome| matches!(outcome.status, RuleStatus::Stale { .. }));
    assert!(stale, "{decision:#?}");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_set_the_linter_refuses_changes_nothing_and_warnings_need_acknowledging() {
    let rig = Rig::new("rules-refused").await;
    // Invalid: an action that is not one, named with its line and field.
    let bad = RULES.replace("action = \"+2\"", "action = \"+two\"");
    let error = rig
        .console
        .save_rules("burst", &bad, None, true)
        .await
        .unwrap_err();
    let problem = error.first_problem().expect("a problem named").clone();
    assert_eq!(problem.field, "threshold[0].action");
    assert_eq!(problem.line, Some(21));
    // Past the pool's range: refused, naming the field.
    let wide = RULES.replace("max_gpus = 4", "max_gpus = 9");
    let error = rig
        .console
        .save_rules("burst", &wide, None, true)
        .await
        .unwrap_err();
    assert_eq!(error.first_problem().unwrap().field, "limits.max_gpus");
    // Warnings (a scale-out that lands right in the scale-in band flaps): refused until
    // acknowledged.
    let flapping = r#"
[limits]
min_gpus = 1
max_gpus = 4

[[threshold]]
name = "out"
metric = "gpu_util"
op = ">"
value = 60
for_minutes = 1
action = "+100%"

[[threshold]]
name = "in"
metric = "gpu_util"
op = "<"
value = 40
for_minutes = 1
action = "-1"
"#;
    let error = rig
        .console
        .save_rules("burst", flapping, None, false)
        .await
        .unwrap_err();
    assert!(matches!(error, RulesError::Unacknowledged(_)), "{error}");
    assert!(
        rig.console.pool_rules("burst").await.unwrap().is_none(),
        "nothing saved"
    );
    let log = rig.console.activity(Some("burst"), 50).await.unwrap();
    assert!(
        !log.iter()
            .any(|entry| matches!(entry.reason, ChangeReason::RulesSaved { .. }))
    );
    let saved = rig
        .console
        .save_rules("burst", flapping, None, true)
        .await
        .unwrap();
    assert!(!saved.warnings.is_empty());
    // A second version says what changed.
    rig.console
        .save_rules("burst", RULES, None, true)
        .await
        .unwrap();
    let log = rig.console.activity(Some("burst"), 50).await.unwrap();
    let Some(ChangeReason::RulesSaved {
        version,
        added,
        removed,
        ..
    }) = log.first().map(|entry| entry.reason.clone())
    else {
        panic!("{log:#?}");
    };
    assert_eq!(version, 2);
    assert_eq!(added, ["queue-high", "queue-low"]);
    assert_eq!(removed, ["out", "in"]);
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rules_budget_cap_guards_the_slider_unless_gone_past_on_purpose() {
    let rig = Rig::new("rules-budget").await;
    let capped = RULES.replace("max_gpus = 4\n", "max_gpus = 4\nbudget_per_hour = 1\n");
    rig.console
        .save_rules("burst", &capped, Some(RulesMode::Shadow), true)
        .await
        .unwrap();
    let refused = rig
        .console
        .scale_pool("burst", 3, Actor::Operator, ChangeReason::Slider)
        .await
        .unwrap_err();
    assert!(
        refused.to_string().starts_with("budget: 3 GPUs cost"),
        "{refused}"
    );
    assert_eq!(rig.desired().await, 1, "nothing changed");
    // A scale-in is never refused.
    rig.console
        .scale_pool("burst", 0, Actor::Operator, ChangeReason::Slider)
        .await
        .unwrap();
    let entry = rig
        .console
        .scale(
            "burst",
            ebb_core::console::ScaleChange {
                over_budget: true,
                ..ebb_core::console::ScaleChange::new(3, Actor::Operator, ChangeReason::Slider)
            },
        )
        .await
        .unwrap();
    assert!(
        matches!(
            entry.reason,
            ChangeReason::BudgetOverride { cap_fen: 100, .. }
        ),
        "{entry:?}"
    );
    assert_eq!(rig.desired().await, 3);
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_fires_in_its_time_zone_across_midnight_and_a_dst_change() {
    // 2026-03-08 06:20 UTC = 01:20 in New York, the night its clocks spring forward at 2:00.
    let mut rig = Rig::new_at("rules-dst", 1_772_950_800_000).await;
    let nightly = r#"
[limits]
min_gpus = 1
max_gpus = 4

[[schedule]]
name = "nightly"
cron = "30 1 * * *"
duration_minutes = 60
time_zone = "America/New_York"
floor = 3

[[schedule]]
name = "late"
cron = "30 23 * * *"
duration_minutes = 120
time_zone = "America/New_York"
floor = 2
"#;
    rig.console
        .save_rules("burst", nightly, None, true)
        .await
        .unwrap();
    rig.step(1, None).await;
    assert_eq!(
        rig.desired().await,
        2,
        "01:20 EST: the late floor from 23:30 the night before, across midnight"
    );
    // 01:31 EST (06:31 UTC): the nightly floor.
    rig.step(11 * 60, None).await;
    assert_eq!(rig.desired().await, 3, "01:31 EST");
    // An hour later it is 03:31 EDT (07:31 UTC): over.
    rig.step(60 * 60, None).await;
    let rules = rig.console.pool_rules("burst").await.unwrap().unwrap();
    let decision = rules.last_decision.unwrap();
    assert!(
        decision
            .rules
            .iter()
            .all(|r| matches!(r.status, RuleStatus::ScheduleInactive)),
        "{decision:#?}"
    );
    // 23:31 EDT (03:31 UTC on the 9th): the late floor, through midnight.
    rig.step((20 * 60) * 60, None).await;
    let rules = rig.console.pool_rules("burst").await.unwrap().unwrap();
    let late = &rules.last_decision.unwrap().rules[1];
    assert!(
        matches!(late.status, RuleStatus::ScheduleActive { gpus: 2, .. }),
        "{late:?}"
    );
    // 00:31 EDT: still on.
    rig.step(60 * 60, None).await;
    let rules = rig.console.pool_rules("burst").await.unwrap().unwrap();
    let late = &rules.last_decision.unwrap().rules[1];
    assert!(
        matches!(late.status, RuleStatus::ScheduleActive { .. }),
        "{late:?}"
    );
    // 01:31 EDT on the 9th is 05:31 UTC: the nightly floor an hour earlier in UTC than the
    // day before. 04:59 UTC: not yet.
    rig.step(28 * 60, None).await;
    let rules = rig.console.pool_rules("burst").await.unwrap().unwrap();
    let nightly_status = &rules.last_decision.unwrap().rules[0];
    assert!(
        matches!(nightly_status.status, RuleStatus::ScheduleInactive),
        "{nightly_status:?}"
    );
    rig.step(32 * 60, None).await;
    let rules = rig.console.pool_rules("burst").await.unwrap().unwrap();
    let nightly_status = &rules.last_decision.unwrap().rules[0];
    assert!(
        matches!(
            nightly_status.status,
            RuleStatus::ScheduleActive { gpus: 3, .. }
        ),
        "05:31 UTC is 01:31 EDT: {nightly_status:?}"
    );
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disruption_budget_paces_the_rules_releases_on_the_consoles_clock() {
    let mut rig = Rig::new("rules-disruption-budget").await;
    let rules = RULES.replace(
        "force = true\n",
        "force = true\nbudget_gpus = 1\nbudget_window_minutes = 10\n",
    );
    rig.console
        .save_rules("burst", &rules, None, true)
        .await
        .unwrap();
    rig.step(300, None).await;
    // Out to 3 as in the test above.
    for _ in 0..13 {
        rig.step(10, Some(50.0)).await;
    }
    assert_eq!(rig.desired().await, 3);
    // The queue drains: queue-low asks for −2 after two minutes; the budget gives 1.
    for _ in 0..12 {
        rig.step(10, Some(0.0)).await;
    }
    assert_eq!(rig.desired().await, 2, "one GPU per 10 minutes");
    let decision = rig
        .console
        .pool_rules("burst")
        .await
        .unwrap()
        .unwrap()
        .last_decision
        .expect("a decision is kept");
    assert!(
        decision.clamps.iter().any(|clamp| matches!(
            clamp,
            Clamp::DisruptionBudget {
                allowance_gpus: 1,
                highest_gpus: 3,
                window_minutes: 10,
                ..
            }
        )),
        "{decision:?}"
    );
    // The next goes once the 3 has left the 10-minute window, not before.
    for minute in 1..10 {
        rig.step(60, Some(0.0)).await;
        assert_eq!(
            rig.desired().await,
            2,
            "{minute} min after the first release"
        );
    }
    rig.step(60, Some(0.0)).await;
    assert_eq!(rig.desired().await, 1, "10 min after the first release");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_quota_clamps_a_rule_scale_out_and_the_decision_names_it() {
    let mut rig = Rig::new("rules-team-quota").await;
    rig.console.set_team("research", None).await.unwrap();
    rig.console
        .set_quota("research", "A100", Some(2))
        .await
        .unwrap();
    rig.console
        .set_pool_team("burst", "research")
        .await
        .unwrap();
    rig.console
        .save_rules("burst", RULES, None, true)
        .await
        .unwrap();
    rig.step(300, None).await;
    // queue-high asks for +2 (1 → 3) once its two minutes close; the quota allows 2.
    for _ in 0..13 {
        rig.step(10, Some(50.0)).await;
    }
    assert_eq!(rig.desired().await, 2, "clamped by the team's quota");
    let log = rig.console.activity(Some("burst"), 50).await.unwrap();
    let decision = log
        .iter()
        .find_map(|entry| match &entry.reason {
            ChangeReason::RuleDecision { decision, .. } if entry.from == 1 && entry.to == 2 => {
                Some(decision)
            }
            _ => None,
        })
        .expect("the rule's clamped scale-out is logged");
    assert!(
        decision.clamps.iter().any(|clamp| matches!(
            clamp,
            Clamp::Quota { team, quota_gpus: 2, from_gpus: 3, to_gpus: 2, .. } if team == "research"
        )),
        "{decision:#?}"
    );
    // At the quota, the next ask is held by it (and says so once).
    rig.step(300, None).await;
    for _ in 0..13 {
        rig.step(10, Some(50.0)).await;
    }
    assert_eq!(rig.desired().await, 2);
    let log = rig.console.activity(Some("burst"), 50).await.unwrap();
    assert!(
        log.iter().any(|entry| entry.from == 2
            && entry.to == 2
            && entry
                .reason
                .to_string()
                .contains("team research's quota of 2 A100 GPUs")),
        "{:#?}",
        log.iter().map(|e| e.reason.to_string()).collect::<Vec<_>>()
    );
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_spend_quota_clamps_the_slider_to_what_the_rest_of_the_month_pays_for() {
    let rig = Rig::new("rules-team-spend").await;
    let view = rig
        .console
        .wait_converged("burst", 0, Duration::from_secs(20))
        .await
        .unwrap();
    let to_date = view.spend.as_ref().unwrap().month_to_date_fen;
    let now = ebb_core::clock::Clock::now_ms(rig.clock.as_ref());
    let (_, _, month_end) = ebb_charts::calendar::utc_month(now);
    // ¥12.50 per GPU-hour for the rest of the month: room for 2 GPUs and a half.
    let per_gpu = 1_250 * (month_end - now) / 3_600_000;
    let quota = to_date + 2 * per_gpu + per_gpu / 2;
    rig.console.set_team("ml", Some(quota)).await.unwrap();
    rig.console.set_pool_team("burst", "ml").await.unwrap();
    let entry = rig
        .console
        .scale_pool("burst", 4, Actor::Operator, ChangeReason::Slider)
        .await
        .unwrap();
    assert_eq!((entry.from, entry.to), (1, 2), "{:?}", entry.reason);
    assert!(
        matches!(&entry.reason, ChangeReason::SpendQuotaClamp { team, asked: 4, per_month_fen } if team == "ml" && *per_month_fen == quota),
        "{:?}",
        entry.reason
    );
    // A writer that clamped on an older reading (another of the team's pools took the
    // room since) is refused under the write lock, and nothing changes.
    let store = rig.console.pool_store();
    let pool = store.get("burst").await.unwrap();
    let catalog = rig.console.catalog();
    let status = store.read_status(&pool.id).await.unwrap().map(|(s, _)| s);
    let pricing = ebb_core::rules_live::pricing(&pool, status.as_ref(), &catalog);
    let check = ebb_core::pools::teams::SpendCheck {
        catalog: &catalog,
        pricing: pricing.as_ref(),
    };
    let change = ebb_core::pools::NewActivity {
        actor: Actor::Operator,
        from: 2,
        to: 4,
        reason: ChangeReason::Slider,
        delta_per_hour_fen: None,
        delta_per_month_fen: None,
    };
    let refused = store
        .set_desired("burst", 4, &[], &change, Some(&check))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("team ml's spend quota"),
        "{refused}"
    );
    assert_eq!(store.get("burst").await.unwrap().desired, 2);
    assert!(
        pricing.is_some(),
        "the pool is priced, so the refusal is the quota's"
    );
    rig.stop().await;
}

/// A target rule on the queue, and a threshold that needs a whole minute.
const FIRST_READING_RULES: &str = r#"
pool = "burst"

[limits]
min_gpus = 1
max_gpus = 4

[[metric]]
name = "queue_len"
stale_after_minutes = 2

[[target]]
name = "per-gpu"
metric = "queue_len"
target = 5
scale_in_stabilization_minutes = 5

[[threshold]]
name = "empty"
metric = "queue_len"
op = "<"
value = 1
for_minutes = 1
action = "set 1"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_rule_scales_out_on_its_first_reading_and_nothing_counts_it_as_a_minute() {
    let mut rig = Rig::new("rules-first-reading").await;
    rig.console
        .save_rules("burst", FIRST_READING_RULES, Some(RulesMode::Enabled), true)
        .await
        .unwrap();
    assert_eq!(rig.desired().await, 1);
    // The first push: 20 queued at 5 per GPU asks for 4, seconds later, not a minute.
    rig.step(2, Some(20.0)).await;
    rig.step(2, None).await;
    assert_eq!(rig.desired().await, 4, "scaled out on the first reading");
    // The queue empties 10 s later: within its first minute no rule scales in (a target's
    // scale-in needs whole minutes, the threshold its minute).
    rig.step(10, Some(0.0)).await;
    rig.step(2, None).await;
    assert_eq!(
        rig.desired().await,
        4,
        "nothing scales in on part of a minute"
    );
    rig.stop().await;
}
