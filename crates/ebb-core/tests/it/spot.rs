//! A pool's spot mix over real agents (one host offering spot, one on demand): the floor on
//! demand and the rest on spot; each reclaim replaced in the pass that sees it, on spot
//! while spot can be had; reclaims past the breaker's limit pause spot (the replacements
//! go on demand, said once in the log) until it has been quiet, then the pool goes back
//! to spot, the spot granted before the on demand goes; no GPU is ever in two leases.

use crate::failover::{one_host_offering, passes};
use ebb_core::console::{Console, ConsoleOptions, TokenStore};
use ebb_core::enforcer::EnforcerConfig;
use ebb_core::registry::HostEntry;
use ebb_reconcile::spot::BreakerPolicy;
use ebb_testkit::{TempDir, eventually};
use ebb_wire::pools::{Actor, PoolLeaseState, PoolView, SpotMix};
use ebb_wire::reasons::ChangeReason;
use std::collections::HashSet;
use std::time::Duration;

/// Every GPU in at most one live lease, on each host as its agent reports them (the two
/// one-host fleets share a seed, so their GPUs' UUIDs are alike: a GPU is its host's).
async fn no_gpu_twice(fleets: &[ebb_agent::fleet::Fleet; 2]) {
    for fleet in fleets {
        let mut seen = HashSet::new();
        let client = ebb_telemetry::client::AgentClient::new(
            &fleet.hosts()[0].url,
            EnforcerConfig::default().client,
        )
        .unwrap();
        for lease in client.leases().await.unwrap().leases {
            if lease.state == ebb_wire::agent::LeaseState::Released {
                continue;
            }
            for uuid in &lease.gpu_uuids {
                assert!(seen.insert(uuid.clone()), "{uuid} in two leases");
            }
        }
    }
}

fn on(view: &PoolView, host: &str, state: PoolLeaseState) -> usize {
    view.leases
        .iter()
        .filter(|lease| lease.host == host && lease.state == state)
        .count()
}

