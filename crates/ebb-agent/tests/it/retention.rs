//! Released leases: listed only when asked for, kept for the retention with the keys that
//! granted them, then forgotten (at start and on a timer).

use crate::support::{RestartableHost, TestAgent, json};
use axum::http::StatusCode;
use ebb_agent::leases::LeaseConfig;
use ebb_testkit::{TempDir, eventually};
use ebb_wire::agent::{
    AgentErrorKind, ApiError, Lease, LeaseList, LeaseListQuery, LeaseListState, LeaseRequest,
    LeaseState,
};
use std::time::Duration;

const ONE: &str = r#"{"pool_id":"pool-a","holder_id":"console-1","count":1}"#;
const HOUR_MS: u64 = 3_600_000;

async fn listed(agent: &TestAgent, path: &str) -> Vec<(String, LeaseState)> {
    let (status, body) = agent.get(path).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "{path}: {}",
        String::from_utf8_lossy(&body)
    );
    json::<LeaseList>(&body)
        .leases
        .into_iter()
        .map(|lease| (lease.id, lease.state))
        .collect()
}

async fn released_gauge(agent: &TestAgent) -> f64 {
    let text = String::from_utf8(agent.get("/metrics").await.1).unwrap();
    assert!(
        text.contains("# HELP ebb_leases Leases by state; released counts those kept, released within the retention (lease_retention_h)."),
        "{text}"
    );
    let scrape =
        prometheus_parse::Scrape::parse(text.lines().map(|line| Ok(line.to_string()))).unwrap();
    let sample = scrape
        .samples
        .iter()
        .find(|s| s.metric == "ebb_leases" && s.labels.get("state") == Some("released"))
        .unwrap();
    match sample.value {
        prometheus_parse::Value::Gauge(count) => count,
        ref other => panic!("not a gauge: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_holds_the_leases_not_yet_released_unless_asked_for_history() {
    let agent =
        TestAgent::with_retention(4, Duration::from_millis(500), Duration::from_secs(3600)).await;
    let active: Lease = json(&agent.post_lease("active", ONE).await.1);
    let gone: Lease = json(&agent.post_lease("gone", ONE).await.1);
    let (status, _) = agent.delete(&format!("/v1/leases/{}", gone.id)).await;
    assert_eq!(status, StatusCode::OK, "released at once: no workload");
    // A workload that ignores SIGTERM keeps its lease releasing for the grace period.
    let script = r#"trap '' TERM; echo ready; while true; do sleep 0.05; done"#;
    let body = serde_json::json!({"pool_id": "pool-a", "holder_id": "console-1", "count": 1, "command": ["sh", "-c", script]});
    let stopping: Lease = json(&agent.post_lease("stopping", &body.to_string()).await.1);
    let log = stopping.workload_log.clone().unwrap();
    eventually("the workload ready", Duration::from_secs(5), || async {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("ready")
    })
    .await;
    let (status, _) = agent.delete(&format!("/v1/leases/{}", stopping.id)).await;
    assert_eq!(status, StatusCode::ACCEPTED);

    assert_eq!(
        listed(&agent, "/v1/leases").await,
        vec![
            (active.id.clone(), LeaseState::Active),
            (stopping.id.clone(), LeaseState::Releasing),
        ],
        "by default: not yet released"
    );
    assert_eq!(
        listed(&agent, "/v1/leases?state=all").await,
        vec![
            (active.id.clone(), LeaseState::Active),
            (gone.id.clone(), LeaseState::Released),
            (stopping.id.clone(), LeaseState::Releasing),
        ],
        "all: oldest grant first"
    );
    assert_eq!(
        listed(&agent, "/v1/leases?state=released").await,
        vec![(gone.id.clone(), LeaseState::Released)]
    );
    assert_eq!(released_gauge(&agent).await, 1.0);
    for bad in ["bogus", "", "ALL", "active", "all&state=nope"] {
        let (status, body) = agent.get(&format!("/v1/leases?state={bad}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "state={bad}");
        let error: ApiError = json(&body);
        assert_eq!(error.kind, AgentErrorKind::InvalidRequest);
        assert!(
            error.message.starts_with("state: `")
                && error.message.contains("use `all`")
                && error.message.contains("or `released`")
                && error.message.contains("leave it out"),
            "state={bad}: {}",
            error.message
        );
    }
    let (_, body) = agent.get("/v1/leases?state=bogus").await;
    assert!(
        json::<ApiError>(&body)
            .message
            .starts_with("state: `bogus` is not allowed"),
    );
    // Another parameter is none of the list's business.
    assert_eq!(listed(&agent, "/v1/leases?page=2").await.len(), 2);
    // Once the workload is killed the lease leaves the default list.
    eventually(
        "the releasing lease released",
        Duration::from_secs(5),
        || async { listed(&agent, "/v1/leases").await.len() == 1 },
    )
    .await;
}

#[tokio::test]
async fn a_released_lease_and_its_key_are_kept_for_the_retention_then_forgotten() {
    let agent =
        TestAgent::with_retention(2, Duration::from_secs(5), Duration::from_millis(HOUR_MS)).await;
    let (status, answer) = agent.post_lease("key-1", ONE).await;
    assert_eq!(status, StatusCode::CREATED);
    let granted: Lease = json(&answer);
    let released: Lease = json(&agent.delete(&format!("/v1/leases/{}", granted.id)).await.1);
    let released_at = released.released_at_ms.unwrap();
    let leases = agent.state.leases.clone();

    // To the millisecond of its retention: kept, and its key replays the grant.
    assert_eq!(
        leases.prune_released(released_at + HOUR_MS).await.unwrap(),
        0
    );
    let (status, replay) = agent.post_lease("key-1", ONE).await;
    assert_eq!(status, StatusCode::OK, "a retry, not a new grant");
    assert_eq!(json::<Lease>(&replay), granted, "the first answer again");
    assert_eq!(
        listed(&agent, "/v1/leases?state=released").await,
        vec![(granted.id.clone(), LeaseState::Released)]
    );
    assert!(listed(&agent, "/v1/leases").await.is_empty());
    assert_eq!(released_gauge(&agent).await, 1.0);

    // Past it: the lease and its key are forgotten.
    assert_eq!(
        leases
            .prune_released(released_at + HOUR_MS + 1)
            .await
            .unwrap(),
        1
    );
    assert!(listed(&agent, "/v1/leases?state=all").await.is_empty());
    let (status, _) = agent.get(&format!("/v1/leases/{}", granted.id)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(released_gauge(&agent).await, 0.0);
    // A retry of the key now is a new request: a new lease with a new fence.
    let (status, answer) = agent.post_lease("key-1", ONE).await;
    assert_eq!(status, StatusCode::CREATED);
    let again: Lease = json(&answer);
    assert_ne!(again.id, granted.id);
    assert!(again.fencing_token > granted.fencing_token);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn released_leases_past_the_retention_are_pruned_at_start_and_on_a_timer() {
    let dir = TempDir::new("agent-leases-retention");
    let request: LeaseRequest = serde_json::from_str(ONE).unwrap();
    let host = RestartableHost::new(dir.path());
    let start = |retention: Duration| {
        host.start(LeaseConfig {
            retention,
            ..LeaseConfig::default()
        })
    };
    let all = LeaseListQuery {
        state: Some(LeaseListState::All),
    };
    let ids = |leases: Vec<Lease>| leases.into_iter().map(|l| l.id).collect::<Vec<_>>();

    let first = start(Duration::from_secs(3600)).await;
    let old = first.create("old", &request).await.unwrap().lease;
    let kept = first.create("kept", &request).await.unwrap().lease;
    first.release(&old.id).await.unwrap();
    first.shutdown().await;
    drop(first);

    // Within the retention a restart keeps the released lease, and its key still replays.
    let second = start(Duration::from_secs(3600)).await;
    assert_eq!(
        ids(second.list(all).await),
        vec![old.id.clone(), kept.id.clone()]
    );
    let replay = second.create("old", &request).await.unwrap();
    assert!(!replay.new, "replayed after a restart");
    assert_eq!(replay.lease, old);
    second.shutdown().await;
    drop(second);

    // Started with a retention already past: pruned before the first request. The agent
    // keeps release times on the wall clock (no clock is injected here): 20 ms of it must
    // pass for a 10 ms retention to be over, which is the thing under test, not a wait.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let third = start(Duration::from_millis(10)).await;
    assert_eq!(ids(third.list(all).await), vec![kept.id.clone()]);
    // ... and on the timer (every second at this retention) from then on.
    third.release(&kept.id).await.unwrap();
    eventually(
        "the released lease pruned by the timer",
        Duration::from_secs(10),
        || async { third.list(all).await.is_empty() },
    )
    .await;
    third.shutdown().await;
    drop(third);

    // Gone from the store too, keys included; fences still only grow.
    let fourth = start(Duration::from_secs(3600)).await;
    assert!(fourth.list(all).await.is_empty());
    let fresh = fourth.create("old", &request).await.unwrap();
    assert!(fresh.new, "the forgotten key is a new request");
    assert!(fresh.lease.fencing_token > kept.fencing_token);
    fourth.shutdown().await;
}
