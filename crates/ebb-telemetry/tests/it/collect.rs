//! The collector against a virtual fleet, a dead host and a hung host.
//!
//! These stay on real time: every wait here is for real IO (HTTP to agents on loopback,
//! a client timeout on a socket that never answers), and tokio's paused clock would jump
//! past the timeouts while the sockets are still busy.

use ebb_telemetry::client::AgentAccess;
use ebb_telemetry::collect::{Collector, CollectorConfig, Target, Tick};
use ebb_testkit::{TestFleet, bound_listener, eventually};
use ebb_wire::ipc::FleetSnapshot;
use ebb_wire::ipc::Health;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};

fn fast() -> CollectorConfig {
    CollectorConfig {
        interval: Duration::from_millis(100),
        ..CollectorConfig::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collects_a_fleet_while_a_hung_host_and_a_dead_one_fail_alone() {
    let fleet = TestFleet::builder().hosts(2).gpus_per_host(3).start().await;
    // A hung host: accepts connections, never answers.
    let (hung, hung_addr) = bound_listener().await;
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = hung.accept().await {
            held.push(socket);
        }
    });
    let mut all = fleet.targets();
    all.push(Target {
        name: "hung".into(),
        region: "cn-east".into(),
        access: AgentAccess::open(&format!("http://{hung_addr}")),
    });
    all.push(Target {
        name: "gone".into(),
        region: "cn-east".into(),
        access: AgentAccess::open("http://127.0.0.1:1"),
    });
    let (sink, mut ticks) = mpsc::channel::<Tick>(64);
    let collector = Collector::start(all, fast(), Some(sink)).unwrap();
    let mut samples_per_host = std::collections::HashMap::<String, Vec<u64>>::new();
    let mut last = None;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while tokio::time::Instant::now() < deadline {
        let tick = tokio::time::timeout(Duration::from_secs(5), ticks.recv())
            .await
            .unwrap_or_else(|_| panic!("no tick within 5 s; samples so far {samples_per_host:?}"))
            .expect("the collector runs");
        for list in &tick.samples {
            samples_per_host
                .entry(list.host.clone())
                .or_default()
                .push(list.sampled_at_ms);
        }
        let done = tick
            .snapshot
            .hosts
            .iter()
            .any(|host| host.name == "gone" && host.health == Health::Offline)
            && tick
                .snapshot
                .hosts
                .iter()
                .any(|host| host.name == "hung" && host.health != Health::Unknown)
            && fleet.hosts().iter().all(|host| {
                samples_per_host
                    .get(&host.name)
                    .is_some_and(|seen| seen.len() >= 5)
            });
        last = Some(tick);
        if done {
            break;
        }
    }
    // Whether the loop ended done or at the deadline, the asserts below say what it saw.
    let tick = last.expect("at least one tick");
    let by_name = |name: &str| {
        tick.snapshot
            .hosts
            .iter()
            .find(|host| host.name == name)
            .unwrap()
            .clone()
    };
    for host in fleet.hosts() {
        assert_eq!(by_name(&host.name).health, Health::Online, "{}", host.name);
        let times = &samples_per_host[&host.name];
        assert!(
            times.len() >= 5,
            "the hung host does not starve {}: {times:?}",
            host.name
        );
        assert!(
            times.windows(2).all(|pair| pair[0] < pair[1]),
            "no reading stored twice: {times:?}"
        );
    }
    let gone = by_name("gone");
    assert_eq!(gone.health, Health::Offline, "{gone:?}");
    let reason = gone.last_error.unwrap().to_string();
    assert!(reason.contains("refused the connection"), "{reason}");
    let hung = by_name("hung");
    assert_ne!(hung.health, Health::Online);
    let reason = hung.last_error.unwrap().to_string();
    assert!(
        reason.contains("no answer"),
        "the hung host times out: {reason}"
    );
    collector.stop().await;
    hold.abort();
    fleet.stop().await;
}

