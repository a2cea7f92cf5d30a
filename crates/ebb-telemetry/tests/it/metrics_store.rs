//! The metrics store on real SQLite: rollups, retention, bounded queries, aggregates.

use ebb_charts::downsample::Point;
use ebb_telemetry::metrics_store::{
    HeatmapQuery, MetricsError, MetricsStore, Resolution, RetentionConfig, SampleRow, SeriesQuery,
};
use ebb_wire::ipc::ChartMetric;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::collections::HashMap;

/// An hour boundary: 2023-11-14 22:00:00 UTC.
const T0: i64 = 1_699_999_200_000;
const MINUTE: i64 = 60_000;
const HOUR: i64 = 3_600_000;

fn sample(host: &str, gpu_index: u32, t_ms: i64, util_pct: Option<f32>) -> SampleRow {
    SampleRow {
        host: host.into(),
        gpu_index,
        t_ms,
        util_pct,
        memory_used_mib: None,
        memory_total_mib: Some(81_920),
        temperature_c: None,
        power_w: None,
    }
}

fn query(metric: ChartMetric, from_ms: i64, to_ms: i64, max_points: u32) -> SeriesQuery {
    SeriesQuery {
        host: Some("h".into()),
        gpu_index: None,
        metric,
        from_ms,
        to_ms,
        max_points,
    }
}

/// (min, avg, max) of each point.
fn triples(points: &[Point]) -> Vec<(f32, f32, f32)> {
    points
        .iter()
        .map(|point| (point.min, point.avg, point.max))
        .collect()
}

fn close(actual: &[(f32, f32, f32)], expected: &[(f32, f32, f32)]) {
    assert_eq!(actual.len(), expected.len(), "{actual:?} vs {expected:?}");
    for (a, e) in actual.iter().zip(expected) {
        for (x, y) in [(a.0, e.0), (a.1, e.1), (a.2, e.2)] {
            assert!((x - y).abs() < 1e-3, "{actual:?} vs {expected:?}");
        }
    }
}

/// GPU 0 of host "h": two minutes with gaps and NULLs; GPU 1 never reports utilization.
async fn known_store() -> MetricsStore {
    let store = MetricsStore::in_memory().await.unwrap();
    let mut rows = Vec::new();
    let minute0 = [
        (0, Some(10.0), Some(1_000), Some(60.0)),
        (15, None, Some(2_000), Some(61.0)),
        (30, Some(30.0), Some(3_000), None),
        (45, Some(50.0), None, Some(63.0)),
    ];
    for (second, util, memory, temperature) in minute0 {
        rows.push(SampleRow {
            memory_used_mib: memory,
            memory_total_mib: Some(4_000),
            temperature_c: temperature,
            ..sample("h", 0, T0 + second * 1000, util)
        });
    }
    rows.push(sample("h", 0, T0 + 60_000, Some(90.0)));
    rows.push(sample("h", 0, T0 + 75_000, Some(70.0)));
    rows.push(sample("h", 1, T0, None));
    rows.push(sample("h", 1, T0 + 60_000, None));
    let report = store.insert_batch(&rows).await.unwrap();
    assert_eq!(report.written, rows.len() as u64);
    store.compact(T0 + 2 * MINUTE).await.unwrap();
    store
}

#[tokio::test]
async fn a_memory_share_needs_the_cards_total() {
    // GPU 0's total was read, GPU 1's was not: its memory in MiB is kept, its share is not
    // made up against a total of 0.
    let store = MetricsStore::in_memory().await.unwrap();
    let rows = [
        SampleRow {
            memory_used_mib: Some(2_000),
            memory_total_mib: Some(4_000),
            ..sample("h", 0, T0, Some(10.0))
        },
        SampleRow {
            memory_used_mib: Some(2_000),
            memory_total_mib: None,
            ..sample("h", 1, T0, Some(10.0))
        },
    ];
    store.insert_batch(&rows).await.unwrap();
    let raw = |metric| query(metric, T0, T0 + MINUTE, 60);
    let share = store.query(&raw(ChartMetric::MemoryPct)).await.unwrap();
    assert_eq!(share.len(), 1, "{share:?}");
    assert_eq!(share[0].gpu_index, 0);
    close(&triples(&share[0].points), &[(50.0, 50.0, 50.0)]);
    let used = store.query(&raw(ChartMetric::MemoryUsed)).await.unwrap();
    assert_eq!(used.len(), 2, "{used:?}");
}

