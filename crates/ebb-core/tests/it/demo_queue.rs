//! The demo's queue-driven pool on the console's own clock: the demo's simulated Slurm
//! partition, its rules (the queue template) and a real fleet of simulated agents over
//! HTTP. A new user sees the pool scale out on queued jobs, then a busy node drained and
//! let go only once its job ends, without a job requeued, parked to the end of its paid
//! hour rather than released and rented again. The clock runs about 40x
//! fast, so the demo's first minutes take seconds.

use ebb_agent::{Fleet, FleetConfig};
use ebb_core::clock::{Clock, ManualClock};
use ebb_core::console::{Console, ConsoleOptions, TokenStore};
use ebb_core::demo;
use ebb_core::enforcer::EnforcerConfig;
use ebb_testkit::{TempDir, eventually};
use ebb_wire::pools::{ActivityEntry, Actor};
use ebb_wire::reasons::{ChangeReason, SlurmStep};
use std::sync::Arc;
use std::time::Duration;

/// The Slurm steps of the training pool's log, oldest first: (when, nodes, step).
fn steps(log: &[ActivityEntry]) -> Vec<(i64, String, SlurmStep)> {
    let mut steps: Vec<_> = log
        .iter()
        .filter(|entry| entry.pool == demo::QUEUE_POOL)
        .filter_map(|entry| match &entry.reason {
            ChangeReason::Slurm { nodes, step, .. } => {
                Some((entry.at_ms, nodes.clone(), step.clone()))
            }
            _ => None,
        })
        .collect();
    steps.sort_by_key(|(at, _, _)| *at);
    steps
}

#[tokio::test]
async fn the_demos_training_pool_grows_on_queued_jobs_drains_a_busy_node_and_keeps_its_paid_hour() {
    // The demo fleet's first three hosts: cn-south-001 carries V100s no one else holds; the
    // H800 host offers spot, as the demo's do.
    let fleet = Fleet::start(&FleetConfig {
        hosts: 3,
        gpus_per_host: 4,
        sample_interval: Duration::from_millis(100),
        release_grace: Duration::from_millis(100),
        spot: vec![ebb_agent::fleet::SpotHost::Model(ebb_agent::GpuModel::H800)],
        ..FleetConfig::default()
    })
    .await
    .unwrap();
    let dir = TempDir::new("core-demo-queue");
    let clock = Arc::new(ManualClock::new(ebb_core::clock::now_ms()));
    let console = Console::open(ConsoleOptions {
        token_store: TokenStore::Memory,
        enforcer: EnforcerConfig {
            interval: Duration::from_millis(50),
            ..EnforcerConfig::default()
        },
        clock: clock.clone(),
        slurm: demo::simulated_slurm().unwrap(),
        ..ConsoleOptions::new(dir.path())
    })
    .await
    .unwrap();
    let hosts = fleet
        .hosts()
        .iter()
        .map(|host| (host.name.clone(), host.url.clone(), host.region.clone()))
        .collect();
    console.seed_demo(hosts, true).await.unwrap();
    let started_ms = clock.now_ms();
    let ticking = crate::slurm_sim::tick(&clock);

    // Scale-out: the rules set 4 GPUs for the four queued jobs, the binder leases both nodes.
    let out = eventually(
        "the rules to size the pool to the queue",
        Duration::from_secs(60),
        || async {
            let log = console.activity(Some(demo::QUEUE_POOL), 100).await.ok()?;
            log.into_iter().find(|entry| {
                entry.actor == Actor::Rule
                    && entry.to == 4
                    && matches!(
                        &entry.reason,
                        ChangeReason::RuleDecision { shadow: false, .. }
                    )
            })
        },
    )
    .await;
    eventually("both nodes leased", Duration::from_secs(30), || async {
        let log = console.activity(Some(demo::QUEUE_POOL), 100).await.ok()?;
        let resumed = steps(&log)
            .iter()
            .filter(|(_, _, step)| *step == SlurmStep::Resumed)
            .count();
        (resumed >= 2).then_some(())
    })
    .await;

    // The short jobs end; each node keeps a long one: one node drains, its job runs on,
    // and once it has no job the node is parked to the end of the hour it paid (or taken
    // back into service when the queue comes back), never released with paid time left.
    let (drained_at, node, kept_at) = eventually(
        "a busy node drained, then parked or back in service",
        // Drained near the end of the paid hour (a busy node needs no drain before): about
        // 90 s of this clock's hour.
        Duration::from_secs(240),
        || async {
            let log = console.activity(Some(demo::QUEUE_POOL), 100).await.ok()?;
            let steps = steps(&log);
            let (drained_at, node, _) = steps
                .iter()
                .find(|(_, _, step)| *step == SlurmStep::Drained)?
                .clone();
            let (kept_at, _, _) = steps.iter().find(|(at, nodes, step)| {
                *at >= drained_at
                    && *nodes == node
                    && matches!(step, SlurmStep::Parked { .. } | SlurmStep::Undrained)
            })?;
            Some((drained_at, node, *kept_at))
        },
    )
    .await;
    ticking.abort();
    let log = console.activity(Some(demo::QUEUE_POOL), 200).await.unwrap();
    let steps = steps(&log);
    assert!(
        !steps
            .iter()
            .any(|(_, _, step)| matches!(step, SlurmStep::Requeued { .. })),
        "no job was requeued: {steps:#?}"
    );
    // The long jobs run 180 s and 200 s from about when the nodes came up: the drained
    // node stayed in service until its job ended, well after the drain began.
    let s = |ms: i64| (ms - started_ms) / 1000;
    eprintln!(
        "demo queue: out at {} s, {node} drained at {} s, kept at {} s (console clock)",
        s(out.at_ms),
        s(drained_at),
        s(kept_at)
    );
    assert!(
        kept_at - out.at_ms >= 170_000,
        "the drained node was let go before its job could have ended: {steps:#?}"
    );
    // Each node leased is in the log with what it costs: its two V100s' hour.
    let leased: Vec<&ActivityEntry> = log
        .iter()
        .filter(|entry| {
            matches!(
                &entry.reason,
                ChangeReason::Slurm {
                    step: SlurmStep::Resumed,
                    ..
                }
            )
        })
        .collect();
    assert!(!leased.is_empty());
    assert!(
        leased
            .iter()
            .all(|entry| entry.delta_per_hour_fen.is_some_and(|fen| fen > 0)),
        "{leased:#?}"
    );
    // Within a node's first paid hour it is not given back, so nothing is paid twice:
    // each node leased once.
    for name in ["v100-1", "v100-2"] {
        let leased: Vec<i64> = steps
            .iter()
            .filter(|(_, nodes, step)| nodes == name && *step == SlurmStep::Resumed)
            .map(|(at, _, _)| *at)
            .collect();
        assert_eq!(leased.len(), 1, "{name} leased {leased:?}: {steps:#?}");
        let paid_until = leased[0] + 3_600_000 - ebb_reconcile::placement::UNIT_END_MARGIN_MS;
        assert!(
            !steps.iter().any(|(at, nodes, step)| nodes == name
                && *step == SlurmStep::Released
                && *at < paid_until),
            "{name} released inside its paid hour: {steps:#?}"
        );
    }
    console.shutdown().await;
    fleet.stop().await;
}
