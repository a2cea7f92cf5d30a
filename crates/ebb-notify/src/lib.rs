//! Which desktop notifications to show, pure: from the activity entries new since the last
//! look (oldest first), the pools' latest rule decisions, the operator's preferences and
//! what was already said → the notifications, each with a kind, a title and a body in the
//! operator's language, English or Simplified Chinese (the operating system shows them; they
//! name the pool and the numbers). Every sentence is the UI's catalog's (`words`: the
//! `notify.*` keys, and the `reason.rules.*` words the Rules view uses for the decision), so
//! nothing here is written twice or in one language only. The desktop shell reads the
//! entries every few seconds and shows what this returns.
//!
//! Kinds: a rule scaled a pool (a change, not shadow mode); the budget held a scale-out or
//! limited a change (a `budget` clamp in a decision, not shadow mode); a metric a rule
//! watches went stale (a rule status `stale`, in any mode), said once per pool and metric
//! until a decision reads it fresh again; spot: a host's owner takes back a pool's GPUs (a
//! reclaim), and the spot circuit breaker of a model in a region opened (new GPUs there go
//! on demand) or closed. The preferences have no switch for spot yet: it is always said.

pub use ebb_wire::catalog::Words;

use ebb_wire::ipc::UiLanguage;
use ebb_wire::plan::yuan;
use ebb_wire::pools::{ActivityEntry, Actor, NotificationPrefs};
use ebb_wire::reasons::ChangeReason;
use ebb_wire::rules::{Clamp, Decision, DecisionReason, RuleStatus};
use std::collections::BTreeSet;

/// The words the shell draws into its SVG charts (drawn in Rust, so worded here from the
/// same catalog): the fleet heatmap's title and the cost chart's short plan names.
pub fn heatmap_title(language: UiLanguage) -> String {
    Words::of(language).text("chart.heatmap.title", &[])
}

/// A plan's short name on the cost chart's axis, in `language`.
pub fn plan_label(language: UiLanguage, kind: ebb_wire::plan::PlanKind) -> String {
    use ebb_wire::plan::PlanKind;
    let key = match kind {
        PlanKind::AllSubscribed => "chart.plan.all_subscribed",
        PlanKind::AllHourly => "chart.plan.all_hourly",
        PlanKind::AllOnDemandBestUnit => "chart.plan.all_on_demand_best_unit",
        PlanKind::BaseHourly => "chart.plan.base_hourly",
        PlanKind::BaseDaily => "chart.plan.base_daily",
        PlanKind::BaseWeekly => "chart.plan.base_weekly",
        PlanKind::BaseReserved => "chart.plan.base_reserved",
        PlanKind::BaseSpot => "chart.plan.base_spot",
    };
    Words::of(language).text(key, &[])
}

/// What a notification is about (each kind on or off in the preferences).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NotificationKind {
    /// A rule scaled a pool.
    Scaled,
    /// The budget held a scale-out or limited a change.
    Budget,
    /// A metric a rule watches went stale.
    Stale,
    /// Spot: a reclaim, or spot paused or resumed in a region.
    Spot,
}

/// One notification to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    pub kind: NotificationKind,
    pub pool: String,
    pub title: String,
    pub body: String,
}

/// What was already said: the stale metrics (pool, metric) not read fresh since.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Said {
    stale: BTreeSet<(String, String)>,
}

impl Said {
    /// Whether the metric of the pool was said to be stale and has not been fresh since.
    pub fn is_stale(&self, pool: &str, metric: &str) -> bool {
        self.stale.contains(&(pool.to_string(), metric.to_string()))
    }
}

fn wanted(prefs: &NotificationPrefs, kind: NotificationKind) -> bool {
    match kind {
        NotificationKind::Scaled => prefs.scaled,
        NotificationKind::Budget => prefs.budget,
        NotificationKind::Stale => prefs.stale,
        NotificationKind::Spot => prefs.spot,
    }
}