#[tokio::test]
async fn a_store_from_before_the_total_was_optional_reads_its_zeros_as_unknown() {
    use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};
    // A metrics.db an older console wrote: the first migration alone, a 0 for a total the
    // card did not give.
    let dir = ebb_testkit::TempDir::new("core-metrics-0001");
    let first = dir.join("migrations");
    std::fs::create_dir_all(&first).unwrap();
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/metrics/0001_metrics.sql"
        ),
        first.join("0001_metrics.sql"),
    )
    .unwrap();
    let path = dir.join("metrics.db");
    let connect = || {
        SqlitePool::connect_with(
            SqliteConnectOptions::new()
                .filename(&path)
                .create_if_missing(true),
        )
    };
    let older = connect().await.unwrap();
    sqlx::migrate::Migrator::new(first.as_path())
        .await
        .unwrap()
        .run(&older)
        .await
        .unwrap();
    sqlx::query("INSERT INTO metric_hosts (id, name) VALUES (1, 'h')")
        .execute(&older)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO samples (host_id, t_ms, gpu_index, util_pct, memory_used_mib, memory_total_mib) \
         VALUES (1, $1, 0, 10, 2000, 4000), (1, $1, 1, 10, 2000, 0)",
    )
    .bind(T0)
    .execute(&older)
    .await
    .unwrap();
    older.close().await;

    let store = MetricsStore::open(&path, RetentionConfig::default())
        .await
        .unwrap();
    let totals: Vec<(i64, Option<i64>)> =
        sqlx::query_as("SELECT gpu_index, memory_total_mib FROM samples ORDER BY gpu_index")
            .fetch_all(&connect().await.unwrap())
            .await
            .unwrap();
    assert_eq!(totals, [(0, Some(4_000)), (1, None)]);
    let share = store
        .query(&query(ChartMetric::MemoryPct, T0, T0 + MINUTE, 60))
        .await
        .unwrap();
    assert_eq!(share.len(), 1, "{share:?}");
    close(&triples(&share[0].points), &[(50.0, 50.0, 50.0)]);
    // And a total not read is written as it now is.
    store
        .insert_batch(&[SampleRow {
            memory_total_mib: None,
            ..sample("h", 1, T0 + 1_000, Some(20.0))
        }])
        .await
        .unwrap();
}

#[tokio::test]
async fn minute_rollups_equal_hand_computed_values_ignoring_nulls() {
    let store = known_store().await;
    // Two hours at 120 points: one-minute buckets, from the minute rollups.
    let q = query(ChartMetric::Util, T0, T0 + 2 * HOUR - 1, 120);
    assert_eq!(store.resolution_for(&q).await.unwrap(), Resolution::Minute);
    let series = store.query(&q).await.unwrap();
    assert_eq!(
        series.len(),
        1,
        "GPU 1 gave no utilization: no series, not zeros"
    );
    assert_eq!(series[0].gpu_index, 0);
    close(
        &triples(&series[0].points),
        &[(10.0, 30.0, 50.0), (70.0, 80.0, 90.0)],
    );
    // Points sit mid-minute.
    assert_eq!(series[0].points[0].t_ms, T0 + 30_000);

    let temperature = store
        .query(&query(ChartMetric::Temperature, T0, T0 + 2 * HOUR - 1, 120))
        .await
        .unwrap();
    close(
        &triples(&temperature[0].points),
        &[(60.0, 184.0 / 3.0, 63.0)],
    );
    let memory = store
        .query(&query(ChartMetric::MemoryUsed, T0, T0 + 2 * HOUR - 1, 120))
        .await
        .unwrap();
    close(&triples(&memory[0].points), &[(1_000.0, 2_000.0, 3_000.0)]);
    let memory_pct = store
        .query(&query(ChartMetric::MemoryPct, T0, T0 + 2 * HOUR - 1, 120))
        .await
        .unwrap();
    close(&triples(&memory_pct[0].points), &[(25.0, 50.0, 75.0)]);
    let power = store
        .query(&query(ChartMetric::Power, T0, T0 + 2 * HOUR - 1, 120))
        .await
        .unwrap();
    assert!(power.is_empty(), "no power readings: {power:?}");
}

