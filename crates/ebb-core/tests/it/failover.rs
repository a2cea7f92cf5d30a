//! Failover on the console's own clock: the grace period is the real 30 s, yet the test
//! takes a few seconds, because the enforcer reads time from the injected clock. A host
//! that stops answering is written off only once that clock has moved past the grace
//! period, however long the test itself has been waiting.

use ebb_agent::{Fleet, FleetConfig, GpuModel};
use ebb_core::clock::{Clock, ManualClock};
use ebb_core::console::{Console, ConsoleOptions, TokenStore};
use ebb_core::enforcer::{EnforcerConfig, PassReport};
use ebb_core::registry::HostEntry;
use ebb_testkit::{TempDir, eventually};
use ebb_wire::ipc::{HostRemoval, PoolGpus};
use ebb_wire::pools::{Actor, PoolPhase};
use ebb_wire::reasons::ChangeReason;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

pub(crate) async fn one_host() -> Fleet {
    one_host_offering(false).await
}

/// [`one_host`], its GPUs offered as spot when `spot` (its owner may reclaim their leases).
pub(crate) async fn one_host_offering(spot: bool) -> Fleet {
    Fleet::start(&FleetConfig {
        hosts: 1,
        gpus_per_host: 4,
        model: Some(GpuModel::A100),
        sample_interval: Duration::from_millis(100),
        release_grace: Duration::from_millis(100),
        spot: if spot {
            vec![ebb_agent::fleet::SpotHost::All]
        } else {
            Vec::new()
        },
        ..FleetConfig::default()
    })
    .await
    .unwrap()
}

/// Waits for `passes` more enforcer passes; panics with the last report if they do not come.
pub(crate) async fn passes(reports: &mut watch::Receiver<PassReport>, passes: u64) -> PassReport {
    let until = reports.borrow_and_update().number + passes;
    let waited = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            reports.changed().await.unwrap();
            if reports.borrow_and_update().number >= until {
                return;
            }
        }
    })
    .await;
    let last = reports.borrow().clone();
    assert!(
        waited.is_ok(),
        "{passes} passes did not come; last: {last:?}"
    );
    last
}

/// A console on `clock` with the real 30 s grace period and a quick pass (a file token
/// store, so a second console on the same directory reads the same tokens).
pub(crate) async fn open(dir: &std::path::Path, clock: &Arc<ManualClock>) -> Console {
    Console::open(ConsoleOptions {
        token_store: TokenStore::File,
        enforcer: EnforcerConfig {
            interval: Duration::from_millis(50),
            grace: Duration::from_secs(30),
            ..EnforcerConfig::default()
        },
        clock: clock.clone(),
        ..ConsoleOptions::new(dir)
    })
    .await
    .unwrap()
}

/// Two one-host fleets registered as gpu-a and gpu-b, and a pool holding 2 GPUs (packed on
/// one of them, whose name is returned).
pub(crate) async fn two_hosts_and_a_pool_of_two(
    console: &Console,
    clock: &ManualClock,
    fleets: &[Fleet; 2],
) -> String {
    let pool = crate::pool_input("burst", "A100", vec!["cn-east".into()], 4);
    two_hosts_and_a_pool_of_two_as(console, clock, fleets, &pool).await
}