/// The notifications for `entries` (the activity entries since the last look, oldest
/// first) and `latest` (each pool's latest decision, `(pool, decision)`, which says when a
/// metric is stale while no rule changes anything), under `prefs`, worded in `language`;
/// `said` is updated.
pub fn select(
    entries: &[ActivityEntry],
    latest: &[(String, Decision)],
    prefs: &NotificationPrefs,
    language: UiLanguage,
    said: &mut Said,
) -> Vec<Notification> {
    let words = Words::of(language);
    let mut out = Vec::new();
    let mut read: Vec<(&str, &Decision)> = Vec::new();
    for entry in entries {
        if let Some(note) = spot(entry, words)
            && wanted(prefs, note.kind)
        {
            out.push(note);
            continue;
        }
        let ChangeReason::RuleDecision { decision, shadow } = &entry.reason else {
            continue;
        };
        if entry.actor != Actor::Rule {
            continue;
        }
        read.push((&entry.pool, decision));
        if *shadow {
            continue;
        }
        let budget = decision
            .clamps
            .iter()
            .chain(match &decision.reason {
                DecisionReason::Held { clamp, .. } | DecisionReason::Bound { clamp } => Some(clamp),
                _ => None,
            })
            .find(|clamp| matches!(clamp, Clamp::Budget { .. }));
        let changed = entry.from != entry.to;
        // One notification an entry: the budget's when it had a say, else the scale's.
        if let Some(clamp) = budget
            && prefs.budget
        {
            out.push(budget_held(entry, decision, clamp, words));
        } else if changed && prefs.scaled {
            out.push(scaled(entry, decision, words));
        }
    }
    read.extend(
        latest
            .iter()
            .map(|(pool, decision)| (pool.as_str(), decision)),
    );
    for (pool, decision) in read {
        stale(pool, decision, prefs, words, said, &mut out);
    }
    out
}

/// The title and body of the one notification that stands for `more` not shown.
pub fn more_not_shown(more: usize, language: UiLanguage) -> (String, String) {
    let words = Words::of(language);
    (
        words.text("notify.more.title", &[("more", &more)]),
        words.text("notify.more.body", &[]),
    )
}

/// "1 GPU", "4 GPUs", in the language of `words`.
fn count(gpus: u32, words: Words) -> String {
    if gpus == 1 {
        words.text("notify.gpus.one", &[])
    } else {
        words.text("notify.gpus.other", &[("gpus", &gpus)])
    }
}

/// What a change does to the cost per hour, signed, or nothing without a price or a change.
fn per_hour(fen: Option<i64>, words: Words) -> String {
    let signed = match fen {
        Some(fen) if fen > 0 => format!("+{}", yuan(fen)),
        Some(fen) if fen < 0 => yuan(fen),
        _ => return String::new(),
    };
    words.text("notify.perHour", &[("money", &signed)])
}

/// The rule that moved the pool and what it read, in words.
fn because(decision: &Decision, words: Words) -> String {
    match &decision.reason {
        DecisionReason::Rule { rule, .. } | DecisionReason::Held { rule, .. } => {
            match decision.rules.iter().find(|outcome| &outcome.rule == rule) {
                Some(outcome) => words.text(
                    "notify.because.ruleStatus",
                    &[
                        ("rule", rule),
                        ("status", &status_text(&outcome.status, words)),
                    ],
                ),
                None => words.text("notify.because.rule", &[("rule", rule)]),
            }
        }
        reason => words.text(
            "notify.because.reason",
            &[("reason", &decision_reason_text(reason, words))],
        ),
    }
}

/// A spot entry's notification: a reclaim (its pool's), spot paused or resumed (console-wide:
/// the entry names no pool); `None` for any other entry. The body is the activity log's
/// sentence, so in English it reads as the reason's `Display` (a reclaim's with its deadline).
fn spot(entry: &ActivityEntry, words: Words) -> Option<Notification> {
    let title = match &entry.reason {
        ChangeReason::Reclaimed { host, gpus, .. } => words.text(
            "notify.reclaimed.title",
            &[
                ("pool", &entry.pool),
                ("host", host),
                ("gpus", &count(*gpus, words)),
            ],
        ),
        ChangeReason::SpotPaused { model, region, .. } => words.text(
            "notify.spotPaused.title",
            &[("model", model), ("region", region)],
        ),
        ChangeReason::SpotResumed { model, region, .. } => words.text(
            "notify.spotResumed.title",
            &[("model", model), ("region", region)],
        ),
        _ => return None,
    };
    let reason = words.render(&entry.reason.phrase()?);
    Some(Notification {
        kind: NotificationKind::Spot,
        pool: entry.pool.clone(),
        title,
        body: words.text("notify.because.reason", &[("reason", &reason)]),
    })
}

fn scaled(entry: &ActivityEntry, decision: &Decision, words: Words) -> Notification {
    let to = count(entry.to, words);
    let mut body = words.text(
        "notify.scaled.body",
        &[
            ("from", &entry.from),
            ("to", &to),
            (
                "perHour",
                &per_hour(decision.cost_delta_per_hour_fen, words),
            ),
            ("because", &because(decision, words)),
        ],
    );
    for clamp in &decision.clamps {
        body.push_str(&words.text(
            "notify.scaled.limited",
            &[("clamp", &clamp_text(clamp, words))],
        ));
    }
    let title = if entry.to > entry.from {
        "notify.scaled.outTitle"
    } else {
        "notify.scaled.inTitle"
    };
    Notification {
        kind: NotificationKind::Scaled,
        pool: entry.pool.clone(),
        title: words.text(title, &[("pool", &entry.pool), ("count", &to)]),
        body,
    }
}

