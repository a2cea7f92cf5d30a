//! `ebb rules set|show|enable|disable|shadow POOL` (a pool's rules in the data directory,
//! enforced by whichever process collects: the app or `ebb daemon`) and `ebb metric
//! push|token new` (custom metrics for the rules).

use crate::pools::open;
use anyhow::Context;
use clap::Subcommand;
use ebb_core::console::TokenStore;
use ebb_core::console_rules::RulesError;
use ebb_wire::rules::{MetricPush, PoolRules, RulesMode};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// `--mode` of `ebb rules set`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    Enabled,
    Shadow,
    Disabled,
}

impl From<ModeArg> for RulesMode {
    fn from(mode: ModeArg) -> RulesMode {
        match mode {
            ModeArg::Enabled => RulesMode::Enabled,
            ModeArg::Shadow => RulesMode::Shadow,
            ModeArg::Disabled => RulesMode::Disabled,
        }
    }
}

/// The pool-rule subcommands of `ebb rules`.
#[derive(Debug, Clone, PartialEq)]
pub enum PoolRulesCommand {
    Set {
        pool: String,
        file: PathBuf,
        mode: Option<ModeArg>,
        yes: bool,
    },
    Show {
        pool: String,
    },
    Mode {
        pool: String,
        mode: RulesMode,
    },
}

/// `ebb metric ...`: custom metrics for the rules.
#[derive(Debug, Clone, Subcommand)]
pub enum MetricCommand {
    /// Push one value of a custom metric (what `POST /v1/metrics` takes), for one pool or
    /// every pool.
    Push {
        /// The metric's name as the rules use it (lower case, digits and _).
        name: String,
        /// Its value now.
        #[arg(allow_hyphen_values = true)]
        value: f64,
        /// The pool it is about; every pool when left out.
        #[arg(long, value_name = "NAME")]
        pool: Option<String>,
        /// When it was measured, epoch milliseconds (within the last hour); now when left out.
        #[arg(long, value_name = "MS")]
        at: Option<i64>,
    },
    /// Tokens for the console's metrics endpoint (`POST /v1/metrics`).
    #[command(subcommand)]
    Token(MetricTokenCommand),
}

#[derive(Debug, Clone, Subcommand)]
pub enum MetricTokenCommand {
    /// Make a bearer token: printed once, only its hash is kept.
    New,
}

/// Runs a pool-rule command; answers the exit code (2 when the file was refused).
pub async fn run(
    command: &PoolRulesCommand,
    data_dir: &Path,
    store: TokenStore,
    json: bool,
) -> anyhow::Result<i32> {
    let console = open(data_dir, store, false).await?;
    let result = run_on(&console, command, json).await;
    console.shutdown().await;
    result
}

async fn run_on(
    console: &ebb_core::console::Console,
    command: &PoolRulesCommand,
    json: bool,
) -> anyhow::Result<i32> {
    match command {
        PoolRulesCommand::Set {
            pool,
            file,
            mode,
            yes,
        } => {
            let source = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read the rule file {}", file.display()))?;
            match console
                .save_rules(pool, &source, mode.map(RulesMode::from), *yes)
                .await
            {
                Ok(saved) => {
                    if json {
                        println!("{}", serde_json::to_string_pretty(&saved)?);
                    } else {
                        let mut report = console.lint_rules(pool, &source).await?;
                        report.file = file.display().to_string();
                        if !report.warnings.is_empty() {
                            print!("{}", lint_text(&report));
                        }
                        println!(
                            "{}: rules saved as version {} ({})",
                            saved.pool, saved.version, saved.mode
                        );
                    }
                    Ok(0)
                }
                Err(RulesError::Invalid(mut report) | RulesError::Unacknowledged(mut report)) => {
                    report.file = file.display().to_string();
                    if json {
                        println!("{}", serde_json::to_string_pretty(&report)?);
                    } else {
                        eprint!("{}", lint_text(&report));
                        if report.valid {
                            eprintln!(
                                "not saved: read the warnings, then save with --yes to acknowledge them"
                            );
                        } else {
                            eprintln!("not saved: nothing changed");
                        }
                    }
                    Ok(2)
                }
                Err(RulesError::Pool(error)) => Err(error.into()),
            }
        }
        PoolRulesCommand::Show { pool } => {
            let rules = console.pool_rules(pool).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&rules)?);
            } else {
                match rules {
                    Some(rules) => print!("{}", show_text(&rules, console.pool_store().now_ms())),
                    None => println!(
                        "{pool}: no rules (save a rule file with `ebb rules set {pool} FILE`)"
                    ),
                }
            }
            Ok(0)
        }
        PoolRulesCommand::Mode { pool, mode } => {
            let rules = console.set_rules_mode(pool, *mode).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&rules)?);
            } else {
                println!(
                    "{}: rules version {} {}",
                    rules.pool, rules.version, rules.mode
                );
            }
            Ok(0)
        }
    }
}

