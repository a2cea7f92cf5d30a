//! What an operator or a peer hands the agent never panics it, and every refusal says
//! where: the config file (parsed, then resolved with a simulator trace), and the router's
//! lease requests (bodies, `Idempotency-Key`, `Authorization`, `Content-Type`, paths and
//! query strings). Inputs: arbitrary bytes and text, and mutations of valid ones
//! (`ebb_testkit::fuzz`); each test prints `parser cases run: ...`. The structured-JSON
//! property and the corpus of odd bodies are in `leases.rs`.

use crate::support::{TestAgent, token_entry};
use axum::body::Body;
use axum::http::{HeaderValue, Method, Request, StatusCode};
use ebb_agent::auth::{Auth, Scope};
use ebb_agent::config::{self, ConfigError, parse_file, resolve};
use ebb_testkit::TempDir;
use ebb_testkit::fuzz::{self, CaseCount, lossy, names_a_line};
use ebb_wire::agent::{ApiError, GpuList, Lease, LeaseList};
use proptest::prelude::*;
use std::path::Path;
use std::time::Duration;

/// Config files that parse and resolve (the shipped sample needs a token: one is given).
fn valid_configs() -> Vec<String> {
    let token = format!(
        "\n[[tokens]]\nname = \"console\"\nscope = \"lease\"\nsha256 = \"{}\"\n",
        "ab".repeat(32)
    );
    vec![
        format!("{}{token}", include_str!("../../dist/agent.toml")),
        "listen = \"127.0.0.1:7071\"\nhost_name = \"gpu-07\"\nsim = \"4xH800,2xV100\"\nsim_profile = \"burst\"\nsample_interval_ms = 250\nrelease_grace_s = 5\n".to_string(),
        format!(
            "listen = \"[::1]:7070\"\nsim = \"8xA100\"\nsim_trace = \"trace.csv\"\nstate_dir = \"/tmp/ebb-agent-fuzz\"\ntls = false\n{token}[[tokens]]\nname = \"reader\"\nscope = \"read\"\nsha256 = \"{}\"\n",
            "CD".repeat(32)
        ),
    ]
}

/// Simulator traces (`t_s,util_pct`) that parse.
fn valid_sim_traces() -> Vec<String> {
    vec![
        "t_s,util_pct\n0,10\n30,95.5\n60,0\n".to_string(),
        "t_s, util_pct\n0.5,50\n1.5,100\n".to_string(),
    ]
}

/// A refusal names the key (`key: problem`) or, for TOML, the line.
fn check_config(text: &str, trace: &str) -> Result<(), String> {
    let file = match parse_file(text) {
        Ok(file) => file,
        Err(message) => {
            return if names_a_line(&message) {
                Ok(())
            } else {
                Err(format!("names no line: {message}"))
            };
        }
    };
    let read_trace = |_: &Path| Ok(trace.to_string());
    match resolve(file.settings, file.tokens, read_trace) {
        Ok(_) => Ok(()),
        Err(ConfigError::Invalid { key, problem }) if !key.is_empty() && !problem.is_empty() => {
            if key == "sim_trace" && problem.contains("trace") && !names_a_line(&problem) {
                return Err(format!("a trace refusal names no line: {problem}"));
            }
            Ok(())
        }
        Err(other) => Err(format!("refused without a key: {other}")),
    }
}

