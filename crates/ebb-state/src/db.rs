//! The console's state database: the registry, pools, rules, lease intents and history,
//! fences, pool status, the activity log and settings. One schema on two engines:
//!
//! - **SQLite** (`console.db` in the data directory, WAL mode): the default, one desktop;
//! - **PostgreSQL** (`database = "postgres://…"` in the data directory's `console.toml`, or
//!   `--database`): consoles sharing one fleet, which elect one enforcer
//!   ([`crate::election`]).
//!
//! Every query is written once, in the SQL both engines speak (`$1` parameters, `ON
//! CONFLICT`, `RETURNING`, 64-bit integers), through sqlx's `Any` driver; only the
//! migrations are written twice (`migrations/console` and `migrations/console_pg`, the same
//! tables), and a write transaction is taken the way each engine serializes writers.
//!
//! A nullable float is bound as a value and a flag (`CASE WHEN $flag = 1 THEN $value END`):
//! sqlx 0.9's `Any` sends a NULL `f64` as PostgreSQL's float4, and the statement cached for
//! it then refuses the next call's float8.
//!
//! SQL both speak means no `INSERT OR`, no two-argument `MIN(a, b)`, no `instr`, and no
//! boolean expression used as a value. A write begins `IMMEDIATE` on SQLite (the write lock
//! up front, so two processes never fail upgrading a read) and takes one
//! transaction-scoped advisory lock on PostgreSQL, the same one-writer order
//! ([`ConsoleDb::begin_write`]); a PostgreSQL session idle in a transaction is ended after
//! 5 s, so a paused console cannot hold the others' writes. `console.toml` is read by
//! [`crate::config`].

use crate::clock::{SharedClock, SystemClock};
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{Any, AnyConnection, AnyPool, Connection, Executor, Transaction};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// The console's database could not be opened (or made): where, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot open the console database {path}: {reason}")]
pub struct OpenError {
    pub path: String,
    pub reason: String,
}

/// A row of the console database, whichever engine holds it.
pub type DbRow = sqlx::any::AnyRow;

pub use crate::config::CONFIG_FILE;

/// Which engine holds the console's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

/// Where the console's state lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// `console.db` in this data directory.
    DataDir(std::path::PathBuf),
    /// A PostgreSQL database shared with other consoles (`postgres://…`).
    Postgres(String),
}

impl Location {
    /// The command line's choice for this process (`--database`), over any data
    /// directory's `console.toml`: set once, before the first database is opened.
    pub fn choose_for_process(text: &str) -> Result<(), String> {
        // `sqlite` is each data directory's own file, whichever directory it is.
        let chosen = match Self::parse(text, Path::new("."))? {
            Self::DataDir(_) => None,
            shared => Some(shared),
        };
        PROCESS_CHOICE
            .set(chosen)
            .map_err(|_| "database: chosen twice".to_string())
    }

    /// The data directory's choice: the process's `--database`, else its `console.toml`'s
    /// `database`, else its own `console.db`. A bad file is an error naming the file and the
    /// field.
    pub fn of_data_dir(data_dir: &Path) -> Result<Self, OpenError> {
        match PROCESS_CHOICE.get() {
            Some(Some(chosen)) => return Ok(chosen.clone()),
            Some(None) => return Ok(Self::DataDir(data_dir.to_path_buf())),
            None => {}
        }
        match crate::config::ConsoleToml::read(data_dir)?.database {
            None => Ok(Self::DataDir(data_dir.to_path_buf())),
            Some(url) => Self::parse(&url, data_dir).map_err(|reason| OpenError {
                path: data_dir.join(CONFIG_FILE).display().to_string(),
                reason,
            }),
        }
    }

    /// `--database`: a `postgres://` URL, or `sqlite` for the data directory's own file.
    pub fn parse(text: &str, data_dir: &Path) -> Result<Self, String> {
        let text = text.trim();
        if text == "sqlite" {
            Ok(Self::DataDir(data_dir.to_path_buf()))
        } else if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Ok(Self::Postgres(text.to_string()))
        } else {
            Err(format!(
                "database: `{}` is neither `sqlite` nor a postgres:// URL",
                redact(text)
            ))
        }
    }

    pub fn engine(&self) -> Engine {
        match self {
            Self::DataDir(_) => Engine::Sqlite,
            Self::Postgres(_) => Engine::Postgres,
        }
    }

    /// Where it is, for messages: a URL's password is never shown.
    pub fn describe(&self) -> String {
        match self {
            Self::DataDir(dir) => dir.join("console.db").display().to_string(),
            Self::Postgres(url) => redact(url),
        }
    }
}

