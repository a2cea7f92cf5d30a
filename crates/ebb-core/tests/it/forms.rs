//! The pool form asks the console (`check_pool`) what a save would say: the store's own
//! checks against the hosts and the catalog, each problem at its field in catalog words,
//! and a form it passes is one the save accepts.

use crate::failover::{one_host, open};
use ebb_core::clock::ManualClock;
use ebb_core::registry::HostEntry;
use ebb_testkit::TempDir;
use ebb_wire::pools::{PoolCheck, PoolForm};
use std::sync::Arc;

fn typed(name: &str, region: &str, min: &str) -> PoolForm {
    PoolForm {
        name: name.into(),
        model: "A100".into(),
        regions: vec![region.into()],
        min: min.into(),
        max: "4".into(),
        base_gpus: "0".into(),
        term: "month".into(),
        overlay: "hour".into(),
        placement: "pack".into(),
        interruptible: false,
        release_at_unit_end: false,
        on_demand_floor: String::new(),
        spot_pct: String::new(),
        max_price: String::new(),
        stored_spot: None,
    }
}

fn keys(check: &PoolCheck) -> Vec<(&str, &str)> {
    check
        .problems
        .iter()
        .map(|p| (p.field.as_str(), p.words.key.as_str()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_pool_answers_what_the_save_would_and_a_passed_form_saves() {
    let fleet = one_host().await;
    let dir = TempDir::new("core-forms");
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

    // A region no host is in: the hosts are the console's.
    let nowhere = console
        .check_pool(&typed("burst", "mars", "0"))
        .await
        .unwrap();
    assert_eq!(keys(&nowhere), [("regions", "pool.check.noHostIn")]);
    assert!(nowhere.input.is_none());

    // Min above max: the check and the save refuse it at the same field.
    let above = console
        .check_pool(&typed("burst", "cn-east", "9"))
        .await
        .unwrap();
    assert_eq!(keys(&above), [("min", "pool.check.minAboveMax")]);
    let mut input = console
        .check_pool(&typed("burst", "cn-east", "0"))
        .await
        .unwrap()
        .input
        .expect("a good form reads as the pool to send");
    input.min = 9;
    let refused = console.create_pool(&input).await.unwrap_err().to_string();
    assert!(refused.starts_with("min: "), "{refused}");

    // What the check passes, the save takes.
    let good = console
        .check_pool(&typed("burst", "cn-east", "1"))
        .await
        .unwrap();
    assert_eq!(keys(&good), []);
    let saved = console.create_pool(&good.input.unwrap()).await.unwrap();
    assert_eq!((saved.name.as_str(), saved.min, saved.max), ("burst", 1, 4));
}
