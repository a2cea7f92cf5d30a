use super::*;

fn look(at_ms: i64, desired: u32, ready: u32, warming: u32) -> PoolSample {
    PoolSample {
        at_ms,
        desired,
        ready,
        warming,
        util_pct: Some(50.0),
    }
}

/// The history on a fresh database, and its directory (removed when dropped).
async fn history() -> (PoolHistory, ebb_testkit::TempDir) {
    let dir = ebb_testkit::TempDir::new("pool-history");
    (PoolHistory::new(ConsoleDb::open(&dir).await.unwrap()), dir)
}

#[test]
fn a_row_a_minute_unless_a_count_moves() {
    let first = look(0, 2, 2, 0);
    assert!(worth_writing(None, &first));
    assert!(!worth_writing(Some(&first), &look(59_999, 2, 2, 0)));
    assert!(worth_writing(Some(&first), &look(60_000, 2, 2, 0)));
    assert!(worth_writing(Some(&first), &look(1_000, 4, 2, 0)));
    assert!(worth_writing(Some(&first), &look(1_000, 2, 2, 1)));
    assert!(worth_writing(Some(&first), &look(1_000, 2, 1, 0)));
}

#[test]
fn a_look_counts_active_leases_utilization_only() {
    let status = PoolStatus {
        actual: 2,
        pending: 1,
        leases: vec![
            lease(PoolLeaseState::Active, Some(40.0)),
            lease(PoolLeaseState::Active, Some(80.0)),
            lease(PoolLeaseState::Releasing, Some(0.0)),
        ],
        ..PoolStatus::default()
    };
    let sample = pool_sample(5, 3, &status);
    assert_eq!((sample.desired, sample.ready, sample.warming), (3, 2, 1));
    assert_eq!(sample.util_pct, Some(60.0));
    assert_eq!(pool_sample(5, 0, &PoolStatus::default()).util_pct, None);
}

#[test]
fn a_lease_whose_workload_is_not_up_is_warming_not_ready_and_not_read() {
    let starting = ebb_wire::pools::PoolLeaseView {
        starting: true,
        ..lease(PoolLeaseState::Active, Some(1.0))
    };
    let status = PoolStatus {
        actual: 3,
        starting: 1,
        pending: 1,
        leases: vec![
            lease(PoolLeaseState::Active, Some(40.0)),
            lease(PoolLeaseState::Active, Some(80.0)),
            starting,
        ],
        ..PoolStatus::default()
    };
    let sample = pool_sample(5, 4, &status);
    // Asked for and not granted (1) and granted but starting (1): 2 warming, 2 ready.
    assert_eq!((sample.desired, sample.ready, sample.warming), (4, 2, 2));
    assert_eq!(
        sample.util_pct,
        Some(60.0),
        "the starting GPU's idle is not the pool's"
    );
}

fn lease(state: PoolLeaseState, util_pct: Option<f32>) -> ebb_wire::pools::PoolLeaseView {
    ebb_wire::pools::PoolLeaseView {
        lease_id: "l".into(),
        host: "h".into(),
        region: "r".into(),
        gpu_uuids: vec![],
        gpu_indexes: vec![],
        fencing_token: 1,
        granted_at_ms: 0,
        state,
        util_pct,
        checkpoint_at_ms: None,
        release_grace_s: None,
        reclaim_deadline_ms: None,
        spot: false,
        starting: false,
    }
}

