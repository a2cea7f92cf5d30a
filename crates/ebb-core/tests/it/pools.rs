//! Pools through the console against a virtual fleet: the enforcer rents and releases
//! through real HTTP, and what the agents hold is what the pool says.

use ebb_testkit::{TestConsole, TestFleet};
use ebb_wire::pools::{Actor, Outcome, PoolInput, PoolLeaseState, PoolPhase};
use ebb_wire::reasons::ChangeReason;
use std::time::Duration;

fn input(name: &str, model: &str, regions: &[&str], max: u32) -> PoolInput {
    crate::pool_input(
        name,
        model,
        regions.iter().map(|r| r.to_string()).collect(),
        max,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_scales_0_20_5_0_through_real_agents_and_logs_each_change() {
    // 12 hosts, 4 GPUs each: the A100s are hosts 1, 5 and 9 (one per region).
    let fleet = TestFleet::builder()
        .hosts(12)
        .gpus_per_host(8)
        .sample_interval(Duration::from_millis(100))
        .release_grace(Duration::from_millis(100))
        .start()
        .await;
    let console = TestConsole::builder("core-pools-scale")
        .enforcer(Duration::from_millis(200), Duration::from_secs(2))
        .fleet(&fleet)
        .open()
        .await;
    let pool = console
        .create_pool(&input(
            "train",
            "A100",
            &["cn-north", "cn-east", "cn-south"],
            24,
        ))
        .await
        .unwrap();
    for to in [20, 5, 0] {
        let since = ebb_core::clock::now_ms();
        console
            .scale_pool("train", to, Actor::Operator, ChangeReason::Cli)
            .await
            .unwrap();
        let view = console
            .wait_converged("train", since, Duration::from_secs(20))
            .await
            .unwrap();
        assert_eq!(view.phase, PoolPhase::Converged, "{to}: {view:?}");
        assert_eq!(view.actual, to, "{view:#?}");
        let leases = fleet.held(&pool.id).await;
        assert_eq!(leases.len(), to as usize, "the agents hold {to}");
        let mut uuids: Vec<&String> = leases.iter().map(|(_, u)| u).collect();
        uuids.sort();
        uuids.dedup();
        assert_eq!(uuids.len(), to as usize, "no GPU twice");
        assert_eq!(
            view.leases
                .iter()
                .filter(|l| l.state == PoolLeaseState::Active)
                .count(),
            to as usize
        );
    }
    let log = console.activity(Some("train"), 10).await.unwrap();
    assert_eq!(log.len(), 4, "created + three scales: {log:?}");
    assert_eq!((log[0].from, log[0].to), (5, 0));
    assert_eq!(log[2].to, 20);
    assert!(
        log[..3].iter().all(|e| e.outcome == Outcome::Done),
        "{log:?}"
    );
    let granted: u32 = log[2].results.iter().map(|r| r.granted).sum();
    assert_eq!(granted, 20);
    assert!(log[2].delta_per_hour_fen.unwrap() > 0);
    // Spend: month to date from the lease history, a projection not below it.
    let view = console.show_pool("train").await.unwrap();
    let spend = view.spend.unwrap();
    assert!(spend.month_to_date_fen > 0, "{spend:?}");
    assert!(spend.projected_month_fen >= spend.month_to_date_fen);
    console.shutdown().await;
    fleet.stop().await;
}
