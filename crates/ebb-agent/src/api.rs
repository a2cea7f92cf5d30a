//! The agent's HTTP API: `fn app(state) -> Router`, testable in-process.
//!
//! Every error is a JSON [`ApiError`] with a stable `kind`; internals are logged here, at
//! the edge, and never sent to the client.
//!
//! Routes, by the token scope each needs:
//! - `read`: `GET /v1/health`, `/v1/gpus` (the latest reading), `/v1/samples?boot=B&after=N`
//!   (every sample since number N of run B, oldest first; the last minute is kept),
//!   `/v1/stream` (server-sent `sample` events), `/v1/leases` (the leases not yet released;
//!   `?state=all` adds the released ones still kept, `?state=released` lists only those),
//!   `/v1/leases/{id}`, `/metrics` (Prometheus text).
//! - `lease`: `POST /v1/leases` (an `Idempotency-Key` is required), `DELETE
//!   /v1/leases/{id}` (graceful), `POST /v1/leases/{id}/checkpoint` (the workload saved its
//!   state: safe to release), `POST /v1/leases/{id}/restart` (the workload started again on
//!   the same GPUs, the lease unchanged) and `POST /v1/terms` (an elected console's term).
//! - `admin`, the scope above `lease`: `POST /v1/leases/{id}/reclaim` (`{notice_s}`: the
//!   host's owner takes a spot lease back; it stays active until its deadline).
//!
//! Status codes: 400 malformed, 401/403 auth, 404, 409 not free or `stale_term`, 413 too
//! large, 415 not JSON, 422 invalid or an idempotency key reused. An elected console fences
//! its calls with `console_group` and `term` (in the create body; `?console_group=G&term=N`
//! on a release; both or neither). A grant, release or reclaim runs to its end in its own
//! task even when the client goes away, so a stored grant is always in the ledger and a
//! retry of its key replays it.

use crate::auth::{Auth, AuthError, Scope};
use crate::leases::ledger::LeaseError;
use crate::leases::{LeaseService, ServiceError};
use crate::metrics;
use crate::sampler::SampleHistory;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path, Query, RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use ebb_wire::agent::{
    API_VERSION, AgentErrorKind, ApiError, ConsoleTerm, GpuList, Health, LeaseList, LeaseListQuery,
    LeaseListState, LeaseRequest, ReclaimRequest, ReleaseQuery, SampleBatch,
};
use std::convert::Infallible;
use std::sync::Arc;
use tokio::sync::watch;
use tokio_stream::StreamExt as _;
use tokio_stream::wrappers::WatchStream;

/// The largest request body the agent reads.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// What the handlers read: the sampler's latest snapshot and the lease service; never the
/// probe itself.
#[derive(Debug, Clone)]
pub struct AgentState {
    pub host: String,
    pub backend: &'static str,
    pub latest: watch::Receiver<Arc<GpuList>>,
    /// The numbered samples of the last minute, for `/v1/samples`.
    pub history: SampleHistory,
    pub leases: Arc<LeaseService>,
    pub auth: Arc<Auth>,
}

