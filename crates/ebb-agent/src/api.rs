//! The agent's HTTP API: `fn app(state) -> Router`, testable in-process.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use ebb_wire::agent::{API_VERSION, ApiError, GpuList, Health};
use std::sync::Arc;
use tokio::sync::watch;

/// What the handlers read: never the probe itself, only the sampler's latest snapshot.
#[derive(Debug, Clone)]
pub struct AgentState {
    host: String,
    backend: &'static str,
    latest: watch::Receiver<Arc<GpuList>>,
}

impl AgentState {
    pub fn new(host: String, backend: &'static str, latest: watch::Receiver<Arc<GpuList>>) -> Self {
        Self {
            host,
            backend,
            latest,
        }
    }
}

/// The versioned API.
pub fn app(state: AgentState) -> Router {
    Router::new()
        .route("/v1/health", get(health))
        .route("/v1/gpus", get(gpus))
        .fallback(not_found)
        .with_state(state)
}

async fn health(State(state): State<AgentState>) -> Json<Health> {
    Json(Health {
        status: "ok".into(),
        api_version: API_VERSION,
        agent_version: env!("CARGO_PKG_VERSION").into(),
        host: state.host.clone(),
        backend: state.backend.into(),
    })
}

async fn gpus(State(state): State<AgentState>) -> Json<GpuList> {
    let latest = state.latest.borrow().clone();
    Json(GpuList::clone(&latest))
}

async fn not_found(uri: axum::http::Uri) -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(ApiError {
            kind: "not_found".into(),
            message: format!(
                "no such endpoint `{}`; this agent serves /v1/health and /v1/gpus",
                uri.path()
            ),
        }),
    )
        .into_response()
}
