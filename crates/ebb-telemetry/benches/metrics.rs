//! The metrics store and charts, measured: ingest, a day's query, a day's chart.
//!
//! - Ingest: rounds of 1,250 hosts × 8 GPUs (10,000 samples, what the collector hands over
//!   each second at fleet scale) with `insert_batch`, against one INSERT statement per
//!   sample (each its own transaction), on a file database in a temp dir.
//!   Goals: ≥ 100,000 samples/s, ≥ 6× the one-by-one way.
//! - Query: 24 h × 8 GPUs of one host for one 800-pixel chart, after a day at 1 Hz was
//!   written and compacted with the default retention. Goal: ≤ 20 ms.
//! - Chart: 24 h × 1 Hz × 8 GPUs = 691,200 points, downsampled (M4) and drawn to SVG.
//!   Goal: ≤ 16 ms.
//!
//! `cargo bench -p ebb-telemetry --bench metrics`

use ebb_charts::chart::{RangeChartSpec, gpu_lines_svg};
use ebb_charts::downsample::{Point, m4};
use ebb_charts::history::GpuSeries;
use ebb_charts::raster::{Rasterizer, fontdb};
use ebb_telemetry::metrics_store::{MetricsStore, RetentionConfig, SampleRow, SeriesQuery};
use ebb_wire::ipc::ChartMetric;
use ebb_wire::ipc::ChartTheme;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
use sqlx::{Connection, SqliteConnection};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const T0: i64 = 1_700_000_000_000;
const HOSTS: u32 = 1_250;
const GPUS: u32 = 8;
const ROUNDS: i64 = 30;
const ONE_BY_ONE_SAMPLES: usize = 20_000;
const DAY_S: i64 = 86_400;
const CHART_WIDTH_PX: u32 = 800;

fn reading(host: u32, gpu: u32, second: i64) -> SampleRow {
    let wave = ((second + i64::from(host * 7 + gpu * 13)) % 100) as f32;
    SampleRow {
        host: format!("gpu-host-{host:04}"),
        gpu_index: gpu,
        t_ms: T0 + second * 1000,
        util_pct: Some(wave),
        memory_used_mib: Some(40_000 + (wave as u32) * 100),
        memory_total_mib: Some(81_920),
        temperature_c: Some(50.0 + wave / 4.0),
        power_w: Some(300.0 + wave * 3.0),
    }
}

fn round(second: i64) -> Vec<SampleRow> {
    (0..HOSTS)
        .flat_map(|host| (0..GPUS).map(move |gpu| reading(host, gpu, second)))
        .collect()
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ebb-bench-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn subdir(dir: &Path, name: &str) -> PathBuf {
    let sub = dir.join(name);
    std::fs::create_dir_all(&sub).unwrap();
    sub
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort_unstable();
    runs[runs.len() / 2]
}

/// This process's CPU time so far (user + system, all threads), where Linux tells it.
/// Next to the wall time it shows what a measurement costs when other work shares the
/// cores. USER_HZ is 100 on every Linux this runs on.
fn process_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Median wall time of `runs` calls and, where known, the mean CPU time of one.
struct Timing {
    median: Duration,
    cpu: Option<Duration>,
}

impl std::fmt::Display for Timing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "median {:.2} ms", ms(self.median))?;
        if let Some(cpu) = self.cpu {
            write!(f, ", {:.2} ms CPU a run", ms(cpu))?;
        }
        Ok(())
    }
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

async fn ingest_batched(dir: &Path) -> f64 {
    let store = MetricsStore::open(&dir.join("metrics.db"), RetentionConfig::default())
        .await
        .unwrap();
    // One warm-up round registers the hosts.
    store.insert_batch(&round(0)).await.unwrap();
    let rounds: Vec<Vec<SampleRow>> = (1..=ROUNDS).map(round).collect();
    let started = Instant::now();
    for rows in &rounds {
        let report = store.insert_batch(rows).await.unwrap();
        assert_eq!(report.written, rows.len() as u64);
    }
    let elapsed = started.elapsed();
    store.close().await;
    (ROUNDS as f64 * f64::from(HOSTS * GPUS)) / elapsed.as_secs_f64()
}

