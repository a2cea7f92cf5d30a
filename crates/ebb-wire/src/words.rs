//! Which words each structured reason is, once: a rule's state, a clamp, a decision's reason
//! and the spot changes of the activity log, each as a [`Phrase`] (a catalog key and its
//! typed arguments). The desktop notifications render these (`ebb_notify::Words`), and the
//! IPC carries them beside each reason (`words`), so the UI renders `t(key, args)` and
//! switches on no reason kind to find its words.
//!
//! On the wire a reason that carries its words is the reason's own fields and `words`: the
//! fields holding one serialize through [`worded`] and friends. Reading a stored reason back
//! ignores its `words` (they are made again from the reason).

use crate::phrase::{Arg, Phrase};
use crate::reasons::ChangeReason;
use crate::rules::{Action, BoundKind, Clamp, DecisionReason, RuleStatus};
use serde::{Serialize, Serializer};
use specta::Type;

/// A schedule's bound and count: "at least 4".
pub fn bound_phrase(bound: BoundKind, gpus: u32) -> Phrase {
    let key = match bound {
        BoundKind::Floor => "reason.rules.bound.floor",
        BoundKind::Ceiling => "reason.rules.bound.ceiling",
        BoundKind::Exact => "reason.rules.bound.exact",
    };
    Phrase::new(key).int("gpus", gpus)
}

/// What a threshold rule does: "+2", "-30%" as written, "set 4" in words.
pub fn action_arg(action: &Action) -> Arg {
    match action {
        Action::Set { gpus } => Arg::Phrase(Box::new(
            Phrase::new("reason.rules.actionSet").int("gpus", *gpus),
        )),
        other => Arg::Text(other.to_string()),
    }
}

impl RuleStatus {
    /// One rule's state at a decision: "gpu_util >= 80 for 2 of 3 minutes".
    #[allow(
        clippy::too_many_lines,
        reason = "one phrase per status, each with its numbers"
    )]
    pub fn phrase(&self) -> Phrase {
        match self {
            RuleStatus::Fired {
                metric,
                value,
                comparison,
                threshold,
                minutes,
                action,
            } => Phrase::new("reason.rules.status.fired")
                .text("metric", metric)
                .text("op", comparison.symbol())
                .number("threshold", *threshold)
                .int("minutes", *minutes)
                .number("value", *value)
                .arg("action", action_arg(action)),
            RuleStatus::Sustaining {
                metric,
                comparison,
                threshold,
                minutes_met,
                minutes_needed,
                ..
            } => Phrase::new("reason.rules.status.sustaining")
                .text("metric", metric)
                .text("op", comparison.symbol())
                .number("threshold", *threshold)
                .int("met", *minutes_met)
                .int("needed", *minutes_needed),
            RuleStatus::NotMet {
                metric,
                value,
                comparison,
                threshold,
            } => Phrase::new("reason.rules.status.notMet")
                .text("metric", metric)
                .number("value", *value)
                .text("op", comparison.symbol())
                .number("threshold", *threshold),
            RuleStatus::NoData { metric } => {
                Phrase::new("reason.rules.status.noData").text("metric", metric)
            }
            RuleStatus::Stale {
                metric,
                last_seen_ms,
                stale_after_minutes,
            } => Phrase::new("reason.rules.status.stale")
                .text("metric", metric)
                .time("time", *last_seen_ms)
                .int("limit", *stale_after_minutes),
            RuleStatus::Cooldown {
                until_ms,
                would_gpus,
            } => Phrase::new("reason.rules.status.cooldown")
                .time("time", *until_ms)
                .int("gpus", *would_gpus),
            RuleStatus::WithinTolerance {
                metric,
                value,
                target,
                tolerance,
            } => Phrase::new("reason.rules.status.withinTolerance")
                .text("metric", metric)
                .number("value", *value)
                .number("tolerance", tolerance * 100.0)
                .number("target", *target),
            RuleStatus::Tracking {
                metric,
                value,
                target,
                instant_gpus,
            } => Phrase::new("reason.rules.status.tracking")
                .text("metric", metric)
                .number("value", *value)
                .number("target", *target)
                .int("gpus", *instant_gpus),
            RuleStatus::TargetSustaining {
                metric,
                value,
                target,
                instant_gpus,
                minutes_met,
                minutes_needed,
            } => Phrase::new("reason.rules.status.targetSustaining")
                .text("metric", metric)
                .number("value", *value)
                .number("target", *target)
                .int("gpus", *instant_gpus)
                .int("met", *minutes_met)
                .int("needed", *minutes_needed),
            RuleStatus::ScheduleActive {
                bound,
                gpus,
                until_ms,
            } => Phrase::new("reason.rules.status.scheduleActive")
                .time("time", *until_ms)
                .phrase("bound", bound_phrase(*bound, *gpus)),
            RuleStatus::ScheduleInactive => Phrase::new("reason.rules.status.scheduleInactive"),
        }
    }
}