/// `--database` as given for this process: `Some(None)` is `sqlite` (the data directory's
/// own file, whatever its config says).
static PROCESS_CHOICE: std::sync::OnceLock<Option<Location>> = std::sync::OnceLock::new();

/// A URL with its password replaced, for messages and logs.
fn redact(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

/// What each connection runs first. A writer waits up to 5 s for another, then fails saying
/// so.
fn session_setup(engine: Engine) -> &'static str {
    match engine {
        // WAL + NORMAL survives a killed process; a power cut may lose the last commits,
        // which the enforcer recovers from what the agents report.
        Engine::Sqlite => {
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;"
        }
        // A console paused inside a transaction (SIGSTOP, a laptop lid) has it ended by the
        // server, so the others' writes wait 5 s at most.
        Engine::Postgres => {
            "SET lock_timeout = '5s'; SET statement_timeout = '30s'; \
             SET idle_in_transaction_session_timeout = '5s';"
        }
    }
}

/// A PostgreSQL database made when missing, as SQLite makes its file: a fresh server needs
/// only a role allowed to create databases. Two consoles making it at once is no error.
async fn create_if_missing(url: &str) -> Result<(), sqlx::Error> {
    use sqlx::migrate::MigrateDatabase;
    if Any::database_exists(url).await? {
        return Ok(());
    }
    match Any::create_database(url).await {
        Err(_) if Any::database_exists(url).await.unwrap_or(false) => Ok(()),
        made => made,
    }
}

/// The console database and the clock its stores read; cheap to clone.
#[derive(Debug, Clone)]
pub struct ConsoleDb {
    pool: AnyPool,
    engine: Engine,
    clock: SharedClock,
    /// Who this console acts as (`access::identify`), recorded with every change.
    identity: Arc<ebb_wire::access::Identity>,
}

impl ConsoleDb {
    /// The data directory's database (see [`Location::of_data_dir`]), migrated.
    pub async fn open(data_dir: &Path) -> Result<Self, OpenError> {
        std::fs::create_dir_all(data_dir).map_err(|error| OpenError {
            path: data_dir.display().to_string(),
            reason: error.to_string(),
        })?;
        Self::connect(&Location::of_data_dir(data_dir)?).await
    }

    /// The database at `location`, migrated.
    pub async fn connect(location: &Location) -> Result<Self, OpenError> {
        sqlx::any::install_default_drivers();
        let open_error = |error: &dyn std::fmt::Display| OpenError {
            path: location.describe(),
            reason: error.to_string(),
        };
        let engine = location.engine();
        let url = match location {
            Location::DataDir(dir) => {
                let path = dir.join("console.db");
                let path = path
                    .to_str()
                    .ok_or_else(|| open_error(&"the data directory's path is not UTF-8"))?;
                format!("sqlite://{path}?mode=rwc")
            }
            Location::Postgres(url) => url.clone(),
        };
        if engine == Engine::Postgres {
            create_if_missing(&url)
                .await
                .map_err(|error| open_error(&error))?;
        }
        let options = AnyConnectOptions::from_str(&url).map_err(|error| open_error(&error))?;
        // One connection first, set up as every pooled one is: a database that cannot be
        // opened (a full disk, a refused login) says why now, where the pool would retry
        // until its acquire timeout and report only that it timed out.
        let mut first = AnyConnection::connect_with(&options)
            .await
            .map_err(|error| open_error(&error))?;
        let set_up = first.execute(sqlx::raw_sql(session_setup(engine))).await;
        let _ = first.close().await;
        set_up.map_err(|error| open_error(&error))?;
        let pool = AnyPoolOptions::new()
            .max_connections(4)
            .acquire_timeout(Duration::from_secs(10))
            .after_connect(move |connection, _| {
                Box::pin(async move {
                    connection
                        .execute(sqlx::raw_sql(session_setup(engine)))
                        .await?;
                    Ok(())
                })
            })
            .connect_with(options)
            .await
            .map_err(|error| open_error(&error))?;
        let migrated = match engine {
            Engine::Sqlite => sqlx::migrate!("./migrations/console").run(&pool).await,
            Engine::Postgres => {
                let migrator = sqlx::migrate!("./migrations/console_pg");
                // A console whose role may not change the schema (after `ebb admin init`)
                // opens a database already migrated, and only that.
                if migrated_to(&pool).await >= migrator.iter().map(|m| m.version).max() {
                    Ok(())
                } else {
                    migrator.run(&pool).await
                }
            }
        };
        migrated.map_err(|error| {
            let reason = match &error {
                sqlx::migrate::MigrateError::Execute(sql)
                    if crate::access::is_refused(sql) =>
                {
                    format!(
                        "this database's schema is older than this console and your role may not change it: an admin's console (or `ebb admin init`) must open it first ({error})"
                    )
                }
                _ => error.to_string(),
            };
            open_error(&reason)
        })?;
        let mut db = Self {
            pool,
            engine,
            clock: Arc::new(SystemClock),
            identity: Arc::new(ebb_wire::access::Identity::new(
                crate::access::os_user(),
                ebb_wire::access::AccessRole::Admin,
                false,
            )),
        };
        db.identity = Arc::new(
            crate::access::identify(&db)
                .await
                .map_err(|error| open_error(&error))?,
        );
        Ok(db)
    }

