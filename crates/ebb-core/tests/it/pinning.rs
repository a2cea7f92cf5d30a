//! Certificate pinning against the real agent binary: a host pinned to its agent's
//! certificate is collected and leased from; when another certificate answers at the same
//! address (the agent restarted with a new state directory made a new one), every call is
//! refused with the pinning error, the host shows it, and nothing is leased there.
//!
//! Needs `target/debug/ebb-agent` (`cargo build -p ebb-agent`; `cargo xtask test` builds it).

use ebb_core::console::Console;
use ebb_core::registry::HostEntry;
use ebb_telemetry::client::{AgentAccess, AgentClient, ClientConfig};
use ebb_telemetry::collect::CollectorConfig;
use ebb_testkit::{AgentCommand, AgentProcess, Relay, TempDir, TestConsole, eventually};
use ebb_wire::agent::LeaseState;
use ebb_wire::pools::Actor;
use ebb_wire::reasons::{ChangeReason, HostProblem};
use std::time::Duration;

/// A simulated agent serving its self-signed certificate, and that certificate's
/// fingerprint as the agent printed it.
fn tls_agent(state_dir: &std::path::Path) -> (AgentProcess, String) {
    let agent = AgentCommand::sim(state_dir, "2xA100")
        .host_name("gpu-pinned")
        .sample_interval_ms(100)
        .args(["--tls"])
        .start();
    let fingerprint = agent
        .lines
        .iter()
        .find_map(|line| line.strip_prefix("tls: sha256 fingerprint "))
        .expect("the agent prints its fingerprint")
        .trim()
        .to_string();
    (agent, fingerprint)
}

/// The active leases an agent holds, asked by a client pinned to its own certificate.
async fn active_leases(url: &str, fingerprint: &str) -> usize {
    let access = AgentAccess {
        url: url.to_string(),
        token: None,
        fingerprint: Some(fingerprint.to_string()),
    };
    let client = AgentClient::with_access(&access, ClientConfig::default()).unwrap();
    let list = client.leases().await.unwrap();
    list.leases
        .iter()
        .filter(|lease| lease.state == LeaseState::Active)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_host_refuses_a_changed_certificate_and_nothing_is_leased_there() {
    let dirs = TempDir::new("pinning");
    let (first, pinned) = tls_agent(&dirs.subdir("first"));
    let relay = Relay::start(Some(first.addr)).await;
    let url = format!("https://{}", relay.addr());
    let host = HostEntry {
        name: "gpu-pinned".into(),
        url: url.clone(),
        region: "cn-north".into(),
        labels: Default::default(),
        fingerprint: Some(pinned.clone()),
        has_token: false,
        draining: false,
    };
    let console = TestConsole::builder("pinning")
        .host(host.clone())
        .open()
        .await;

    // Pinned to the certificate it serves: tested, collected and leased from.
    Console::test_host(&host, None, CollectorConfig::default())
        .await
        .unwrap();
    console
        .create_pool(&crate::pool_input(
            "pinned",
            "A100",
            vec!["cn-north".into()],
            2,
        ))
        .await
        .unwrap();
    console
        .scale_pool("pinned", 1, Actor::Operator, ChangeReason::Cli)
        .await
        .unwrap();
    eventually(
        "the pool's GPU leased on the pinned agent",
        Duration::from_secs(20),
        || async { active_leases(&url, &pinned).await == 1 },
    )
    .await;

    // The agent comes back at the same address with a new state directory: a new
    // certificate. The pool still wants its GPU there.
    drop(first);
    let (second, presented) = tls_agent(&dirs.subdir("second"));
    assert_ne!(
        presented, pinned,
        "a new state directory makes a new certificate"
    );
    relay.forward_to(Some(second.addr));

    let refused = Console::test_host(&host, None, CollectorConfig::default())
        .await
        .unwrap_err();
    let HostProblem::Tls {
        url: refused_url,
        reason,
    } = &refused
    else {
        panic!("not a TLS refusal: {refused:?}");
    };
    assert_eq!(refused_url, &url);
    assert!(
        reason.contains("does not match the pinned fingerprint")
            && reason.contains(&format!("the agent presents {presented}")),
        "{refused}"
    );
    let shown = refused.to_string();
    assert!(
        shown.contains(&url),
        "the error names the host's address: {shown}"
    );

    // The collector says so on the host, by name, and the enforcer leases nothing there.
    let problem = eventually(
        "the host shows the pinning error",
        Duration::from_secs(20),
        || async {
            console
                .latest()
                .hosts
                .iter()
                .find(|status| status.name == "gpu-pinned")
                .and_then(|status| status.last_error.clone())
                .filter(|problem| problem.to_string().contains("pinned fingerprint"))
        },
    )
    .await;
    assert!(matches!(problem, HostProblem::Tls { .. }), "{problem:?}");
    // Past the grace period the lease there is written off and the pool wants a GPU again:
    // two passes after that, still nothing leased on the agent that presents another
    // certificate.
    eventually(
        "the lease on the host that fails pinning written off",
        Duration::from_secs(20),
        || async {
            let log = console.activity(Some("pinned"), 20).await.unwrap();
            log.iter()
                .any(|entry| entry.actor == Actor::Failover)
                .then_some(())
                .ok_or(log)
        },
    )
    .await;
    let mut reports = console.enforcer_reports().expect("this console enforces");
    let after = reports.borrow_and_update().number + 2;
    eventually("two more enforcer passes", Duration::from_secs(20), || {
        let number = reports.borrow_and_update().number;
        std::future::ready((number >= after).then_some(()).ok_or(number))
    })
    .await;
    assert_eq!(
        active_leases(&url, &presented).await,
        0,
        "nothing is leased on an agent whose certificate is not the pinned one"
    );
    console.shutdown().await;
    drop(second);
}
