//! The console's metrics endpoint (`POST /v1/metrics`) never breaks on what a pusher sends,
//! and every refusal says where: bodies (arbitrary bytes, mutations of valid pushes) with
//! odd `Authorization` and `Content-Type` headers, through the endpoint's router on a real
//! `console.db`. Prints `parser cases run: ...`.

use axum::body::Body;
use axum::http::{HeaderValue, Request, StatusCode};
use ebb_core::metrics_api::{self, MAX_BATCH};
use ebb_testkit::TestConsole;
use ebb_testkit::fuzz::{self, CaseCount, names_a_line};
use proptest::prelude::*;
use tower::ServiceExt;

/// Pushes that are stored: one sample, a batch, with `at` and a `pool` left empty.
fn valid_bodies() -> Vec<String> {
    vec![
        r#"{"name":"queue_len","value":3}"#.to_string(),
        "[\n  {\"name\": \"users\", \"value\": 1250.5},\n  {\"name\": \"latency_ms\", \"value\": -0.25, \"pool\": null},\n  {\"name\": \"queue_len\", \"value\": 0, \"pool\": \"\"}\n]\n".to_string(),
        "{\n  \"name\": \"q2\",\n  \"value\": 1e3,\n  \"at\": null\n}\n".to_string(),
    ]
}

#[derive(Debug, Clone)]
struct Push {
    body: Vec<u8>,
    authorization: Option<Vec<u8>>,
    content_type: Option<Vec<u8>>,
}

fn header(good: String) -> impl Strategy<Value = Option<Vec<u8>>> {
    prop_oneof![
        4 => Just(Some(good.clone().into_bytes())),
        1 => Just(None),
        2 => fuzz::mutated(vec![good]).prop_map(Some),
        1 => proptest::collection::vec(any::<u8>(), 0..200).prop_map(Some),
    ]
}

fn push(bodies: impl Strategy<Value = Vec<u8>>, token: &str) -> impl Strategy<Value = Push> {
    (
        bodies,
        header(format!("Bearer {token}")),
        header("application/json".to_string()),
    )
        .prop_map(|(body, authorization, content_type)| Push {
            body,
            authorization,
            content_type,
        })
}

#[derive(serde::Deserialize)]
struct Refusal {
    kind: String,
    field: Option<String>,
    message: String,
}

/// Sends one push; answers why the answer broke a rule, if it did.
async fn check_push(app: axum::Router, push: &Push, must_store: bool) -> Result<(), String> {
    let mut request = Request::post("/v1/metrics");
    for (name, value) in [
        ("authorization", &push.authorization),
        ("content-type", &push.content_type),
    ] {
        if let Some(value) = value.as_ref().and_then(|v| HeaderValue::from_bytes(v).ok()) {
            request = request.header(name, value);
        }
    }
    let response = app
        .oneshot(request.body(Body::from(push.body.clone())).unwrap())
        .await
        .map_err(|error| error.to_string())?;
    let status = response.status();
    let answer = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .map_err(|error| error.to_string())?;
    let shown = String::from_utf8_lossy(&answer).into_owned();
    if status.is_server_error() {
        return Err(format!("{status}: {shown}"));
    }
    if status == StatusCode::OK {
        let stored: serde_json::Value =
            serde_json::from_slice(&answer).map_err(|error| format!("200 not JSON: {error}"))?;
        return match stored["stored"].as_u64() {
            Some(1..) => Ok(()),
            _ => Err(format!("200 storing nothing: {shown}")),
        };
    }
    if must_store {
        return Err(format!("a valid push was refused: {status} {shown}"));
    }
    let refusal: Refusal = serde_json::from_slice(&answer)
        .map_err(|error| format!("{status} not a JSON error ({error}): {shown}"))?;
    let named = match status {
        StatusCode::BAD_REQUEST => {
            names_a_line(&refusal.message) || refusal.message.starts_with("the body")
        }
        StatusCode::UNPROCESSABLE_ENTITY => match &refusal.field {
            Some(field) => !field.is_empty() && refusal.message.starts_with(field.as_str()),
            None => refusal
                .message
                .contains(&format!("1 to {MAX_BATCH} samples")),
        },
        StatusCode::UNAUTHORIZED => refusal.message.contains("token"),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => refusal.message.contains("Content-Type"),
        StatusCode::PAYLOAD_TOO_LARGE => refusal.message.contains("bytes"),
        _ => false,
    };
    if !named || refusal.kind.is_empty() {
        return Err(format!("{status} names no line or field: {shown}"));
    }
    Ok(())
}

#[test]
fn metric_pushes_never_break_the_endpoint_and_every_refusal_names_its_field() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let console = runtime.block_on(TestConsole::builder("metrics-fuzz").open());
    let store = console.pool_store().clone();
    let registry = console.registry().clone();
    let token = runtime.block_on(store.new_metric_token()).unwrap();
    // A fresh router for each case: its rate limit is not what is tested here.
    let app = || metrics_api::app(store.clone(), registry.clone());
    let mut count = CaseCount::new();
    count.check(
        "arbitrary",
        256,
        push(fuzz::arbitrary(r#"[{}\[\]":,a-z_0-9. \n-]{0,200}"#), &token),
        |push| runtime.block_on(check_push(app(), &push, false)),
    );
    count.check(
        "mutated",
        512,
        push(fuzz::mutated(valid_bodies()), &token),
        |push| runtime.block_on(check_push(app(), &push, false)),
    );
    count.check("valid", 128, fuzz::valid_variants(valid_bodies()), |body| {
        let push = Push {
            body: body.trim_start_matches('\u{feff}').as_bytes().to_vec(),
            authorization: Some(format!("Bearer {token}").into_bytes()),
            content_type: Some(b"application/json".to_vec()),
        };
        runtime.block_on(check_push(app(), &push, true))
    });
    count.report("metrics endpoint");
    runtime.block_on(console.shutdown());
}

/// Sends `body` as a valid pusher would; answers the status and the refusal.
async fn send_once(app: axum::Router, token: &str, body: &str) -> (StatusCode, Option<Refusal>) {
    let request = Request::post("/v1/metrics")
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = app.oneshot(request).await.unwrap();
    let status = response.status();
    let answer = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    (status, serde_json::from_slice(&answer).ok())
}

/// Found by the property above: an empty key was refused as `: unknown field`, naming
/// nothing; and an item that is not an object did not say which.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_keys_and_items_are_named() {
    let console = TestConsole::builder("metrics-odd").open().await;
    let token = console.pool_store().new_metric_token().await.unwrap();
    let app = || metrics_api::app(console.pool_store().clone(), console.registry().clone());
    let cases = [
        (
            r#"{"name":"q","value":1,"":2}"#,
            "\"\"",
            "\"\": unknown field",
        ),
        (
            r#"[{"name":"q","value":1},{"name":"q","value":1,"a b":2}]"#,
            "[1].\"a b\"",
            "[1].\"a b\": unknown field",
        ),
        (
            r#"[{"name":"q","value":1},3]"#,
            "[1]",
            "[1]: each sample is an object",
        ),
    ];
    for (body, field, message) in cases {
        let (status, refusal) = send_once(app(), &token, body).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let refusal = refusal.unwrap();
        assert_eq!(refusal.field.as_deref(), Some(field), "{body}");
        assert!(
            refusal.message.starts_with(message),
            "{body}: {}",
            refusal.message
        );
    }
    let (status, refusal) = send_once(app(), &token, "3").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(refusal.unwrap().message.starts_with("the body"));
    console.shutdown().await;
}
