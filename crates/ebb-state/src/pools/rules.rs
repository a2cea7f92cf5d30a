//! Each pool's rules in `console.db` (every version kept, each save and mode change one
//! transaction with its activity entry), the enforcer's latest decision on them, and the
//! custom metrics the operator's systems push (with the tokens of the metrics endpoint).

use super::store::{NewActivity, insert_activity};
use super::{Pool, PoolError, PoolStore, refused};
use ebb_wire::phrase::Phrase;
use ebb_wire::pools::Actor;
use ebb_wire::reasons::ChangeReason;
use ebb_wire::rules::{Decision, MetricPush, RulesMode};
use sha2::{Digest, Sha256};
use sqlx::Row;

/// How long pushed metric samples are kept.
pub const METRIC_RETENTION_MS: i64 = 6 * 3_600_000;
/// How far in the past a pushed sample's `at` may be.
pub const METRIC_MAX_AGE_MS: i64 = 3_600_000;
/// How far in the future (clock skew) a pushed sample's `at` may be.
pub const METRIC_MAX_AHEAD_MS: i64 = 300_000;

/// A pool's rules as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRules {
    pub pool_id: String,
    pub pool_name: String,
    pub version: u32,
    pub mode: RulesMode,
    pub source: String,
    pub updated_at_ms: i64,
    pub last_decision: Option<Decision>,
}

/// What a save changed, for its activity entry.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RulesEdit {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
    /// Lint warnings acknowledged.
    pub warnings: u32,
}

pub(crate) fn mode_word(mode: RulesMode) -> &'static str {
    match mode {
        RulesMode::Enabled => "enabled",
        RulesMode::Disabled => "disabled",
        RulesMode::Shadow => "shadow",
    }
}

fn mode_of(word: &str) -> RulesMode {
    match word {
        "enabled" => RulesMode::Enabled,
        "shadow" => RulesMode::Shadow,
        _ => RulesMode::Disabled,
    }
}

fn rules_row(row: &crate::db::DbRow) -> StoredRules {
    StoredRules {
        pool_id: row.get("pool_id"),
        pool_name: row.get("name"),
        version: u32::try_from(row.get::<i64, _>("version")).unwrap_or(0),
        mode: mode_of(row.get("mode")),
        source: row.get("source"),
        updated_at_ms: row.get("updated_at_ms"),
        last_decision: row
            .get::<Option<String>, _>("last_decision")
            .and_then(|text| serde_json::from_str(&text).ok()),
    }
}

/// A metric name: a letter, then letters, digits and `_`, at most 64 (lower case).
pub fn check_metric_name(name: &str) -> Result<(), PoolError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(refused(
            "name",
            Phrase::new("rules.refuse.metricName")
                .text("name", name.chars().take(80).collect::<String>())
                .int("max", 64),
        ))
    }
}

