//! The store: pools, lease intents, the lease history, failover fences, what the enforcer
//! last saw and the activity log, in `console.db`.
//!
//! A pool's desired count is compare-and-set (`PoolStore::set_desired`): every writer says
//! the count it moves from (the slider the count it showed, `ebb pool scale` the count its
//! preview read, a rule the count it decided on), and when another change came first
//! nothing is written (`PoolError::Moved`). Each change is one transaction with its
//! activity entry, so the activity log is a chain: each change moves from the count the one
//! before left. The enforcer adds each pass's per-host results to the pool's open change and
//! closes it when the pool holds what it should. A rent is written to `lease_intents`
//! (`PoolStore::add_intents`) before it is sent, and deleted once its answer is certain.

use super::*;

/// The pools' tables in `console.db`; cheap to clone.
#[derive(Debug, Clone)]
pub struct PoolStore {
    db: ConsoleDb,
}

pub(super) fn random_id(prefix: &str) -> String {
    format!("{prefix}{}", random_hex(8))
}

/// `bytes` random bytes in hex; the clock fills in so an id is never refused for want of
/// randomness.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes.max(8)];
    if getrandom::fill(&mut buf).is_err() {
        buf[..8].copy_from_slice(&now_ms().to_le_bytes());
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

pub(super) const POOL_COLUMNS: &str = "id, name, model, regions, min_gpus, max_gpus, desired, base_gpus, term, overlay, placement, interruptible, release_at_unit_end, force_release, release_first, created_at_ms, spot_mix";

pub(super) fn pool_row(row: &crate::db::DbRow) -> Pool {
    let regions: String = row.get("regions");
    let count = |column: &str| u32::try_from(row.get::<i64, _>(column)).unwrap_or(0);
    Pool {
        id: row.get("id"),
        name: row.get("name"),
        model: row.get("model"),
        regions: serde_json::from_str(&regions).unwrap_or_default(),
        min: count("min_gpus"),
        max: count("max_gpus"),
        desired: count("desired"),
        base_gpus: count("base_gpus"),
        term: row.get::<String, _>("term").parse().unwrap_or_default(),
        overlay: row.get::<String, _>("overlay").parse().unwrap_or_default(),
        placement: if row.get::<String, _>("placement") == "spread" {
            PlacementPolicy::Spread
        } else {
            PlacementPolicy::Pack
        },
        interruptible: row.get::<i64, _>("interruptible") != 0,
        release_at_unit_end: row.get::<i64, _>("release_at_unit_end") != 0,
        force_release: row.get::<i64, _>("force_release") != 0,
        release_first: serde_json::from_str(row.get::<&str, _>("release_first"))
            .unwrap_or_default(),
        created_at_ms: row.get("created_at_ms"),
        spot: serde_json::from_str(row.get::<&str, _>("spot_mix")).unwrap_or_default(),
    }
}

/// The pool named `name` as stored, read on `conn`: inside a write transaction, the row no
/// other writer can change before the transaction ends.
pub(super) async fn pool_named(
    conn: &mut sqlx::AnyConnection,
    name: &str,
) -> Result<Pool, PoolError> {
    sqlx::query(AssertSqlSafe(format!(
        "SELECT {POOL_COLUMNS} FROM pools WHERE name = $1"
    )))
    .bind(name.trim())
    .fetch_optional(&mut *conn)
    .await?
    .map(|row| pool_row(&row))
    .ok_or_else(|| PoolError::NotFound(name.trim().to_string()))
}

pub(super) fn placement_word(policy: PlacementPolicy) -> &'static str {
    match policy {
        PlacementPolicy::Pack => "pack",
        PlacementPolicy::Spread => "spread",
    }
}

pub(super) fn actor_word(actor: Actor) -> &'static str {
    match actor {
        Actor::Operator => "operator",
        Actor::Failover => "failover",
        Actor::Rule => "rule",
        Actor::Enforcer => "enforcer",
        Actor::Demo => "demo",
        Actor::Slurm => "slurm",
    }
}

pub(super) fn outcome_word(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::InProgress => "in_progress",
        Outcome::Done => "done",
        Outcome::Partial => "partial",
        Outcome::Superseded => "superseded",
    }
}

/// A change to record in the activity log.
#[derive(Debug, Clone, PartialEq)]
pub struct NewActivity {
    pub actor: Actor,
    pub from: u32,
    pub to: u32,
    pub reason: ChangeReason,
    pub delta_per_hour_fen: Option<i64>,
    pub delta_per_month_fen: Option<i64>,
}

impl PoolStore {
    pub fn new(db: ConsoleDb) -> Self {
        Self { db }
    }

    pub(super) fn pool(&self) -> &sqlx::AnyPool {
        self.db.pool()
    }

    /// Now, on the database's clock (what the enforcer and the views read too).
    pub fn now_ms(&self) -> i64 {
        self.db.now_ms()
    }

    /// The database under the store (the pool history shares it).
    pub fn db(&self) -> &ConsoleDb {
        &self.db
    }

    /// This console's holder id, made once per data directory.
    pub async fn console_id(&self) -> Result<String, PoolError> {
        // Read first: a role that may not write `meta` (a viewer's) reads the one made.
        let made: Option<String> =
            sqlx::query_scalar("SELECT value FROM meta WHERE key = 'console_id'")
                .fetch_optional(self.pool())
                .await?;
        if let Some(id) = made {
            return Ok(id);
        }
        let fresh = random_id("console-");
        sqlx::query(
            "INSERT INTO meta (key, value) VALUES ('console_id', $1) ON CONFLICT (key) DO NOTHING",
        )
        .bind(&fresh)
        .execute(self.pool())
        .await?;
        Ok(
            sqlx::query_scalar("SELECT value FROM meta WHERE key = 'console_id'")
                .fetch_one(self.pool())
                .await?,
        )
    }