/// A budget's caps: "¥50.00/hour and ¥9,000.00/month"; `None` without a cap.
pub fn budget_caps(per_hour_fen: Option<i64>, per_month_fen: Option<i64>) -> Option<Arg> {
    let caps: Vec<Phrase> = per_hour_fen
        .map(|fen| Phrase::new("reason.rules.clamp.perHour").money("money", fen))
        .into_iter()
        .chain(
            per_month_fen.map(|fen| Phrase::new("reason.rules.clamp.perMonth").money("money", fen)),
        )
        .collect();
    (!caps.is_empty()).then(|| Arg::Join {
        parts: caps,
        separator: "reason.rules.clamp.and".into(),
    })
}

impl Clamp {
    /// A clamp that changed the count: "step cap of 2: 2 → 4".
    pub fn phrase(&self) -> Phrase {
        let (from, to) = self.counts();
        let with = |key: &str| Phrase::new(key).int("from", from).int("to", to);
        match self {
            Clamp::Schedule {
                schedule, bound, ..
            } => with("reason.rules.clamp.schedule")
                .text("schedule", schedule)
                .phrase("bound", bound_phrase(*bound, to)),
            Clamp::Min { .. } => with("reason.rules.clamp.min"),
            Clamp::Max { .. } => with("reason.rules.clamp.max"),
            Clamp::StepCap { step_gpus, .. } => {
                with("reason.rules.clamp.stepCap").int("step", *step_gpus)
            }
            Clamp::Budget {
                per_hour_fen,
                per_month_fen,
                ..
            } => match budget_caps(*per_hour_fen, *per_month_fen) {
                Some(caps) => with("reason.rules.clamp.budget").arg("caps", caps),
                None => with("reason.rules.clamp.budgetNoPrice"),
            },
            Clamp::Cooldown { rule, until_ms, .. } => with("reason.rules.clamp.cooldown")
                .text("rule", rule)
                .time("time", *until_ms),
            Clamp::Stabilization {
                rule,
                window_minutes,
                ..
            } => with("reason.rules.clamp.stabilization")
                .text("rule", rule)
                .int("window", *window_minutes),
            Clamp::PaidUnitHold {
                next_release_ms, ..
            } => with("reason.rules.clamp.paidUnitHold").time("time", *next_release_ms),
            Clamp::Deadband {
                surplus_gpus,
                deadband_gpus,
                window_minutes,
                ..
            } => with("reason.rules.clamp.deadband")
                .int("surplus", *surplus_gpus)
                .int("window", *window_minutes)
                .int("needed", *deadband_gpus),
            Clamp::DisruptionBudget {
                allowance_gpus,
                highest_gpus,
                window_minutes,
                ..
            } => with("reason.rules.clamp.disruptionBudget")
                .int("allowance", *allowance_gpus)
                .int("window", *window_minutes)
                .int("highest", *highest_gpus),
            Clamp::QuietWindow {
                busy_gpus,
                until_ms,
                ..
            } => with("reason.rules.clamp.quietWindow")
                .time("time", *until_ms)
                .int("busy", *busy_gpus),
            Clamp::Quota {
                team,
                model,
                quota_gpus,
                ..
            } => with("reason.rules.clamp.quota")
                .text("team", team)
                .text("model", model)
                .int("quota", *quota_gpus),
            Clamp::TeamSpend {
                team,
                per_month_fen,
                ..
            } => with("reason.rules.clamp.teamSpend")
                .text("team", team)
                .money("money", *per_month_fen),
        }
    }
}

