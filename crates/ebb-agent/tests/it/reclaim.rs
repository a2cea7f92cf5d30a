//! The host's owner reclaiming a spot lease with a notice: the deadline shown, the
//! workload told at the notice and stopped at the deadline, the GPUs free after it, bad
//! reclaims (a lease holding no spot GPU among them) refused by field, a reclaim kept
//! across a restart, and the simulator's own seeded interruptions.

use crate::support::{RestartableHost, TestAgent, json, token_entry};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use ebb_agent::auth::{Auth, Scope};
use ebb_agent::leases::{LeaseConfig, LeaseService};
use ebb_agent::spot::SpotOffer;
use ebb_testkit::{TempDir, eventually};
use ebb_wire::agent::{ApiError, Lease, LeaseList, LeaseRequest, LeaseState};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

async fn reclaim(agent: &TestAgent, id: &str, body: &str, token: &str) -> (StatusCode, Vec<u8>) {
    agent
        .send(
            Request::post(format!("/v1/leases/{id}/reclaim"))
                .header("content-type", "application/json")
                .header("authorization", format!("Bearer {token}"))
                .body(Body::from(body.to_string()))
                .unwrap(),
        )
        .await
}

async fn wait_state(agent: &TestAgent, id: &str, state: LeaseState) -> Lease {
    eventually(
        &format!("lease {id} {state:?}"),
        Duration::from_secs(10),
        || async {
            let lease: Lease = json(&agent.get(&format!("/v1/leases/{id}")).await.1);
            if lease.state == state {
                Ok(lease)
            } else {
                Err(lease.state)
            }
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reclaim_shows_its_deadline_signals_the_workload_and_frees_the_gpus_after_it() {
    // A release grace far past the notice: the deadline, not the grace, ends the lease.
    let agent = TestAgent::spot(2, Auth::open(), Duration::from_secs(60), SpotOffer::All).await;
    // Told to stop, it says so and goes on: only the deadline stops it.
    let script = r#"trap 'echo got TERM' TERM; echo ready; while :; do sleep 0.05; done"#;
    let body = serde_json::json!({"pool_id": "p", "holder_id": "h", "count": 2, "command": ["sh", "-c", script]});
    let lease: Lease = json(&agent.post_lease("spot", &body.to_string()).await.1);
    assert!(lease.spot, "{lease:?}");
    let log = lease.workload_log.clone().unwrap();
    let logged = |line: &'static str| {
        let log = log.clone();
        async move {
            eventually(
                &format!("the workload to print {line:?}"),
                Duration::from_secs(5),
                || async {
                    let text = std::fs::read_to_string(&log).unwrap_or_default();
                    text.contains(line).then_some(()).ok_or(text)
                },
            )
            .await
        }
    };
    logged("ready").await;

    let before_ms = now_ms();
    let (status, answer) = reclaim(&agent, &lease.id, r#"{"notice_s":1}"#, "").await;
    assert_eq!(
        status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&answer)
    );
    let reclaimed: Lease = json(&answer);
    assert_eq!(
        reclaimed.state,
        LeaseState::Active,
        "the GPUs are the holder's until the deadline"
    );
    let deadline_ms = reclaimed.reclaim_deadline_ms.expect("a deadline");
    assert!(
        (before_ms + 1000..=now_ms() + 1000).contains(&deadline_ms),
        "{deadline_ms} is the notice from now ({before_ms})"
    );
    let listed = json::<LeaseList>(&agent.get("/v1/leases").await.1).leases;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].reclaim_deadline_ms, Some(deadline_ms));
    assert!(listed[0].spot);

    logged("got TERM").await;
    let released = wait_state(&agent, &lease.id, LeaseState::Released).await;
    assert!(
        released.released_at_ms.unwrap() >= deadline_ms,
        "{released:?}"
    );
    assert_eq!(
        released.workload_signal,
        Some(9),
        "killed at the deadline: {released:?}"
    );
    let again = agent
        .post_lease("next", r#"{"pool_id":"p","holder_id":"other","count":2}"#)
        .await;
    assert_eq!(
        again.0,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&again.1)
    );
}

