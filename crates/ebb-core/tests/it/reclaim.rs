//! A host's owner takes a spot pool's GPUs back with a notice (a spot reclaim): the pool
//! orders the replacement on the pass that first sees the notice, says so once in its
//! log, and holds its count again once the host has released the reclaimed lease at its
//! deadline.

use crate::failover::{one_host_offering, open, passes, two_hosts_and_a_pool_of_two_as};
use ebb_core::clock::ManualClock;
use ebb_testkit::{TempDir, eventually};
use ebb_wire::pools::{PoolLeaseState, PoolPhase};
use ebb_wire::reasons::ChangeReason;
use std::sync::Arc;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reclaimed_gpu_is_replaced_on_the_pass_that_sees_the_notice_and_goes_at_its_deadline() {
    // Both hosts offer their A100s as spot; the pool is interruptible, all on spot.
    let fleets = [one_host_offering(true).await, one_host_offering(true).await];
    let dir = TempDir::new("core-reclaim");
    let clock = Arc::new(ManualClock::new(1_800_000_000_000));
    let console = open(dir.path(), &clock).await;
    let pool = ebb_wire::pools::PoolInput {
        interruptible: true,
        overlay: ebb_wire::plan::OverlayMode::Spot,
        ..crate::pool_input("burst", "A100", vec!["cn-east".into()], 4)
    };
    let holder = two_hosts_and_a_pool_of_two_as(&console, &clock, &fleets, &pool).await;
    let on_holder = usize::from(holder == "gpu-b");
    let view = console.show_pool("burst").await.unwrap();
    let taken = view.leases[0].lease_id.clone();
    let mut reports = console.enforcer_reports().unwrap();
    passes(&mut reports, 1).await;

    // The owner of the holding host reclaims one of the two GPUs with a 3 s notice.
    let before = reports.borrow_and_update().number;
    let reclaimed = fleets[on_holder]
        .reclaim(0, &taken, Duration::from_secs(3))
        .await
        .unwrap();
    let deadline = reclaimed.reclaim_deadline_ms.expect("a deadline");
    // The pass that sees it orders the replacement: at most the pass running now (it may
    // have looked before the notice) and the next.
    let mut granted_by = None;
    for _ in 0..2 {
        let report = passes(&mut reports, 1).await;
        if report.granted > 0 {
            granted_by = Some(report.number - before);
            break;
        }
    }
    let granted_by = granted_by.expect("a replacement granted within two passes of the notice");
    eprintln!("reclaim: replacement granted on pass {granted_by} after the notice");
    let view = console.show_pool("burst").await.unwrap();
    let states: Vec<(String, PoolLeaseState)> = view
        .leases
        .iter()
        .map(|lease| (lease.lease_id.clone(), lease.state))
        .collect();
    assert!(
        states.contains(&(taken.clone(), PoolLeaseState::Reclaimed)),
        "{states:?}"
    );
    let shown = view.leases.iter().find(|l| l.lease_id == taken).unwrap();
    assert_eq!(
        shown.reclaim_deadline_ms,
        Some(i64::try_from(deadline).unwrap())
    );
    // Said once, with its deadline.
    let log = console.activity(Some("burst"), 50).await.unwrap();
    let said: Vec<_> = log
        .iter()
        .filter(|entry| matches!(entry.reason, ChangeReason::Reclaimed { .. }))
        .collect();
    assert_eq!(said.len(), 1, "{log:#?}");
    assert_eq!(
        said[0].reason,
        ChangeReason::Reclaimed {
            host: holder.clone(),
            gpus: 1,
            until_ms: i64::try_from(deadline).unwrap()
        }
    );

    // At the deadline the host releases it; the pool holds its 2 without it.
    let view = eventually(
        "the reclaimed lease gone and the pool at 2",
        Duration::from_secs(20),
        || async {
            let view = console.show_pool("burst").await.ok()?;
            (view.phase == PoolPhase::Converged
                && view.actual == 2
                && view.leases.iter().all(|lease| lease.lease_id != taken))
            .then_some(view)
        },
    )
    .await;
    assert!(
        view.leases
            .iter()
            .all(|lease| lease.state == PoolLeaseState::Active),
        "{view:#?}"
    );
    passes(&mut reports, 3).await;
    let log = console.activity(Some("burst"), 50).await.unwrap();
    assert_eq!(
        log.iter()
            .filter(|entry| matches!(entry.reason, ChangeReason::Reclaimed { .. }))
            .count(),
        1,
        "said once: {log:#?}"
    );
    console.shutdown().await;
    for fleet in fleets {
        fleet.stop().await;
    }
}
