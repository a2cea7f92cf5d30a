//! Teams and their quotas: a pool belongs to one team (or none); a team's quotas bound the
//! GPUs of each model its pools ask for in all, so no slider, rule or schedule goes past
//! them (each is clamped, and says so); moving a pool into a team it would put over a quota
//! is refused, naming the quota.

use super::{Pool, PoolError, PoolStore, insert_console_activity, refused};
use ebb_wire::access::{GpuQuota, TeamView};
use ebb_wire::phrase::Phrase;
use ebb_wire::reasons::ChangeReason;
use sqlx::Row;
use std::collections::BTreeMap;

/// The most a pool may ask for under its team's quota of its model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamCeiling {
    pub team: String,
    pub model: String,
    pub quota_gpus: u32,
    /// The quota less what the team's other pools of the model ask for.
    pub max_gpus: u32,
}

/// The team's spend quota as it bears on one of its pools this month.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamSpend {
    pub team: String,
    /// The most the team's pools may project to this month (fen).
    pub per_month_fen: i64,
    /// What the team's other pools project to (fen).
    pub others_fen: i64,
    /// What this pool has cost so far this month (fen).
    pub to_date_fen: i64,
    /// What is left of the month (ms).
    pub remaining_ms: i64,
}

impl TeamSpend {
    /// The most GPUs, from `current` up to `asked`, the pool may ask for and keep the
    /// team's month within its quota (at `per_hour(n)`, n GPUs' cost per hour, for the rest
    /// of the month); `current` when not one more fits, or no price is known. A quota never
    /// scales a pool in.
    pub fn ceiling(&self, current: u32, asked: u32, per_hour: impl Fn(u32) -> Option<i64>) -> u32 {
        let fits = |n: u32| {
            per_hour(n).is_some_and(|rate| {
                let rest = i128::from(rate) * i128::from(self.remaining_ms.max(0)) / 3_600_000;
                i128::from(self.others_fen) + i128::from(self.to_date_fen) + rest
                    <= i128::from(self.per_month_fen)
            })
        };
        (current.saturating_add(1)..=asked)
            .take_while(|n| fits(*n))
            .last()
            .unwrap_or(current)
            .max(current)
    }
}

/// What a scale-out's spend is checked with inside its transaction: the prices and the
/// pool's run rate at each count.
#[derive(Debug, Clone, Copy)]
pub struct SpendCheck<'a> {
    pub catalog: &'a ebb_cost::Catalog,
    pub pricing: Option<&'a ebb_rules::decide::Pricing>,
}

/// A team quota that bounds a scale-out: from `asked` to `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamClamp {
    pub asked: u32,
    pub to: u32,
    pub limit: TeamLimit,
}

/// Which of a team's quotas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TeamLimit {
    /// Its quota of the pool's model.
    Gpus(TeamCeiling),
    /// Its spend quota per month (fen).
    Spend { team: String, per_month_fen: i64 },
}

impl TeamClamp {
    /// As a scale's reason in the activity log.
    pub fn reason(&self) -> ChangeReason {
        match &self.limit {
            TeamLimit::Gpus(ceiling) => ChangeReason::QuotaClamp {
                team: ceiling.team.clone(),
                model: ceiling.model.clone(),
                quota_gpus: ceiling.quota_gpus,
                asked: self.asked,
            },
            TeamLimit::Spend {
                team,
                per_month_fen,
            } => ChangeReason::SpendQuotaClamp {
                team: team.clone(),
                per_month_fen: *per_month_fen,
                asked: self.asked,
            },
        }
    }
}

fn check_name(field: &'static str, name: &str) -> Result<String, PoolError> {
    let name = name.trim();
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(refused(
            field,
            Phrase::new("team.refuse.name")
                .text("name", name)
                .int("max", 64),
        ));
    }
    Ok(name.to_string())
}