fn hash_token(token: &str) -> String {
    Sha256::digest(token.trim().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl PoolStore {
    /// The rules of the pool named `name`, when it has some.
    pub async fn rules(&self, name: &str) -> Result<Option<StoredRules>, PoolError> {
        let pool = self.get(name).await?;
        let row = sqlx::query(
            "SELECT r.*, p.name FROM pool_rules r JOIN pools p ON p.id = r.pool_id WHERE r.pool_id = $1",
        )
        .bind(&pool.id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.as_ref().map(rules_row))
    }

    /// Every pool's rules (the enforcer reads these each pass).
    pub async fn all_rules(&self) -> Result<Vec<StoredRules>, PoolError> {
        let rows = sqlx::query(
            "SELECT r.*, p.name FROM pool_rules r JOIN pools p ON p.id = r.pool_id ORDER BY p.name",
        )
        .fetch_all(self.pool())
        .await?;
        Ok(rows.iter().map(rules_row).collect())
    }

    /// Saves a new version of a pool's rules (checked by the caller) with its activity entry,
    /// in one transaction. `mode`: as given, else the last version's, else enabled.
    pub async fn save_rules(
        &self,
        name: &str,
        source: &str,
        mode: Option<RulesMode>,
        edit: RulesEdit,
    ) -> Result<StoredRules, PoolError> {
        let now = self.now_ms();
        let mut tx = self.db().begin_write().await?;
        let pool = super::store::pool_named(&mut tx, name).await?;
        let had: Option<(i64, String)> =
            sqlx::query_as("SELECT version, mode FROM pool_rules WHERE pool_id = $1")
                .bind(&pool.id)
                .fetch_optional(&mut *tx)
                .await?;
        let version = had.as_ref().map_or(1, |(v, _)| v + 1);
        let mode = mode
            .or_else(|| had.as_ref().map(|(_, m)| mode_of(m)))
            .unwrap_or(RulesMode::Enabled);
        sqlx::query(
            "INSERT INTO pool_rules (pool_id, version, mode, source, updated_at_ms) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (pool_id) DO UPDATE SET version = $2, mode = $3, source = $4, updated_at_ms = $5",
        )
        .bind(&pool.id)
        .bind(version)
        .bind(mode_word(mode))
        .bind(source)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO pool_rules_versions (pool_id, version, mode, source, at_ms) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&pool.id)
        .bind(version)
        .bind(mode_word(mode))
        .bind(source)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        let version = u32::try_from(version).unwrap_or(u32::MAX);
        let reason = ChangeReason::RulesSaved {
            version,
            mode,
            added: edit.added,
            removed: edit.removed,
            changed: edit.changed,
            warnings: edit.warnings,
        };
        insert_activity(
            &mut tx,
            self.db().identity(),
            &pool,
            &unchanged(&pool, reason),
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(self.rules(name).await?.expect("the rules were just saved"))
    }

    /// Enables, disables or shadows a pool's rules, with its activity entry; nothing is
    /// logged when the mode stays.
    pub async fn set_rules_mode(
        &self,
        name: &str,
        mode: RulesMode,
    ) -> Result<StoredRules, PoolError> {
        let now = self.now_ms();
        let mut tx = self.db().begin_write().await?;
        let pool = super::store::pool_named(&mut tx, name).await?;
        let row = sqlx::query(
            "SELECT r.*, p.name FROM pool_rules r JOIN pools p ON p.id = r.pool_id WHERE r.pool_id = $1",
        )
        .bind(&pool.id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(stored) = row.as_ref().map(rules_row) else {
            return Err(refused(
                "pool",
                Phrase::new("rules.refuse.noRules").text("pool", &pool.name),
            ));
        };
        if stored.mode == mode {
            return Ok(stored);
        }
        sqlx::query("UPDATE pool_rules SET mode = $1, updated_at_ms = $2 WHERE pool_id = $3")
            .bind(mode_word(mode))
            .bind(now)
            .bind(&pool.id)
            .execute(&mut *tx)
            .await?;
        let reason = ChangeReason::RulesMode {
            version: stored.version,
            mode,
        };
        insert_activity(
            &mut tx,
            self.db().identity(),
            &pool,
            &unchanged(&pool, reason),
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(StoredRules { mode, ..stored })
    }

    /// Keeps the enforcer's latest decision on a pool's rules (shown by the Rules view and
    /// `ebb rules show`).
    pub async fn record_decision(
        &self,
        pool_id: &str,
        decision: &Decision,
    ) -> Result<(), PoolError> {
        let text = serde_json::to_string(decision)
            // serde's own words (a decision always serializes): kept as the detail.
            .map_err(|error| {
                refused(
                    "decision",
                    Phrase::new("rules.refuse.decisionUnwritable")
                        .text("detail", error.to_string()),
                )
            })?;
        sqlx::query(
            "UPDATE pool_rules SET last_decision = $1, decided_at_ms = $2 WHERE pool_id = $3",
        )
        .bind(text)
        .bind(decision.at_ms)
        .bind(pool_id)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Logs an entry that changes no count and is done when written (a decision in shadow
    /// mode, a change a clamp held).
    pub async fn log_done(&self, pool: &Pool, change: &NewActivity) -> Result<i64, PoolError> {
        let now = self.now_ms();
        let mut tx = self.db().begin_write().await?;
        let id = insert_activity(&mut tx, self.db().identity(), pool, change, now).await?;
        sqlx::query("UPDATE activity SET outcome = 'done', finished_at_ms = at_ms WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(id)
    }

    /// Checks a pushed metric sample: its name, a finite value, a pool that exists, a time
    /// within the last hour (or now). Answers the pool's name ('' for every pool) and when.
    pub async fn check_metric(&self, push: &MetricPush) -> Result<(String, i64), PoolError> {
        check_metric_name(&push.name)?;
        if !push.value.is_finite() {
            return Err(refused("value", Phrase::new("rules.refuse.metricValue")));
        }
        let now = self.now_ms();
        let at = push.at.unwrap_or(now);
        if at < now - METRIC_MAX_AGE_MS || at > now + METRIC_MAX_AHEAD_MS {
            return Err(refused("at", Phrase::new("rules.refuse.metricTime")));
        }
        let pool = match push.pool.as_deref().map(str::trim) {
            Some("") | None => String::new(),
            Some(name) => match self.get(name).await {
                Ok(pool) => pool.name,
                Err(PoolError::NotFound(name)) => {
                    return Err(refused(
                        "pool",
                        Phrase::new("pool.refuse.notFound").text("name", name),
                    ));
                }
                Err(error) => return Err(error),
            },
        };
        Ok((pool, at))
    }

    /// Stores a pushed metric sample, checked ([`Self::check_metric`]). Old samples go as
    /// new ones come.
    pub async fn push_metric(&self, push: &MetricPush) -> Result<(), PoolError> {
        self.push_metrics(std::slice::from_ref(push))
            .await
            .map_err(|(_, error)| error)
    }

    /// Stores pushed samples, all or none: each is checked first, and the first refused one
    /// is answered with its index; then all go in one transaction.
    pub async fn push_metrics(&self, pushes: &[MetricPush]) -> Result<(), (usize, PoolError)> {
        let mut checked = Vec::with_capacity(pushes.len());
        for (i, push) in pushes.iter().enumerate() {
            checked.push(self.check_metric(push).await.map_err(|error| (i, error))?);
        }
        let stored = async {
            let now = self.now_ms();
            let mut tx = self.db().begin_write().await?;
            for (push, (pool, at)) in pushes.iter().zip(&checked) {
                sqlx::query(
                    "INSERT INTO custom_metrics (name, pool, at_ms, value) VALUES ($1, $2, $3, $4)",
                )
                .bind(&push.name)
                .bind(pool)
                .bind(at)
                .bind(push.value)
                .execute(&mut *tx)
                .await?;
                sqlx::query(
                    "DELETE FROM custom_metrics WHERE name = $1 AND pool = $2 AND at_ms < $3",
                )
                .bind(&push.name)
                .bind(pool)
                .bind(now - METRIC_RETENTION_MS)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
            Ok::<(), PoolError>(())
        };
        stored.await.map_err(|error| (0, error))
    }

    /// A metric's samples for a pool since `since_ms`, oldest first: the pool's own, and
    /// those pushed for every pool.
    pub async fn metric_samples(
        &self,
        name: &str,
        pool: &str,
        since_ms: i64,
    ) -> Result<Vec<(i64, f64)>, PoolError> {
        Ok(sqlx::query_as(
            "SELECT at_ms, value FROM custom_metrics
             WHERE name = $1 AND pool IN ($2, '') AND at_ms > $3 ORDER BY at_ms",
        )
        .bind(name)
        .bind(pool)
        .bind(since_ms)
        .fetch_all(self.pool())
        .await?)
    }

    /// The latest sample of a metric for a pool, whenever it came.
    pub async fn latest_metric(
        &self,
        name: &str,
        pool: &str,
    ) -> Result<Option<(i64, f64)>, PoolError> {
        Ok(sqlx::query_as(
            "SELECT at_ms, value FROM custom_metrics WHERE name = $1 AND pool IN ($2, '')
             ORDER BY at_ms DESC LIMIT 1",
        )
        .bind(name)
        .bind(pool)
        .fetch_optional(self.pool())
        .await?)
    }

    /// Makes a bearer token for the metrics endpoint; only its hash is kept.
    pub async fn new_metric_token(&self) -> Result<String, PoolError> {
        let token = format!("ebbm_{}", super::store::random_hex(24));
        sqlx::query("INSERT INTO metric_tokens (hash, created_at_ms) VALUES ($1, $2)")
            .bind(hash_token(&token))
            .bind(self.now_ms())
            .execute(self.pool())
            .await?;
        Ok(token)
    }

    /// Whether `token` is one of the metrics endpoint's.
    pub async fn metric_token_ok(&self, token: &str) -> Result<bool, PoolError> {
        let found: Option<i64> = sqlx::query_scalar("SELECT 1 FROM metric_tokens WHERE hash = $1")
            .bind(hash_token(token))
            .fetch_optional(self.pool())
            .await?;
        Ok(found.is_some())
    }
}

/// An entry that moves no count.
fn unchanged(pool: &Pool, reason: ChangeReason) -> NewActivity {
    NewActivity {
        actor: Actor::Operator,
        from: pool.desired,
        to: pool.desired,
        reason,
        delta_per_hour_fen: None,
        delta_per_month_fen: None,
    }
}
