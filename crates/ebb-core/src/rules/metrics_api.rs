//! The console's metrics endpoint: `POST /v1/metrics`, where the operator's systems push
//! custom metrics for the rules (queue length, concurrent users, latency). Served by the
//! process that collects (the app or `ebb daemon`), on loopback unless told otherwise.
//!
//! - `Authorization: Bearer TOKEN` (made with `ebb metric token new`; only hashes kept):
//!   401 without or with a wrong one;
//! - a JSON body `{name, value, pool?, at?}` or an array of up to 100 of them: 415 when not
//!   JSON, 400 when malformed, 413 above 64 KiB, 422 naming the field (and the item) of the
//!   first invalid one (nothing of the body is stored then);
//! - at most 50 requests a second (a token bucket): 429 past that;
//! - 200 `{"stored": N}`.
//!
//! And `GET /v1/prometheus/targets` (the same token): the registered hosts as Prometheus
//! HTTP service discovery, one target group per host (its agent's `host:port`, `__scheme__`,
//! `__metrics_path__ = /metrics`, the host's name, region and labels as target labels), so a
//! Prometheus scrapes exactly the agents Ebb knows. A host label named like a label of the
//! agent's own series (`pool`, `uuid`, `model` …) becomes `host_NAME`: as a target label it
//! would overwrite the series' own (Prometheus keeps those as `exported_NAME`), and the
//! dashboard's per-pool join would break.

use crate::pools::{PoolError, PoolStore};
use crate::registry::{HostEntry, Registry};
use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use ebb_wire::rules::MetricPush;
use serde::Serialize;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// The largest body taken.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// The most samples in one body.
pub const MAX_BATCH: usize = 100;
/// Requests a second, sustained (and the burst).
pub const RATE_PER_S: f64 = 50.0;
/// Every request ends within this (the database may be busy).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Serialize)]
struct ApiError {
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<String>,
    message: String,
}

fn error(
    status: StatusCode,
    kind: &'static str,
    field: Option<String>,
    message: String,
) -> Response {
    (
        status,
        axum::Json(ApiError {
            kind,
            field,
            message,
        }),
    )
        .into_response()
}

/// A token bucket.
#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

#[derive(Debug, Clone)]
struct ApiState {
    store: PoolStore,
    registry: Registry,
    bucket: Arc<Mutex<Bucket>>,
}

/// One target group of Prometheus HTTP service discovery.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetGroup {
    pub targets: Vec<String>,
    pub labels: std::collections::BTreeMap<String, String>,
}

/// A label name Prometheus takes: `[a-zA-Z_][a-zA-Z0-9_]*`, other characters as `_`.
fn label_name(key: &str) -> String {
    let mut name: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    name
}

/// The labels of the agent's own series (`ebb_agent::metrics`), besides `host`, which service
/// discovery sets to the same name.
const AGENT_SERIES_LABELS: [&str; 8] = [
    "version", "backend", "lease_id", "pool", "state", "index", "uuid", "model",
];

/// The registered hosts as Prometheus HTTP service discovery target groups. Pure.
pub fn prometheus_targets(hosts: &[HostEntry]) -> Vec<TargetGroup> {
    hosts
        .iter()
        .filter_map(|host| {
            let url = reqwest::Url::parse(&host.url).ok()?;
            let address = format!("{}:{}", url.host_str()?, url.port_or_known_default()?);
            let mut labels = std::collections::BTreeMap::new();
            for (key, value) in &host.labels {
                let mut name = label_name(key.trim());
                if AGENT_SERIES_LABELS.contains(&name.as_str()) {
                    name.insert_str(0, "host_");
                }
                // Names with two leading underscores are Prometheus's own.
                if !name.is_empty() && !name.starts_with("__") {
                    labels.insert(name, value.clone());
                }
            }
            labels.insert("__scheme__".into(), url.scheme().to_string());
            labels.insert("__metrics_path__".into(), "/metrics".into());
            labels.insert("host".into(), host.name.clone());
            labels.insert("region".into(), host.region.clone());
            Some(TargetGroup {
                targets: vec![address],
                labels,
            })
        })
        .collect()
}

