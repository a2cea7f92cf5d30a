//! The Slurm binder over a simulated partition (`ebb_slurm::sim`) on the console's own
//! clock, for what needs hours of Slurm time or a cron window: the real-Slurm suite
//! (`tests/it/slurm.rs` at the workspace root) covers the same binder on slurmctld.

use crate::{pool_input, set_desired};
use ebb_agent::{Fleet, FleetConfig};
use ebb_core::clock::{Clock, ManualClock};
use ebb_core::console::{Console, ConsoleOptions, TokenStore};
use ebb_core::enforcer::EnforcerConfig;
use ebb_core::slurm::api::{SimSlurm, SlurmApi, SlurmSetup};
use ebb_slurm::binding::Binding;
use ebb_slurm::sim::{Arrival, SimPartition};
use ebb_testkit::{TempDir, eventually};
use ebb_wire::reasons::{ChangeReason, SlurmStep};
use std::sync::Arc;
use std::time::Duration;

const BINDING: &str = r#"[[partition]]
name = "batch"
pool = "batch"
mode = "ebb"
gpus_per_node = 2
[[partition.hosts]]
host = "cn-south-001"
nodes = "n[1-2]"
port = 6818
"#;

/// A quiet window always on (every minute, a day long), and nothing else.
const QUIET_RULES: &str = r#"pool = "batch"
[limits]
max_gpus = 4
[scale_in]
force = true
[[scale_in.quiet]]
cron = "* * * * *"
duration_minutes = 1440
time_zone = "UTC"
"#;

/// (node, step) of the pool's Slurm log, oldest first.
async fn steps(console: &Console) -> Vec<(String, SlurmStep)> {
    let mut log = console.activity(Some("batch"), 200).await.unwrap();
    log.sort_by_key(|entry| entry.id);
    log.into_iter()
        .filter_map(|entry| match entry.reason {
            ChangeReason::Slurm { nodes, step, .. } => Some((nodes, step)),
            _ => None,
        })
        .collect()
}

/// The demo fleet's first three hosts (cn-south-001 carries V100s) registered, a console
/// on its own clock whose Slurm is a simulated partition `batch` (nodes n1, n2 of 2 GPUs
/// on cn-south-001) with one long one-GPU job submitted at once, and the pool `batch`
/// (V100s in cn-south) bound to it. Also the fleet's index of cn-south-001. The V100 host
/// offers its GPUs as spot, so its owner may reclaim a node.
async fn bound_pool(dir: &TempDir) -> (Fleet, Console, Arc<ManualClock>, usize) {
    let (fleet, console, clock, south, _) = bound_pool_sim(dir).await;
    (fleet, console, clock, south)
}

/// [`bound_pool`], with the simulated Slurm itself, to act on as Slurm or an admin would.
async fn bound_pool_sim(dir: &TempDir) -> (Fleet, Console, Arc<ManualClock>, usize, Arc<SimSlurm>) {
    let fleet = Fleet::start(&FleetConfig {
        hosts: 3,
        gpus_per_host: 4,
        sample_interval: Duration::from_millis(100),
        release_grace: Duration::from_millis(100),
        spot: vec![ebb_agent::fleet::SpotHost::Model(ebb_agent::GpuModel::V100)],
        ..FleetConfig::default()
    })
    .await
    .unwrap();
    let mut binding = Binding::parse(BINDING).unwrap();
    binding.partitions[0].slurmd = Vec::new();
    let nodes = [("n1".to_string(), 2), ("n2".to_string(), 2)];
    let partition = SimPartition::new(
        "batch",
        &nodes,
        &[Arrival {
            at_s: 0,
            gpus: 1,
            run_s: 86_000,
        }],
        86_400,
    );
    let clock = Arc::new(ManualClock::new(ebb_core::clock::now_ms()));
    let sim = Arc::new(SimSlurm::new(vec![partition]));
    let console = Console::open(ConsoleOptions {
        token_store: TokenStore::Memory,
        enforcer: EnforcerConfig {
            interval: Duration::from_millis(50),
            ..EnforcerConfig::default()
        },
        clock: clock.clone(),
        slurm: SlurmSetup {
            api: sim.clone(),
            binding: Some(binding),
        },
        ..ConsoleOptions::new(dir.path())
    })
    .await
    .unwrap();
    let mut south = None;
    for (index, host) in fleet.hosts().iter().enumerate() {
        if host.name == "cn-south-001" {
            south = Some(index);
        }
        let entry = ebb_core::registry::HostEntry {
            name: host.name.clone(),
            url: host.url.clone(),
            region: host.region.clone(),
            labels: Default::default(),
            fingerprint: None,
            has_token: false,
            draining: false,
        };
        console.upsert_host(&entry, None).await.unwrap();
    }
    console
        .create_pool(&pool_input("batch", "V100", vec!["cn-south".into()], 4))
        .await
        .unwrap();
    (
        fleet,
        console,
        clock,
        south.expect("cn-south-001 in the fleet"),
        sim,
    )
}

