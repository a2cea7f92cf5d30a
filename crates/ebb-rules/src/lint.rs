//! Lint, pure: warnings about a valid rule set, run before it is saved, each naming the
//! rule and the field. It will run as written; these say where it probably does not do
//! what was meant:
//!
//! - **flapping**: a scale-out by k at N GPUs moves a utilization from its threshold U to
//!   about U·N/(N+k); at or past a scale-in threshold on the same metric the pool scales
//!   right back (and the same for a scale-in moving it to L·N/(N−k) at or past a
//!   scale-out threshold). Checked at every count from min to max (up to 1,000);
//! - **cooldown shorter than the warmup**: a scale-out rule that adds GPUs fires again before
//!   the GPUs it ordered are ready and show in the metric, and adds more (a `set N` firing
//!   again asks for the same N);
//! - **bands that overlap** (a value both scales out and in) or a threshold **that cannot be
//!   reached** (utilization beyond 0–100%);
//! - **a schedule that fights min/max or the budget**, a min the budget cannot pay for, a
//!   `set N` outside min/max;
//! - **a target unreachable within max** at the expected peak, when one is given;
//! - **`force = true` on a pool that pays by the started unit**: every release and re-rent
//!   within the unit pays it again.

use crate::decide::{Pricing, apply_action, ceil_gpus};
use crate::model::{self, RuleSet};
use ebb_wire::rules::{
    Action, BoundKind, Comparison, LintProblem, LintReport, LintWarning, MetricRef, ThresholdRule,
};

/// What lint knows beyond the rules.
#[derive(Debug, Clone, Copy)]
pub struct LintContext<'a> {
    /// Minutes from ordering a GPU to its being ready (the replay model's default: 5).
    pub warmup_minutes: u32,
    /// The pool's price, for budget checks.
    pub pricing: Option<&'a Pricing>,
    /// The busy GPUs expected at the peak, for target checks.
    pub peak_busy_gpus: Option<f64>,
}

impl Default for LintContext<'_> {
    fn default() -> Self {
        LintContext {
            warmup_minutes: 5,
            pricing: None,
            peak_busy_gpus: None,
        }
    }
}

fn is_out(comparison: Comparison) -> bool {
    matches!(comparison, Comparison::Above | Comparison::AtLeast)
}

fn is_util(metric: &MetricRef) -> bool {
    matches!(metric, MetricRef::GpuUtil | MetricRef::MemUtil)
}

fn grows(action: Action) -> bool {
    matches!(action, Action::AddGpus { .. } | Action::AddPct { .. })
}

fn shrinks(action: Action) -> bool {
    matches!(action, Action::RemoveGpus { .. } | Action::RemovePct { .. })
}