/// The versioned API.
pub fn app(state: AgentState) -> Router {
    let read = Router::new()
        .route("/v1/health", get(health))
        .route("/v1/gpus", get(gpus))
        .route("/v1/samples", get(samples))
        .route("/v1/stream", get(stream))
        .route("/v1/leases", get(list_leases))
        .route("/v1/leases/{id}", get(get_lease))
        .route("/metrics", get(prometheus))
        .route_layer(from_fn_with_state(state.clone(), require_read));
    let lease = Router::new()
        .route("/v1/leases", post(create_lease))
        .route("/v1/leases/{id}", axum::routing::delete(release_lease))
        .route("/v1/leases/{id}/checkpoint", post(checkpoint_lease))
        .route("/v1/leases/{id}/restart", post(restart_lease))
        .route("/v1/terms", post(announce_term))
        .route_layer(from_fn_with_state(state.clone(), require_lease));
    let admin = Router::new()
        .route("/v1/leases/{id}/reclaim", post(reclaim_lease))
        .route_layer(from_fn_with_state(state.clone(), require_admin));
    read.merge(lease)
        .merge(admin)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

fn error(status: StatusCode, kind: AgentErrorKind, message: impl Into<String>) -> Response {
    (
        status,
        Json(ApiError {
            kind,
            message: message.into(),
        }),
    )
        .into_response()
}

async fn require_read(State(state): State<AgentState>, request: Request, next: Next) -> Response {
    authorize(&state.auth, Scope::Read, request, next).await
}

async fn require_lease(State(state): State<AgentState>, request: Request, next: Next) -> Response {
    authorize(&state.auth, Scope::Lease, request, next).await
}

async fn require_admin(State(state): State<AgentState>, request: Request, next: Next) -> Response {
    authorize(&state.auth, Scope::Admin, request, next).await
}

async fn authorize(auth: &Auth, need: Scope, request: Request, next: Next) -> Response {
    let header = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    match auth.check(header, need) {
        Ok(()) => next.run(request).await,
        Err(refused @ AuthError::Forbidden { .. }) => error(
            StatusCode::FORBIDDEN,
            AgentErrorKind::Forbidden,
            refused.to_string(),
        ),
        Err(refused) => {
            let mut response = error(
                StatusCode::UNAUTHORIZED,
                AgentErrorKind::Unauthorized,
                refused.to_string(),
            );
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            response
        }
    }
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

/// The latest sample with each GPU's current lease.
fn current_gpus(state: &AgentState, list: &GpuList) -> GpuList {
    let holders = state.leases.holders_now();
    let mut list = list.clone();
    for gpu in &mut list.gpus {
        gpu.lease_id = holders.get(&gpu.uuid).cloned();
    }
    list
}

async fn gpus(State(state): State<AgentState>) -> Json<GpuList> {
    let latest = state.latest.borrow().clone();
    Json(current_gpus(&state, &latest))
}

/// `GET /v1/samples?boot=B&after=N`: every sample taken after number `after` of run `boot`
/// (both from the last answer), oldest first, so a collector stores each one.
async fn samples(State(state): State<AgentState>, RawQuery(raw): RawQuery) -> Response {
    let mut boot = None;
    let mut after = 0u64;
    for pair in raw.as_deref().unwrap_or_default().split('&') {
        match pair.split_once('=') {
            Some(("boot", value)) => boot = Some(value.to_string()),
            Some(("after", value)) => match value.parse() {
                Ok(number) => after = number,
                Err(_) => {
                    return error(
                        StatusCode::BAD_REQUEST,
                        AgentErrorKind::InvalidRequest,
                        format!("after: `{value}` is not a sample number (0 or more)"),
                    );
                }
            },
            _ if pair.is_empty() => {}
            _ => {
                return error(
                    StatusCode::BAD_REQUEST,
                    AgentErrorKind::InvalidRequest,
                    format!("`{pair}`: /v1/samples takes only boot=B and after=N"),
                );
            }
        }
    }
    let since = state.history.after(boot.as_deref(), after);
    Json(SampleBatch {
        boot: since.boot,
        last_seq: since.last_seq,
        missed: since.missed,
        samples: since
            .samples
            .iter()
            .map(|list| current_gpus(&state, list))
            .collect(),
    })
    .into_response()
}

/// Server-sent events: one `sample` event with a [`GpuList`] per sampling interval.
async fn stream(State(state): State<AgentState>) -> impl IntoResponse {
    let events = WatchStream::new(state.latest.clone()).map(move |list| {
        let body = serde_json::to_string(&current_gpus(&state, &list)).unwrap_or_default();
        Ok::<_, Infallible>(Event::default().event("sample").data(body))
    });
    Sse::new(events).keep_alive(KeepAlive::default())
}

async fn prometheus(State(state): State<AgentState>) -> Response {
    let latest = state.latest.borrow().clone();
    let holders = state.leases.holders_now();
    let every = LeaseListQuery {
        state: Some(LeaseListState::All),
    };
    let leases = state.leases.list(every).await;
    let text = metrics::render(&latest, state.backend, &holders, &leases);
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// `GET /v1/leases[?state=all|released]`: by default only the leases not yet released, so
/// what a holder polls does not grow with the agent's history.
async fn list_leases(
    State(state): State<AgentState>,
    query: Result<Query<LeaseListQuery>, QueryRejection>,
    RawQuery(raw): RawQuery,
) -> Response {
    let Ok(Query(query)) = query else {
        let given = raw
            .as_deref()
            .unwrap_or_default()
            .split('&')
            .filter_map(|pair| pair.strip_prefix("state="))
            .collect::<Vec<_>>()
            .join("`, `");
        return error(
            StatusCode::BAD_REQUEST,
            AgentErrorKind::InvalidRequest,
            format!(
                "state: `{given}` is not allowed; use `{}` (released leases too) or `{}` (only those), or leave it out for the leases not yet released",
                LeaseListState::All.as_str(),
                LeaseListState::Released.as_str(),
            ),
        );
    };
    Json(LeaseList {
        leases: state.leases.list(query).await,
    })
    .into_response()
}

async fn get_lease(State(state): State<AgentState>, Path(id): Path<String>) -> Response {
    match state.leases.get(&id).await {
        Ok(lease) => Json(lease).into_response(),
        Err(refused) => lease_error(&ServiceError::Lease(refused)),
    }
}

async fn create_lease(
    State(state): State<AgentState>,
    headers: HeaderMap,
    body: Result<Json<LeaseRequest>, JsonRejection>,
) -> Response {
    let Json(request) = match body {
        Ok(body) => body,
        Err(rejection) => return body_error(&rejection),
    };
    let key = match headers.get("idempotency-key").map(HeaderValue::to_str) {
        Some(Ok(key)) => key.to_string(),
        Some(Err(_)) => {
            return error(
                StatusCode::BAD_REQUEST,
                AgentErrorKind::InvalidRequest,
                "Idempotency-Key: must be visible ASCII",
            );
        }
        None => {
            return error(
                StatusCode::BAD_REQUEST,
                AgentErrorKind::InvalidRequest,
                "Idempotency-Key: the header is required so a retry never leases twice",
            );
        }
    };
    // Run to the end even when the client goes away: a grant stored but never taken into
    // the ledger would turn every retry of its key into an error.
    let leases = state.leases.clone();
    let done = tokio::spawn(async move { leases.create(&key, &request).await }).await;
    let Ok(result) = done else {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            AgentErrorKind::Internal,
            "the agent failed while granting; nothing was answered, try again with the same key",
        );
    };
    match result {
        Ok(created) => {
            let status = if created.new {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            (status, Json(created.lease)).into_response()
        }
        Err(failure) => lease_error(&failure),
    }
}

/// `DELETE /v1/leases/{id}[?console_group=G&term=N]`.
async fn release_lease(
    State(state): State<AgentState>,
    Path(id): Path<String>,
    query: Result<Query<ReleaseQuery>, QueryRejection>,
) -> Response {
    let term = match query.map(|Query(query)| query.console_term()) {
        Ok(Ok(term)) => term,
        Ok(Err(field)) => {
            return lease_error(&ServiceError::Lease(LeaseError::Invalid {
                field,
                problem: "give console_group and term together, or neither".into(),
            }));
        }
        Err(rejection) => {
            return error(
                StatusCode::UNPROCESSABLE_ENTITY,
                AgentErrorKind::InvalidRequest,
                rejection.body_text(),
            );
        }
    };
    // Like a grant, a release runs to the end whether or not the client waits for it.
    let leases = state.leases.clone();
    let done = tokio::spawn(async move { leases.release_fenced(&id, term.as_ref()).await }).await;
    let Ok(result) = done else {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            AgentErrorKind::Internal,
            "the agent failed while releasing; try again",
        );
    };
    match result {
        Ok(lease) => {
            let status = if lease.state == ebb_wire::agent::LeaseState::Released {
                StatusCode::OK
            } else {
                StatusCode::ACCEPTED
            };
            (status, Json(lease)).into_response()
        }
        Err(failure) => lease_error(&failure),
    }
}

/// `POST /v1/terms` with a [`ConsoleTerm`]: a newly elected console's term, kept as its
/// group's highest (409 `stale_term` when a higher one is kept); answers the term kept.
async fn announce_term(
    State(state): State<AgentState>,
    body: Result<Json<ConsoleTerm>, JsonRejection>,
) -> Response {
    let Json(term) = match body {
        Ok(body) => body,
        Err(rejection) => return body_error(&rejection),
    };
    let leases = state.leases.clone();
    let group = term.console_group.clone();
    // Kept whether or not the console waits for the answer, as a grant is.
    let done = tokio::spawn(async move { leases.announce_term(&term).await }).await;
    match done {
        Ok(Ok(highest)) => Json(ConsoleTerm::new(group, highest)).into_response(),
        Ok(Err(failure)) => lease_error(&failure),
        Err(_) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            AgentErrorKind::Internal,
            "the agent failed while keeping the term; try again",
        ),
    }
}

/// The workload saved its state: releasing the lease now loses nothing since.
async fn checkpoint_lease(State(state): State<AgentState>, Path(id): Path<String>) -> Response {
    match state.leases.checkpoint(&id).await {
        Ok(lease) => Json(lease).into_response(),
        Err(failure) => lease_error(&failure),
    }
}

/// `POST /v1/leases/{id}/reclaim` with a [`ReclaimRequest`] (admin scope): the host's
/// owner takes the lease back after `notice_s`; answers the lease with its deadline.
async fn reclaim_lease(
    State(state): State<AgentState>,
    Path(id): Path<String>,
    body: Result<Json<ReclaimRequest>, JsonRejection>,
) -> Response {
    let Json(request) = match body {
        Ok(body) => body,
        Err(rejection) => return body_error(&rejection),
    };
    let notice = std::time::Duration::from_secs(request.notice_s);
    // Kept whether or not the owner waits for the answer, as a release is.
    let leases = state.leases.clone();
    let done = tokio::spawn(async move { leases.reclaim(&id, notice).await }).await;
    match done {
        Ok(Ok(lease)) => Json(lease).into_response(),
        Ok(Err(failure)) => lease_error(&failure),
        Err(_) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            AgentErrorKind::Internal,
            "the agent failed while reclaiming; try again",
        ),
    }
}

