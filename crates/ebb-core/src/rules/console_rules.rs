//! The console's rules operations, shared by the desktop shell and the CLI: lint a rule
//! file against a pool, save it (refused when invalid, and when it has warnings the
//! operator did not acknowledge), show it with the latest decision and its metrics,
//! enable/disable/shadow it, and take custom metric pushes.

use crate::console::Console;
use crate::pools::rules::{RulesEdit, StoredRules};
use crate::pools::{Pool, PoolError};
use crate::rules_live::pricing;
use ebb_rules::lint::{LintContext, lint_source};
use ebb_wire::phrase::Phrase;
use ebb_wire::rules::{LintReport, MetricPush, MetricValue, PoolRules, RuleProblem, RulesMode};

/// The warmup lint checks cooldowns against, in minutes (the replay model's default).
pub const LINT_WARMUP_MINUTES: u32 = 5;

/// Why a rule file was not saved.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    /// Not a valid rule set (or not one for this pool): every problem, with its line.
    #[error("the rule file is invalid: {}", problems_words(&.0.errors))]
    Invalid(LintReport),
    /// Valid, with warnings the operator has not acknowledged.
    #[error("the rule file has {} to acknowledge before it is saved", ebb_wire::rules::counted(.0.warnings.len() as u64, "warning", "warnings"))]
    Unacknowledged(LintReport),
    #[error(transparent)]
    Pool(#[from] PoolError),
}

/// Why a PromQL metric's query could not be tested.
#[derive(Debug, thiserror::Error)]
pub enum PromqlTestError {
    /// The query is wrong (its shape, or Prometheus refused it, or it answers other than
    /// one number): in the metric's `prometheus` field.
    #[error("prometheus: {0}")]
    Query(String),
    /// No server to ask: `console.toml` names none.
    #[error(
        "no Prometheus server to ask: name one in the data directory's console.toml (prometheus = \"http://HOST:9090\", or metrics = \"prometheus+http://HOST:9090\")"
    )]
    NoServer,
    /// The server did not answer.
    #[error("metrics unavailable: {0}")]
    Unavailable(ebb_telemetry::prom::PromError),
    #[error(transparent)]
    Pool(#[from] PoolError),
}

