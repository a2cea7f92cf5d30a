//! The metrics store: every GPU sample the collector takes, kept in its own SQLite file
//! (`metrics.db`, sqlx, WAL, `synchronous=NORMAL`) at three resolutions for a bounded time.
//!
//! - **Raw** samples (`samples`), clustered by host then time, so one host's round lands in
//!   adjacent rows and one host's chart is one range of the primary key.
//! - **Minute** and **hour** rollups: per GPU and bucket, each metric's min, max, sum and
//!   count of readings. A missing reading is NULL and counts for nothing; an average is
//!   sum / count, so hours computed from minutes are exact.
//!
//! Writes: the collector's one writer task calls [`MetricsStore::insert_batch`] once a
//! round (one transaction, prepared multi-row inserts) and [`MetricsStore::compact`] about
//! once a minute. `insert_batch` only records the earliest time it wrote
//! (`pending_from_ms`); `compact` recomputes the minute rollups from that minute on (the
//! current, partial minute included) and the hours from those minutes, so late samples
//! are folded in too and the rollups always equal what the raw rows say. Then it applies
//! retention: each table loses rows older than its window ([`RetentionConfig`]), deleted in
//! chunks of `delete_chunk_rows` (one short transaction each). Freed pages are reused, so
//! the file stops growing once every window is full.
//!
//! Reads: a query picks the finest table that can answer (raw for one host's ranges up to
//! about `max_points` minutes, minutes up to `max_points` hours, hours beyond, and never a
//! table whose retention already passed the range's start), then SQLite groups the rows
//! into at most `max_points` buckets per series, each a [`Point`] with the bucket's min,
//! mean and max (to a thousandth of the unit), so spikes survive. Fleet-wide queries (all
//! hosts: region aggregates, the heatmap) read rollups only, so their cost grows with
//! minutes, not samples.
//!
//! `query` and friends never count a missing reading as zero: a bucket without readings
//! is no point at all, a GPU without any is no series.
//!
//! Memory is bounded: two connections, each caching at most 8 MiB of pages, and a sort
//! larger than that (the minute rollup) spills to a temporary file, not to memory.

use ebb_charts::downsample::Point;
use ebb_charts::history::{AggregateSeries, GpuSeries, Heatmap, HeatmapRow};
use ebb_wire::ipc::ChartMetric;
use serde::Serialize;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow, SqliteSynchronous,
};
use sqlx::{AssertSqlSafe, Row, SqliteConnection, SqlitePool};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The store's file name inside a data directory.
pub const FILE_NAME: &str = "metrics.db";
/// The most points a query may ask for per series.
pub const MAX_POINTS_LIMIT: u32 = 100_000;

const MINUTE_MS: i64 = 60_000;
const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;
/// Rows per multi-row INSERT: 8 parameters a row, 4,096 of SQLite's 32,766.
const MAX_ROWS_PER_INSERT: usize = 512;

/// One reading of one GPU, as the collector hands it over. A reading the card could not
/// give is `None`: stored as NULL, never 0.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleRow {
    pub host: String,
    pub gpu_index: u32,
    pub t_ms: i64,
    pub util_pct: Option<f32>,
    pub memory_used_mib: Option<u32>,
    pub memory_total_mib: Option<u32>,
    pub temperature_c: Option<f32>,
    pub power_w: Option<f32>,
}

/// How long each table keeps its rows, and how many rows one delete may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionConfig {
    pub raw_keep_ms: i64,
    pub minute_keep_ms: i64,
    pub hour_keep_ms: i64,
    /// Rows per delete transaction, so retention never holds the writer for long.
    pub delete_chunk_rows: u32,
}

impl Default for RetentionConfig {
    /// Raw 2 h, minutes 7 d, hours 400 d; 20,000 rows a delete.
    fn default() -> Self {
        Self {
            raw_keep_ms: 2 * HOUR_MS,
            minute_keep_ms: 7 * DAY_MS,
            hour_keep_ms: 400 * DAY_MS,
            delete_chunk_rows: 20_000,
        }
    }
}

impl RetentionConfig {
    /// Every window at least a minute (an hour for hours), each coarser one at least as long.
    pub fn validate(&self) -> Result<(), MetricsError> {
        let invalid = |field, problem: &str| {
            Err(MetricsError::Invalid {
                field,
                problem: problem.to_string(),
            })
        };
        if self.raw_keep_ms < MINUTE_MS {
            return invalid("raw_keep_ms", "must be at least one minute (60000)");
        }
        if self.minute_keep_ms < HOUR_MS.max(self.raw_keep_ms) {
            return invalid(
                "minute_keep_ms",
                "must be at least one hour and at least raw_keep_ms",
            );
        }
        if self.hour_keep_ms < self.minute_keep_ms {
            return invalid("hour_keep_ms", "must be at least minute_keep_ms");
        }
        if self.delete_chunk_rows == 0 {
            return invalid("delete_chunk_rows", "must be at least 1");
        }
        Ok(())
    }
}

/// The SQL for one metric: the value of one raw row (over `samples s`), and the prefix of
/// its rollup columns. The metric itself is the wire's [`ChartMetric`], defined once.
fn raw_sql(metric: ChartMetric) -> &'static str {
    match metric {
        ChartMetric::Util => "s.util_pct",
        ChartMetric::MemoryUsed => "s.memory_used_mib",
        ChartMetric::MemoryPct => "(100.0 * s.memory_used_mib / NULLIF(s.memory_total_mib, 0))",
        ChartMetric::Temperature => "s.temperature_c",
        ChartMetric::Power => "s.power_w",
    }
}

