//! Lint: each warning triggered by a case, naming the rule, the field and the line; the
//! examples lint clean.

use super::decide::hourly;
use ebb_rules::lint::{LintContext, lint_file};
use ebb_wire::rules::LintProblem;

const LIMITS: &str = "[limits]\nmin_gpus = 1\nmax_gpus = 50\n";
const TEN: &str = "[limits]\nmin_gpus = 10\nmax_gpus = 50\n";

fn out(value: f64, action: &str, cooldown: u32) -> String {
    format!(
        "[[threshold]]\nname = \"out\"\nmetric = \"gpu_util\"\nop = \">=\"\nvalue = {value}\naction = \"{action}\"\ncooldown_minutes = {cooldown}\n"
    )
}

fn scale_in(value: f64, action: &str) -> String {
    format!(
        "[[threshold]]\nname = \"in\"\nmetric = \"gpu_util\"\nop = \"<=\"\nvalue = {value}\naction = \"{action}\"\ncooldown_minutes = 5\n"
    )
}

/// The only warning of `text`: (rule, field, line, problem).
fn one(
    text: &str,
    context: &LintContext<'_>,
) -> (Option<String>, String, Option<u32>, LintProblem) {
    let report = lint_file("rules.toml", text, context);
    assert!(report.valid, "{:?}", report.errors);
    assert_eq!(report.warnings.len(), 1, "{text}\n{:#?}", report.warnings);
    let w = report.warnings.into_iter().next().unwrap();
    (w.rule, w.field, w.line, w.problem)
}

#[test]
fn the_examples_lint_clean() {
    for text in [
        include_str!("../../examples/seed-80-30.toml"),
        include_str!("../../examples/hpa.toml"),
        include_str!("../../examples/festival.toml"),
    ] {
        let report = lint_file("x.toml", text, &LintContext::default());
        assert!(report.valid && report.warnings.is_empty(), "{report:#?}");
    }
}

#[test]
fn a_scale_out_that_lands_below_the_scale_in_threshold_flaps() {
    // +100% from 80% lands at 40%, at or below 45%: back in at once. (From 10 GPUs: at 1
    // or 2, any step of one GPU is a big share, and lint says so too.)
    let text = format!("{TEN}{}{}", out(80.0, "+100%", 5), scale_in(45.0, "-10%"));
    let (rule, field, line, problem) = one(&text, &LintContext::default());
    assert_eq!(rule.as_deref(), Some("out"));
    assert_eq!(field, "threshold[0].action");
    assert_eq!(line, Some(9));
    assert!(matches!(
        problem,
        LintProblem::Flapping { after_value, .. } if (after_value - 40.0).abs() < 1e-9
    ));
    assert!(problem.to_string().contains("flapping"));
}

#[test]
fn a_scale_in_that_lands_above_the_scale_out_threshold_flaps() {
    // −50% from 45% lands at 90%, past 80%.
    let text = format!("{TEN}{}{}", out(80.0, "+10%", 5), scale_in(45.0, "-50%"));
    let (rule, field, _, problem) = one(&text, &LintContext::default());
    assert_eq!(rule.as_deref(), Some("in"));
    assert_eq!(field, "threshold[1].action");
    assert!(matches!(problem, LintProblem::Flapping { .. }));
}

#[test]
fn at_one_gpu_any_step_flaps() {
    let text = format!("{LIMITS}{}{}", out(80.0, "+10%", 5), scale_in(45.0, "-10%"));
    let report = lint_file("rules.toml", &text, &LintContext::default());
    assert!(
        report
            .warnings
            .iter()
            .any(|w| matches!(w.problem, LintProblem::Flapping { at_gpus: 1, .. }))
    );
}

#[test]
fn a_cooldown_shorter_than_the_warmup() {
    let text = format!("{LIMITS}{}", out(80.0, "+2", 3));
    let (rule, field, line, problem) = one(&text, &LintContext::default());
    assert_eq!(rule.as_deref(), Some("out"));
    assert_eq!(field, "threshold[0].cooldown_minutes");
    assert_eq!(line, Some(10));
    assert_eq!(
        problem,
        LintProblem::CooldownShorterThanWarmup {
            cooldown_minutes: 3,
            warmup_minutes: 5
        }
    );
}

#[test]
fn overlapping_bands() {
    let text = format!("{LIMITS}{}{}", out(60.0, "+1", 5), scale_in(70.0, "-1"));
    let (rule, field, _, problem) = one(&text, &LintContext::default());
    assert_eq!(rule.as_deref(), Some("in"));
    assert_eq!(field, "threshold[1].value");
    assert!(matches!(problem, LintProblem::BandsOverlap { .. }));
}

#[test]
fn a_threshold_utilization_never_reaches() {
    let text = format!(
        "{LIMITS}[[threshold]]\nname = \"never\"\nmetric = \"gpu_util\"\nop = \">\"\nvalue = 100\naction = \"+1\"\ncooldown_minutes = 5\n"
    );
    let (rule, field, line, problem) = one(&text, &LintContext::default());
    assert_eq!(rule.as_deref(), Some("never"));
    assert_eq!(field, "threshold[0].value");
    assert_eq!(line, Some(8));
    assert!(matches!(problem, LintProblem::Unreachable { .. }));
}