/// `ebb rules show`'s words: version and mode, the latest decision, the metrics, the file.
pub fn show_text(rules: &PoolRules, now_ms: i64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: rules version {} ({}), saved {}",
        rules.pool,
        rules.version,
        rules.mode,
        crate::when::time(rules.updated_at_ms)
    );
    match &rules.last_decision {
        Some(decision) => {
            let _ = writeln!(
                out,
                "last decision ({}): {} — {} GPUs",
                crate::when::time(decision.at_ms),
                decision.reason,
                decision.desired_gpus
            );
            for outcome in &decision.rules {
                let _ = writeln!(out, "  {}: {}", outcome.rule, outcome.status);
            }
        }
        None => {
            let _ = writeln!(out, "no decision yet (the app or `ebb daemon` enforces)");
        }
    }
    for metric in &rules.metrics {
        let value = match (metric.value, metric.at_ms) {
            (Some(value), Some(at)) => format!(
                "{value} ({} ago){}",
                crate::when::duration(now_ms - at),
                if metric.stale {
                    ", stale: its rules stand still"
                } else {
                    ""
                }
            ),
            _ => "never pushed: its rules stand still".into(),
        };
        let _ = writeln!(out, "metric {}: {value}", metric.name);
    }
    for warning in &rules.warnings {
        let _ = writeln!(out, "warning: {}: {}", warning.field, warning.problem);
    }
    let _ = writeln!(out, "---");
    out.push_str(&rules.source);
    if !rules.source.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// `ebb metric ...`.
pub async fn metric(
    command: &MetricCommand,
    data_dir: &Path,
    store: TokenStore,
    json: bool,
) -> anyhow::Result<()> {
    let console = open(data_dir, store, false).await?;
    let result = async {
        match command {
            MetricCommand::Push {
                name,
                value,
                pool,
                at,
            } => {
                let push = MetricPush {
                    name: name.clone(),
                    value: *value,
                    pool: pool.clone(),
                    at: *at,
                };
                console.push_metric(&push).await?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&push)?);
                } else {
                    let whom = pool.as_deref().map_or_else(|| "every pool".to_string(), |p| format!("pool {p}"));
                    println!("{name} = {value} for {whom}");
                }
            }
            MetricCommand::Token(MetricTokenCommand::New) => {
                let token = console.pool_store().new_metric_token().await?;
                if json {
                    println!("{}", serde_json::json!({ "token": token }));
                } else {
                    println!("{token}");
                    eprintln!(
                        "Keep it: only its hash is stored. Send it as `Authorization: Bearer TOKEN` to POST /v1/metrics."
                    );
                }
            }
        }
        anyhow::Ok(())
    }
    .await;
    console.shutdown().await;
    result
}

/// `FILE:LINE: field: words`, one line each, then a summary.
pub fn lint_text(report: &ebb_wire::rules::LintReport) -> String {
    use std::fmt::Write as _;
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
            "{}: invalid ({}); nothing was checked further",
            report.file,
            ebb_wire::rules::counted(report.errors.len() as u64, "problem", "problems")
        ),
        (true, 0) => writeln!(out, "{}: valid, no warnings", report.file),
        (true, n) => writeln!(
            out,
            "{}: valid, {}",
            report.file,
            ebb_wire::rules::counted(n as u64, "warning", "warnings")
        ),
    };
    out
}
