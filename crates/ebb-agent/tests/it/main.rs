//! The agent's `Router` tested in-process, request by request.

mod nvml;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use ebb_agent::{AgentState, GpuModel, LoadProfile, SimConfig, Simulator, app};
use ebb_wire::agent::{ApiError, GpuList, Health};
use std::sync::Arc;
use tokio::sync::watch;
use tower::ServiceExt;

fn state_with(gpus: u32) -> AgentState {
    let sim = Simulator::new(SimConfig {
        host: "host-a".into(),
        model: GpuModel::H800,
        gpu_count: gpus,
        seed: 42,
        profile: LoadProfile::Tidal { period_s: 60.0 },
    });
    let list = GpuList {
        host: "host-a".into(),
        sampled_at_ms: 5_000,
        gpus: ebb_agent::GpuProbe::read(&sim, 5_000),
    };
    let (_publish, latest) = watch::channel(Arc::new(list));
    AgentState::new("host-a".into(), "simulator", latest)
}

async fn get(state: AgentState, path: &str) -> (StatusCode, Vec<u8>) {
    let response = app(state)
        .oneshot(Request::get(path).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let body = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    (status, body.to_vec())
}

#[tokio::test]
async fn health_reports_version_and_backend() {
    let (status, body) = get(state_with(2), "/v1/health").await;
    assert_eq!(status, StatusCode::OK);
    let health: Health = serde_json::from_slice(&body).unwrap();
    assert_eq!(health.status, "ok");
    assert_eq!(health.api_version, 1);
    assert_eq!(health.host, "host-a");
    assert_eq!(health.backend, "simulator");
}

#[tokio::test]
async fn gpus_serves_the_latest_sample() {
    let (status, body) = get(state_with(8), "/v1/gpus").await;
    assert_eq!(status, StatusCode::OK);
    let list: GpuList = serde_json::from_slice(&body).unwrap();
    assert_eq!(list.host, "host-a");
    assert_eq!(list.sampled_at_ms, 5_000);
    assert_eq!(list.gpus.len(), 8);
    let indexes: Vec<u32> = list.gpus.iter().map(|gpu| gpu.index).collect();
    assert_eq!(indexes, (0..8).collect::<Vec<_>>());
    for gpu in &list.gpus {
        assert_eq!(gpu.model, "NVIDIA H800");
        assert_eq!(gpu.memory_total_mib, 81_920);
        assert!(gpu.gpu_util_pct.is_some());
    }
}

#[tokio::test]
async fn unknown_paths_get_a_json_error_naming_the_path() {
    let (status, body) = get(state_with(1), "/v2/gpus").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let error: ApiError = serde_json::from_slice(&body).unwrap();
    assert_eq!(error.kind, "not_found");
    assert!(error.message.contains("/v2/gpus"), "{}", error.message);
}

#[tokio::test]
async fn a_running_agent_publishes_new_samples() {
    let sim = Simulator::new(SimConfig {
        host: "live".into(),
        model: GpuModel::V100,
        gpu_count: 2,
        seed: 1,
        profile: LoadProfile::Tidal { period_s: 60.0 },
    });
    let sampler = ebb_agent::Sampler::start(
        "live".into(),
        Arc::new(sim),
        std::time::Duration::from_millis(20),
    );
    let mut latest = sampler.latest();
    let first = latest.borrow_and_update().sampled_at_ms;
    tokio::time::timeout(std::time::Duration::from_secs(5), latest.changed())
        .await
        .expect("a second sample within 5 s")
        .unwrap();
    assert!(latest.borrow().sampled_at_ms >= first);
    sampler.stop().await;
}