fn budget_held(
    entry: &ActivityEntry,
    decision: &Decision,
    clamp: &Clamp,
    words: Words,
) -> Notification {
    let to = count(entry.to, words);
    let title = if entry.from == entry.to {
        words.text(
            "notify.budget.heldTitle",
            &[("pool", &entry.pool), ("count", &to)],
        )
    } else {
        words.text(
            "notify.budget.limitedTitle",
            &[
                ("pool", &entry.pool),
                ("count", &to),
                ("from", &entry.from),
                ("to", &entry.to),
            ],
        )
    };
    let pays = match clamp {
        Clamp::Budget {
            to_gpus,
            per_hour_fen,
            per_month_fen,
            ..
        } => {
            let caps = budget_caps(*per_hour_fen, *per_month_fen, words);
            let most = count(*to_gpus, words);
            if caps.is_empty() {
                words.text("notify.budget.paysNoPrice", &[("count", &most)])
            } else {
                words.text("notify.budget.pays", &[("caps", &caps), ("count", &most)])
            }
        }
        other => clamp_text(other, words),
    };
    let body = words.text(
        "notify.budget.body",
        &[
            ("asked", &count(decision.recommended_gpus, words)),
            ("pays", &pays),
            ("because", &because(decision, words)),
        ],
    );
    Notification {
        kind: NotificationKind::Budget,
        pool: entry.pool.clone(),
        title,
        body,
    }
}

/// A budget's caps: "¥50.00/hour and ¥9,000.00/month", in the language of `words`;
/// empty without a cap.
fn budget_caps(per_hour_fen: Option<i64>, per_month_fen: Option<i64>, words: Words) -> String {
    ebb_wire::words::budget_caps(per_hour_fen, per_month_fen)
        .map(|caps| words.arg(&caps))
        .unwrap_or_default()
}

/// The metric a rule status read, and whether it read it fresh (`None`: read nothing).
fn metric_read(status: &RuleStatus) -> Option<(&str, bool)> {
    match status {
        RuleStatus::Stale { metric, .. } => Some((metric, false)),
        RuleStatus::Fired { metric, .. }
        | RuleStatus::Sustaining { metric, .. }
        | RuleStatus::NotMet { metric, .. }
        | RuleStatus::WithinTolerance { metric, .. }
        | RuleStatus::Tracking { metric, .. }
        | RuleStatus::TargetSustaining { metric, .. } => Some((metric, true)),
        RuleStatus::NoData { .. }
        | RuleStatus::Cooldown { .. }
        | RuleStatus::ScheduleActive { .. }
        | RuleStatus::ScheduleInactive => None,
    }
}

fn stale(
    pool: &str,
    decision: &Decision,
    prefs: &NotificationPrefs,
    words: Words,
    said: &mut Said,
    out: &mut Vec<Notification>,
) {
    // Fresh first: a metric one rule reads fresh is fresh.
    let fresh: BTreeSet<&str> = decision
        .rules
        .iter()
        .filter_map(|outcome| metric_read(&outcome.status))
        .filter(|(_, fresh)| *fresh)
        .map(|(metric, _)| metric)
        .collect();
    for metric in &fresh {
        said.stale
            .remove(&(pool.to_string(), (*metric).to_string()));
    }
    if !wanted(prefs, NotificationKind::Stale) {
        return;
    }
    for outcome in &decision.rules {
        let RuleStatus::Stale {
            metric,
            last_seen_ms,
            stale_after_minutes,
        } = &outcome.status
        else {
            continue;
        };
        if fresh.contains(metric.as_str()) || !said.stale.insert((pool.to_string(), metric.clone()))
        {
            continue;
        }
        let rules: Vec<&str> = decision
            .rules
            .iter()
            .filter(
                |other| matches!(&other.status, RuleStatus::Stale { metric: m, .. } if m == metric),
            )
            .map(|other| other.rule.as_str())
            .collect();
        let age_min = (decision.at_ms - last_seen_ms).max(0) / 60_000;
        let body = if rules.len() == 1 {
            "notify.stale.bodyOne"
        } else {
            "notify.stale.bodyMany"
        };
        out.push(Notification {
            kind: NotificationKind::Stale,
            pool: pool.to_string(),
            title: words.text("notify.stale.title", &[("pool", &pool), ("metric", metric)]),
            body: words.text(
                body,
                &[
                    ("metric", metric),
                    ("age", &age_min),
                    ("limit", stale_after_minutes),
                    (
                        "rules",
                        &rules.join(&words.text("common.listSeparator", &[])),
                    ),
                ],
            ),
        });
    }
}

