//! Real `ebb-agent` and `ebb` processes on loopback, read by the console core.
// Tests read as their story, start to end: no line budget for them.
#![allow(clippy::too_many_lines)]

mod crash;
mod crash_paths;
mod faults;
mod pools;
mod prometheus;
mod proxy;
mod rules;
mod secrets;
mod slurm;

use ebb_telemetry::client::AgentAccess;
use ebb_telemetry::client::{AgentClient, ClientConfig};
use ebb_telemetry::collect::{Collector, CollectorConfig, Target, Tick};
use ebb_testkit::{
    AgentCommand, AgentProcess, Cli, Relay, TempDir, eventually_blocking, workspace_bin,
};
use ebb_wire::agent::{Lease, LeaseList};
use ebb_wire::ipc::Health;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A simulated agent named `it-host` with `gpus` H800s, sampling every 200 ms.
fn sim_agent(state_dir: &Path, gpus: u32) -> AgentProcess {
    AgentCommand::sim(state_dir, &format!("{gpus}xH800"))
        .sample_interval_ms(200)
        .start()
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

/// `ebb daemon` serving its metrics endpoint on a port it picked itself: started with
/// `--metrics-listen 127.0.0.1:0`, the address read from the line it prints once bound.
/// Killed when dropped.
struct MetricsDaemon {
    child: Child,
    /// `127.0.0.1:PORT`, where `POST /v1/metrics` and the service discovery are served.
    addr: String,
}

impl MetricsDaemon {
    /// `command` is an `ebb ... daemon` (data directory, token store, environment) without
    /// `--metrics-listen`, which this adds.
    fn start(mut command: Command) -> Self {
        let mut child = command
            .args(["--metrics-listen", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        // Dropped (and killed) if the address never comes.
        let mut daemon = Self {
            child,
            addr: String::new(),
        };
        let (send, lines) = std::sync::mpsc::channel::<String>();
        // Drains stdout for the daemon's whole life, so it never writes to a closed pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
        let mut seen = Vec::new();
        daemon.addr = loop {
            let line = lines
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| {
                    panic!("ebb daemon did not say where it listens; said {seen:?}")
                });
            if let Some(rest) = line.trim().strip_prefix("custom metrics: POST http://") {
                break rest.trim_end_matches("/v1/metrics").to_string();
            }
            seen.push(line);
        };
        daemon
    }
}

impl Drop for MetricsDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_core_polls_a_real_agent_process_and_sees_it_go() {
    let dir = TempDir::new("it-poll");
    let agent = sim_agent(dir.path(), 4);
    let client = AgentClient::new(&agent.url, ClientConfig::default()).unwrap();
    let health = client.health().await.unwrap();
    assert_eq!((health.host.as_str(), health.api_version), ("it-host", 1));

    let (sink, mut ticks) = tokio::sync::mpsc::channel::<Tick>(64);
    let collector = Collector::start(
        vec![Target {
            name: "it-host".into(),
            region: "cn-east".into(),
            access: AgentAccess::open(&agent.url),
        }],
        CollectorConfig {
            interval: Duration::from_millis(200),
            ..CollectorConfig::default()
        },
        Some(sink),
    )
    .unwrap();
    let mut times = Vec::new();
    let online = tokio::time::timeout(Duration::from_secs(15), async {
        loop {
            let tick = ticks.recv().await.unwrap();
            times.extend(tick.samples.iter().map(|list| list.sampled_at_ms));
            if times.len() >= 4 {
                return tick;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("four samples within 15 s; saw {times:?}"));
    let host = &online.snapshot.hosts[0];
    assert_eq!(host.health, Health::Online);
    assert_eq!(host.gpu_count, 4);
    assert_eq!(host.models, vec!["NVIDIA H800".to_string()]);
    assert!(times.windows(2).all(|pair| pair[0] < pair[1]), "{times:?}");

    drop(agent);
    let mut last_health = None;
    let offline = tokio::time::timeout(Duration::from_secs(15), async {
        loop {
            let tick = ticks.recv().await.unwrap();
            last_health = Some(tick.snapshot.hosts[0].health);
            if last_health == Some(Health::Offline) {
                return tick;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the killed agent offline within 15 s; last {last_health:?}"));
    let reason = offline.snapshot.hosts[0].last_error.clone().unwrap();
    assert!(
        matches!(reason, ebb_wire::reasons::HostProblem::Refused { .. }),
        "{reason:?}"
    );
    assert!(
        reason.to_string().contains("refused the connection"),
        "{reason}"
    );
    collector.stop().await;
}

#[test]
fn the_cli_reads_a_real_agent() {
    let dir = TempDir::new("it-cli");
    let agent = sim_agent(dir.path(), 2);
    let output = Command::new(workspace_bin("ebb"))
        .args(["--json", "gpus", &agent.url])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let list: ebb_wire::agent::GpuList = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(list.host, "it-host");
    assert_eq!(list.gpus.len(), 2);
    let table = Command::new(workspace_bin("ebb"))
        .args(["gpus", &agent.url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&table.stdout);
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(text.contains("NVIDIA H800"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_survive_kill_dash_nine_and_a_key_retried_after_it_grants_once() {
    let dir = TempDir::new("it-kill9");
    let body = serde_json::json!({"pool_id": "p", "holder_id": "console", "count": 3});
    let post = |url: String, key: &'static str| {
        let body = body.clone();
        async move {
            http()
                .post(format!("{url}/v1/leases"))
                .header("idempotency-key", key)
                .json(&body)
                .send()
                .await
                .unwrap()
        }
    };
    let agent = sim_agent(dir.path(), 4);
    let first = post(agent.url.clone(), "retry-me").await;
    assert_eq!(first.status(), 201);
    let granted: Lease = first.json().await.unwrap();
    drop(agent); // SIGKILL: no chance to flush anything

    let agent = sim_agent(dir.path(), 4);
    let retried = post(agent.url.clone(), "retry-me").await;
    assert_eq!(retried.status(), 200, "the retry replays the grant");
    assert_eq!(retried.json::<Lease>().await.unwrap(), granted);
    let list: LeaseList = http()
        .get(format!("{}/v1/leases", agent.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list.leases, vec![granted.clone()]);
    let more = post(agent.url.clone(), "another").await;
    assert_eq!(
        more.status(),
        409,
        "3 of 4 GPUs are still held after the restart"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_made_by_the_cli_opens_the_api_and_only_its_hash_is_stored() {
    let dir = TempDir::new("it-token");
    let config = dir.join("agent.toml");
    let made = Command::new(workspace_bin("ebb-agent"))
        .args(["token", "new", "--scope", "read", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let token = String::from_utf8(made.stdout).unwrap().trim().to_string();
    assert!(token.starts_with("ebb_"), "{token}");
    let stored = std::fs::read_to_string(&config).unwrap();
    assert!(
        !stored.contains(&token),
        "the config holds the hash, not the token"
    );
    assert!(stored.contains("scope = \"read\""), "{stored}");

    let agent = AgentCommand::sim(dir.path(), "1xV100")
        .args(["--config", config.to_str().unwrap()])
        .start();
    let gpus = format!("{}/v1/gpus", agent.url);
    assert_eq!(http().get(&gpus).send().await.unwrap().status(), 401);
    assert_eq!(
        http()
            .get(&gpus)
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let lease = http()
        .post(format!("{}/v1/leases", agent.url))
        .bearer_auth(&token)
        .header("idempotency-key", "k")
        .json(&serde_json::json!({"pool_id": "p", "holder_id": "h", "count": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(lease.status(), 403, "a read token cannot lease");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_serves_the_certificate_whose_fingerprint_it_prints() {
    let dir = TempDir::new("it-tls");
    let agent = AgentCommand::sim(dir.path(), "2xA100")
        .args(["--tls"])
        .start();
    assert!(agent.url.starts_with("https://"), "{}", agent.url);
    let printed = agent
        .lines
        .iter()
        .find_map(|line| line.strip_prefix("tls: sha256 fingerprint "))
        .expect("the fingerprint is printed")
        .to_string();
    let pem = std::fs::read(dir.join("tls/cert.pem")).unwrap();
    let der = pem_to_der(&pem);
    assert_eq!(printed, ebb_agent_fingerprint(&der));
    let certificate = reqwest::Certificate::from_pem(&pem).unwrap();
    let pinned = reqwest::Client::builder()
        .tls_certs_only([certificate])
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let port = agent.url.rsplit(':').next().unwrap();
    let answer = pinned
        .get(format!("https://localhost:{port}/v1/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let plain = http()
        .get(format!("http://127.0.0.1:{port}/v1/health"))
        .send()
        .await;
    assert!(
        plain.is_err() || !plain.unwrap().status().is_success(),
        "no plain HTTP on the TLS port"
    );
}

fn pem_to_der(pem: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(pem);
    let body: String = text
        .lines()
        .filter(|line| !line.starts_with("-----"))
        .collect();
    base64_decode(&body)
}

/// A small base64 decoder so this test does not trust the agent's own PEM code.
fn base64_decode(text: &str) -> Vec<u8> {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for byte in text.bytes().filter(|byte| *byte != b'=') {
        let value = alphabet.iter().position(|c| *c == byte).expect("base64") as u32;
        bits = (bits << 6) | value;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    out
}

fn ebb_agent_fingerprint(der: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(der)
        .iter()
        .map(|byte| format!("{byte:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// `ebb --data-dir DIR --token-store file ARGS...`.
fn ebb(data_dir: &Path, args: &[&str]) -> std::process::Output {
    Cli::new(data_dir).run(args)
}

#[test]
fn the_cli_registers_tests_lists_and_removes_a_host() {
    let dir = TempDir::new("it-hosts");
    let agent_dir = dir.subdir("agent");
    let config = agent_dir.join("agent.toml");
    let made = Command::new(workspace_bin("ebb-agent"))
        .args(["token", "new", "--scope", "read", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    let token = String::from_utf8(made.stdout).unwrap();
    let token_file = dir.join("token");
    std::fs::write(&token_file, &token).unwrap();
    let agent = AgentCommand::sim(&agent_dir, "2xV100")
        .args(["--config", config.to_str().unwrap()])
        .start();
    let console_dir = dir.join("console");

    let bad = ebb(
        &console_dir,
        &["hosts", "add", "h1", "gpu-01:7070", "--region", "cn-east"],
    );
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("url: `gpu-01:7070` must start with http://"),
        "{stderr}"
    );

    let unauthorized = ebb(
        &console_dir,
        &[
            "hosts", "add", "no-token", &agent.url, "--region", "cn-east",
        ],
    );
    assert!(unauthorized.status.success());
    let failed = ebb(&console_dir, &["hosts", "test", "no-token"]);
    assert!(!failed.status.success());
    assert!(String::from_utf8_lossy(&failed.stderr).contains("refused the token (HTTP 401)"));

    let added = ebb(
        &console_dir,
        &[
            "hosts",
            "add",
            "h1",
            &agent.url,
            "--region",
            "cn-east",
            "--label",
            "rack=r7",
            "--token-file",
            token_file.to_str().unwrap(),
        ],
    );
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let db = std::fs::read(console_dir.join("console.db")).unwrap();
    assert!(
        !String::from_utf8_lossy(&db).contains(token.trim()),
        "no token in the database"
    );

    let tested = ebb(&console_dir, &["hosts", "test", "h1"]);
    assert!(
        tested.status.success(),
        "{}",
        String::from_utf8_lossy(&tested.stderr)
    );
    assert!(String::from_utf8_lossy(&tested.stdout).contains("h1: ok"));

    let listed = ebb(&console_dir, &["--json", "hosts", "list"]);
    let hosts: Vec<ebb_wire::ipc::HostStatus> = serde_json::from_slice(&listed.stdout).unwrap();
    let h1 = hosts.iter().find(|host| host.name == "h1").unwrap();
    assert_eq!((h1.health, h1.gpu_count), (Health::Online, 2));
    let no_token = hosts.iter().find(|host| host.name == "no-token").unwrap();
    assert_eq!(no_token.health, Health::Offline);

    assert!(
        ebb(&console_dir, &["hosts", "remove", "h1"])
            .status
            .success()
    );
    let gone = ebb(&console_dir, &["hosts", "test", "h1"]);
    assert!(String::from_utf8_lossy(&gone.stderr).contains("no host named `h1` is registered"));
}

#[test]
fn one_collector_per_data_directory() {
    let dir = TempDir::new("it-daemon");
    let agent = sim_agent(&dir.join("agent"), 1);
    let console_dir = dir.join("console");
    assert!(
        ebb(
            &console_dir,
            &["hosts", "add", "h1", &agent.url, "--region", "cn-east"]
        )
        .status
        .success()
    );
    let spawn_daemon = || {
        Cli::new(&console_dir)
            .command(&["daemon"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let first_line = |child: &mut Child| {
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        line
    };
    let mut first = spawn_daemon();
    assert!(first_line(&mut first).starts_with("collecting from 1 hosts"));
    let mut second = spawn_daemon();
    let said = first_line(&mut second);
    assert!(
        said.starts_with("another Ebb process already collects"),
        "{said}"
    );
    // The first daemon records health for viewers.
    eventually_blocking(
        "the daemon to record h1 online",
        Duration::from_secs(10),
        || {
            let listed = ebb(&console_dir, &["--json", "hosts", "list"]);
            let hosts: Vec<ebb_wire::ipc::HostStatus> =
                serde_json::from_slice(&listed.stdout).unwrap();
            let health = hosts[0].health;
            (health == Health::Online).then_some(()).ok_or(health)
        },
    );
    for mut child in [first, second] {
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let _ = child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_agent_comes_back_online_and_its_samples_resume() {
    let dir = TempDir::new("it-restart");
    // The console polls a port this test holds; the agent behind it is killed and started
    // again (on a port of its own each time), so no port is ever released and rebound.
    let relay = Relay::start(None).await;
    let start = || {
        let agent = AgentCommand::sim(dir.path(), "1xA100")
            .sample_interval_ms(100)
            .start();
        relay.forward_to(Some(agent.addr));
        agent
    };
    let mut agent = Some(start());
    let url = relay.url();
    let (sink, mut ticks) = tokio::sync::mpsc::channel::<Tick>(64);
    let collector = Collector::start(
        vec![Target {
            name: "flaky".into(),
            region: "cn-east".into(),
            access: AgentAccess::open(&url),
        }],
        CollectorConfig {
            interval: Duration::from_millis(100),
            max_backoff: Duration::from_millis(400),
            ..CollectorConfig::default()
        },
        Some(sink),
    )
    .unwrap();
    let mut seen = Vec::new();
    let mut went_offline = false;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let tick = tokio::time::timeout(Duration::from_secs(5), ticks.recv())
            .await
            .unwrap_or_else(|_| panic!("no tick within 5 s; samples so far {seen:?}"))
            .expect("the collector runs");
        let health = tick.snapshot.hosts[0].health;
        seen.extend(tick.samples.iter().map(|list| list.sampled_at_ms));
        if !went_offline && seen.len() >= 5 && agent.is_some() {
            agent = None; // killed
        }
        if agent.is_none() && health == Health::Offline {
            went_offline = true;
            agent = Some(start());
        }
        if went_offline && health == Health::Online && seen.len() >= 10 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no offline-then-online within 30 s (went offline: {went_offline}, now {health:?}): {seen:?}"
        );
    }
    assert!(
        seen.windows(2).all(|pair| pair[0] < pair[1]),
        "samples resume in order: {seen:?}"
    );
    collector.stop().await;
}