async fn restart_lease(State(state): State<AgentState>, Path(id): Path<String>) -> Response {
    match state.leases.restart(&id).await {
        Ok(lease) => Json(lease).into_response(),
        Err(failure) => lease_error(&failure),
    }
}

fn lease_error(failure: &ServiceError) -> Response {
    match failure {
        ServiceError::Lease(refused) => {
            let (status, kind) = match refused {
                LeaseError::Invalid { .. } => (
                    StatusCode::UNPROCESSABLE_ENTITY,
                    AgentErrorKind::InvalidRequest,
                ),
                LeaseError::NotEnoughFree { .. } => {
                    (StatusCode::CONFLICT, AgentErrorKind::NotEnoughFree)
                }
                LeaseError::GpuNotFree { .. } => (StatusCode::CONFLICT, AgentErrorKind::GpuNotFree),
                LeaseError::KeyReused { .. } => (
                    StatusCode::UNPROCESSABLE_ENTITY,
                    AgentErrorKind::IdempotencyKeyReused,
                ),
                LeaseError::NotFound { .. } => (StatusCode::NOT_FOUND, AgentErrorKind::NotFound),
                LeaseError::StaleTerm { .. } => (StatusCode::CONFLICT, AgentErrorKind::StaleTerm),
            };
            error(status, kind, refused.to_string())
        }
        ServiceError::Store(store) => {
            tracing::error!(error = %store, "lease store failed");
            error(
                StatusCode::INTERNAL_SERVER_ERROR,
                AgentErrorKind::Internal,
                "the agent could not record the change; nothing was changed, try again",
            )
        }
    }
}

