//! The rule file: the examples parse, and every problem names its line and field.

use ebb_rules::model::{self, parse};
use ebb_wire::rules::{Action, BoundKind, Comparison, MetricRef, QuietWindow, ScheduleWhen};

const EXAMPLES: [(&str, &str); 3] = [
    ("seed-80-30", include_str!("../../examples/seed-80-30.toml")),
    ("hpa", include_str!("../../examples/hpa.toml")),
    ("festival", include_str!("../../examples/festival.toml")),
];

#[test]
fn the_examples_parse() {
    for (name, text) in EXAMPLES {
        let rules = parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(rules.spec().limits.max_gpus > 0, "{name}");
    }
}

#[test]
fn the_seed_rule_reads_as_written() {
    let rules = parse(EXAMPLES[0].1).unwrap();
    let spec = rules.spec();
    assert_eq!(spec.thresholds.len(), 2);
    let out = &spec.thresholds[0];
    assert_eq!(out.metric, MetricRef::GpuUtil);
    assert_eq!(out.comparison, Comparison::AtLeast);
    assert_eq!(out.threshold, 80.0);
    assert_eq!(out.for_minutes, 3);
    assert_eq!(out.action, Action::AddPct { pct: 20.0 });
    assert_eq!(out.cooldown_minutes, 5);
    let scale_in = &spec.thresholds[1];
    assert_eq!(scale_in.comparison, Comparison::AtMost);
    assert_eq!(scale_in.for_minutes, 10);
    assert_eq!(scale_in.action, Action::RemovePct { pct: 30.0 });
    assert!(spec.scale_in.force);
}

#[test]
fn hpa_defaults_fill_a_bare_target() {
    let rules = parse(
        "[limits]\nmax_gpus = 10\n[[target]]\nname = \"t\"\nmetric = \"gpu_util\"\ntarget = 60\n",
    )
    .unwrap();
    let target = &rules.spec().targets[0];
    assert_eq!(target.tolerance, model::HPA_TOLERANCE);
    assert_eq!(target.tolerance, 0.1);
    assert_eq!(target.scale_in_stabilization_minutes, 5);
    assert_eq!(target.scale_out_sustain_minutes, 0);
    assert_eq!(target.overload_gpus, None);
    // Paid-unit release is the default; force is off.
    assert!(!rules.spec().scale_in.force);
    assert_eq!(rules.spec().scale_in.release_window_minutes, 5);
}

#[test]
fn schedules_budget_and_custom_metrics_read_as_written() {
    let rules = parse(EXAMPLES[2].1).unwrap();
    let spec = rules.spec();
    assert_eq!(spec.limits.budget.per_hour_fen, Some(200_000));
    assert_eq!(spec.metrics[0].name, "latency_ms");
    assert_eq!(spec.metrics[0].stale_after_minutes, 3);
    assert_eq!(
        spec.thresholds[0].metric,
        MetricRef::Custom {
            name: "latency_ms".into()
        }
    );
    assert_eq!(
        spec.schedules[0].when,
        ScheduleWhen::Window {
            start: "2025-11-08T00:00:00".into(),
            end: "2025-11-12T00:00:00".into()
        }
    );
    assert_eq!(spec.schedules[0].bound, BoundKind::Floor);
    assert_eq!(spec.schedules[0].gpus, 70);
    assert_eq!(
        spec.schedules[1].when,
        ScheduleWhen::Cron {
            cron: "0 1 * * *".into(),
            duration_minutes: 120
        }
    );
}

#[test]
fn actions_parse_in_every_form() {
    let cases = [
        ("+20%", Action::AddPct { pct: 20.0 }),
        ("-30%", Action::RemovePct { pct: 30.0 }),
        ("+10", Action::AddGpus { gpus: 10 }),
        ("-2", Action::RemoveGpus { gpus: 2 }),
        ("set 20", Action::Set { gpus: 20 }),
        (" + 12.5 % ", Action::AddPct { pct: 12.5 }),
    ];
    for (text, action) in cases {
        assert_eq!(model::parse_action(text), Ok(action), "{text}");
    }
    for bad in ["20%", "+0", "-150%", "set", "set x", "double", "+-3", ""] {
        assert!(model::parse_action(bad).is_err(), "{bad}");
    }
}