fn rollup_prefix(metric: ChartMetric) -> &'static str {
    match metric {
        ChartMetric::Util => "util",
        ChartMetric::MemoryUsed => "mem",
        ChartMetric::MemoryPct => "mem_pct",
        ChartMetric::Temperature => "temp",
        ChartMetric::Power => "power",
    }
}

/// Which table answered a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    Raw,
    Minute,
    Hour,
}

impl Resolution {
    fn table(self) -> &'static str {
        match self {
            Resolution::Raw => "samples",
            Resolution::Minute => "rollup_minute",
            Resolution::Hour => "rollup_hour",
        }
    }

    /// The width of one row's bucket (1 ms for raw rows).
    pub fn step_ms(self) -> i64 {
        match self {
            Resolution::Raw => 1,
            Resolution::Minute => MINUTE_MS,
            Resolution::Hour => HOUR_MS,
        }
    }
}

/// A range query. `from_ms..=to_ms` inclusive; `max_points` is per series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesQuery {
    /// One host, or `None` for every host.
    pub host: Option<String>,
    /// One GPU index, or `None` for every GPU.
    pub gpu_index: Option<u32>,
    pub metric: ChartMetric,
    pub from_ms: i64,
    pub to_ms: i64,
    pub max_points: u32,
}

impl SeriesQuery {
    /// The range and the points asked, checked (for any back end).
    pub fn validate(&self) -> Result<(), MetricsError> {
        validate_range(self.from_ms, self.to_ms)?;
        if !(1..=MAX_POINTS_LIMIT).contains(&self.max_points) {
            return Err(MetricsError::Invalid {
                field: "max_points",
                problem: format!(
                    "must be between 1 and {MAX_POINTS_LIMIT}, got {}",
                    self.max_points
                ),
            });
        }
        Ok(())
    }
}

fn validate_range(from_ms: i64, to_ms: i64) -> Result<(), MetricsError> {
    if from_ms < 0 {
        return Err(MetricsError::Invalid {
            field: "from_ms",
            problem: format!("must not be negative, got {from_ms}"),
        });
    }
    if to_ms < from_ms {
        return Err(MetricsError::Invalid {
            field: "to_ms",
            problem: format!("must not be before from_ms ({from_ms}), got {to_ms}"),
        });
    }
    Ok(())
}

/// The fleet heatmap's question: every GPU, `columns` time buckets (at least a minute each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeatmapQuery {
    pub metric: ChartMetric,
    pub from_ms: i64,
    pub to_ms: i64,
    pub columns: u32,
}

/// What [`MetricsStore::insert_batch`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InsertReport {
    pub written: u64,
    /// Rows whose host, GPU and time were already stored (the first one is kept).
    pub duplicates: u64,
    /// Rows with a negative time, left out.
    pub rejected: u64,
}

/// How much the store holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct StoreStats {
    pub hosts: u64,
    pub raw_rows: u64,
    pub minute_rows: u64,
    pub hour_rows: u64,
    /// Pages in use × page size: the database's size without the WAL or free pages.
    pub used_bytes: u64,
}

/// What [`MetricsStore::compact`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CompactReport {
    /// The start of the first minute recomputed, when any was.
    pub rolled_from_ms: Option<i64>,
    pub minute_rows: u64,
    pub hour_rows: u64,
    pub deleted_raw: u64,
    pub deleted_minute: u64,
    pub deleted_hour: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("cannot open the metrics database {path}: {source}")]
    Open { path: String, source: sqlx::Error },
    #[error("cannot migrate the metrics database: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("metrics database error: {0}")]
    Sql(#[from] sqlx::Error),
    #[error("{field} {problem}")]
    Invalid {
        field: &'static str,
        problem: String,
    },
}

/// Retention's last cutoffs; rows older than a table's horizon may be gone.
#[derive(Debug, Clone, Copy, Default)]
struct Horizons {
    raw: Option<i64>,
    minute: Option<i64>,
}

/// Which table a query reads and how it buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Plan {
    resolution: Resolution,
    /// The first bucket's start.
    from_ms: i64,
    bucket_ms: i64,
    buckets: i64,
}

fn floor_to(t_ms: i64, step_ms: i64) -> i64 {
    t_ms.div_euclid(step_ms) * step_ms
}

/// `a / b` rounded up, for `a >= 0` and `b > 0`.
fn div_ceil(a: i128, b: i128) -> i128 {
    (a + b - 1) / b
}

fn ceil_to(t_ms: i64, step_ms: i64) -> i64 {
    floor_to(t_ms.saturating_add(step_ms - 1), step_ms)
}