impl DecisionReason {
    /// Why a decision is what it is: "out-at-80: 4 → 6", "no rule asks for a change".
    pub fn phrase(&self) -> Phrase {
        match self {
            DecisionReason::Rule {
                rule,
                from_gpus,
                to_gpus,
            } => Phrase::new("reason.rules.decision.rule")
                .text("rule", rule)
                .int("from", *from_gpus)
                .int("to", *to_gpus),
            DecisionReason::Bound { clamp } => clamp.phrase(),
            DecisionReason::Held { rule, clamp } => Phrase::new("reason.rules.decision.held")
                .text("rule", rule)
                .phrase("clamp", clamp.phrase()),
            DecisionReason::Waiting { rule, status } => {
                Phrase::new("reason.rules.decision.waiting")
                    .text("rule", rule)
                    .phrase("status", status.phrase())
            }
            DecisionReason::Steady => Phrase::new("reason.rules.decision.steady"),
        }
    }
}

impl ChangeReason {
    /// The activity log's words for the reasons worded here (the spot changes, which the
    /// notifications say too, and GPUs come up from warming); `None` for the others, which the UI still words itself.
    pub fn phrase(&self) -> Option<Phrase> {
        Some(match self {
            ChangeReason::Reclaimed {
                host,
                gpus,
                until_ms,
            } => Phrase::new("reason.change.reclaimed")
                .text("host", host)
                .gpus("gpus", *gpus)
                .time("time", *until_ms),
            ChangeReason::SpotPaused {
                model,
                region,
                interruptions,
                window_minutes,
                ..
            } => Phrase::new("reason.change.spotPaused")
                .text("model", model)
                .text("region", region)
                .int("interruptions", *interruptions)
                .int("window", *window_minutes),
            ChangeReason::SpotResumed {
                model,
                region,
                quiet_minutes,
            } => Phrase::new("reason.change.spotResumed")
                .text("model", model)
                .text("region", region)
                .int("quiet", *quiet_minutes),
            ChangeReason::Ready {
                hosts,
                gpus,
                warmed_s,
            } => Phrase::new("reason.change.ready")
                .gpus("gpus", *gpus)
                .text("hosts", hosts.join(", "))
                .int("seconds", i64::try_from(*warmed_s).unwrap_or(i64::MAX)),
            _ => return None,
        })
    }
}

// ---------- the reasons with their words, as the IPC carries them ----------

/// A rule's state and its words.
#[derive(Debug, Serialize, Type)]
pub struct WordedRuleStatus {
    #[serde(flatten)]
    pub status: RuleStatus,
    pub words: Phrase,
}

/// A clamp and its words.
#[derive(Debug, Serialize, Type)]
pub struct WordedClamp {
    #[serde(flatten)]
    pub clamp: Clamp,
    pub words: Phrase,
}

/// Clamps, each with its words.
pub type WordedClamps = Vec<WordedClamp>;

/// A decision's reason and its words.
#[derive(Debug, Serialize, Type)]
pub struct WordedDecisionReason {
    #[serde(flatten)]
    pub reason: DecisionReason,
    pub words: Phrase,
}

/// A change's reason and its words, where Rust words it (see [`ChangeReason::phrase`]).
#[derive(Debug, Serialize, Type)]
pub struct WordedChangeReason {
    #[serde(flatten)]
    pub reason: ChangeReason,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub words: Option<Phrase>,
}

/// Serializes a rule's state with its words.
pub fn worded_status<S: Serializer>(status: &RuleStatus, s: S) -> Result<S::Ok, S::Error> {
    WordedRuleStatus {
        status: status.clone(),
        words: status.phrase(),
    }
    .serialize(s)
}

/// Serializes a clamp with its words.
pub fn worded_clamp<S: Serializer>(clamp: &Clamp, s: S) -> Result<S::Ok, S::Error> {
    WordedClamp {
        clamp: clamp.clone(),
        words: clamp.phrase(),
    }
    .serialize(s)
}

/// Serializes clamps, each with its words.
pub fn worded_clamps<S: Serializer>(clamps: &[Clamp], s: S) -> Result<S::Ok, S::Error> {
    clamps
        .iter()
        .map(|clamp| WordedClamp {
            clamp: clamp.clone(),
            words: clamp.phrase(),
        })
        .collect::<Vec<_>>()
        .serialize(s)
}

