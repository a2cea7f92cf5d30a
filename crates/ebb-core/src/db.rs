//! `console.db`: the console's one SQLite database (hosts, pools, lease intents and
//! history, fences, pool status, the activity log, settings), opened in WAL mode with
//! its migrations run. The registry and the pool store share it.

use crate::clock::{SharedClock, SystemClock};
use crate::registry::RegistryError;
use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// The console database and the clock its stores read; cheap to clone.
#[derive(Debug, Clone)]
pub struct ConsoleDb {
    pool: SqlitePool,
    clock: SharedClock,
}

impl ConsoleDb {
    pub async fn open(data_dir: &Path) -> Result<Self, RegistryError> {
        std::fs::create_dir_all(data_dir).map_err(|error| RegistryError::Open {
            path: data_dir.display().to_string(),
            reason: error.to_string(),
        })?;
        let path = data_dir.join("console.db");
        let options = SqliteConnectOptions::from_str("sqlite:")?
            .filename(&path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // WAL + NORMAL survives a killed process; a power cut may lose the last
            // commits, which the enforcer recovers from what the agents report.
            .synchronous(sqlx::sqlite::SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(5));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(|error| RegistryError::Open {
                path: path.display().to_string(),
                reason: error.to_string(),
            })?;
        sqlx::migrate!("./migrations/console")
            .run(&pool)
            .await
            .map_err(|error| RegistryError::Open {
                path: path.display().to_string(),
                reason: error.to_string(),
            })?;
        Ok(Self {
            pool,
            clock: Arc::new(SystemClock),
        })
    }

    /// The same database read on another clock (virtual time in tests).
    pub fn with_clock(self, clock: SharedClock) -> Self {
        Self { clock, ..self }
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Now, on this database's clock.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }
}