/// The endpoint's routes, with a fresh rate limit; [`MetricsApi::start`] serves them.
pub fn app(store: PoolStore, registry: Registry) -> Router {
    let state = ApiState {
        store,
        registry,
        bucket: Arc::new(Mutex::new(Bucket {
            tokens: RATE_PER_S,
            at: Instant::now(),
        })),
    };
    Router::new()
        .route("/v1/metrics", post(push))
        .route("/v1/prometheus/targets", get(targets))
        .fallback(|| async {
            error(
                StatusCode::NOT_FOUND,
                "not_found",
                None,
                "the console serves POST /v1/metrics and GET /v1/prometheus/targets".into(),
            )
        })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

/// The running endpoint; dropped or [`MetricsApi::stop`]ped, it stops.
#[derive(Debug)]
pub struct MetricsApi {
    addr: SocketAddr,
    task: Option<JoinHandle<()>>,
}

impl MetricsApi {
    /// Binds `listen` and serves; the bound address (port 0 picks one) is [`Self::addr`].
    pub async fn start(
        store: PoolStore,
        registry: Registry,
        listen: SocketAddr,
    ) -> std::io::Result<MetricsApi> {
        let listener = tokio::net::TcpListener::bind(listen).await?;
        let addr = listener.local_addr()?;
        let app = app(store, registry);
        let task = tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                tracing::warn!(%error, "the metrics endpoint stopped");
            }
        });
        tracing::info!(%addr, "metrics endpoint: POST /v1/metrics");
        Ok(MetricsApi {
            addr,
            task: Some(task),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub async fn stop(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
    }
}

impl Drop for MetricsApi {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// One request: rate, token, body, each sample checked, then all stored.
async fn push(State(state): State<ApiState>, request: Request) -> Response {
    match tokio::time::timeout(REQUEST_TIMEOUT, handle(state, request)).await {
        Ok(response) => response,
        Err(_) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            None,
            "the console's database did not answer in time".into(),
        ),
    }
}

async fn handle(state: ApiState, request: Request) -> Response {
    if !take_token(&state.bucket) {
        return error(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            None,
            format!("at most {RATE_PER_S} requests a second"),
        );
    }
    let headers = request.headers().clone();
    if let Err(refused) = authorize(&state, &headers).await {
        return refused;
    }
    let json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().starts_with("application/json"));
    if !json {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            None,
            "send Content-Type: application/json".into(),
        );
    }
    let body = match axum::body::to_bytes(request.into_body(), MAX_BODY_BYTES).await {
        Ok(body) => body,
        Err(_) => {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "too_large",
                None,
                format!("at most {MAX_BODY_BYTES} bytes"),
            );
        }
    };
    let pushes = match parse(&body) {
        Ok(pushes) => pushes,
        Err((status, kind, field, message)) => return error(status, kind, field, message),
    };
    // Every sample is checked before any is stored.
    match state.store.push_metrics(&pushes).await {
        Ok(()) => {}
        Err((i, PoolError::Invalid { field, problem, .. })) => {
            let field = if pushes.len() > 1 {
                format!("[{i}].{field}")
            } else {
                field.to_string()
            };
            return error(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid",
                Some(field.clone()),
                format!("{field}: {problem}"),
            );
        }
        Err((_, other)) => return internal(other),
    }
    (
        StatusCode::OK,
        axum::Json(serde_json::json!({ "stored": pushes.len() })),
    )
        .into_response()
}

/// The request's bearer token is one of this console's metric tokens, or the 401 to send.
async fn authorize(state: &ApiState, headers: &axum::http::HeaderMap) -> Result<(), Response> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|token| !token.is_empty())
        .map(str::to_string);
    let authorized = match &bearer {
        Some(token) => state.store.metric_token_ok(token).await.unwrap_or(false),
        None => false,
    };
    if !authorized {
        let mut response = error(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            None,
            if bearer.is_none() {
                "a bearer token is needed (ebb metric token new)".into()
            } else {
                "the token is not one of this console's (ebb metric token new)".into()
            },
        );
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return Err(response);
    }
    Ok(())
}

/// `GET /v1/prometheus/targets`.
async fn targets(State(state): State<ApiState>, headers: axum::http::HeaderMap) -> Response {
    if let Err(refused) = authorize(&state, &headers).await {
        return refused;
    }
    match tokio::time::timeout(REQUEST_TIMEOUT, state.registry.list()).await {
        Ok(Ok(hosts)) => axum::Json(prometheus_targets(&hosts)).into_response(),
        Ok(Err(problem)) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            None,
            problem.to_string(),
        ),
        Err(_) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            None,
            "the console's database did not answer in time".into(),
        ),
    }
}