/// Every warning about `rules`.
#[allow(clippy::too_many_lines, reason = "one lint check after another")]
pub fn lint(rules: &RuleSet, context: &LintContext<'_>) -> Vec<LintWarning> {
    let spec = rules.spec();
    let limits = &spec.limits;
    let mut warnings = Vec::new();
    let mut warn = |rule: Option<&str>, field: String, problem: LintProblem| {
        warnings.push(LintWarning {
            rule: rule.map(str::to_string),
            field,
            line: None,
            problem,
        });
    };
    let thresholds = &spec.thresholds;
    let counts = limits.min_gpus.max(1)..=limits.max_gpus.min(1_000);

    for (i, rule) in thresholds.iter().enumerate() {
        let at = |field: &str| format!("threshold[{i}].{field}");
        if is_util(&rule.metric) {
            let unreachable = match rule.comparison {
                Comparison::Above => rule.threshold >= 100.0,
                Comparison::AtLeast => rule.threshold > 100.0,
                Comparison::Below => rule.threshold <= 0.0,
                Comparison::AtMost => rule.threshold < 0.0,
            };
            if unreachable {
                warn(
                    Some(&rule.name),
                    at("value"),
                    LintProblem::Unreachable {
                        metric: rule.metric.name().to_string(),
                        comparison: rule.comparison,
                        threshold: rule.threshold,
                    },
                );
            }
        }
        // A `set N` firing again asks for the same N: only a rule that adds compounds.
        if grows(rule.action) && rule.cooldown_minutes < context.warmup_minutes {
            warn(
                Some(&rule.name),
                at("cooldown_minutes"),
                LintProblem::CooldownShorterThanWarmup {
                    cooldown_minutes: rule.cooldown_minutes,
                    warmup_minutes: context.warmup_minutes,
                },
            );
        }
        if let Action::Set { gpus } = rule.action
            && (gpus > limits.max_gpus || gpus < limits.min_gpus)
        {
            warn(
                Some(&rule.name),
                at("action"),
                LintProblem::SetOutsideLimits {
                    gpus,
                    min_gpus: limits.min_gpus,
                    max_gpus: limits.max_gpus,
                },
            );
        }
        // Pairs on the same utilization metric: this rule out, the other in.
        if !(is_util(&rule.metric) && is_out(rule.comparison) && grows(rule.action)) {
            continue;
        }
        for (j, other) in thresholds.iter().enumerate() {
            if other.metric != rule.metric || is_out(other.comparison) || !shrinks(other.action) {
                continue;
            }
            if other.threshold >= rule.threshold {
                warn(
                    Some(&other.name),
                    format!("threshold[{j}].value"),
                    LintProblem::BandsOverlap {
                        other_rule: rule.name.clone(),
                        out_threshold: rule.threshold,
                        in_threshold: other.threshold,
                    },
                );
                continue;
            }
            if let Some(problem) = flap(rule, other, counts.clone(), true) {
                warn(Some(&rule.name), at("action"), problem);
            }
            if let Some(problem) = flap(other, rule, counts.clone(), false) {
                warn(Some(&other.name), format!("threshold[{j}].action"), problem);
            }
        }
    }

    if spec.scale_in.force
        && let Some(pricing) = context.pricing
        && limits.max_gpus > pricing.plan.base_gpus
    {
        warn(
            None,
            "scale_in.force".into(),
            LintProblem::ForceReleasePaysAgain {
                unit_hours: pricing.plan.overlay.unit_hours(),
            },
        );
    }

    let budget_gpus = context
        .pricing
        .and_then(|pricing| rules.budget_gpus(Some(pricing), 0));
    if let Some(budget_gpus) = budget_gpus
        && limits.min_gpus > budget_gpus
    {
        warn(
            None,
            "limits.min_gpus".into(),
            LintProblem::OverBudget {
                gpus: limits.min_gpus,
                budget_gpus,
            },
        );
    }
    for (i, schedule) in spec.schedules.iter().enumerate() {
        let field = format!("schedule[{i}].{}", schedule.bound.key());
        let fights = match schedule.bound {
            BoundKind::Floor => schedule.gpus > limits.max_gpus,
            BoundKind::Ceiling => schedule.gpus < limits.min_gpus,
            BoundKind::Exact => schedule.gpus > limits.max_gpus || schedule.gpus < limits.min_gpus,
        };
        if fights {
            warn(
                Some(&schedule.name),
                field.clone(),
                LintProblem::ScheduleFightsLimits {
                    bound: schedule.bound,
                    gpus: schedule.gpus,
                    min_gpus: limits.min_gpus,
                    max_gpus: limits.max_gpus,
                },
            );
        }
        if let Some(budget_gpus) = budget_gpus
            && schedule.bound != BoundKind::Ceiling
            && schedule.gpus > budget_gpus
        {
            warn(
                Some(&schedule.name),
                field,
                LintProblem::OverBudget {
                    gpus: schedule.gpus,
                    budget_gpus,
                },
            );
        }
    }

    if let Some(peak) = context.peak_busy_gpus {
        for (i, rule) in spec.targets.iter().enumerate() {
            // Busy GPUs at a share per GPU, or a utilization mean: both need peak ÷ share.
            if !matches!(
                rule.metric,
                MetricRef::BusyGpus | MetricRef::GpuUtil | MetricRef::MemUtil
            ) {
                continue;
            }
            let needed = ceil_gpus(peak * 100.0 / rule.target);
            if needed > limits.max_gpus {
                warn(
                    Some(&rule.name),
                    format!("target[{i}].target"),
                    LintProblem::TargetUnreachable {
                        peak_value: peak,
                        needed_gpus: needed,
                        max_gpus: limits.max_gpus,
                    },
                );
            }
        }
    }
    warnings
}

/// Whether `rule` acting at some count moves its metric from its threshold past `other`'s.
fn flap(
    rule: &ThresholdRule,
    other: &ThresholdRule,
    counts: std::ops::RangeInclusive<u32>,
    out: bool,
) -> Option<LintProblem> {
    for n in counts {
        let after_gpus = apply_action(rule.action, n);
        if after_gpus == 0 || after_gpus == n {
            continue;
        }
        let after = rule.threshold * f64::from(n) / f64::from(after_gpus);
        let crosses = if out {
            other.comparison.holds(after, other.threshold)
        } else {
            other.comparison.holds(after.min(100.0), other.threshold)
        };
        if crosses {
            return Some(LintProblem::Flapping {
                other_rule: other.name.clone(),
                at_gpus: n,
                from_value: rule.threshold,
                after_value: after,
                other_threshold: other.threshold,
            });
        }
    }
    None
}

/// Parses and lints a rule file: its problems if invalid, else its warnings, with lines.
pub fn lint_file(file: &str, text: &str, context: &LintContext<'_>) -> LintReport {
    lint_source(file, text, context).0
}

/// [`lint_file`], with the rule set when the file is valid (parsed once, for a caller that
/// goes on to use it).
pub fn lint_source(
    file: &str,
    text: &str,
    context: &LintContext<'_>,
) -> (LintReport, Option<RuleSet>) {
    match model::parse(text) {
        Err(error) => (
            LintReport {
                file: file.to_string(),
                valid: false,
                errors: error.problems,
                warnings: Vec::new(),
            },
            None,
        ),
        Ok(rules) => {
            let report = LintReport {
                file: file.to_string(),
                valid: true,
                errors: Vec::new(),
                warnings: lint(&rules, context)
                    .into_iter()
                    .map(|mut warning| {
                        warning.line = model::line_of_field(text, &warning.field);
                        warning
                    })
                    .collect(),
            };
            (report, Some(rules))
        }
    }
}