/// Waits until the snapshot holds exactly `names`, in order, each online; a timeout says
/// which hosts it saw in which health.
async fn online(snapshots: &watch::Receiver<Arc<FleetSnapshot>>, names: &[&str]) {
    eventually(
        &format!("exactly {names:?} online"),
        Duration::from_secs(10),
        || {
            let snapshot = snapshots.borrow().clone();
            async move {
                let seen: Vec<(String, Health)> = snapshot
                    .hosts
                    .iter()
                    .map(|host| (host.name.clone(), host.health))
                    .collect();
                let all_online = seen.len() == names.len()
                    && seen
                        .iter()
                        .zip(names)
                        .all(|((name, health), want)| name == want && *health == Health::Online);
                all_online.then_some(()).ok_or(seen)
            }
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn targets_can_change_while_collecting() {
    let fleet = TestFleet::builder().hosts(2).gpus_per_host(1).start().await;
    let all = fleet.targets();
    let collector = Collector::start(vec![all[0].clone()], fast(), None).unwrap();
    let snapshots = collector.subscribe();
    online(&snapshots, &[&all[0].name]).await;
    collector.set_targets(all.clone());
    online(&snapshots, &[&all[0].name, &all[1].name]).await;
    collector.set_targets(vec![all[1].clone()]);
    online(&snapshots, &[&all[1].name]).await;
    collector.stop().await;
    fleet.stop().await;
}

/// A host's first round is published as soon as every new host has answered, not at the
/// next tick: with ticks an hour apart the fleet is still seen online at once, at start and
/// when a host is added.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_hosts_are_published_once_they_answer_not_at_the_next_tick() {
    let fleet = TestFleet::builder().hosts(2).gpus_per_host(1).start().await;
    let all = fleet.targets();
    let hourly = CollectorConfig {
        interval: Duration::from_secs(3600),
        ..CollectorConfig::default()
    };
    let collector = Collector::start(vec![all[0].clone()], hourly, None).unwrap();
    let snapshots = collector.subscribe();
    online(&snapshots, &[&all[0].name]).await;
    collector.set_targets(all.clone());
    online(&snapshots, &[&all[0].name, &all[1].name]).await;
    collector.stop().await;
    fleet.stop().await;
}

/// A server on a loopback port that answers every connection with `reply` and closes.
async fn answering(reply: &'static [u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (listener, addr) = bound_listener().await;
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = [0u8; 1024];
            let _ = tokio::time::timeout(Duration::from_millis(200), socket.read(&mut buf)).await;
            let _ = socket.write_all(reply).await;
            let _ = socket.shutdown().await;
        }
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn something_else_on_the_port_is_not_an_ebb_agent() {
    use ebb_telemetry::client::{AgentClient, ClientConfig};
    use ebb_wire::reasons::HostProblem;
    let cases: [(&str, &'static [u8]); 3] = [
        (
            "a web server's 404 page",
            b"HTTP/1.1 404 Not Found\r\ncontent-type: text/html\r\ncontent-length: 9\r\nconnection: close\r\n\r\nnot found",
        ),
        (
            "a web server's 200 page",
            b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 6\r\nconnection: close\r\n\r\n<html>",
        ),
        ("an SSH banner", b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n"),
    ];
    for (what, reply) in cases {
        let url = answering(reply).await;
        let client = AgentClient::new(&url, ClientConfig::default()).unwrap();
        let problem = client.health().await.unwrap_err();
        assert!(
            matches!(problem, HostProblem::Decode { .. }),
            "{what}: {problem:?}"
        );
        assert!(
            problem
                .to_string()
                .contains("not an Ebb agent (wrong port?)"),
            "{what}: {problem}"
        );
    }
    // A 5xx without the agent's body may be a proxy in front of one: a status.
    let url =
        answering(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await;
    let client = AgentClient::new(&url, ClientConfig::default()).unwrap();
    assert!(matches!(
        client.health().await.unwrap_err(),
        HostProblem::Status { status: 502, .. }
    ));
}

/// Polls out of phase with sampling (every 350 ms against samples every 100 ms) still store
/// every sample the agents took: each poll reads the samples by number since the last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_sample_an_agent_took_is_collected_once() {
    let fleet = TestFleet::builder()
        .hosts(2)
        .gpus_per_host(2)
        .sample_interval(Duration::from_millis(100))
        .start()
        .await;
    let (sink, mut ticks) = mpsc::channel::<Tick>(64);
    let config = CollectorConfig {
        interval: Duration::from_millis(350),
        ..CollectorConfig::default()
    };
    let collector = Collector::start(fleet.targets(), config, Some(sink)).unwrap();
    let mut stored = std::collections::HashMap::<String, Vec<u64>>::new();
    let started = tokio::time::Instant::now();
    while started.elapsed() < Duration::from_secs(4) {
        let tick = tokio::time::timeout(Duration::from_secs(5), ticks.recv())
            .await
            .expect("a tick within 5 s")
            .expect("the collector runs");
        for list in &tick.samples {
            stored
                .entry(list.host.clone())
                .or_default()
                .push(list.sampled_at_ms);
        }
    }
    collector.stop().await;
    for target in fleet.targets() {
        let got = &stored[&target.name];
        assert!(
            got.windows(2).all(|pair| pair[0] < pair[1]),
            "{}: stored in order, each once: {got:?}",
            target.name
        );
        // What the agent itself took over the same span (it keeps the last minute).
        let client = ebb_telemetry::client::AgentClient::with_access(
            &target.access,
            ebb_telemetry::client::ClientConfig::default(),
        )
        .unwrap();
        let taken: Vec<u64> = client
            .samples(None)
            .await
            .unwrap()
            .samples
            .iter()
            .map(|list| list.sampled_at_ms)
            .filter(|at| (got[0]..=*got.last().unwrap()).contains(at))
            .collect();
        assert_eq!(
            got, &taken,
            "{}: every sample taken between the first and the last stored",
            target.name
        );
        assert!(
            got.len() >= 20,
            "{}: {} samples in 4 s",
            target.name,
            got.len()
        );
        println!(
            "{}: {} samples taken, {} stored",
            target.name,
            taken.len(),
            got.len()
        );
    }
    fleet.stop().await;
}