#[tokio::test]
async fn hour_rollups_average_readings_not_minutes() {
    let store = known_store().await;
    let q = query(ChartMetric::Util, T0, T0 + 48 * HOUR - 1, 48);
    assert_eq!(store.resolution_for(&q).await.unwrap(), Resolution::Hour);
    let series = store.query(&q).await.unwrap();
    // Readings 10, 30, 50, 90, 70: mean 50 (the mean of the minute means would be 55).
    close(&triples(&series[0].points), &[(10.0, 50.0, 90.0)]);
    let memory_pct = store
        .query(&query(ChartMetric::MemoryPct, T0, T0 + 48 * HOUR - 1, 48))
        .await
        .unwrap();
    close(&triples(&memory_pct[0].points), &[(25.0, 50.0, 75.0)]);
}

#[tokio::test]
async fn raw_queries_return_the_readings_themselves() {
    let store = known_store().await;
    let q = query(ChartMetric::Util, T0, T0 + 2 * MINUTE - 1, 1_000);
    assert_eq!(store.resolution_for(&q).await.unwrap(), Resolution::Raw);
    let series = store.query(&q).await.unwrap();
    let points: Vec<(i64, f32)> = series[0]
        .points
        .iter()
        .map(|point| (point.t_ms - T0, point.avg))
        .collect();
    assert_eq!(
        points,
        vec![
            (0, 10.0),
            (30_000, 30.0),
            (45_000, 50.0),
            (60_000, 90.0),
            (75_000, 70.0)
        ],
        "the NULL at 15 s is a gap, not a zero"
    );
    assert!(series[0].points.iter().all(|p| p.min == p.max));
}

#[tokio::test]
async fn late_samples_are_folded_into_their_minute_and_hour() {
    let store = known_store().await;
    store
        .insert_batch(&[sample("h", 0, T0 + 50_000, Some(100.0))])
        .await
        .unwrap();
    let report = store.compact(T0 + 3 * MINUTE).await.unwrap();
    assert_eq!(report.rolled_from_ms, Some(T0));
    let minutes = store
        .query(&query(ChartMetric::Util, T0, T0 + 2 * HOUR - 1, 120))
        .await
        .unwrap();
    close(
        &triples(&minutes[0].points),
        &[(10.0, 47.5, 100.0), (70.0, 80.0, 90.0)],
    );
    let hours = store
        .query(&query(ChartMetric::Util, T0, T0 + 48 * HOUR - 1, 48))
        .await
        .unwrap();
    close(&triples(&hours[0].points), &[(10.0, 350.0 / 6.0, 100.0)]);
    // Nothing new: nothing recomputed.
    let report = store.compact(T0 + 4 * MINUTE).await.unwrap();
    assert_eq!(report.rolled_from_ms, None);
}

