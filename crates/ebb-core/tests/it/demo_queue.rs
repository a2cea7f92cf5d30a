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

    // The queue comes and goes every ten minutes. Within the nodes' first paid hour the
    // pool follows it down (the rules lower its count), and a node with no job is parked
    // to the end of the hour it paid, never released and leased again. Watched until the
    // console's clock is past that hour (this clock's hour is about 90 s).
    let leased_at = eventually(
        "both nodes' grants logged",
        Duration::from_secs(30),
        || async {
            let log = console.activity(Some(demo::QUEUE_POOL), 100).await.ok()?;
            let grants: Vec<i64> = steps(&log)
                .iter()
                .filter(|(_, _, step)| *step == SlurmStep::Resumed)
                .map(|(at, _, _)| *at)
                .collect();
            (grants.len() >= 2).then(|| grants.into_iter().max().unwrap_or_default())
        },
    )
    .await;
    let hour_ms = 3_600_000;
    eventually(
        "the console clock past the nodes' first paid hour",
        Duration::from_secs(300),
        || async { (clock.now_ms() > leased_at + hour_ms + 120_000).then_some(()) },
    )
    .await;
    ticking.abort();
    let log = console.activity(Some(demo::QUEUE_POOL), 500).await.unwrap();
    let steps = steps(&log);
    assert!(
        !steps
            .iter()
            .any(|(_, _, step)| matches!(step, SlurmStep::Requeued { .. })),
        "no job was requeued: {steps:#?}"
    );
    let s = |ms: i64| (ms - started_ms) / 1000;
    eprintln!(
        "demo queue: out at {} s; steps: {:?}",
        s(out.at_ms),
        steps
            .iter()
            .map(|(at, nodes, step)| format!("{} s {nodes} {step:?}", s(*at)))
            .collect::<Vec<_>>()
    );
    // It followed the queue down, and kept the idle nodes to the hour's end.
    assert!(
        log.iter()
            .any(|entry| entry.actor == Actor::Rule && entry.to < entry.from),
        "the rules never lowered the count: {steps:#?}"
    );
    assert!(
        steps
            .iter()
            .any(|(_, _, step)| matches!(step, SlurmStep::Parked { .. })),
        "no idle node parked: {steps:#?}"
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
    // A node released is released at the end of a paid hour of its lease, never inside.
    for name in ["v100-1", "v100-2"] {
        let mut leased_at: Option<i64> = None;
        for (at, nodes, step) in &steps {
            if nodes != name {
                continue;
            }
            match step {
                SlurmStep::Resumed => leased_at = Some(*at),
                SlurmStep::Released => {
                    let since = leased_at.expect("released before it was leased");
                    let held = at - since;
                    let into_hour = held % hour_ms;
                    assert!(
                        into_hour >= hour_ms - 5 * 60_000 || into_hour == 0,
                        "{name} released {} s into a paid hour: {steps:#?}",
                        into_hour / 1000
                    );
                    leased_at = None;
                }
                _ => {}
            }
        }
    }
    console.shutdown().await;
    fleet.stop().await;
}