    pub async fn list(&self) -> Result<Vec<Pool>, PoolError> {
        list_on(&mut *self.pool().acquire().await?).await
    }

    /// What an enforcer pass reads before it looks at the agents, as of one moment: a
    /// change and the desired count it set are seen together or not at all (a pool read
    /// after a change was written, with the change read before it, would make a grant
    /// for that change look like upkeep, and leave the change open).
    pub async fn recorded(&self) -> Result<Recorded, PoolError> {
        let mut tx = self.db.begin_snapshot().await?;
        let recorded = Recorded {
            open: open_changes_on(&mut tx).await?,
            pools: list_on(&mut tx).await?,
            intents: intents_on(&mut tx).await?,
            fences: fences_on(&mut tx).await?,
            leases: known_leases_on(&mut tx).await?,
        };
        tx.commit().await?;
        Ok(recorded)
    }

    pub async fn get(&self, name: &str) -> Result<Pool, PoolError> {
        let mut conn = self.pool().acquire().await?;
        pool_named(&mut conn, name).await
    }

    /// Creates a pool at its `min`, with its activity entry, in one transaction.
    pub async fn create(&self, valid: Valid) -> Result<Pool, PoolError> {
        let mut pool = valid.0;
        pool.id = random_id("pool-");
        let now = self.now_ms();
        pool.created_at_ms = now;
        let mut tx = self.db.begin_write().await?;
        save(
            &mut tx,
            "INSERT INTO pools (name, model, regions, min_gpus, max_gpus, desired, base_gpus, term, overlay, placement, interruptible, release_at_unit_end, updated_at_ms, id, spot_mix, created_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $13)",
            &pool,
            now,
        )
        .await?;
        let change = NewActivity {
            actor: Actor::Operator,
            from: 0,
            to: pool.desired,
            reason: ChangeReason::Created {
                model: pool.model.clone(),
                regions: pool.regions.clone(),
                min: pool.min,
                max: pool.max,
            },
            delta_per_hour_fen: None,
            delta_per_month_fen: None,
        };
        insert_activity(&mut tx, self.db().identity(), &pool, &change, now).await?;
        tx.commit().await?;
        Ok(pool)
    }

    /// Changes a pool's settings; `desired` is kept, moved into `[min, max]` when it left
    /// it. The settings and their activity entry are one transaction.
    pub async fn update(&self, name: &str, valid: Valid) -> Result<(Pool, Pool), PoolError> {
        let mut tx = self.db.begin_write().await?;
        // Read under the write lock: the count kept is the one stored now, never one a
        // slider or a rule replaced since the form was read.
        let before = pool_named(&mut tx, name).await?;
        let mut pool = valid.0;
        pool.id = before.id.clone();
        pool.created_at_ms = before.created_at_ms;
        pool.desired = before.desired.clamp(pool.min, pool.max);
        let now = self.now_ms();
        save(
            &mut tx,
            "UPDATE pools SET name = $1, model = $2, regions = $3, min_gpus = $4, max_gpus = $5, desired = $6, base_gpus = $7, term = $8, overlay = $9, placement = $10, interruptible = $11, release_at_unit_end = $12, updated_at_ms = $13, spot_mix = $15 WHERE id = $14",
            &pool,
            now,
        )
        .await?;
        let change = NewActivity {
            actor: Actor::Operator,
            from: before.desired,
            to: pool.desired,
            reason: ChangeReason::SettingsChanged {
                min: pool.min,
                max: pool.max,
                range_moved: before.desired != pool.desired,
            },
            delta_per_hour_fen: None,
            delta_per_month_fen: None,
        };
        insert_activity(&mut tx, self.db().identity(), &pool, &change, now).await?;
        tx.commit().await?;
        Ok((before, pool))
    }

