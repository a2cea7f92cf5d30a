//! Rules with real processes on loopback: an `ebb-agent`, `ebb daemon` enforcing, and the
//! operator's systems pushing a custom metric (`ebb metric push`, and `POST /v1/metrics`
//! with its refusals). A threshold rule takes the pool out and back, the activity says
//! why each time, no GPU is held twice.

use crate::pools::{a100_agent, active};
use crate::{MetricsDaemon, http};
use ebb_testkit::{Cli, TempDir, eventually};
use std::time::Duration;

const RULES: &str = r#"
pool = "train"

[limits]
min_gpus = 1
max_gpus = 3

[scale_in]
force = true

[[metric]]
name = "queue_len"
stale_after_minutes = 2

[[threshold]]
name = "queue-high"
metric = "queue_len"
op = ">"
value = 10
for_minutes = 1
action = "+2"

[[threshold]]
name = "queue-low"
metric = "queue_len"
op = "<"
value = 2
for_minutes = 1
action = "-2"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pushed_metric_scales_a_pool_out_and_back_through_ebb_daemon() {
    let dir = TempDir::new("rules-daemon");
    let agent = a100_agent(&dir.subdir("agent"), 4);
    let data = dir.join("console");
    let cli = Cli::new(&data);
    cli.ok(&["hosts", "add", "gpu-0", &agent.url, "--region", "cn-north"]);
    cli.ok(&[
        "pool", "create", "train", "--model", "A100", "--region", "cn-north", "--min", "0",
        "--max", "4",
    ]);
    cli.ok(&["pool", "scale", "train", "1", "--yes", "--wait"]);

    // A rule file the linter refuses changes nothing and names the line and field.
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, RULES.replace("\"+2\"", "\"+lots\"")).unwrap();
    let refused = cli.run(&["rules", "set", "train", bad.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2));
    let said = String::from_utf8_lossy(&refused.stderr).to_string();
    assert!(said.contains(":21: error: threshold[0].action"), "{said}");
    assert!(cli.ok(&["rules", "show", "train"]).contains("no rules"));

    let file = dir.join("rules.toml");
    std::fs::write(&file, RULES).unwrap();
    // No cooldown: a warning to acknowledge (the operator scaled out a moment ago).
    let unacknowledged = cli.run(&["rules", "set", "train", file.to_str().unwrap()]);
    assert_eq!(unacknowledged.status.code(), Some(2));
    let said = String::from_utf8_lossy(&unacknowledged.stderr).to_string();
    assert!(
        said.contains("warning: threshold[0].cooldown_minutes"),
        "{said}"
    );
    assert!(said.contains("--yes"), "{said}");
    let saved = cli.ok(&["rules", "set", "train", file.to_str().unwrap(), "--yes"]);
    assert!(
        saved.contains("rules saved as version 1 (enabled)"),
        "{saved}"
    );

    // The daemon enforces, and serves the metrics endpoint on a port it picks and prints.
    let mut daemon = cli.command(&["daemon"]);
    daemon.env("EBB_FAILOVER_GRACE_S", "30");
    let daemon = MetricsDaemon::start(daemon);
    let url = format!("http://{}/v1/metrics", daemon.addr);
    let token = cli.ok(&["metric", "token", "new"]).trim().to_string();
    assert!(token.starts_with("ebbm_"), "{token}");

    // The endpoint's refusals, each naming what is wrong; nothing is stored by them.
    let client = http();
    let up = eventually("the metrics endpoint", Duration::from_secs(20), || async {
        client.post(&url).send().await.map(|r| r.status().as_u16())
    })
    .await;
    assert_eq!(up, 401, "no token");
    let post = |body: String, bearer: &str, content_type: &str| {
        client
            .post(&url)
            .header("Authorization", format!("Bearer {bearer}"))
            .header("Content-Type", content_type.to_string())
            .body(body)
            .send()
    };
    let json = "application/json";
    let answer = post(r#"{"name":"queue_len","value":1}"#.into(), "wrong", json)
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 401);
    let answer = post("{not json".into(), &token, json).await.unwrap();
    assert_eq!(answer.status().as_u16(), 400);
    let answer = post(
        r#"{"name":"queue_len","value":1}"#.into(),
        &token,
        "text/plain",
    )
    .await
    .unwrap();
    assert_eq!(answer.status().as_u16(), 415);
    let answer = post("[".repeat(70_000), &token, json).await.unwrap();
    assert_eq!(answer.status().as_u16(), 413);
    let answer = post(r#"{"name":"Queue Len","value":1}"#.into(), &token, json)
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 422);
    let body: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(body["field"], "name", "{body}");
    let answer = post(
        r#"{"name":"queue_len","value":1,"pool":"nope"}"#.into(),
        &token,
        json,
    )
    .await
    .unwrap();
    let body: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(body["field"], "pool", "{body}");

    // The same endpoint tells a Prometheus which agents to scrape (HTTP service discovery).
    let targets = format!("http://{}/v1/prometheus/targets", daemon.addr);
    let refused = client.get(&targets).send().await.unwrap();
    assert_eq!(refused.status().as_u16(), 401);
    let groups: serde_json::Value = client
        .get(&targets)
        .header("Authorization", format!("Bearer {token}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let agent_address = agent.url.trim_start_matches("http://").to_string();
    assert_eq!(groups[0]["targets"][0], agent_address.as_str(), "{groups}");
    assert_eq!(groups[0]["labels"]["host"], "gpu-0", "{groups}");
    assert_eq!(groups[0]["labels"]["region"], "cn-north", "{groups}");
    assert_eq!(
        groups[0]["labels"]["__metrics_path__"], "/metrics",
        "{groups}"
    );

    // A queue of 50 from the endpoint every 5 s, then the CLI: out by 2 once a whole
    // minute is over 10. The 5 s between pushes is the operator's system's cadence (the
    // scenario, not a wait): the rule's one-minute window runs on the daemon's wall clock.
    let started = std::time::Instant::now();
    let pushes = async {
        loop {
            let answer = post(
                r#"{"name":"queue_len","value":50,"pool":"train"}"#.into(),
                &token,
                json,
            )
            .await
            .unwrap();
            assert_eq!(answer.status().as_u16(), 200);
            tokio::time::sleep(Duration::from_secs(5)).await;
        }
    };
    let out = async {
        eventually(
            "the rule to scale out to 3",
            Duration::from_secs(120),
            || async {
                let active = active(&agent.url).await.len();
                (active == 3).then_some(()).ok_or(format!("{active} held"))
            },
        )
        .await
    };
    tokio::select! {
        () = pushes => unreachable!(),
        () = out => {}
    }
    let took = started.elapsed();
    eprintln!(
        "a 1-minute breach: 3 GPUs held {:.1} s after the first push, {:.1} s after its minute closed (the daemon's 1 s pass and the agent's grant included)",
        took.as_secs_f64(),
        took.as_secs_f64() - 60.0
    );
    assert!(
        took >= Duration::from_secs(55),
        "not before its minute: {took:?}"
    );

    // The queue drains (pushed with the CLI every 5 s, the same cadence): back to 1 after a
    // minute under 2.
    let drain = async {
        loop {
            Cli::new(&data).ok(&["metric", "push", "queue_len", "0", "--pool", "train"]);
            tokio::time::sleep(Duration::from_secs(5)).await;
        }
    };
    let back = async {
        eventually(
            "the rule to scale back to 1",
            Duration::from_secs(120),
            || async {
                let active = active(&agent.url).await.len();
                (active == 1).then_some(()).ok_or(format!("{active} held"))
            },
        )
        .await
    };
    tokio::select! {
        () = drain => unreachable!(),
        () = back => {}
    }

    // The activity shows both decisions with their reasons.
    let log = cli.ok(&["activity", "--pool", "train", "--rules"]);
    assert!(log.contains("queue-high: 1 → 3"), "{log}");
    assert!(log.contains("queue-low: 3 → 1"), "{log}");
    assert!(log.contains("rules saved as version 1"), "{log}");
    let shown = cli.ok(&["rules", "show", "train"]);
    assert!(shown.contains("rules version 1 (enabled)"), "{shown}");
    assert!(shown.contains("metric queue_len: 0"), "{shown}");
    // No GPU held twice.
    let held = active(&agent.url).await;
    let mut unique = held.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), held.len());
}