/// A valid file with one line replaced: (line number in the result, field, words).
const BASE: &str = r#"[limits]
min_gpus = 1
max_gpus = 20

[[metric]]
name = "users"
stale_after_minutes = 5

[[threshold]]
name = "hot"
metric = "gpu_util"
op = ">="
value = 80
for_minutes = 3
action = "+20%"

[[target]]
name = "demand"
metric = "busy_gpus"
target = 100

[[schedule]]
name = "night"
cron = "0 1 * * *"
duration_minutes = 60
time_zone = "Asia/Shanghai"
ceiling = 5
"#;

fn with(old: &str, new: &str) -> String {
    assert!(BASE.contains(old), "{old}");
    BASE.replacen(old, new, 1)
}

#[test]
fn the_base_case_is_valid() {
    parse(BASE).unwrap();
}

#[test]
fn every_problem_names_its_line_and_field() {
    let cases: Vec<(String, u32, &str, &str)> = vec![
        (
            with("max_gpus = 20", "max_gpus = 0"),
            3,
            "limits.max_gpus",
            "at least 1",
        ),
        (
            with("min_gpus = 1", "min_gpus = 30"),
            2,
            "limits.min_gpus",
            "more than max_gpus",
        ),
        (
            with("action = \"+20%\"", "action = \"double\""),
            15,
            "threshold[0].action",
            "not an action",
        ),
        (
            with("op = \">=\"", "op = \"=>\""),
            12,
            "threshold[0].op",
            "not a comparison",
        ),
        (
            with("metric = \"gpu_util\"", "metric = \"gpu_utl\""),
            11,
            "threshold[0].metric",
            "unknown metric `gpu_utl`",
        ),
        (
            with("for_minutes = 3", "for_minutes = 0"),
            14,
            "threshold[0].for_minutes",
            "at least 1",
        ),
        (
            with("target = 100", "target = 120"),
            20,
            "target[0].target",
            "more than 100%",
        ),
        (
            with("cron = \"0 1 * * *\"", "cron = \"0 25 * * *\""),
            24,
            "schedule[0].cron",
            "not a cron expression",
        ),
        (
            with(
                "time_zone = \"Asia/Shanghai\"",
                "time_zone = \"Mars/Olympus\"",
            ),
            26,
            "schedule[0].time_zone",
            "not an IANA time zone",
        ),
        (
            with("name = \"demand\"", "name = \"hot\""),
            18,
            "target[0].name",
            "already the name of threshold[0]",
        ),
        (
            with("stale_after_minutes = 5", "stale_after_minutes = 0"),
            7,
            "metric[0].stale_after_minutes",
            "at least 1 minute",
        ),
        (
            with("max_gpus = 20", "max_gpus = 20\nbudget_per_hour = 1.234"),
            4,
            "limits.budget_per_hour",
            "more than two decimals",
        ),
        // Type and unknown-key errors come from the TOML reader, with their line.
        (
            with("action = \"+20%\"", "actoin = \"+20%\""),
            15,
            "threshold[0].actoin",
            "unknown field `actoin`",
        ),
        (
            with("min_gpus = 1", "min_gpus = -1"),
            2,
            "limits.min_gpus",
            "",
        ),
        (
            with("ceiling = 5", "ceiling = 5\nfloor = 3"),
            22,
            "schedule[0]",
            "exactly one of `floor`, `ceiling` or `exact`",
        ),
        // A count past what is accepted is named as the file names the count.
        (
            with("ceiling = 5", "ceiling = 5000000"),
            27,
            "schedule[0].ceiling",
            "more than the",
        ),
    ];
    for (text, line, field, words) in cases {
        let error = parse(&text).expect_err(field);
        let problem = &error.problems[0];
        assert_eq!(problem.field, field, "{error}");
        assert_eq!(problem.line, Some(line), "{field}: {error}");
        assert!(problem.message.contains(words), "{field}: {error}");
        assert!(
            error
                .to_string()
                .starts_with(&format!("line {line}: {field}")),
            "{error}"
        );
    }
}