    /// Deletes a pool; the enforcer releases what it still holds.
    pub async fn delete(&self, name: &str) -> Result<Pool, PoolError> {
        let mut tx = self.db.begin_write().await?;
        let pool = pool_named(&mut tx, name).await?;
        sqlx::query("DELETE FROM pools WHERE id = $1")
            .bind(&pool.id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM pool_status WHERE pool_id = $1")
            .bind(&pool.id)
            .execute(&mut *tx)
            .await?;
        supersede_open(&mut tx, &pool.id, self.now_ms()).await?;
        let change = NewActivity {
            actor: Actor::Operator,
            from: pool.desired,
            to: 0,
            reason: ChangeReason::Deleted,
            delta_per_hour_fen: None,
            delta_per_month_fen: None,
        };
        let id =
            insert_activity(&mut tx, self.db().identity(), &pool, &change, self.now_ms()).await?;
        sqlx::query("UPDATE activity SET outcome = 'done', finished_at_ms = at_ms WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(pool)
    }

    /// Sets a pool's desired count and logs the change, in one transaction; an unfinished
    /// change of the same pool is marked superseded. `release_first` names the leases to give
    /// back first (checked by the caller against what the pool holds); it replaces the last
    /// change's.
    ///
    /// Compare-and-set: `change.from` is the count the writer moves the pool from; when the
    /// stored count is another (a slider, a rule, an edit or another console moved it since
    /// the writer looked), nothing changes and the answer is [`PoolError::Moved`]. A
    /// scale-out is checked against the team's GPU quota and, given `spend`, its spend quota,
    /// under the write lock.
    pub async fn set_desired(
        &self,
        name: &str,
        to: u32,
        release_first: &[String],
        change: &NewActivity,
        spend: Option<&super::teams::SpendCheck<'_>>,
    ) -> Result<(Pool, ActivityEntry), PoolError> {
        let chosen = serde_json::to_string(release_first)
            // serde's own words (it cannot fail on a list of strings): kept as the detail.
            .map_err(|error| {
                refused(
                    "release",
                    ebb_wire::phrase::Phrase::new("pool.refuse.releaseUnwritable")
                        .text("detail", error.to_string()),
                )
            })?;
        let mut tx = self.db.begin_write().await?;
        let mut pool = pool_named(&mut tx, name).await?;
        pool.check_count("desired", to)?;
        if pool.desired != change.from {
            return Err(PoolError::Moved {
                pool: pool.name,
                expected: change.from,
                actual: pool.desired,
            });
        }
        if to > pool.desired {
            // Under the write lock: two pools of one team moved at once never pass its quota.
            Self::quota_guard(&mut tx, &pool, to).await?;
            if let Some(check) = spend {
                Self::spend_guard(&mut tx, &pool, to, check, self.now_ms()).await?;
            }
        }
        let now = self.now_ms();
        sqlx::query(
            "UPDATE pools SET desired = $1, force_release = 0, release_first = $2, updated_at_ms = $3 WHERE id = $4",
        )
        .bind(i64::from(to))
        .bind(chosen)
        .bind(now)
        .bind(&pool.id)
        .execute(&mut *tx)
        .await?;
        supersede_open(&mut tx, &pool.id, now).await?;
        let id = insert_activity(&mut tx, self.db().identity(), &pool, change, now).await?;
        tx.commit().await?;
        pool.desired = to;
        pool.release_first = release_first.to_vec();
        Ok((pool, self.activity_entry(id).await?))
    }

    /// Releases what the current scale-in keeps for its paid units, now (until the next
    /// change), and logs it.
    pub async fn force_release(&self, name: &str) -> Result<Pool, PoolError> {
        let mut tx = self.db.begin_write().await?;
        let mut pool = pool_named(&mut tx, name).await?;
        let now = self.now_ms();
        sqlx::query("UPDATE pools SET force_release = 1, updated_at_ms = $1 WHERE id = $2")
            .bind(now)
            .bind(&pool.id)
            .execute(&mut *tx)
            .await?;
        let change = NewActivity {
            actor: Actor::Operator,
            from: pool.desired,
            to: pool.desired,
            reason: ChangeReason::ReleaseNow,
            delta_per_hour_fen: None,
            delta_per_month_fen: None,
        };
        insert_activity(&mut tx, self.db().identity(), &pool, &change, now).await?;
        tx.commit().await?;
        pool.force_release = true;
        Ok(pool)
    }

    /// Logs a change the enforcer made on its own (failover, stale or orphan releases).
    pub async fn log(&self, pool: &Pool, change: &NewActivity) -> Result<i64, PoolError> {
        let mut tx = self.db.begin_write().await?;
        let id =
            insert_activity(&mut tx, self.db().identity(), pool, change, self.now_ms()).await?;
        tx.commit().await?;
        Ok(id)
    }

    async fn activity_entry(&self, id: i64) -> Result<ActivityEntry, PoolError> {
        let row = sqlx::query(AssertSqlSafe(format!(
            "SELECT {ACTIVITY_COLUMNS} FROM activity WHERE id = $1"
        )))
        .bind(id)
        .fetch_one(self.pool())
        .await?;
        Ok(activity_row(&row))
    }

    /// Says that the operator's entries after `after_id` were the demo's own setup (its
    /// hosts, pool and rules, made through the same calls an operator's are): they read
    /// as the demo's, not the operator's. Answers how many.
    pub async fn attribute_to_demo(&self, after_id: i64) -> Result<u64, PoolError> {
        let done =
            sqlx::query("UPDATE activity SET actor = 'demo' WHERE id > $1 AND actor = 'operator'")
                .bind(after_id)
                .execute(self.pool())
                .await?;
        Ok(done.rows_affected())
    }

    /// The activity log, newest first, of one pool or all.
    pub async fn activity(
        &self,
        pool: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ActivityEntry>, PoolError> {
        let Some(name) = pool else {
            let rows = sqlx::query(AssertSqlSafe(format!(
                "SELECT {ACTIVITY_COLUMNS} FROM activity ORDER BY id DESC LIMIT $1"
            )))
            .bind(i64::from(limit))
            .fetch_all(self.pool())
            .await?;
            return Ok(rows.iter().map(activity_row).collect());
        };
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT {ACTIVITY_COLUMNS} FROM activity WHERE pool_name = $1 ORDER BY id DESC LIMIT $2"
        )))
        .bind(name.trim())
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        let mut entries: Vec<ActivityEntry> = rows.iter().map(activity_row).collect();
        // The console-wide entries that touch the pool: spot paused or resumed for its model
        // in one of its regions (a breaker is per model and region).
        if let Ok(pool) = self.get(name).await {
            let spot = sqlx::query(AssertSqlSafe(format!(
                "SELECT {ACTIVITY_COLUMNS} FROM activity WHERE pool_name = '' AND (reason LIKE '%\"kind\":\"spot_paused\"%' OR reason LIKE '%\"kind\":\"spot_resumed\"%') ORDER BY id DESC LIMIT $1"
            )))
            .bind(i64::from(limit))
            .fetch_all(self.pool())
            .await?;
            entries.extend(
                spot.iter()
                    .map(activity_row)
                    .filter(|entry| touches(&entry.reason, &pool)),
            );
            entries.sort_by_key(|entry| std::cmp::Reverse(entry.id));
            entries.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        }
        Ok(entries)
    }