#[tokio::test]
async fn a_second_reclaim_never_extends_the_deadline_and_a_release_during_the_notice_just_releases()
{
    let agent = TestAgent::spot(2, Auth::open(), Duration::from_secs(5), SpotOffer::All).await;
    let lease: Lease = json(
        &agent
            .post_lease("k", r#"{"pool_id":"p","holder_id":"h","count":1}"#)
            .await
            .1,
    );
    let first: Lease = json(
        &reclaim(&agent, &lease.id, r#"{"notice_s":600}"#, "")
            .await
            .1,
    );
    let deadline_ms = first.reclaim_deadline_ms.unwrap();
    let longer: Lease = json(
        &reclaim(&agent, &lease.id, r#"{"notice_s":3600}"#, "")
            .await
            .1,
    );
    assert_eq!(
        longer.reclaim_deadline_ms,
        Some(deadline_ms),
        "never extended"
    );
    let shorter: Lease = json(
        &reclaim(&agent, &lease.id, r#"{"notice_s":300}"#, "")
            .await
            .1,
    );
    assert!(
        shorter.reclaim_deadline_ms.unwrap() < deadline_ms,
        "brought forward"
    );

    let (status, answer) = agent.delete(&format!("/v1/leases/{}", lease.id)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(json::<Lease>(&answer).state, LeaseState::Released);
    let both = agent
        .post_lease("k2", r#"{"pool_id":"p","holder_id":"h","count":2}"#)
        .await;
    assert_eq!(both.0, StatusCode::CREATED, "nothing held twice");
}

#[tokio::test]
async fn bad_reclaims_name_their_field_and_change_nothing() {
    let auth = Auth::from_entries(&[
        token_entry("leaser", Scope::Lease),
        token_entry("owner", Scope::Admin),
    ])
    .unwrap();
    let agent = TestAgent::spot(2, auth, Duration::from_secs(5), SpotOffer::All).await;
    let created = agent
        .send(
            Request::post("/v1/leases")
                .header("content-type", "application/json")
                .header("idempotency-key", "k")
                .header("authorization", "Bearer leaser")
                .body(Body::from(r#"{"pool_id":"p","holder_id":"h","count":1}"#))
                .unwrap(),
        )
        .await;
    assert_eq!(created.0, StatusCode::CREATED);
    let lease: Lease = json(&created.1);
    let id = lease.id.as_str();

    let refused = |status: StatusCode, answer: (StatusCode, Vec<u8>), words: &[&str]| {
        assert_eq!(answer.0, status, "{}", String::from_utf8_lossy(&answer.1));
        let error: ApiError = json(&answer.1);
        for word in words {
            assert!(error.message.contains(word), "{word:?} in {error:?}");
        }
    };
    refused(
        StatusCode::FORBIDDEN,
        reclaim(&agent, id, r#"{"notice_s":60}"#, "leaser").await,
        &["admin"],
    );
    for body in [
        r#"{"notice_s":0}"#,
        r#"{"notice_s":3601}"#,
        r#"{"notice_s":-5}"#,
        r#"{"notice_s":"2m"}"#,
        r#"{}"#,
    ] {
        refused(
            StatusCode::UNPROCESSABLE_ENTITY,
            reclaim(&agent, id, body, "owner").await,
            &["notice_s"],
        );
    }
    refused(
        StatusCode::NOT_FOUND,
        reclaim(&agent, "lease-99-nope", r#"{"notice_s":60}"#, "owner").await,
        &["lease-99-nope"],
    );
    let unchanged: Lease = json(
        &agent
            .send(
                Request::get(format!("/v1/leases/{id}"))
                    .header("authorization", "Bearer leaser")
                    .body(Body::empty())
                    .unwrap(),
            )
            .await
            .1,
    );
    assert_eq!(unchanged.reclaim_deadline_ms, None);
    assert_eq!(unchanged.state, LeaseState::Active);

    agent
        .send(
            Request::delete(format!("/v1/leases/{id}"))
                .header("authorization", "Bearer leaser")
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    refused(
        StatusCode::UNPROCESSABLE_ENTITY,
        reclaim(&agent, id, r#"{"notice_s":60}"#, "owner").await,
        &["id", "released"],
    );
    let (status, answer) = reclaim(&agent, "x", r#"{"notice_s":60}"#, "").await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "{}",
        String::from_utf8_lossy(&answer)
    );
}

#[tokio::test]
async fn a_lease_holding_no_spot_gpu_is_refused_naming_the_lease_and_left_as_it_was() {
    // GPU 1 is offered as spot, GPU 0 on demand.
    let agent = TestAgent::spot(
        2,
        Auth::open(),
        Duration::from_secs(5),
        SpotOffer::Gpus([1].into()),
    )
    .await;
    let gpus: ebb_wire::agent::GpuList = json(&agent.get("/v1/gpus").await.1);
    assert_eq!(
        gpus.gpus.iter().map(|gpu| gpu.spot).collect::<Vec<_>>(),
        [false, true]
    );
    let mut leases = Vec::new();
    for key in ["a", "b"] {
        let (status, body) = agent
            .post_lease(key, r#"{"pool_id":"p","holder_id":"h","count":1}"#)
            .await;
        assert_eq!(status, StatusCode::CREATED);
        let lease: Lease = json(&body);
        assert_eq!(lease.spot, lease.gpu_indexes == [1], "{lease:?}");
        leases.push(lease);
    }
    let (on_demand, spot): (Vec<Lease>, Vec<Lease>) =
        leases.into_iter().partition(|lease| !lease.spot);
    let (on_demand, spot) = (&on_demand[0], &spot[0]);
    // Reported as kept, in the list and by id.
    let listed = json::<LeaseList>(&agent.get("/v1/leases").await.1).leases;
    for lease in &listed {
        assert_eq!(lease.spot, lease.id == spot.id, "{lease:?}");
    }
    let by_id: Lease = json(&agent.get(&format!("/v1/leases/{}", spot.id)).await.1);
    assert!(by_id.spot);

    let (status, answer) = reclaim(&agent, &on_demand.id, r#"{"notice_s":60}"#, "").await;
    assert_eq!(
        status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        String::from_utf8_lossy(&answer)
    );
    let error: ApiError = json(&answer);
    assert!(
        error.message.contains("lease")
            && error
                .message
                .contains("holds no spot GPU: only spot leases can be reclaimed"),
        "{error:?}"
    );
    let unchanged: Lease = json(&agent.get(&format!("/v1/leases/{}", on_demand.id)).await.1);
    assert_eq!(
        (unchanged.state, unchanged.reclaim_deadline_ms),
        (LeaseState::Active, None)
    );
    let (status, answer) = reclaim(&agent, &spot.id, r#"{"notice_s":60}"#, "").await;
    assert_eq!(
        status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&answer)
    );
    assert!(json::<Lease>(&answer).reclaim_deadline_ms.is_some());
}

async fn wait_service_state(service: &LeaseService, id: &str, state: LeaseState) -> Lease {
    eventually(
        &format!("lease {id} {state:?}"),
        Duration::from_secs(10),
        || async {
            let lease = service.get(id).await.unwrap();
            if lease.state == state {
                Ok(lease)
            } else {
                Err(lease)
            }
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reclaim_survives_a_restart_before_and_after_its_deadline() {
    let dir = TempDir::new("reclaim-restart");
    let host = RestartableHost::offering(&dir, SpotOffer::All);
    let request: LeaseRequest =
        serde_json::from_str(r#"{"pool_id":"p","holder_id":"h","count":1}"#).unwrap();
    let first = host.start(LeaseConfig::default()).await;
    let soon = first.create("soon", &request).await.unwrap().lease;
    let later = first.create("later", &request).await.unwrap().lease;
    let soon = first
        .reclaim(&soon.id, Duration::from_secs(1))
        .await
        .unwrap();
    let later = first
        .reclaim(&later.id, Duration::from_secs(4))
        .await
        .unwrap();
    first.shutdown().await;
    drop(first);
    // The agent is down past the first deadline.
    let soon_deadline_ms = soon.reclaim_deadline_ms.unwrap();
    eventually(
        "the first deadline to pass",
        Duration::from_secs(5),
        || async { (now_ms() > soon_deadline_ms).then_some(()).ok_or(now_ms()) },
    )
    .await;

    let second = host.start(LeaseConfig::default()).await;
    let released = wait_service_state(&second, &soon.id, LeaseState::Released).await;
    assert!(released.released_at_ms.unwrap() >= soon_deadline_ms);
    let kept = second.get(&later.id).await.unwrap();
    assert_eq!(
        kept.state,
        LeaseState::Active,
        "its deadline is still ahead"
    );
    assert_eq!(kept.reclaim_deadline_ms, later.reclaim_deadline_ms);
    let released = wait_service_state(&second, &later.id, LeaseState::Released).await;
    assert!(released.released_at_ms.unwrap() >= later.reclaim_deadline_ms.unwrap());
    assert!(second.holders_now().is_empty(), "every GPU free");
    second.shutdown().await;
}

const AGENT: &str = env!("CARGO_BIN_EXE_ebb-agent");

/// `ebb-agent reclaim ARGS`: (exit code, stdout, stderr).
fn reclaim_command(args: &[&str]) -> (i32, String, String) {
    let output = std::process::Command::new(AGENT)
        .arg("reclaim")
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reclaim_command_takes_a_lease_back_and_exits_2_when_refused() {
    let dir = TempDir::new("reclaim-command");
    let config = dir.join("agent.toml");
    let mut toml = String::new();
    for (name, scope) in [("leaser", "lease"), ("owner", "admin")] {
        let entry = token_entry(name, Scope::Lease);
        toml += &format!(
            "[[tokens]]\nname = \"{name}\"\nscope = \"{scope}\"\nsha256 = \"{}\"\n",
            entry.sha256
        );
        std::fs::write(dir.join(name), format!("{name}\n")).unwrap();
    }
    std::fs::write(&config, toml).unwrap();
    let agent = ebb_testkit::AgentCommand::sim(&dir.subdir("state"), "2xA100")
        .program(std::path::Path::new(AGENT))
        .args(["--config", config.to_str().unwrap(), "--spot"])
        .start();
    let http = reqwest::Client::new();
    let lease: Lease = http
        .post(format!("{}/v1/leases", agent.url))
        .bearer_auth("leaser")
        .header("idempotency-key", "k")
        .json(&serde_json::json!({"pool_id": "p", "holder_id": "h", "count": 2}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let owner = dir.join("owner");
    let leaser = dir.join("leaser");
    let with = |token: &std::path::Path, notice: &str| {
        let args = [
            lease.id.as_str(),
            "--notice",
            notice,
            "--url",
            agent.url.as_str(),
            "--token-file",
            token.to_str().unwrap(),
        ];
        reclaim_command(&args)
    };

    let (code, _, stderr) = with(&owner, "2h");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("notice_s"), "{stderr}");
    let (code, _, stderr) = with(&leaser, "1s");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("admin"), "{stderr}");
    let (code, _, stderr) = with(&owner, "soon");
    assert_eq!(code, 2, "a usage error: {stderr}");
    assert!(stderr.contains("--notice"), "{stderr}");

    let (code, stdout, stderr) = with(&owner, "1s");
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(&lease.id), "{stdout}");
    eventually(
        "the lease released at its deadline",
        Duration::from_secs(10),
        || async {
            let lease: Lease = http
                .get(format!("{}/v1/leases/{}", agent.url, lease.id))
                .bearer_auth("leaser")
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            (lease.state == LeaseState::Released)
                .then_some(())
                .ok_or(lease.state)
        },
    )
    .await;
    let (code, _, stderr) = with(&owner, "1s");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("released"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reclaim_command_reaches_a_tls_agent_trusting_its_own_certificate() {
    let dir = TempDir::new("reclaim-command-tls");
    let state = dir.subdir("state");
    let agent = ebb_testkit::AgentCommand::sim(&state, "1xA100")
        .program(std::path::Path::new(AGENT))
        .args(["--tls"])
        .start();
    assert!(agent.url.starts_with("https://"), "{}", agent.url);
    let cert = state.join("tls").join("cert.pem");
    let args = |cert: Option<&str>| {
        let mut args = vec![
            "lease-1-none",
            "--notice",
            "1m",
            "--url",
            agent.url.as_str(),
        ];
        args.extend(cert.map(|cert| ["--cert", cert]).into_iter().flatten());
        reclaim_command(&args)
    };
    // Trusting it, the call reaches the agent, which answers that there is no such lease.
    let (code, _, stderr) = args(Some(cert.to_str().unwrap()));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("(404)") && stderr.contains("lease-1-none"),
        "{stderr}"
    );
    // Without it, the self-signed certificate is not trusted: a failure, not a refusal.
    let (code, _, stderr) = args(None);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("cannot reach"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulators_owner_reclaims_spot_leases_by_its_seeded_process_unasked() {
    // 32 spot leases at 60 reclaims per lease-hour: the first reclaim is due within
    // seconds (the seed and the lease ids fix when), with a second's notice.
    let dir = TempDir::new("reclaim-interruptions");
    let agent = ebb_testkit::AgentCommand::sim(&dir.subdir("state"), "32xH800")
        .program(std::path::Path::new(AGENT))
        .sample_interval_ms(100)
        .args([
            "--spot",
            "--spot-interruptions-per-hour",
            "60",
            "--spot-notice-s",
            "1",
        ])
        .start();
    let http = reqwest::Client::new();
    let gpus: ebb_wire::agent::GpuList = http
        .get(format!("{}/v1/gpus", agent.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        gpus.gpus.iter().all(|gpu| gpu.spot),
        "every GPU offered as spot"
    );
    for i in 0..32 {
        let lease: Lease = http
            .post(format!("{}/v1/leases", agent.url))
            .header("idempotency-key", format!("k{i}"))
            .json(&serde_json::json!({"pool_id": "p", "holder_id": "h", "count": 1}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(lease.spot);
    }
    let all = |http: reqwest::Client| {
        let url = format!("{}/v1/leases?state=all", agent.url);
        async move {
            http.get(url)
                .send()
                .await
                .unwrap()
                .json::<LeaseList>()
                .await
                .unwrap()
                .leases
        }
    };
    let reclaimed = eventually(
        "a lease reclaimed by the simulated owner",
        Duration::from_secs(60),
        || async {
            let leases = all(http.clone()).await;
            leases
                .into_iter()
                .find(|lease| lease.reclaim_deadline_ms.is_some())
                .ok_or("none reclaimed yet")
        },
    )
    .await;
    let deadline_ms = reclaimed.reclaim_deadline_ms.unwrap();
    assert_eq!(
        reclaimed.state,
        LeaseState::Active,
        "shown with its deadline until it"
    );
    let released = eventually(
        "the reclaimed lease released at its deadline",
        Duration::from_secs(10),
        || async {
            let leases = all(http.clone()).await;
            let lease = leases
                .into_iter()
                .find(|lease| lease.id == reclaimed.id)
                .unwrap();
            (lease.state == LeaseState::Released)
                .then(|| lease.clone())
                .ok_or(lease.state)
        },
    )
    .await;
    assert!(released.released_at_ms.unwrap() >= deadline_ms);
}

#[test]
fn a_spot_gpu_the_host_lacks_or_a_rate_past_sixty_stops_the_agent_naming_the_field() {
    let dir = TempDir::new("spot-config");
    for (args, expected) in [
        (
            &["--spot-gpus", "0,5"][..],
            "spot_gpus: this host has no GPU 5: it has 2 (indexes 0 to 1)",
        ),
        (
            &["--spot", "--spot-interruptions-per-hour", "61"][..],
            "spot_interruptions_per_hour: must be more than 0 and at most 60",
        ),
    ] {
        let output = std::process::Command::new(AGENT)
            .args([
                "serve",
                "--sim",
                "2xA100",
                "--listen",
                "127.0.0.1:0",
                "--state-dir",
            ])
            .arg(dir.path())
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?}");
        assert!(stderr.contains(expected), "{expected} in {stderr}");
    }
}