#[tokio::test]
async fn insert_reports_duplicates_and_rejects_negative_times() {
    let store = MetricsStore::in_memory().await.unwrap();
    let rows = [
        sample("h", 0, T0, Some(1.0)),
        sample("h", 0, T0, Some(2.0)),
        sample("h", 0, -5, Some(3.0)),
        sample("h", 1, T0, Some(f32::NAN)),
    ];
    let report = store.insert_batch(&rows).await.unwrap();
    assert_eq!(
        (report.written, report.duplicates, report.rejected),
        (2, 1, 1)
    );
    let series = store
        .query(&query(ChartMetric::Util, T0, T0 + 1_000, 100))
        .await
        .unwrap();
    assert_eq!(series.len(), 1, "a NaN reading is stored as missing");
    assert_eq!(series[0].points[0].avg, 1.0, "the first write wins");
    assert_eq!(store.insert_batch(&[]).await.unwrap().written, 0);
}

#[tokio::test]
async fn bad_queries_name_the_field() {
    let store = MetricsStore::in_memory().await.unwrap();
    for (q, field) in [
        (query(ChartMetric::Util, T0, T0 - 1, 10), "to_ms"),
        (query(ChartMetric::Util, -1, T0, 10), "from_ms"),
        (query(ChartMetric::Util, T0, T0 + 1, 0), "max_points"),
    ] {
        match store.query(&q).await {
            Err(MetricsError::Invalid { field: named, .. }) => assert_eq!(named, field),
            other => panic!("{field}: {other:?}"),
        }
    }
    let error = store
        .heatmap(&HeatmapQuery {
            metric: ChartMetric::Util,
            from_ms: T0,
            to_ms: T0 + HOUR,
            columns: 0,
        })
        .await
        .unwrap_err();
    assert!(error.to_string().starts_with("columns "), "{error}");
}

/// Three hosts × two GPUs, one sample every 10 s for `minutes` minutes from T0.
fn fleet_rows(minutes: i64) -> Vec<SampleRow> {
    let mut rows = Vec::new();
    for step in 0..minutes * 6 {
        for host in ["a", "b", "c"] {
            for gpu in 0..2 {
                rows.push(sample(host, gpu, T0 + step * 10_000, Some(50.0)));
            }
        }
    }
    rows
}

#[tokio::test]
async fn retention_deletes_what_is_older_than_each_window_and_nothing_else() {
    let config = RetentionConfig {
        raw_keep_ms: 10 * MINUTE,
        minute_keep_ms: HOUR,
        hour_keep_ms: 3 * HOUR,
        // Small chunks, so the chunk loop runs many times.
        delete_chunk_rows: 7,
    };
    let store = MetricsStore::in_memory_with(config).await.unwrap();
    store.insert_batch(&fleet_rows(30)).await.unwrap();
    let before = store.stats().await.unwrap();
    assert_eq!(before.raw_rows, 30 * 6 * 6);

    // At T0 + 30 min: raw older than T0 + 20 min goes (20 minutes × 6 rows × 6 GPUs).
    let report = store.compact(T0 + 30 * MINUTE).await.unwrap();
    assert_eq!(report.deleted_raw, 20 * 6 * 6);
    assert_eq!((report.deleted_minute, report.deleted_hour), (0, 0));
    let stats = store.stats().await.unwrap();
    assert_eq!(stats.raw_rows, 10 * 6 * 6);
    assert_eq!(
        stats.minute_rows,
        30 * 6,
        "rolled up before the raw rows went"
    );
    assert_eq!(stats.hour_rows, 6);
    // Exactly the rows from the cutoff on are left: the first one is at the cutoff.
    let host_a = |from_ms, to_ms| SeriesQuery {
        host: Some("a".into()),
        ..query(ChartMetric::Util, from_ms, to_ms, 10_000)
    };
    let raw = store
        .query(&host_a(T0 + 20 * MINUTE, T0 + 30 * MINUTE))
        .await
        .unwrap();
    assert_eq!(raw.len(), 2);
    assert_eq!(raw[0].points.len(), 60);
    assert_eq!(raw[0].points[0].t_ms, T0 + 20 * MINUTE);
    // A range reaching before the raw cutoff is answered from the minutes.
    let q = host_a(T0, T0 + 30 * MINUTE - 1);
    assert_eq!(store.resolution_for(&q).await.unwrap(), Resolution::Minute);
    assert_eq!(store.query(&q).await.unwrap()[0].points.len(), 30);

    // At T0 + 1 h 20 min: minutes older than T0 + 20 min go; the hour stays.
    let report = store.compact(T0 + 80 * MINUTE).await.unwrap();
    assert_eq!(report.deleted_raw, 10 * 6 * 6);
    assert_eq!(report.deleted_minute, 20 * 6);
    assert_eq!(report.deleted_hour, 0);
    let stats = store.stats().await.unwrap();
    assert_eq!(
        (stats.raw_rows, stats.minute_rows, stats.hour_rows),
        (0, 10 * 6, 6)
    );

    // At T0 + 3 h 1 min: the hour starting at T0 is past the 3-hour window.
    let report = store.compact(T0 + 181 * MINUTE).await.unwrap();
    assert_eq!((report.deleted_minute, report.deleted_hour), (10 * 6, 6));
    let stats = store.stats().await.unwrap();
    assert_eq!((stats.minute_rows, stats.hour_rows), (0, 0));
}

