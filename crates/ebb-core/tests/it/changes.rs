//! The console tells its fronts what changed (`Console::changes`): its own writes at once,
//! before the write answers; the enforcer's pass that carries a write out; and nothing for
//! passes that change nothing, so an idle window refreshes nothing.

use crate::failover::{one_host, open, passes};
use ebb_core::changes::Change;
use ebb_core::clock::{Clock, ManualClock};
use ebb_core::registry::HostEntry;
use ebb_testkit::TempDir;
use ebb_wire::pools::{Actor, PoolPhase};
use ebb_wire::reasons::ChangeReason;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::{self, error::TryRecvError};

/// Every change published so far, without waiting.
fn heard_so_far(heard: &mut broadcast::Receiver<Change>) -> Vec<Change> {
    let mut changes = Vec::new();
    loop {
        match heard.try_recv() {
            Ok(change) => changes.push(change),
            Err(TryRecvError::Empty) => return changes,
            Err(error) => panic!("{error}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_and_the_pass_that_carries_it_out_are_told_and_an_idle_pass_is_not() {
    let fleet = one_host().await;
    let dir = TempDir::new("core-changes");
    let clock = Arc::new(ManualClock::new(1_800_000_000_000));
    let console = open(dir.path(), &clock).await;
    let spec = HostEntry {
        name: "gpu-a".into(),
        url: fleet.hosts()[0].url.clone(),
        region: "cn-east".into(),
        labels: Default::default(),
        fingerprint: None,
        has_token: false,
        draining: false,
    };
    console.upsert_host(&spec, None).await.unwrap();
    let mut heard = console.changes().subscribe();
    let mut reports = console.enforcer_reports().unwrap();

    // A new pool: the set of pools changed, said before the answer.
    let input = crate::pool_input("burst", "A100", vec!["cn-east".into()], 4);
    console.create_pool(&input).await.unwrap();
    assert_eq!(heard_so_far(&mut heard).first(), Some(&Change::Pools(None)));
    passes(&mut reports, 2).await;
    heard_so_far(&mut heard);

    // The slider: this pool and the log's new entry, before the write answers.
    let since = clock.now_ms();
    let entry = console
        .scale_pool("burst", 2, Actor::Operator, ChangeReason::Cli)
        .await
        .unwrap();
    let said = heard_so_far(&mut heard);
    assert!(
        said.contains(&Change::Pools(Some(vec!["burst".into()]))),
        "{said:?}"
    );
    assert!(said.contains(&Change::Activity(entry.id)), "{said:?}");
    assert_eq!(console.changes().newest_activity(), entry.id);

    // The pass that rents the GPUs says the pool changed (told before its report).
    clock.advance(Duration::from_millis(1));
    let granted = loop {
        let report = passes(&mut reports, 1).await;
        if report.granted > 0 {
            break report;
        }
    };
    assert_eq!(granted.pools_changed, ["burst"], "{granted:?}");
    let said = heard_so_far(&mut heard);
    assert!(
        said.contains(&Change::Pools(Some(vec!["burst".into()]))),
        "{said:?}"
    );
    let view = console
        .wait_converged("burst", since, Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!(view.phase, PoolPhase::Converged, "{view:#?}");

    // Held and converged, the clock still: passes go on and tell nothing.
    passes(&mut reports, 2).await;
    heard_so_far(&mut heard);
    let idle = passes(&mut reports, 3).await;
    assert!(idle.converged, "{idle:?}");
    assert_eq!(idle.pools_changed, Vec::<String>::new(), "{idle:?}");
    assert_eq!(heard_so_far(&mut heard), [], "an idle pass told a change");
}
