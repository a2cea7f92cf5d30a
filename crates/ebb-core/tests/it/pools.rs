//! Pools through the console against a virtual fleet: the enforcer rents and releases
//! through real HTTP, and what the agents hold is what the pool says.

use ebb_agent::{Fleet, FleetConfig};
use ebb_core::console::{Console, ConsoleOptions, TokenStore};
use ebb_core::enforcer::EnforcerConfig;
use ebb_core::registry::HostEntry;
use ebb_wire::agent::LeaseState;
use ebb_wire::plan::{OverlayMode, Term};
use ebb_wire::pools::{Actor, Outcome, PlacementPolicy, PoolInput, PoolLeaseState, PoolPhase};
use ebb_wire::reasons::ChangeReason;
use std::time::Duration;

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "ebb-core-pools-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn console(dir: &std::path::Path, fleet: &Fleet) -> Console {
    let console = Console::open(ConsoleOptions {
        token_store: TokenStore::Memory,
        enforcer: EnforcerConfig {
            interval: Duration::from_millis(200),
            grace: Duration::from_secs(2),
            ..EnforcerConfig::default()
        },
        ..ConsoleOptions::new(dir)
    })
    .await
    .unwrap();
    for host in fleet.hosts() {
        let spec = HostEntry {
            name: host.name.clone(),
            url: host.url.clone(),
            region: host.region.clone(),
            labels: Default::default(),
            fingerprint: None,
            has_token: false,
        };
        console.upsert_host(&spec, None).await.unwrap();
    }
    console
}

fn input(name: &str, model: &str, regions: &[&str], max: u32) -> PoolInput {
    PoolInput {
        name: name.into(),
        model: model.into(),
        regions: regions.iter().map(|r| r.to_string()).collect(),
        min: 0,
        max,
        base_gpus: 0,
        term: Term::Month,
        overlay: OverlayMode::Hour,
        placement: PlacementPolicy::Pack,
        interruptible: false,
        release_at_unit_end: false,
    }
}

/// Active leases every agent of the fleet holds for `pool_id`: (host, GPU uuid).
async fn held(fleet: &Fleet, pool_id: &str) -> Vec<(String, String)> {
    let client = reqwest::Client::new();
    let mut out = Vec::new();
    for host in fleet.hosts() {
        let list: ebb_wire::agent::LeaseList = client
            .get(format!("{}/v1/leases", host.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        for lease in list.leases {
            if lease.pool_id == pool_id && lease.state == LeaseState::Active {
                for uuid in lease.gpu_uuids {
                    out.push((host.name.clone(), uuid));
                }
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_scales_0_20_5_0_through_real_agents_and_logs_each_change() {
    // 12 hosts, 4 GPUs each: the A100s are hosts 1, 5 and 9 (one per region).
    let fleet = Fleet::start(&FleetConfig {
        hosts: 12,
        gpus_per_host: 8,
        sample_interval: Duration::from_millis(100),
        release_grace: Duration::from_millis(100),
        ..FleetConfig::default()
    })
    .await
    .unwrap();
    let dir = temp_dir("scale");
    let console = console(&dir, &fleet).await;
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
        let leases = held(&fleet, &pool.id).await;
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
    let _ = std::fs::remove_dir_all(dir);
}