// The decision log's reasons in words: the phrases `ebb_wire::words` chooses for each (the
// Rules view renders the same ones), in the language of `words`; times in UTC, as the logs
// write them. In English they are the wire types' `Display` (which renders the same phrase).

/// One rule's state at a decision: "gpu_util >= 80 for 2 of 3 minutes".
fn status_text(status: &RuleStatus, words: Words) -> String {
    words.render(&status.phrase())
}

/// A clamp that changed the count: "step cap of 2: 2 → 4".
fn clamp_text(clamp: &Clamp, words: Words) -> String {
    words.render(&clamp.phrase())
}

/// Why a decision is what it is: "out-at-80: 4 → 6", "no rule asks for a change".
fn decision_reason_text(reason: &DecisionReason, words: Words) -> String {
    words.render(&reason.phrase())
}

#[cfg(test)]
#[allow(clippy::too_many_lines)] // tests read as their story: no line budget
mod tests {
    use super::*;
    use ebb_wire::pools::Outcome;
    use ebb_wire::rules::{Action, Comparison, RuleOutcome};
    use ebb_wire::rules::{BoundKind, hh_mm_utc};

    const T0: i64 = 1_700_000_000_000;

    fn fired(rule: &str) -> RuleOutcome {
        RuleOutcome {
            rule: rule.into(),
            recommended_gpus: Some(6),
            status: RuleStatus::Fired {
                metric: "gpu_util".into(),
                value: 92.0,
                comparison: Comparison::Above,
                threshold: 80.0,
                minutes: 3,
                action: Action::AddGpus { gpus: 2 },
            },
        }
    }

    fn stale_rule(rule: &str, metric: &str) -> RuleOutcome {
        RuleOutcome {
            rule: rule.into(),
            recommended_gpus: None,
            status: RuleStatus::Stale {
                metric: metric.into(),
                last_seen_ms: T0 - 12 * 60_000,
                stale_after_minutes: 5,
            },
        }
    }

    fn fresh_rule(rule: &str, metric: &str) -> RuleOutcome {
        RuleOutcome {
            rule: rule.into(),
            recommended_gpus: None,
            status: RuleStatus::NotMet {
                metric: metric.into(),
                value: 10.0,
                comparison: Comparison::Above,
                threshold: 100.0,
            },
        }
    }

    fn decision(from: u32, to: u32, rules: Vec<RuleOutcome>, clamps: Vec<Clamp>) -> Decision {
        let reason = if from != to {
            DecisionReason::Rule {
                rule: "hot".into(),
                from_gpus: from,
                to_gpus: to,
            }
        } else if let Some(clamp) = clamps.last() {
            DecisionReason::Held {
                rule: "hot".into(),
                clamp: clamp.clone(),
            }
        } else {
            DecisionReason::Steady
        };
        Decision {
            at_ms: T0,
            current_gpus: from,
            rules,
            recommended_gpus: clamps.first().map_or(to, |clamp| clamp.counts().0),
            clamps,
            desired_gpus: to,
            cost_delta_per_hour_fen: Some(i64::from(to) * 1_000 - i64::from(from) * 1_000),
            reason,
        }
    }

    fn entry(id: i64, pool: &str, decision: Decision, shadow: bool) -> ActivityEntry {
        ActivityEntry {
            id,
            at_ms: decision.at_ms,
            pool: pool.into(),
            actor: Actor::Rule,
            from: decision.current_gpus,
            to: decision.desired_gpus,
            reason: ChangeReason::RuleDecision {
                decision: Box::new(decision),
                shadow,
            },
            delta_per_hour_fen: None,
            delta_per_month_fen: None,
            results: Vec::new(),
            outcome: Outcome::Done,
            finished_at_ms: None,
            who: String::new(),
            role: String::new(),
        }
    }

    fn budget(from: u32, to: u32) -> Clamp {
        Clamp::Budget {
            from_gpus: from,
            to_gpus: to,
            per_hour_fen: Some(5_000),
            per_month_fen: None,
        }
    }

    const ALL: NotificationPrefs = NotificationPrefs {
        scaled: true,
        budget: true,
        stale: true,
        spot: true,
    };