#[test]
fn the_config_file_never_panics_the_agent_and_every_refusal_names_its_key_or_line() {
    let mut count = CaseCount::new();
    let any_trace = prop_oneof![
        fuzz::valid_variants(valid_sim_traces()).prop_map(String::into_bytes),
        fuzz::mutated(valid_sim_traces()),
    ];
    count.check(
        "arbitrary",
        256,
        (
            fuzz::arbitrary(r#"[a-z_\[\]=." \n#0-9:x,A-Z]{0,300}"#),
            any_trace.clone(),
        ),
        |(text, trace)| check_config(&lossy(&text), &lossy(&trace)),
    );
    count.check(
        "mutated",
        768,
        (fuzz::mutated(valid_configs()), any_trace),
        |(text, trace)| check_config(&lossy(&text), &lossy(&trace)),
    );
    count.check(
        "valid",
        128,
        (
            fuzz::valid_variants(valid_configs()),
            fuzz::valid_variants(valid_sim_traces()),
        ),
        |(text, trace)| {
            let file = parse_file(&text).map_err(|error| format!("refused: {error}"))?;
            resolve(file.settings, file.tokens, |_: &Path| Ok(trace.clone()))
                .map(drop)
                .map_err(|error| format!("refused: {error}"))
        },
    );
    count.report("agent config");
}

/// Found by the property above: a config file that is not UTF-8 was refused with "stream
/// did not contain valid UTF-8", naming neither line nor column.
#[test]
fn a_config_file_that_is_not_utf8_is_refused_naming_the_line() {
    let dir = TempDir::new("agent-config-bytes");
    let path = dir.join("agent.toml");
    std::fs::write(
        &path,
        b"listen = \"127.0.0.1:7070\"\nhost_name = \"gpu-\xff7\"\n",
    )
    .unwrap();
    let error = config::read_file(&path, true).unwrap_err().to_string();
    assert!(
        error.contains("line 2, column 18: not UTF-8 (byte 0xFF)"),
        "{error}"
    );
    assert!(error.contains("agent.toml"), "{error}");
}

// ---------------------------------------------------------------------------------------
// The router.

const LEASE_TOKEN: &str = "lease-token";
const READ_TOKEN: &str = "read-token";

/// Lease bodies that are granted (or refused only because the GPUs are taken); `uuid` is
/// one of the agent's GPUs.
fn valid_bodies(uuid: &str) -> Vec<String> {
    vec![
        r#"{"pool_id":"p","holder_id":"h","count":1}"#.to_string(),
        "{\n  \"pool_id\": \"inference\",\n  \"holder_id\": \"console-7\",\n  \"count\": 2,\n  \"load_profile\": \"steady\"\n}\n".to_string(),
        format!(
            "{{\n  \"pool_id\": \"训练\",\n  \"holder_id\": \"h\",\n  \"gpu_uuids\": [\n    \"{uuid}\"\n  ]\n}}\n"
        ),
    ]
}

/// One request as a peer may send it: a body, and headers that may be odd or missing.
#[derive(Debug, Clone)]
struct Sent {
    body: Vec<u8>,
    key: Option<Vec<u8>>,
    authorization: Option<Vec<u8>>,
    content_type: Option<Vec<u8>>,
}

fn header_bytes(good: &'static str) -> impl Strategy<Value = Option<Vec<u8>>> {
    prop_oneof![
        4 => Just(Some(good.as_bytes().to_vec())),
        1 => Just(None),
        2 => fuzz::mutated(vec![good.to_string()]).prop_map(Some),
        1 => proptest::collection::vec(any::<u8>(), 0..300).prop_map(Some),
    ]
}

fn sent(bodies: impl Strategy<Value = Vec<u8>>) -> impl Strategy<Value = Sent> {
    (
        bodies,
        prop_oneof![
            4 => "[a-zA-Z0-9-]{1,40}".prop_map(|key| Some(key.into_bytes())),
            1 => Just(None),
            1 => proptest::collection::vec(any::<u8>(), 0..300).prop_map(Some),
        ],
        header_bytes("Bearer lease-token"),
        header_bytes("application/json"),
    )
        .prop_map(|(body, key, authorization, content_type)| Sent {
            body,
            key,
            authorization,
            content_type,
        })
}

/// The names a lease refusal may point at.
const LEASE_FIELDS: &[&str] = &[
    "pool_id",
    "holder_id",
    "count",
    "gpu_uuids",
    "command",
    "load_profile",
    "Idempotency-Key",
    "Content-Type",
    "Authorization",
    "unknown field",
    "missing field",
];

/// `method path` with `Authorization: Bearer token`.
async fn send_as(
    agent: &TestAgent,
    method: Method,
    path: &str,
    token: &str,
) -> (StatusCode, Vec<u8>) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {token}"))
        .body(Body::empty())
        .unwrap();
    agent.send(request).await
}

async fn leases(agent: &TestAgent) -> Vec<Lease> {
    let (status, body) = send_as(agent, Method::GET, "/v1/leases", READ_TOKEN).await;
    assert_eq!(status, StatusCode::OK);
    serde_json::from_slice::<LeaseList>(&body).unwrap().leases
}

/// Sends one request; answers why it broke a rule, if it did.
async fn check_sent(agent: &TestAgent, sent: &Sent, must_grant: bool) -> Result<(), String> {
    let mut request = Request::post("/v1/leases");
    for (name, value) in [
        ("idempotency-key", &sent.key),
        ("authorization", &sent.authorization),
        ("content-type", &sent.content_type),
    ] {
        // A value HTTP cannot carry never reaches the router.
        if let Some(value) = value.as_ref().and_then(|v| HeaderValue::from_bytes(v).ok()) {
            request = request.header(name, value);
        }
    }
    let request = request.body(Body::from(sent.body.clone())).unwrap();
    let before = leases(agent).await;
    let (status, answer) = agent.send(request).await;
    if status.is_server_error() {
        return Err(format!("{status}: {}", String::from_utf8_lossy(&answer)));
    }
    if status.is_success() {
        let lease: Lease = serde_json::from_slice(&answer)
            .map_err(|error| format!("{status} with no lease: {error}"))?;
        // Give the GPUs back, so the next request finds them free.
        let path = format!("/v1/leases/{}", lease.id);
        let (released, _) = send_as(agent, Method::DELETE, &path, LEASE_TOKEN).await;
        if !released.is_success() {
            return Err(format!("the release of {} answered {released}", lease.id));
        }
        return Ok(());
    }
    let error: ApiError = serde_json::from_slice(&answer).map_err(|error| {
        format!(
            "{status} not a JSON error ({error}): {}",
            String::from_utf8_lossy(&answer)
        )
    })?;
    if must_grant && status != StatusCode::CONFLICT {
        return Err(format!("a valid request was refused: {status} {error:?}"));
    }
    let named = match status {
        StatusCode::UNAUTHORIZED => error.message.contains("bearer token"),
        StatusCode::FORBIDDEN => error.message.contains("scope"),
        StatusCode::PAYLOAD_TOO_LARGE => error.message.contains("bytes"),
        _ => {
            names_a_line(&error.message)
                || LEASE_FIELDS
                    .iter()
                    .any(|field| error.message.contains(field))
        }
    };
    if !named {
        return Err(format!(
            "{status} names no line or field: {:?}",
            error.message
        ));
    }
    if leases(agent).await != before {
        return Err(format!("{status} changed the leases"));
    }
    Ok(())
}

