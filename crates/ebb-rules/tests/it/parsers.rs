//! The parsers of what an operator hands us (a rule file, parsed and linted as the console
//! and `ebb rules lint` do; a replay trace CSV, as `ebb replay` reads it) never panic, name
//! the line or the field of every refusal, and still read valid files however they arrive
//! (a BOM, CRLF). Inputs: arbitrary bytes and text, and mutations of valid files
//! (`ebb_testkit::fuzz`); each test prints `parser cases run: ...`.

use super::decide::{hourly, pool};
use ebb_rules::decide::{MetricWindows, PoolState, decide};
use ebb_rules::lint::{LintContext, lint_source};
use ebb_rules::model::{self, RuleSet};
use ebb_rules::model_toml::to_toml;
use ebb_rules::replay::trace::Trace;
use ebb_testkit::fuzz::{self, CaseCount, lossy, names_a_line};

/// Rule files that parse: the examples, and one with every table and key.
fn valid_rules() -> Vec<String> {
    vec![
        include_str!("../../examples/seed-80-30.toml").to_string(),
        include_str!("../../examples/hpa.toml").to_string(),
        include_str!("../../examples/festival.toml").to_string(),
        r#"pool = "every-key"

[limits]
min_gpus = 2
max_gpus = 80
step = { out_gpus = 4, out_pct = 100, in_gpus = 2, in_pct = 50 }
budget_per_hour = 500
budget_per_month = 250000.50

[scale_in]
force = false
release_window_minutes = 5
deadband_gpus = 2
deadband_minutes = 10
budget_gpus = 2
budget_pct = 20
budget_window_minutes = 10

[[scale_in.quiet]]
cron = "0 9 * * 1-5"
duration_minutes = 480
time_zone = "Asia/Shanghai"

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
cooldown_minutes = 5

[[threshold]]
name = "quiet"
metric = "users"
op = "<"
value = 10.5
action = "set 4"

[[target]]
name = "size"
metric = "busy_gpus"
target = 100
tolerance = 0.1
scale_in_stabilization_minutes = 5
scale_out_sustain_minutes = 3
overload_gpus = 2

[[schedule]]
name = "evening"
cron = "0 19 * * 1-5"
duration_minutes = 300
time_zone = "Asia/Shanghai"
ceiling = 60

[[schedule]]
name = "launch"
start = 2025-11-08
end = 2025-11-12T06:30:00
time_zone = "UTC"
exact = 40
"#
        .to_string(),
    ]
}

/// Lint as the console does: with the pool's price and a peak, so every check runs.
fn check_rules(text: &str) -> Result<Option<RuleSet>, String> {
    let pricing = hourly();
    let context = LintContext {
        warmup_minutes: 5,
        pricing: Some(&pricing),
        peak_busy_gpus: Some(37.5),
    };
    let (report, rules) = lint_source("rules.toml", text, &context);
    if report.valid != rules.is_some() {
        return Err(format!(
            "valid = {} but rules = {}",
            report.valid,
            rules.is_some()
        ));
    }
    if !report.valid && report.errors.is_empty() {
        return Err("refused with no problem".into());
    }
    for problem in &report.errors {
        if problem.line.is_none() && problem.field.is_empty() {
            return Err(format!("names no line or field: {problem}"));
        }
        if problem.line == Some(0) {
            return Err(format!("line 0: {problem}"));
        }
        let shown = problem.to_string();
        if shown.contains(": :") || problem.message.trim().is_empty() {
            return Err(format!("an empty part: {shown:?}"));
        }
    }
    for warning in &report.warnings {
        if warning.field.is_empty() {
            return Err(format!("a warning names no field: {warning:?}"));
        }
    }
    let Some(rules) = rules else {
        return Ok(None);
    };
    // What was accepted decides (inside the festival window, with a price).
    let state = PoolState {
        pricing: Some(&pricing),
        ..pool(4)
    };
    decide(&rules, &state, &MetricWindows::default(), 1_762_732_800_000);
    // What was accepted writes back to a file that reads as the same rules.
    let written = to_toml(&rules);
    match model::parse(&written) {
        Ok(again) if again.spec() == rules.spec() => Ok(Some(rules)),
        Ok(again) => Err(format!(
            "written back as\n{written}\nit reads differently: {:?} vs {:?}",
            again.spec(),
            rules.spec()
        )),
        Err(error) => Err(format!(
            "written back as\n{written}\nit is refused: {error}"
        )),
    }
}