#[test]
fn a_file_without_limits_or_with_bad_toml_is_refused() {
    let error = parse("[[threshold]]\n").unwrap_err();
    assert_eq!(error.problems[0].line, Some(1), "{error}");
    let error = parse("[limits\nmax_gpus = 3\n").unwrap_err();
    assert_eq!(error.problems[0].line, Some(1), "{error}");
    let error = parse("pool = \"p\"\n").unwrap_err();
    assert_eq!(error.problems[0].field, "limits", "{error}");
}

#[test]
fn every_problem_is_reported_at_once() {
    let text = with("max_gpus = 20", "max_gpus = 0").replace("\"+20%\"", "\"x\"");
    let error = parse(&text).unwrap_err();
    let fields: Vec<&str> = error.problems.iter().map(|p| p.field.as_str()).collect();
    assert!(fields.contains(&"limits.max_gpus"), "{error}");
    assert!(fields.contains(&"threshold[0].action"), "{error}");
}

#[test]
fn windows_are_local_times_and_must_end_after_they_start() {
    let window = |start: &str, end: &str| {
        format!(
            "[limits]\nmax_gpus = 9\n[[schedule]]\nname = \"w\"\nstart = {start}\nend = {end}\ntime_zone = \"Asia/Shanghai\"\nexact = 3\n"
        )
    };
    parse(&window("2025-11-08T00:00:00", "2025-11-09T00:00:00")).unwrap();
    parse(&window("2025-11-08", "2025-11-09")).unwrap();
    let error = parse(&window("2025-11-09T00:00:00", "2025-11-08T00:00:00")).unwrap_err();
    assert_eq!(error.problems[0].field, "schedule[0].end");
    assert_eq!(error.problems[0].line, Some(6));
    let error = parse(&window("2025-11-08T00:00:00+08:00", "2025-11-09T00:00:00")).unwrap_err();
    assert_eq!(error.problems[0].field, "schedule[0].start");
}

#[test]
fn rules_as_data_validate_like_a_file_without_lines() {
    let rules = parse(BASE).unwrap();
    let mut spec = rules.spec().clone();
    model::RuleSet::from_spec(spec.clone()).unwrap();
    spec.limits.min_gpus = 99;
    let error = model::RuleSet::from_spec(spec).unwrap_err();
    assert_eq!(error.problems[0].field, "limits.min_gpus");
    assert_eq!(error.problems[0].line, None);
}

#[test]
fn the_json_shape_round_trips() {
    for (name, text) in EXAMPLES {
        let spec = parse(text).unwrap().spec().clone();
        let json = serde_json::to_string(&spec).unwrap();
        let back: ebb_wire::rules::RuleSet = serde_json::from_str(&json).unwrap();
        assert_eq!(back, spec, "{name}");
    }
}

/// `[scale_in]` with a disruption budget and a quiet window (lines 4 to 12).
const SCALE_IN: &str = r#"[limits]
max_gpus = 20

[scale_in]
budget_gpus = 2
budget_pct = 20
budget_window_minutes = 10

[[scale_in.quiet]]
cron = "0 9 * * 1-5"
duration_minutes = 480
time_zone = "Asia/Shanghai"
"#;

fn scale_in_with(old: &str, new: &str) -> String {
    assert!(SCALE_IN.contains(old), "{old}");
    SCALE_IN.replacen(old, new, 1)
}

#[test]
fn the_disruption_budget_and_quiet_windows_read_as_written() {
    let rules = parse(SCALE_IN).unwrap();
    let scale_in = &rules.spec().scale_in;
    assert_eq!(scale_in.budget_gpus, Some(2));
    assert_eq!(scale_in.budget_pct, Some(20));
    assert_eq!(scale_in.budget_window_minutes, Some(10));
    assert_eq!(
        scale_in.quiet,
        [QuietWindow {
            cron: "0 9 * * 1-5".into(),
            duration_minutes: 480,
            time_zone: "Asia/Shanghai".into()
        }]
    );
    assert!(!rules.quiet_windows().is_empty());
    // Without them: no budget, no quiet window.
    let bare = parse(BASE).unwrap();
    assert_eq!(bare.spec().scale_in.budget_window_minutes, None);
    assert!(bare.quiet_windows().is_empty());
}