impl PoolStore {
    /// Makes a team, or sets (`Some`) or clears its spend quota per month (fen).
    pub async fn set_team(
        &self,
        name: &str,
        spend_per_month_fen: Option<i64>,
    ) -> Result<(), PoolError> {
        let name = check_name("team", name)?;
        if spend_per_month_fen.is_some_and(|fen| fen <= 0) {
            return Err(refused(
                "spend_per_month",
                Phrase::new("team.refuse.spendZero"),
            ));
        }
        let mut tx = self.db().begin_write().await?;
        sqlx::query("INSERT INTO teams (name, spend_per_month_fen, created_at_ms) VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET spend_per_month_fen = excluded.spend_per_month_fen")
            .bind(&name)
            .bind(spend_per_month_fen)
            .bind(self.now_ms())
            .execute(&mut *tx)
            .await?;
        let reason = ChangeReason::TeamChanged {
            team: name,
            spend_per_month_fen,
        };
        insert_console_activity(&mut tx, self.db().identity(), &reason, self.now_ms()).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn team_exists(
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        team: &str,
    ) -> Result<bool, PoolError> {
        Ok(
            sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM teams WHERE name = $1")
                .bind(team)
                .fetch_one(&mut **tx)
                .await?
                > 0,
        )
    }

    /// What the team's pools of `model` ask for now (their desired counts), leaving out
    /// `except` (a pool's id).
    async fn team_asks(
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        team: &str,
        model: &str,
        except: &str,
    ) -> Result<u32, PoolError> {
        let sum: Option<i64> = sqlx::query_scalar(
            "SELECT CAST(SUM(desired) AS BIGINT) FROM pools WHERE team = $1 AND model = $2 AND id <> $3",
        )
        .bind(team)
        .bind(model)
        .bind(except)
        .fetch_one(&mut **tx)
        .await?;
        Ok(u32::try_from(sum.unwrap_or(0)).unwrap_or(u32::MAX))
    }

    /// Sets (`Some`) or clears the team's quota of `model` GPUs. A quota below what the
    /// team's pools ask for now is refused, naming both.
    pub async fn set_quota(
        &self,
        team: &str,
        model: &str,
        gpus: Option<u32>,
    ) -> Result<(), PoolError> {
        let team = check_name("team", team)?;
        let model = model.trim().to_string();
        if model.is_empty() {
            return Err(refused("model", Phrase::new("team.refuse.modelRequired")));
        }
        let mut tx = self.db().begin_write().await?;
        if !Self::team_exists(&mut tx, &team).await? {
            return Err(refused(
                "team",
                Phrase::new("team.refuse.notFound").text("team", &team),
            ));
        }
        let before: Option<i64> =
            sqlx::query_scalar("SELECT max_gpus FROM team_quotas WHERE team = $1 AND model = $2")
                .bind(&team)
                .bind(&model)
                .fetch_optional(&mut *tx)
                .await?;
        match gpus {
            Some(gpus) => {
                let holds = Self::team_asks(&mut tx, &team, &model, "").await?;
                if gpus < holds {
                    return Err(refused(
                        "gpus",
                        Phrase::new("team.refuse.quotaBelow")
                            .int("quota", gpus)
                            .text("model", &model)
                            .int("holds", holds)
                            .text("team", &team),
                    ));
                }
                sqlx::query("INSERT INTO team_quotas (team, model, max_gpus) VALUES ($1, $2, $3) ON CONFLICT (team, model) DO UPDATE SET max_gpus = excluded.max_gpus")
                    .bind(&team)
                    .bind(&model)
                    .bind(i64::from(gpus))
                    .execute(&mut *tx)
                    .await?;
            }
            None => {
                sqlx::query("DELETE FROM team_quotas WHERE team = $1 AND model = $2")
                    .bind(&team)
                    .bind(&model)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        if before != gpus.map(i64::from) {
            let reason = ChangeReason::TeamQuota { team, model, gpus };
            insert_console_activity(&mut tx, self.db().identity(), &reason, self.now_ms()).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Moves the pool into `team` (`""`: out of any). Refused, naming the quota, when the
    /// pool's count would put the team past its quota of the pool's model.
    pub async fn set_pool_team(&self, pool: &str, team: &str) -> Result<(), PoolError> {
        let team = if team.trim().is_empty() {
            String::new()
        } else {
            check_name("team", team)?
        };
        let found = self.get(pool).await?;
        let mut tx = self.db().begin_write().await?;
        if !team.is_empty() {
            if !Self::team_exists(&mut tx, &team).await? {
                return Err(refused(
                    "team",
                    Phrase::new("team.refuse.notFound").text("team", &team),
                ));
            }
            if let Some(quota) = Self::quota_of(&mut tx, &team, &found.model).await? {
                let others = Self::team_asks(&mut tx, &team, &found.model, &found.id).await?;
                if others.saturating_add(found.desired) > quota {
                    return Err(refused(
                        "team",
                        Phrase::new("team.refuse.moveOver")
                            .text("team", &team)
                            .int("quota", quota)
                            .text("model", &found.model)
                            .int("others", others)
                            .text("pool", &found.name)
                            .int("desired", found.desired)
                            .int("total", others.saturating_add(found.desired)),
                    ));
                }
            }
        }
        sqlx::query("UPDATE pools SET team = $1 WHERE id = $2")
            .bind(&team)
            .bind(&found.id)
            .execute(&mut *tx)
            .await?;
        let reason = ChangeReason::PoolTeam {
            pool: found.name.clone(),
            team,
        };
        insert_console_activity(&mut tx, self.db().identity(), &reason, self.now_ms()).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn quota_of(
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        team: &str,
        model: &str,
    ) -> Result<Option<u32>, PoolError> {
        let quota: Option<i64> =
            sqlx::query_scalar("SELECT max_gpus FROM team_quotas WHERE team = $1 AND model = $2")
                .bind(team)
                .bind(model)
                .fetch_optional(&mut **tx)
                .await?;
        Ok(quota.map(|n| u32::try_from(n).unwrap_or(0)))
    }

    /// Refuses `to` when it would put the pool's team past its quota of the pool's model,
    /// read in the caller's write transaction (the clamp before it leaves room, unless
    /// another pool of the team took it meanwhile).
    pub(super) async fn quota_guard(
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        pool: &Pool,
        to: u32,
    ) -> Result<(), PoolError> {
        let team = team_on(tx, pool).await?;
        if team.is_empty() {
            return Ok(());
        }
        let Some(quota) = Self::quota_of(tx, &team, &pool.model).await? else {
            return Ok(());
        };
        let others = Self::team_asks(tx, &team, &pool.model, &pool.id).await?;
        if others.saturating_add(to) > quota {
            return Err(refused(
                "to",
                Phrase::new("team.refuse.scaleOver")
                    .text("team", &team)
                    .int("quota", quota)
                    .text("model", &pool.model)
                    .int("others", others)
                    .text("pool", &pool.name)
                    .int("room", quota.saturating_sub(others)),
            ));
        }
        Ok(())
    }

    /// The team of a pool (`""`: none).
    pub async fn team_of(&self, pool: &Pool) -> Result<String, PoolError> {
        team_on(&mut *self.pool().acquire().await?, pool).await
    }

    /// The most the pool may ask for under its team's quota of its model; `None` when its
    /// team has no such quota (or it has no team).
    pub async fn team_ceiling(&self, pool: &Pool) -> Result<Option<TeamCeiling>, PoolError> {
        let team = self.team_of(pool).await?;
        if team.is_empty() {
            return Ok(None);
        }
        let mut tx = self.pool().begin().await?;
        let Some(quota) = Self::quota_of(&mut tx, &team, &pool.model).await? else {
            return Ok(None);
        };
        let others = Self::team_asks(&mut tx, &team, &pool.model, &pool.id).await?;
        tx.commit().await?;
        Ok(Some(TeamCeiling {
            team,
            model: pool.model.clone(),
            quota_gpus: quota,
            max_gpus: quota.saturating_sub(others),
        }))
    }

    /// The pool's team's spend quota and what the team's month stands at; `None` when its
    /// team has none (or it has no team).
    pub async fn team_spend(
        &self,
        pool: &Pool,
        catalog: &ebb_cost::Catalog,
    ) -> Result<Option<TeamSpend>, PoolError> {
        let mut conn = self.pool().acquire().await?;
        Self::spend_on(&mut conn, pool, catalog, self.now_ms()).await
    }

    /// [`PoolStore::team_spend`] on `conn` (inside a write transaction: as of it).
    async fn spend_on(
        conn: &mut sqlx::AnyConnection,
        pool: &Pool,
        catalog: &ebb_cost::Catalog,
        now: i64,
    ) -> Result<Option<TeamSpend>, PoolError> {
        let team = team_on(conn, pool).await?;
        if team.is_empty() {
            return Ok(None);
        }
        let cap: Option<Option<i64>> =
            sqlx::query_scalar("SELECT spend_per_month_fen FROM teams WHERE name = $1")
                .bind(&team)
                .fetch_optional(&mut *conn)
                .await?;
        let Some(Some(per_month_fen)) = cap else {
            return Ok(None);
        };
        let (_, month_start, month_end) = ebb_charts::calendar::utc_month(now);
        let members: Vec<String> = sqlx::query_scalar("SELECT name FROM pools WHERE team = $1")
            .bind(&team)
            .fetch_all(&mut *conn)
            .await?;
        let (mut others_fen, mut to_date_fen) = (0i64, 0i64);
        for name in members {
            let member = super::store::pool_named(conn, &name).await?;
            let status = super::store::status_on(conn, &member.id).await?;
            let spans = super::store::spans_on(conn, &member.id, month_start).await?;
            let view = super::pool_view(&member, status, &spans, catalog, now);
            let Some(spend) = view.spend else { continue };
            if member.id == pool.id {
                to_date_fen = spend.month_to_date_fen;
            } else {
                others_fen = others_fen.saturating_add(spend.projected_month_fen);
            }
        }
        Ok(Some(TeamSpend {
            team,
            per_month_fen,
            others_fen,
            to_date_fen,
            remaining_ms: month_end - now,
        }))
    }

    /// Under the write lock, a scale-out from `pool.desired` to `to` is refused when the
    /// team's spend quota no longer has room for it (another of its pools took the room
    /// since the count was clamped): two pools of one team moved at once never pass it.
    pub(super) async fn spend_guard(
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        pool: &Pool,
        to: u32,
        check: &SpendCheck<'_>,
        now: i64,
    ) -> Result<(), PoolError> {
        let Some(spend) = Self::spend_on(tx, pool, check.catalog, now).await? else {
            return Ok(());
        };
        let ceiling = spend.ceiling(pool.desired, to, |n| {
            let rate = check.pricing?.run_rate(n).ok()?;
            Some(rate.total.per_hour.fen())
        });
        if ceiling < to {
            return Err(refused(
                "to",
                Phrase::new("team.refuse.spendOver")
                    .text("team", &spend.team)
                    .money("quota", spend.per_month_fen)
                    .text("pool", &pool.name)
                    .gpus("ceiling", ceiling),
            ));
        }
        Ok(())
    }

    /// What the pool's team's quotas make of a scale-out from `current` to `asked`: its
    /// GPU quota of the pool's model first, then its spend quota (the most the rest of the
    /// month pays for, at `pricing`'s run rate), each a clamp that names itself. Empty when
    /// neither bounds it; a quota never scales a pool in. The one team clamp of the
    /// slider, the CLI and the rules.
    pub async fn team_clamps(
        &self,
        pool: &Pool,
        current: u32,
        asked: u32,
        catalog: &ebb_cost::Catalog,
        pricing: Option<&ebb_rules::decide::Pricing>,
    ) -> Result<Vec<TeamClamp>, PoolError> {
        let mut clamps = Vec::new();
        let mut to = asked;
        if to <= current {
            return Ok(clamps);
        }
        if let Some(ceiling) = self.team_ceiling(pool).await?
            && to > ceiling.max_gpus
        {
            let clamped = ceiling.max_gpus.max(current);
            clamps.push(TeamClamp {
                asked: to,
                to: clamped,
                limit: TeamLimit::Gpus(ceiling),
            });
            to = clamped;
        }
        if to > current
            && let Some(spend) = self.team_spend(pool, catalog).await?
        {
            let ceiling = spend.ceiling(current, to, |n| {
                let rate = pricing?.run_rate(n).ok()?;
                Some(rate.total.per_hour.fen())
            });
            if ceiling < to {
                clamps.push(TeamClamp {
                    asked: to,
                    to: ceiling,
                    limit: TeamLimit::Spend {
                        team: spend.team,
                        per_month_fen: spend.per_month_fen,
                    },
                });
            }
        }
        Ok(clamps)
    }

    /// Every team with its quotas, pools and what they ask for.
    pub async fn teams(&self) -> Result<Vec<TeamView>, PoolError> {
        let mut teams: BTreeMap<String, TeamView> = BTreeMap::new();
        for row in sqlx::query("SELECT name, spend_per_month_fen FROM teams ORDER BY name")
            .fetch_all(self.pool())
            .await?
        {
            let name: String = row.get("name");
            teams.insert(
                name.clone(),
                TeamView {
                    name,
                    spend_per_month_fen: row.get("spend_per_month_fen"),
                    quotas: Vec::new(),
                    pools: Vec::new(),
                    holding: Vec::new(),
                },
            );
        }
        for row in sqlx::query("SELECT team, model, max_gpus FROM team_quotas ORDER BY team, model")
            .fetch_all(self.pool())
            .await?
        {
            if let Some(team) = teams.get_mut(&row.get::<String, _>("team")) {
                team.quotas.push(GpuQuota {
                    model: row.get("model"),
                    gpus: u32::try_from(row.get::<i64, _>("max_gpus")).unwrap_or(0),
                });
            }
        }
        for row in sqlx::query(
            "SELECT name, team, model, desired FROM pools WHERE team <> '' ORDER BY name",
        )
        .fetch_all(self.pool())
        .await?
        {
            let Some(team) = teams.get_mut(&row.get::<String, _>("team")) else {
                continue;
            };
            team.pools.push(row.get("name"));
            let model: String = row.get("model");
            let desired = u32::try_from(row.get::<i64, _>("desired")).unwrap_or(0);
            match team.holding.iter_mut().find(|held| held.model == model) {
                Some(held) => held.gpus += desired,
                None => team.holding.push(GpuQuota {
                    model,
                    gpus: desired,
                }),
            }
        }
        Ok(teams.into_values().collect())
    }
}

/// The team of a pool (`""`: none), read on `conn`.
async fn team_on(conn: &mut sqlx::AnyConnection, pool: &Pool) -> Result<String, PoolError> {
    let team: Option<String> = sqlx::query_scalar("SELECT team FROM pools WHERE id = $1")
        .bind(&pool.id)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(team.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::TeamSpend;

    #[test]
    fn the_spend_ceiling_is_the_most_gpus_the_rest_of_the_month_pays_for() {
        // ¥10 per GPU-hour, 100 h left: each GPU projects ¥1,000 more.
        let spend = TeamSpend {
            team: "ml".into(),
            per_month_fen: 500_000,
            others_fen: 150_000,
            to_date_fen: 50_000,
            remaining_ms: 100 * 3_600_000,
        };
        let rate = |n: u32| Some(i64::from(n) * 1_000);
        // 150k + 50k + n × 100k ≤ 500k: 3 GPUs.
        assert_eq!(spend.ceiling(1, 8, rate), 3);
        assert_eq!(spend.ceiling(1, 2, rate), 2, "what was asked, when it fits");
        // Already past it: held where it is, never scaled in.
        assert_eq!(spend.ceiling(5, 8, rate), 5);
        // No price: it may not grow.
        assert_eq!(spend.ceiling(1, 8, |_| None), 1);
    }
}
