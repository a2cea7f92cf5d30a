//! Each pool over time (desired, ready, warming, utilization) and each host's measured
//! delivery time, in `console.db`. The enforcer writes both after a pass
//! ([`after_pass`]): a pool's row at most once a minute, or sooner when a count moved,
//! kept [`KEEP_MS`]; a host's delivery from the console's own clock, from when a lease
//! request was written down to the pass that saw it granted (an upper bound by one pass;
//! the agent grants a GPU ready, so granted is ready).

use crate::db::ConsoleDb;
use crate::pools::{Pool, PoolError, PoolStore};
use ebb_charts::history::PoolSample;
use ebb_reconcile::reconcile::PoolStatus;
use ebb_wire::pools::{PoolLeaseState, ScaleOut, WarmingHost};
use sqlx::Row;
use std::collections::HashMap;

/// A pool's row is written at most this often while nothing moves.
pub const EVERY_MS: i64 = 60_000;
/// How long rows are kept.
pub const KEEP_MS: i64 = 7 * 24 * 3_600_000;
/// A host's mean delivery weighs at most this many recent samples.
const MEAN_OF: i64 = 20;

/// What a pass's status says of a pool at `at_ms` (pure): a GPU asked for and not granted,
/// or granted with its workload not up yet, is warming; the rest held are ready, and their
/// mean utilization is the pool's.
pub fn pool_sample(at_ms: i64, desired: u32, status: &PoolStatus) -> PoolSample {
    let utils: Vec<f32> = status
        .leases
        .iter()
        .filter(|lease| lease.state == PoolLeaseState::Active && !lease.starting)
        .filter_map(|lease| lease.util_pct)
        .collect();
    let util_pct = (!utils.is_empty()).then(|| utils.iter().sum::<f32>() / utils.len() as f32);
    PoolSample {
        at_ms,
        desired,
        ready: status.ready(),
        warming: status.pending + status.warming_held(),
        util_pct,
    }
}

fn counts(sample: &PoolSample) -> (u32, u32, u32) {
    (sample.desired, sample.ready, sample.warming)
}

/// Whether a new look is worth a row after `last` (pure): the first, a minute on, or a
/// count that moved.
pub fn worth_writing(last: Option<&PoolSample>, next: &PoolSample) -> bool {
    match last {
        None => true,
        Some(last) => next.at_ms - last.at_ms >= EVERY_MS || counts(last) != counts(next),
    }
}

/// A host's measured delivery time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Delivery {
    pub samples: u32,
    pub mean_ms: f64,
    pub last_ms: i64,
}

/// A lease request not answered yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    pub host: String,
    pub asked_at_ms: i64,
}

#[derive(Debug, Clone)]
pub struct PoolHistory {
    db: ConsoleDb,
}

impl PoolHistory {
    pub fn new(db: ConsoleDb) -> Self {
        Self { db }
    }

    /// Writes each pool's look where [`worth_writing`] says so, and drops rows older than
    /// [`KEEP_MS`].
    pub async fn record(&self, looks: &[(String, PoolSample)]) -> Result<u32, sqlx::Error> {
        // Read first, lock only when a row is due: most passes write nothing (the enforcer,
        // the only writer, runs this once a second).
        let mut due = Vec::new();
        for (pool_id, look) in looks {
            let last = sqlx::query(
                "SELECT at_ms, desired, ready, warming, util_pct FROM pool_history WHERE pool_id = $1 ORDER BY at_ms DESC LIMIT 1",
            )
            .bind(pool_id)
            .fetch_optional(self.db.pool())
            .await?
            .map(|row| sample(&row));
            if worth_writing(last.as_ref(), look) {
                due.push((pool_id, look));
            }
        }
        if due.is_empty() {
            return Ok(0);
        }
        let mut written = 0;
        let mut tx = self.db.begin_write().await?;
        for (pool_id, look) in due {
            sqlx::query("INSERT INTO pool_history (pool_id, at_ms, desired, ready, warming, util_pct) VALUES ($1, $2, $3, $4, $5, CASE WHEN $7 = 1 THEN $6 END) ON CONFLICT (pool_id, at_ms) DO UPDATE SET desired = excluded.desired, ready = excluded.ready, warming = excluded.warming, util_pct = excluded.util_pct")
                .bind(pool_id)
                .bind(look.at_ms)
                .bind(i64::from(look.desired))
                .bind(i64::from(look.ready))
                .bind(i64::from(look.warming))
                .bind(look.util_pct.map_or(0.0, f64::from))
                .bind(i64::from(look.util_pct.is_some()))
                .execute(&mut *tx)
                .await?;
            sqlx::query("DELETE FROM pool_history WHERE pool_id = $1 AND at_ms < $2")
                .bind(pool_id)
                .bind(look.at_ms - KEEP_MS)
                .execute(&mut *tx)
                .await?;
            written += 1;
        }
        tx.commit().await?;
        Ok(written)
    }