fn internal(problem: PoolError) -> Response {
    tracing::warn!(%problem, "a metric push could not be stored");
    error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
        None,
        problem.to_string(),
    )
}

type Refusal = (StatusCode, &'static str, Option<String>, String);

/// The body as samples: one object or an array of them. Pure; never panics.
fn parse(body: &[u8]) -> Result<Vec<MetricPush>, Refusal> {
    let value: serde_json::Value = serde_json::from_slice(body).map_err(|e| {
        (
            StatusCode::BAD_REQUEST,
            "malformed",
            None,
            format!("not JSON: {e}"),
        )
    })?;
    let items = match value {
        serde_json::Value::Array(items) => items,
        other => vec![other],
    };
    if items.is_empty() || items.len() > MAX_BATCH {
        return Err((
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
            None,
            format!("send 1 to {MAX_BATCH} samples"),
        ));
    }
    let many = items.len() > 1;
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let at = |field: &str| {
                if many {
                    format!("[{i}].{field}")
                } else {
                    field.to_string()
                }
            };
            let Some(object) = item.as_object() else {
                if many {
                    let field = format!("[{i}]");
                    return Err((
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "invalid",
                        Some(field.clone()),
                        format!("{field}: each sample is an object {{name, value, pool?, at?}}"),
                    ));
                }
                return Err((
                    StatusCode::BAD_REQUEST,
                    "malformed",
                    None,
                    "the body is not a sample: send an object {name, value, pool?, at?} or an array of them"
                        .into(),
                ));
            };
            for key in object.keys() {
                if !["name", "value", "pool", "at"].contains(&key.as_str()) {
                    // An empty or odd key is named as JSON writes it (`""`), never as nothing.
                    let shown = if !key.is_empty() && key.chars().all(|c| c.is_ascii_graphic()) {
                        key.clone()
                    } else {
                        serde_json::Value::String(key.clone()).to_string()
                    };
                    let field = at(&shown);
                    return Err((
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "invalid",
                        Some(field.clone()),
                        format!("{field}: unknown field (name, value, pool, at)"),
                    ));
                }
            }
            let name = match object.get("name") {
                Some(serde_json::Value::String(name)) => name.clone(),
                _ => {
                    let field = at("name");
                    return Err((
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "invalid",
                        Some(field.clone()),
                        format!("{field}: a string is needed"),
                    ));
                }
            };
            let value = match object.get("value").and_then(serde_json::Value::as_f64) {
                Some(value) => value,
                None => {
                    let field = at("value");
                    return Err((
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "invalid",
                        Some(field.clone()),
                        format!("{field}: a number is needed"),
                    ));
                }
            };
            let pool = match object.get("pool") {
                None | Some(serde_json::Value::Null) => None,
                Some(serde_json::Value::String(pool)) => Some(pool.clone()),
                Some(_) => {
                    let field = at("pool");
                    return Err((
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "invalid",
                        Some(field.clone()),
                        format!("{field}: a pool name (string) is needed"),
                    ));
                }
            };
            let at_ms = match object.get("at") {
                None | Some(serde_json::Value::Null) => None,
                Some(value) => match value.as_i64() {
                    Some(ms) => Some(ms),
                    None => {
                        let field = at("at");
                        return Err((
                            StatusCode::UNPROCESSABLE_ENTITY,
                            "invalid",
                            Some(field.clone()),
                            format!("{field}: epoch milliseconds (an integer) are needed"),
                        ));
                    }
                },
            };
            Ok(MetricPush {
                name,
                value,
                pool,
                at: at_ms,
            })
        })
        .collect()
}

