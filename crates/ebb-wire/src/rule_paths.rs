//! Where in a rule file a problem is, as data: the section, the row of a listed section and
//! the key (`threshold[2].name` is the threshold section, row 2, key `name`). The linter and
//! the model name fields as the file does (`RuleProblem::field`); this reads that name once,
//! here, and a lint report carries the result beside each problem and warning (`path`), so
//! the Rules form finds the input a problem is about without parsing the name.

use crate::rules::{LintWarning, RuleProblem};
use serde::{Deserialize, Serialize, Serializer};
use specta::Type;

/// A part of a rule file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum RuleSection {
    /// The file's `pool`.
    Pool,
    /// The file as a whole (not TOML, not UTF-8).
    File,
    /// `[limits]`.
    Limits,
    /// `[limits.step]`.
    Step,
    /// `[scale_in]`.
    ScaleIn,
    /// `[[scale_in.quiet]]`: a quiet window.
    Quiet,
    /// `[[metric]]`, `[[threshold]]`, `[[target]]`, `[[schedule]]`: a row of its list.
    Metric,
    Threshold,
    Target,
    Schedule,
    /// Anything else (a key the file should not have, a list named whole).
    Other,
}

/// A field's place: its section, its row (from 0, in file order) where the section is a
/// list, and its key within (none: the section or row named whole).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct FieldPath {
    pub section: RuleSection,
    pub row: Option<u32>,
    pub key: Option<String>,
}

impl FieldPath {
    /// The place a field name as the linter writes it names.
    pub fn of(field: &str) -> FieldPath {
        let mut parts = field.trim().splitn(3, '.');
        let head = parts.next().unwrap_or_default();
        let second = parts.next();
        let third = parts.next();
        let (name, row) = indexed(head);
        let place = |section, row, key: Option<&str>| FieldPath {
            section,
            row,
            key: key.map(str::to_string),
        };
        match (name, second) {
            ("pool", _) => place(RuleSection::Pool, None, second),
            ("file", _) => place(RuleSection::File, None, second),
            ("limits", Some("step")) => place(RuleSection::Step, None, third),
            ("limits", _) => place(RuleSection::Limits, None, second),
            ("scale_in", Some(quiet)) if indexed(quiet).0 == "quiet" => {
                place(RuleSection::Quiet, indexed(quiet).1, third)
            }
            ("scale_in", _) => place(RuleSection::ScaleIn, None, second),
            ("metric", _) if row.is_some() => place(RuleSection::Metric, row, second),
            ("threshold", _) if row.is_some() => place(RuleSection::Threshold, row, second),
            ("target", _) if row.is_some() => place(RuleSection::Target, row, second),
            ("schedule", _) if row.is_some() => place(RuleSection::Schedule, row, second),
            _ => place(RuleSection::Other, None, None),
        }
    }
}

/// `threshold[2]` as its name and row; `limits` as itself and none.
fn indexed(part: &str) -> (&str, Option<u32>) {
    match part.split_once('[') {
        Some((name, rest)) => (name, rest.strip_suffix(']').and_then(|n| n.parse().ok())),
        None => (part, None),
    }
}

/// A problem and its field's place.
#[derive(Debug, Serialize, Type)]
pub struct PathedProblem {
    #[serde(flatten)]
    pub problem: RuleProblem,
    pub path: FieldPath,
}

/// A warning and its field's place.
#[derive(Debug, Serialize, Type)]
pub struct PathedWarning {
    #[serde(flatten)]
    pub warning: LintWarning,
    pub path: FieldPath,
}

pub type PathedProblems = Vec<PathedProblem>;
pub type PathedWarnings = Vec<PathedWarning>;

/// Serializes problems, each with its field's place.
pub fn problems_with_paths<S: Serializer>(
    problems: &[RuleProblem],
    s: S,
) -> Result<S::Ok, S::Error> {
    problems
        .iter()
        .map(|problem| PathedProblem {
            path: FieldPath::of(&problem.field),
            problem: problem.clone(),
        })
        .collect::<Vec<_>>()
        .serialize(s)
}

/// Serializes warnings, each with its field's place.
pub fn warnings_with_paths<S: Serializer>(
    warnings: &[LintWarning],
    s: S,
) -> Result<S::Ok, S::Error> {
    warnings
        .iter()
        .map(|warning| PathedWarning {
            path: FieldPath::of(&warning.field),
            warning: warning.clone(),
        })
        .collect::<Vec<_>>()
        .serialize(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(section: RuleSection, row: Option<u32>, key: Option<&str>) -> FieldPath {
        FieldPath {
            section,
            row,
            key: key.map(str::to_string),
        }
    }

    #[test]
    fn a_field_name_reads_as_its_section_row_and_key() {
        use RuleSection as S;
        let cases = [
            ("threshold[2].name", at(S::Threshold, Some(2), Some("name"))),
            ("threshold[3]", at(S::Threshold, Some(3), None)),
            (
                "target[1].overload_gpus",
                at(S::Target, Some(1), Some("overload_gpus")),
            ),
            ("schedule[0].floor", at(S::Schedule, Some(0), Some("floor"))),
            (
                "metric[1].prometheus",
                at(S::Metric, Some(1), Some("prometheus")),
            ),
            ("limits", at(S::Limits, None, None)),
            ("limits.max_gpus", at(S::Limits, None, Some("max_gpus"))),
            ("limits.step", at(S::Step, None, None)),
            ("limits.step.out_gpus", at(S::Step, None, Some("out_gpus"))),
            (
                "scale_in.deadband_minutes",
                at(S::ScaleIn, None, Some("deadband_minutes")),
            ),
            (
                "scale_in.quiet[1].cron",
                at(S::Quiet, Some(1), Some("cron")),
            ),
            ("scale_in.quiet", at(S::Quiet, None, None)),
            ("pool", at(S::Pool, None, None)),
            ("file", at(S::File, None, None)),
            ("metrics", at(S::Other, None, None)),
            ("", at(S::Other, None, None)),
        ];
        for (field, place) in cases {
            assert_eq!(FieldPath::of(field), place, "{field}");
        }
    }

    #[test]
    fn a_lint_report_carries_each_place_and_reads_back_without_it() {
        let report = crate::rules::LintReport {
            file: "f.toml".into(),
            valid: false,
            errors: vec![RuleProblem::new(
                Some(4),
                "threshold[0].action",
                crate::phrase::Phrase::new("rules.error.notAction").text("action", "double"),
            )],
            warnings: Vec::new(),
        };
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(
            json["errors"][0]["path"],
            serde_json::json!({"section": "threshold", "row": 0, "key": "action"})
        );
        assert_eq!(json["errors"][0]["field"], "threshold[0].action");
        let read: crate::rules::LintReport = serde_json::from_value(json).unwrap();
        assert_eq!(read, report);
    }
}