/// Serializes a decision's reason with its words.
pub fn worded_decision_reason<S: Serializer>(
    reason: &DecisionReason,
    s: S,
) -> Result<S::Ok, S::Error> {
    WordedDecisionReason {
        reason: reason.clone(),
        words: reason.phrase(),
    }
    .serialize(s)
}

/// Serializes a change's reason with its words.
pub fn worded_change_reason<S: Serializer>(reason: &ChangeReason, s: S) -> Result<S::Ok, S::Error> {
    WordedChangeReason {
        reason: reason.clone(),
        words: reason.phrase(),
    }
    .serialize(s)
}

#[cfg(test)]
#[allow(clippy::too_many_lines)] // fixtures read as their list: no line budget
mod tests {
    use super::*;
    use crate::rules::{Comparison, Decision, RuleOutcome};

    fn decision(reason: DecisionReason, status: RuleStatus) -> Decision {
        Decision {
            at_ms: 0,
            current_gpus: 2,
            rules: vec![RuleOutcome {
                rule: "out".into(),
                recommended_gpus: None,
                status,
            }],
            recommended_gpus: 4,
            clamps: vec![Clamp::Min {
                from_gpus: 0,
                to_gpus: 1,
            }],
            desired_gpus: 4,
            cost_delta_per_hour_fen: None,
            reason,
        }
    }

    #[test]
    fn each_reason_travels_with_its_words_and_reads_back_without_them() {
        let fired = RuleStatus::Fired {
            metric: "gpu_util".into(),
            value: 91.5,
            comparison: Comparison::AtLeast,
            threshold: 80.0,
            minutes: 3,
            action: Action::Set { gpus: 4 },
        };
        for (reason, status) in [
            (DecisionReason::Steady, RuleStatus::ScheduleInactive),
            (
                DecisionReason::Waiting {
                    rule: "out".into(),
                    status: fired.clone(),
                },
                fired.clone(),
            ),
        ] {
            let made = decision(reason, status);
            let json = serde_json::to_value(&made).unwrap();
            assert_eq!(
                json["reason"]["words"],
                serde_json::to_value(made.reason.phrase()).unwrap()
            );
            assert_eq!(
                json["rules"][0]["status"]["words"]["key"],
                made.rules[0].status.phrase().key.as_str()
            );
            assert_eq!(json["clamps"][0]["words"]["key"], "reason.rules.clamp.min");
            let read: Decision = serde_json::from_value(json).unwrap();
            assert_eq!(read, made, "a stored decision reads back as it was");
        }
        let words = fired.phrase();
        assert_eq!(words.key, "reason.rules.status.fired");
        assert_eq!(
            words.keys(),
            ["reason.rules.status.fired", "reason.rules.actionSet"]
        );
    }

