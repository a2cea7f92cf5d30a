//! Pools with real `ebb-agent` and `ebb` processes on loopback: scaling, a console killed
//! mid scale-out, an agent killed mid-request, and failover when a host stops.

use crate::{AgentProcess, ebb, http, temp_dir};
use ebb_wire::agent::{LeaseList, LeaseState};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A free loopback port (bound, then released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn try_a100_agent(dir: &Path, port: u16, gpus: u32) -> Result<AgentProcess, String> {
    AgentProcess::try_spawn(
        dir,
        &[
            "--sim",
            &format!("{gpus}xA100"),
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--sample-interval-ms",
            "200",
        ],
    )
}

/// An A100 agent on a fixed port, so it can be restarted where the console looks for it.
/// Other tests take ports too: a port taken in between is waited for a little.
fn a100_agent(dir: &Path, port: u16, gpus: u32) -> AgentProcess {
    let mut tries = 0;
    loop {
        match try_a100_agent(dir, port, gpus) {
            Ok(agent) => return agent,
            Err(why) if tries >= 30 => panic!("port {port}: {why}"),
            Err(_) => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

/// An A100 agent on a fresh port: (agent, port).
fn new_a100_agent(dir: &Path, gpus: u32) -> (AgentProcess, u16) {
    for _ in 0..10 {
        let port = free_port();
        if let Ok(agent) = try_a100_agent(dir, port, gpus) {
            return (agent, port);
        }
    }
    panic!("no free port for an agent after 10 tries");
}

/// Every lease an agent keeps, released ones included.
async fn leases(url: &str) -> Vec<ebb_wire::agent::Lease> {
    match http().get(format!("{url}/v1/leases")).send().await {
        Ok(response) => response
            .json::<LeaseList>()
            .await
            .map(|list| list.leases)
            .unwrap_or_default(),
        Err(_) => Vec::new(),
    }
}

async fn active(url: &str) -> Vec<String> {
    leases(url)
        .await
        .into_iter()
        .filter(|lease| lease.state == LeaseState::Active)
        .flat_map(|lease| lease.gpu_uuids)
        .collect()
}

/// Checks that the agents hold exactly `want` active GPUs for us, none twice.
async fn assert_holds(urls: &[&str], want: usize, context: &str) -> Vec<usize> {
    let mut per_agent = Vec::new();
    let mut all = Vec::new();
    for url in urls {
        let gpus = active(url).await;
        per_agent.push(gpus.len());
        // The simulated agents share a host name, so GPU ids repeat across agents.
        all.extend(gpus.into_iter().map(|uuid| format!("{url} {uuid}")));
    }
    let total = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), total, "{context}: a GPU leased twice");
    assert_eq!(total, want, "{context}: the agents hold {per_agent:?}");
    per_agent
}

fn ok(output: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(
        output.status.success(),
        "ebb failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn add_host(dir: &Path, name: &str, url: &str, region: &str) {
    ok(&ebb(dir, &["hosts", "add", name, url, "--region", region]));
}

fn create_pool(dir: &Path, max: u32) {
    ok(&ebb(
        dir,
        &[
            "pool",
            "create",
            "train",
            "--model",
            "A100",
            "--region",
            "cn-north",
            "--min",
            "0",
            "--max",
            &max.to_string(),
        ],
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_scales_0_20_5_0_over_three_agent_processes() {
    let dir = temp_dir("pool-scale");
    let agents: Vec<AgentProcess> = (0..3)
        .map(|i| {
            let state = dir.join(format!("agent-{i}"));
            std::fs::create_dir_all(&state).unwrap();
            new_a100_agent(&state, 8).0
        })
        .collect();
    let data = dir.join("console");
    for (i, agent) in agents.iter().enumerate() {
        add_host(&data, &format!("gpu-{i}"), &agent.url, "cn-north");
    }
    create_pool(&data, 24);
    let urls: Vec<&str> = agents.iter().map(|a| a.url.as_str()).collect();
    for to in [20u32, 5, 0] {
        let out = ok(&ebb(
            &data,
            &["pool", "scale", "train", &to.to_string(), "--yes", "--wait"],
        ));
        assert!(out.contains("converged"), "{out}");
        assert_holds(&urls, to as usize, &format!("after scaling to {to}")).await;
    }
    let log = ok(&ebb(&data, &["activity", "--pool", "train", "--json"]));
    let entries: Vec<serde_json::Value> = serde_json::from_str(&log).unwrap();
    assert_eq!(entries.len(), 4, "{log}");
    assert_eq!(entries[2]["to"], 20);
    assert_eq!(entries[2]["outcome"], "done");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Forwards to `upstream`; while `armed`, holds every answer to a POST for `delay`.
struct SlowProxy {
    port: u16,
    armed: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl SlowProxy {
    async fn start(upstream: u16, delay: Duration) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let armed = Arc::new(AtomicBool::new(false));
        let armed_loop = armed.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let armed = armed_loop.clone();
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)).await else {
                        return;
                    };
                    let (mut client_read, mut client_write) = client.into_split();
                    let (mut server_read, mut server_write) = server.into_split();
                    let post = Arc::new(AtomicBool::new(false));
                    let post_up = post.clone();
                    let up = tokio::spawn(async move {
                        let mut buf = vec![0u8; 16 * 1024];
                        while let Ok(n) = client_read.read(&mut buf).await {
                            if n == 0 {
                                break;
                            }
                            if buf[..n].starts_with(b"POST ") {
                                post_up.store(true, Ordering::SeqCst);
                            }
                            if server_write.write_all(&buf[..n]).await.is_err() {
                                break;
                            }
                        }
                    });
                    let mut buf = vec![0u8; 16 * 1024];
                    while let Ok(n) = server_read.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        if post.swap(false, Ordering::SeqCst) && armed.load(Ordering::SeqCst) {
                            tokio::time::sleep(delay).await;
                        }
                        if client_write.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                    up.abort();
                });
            }
        });
        Self { port, armed, task }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for SlowProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `ebb pool scale` as a process we can kill.
fn spawn_scale(data: &Path, to: u32) -> Child {
    Command::new(ebb_tests::workspace_bin("ebb"))
        .arg("--data-dir")
        .arg(data)
        .args(["--token-store", "file", "pool", "scale", "train"])
        .arg(to.to_string())
        .args(["--yes", "--wait"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

async fn until<F, Fut>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_console_killed_mid_scale_out_converges_after_restart_with_nothing_doubled_or_leaked() {
    let dir = temp_dir("pool-kill-console");
    let (agents, ports): (Vec<AgentProcess>, Vec<u16>) = (0..3)
        .map(|i| {
            let state = dir.join(format!("agent-{i}"));
            std::fs::create_dir_all(&state).unwrap();
            new_a100_agent(&state, 4)
        })
        .unzip();
    // The last agent answers lease requests 2 s late: grants made, answers not yet heard.
    let proxy = SlowProxy::start(ports[2], Duration::from_secs(2)).await;
    let data = dir.join("console");
    add_host(&data, "gpu-0", &agents[0].url, "cn-north");
    add_host(&data, "gpu-1", &agents[1].url, "cn-north");
    add_host(&data, "gpu-2", &proxy.url(), "cn-north");
    create_pool(&data, 12);
    proxy.armed.store(true, Ordering::SeqCst);
    let mut console = spawn_scale(&data, 12);
    // Kill it the moment the slow agent has granted, before the console hears of it.
    let slow = agents[2].url.clone();
    until(
        "the slow agent's first grant",
        Duration::from_secs(20),
        || {
            let slow = slow.clone();
            async move { !active(&slow).await.is_empty() }
        },
    )
    .await;
    console.kill().unwrap();
    console.wait().unwrap();
    let urls: Vec<&str> = agents.iter().map(|a| a.url.as_str()).collect();
    let mut at_kill = 0;
    for url in &urls {
        at_kill += active(url).await.len();
    }
    eprintln!("{at_kill} GPUs held when the console was killed");
    // Restart: the unanswered requests go again with their keys.
    let out = ok(&ebb(
        &data,
        &["pool", "scale", "train", "12", "--yes", "--wait"],
    ));
    assert!(out.contains("converged"), "{out}");
    let per_agent = assert_holds(&urls, 12, "after the restart").await;
    assert_eq!(per_agent, vec![4, 4, 4]);
    // Every lease the agents ever granted us is one of the 12: none leaked, none made twice.
    let mut granted = 0;
    for url in &urls {
        granted += leases(url).await.len();
    }
    assert_eq!(
        granted, 12,
        "{at_kill} held at the kill; grants made: {granted}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_killed_mid_request_grants_once_when_the_key_is_retried() {
    let dir = temp_dir("pool-kill-agent");
    let state = dir.join("agent");
    std::fs::create_dir_all(&state).unwrap();
    let (agent, port) = new_a100_agent(&state, 4);
    let proxy = SlowProxy::start(port, Duration::from_secs(2)).await;
    let data = dir.join("console");
    add_host(&data, "gpu-0", &proxy.url(), "cn-north");
    create_pool(&data, 4);
    proxy.armed.store(true, Ordering::SeqCst);
    let mut console = spawn_scale(&data, 4);
    let url = agent.url.clone();
    until("the agent's first grant", Duration::from_secs(20), || {
        let url = url.clone();
        async move { !active(&url).await.is_empty() }
    })
    .await;
    // The agent dies with answers unsent; the console keeps its intents.
    drop(agent);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let agent = a100_agent(&state, port, 4);
    proxy.armed.store(false, Ordering::SeqCst);
    let status = tokio::task::spawn_blocking(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = console.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the console never converged");
            std::thread::sleep(Duration::from_millis(50));
        }
    })
    .await
    .unwrap();
    assert!(status.success(), "ebb pool scale ended with {status}");
    assert_holds(&[agent.url.as_str()], 4, "after the agent's restart").await;
    assert_eq!(
        leases(&agent.url).await.len(),
        4,
        "one allocation per request"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `ebb daemon` as the enforcer, with a short grace period.
struct Daemon(Child);

impl Daemon {
    fn start(data: &Path, grace_s: &str) -> Self {
        Self(
            Command::new(ebb_tests::workspace_bin("ebb"))
                .arg("--data-dir")
                .arg(data)
                .args(["--token-store", "file", "daemon"])
                .env("EBB_FAILOVER_GRACE_S", grace_s)
                .env("EBB_RECONCILE_INTERVAL_MS", "200")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        )
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_host_is_replaced_after_the_grace_period_and_its_stale_leases_released_on_return()
{
    let dir = temp_dir("pool-failover");
    let states: Vec<_> = (0..3)
        .map(|i| {
            let state = dir.join(format!("agent-{i}"));
            std::fs::create_dir_all(&state).unwrap();
            state
        })
        .collect();
    let (mut agents, ports): (Vec<Option<AgentProcess>>, Vec<u16>) = states
        .iter()
        .map(|state| {
            let (agent, port) = new_a100_agent(state, 4);
            (Some(agent), port)
        })
        .unzip();
    let urls: Vec<String> = agents
        .iter()
        .map(|a| a.as_ref().unwrap().url.clone())
        .collect();
    let data = dir.join("console");
    for (i, url) in urls.iter().enumerate() {
        add_host(&data, &format!("gpu-{i}"), url, "cn-north");
    }
    create_pool(&data, 12);
    let _daemon = Daemon::start(&data, "2");
    ok(&ebb(&data, &["pool", "scale", "train", "6", "--wait"]));
    let refs: Vec<&str> = urls.iter().map(String::as_str).collect();
    let before = assert_holds(&refs, 6, "before the stop").await;
    // Stop the host holding the most.
    let victim = (0..3).max_by_key(|&i| before[i]).unwrap();
    let lost = before[victim];
    agents[victim] = None;
    let stopped = Instant::now();
    let others: Vec<&str> = (0..3).filter(|&i| i != victim).map(|i| refs[i]).collect();
    until("replacements elsewhere", Duration::from_secs(20), || {
        let others = others.clone();
        async move {
            let mut held = 0;
            for url in &others {
                held += active(url).await.len();
            }
            held == 6
        }
    })
    .await;
    let replaced_after = stopped.elapsed();
    // Grace 2 s + one tick (0.2 s) + one round of timeouts, never before the grace period.
    assert!(
        replaced_after >= Duration::from_secs(2),
        "replaced after {replaced_after:?}, inside the grace period"
    );
    assert!(
        replaced_after < Duration::from_secs(8),
        "replaced after {replaced_after:?}"
    );
    // The host comes back with its {lost} old leases: they are stale and go.
    agents[victim] = Some(a100_agent(&states[victim], ports[victim], 4));
    let victim_url = refs[victim].to_string();
    until("the stale leases released", Duration::from_secs(20), || {
        let url = victim_url.clone();
        async move { active(&url).await.is_empty() }
    })
    .await;
    assert_holds(&refs, 6, "after the return").await;
    let log = ok(&ebb(&data, &["activity", "--pool", "train"]));
    assert!(log.contains("written off"), "{log}");
    assert!(log.contains("stale"), "{log}");
    eprintln!("replaced {lost} GPUs {replaced_after:?} after the host stopped");
    let _ = std::fs::remove_dir_all(&dir);
}