/// Moves `clock` a second every 25 ms until the task is aborted.
pub(crate) fn tick(clock: &Arc<ManualClock>) -> tokio::task::JoinHandle<()> {
    let clock = clock.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(25)).await;
            clock.advance(Duration::from_secs(1));
        }
    })
}

#[tokio::test]
async fn a_quiet_window_in_the_pools_rules_keeps_a_busy_node_and_lets_the_idle_one_go() {
    let dir = TempDir::new("core-slurm-quiet");
    let (fleet, console, clock, _) = bound_pool(&dir).await;
    console
        .save_rules("batch", QUIET_RULES, None, true)
        .await
        .unwrap();
    set_desired(console.pool_store(), "batch", 4).await;
    eventually("both nodes leased", Duration::from_secs(30), || async {
        let resumed = steps(&console)
            .await
            .iter()
            .filter(|(_, step)| *step == SlurmStep::Resumed)
            .count();
        (resumed == 2).then_some(())
    })
    .await;
    // The job lands on n1 (first fit); then the pool is asked for none.
    eventually("the job running on n1", Duration::from_secs(30), || async {
        let view = console.pool_slurm("batch").await.ok()??;
        view.nodes
            .iter()
            .any(|node| node.name == "n1" && !node.jobs.is_empty())
            .then_some(())
    })
    .await;
    set_desired(console.pool_store(), "batch", 0).await;
    eventually(
        "the idle node given back",
        Duration::from_secs(30),
        || async {
            steps(&console)
                .await
                .contains(&("n2".to_string(), SlurmStep::Released))
                .then_some(())
        },
    )
    .await;
    // Two minutes of the console's clock on, the busy node is neither drained nor gone.
    let until = clock.now_ms() + 120_000;
    let ticking = tick(&clock);
    eventually("two minutes on", Duration::from_secs(60), || async {
        (clock.now_ms() >= until).then_some(())
    })
    .await;
    ticking.abort();
    let steps = steps(&console).await;
    assert!(
        !steps
            .iter()
            .any(|(node, step)| node == "n1"
                && matches!(step, SlurmStep::Drained | SlurmStep::Released)),
        "the busy node stays through the quiet window: {steps:#?}"
    );
    let view = console.pool_slurm("batch").await.unwrap().unwrap();
    let n1 = view.nodes.iter().find(|node| node.name == "n1").unwrap();
    assert!(n1.lease_id.is_some(), "n1 still leased: {n1:?}");
    console.shutdown().await;
    fleet.stop().await;
}

#[tokio::test]
async fn a_node_its_host_reclaims_is_drained_its_job_requeued_and_replaced_at_once() {
    let dir = TempDir::new("core-slurm-reclaim");
    let (fleet, console, clock, south) = bound_pool(&dir).await;
    set_desired(console.pool_store(), "batch", 2).await;
    let ticking = tick(&clock);
    // One node, n1, with the job on it.
    let lease = eventually("the job running on n1", Duration::from_secs(30), || async {
        let view = console.pool_slurm("batch").await.ok()??;
        let n1 = view.nodes.iter().find(|node| node.name == "n1")?;
        (!n1.jobs.is_empty()).then(|| n1.lease_id.clone())?
    })
    .await;
    // Its host's owner takes n1 back with a minute's notice (real time: it stays ours for
    // the whole test).
    fleet
        .reclaim(south, &lease, Duration::from_secs(60))
        .await
        .unwrap();
    // The log entry follows the lease it tells of: waited for too, not read at once.
    let view = eventually(
        "n2 leased and said, n1 drained, the job on n2",
        Duration::from_secs(30),
        || async {
            let view = console.pool_slurm("batch").await.ok()??;
            let node = |name: &str| view.nodes.iter().find(|node| node.name == name).cloned();
            let (n1, n2) = (node("n1")?, node("n2")?);
            let said = steps(&console)
                .await
                .contains(&("n2".to_string(), SlurmStep::Resumed));
            (said
                && n2.lease_id.is_some()
                && !n2.jobs.is_empty()
                && n1.jobs.is_empty()
                && n1.reason.as_deref() == Some("ebb: reclaimed by its host"))
            .then_some(view)
        },
    )
    .await;
    ticking.abort();
    let steps = steps(&console).await;
    assert!(
        steps
            .iter()
            .any(|(node, step)| node == "n1" && matches!(step, SlurmStep::Requeued { .. })),
        "{steps:#?}"
    );
    assert!(
        steps.contains(&("n2".to_string(), SlurmStep::Resumed)),
        "{steps:#?}"
    );
    assert_eq!(
        view.nodes.iter().filter(|n| n.lease_id.is_some()).count(),
        2
    );
    let log = console.activity(Some("batch"), 100).await.unwrap();
    assert!(
        log.iter()
            .any(|entry| matches!(entry.reason, ChangeReason::Reclaimed { gpus: 2, .. })),
        "the reclaim said, with the node's 2 GPUs: {log:#?}"
    );
    console.shutdown().await;
    fleet.stop().await;
}