    /// Who this console acts as: recorded with every change it makes, and what its role
    /// lets it do.
    pub fn identity(&self) -> &ebb_wire::access::Identity {
        &self.identity
    }

    /// The same database read on another clock (virtual time in tests).
    pub fn with_clock(self, clock: SharedClock) -> Self {
        Self { clock, ..self }
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// Whether other consoles may share this database (and so elect one enforcer).
    pub fn is_shared(&self) -> bool {
        self.engine == Engine::Postgres
    }

    /// A transaction that writes: one writer at a time, as SQLite's `BEGIN IMMEDIATE` gives
    /// (on PostgreSQL, a transaction-scoped advisory lock every writer takes first), so a
    /// read-then-write inside it sees no other writer's change in between.
    pub async fn begin_write(&self) -> Result<Transaction<'static, Any>, sqlx::Error> {
        match self.engine {
            Engine::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await,
            Engine::Postgres => {
                let mut tx = self.pool.begin().await?;
                sqlx::query("SELECT pg_advisory_xact_lock(7171)")
                    .execute(&mut *tx)
                    .await?;
                Ok(tx)
            }
        }
    }

    /// A transaction that only reads, every read in it as of one moment: SQLite's deferred
    /// transaction (in WAL mode its snapshot is taken at the first read and held to the
    /// end), PostgreSQL's repeatable read.
    pub async fn begin_snapshot(&self) -> Result<Transaction<'static, Any>, sqlx::Error> {
        match self.engine {
            Engine::Sqlite => self.pool.begin_with("BEGIN DEFERRED").await,
            Engine::Postgres => {
                self.pool
                    .begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    .await
            }
        }
    }

    /// Now, on this database's clock.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }
}

/// The newest migration a PostgreSQL database has run (`None`: none, or not readable).
async fn migrated_to(pool: &AnyPool) -> Option<i64> {
    sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
        .fetch_one(pool)
        .await
        .ok()
        .flatten()
}

/// A console-wide entry of the activity log (no pool): a host added or removed, a limit
/// changed. Written in the caller's transaction, so the change and its entry (and its
/// audit entry) go together; it is done when written.
pub(crate) async fn insert_console_activity(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    identity: &ebb_wire::access::Identity,
    reason: &ebb_wire::reasons::ChangeReason,
    now: i64,
) -> Result<i64, sqlx::Error> {
    log_activity(tx, identity, &ActivityRow::console("operator", reason), now).await
}

/// An activity entry as written.
pub(crate) struct ActivityRow<'a> {
    pub pool_id: &'a str,
    pub pool_name: &'a str,
    pub actor: &'a str,
    pub from: u32,
    pub to: u32,
    pub reason: &'a ebb_wire::reasons::ChangeReason,
    pub delta_per_hour_fen: Option<i64>,
    pub delta_per_month_fen: Option<i64>,
    /// Done when written (else in progress until the enforcer finishes it).
    pub done: bool,
}

impl<'a> ActivityRow<'a> {
    /// A console-wide entry (no pool, no count), done when written.
    pub fn console(actor: &'a str, reason: &'a ebb_wire::reasons::ChangeReason) -> Self {
        Self {
            pool_id: "",
            pool_name: "",
            actor,
            from: 0,
            to: 0,
            reason,
            delta_per_hour_fen: None,
            delta_per_month_fen: None,
            done: true,
        }
    }
}

