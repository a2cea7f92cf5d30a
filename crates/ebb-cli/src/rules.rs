//! `ebb rules …`: a pool's rule file before it is saved. `lint` exits 0 when clean, 1 with
//! warnings, 2 when the file is invalid; every error and warning names its line and field.

use anyhow::Context;
use clap::Subcommand;
use ebb_rules::lint::{LintContext, lint_file};
use ebb_wire::rules::LintReport;
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Debug, Clone, Subcommand)]
pub enum RulesCommand {
    /// Check a rule file: errors (exit 2) or warnings (exit 1) with their line and field.
    Lint {
        /// The rule file (TOML); examples in crates/ebb-rules/examples/.
        file: PathBuf,
        /// The warmup the cooldowns are checked against, in minutes.
        #[arg(long, default_value_t = 5)]
        warmup: u32,
    },
    /// Suggest a rule file for a recorded trace: the cheapest found by replay within the
    /// shortfall limit, each lever with a comment saying why (the file on standard output).
    Suggest(crate::suggest::SuggestArgs),
}

/// Runs the command; answers the exit code.
pub fn run(command: &RulesCommand, json: bool) -> anyhow::Result<i32> {
    match command {
        RulesCommand::Lint { file, warmup } => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read the rule file {}", file.display()))?;
            let context = LintContext {
                warmup_minutes: *warmup,
                ..LintContext::default()
            };
            let report = lint_file(&file.display().to_string(), &text, &context);
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", lint_text(&report));
            }
            Ok(exit_code(&report))
        }
        RulesCommand::Suggest(_) => {
            unreachable!("main runs `rules suggest` itself: it needs the data directory")
        }
    }
}

/// 0 clean, 1 warnings, 2 invalid.
pub fn exit_code(report: &LintReport) -> i32 {
    if !report.valid {
        2
    } else if report.warnings.is_empty() {
        0
    } else {
        1
    }
}

/// `FILE:LINE: field: words`, one line each, then a summary.
pub fn lint_text(report: &LintReport) -> String {
    let mut out = String::new();
    let at = |line: Option<u32>| line.map_or_else(String::new, |line| format!("{line}:"));
    for error in &report.errors {
        let _ = writeln!(
            out,
            "{}:{} error: {}: {}",
            report.file,
            at(error.line),
            error.field,
            error.message
        );
    }
    for warning in &report.warnings {
        let rule = warning
            .rule
            .as_ref()
            .map_or_else(String::new, |rule| format!(" ({rule})"));
        let _ = writeln!(
            out,
            "{}:{} warning: {}{rule}: {}",
            report.file,
            at(warning.line),
            warning.field,
            warning.problem
        );
    }
    let _ = match (report.valid, report.warnings.len()) {
        (false, _) => writeln!(
            out,
            "{}: invalid ({} problem(s)); nothing was checked further",
            report.file,
            report.errors.len()
        ),
        (true, 0) => writeln!(out, "{}: valid, no warnings", report.file),
        (true, n) => writeln!(out, "{}: valid, {n} warning(s)", report.file),
    };
    out
}
