//! Every problem the rule model finds is worded (a `rules.error.*` phrase), and reads in
//! Chinese without English left over but the operator's own text (names, metrics, cron,
//! what the TOML reader said) and the file's codes (`max_gpus`, `[[metric]]`).

use ebb_rules::model::{self, QuietWindows, parse};
use ebb_wire::catalog::Words;
use ebb_wire::ipc::UiLanguage;
use ebb_wire::phrase::{Arg, Phrase};
use ebb_wire::rules::{Action, MetricRef, QuietWindow, RuleProblem, ScheduleWhen};
use std::collections::{BTreeSet, HashMap};

const LIMITS: &str = "[limits]\nmax_gpus = 10\n";

/// The limits, then `rest`.
fn file(rest: &str) -> String {
    format!("{LIMITS}{rest}")
}

fn threshold(line: &str) -> String {
    let mut rule = vec![
        "name = \"hot\"",
        "metric = \"gpu_util\"",
        "op = \">=\"",
        "value = 80",
        "action = \"+1\"",
    ];
    let key = line.split('=').next().unwrap_or_default().trim();
    rule.retain(|had| had.split('=').next().unwrap_or_default().trim() != key);
    rule.push(line);
    file(&format!("[[threshold]]\n{}\n", rule.join("\n")))
}

fn target(line: &str) -> String {
    let mut rule = vec!["name = \"t\"", "metric = \"gpu_util\"", "target = 60"];
    let key = line.split('=').next().unwrap_or_default().trim();
    rule.retain(|had| had.split('=').next().unwrap_or_default().trim() != key);
    rule.push(line);
    file(&format!("[[target]]\n{}\n", rule.join("\n")))
}

/// A schedule of `when` lines with a zone and a bound.
fn schedule(when: &str) -> String {
    file(&format!(
        "[[schedule]]\nname = \"s\"\n{when}\ntime_zone = \"Asia/Shanghai\"\nfloor = 2\n"
    ))
}

fn metric(lines: &str) -> String {
    file(&format!(
        "[[metric]]\nname = \"users\"\nstale_after_minutes = 5\n{lines}\n"
    ))
}

fn budget(value: &str) -> String {
    format!("[limits]\nmax_gpus = 10\nbudget_per_hour = {value}\n")
}

/// A rule file's problems (it must be refused).
fn problems_of(text: &str) -> Vec<RuleProblem> {
    match parse(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(error) => error.problems,
    }
}

/// Rules as data (what the form sends), changed by `change`: their problems.
fn spec_problems(change: impl FnOnce(&mut ebb_wire::rules::RuleSet)) -> Vec<RuleProblem> {
    let base = file(
        "[[threshold]]\nname = \"hot\"\nmetric = \"gpu_util\"\nop = \">=\"\nvalue = 80\naction = \"+1\"\n\
         [[target]]\nname = \"t\"\nmetric = \"gpu_util\"\ntarget = 60\n\
         [[schedule]]\nname = \"w\"\nstart = 2025-11-08T00:00:00\nend = 2025-11-09T00:00:00\ntime_zone = \"Asia/Shanghai\"\nfloor = 2\n",
    );
    let mut spec = parse(&base).unwrap().spec().clone();
    change(&mut spec);
    match model::RuleSet::from_spec(spec) {
        Ok(_) => panic!("accepted"),
        Err(error) => error.problems,
    }
}

