//! The console with the embedded collector and on Prometheus as its metrics back end, side
//! by side in one run: `cargo bench -p ebb-cli --bench prom_backend` (needs `cargo build
//! --release -p ebb-agent` first, and Debian's `prometheus` and `promtool`).
//!
//! 1. The virtual fleet (`EBB_BENCH_HOSTS` hosts × 8 GPUs, 1,250 by default) with
//!    `ebb daemon` on it for `EBB_BENCH_SECONDS` (120) each way: collecting itself; then on
//!    Prometheus, which scrapes the fleet every `EBB_BENCH_SCRAPE_S` (1) through the daemon's
//!    own service discovery. Reports each daemon's CPU (cores) and RSS, and Prometheus's.
//! 2. A 24-hour chart of one 8-GPU host (a day of readings at 1 Hz, the same in both):
//!    `metrics.db` (rolled up as the collector leaves it) and Prometheus (its TSDB filled by
//!    `promtool tsdb create-blocks-from openmetrics`), each asked `EBB_BENCH_QUERIES` (50)
//!    times as the host chart asks; p50 and p99. `EBB_BENCH_CHART=0` leaves it out,
//!    `EBB_BENCH_FLEET=0` leaves out 1.

mod support;

use ebb_telemetry::metrics_store::{MetricsStore, RetentionConfig, SampleRow, SeriesQuery};
use ebb_telemetry::prom::PromClient;
use ebb_testkit::PrometheusServer;
use ebb_wire::ipc::ChartMetric;
use std::io::{BufRead, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::{env_number, proc_stat, register, start_fleet};

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// CPU (cores) and the highest RSS of each process over `seconds`, after a warm-up.
fn watch(pids: &[u32], seconds: u64) -> Vec<(f64, u64)> {
    std::thread::sleep(Duration::from_secs(15));
    let start: Vec<f64> = pids.iter().map(|pid| proc_stat(*pid).0).collect();
    let window = Instant::now();
    let mut max_rss = vec![0u64; pids.len()];
    while window.elapsed() < Duration::from_secs(seconds) {
        std::thread::sleep(Duration::from_secs(1));
        for (slot, pid) in max_rss.iter_mut().zip(pids) {
            *slot = (*slot).max(proc_stat(*pid).1);
        }
    }
    let elapsed = window.elapsed().as_secs_f64();
    pids.iter()
        .zip(start)
        .zip(max_rss)
        .map(|((pid, cpu), rss)| ((proc_stat(*pid).0 - cpu) / elapsed, rss))
        .collect()
}

/// `ebb daemon` on `data_dir`, its service discovery on a free port; with the address.
fn daemon(ebb: &Path, data_dir: &Path) -> (Child, String) {
    let mut child = Command::new(ebb)
        .arg("--data-dir")
        .arg(data_dir)
        .args([
            "--token-store",
            "file",
            "daemon",
            "--metrics-listen",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("the daemon's address").unwrap();
        if let Some(rest) = line.strip_prefix("custom metrics: POST http://") {
            break rest.trim_end_matches("/v1/metrics").to_string();
        }
    };
    // Drains the rest, so the daemon never writes to a closed pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
}

fn stop(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
}

/// A process the bench started, stopped however the bench ends (a failed assertion
/// included), so no fleet or daemon outlives it.
struct Owned(Child);

impl Drop for Owned {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            stop(&mut self.0);
        }
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1_048_576.0
}

/// A reading of GPU `gpu` at second `s` of the day: a slow wave, different per GPU.
fn util(gpu: u32, s: i64) -> f32 {
    let phase = (s as f64 / 3600.0 + f64::from(gpu)).sin();
    (50.0 + 45.0 * phase) as f32
}

fn percentiles(mut times: Vec<Duration>) -> (f64, f64) {
    times.sort();
    let at = |q: f64| {
        let index = ((times.len() as f64 * q).ceil() as usize).clamp(1, times.len()) - 1;
        times[index].as_secs_f64() * 1000.0
    };
    (at(0.50), at(0.99))
}

/// A day of one 8-GPU host read every `step_s` seconds, in `metrics.db` and in Prometheus's
/// TSDB alike, charted `queries` times through each.
async fn chart_day(work: &Path, step_s: u64, queries: u64) {
    let end_ms = (now_ms() - 600_000) / 1000 * 1000;
    let from_ms = end_ms - 86_400_000;
    let store = MetricsStore::open(
        &work.join(format!("metrics-{step_s}.db")),
        RetentionConfig::default(),
    )
    .await
    .unwrap();
    let openmetrics = work.join(format!("day-{step_s}.om"));
    {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&openmetrics).unwrap());
        writeln!(out, "# TYPE ebb_gpu_utilization_percent gauge").unwrap();
        let mut batch = Vec::new();
        for s in (0..86_400i64).step_by(step_s as usize) {
            let t_ms = from_ms + s * 1000;
            for gpu in 0..8u32 {
                let value = util(gpu, s);
                writeln!(
                    out,
                    "ebb_gpu_utilization_percent{{host=\"bench-0\",index=\"{gpu}\",region=\"cn-north\"}} {value} {}",
                    t_ms / 1000
                )
                .unwrap();
                batch.push(SampleRow {
                    host: "bench-0".into(),
                    gpu_index: gpu,
                    t_ms,
                    util_pct: Some(value),
                    memory_used_mib: None,
                    memory_total_mib: None,
                    temperature_c: None,
                    power_w: None,
                });
            }
            if batch.len() >= 8 * 3600 {
                store.insert_batch(&batch).await.unwrap();
                batch.clear();
            }
        }
        store.insert_batch(&batch).await.unwrap();
        writeln!(out, "# EOF").unwrap();
    }
    store.compact(end_ms).await.unwrap();
    let backfilled = Command::new(PrometheusServer::tool("promtool"))
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(&openmetrics)
        .arg(work.join(format!("day-{step_s}/tsdb")))
        .output()
        .unwrap();
    assert!(
        backfilled.status.success(),
        "promtool: {}",
        String::from_utf8_lossy(&backfilled.stderr)
    );
    let day = PrometheusServer::start(
        &work.join(format!("day-{step_s}")),
        "global:\n  scrape_interval: 15s\n",
    );
    let prom = PromClient::new(day.url(), Duration::from_secs(10)).unwrap();
    let query = SeriesQuery {
        host: Some("bench-0".into()),
        gpu_index: None,
        metric: ChartMetric::Util,
        from_ms,
        to_ms: end_ms,
        max_points: 800,
    };
    let (mut embedded, mut prometheus) = (Vec::new(), Vec::new());
    for _ in 0..queries {
        let started = Instant::now();
        let series = store.query(&query).await.unwrap();
        embedded.push(started.elapsed());
        assert_eq!(series.len(), 8);
        let started = Instant::now();
        let series = prom
            .host_series("bench-0", ChartMetric::Util, from_ms, end_ms, 800)
            .await
            .unwrap();
        prometheus.push(started.elapsed());
        assert_eq!(series.len(), 8, "{series:?}");
        assert!(series[0].points.len() > 700, "{}", series[0].points.len());
    }
    let (e50, e99) = percentiles(embedded);
    let (p50, p99) = percentiles(prometheus);
    println!(
        "24 h x 8 GPUs read every {step_s} s, as a chart ({queries} queries, 800 points per GPU): metrics.db p50 {e50:.1} ms p99 {e99:.1} ms; Prometheus (as the chart asks) p50 {p50:.1} ms p99 {p99:.1} ms"
    );
    // The ways the chart could ask, one query each, for the record.
    let step_ms = ebb_telemetry::prom::step_for(from_ms, end_ms, 800);
    let window = format!("{}s", step_ms / 1000);
    for (name, expression) in [
        (
            "each step's mean (avg_over_time)",
            ebb_telemetry::prom::expression(
                ChartMetric::Util,
                "{host=\"bench-0\"}",
                Some(("avg_over_time", &window)),
            ),
        ),
        (
            "each step's max (max_over_time)",
            ebb_telemetry::prom::expression(
                ChartMetric::Util,
                "{host=\"bench-0\"}",
                Some(("max_over_time", &window)),
            ),
        ),
        (
            "the sample at each step",
            ebb_telemetry::prom::expression(ChartMetric::Util, "{host=\"bench-0\"}", None),
        ),
    ] {
        let mut times = Vec::new();
        for _ in 0..queries {
            let started = Instant::now();
            let answer = prom
                .range(&expression, from_ms, end_ms, step_ms)
                .await
                .unwrap();
            times.push(started.elapsed());
            assert_eq!(answer.len(), 8);
        }
        let (q50, q99) = percentiles(times);
        println!("  Prometheus, {name} alone: p50 {q50:.1} ms p99 {q99:.1} ms");
    }
    drop(day);
    store.close().await;
}

