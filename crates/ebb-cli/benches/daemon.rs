//! `ebb daemon` at scale: `cargo bench -p ebb-cli --bench daemon` (needs
//! `cargo build --release -p ebb-agent` first).
//!
//! Starts the virtual fleet (`EBB_BENCH_HOSTS`, default 1,250 hosts x 8 GPUs at 1 Hz),
//! registers every host, runs `ebb daemon` on them for `EBB_BENCH_SECONDS` (default 300;
//! 1800 for the 30-minute soak) and reports the daemon's CPU (cores), its RSS at 1 minute,
//! every 5 minutes after and at most, and of the readings the agents took near the end, how
//! many it stored. `EBB_BENCH_WRAP` runs the daemon under a profiler.

mod support;

use ebb_core::db::ConsoleDb;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{env_number, proc_stat, register, start_fleet};

#[tokio::main]
async fn main() {
    let hosts = env_number("EBB_BENCH_HOSTS", 1250);
    let seconds = env_number("EBB_BENCH_SECONDS", 300);
    let ebb = std::path::PathBuf::from(env!("CARGO_BIN_EXE_ebb"));
    let agent = ebb.with_file_name("ebb-agent");
    assert!(
        agent.exists(),
        "build it first: cargo build --release -p ebb-agent"
    );
    let (mut fleet, urls) = start_fleet(&agent, hosts);
    let data_dir = std::env::temp_dir().join(format!("ebb-bench-daemon-{}", std::process::id()));
    let registry = register(&data_dir, &urls).await;
    println!(
        "registered {} hosts of the fleet",
        registry.list().await.unwrap().len()
    );
    let started = Instant::now();
    // `EBB_BENCH_WRAP="heaptrack -o /tmp/daemon"` runs the daemon under a profiler (the
    // CPU and RSS figures are then the wrapper's).
    let wrap = std::env::var("EBB_BENCH_WRAP").unwrap_or_default();
    let mut wrap = wrap.split_whitespace();
    let mut daemon = match wrap.next() {
        Some(program) => {
            let mut command = Command::new(program);
            command.args(wrap).arg(&ebb);
            command
        }
        None => Command::new(&ebb),
    };
    let mut daemon = daemon
        .arg("--data-dir")
        .arg(&data_dir)
        // The metrics endpoint on a free port, as the fleet's.
        .args([
            "--token-store",
            "file",
            "daemon",
            "--metrics-listen",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let pid = daemon.id();
    std::thread::sleep(Duration::from_secs(10));
    if let Some(status) = daemon.try_wait().unwrap() {
        panic!("ebb daemon exited early: {status}");
    }
    let (cpu_start, _) = proc_stat(pid);
    let window = Instant::now();
    let mut max_rss = 0;
    // RSS at 1 and every 5 minutes after, so a soak shows whether it is flat.
    let mut checkpoints = vec![60u64, 300, 600, 900, 1200, 1500, 1800];
    while window.elapsed() < Duration::from_secs(seconds) {
        std::thread::sleep(Duration::from_secs(1));
        let rss = proc_stat(pid).1;
        max_rss = max_rss.max(rss);
        let ran = started.elapsed().as_secs();
        if checkpoints.first().is_some_and(|at| ran >= *at) {
            checkpoints.remove(0);
            println!(
                "RSS at {} min: {:.1} MiB",
                ran / 60,
                rss as f64 / 1_048_576.0
            );
        }
    }
    let (cpu_end, _) = proc_stat(pid);
    // What the agents took in the last 45 s but the newest 5 (which the daemon may not have
    // polled yet): each agent keeps its last minute of samples, by number.
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let (from_ms, to_ms) = (now_ms - 50_000, now_ms - 5_000);
    let mut taken = 0u64;
    for (_, _, url) in &urls {
        let client = ebb_telemetry::client::AgentClient::new(
            url,
            ebb_telemetry::client::ClientConfig::default(),
        )
        .unwrap();
        let batch = client.samples(None).await.unwrap();
        taken += batch
            .samples
            .iter()
            .filter(|list| (from_ms..=to_ms).contains(&list.sampled_at_ms))
            .map(|list| list.gpus.len() as u64)
            .sum::<u64>();
    }
    let elapsed_total = started.elapsed().as_secs_f64();
    let snapshot = ebb_core::metrics_source::embedded::read_snapshot(
        &ConsoleDb::open(&data_dir).await.unwrap(),
    )
    .await
    .unwrap();
    let online = snapshot
        .iter()
        .filter(|host| host.health == ebb_wire::ipc::Health::Online)
        .count();
    println!(
        "ebb daemon, {hosts} hosts x 8 GPUs at 1 Hz, over {seconds} s: CPU {:.3} cores, RSS {:.1} MiB at most, {online}/{hosts} hosts online at the end",
        (cpu_end - cpu_start) / window.elapsed().as_secs_f64(),
        max_rss as f64 / 1_048_576.0,
    );
    let store = ebb_telemetry::metrics_store::MetricsStore::open(
        &data_dir.join("metrics.db"),
        ebb_telemetry::metrics_store::RetentionConfig::default(),
    )
    .await
    .unwrap();
    let stats = store.stats().await.unwrap();
    let stored = store.raw_rows_between(from_ms, to_ms).await.unwrap();
    println!(
        "over {elapsed_total:.0} s the daemon stored {} GPU readings; of the {taken} the agents took in a 45 s window near the end, it stored {stored} ({:.2} %)",
        stats.raw_rows,
        100.0 * stored as f64 / taken.max(1) as f64
    );
    for child in [&mut daemon, &mut fleet] {
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let _ = child.wait();
    }
    let _ = std::fs::remove_dir_all(&data_dir);
}
