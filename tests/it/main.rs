//! A real `ebb-agent` process on a loopback port, read by the console core and the CLI.

use ebb_core::client::{AgentClient, ClientConfig};
use ebb_core::collect::{Collector, CollectorConfig, Target};
use ebb_tests::workspace_bin;
use ebb_wire::ipc::Health;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A spawned agent, killed when dropped.
struct AgentProcess {
    child: Child,
    url: String,
}

impl AgentProcess {
    fn spawn(gpus: u32) -> Self {
        let mut child = Command::new(workspace_bin("ebb-agent"))
            .args(["serve", "--listen", "127.0.0.1:0", "--host-name", "it-host"])
            .args(["--model", "H800", "--gpus", &gpus.to_string()])
            .args(["--period-s", "20", "--interval-ms", "200"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("ebb-agent starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from ebb-agent: {line:?}"))
            .to_string();
        Self { child, url }
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_core_polls_a_real_agent_process_and_sees_it_go() {
    let agent = AgentProcess::spawn(4);
    let client = AgentClient::new(&agent.url, ClientConfig::default()).unwrap();
    let health = client.health().await.unwrap();
    assert_eq!((health.host.as_str(), health.api_version), ("it-host", 1));

    let collector = Collector::start(
        vec![Target {
            name: "it-host".into(),
            url: agent.url.clone(),
            region: "cn-east".into(),
        }],
        CollectorConfig {
            interval: Duration::from_millis(200),
            ..CollectorConfig::default()
        },
    )
    .unwrap();
    let mut states = collector.subscribe();
    let state = tokio::time::timeout(Duration::from_secs(15), async {
        loop {
            states.changed().await.unwrap();
            let state = states.borrow().clone();
            if state
                .history
                .host_series("it-host")
                .iter()
                .all(|gpu| gpu.points.len() >= 4)
            {
                return state;
            }
        }
    })
    .await
    .expect("four samples of every GPU within 15 s");
    let host = &state.snapshot.hosts[0];
    assert_eq!(host.health, Health::Online);
    assert_eq!(host.gpu_count, 4);
    assert_eq!(host.models, vec!["NVIDIA H800".to_string()]);
    let series = state.history.host_series("it-host");
    assert_eq!(series.len(), 4);
    for gpu in &series {
        let times: Vec<f64> = gpu.points.iter().map(|point| point.t_ms).collect();
        assert!(times.windows(2).all(|pair| pair[0] < pair[1]), "{times:?}");
    }

    drop(agent);
    let offline = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            states.changed().await.unwrap();
            let state = states.borrow().clone();
            if state.snapshot.hosts[0].health == Health::Offline {
                return state;
            }
        }
    })
    .await
    .expect("the killed agent is offline within 10 s");
    let reason = offline.snapshot.hosts[0].last_error.clone().unwrap();
    assert!(reason.contains("127.0.0.1"), "{reason}");
    collector.stop().await;
}

#[test]
fn the_cli_reads_a_real_agent() {
    let agent = AgentProcess::spawn(2);
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
