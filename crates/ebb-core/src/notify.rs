//! Which desktop notifications to show, pure: from the activity entries new since the last
//! look (oldest first), the pools' latest rule decisions, the operator's preferences and
//! what was already said → the notifications, each with a kind, a title and a body in
//! English (the operating system shows them; they name the pool and the numbers). The
//! desktop shell reads the entries every few seconds and shows what this returns.
//!
//! Kinds: a rule scaled a pool (a change, not shadow mode); the budget held a scale-out or
//! limited a change (a `budget` clamp in a decision, not shadow mode); a metric a rule
//! watches went stale (a rule status `stale`, in any mode), said once per pool and metric
//! until a decision reads it fresh again.

use ebb_wire::plan::yuan;
use ebb_wire::pools::{ActivityEntry, Actor, NotificationPrefs};
use ebb_wire::reasons::ChangeReason;
use ebb_wire::rules::{Clamp, Decision, DecisionReason, RuleStatus};
use std::collections::BTreeSet;

/// What a notification is about (each kind on or off in the preferences).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NotificationKind {
    /// A rule scaled a pool.
    Scaled,
    /// The budget held a scale-out or limited a change.
    Budget,
    /// A metric a rule watches went stale.
    Stale,
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
    }
}

/// The notifications for `entries` (the activity entries since the last look, oldest
/// first) and `latest` (each pool's latest decision, `(pool, decision)`, which says when a
/// metric is stale while no rule changes anything), under `prefs`; `said` is updated.
pub fn select(
    entries: &[ActivityEntry],
    latest: &[(String, Decision)],
    prefs: &NotificationPrefs,
    said: &mut Said,
) -> Vec<Notification> {
    let mut out = Vec::new();
    let mut read: Vec<(&str, &Decision)> = Vec::new();
    for entry in entries {
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
            out.push(budget_held(entry, decision, clamp));
        } else if changed && prefs.scaled {
            out.push(scaled(entry, decision));
        }
    }
    read.extend(
        latest
            .iter()
            .map(|(pool, decision)| (pool.as_str(), decision)),
    );
    for (pool, decision) in read {
        stale(pool, decision, prefs, said, &mut out);
    }
    out
}

fn count(gpus: u32) -> String {
    if gpus == 1 {
        "1 GPU".into()
    } else {
        format!("{gpus} GPUs")
    }
}

fn per_hour(fen: Option<i64>) -> String {
    match fen {
        Some(fen) if fen > 0 => format!(" (+{}/hour)", yuan(fen)),
        Some(fen) if fen < 0 => format!(" ({}/hour)", yuan(fen)),
        _ => String::new(),
    }
}

/// The rule that moved the pool and what it read, in words.
fn because(decision: &Decision) -> String {
    match &decision.reason {
        DecisionReason::Rule { rule, .. } | DecisionReason::Held { rule, .. } => {
            match decision.rules.iter().find(|outcome| &outcome.rule == rule) {
                Some(outcome) => format!("Rule {rule}: {}.", outcome.status),
                None => format!("Rule {rule}."),
            }
        }
        reason => format!("{reason}."),
    }
}

fn scaled(entry: &ActivityEntry, decision: &Decision) -> Notification {
    let way = if entry.to > entry.from { "out" } else { "in" };
    let mut body = format!(
        "{} → {}{}. {}",
        entry.from,
        count(entry.to),
        per_hour(decision.cost_delta_per_hour_fen),
        because(decision)
    );
    for clamp in &decision.clamps {
        body.push_str(&format!(" Limited by {clamp}."));
    }
    Notification {
        kind: NotificationKind::Scaled,
        pool: entry.pool.clone(),
        title: format!("{} scaled {way} to {}", entry.pool, count(entry.to)),
        body,
    }
}

fn budget_held(entry: &ActivityEntry, decision: &Decision, clamp: &Clamp) -> Notification {
    let title = if entry.from == entry.to {
        format!("{}: the budget held it at {}", entry.pool, count(entry.to))
    } else {
        format!(
            "{}: the budget limited it to {} ({} → {})",
            entry.pool,
            count(entry.to),
            entry.from,
            entry.to
        )
    };
    let pays = match clamp {
        Clamp::Budget {
            to_gpus,
            per_hour_fen,
            per_month_fen,
            ..
        } => {
            let caps: Vec<String> = per_hour_fen
                .map(|fen| format!("{}/hour", yuan(fen)))
                .into_iter()
                .chain(per_month_fen.map(|fen| format!("{}/month", yuan(fen))))
                .collect();
            if caps.is_empty() {
                format!(
                    "with no price to check the budget against, it may not grow past {}",
                    count(*to_gpus)
                )
            } else {
                format!(
                    "the budget of {} pays for {}",
                    caps.join(" and "),
                    count(*to_gpus)
                )
            }
        }
        other => other.to_string(),
    };
    Notification {
        kind: NotificationKind::Budget,
        pool: entry.pool.clone(),
        title,
        body: format!(
            "The rules asked for {}; {pays}. {}",
            count(decision.recommended_gpus),
            because(decision)
        ),
    }
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
        out.push(Notification {
            kind: NotificationKind::Stale,
            pool: pool.to_string(),
            title: format!("{pool}: the metric {metric} is stale"),
            body: format!(
                "No new value of {metric} for {age_min} min (stale after {stale_after_minutes} min): {} {} nothing until it is fresh.",
                if rules.len() == 1 { "rule" } else { "rules" },
                if rules.len() == 1 {
                    format!("{} does", rules[0])
                } else {
                    format!("{} do", rules.join(", "))
                },
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ebb_wire::pools::Outcome;
    use ebb_wire::rules::{Action, Comparison, RuleOutcome};

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
            &mut Said::default(),
        );
        assert_eq!(down[0].title, "render scaled in to 1 GPU");
        let shadow = entry(3, "render", decision(2, 4, vec![], vec![]), true);
        let operator = ActivityEntry {
            actor: Actor::Operator,
            reason: ChangeReason::Slider,
            ..entry(4, "render", decision(2, 4, vec![], vec![]), false)
        };
        assert!(select(&[shadow, operator], &[], &ALL, &mut Said::default()).is_empty());
        let off = NotificationPrefs {
            scaled: false,
            ..ALL
        };
        assert!(
            select(
                &[entry(5, "render", decision(2, 4, vec![], vec![]), false)],
                &[],
                &off,
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
                &mut said
            )
            .is_empty()
        );
        let other = [(
            "batch".to_string(),
            decision(1, 1, vec![stale_rule("q", "queue")], vec![]),
        )];
        assert_eq!(
            select(&[], &other, &ALL, &mut said)[0].body,
            "No new value of queue for 12 min (stale after 5 min): rule q does nothing until it is fresh."
        );
        // Fresh again, then stale again: said again. A stale status in a logged change
        // counts too.
        assert!(
            select(
                &[],
                &steady(vec![fresh_rule("users-high", "users")]),
                &ALL,
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
        let out = select(&[change], &[], &ALL, &mut said);
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
                &mut quiet
            )
            .is_empty()
        );
        assert!(!quiet.is_stale("render", "users"));
    }
}
