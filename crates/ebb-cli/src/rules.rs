//! `ebb rules …`: a pool's rule file before it is saved. `lint` exits 0 when clean, 1 with
//! warnings, 2 when the file is invalid; every error and warning names its line and field.

use anyhow::Context;
use clap::Subcommand;
use ebb_rules::lint::{LintContext, lint_file};
use ebb_wire::rules::LintReport;

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Subcommand)]
pub enum RulesCommand {
    /// Check a rule file: errors (exit 2) or warnings (exit 1) with their line and field.
    Lint {
        /// The rule file (TOML); examples in crates/ebb-rules/examples/.
        file: PathBuf,
        /// The warmup the cooldowns are checked against, in minutes.
        #[arg(long, default_value_t = 5)]
        warmup: u32,
        /// The Prometheus server its PromQL metrics are checked with (`http://HOST:9090`);
        /// by default the one the data directory's console.toml names, if any.
        #[arg(long, value_name = "URL")]
        prometheus: Option<String>,
    },
    /// Suggest a rule file for a recorded trace: the cheapest found by replay within the
    /// shortfall limit, each lever with a comment saying why (the file on standard output).
    Suggest(crate::suggest::SuggestArgs),
    /// Save a rule file as a pool's rules (a new version; linted first: invalid files are
    /// refused, warnings must be acknowledged with --yes). The app or `ebb daemon` enforces.
    Set {
        /// The pool's name.
        pool: String,
        /// The rule file (TOML).
        file: PathBuf,
        /// enabled, shadow (decide and log, change nothing) or disabled; the last version's
        /// mode when left out (enabled for the first).
        #[arg(long, value_name = "MODE")]
        mode: Option<crate::pool_rules::ModeArg>,
        /// Acknowledge the file's lint warnings and save it anyway.
        #[arg(long)]
        yes: bool,
    },
    /// Show a pool's rules: version, mode, the latest decision and why, its metrics.
    Show {
        /// The pool's name.
        pool: String,
    },
    /// Enforce a pool's rules.
    Enable {
        /// The pool's name.
        pool: String,
    },
    /// Keep a pool's rules without evaluating them.
    Disable {
        /// The pool's name.
        pool: String,
    },
    /// Decide and log what a pool's rules would do, changing nothing.
    Shadow {
        /// The pool's name.
        pool: String,
    },
}

impl RulesCommand {
    /// The commands on a pool's stored rules (they need the data directory).
    pub fn on_pool(&self) -> Option<crate::pool_rules::PoolRulesCommand> {
        use crate::pool_rules::PoolRulesCommand as P;
        use ebb_wire::rules::RulesMode;
        Some(match self {
            RulesCommand::Set {
                pool,
                file,
                mode,
                yes,
            } => P::Set {
                pool: pool.clone(),
                file: file.clone(),
                mode: *mode,
                yes: *yes,
            },
            RulesCommand::Show { pool } => P::Show { pool: pool.clone() },
            RulesCommand::Enable { pool } => P::Mode {
                pool: pool.clone(),
                mode: RulesMode::Enabled,
            },
            RulesCommand::Disable { pool } => P::Mode {
                pool: pool.clone(),
                mode: RulesMode::Disabled,
            },
            RulesCommand::Shadow { pool } => P::Mode {
                pool: pool.clone(),
                mode: RulesMode::Shadow,
            },
            RulesCommand::Lint { .. } | RulesCommand::Suggest(_) => return None,
        })
    }
}

/// Runs the command; answers the exit code.
pub async fn run(command: &RulesCommand, data_dir: &Path, json: bool) -> anyhow::Result<i32> {
    match command {
        RulesCommand::Lint {
            file,
            warmup,
            prometheus,
        } => {
            let bytes = std::fs::read(file)
                .with_context(|| format!("cannot read the rule file {}", file.display()))?;
            // A file that is not text is an invalid rule file (exit 2), not an IO failure.
            let Ok(text) = String::from_utf8(bytes) else {
                let report = not_utf8(&file.display().to_string());
                if json {
                    println!("{}", serde_json::to_string_pretty(&report)?);
                } else {
                    print!("{}", crate::pool_rules::lint_text(&report));
                }
                return Ok(exit_code(&report));
            };
            let context = LintContext {
                warmup_minutes: *warmup,
                ..LintContext::default()
            };
            let mut report = lint_file(&file.display().to_string(), &text, &context);
            let server = match prometheus {
                Some(url) => Some(url.trim_end_matches('/').to_string()),
                // `console.toml`'s `prometheus`, else its metrics back end's server.
                None => ebb_core::config::ConsoleToml::read(data_dir)
                    .ok()
                    .and_then(|toml| toml.prometheus.or(toml.metrics)),
            };
            if let Some(server) = server.filter(|_| report.valid) {
                ask_server(&mut report, &text, &server).await;
            }
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", crate::pool_rules::lint_text(&report));
            }
            Ok(exit_code(&report))
        }
        RulesCommand::Suggest(_)
        | RulesCommand::Set { .. }
        | RulesCommand::Show { .. }
        | RulesCommand::Enable { .. }
        | RulesCommand::Disable { .. }
        | RulesCommand::Shadow { .. } => {
            unreachable!("main runs these itself: they need the data directory")
        }
    }
}

/// The file's PromQL queries checked by the server (as the console checks them on save);
/// a server that does not answer is said on standard error and checks nothing.
async fn ask_server(report: &mut LintReport, text: &str, url: &str) {
    let Ok(rules) = ebb_rules::model::parse(text) else {
        return;
    };
    let pool = text
        .parse::<toml::Table>()
        .ok()
        .and_then(|table| table.get("pool")?.as_str().map(str::to_string))
        .unwrap_or_else(|| "pool".into());
    if let Err(note) = ebb_core::console_rules::check_with_server(report, &rules, &pool, url).await
    {
        eprintln!("not checked with Prometheus: {note}");
    }
}

/// The report of a rule file that is not UTF-8 text: invalid.
fn not_utf8(file: &str) -> LintReport {
    LintReport {
        file: file.to_string(),
        valid: false,
        errors: vec![ebb_wire::rules::RuleProblem::new(
            None,
            "file",
            ebb_wire::phrase::Phrase::new("rules.error.notUtf8"),
        )],
        warnings: Vec::new(),
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