fn agent_with_tokens(runtime: &tokio::runtime::Runtime) -> TestAgent {
    runtime.block_on(async {
        let auth = Auth::from_entries(&[
            token_entry(READ_TOKEN, Scope::Read),
            token_entry(LEASE_TOKEN, Scope::Lease),
        ])
        .unwrap();
        TestAgent::with(4, auth, Duration::from_secs(1)).await
    })
}

#[test]
fn lease_requests_never_break_the_router_and_every_refusal_names_its_field() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let agent = agent_with_tokens(&runtime);
    let (_, gpus) = runtime.block_on(send_as(&agent, Method::GET, "/v1/gpus", READ_TOKEN));
    let uuid = serde_json::from_slice::<GpuList>(&gpus).unwrap().gpus[0]
        .uuid
        .clone();
    let mut count = CaseCount::new();
    count.check(
        "arbitrary",
        256,
        sent(fuzz::arbitrary(r#"[{}\[\]":,a-z_0-9. \n\\-]{0,200}"#)),
        |sent| runtime.block_on(check_sent(&agent, &sent, false)),
    );
    count.check(
        "mutated",
        512,
        sent(fuzz::mutated(valid_bodies(&uuid))),
        |sent| runtime.block_on(check_sent(&agent, &sent, false)),
    );
    count.check(
        "valid",
        128,
        (fuzz::valid_variants(valid_bodies(&uuid)), "[a-z0-9]{8,16}"),
        |(body, key)| {
            let sent = Sent {
                body: body.trim_start_matches('\u{feff}').as_bytes().to_vec(),
                key: Some(key.into_bytes()),
                authorization: Some(format!("Bearer {LEASE_TOKEN}").into_bytes()),
                content_type: Some(b"application/json".to_vec()),
            };
            runtime.block_on(check_sent(&agent, &sent, true))
        },
    );
    count.report("agent lease requests");
}

/// Paths and query strings a peer may send to any route: never a server error, always a
/// JSON error with words. (`/v1/stream` never ends, so it is not asked.)
#[test]
fn odd_paths_and_queries_get_json_errors() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let agent = agent_with_tokens(&runtime);
    let routes = vec![
        "/v1/health".to_string(),
        "/v1/gpus".to_string(),
        "/v1/leases?state=all".to_string(),
        "/v1/leases/lease-1".to_string(),
        "/v1/leases/lease-1/checkpoint".to_string(),
        "/v1/terms".to_string(),
        "/metrics".to_string(),
    ];
    let methods = proptest::sample::select(vec![Method::GET, Method::POST, Method::DELETE]);
    let mut count = CaseCount::new();
    count.check(
        "mutated",
        384,
        (methods, fuzz::mutated(routes)),
        |(method, path)| {
            let path = lossy(&path);
            let Ok(uri) = path.parse::<axum::http::Uri>() else {
                return Ok(()); // not a request HTTP can carry
            };
            if uri.path().starts_with("/v1/stream") {
                return Ok(());
            }
            runtime.block_on(async {
                let (status, answer) = send_as(&agent, method.clone(), &path, LEASE_TOKEN).await;
                if status.is_server_error() {
                    return Err(format!("{method} {path}: {status}"));
                }
                if !status.is_success() {
                    let error: ApiError = serde_json::from_slice(&answer).map_err(|error| {
                        format!("{method} {path}: {status} not a JSON error: {error}")
                    })?;
                    if error.message.trim().is_empty() {
                        return Err(format!("{method} {path}: {status} with no words"));
                    }
                }
                Ok(())
            })
        },
    );
    count.report("agent paths and queries");
}

/// Found by the config property: a simulator trace with a byte order mark was refused
/// (`trace line 1: the header must be `t_s,util_pct``).
#[test]
fn a_simulator_trace_with_a_byte_order_mark_is_read() {
    let profile = ebb_agent::sim::parse_trace("\u{feff}t_s,util_pct\r\n0,10\r\n60,90\r\n");
    assert!(profile.is_ok(), "{profile:?}");
}
