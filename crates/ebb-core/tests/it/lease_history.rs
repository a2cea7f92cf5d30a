//! The lease history behind spend, against agents that list only the leases not yet
//! released and forget released ones after their retention: each end is recorded as the
//! agent recorded it (from the release's answer, or asked for by id once a lease leaves the
//! list), so the pool's view and its spend do not move when the agents forget.

use ebb_core::clock::{Clock, ManualClock};
use ebb_core::enforcer::PassReport;
use ebb_testkit::{TestConsole, TestFleet, eventually};
use ebb_wire::agent::{Lease, LeaseList, LeaseState};
use ebb_wire::pools::{Actor, PoolPhase, PoolView};
use ebb_wire::reasons::ChangeReason;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

async fn agent_leases(url: &str, query: &str) -> Vec<Lease> {
    reqwest::get(format!("{url}/v1/leases{query}"))
        .await
        .unwrap()
        .json::<LeaseList>()
        .await
        .unwrap()
        .leases
}

/// Waits for `passes` more enforcer passes.
async fn passes(reports: &mut watch::Receiver<PassReport>, passes: u64) {
    let until = reports.borrow_and_update().number + passes;
    tokio::time::timeout(Duration::from_secs(20), async {
        while reports.borrow_and_update().number < until {
            reports.changed().await.unwrap();
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{passes} passes did not come"));
}

/// What spend is computed from, each lease's (start, end), sorted.
async fn history(console: &TestConsole, pool_id: &str) -> Vec<(i64, Option<i64>)> {
    let mut spans: Vec<(i64, Option<i64>)> = console
        .pool_store()
        .spans(pool_id, 0)
        .await
        .unwrap()
        .into_iter()
        .map(|s| (s.span.start_ms, s.span.end_ms))
        .collect();
    spans.sort_unstable();
    spans
}

/// The view's facts that do not move with the GPUs' readings.
fn facts(
    view: &PoolView,
) -> (
    PoolPhase,
    u32,
    Vec<String>,
    Option<ebb_wire::pools::SpendView>,
) {
    let mut leases: Vec<String> = view.leases.iter().map(|l| l.lease_id.clone()).collect();
    leases.sort();
    (view.phase, view.actual, leases, view.spend.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spend_and_the_pool_view_stay_exact_when_agents_forget_released_leases() {
    let fleet = TestFleet::builder()
        .hosts(1)
        .gpus_per_host(4)
        .model(ebb_agent::GpuModel::A100)
        .start()
        .await;
    let url = fleet.hosts()[0].url.clone();
    let clock = Arc::new(ManualClock::new(ebb_core::clock::now_ms()));
    let console = TestConsole::builder("core-lease-history")
        .clock(clock.clone())
        .fleet(&fleet)
        .open()
        .await;
    let pool = console
        .create_pool(&crate::pool_input(
            "train",
            "A100",
            vec![fleet.hosts()[0].region.clone()],
            4,
        ))
        .await
        .unwrap();
    for to in [3, 2] {
        let since = clock.now_ms();
        console
            .scale_pool("train", to, Actor::Operator, ChangeReason::Cli)
            .await
            .unwrap();
        clock.advance(Duration::from_millis(1));
        let view = console
            .wait_converged("train", since, Duration::from_secs(20))
            .await
            .unwrap();
        assert_eq!((view.phase, view.actual), (PoolPhase::Converged, to));
    }
    // The enforcer released one (its end came in the release's answer). Now someone else
    // releases another on the agent: the enforcer sees it leave the list, asks for it by
    // id, and replaces it.
    let held = agent_leases(&url, "").await;
    assert_eq!(held.len(), 2, "{held:#?}");
    let status = reqwest::Client::new()
        .delete(format!("{url}/v1/leases/{}", held[0].id))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 200);
    let everything = eventually(
        "the lease released on the agent replaced and its end recorded",
        Duration::from_secs(20),
        || async {
            let all = agent_leases(&url, "?state=all").await;
            let mut agent: Vec<(i64, Option<i64>)> = all
                .iter()
                .map(|lease| {
                    (
                        lease.created_at_ms as i64,
                        lease.released_at_ms.map(|at| at as i64),
                    )
                })
                .collect();
            agent.sort_unstable();
            let console = history(&console, &pool.id).await;
            let live = all.iter().filter(|l| l.state == LeaseState::Active).count();
            if all.len() == 4 && live == 2 && console == agent {
                Ok(console)
            } else {
                Err(format!(
                    "agent {agent:?} (live {live}), console {console:?}"
                ))
            }
        },
    )
    .await;
    // Each end is the agent's own release time, not when the console noticed.
    assert_eq!(
        everything.iter().filter(|(_, end)| end.is_some()).count(),
        2
    );
    assert_eq!(
        agent_leases(&url, "").await.len(),
        2,
        "the pass reads two leases"
    );

    // The console's clock past the releases, then held still: the view and spend before...
    let real_now = ebb_core::clock::now_ms();
    clock.advance(Duration::from_millis(
        u64::try_from(real_now - clock.now_ms()).unwrap_or(0) + 60_000,
    ));
    let mut reports = console.enforcer_reports().unwrap();
    passes(&mut reports, 2).await;
    let before = facts(&console.show_pool("train").await.unwrap());
    assert!(
        before.3.as_ref().is_some_and(|spend| spend.gpu_hours > 0.0),
        "{before:?}"
    );

    // ... and after the agent forgot both released leases.
    assert_eq!(fleet.prune_released(u64::MAX).await, 2);
    assert!(
        agent_leases(&url, "?state=released").await.is_empty(),
        "forgotten"
    );
    passes(&mut reports, 3).await;
    assert_eq!(history(&console, &pool.id).await, everything);
    assert_eq!(facts(&console.show_pool("train").await.unwrap()), before);
    console.shutdown().await;
    fleet.stop().await;
}
