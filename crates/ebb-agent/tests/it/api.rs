//! The read side of the API, auth, and metrics.

use crate::support::{TestAgent, json, token_entry};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use ebb_agent::auth::{Auth, Scope};
use ebb_wire::agent::{AgentErrorKind, ApiError, GpuList, Health, SampleBatch};
use std::time::Duration;

#[tokio::test]
async fn health_reports_version_and_backend() {
    let agent = TestAgent::new(2).await;
    let (status, body) = agent.get("/v1/health").await;
    assert_eq!(status, StatusCode::OK);
    let health: Health = json(&body);
    assert_eq!(health.status, "ok");
    assert_eq!(health.api_version, 1);
    assert_eq!(health.host, "host-a");
    assert_eq!(health.backend, "simulator");
}

#[tokio::test]
async fn gpus_serves_the_latest_sample_with_every_reading() {
    let agent = TestAgent::new(8).await;
    let (status, body) = agent.get("/v1/gpus").await;
    assert_eq!(status, StatusCode::OK);
    let list: GpuList = json(&body);
    assert_eq!((list.host.as_str(), list.sampled_at_ms), ("host-a", 5_000));
    assert_eq!(list.gpus.len(), 8);
    let indexes: Vec<u32> = list.gpus.iter().map(|gpu| gpu.index).collect();
    assert_eq!(indexes, (0..8).collect::<Vec<_>>());
    for gpu in &list.gpus {
        assert_eq!(gpu.model, "NVIDIA H800");
        assert_eq!(gpu.memory_total_mib, Some(81_920));
        assert!(gpu.healthy);
        assert!(gpu.gpu_util_pct.is_some() && gpu.sm_clock_mhz.is_some());
        assert_eq!(gpu.lease_id, None);
    }
}