#[tokio::test]
async fn the_file_stops_growing_once_the_windows_are_full() {
    let dir = ebb_testkit::TempDir::new("core-metrics-size");
    let path = dir.join("metrics.db");
    let config = RetentionConfig {
        raw_keep_ms: 10 * MINUTE,
        minute_keep_ms: HOUR,
        hour_keep_ms: HOUR,
        delete_chunk_rows: 1_000,
    };
    let store = MetricsStore::open(&path, config).await.unwrap();
    let mut sizes = Vec::new();
    // Four simulated hours of 8 GPUs at 1 Hz, compacted every minute.
    for minute in 0..4 * 60 {
        let rows: Vec<SampleRow> = (0..60)
            .flat_map(|second| {
                (0..8).map(move |gpu| {
                    sample(
                        "h",
                        gpu,
                        T0 + minute * MINUTE + second * 1000,
                        Some(((minute + second) % 100) as f32),
                    )
                })
            })
            .collect();
        store.insert_batch(&rows).await.unwrap();
        store.compact(T0 + (minute + 1) * MINUTE).await.unwrap();
        if minute % 60 == 59 {
            sizes.push(std::fs::metadata(&path).unwrap().len());
        }
    }
    let stats = store.stats().await.unwrap();
    assert_eq!(stats.raw_rows, 10 * 60 * 8);
    assert!(stats.minute_rows <= 61 * 8, "{stats:?}");
    // After the first hour every window is full: the file holds its size (freed pages are
    // reused), give or take a little.
    let (first, last) = (sizes[1], sizes[3]);
    assert!(last <= first + first / 10, "{sizes:?}");
    store.close().await;
    // Reopening keeps the data and the rollup state.
    let store = MetricsStore::open(&path, config).await.unwrap();
    assert_eq!(store.stats().await.unwrap().raw_rows, 10 * 60 * 8);
    assert_eq!(
        store
            .compact(T0 + 241 * MINUTE)
            .await
            .unwrap()
            .rolled_from_ms,
        None
    );
    store.close().await;
}

