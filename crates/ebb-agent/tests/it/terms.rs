//! Fencing by console term: an agent keeps, per console group, the highest term a lease
//! call came with, refuses a lower one (409 `stale_term`, both terms named) for a create and
//! a release alike, keeps it across a restart, and treats a call without a term as before.
//! A newly elected console announces its term (`POST /v1/terms`) before any lease call.

use crate::support::{RestartableHost, TestAgent, json};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use ebb_agent::leases::ledger::LeaseError;
use ebb_agent::leases::{LeaseConfig, ServiceError};
use ebb_testkit::TempDir;
use ebb_wire::agent::{
    AgentErrorKind, ApiError, ConsoleTerm, Lease, LeaseList, LeaseRequest, LeaseState,
};

/// A one-GPU request fenced by `term` of `group` (none when `term` is `None`).
fn body(group: &str, term: Option<u64>) -> String {
    let request = LeaseRequest {
        pool_id: "pool-a".into(),
        holder_id: "console-1".into(),
        count: Some(1),
        gpu_uuids: None,
        command: None,
        load_profile: None,
        console_group: None,
        term: None,
    };
    let term = term.map(|term| ConsoleTerm::new(group, term));
    serde_json::to_string(&request.with_term(term.as_ref())).unwrap()
}

fn release_path(id: &str, group: &str, term: Option<u64>) -> String {
    match term {
        Some(term) => format!("/v1/leases/{id}?console_group={group}&term={term}"),
        None => format!("/v1/leases/{id}"),
    }
}

async fn leases(agent: &TestAgent) -> Vec<Lease> {
    json::<LeaseList>(&agent.get("/v1/leases").await.1).leases
}

fn assert_stale(status: StatusCode, body: &[u8], term: u64, highest: u64) {
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "{}",
        String::from_utf8_lossy(body)
    );
    let error: ApiError = json(body);
    assert_eq!(error.kind, AgentErrorKind::StaleTerm);
    assert!(
        error
            .message
            .contains(&format!("term: {term} of console group"))
            && error.message.contains(&format!("seen term {highest}")),
        "both terms named: {}",
        error.message
    );
}

#[tokio::test]
async fn a_lower_term_is_refused_for_a_create_and_a_release_and_changes_nothing() {
    let agent = TestAgent::new(4).await;
    let (status, granted) = agent.post_lease("k1", &body("group-1", Some(5))).await;
    assert_eq!(status, StatusCode::CREATED);
    let granted: Lease = json(&granted);

    let (status, refused) = agent.post_lease("k2", &body("group-1", Some(4))).await;
    assert_stale(status, &refused, 4, 5);
    // Not even a replay of a key answers a stale leader.
    let (status, refused) = agent.post_lease("k1", &body("group-1", Some(4))).await;
    assert_stale(status, &refused, 4, 5);
    assert_eq!(
        leases(&agent).await,
        vec![granted.clone()],
        "nothing granted"
    );

    let (status, refused) = agent
        .delete(&release_path(&granted.id, "group-1", Some(4)))
        .await;
    assert_stale(status, &refused, 4, 5);
    let (_, kept) = agent.get(&format!("/v1/leases/{}", granted.id)).await;
    assert_eq!(json::<Lease>(&kept).state, LeaseState::Active, "still held");

    let (status, released) = agent
        .delete(&release_path(&granted.id, "group-1", Some(5)))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(json::<Lease>(&released).state, LeaseState::Released);
}