/// Each way a rule file or rule set is refused, one `problems.add` (or the TOML reader) at a
/// time: what it is given, the field named and the words' key.
#[allow(
    clippy::too_many_lines,
    reason = "one case per problem the model names"
)]
fn refusals() -> Vec<(String, Vec<RuleProblem>, &'static str, &'static str)> {
    let files: Vec<(String, &str, &str)> = vec![
        ("[limits\n".into(), "", "rules.error.syntax"),
        (
            "[limits]\nmax_gpus = 10\nmin_gpus = -1\n".into(),
            "limits.min_gpus",
            "rules.error.syntax",
        ),
        ("pool = \"p\"\n".into(), "limits", "rules.error.noLimits"),
        // The file's own words.
        (
            metric("").replace(
                "[[metric]]",
                "[[threshold]]\nname = \"hot\"\nmetric = \"gpu_utl\"\nop = \">\"\nvalue = 1\naction = \"+1\"\n[[metric]]",
            ),
            "threshold[0].metric",
            "rules.error.unknownMetric",
        ),
        (
            target("metric = \"nope\""),
            "target[0].metric",
            "rules.error.unknownMetricNone",
        ),
        (
            threshold("op = \"=>\""),
            "threshold[0].op",
            "rules.error.notComparison",
        ),
        (
            threshold("action = \"double\""),
            "threshold[0].action",
            "rules.error.notAction",
        ),
        (
            threshold("action = \"+0%\""),
            "threshold[0].action",
            "rules.error.actionShareZero",
        ),
        (
            threshold("action = \"-150%\""),
            "threshold[0].action",
            "rules.error.actionReleaseOver",
        ),
        (
            threshold("action = \"+2000%\""),
            "threshold[0].action",
            "rules.error.actionGrowOver",
        ),
        (
            threshold("action = \"+0\""),
            "threshold[0].action",
            "rules.error.actionNothing",
        ),
        (
            schedule("cron = \"0 1 * * *\""),
            "schedule[0].duration_minutes",
            "rules.error.cronNeedsDuration",
        ),
        (
            schedule(
                "start = 2025-11-08T00:00:00\nend = 2025-11-09T00:00:00\nduration_minutes = 5",
            ),
            "schedule[0].duration_minutes",
            "rules.error.durationOnlyCron",
        ),
        (
            schedule("start = 2025-11-08T00:00:00"),
            "schedule[0].end",
            "rules.error.windowNeedsBoth",
        ),
        (
            schedule("end = 2025-11-08T00:00:00"),
            "schedule[0].start",
            "rules.error.windowNeedsBoth",
        ),
        (
            schedule("cron = \"0 1 * * *\"\nduration_minutes = 5\nstart = 2025-11-08T00:00:00"),
            "schedule[0].cron",
            "rules.error.cronOrWindow",
        ),
        (schedule(""), "schedule[0]", "rules.error.noWhen"),
        (
            schedule("cron = \"0 1 * * *\"\nduration_minutes = 5\nceiling = 4"),
            "schedule[0]",
            "rules.error.oneBound",
        ),
        (
            budget("1.234"),
            "limits.budget_per_hour",
            "rules.error.wholeFen",
        ),
        (
            budget("\"500\""),
            "limits.budget_per_hour",
            "rules.error.notYuan",
        ),
        (budget("true"), "limits.budget_per_hour", "rules.error.notYuan"),
        (
            budget("2025-11-08"),
            "limits.budget_per_hour",
            "rules.error.notYuan",
        ),
        (budget("[500]"), "limits.budget_per_hour", "rules.error.notYuan"),
        (
            budget("{ yuan = 500 }"),
            "limits.budget_per_hour",
            "rules.error.notYuan",
        ),
        (budget("nan"), "limits.budget_per_hour", "rules.error.notYuan"),
        (
            budget("0"),
            "limits.budget_per_hour",
            "rules.error.moreThanZero",
        ),
        (
            budget("9223372036854775807"),
            "limits.budget_per_hour",
            "rules.error.tooLarge",
        ),
        (
            budget("1e20"),
            "limits.budget_per_hour",
            "rules.error.tooLarge",
        ),
        (
            schedule("start = 2025-11-08T00:00:00+08:00\nend = 2025-11-09T00:00:00"),
            "schedule[0].start",
            "rules.error.offset",
        ),
        (
            schedule("start = 08:00:00\nend = 2025-11-09T00:00:00"),
            "schedule[0].start",
            "rules.error.needsDate",
        ),
        // Validation, as a file.
        (
            "[limits]\nmax_gpus = 0\n".into(),
            "limits.max_gpus",
            "rules.error.atLeastOne",
        ),
        (
            "[limits]\nmax_gpus = 5000000\n".into(),
            "limits.max_gpus",
            "rules.error.overAccepted",
        ),
        (
            "[limits]\nmax_gpus = 10\nmin_gpus = 30\n".into(),
            "limits.min_gpus",
            "rules.error.moreThanMax",
        ),
        (
            "[limits]\nmax_gpus = 10\nstep = { out_gpus = 0 }\n".into(),
            "limits.step.out_gpus",
            "rules.error.stepZero",
        ),
        (
            "[limits]\nmax_gpus = 10\nstep = { in_pct = 0 }\n".into(),
            "limits.step.in_pct",
            "rules.error.stepShare",
        ),
        (
            "[limits]\nmax_gpus = 10\nstep = { in_pct = 150 }\n".into(),
            "limits.step.in_pct",
            "rules.error.atMost100",
        ),
        (
            file("[scale_in]\ndeadband_minutes = 20000\n"),
            "scale_in.deadband_minutes",
            "rules.error.atMostWeek",
        ),
        (
            file("[scale_in]\nbudget_gpus = 0\nbudget_window_minutes = 10\n"),
            "scale_in.budget_gpus",
            "rules.error.budgetGpusZero",
        ),
        (
            file("[scale_in]\nbudget_pct = 120\nbudget_window_minutes = 10\n"),
            "scale_in.budget_pct",
            "rules.error.budgetPct",
        ),
        (
            file("[scale_in]\nbudget_gpus = 2\n"),
            "scale_in.budget_window_minutes",
            "rules.error.budgetNeedsWindow",
        ),
        (
            file("[scale_in]\nbudget_window_minutes = 10\n"),
            "scale_in.budget_window_minutes",
            "rules.error.windowWithoutBudget",
        ),
        (
            file("[scale_in]\nbudget_gpus = 2\nbudget_window_minutes = 2000\n"),
            "scale_in.budget_window_minutes",
            "rules.error.budgetWindowRange",
        ),
        (
            threshold("name = \" \""),
            "threshold[0].name",
            "rules.error.needsName",
        ),
        (
            format!(
                "{}[[target]]\nname = \"hot\"\nmetric = \"gpu_util\"\ntarget = 60\n",
                threshold("cooldown_minutes = 5")
            ),
            "target[0].name",
            "rules.error.nameTaken",
        ),
        (
            file("[[metric]]\nname = \"gpu_util\"\nstale_after_minutes = 5\n"),
            "metric[0].name",
            "rules.error.builtInMetric",
        ),
        (
            file("[[metric]]\nname = \"\"\nstale_after_minutes = 5\n"),
            "metric[0].name",
            "rules.error.metricNeedsName",
        ),
        (
            metric("[[metric]]\nname = \"users\"\nstale_after_minutes = 5"),
            "metric[1].name",
            "rules.error.declaredTwice",
        ),
        (
            file("[[metric]]\nname = \"users\"\nstale_after_minutes = 0\n"),
            "metric[0].stale_after_minutes",
            "rules.error.atLeastOneMinute",
        ),
        (
            metric("prometheus = \"  \""),
            "metric[0].prometheus",
            "rules.error.promqlEmpty",
        ),
        (
            metric(&format!("prometheus = \"{}\"", "a".repeat(5000))),
            "metric[0].prometheus",
            "rules.error.promqlTooLong",
        ),
        (
            metric("prometheus = \"sum(up]\""),
            "metric[0].prometheus",
            "rules.error.promqlMismatch",
        ),
        (
            metric("prometheus = \"up)\""),
            "metric[0].prometheus",
            "rules.error.promqlClosesNothing",
        ),
        (
            metric("prometheus = 'up{job=\"x}'"),
            "metric[0].prometheus",
            "rules.error.promqlOpenString",
        ),
        (
            metric("prometheus = \"sum(up\""),
            "metric[0].prometheus",
            "rules.error.promqlNeverClosed",
        ),
        (
            metric("prometheus = \"up\"\ntimeout_s = 0"),
            "metric[0].timeout_s",
            "rules.error.timeoutRange",
        ),
        (
            metric("prometheus = \"up\"\nfallback_after = 0"),
            "metric[0].fallback_after",
            "rules.error.atLeastOneFailure",
        ),
        (
            metric("prometheus = \"up\"\nfallback = nan"),
            "metric[0].fallback",
            "rules.error.notNumber",
        ),
        (
            threshold("value = nan"),
            "threshold[0].value",
            "rules.error.notNumber",
        ),
        (
            threshold("value = -1"),
            "threshold[0].value",
            "rules.error.negative",
        ),
        (
            threshold("for_minutes = 0"),
            "threshold[0].for_minutes",
            "rules.error.forAtLeastOne",
        ),
        (
            threshold("for_minutes = 2000"),
            "threshold[0].for_minutes",
            "rules.error.atMostDay",
        ),
        (
            threshold("action = \"set 5000000\""),
            "threshold[0].action",
            "rules.error.gpusOverAccepted",
        ),
        (
            target("target = 0"),
            "target[0].target",
            "rules.error.targetPositive",
        ),
        (
            target("target = 120.5"),
            "target[0].target",
            "rules.error.busierThan100",
        ),
        (
            target("tolerance = 1.5"),
            "target[0].tolerance",
            "rules.error.tolerance",
        ),
        (
            target("scale_in_stabilization_minutes = 2000"),
            "target[0].scale_in_stabilization_minutes",
            "rules.error.atMostDay",
        ),
        (
            target("scale_out_sustain_minutes = 2000"),
            "target[0].scale_out_sustain_minutes",
            "rules.error.atMostDay",
        ),
        (
            target("overload_gpus = 0"),
            "target[0].overload_gpus",
            "rules.error.overloadZero",
        ),
        (
            schedule("cron = \"0 1 * * *\"\nduration_minutes = 5")
                .replace("floor = 2", "ceiling = 5000000"),
            "schedule[0].ceiling",
            "rules.error.gpusOverAccepted",
        ),
        (
            schedule("cron = \"0 1 * * *\"\nduration_minutes = 0"),
            "schedule[0].duration_minutes",
            "rules.error.atLeastOne",
        ),
        // Compiling: windows, zones, cron.
        (
            schedule("start = 2025-11-09T00:00:00\nend = 2025-11-08T00:00:00"),
            "schedule[0].end",
            "rules.error.endBeforeStart",
        ),
        (
            schedule("cron = \"0 1 * * *\"\nduration_minutes = 5")
                .replace("Asia/Shanghai", "Mars/Olympus"),
            "schedule[0].time_zone",
            "rules.error.timeZone",
        ),
        (
            schedule("cron = \"0 0 31 2 *\"\nduration_minutes = 5"),
            "schedule[0].cron",
            "rules.error.cronNever",
        ),
        (
            schedule("cron = \"0 25 * * *\"\nduration_minutes = 5"),
            "schedule[0].cron",
            "rules.error.cronInvalid",
        ),
        (
            schedule("start = 2025-03-09T02:30:00\nend = 2025-03-10T00:00:00")
                .replace("Asia/Shanghai", "America/New_York"),
            "schedule[0].start",
            "rules.error.daylightGap",
        ),
        (
            file(
                "[[scale_in.quiet]]\ncron = \"0 9 * * 1-5\"\nduration_minutes = 0\ntime_zone = \"Asia/Shanghai\"\n",
            ),
            "scale_in.quiet[0].duration_minutes",
            "rules.error.atLeastOne",
        ),
    ];
    let mut out: Vec<(String, Vec<RuleProblem>, &str, &str)> = files
        .into_iter()
        .map(|(text, field, key)| {
            let problems = problems_of(&text);
            (text, problems, field, key)
        })
        .collect();

    // Rules as data (the form): what a file cannot say.
    let custom = || MetricRef::Custom {
        name: "ghost".into(),
    };
    let specs: Vec<(&str, Vec<RuleProblem>, &str, &str)> = vec![
        (
            "budget of 0 fen",
            spec_problems(|s| s.limits.budget.per_month_fen = Some(0)),
            "limits.budget_per_month",
            "rules.error.moreThanZero",
        ),
        (
            "threshold on an undeclared metric",
            spec_problems(|s| s.thresholds[0].metric = custom()),
            "threshold[0].metric",
            "rules.error.undeclaredMetric",
        ),
        (
            "target on an undeclared metric",
            spec_problems(|s| s.targets[0].metric = custom()),
            "target[0].metric",
            "rules.error.undeclaredMetric",
        ),
        (
            "add 0 GPUs",
            spec_problems(|s| s.thresholds[0].action = Action::AddGpus { gpus: 0 }),
            "threshold[0].action",
            "rules.error.doesNothing",
        ),
        (
            "add 0%",
            spec_problems(|s| s.thresholds[0].action = Action::AddPct { pct: 0.0 }),
            "threshold[0].action",
            "rules.error.shareZero",
        ),
        (
            "release 150%",
            spec_problems(|s| s.thresholds[0].action = Action::RemovePct { pct: 150.0 }),
            "threshold[0].action",
            "rules.error.releaseOver",
        ),
        (
            "a window that is no date",
            spec_problems(|s| {
                s.schedules[0].when = ScheduleWhen::Window {
                    start: "next tuesday".into(),
                    end: "2025-11-09T00:00:00".into(),
                };
            }),
            "schedule[0].start",
            "rules.error.notDateTime",
        ),
    ];
    out.extend(
        specs
            .into_iter()
            .map(|(what, problems, field, key)| (what.to_string(), problems, field, key)),
    );

    // Quiet windows as data, named under the list's name.
    let quiet = QuietWindows::from_spec(
        &[QuietWindow {
            cron: "0 9 * * 1-5".into(),
            duration_minutes: 60,
            time_zone: "Asia/Shanhai".into(),
        }],
        "scale_in.quiet",
    )
    .expect_err("a zone that is not IANA");
    out.push((
        "a quiet window's zone".into(),
        quiet.problems,
        "scale_in.quiet[0].time_zone",
        "rules.error.timeZone",
    ));
    out
}