#[tokio::main]
async fn main() {
    let hosts = env_number("EBB_BENCH_HOSTS", 1250);
    let seconds = env_number("EBB_BENCH_SECONDS", 120);
    let scrape_s = env_number("EBB_BENCH_SCRAPE_S", 1);
    let queries = env_number("EBB_BENCH_QUERIES", 50).max(1);
    let ebb = PathBuf::from(env!("CARGO_BIN_EXE_ebb"));
    let agent = ebb.with_file_name("ebb-agent");
    assert!(
        agent.exists(),
        "build it first: cargo build --release -p ebb-agent"
    );
    let work = std::env::temp_dir().join(format!("ebb-bench-prom-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();

    // 2 first (it needs no fleet): a day of one host, both ways, read every second (the
    // collector's rate) and every 15 s (Prometheus's default scrape).
    if env_number("EBB_BENCH_CHART", 1) == 1 {
        for step_s in [1, 15] {
            chart_day(&work, step_s, queries).await;
        }
    }
    if env_number("EBB_BENCH_FLEET", 1) == 0 {
        return;
    }

    // 1: the fleet.
    let (fleet, urls) = start_fleet(&agent, hosts);
    let mut fleet = Owned(fleet);

    let collecting = work.join("embedded");
    register(&collecting, &urls).await;
    let (first, _) = daemon(&ebb, &collecting);
    let mut first = Owned(first);
    let figures = watch(&[first.0.id()], seconds);
    stop(&mut first.0);
    println!(
        "ebb daemon collecting {hosts} hosts x 8 GPUs at 1 Hz over {seconds} s: CPU {:.3} cores, RSS {:.1} MiB at most",
        figures[0].0,
        mib(figures[0].1)
    );

    let reading = work.join("prometheus");
    register(&reading, &urls).await;
    std::fs::create_dir_all(work.join("scrape")).unwrap();
    let server = PrometheusServer::start(
        &work.join("scrape"),
        &format!("global:\n  scrape_interval: {scrape_s}s\n"),
    );
    std::fs::write(
        reading.join("console.toml"),
        format!("metrics = \"prometheus+{}\"\n", server.url()),
    )
    .unwrap();
    let (second, addr) = daemon(&ebb, &reading);
    let mut second = Owned(second);
    let token = Command::new(&ebb)
        .arg("--data-dir")
        .arg(&reading)
        .args(["--token-store", "file", "metric", "token", "new"])
        .output()
        .unwrap();
    let token = String::from_utf8_lossy(&token.stdout).trim().to_string();
    server.reload(&format!(
        "global:\n  scrape_interval: {scrape_s}s\n  scrape_timeout: {scrape_s}s\n\
         scrape_configs:\n  - job_name: ebb-agents\n    http_sd_configs:\n      \
         - url: http://{addr}/v1/prometheus/targets\n        refresh_interval: 30s\n        \
         authorization:\n          type: Bearer\n          credentials: {token}\n"
    ));
    let up = PromClient::new(server.url(), Duration::from_secs(10)).unwrap();
    let waited = Instant::now();
    loop {
        let count = up
            .number("count(up == 1)", Duration::from_secs(10))
            .await
            .unwrap_or(0.0);
        if count as u64 >= hosts {
            break;
        }
        assert!(
            waited.elapsed() < Duration::from_secs(300),
            "Prometheus scrapes {count} of {hosts} hosts"
        );
        std::thread::sleep(Duration::from_secs(2));
    }
    let prometheus_pid = server.pid().expect("Prometheus runs");
    let figures = watch(&[second.0.id(), prometheus_pid], seconds);
    let scraped = up
        .number("count(up == 1)", Duration::from_secs(10))
        .await
        .unwrap_or(0.0);
    println!(
        "ebb daemon on Prometheus, {hosts} hosts x 8 GPUs scraped every {scrape_s} s over {seconds} s: CPU {:.3} cores, RSS {:.1} MiB at most; Prometheus CPU {:.3} cores, RSS {:.1} MiB at most; {scraped} hosts up",
        figures[0].0,
        mib(figures[0].1),
        figures[1].0,
        mib(figures[1].1)
    );
    stop(&mut second.0);
    drop(server);
    stop(&mut fleet.0);
    let _ = std::fs::remove_dir_all(&work);
}