#[test]
fn every_budget_and_quiet_window_problem_names_its_line_and_field() {
    let cases: Vec<(String, u32, &str, &str)> = vec![
        (
            scale_in_with("budget_window_minutes = 10\n", ""),
            4,
            "scale_in.budget_window_minutes",
            "missing",
        ),
        (
            scale_in_with("budget_gpus = 2\nbudget_pct = 20\n", ""),
            5,
            "scale_in.budget_window_minutes",
            "does nothing",
        ),
        (
            scale_in_with("budget_window_minutes = 10", "budget_window_minutes = 0"),
            7,
            "scale_in.budget_window_minutes",
            "not from 1 to 1440",
        ),
        (
            scale_in_with("budget_window_minutes = 10", "budget_window_minutes = 1441"),
            7,
            "scale_in.budget_window_minutes",
            "not from 1 to 1440",
        ),
        (
            scale_in_with("budget_pct = 20", "budget_pct = 120"),
            6,
            "scale_in.budget_pct",
            "120% is not a share from 1 to 100",
        ),
        (
            scale_in_with("budget_pct = 20", "budget_pct = 0"),
            6,
            "scale_in.budget_pct",
            "not a share",
        ),
        (
            scale_in_with("budget_gpus = 2", "budget_gpus = 0"),
            5,
            "scale_in.budget_gpus",
            "at least 1",
        ),
        (
            scale_in_with("cron = \"0 9 * * 1-5\"", "cron = \"0 25 * * *\""),
            10,
            "scale_in.quiet[0].cron",
            "not a cron expression",
        ),
        (
            scale_in_with("cron = \"0 9 * * 1-5\"", "cron = \"0 0 31 2 *\""),
            10,
            "scale_in.quiet[0].cron",
            "never occurs",
        ),
        (
            scale_in_with(
                "time_zone = \"Asia/Shanghai\"",
                "time_zone = \"Asia/Shanhai\"",
            ),
            12,
            "scale_in.quiet[0].time_zone",
            "not an IANA time zone",
        ),
        (
            scale_in_with("duration_minutes = 480", "duration_minutes = 0"),
            11,
            "scale_in.quiet[0].duration_minutes",
            "at least 1",
        ),
        // From the TOML reader: a key it does not know, a key missing.
        (
            scale_in_with("duration_minutes = 480", "duraton_minutes = 480"),
            11,
            "scale_in.quiet[0].duraton_minutes",
            "unknown field",
        ),
        (
            scale_in_with("budget_pct = 20", "budget_percent = 20"),
            6,
            "scale_in.budget_percent",
            "unknown field",
        ),
    ];
    for (text, line, field, words) in cases {
        let error = parse(&text).expect_err(field);
        let problem = &error.problems[0];
        assert_eq!(problem.field, field, "{error}");
        assert_eq!(problem.line, Some(line), "{field}: {error}");
        assert!(problem.message.contains(words), "{field}: {error}");
    }
}

#[test]
fn quiet_windows_as_data_name_their_fields_under_the_given_name() {
    let window = |cron: &str, duration_minutes: u32, time_zone: &str| QuietWindow {
        cron: cron.into(),
        duration_minutes,
        time_zone: time_zone.into(),
    };
    let quiet = model::QuietWindows::from_spec(
        &[
            window("0 22 * * *", 60, "UTC"),
            window("0 6 * * *", 30, "UTC"),
        ],
        "quiet",
    )
    .unwrap();
    // 2023-11-14 22:13 UTC.
    let now = 1_699_999_980_000;
    assert_eq!(quiet.on_until(now), Some(now + 47 * 60_000));
    assert!(quiet.is_on(now));
    assert!(!quiet.is_on(now + 47 * 60_000));
    let error = model::QuietWindows::from_spec(
        &[
            window("0 22 * * *", 60, "UTC"),
            window("not cron", 0, "Nowhere/Else"),
        ],
        "slurm.quiet",
    )
    .unwrap_err();
    let fields: Vec<&str> = error.problems.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "slurm.quiet[1].duration_minutes",
            "slurm.quiet[1].time_zone"
        ],
        "{error}"
    );
    assert!(error.problems.iter().all(|p| p.line.is_none()));
    let error =
        model::QuietWindows::from_spec(&[window("not cron", 5, "UTC")], "slurm.quiet").unwrap_err();
    assert_eq!(error.problems[0].field, "slurm.quiet[0].cron", "{error}");
}

