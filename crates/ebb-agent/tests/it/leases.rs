//! Leases through the API: grants, idempotency, concurrency, bad input, workloads and
//! restarts.

use crate::support::{RestartableHost, TestAgent, json};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use ebb_agent::auth::Auth;
use ebb_agent::leases::LeaseConfig;
use ebb_testkit::{TempDir, eventually};
use ebb_wire::agent::{
    AgentErrorKind, ApiError, GpuList, Lease, LeaseList, LeaseListQuery, LeaseListState,
    LeaseRequest, LeaseState,
};
use proptest::prelude::*;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

const ONE: &str = r#"{"pool_id":"pool-a","holder_id":"console-1","count":1}"#;

async fn leases(agent: &TestAgent) -> Vec<Lease> {
    json::<LeaseList>(&agent.get("/v1/leases").await.1).leases
}

#[tokio::test]
async fn a_grant_takes_free_gpus_and_shows_on_them() {
    let agent = TestAgent::new(4).await;
    let (status, body) = agent
        .post_lease(
            "k1",
            r#"{"pool_id":"pool-a","holder_id":"console-1","count":3}"#,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let lease: Lease = json(&body);
    assert_eq!(lease.gpu_indexes, vec![0, 1, 2]);
    assert_eq!(lease.state, LeaseState::Active);
    assert_eq!(
        (lease.pool_id.as_str(), lease.holder_id.as_str()),
        ("pool-a", "console-1")
    );
    let gpus: GpuList = json(&agent.get("/v1/gpus").await.1);
    let held: Vec<Option<&str>> = gpus
        .gpus
        .iter()
        .map(|gpu| gpu.lease_id.as_deref())
        .collect();
    assert_eq!(
        held,
        vec![
            Some(lease.id.as_str()),
            Some(&lease.id),
            Some(&lease.id),
            None
        ]
    );
    let (status, body) = agent.get(&format!("/v1/leases/{}", lease.id)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(json::<Lease>(&body), lease);

    let (status, body) = agent
        .post_lease(
            "k2",
            r#"{"pool_id":"pool-a","holder_id":"console-1","count":2}"#,
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let error: ApiError = json(&body);
    assert_eq!(error.kind, AgentErrorKind::NotEnoughFree);
    assert_eq!(error.message, "count: asked for 2 GPUs but only 1 are free");
}

#[tokio::test]
async fn a_lease_answers_as_starting_until_its_workload_is_up() {
    let agent = TestAgent::starting_after(2, Duration::from_millis(400)).await;
    let (status, body) = agent.post_lease("k1", ONE).await;
    assert_eq!(status, StatusCode::CREATED);
    let lease: Lease = json(&body);
    assert!(lease.starting, "granted, its workload not up yet");
    assert_eq!(lease.state, LeaseState::Active);
    let id = lease.id.clone();
    eventually("the workload up", Duration::from_secs(10), || async {
        let lease: Lease = json(&agent.get(&format!("/v1/leases/{id}")).await.1);
        !lease.starting
    })
    .await;
    // A host whose workloads need no startup answers them up at once.
    let at_once = TestAgent::new(1).await;
    let lease: Lease = json(&at_once.post_lease("k1", ONE).await.1);
    assert!(!lease.starting);
}

#[tokio::test]
async fn a_key_replays_its_answer_and_refuses_another_body() {
    let agent = TestAgent::new(4).await;
    let (first_status, first) = agent.post_lease("same", ONE).await;
    let (again_status, again) = agent.post_lease("same", ONE).await;
    assert_eq!(
        (first_status, again_status),
        (StatusCode::CREATED, StatusCode::OK)
    );
    assert_eq!(first, again);
    let (status, body) = agent
        .post_lease(
            "same",
            r#"{"pool_id":"pool-a","holder_id":"console-1","count":2}"#,
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        json::<ApiError>(&body).kind,
        AgentErrorKind::IdempotencyKeyReused
    );
    assert_eq!(leases(&agent).await.len(), 1);
    let (status, body) = agent
        .send(
            Request::post("/v1/leases")
                .header("content-type", "application/json")
                .body(Body::from(ONE))
                .unwrap(),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        json::<ApiError>(&body)
            .message
            .starts_with("Idempotency-Key")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_requests_never_lease_a_gpu_twice() {
    let agent = Arc::new(TestAgent::new(8).await);
    let mut same_key = tokio::task::JoinSet::new();
    for _ in 0..100 {
        let agent = agent.clone();
        same_key.spawn(async move { agent.post_lease("one-key", ONE).await });
    }
    let mut bodies = HashSet::new();
    while let Some(result) = same_key.join_next().await {
        let (status, body) = result.unwrap();
        assert!(
            status == StatusCode::CREATED || status == StatusCode::OK,
            "{status}"
        );
        bodies.insert(body);
    }
    assert_eq!(bodies.len(), 1, "every answer is the one grant");
    assert_eq!(leases(&agent).await.len(), 1);

    let mut many_keys = tokio::task::JoinSet::new();
    for n in 0..20 {
        let agent = agent.clone();
        many_keys.spawn(async move { agent.post_lease(&format!("key-{n}"), ONE).await.0 });
    }
    let mut created = 0;
    while let Some(status) = many_keys.join_next().await {
        match status.unwrap() {
            StatusCode::CREATED => created += 1,
            StatusCode::CONFLICT => {}
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!(created, 7, "8 GPUs, one already held");
    let all = leases(&agent).await;
    let mut held = HashSet::new();
    for uuid in all.iter().flat_map(|lease| &lease.gpu_uuids) {
        assert!(held.insert(uuid.clone()), "{uuid} leased twice");
    }
    let fences: Vec<u64> = all.iter().map(|lease| lease.fencing_token).collect();
    assert!(
        fences.windows(2).all(|pair| pair[0] < pair[1]),
        "{fences:?}"
    );
}

#[tokio::test]
async fn bad_input_gets_a_clear_error_and_changes_nothing() {
    let agent = TestAgent::new(2).await;
    let post = |content_type: &str, body: String| {
        Request::post("/v1/leases")
            .header("content-type", content_type)
            .header("idempotency-key", "k")
            .body(Body::from(body))
            .unwrap()
    };
    let cases = [
        (
            post("application/json", "{nope".into()),
            StatusCode::BAD_REQUEST,
            "malformed_json",
            "",
        ),
        (
            post(
                "application/json",
                r#"{"pool_id":"p","holder_id":"h","count":1,"colour":1}"#.into(),
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
            "unknown field `colour`",
        ),
        (
            post(
                "application/json",
                r#"{"pool_id":"p","holder_id":"h","count":-2}"#.into(),
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
            "count",
        ),
        (
            post(
                "application/json",
                r#"{"pool_id":"p","holder_id":"h","count":0}"#.into(),
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
            "count: must be at least 1",
        ),
        (
            post(
                "application/json",
                r#"{"pool_id":"p","holder_id":"h","count":99999}"#.into(),
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
            "count: must be at most 1024",
        ),
        (
            post(
                "application/json",
                r#"{"pool_id":"p","holder_id":"h","count":3}"#.into(),
            ),
            StatusCode::CONFLICT,
            "not_enough_free",
            "only 2 are free",
        ),
        (
            post("text/plain", ONE.into()),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "Content-Type",
        ),
        (
            post(
                "application/json",
                format!(
                    r#"{{"pool_id":"{}","holder_id":"h","count":1}}"#,
                    "x".repeat(70_000)
                ),
            ),
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            "65536",
        ),
        (
            post(
                "application/json",
                r#"{"pool_id":"p","holder_id":"h","count":1,"command":["/no/such/program"]}"#
                    .into(),
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
            "command: `/no/such/program` is not an executable",
        ),
        (
            Request::delete("/v1/leases/lease-404")
                .body(Body::empty())
                .unwrap(),
            StatusCode::NOT_FOUND,
            "not_found",
            "no lease with id `lease-404`",
        ),
        (
            Request::get("/v1/leases/lease-404")
                .body(Body::empty())
                .unwrap(),
            StatusCode::NOT_FOUND,
            "not_found",
            "lease-404",
        ),
    ];
    for (request, status, kind, words) in cases {
        let what = format!("{} {}", request.method(), request.uri());
        let (got, body) = agent.send(request).await;
        let error: ApiError = json(&body);
        assert_eq!(
            (got, error.kind.as_str()),
            (status, kind),
            "{what}: {}",
            error.message
        );
        assert!(error.message.contains(words), "{what}: {}", error.message);
    }
    assert!(leases(&agent).await.is_empty(), "nothing was granted");
}

fn corpus() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/lease_bodies");
    let mut bodies: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            (
                path.file_name().unwrap().to_string_lossy().into(),
                std::fs::read_to_string(&path).unwrap(),
            )
        })
        .collect();
    bodies.sort();
    bodies
}

/// Sends one body and checks the invariants: never a server error, always JSON, and a
/// refused request leaves the leases as they were.
async fn check_body(agent: &TestAgent, key: &str, body: &str) -> Result<(), String> {
    let before = leases(agent).await;
    let (status, answer) = agent.post_lease(key, body).await;
    if status.is_server_error() {
        return Err(format!("{status} for {body:?}"));
    }
    if !status.is_success() {
        let error: ApiError =
            serde_json::from_slice(&answer).map_err(|error| format!("{error} for {body:?}"))?;
        if error.message.is_empty() {
            return Err(format!("empty message for {body:?}"));
        }
        if leases(agent).await != before {
            return Err(format!("{status} changed the leases for {body:?}"));
        }
    }
    Ok(())
}

#[tokio::test]
async fn the_corpus_of_odd_bodies_is_handled() {
    let agent = TestAgent::new(2).await;
    for (name, body) in corpus() {
        check_body(&agent, &name, &body).await.unwrap();
    }
    assert_eq!(
        leases(&agent).await.len(),
        1,
        "only ok_count.json is granted"
    );
}

fn arbitrary_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        (-1e6f64..1e6).prop_map(serde_json::Value::from),
        "[a-zA-Z0-9 _./-]{0,12}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("pool_id".to_string()),
                    Just("holder_id".to_string()),
                    Just("count".to_string()),
                    Just("gpu_uuids".to_string()),
                    Just("command".to_string()),
                    Just("load_profile".to_string()),
                    "[a-z]{1,6}",
                ],
                inner,
                0..6,
            )
            .prop_map(|map| serde_json::Value::Object(map.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
    #[test]
    fn arbitrary_bodies_never_break_the_agent(body in arbitrary_json(), key in "[a-z]{1,3}") {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let outcome = runtime.block_on(async {
            let agent = TestAgent::new(3).await;
            check_body(&agent, &key, &body.to_string()).await
        });
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }
}

async fn wait_released(agent: &TestAgent, id: &str) -> Lease {
    eventually(
        &format!("lease {id} released"),
        Duration::from_secs(5),
        || async {
            let lease: Lease = json(&agent.get(&format!("/v1/leases/{id}")).await.1);
            if lease.state == LeaseState::Released {
                Ok(lease)
            } else {
                Err(lease.state)
            }
        },
    )
    .await
}

/// Waits until the workload's log holds `line` (it printed it: its traps are set).
async fn wait_logged(log: &str, line: &str) {
    eventually(
        &format!("the workload to print {line:?}"),
        Duration::from_secs(5),
        || async {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            text.contains(line).then_some(()).ok_or(text)
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_signals_the_workload_and_records_how_it_ended() {
    let agent = TestAgent::with(4, Auth::open(), Duration::from_secs(5)).await;
    let script = r#"echo "gpus=$CUDA_VISIBLE_DEVICES"; trap 'echo got TERM; exit 7' TERM; while true; do sleep 0.05; done"#;
    let body = serde_json::json!({"pool_id": "p", "holder_id": "h", "count": 2, "command": ["sh", "-c", script]});
    let (status, answer) = agent.post_lease("w1", &body.to_string()).await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&answer)
    );
    let lease: Lease = json(&answer);
    assert!(lease.workload_pid.is_some());
    let log = lease.workload_log.clone().unwrap();
    // Let the shell set its trap before it is asked to stop.
    wait_logged(&log, "gpus=").await;
    let (status, answer) = agent.delete(&format!("/v1/leases/{}", lease.id)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(json::<Lease>(&answer).state, LeaseState::Releasing);
    let released = wait_released(&agent, &lease.id).await;
    assert_eq!(released.workload_exit_code, Some(7));
    assert!(released.released_at_ms.unwrap() >= released.release_requested_at_ms.unwrap());
    let output = std::fs::read_to_string(&log).unwrap();
    assert!(output.contains("gpus=0,1"), "{output}");
    assert!(output.contains("got TERM"), "{output}");
    let (status, again) = agent.delete(&format!("/v1/leases/{}", lease.id)).await;
    assert_eq!(status, StatusCode::OK, "a second release is a no-op");
    assert_eq!(json::<Lease>(&again), released);
    assert_eq!(
        agent
            .post_lease("w2", r#"{"pool_id":"p","holder_id":"h","count":4}"#)
            .await
            .0,
        StatusCode::CREATED
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let agent = TestAgent::with(1, Auth::open(), Duration::from_millis(300)).await;
    let script = r#"trap '' TERM; echo ready; while true; do sleep 0.05; done"#;
    let body = serde_json::json!({"pool_id": "p", "holder_id": "h", "count": 1, "command": ["sh", "-c", script]});
    let lease: Lease = json(&agent.post_lease("w", &body.to_string()).await.1);
    let log = lease.workload_log.clone().unwrap();
    wait_logged(&log, "ready").await;
    agent.delete(&format!("/v1/leases/{}", lease.id)).await;
    let released = wait_released(&agent, &lease.id).await;
    assert_eq!(released.workload_signal, Some(9), "{released:?}");
    let took = released.released_at_ms.unwrap() - released.release_requested_at_ms.unwrap();
    assert!(took >= 300, "waited the grace period first: {took} ms");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_says_it_saved_its_state_and_the_lease_reports_it_with_the_grace() {
    let agent = TestAgent::with(2, Auth::open(), Duration::from_secs(7)).await;
    // Through the API, for one without a command.
    let plain: Lease = json(&agent.post_lease("k", ONE).await.1);
    assert_eq!(plain.checkpoint_at_ms, None);
    assert_eq!(plain.release_grace_s, Some(7));
    let checkpoint = |id: &str| {
        Request::post(format!("/v1/leases/{id}/checkpoint"))
            .body(Body::empty())
            .unwrap()
    };
    let (status, body) = agent.send(checkpoint(&plain.id)).await;
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    let saved = json::<Lease>(&body)
        .checkpoint_at_ms
        .expect("a checkpoint time");
    let listed = leases(&agent).await;
    assert_eq!(
        listed[0].checkpoint_at_ms,
        Some(saved),
        "kept with the lease"
    );
    let (status, body) = agent.send(checkpoint("no-such-lease")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(json::<ApiError>(&body).kind, AgentErrorKind::NotFound);
    // A workload touches the file it is told of.
    let script = r#"sleep 0.2; touch "$EBB_CHECKPOINT_FILE"; while true; do sleep 0.05; done"#;
    let body = serde_json::json!({"pool_id": "p", "holder_id": "h", "count": 1, "command": ["sh", "-c", script]});
    let (status, answer) = agent.post_lease("w", &body.to_string()).await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&answer)
    );
    let worker: Lease = json(&answer);
    let seen = eventually(
        "the workload's checkpoint seen on its lease",
        Duration::from_secs(5),
        || async {
            let (_, body) = agent.get(&format!("/v1/leases/{}", worker.id)).await;
            json::<Lease>(&body).checkpoint_at_ms
        },
    )
    .await;
    assert!(seen >= worker.created_at_ms, "{seen}");
    // Released, it can no longer say so.
    agent.delete(&format!("/v1/leases/{}", plain.id)).await;
    let (status, body) = agent.send(checkpoint(&plain.id)).await;
    assert_eq!(
        status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        String::from_utf8_lossy(&body)
    );
    agent.delete(&format!("/v1/leases/{}", worker.id)).await;
    wait_released(&agent, &worker.id).await;
}

#[tokio::test]
async fn a_release_without_workload_is_immediate() {
    let agent = TestAgent::new(2).await;
    let lease: Lease = json(&agent.post_lease("k", ONE).await.1);
    let (status, body) = agent.delete(&format!("/v1/leases/{}", lease.id)).await;
    assert_eq!(status, StatusCode::OK);
    let released: Lease = json(&body);
    assert_eq!(released.state, LeaseState::Released);
    let gpus: GpuList = json(&agent.get("/v1/gpus").await.1);
    assert!(gpus.gpus.iter().all(|gpu| gpu.lease_id.is_none()));
}

#[tokio::test]
async fn leases_keys_and_fences_survive_a_restart() {
    let dir = TempDir::new("agent-leases-restart");
    let request: LeaseRequest = serde_json::from_str(ONE).unwrap();
    let host = RestartableHost::new(&dir);
    let start = || host.start(LeaseConfig::default());
    let first = start().await;
    let granted = first.create("key-1", &request).await.unwrap().lease;
    let released = first.create("key-2", &request).await.unwrap().lease;
    first.release(&released.id).await.unwrap();
    first.shutdown().await;
    drop(first);

    let second = start().await;
    let replay = second.create("key-1", &request).await.unwrap();
    assert!(!replay.new);
    assert_eq!(replay.lease, granted);
    let all = second
        .list(LeaseListQuery {
            state: Some(LeaseListState::All),
        })
        .await;
    assert_eq!(all.len(), 2);
    assert_eq!(all[1].state, LeaseState::Released);
    let next = second.create("key-3", &request).await.unwrap().lease;
    assert_eq!(next.fencing_token, released.fencing_token + 1);
    assert_eq!(
        next.gpu_indexes,
        vec![1],
        "GPU 0 is still held; GPU 1 was released"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Polls the inner future at most `polls` times, then drops it: a client that went away.
struct Abandon<F> {
    future: std::pin::Pin<Box<F>>,
    polls: usize,
}

impl<F: std::future::Future> std::future::Future for Abandon<F> {
    type Output = Option<F::Output>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        if self.polls == 0 {
            return std::task::Poll::Ready(None);
        }
        self.polls -= 1;
        self.future.as_mut().poll(cx).map(Some)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_abandoned_at_any_point_grants_at_most_once_and_its_retry_answers() {
    use tower::ServiceExt;
    let agent = TestAgent::new(2).await;
    let body = r#"{"pool_id":"p","holder_id":"c","count":1}"#;
    for polls in 0..80 {
        let key = format!("abandoned-{polls}");
        let request = axum::http::Request::post("/v1/leases")
            .header("content-type", "application/json")
            .header("idempotency-key", &key)
            .body(axum::body::Body::from(body))
            .unwrap();
        let call = ebb_agent::app(agent.state.clone()).oneshot(request);
        let _ = Abandon {
            future: Box::pin(call),
            polls,
        }
        .await;
        // No wait for the abandoned request: what it started (its grant, in a task of its
        // own) holds the ledger while it runs, so the retry is answered after it, or before
        // it and then replayed by it; either way one grant.
        let (status, answer) = agent.post_lease(&key, body).await;
        assert!(
            status == StatusCode::OK || status == StatusCode::CREATED,
            "abandoned after {polls} polls, the retry got {status}: {}",
            String::from_utf8_lossy(&answer)
        );
        let lease: Lease = json(&answer);
        let (status, _) = agent.delete(&format!("/v1/leases/{}", lease.id)).await;
        assert!(status.is_success());
        let (_, list) = agent.get("/v1/leases").await;
        let list: LeaseList = json(&list);
        let live = list
            .leases
            .iter()
            .filter(|l| l.state != ebb_wire::agent::LeaseState::Released)
            .count();
        assert_eq!(live, 0, "after {polls} polls a grant was left behind");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_stops_the_workload_and_starts_it_again_on_the_same_gpus_and_lease() {
    // A grace the workload's TERM trap always gets to run in, however loaded the machine
    // (it exits at once on TERM; with 300 ms a busy machine killed it first, unheard).
    let agent = TestAgent::with(3, Auth::open(), Duration::from_secs(5)).await;
    let script = r#"echo "start gpus=$CUDA_VISIBLE_DEVICES"; trap 'echo got TERM; exit 3' TERM; while true; do sleep 0.05; done"#;
    let body = serde_json::json!({"pool_id": "p", "holder_id": "h", "count": 2, "command": ["sh", "-c", script]});
    let lease: Lease = json(&agent.post_lease("w", &body.to_string()).await.1);
    let log = lease.workload_log.clone().unwrap();
    wait_logged(&log, "start gpus=0,1").await;
    let restart = |id: &str| {
        Request::post(format!("/v1/leases/{id}/restart"))
            .body(Body::empty())
            .unwrap()
    };
    let (status, body) = agent.send(restart(&lease.id)).await;
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    let again = json::<Lease>(&body);
    assert_eq!(again.id, lease.id);
    assert_eq!(again.gpu_uuids, lease.gpu_uuids);
    assert_eq!(again.state, LeaseState::Active);
    assert_eq!(
        again.created_at_ms, lease.created_at_ms,
        "its paid time unchanged"
    );
    assert_ne!(again.workload_pid, lease.workload_pid, "a new process");
    let output = std::fs::read_to_string(&log).unwrap();
    assert!(output.contains("got TERM"), "{output}");
    // The earlier process's exit is not taken for the new one's.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (_, shown) = agent.get(&format!("/v1/leases/{}", lease.id)).await;
    let shown = json::<Lease>(&shown);
    assert_eq!(shown.workload_exit_code, None, "{shown:?}");
    assert_eq!(shown.workload_pid, again.workload_pid);
    // A lease without a command has nothing to restart; an unknown one is not found.
    let plain: Lease = json(&agent.post_lease("k", ONE).await.1);
    let (status, body) = agent.send(restart(&plain.id)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(String::from_utf8_lossy(&body).contains("no workload"));
    let (status, _) = agent.send(restart("no-such-lease")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    agent.delete(&format!("/v1/leases/{}", lease.id)).await;
    wait_released(&agent, &lease.id).await;
    let (status, body) = agent.send(restart(&lease.id)).await;
    assert_eq!(
        status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        String::from_utf8_lossy(&body)
    );
}