#[tokio::test]
async fn an_equal_or_higher_term_is_accepted_and_raises_the_highest() {
    let agent = TestAgent::new(4).await;
    for (key, term) in [("k1", 5), ("k2", 5), ("k3", 7)] {
        let (status, answer) = agent.post_lease(key, &body("group-1", Some(term))).await;
        assert_eq!(
            status,
            StatusCode::CREATED,
            "term {term}: {}",
            String::from_utf8_lossy(&answer)
        );
    }
    assert_eq!(agent.state.leases.highest_term("group-1").await, Some(7));
    let (status, refused) = agent.post_lease("k4", &body("group-1", Some(6))).await;
    assert_stale(status, &refused, 6, 7);

    // A retry of an earlier leader's key by the newer one is the same request: replayed.
    let (status, replayed) = agent.post_lease("k1", &body("group-1", Some(8))).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&replayed)
    );
    assert_eq!(leases(&agent).await.len(), 3);

    // A term is seen once it is admitted, even when the request is then refused otherwise.
    let two = r#"{"pool_id":"pool-a","holder_id":"console-1","count":2,"console_group":"group-1","term":9}"#;
    let (status, refused) = agent.post_lease("k5", two).await;
    assert_eq!(status, StatusCode::CONFLICT, "two asked for, one free");
    assert_eq!(
        json::<ApiError>(&refused).kind,
        AgentErrorKind::NotEnoughFree
    );
    assert_eq!(agent.state.leases.highest_term("group-1").await, Some(9));
    let first = leases(&agent).await[0].id.clone();
    let (status, refused) = agent
        .delete(&release_path(&first, "group-1", Some(8)))
        .await;
    assert_stale(status, &refused, 8, 9);
    let (status, _) = agent.post_lease("k6", &body("group-1", Some(9))).await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "the last free GPU, at the new term"
    );
}

#[tokio::test]
async fn console_groups_are_fenced_apart() {
    let agent = TestAgent::new(4).await;
    let (status, _) = agent.post_lease("a1", &body("group-a", Some(9))).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, b) = agent.post_lease("b1", &body("group-b", Some(1))).await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "group b's own term counts, not a's"
    );
    let (status, refused) = agent.post_lease("a2", &body("group-a", Some(8))).await;
    assert_stale(status, &refused, 8, 9);
    let (status, _) = agent
        .delete(&release_path(&json::<Lease>(&b).id, "group-b", Some(1)))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(agent.state.leases.highest_term("group-a").await, Some(9));
    assert_eq!(agent.state.leases.highest_term("group-b").await, Some(1));
}

#[tokio::test]
async fn a_call_without_a_term_works_as_before() {
    let agent = TestAgent::new(4).await;
    let (status, first) = agent.post_lease("k1", &body("", None)).await;
    assert_eq!(status, StatusCode::CREATED);
    let first: Lease = json(&first);
    let (status, _) = agent.delete(&release_path(&first.id, "", None)).await;
    assert_eq!(status, StatusCode::OK);
    // A single console's calls are unfenced, whatever terms other consoles sent.
    let (status, _) = agent.post_lease("k2", &body("group-1", Some(3))).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, unfenced) = agent.post_lease("k3", &body("", None)).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = agent
        .delete(&release_path(&json::<Lease>(&unfenced).id, "", None))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(agent.state.leases.highest_term("group-1").await, Some(3));
}

#[tokio::test]
async fn half_a_fence_is_refused_naming_the_missing_field() {
    let agent = TestAgent::new(2).await;
    let (status, refused) = agent
        .post_lease(
            "k1",
            r#"{"pool_id":"p","holder_id":"c","count":1,"console_group":"g"}"#,
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let error: ApiError = json(&refused);
    assert_eq!(error.kind, AgentErrorKind::InvalidRequest);
    assert!(
        error
            .message
            .starts_with("term: give console_group and term"),
        "{}",
        error.message
    );
    let (_, granted) = agent.post_lease("k2", &body("", None)).await;
    let id = json::<Lease>(&granted).id;
    for (query, field) in [("term=3", "console_group:"), ("console_group=g", "term:")] {
        let (status, refused) = agent.delete(&format!("/v1/leases/{id}?{query}")).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{query}");
        assert!(
            json::<ApiError>(&refused).message.starts_with(field),
            "{query}"
        );
    }
    let (status, refused) = agent
        .delete(&format!("/v1/leases/{id}?console_group=g&term=soon"))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        json::<ApiError>(&refused).kind,
        AgentErrorKind::InvalidRequest
    );
    let (_, kept) = agent.get(&format!("/v1/leases/{id}")).await;
    assert_eq!(
        json::<Lease>(&kept).state,
        LeaseState::Active,
        "nothing released"
    );
}