fn problems_words(problems: &[RuleProblem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl RulesError {
    /// The first problem (field and line), for an error that names one.
    pub fn first_problem(&self) -> Option<&RuleProblem> {
        match self {
            RulesError::Invalid(report) => report.errors.first(),
            _ => None,
        }
    }
}

/// The pool's own checks on a valid rule set: its `pool` names this one, its limits lie
/// within the pool's range.
fn against_pool(rules: &ebb_wire::rules::RuleSet, pool: &Pool, text: &str) -> Vec<RuleProblem> {
    let mut problems = Vec::new();
    let line = |field: &str| ebb_rules::model::line_of_field(text, field);
    if let Some(name) = rules.pool.as_deref()
        && name != pool.name
    {
        problems.push(RuleProblem::new(
            line("pool"),
            "pool",
            Phrase::new("rules.error.otherPool")
                .text("name", name)
                .text("pool", pool.name.as_str()),
        ));
    }
    let limits = &rules.limits;
    if limits.min_gpus < pool.min {
        problems.push(RuleProblem::new(
            line("limits.min_gpus"),
            "limits.min_gpus",
            Phrase::new("rules.error.belowPoolMin")
                .int("value", limits.min_gpus)
                .int("min", pool.min),
        ));
    }
    if limits.max_gpus > pool.max {
        problems.push(RuleProblem::new(
            line("limits.max_gpus"),
            "limits.max_gpus",
            Phrase::new("rules.error.abovePoolMax")
                .int("value", limits.max_gpus)
                .int("max", pool.max),
        ));
    }
    problems
}

impl Console {
    /// Lints a rule file as it would be saved for `pool`: invalid (with every problem's line
    /// and field), or valid with its warnings.
    /// A PromQL metric's query run now against the server the rules' metrics read (the
    /// pool's name templated in), as the Rules form's Test does: its value, or why none.
    pub async fn test_promql(
        &self,
        pool: &str,
        query: &str,
    ) -> Result<ebb_wire::rules::PromqlValue, PromqlTestError> {
        use ebb_telemetry::prom::{PromClient, PromError, TIMEOUT};
        let pool = self.pools.get(pool).await?;
        ebb_rules::promql::check(query).map_err(PromqlTestError::Query)?;
        let url = self.promql_server().ok_or(PromqlTestError::NoServer)?;
        let rendered = ebb_rules::promql::render(query, &pool.name);
        let client = PromClient::new(&url, TIMEOUT).map_err(PromqlTestError::Unavailable)?;
        let samples = match client.instant(&rendered).await {
            Ok(samples) => samples,
            Err(PromError::Refused { reason, .. }) => {
                return Err(PromqlTestError::Query(format!(
                    "Prometheus refuses `{rendered}`: {reason}"
                )));
            }
            Err(error) => return Err(PromqlTestError::Unavailable(error)),
        };
        let value = ebb_telemetry::prom::number_of(&samples)
            .map_err(|problem| PromqlTestError::Query(format!("`{rendered}`: {problem}")))?;
        Ok(ebb_wire::rules::PromqlValue {
            query: rendered,
            value,
        })
    }

    pub async fn lint_rules(&self, pool: &str, source: &str) -> Result<LintReport, PoolError> {
        Ok(self.checked_rules(pool, source).await?.0)
    }

    /// [`Self::lint_rules`], with the rule set when it may be saved (parsed once).
    async fn checked_rules(
        &self,
        pool: &str,
        source: &str,
    ) -> Result<(LintReport, Option<ebb_rules::model::RuleSet>), PoolError> {
        let pool = self.pools.get(pool).await?;
        let price = pricing(&pool, None, &self.catalog());
        let context = LintContext {
            warmup_minutes: LINT_WARMUP_MINUTES,
            pricing: price.as_ref(),
            peak_busy_gpus: None,
        };
        let (mut report, rules) = lint_source(&format!("{}.toml", pool.name), source, &context);
        if let Some(rules) = &rules {
            let problems = against_pool(rules.spec(), &pool, source);
            if !problems.is_empty() {
                report.valid = false;
                report.errors = problems;
                report.warnings.clear();
                return Ok((report, None));
            }
            // Each PromQL query parsed by the server the rules will ask, where one is named.
            if let Some(url) = self.promql_server()
                && let Err(note) = check_with_server(&mut report, rules, &pool.name, &url).await
            {
                tracing::info!(%note, "the rules' PromQL queries were not checked by Prometheus");
            }
            if !report.valid {
                return Ok((report, None));
            }
        }
        Ok((report, rules))
    }

    /// Saves a new version of a pool's rules: refused when invalid, and when it has
    /// warnings not `acknowledged`; one transaction with its activity entry (what changed).
    pub async fn save_rules(
        &self,
        pool: &str,
        source: &str,
        mode: Option<RulesMode>,
        acknowledged: bool,
    ) -> Result<PoolRules, RulesError> {
        let stays_enabled = match mode {
            Some(mode) => mode == RulesMode::Enabled,
            None => self
                .pools
                .rules(pool)
                .await?
                .is_some_and(|stored| stored.mode == RulesMode::Enabled),
        };
        self.require(if stays_enabled {
            ebb_wire::access::AccessAction::EnableRules
        } else {
            ebb_wire::access::AccessAction::EditRules
        })
        .await
        .map_err(PoolError::from)?;
        let (report, rules) = self.checked_rules(pool, source).await?;
        let Some(new) = rules else {
            return Err(RulesError::Invalid(report));
        };
        if !report.warnings.is_empty() && !acknowledged {
            return Err(RulesError::Unacknowledged(report));
        }
        let old = self
            .pools
            .rules(pool)
            .await?
            .and_then(|stored| ebb_rules::model::parse(&stored.source).ok());
        let (added, removed, changed) = match &old {
            Some(old) => ebb_rules::model::diff(old.spec(), new.spec()),
            None => (Vec::new(), Vec::new(), Vec::new()),
        };
        let edit = RulesEdit {
            added,
            removed,
            changed,
            warnings: u32::try_from(report.warnings.len()).unwrap_or(u32::MAX),
        };
        let stored = self.pools.save_rules(pool, source, mode, edit).await?;
        self.wrote(Some(&[pool])).await;
        Ok(self
            .pool_rules_view(stored, report, new.spec().clone())
            .await?)
    }

    /// Enables, disables or shadows a pool's rules (logged).
    pub async fn set_rules_mode(
        &self,
        pool: &str,
        mode: RulesMode,
    ) -> Result<PoolRules, PoolError> {
        self.require(if mode == RulesMode::Enabled {
            ebb_wire::access::AccessAction::EnableRules
        } else {
            ebb_wire::access::AccessAction::EditRules
        })
        .await?;
        self.pools.set_rules_mode(pool, mode).await?;
        self.wrote(Some(&[pool])).await;
        self.pool_rules(pool)
            .await?
            .ok_or_else(|| PoolError::NotFound(pool.to_string()))
    }

    /// A pool's rules with their warnings, the latest decision and the custom metrics they
    /// name; `None` when the pool has none.
    pub async fn pool_rules(&self, pool: &str) -> Result<Option<PoolRules>, PoolError> {
        let Some(stored) = self.pools.rules(pool).await? else {
            return Ok(None);
        };
        let (report, checked) = self.checked_rules(pool, &stored.source).await?;
        // Saved within the pool's range; the pool's range may have moved since.
        let rules = checked
            .or_else(|| ebb_rules::model::parse(&stored.source).ok())
            .map(|rules| rules.spec().clone())
            .unwrap_or_default();
        Ok(Some(self.pool_rules_view(stored, report, rules).await?))
    }

    async fn pool_rules_view(
        &self,
        stored: StoredRules,
        report: LintReport,
        rules: ebb_wire::rules::RuleSet,
    ) -> Result<PoolRules, PoolError> {
        let now = self.pools.now_ms();
        let mut metrics = Vec::with_capacity(rules.metrics.len());
        for metric in &rules.metrics {
            let latest = self
                .pools
                .latest_metric(&metric.name, &stored.pool_name)
                .await?;
            let stale_ms = i64::from(metric.stale_after_minutes) * 60_000;
            metrics.push(MetricValue {
                name: metric.name.clone(),
                value: latest.map(|(_, v)| v),
                at_ms: latest.map(|(at, _)| at),
                stale: latest.is_none_or(|(at, _)| now - at > stale_ms),
                stale_after_minutes: metric.stale_after_minutes,
            });
        }
        Ok(PoolRules {
            pool: stored.pool_name,
            version: stored.version,
            mode: stored.mode,
            source: stored.source,
            rules,
            updated_at_ms: stored.updated_at_ms,
            warnings: report.warnings,
            last_decision: stored.last_decision,
            metrics,
        })
    }

    /// Stores a custom metric pushed by the operator's systems (checked, naming the field).
    pub async fn push_metric(&self, push: &MetricPush) -> Result<(), PoolError> {
        self.require(ebb_wire::access::AccessAction::PushMetrics)
            .await?;
        self.pools.push_metric(push).await
    }
}

/// Each PromQL metric's query (`pool` templated in) checked by the server's own parser: one
/// it refuses makes the report invalid, naming the metric's field. A server that does not
/// answer checks nothing: `Err` says why.
pub async fn check_with_server(
    report: &mut LintReport,
    rules: &ebb_rules::model::RuleSet,
    pool: &str,
    url: &str,
) -> Result<(), String> {
    let client = ebb_telemetry::prom::PromClient::new(url, ebb_telemetry::prom::TIMEOUT)
        .map_err(|error| error.to_string())?;
    for (i, metric) in rules.spec().metrics.iter().enumerate() {
        let Some(source) = &metric.prometheus else {
            continue;
        };
        let query = ebb_rules::promql::render(&source.query, pool);
        match client.parse(&query).await {
            Ok(None) => {}
            Ok(Some(reason)) => {
                report.valid = false;
                // The server's reason stays as it says it (`reason`).
                report.errors.push(RuleProblem::new(
                    None,
                    format!("metric[{i}].prometheus"),
                    Phrase::new("rules.error.prometheusRefuses")
                        .text("url", url)
                        .text("reason", reason),
                ));
            }
            Err(error) => return Err(format!("metric[{i}].prometheus: {error}")),
        }
    }
    Ok(())
}