    /// A pool's rows from `since_ms` on, oldest first.
    pub async fn series(
        &self,
        pool_id: &str,
        since_ms: i64,
    ) -> Result<Vec<PoolSample>, sqlx::Error> {
        let rows = sqlx::query(
            "SELECT at_ms, desired, ready, warming, util_pct FROM pool_history WHERE pool_id = $1 AND at_ms >= $2 ORDER BY at_ms",
        )
        .bind(pool_id)
        .bind(since_ms)
        .fetch_all(self.db.pool())
        .await?;
        Ok(rows.iter().map(sample).collect())
    }

    /// Measures the requests answered since the last call: each one granted (its GPU now
    /// in the lease history) is a sample of its host's delivery time, `now_ms` minus when
    /// it was written down.
    pub async fn measure(&self, now_ms: i64) -> Result<u32, sqlx::Error> {
        // Nothing answered since the last call (most passes): no write lock.
        let any: Option<i64> = sqlx::query_scalar("SELECT 1 FROM lease_answered LIMIT 1")
            .fetch_optional(self.db.pool())
            .await?;
        if any.is_none() {
            return Ok(0);
        }
        let mut tx = self.db.begin_write().await?;
        let answered =
            sqlx::query("SELECT key, pool_id, host, gpu_uuid, asked_at_ms FROM lease_answered")
                .fetch_all(&mut *tx)
                .await?;
        let mut measured = 0;
        for row in &answered {
            let host: String = row.get("host");
            let uuid: String = row.get("gpu_uuid");
            let asked: i64 = row.get("asked_at_ms");
            // The JSON array holds the quoted uuid; LIKE, with its wildcards escaped, is
            // the substring test both engines have (SQLite's instr is PostgreSQL's strpos).
            let quoted = format!("\"{uuid}\"")
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            let granted: Option<i64> = sqlx::query_scalar(
                "SELECT 1 FROM pool_leases WHERE host = $1 AND pool_id = $2 \
                 AND gpu_uuids LIKE '%' || $3 || '%' ESCAPE '\\' LIMIT 1",
            )
            .bind(&host)
            .bind(row.get::<String, _>("pool_id"))
            .bind(quoted)
            .fetch_optional(&mut *tx)
            .await?;
            if granted.is_some() {
                let took = (now_ms - asked).max(0);
                sqlx::query(
                    "INSERT INTO host_delivery (host, samples, mean_ms, last_ms, at_ms) VALUES ($1, 1, $2, $3, $4) \
                     ON CONFLICT (host) DO UPDATE SET \
                     mean_ms = (host_delivery.mean_ms * (CASE WHEN host_delivery.samples < $5 THEN host_delivery.samples ELSE $5 END) + excluded.mean_ms) / ((CASE WHEN host_delivery.samples < $6 THEN host_delivery.samples ELSE $6 END) + 1), \
                     samples = host_delivery.samples + 1, last_ms = excluded.last_ms, at_ms = excluded.at_ms",
                )
                .bind(&host)
                .bind(took as f64)
                .bind(took)
                .bind(now_ms)
                .bind(MEAN_OF - 1)
                .bind(MEAN_OF - 1)
                .execute(&mut *tx)
                .await?;
                measured += 1;
            }
            sqlx::query("DELETE FROM lease_answered WHERE key = $1")
                .bind(row.get::<String, _>("key"))
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(measured)
    }

    /// Every host's measured delivery time.
    pub async fn deliveries(&self) -> Result<HashMap<String, Delivery>, sqlx::Error> {
        let rows = sqlx::query("SELECT host, samples, mean_ms, last_ms FROM host_delivery")
            .fetch_all(self.db.pool())
            .await?;
        Ok(rows
            .iter()
            .map(|row| {
                (
                    row.get("host"),
                    Delivery {
                        samples: u32::try_from(row.get::<i64, _>("samples")).unwrap_or(u32::MAX),
                        mean_ms: row.get("mean_ms"),
                        last_ms: row.get("last_ms"),
                    },
                )
            })
            .collect())
    }

    /// A pool's lease requests not answered yet, oldest first.
    pub async fn asked(&self, pool_id: &str) -> Result<Vec<Asked>, sqlx::Error> {
        let rows = sqlx::query(
            "SELECT host, created_at_ms FROM lease_intents WHERE pool_id = $1 ORDER BY created_at_ms",
        )
        .bind(pool_id)
        .fetch_all(self.db.pool())
        .await?;
        Ok(rows
            .iter()
            .map(|row| Asked {
                host: row.get("host"),
                asked_at_ms: row.get("created_at_ms"),
            })
            .collect())
    }
}

fn sample(row: &crate::db::DbRow) -> PoolSample {
    let count = |name: &str| u32::try_from(row.get::<i64, _>(name)).unwrap_or(0);
    PoolSample {
        at_ms: row.get("at_ms"),
        desired: count("desired"),
        ready: count("ready"),
        warming: count("warming"),
        util_pct: row.get::<Option<f64>, _>("util_pct").map(|v| v as f32),
    }
}

/// The scale-out in progress from the requests not answered yet, each host's measured
/// delivery time, and the GPUs granted whose workload is not up yet (`starting`, without
/// a delivery time of theirs: the ETA waits for them unknown) (pure); `None` when nothing
/// is warming.
pub fn scale_out(
    asked: &[Asked],
    deliveries: &HashMap<String, Delivery>,
    starting: u32,
) -> Option<ScaleOut> {
    let mut hosts: Vec<WarmingHost> = Vec::new();
    for request in asked {
        match hosts.iter_mut().find(|h| h.host == request.host) {
            Some(host) => {
                host.warming += 1;
                host.asked_at_ms = host.asked_at_ms.min(request.asked_at_ms);
            }
            None => hosts.push(WarmingHost {
                host: request.host.clone(),
                warming: 1,
                asked_at_ms: request.asked_at_ms,
                delivery_ms: None,
                samples: 0,
                eta_ms: None,
            }),
        }
    }
    if hosts.is_empty() && starting == 0 {
        return None;
    }
    for host in &mut hosts {
        if let Some(delivery) = deliveries.get(&host.host) {
            host.delivery_ms = Some(delivery.mean_ms);
            host.samples = delivery.samples;
            host.eta_ms = Some(host.asked_at_ms + delivery.mean_ms.round() as i64);
        }
    }
    hosts.sort_by(|a, b| a.host.cmp(&b.host));
    let eta_ms = (starting == 0)
        .then(|| {
            hosts
                .iter()
                .map(|host| host.eta_ms)
                .collect::<Option<Vec<i64>>>()
                .and_then(|etas| etas.into_iter().max())
        })
        .flatten();
    Some(ScaleOut {
        warming: hosts.iter().map(|host| host.warming).sum::<u32>() + starting,
        starting,
        eta_ms,
        hosts,
    })
}

/// What the pool chart shows of the pool `name`: its rows from `from_ms` on (with the
/// last one before, so the lines start at the left edge), its desired and ready counts
/// now, and the scale-out in progress.
pub async fn chart_data(
    store: &PoolStore,
    name: &str,
    from_ms: i64,
) -> Result<(Vec<PoolSample>, u32, u32, Option<ScaleOut>), PoolError> {
    let pool = store.get(name).await?;
    let history = PoolHistory::new(store.db().clone());
    let mut rows = history.series(&pool.id, from_ms).await?;
    let before = sqlx::query(
        "SELECT at_ms, desired, ready, warming, util_pct FROM pool_history WHERE pool_id = $1 AND at_ms < $2 ORDER BY at_ms DESC LIMIT 1",
    )
    .bind(&pool.id)
    .bind(from_ms)
    .fetch_optional(store.db().pool())
    .await?;
    if let Some(row) = before {
        let mut first = sample(&row);
        first.at_ms = from_ms;
        rows.insert(0, first);
    }
    // A GPU granted whose workload is not up yet is warming, not ready.
    let (ready, starting) = store
        .read_status(&pool.id)
        .await?
        .map_or((0, 0), |(status, _)| {
            (status.ready(), status.warming_held())
        });
    let scale_out = scale_out(
        &history.asked(&pool.id).await?,
        &history.deliveries().await?,
        starting,
    );
    Ok((rows, pool.desired, ready, scale_out))
}

/// The enforcer's one call after a pass: the pools' looks and the hosts' delivery times.
/// A failure here is logged, never the pass's.
pub async fn after_pass(store: &PoolStore, pools: &[Pool], statuses: &[PoolStatus]) {
    let history = PoolHistory::new(store.db().clone());
    let now = store.now_ms();
    if let Err(error) = history.measure(now).await {
        tracing::warn!(%error, "cannot measure delivery times");
    }
    let looks: Vec<(String, PoolSample)> = statuses
        .iter()
        .filter_map(|status| {
            let pool = pools.iter().find(|p| p.id == status.pool_id)?;
            Some((
                status.pool_id.clone(),
                pool_sample(now, pool.desired, status),
            ))
        })
        .collect();
    if let Err(error) = history.record(&looks).await {
        tracing::warn!(%error, "cannot write the pool history");
    }
}

#[cfg(test)]
mod tests;
