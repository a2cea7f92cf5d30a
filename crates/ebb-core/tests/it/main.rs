//! The collector against agents served in-process on loopback.

use ebb_agent::{Fleet, FleetConfig};
use ebb_core::collect::{Collector, CollectorConfig, Target};
use ebb_wire::ipc::Health;
use std::time::Duration;

fn fast() -> CollectorConfig {
    CollectorConfig {
        interval: Duration::from_millis(50),
        ..CollectorConfig::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collects_a_virtual_fleet_and_marks_a_dead_host_offline() {
    let fleet = Fleet::start(&FleetConfig {
        hosts: 2,
        gpus_per_host: 3,
        sample_interval: Duration::from_millis(20),
        ..FleetConfig::default()
    })
    .await
    .unwrap();
    let mut targets: Vec<Target> = fleet
        .hosts()
        .iter()
        .map(|host| Target {
            name: host.name.clone(),
            url: host.url.clone(),
            region: host.region.clone(),
        })
        .collect();
    // Nothing listens on port 1 of loopback.
    targets.push(Target {
        name: "gone".into(),
        url: "http://127.0.0.1:1".into(),
        region: "cn-east".into(),
    });
    let collector = Collector::start(targets, fast()).unwrap();
    let mut states = collector.subscribe();
    let state = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            states.changed().await.unwrap();
            let state = states.borrow().clone();
            let enough_points = fleet.hosts().iter().all(|host| {
                state
                    .history
                    .host_series(&host.name)
                    .iter()
                    .all(|gpu| gpu.points.len() >= 3)
            });
            if state.snapshot.tick >= 3 && enough_points {
                return state;
            }
        }
    })
    .await
    .expect("three rounds with points within 10 s");
    let hosts = &state.snapshot.hosts;
    assert_eq!(hosts[0].health, Health::Online);
    assert_eq!(hosts[0].gpu_count, 3);
    assert_eq!(hosts[1].health, Health::Online);
    assert_eq!(hosts[2].health, Health::Offline);
    let reason = hosts[2].last_error.as_deref().unwrap();
    assert!(reason.contains("127.0.0.1:1"), "{reason}");
    let series = state.history.host_series(&hosts[0].name);
    assert_eq!(series.len(), 3);
    collector.stop().await;
    fleet.stop().await;
}