#[tokio::test]
async fn the_highest_term_survives_a_restart() {
    let dir = TempDir::new("agent-terms-restart");
    let host = RestartableHost::new(&dir);
    let start = || host.start(LeaseConfig::default());
    let fenced =
        |term: u64| -> LeaseRequest { serde_json::from_str(&body("group-1", Some(term))).unwrap() };
    let first = start().await;
    let held = first.create("k1", &fenced(5)).await.unwrap().lease;
    first.shutdown().await;
    drop(first);

    let second = start().await;
    assert_eq!(second.highest_term("group-1").await, Some(5));
    let stale = |result: Result<_, ServiceError>| match result {
        Err(ServiceError::Lease(LeaseError::StaleTerm { term, highest, .. })) => (term, highest),
        other => panic!("expected a stale term, got {other:?}"),
    };
    assert_eq!(
        stale(second.create("k2", &fenced(4)).await.map(|_| ())),
        (4, 5)
    );
    let old = ConsoleTerm::new("group-1", 4);
    assert_eq!(
        stale(
            second
                .release_fenced(&held.id, Some(&old))
                .await
                .map(|_| ())
        ),
        (4, 5)
    );
    let current = ConsoleTerm::new("group-1", 6);
    let released = second
        .release_fenced(&held.id, Some(&current))
        .await
        .unwrap();
    assert_eq!(released.state, LeaseState::Released);
    second.shutdown().await;
    drop(second);

    let third = start().await;
    assert_eq!(
        third.highest_term("group-1").await,
        Some(6),
        "raised by the release"
    );
    assert_eq!(
        stale(third.create("k3", &fenced(5)).await.map(|_| ())),
        (5, 6)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

async fn announce(agent: &TestAgent, body: &str) -> (StatusCode, Vec<u8>) {
    agent
        .send(
            Request::post("/v1/terms")
                .header("content-type", "application/json")
                .body(Body::from(body.to_string()))
                .unwrap(),
        )
        .await
}

#[tokio::test]
async fn an_announced_term_fences_calls_before_any_lease_call_carried_it() {
    let agent = TestAgent::new(4).await;
    // The old leader (term 4) holds a GPU here; the new one (term 5) has not called yet.
    let (status, held) = agent.post_lease("k1", &body("group-1", Some(4))).await;
    assert_eq!(status, StatusCode::CREATED);
    let held: Lease = json(&held);

    let (status, kept) = announce(&agent, r#"{"console_group":"group-1","term":5}"#).await;
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&kept));
    assert_eq!(json::<ConsoleTerm>(&kept), ConsoleTerm::new("group-1", 5));
    // The old leader's calls still in flight are refused from now on.
    let (status, refused) = agent.post_lease("k2", &body("group-1", Some(4))).await;
    assert_stale(status, &refused, 4, 5);
    let (status, refused) = agent
        .delete(&release_path(&held.id, "group-1", Some(4)))
        .await;
    assert_stale(status, &refused, 4, 5);
    assert_eq!(leases(&agent).await, vec![held], "nothing changed");

    // Announcing the same term again is harmless; an older one is refused.
    let (status, _) = announce(&agent, r#"{"console_group":"group-1","term":5}"#).await;
    assert_eq!(status, StatusCode::OK);
    let (status, refused) = announce(&agent, r#"{"console_group":"group-1","term":3}"#).await;
    assert_stale(status, &refused, 3, 5);
    assert_eq!(agent.state.leases.highest_term("group-1").await, Some(5));

    // A body that is not a term names what is wrong, and changes nothing.
    for (bad, field) in [
        (r#"{"console_group":"group-1"}"#, "term"),
        (r#"{"console_group":"group-1","term":-1}"#, "term"),
        (r#"{"console_group":" ","term":9}"#, "console_group"),
        (
            r#"{"console_group":"group-1","term":9223372036854775808}"#,
            "term",
        ),
    ] {
        let (status, refused) = announce(&agent, bad).await;
        assert!(
            status.is_client_error(),
            "{bad}: {status} {}",
            String::from_utf8_lossy(&refused)
        );
        let error: ApiError = json(&refused);
        assert!(error.message.contains(field), "{bad}: {}", error.message);
    }
    assert_eq!(agent.state.leases.highest_term("group-1").await, Some(5));
}