/// One INSERT per sample, each its own transaction, on the store's own schema and pragmas.
async fn ingest_one_by_one(dir: &Path) -> f64 {
    let path = dir.join("metrics.db");
    MetricsStore::open(&path, RetentionConfig::default())
        .await
        .unwrap()
        .close()
        .await;
    let options = SqliteConnectOptions::new()
        .filename(&path)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal);
    let mut conn = SqliteConnection::connect_with(&options).await.unwrap();
    for host in 0..HOSTS {
        sqlx::query("INSERT INTO metric_hosts (id, name) VALUES (?, ?)")
            .bind(i64::from(host))
            .bind(format!("gpu-host-{host:04}"))
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let rows: Vec<(u32, SampleRow)> = (1..)
        .flat_map(|second| {
            (0..HOSTS)
                .flat_map(move |host| (0..GPUS).map(move |gpu| (host, reading(host, gpu, second))))
        })
        .take(ONE_BY_ONE_SAMPLES)
        .collect();
    let started = Instant::now();
    for (host, row) in &rows {
        sqlx::query(
            "INSERT OR IGNORE INTO samples (host_id, t_ms, gpu_index, util_pct, \
             memory_used_mib, memory_total_mib, temperature_c, power_w) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(i64::from(*host))
        .bind(row.t_ms)
        .bind(i64::from(row.gpu_index))
        .bind(row.util_pct)
        .bind(row.memory_used_mib)
        .bind(row.memory_total_mib)
        .bind(row.temperature_c)
        .bind(row.power_w)
        .execute(&mut conn)
        .await
        .unwrap();
    }
    let elapsed = started.elapsed();
    conn.close().await.unwrap();
    rows.len() as f64 / elapsed.as_secs_f64()
}

/// A day of one 8-GPU host at 1 Hz, written a round a second and compacted as the
/// collector would (here once at the end), then the 24-hour chart query.
async fn query_a_day(dir: &Path) -> (Timing, usize, Duration) {
    let store = MetricsStore::open(&dir.join("metrics.db"), RetentionConfig::default())
        .await
        .unwrap();
    let mut batch = Vec::with_capacity(8 * 600);
    for second in 0..DAY_S {
        batch.extend((0..GPUS).map(|gpu| SampleRow {
            host: "gpu-host-0000".into(),
            ..reading(0, gpu, second)
        }));
        if batch.len() == batch.capacity() {
            store.insert_batch(&batch).await.unwrap();
            batch.clear();
        }
    }
    store.insert_batch(&batch).await.unwrap();
    let compact_started = Instant::now();
    store.compact(T0 + DAY_S * 1000).await.unwrap();
    let compact = compact_started.elapsed();
    let q = SeriesQuery {
        host: Some("gpu-host-0000".into()),
        gpu_index: None,
        metric: ChartMetric::Util,
        from_ms: T0,
        to_ms: T0 + DAY_S * 1000 - 1,
        max_points: CHART_WIDTH_PX,
    };
    for _ in 0..5 {
        std::hint::black_box(store.query(&q).await.unwrap());
    }
    const RUNS: u32 = 100;
    let mut runs = Vec::new();
    let mut points = 0;
    let cpu_before = process_cpu();
    for _ in 0..RUNS {
        let started = Instant::now();
        let series = store.query(&q).await.unwrap();
        runs.push(started.elapsed());
        points = series.iter().map(|gpu| gpu.points.len()).sum();
        assert_eq!(series.len(), GPUS as usize);
    }
    let cpu = process_cpu()
        .zip(cpu_before)
        .map(|(after, before)| (after - before) / RUNS);
    store.close().await;
    let timing = Timing {
        median: median(runs),
        cpu,
    };
    (timing, points, compact)
}

fn chart_a_day() -> (Timing, Duration, Duration, usize) {
    let series: Vec<GpuSeries> = (0..GPUS)
        .map(|gpu| GpuSeries {
            host: "gpu-host-0000".into(),
            gpu_index: gpu,
            points: (0..DAY_S)
                .map(|second| {
                    let row = reading(0, gpu, second);
                    Point::single(row.t_ms, row.util_pct.unwrap())
                })
                .collect(),
        })
        .collect();
    let spec = RangeChartSpec {
        title: "gpu-host-0000",
        theme: ChartTheme::Dark,
        width_px: CHART_WIDTH_PX,
        height_px: 300,
        from_ms: T0,
        to_ms: T0 + DAY_S * 1000 - 1,
        utc_offset_minutes: 0,
    };
    let draw = || gpu_lines_svg(&spec, ChartMetric::Util, &series).unwrap();
    for _ in 0..3 {
        std::hint::black_box(draw());
    }
    const RUNS: u32 = 100;
    let mut runs = Vec::new();
    let mut svg = String::new();
    let cpu_before = process_cpu();
    for _ in 0..RUNS {
        let started = Instant::now();
        svg = draw();
        runs.push(started.elapsed());
    }
    let cpu = process_cpu()
        .zip(cpu_before)
        .map(|(after, before)| (after - before) / RUNS);
    let mut downsample_runs = Vec::new();
    for _ in 0..30 {
        let started = Instant::now();
        for gpu in &series {
            std::hint::black_box(m4(&gpu.points, spec.from_ms, spec.to_ms, CHART_WIDTH_PX));
        }
        downsample_runs.push(started.elapsed());
    }
    let rasterizer = Rasterizer::with_installed_fonts(system_fonts());
    let started = Instant::now();
    let png = rasterizer.png(&svg, 1.0).unwrap();
    let png_time = started.elapsed();
    assert!(png.len() > 1_000);
    let timing = Timing {
        median: median(runs),
        cpu,
    };
    (timing, median(downsample_runs), png_time, svg.len())
}

/// This machine's fonts, as the shells hand them to the rasterizer.
fn system_fonts() -> fontdb::Database {
    let mut fonts = fontdb::Database::new();
    fonts.load_system_fonts();
    fonts
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = temp_dir("metrics");

    let batched = runtime.block_on(ingest_batched(&subdir(&dir, "batched")));
    let one_by_one = runtime.block_on(ingest_one_by_one(&subdir(&dir, "one")));
    println!(
        "ingest: {batched:.0} samples/s batched ({ROUNDS} rounds of {} in one transaction \
         each) vs {one_by_one:.0} samples/s one INSERT per sample: {:.1}×",
        HOSTS * GPUS,
        batched / one_by_one
    );

    let (query, points, compact) = runtime.block_on(query_a_day(&subdir(&dir, "day")));
    println!(
        "query: 24 h × {GPUS} GPUs for a {CHART_WIDTH_PX}-pixel chart: {query} \
         ({points} points; the day's compact took {:.0} ms)",
        ms(compact)
    );

    let (chart, downsample, png, svg_bytes) = chart_a_day();
    println!(
        "chart: 24 h × 1 Hz × {GPUS} GPUs = {} points to SVG: {chart} \
         (M4 alone {:.2} ms; {svg_bytes} bytes of SVG; PNG export {:.0} ms)",
        DAY_S * i64::from(GPUS),
        ms(downsample),
        ms(png)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