#[test]
fn the_rule_file_parser_never_panics_and_names_every_refusal() {
    let mut count = CaseCount::new();
    count.check(
        "arbitrary",
        256,
        fuzz::arbitrary(r#"[a-z_\[\]=." \n#0-9,{}<>%+*/:T-]{0,400}"#),
        |bytes| check_rules(&lossy(&bytes)).map(drop),
    );
    count.check("mutated", 768, fuzz::mutated(valid_rules()), |bytes| {
        check_rules(&lossy(&bytes)).map(drop)
    });
    count.check(
        "valid",
        128,
        fuzz::valid_variants(valid_rules()),
        |text| match check_rules(&text)? {
            Some(_) => Ok(()),
            None => Err(format!(
                "a valid rule file was refused: {}",
                model::parse(&text).unwrap_err()
            )),
        },
    );
    count.report("rule file");
}

/// Traces that parse: demand alone, with a memory and a custom column (one cell empty).
fn valid_traces() -> Vec<String> {
    vec![
        "minute,demand\n0,1\n1,2.5\n2,0\n3,4\n".to_string(),
        "# exported\nminute,demand,mem_pct,users\n0,1,40,100\n1,2,55,\n\n2,3.25,60,130\n"
            .to_string(),
        (0..120)
            .map(|minute| format!("{minute},{}\n", (minute % 13) as f64 / 2.0))
            .fold("minute,demand\n".to_string(), |text, row| text + &row),
    ]
}

fn check_trace(bytes: &[u8]) -> Result<(), String> {
    match Trace::from_csv(&lossy(bytes)) {
        Ok(trace) => {
            if trace.minutes() == 0 {
                return Err("accepted with no minutes".into());
            }
            Ok(())
        }
        Err(error) => {
            let message = error.to_string();
            if error.line == 0 || !names_a_line(&message) {
                return Err(format!("names no line: {message}"));
            }
            Ok(())
        }
    }
}

#[test]
fn the_trace_parser_never_panics_and_names_every_refusal() {
    let mut count = CaseCount::new();
    count.check(
        "arbitrary",
        256,
        fuzz::arbitrary(r"[minutedasp_,\n\r 0-9.#e+-]{0,300}"),
        |bytes| check_trace(&bytes),
    );
    count.check("mutated", 768, fuzz::mutated(valid_traces()), |bytes| {
        check_trace(&bytes)
    });
    count.check("valid", 128, fuzz::valid_variants(valid_traces()), |text| {
        Trace::from_csv(&text)
            .map(drop)
            .map_err(|error| format!("a valid trace was refused: {error}"))
    });
    count.report("trace CSV");
}

/// Found by the property above: a spreadsheet's byte order mark made the header unreadable
/// (`﻿minute` is not `minute`).
#[test]
fn a_trace_with_a_byte_order_mark_is_read() {
    let trace = Trace::from_csv("\u{feff}minute,demand\r\n0,1\r\n1,2.5\r\n").unwrap();
    assert_eq!(trace.demand(), &[1.0, 2.5]);
}

/// Found by the property above: a syntax error outside any key was shown as
/// `line 1: : key with no value, expected `=``, an empty field between the colons.
#[test]
fn a_syntax_error_outside_any_key_names_its_line_alone() {
    let error = model::parse("limits\n").unwrap_err();
    assert_eq!(error.problems[0].line, Some(1));
    assert_eq!(error.problems[0].field, "");
    let shown = error.to_string();
    assert!(shown.starts_with("line 1: key with no value"), "{shown}");
}

/// Found while probing what the parser accepts: a cron that matches no date (the 31st of
/// February) was accepted, then searched for at every decision, about a second each in a
/// debug build (a replay decides every minute of its trace). It is refused, naming it.
#[test]
fn a_cron_that_never_occurs_is_refused() {
    for cron in ["0 0 31 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *"] {
        let text = format!(
            "[limits]\nmax_gpus = 10\n\n[[schedule]]\nname = \"never\"\ncron = \"{cron}\"\nduration_minutes = 5\ntime_zone = \"Asia/Shanghai\"\nfloor = 2\n"
        );
        let error = model::parse(&text).unwrap_err();
        let shown = error.to_string();
        assert!(
            shown.starts_with(&format!("line 6: schedule[0].cron: `{cron}` never occurs")),
            "{shown}"
        );
    }
    // Rare is not never: the 29th of February, the fifth Friday, the last day.
    for cron in ["0 0 29 2 *", "0 0 * * 5#5", "0 0 L * *"] {
        let text = format!(
            "[limits]\nmax_gpus = 10\n\n[[schedule]]\nname = \"rare\"\ncron = \"{cron}\"\nduration_minutes = 5\ntime_zone = \"UTC\"\nfloor = 2\n"
        );
        assert!(model::parse(&text).is_ok(), "{cron}");
    }
}