fn body_error(rejection: &JsonRejection) -> Response {
    match rejection {
        JsonRejection::MissingJsonContentType(_) => error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            AgentErrorKind::UnsupportedMediaType,
            "send the body as JSON with `Content-Type: application/json`",
        ),
        JsonRejection::JsonSyntaxError(syntax) => error(
            StatusCode::BAD_REQUEST,
            AgentErrorKind::MalformedJson,
            format!("the body is not valid JSON: {}", syntax.body_text()),
        ),
        JsonRejection::JsonDataError(data) => error(
            StatusCode::UNPROCESSABLE_ENTITY,
            AgentErrorKind::InvalidRequest,
            data.body_text(),
        ),
        other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => error(
            StatusCode::PAYLOAD_TOO_LARGE,
            AgentErrorKind::BodyTooLarge,
            format!("the body must be at most {MAX_BODY_BYTES} bytes"),
        ),
        other => error(
            other.status(),
            AgentErrorKind::InvalidRequest,
            other.body_text(),
        ),
    }
}

async fn not_found(uri: axum::http::Uri) -> Response {
    error(
        StatusCode::NOT_FOUND,
        AgentErrorKind::NotFound,
        format!(
            "no such endpoint `{}`; this agent serves /v1/health, /v1/gpus, /v1/samples, /v1/stream, /v1/leases and /metrics",
            uri.path()
        ),
    )
}

async fn method_not_allowed(method: axum::http::Method, uri: axum::http::Uri) -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        AgentErrorKind::MethodNotAllowed,
        format!("{method} is not allowed on `{}`", uri.path()),
    )
}
