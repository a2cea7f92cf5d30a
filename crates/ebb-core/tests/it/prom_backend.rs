//! A console on Prometheus as its metrics back end, against Debian's Prometheus scraping
//! simulated agents through the console's own service discovery: the fleet it shows
//! (hosts, GPUs, which are leased) is what the agents have; a host's utilization line is
//! what its agent served; with Prometheus gone the views say so and the pool's leases stay
//! as they are; with it back, everything reads again.

use ebb_agent::sim::GpuModel;
use ebb_core::console_charts::ChartError;
use ebb_core::console_rules::PromqlTestError;
use ebb_telemetry::client::{AgentClient, ClientConfig};
use ebb_telemetry::metrics_store::SeriesQuery;
use ebb_testkit::{PrometheusServer, TempDir, TestConsole, TestFleet, eventually};
use ebb_wire::agent::LeaseState;
use ebb_wire::ipc::{ChartFrame, ChartMetric, ChartTheme, Health};
use ebb_wire::pools::Actor;
use ebb_wire::reasons::ChangeReason;
use std::collections::BTreeSet;
use std::time::Duration;

/// A scrape job on the console's service discovery, as README.md shows it.
fn discovery(console: std::net::SocketAddr, token: &str) -> String {
    format!(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
         scrape_configs:\n  - job_name: ebb-agents\n    http_sd_configs:\n      \
         - url: http://{console}/v1/prometheus/targets\n        refresh_interval: 1s\n        \
         authorization:\n          type: Bearer\n          credentials: {token}\n"
    )
}

fn frame() -> ChartFrame {
    ChartFrame {
        range_s: 120,
        theme: ChartTheme::Light,
        width_px: 600,
        height_px: 200,
        utc_offset_minutes: 0,
    }
}