#[tokio::test]
async fn host_and_region_aggregates_average_their_gpus() {
    let store = MetricsStore::in_memory().await.unwrap();
    let rows = vec![
        sample("a", 0, T0, Some(10.0)),
        sample("a", 1, T0, Some(30.0)),
        sample("b", 0, T0, Some(90.0)),
        sample("c", 0, T0, Some(0.0)),
        sample("c", 1, T0, None),
        sample("a", 0, T0 + 1_000, Some(20.0)),
        sample("a", 1, T0 + 1_000, Some(40.0)),
    ];
    store.insert_batch(&rows).await.unwrap();
    store.compact(T0 + MINUTE).await.unwrap();
    let one_host = SeriesQuery {
        host: Some("a".into()),
        ..query(ChartMetric::Util, T0, T0 + 1_999, 2)
    };
    let hosts = store.query_hosts(&one_host).await.unwrap();
    assert_eq!(hosts.len(), 1);
    assert_eq!(hosts[0].name, "a");
    close(
        &triples(&hosts[0].points),
        &[(10.0, 20.0, 30.0), (20.0, 30.0, 40.0)],
    );

    // Fleet-wide aggregates read the minute rollups.
    let fleet = SeriesQuery {
        host: None,
        ..query(ChartMetric::Util, T0, T0 + MINUTE - 1, 10)
    };
    let hosts = store.query_hosts(&fleet).await.unwrap();
    let names: Vec<&str> = hosts.iter().map(|host| host.name.as_str()).collect();
    assert_eq!(names, vec!["a", "b", "c"]);
    close(&triples(&hosts[0].points), &[(10.0, 25.0, 40.0)]);
    close(&triples(&hosts[2].points), &[(0.0, 0.0, 0.0)]);

    let region_of: HashMap<String, String> = [("a", "east"), ("b", "east"), ("c", "west")]
        .into_iter()
        .map(|(host, region)| (host.to_string(), region.to_string()))
        .collect();
    let regions = store.query_regions(&fleet, &region_of).await.unwrap();
    let names: Vec<&str> = regions.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, vec!["east", "west"]);
    // east: readings 10, 30, 20, 40 (a) and 90 (b): mean 38.
    close(&triples(&regions[0].points), &[(10.0, 38.0, 90.0)]);
    close(&triples(&regions[1].points), &[(0.0, 0.0, 0.0)]);
    // A host the map does not name is left out.
    let only_a: HashMap<String, String> = [("a".to_string(), "east".to_string())].into();
    let regions = store.query_regions(&fleet, &only_a).await.unwrap();
    close(&triples(&regions[0].points), &[(10.0, 25.0, 40.0)]);
}

#[tokio::test]
async fn heatmap_has_a_row_per_gpu_and_gaps_for_missing_readings() {
    let store = MetricsStore::in_memory().await.unwrap();
    let mut rows = Vec::new();
    for minute in 0..4 {
        rows.push(sample(
            "a",
            0,
            T0 + minute * MINUTE,
            Some(10.0 * minute as f32),
        ));
        if minute != 2 {
            rows.push(sample("a", 1, T0 + minute * MINUTE, Some(100.0)));
        }
    }
    rows.push(sample("b", 3, T0 + 3 * MINUTE + 5_000, Some(50.0)));
    rows.push(sample("b", 3, T0 + 3 * MINUTE + 6_000, Some(70.0)));
    store.insert_batch(&rows).await.unwrap();
    store.compact(T0 + 4 * MINUTE).await.unwrap();
    let heatmap = store
        .heatmap(&HeatmapQuery {
            metric: ChartMetric::Util,
            from_ms: T0,
            to_ms: T0 + 4 * MINUTE - 1,
            columns: 100,
        })
        .await
        .unwrap();
    assert_eq!(heatmap.bucket_ms, MINUTE, "cells are at least a minute");
    assert_eq!(heatmap.columns, 4);
    let rows: Vec<(&str, u32, Vec<Option<f32>>)> = heatmap
        .rows
        .iter()
        .map(|row| (row.host.as_str(), row.gpu_index, row.cells.clone()))
        .collect();
    assert_eq!(
        rows,
        vec![
            ("a", 0, vec![Some(0.0), Some(10.0), Some(20.0), Some(30.0)]),
            ("a", 1, vec![Some(100.0), Some(100.0), None, Some(100.0)]),
            ("b", 3, vec![None, None, None, Some(60.0)]),
        ]
    );
}