/// [`two_hosts_and_a_pool_of_two`] with the pool `pool` (named `burst`).
pub(crate) async fn two_hosts_and_a_pool_of_two_as(
    console: &Console,
    clock: &ManualClock,
    fleets: &[Fleet; 2],
    pool: &ebb_wire::pools::PoolInput,
) -> String {
    for (name, fleet) in ["gpu-a", "gpu-b"].iter().zip(fleets) {
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
    console.create_pool(pool).await.unwrap();
    let since = clock.now_ms();
    console
        .scale_pool("burst", 2, Actor::Operator, ChangeReason::Cli)
        .await
        .unwrap();
    clock.advance(Duration::from_millis(1));
    let view = console
        .wait_converged("burst", since, Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!(view.phase, PoolPhase::Converged, "{view:#?}");
    let holder = view.leases[0].host.clone();
    assert!(
        view.leases.iter().all(|l| l.host == holder),
        "packed: {view:#?}"
    );
    holder
}

/// After the write-off: converged again with both GPUs on the other host, the failover
/// logged with its numbers.
async fn replaced_on_the_other_host(console: &Console, clock: &ManualClock, holder: &str) {
    let since = clock.now_ms();
    clock.advance(Duration::from_millis(1));
    let view = console
        .wait_converged("burst", since, Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!(view.phase, PoolPhase::Converged, "{view:#?}");
    let other = if holder == "gpu-a" { "gpu-b" } else { "gpu-a" };
    let active: Vec<&str> = view
        .leases
        .iter()
        .filter(|l| l.state == ebb_wire::pools::PoolLeaseState::Active)
        .map(|l| l.host.as_str())
        .collect();
    assert_eq!(active, vec![other, other], "{view:#?}");
    let log = console.activity(Some("burst"), 10).await.unwrap();
    let failover = log
        .iter()
        .find(|e| e.actor == Actor::Failover)
        .unwrap_or_else(|| panic!("no failover logged: {log:#?}"));
    assert_eq!(
        failover.reason,
        ChangeReason::Failover {
            host: holder.to_string(),
            gpus: 2,
            grace_s: 30
        }
    );
}

async fn no_failover_yet(console: &Console) {
    let log = console.activity(Some("burst"), 10).await.unwrap();
    assert!(
        !log.iter().any(|e| e.actor == Actor::Failover),
        "written off before the grace period: {log:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_host_is_written_off_only_when_the_consoles_clock_passes_the_grace_period() {
    let fleets = [one_host().await, one_host().await];
    let dir = TempDir::new("failover-grace");
    let clock = Arc::new(ManualClock::new(1_800_000_000_000));
    let console = open(dir.path(), &clock).await;
    let holder = two_hosts_and_a_pool_of_two(&console, &clock, &fleets).await;

    // The host holding both GPUs goes silent.
    let [a, b] = fleets;
    let (gone, stays) = if holder == "gpu-a" { (a, b) } else { (b, a) };
    gone.stop().await;
    let mut reports = console.enforcer_reports().unwrap();
    // Many passes on real time, none on the console's clock: nothing is written off.
    passes(&mut reports, 10).await;
    no_failover_yet(&console).await;

    // 31 s later on the console's clock: written off and replaced on the other host.
    clock.advance(Duration::from_secs(31));
    replaced_on_the_other_host(&console, &clock, &holder).await;
    console.shutdown().await;
    stays.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_enforcer_remembers_since_when_a_host_has_been_silent() {
    let fleets = [one_host().await, one_host().await];
    let dir = TempDir::new("failover-restart");
    let clock = Arc::new(ManualClock::new(1_800_000_000_000));
    let console = open(dir.path(), &clock).await;
    let holder = two_hosts_and_a_pool_of_two(&console, &clock, &fleets).await;
    let [a, b] = fleets;
    let (gone, stays) = if holder == "gpu-a" { (a, b) } else { (b, a) };
    // Silent from t0 (the console's clock stands still until the test moves it).
    gone.stop().await;
    let mut reports = console.enforcer_reports().unwrap();
    passes(&mut reports, 3).await;
    // Half the grace period of silence (t0 + 15 s), then the console restarts.
    clock.advance(Duration::from_secs(15));
    passes(&mut reports, 2).await;
    console.shutdown().await;
    drop(console);
    let console = open(dir.path(), &clock).await;
    let mut reports = console.enforcer_reports().unwrap();
    passes(&mut reports, 3).await;
    no_failover_yet(&console).await;
    // t0 + 29 s: not yet, the grace period counts from t0 ...
    clock.advance(Duration::from_secs(14));
    passes(&mut reports, 3).await;
    no_failover_yet(&console).await;
    // ... and at t0 + 31 s the leases are replaced: 16 s after the restart, where a
    // forgetful enforcer would wait until t0 + 45 s.
    clock.advance(Duration::from_secs(2));
    replaced_on_the_other_host(&console, &clock, &holder).await;
    console.shutdown().await;
    stays.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_holding_a_pools_gpus_cannot_be_removed_until_they_are_released() {
    let fleets = [one_host().await, one_host().await];
    let dir = TempDir::new("failover-remove");
    let clock = Arc::new(ManualClock::new(1_800_000_000_000));
    let console = open(dir.path(), &clock).await;
    let holder = two_hosts_and_a_pool_of_two(&console, &clock, &fleets).await;
    let other = if holder == "gpu-a" { "gpu-b" } else { "gpu-a" };
    let refused = console
        .remove_host(&holder, false)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.starts_with("name: ") && refused.contains("`burst` (2 GPUs)"),
        "{refused}"
    );
    assert!(
        console.registry().get(&holder).await.is_ok(),
        "still registered"
    );
    // A host holding nothing goes at once.
    assert_eq!(
        console.remove_host(other, false).await.unwrap(),
        HostRemoval::Removed
    );
    // Released, then it can go.
    let since = clock.now_ms();
    console
        .scale_pool("burst", 0, Actor::Operator, ChangeReason::Cli)
        .await
        .unwrap();
    clock.advance(Duration::from_millis(1));
    let view = console
        .wait_converged("burst", since, Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!(view.actual, 0, "{view:#?}");
    // The releases end on the agent a moment later (its workload grace); then it can go.
    eventually(
        "the host removed once the pool released",
        Duration::from_secs(10),
        || console.remove_host(&holder, false),
    )
    .await;
    console.shutdown().await;
    let [a, b] = fleets;
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_a_host_with_release_moves_its_pool_gpus_elsewhere_then_drops_it() {
    let fleets = [one_host().await, one_host().await];
    let dir = TempDir::new("failover-drain");
    let clock = Arc::new(ManualClock::new(1_800_000_000_000));
    let console = open(dir.path(), &clock).await;
    let holder = two_hosts_and_a_pool_of_two(&console, &clock, &fleets).await;
    let other = if holder == "gpu-a" { "gpu-b" } else { "gpu-a" };
    let before: Vec<String> = console
        .show_pool("burst")
        .await
        .unwrap()
        .leases
        .iter()
        .map(|lease| lease.lease_id.clone())
        .collect();
    let removal = console.remove_host(&holder, true).await.unwrap();
    assert_eq!(
        removal,
        HostRemoval::Draining {
            pools: vec![PoolGpus {
                pool: "burst".into(),
                gpus: 2
            }]
        }
    );
    assert!(console.registry().get(&holder).await.unwrap().draining);
    // Asking again while it drains changes nothing.
    assert_eq!(console.remove_host(&holder, true).await.unwrap(), removal);
    // The pool's two GPUs end up on the other host, and the drained host is gone.
    let view = eventually(
        "both GPUs on the other host and the drained host removed",
        Duration::from_secs(20),
        || async {
            clock.advance(Duration::from_millis(50));
            let view = console
                .show_pool("burst")
                .await
                .map_err(|e| e.to_string())?;
            let gone = console.registry().get(&holder).await.is_err();
            let moved = view.actual == 2
                && view.leases.len() == 2
                && view.leases.iter().all(|lease| lease.host == other);
            if gone && moved {
                Ok(view)
            } else {
                Err(format!("gone: {gone}, leases: {:?}", view.leases))
            }
        },
    )
    .await;
    assert_eq!(view.desired, 2, "the pool keeps its count");
    assert!(
        view.leases
            .iter()
            .all(|lease| !before.contains(&lease.lease_id)),
        "new leases: {view:#?}"
    );
    // The log says the host was drained, then removed.
    let log = console.activity(None, 50).await.unwrap();
    let kinds: Vec<String> = log.iter().map(|entry| entry.reason.to_string()).collect();
    assert!(
        kinds
            .iter()
            .any(|k| k.contains("to be removed: releasing the 2 pool GPUs")),
        "{kinds:#?}"
    );
    assert!(
        kinds.iter().any(|k| k == &format!("host {holder} removed")),
        "{kinds:#?}"
    );
    console.shutdown().await;
    let [a, b] = fleets;
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_host_written_off_can_be_forgotten_which_a_drain_never_finishes() {
    let fleets = [one_host().await, one_host().await];
    let dir = TempDir::new("failover-forget");
    let clock = Arc::new(ManualClock::new(1_800_000_000_000));
    let console = open(dir.path(), &clock).await;
    let holder = two_hosts_and_a_pool_of_two(&console, &clock, &fleets).await;
    // Asked to drain, then the machine dies before anything is released there.
    let [a, b] = fleets;
    let (gone, stays) = if holder == "gpu-a" { (a, b) } else { (b, a) };
    gone.stop().await;
    console.remove_host(&holder, true).await.unwrap();
    // Not written off yet: forgetting is refused, naming the host, and changes nothing.
    let refused = console.registry().forget(&holder).await.unwrap_err();
    assert!(
        refused.to_string().starts_with("name: ") && refused.to_string().contains("--release"),
        "{refused}"
    );
    assert!(console.registry().get(&holder).await.unwrap().draining);
    // The enforcer has seen it silent (from now on the console's clock) before the clock
    // moves: silence first seen after the move would start the grace period there.
    let mut reports = console.enforcer_reports().unwrap();
    passes(&mut reports, 3).await;

    // Past the grace period: written off, replaced on the other host; the drain can never
    // finish (no agent answers to release the leases), so the host stays, draining.
    clock.advance(Duration::from_secs(31));
    replaced_on_the_other_host(&console, &clock, &holder).await;
    passes(&mut reports, 5).await;
    assert!(console.registry().get(&holder).await.unwrap().draining);

    let forgotten = console.registry().forget(&holder).await.unwrap();
    assert_eq!(forgotten, 2, "the two written-off leases");
    assert!(console.registry().get(&holder).await.is_err(), "gone");
    // Its leases are history now, ended no later than the forget; the pool holds its 2 on
    // the other host, and the log says what was forgotten.
    clock.advance(Duration::from_millis(1));
    passes(&mut reports, 3).await;
    let view = console.show_pool("burst").await.unwrap();
    assert_eq!(view.actual, 2, "{view:#?}");
    assert!(
        view.leases.iter().all(|lease| lease.host != holder),
        "{view:#?}"
    );
    let log = console.activity(None, 50).await.unwrap();
    assert!(
        log.iter().any(|entry| entry.reason
            == ChangeReason::HostForgotten {
                host: holder.clone(),
                leases: 2
            }),
        "{log:#?}"
    );
    // Forgetting again: the host is not registered.
    assert!(console.registry().forget(&holder).await.is_err());
    console.shutdown().await;
    stays.stop().await;
}