#[tokio::test]
async fn samples_come_by_number_once_each_and_a_bad_number_is_named() {
    let agent = TestAgent::new(2).await;
    let latest = agent.state.latest.borrow().clone();
    for at in [1_000, 2_000, 3_000] {
        agent.state.history.push(std::sync::Arc::new(GpuList {
            sampled_at_ms: at,
            ..(*latest).clone()
        }));
    }
    let times = |batch: &SampleBatch| -> Vec<u64> {
        batch
            .samples
            .iter()
            .map(|list| list.sampled_at_ms)
            .collect()
    };
    let (status, body) = agent.get("/v1/samples").await;
    assert_eq!(status, StatusCode::OK);
    let first: SampleBatch = json(&body);
    assert_eq!((first.boot.as_str(), first.last_seq), ("test", 3));
    assert_eq!(times(&first), vec![1_000, 2_000, 3_000]);
    let (_, body) = agent.get("/v1/samples?boot=test&after=2").await;
    assert_eq!(times(&json(&body)), vec![3_000]);
    let (_, body) = agent.get("/v1/samples?boot=test&after=3").await;
    assert!(json::<SampleBatch>(&body).samples.is_empty());
    for (query, names) in [("after=soon", "after"), ("since=3", "since=3")] {
        let (status, body) = agent.get(&format!("/v1/samples?{query}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}");
        let refused: ApiError = json(&body);
        assert!(
            refused.message.contains(names),
            "{query}: {}",
            refused.message
        );
    }
}

#[tokio::test]
async fn unknown_paths_and_methods_get_json_errors() {
    let agent = TestAgent::new(1).await;
    let (status, body) = agent.get("/v2/gpus").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let error: ApiError = json(&body);
    assert_eq!(error.kind, AgentErrorKind::NotFound);
    assert!(error.message.contains("/v2/gpus"), "{}", error.message);
    let (status, body) = agent
        .send(Request::put("/v1/gpus").body(Body::empty()).unwrap())
        .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(
        json::<ApiError>(&body).kind,
        AgentErrorKind::MethodNotAllowed
    );
}

#[tokio::test]
async fn tokens_and_scopes_are_enforced_with_json_errors() {
    let auth = Auth::from_entries(&[
        token_entry("read-token", Scope::Read),
        token_entry("lease-token", Scope::Lease),
    ])
    .unwrap();
    let agent = TestAgent::with(2, auth, Duration::from_secs(1)).await;
    let request = |method: &str, path: &str, token: Option<&str>| {
        let mut builder = Request::builder()
            .method(method)
            .uri(path)
            .header("content-type", "application/json")
            .header("idempotency-key", "k");
        if let Some(token) = token {
            builder = builder.header("authorization", format!("Bearer {token}"));
        }
        builder
            .body(Body::from(r#"{"pool_id":"p","holder_id":"h","count":1}"#))
            .unwrap()
    };
    let cases = [
        (
            "GET",
            "/v1/gpus",
            None,
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
        (
            "GET",
            "/metrics",
            Some("wrong"),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
        (
            "POST",
            "/v1/leases",
            Some("read-token"),
            StatusCode::FORBIDDEN,
            "forbidden",
        ),
        (
            "DELETE",
            "/v1/leases/x",
            Some("read-token"),
            StatusCode::FORBIDDEN,
            "forbidden",
        ),
        // Announcing a term fences lease calls: it needs the lease scope too.
        (
            "POST",
            "/v1/terms",
            Some("read-token"),
            StatusCode::FORBIDDEN,
            "forbidden",
        ),
        (
            "POST",
            "/v1/terms",
            None,
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
    ];
    for (method, path, token, status, kind) in cases {
        let (got, body) = agent.send(request(method, path, token)).await;
        assert_eq!(got, status, "{method} {path} {token:?}");
        assert_eq!(json::<ApiError>(&body).kind.as_str(), kind);
    }
    assert_eq!(
        agent
            .send(request("GET", "/v1/gpus", Some("read-token")))
            .await
            .0,
        StatusCode::OK
    );
    assert_eq!(
        agent
            .send(request("GET", "/v1/leases", Some("read-token")))
            .await
            .0,
        StatusCode::OK
    );
    assert_eq!(
        agent
            .send(request("POST", "/v1/leases", Some("lease-token")))
            .await
            .0,
        StatusCode::CREATED
    );
}

#[tokio::test]
async fn metrics_parse_as_prometheus_and_leave_out_missing_readings() {
    let agent = TestAgent::new(2).await;
    let mut list: GpuList = (*agent.state.latest.borrow().clone()).clone();
    list.gpus[1].power_draw_w = None;
    list.gpus[1].spot = true;
    agent.publish.send(std::sync::Arc::new(list)).unwrap();
    agent
        .post_lease("k", r#"{"pool_id":"p","holder_id":"h","count":1}"#)
        .await;
    let (status, body) = agent.get("/metrics").await;
    assert_eq!(status, StatusCode::OK);
    let text = String::from_utf8(body).unwrap();
    let lines = text.lines().map(|line| Ok(line.to_string()));
    let scrape = prometheus_parse::Scrape::parse(lines).expect("valid Prometheus text");
    let sample = |name: &str, index: &str| {
        scrape
            .samples
            .iter()
            .find(|sample| sample.metric == name && sample.labels.get("index") == Some(index))
            .map(|sample| match sample.value {
                prometheus_parse::Value::Gauge(value) => value,
                ref other => panic!("{name} is not a gauge: {other:?}"),
            })
    };
    assert!(sample("ebb_gpu_power_draw_watts", "0").is_some());
    assert_eq!(
        sample("ebb_gpu_power_draw_watts", "1"),
        None,
        "missing is left out, not 0"
    );
    assert_eq!(sample("ebb_gpu_leased", "0"), Some(1.0));
    assert_eq!(sample("ebb_gpu_leased", "1"), Some(0.0));
    assert_eq!(sample("ebb_gpu_healthy", "1"), Some(1.0));
    assert_eq!(sample("ebb_gpu_spot", "0"), Some(0.0));
    assert_eq!(sample("ebb_gpu_spot", "1"), Some(1.0));
    let labels = &scrape
        .samples
        .iter()
        .find(|sample| sample.metric == "ebb_gpu_utilization_percent")
        .unwrap()
        .labels;
    assert_eq!(labels.get("host"), Some("host-a"));
    assert_eq!(labels.get("model"), Some("NVIDIA H800"));
    assert!(labels.get("uuid").unwrap().starts_with("GPU-"));
    let active = scrape
        .samples
        .iter()
        .find(|sample| {
            sample.metric == "ebb_leases" && sample.labels.get("state") == Some("active")
        })
        .unwrap();
    assert!(matches!(active.value, prometheus_parse::Value::Gauge(count) if count == 1.0));
    // The held GPU names its lease and pool; the free one has no such series.
    let held: Vec<_> = scrape
        .samples
        .iter()
        .filter(|sample| sample.metric == "ebb_gpu_lease_info")
        .collect();
    assert_eq!(held.len(), 1, "{text}");
    assert_eq!(held[0].labels.get("index"), Some("0"));
    assert_eq!(held[0].labels.get("pool"), Some("p"));
    assert!(
        held[0]
            .labels
            .get("lease_id")
            .is_some_and(|id| !id.is_empty())
    );
    assert!(
        text.contains("# TYPE ebb_gpu_xid_errors_total counter"),
        "{text}"
    );
    let xid = scrape
        .samples
        .iter()
        .find(|sample| {
            sample.metric == "ebb_gpu_xid_errors_total" && sample.labels.get("index") == Some("0")
        })
        .unwrap();
    assert!(matches!(xid.value, prometheus_parse::Value::Counter(count) if count == 0.0));
}

#[tokio::test]
async fn the_stream_sends_a_sample_event_per_sample() {
    use axum::body::HttpBody as _;
    let agent = TestAgent::new(2).await;
    let response = tower::ServiceExt::oneshot(
        ebb_agent::app(agent.state.clone()),
        Request::get("/v1/stream").body(Body::empty()).unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();
    let mut text = String::new();
    let next_text = async |body: &mut Body| {
        let frame = tokio::time::timeout(
            Duration::from_secs(5),
            std::future::poll_fn(|cx| std::pin::Pin::new(&mut *body).poll_frame(cx)),
        )
        .await
        .expect("an event within 5 s")
        .unwrap()
        .unwrap();
        String::from_utf8(frame.into_data().unwrap().to_vec()).unwrap()
    };
    text.push_str(&next_text(&mut body).await);
    assert!(text.starts_with("event: sample\ndata: {"), "{text}");
    let mut next: GpuList = (*agent.state.latest.borrow().clone()).clone();
    next.sampled_at_ms = 6_000;
    agent.publish.send(std::sync::Arc::new(next)).unwrap();
    let second = next_text(&mut body).await;
    assert!(second.contains("\"sampled_at_ms\":6000"), "{second}");
}