/// Worded outside the model: the console's checks against the pool and its Prometheus
/// (`ebb_core::console_rules`), and a file that is not text (`ebb rules lint`).
fn worded_elsewhere() -> Vec<Phrase> {
    vec![
        Phrase::new("rules.error.otherPool")
            .text("name", "training")
            .text("pool", "inference"),
        Phrase::new("rules.error.belowPoolMin")
            .int("value", 1)
            .int("min", 2),
        Phrase::new("rules.error.abovePoolMax")
            .int("value", 90)
            .int("max", 80),
        Phrase::new("rules.error.prometheusRefuses")
            .text("url", "http://prom:9090")
            .text("reason", "parse error at char 4: unclosed left parenthesis"),
        Phrase::new("rules.error.notUtf8"),
    ]
}

fn catalog(locale: &str) -> HashMap<String, String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../ui/src/locales/{locale}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The Latin words left in `said` once the arguments' own text (what the operator wrote,
/// what a parser said) and the file's codes are taken out: backticked text, and words with
/// `_`, `.`, a digit or `[` (`max_gpus`, `[[metric]]`, `2025-11-08T00:00:00`).
fn english_left(said: &str, phrase: &Phrase, words: &Words) -> Vec<String> {
    let mut rest = said.to_string();
    for arg in &phrase.args {
        let text = words.arg(&arg.value);
        if !text.is_empty() {
            rest = rest.replace(&text, " ");
        }
    }
    let mut unquoted = String::new();
    for (i, part) in rest.split('`').enumerate() {
        if i % 2 == 0 {
            unquoted.push_str(part);
        }
        unquoted.push(' ');
    }
    unquoted
        .split(|c: char| c.is_whitespace() || !c.is_ascii())
        .filter(|word| {
            !word.contains(|c: char| c == '_' || c == '.' || c == '[' || c.is_ascii_digit())
        })
        .flat_map(|word| word.split(|c: char| !c.is_ascii_alphabetic()))
        .filter(|word| word.len() >= 3)
        // Names every language writes so.
        .filter(|word| {
            ![
                "GPU",
                "GPUs",
                "TOML",
                "PromQL",
                "Prometheus",
                "IANA",
                "HPA",
                "cron",
                "UTF",
            ]
            .contains(word)
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn every_rule_problem_is_worded_and_reads_in_chinese_without_english() {
    let en = Words::of(UiLanguage::English);
    let zh = Words::of(UiLanguage::SimplifiedChinese);
    let (en_keys, zh_keys) = (catalog("en"), catalog("zh-CN"));
    let mut seen = BTreeSet::new();
    let mut wrong = Vec::new();
    let mut phrases = Vec::new();
    for (given, problems, field, key) in refusals() {
        if !problems
            .iter()
            .any(|p| p.field == field && p.words.key == key)
        {
            wrong.push(format!(
                "{given:?}: no {key} at {field}, but {:?}",
                problems
                    .iter()
                    .map(|p| (&p.field, &p.words.key))
                    .collect::<Vec<_>>()
            ));
        }
        for problem in problems {
            assert_eq!(
                problem.message,
                en.render(&problem.words),
                "the English is the phrase's"
            );
            phrases.push(problem.words);
        }
    }
    phrases.extend(worded_elsewhere());
    for phrase in &phrases {
        for key in phrase.keys() {
            seen.insert(key.to_string());
            if !en_keys.contains_key(key) || !zh_keys.contains_key(key) {
                wrong.push(format!("{key}: not in both catalogs"));
            }
        }
        let said = zh.render(phrase);
        let left = english_left(&said, phrase, &zh);
        if said.contains('{') && !phrase.args.iter().any(|a| zh.arg(&a.value).contains('{'))
            || !left.is_empty()
        {
            wrong.push(format!("{}: {said} {left:?}", phrase.key));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // Every rule error in the catalog is one a problem says.
    let listed: BTreeSet<String> = en_keys
        .keys()
        .filter(|key| key.starts_with("rules.error."))
        .cloned()
        .collect();
    let unseen: Vec<&String> = listed.difference(&seen).collect();
    assert!(unseen.is_empty(), "no problem says {unseen:?}");
    let not_listed: Vec<&String> = seen
        .iter()
        .filter(|key| key.starts_with("rules.error."))
        .filter(|key| !listed.contains(*key))
        .collect();
    assert!(not_listed.is_empty(), "{not_listed:?}");
}

#[test]
fn a_number_argument_reads_as_a_rule_number() {
    // A GPU count names its noun in each language; a share its number.
    let problem = &problems_of(&target("target = 120.5"))[0];
    assert_eq!(
        problem.message,
        "120.50 is more than 100%: a GPU cannot be busier than 100%"
    );
    assert!(matches!(problem.words.args[0].value, Arg::Number(_)));
    let problem = &problems_of(&threshold("action = \"set 5000000\""))[0];
    assert_eq!(
        Words::of(UiLanguage::SimplifiedChinese).render(&problem.words),
        "5000000 块 GPU 超过了允许的上限 1000000 块"
    );
    assert_eq!(
        problem.message,
        "5000000 GPUs is more than the 1000000 accepted"
    );
}