async fn switches(console: &Console) -> Vec<ChangeReason> {
    let log = console.activity(None, 200).await.unwrap();
    log.into_iter()
        .rev()
        .map(|entry| entry.reason)
        .filter(|reason| {
            matches!(
                reason,
                ChangeReason::SpotPaused { .. } | ChangeReason::SpotResumed { .. }
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spot_reclaims_are_replaced_at_once_pause_spot_past_the_limit_and_it_comes_back() {
    // gpu-s offers its 4 A100s as spot, gpu-d its 4 on demand.
    let fleets = [
        one_host_offering(true).await,
        one_host_offering(false).await,
    ];
    let dir = TempDir::new("core-spot");
    let console = Console::open(ConsoleOptions {
        token_store: TokenStore::Memory,
        enforcer: EnforcerConfig {
            interval: Duration::from_millis(50),
            // More than 1 reclaim within a minute pauses spot; back after 5 s of quiet.
            spot_breaker: BreakerPolicy {
                max_interruptions: 1,
                window_ms: 60_000,
                cool_off_ms: 1_000,
                quiet_ms: 5_000,
            },
            ..EnforcerConfig::default()
        },
        ..ConsoleOptions::new(dir.path())
    })
    .await
    .unwrap();
    for (name, fleet) in ["gpu-s", "gpu-d"].iter().zip(&fleets) {
        let spec = HostEntry {
            name: (*name).into(),
            url: fleet.hosts()[0].url.clone(),
            region: "cn-east".into(),
            labels: Default::default(),
            fingerprint: None,
            has_token: false,
            draining: false,
        };
        console.upsert_host(&spec, None).await.unwrap();
    }
    // Desired 3: a floor of 1 on demand, the other 2 on spot.
    let pool = ebb_wire::pools::PoolInput {
        interruptible: true,
        spot: SpotMix {
            on_demand_floor: 1,
            spot_pct: 100,
            max_price_fen: None,
        },
        ..crate::pool_input("burst", "A100", vec!["cn-east".into()], 4)
    };
    console.create_pool(&pool).await.unwrap();
    console
        .scale_pool("burst", 3, Actor::Operator, ChangeReason::Cli)
        .await
        .unwrap();
    let view = eventually(
        "3 held: 1 on demand, 2 on spot",
        Duration::from_secs(20),
        || async {
            let view = console.show_pool("burst").await.ok()?;
            (view.actual == 3
                && on(&view, "gpu-s", PoolLeaseState::Active) == 2
                && on(&view, "gpu-d", PoolLeaseState::Active) == 1)
                .then_some(view)
        },
    )
    .await;
    assert_eq!((view.split.on_demand, view.split.spot), (1, 2));
    assert_eq!(view.spot_held, 2);
    assert!(view.leases.iter().all(|l| l.spot == (l.host == "gpu-s")));
    no_gpu_twice(&fleets).await;
    let mut reports = console.enforcer_reports().unwrap();

    // The first reclaim: replaced on spot (2 of gpu-s's 4 are free), in the pass that
    // sees it (the one running now may have looked before the notice, so two at most).
    let spot_leases: Vec<String> = view
        .leases
        .iter()
        .filter(|l| l.spot)
        .map(|l| l.lease_id.clone())
        .collect();
    let before = reports.borrow_and_update().number;
    fleets[0]
        .reclaim(0, &spot_leases[0], Duration::from_secs(1))
        .await
        .unwrap();
    let mut granted_by = None;
    for _ in 0..2 {
        let report = passes(&mut reports, 1).await;
        if report.granted > 0 {
            granted_by = Some(report.number - before);
            break;
        }
    }
    let granted_by = granted_by.expect("a replacement within two passes of the notice");
    eprintln!("spot: replacement granted on pass {granted_by} after the notice");
    let view = console.show_pool("burst").await.unwrap();
    assert_eq!(view.actual, 3, "{view:#?}");
    assert_eq!(on(&view, "gpu-s", PoolLeaseState::Active), 2, "{view:#?}");
    assert_eq!(on(&view, "gpu-s", PoolLeaseState::Reclaimed), 1);
    assert!(switches(&console).await.is_empty());
    no_gpu_twice(&fleets).await;

    // The second within the minute: more than 1, spot paused; its replacement on demand.
    fleets[0]
        .reclaim(0, &spot_leases[1], Duration::from_secs(1))
        .await
        .unwrap();
    let view = eventually(
        "spot paused, the replacement on demand",
        Duration::from_secs(20),
        || async {
            let view = console.show_pool("burst").await.ok()?;
            (view.actual == 3 && on(&view, "gpu-d", PoolLeaseState::Active) == 2).then_some(view)
        },
    )
    .await;
    assert!(
        view.notes
            .iter()
            .any(|note| matches!(note, ebb_wire::reasons::PoolNote::SpotPaused { .. })),
        "{:?}",
        view.notes
    );
    let said = switches(&console).await;
    assert!(
        matches!(&said[..], [ChangeReason::SpotPaused { model, region, interruptions: 2, .. }] if model == "A100" && region == "cn-east"),
        "{said:?}"
    );
    no_gpu_twice(&fleets).await;

    // Quiet for 5 s: resumed, said once; back to spot: 2 on spot again, the floor's 1
    // on demand, and nothing ever short of 3.
    let view = eventually(
        "resumed and back to spot",
        Duration::from_secs(30),
        || async {
            let view = console.show_pool("burst").await.ok()?;
            assert!(view.actual >= 3 || view.pending > 0, "short: {view:#?}");
            (view.actual == 3
                && view.spot_held == 2
                && on(&view, "gpu-d", PoolLeaseState::Active) == 1)
                .then_some(view)
        },
    )
    .await;
    assert!(view.notes.is_empty(), "{:?}", view.notes);
    let said = switches(&console).await;
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(matches!(said[1], ChangeReason::SpotResumed { .. }));
    no_gpu_twice(&fleets).await;

    // The log has each reclaim once, with the replacement it rented (host and cost); the
    // return to spot is in the log too: what it rented and released, where, at what cost.
    let log = console.activity(Some("burst"), 100).await.unwrap();
    let reclaims: Vec<_> = log
        .iter()
        .filter(|entry| matches!(entry.reason, ChangeReason::Reclaimed { .. }))
        .collect();
    assert_eq!(reclaims.len(), 2);
    for entry in &reclaims {
        let rented: u32 = entry.results.iter().map(|r| r.granted).sum();
        assert_eq!(
            rented, 1,
            "the replacement in the reclaim's entry: {entry:#?}"
        );
        assert!(entry.results.iter().all(|r| !r.host.is_empty()));
        assert!(
            entry.delta_per_hour_fen.is_some_and(|fen| fen > 0),
            "{entry:#?}"
        );
    }
    let upkeep: Vec<_> = log
        .iter()
        .filter(|entry| matches!(entry.reason, ChangeReason::Upkeep { .. }))
        .collect();
    let moved = |f: fn(&ebb_wire::pools::HostResult) -> u32| -> u32 {
        upkeep.iter().flat_map(|entry| &entry.results).map(f).sum()
    };
    assert!(
        moved(|r| r.granted) >= 1 && moved(|r| r.released) >= 1,
        "{upkeep:#?}"
    );
    assert!(
        upkeep
            .iter()
            .all(|entry| entry.delta_per_hour_fen.is_some()),
        "{upkeep:#?}"
    );
    console.shutdown().await;
    for fleet in fleets {
        fleet.stop().await;
    }
}
