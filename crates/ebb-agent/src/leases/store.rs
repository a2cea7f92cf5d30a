//! Where leases live between restarts: SQLite through sqlx, WAL, one transaction per change.

use super::ledger::{Expired, Ledger};
use ebb_wire::agent::{ConsoleTerm, Lease, LeaseRequest};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, SqlitePool};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the lease database {path}: {source}")]
    Open { path: String, source: sqlx::Error },
    #[error("cannot migrate the lease database: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("lease database error: {0}")]
    Sql(#[from] sqlx::Error),
    #[error("a stored lease record is corrupt: {0}")]
    Corrupt(#[from] serde_json::Error),
}

/// The lease database. Cloning shares the pool; each [`HostStore`] sees one host's rows.
#[derive(Debug, Clone)]
pub struct LeaseDb {
    pool: SqlitePool,
}

impl LeaseDb {
    /// Opens (creating) `leases.db` in `state_dir`.
    pub async fn open(state_dir: &Path) -> Result<Self, StoreError> {
        let path = state_dir.join("leases.db");
        let options = SqliteConnectOptions::from_str("sqlite:")
            .map_err(|source| StoreError::Open {
                path: path.display().to_string(),
                source,
            })?
            .filename(&path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(Duration::from_secs(5));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(|source| StoreError::Open {
                path: path.display().to_string(),
                source,
            })?;
        Self::migrated(pool).await
    }

    /// A database that lives as long as the process: for demos and tests.
    pub async fn in_memory() -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::from_str("sqlite::memory:")?;
        // One connection: an in-memory database exists per connection.
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(options)
            .await?;
        Self::migrated(pool).await
    }

    async fn migrated(pool: SqlitePool) -> Result<Self, StoreError> {
        sqlx::migrate!("./migrations").run(&pool).await?;
        Ok(Self { pool })
    }

    pub fn host(&self, host: &str) -> HostStore {
        HostStore {
            pool: self.pool.clone(),
            host: host.to_string(),
        }
    }
}

/// One host's leases in the database.
#[derive(Debug, Clone)]
pub struct HostStore {
    pool: SqlitePool,
    host: String,
}

impl HostStore {
    /// Rebuilds the host's ledger.
    pub async fn load(&self) -> Result<Ledger, StoreError> {
        let lease_rows =
            sqlx::query("SELECT body, spot FROM leases WHERE host = ? ORDER BY fencing_token")
                .bind(&self.host)
                .fetch_all(&self.pool)
                .await?;
        let leases = lease_rows
            .iter()
            .map(|row| {
                let mut lease = serde_json::from_str::<Lease>(row.get::<&str, _>("body"))?;
                // The column is the record (a row from before it reads as false).
                lease.spot = row.get::<i64, _>("spot") != 0;
                Ok(lease)
            })
            .collect::<Result<Vec<_>, serde_json::Error>>()?;
        let key_rows = sqlx::query("SELECT key, request, response FROM idempotency WHERE host = ?")
            .bind(&self.host)
            .fetch_all(&self.pool)
            .await?;
        let records = key_rows
            .iter()
            .map(|row| {
                Ok((
                    row.get::<String, _>("key"),
                    serde_json::from_str::<LeaseRequest>(row.get::<&str, _>("request"))?,
                    serde_json::from_str::<Lease>(row.get::<&str, _>("response"))?,
                ))
            })
            .collect::<Result<Vec<_>, serde_json::Error>>()?;
        let last: Option<i64> = sqlx::query_scalar("SELECT last_token FROM fencing WHERE host = ?")
            .bind(&self.host)
            .fetch_optional(&self.pool)
            .await?;
        let terms: Vec<(String, i64)> =
            sqlx::query_as("SELECT console_group, term FROM console_terms WHERE host = ?")
                .bind(&self.host)
                .fetch_all(&self.pool)
                .await?;
        Ok(
            Ledger::restore(leases, records, last.unwrap_or(0) as u64).with_terms(
                terms
                    .into_iter()
                    .map(|(group, term)| (group, u64::try_from(term).unwrap_or(0))),
            ),
        )
    }

    /// Keeps `term` as its group's highest, unless a higher one is kept already.
    pub async fn raise_term(&self, term: &ConsoleTerm) -> Result<(), StoreError> {
        // The ledger refuses terms past i64::MAX, so the cast is exact.
        sqlx::query(
            "INSERT INTO console_terms (host, console_group, term) VALUES (?, ?, ?)
             ON CONFLICT (host, console_group) DO UPDATE SET term = MAX(term, excluded.term)",
        )
        .bind(&self.host)
        .bind(&term.console_group)
        .bind(term.term as i64)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Stores a new grant: the lease, its idempotency record and the fence, together.
    pub async fn insert_grant(
        &self,
        key: &str,
        request: &LeaseRequest,
        lease: &Lease,
    ) -> Result<(), StoreError> {
        let body = serde_json::to_string(lease)?;
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO leases (host, id, fencing_token, body, spot) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(&self.host)
        .bind(&lease.id)
        .bind(lease.fencing_token as i64)
        .bind(&body)
        .bind(lease.spot)
        .execute(&mut *tx)
        .await?;
        sqlx::query("INSERT INTO idempotency (host, key, request, response) VALUES (?, ?, ?, ?)")
            .bind(&self.host)
            .bind(key)
            .bind(serde_json::to_string(request)?)
            .bind(&body)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO fencing (host, last_token) VALUES (?, ?)
             ON CONFLICT (host) DO UPDATE SET last_token = MAX(last_token, excluded.last_token)",
        )
        .bind(&self.host)
        .bind(lease.fencing_token as i64)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Stores the lease a grant finally answered with (its workload started) as both the
    /// lease and the idempotency record's response.
    pub async fn update_grant_response(&self, key: &str, lease: &Lease) -> Result<(), StoreError> {
        let body = serde_json::to_string(lease)?;
        let mut tx = self.pool.begin().await?;
        sqlx::query("UPDATE leases SET body = ?, spot = ? WHERE host = ? AND id = ?")
            .bind(&body)
            .bind(lease.spot)
            .bind(&self.host)
            .bind(&lease.id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("UPDATE idempotency SET response = ? WHERE host = ? AND key = ?")
            .bind(&body)
            .bind(&self.host)
            .bind(key)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Deletes expired leases and their idempotency records, together. The host's last
    /// fencing token is kept, so fences only grow.
    pub async fn forget(&self, expired: &Expired) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        for id in &expired.lease_ids {
            sqlx::query("DELETE FROM leases WHERE host = ? AND id = ?")
                .bind(&self.host)
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        for key in &expired.keys {
            sqlx::query("DELETE FROM idempotency WHERE host = ? AND key = ?")
                .bind(&self.host)
                .bind(key)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Stores a lease's new state.
    pub async fn update(&self, lease: &Lease) -> Result<(), StoreError> {
        let updated = sqlx::query("UPDATE leases SET body = ?, spot = ? WHERE host = ? AND id = ?")
            .bind(serde_json::to_string(lease)?)
            .bind(lease.spot)
            .bind(&self.host)
            .bind(&lease.id)
            .execute(&self.pool)
            .await?;
        if updated.rows_affected() != 1 {
            return Err(StoreError::Sql(sqlx::Error::RowNotFound));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_lease_row_from_before_spot_reads_as_not_spot_and_a_spot_lease_stays_spot() {
        let db = LeaseDb::in_memory().await.unwrap();
        // As the agent wrote it before the spot column: the body without `spot`.
        let old = r#"{"id":"lease-1-aa","pool_id":"p","holder_id":"h","gpu_uuids":["GPU-1"],
            "gpu_indexes":[0],"fencing_token":1,"state":"active","created_at_ms":5,
            "release_requested_at_ms":null,"released_at_ms":null,"command":null,
            "load_profile":null,"workload_pid":null,"workload_exit_code":null,
            "workload_signal":null,"workload_log":null}"#;
        sqlx::query(
            "INSERT INTO leases (host, id, fencing_token, body) VALUES ('h', 'lease-1-aa', 1, ?)",
        )
        .bind(old)
        .execute(&db.pool)
        .await
        .unwrap();
        let store = db.host("h");
        let ledger = store.load().await.unwrap();
        let loaded = ledger.get("lease-1-aa").expect("the old row");
        assert!(!loaded.spot);
        let mut spot = loaded.clone();
        spot.id = "lease-2-bb".into();
        spot.fencing_token = 2;
        spot.spot = true;
        let request: LeaseRequest =
            serde_json::from_str(r#"{"pool_id":"p","holder_id":"h","count":1}"#).unwrap();
        store.insert_grant("k", &request, &spot).await.unwrap();
        let column: i64 = sqlx::query_scalar("SELECT spot FROM leases WHERE id = 'lease-2-bb'")
            .fetch_one(&db.pool)
            .await
            .unwrap();
        assert_eq!(column, 1);
        store.update(&spot).await.unwrap();
        let ledger = store.load().await.unwrap();
        assert!(ledger.get("lease-2-bb").unwrap().spot);
        assert!(!ledger.get("lease-1-aa").unwrap().spot);
    }
}