/// What the fleet's agents say, host by host: (GPU count, the GPUs in active leases).
async fn agents_say(fleet: &TestFleet) -> Vec<(String, usize, BTreeSet<String>)> {
    let mut said = Vec::new();
    for host in fleet.hosts() {
        let client = AgentClient::new(&host.url, ClientConfig::default()).unwrap();
        let gpus = client.gpus().await.unwrap();
        let leased = client
            .leases()
            .await
            .unwrap()
            .leases
            .into_iter()
            .filter(|lease| lease.state == LeaseState::Active)
            .flat_map(|lease| lease.gpu_uuids)
            .collect();
        said.push((host.name.clone(), gpus.gpus.len(), leased));
    }
    said
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_console_on_prometheus_shows_what_the_agents_serve_and_waits_out_an_outage() {
    PrometheusServer::tool("prometheus");
    let dir = TempDir::new("core-prom");
    // Prometheus first (the console names it), its scrape job once the console serves
    // the discovery.
    let mut prometheus = PrometheusServer::start(dir.path(), "global:\n  scrape_interval: 1s\n");
    let fleet = TestFleet::builder()
        .hosts(2)
        .gpus_per_host(2)
        .model(GpuModel::A100)
        .sample_interval(Duration::from_millis(200))
        .release_grace(Duration::from_millis(100))
        .start()
        .await;
    let console = TestConsole::builder("core-prom-backend")
        .prometheus(prometheus.url())
        .metrics_listen("127.0.0.1:0".parse().unwrap())
        .fleet(&fleet)
        .open()
        .await;
    assert!(
        console
            .metrics_source()
            .describe()
            .starts_with("Prometheus at"),
        "{}",
        console.metrics_source().describe()
    );
    let token = console.pool_store().new_metric_token().await.unwrap();
    prometheus.reload(&discovery(console.metrics_api_addr().unwrap(), &token));

    // A pool holding 3 of the 4 GPUs: the enforcer still rents them from the agents.
    let regions: Vec<String> = fleet.hosts().iter().map(|h| h.region.clone()).collect();
    let pool = console
        .create_pool(&crate::pool_input("train", "A100", regions, 4))
        .await
        .unwrap();
    let since = ebb_core::clock::now_ms();
    console
        .scale_pool("train", 3, Actor::Operator, ChangeReason::Cli)
        .await
        .unwrap();
    console
        .wait_converged("train", since, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(fleet.held(&pool.id).await.len(), 3);

    // The fleet as read from Prometheus: every host up, its GPUs and its leased GPUs as
    // its agent says.
    eventually(
        "the fleet read from Prometheus to be the agents'",
        Duration::from_secs(60),
        || async {
            let snapshot = console.latest();
            let mut wrong = Vec::new();
            for (name, gpus, leased) in agents_say(&fleet).await {
                let Some(seen) = snapshot.hosts.iter().find(|host| host.name == name) else {
                    wrong.push(format!("{name} missing"));
                    continue;
                };
                let seen_leased: BTreeSet<String> = seen
                    .gpus
                    .iter()
                    .filter(|gpu| gpu.lease_id.is_some())
                    .map(|gpu| gpu.uuid.clone())
                    .collect();
                if seen.health != Health::Online
                    || seen.gpu_count as usize != gpus
                    || seen_leased != leased
                {
                    wrong.push(format!(
                        "{name}: {:?} {} GPUs, leased {seen_leased:?}; the agent: {gpus}, {leased:?}",
                        seen.health, seen.gpu_count
                    ));
                }
            }
            if snapshot.metrics_unavailable.is_some() {
                wrong.push(format!("{:?}", snapshot.metrics_unavailable));
            }
            if wrong.is_empty() { Ok(()) } else { Err(wrong.join("; ")) }
        },
    )
    .await;

    // A host's utilization line: each point one of the readings its agent served.
    let prom = console.metrics_source().clone();
    let host = fleet.hosts()[0].name.clone();
    let series = eventually(
        "five scrapes of each GPU",
        Duration::from_secs(60),
        || async {
            let now = ebb_core::clock::now_ms();
            let query = SeriesQuery {
                host: Some(host.clone()),
                gpu_index: None,
                metric: ChartMetric::Util,
                from_ms: now - 20_000,
                to_ms: now,
                max_points: 400,
            };
            let series = prom
                .host_series(&query)
                .await
                .map_err(|error| error.to_string())?;
            if series.len() == 2 && series.iter().all(|line| line.points.len() >= 5) {
                Ok(series)
            } else {
                Err(format!("{series:?}"))
            }
        },
    )
    .await;
    let agent = AgentClient::new(&fleet.hosts()[0].url, ClientConfig::default()).unwrap();
    let served = agent.samples(None).await.unwrap().samples;
    assert_eq!(series.len(), 2, "{series:?}");
    for line in &series {
        assert!(line.points.len() >= 5, "{line:?}");
        for point in &line.points {
            let matched = served.iter().any(|sample| {
                sample.gpus.iter().any(|gpu| {
                    gpu.index == line.gpu_index
                        && gpu
                            .gpu_util_pct
                            .is_some_and(|util| (util - point.avg).abs() < 0.01)
                })
            });
            assert!(
                matched,
                "GPU {} read {} at {}, which its agent never served",
                line.gpu_index, point.avg, point.t_ms
            );
        }
    }
    console
        .host_history_chart(&host, ChartMetric::Util, &frame())
        .await
        .unwrap();
    console.fleet_heatmap_chart(&frame(), "GPUs").await.unwrap();

    // The rules read the pool's GPUs' readings from Prometheus: each held GPU's
    // utilization one its agent served; with no answer (below), none at all.
    let view = console.show_pool("train").await.unwrap();
    let statuses = [ebb_reconcile::reconcile::PoolStatus {
        leases: view.leases.clone(),
        ..Default::default()
    }];
    let mut observed = Vec::new();
    for host in fleet.hosts() {
        let client = AgentClient::new(&host.url, ClientConfig::default()).unwrap();
        let mut gpus = client.gpus().await.unwrap().gpus;
        for gpu in &mut gpus {
            // What the rules see must come from Prometheus, not from this call.
            gpu.gpu_util_pct = Some(-1.0);
        }
        observed.push(ebb_reconcile::reconcile::HostObs {
            name: host.name.clone(),
            region: host.region.clone(),
            seen: Some(ebb_reconcile::reconcile::Seen {
                gpus,
                leases: Vec::new(),
            }),
            down_since_ms: None,
            lost_fence: None,
            refusing: None,
            draining: false,
        });
    }
    let read = prom
        .readings_for_rules(&observed, &statuses)
        .await
        .expect("on Prometheus, the rules read its readings");
    for lease in &view.leases {
        let host = read.iter().find(|host| host.name == lease.host).unwrap();
        for index in &lease.gpu_indexes {
            let gpu = host
                .seen
                .as_ref()
                .unwrap()
                .gpus
                .iter()
                .find(|gpu| gpu.index == *index)
                .unwrap();
            let util = gpu.gpu_util_pct.expect("a reading from Prometheus");
            assert!((0.0..=100.0).contains(&util), "{util}");
        }
    }

    // The Rules form's Test: the back end's server answers the rules' queries too.
    let tested = console
        .test_promql(
            "train",
            "count(up{region=~\".+\"} == 1) + 0 * count(up{pool_name!=\"{pool}\"})",
        )
        .await
        .unwrap();
    assert_eq!(tested.value, 2.0, "{tested:?}");
    assert!(tested.query.contains("pool_name!=\"train\""), "{tested:?}");
    let refused = console
        .test_promql("train", "frobnicate(up)")
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, PromqlTestError::Query(reason) if reason.contains("frobnicate")),
        "{refused}"
    );
    // Saving rules: each PromQL query parsed by that server first.
    let rules = |query: &str| {
        format!(
            "pool = \"train\"\n[limits]\nmin_gpus = 0\nmax_gpus = 4\n\n[[metric]]\nname = \"rps\"\nstale_after_minutes = 2\nprometheus = '{query}'\n\n[[threshold]]\nname = \"busy\"\nmetric = \"rps\"\nop = \">=\"\nvalue = 100\naction = \"+1\"\n"
        )
    };
    let linted = console
        .lint_rules("train", &rules("frobnicate(up{pool=\"{pool}\"})"))
        .await
        .unwrap();
    assert!(
        !linted.valid
            && linted
                .errors
                .iter()
                .any(|problem| problem.field == "metric[0].prometheus"
                    && problem.message.contains("refuses the query")),
        "{linted:?}"
    );
    let linted = console
        .lint_rules("train", &rules("sum(up{pool_name=\"{pool}\"})"))
        .await
        .unwrap();
    assert!(linted.valid, "{linted:?}");
    let many = console.test_promql("train", "up").await.unwrap_err();
    assert!(
        matches!(&many, PromqlTestError::Query(reason) if reason.contains("2 series")),
        "{many}"
    );

    // Prometheus gone: the views say so, the charts are refused with the reason, and the
    // pool keeps its leases.
    prometheus.stop();
    eventually(
        "the snapshot to say metrics are unavailable",
        Duration::from_secs(30),
        || async { console.latest().metrics_unavailable.clone() },
    )
    .await;
    let refused = console
        .host_history_chart(&host, ChartMetric::Util, &frame())
        .await
        .unwrap_err();
    assert!(
        matches!(refused, ChartError::MetricsUnavailable(_)),
        "{refused}"
    );
    let gone = console.test_promql("train", "sum(up)").await.unwrap_err();
    assert!(matches!(gone, PromqlTestError::Unavailable(_)), "{gone}");
    let read = prom
        .readings_for_rules(&observed, &statuses)
        .await
        .expect("on Prometheus, the rules read its readings");
    assert!(
        read.iter()
            .flat_map(|host| &host.seen.as_ref().unwrap().gpus)
            .all(|gpu| gpu.gpu_util_pct.is_none()),
        "no reading while Prometheus is gone"
    );
    let since = ebb_core::clock::now_ms();
    console
        .wait_converged("train", since, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(fleet.held(&pool.id).await.len(), 3, "leases untouched");

    // Back: read again.
    prometheus.restart();
    eventually(
        "the fleet read again once Prometheus is back",
        Duration::from_secs(60),
        || async {
            let snapshot = console.latest();
            (snapshot.metrics_unavailable.is_none()
                && snapshot
                    .hosts
                    .iter()
                    .all(|host| host.health == Health::Online))
            .then_some(())
        },
    )
    .await;
    console
        .host_history_chart(&host, ChartMetric::Util, &frame())
        .await
        .unwrap();
    console.shutdown().await;
    fleet.stop().await;
}