    /// One of every rule state, clamp, decision reason and spot change, as the UI receives
    /// them (with their words).
    fn samples() -> serde_json::Value {
        let fired = RuleStatus::Fired {
            metric: "gpu_util".into(),
            value: 91.5,
            comparison: Comparison::AtLeast,
            threshold: 80.0,
            minutes: 3,
            action: Action::AddPct { pct: 20.0 },
        };
        let statuses = vec![
            fired.clone(),
            RuleStatus::Sustaining {
                metric: "gpu_util".into(),
                value: 85.0,
                comparison: Comparison::AtLeast,
                threshold: 80.0,
                minutes_met: 2,
                minutes_needed: 3,
            },
            RuleStatus::NotMet {
                metric: "queue_len".into(),
                value: 3.0,
                comparison: Comparison::Above,
                threshold: 10.0,
            },
            RuleStatus::NoData {
                metric: "users".into(),
            },
            RuleStatus::Stale {
                metric: "users".into(),
                last_seen_ms: 0,
                stale_after_minutes: 2,
            },
            RuleStatus::Cooldown {
                until_ms: 0,
                would_gpus: 5,
            },
            RuleStatus::WithinTolerance {
                metric: "gpu_util".into(),
                value: 62.0,
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
                metric: "busy_gpus".into(),
                value: 5.0,
                target: 100.0,
                instant_gpus: 5,
                minutes_met: 1,
                minutes_needed: 3,
            },
            RuleStatus::ScheduleActive {
                bound: BoundKind::Floor,
                gpus: 4,
                until_ms: 0,
            },
            RuleStatus::ScheduleInactive,
        ];
        let clamps = vec![
            Clamp::Schedule {
                schedule: "mornings".into(),
                bound: BoundKind::Floor,
                from_gpus: 2,
                to_gpus: 4,
            },
            Clamp::Min {
                from_gpus: 0,
                to_gpus: 1,
            },
            Clamp::Max {
                from_gpus: 12,
                to_gpus: 8,
            },
            Clamp::StepCap {
                from_gpus: 8,
                to_gpus: 6,
                step_gpus: 2,
            },
            Clamp::Budget {
                from_gpus: 8,
                to_gpus: 5,
                per_hour_fen: Some(12_000),
                per_month_fen: Some(5_000_000),
            },
            Clamp::Budget {
                from_gpus: 8,
                to_gpus: 4,
                per_hour_fen: None,
                per_month_fen: None,
            },
            Clamp::Cooldown {
                rule: "out".into(),
                from_gpus: 6,
                to_gpus: 4,
                until_ms: 0,
            },
            Clamp::Stabilization {
                rule: "util-60".into(),
                from_gpus: 2,
                to_gpus: 4,
                window_minutes: 5,
            },
            Clamp::PaidUnitHold {
                from_gpus: 2,
                to_gpus: 4,
                next_release_ms: 0,
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
                until_ms: 0,
            },
            Clamp::Quota {
                from_gpus: 8,
                to_gpus: 4,
                team: "ml".into(),
                model: "A100".into(),
                quota_gpus: 6,
            },
            Clamp::TeamSpend {
                from_gpus: 8,
                to_gpus: 3,
                team: "ml".into(),
                per_month_fen: 5_000_000,
            },
        ];
        let reasons = [
            DecisionReason::Rule {
                rule: "out-at-80".into(),
                from_gpus: 4,
                to_gpus: 6,
            },
            DecisionReason::Bound {
                clamp: clamps[1].clone(),
            },
            DecisionReason::Held {
                rule: "out".into(),
                clamp: clamps[2].clone(),
            },
            DecisionReason::Waiting {
                rule: "out".into(),
                status: statuses[1].clone(),
            },
            DecisionReason::Steady,
        ];
        // 11:17 and 10:47 UTC on 2026-01-05.
        let changes = [
            ChangeReason::Ready {
                hosts: vec!["gpu-a".into(), "gpu-b".into()],
                gpus: 3,
                warmed_s: 5,
            },
            ChangeReason::SpotPaused {
                model: "A100".into(),
                region: "cn-east".into(),
                interruptions: 3,
                window_minutes: 30,
                until_ms: 1_767_611_820_000,
            },
            ChangeReason::SpotResumed {
                model: "A100".into(),
                region: "cn-east".into(),
                quiet_minutes: 20,
            },
            ChangeReason::Reclaimed {
                host: "gpu-a".into(),
                gpus: 1,
                until_ms: 1_767_610_020_000,
            },
        ];
        let status = |s: &RuleStatus| WordedRuleStatus {
            status: s.clone(),
            words: s.phrase(),
        };
        let clamp = |c: &Clamp| WordedClamp {
            clamp: c.clone(),
            words: c.phrase(),
        };
        let reason = |r: &DecisionReason| WordedDecisionReason {
            reason: r.clone(),
            words: r.phrase(),
        };
        let change = |c: &ChangeReason| WordedChangeReason {
            reason: c.clone(),
            words: c.phrase(),
        };
        serde_json::json!({
            "statuses": statuses.iter().map(status).collect::<Vec<_>>(),
            "clamps": clamps.iter().map(clamp).collect::<Vec<_>>(),
            "reasons": reasons.iter().map(reason).collect::<Vec<_>>(),
            "changes": changes.iter().map(change).collect::<Vec<_>>(),
        })
    }

    /// The UI's tests read the reasons as Rust words them, from this file; it fails when the
    /// file no longer matches (`EBB_BLESS=1` writes it).
    #[test]
    fn the_ui_s_fixture_of_worded_reasons_is_fresh() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../ui/src/fixtures/worded-reasons.json");
        let fresh = serde_json::to_string_pretty(&samples()).unwrap() + "\n";
        if std::env::var_os("EBB_BLESS").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &fresh).unwrap();
            return;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == fresh,
            "ui/src/fixtures/worded-reasons.json is stale: run with EBB_BLESS=1"
        );
    }
}