#[tokio::test]
async fn the_store_writes_once_a_minute_and_forgets_past_its_retention() {
    let (history, _dir) = history().await;
    let id = "p1".to_string();
    for (at, desired, ready, warming) in [
        (0, 2, 2, 0),
        (1_000, 2, 2, 0),  // nothing moved: no row
        (30_000, 4, 2, 2), // asked for two: a row
        (31_000, 4, 4, 0), // ready: a row
        (50_000, 4, 4, 0), // nothing moved
        (91_000, 4, 4, 0), // a minute on: a row
    ] {
        history
            .record(&[(id.clone(), look(at, desired, ready, warming))])
            .await
            .unwrap();
    }
    let rows = history.series(&id, 0).await.unwrap();
    let at: Vec<i64> = rows.iter().map(|r| r.at_ms).collect();
    assert_eq!(at, [0, 30_000, 31_000, 91_000]);
    assert_eq!((rows[1].ready, rows[1].warming), (2, 2));
    assert_eq!(rows[1].util_pct, Some(50.0));

    // Past the retention, the old rows go.
    let later = 91_000 + KEEP_MS - 1_000;
    history
        .record(&[(id.clone(), look(later, 4, 3, 1))])
        .await
        .unwrap();
    let at: Vec<i64> = history
        .series(&id, 0)
        .await
        .unwrap()
        .iter()
        .map(|r| r.at_ms)
        .collect();
    assert_eq!(at, [91_000, later]);
    assert!(history.series("other", 0).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_granted_request_measures_its_hosts_delivery_time() {
    let (history, _dir) = history().await;
    let db = history.db.pool();
    for (key, uuid, at) in [
        ("k1", "GPU-1", 1_000),
        ("k2", "GPU-2", 1_000),
        ("k3", "GPU-3", 1_000),
    ] {
        sqlx::query("INSERT INTO lease_intents (key, pool_id, host, gpu_uuid, created_at_ms) VALUES ($1, 'p1', 'h1', $2, $3)")
            .bind(key)
            .bind(uuid)
            .bind(at)
            .execute(db)
            .await
            .unwrap();
    }
    let asked = history.asked("p1").await.unwrap();
    assert_eq!(asked.len(), 3);
    assert_eq!(
        asked[0],
        Asked {
            host: "h1".into(),
            asked_at_ms: 1_000
        }
    );
    // GPU-1 and GPU-2 granted, GPU-3 refused (no lease): two samples.
    for (lease, uuid) in [("L1", "GPU-1"), ("L2", "GPU-2")] {
        sqlx::query("INSERT INTO pool_leases (host, lease_id, pool_id, gpu_uuids, gpu_indexes, fencing_token, granted_at_ms) VALUES ('h1', $1, 'p1', $2, '[0]', 1, 0)")
            .bind(lease)
            .bind(format!("[\"{uuid}\"]"))
            .execute(db)
            .await
            .unwrap();
    }
    sqlx::query("DELETE FROM lease_intents")
        .execute(db)
        .await
        .unwrap();
    assert!(history.asked("p1").await.unwrap().is_empty());
    assert_eq!(history.measure(5_000).await.unwrap(), 2);
    let delivery = history.deliveries().await.unwrap()["h1"];
    assert_eq!(delivery.samples, 2);
    assert_eq!(delivery.mean_ms, 4_000.0);
    assert_eq!(delivery.last_ms, 4_000);
    // Measured once: nothing left to measure.
    assert_eq!(history.measure(9_000).await.unwrap(), 0);
}

#[test]
fn the_eta_is_the_last_hosts_request_plus_its_measured_delivery() {
    let asked = |host: &str, at: i64| Asked {
        host: host.into(),
        asked_at_ms: at,
    };
    assert_eq!(scale_out(&[], &HashMap::new(), 0), None);
    let coming_up = scale_out(&[], &HashMap::new(), 2).unwrap();
    assert_eq!(
        (coming_up.warming, coming_up.starting, coming_up.eta_ms),
        (2, 2, None)
    );
    let requests = [asked("b", 2_000), asked("a", 1_000), asked("b", 1_500)];
    let mut deliveries = HashMap::from([(
        "a".to_string(),
        Delivery {
            samples: 3,
            mean_ms: 30_000.0,
            last_ms: 20_000,
        },
    )]);
    let out = scale_out(&requests, &deliveries, 0).unwrap();
    assert_eq!(out.warming, 3);
    assert_eq!(out.eta_ms, None, "host b was never measured");
    assert_eq!(
        (out.hosts[0].host.as_str(), out.hosts[0].eta_ms),
        ("a", Some(31_000))
    );
    assert_eq!((out.hosts[1].warming, out.hosts[1].asked_at_ms), (2, 1_500));
    assert_eq!(out.hosts[1].delivery_ms, None);
    deliveries.insert(
        "b".into(),
        Delivery {
            samples: 1,
            mean_ms: 60_000.0,
            last_ms: 60_000,
        },
    );
    let out = scale_out(&requests, &deliveries, 0).unwrap();
    assert_eq!(out.eta_ms, Some(61_500), "the later of the hosts' ETAs");
}