#[test]
fn a_schedule_that_fights_min_or_max() {
    let text = format!(
        "{LIMITS}[[schedule]]\nname = \"festival\"\nstart = 2025-11-08T00:00:00\nend = 2025-11-12T00:00:00\ntime_zone = \"Asia/Shanghai\"\nfloor = 70\n"
    );
    let (rule, field, line, problem) = one(&text, &LintContext::default());
    assert_eq!(rule.as_deref(), Some("festival"));
    assert_eq!(field, "schedule[0].floor");
    assert_eq!(line, Some(9));
    assert!(matches!(
        problem,
        LintProblem::ScheduleFightsLimits {
            gpus: 70,
            max_gpus: 50,
            ..
        }
    ));
}

#[test]
fn a_schedule_or_a_min_over_budget() {
    // ¥12.50/h: ¥250/h pays for 20.
    let pricing = hourly();
    let context = LintContext {
        pricing: Some(&pricing),
        ..LintContext::default()
    };
    let text = "[limits]\nmax_gpus = 50\nbudget_per_hour = 250\n[[schedule]]\nname = \"peak\"\ncron = \"0 19 * * *\"\nduration_minutes = 180\ntime_zone = \"Asia/Shanghai\"\nfloor = 30\n";
    let (rule, field, _, problem) = one(text, &context);
    assert_eq!(rule.as_deref(), Some("peak"));
    assert_eq!(field, "schedule[0].floor");
    assert_eq!(
        problem,
        LintProblem::OverBudget {
            gpus: 30,
            budget_gpus: 20
        }
    );
    let text = "[limits]\nmin_gpus = 25\nmax_gpus = 50\nbudget_per_hour = 250\n";
    let (rule, field, line, _) = one(text, &context);
    assert_eq!(
        (rule, field.as_str(), line),
        (None, "limits.min_gpus", Some(2))
    );
}

#[test]
fn a_set_outside_min_and_max() {
    let text = format!(
        "{LIMITS}[[metric]]\nname = \"users\"\nstale_after_minutes = 5\n[[threshold]]\nname = \"users-100k\"\nmetric = \"users\"\nop = \">\"\nvalue = 100000\naction = \"set 80\"\ncooldown_minutes = 5\n"
    );
    let (rule, field, _, problem) = one(&text, &LintContext::default());
    assert_eq!(rule.as_deref(), Some("users-100k"));
    assert_eq!(field, "threshold[0].action");
    assert!(matches!(
        problem,
        LintProblem::SetOutsideLimits { gpus: 80, .. }
    ));
}

#[test]
fn a_target_unreachable_within_max_at_the_peak() {
    let text =
        format!("{LIMITS}[[target]]\nname = \"demand\"\nmetric = \"busy_gpus\"\ntarget = 80\n");
    let context = LintContext {
        peak_busy_gpus: Some(45.0),
        ..LintContext::default()
    };
    let (rule, field, _, problem) = one(&text, &context);
    assert_eq!(rule.as_deref(), Some("demand"));
    assert_eq!(field, "target[0].target");
    assert_eq!(
        problem,
        LintProblem::TargetUnreachable {
            peak_value: 45.0,
            needed_gpus: 57,
            max_gpus: 50
        }
    );
}

#[test]
fn an_invalid_file_reports_its_errors_not_warnings() {
    let report = lint_file(
        "bad.toml",
        "[limits]\nmax_gpus = 0\n",
        &LintContext::default(),
    );
    assert!(!report.valid);
    assert_eq!(report.errors[0].line, Some(2));
    assert_eq!(report.errors[0].field, "limits.max_gpus");
}

#[test]
fn force_on_an_hourly_overlay_pays_each_hour_again() {
    let pricing = hourly();
    let context = LintContext {
        pricing: Some(&pricing),
        ..LintContext::default()
    };
    let text = "[limits]\nmax_gpus = 8\n[scale_in]\nforce = true\n";
    let (rule, field, line, problem) = one(text, &context);
    assert_eq!(rule, None);
    assert_eq!((field.as_str(), line), ("scale_in.force", Some(4)));
    assert_eq!(
        problem,
        LintProblem::ForceReleasePaysAgain { unit_hours: 1 }
    );
    assert!(
        problem.to_string().contains("within the hour pays again"),
        "{problem}"
    );
    // Without force, nothing to say.
    let report = lint_file("p.toml", "[limits]\nmax_gpus = 8\n", &context);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

#[test]
fn a_set_without_a_cooldown_is_not_a_short_cooldown() {
    // Firing again before its GPUs are ready asks for the same count: nothing compounds.
    let text = format!("{LIMITS}{}", out(80.0, "set 4", 0));
    let report = lint_file("rules.toml", &text, &LintContext::default());
    assert!(report.valid, "{:?}", report.errors);
    assert!(
        !report
            .warnings
            .iter()
            .any(|w| matches!(w.problem, LintProblem::CooldownShorterThanWarmup { .. })),
        "{report:?}"
    );
}
