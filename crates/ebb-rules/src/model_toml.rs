//! A rule set back to the TOML file [`crate::model::parse`] reads: the same tables and
//! keys, in the order the model's docs list them, with optional comment lines above each
//! table (what `suggest` uses to say why each lever is there). `parse(to_toml(rules))`
//! gives the same rules back (a test checks every kind).

use crate::model::RuleSet;
use ebb_wire::rules::{self as spec, ScheduleWhen};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Comment lines to write above tables, keyed by the table as the file names it: `""` (the
/// top of the file), `limits`, `scale_in`, `metric[0]`, `threshold[1]`, `target[0]`,
/// `schedule[2]`. Each line is written after `# `.
pub type Notes = BTreeMap<String, Vec<String>>;

/// The rules as a rule file, without comments.
pub fn to_toml(rules: &RuleSet) -> String {
    to_toml_with_notes(rules.spec(), &Notes::new())
}

/// The rules as a rule file, with `notes` above their tables.
pub fn to_toml_with_notes(rules: &spec::RuleSet, notes: &Notes) -> String {
    let mut out = String::new();
    let comment = |out: &mut String, key: &str| {
        for line in notes.get(key).into_iter().flatten() {
            if line.is_empty() {
                out.push_str("#\n");
            } else {
                let _ = writeln!(out, "# {line}");
            }
        }
    };
    comment(&mut out, "");
    if let Some(pool) = &rules.pool {
        if notes.contains_key("") {
            out.push('\n');
        }
        let _ = writeln!(out, "pool = {}", string(pool));
    }

    let limits = &rules.limits;
    section(&mut out);
    comment(&mut out, "limits");
    out.push_str("[limits]\n");
    let _ = writeln!(out, "min_gpus = {}", limits.min_gpus);
    let _ = writeln!(out, "max_gpus = {}", limits.max_gpus);
    let step = &limits.step;
    let parts: Vec<String> = [
        step.out_gpus.map(|v| format!("out_gpus = {v}")),
        step.out_pct.map(|v| format!("out_pct = {}", number(v))),
        step.in_gpus.map(|v| format!("in_gpus = {v}")),
        step.in_pct.map(|v| format!("in_pct = {}", number(v))),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !parts.is_empty() {
        let _ = writeln!(out, "step = {{ {} }}", parts.join(", "));
    }
    if let Some(fen) = limits.budget.per_hour_fen {
        let _ = writeln!(out, "budget_per_hour = {}", yuan(fen));
    }
    if let Some(fen) = limits.budget.per_month_fen {
        let _ = writeln!(out, "budget_per_month = {}", yuan(fen));
    }

    let scale_in = &rules.scale_in;
    section(&mut out);
    comment(&mut out, "scale_in");
    out.push_str("[scale_in]\n");
    let _ = writeln!(out, "force = {}", scale_in.force);
    let _ = writeln!(
        out,
        "release_window_minutes = {}",
        scale_in.release_window_minutes
    );
    let _ = writeln!(out, "deadband_gpus = {}", scale_in.deadband_gpus);
    let _ = writeln!(out, "deadband_minutes = {}", scale_in.deadband_minutes);
    if let Some(gpus) = scale_in.budget_gpus {
        let _ = writeln!(out, "budget_gpus = {gpus}");
    }
    if let Some(pct) = scale_in.budget_pct {
        let _ = writeln!(out, "budget_pct = {pct}");
    }
    if let Some(minutes) = scale_in.budget_window_minutes {
        let _ = writeln!(out, "budget_window_minutes = {minutes}");
    }
    for quiet in &scale_in.quiet {
        out.push('\n');
        out.push_str("[[scale_in.quiet]]\n");
        let _ = writeln!(out, "cron = {}", string(&quiet.cron));
        let _ = writeln!(out, "duration_minutes = {}", quiet.duration_minutes);
        let _ = writeln!(out, "time_zone = {}", string(&quiet.time_zone));
    }

    for (i, metric) in rules.metrics.iter().enumerate() {
        section(&mut out);
        comment(&mut out, &format!("metric[{i}]"));
        out.push_str("[[metric]]\n");
        let _ = writeln!(out, "name = {}", string(&metric.name));
        let _ = writeln!(out, "stale_after_minutes = {}", metric.stale_after_minutes);
        if let Some(source) = &metric.prometheus {
            let _ = writeln!(out, "prometheus = {}", string(&source.query));
            let _ = writeln!(out, "timeout_s = {}", source.timeout_s);
            if let Some(fallback) = source.fallback {
                let _ = writeln!(out, "fallback = {}", number(fallback));
            }
            let _ = writeln!(out, "fallback_after = {}", source.fallback_after);
        }
    }
    for (i, rule) in rules.thresholds.iter().enumerate() {
        section(&mut out);
        comment(&mut out, &format!("threshold[{i}]"));
        out.push_str("[[threshold]]\n");
        let _ = writeln!(out, "name = {}", string(&rule.name));
        let _ = writeln!(out, "metric = {}", string(rule.metric.name()));
        let _ = writeln!(out, "op = {}", string(rule.comparison.symbol()));
        let _ = writeln!(out, "value = {}", number(rule.threshold));
        let _ = writeln!(out, "for_minutes = {}", rule.for_minutes);
        let _ = writeln!(out, "action = {}", string(&rule.action.to_string()));
        let _ = writeln!(out, "cooldown_minutes = {}", rule.cooldown_minutes);
    }
    for (i, rule) in rules.targets.iter().enumerate() {
        section(&mut out);
        comment(&mut out, &format!("target[{i}]"));
        out.push_str("[[target]]\n");
        let _ = writeln!(out, "name = {}", string(&rule.name));
        let _ = writeln!(out, "metric = {}", string(rule.metric.name()));
        let _ = writeln!(out, "target = {}", number(rule.target));
        let _ = writeln!(out, "tolerance = {}", number(rule.tolerance));
        let _ = writeln!(
            out,
            "scale_in_stabilization_minutes = {}",
            rule.scale_in_stabilization_minutes
        );
        let _ = writeln!(
            out,
            "scale_out_sustain_minutes = {}",
            rule.scale_out_sustain_minutes
        );
        if let Some(overload) = rule.overload_gpus {
            let _ = writeln!(out, "overload_gpus = {overload}");
        }
    }
    for (i, schedule) in rules.schedules.iter().enumerate() {
        section(&mut out);
        comment(&mut out, &format!("schedule[{i}]"));
        out.push_str("[[schedule]]\n");
        let _ = writeln!(out, "name = {}", string(&schedule.name));
        match &schedule.when {
            ScheduleWhen::Cron {
                cron,
                duration_minutes,
            } => {
                let _ = writeln!(out, "cron = {}", string(cron));
                let _ = writeln!(out, "duration_minutes = {duration_minutes}");
            }
            ScheduleWhen::Window { start, end } => {
                let _ = writeln!(out, "start = {}", datetime(start));
                let _ = writeln!(out, "end = {}", datetime(end));
            }
        }
        let _ = writeln!(out, "time_zone = {}", string(&schedule.time_zone));
        let _ = writeln!(out, "{} = {}", schedule.bound.key(), schedule.gpus);
    }
    out
}

/// A blank line between tables.
fn section(out: &mut String) {
    if !out.is_empty() {
        out.push('\n');
    }
}

/// A TOML basic string, escaped.
/// A window's time: a TOML date-time, unquoted, as the model reads it, when the text is
/// one; anything else (a form's half-typed time, or text that would add keys to the file)
/// is written as a string, which the parser then refuses at this field.
fn datetime(text: &str) -> String {
    match text.trim().parse::<toml::value::Datetime>() {
        Ok(datetime) => datetime.to_string(),
        Err(_) => string(text),
    }
}

fn string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// A float as TOML reads it back exactly: Rust's shortest round-trip form, which never
/// uses an exponent (`80`, `0.1`, `-2.5`); a whole number too large for a TOML integer
/// keeps a `.0`, so it is read as a float.
fn number(value: f64) -> String {
    let text = format!("{value}");
    if !text.contains('.') && value.abs() >= 1e15 {
        format!("{text}.0")
    } else {
        text
    }
}

/// Fen as yuan with at most two decimals (`500`, `499.5`), as the model reads budgets.
fn yuan(fen: i64) -> String {
    let (whole, cents) = (fen / 100, (fen % 100).abs());
    match cents {
        0 => whole.to_string(),
        c if c % 10 == 0 => format!("{whole}.{}", c / 10),
        c => format!("{whole}.{c:02}"),
    }
}