/// Picks the table and the bucket width for at most `max_points` buckets over
/// `from_ms..=to_ms`. One host may read raw rows; fleet-wide reads start at minutes.
fn plan(from_ms: i64, to_ms: i64, max_points: u32, fleet_wide: bool, horizons: Horizons) -> Plan {
    let span = i128::from(to_ms) - i128::from(from_ms) + 1;
    let needed = div_ceil(span, i128::from(max_points.max(1)));
    let resolution = if !fleet_wide
        && needed < i128::from(MINUTE_MS)
        && horizons.raw.is_none_or(|horizon| from_ms >= horizon)
    {
        Resolution::Raw
    } else if needed < i128::from(HOUR_MS) && horizons.minute.is_none_or(|h| from_ms >= h) {
        Resolution::Minute
    } else {
        Resolution::Hour
    };
    let step = resolution.step_ms();
    let first = floor_to(from_ms, step);
    let span = i128::from(to_ms) - i128::from(first) + 1;
    let needed = div_ceil(span, i128::from(max_points.max(1)));
    let bucket = (div_ceil(needed, i128::from(step)) * i128::from(step)).min(i128::from(i64::MAX));
    let buckets = div_ceil(span, bucket);
    Plan {
        resolution,
        from_ms: first,
        bucket_ms: bucket as i64,
        buckets: buckets as i64,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Grouping {
    PerGpu,
    PerHost,
}

/// Every statement that reads rows of many hosts says `metric_hosts h CROSS JOIN <table>`:
/// in SQLite that fixes the join order, hosts outside, so each host's rows are one range
/// of the primary key. With a plain JOIN the planner may scan the whole table instead.
///
/// The grouping query: one row per series, `host, gpu_index, packed buckets`.
/// Parameters: ?1 first bucket start, ?2 bucket width, ?3 host or NULL, ?4 to_ms,
/// ?5 GPU index or NULL.
fn bucket_sql(resolution: Resolution, metric: ChartMetric, grouping: Grouping) -> String {
    // min, max, sum and count of the metric's readings in a bucket, and the row filter.
    let (time, [min, max, sum, count], have) = match resolution {
        Resolution::Raw => {
            let value = raw_sql(metric);
            (
                "s.t_ms",
                [
                    format!("min({value})"),
                    format!("max({value})"),
                    format!("sum({value})"),
                    format!("count({value})"),
                ],
                format!("{value} IS NOT NULL"),
            )
        }
        Resolution::Minute | Resolution::Hour => {
            let p = rollup_prefix(metric);
            (
                "s.bucket_ms",
                [
                    format!("min(s.{p}_min)"),
                    format!("max(s.{p}_max)"),
                    format!("sum(s.{p}_sum)"),
                    format!("sum(s.{p}_n)"),
                ],
                format!("s.{p}_n > 0"),
            )
        }
    };
    let table = resolution.table();
    let half_step = resolution.step_ms() / 2;
    let (gpu_col, group) = match grouping {
        Grouping::PerGpu => ("s.gpu_index", "s.host_id, s.gpu_index, bucket"),
        Grouping::PerHost => ("NULL", "s.host_id, bucket"),
    };
    // The buckets of a series come back packed in one text row ("bucket,t,min,mean,max,n;
    // ..."): sqlx hands rows over one by one between threads, which for thousands of small
    // rows costs several times what SQLite spends on the query. Values travel as integer
    // thousandths (SQLite writes a REAL as text several times slower than an INTEGER), and
    // host names join in last so the grouping sorts small records.
    let milli = |value: &str| format!("CAST(round(({value}) * 1000.0) AS INTEGER)");
    let (min, mean, max) = (
        milli(&min),
        milli(&format!("CAST({sum} AS REAL) / {count}")),
        milli(&max),
    );
    format!(
        "SELECT h.name, p.gpu_index, p.packed FROM (\
         SELECT hid, gpu_index, group_concat(printf('%d,%d,%d,%d,%d,%d', \
         bucket, t_ms, lo, mean, hi, readings), ';') AS packed FROM (\
         SELECT s.host_id AS hid, {gpu_col} AS gpu_index, ({time} - ?1) / ?2 AS bucket, \
         CAST(avg({time}) AS INTEGER) + {half_step} AS t_ms, {min} AS lo, {mean} AS mean, \
         {max} AS hi, {count} AS readings \
         FROM metric_hosts h CROSS JOIN {table} s ON s.host_id = h.id \
         WHERE (?3 IS NULL OR h.name = ?3) AND {time} >= ?1 AND {time} <= ?4 \
         AND (?5 IS NULL OR s.gpu_index = ?5) AND {have} \
         GROUP BY {group}) GROUP BY hid, gpu_index) p \
         JOIN metric_hosts h ON h.id = p.hid"
    )
}

/// One series' bucket as SQLite computed it.
#[derive(Debug, Clone)]
struct BucketRow {
    host: String,
    gpu_index: Option<u32>,
    bucket: i64,
    t_ms: i64,
    min: f64,
    mean: f64,
    max: f64,
    count: i64,
}

impl BucketRow {
    /// The buckets of one packed row (see [`bucket_sql`]), in bucket order.
    fn unpack(row: &SqliteRow) -> Result<Vec<Self>, sqlx::Error> {
        let host: String = row.try_get(0)?;
        let gpu_index = row.try_get::<Option<i64>, _>(1)?.map(|index| index as u32);
        let packed: Option<String> = row.try_get(2)?;
        let corrupt = |bucket: &str| sqlx::Error::Decode(format!("bad bucket {bucket:?}").into());
        let mut buckets = Vec::new();
        for bucket in packed.as_deref().unwrap_or_default().split(';') {
            if bucket.is_empty() {
                continue;
            }
            let mut fields = bucket.split(',').map(str::parse::<i64>);
            let mut next = || fields.next().and_then(Result::ok);
            let (Some(index), Some(t_ms), Some(min), Some(mean), Some(max), Some(count)) =
                (next(), next(), next(), next(), next(), next())
            else {
                return Err(corrupt(bucket));
            };
            if count > 0 {
                buckets.push(Self {
                    host: host.clone(),
                    gpu_index,
                    bucket: index,
                    t_ms,
                    min: min as f64 / 1000.0,
                    mean: mean as f64 / 1000.0,
                    max: max as f64 / 1000.0,
                    count,
                });
            }
        }
        buckets.sort_unstable_by_key(|bucket| bucket.bucket);
        Ok(buckets)
    }

    fn point(&self, from_ms: i64, to_ms: i64) -> Point {
        Point {
            t_ms: self.t_ms.clamp(from_ms, to_ms),
            min: self.min as f32,
            avg: self.mean as f32,
            max: self.max as f32,
        }
    }
}

/// The per-table columns every rollup row has, for the rollup statements.
const ROLLUP_COLUMNS: &str = "host_id, bucket_ms, gpu_index, \
     util_min, util_max, util_sum, util_n, mem_min, mem_max, mem_sum, mem_n, \
     mem_pct_min, mem_pct_max, mem_pct_sum, mem_pct_n, temp_min, temp_max, temp_sum, temp_n, power_min, power_max, power_sum, power_n";

/// Recomputes every minute from ?1 on out of the raw rows.
fn roll_minutes_sql() -> String {
    let columns: Vec<String> = [
        ChartMetric::Util,
        ChartMetric::MemoryUsed,
        ChartMetric::MemoryPct,
        ChartMetric::Temperature,
        ChartMetric::Power,
    ]
    .into_iter()
    .map(|metric| {
        let value = raw_sql(metric);
        format!("min({value}), max({value}), sum({value}), count({value})")
    })
    .collect();
    format!(
        "INSERT OR REPLACE INTO rollup_minute ({ROLLUP_COLUMNS}) \
         SELECT s.host_id, (s.t_ms / {MINUTE_MS}) * {MINUTE_MS} AS minute, s.gpu_index, {} \
         FROM metric_hosts h CROSS JOIN samples s ON s.host_id = h.id AND s.t_ms >= ?1 \
         GROUP BY s.host_id, minute, s.gpu_index",
        columns.join(", ")
    )
}

/// Recomputes every hour from ?1 on out of the minute rollups.
fn roll_hours_sql() -> String {
    let metric = |prefix: &str| {
        format!("min(r.{prefix}_min), max(r.{prefix}_max), sum(r.{prefix}_sum), sum(r.{prefix}_n)")
    };
    format!(
        "INSERT OR REPLACE INTO rollup_hour ({ROLLUP_COLUMNS}) \
         SELECT r.host_id, (r.bucket_ms / {HOUR_MS}) * {HOUR_MS} AS hour, r.gpu_index, \
         {}, {}, {}, {}, {} \
         FROM metric_hosts h CROSS JOIN rollup_minute r ON r.host_id = h.id AND r.bucket_ms >= ?1 \
         GROUP BY r.host_id, hour, r.gpu_index",
        metric("util"),
        metric("mem"),
        metric("mem_pct"),
        metric("temp"),
        metric("power"),
    )
}

/// Deletes at most ?2 rows of `table` older than ?1 (by `time`), oldest of each host first.
fn delete_chunk_sql(table: &str, time: &str) -> String {
    format!(
        "DELETE FROM {table} WHERE (host_id, {time}, gpu_index) IN (\
         SELECT s.host_id, s.{time}, s.gpu_index FROM metric_hosts h \
         CROSS JOIN {table} s ON s.host_id = h.id AND s.{time} < ?1 LIMIT ?2)"
    )
}

/// The multi-row INSERT for `rows` rows.
fn insert_sql(rows: usize) -> String {
    let mut sql = String::from(
        "INSERT OR IGNORE INTO samples (host_id, t_ms, gpu_index, util_pct, memory_used_mib, \
         memory_total_mib, temperature_c, power_w) VALUES ",
    );
    for row in 0..rows {
        if row > 0 {
            sql.push(',');
        }
        sql.push_str("(?,?,?,?,?,?,?,?)");
    }
    sql
}

/// The statements built once per store.
#[derive(Debug)]
struct Statements {
    /// Multi-row inserts of MAX_ROWS_PER_INSERT, half that, ... down to 1 row: any batch
    /// is a few of these, so only a handful of statements is ever prepared.
    inserts: Vec<(usize, Arc<str>)>,
    roll_minutes: Arc<str>,
    roll_hours: Arc<str>,
    delete_raw: Arc<str>,
    delete_minutes: Arc<str>,
    delete_hours: Arc<str>,
}

impl Statements {
    fn new() -> Self {
        let mut inserts = Vec::new();
        let mut rows = MAX_ROWS_PER_INSERT;
        while rows > 0 {
            inserts.push((rows, Arc::from(insert_sql(rows))));
            rows /= 2;
        }
        Self {
            inserts,
            roll_minutes: roll_minutes_sql().into(),
            roll_hours: roll_hours_sql().into(),
            delete_raw: delete_chunk_sql("samples", "t_ms").into(),
            delete_minutes: delete_chunk_sql("rollup_minute", "bucket_ms").into(),
            delete_hours: delete_chunk_sql("rollup_hour", "bucket_ms").into(),
        }
    }

    /// The largest prepared insert that fits `remaining` rows.
    fn insert_for(&self, remaining: usize) -> (usize, &Arc<str>) {
        let (rows, sql) = self
            .inserts
            .iter()
            .find(|(rows, _)| *rows <= remaining)
            .expect("the 1-row insert fits any remainder");
        (*rows, sql)
    }
}

/// The page cache of one connection to `metrics.db`, in KiB. A round of inserts touches
/// about one leaf page per host (5 MiB at 1,250 hosts), which this holds; a connection's
/// cache is emptied anyway when another one wrote since its last transaction (WAL).
const CACHE_KIB: u32 = 8 * 1024;

/// Connections to `metrics.db`: the writer and one reader at once (WAL lets them overlap).
const CONNECTIONS: u32 = 2;

/// The metrics database. Cloning shares the pool.
#[derive(Debug, Clone)]
pub struct MetricsStore {
    pool: SqlitePool,
    config: RetentionConfig,
    statements: Arc<Statements>,
    /// Host name → id, filled as hosts are first written or seen.
    host_ids: Arc<Mutex<HashMap<String, i64>>>,
}

impl MetricsStore {
    /// Opens (creating) the store at `path` (a file, normally `<data dir>/metrics.db`).
    pub async fn open(path: &Path, config: RetentionConfig) -> Result<Self, MetricsError> {
        config.validate()?;
        let open_error = |source| MetricsError::Open {
            path: path.display().to_string(),
            source,
        };
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(5))
            .statement_cache_capacity(256)
            // Memory is bounded (ARCHITECTURE.md): each connection caches at most
            // CACHE_KIB of pages, and a sort larger than that (the minute rollup's GROUP
            // BY over every GPU's new readings) spills to a temporary file, not to memory.
            .pragma("cache_size", format!("-{CACHE_KIB}"));
        let pool = SqlitePoolOptions::new()
            .max_connections(CONNECTIONS)
            .connect_with(options)
            .await
            .map_err(open_error)?;
        Self::migrated(pool, config).await
    }

    /// A store that lives as long as the process, with the default retention: for tests.
    pub async fn in_memory() -> Result<Self, MetricsError> {
        Self::in_memory_with(RetentionConfig::default()).await
    }

    /// An in-memory store with `config`.
    pub async fn in_memory_with(config: RetentionConfig) -> Result<Self, MetricsError> {
        config.validate()?;
        // One connection: an in-memory database exists per connection.
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(SqliteConnectOptions::new().in_memory(true))
            .await?;
        Self::migrated(pool, config).await
    }

    async fn migrated(pool: SqlitePool, config: RetentionConfig) -> Result<Self, MetricsError> {
        sqlx::migrate!("./migrations/metrics").run(&pool).await?;
        Ok(Self {
            pool,
            config,
            statements: Arc::new(Statements::new()),
            host_ids: Arc::default(),
        })
    }

    pub fn config(&self) -> RetentionConfig {
        self.config
    }

    /// Closes the pool, checkpointing the WAL into the file.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// Writes one round of samples in one transaction. A row whose host, GPU and time are
    /// already stored is left alone; a row with a negative time is rejected and counted.
    pub async fn insert_batch(&self, rows: &[SampleRow]) -> Result<InsertReport, MetricsError> {
        let valid: Vec<&SampleRow> = rows.iter().filter(|row| row.t_ms >= 0).collect();
        let mut report = InsertReport {
            rejected: (rows.len() - valid.len()) as u64,
            ..InsertReport::default()
        };
        let Some(earliest_ms) = valid.iter().map(|row| row.t_ms).min() else {
            return Ok(report);
        };
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        // Hosts not seen before get their id inside this transaction; the shared map learns
        // them only once it commits.
        let unknown: BTreeSet<&str> = {
            let ids = self.host_ids.lock().expect("host id map");
            valid
                .iter()
                .map(|row| row.host.as_str())
                .filter(|host| !ids.contains_key(*host))
                .collect()
        };
        let mut new_hosts = HashMap::new();
        for host in unknown {
            new_hosts.insert(host.to_string(), host_id(&mut tx, host).await?);
        }
        let row_ids: Vec<i64> = {
            let ids = self.host_ids.lock().expect("host id map");
            let mut last: Option<(&str, i64)> = None;
            valid
                .iter()
                .map(|row| match last {
                    Some((host, id)) if host == row.host => id,
                    _ => {
                        let id = ids
                            .get(&row.host)
                            .or_else(|| new_hosts.get(&row.host))
                            .copied()
                            .expect("every host has an id by now");
                        last = Some((&row.host, id));
                        id
                    }
                })
                .collect()
        };
        let finite = |value: Option<f32>| value.filter(|value| value.is_finite());
        let mut done = 0;
        while done < valid.len() {
            let (count, sql) = self.statements.insert_for(valid.len() - done);
            let mut query = sqlx::query(AssertSqlSafe(Arc::clone(sql)));
            for (row, id) in valid[done..done + count].iter().zip(&row_ids[done..]) {
                query = query
                    .bind(*id)
                    .bind(row.t_ms)
                    .bind(i64::from(row.gpu_index))
                    .bind(finite(row.util_pct))
                    .bind(row.memory_used_mib)
                    .bind(row.memory_total_mib)
                    .bind(finite(row.temperature_c))
                    .bind(finite(row.power_w));
            }
            report.written += query.execute(&mut *tx).await?.rows_affected();
            done += count;
        }
        sqlx::query(
            "UPDATE store_state SET pending_from_ms = min(coalesce(pending_from_ms, ?1), ?1)",
        )
        .bind(earliest_ms)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        report.duplicates = valid.len() as u64 - report.written;
        if !new_hosts.is_empty() {
            self.host_ids.lock().expect("host id map").extend(new_hosts);
        }
        Ok(report)
    }

    /// Brings the rollups up to date with everything written so far (the current minute
    /// and hour included, recomputed again on the next call), then deletes what is older
    /// than each table's window, counted back from `now_ms`. The writer calls it about
    /// once a minute; queries at minute or hour resolution lag by at most that.
    pub async fn compact(&self, now_ms: i64) -> Result<CompactReport, MetricsError> {
        let mut report = CompactReport::default();
        let raw_cut = now_ms.saturating_sub(self.config.raw_keep_ms);
        let minute_cut = now_ms.saturating_sub(self.config.minute_keep_ms);
        let hour_cut = now_ms.saturating_sub(self.config.hour_keep_ms);
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let state = sqlx::query(
            "SELECT pending_from_ms, raw_horizon_ms, minute_horizon_ms FROM store_state",
        )
        .fetch_one(&mut *tx)
        .await?;
        let pending: Option<i64> = state.try_get(0)?;
        let raw_horizon: Option<i64> = state.try_get(1)?;
        let minute_horizon: Option<i64> = state.try_get(2)?;
        if let Some(pending) = pending {
            // A minute (an hour) is recomputed only while all of its rows are still there.
            let minute_from = floor_to(pending, MINUTE_MS)
                .max(raw_horizon.map_or(i64::MIN, |h| ceil_to(h, MINUTE_MS)));
            let hour_from = floor_to(minute_from, HOUR_MS)
                .max(minute_horizon.map_or(i64::MIN, |h| ceil_to(h, HOUR_MS)));
            report.rolled_from_ms = Some(minute_from);
            report.minute_rows =
                sqlx::query(AssertSqlSafe(Arc::clone(&self.statements.roll_minutes)))
                    .bind(minute_from)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
            report.hour_rows = sqlx::query(AssertSqlSafe(Arc::clone(&self.statements.roll_hours)))
                .bind(hour_from)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        }
        // Horizons move before the deletes, so no query reads a range being emptied.
        sqlx::query(
            "UPDATE store_state SET pending_from_ms = NULL, \
             raw_horizon_ms = max(coalesce(raw_horizon_ms, ?1), ?1), \
             minute_horizon_ms = max(coalesce(minute_horizon_ms, ?2), ?2), \
             hour_horizon_ms = max(coalesce(hour_horizon_ms, ?3), ?3)",
        )
        .bind(raw_cut)
        .bind(minute_cut)
        .bind(hour_cut)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        report.deleted_raw = self
            .delete_older(&self.statements.delete_raw, raw_cut)
            .await?;
        report.deleted_minute = self
            .delete_older(&self.statements.delete_minutes, minute_cut)
            .await?;
        report.deleted_hour = self
            .delete_older(&self.statements.delete_hours, hour_cut)
            .await?;
        Ok(report)
    }

    /// Runs a chunked delete until a chunk comes back short; each chunk commits alone.
    async fn delete_older(&self, sql: &Arc<str>, cut_ms: i64) -> Result<u64, MetricsError> {
        let chunk = u64::from(self.config.delete_chunk_rows);
        let mut deleted = 0;
        loop {
            let done = sqlx::query(AssertSqlSafe(Arc::clone(sql)))
                .bind(cut_ms)
                .bind(chunk as i64)
                .execute(&self.pool)
                .await?
                .rows_affected();
            deleted += done;
            if done < chunk {
                return Ok(deleted);
            }
        }
    }

    /// Row counts and size. Counts every row: for diagnostics and tests, not every frame.
    pub async fn stats(&self) -> Result<StoreStats, MetricsError> {
        let row = sqlx::query(
            "SELECT (SELECT count(*) FROM metric_hosts), (SELECT count(*) FROM samples), \
             (SELECT count(*) FROM rollup_minute), (SELECT count(*) FROM rollup_hour), \
             (SELECT (page_count - freelist_count) * page_size \
              FROM pragma_page_count, pragma_freelist_count, pragma_page_size)",
        )
        .fetch_one(&self.pool)
        .await?;
        let count = |index: usize| row.try_get::<i64, _>(index).map(|value| value as u64);
        Ok(StoreStats {
            hosts: count(0)?,
            raw_rows: count(1)?,
            minute_rows: count(2)?,
            hour_rows: count(3)?,
            used_bytes: count(4)?,
        })
    }

    /// Raw rows (one per GPU reading) taken from `from_ms` to `to_ms`, both included.
    pub async fn raw_rows_between(&self, from_ms: u64, to_ms: u64) -> Result<u64, MetricsError> {
        let row = sqlx::query("SELECT count(*) FROM samples WHERE t_ms BETWEEN ?1 AND ?2")
            .bind(i64::try_from(from_ms).unwrap_or(i64::MAX))
            .bind(i64::try_from(to_ms).unwrap_or(i64::MAX))
            .fetch_one(&self.pool)
            .await?;
        Ok(row.try_get::<i64, _>(0)? as u64)
    }

    /// The table a query would read.
    pub async fn resolution_for(&self, q: &SeriesQuery) -> Result<Resolution, MetricsError> {
        q.validate()?;
        let mut conn = self.pool.acquire().await?;
        let horizons = horizons(&mut conn).await?;
        Ok(plan(q.from_ms, q.to_ms, q.max_points, q.host.is_none(), horizons).resolution)
    }

    /// Per-GPU series, by host name then GPU index, each at most `max_points` points.
    pub async fn query(&self, q: &SeriesQuery) -> Result<Vec<GpuSeries>, MetricsError> {
        q.validate()?;
        let (_, rows) = self
            .buckets(
                q.host.as_deref(),
                q.gpu_index,
                q.metric,
                q.from_ms,
                q.to_ms,
                q.max_points,
                Grouping::PerGpu,
            )
            .await?;
        let mut series: Vec<GpuSeries> = Vec::new();
        for row in rows {
            let gpu_index = row.gpu_index.unwrap_or_default();
            let point = row.point(q.from_ms, q.to_ms);
            match series.last_mut() {
                Some(last) if last.host == row.host && last.gpu_index == gpu_index => {
                    last.points.push(point)
                }
                _ => series.push(GpuSeries {
                    host: row.host,
                    gpu_index,
                    points: vec![point],
                }),
            }
        }
        Ok(series)
    }

    /// Per-host aggregates over each host's GPUs (or the one `gpu_index`), by host name.
    pub async fn query_hosts(&self, q: &SeriesQuery) -> Result<Vec<AggregateSeries>, MetricsError> {
        q.validate()?;
        let (_, rows) = self
            .buckets(
                q.host.as_deref(),
                q.gpu_index,
                q.metric,
                q.from_ms,
                q.to_ms,
                q.max_points,
                Grouping::PerHost,
            )
            .await?;
        let mut series: Vec<AggregateSeries> = Vec::new();
        for row in rows {
            let point = row.point(q.from_ms, q.to_ms);
            match series.last_mut() {
                Some(last) if last.name == row.host => last.points.push(point),
                _ => series.push(AggregateSeries {
                    name: row.host,
                    points: vec![point],
                }),
            }
        }
        Ok(series)
    }

    /// Per-region aggregates over every GPU of the region's hosts, by region name.
    /// `region_of` maps host name → region; hosts it does not name are left out.
    pub async fn query_regions(
        &self,
        q: &SeriesQuery,
        region_of: &HashMap<String, String>,
    ) -> Result<Vec<AggregateSeries>, MetricsError> {
        q.validate()?;
        let (_, rows) = self
            .buckets(
                q.host.as_deref(),
                q.gpu_index,
                q.metric,
                q.from_ms,
                q.to_ms,
                q.max_points,
                Grouping::PerHost,
            )
            .await?;
        // (region, bucket) → the merged bucket, with t weighted by readings.
        let mut merged: BTreeMap<(&str, i64), (BucketRow, f64)> = BTreeMap::new();
        for row in &rows {
            let Some(region) = region_of.get(&row.host) else {
                continue;
            };
            let weight = row.count as f64;
            merged
                .entry((region.as_str(), row.bucket))
                .and_modify(|(acc, t_weighted)| {
                    let count = acc.count + row.count;
                    acc.mean = (acc.mean * acc.count as f64 + row.mean * weight) / count as f64;
                    acc.min = acc.min.min(row.min);
                    acc.max = acc.max.max(row.max);
                    acc.count = count;
                    *t_weighted += row.t_ms as f64 * weight;
                })
                .or_insert_with(|| (row.clone(), row.t_ms as f64 * weight));
        }
        let mut series: Vec<AggregateSeries> = Vec::new();
        for ((region, _), (mut acc, t_weighted)) in merged {
            acc.t_ms = (t_weighted / acc.count as f64).round() as i64;
            let point = acc.point(q.from_ms, q.to_ms);
            match series.last_mut() {
                Some(last) if last.name == region => last.points.push(point),
                _ => series.push(AggregateSeries {
                    name: region.to_string(),
                    points: vec![point],
                }),
            }
        }
        Ok(series)
    }

    /// Every GPU of the fleet × `columns` time buckets of mean values, from the rollups
    /// (cells are at least a minute wide).
    pub async fn heatmap(&self, q: &HeatmapQuery) -> Result<Heatmap, MetricsError> {
        validate_range(q.from_ms, q.to_ms)?;
        if !(1..=MAX_POINTS_LIMIT).contains(&q.columns) {
            return Err(MetricsError::Invalid {
                field: "columns",
                problem: format!(
                    "must be between 1 and {MAX_POINTS_LIMIT}, got {}",
                    q.columns
                ),
            });
        }
        let (plan, rows) = self
            .buckets(
                None,
                None,
                q.metric,
                q.from_ms,
                q.to_ms,
                q.columns,
                Grouping::PerGpu,
            )
            .await?;
        let columns = plan.buckets.max(0) as usize;
        let mut heat_rows: Vec<HeatmapRow> = Vec::new();
        for row in rows {
            let gpu_index = row.gpu_index.unwrap_or_default();
            if !heat_rows
                .last()
                .is_some_and(|last| last.host == row.host && last.gpu_index == gpu_index)
            {
                heat_rows.push(HeatmapRow {
                    host: row.host.clone(),
                    gpu_index,
                    cells: vec![None; columns],
                });
            }
            let cells = &mut heat_rows.last_mut().expect("just pushed").cells;
            if let Some(cell) = usize::try_from(row.bucket)
                .ok()
                .and_then(|bucket| cells.get_mut(bucket))
            {
                *cell = Some(row.mean as f32);
            }
        }
        Ok(Heatmap {
            metric: q.metric,
            from_ms: plan.from_ms,
            to_ms: q.to_ms,
            bucket_ms: plan.bucket_ms,
            columns: columns as u32,
            rows: heat_rows,
        })
    }

    #[allow(clippy::too_many_arguments)]
    async fn buckets(
        &self,
        host: Option<&str>,
        gpu_index: Option<u32>,
        metric: ChartMetric,
        from_ms: i64,
        to_ms: i64,
        max_points: u32,
        grouping: Grouping,
    ) -> Result<(Plan, Vec<BucketRow>), MetricsError> {
        let mut conn = self.pool.acquire().await?;
        let horizons = horizons(&mut conn).await?;
        let plan = plan(from_ms, to_ms, max_points, host.is_none(), horizons);
        let sql = bucket_sql(plan.resolution, metric, grouping);
        let rows = sqlx::query(AssertSqlSafe(sql))
            .bind(plan.from_ms)
            .bind(plan.bucket_ms)
            .bind(host)
            .bind(to_ms)
            .bind(gpu_index.map(i64::from))
            .fetch_all(&mut *conn)
            .await?;
        let mut series = rows
            .iter()
            .map(BucketRow::unpack)
            .collect::<Result<Vec<_>, _>>()?;
        series.sort_by(|a, b| series_key(a).cmp(&series_key(b)));
        Ok((plan, series.into_iter().flatten().collect()))
    }
}

/// Host name, then GPU index, of one series' buckets.
fn series_key(buckets: &[BucketRow]) -> Option<(&str, Option<u32>)> {
    buckets
        .first()
        .map(|bucket| (bucket.host.as_str(), bucket.gpu_index))
}

async fn host_id(conn: &mut SqliteConnection, host: &str) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO metric_hosts (name) VALUES (?1) \
         ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id",
    )
    .bind(host)
    .fetch_one(conn)
    .await
}

