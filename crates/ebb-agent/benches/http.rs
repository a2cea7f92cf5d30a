//! Loopback HTTP figures for one simulated agent (release build):
//! `cargo bench -p ebb-agent --bench http`
//!
//! - `GET /v1/gpus` for 8 GPUs: requests/s and p50/p99 latency with 16 concurrent clients.
//! - Lease create + release round trips per second (one client, sequential).
//! - 100 concurrent creates with one idempotency key: how many leases result (must be 1).

use ebb_agent::auth::Auth;
use ebb_agent::leases::LeaseConfig;
use ebb_agent::leases::store::LeaseDb;
use ebb_agent::{AgentParts, GpuModel, LoadProfile, RunningAgent, SimConfig, Simulator};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn percentile(sorted: &[Duration], pct: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * pct / 100.0).round() as usize]
}

#[tokio::main]
async fn main() {
    let state_dir = std::env::temp_dir().join(format!("ebb-bench-http-{}", std::process::id()));
    std::fs::create_dir_all(&state_dir).unwrap();
    let db = LeaseDb::open(&state_dir).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let agent = RunningAgent::start(
        AgentParts {
            host: "bench".into(),
            probe: Arc::new(Simulator::new(SimConfig {
                host: "bench".into(),
                gpus: vec![GpuModel::A100; 8],
                seed: 1,
                profile: LoadProfile::Tidal { period_s: 60.0 },
                startup: std::time::Duration::ZERO,
            })),
            sample_interval: Duration::from_secs(1),
            store: db.host("bench"),
            lease_config: LeaseConfig::default(),
            auth: Arc::new(Auth::open()),
            tls: None,
            spot: Default::default(),
            interruptions: None,
        },
        listener,
    )
    .await
    .unwrap();
    let base = format!("http://{}", agent.addr);
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();

    // GET /v1/gpus
    let clients = 16;
    let per_client = 2_000;
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..clients {
        let client = client.clone();
        let url = format!("{base}/v1/gpus");
        tasks.spawn(async move {
            let mut latencies = Vec::with_capacity(per_client);
            for _ in 0..per_client {
                let sent = Instant::now();
                let body = client
                    .get(&url)
                    .send()
                    .await
                    .unwrap()
                    .bytes()
                    .await
                    .unwrap();
                assert!(body.len() > 100);
                latencies.push(sent.elapsed());
            }
            latencies
        });
    }
    let mut latencies = Vec::new();
    while let Some(done) = tasks.join_next().await {
        latencies.extend(done.unwrap());
    }
    let elapsed = started.elapsed();
    latencies.sort();
    println!(
        "GET /v1/gpus (8 GPUs, {clients} clients): {:.0} req/s, p50 {:?}, p99 {:?}",
        latencies.len() as f64 / elapsed.as_secs_f64(),
        percentile(&latencies, 50.0),
        percentile(&latencies, 99.0)
    );

    // Lease create + release round trips
    let rounds = 500;
    let started = Instant::now();
    for n in 0..rounds {
        let lease: serde_json::Value = client
            .post(format!("{base}/v1/leases"))
            .header("idempotency-key", format!("round-{n}"))
            .json(&serde_json::json!({"pool_id": "p", "holder_id": "h", "count": 2}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let id = lease["id"].as_str().unwrap();
        let released = client
            .delete(format!("{base}/v1/leases/{id}"))
            .send()
            .await
            .unwrap();
        assert_eq!(released.status(), 200);
    }
    let elapsed = started.elapsed();
    println!(
        "lease create + release: {:.0} round trips/s ({:?} each, SQLite synchronous=FULL)",
        rounds as f64 / elapsed.as_secs_f64(),
        elapsed / rounds
    );

    // 100 concurrent creates, one key
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..100 {
        let client = client.clone();
        let url = format!("{base}/v1/leases");
        tasks.spawn(async move {
            client
                .post(url)
                .header("idempotency-key", "the-one-key")
                .json(&serde_json::json!({"pool_id": "p", "holder_id": "h", "count": 1}))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        });
    }
    let mut statuses = std::collections::BTreeMap::new();
    while let Some(status) = tasks.join_next().await {
        *statuses.entry(status.unwrap()).or_insert(0) += 1;
    }
    let leases: serde_json::Value = client
        .get(format!("{base}/v1/leases"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let active = leases["leases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|lease| lease["state"] == "active")
        .count();
    println!("100 concurrent creates with one key: statuses {statuses:?}, active leases {active}");
    assert_eq!(active, 1);
    agent.stop().await;
    let _ = std::fs::remove_dir_all(&state_dir);
}