/// A held node Slurm drains on its own (as after a controller restart: "Duplicate jobid")
/// is resumed, saying why; one Slurm keeps taking out of service is given up after
/// `MAX_RESUMES` resumes and another node leased in its place; the job runs on.
#[tokio::test]
async fn a_node_slurm_drains_on_its_own_is_resumed_and_one_it_keeps_out_is_replaced() {
    let dir = TempDir::new("core-slurm-returned");
    let (fleet, console, clock, _, sim) = bound_pool_sim(&dir).await;
    set_desired(console.pool_store(), "batch", 2).await;
    let ticking = tick(&clock);
    eventually("the job running on n1", Duration::from_secs(30), || async {
        let view = console.pool_slurm("batch").await.ok()??;
        let n1 = view.nodes.iter().find(|node| node.name == "n1")?;
        (!n1.jobs.is_empty() && n1.lease_id.is_some()).then_some(())
    })
    .await;
    let returned = |steps: &[(String, SlurmStep)]| {
        steps
            .iter()
            .filter(|(node, step)| {
                node == "n1"
                    && *step
                        == SlurmStep::Returned {
                            slurm_reason: "Duplicate jobid".into(),
                        }
            })
            .count()
    };
    let n1 = std::slice::from_ref(&"n1".to_string()).to_vec();
    for resumes in 1..=ebb_core::slurm::binder::MAX_RESUMES {
        // Slurm drains it; Ebb, which still wants it, resumes it.
        sim.set_state(&n1, "drain", Some("Duplicate jobid"))
            .await
            .unwrap();
        eventually(
            &format!("n1 resumed ({resumes})"),
            Duration::from_secs(30),
            || async {
                let view = console.pool_slurm("batch").await.ok()??;
                let node = view.nodes.iter().find(|node| node.name == "n1")?;
                (returned(&steps(&console).await) == resumes
                    && node.reason.is_none()
                    && node.lease_id.is_some())
                .then_some(())
            },
        )
        .await;
    }
    // Drained once more within minutes: not coming back. n2 takes its place and the job.
    sim.set_state(&n1, "drain", Some("Duplicate jobid"))
        .await
        .unwrap();
    // The log entries follow the leases they tell of: waited for too.
    let view = eventually(
        "n1 replaced by n2, and said",
        Duration::from_secs(30),
        || async {
            let view = console.pool_slurm("batch").await.ok()??;
            let node = |name: &str| view.nodes.iter().find(|node| node.name == name).cloned();
            let (n1, n2) = (node("n1")?, node("n2")?);
            let steps = steps(&console).await;
            let said = steps.contains(&("n2".to_string(), SlurmStep::Resumed))
                && steps
                    .iter()
                    .any(|(node, step)| node == "n1" && matches!(step, SlurmStep::Replaced { .. }));
            (said && n1.lease_id.is_none() && n2.lease_id.is_some() && !n2.jobs.is_empty())
                .then_some(view)
        },
    )
    .await;
    ticking.abort();
    let steps = steps(&console).await;
    assert!(
        steps.contains(&(
            "n1".to_string(),
            SlurmStep::Replaced {
                slurm_reason: "Duplicate jobid".into()
            }
        )),
        "{steps:#?}"
    );
    assert!(
        steps.contains(&("n2".to_string(), SlurmStep::Resumed)),
        "{steps:#?}"
    );
    // Not leased again while it is Slurm's drained node.
    assert_eq!(
        view.nodes.iter().filter(|n| n.lease_id.is_some()).count(),
        1,
        "{view:#?}"
    );
    console.shutdown().await;
    fleet.stop().await;
}