/// Writes an activity entry in the caller's write transaction, with who made it, and its
/// audit entry: every change but a rule's decision that changes nothing.
pub(crate) async fn log_activity(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    identity: &ebb_wire::access::Identity,
    row: &ActivityRow<'_>,
    now: i64,
) -> Result<i64, sqlx::Error> {
    let id = sqlx::query_scalar(
        "INSERT INTO activity (at_ms, pool_id, pool_name, actor, from_gpus, to_gpus, reason, delta_per_hour_fen, delta_per_month_fen, results, outcome, finished_at_ms, who, role) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, '[]', $10, $11, $12, $13) RETURNING id",
    )
    .bind(now)
    .bind(row.pool_id)
    .bind(row.pool_name)
    .bind(row.actor)
    .bind(i64::from(row.from))
    .bind(i64::from(row.to))
    .bind(row.reason.to_stored())
    .bind(row.delta_per_hour_fen)
    .bind(row.delta_per_month_fen)
    .bind(if row.done { "done" } else { "in_progress" })
    .bind(row.done.then_some(now))
    .bind(&identity.who)
    .bind(identity.role.name())
    .fetch_one(&mut **tx)
    .await?;
    let decision = matches!(
        row.reason,
        ebb_wire::reasons::ChangeReason::RuleDecision { .. }
    );
    if !(decision && row.from == row.to) {
        let what = reason_kind(row.reason);
        let subject = if row.pool_name.is_empty() {
            reason_subject(row.reason)
        } else {
            row.pool_name.to_string()
        };
        let (before, after) = if row.pool_name.is_empty() {
            (String::new(), row.reason.to_string())
        } else {
            (
                format!("{} GPUs", row.from),
                format!("{} GPUs: {} ({})", row.to, row.reason, row.actor),
            )
        };
        crate::audit::append(
            tx,
            identity,
            now,
            &crate::audit::Change {
                what: &what,
                subject: &subject,
                before: &before,
                after: &after,
            },
        )
        .await?;
    }
    Ok(id)
}

/// A reason's kind, its serde tag (`slider`, `host_added`, …).
fn reason_kind(reason: &ebb_wire::reasons::ChangeReason) -> String {
    serde_json::to_value(reason)
        .ok()
        .and_then(|value| value.get("kind")?.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// What a console-wide change is about: its host, team or user.
fn reason_subject(reason: &ebb_wire::reasons::ChangeReason) -> String {
    let value = serde_json::to_value(reason).unwrap_or_default();
    ["host", "pool", "team", "user"]
        .iter()
        .find_map(|key| value.get(*key)?.as_str().map(str::to_string))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_data_directory_without_a_config_keeps_its_own_file() {
        let dir = ebb_testkit::TempDir::new("db-no-config");
        // (The suites' PostgreSQL run writes one into every test directory.)
        let _ = std::fs::remove_file(dir.join(CONFIG_FILE));
        let location = Location::of_data_dir(dir.path()).unwrap();
        assert_eq!(location, Location::DataDir(dir.path().to_path_buf()));
        assert_eq!(location.engine(), Engine::Sqlite);
    }

    #[test]
    fn the_config_names_a_shared_database_and_bad_ones_say_which_field() {
        let dir = ebb_testkit::TempDir::new("db-config");
        let write = |text: &str| std::fs::write(dir.path().join(CONFIG_FILE), text).unwrap();
        write("database = \"postgres://ebb:secret@db.example/ebb\"\n");
        let location = Location::of_data_dir(dir.path()).unwrap();
        assert_eq!(location.engine(), Engine::Postgres);
        assert!(
            !location.describe().contains("secret"),
            "{}",
            location.describe()
        );

        write("database = \"mysql://x\"\n");
        let error = Location::of_data_dir(dir.path()).unwrap_err().to_string();
        assert!(
            error.contains("database:") && error.contains("mysql://x"),
            "{error}"
        );

        write("databse = \"postgres://x\"\n");
        let error = Location::of_data_dir(dir.path()).unwrap_err().to_string();
        assert!(error.contains("unknown field `databse`"), "{error}");

        write("database = 5\n");
        let error = Location::of_data_dir(dir.path()).unwrap_err().to_string();
        assert!(error.contains("database: expected a string"), "{error}");
    }
}