    #[test]
    fn a_rule_scaling_a_pool_is_said_with_the_pool_and_the_numbers() {
        let out = select(
            &[entry(
                1,
                "render",
                decision(2, 4, vec![fired("hot")], vec![]),
                false,
            )],
            &[],
            &ALL,
            UiLanguage::English,
            &mut Said::default(),
        );
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].kind, NotificationKind::Scaled);
        assert_eq!(out[0].title, "render scaled out to 4 GPUs");
        assert!(
            out[0]
                .body
                .starts_with("2 → 4 GPUs (+¥20.00/hour). Rule hot: gpu_util > 80"),
            "{}",
            out[0].body
        );
        // Scaled in, in shadow mode (nothing), by the operator (not a rule's), turned off.
        let down = select(
            &[entry(2, "render", decision(4, 1, vec![], vec![]), false)],
            &[],
            &ALL,
            UiLanguage::English,
            &mut Said::default(),
        );
        assert_eq!(down[0].title, "render scaled in to 1 GPU");
        let shadow = entry(3, "render", decision(2, 4, vec![], vec![]), true);
        let operator = ActivityEntry {
            actor: Actor::Operator,
            reason: ChangeReason::Slider,
            ..entry(4, "render", decision(2, 4, vec![], vec![]), false)
        };
        assert!(
            select(
                &[shadow, operator],
                &[],
                &ALL,
                UiLanguage::English,
                &mut Said::default()
            )
            .is_empty()
        );
        let off = NotificationPrefs {
            scaled: false,
            ..ALL
        };
        assert!(
            select(
                &[entry(5, "render", decision(2, 4, vec![], vec![]), false)],
                &[],
                &off,
                UiLanguage::English,
                &mut Said::default()
            )
            .is_empty()
        );
    }

    #[test]
    fn the_budget_holding_a_scale_out_is_said_once_an_entry() {
        // Held: 4 stays 4, the rules asked for 6.
        let held = entry(
            1,
            "render",
            decision(4, 4, vec![fired("hot")], vec![budget(6, 4)]),
            false,
        );
        // Limited: 4 → 5 of the 8 asked.
        let limited = entry(
            2,
            "render",
            decision(4, 5, vec![], vec![budget(8, 5)]),
            false,
        );
        // Held by something else: no notification.
        let max = entry(
            3,
            "render",
            decision(
                4,
                4,
                vec![],
                vec![Clamp::Max {
                    from_gpus: 6,
                    to_gpus: 4,
                }],
            ),
            false,
        );
        let out = select(
            &[held.clone(), limited.clone(), max],
            &[],
            &ALL,
            UiLanguage::English,
            &mut Said::default(),
        );
        assert_eq!(
            out.iter().map(|n| n.kind).collect::<Vec<_>>(),
            [NotificationKind::Budget, NotificationKind::Budget]
        );
        assert_eq!(out[0].title, "render: the budget held it at 4 GPUs");
        assert!(
            out[0].body.starts_with("The rules asked for 6 GPUs; the budget of ¥50.00/hour pays for 4 GPUs. Rule hot: gpu_util > 80"),
            "{}",
            out[0].body
        );
        assert_eq!(
            out[1].title,
            "render: the budget limited it to 5 GPUs (4 → 5)"
        );
        // Budget off: the limited change is still a scale; the held one says nothing.
        let out = select(
            &[held, limited],
            &[],
            &NotificationPrefs {
                budget: false,
                ..ALL
            },
            UiLanguage::English,
            &mut Said::default(),
        );
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].kind, NotificationKind::Scaled);
        assert!(
            out[0]
                .body
                .contains("Limited by budget of ¥50.00/hour: 8 → 5."),
            "{}",
            out[0].body
        );
    }

    #[test]
    fn a_stale_metric_is_said_once_until_it_is_fresh_again() {
        let mut said = Said::default();
        let steady =
            |rules: Vec<RuleOutcome>| vec![("render".to_string(), decision(4, 4, rules, vec![]))];
        let out = select(
            &[],
            &steady(vec![
                stale_rule("users-high", "users"),
                stale_rule("users-low", "users"),
            ]),
            &ALL,
            UiLanguage::English,
            &mut said,
        );
        assert_eq!(out.len(), 1, "one notification a metric");
        assert_eq!(out[0].kind, NotificationKind::Stale);
        assert_eq!(out[0].title, "render: the metric users is stale");
        assert_eq!(
            out[0].body,
            "No new value of users for 12 min (stale after 5 min): rules users-high, users-low do nothing until it is fresh."
        );
        assert!(said.is_stale("render", "users"));
        // Still stale: said already; another pool's is its own.
        assert!(
            select(
                &[],
                &steady(vec![stale_rule("users-high", "users")]),
                &ALL,
                UiLanguage::English,
                &mut said
            )
            .is_empty()
        );
        let other = [(
            "batch".to_string(),
            decision(1, 1, vec![stale_rule("q", "queue")], vec![]),
        )];
        assert_eq!(
            select(&[], &other, &ALL, UiLanguage::English, &mut said)[0].body,
            "No new value of queue for 12 min (stale after 5 min): rule q does nothing until it is fresh."
        );
        // Fresh again, then stale again: said again. A stale status in a logged change
        // counts too.
        assert!(
            select(
                &[],
                &steady(vec![fresh_rule("users-high", "users")]),
                &ALL,
                UiLanguage::English,
                &mut said
            )
            .is_empty()
        );
        assert!(!said.is_stale("render", "users"));
        let change = entry(
            7,
            "render",
            decision(
                4,
                6,
                vec![fired("hot"), stale_rule("users-high", "users")],
                vec![],
            ),
            true,
        );
        let out = select(&[change], &[], &ALL, UiLanguage::English, &mut said);
        assert_eq!(
            out.iter().map(|n| n.kind).collect::<Vec<_>>(),
            [NotificationKind::Stale]
        );
        // Off: nothing said, and nothing remembered as said.
        let mut quiet = Said::default();
        let off = NotificationPrefs {
            stale: false,
            ..ALL
        };
        assert!(
            select(
                &[],
                &steady(vec![stale_rule("users-high", "users")]),
                &off,
                UiLanguage::English,
                &mut quiet
            )
            .is_empty()
        );
        assert!(!quiet.is_stale("render", "users"));
    }

    #[test]
    fn in_chinese_every_notification_is_worded_in_chinese_with_the_same_numbers() {
        let zh = |entries: &[ActivityEntry], latest: &[(String, Decision)]| {
            select(
                entries,
                latest,
                &ALL,
                UiLanguage::SimplifiedChinese,
                &mut Said::default(),
            )
        };
        let out = zh(
            &[entry(
                1,
                "render",
                decision(2, 4, vec![fired("hot")], vec![]),
                false,
            )],
            &[],
        );
        assert_eq!(out[0].title, "render 扩容至 4 块 GPU");
        assert_eq!(
            out[0].body,
            "2 → 4 块 GPU（每小时 +¥20.00）。规则 hot：gpu_util > 80 已持续 3 分钟（最近一分钟均值 92）：+2。"
        );
        let down = zh(
            &[entry(
                2,
                "render",
                decision(4, 2, vec![fired("hot")], vec![]),
                false,
            )],
            &[],
        );
        assert_eq!(down[0].title, "render 缩容至 2 块 GPU");
        assert!(
            down[0].body.contains("（每小时 -¥20.00）"),
            "{}",
            down[0].body
        );

        let held = zh(
            &[entry(
                3,
                "render",
                decision(4, 4, vec![fired("hot")], vec![budget(6, 4)]),
                false,
            )],
            &[],
        );
        assert_eq!(held[0].title, "render：预算使其保持在 4 块 GPU");
        assert_eq!(
            held[0].body,
            "规则要求 6 块 GPU；预算 每小时 ¥50.00 只够 4 块 GPU。规则 hot：gpu_util > 80 已持续 3 分钟（最近一分钟均值 92）：+2。"
        );

        let stale = zh(
            &[],
            &[(
                "render".to_string(),
                decision(
                    4,
                    4,
                    vec![
                        stale_rule("users-high", "users"),
                        stale_rule("users-low", "users"),
                    ],
                    vec![],
                ),
            )],
        );
        assert_eq!(stale[0].title, "render：指标 users 已过期");
        assert_eq!(
            stale[0].body,
            "12 分钟没有 users 的新值（超过 5 分钟即过期）：规则 users-high、users-low 在其恢复前不做任何动作。"
        );
        // No English word left in any of them (names, metrics and numbers aside).
        for note in out.iter().chain(&down).chain(&held).chain(&stale) {
            let text = format!("{} {}", note.title, note.body);
            for english in ["scaled", "GPUs", "Rule", "budget", "hour", "stale", "min"] {
                assert!(!text.contains(english), "{english} in {text}");
            }
        }
    }

    #[test]
    fn every_key_named_here_is_in_both_catalogs() {
        // Every string literal that reads as a key: a catalog prefix, then a name; here and
        // where the phrases are chosen (the reasons' words, the form checks' words).
        let sources = [
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs")),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../ebb-wire/src/words.rs"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../ebb-state/src/registry.rs"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../ebb-state/src/pools/validate.rs"
            )),
            // The refusals worded for the UI (an IpcError's words).
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../ebb-state/src/errors.rs"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../ebb-core/src/console_pools.rs"
            )),
        ];
        let prefixes = [
            "notify",
            "reason",
            "common",
            "pool.check",
            "hosts.check",
            "pool.refuse",
            "hosts.refuse",
        ];
        let keys: BTreeSet<&str> = prefixes
            .iter()
            .flat_map(|prefix| sources.iter().map(move |source| (prefix, *source)))
            .flat_map(|(prefix, source)| {
                source
                    .match_indices(&format!("\"{prefix}."))
                    .map(|(at, _)| (source, at + 1))
                    .collect::<Vec<_>>()
            })
            .filter_map(|(source, start)| {
                let key = &source[start..start + source[start..].find('"')?];
                key.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
                    .then_some(key)
            })
            .filter(|key| !key.ends_with('.'))
            .collect();
        assert!(keys.len() > 60, "{}: {keys:?}", keys.len());
        for language in [UiLanguage::English, UiLanguage::SimplifiedChinese] {
            let words = Words::of(language);
            for key in &keys {
                assert_ne!(
                    words.text(key, &[]),
                    *key,
                    "{key} is not in the {language:?} catalog"
                );
            }
        }
    }

    fn logged(id: i64, pool: &str, reason: ChangeReason) -> ActivityEntry {
        ActivityEntry {
            id,
            at_ms: T0,
            pool: pool.into(),
            actor: Actor::Enforcer,
            from: 0,
            to: 0,
            reason,
            delta_per_hour_fen: None,
            delta_per_month_fen: None,
            results: Vec::new(),
            outcome: Outcome::Done,
            finished_at_ms: None,
            who: String::new(),
            role: String::new(),
        }
    }

    #[test]
    fn spot_paused_resumed_and_reclaims_are_said_in_both_languages() {
        let paused = ChangeReason::SpotPaused {
            model: "H800".into(),
            region: "cn-east".into(),
            interruptions: 3,
            window_minutes: 30,
            until_ms: T0 + 30 * 60_000,
        };
        let resumed = ChangeReason::SpotResumed {
            model: "H800".into(),
            region: "cn-east".into(),
            quiet_minutes: 20,
        };
        let reclaimed = ChangeReason::Reclaimed {
            host: "gpu-a".into(),
            gpus: 2,
            until_ms: T0,
        };
        let entries = [
            logged(1, "", paused.clone()),
            logged(2, "", resumed.clone()),
            logged(3, "render", reclaimed),
        ];
        // Spot has its own switch: the others off change nothing for it.
        let none = NotificationPrefs {
            scaled: false,
            budget: false,
            stale: false,
            spot: true,
        };
        let out = select(
            &entries,
            &[],
            &none,
            UiLanguage::English,
            &mut Said::default(),
        );
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|note| note.kind == NotificationKind::Spot));
        assert_eq!(out[0].title, "Spot paused: H800 in cn-east");
        // The body is the log's sentence: in English, the reason's `Display`.
        assert_eq!(out[0].body, format!("{paused}."));
        assert_eq!(
            out[0].body,
            "spot H800 in cn-east taken back 3 times in 30 min: new GPUs there go on demand until it is quiet."
        );
        assert_eq!(out[1].title, "Spot resumed: H800 in cn-east");
        assert_eq!(out[1].body, format!("{resumed}."));
        let off = NotificationPrefs { spot: false, ..ALL };
        assert!(
            select(
                &entries,
                &[],
                &off,
                UiLanguage::English,
                &mut Said::default()
            )
            .is_empty()
        );
        assert_eq!(out[2].pool, "render");
        assert_eq!(out[2].title, "render: gpu-a takes back 2 GPUs");
        assert_eq!(
            out[2].body,
            format!(
                "gpu-a takes back 2 GPUs at {} (its owner's reclaim notice): a replacement is ordered now.",
                hh_mm_utc(T0)
            )
        );

        let zh = select(
            &entries,
            &[],
            &ALL,
            UiLanguage::SimplifiedChinese,
            &mut Said::default(),
        );
        assert_eq!(zh[0].title, "抢占式已暂停：cn-east 的 H800");
        assert_eq!(
            zh[0].body,
            "cn-east 的抢占式 H800 在 30 分钟内被收回 3 次：在其平稳之前，该区域的新 GPU 改为按需。"
        );
        assert_eq!(zh[1].title, "抢占式已恢复：cn-east 的 H800");
        assert_eq!(zh[2].title, "render：gpu-a 收回 2 块 GPU");
        for note in &zh {
            let text = format!("{} {}", note.title, note.body);
            for english in ["spot", "Spot", "taken", "demand", "takes", "quiet"] {
                assert!(!text.contains(english), "{english} in {text}");
            }
        }
    }

    #[test]
    fn more_than_are_shown_is_said_in_one() {
        assert_eq!(
            more_not_shown(3, UiLanguage::English),
            (
                "3 more from Ebb".to_string(),
                "See the Activity view.".to_string()
            )
        );
        let (title, body) = more_not_shown(3, UiLanguage::SimplifiedChinese);
        assert_eq!(title, "Ebb 还有 3 条通知");
        assert!(body.contains("活动"), "{body}");
    }

    #[test]
    fn every_clamp_status_and_reason_has_chinese_words() {
        let clamps = [
            Clamp::Schedule {
                schedule: "peak".into(),
                bound: BoundKind::Floor,
                from_gpus: 2,
                to_gpus: 8,
            },
            Clamp::Min {
                from_gpus: 0,
                to_gpus: 1,
            },
            Clamp::Max {
                from_gpus: 9,
                to_gpus: 8,
            },
            Clamp::StepCap {
                from_gpus: 9,
                to_gpus: 4,
                step_gpus: 2,
            },
            budget(6, 4),
            Clamp::Budget {
                from_gpus: 6,
                to_gpus: 4,
                per_hour_fen: None,
                per_month_fen: None,
            },
            Clamp::Cooldown {
                rule: "hot".into(),
                from_gpus: 6,
                to_gpus: 4,
                until_ms: T0,
            },
            Clamp::Stabilization {
                rule: "t".into(),
                from_gpus: 6,
                to_gpus: 4,
                window_minutes: 5,
            },
            Clamp::PaidUnitHold {
                from_gpus: 2,
                to_gpus: 4,
                next_release_ms: T0,
            },
            Clamp::Deadband {
                from_gpus: 3,
                to_gpus: 4,
                surplus_gpus: 1,
                deadband_gpus: 2,
                window_minutes: 10,
            },
            Clamp::DisruptionBudget {
                from_gpus: 1,
                to_gpus: 2,
                allowance_gpus: 1,
                highest_gpus: 3,
                window_minutes: 10,
            },
            Clamp::QuietWindow {
                from_gpus: 1,
                to_gpus: 3,
                busy_gpus: 3,
                until_ms: T0,
            },
            Clamp::Quota {
                from_gpus: 4,
                to_gpus: 6,
                team: "ml".into(),
                model: "H20".into(),
                quota_gpus: 16,
            },
            Clamp::TeamSpend {
                from_gpus: 4,
                to_gpus: 6,
                team: "ml".into(),
                per_month_fen: 5_000_000,
            },
        ];
        let statuses = [
            fired("hot").status,
            stale_rule("s", "users").status,
            fresh_rule("f", "users").status,
            RuleStatus::Sustaining {
                metric: "gpu_util".into(),
                value: 90.0,
                comparison: Comparison::AtLeast,
                threshold: 80.0,
                minutes_met: 2,
                minutes_needed: 3,
            },
            RuleStatus::NoData {
                metric: "users".into(),
            },
            RuleStatus::Cooldown {
                until_ms: T0,
                would_gpus: 3,
            },
            RuleStatus::WithinTolerance {
                metric: "gpu_util".into(),
                value: 61.5,
                target: 60.0,
                tolerance: 0.1,
            },
            RuleStatus::Tracking {
                metric: "gpu_util".into(),
                value: 90.0,
                target: 60.0,
                instant_gpus: 6,
            },
            RuleStatus::TargetSustaining {
                metric: "gpu_util".into(),
                value: 90.0,
                target: 60.0,
                instant_gpus: 6,
                minutes_met: 1,
                minutes_needed: 3,
            },
            RuleStatus::ScheduleActive {
                bound: BoundKind::Exact,
                gpus: 8,
                until_ms: T0,
            },
            RuleStatus::ScheduleInactive,
        ];
        let reasons = [
            DecisionReason::Rule {
                rule: "hot".into(),
                from_gpus: 2,
                to_gpus: 4,
            },
            DecisionReason::Bound {
                clamp: clamps[0].clone(),
            },
            DecisionReason::Held {
                rule: "hot".into(),
                clamp: clamps[3].clone(),
            },
            DecisionReason::Waiting {
                rule: "hot".into(),
                status: statuses[3].clone(),
            },
            DecisionReason::Steady,
        ];
        // In English, the catalog's words are the wire types' `Display` (the logs' and the
        // CLI's): one sentence, not two that drift apart.
        let en = Words::of(UiLanguage::English);
        for clamp in &clamps {
            assert_eq!(clamp_text(clamp, en), clamp.to_string());
        }
        for status in &statuses {
            assert_eq!(status_text(status, en), status.to_string());
        }
        for reason in &reasons {
            assert_eq!(decision_reason_text(reason, en), reason.to_string());
        }
        let zh = Words::of(UiLanguage::SimplifiedChinese);
        let worded = clamps
            .iter()
            .map(|clamp| clamp_text(clamp, zh))
            .chain(statuses.iter().map(|status| status_text(status, zh)))
            .chain(
                reasons
                    .iter()
                    .map(|reason| decision_reason_text(reason, zh)),
            );
        for text in worded {
            let english = text
                .split(|c: char| !c.is_ascii_alphabetic())
                .filter(|word| word.len() > 2)
                .filter(|word| !["gpu_util", "users", "hot", "peak", "UTC", "GPU"].contains(word))
                .filter(|word| !"gpu_util".contains(word))
                .collect::<Vec<_>>();
            assert!(english.is_empty(), "{english:?} in {text}");
            assert!(
                text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
                "{text}"
            );
        }
    }
}