    /// The activity entries after `after_id`, oldest first, at most `limit` (what the
    /// desktop's notifications read every few seconds).
    pub async fn activity_after(
        &self,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<ActivityEntry>, PoolError> {
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT {ACTIVITY_COLUMNS} FROM activity WHERE id > $1 ORDER BY id LIMIT $2"
        )))
        .bind(after_id)
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        Ok(rows.iter().map(activity_row).collect())
    }

    /// Every activity entry at or after `from_ms`, oldest first (the spot breakers read
    /// the reclaims and their switches back from it).
    pub async fn activity_since(&self, from_ms: i64) -> Result<Vec<ActivityEntry>, PoolError> {
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT {ACTIVITY_COLUMNS} FROM activity WHERE at_ms >= $1 ORDER BY id"
        )))
        .bind(from_ms)
        .fetch_all(self.pool())
        .await?;
        Ok(rows.iter().map(activity_row).collect())
    }

    /// A console-wide entry (no pool), done when written.
    pub async fn log_console(&self, actor: Actor, reason: &ChangeReason) -> Result<i64, PoolError> {
        let now = self.now_ms();
        let mut tx = self.db().begin_write().await?;
        let row = crate::db::ActivityRow::console(actor_word(actor), reason);
        let id = crate::db::log_activity(&mut tx, self.db().identity(), &row, now).await?;
        tx.commit().await?;
        Ok(id)
    }

    /// The newest activity entry's id (0 when there is none).
    /// The pools whose changes finished after `after_ms`, among the log's newest entries,
    /// and the latest finish seen (`after_ms` when none): a grant or a release another
    /// console carried out ends an entry it already wrote rather than adding one, so a
    /// look for new ids alone would not hear it.
    pub async fn finished_after(&self, after_ms: i64) -> Result<(Vec<String>, i64), PoolError> {
        /// How far back a change may still finish: the newest entries only (a look each
        /// second reads an index range, never the whole log).
        const RECENT: i64 = 500;
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT pool_name, finished_at_ms FROM activity WHERE id > (SELECT COALESCE(MAX(id), 0) FROM activity) - $1 AND finished_at_ms > $2",
        )
        .bind(RECENT)
        .bind(after_ms)
        .fetch_all(self.pool())
        .await?;
        let latest = rows.iter().map(|(_, at)| *at).fold(after_ms, i64::max);
        let mut pools: Vec<String> = rows
            .into_iter()
            .map(|(pool, _)| pool)
            .filter(|pool| !pool.is_empty())
            .collect();
        pools.sort();
        pools.dedup();
        Ok((pools, latest))
    }

    pub async fn last_activity_id(&self) -> Result<i64, PoolError> {
        let id: Option<i64> = sqlx::query_scalar("SELECT MAX(id) FROM activity")
            .fetch_one(self.pool())
            .await?;
        Ok(id.unwrap_or(0))
    }

    /// A pool's rule decisions (actor `rule`) in `from_ms..=to_ms`: the newest `limit`,
    /// oldest first (the pool chart marks them).
    pub async fn rule_activity(
        &self,
        pool: &str,
        from_ms: i64,
        to_ms: i64,
        limit: u32,
    ) -> Result<Vec<ActivityEntry>, PoolError> {
        let mut rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT {ACTIVITY_COLUMNS} FROM activity WHERE pool_name = $1 AND actor = 'rule' AND at_ms BETWEEN $2 AND $3 ORDER BY id DESC LIMIT $4"
        )))
        .bind(pool.trim())
        .bind(from_ms)
        .bind(to_ms)
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        rows.reverse();
        Ok(rows.iter().map(activity_row).collect())
    }

    /// A pool's spot events in `from_ms..=to_ms`, the newest `limit`, oldest first: its
    /// reclaims, and its model's spot paused or resumed in one of its regions (the pool
    /// chart marks them).
    pub async fn spot_activity(
        &self,
        pool: &Pool,
        from_ms: i64,
        to_ms: i64,
        limit: u32,
    ) -> Result<Vec<ActivityEntry>, PoolError> {
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT {ACTIVITY_COLUMNS} FROM activity WHERE (pool_name = $1 OR pool_name = '') AND at_ms BETWEEN $2 AND $3 AND (reason LIKE '%reclaimed%' OR reason LIKE '%spot_%') ORDER BY id DESC"
        )))
        .bind(pool.name.trim())
        .bind(from_ms)
        .bind(to_ms)
        .fetch_all(self.pool())
        .await?;
        let ours = |model: &str, region: &str| {
            model == pool.model && pool.regions.iter().any(|r| r == region)
        };
        let mut entries: Vec<ActivityEntry> = rows
            .iter()
            .map(activity_row)
            .filter(|entry| match &entry.reason {
                ChangeReason::Reclaimed { .. } => entry.pool == pool.name,
                ChangeReason::SpotPaused { model, region, .. }
                | ChangeReason::SpotResumed { model, region, .. } => ours(model, region),
                _ => false,
            })
            .take(limit as usize)
            .collect();
        entries.reverse();
        Ok(entries)
    }

    /// Records a change's per-host results and how it stands.
    pub async fn update_change(
        &self,
        id: i64,
        results: &[HostResult],
        outcome: Outcome,
    ) -> Result<(), PoolError> {
        let finished = matches!(outcome, Outcome::Done).then(|| self.now_ms());
        sqlx::query(
            "UPDATE activity SET results = $1, outcome = $2, finished_at_ms = $3 WHERE id = $4",
        )
        .bind(serde_json::to_string(results).unwrap_or_default())
        .bind(outcome_word(outcome))
        .bind(finished)
        .bind(id)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Writes lease requests before they are sent (one transaction).
    pub async fn add_intents(&self, intents: &[Pending]) -> Result<(), PoolError> {
        let now = self.now_ms();
        let mut tx = self.db.begin_write().await?;
        for intent in intents {
            let first = intent.gpu_uuids.first().cloned().unwrap_or_default();
            // One GPU: the column alone, as before nodes were requested here too.
            let all = (intent.gpu_uuids.len() != 1)
                .then(|| serde_json::to_string(&intent.gpu_uuids))
                .transpose()
                .map_err(json_error)?;
            let command = intent
                .command
                .as_ref()
                .map(serde_json::to_string)
                .transpose()
                .map_err(json_error)?;
            sqlx::query(
                "INSERT INTO lease_intents (key, pool_id, host, gpu_uuid, gpu_uuids, command, created_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (key) DO NOTHING",
            )
            .bind(&intent.key)
            .bind(&intent.pool_id)
            .bind(&intent.host)
            .bind(first)
            .bind(all)
            .bind(command)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub async fn intents(&self) -> Result<Vec<Pending>, PoolError> {
        intents_on(&mut *self.pool().acquire().await?).await
    }

    /// Intents whose answers are certain, in one transaction; each granted lease is
    /// recorded with its intent's end.
    pub async fn resolve_intents(
        &self,
        settled: &[(String, Option<(String, Lease)>)],
    ) -> Result<(), PoolError> {
        if settled.is_empty() {
            return Ok(());
        }
        let mut tx = self.db.begin_write().await?;
        for (key, granted) in settled {
            if let Some((host, lease)) = granted {
                upsert_lease(&mut tx, host, lease).await?;
            }
            sqlx::query("DELETE FROM lease_intents WHERE key = $1")
                .bind(key)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Records the end of leases whose release an agent answered as done (one
    /// transaction), at the agent's release time, before the lease leaves its list.
    pub async fn record_ended(&self, ended: &[(&str, &Lease)]) -> Result<(), PoolError> {
        if ended.is_empty() {
            return Ok(());
        }
        let mut tx = self.db.begin_write().await?;
        for (host, lease) in ended {
            upsert_lease(&mut tx, host, lease).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Brings the lease history of these hosts in line with what their agents reported
    /// (one transaction): our leases there are recorded (a released one with the agent's
    /// release time), and a recorded one an agent no longer knows of at all is ended now.
    pub async fn sync_hosts(
        &self,
        hosts: &[(&str, Vec<&Lease>)],
        now: i64,
    ) -> Result<(), PoolError> {
        if hosts.is_empty() {
            return Ok(());
        }
        let mut tx = self.db.begin_write().await?;
        for (host, ours) in hosts {
            for lease in ours {
                upsert_lease(&mut tx, host, lease).await?;
            }
            let open: Vec<String> = sqlx::query_scalar(
                "SELECT lease_id FROM pool_leases WHERE host = $1 AND ended_at_ms IS NULL",
            )
            .bind(host)
            .fetch_all(&mut *tx)
            .await?;
            for id in open {
                if !ours.iter().any(|lease| lease.id == id) {
                    sqlx::query(
                        "UPDATE pool_leases SET ended_at_ms = $1 WHERE host = $2 AND lease_id = $3",
                    )
                    .bind(now)
                    .bind(host)
                    .bind(&id)
                    .execute(&mut *tx)
                    .await?;
                }
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// Our leases not known to have ended.
    pub async fn known_leases(&self) -> Result<Vec<KnownLease>, PoolError> {
        known_leases_on(&mut *self.pool().acquire().await?).await
    }

    /// A pool's leases that were held at some time since `since_ms`, with their hosts'
    /// regions (a host gone from the registry: `None`).
    pub async fn spans(
        &self,
        pool_id: &str,
        since_ms: i64,
    ) -> Result<Vec<super::RegionSpan>, PoolError> {
        spans_on(&mut *self.pool().acquire().await?, pool_id, since_ms).await
    }
}

/// [`PoolStore::spans`] on `conn` (inside a transaction, as of it).
pub(super) async fn spans_on(
    conn: &mut sqlx::AnyConnection,
    pool_id: &str,
    since_ms: i64,
) -> Result<Vec<super::RegionSpan>, PoolError> {
    let rows = sqlx::query(
        "SELECT l.host, l.lease_id, l.granted_at_ms, l.ended_at_ms, l.gpu_uuids, l.spot, h.region FROM pool_leases l LEFT JOIN hosts h ON h.name = l.host WHERE l.pool_id = $1 AND (l.ended_at_ms IS NULL OR l.ended_at_ms >= $2)",
    )
    .bind(pool_id)
    .bind(since_ms)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .iter()
        .map(|row| super::RegionSpan {
            span: LeaseSpan {
                start_ms: row.get("granted_at_ms"),
                end_ms: row.get("ended_at_ms"),
                gpus: serde_json::from_str::<Vec<String>>(&row.get::<String, _>("gpu_uuids"))
                    .map_or(1, |uuids| u32::try_from(uuids.len()).unwrap_or(1)),
            },
            region: row.get("region"),
            spot: row.get::<i64, _>("spot") != 0,
            lease: Some((row.get("host"), row.get("lease_id"))),
        })
        .collect())
}

impl PoolStore {
    pub async fn fences(&self) -> Result<HashMap<String, u64>, PoolError> {
        fences_on(&mut *self.pool().acquire().await?).await
    }

    pub async fn set_fence(&self, host: &str, fence: u64) -> Result<(), PoolError> {
        sqlx::query("INSERT INTO host_fences (host, fence, at_ms) VALUES ($1, $2, $3) ON CONFLICT (host) DO UPDATE SET fence = excluded.fence, at_ms = excluded.at_ms")
            .bind(host)
            .bind(i64::try_from(fence).unwrap_or(i64::MAX))
            .bind(self.now_ms())
            .execute(self.pool())
            .await?;
        Ok(())
    }

    pub async fn clear_fence(&self, host: &str) -> Result<(), PoolError> {
        sqlx::query("DELETE FROM host_fences WHERE host = $1")
            .bind(host)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Since when each silent host has been silent, as the enforcer last wrote it.
    pub async fn down_since(&self) -> Result<HashMap<String, i64>, PoolError> {
        let rows = sqlx::query("SELECT host, since_ms FROM host_down")
            .fetch_all(self.pool())
            .await?;
        Ok(rows
            .into_iter()
            .map(|row| (row.get::<String, _>("host"), row.get::<i64, _>("since_ms")))
            .collect())
    }

    /// Records hosts gone silent (`Some(since)`) and back or out of sight (`None`), in one
    /// transaction.
    pub async fn set_down_since(&self, changes: &[(String, Option<i64>)]) -> Result<(), PoolError> {
        let mut tx = self.db.begin_write().await?;
        for (host, since) in changes {
            match since {
                Some(since) => {
                    sqlx::query("INSERT INTO host_down (host, since_ms) VALUES ($1, $2) ON CONFLICT (host) DO UPDATE SET since_ms = excluded.since_ms")
                        .bind(host)
                        .bind(since)
                        .execute(&mut *tx)
                        .await?;
                }
                None => {
                    sqlx::query("DELETE FROM host_down WHERE host = $1")
                        .bind(host)
                        .execute(&mut *tx)
                        .await?;
                }
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// What the enforcer saw of every pool this pass (one transaction).
    pub async fn write_status(&self, statuses: &[PoolStatus], now: i64) -> Result<(), PoolError> {
        let mut tx = self.db.begin_write().await?;
        for status in statuses {
            sqlx::query("INSERT INTO pool_status (pool_id, status, checked_at_ms) VALUES ($1, $2, $3) ON CONFLICT (pool_id) DO UPDATE SET status = excluded.status, checked_at_ms = excluded.checked_at_ms")
                .bind(&status.pool_id)
                .bind(serde_json::to_string(status).unwrap_or_default())
                .bind(now)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub async fn read_status(&self, pool_id: &str) -> Result<Option<(PoolStatus, i64)>, PoolError> {
        status_on(&mut *self.pool().acquire().await?, pool_id).await
    }
}

/// [`PoolStore::read_status`] on `conn`.
pub(super) async fn status_on(
    conn: &mut sqlx::AnyConnection,
    pool_id: &str,
) -> Result<Option<(PoolStatus, i64)>, PoolError> {
    let row = sqlx::query("SELECT status, checked_at_ms FROM pool_status WHERE pool_id = $1")
        .bind(pool_id)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(row.map(|row| {
        (
            serde_json::from_str(&row.get::<String, _>("status")).unwrap_or_default(),
            row.get::<i64, _>("checked_at_ms"),
        )
    }))
}

impl PoolStore {
    pub async fn confirm_policy(&self) -> Result<ConfirmPolicy, PoolError> {
        let value: Option<String> =
            sqlx::query_scalar("SELECT value FROM settings WHERE key = 'confirm_policy'")
                .fetch_optional(self.pool())
                .await?;
        Ok(value
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default())
    }

    /// Sets when a slider move asks first; the change and its activity entry are one
    /// transaction (nothing is logged when the limits stay as they were).
    pub async fn set_confirm_policy(&self, policy: ConfirmPolicy) -> Result<(), PoolError> {
        let before = self.confirm_policy().await?;
        let mut tx = self.db.begin_write().await?;
        sqlx::query("INSERT INTO settings (key, value) VALUES ('confirm_policy', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
            .bind(serde_json::to_string(&policy).unwrap_or_default())
            .execute(&mut *tx)
            .await?;
        if before != policy {
            let reason = ChangeReason::ConfirmLimitsChanged {
                above_gpus: policy.above_gpus,
                above_per_hour_fen: policy.above_per_hour_fen,
            };
            insert_console_activity(&mut tx, self.db().identity(), &reason, self.now_ms()).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The monthly budget across every pool, when one is set.
    pub async fn budget(&self) -> Result<Option<i64>, PoolError> {
        let value: Option<String> =
            sqlx::query_scalar("SELECT value FROM settings WHERE key = 'monthly_budget_fen'")
                .fetch_optional(self.pool())
                .await?;
        Ok(value.and_then(|text| text.parse().ok()))
    }

    /// Sets (`Some`) or clears the monthly budget, with its activity entry, in one
    /// transaction; nothing is logged when it stays as it was.
    pub async fn set_budget(&self, budget_fen: Option<i64>) -> Result<(), PoolError> {
        let before = self.budget().await?;
        let mut tx = self.db.begin_write().await?;
        match budget_fen {
            Some(fen) => {
                sqlx::query("INSERT INTO settings (key, value) VALUES ('monthly_budget_fen', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
                    .bind(fen.to_string())
                    .execute(&mut *tx)
                    .await?;
            }
            None => {
                sqlx::query("DELETE FROM settings WHERE key = 'monthly_budget_fen'")
                    .execute(&mut *tx)
                    .await?;
            }
        }
        if before != budget_fen {
            let reason = ChangeReason::BudgetChanged { budget_fen };
            insert_console_activity(&mut tx, self.db().identity(), &reason, self.now_ms()).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Where this console's operator keeps their notification preferences: their own row
    /// on a shared database (each operator's, which any role may write for itself), the
    /// console's one row on SQLite.
    fn prefs_key(&self) -> String {
        if self.db.is_shared() {
            format!("notification_prefs:{}", self.db.identity().who)
        } else {
            "notification_prefs".to_string()
        }
    }

    /// Which desktop notifications the app shows (all of them until the operator says; on
    /// a shared database, the operator's own, else the ones set before there were many).
    pub async fn notification_prefs(
        &self,
    ) -> Result<ebb_wire::pools::NotificationPrefs, PoolError> {
        let value: Option<String> = sqlx::query_scalar(
            "SELECT value FROM settings WHERE key IN ($1, 'notification_prefs') ORDER BY key DESC LIMIT 1",
        )
        .bind(self.prefs_key())
        .fetch_optional(self.pool())
        .await?;
        Ok(value
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default())
    }

    /// Sets which desktop notifications the app shows (a preference: no activity entry).
    pub async fn set_notification_prefs(
        &self,
        prefs: ebb_wire::pools::NotificationPrefs,
    ) -> Result<(), PoolError> {
        sqlx::query("INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
            .bind(self.prefs_key())
            .bind(serde_json::to_string(&prefs).unwrap_or_default())
            .execute(self.pool())
            .await?;
        Ok(())
    }
}

pub(super) const ACTIVITY_COLUMNS: &str = "id, at_ms, pool_name, actor, from_gpus, to_gpus, reason, delta_per_hour_fen, delta_per_month_fen, results, outcome, finished_at_ms, who, role";

pub(super) fn activity_row(row: &crate::db::DbRow) -> ActivityEntry {
    let count = |column: &str| u32::try_from(row.get::<i64, _>(column)).unwrap_or(0);
    ActivityEntry {
        id: row.get("id"),
        at_ms: row.get("at_ms"),
        pool: row.get("pool_name"),
        actor: match row.get::<String, _>("actor").as_str() {
            "failover" => Actor::Failover,
            "rule" => Actor::Rule,
            "enforcer" => Actor::Enforcer,
            "demo" => Actor::Demo,
            "slurm" => Actor::Slurm,
            _ => Actor::Operator,
        },
        from: count("from_gpus"),
        to: count("to_gpus"),
        reason: ChangeReason::from_stored(row.get("reason")),
        delta_per_hour_fen: row.get("delta_per_hour_fen"),
        delta_per_month_fen: row.get("delta_per_month_fen"),
        results: serde_json::from_str(&row.get::<String, _>("results")).unwrap_or_default(),
        outcome: match row.get::<String, _>("outcome").as_str() {
            "done" => Outcome::Done,
            "partial" => Outcome::Partial,
            "superseded" => Outcome::Superseded,
            _ => Outcome::InProgress,
        },
        finished_at_ms: row.get("finished_at_ms"),
        who: row.get("who"),
        role: row.get("role"),
    }
}

/// Marks a pool's unfinished changes superseded.
pub(super) async fn supersede_open(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    pool_id: &str,
    now: i64,
) -> Result<(), PoolError> {
    sqlx::query(
        "UPDATE activity SET outcome = 'superseded', finished_at_ms = $1 WHERE pool_id = $2 AND outcome IN ('in_progress', 'partial')",
    )
    .bind(now)
    .bind(pool_id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub(super) async fn insert_activity(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    identity: &ebb_wire::access::Identity,
    pool: &Pool,
    change: &NewActivity,
    now: i64,
) -> Result<i64, PoolError> {
    let done = change.from == change.to && change.actor == Actor::Operator;
    Ok(crate::db::log_activity(
        tx,
        identity,
        &crate::db::ActivityRow {
            pool_id: &pool.id,
            pool_name: &pool.name,
            actor: actor_word(change.actor),
            from: change.from,
            to: change.to,
            reason: &change.reason,
            delta_per_hour_fen: change.delta_per_hour_fen,
            delta_per_month_fen: change.delta_per_month_fen,
            done,
        },
        now,
    )
    .await?)
}

pub(super) async fn upsert_lease(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    host: &str,
    lease: &Lease,
) -> Result<(), PoolError> {
    let ended = lease.released_at_ms.and_then(|ms| i64::try_from(ms).ok());
    sqlx::query(
        "INSERT INTO pool_leases (host, lease_id, pool_id, gpu_uuids, gpu_indexes, fencing_token, granted_at_ms, ended_at_ms, spot) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (host, lease_id) DO UPDATE SET ended_at_ms = COALESCE(excluded.ended_at_ms, pool_leases.ended_at_ms)",
    )
    .bind(host)
    .bind(&lease.id)
    .bind(&lease.pool_id)
    .bind(serde_json::to_string(&lease.gpu_uuids).unwrap_or_default())
    .bind(serde_json::to_string(&lease.gpu_indexes).unwrap_or_default())
    .bind(i64::try_from(lease.fencing_token).unwrap_or(i64::MAX))
    .bind(i64::try_from(lease.created_at_ms).unwrap_or(0))
    .bind(ended)
    .bind(i64::from(lease.spot))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Writes a pool's settings with `sql`, whose parameters are the settings (1 to 12),
/// the time (13), the id (14) and the spot mix (15); a name taken by another pool is refused.
pub(super) async fn save(
    tx: &mut sqlx::AnyConnection,
    sql: &'static str,
    pool: &Pool,
    now: i64,
) -> Result<(), PoolError> {
    let result = sqlx::query(sql)
        .bind(&pool.name)
        .bind(&pool.model)
        .bind(serde_json::to_string(&pool.regions).unwrap_or_default())
        .bind(i64::from(pool.min))
        .bind(i64::from(pool.max))
        .bind(i64::from(pool.desired))
        .bind(i64::from(pool.base_gpus))
        .bind(pool.term.to_string())
        .bind(pool.overlay.to_string())
        .bind(placement_word(pool.placement))
        .bind(i64::from(pool.interruptible))
        .bind(i64::from(pool.release_at_unit_end))
        .bind(now)
        .bind(&pool.id)
        .bind(serde_json::to_string(&pool.spot).unwrap_or_default())
        .execute(tx)
        .await;
    match result {
        Err(sqlx::Error::Database(error)) if error.is_unique_violation() => {
            Err(PoolError::Exists(pool.name.clone()))
        }
        other => other.map(|_| ()).map_err(PoolError::from),
    }
}

/// A lease request's JSON columns (its GPUs, its command) that do not read or write.
fn json_error(error: serde_json::Error) -> PoolError {
    PoolError::Db(sqlx::Error::Decode(Box::new(error)))
}

/// Whether a console-wide entry concerns `pool`: spot paused or resumed for its model in
/// one of its regions.
fn touches(reason: &ChangeReason, pool: &Pool) -> bool {
    match reason {
        ChangeReason::SpotPaused { model, region, .. }
        | ChangeReason::SpotResumed { model, region, .. } => {
            *model == pool.model && pool.regions.contains(region)
        }
        _ => false,
    }
}

/// What an enforcer pass reads from the database before it looks at the agents.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Each pool's unfinished changes, oldest first.
    pub open: HashMap<String, Vec<(i64, Vec<HostResult>)>>,
    pub pools: Vec<Pool>,
    pub intents: Vec<Pending>,
    pub fences: HashMap<String, u64>,
    pub leases: Vec<KnownLease>,
}

impl Recorded {
    /// Nothing to enforce: no pool, intent, fence or lease.
    pub fn is_empty(&self) -> bool {
        self.pools.is_empty()
            && self.intents.is_empty()
            && self.fences.is_empty()
            && self.leases.is_empty()
    }

    /// Whether the enforcer has business with this host: a pool may use it, or we hold or
    /// asked for something there.
    pub fn concerns(&self, spec: &crate::registry::HostEntry) -> bool {
        self.pools
            .iter()
            .any(|pool| pool.regions.contains(&spec.region))
            || self.leases.iter().any(|lease| lease.host == spec.name)
            || self.intents.iter().any(|intent| intent.host == spec.name)
            || self.fences.contains_key(&spec.name)
    }
}

async fn list_on(conn: &mut sqlx::AnyConnection) -> Result<Vec<Pool>, PoolError> {
    let rows = sqlx::query(AssertSqlSafe(format!(
        "SELECT {POOL_COLUMNS} FROM pools ORDER BY name"
    )))
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.iter().map(pool_row).collect())
}

/// The unfinished changes of each pool, oldest first: pool id → (activity id, results).
async fn open_changes_on(
    conn: &mut sqlx::AnyConnection,
) -> Result<HashMap<String, Vec<(i64, Vec<HostResult>)>>, PoolError> {
    let rows = sqlx::query(
        "SELECT id, pool_id, results FROM activity WHERE outcome IN ('in_progress', 'partial') ORDER BY id",
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut open: HashMap<String, Vec<(i64, Vec<HostResult>)>> = HashMap::new();
    for row in &rows {
        let results: String = row.get("results");
        open.entry(row.get::<String, _>("pool_id"))
            .or_default()
            .push((
                row.get::<i64, _>("id"),
                serde_json::from_str(&results).unwrap_or_default(),
            ));
    }
    Ok(open)
}

async fn intents_on(conn: &mut sqlx::AnyConnection) -> Result<Vec<Pending>, PoolError> {
    let rows = sqlx::query(
        "SELECT key, pool_id, host, gpu_uuid, gpu_uuids, command FROM lease_intents ORDER BY created_at_ms, key",
    )
    .fetch_all(&mut *conn)
    .await?;
    rows.iter()
        .map(|row| {
            let all: Option<String> = row.get("gpu_uuids");
            let command: Option<String> = row.get("command");
            Ok(Pending {
                key: row.get("key"),
                pool_id: row.get("pool_id"),
                host: row.get("host"),
                gpu_uuids: match all {
                    Some(all) => serde_json::from_str(&all).map_err(json_error)?,
                    None => vec![row.get("gpu_uuid")],
                },
                command: command
                    .map(|c| serde_json::from_str(&c))
                    .transpose()
                    .map_err(json_error)?,
            })
        })
        .collect()
}

/// Our leases not known to have ended.
async fn known_leases_on(conn: &mut sqlx::AnyConnection) -> Result<Vec<KnownLease>, PoolError> {
    let rows = sqlx::query(
        "SELECT host, lease_id, pool_id, fencing_token, gpu_uuids, gpu_indexes, granted_at_ms FROM pool_leases WHERE ended_at_ms IS NULL",
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .iter()
        .map(|row| KnownLease {
            host: row.get("host"),
            lease_id: row.get("lease_id"),
            pool_id: row.get("pool_id"),
            fencing_token: u64::try_from(row.get::<i64, _>("fencing_token")).unwrap_or(0),
            gpu_uuids: serde_json::from_str(&row.get::<String, _>("gpu_uuids")).unwrap_or_default(),
            gpu_indexes: serde_json::from_str(&row.get::<String, _>("gpu_indexes"))
                .unwrap_or_default(),
            granted_at_ms: row.get("granted_at_ms"),
        })
        .collect())
}

async fn fences_on(conn: &mut sqlx::AnyConnection) -> Result<HashMap<String, u64>, PoolError> {
    let rows = sqlx::query("SELECT host, fence FROM host_fences")
        .fetch_all(&mut *conn)
        .await?;
    Ok(rows
        .iter()
        .map(|row| {
            (
                row.get::<String, _>("host"),
                u64::try_from(row.get::<i64, _>("fence")).unwrap_or(0),
            )
        })
        .collect())
}