#[tokio::test]
async fn spikes_survive_at_every_resolution() {
    let store = MetricsStore::in_memory().await.unwrap();
    // Two hours at 1 Hz on one GPU, flat at 20 % but for one second at 99 % and one at 1 %.
    let rows: Vec<SampleRow> = (0..2 * 3600)
        .map(|second| {
            let util = match second {
                4_321 => 99.0,
                1_234 => 1.0,
                _ => 20.0,
            };
            sample("h", 0, T0 + second * 1000, Some(util))
        })
        .collect();
    store.insert_batch(&rows).await.unwrap();
    store.compact(T0 + 2 * HOUR).await.unwrap();
    for (to_ms, max_points, resolution) in [
        (T0 + 2 * HOUR - 1, 300, Resolution::Raw),
        (T0 + 2 * HOUR - 1, 60, Resolution::Minute),
        (T0 + 24 * HOUR - 1, 12, Resolution::Hour),
    ] {
        let q = query(ChartMetric::Util, T0, to_ms, max_points);
        assert_eq!(store.resolution_for(&q).await.unwrap(), resolution);
        let points = &store.query(&q).await.unwrap()[0].points;
        assert!(points.len() <= max_points as usize);
        let top = points.iter().map(|p| p.max).fold(f32::MIN, f32::max);
        let bottom = points.iter().map(|p| p.min).fold(f32::MAX, f32::min);
        assert_eq!((bottom, top), (1.0, 99.0), "{resolution:?}");
    }
}

#[test]
fn queries_never_return_more_than_max_points() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // Three hours of two GPUs at 1 Hz, with holes.
    let store = runtime.block_on(async {
        let store = MetricsStore::in_memory().await.unwrap();
        let rows: Vec<SampleRow> = (0..3 * 3600)
            .filter(|second| second % 97 != 0)
            .flat_map(|second| {
                (0..2).map(move |gpu| {
                    sample("h", gpu, T0 + second * 1000, Some((second % 100) as f32))
                })
            })
            .collect();
        store.insert_batch(&rows).await.unwrap();
        store.compact(T0 + 3 * HOUR).await.unwrap();
        store
    });
    let strategy = (
        0i64..4 * HOUR,
        1i64..72 * HOUR,
        1u32..5_000,
        prop::sample::select(ChartMetric::ALL.to_vec()),
        any::<bool>(),
    );
    let mut runner = TestRunner::new(Config {
        cases: 200,
        ..Config::default()
    });
    runner
        .run(
            &strategy,
            |(from_offset, span, max_points, metric, one_host)| {
                let from_ms = T0 - HOUR + from_offset;
                let to_ms = from_ms + span;
                let q = SeriesQuery {
                    host: one_host.then(|| "h".to_string()),
                    ..query(metric, from_ms, to_ms, max_points)
                };
                let (series, hosts) = runtime.block_on(async {
                    (
                        store.query(&q).await.unwrap(),
                        store.query_hosts(&q).await.unwrap(),
                    )
                });
                let all = series
                    .iter()
                    .map(|gpu| &gpu.points)
                    .chain(hosts.iter().map(|host| &host.points));
                for points in all {
                    prop_assert!(points.len() <= max_points as usize);
                    prop_assert!(points.is_sorted_by_key(|point| point.t_ms));
                    for point in points {
                        prop_assert!(point.t_ms >= from_ms && point.t_ms <= to_ms);
                        prop_assert!(point.min <= point.avg + 1e-3);
                        prop_assert!(point.avg <= point.max + 1e-3);
                    }
                }
                let heatmap = runtime
                    .block_on(store.heatmap(&HeatmapQuery {
                        metric,
                        from_ms,
                        to_ms,
                        columns: max_points,
                    }))
                    .unwrap();
                prop_assert!(heatmap.columns <= max_points);
                prop_assert!(
                    heatmap
                        .rows
                        .iter()
                        .all(|row| row.cells.len() == heatmap.columns as usize)
                );
                Ok(())
            },
        )
        .unwrap();
}