/// The rules and the decisions the console stored before the budget and quiet windows
/// existed still read: the new keys default to none.
#[test]
fn rules_and_decisions_stored_before_the_budget_still_read() {
    let old_rules = r#"{"pool":null,"limits":{"min_gpus":0,"max_gpus":8,"step":{"out_gpus":null,"out_pct":null,"in_gpus":null,"in_pct":null},"budget":{"per_hour_fen":null,"per_month_fen":null}},"scale_in":{"force":false,"release_window_minutes":5,"deadband_gpus":1,"deadband_minutes":10},"metrics":[],"thresholds":[],"targets":[],"schedules":[]}"#;
    let rules: ebb_wire::rules::RuleSet = serde_json::from_str(old_rules).unwrap();
    assert_eq!(rules.scale_in.deadband_gpus, 1);
    assert_eq!(rules.scale_in.budget_gpus, None);
    assert_eq!(rules.scale_in.budget_pct, None);
    assert_eq!(rules.scale_in.budget_window_minutes, None);
    assert!(rules.scale_in.quiet.is_empty());
    model::RuleSet::from_spec(rules).unwrap();
    let old_decision = r#"{"at_ms":0,"current_gpus":4,"rules":[],"recommended_gpus":2,"clamps":[{"kind":"deadband","from_gpus":2,"to_gpus":4,"surplus_gpus":1,"deadband_gpus":2,"window_minutes":10}],"desired_gpus":4,"cost_delta_per_hour_fen":null,"reason":{"kind":"steady"}}"#;
    let decision: ebb_wire::rules::Decision = serde_json::from_str(old_decision).unwrap();
    assert_eq!(decision.clamps[0].kind(), "deadband");
}

const PROM: &str = r#"pool = "web"
[limits]
min_gpus = 0
max_gpus = 8

[[metric]]
name = "rps"
stale_after_minutes = 2
prometheus = 'sum(rate(requests_total{pool="{pool}"}[1m]))'
fallback = 6

[[threshold]]
name = "busy"
metric = "rps"
op = ">="
value = 100
action = "+1"
"#;

#[test]
fn a_prometheus_metric_reads_with_its_defaults_and_round_trips() {
    let rules = parse(PROM).unwrap();
    let source = rules.spec().metrics[0].prometheus.clone().unwrap();
    assert_eq!(
        source.query,
        r#"sum(rate(requests_total{pool="{pool}"}[1m]))"#
    );
    assert_eq!(source.timeout_s, 5);
    assert_eq!(source.fallback, Some(6.0));
    assert_eq!(source.fallback_after, 3);
    let again = parse(&ebb_rules::model_toml::to_toml(&rules)).unwrap();
    assert_eq!(again.spec().metrics, rules.spec().metrics);
}

#[test]
fn a_bad_prometheus_metric_is_refused_naming_its_field() {
    for (from, to, field, words) in [
        (
            "}[1m]))'",
            "}[1m])'",
            "metric[0].prometheus",
            "never closed",
        ),
        (
            "fallback = 6",
            "fallback = 6\ntimeout_s = 0",
            "metric[0].timeout_s",
            "1 to 60",
        ),
        (
            "fallback = 6",
            "fallback_after = 0",
            "metric[0].fallback_after",
            "at least 1",
        ),
        (
            "prometheus = 'sum(rate(requests_total{pool=\"{pool}\"}[1m]))'\n",
            "",
            "metric[0].prometheus",
            "query is needed",
        ),
    ] {
        let text = PROM.replace(from, to);
        assert_ne!(text, PROM, "{from}");
        let error = parse(&text).unwrap_err();
        assert!(
            error.problems[0].field == field && error.to_string().contains(words),
            "{from} → {error:?}"
        );
    }
}
