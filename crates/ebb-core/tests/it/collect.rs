//! The collector against a virtual fleet, a dead host and a hung host.

use ebb_agent::{Fleet, FleetConfig};
use ebb_core::client::AgentAccess;
use ebb_core::collect::{Collector, CollectorConfig, Target, Tick};
use ebb_wire::ipc::Health;
use std::time::Duration;
use tokio::sync::mpsc;

fn fast() -> CollectorConfig {
    CollectorConfig {
        interval: Duration::from_millis(100),
        ..CollectorConfig::default()
    }
}

fn targets(fleet: &Fleet) -> Vec<Target> {
    fleet
        .hosts()
        .iter()
        .map(|host| Target {
            name: host.name.clone(),
            region: host.region.clone(),
            access: AgentAccess::open(&host.url),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collects_a_fleet_while_a_hung_host_and_a_dead_one_fail_alone() {
    let fleet = Fleet::start(&FleetConfig {
        hosts: 2,
        gpus_per_host: 3,
        sample_interval: Duration::from_millis(50),
        ..FleetConfig::default()
    })
    .await
    .unwrap();
    // A hung host: accepts connections, never answers.
    let hung = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hung_url = format!("http://{}", hung.local_addr().unwrap());
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = hung.accept().await {
            held.push(socket);
        }
    });
    let mut all = targets(&fleet);
    all.push(Target {
        name: "hung".into(),
        region: "cn-east".into(),
        access: AgentAccess::open(&hung_url),
    });
    all.push(Target {
        name: "gone".into(),
        region: "cn-east".into(),
        access: AgentAccess::open("http://127.0.0.1:1"),
    });
    let (sink, mut ticks) = mpsc::channel::<Tick>(64);
    let collector = Collector::start(all, fast(), Some(sink)).unwrap();
    let mut samples_per_host = std::collections::HashMap::<String, Vec<u64>>::new();
    let mut last = None;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while tokio::time::Instant::now() < deadline {
        let tick = tokio::time::timeout(Duration::from_secs(5), ticks.recv())
            .await
            .unwrap()
            .unwrap();
        for list in &tick.samples {
            samples_per_host
                .entry(list.host.clone())
                .or_default()
                .push(list.sampled_at_ms);
        }
        let done = tick
            .snapshot
            .hosts
            .iter()
            .any(|host| host.name == "gone" && host.health == Health::Offline)
            && tick
                .snapshot
                .hosts
                .iter()
                .any(|host| host.name == "hung" && host.health != Health::Unknown)
            && fleet.hosts().iter().all(|host| {
                samples_per_host
                    .get(&host.name)
                    .is_some_and(|seen| seen.len() >= 5)
            });
        last = Some(tick);
        if done {
            break;
        }
    }
    let tick = last.unwrap();
    let by_name = |name: &str| {
        tick.snapshot
            .hosts
            .iter()
            .find(|host| host.name == name)
            .unwrap()
            .clone()
    };
    for host in fleet.hosts() {
        assert_eq!(by_name(&host.name).health, Health::Online, "{}", host.name);
        let times = &samples_per_host[&host.name];
        assert!(
            times.len() >= 5,
            "the hung host does not starve {}: {times:?}",
            host.name
        );
        assert!(
            times.windows(2).all(|pair| pair[0] < pair[1]),
            "no reading stored twice: {times:?}"
        );
    }
    let gone = by_name("gone");
    assert_eq!(gone.health, Health::Offline);
    assert!(
        gone.last_error
            .unwrap()
            .to_string()
            .contains("refused the connection")
    );
    let hung = by_name("hung");
    assert_ne!(hung.health, Health::Online);
    assert!(
        hung.last_error.unwrap().to_string().contains("no answer"),
        "the hung host times out"
    );
    collector.stop().await;
    hold.abort();
    fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn targets_can_change_while_collecting() {
    let fleet = Fleet::start(&FleetConfig {
        hosts: 2,
        gpus_per_host: 1,
        sample_interval: Duration::from_millis(50),
        ..FleetConfig::default()
    })
    .await
    .unwrap();
    let all = targets(&fleet);
    let collector = Collector::start(vec![all[0].clone()], fast(), None).unwrap();
    let mut snapshots = collector.subscribe();
    let wait_for = |names: Vec<String>| {
        let mut snapshots = snapshots.clone();
        async move {
            tokio::time::timeout(Duration::from_secs(10), async {
                loop {
                    snapshots.changed().await.unwrap();
                    let snapshot = snapshots.borrow().clone();
                    let online: Vec<String> = snapshot
                        .hosts
                        .iter()
                        .filter(|host| host.health == Health::Online)
                        .map(|host| host.name.clone())
                        .collect();
                    if online == names && snapshot.hosts.len() == names.len() {
                        return;
                    }
                }
            })
            .await
            .unwrap_or_else(|_| panic!("never saw exactly {names:?} online"));
        }
    };
    wait_for(vec![all[0].name.clone()]).await;
    collector.set_targets(all.clone());
    wait_for(vec![all[0].name.clone(), all[1].name.clone()]).await;
    collector.set_targets(vec![all[1].clone()]);
    wait_for(vec![all[1].name.clone()]).await;
    snapshots.borrow_and_update();
    collector.stop().await;
    fleet.stop().await;
}