async fn horizons(conn: &mut SqliteConnection) -> Result<Horizons, sqlx::Error> {
    let row = sqlx::query("SELECT raw_horizon_ms, minute_horizon_ms FROM store_state")
        .fetch_one(conn)
        .await?;
    Ok(Horizons {
        raw: row.try_get(0)?,
        minute: row.try_get(1)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_picks_the_finest_table_that_can_answer() {
        let none = Horizons::default();
        // 5 minutes of one host at 600 points: raw, 500 ms buckets.
        let p = plan(0, 299_999, 600, false, none);
        assert_eq!(
            (p.resolution, p.bucket_ms, p.buckets),
            (Resolution::Raw, 500, 600)
        );
        // The same range fleet-wide reads minutes.
        assert_eq!(
            plan(0, 299_999, 600, true, none).resolution,
            Resolution::Minute
        );
        // 24 hours at 1,000 points: minutes, two-minute buckets.
        let p = plan(0, DAY_MS - 1, 1_000, false, none);
        assert_eq!(
            (p.resolution, p.bucket_ms, p.buckets),
            (Resolution::Minute, 120_000, 720)
        );
        // 30 days at 500 points: hours.
        let p = plan(0, 30 * DAY_MS - 1, 500, false, none);
        assert_eq!((p.resolution, p.bucket_ms), (Resolution::Hour, 2 * HOUR_MS));
        // Raw rows before the range's start are gone: minutes instead.
        let gone = Horizons {
            raw: Some(1_000),
            minute: None,
        };
        assert_eq!(
            plan(0, 299_999, 600, false, gone).resolution,
            Resolution::Minute
        );
    }

    #[test]
    fn plan_never_makes_more_buckets_than_asked() {
        for (from, to, max_points) in [
            (0, 0, 1),
            (17, 1_000_017, 7),
            (59_999, 60_000, 1),
            (1_700_000_000_123, 1_700_086_400_000, 1_440),
            (1_700_000_000_123, 1_700_000_000_123 + 7 * DAY_MS, 333),
            (5, i64::MAX, 3),
        ] {
            for fleet_wide in [false, true] {
                let p = plan(from, to, max_points, fleet_wide, Horizons::default());
                assert!(
                    p.buckets <= i64::from(max_points),
                    "{from} {to} {max_points}: {p:?}"
                );
                assert!(p.from_ms <= from);
                assert_eq!(p.bucket_ms % p.resolution.step_ms(), 0);
                // The last bucket reaches to_ms.
                assert!(
                    i128::from(p.from_ms) + i128::from(p.bucket_ms) * i128::from(p.buckets)
                        > i128::from(to)
                );
            }
        }
    }

    #[test]
    fn retention_config_is_validated_naming_the_field() {
        assert!(RetentionConfig::default().validate().is_ok());
        let bad = RetentionConfig {
            minute_keep_ms: 1,
            ..RetentionConfig::default()
        };
        let error = bad.validate().unwrap_err().to_string();
        assert!(error.starts_with("minute_keep_ms "), "{error}");
        let bad = RetentionConfig {
            delete_chunk_rows: 0,
            ..RetentionConfig::default()
        };
        assert!(
            bad.validate()
                .unwrap_err()
                .to_string()
                .contains("delete_chunk_rows")
        );
    }
}