fn take_token(bucket: &Mutex<Bucket>) -> bool {
    let Ok(mut bucket) = bucket.lock() else {
        return true;
    };
    let now = Instant::now();
    let refill = now.duration_since(bucket.at).as_secs_f64() * RATE_PER_S;
    bucket.tokens = (bucket.tokens + refill).min(RATE_PER_S);
    bucket.at = now;
    if bucket.tokens >= 1.0 {
        bucket.tokens -= 1.0;
        true
    } else {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hosts_become_target_groups_with_their_region_and_labels() {
        let host = |name: &str, url: &str, labels: &[(&str, &str)]| HostEntry {
            name: name.into(),
            url: url.into(),
            region: "cn-north".into(),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            fingerprint: None,
            has_token: false,
            draining: false,
        };
        let groups = prometheus_targets(&[
            host(
                "gpu-a",
                "https://10.0.0.5:7070",
                &[
                    ("rack", "r1"),
                    ("team.name", "ml"),
                    ("__x", "no"),
                    ("pool", "batch"),
                    ("model", "dgx"),
                ],
            ),
            host("gpu-b", "http://gpu-b.example", &[]),
        ]);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].targets, ["10.0.0.5:7070"]);
        assert_eq!(groups[0].labels["__scheme__"], "https");
        assert_eq!(groups[0].labels["__metrics_path__"], "/metrics");
        assert_eq!(groups[0].labels["host"], "gpu-a");
        assert_eq!(groups[0].labels["region"], "cn-north");
        assert_eq!(groups[0].labels["rack"], "r1");
        assert_eq!(groups[0].labels["team_name"], "ml");
        assert!(!groups[0].labels.contains_key("__x"));
        // The agent's series carry their own `pool` and `model`: a host's go beside them.
        assert_eq!(groups[0].labels["host_pool"], "batch");
        assert_eq!(groups[0].labels["host_model"], "dgx");
        assert!(!groups[0].labels.contains_key("pool"));
        assert!(!groups[0].labels.contains_key("model"));
        assert_eq!(groups[1].targets, ["gpu-b.example:80"]);
        assert_eq!(label_name("9lives"), "_9lives");
    }

    /// The list of the agent's series labels is the agent's: every label of a real agent's
    /// `/metrics` (a leased GPU's included) is `host` or in it.
    #[tokio::test]
    async fn the_agent_series_labels_are_every_label_an_agent_writes() {
        let fleet = ebb_testkit::TestFleet::builder()
            .hosts(1)
            .gpus_per_host(2)
            .start()
            .await;
        let url = fleet.hosts()[0].url.clone();
        let agent = ebb_telemetry::client::AgentClient::new(
            &url,
            ebb_telemetry::client::ClientConfig::default(),
        )
        .unwrap();
        let request = ebb_wire::agent::LeaseRequest::count("train", "console-1", 1);
        agent.create_lease("k1", &request).await.unwrap();
        let text = reqwest::get(format!("{url}/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for line in text.lines().filter(|line| !line.starts_with('#')) {
            let Some((_, labels)) = line.split_once('{') else {
                continue;
            };
            for pair in labels.split("\",") {
                if let Some((name, _)) = pair.split_once('=') {
                    seen.insert(name.trim_start_matches(',').to_string());
                }
            }
        }
        assert!(seen.contains("lease_id"), "a leased GPU's series: {seen:?}");
        for name in &seen {
            assert!(
                name == "host" || AGENT_SERIES_LABELS.contains(&name.as_str()),
                "the agent writes `{name}`: add it to AGENT_SERIES_LABELS"
            );
        }
        fleet.stop().await;
    }

    #[test]
    fn bodies_are_read_naming_the_field() {
        let one = parse(br#"{"name":"queue_len","value":3,"pool":"burst"}"#).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].pool.as_deref(), Some("burst"));
        let refused = parse(br#"[{"name":"a","value":1},{"name":"b","value":"x"}]"#).unwrap_err();
        assert_eq!(refused.0, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(refused.2.as_deref(), Some("[1].value"));
        let refused = parse(br#"{"name":"a","value":1,"colour":2}"#).unwrap_err();
        assert_eq!(refused.2.as_deref(), Some("colour"));
        assert_eq!(parse(b"{nope").unwrap_err().0, StatusCode::BAD_REQUEST);
        assert_eq!(
            parse(b"[]").unwrap_err().0,
            StatusCode::UNPROCESSABLE_ENTITY
        );
    }

    proptest! {
        #[test]
        fn any_body_is_read_or_refused_never_a_panic(body in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = parse(&body);
        }

        #[test]
        fn any_json_is_read_or_refused_never_a_panic(text in r#"[\[\]{}",:a-z0-9.\-]{0,200}"#) {
            let _ = parse(text.as_bytes());
        }
    }
}
